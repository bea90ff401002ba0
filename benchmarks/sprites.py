"""Point sprite costs (engine.render.sprites), side by side in one run: 10^6 points at
1280x720 on the Numba (and NumPy) backend.

    .venv/bin/python benchmarks/sprites.py [--points 1000000] [--repeats 7] [--numpy]

Rows (whole points-only frames, ``Renderer.render(copy=False)``, and the splat stage
alone on the same projected points):

    square 1 px     the fast path: 1-pixel squares (what a dense scan draws by default)
    square 3 px     3-pixel squares
    round 3 px      discs of diameter 3 (engine.render.sprites.splat_sprites's twin)
    world round     discs 0.012 world units wide (2.2 to 4.2 px here), sized per point

Medians of ``--repeats`` after a warm-up, interleaved per repeat so a busy machine slows
every row alike; the ratios to "square 1 px" are the figures to compare. ``--engine DIR``
imports the ``engine`` package of another checkout DIR instead of this one's, so the
1-pixel path of an older version is measured the same way (rows it lacks are skipped).
"""

from __future__ import annotations

import argparse
import inspect
import statistics
import sys
import time
from pathlib import Path

import numpy as np

SIZE = (1280, 720)


def _engine(folder):
    """Import ``engine`` from the checkout ``folder`` (None: this one)."""
    sys.path.insert(0, str(folder or Path(__file__).resolve().parents[1]))
    import engine

    return engine


def _cloud(n, **kw):
    from engine import PointCloud

    rng = np.random.default_rng(0)
    pts = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    cols = rng.integers(0, 256, (n, 4), dtype=np.uint8)
    return PointCloud(pts, cols, **kw)


def _renderer(cloud, backend):
    from engine import Node, PerspectiveCamera, Renderer, Scene

    scene = Scene(background=(0, 0, 0))
    scene.add(Node("cloud", geometry=cloud))
    cam = PerspectiveCamera(fov_y=50, aspect=SIZE[0] / SIZE[1])
    cam.position = (0, 0, 3.2)
    scene.add(cam).look_at((0, 0, 0))
    return Renderer(scene, cam, SIZE, backend=backend)


def _splat_stage(r):
    """A callable running the frame's rasterize stage alone (keys only)."""
    stages = r.backend
    prims = r._assembly()
    view = r._view()
    inputs = stages.vertex_stage(r.batch, prims, view)
    return lambda: stages.rasterize(inputs, view)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--points", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--numpy", action="store_true", help="also the NumPy reference")
    ap.add_argument("--engine", type=Path, default=None, metavar="DIR",
                    help="the checkout whose engine package to measure (default: this one)")
    args = ap.parse_args(argv)
    engine = _engine(args.engine)
    from engine import PointCloud

    has_sprites = "point_shape" in inspect.signature(PointCloud).parameters
    rows = {"square 1 px": {"point_size": 1.0}, "square 3 px": {"point_size": 3.0}}
    if has_sprites:
        for kw in rows.values():
            kw["point_shape"] = "square"
        rows["round 3 px"] = {"point_size": 3.0, "point_shape": "round"}
        rows["world round"] = {"point_size": 0.012, "point_shape": "round",
                               "size_units": "world"}
    backends = ["numba"] + (["numpy"] if args.numpy else [])
    print(f"engine at {Path(engine.__file__).parent}; {args.points:,} points, "
          f"{SIZE[0]}x{SIZE[1]}")
    for backend in backends:
        calls = {}
        for name, kw in rows.items():
            r = _renderer(_cloud(args.points, **kw), backend)
            frame = lambda r=r: r.render(copy=False)
            frame()  # compile, pack
            calls[name] = (frame, _splat_stage(r), r)
        times = {name: ([], []) for name in rows}
        for _ in range(args.repeats):
            for name, (frame, splat, _) in calls.items():
                t0 = time.perf_counter()
                frame()
                t1 = time.perf_counter()
                splat()
                t2 = time.perf_counter()
                times[name][0].append(t1 - t0)
                times[name][1].append(t2 - t1)
        base_f = statistics.median(times["square 1 px"][0])
        base_s = statistics.median(times["square 1 px"][1])
        print(f"\n{backend}: median ms (ratio to square 1 px)")
        print(f"{'row':14s} {'frame':>16s} {'splat stage':>16s} {'covered px':>11s}")
        for name, (ft, st) in times.items():
            f, s = statistics.median(ft), statistics.median(st)
            covered = int((calls[name][2].render().depth < 1).sum())
            print(f"{name:14s} {1e3 * f:8.1f} ({f / base_f:4.2f}x) "
                  f"{1e3 * s:8.1f} ({s / base_s:4.2f}x) {covered:11,d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
