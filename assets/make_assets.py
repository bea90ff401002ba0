"""Writes the 3D files the examples and the docs load, all generated here (no
third-party data):

    assets/torus_knot.glb   a (2, 3) torus-knot tube as a textured triangle mesh (binary
                            glTF: positions, normals, UVs and a procedural base-colour
                            texture), the default model of examples/model_viewer.py

and, given file names, the same model in the format each suffix names (the sample
files the README and docs use: ``model.glb``, ``model.obj``, ``scan.ply``):

    .glb           textured binary glTF
    .obj           OBJ with an MTL material library and its PNG texture beside it
                   (NAME.mtl, NAME.png)
    .ply / .stl    the texture baked into vertex colours (PLY); geometry only (STL)

Usage: python assets/make_assets.py [OUT_DIR | FILE ...]   (default: this folder)
A name with a suffix is a file (folders it needs are created), one without a folder.
"""

import sys
from pathlib import Path

import numpy as np
import trimesh
from PIL import Image

from engine.scene.procedural import torus_knot_tube


def knot_texture(width=512, height=64):
    """(height, width, 3) uint8: the hue cycling once along the knot, with darker bands
    every 1/32 of its length and a light stripe around the tube's middle."""
    u = (np.arange(width) + 0.5) / width
    v = (np.arange(height) + 0.5) / height
    hue = np.stack([0.625 + 0.375 * np.cos(2 * np.pi * (u + k / 3)) for k in range(3)], axis=1)
    bands = np.where((u * 32) % 1 < 0.15, 0.55, 1.0)[:, None]
    img = (hue * bands)[None, :, :] * np.ones((height, 1, 1))
    stripe = np.abs(v - 0.5) < 0.06
    img[stripe] = 0.5 + 0.5 * img[stripe]
    return np.rint(np.clip(img, 0, 1) * 255).astype(np.uint8)


def torus_knot_mesh(p=2, q=3, segments=720, sides=24, tube=0.12):
    """The tube of ``engine.scene.procedural.torus_knot_tube`` as a textured trimesh."""
    verts, faces, normals, uv = torus_knot_tube(p, q, segments, sides, tube)
    # trimesh keeps UVs with v up (it flips them to glTF's v down on export)
    uv = np.column_stack([uv[:, 0], 1.0 - uv[:, 1]])
    visual = trimesh.visual.TextureVisuals(uv=uv, image=Image.fromarray(knot_texture()))
    return trimesh.Trimesh(verts, faces, vertex_normals=normals, visual=visual, process=False)


SUFFIXES = (".glb", ".obj", ".ply", ".stl")


def write_model(path) -> list[Path]:
    """The torus knot written to ``path`` in the format of its suffix (module doc);
    returns every file written."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise SystemExit(f"make_assets.py: {path}: the suffix must be one of "
                         f"{', '.join(SUFFIXES)} (or give a folder)")
    path.parent.mkdir(parents=True, exist_ok=True)
    mesh = torus_knot_mesh()
    if suffix == ".obj":
        text, extra = mesh.export(file_type="obj", mtl_name=f"{path.stem}.mtl",
                                  return_texture=True)
        written = [path]
        path.write_text(text)
        # trimesh names the texture after the material: name it after the model, so two
        # sample OBJs in one folder do not share one image file
        image = next(n for n in extra if n.lower().endswith(".png"))
        for name, data in extra.items():
            target = path.with_suffix(".png") if name == image else path.parent / name
            if name.lower().endswith(".mtl"):
                data = data.replace(image.encode(), target.with_suffix(".png").name.encode())
            target.write_bytes(data)
            written.append(target)
        return written
    if suffix in (".ply", ".stl"):
        mesh.visual = mesh.visual.to_color()
    mesh.export(path)
    return [path]


def main(targets=()) -> list[Path]:
    if not targets:
        targets = [Path(__file__).resolve().parent]
    written = []
    for target in map(Path, targets):
        if target.suffix and not target.is_dir():  # a file name (an unknown suffix exits)
            written += write_model(target)
        else:
            target.mkdir(parents=True, exist_ok=True)
            path = target / "torus_knot.glb"
            torus_knot_mesh().export(path)
            written.append(path)
    return written


if __name__ == "__main__":
    for path in main(sys.argv[1:]):
        print(f"wrote {path}")
