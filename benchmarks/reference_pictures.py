"""The engine beside the independent GL reference (benchmarks/gl_reference.py) on the same
files and cameras: the pictures of docs/surfaces.md ("Against a GL reference").

    .venv/bin/python benchmarks/reference_pictures.py [--size 480x320] [--out docs/images]

Two pairs, each the engine's software path (``Renderer(backend="numba", msaa=4)``) and
the reference (``ReferenceRenderer(msaa=4)``, llvmpipe on machines without a GPU):

    pbr     benchmarks/reference_scenes.py's hand-built glTF (``write_pbr_gltf``: PBR
            materials, metallic-roughness / occlusion / emissive / normal maps with
            tangents, a second UV set, KHR_lights_punctual directional, point and spot
            lights, the file's camera), loaded by ``engine.load``, plus an ambient
            light (for the occlusion maps), PBR Neutral tone map
    bunny   the bunny on a plane, PBR, one directional light with a 2048^2 shadow map

writes ``gl-reference-NAME-software.png`` (the engine) and
``gl-reference-NAME-reference.png`` into ``--out`` and prints each pair's difference: per pixel the largest absolute difference
over R, G, B of the 8-bit sRGB values, its mean over the frame and its 99th percentile
(``difference``), as the page states them.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gl_reference import ReferenceRenderer
from reference_scenes import bunny_scene, pbr_scene, write_pbr_gltf

from engine import Renderer
from engine.render.renderer import parse_size

ROOT = Path(__file__).resolve().parents[1]


def difference(a, b) -> dict:
    """{"mean": float, "p99": float, "max": int}: per pixel the largest absolute
    difference over R, G, B of two (H, W, 3|4) uint8 sRGB frames, its mean, 99th
    percentile and maximum."""
    d = np.abs(np.asarray(a, np.int32)[..., :3] - np.asarray(b, np.int32)[..., :3]).max(-1)
    return {"mean": float(d.mean()), "p99": float(np.percentile(d, 99)), "max": int(d.max())}


def pair(scene, camera, size, backend="numba"):
    """(engine RGBA, reference RGBA) of one scene, both 4x MSAA, (H, W, 4) uint8."""
    r = Renderer(scene, camera, size, backend=backend, msaa=4)
    engine = r.render(depth=False).color
    assert r.drawn_by == backend, f"drawn by {r.drawn_by}, not {backend}"
    ref = ReferenceRenderer(scene, camera, size, msaa=4)
    try:
        reference = ref.render()
    finally:
        ref.release()
    return engine, reference


def scenes(size, folder):
    """{name: (scene, camera)} of the two pairs, the glTF written into ``folder``."""
    return {"pbr": pbr_scene(write_pbr_gltf(folder), size),
            "bunny": bunny_scene(size)[:2]}


def main(argv=None):
    from PIL import Image

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=parse_size, default=(480, 320))
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        for name, (scene, camera) in scenes(args.size, folder).items():
            engine, reference = pair(scene, camera, args.size)
            for who, img in (("software", engine), ("reference", reference)):
                Image.fromarray(img[..., :3]).save(args.out / f"gl-reference-{name}-{who}.png",
                                                   optimize=True)
            d = difference(engine, reference)
            print(f"{name:6s} mean {d['mean']:.3f}  p99 {d['p99']:.0f}  max {d['max']}  "
                  f"(8-bit sRGB, largest channel difference per pixel)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
