"""Transparency cost: 100 overlapping half-transparent full-screen quads drawn as BLEND
(the k-buffer of engine.render.transparency, k = LAYERS) against the same quads opaque,
in one run.

    .venv/bin/python benchmarks/transparency.py [--frame 640x480] [--repeats 5]
        [--backends numba,numpy] [--no-gl] [--json PATH]

The quads are unlit, each a different colour at alpha 0.5, stacked along the view axis
so every one covers the whole frame: the opaque frame rasters all 100 and shades the
nearest; the BLEND frame rasters the opaque background quad, then all 100 into the
k-buffer (each pixel keeps the 4 nearest, counts 96 more), shades 4 layers and
composites them. Rows: ``Renderer(backend=...).render()`` for each of ``--backends``
(numba by default; a NumPy frame of these 100 quads takes about 30 s here), and
``raster="gl"`` (depth peeling: 4 + 1 more draws of every quad) for reference; issue
21's target is BLEND <= 3x opaque.
Medians of ``--repeats`` frames after a warm-up, interleaved per repeat so a busy machine
slows every path alike; compare the ratios, not absolute times from other runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

from engine import Mesh, Node, PerspectiveCamera, Renderer, Scene
from engine.render.renderer import parse_size
from engine.render.transparency import LAYERS
from engine.scene.material import Material

QUADS = 100


def make_scene(size, blend: bool):
    """The opaque black backdrop and QUADS quads at z in [-1, 1], each wider than the
    view at its depth, alpha 0.5, BLEND or opaque."""
    scene = Scene(background=(0, 0, 0))
    rng = np.random.default_rng(1)
    for i, z in enumerate(np.linspace(-1.0, 1.0, QUADS + 1)):
        h = 4.0  # the view at distance 3 + 1 spans tan(27.5) * 4 ~ 2.1 each side
        p = np.array([[-h, -h, z], [h, -h, z], [h, h, z], [-h, h, z]], np.float32)
        if i == 0:
            mat = Material(color=(0, 0, 0), shading="unlit")
        else:
            mat = Material(color=(*rng.uniform(0, 1, 3), 0.5), shading="unlit", blend=blend)
        scene.add(Node(f"q{i}", geometry=Mesh(p, [[0, 1, 2], [0, 2, 3]], material=mat)))
    cam = PerspectiveCamera(fov_y=55, aspect=size[0] / size[1], near=0.1, far=50)
    cam.position = (0.0, 0.0, 3.0)
    scene.add(cam).look_at((0.0, 0.0, 0.0))
    return scene, cam


def run(size, repeats, backends=("numba",), gl=True):
    paths, closers = {}, []
    for backend in backends:
        for blend in (False, True):
            scene, cam = make_scene(size, blend)
            r = Renderer(scene, cam, size, backend=backend)
            paths[f"{backend} {'blend' if blend else 'opaque'}"] = (
                lambda r=r: r.render(depth=False))
    if gl:
        for blend in (False, True):
            scene, cam = make_scene(size, blend)
            r = Renderer(scene, cam, size, backend="numba", raster="gl")
            closers.append(r)
            paths[f"gl {'blend' if blend else 'opaque'}"] = lambda r=r: r.render(depth=False)
    for fn in paths.values():
        fn()  # warm-up: JIT compilation, buffers
    times = {name: [] for name in paths}
    for _ in range(repeats):
        for name, fn in paths.items():
            t0 = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - t0) * 1000)
    for r in closers:
        r.close()
    ms = {name: statistics.median(t) for name, t in times.items()}
    for name, t in ms.items():
        print(f"{name:14s} {t:8.1f} ms")
    kinds = sorted({name.split()[0] for name in ms})
    ratios = {f"{k} blend / opaque": ms[f"{k} blend"] / ms[f"{k} opaque"] for k in kinds}
    for name, q in ratios.items():
        print(f"{name:22s} {q:5.2f}x  (k = {LAYERS}, {QUADS} layers per pixel)")
    return {"size": list(size), "quads": QUADS, "layers": LAYERS, "median_ms": ms,
            "ratios": ratios}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--frame", type=parse_size, default=(640, 480))
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--backends", default="numba",
                   help="comma-separated software backends (numba, numpy)")
    p.add_argument("--no-gl", action="store_true", help="leave out the GL rows")
    p.add_argument("--json", default=None, metavar="PATH")
    args = p.parse_args(argv)
    backends = tuple(b.strip() for b in args.backends.split(",") if b.strip())
    for b in backends:
        if b not in ("numba", "numpy"):
            p.error(f"--backends: unknown backend {b!r} (numba, numpy)")
    result = run(args.frame, args.repeats, backends, gl=not args.no_gl)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
