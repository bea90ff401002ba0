"""Writes the 3D files the examples load, all generated here (no third-party data):

    assets/torus_knot.glb   a (2, 3) torus-knot tube as a textured triangle mesh (binary
                            glTF: positions, normals, UVs and a procedural base-colour
                            texture), the default model of examples/model_viewer.py

Usage: python assets/make_assets.py [OUT_DIR]   (default: this folder)
"""

import sys
from pathlib import Path

import numpy as np
import trimesh
from PIL import Image


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
    """A tube around the (p, q) torus knot. The grid has a seam column and row of
    duplicated vertices so UVs run 0..1 without wrapping; the normals are the exact tube
    normals, so the seam does not show in the lighting."""
    t = np.linspace(0, 2 * np.pi, segments + 1)

    def centre(tt):
        rr = (2 + np.cos(q * tt)) / 3
        return np.stack([rr * np.cos(p * tt), np.sin(q * tt) / 3, rr * np.sin(p * tt)], axis=-1)

    c = centre(t)
    tangent = centre(t + 1e-4) - centre(t - 1e-4)
    tangent /= np.linalg.norm(tangent, axis=1, keepdims=True)
    normal = np.cross(tangent, [0.0, 1.0, 0.0])
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    binormal = np.cross(tangent, normal)
    a = np.linspace(0, 2 * np.pi, sides + 1)
    ring = (np.cos(a)[None, :, None] * normal[:, None, :]
            + np.sin(a)[None, :, None] * binormal[:, None, :])
    verts = (c[:, None, :] + tube * ring).reshape(-1, 3)
    i, j = np.meshgrid(np.arange(segments), np.arange(sides), indexing="ij")
    cols = sides + 1
    v00, v10 = i * cols + j, (i + 1) * cols + j
    v01, v11 = i * cols + j + 1, (i + 1) * cols + j + 1
    # counter-clockwise seen from outside: d/d(around) x d/d(along) is the outward normal
    faces = np.concatenate([np.stack([v00, v11, v10], -1).reshape(-1, 3),
                            np.stack([v00, v01, v11], -1).reshape(-1, 3)])
    # trimesh keeps UVs with v up (it flips them to glTF's v down on export)
    uu, vv = np.meshgrid(t / (2 * np.pi), a / (2 * np.pi), indexing="ij")
    uv = np.stack([uu.ravel(), 1.0 - vv.ravel()], axis=1)
    visual = trimesh.visual.TextureVisuals(uv=uv, image=Image.fromarray(knot_texture()))
    return trimesh.Trimesh(verts, faces, vertex_normals=ring.reshape(-1, 3), visual=visual,
                           process=False)


def main(out_dir=None) -> list[Path]:
    out = Path(out_dir) if out_dir else Path(__file__).resolve().parent
    out.mkdir(parents=True, exist_ok=True)
    path = out / "torus_knot.glb"
    torus_knot_mesh().export(path)
    return [path]


if __name__ == "__main__":
    for path in main(sys.argv[1] if len(sys.argv) > 1 else None):
        print(f"wrote {path}")
