"""Point sprite costs (engine.render.sprites), side by side in one run: 10^6 points at
1280x720 on the Numba backend.

    .venv/bin/python benchmarks/sprites.py [--points 1000000] [--repeats 15]
                                           [--against OTHER_CHECKOUT]

Rows (whole points-only frames, ``Renderer.render(copy=False)``, and the rasterize stage
alone on the same vertex-stage output):

    square 1 px     the fast path: 1-pixel squares (what a dense scan draws by default)
    round 1 px      the default shape at 1 px (a disc under sqrt(2) px is a 1-px square)
    square 3 px     3-pixel squares
    round 3 px      discs of diameter 3 (numba_raster.splat_sprites_into)
    world round     discs 0.012 world units wide (2.2 to 4.2 px here), sized per point
    other 1 px      with ``--against DIR``: the ``engine`` package of another checkout
                    (e.g. the commit before point sprites), loaded beside this one as
                    ``engine_other``, drawing the same 1-pixel squares

Medians of ``--repeats`` after a warm-up, the rows interleaved per repeat in a shuffled
order so a busy machine slows every row alike; compare the ratios to "square 1 px".
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import engine

SIZE = (1280, 720)


def _other_engine(folder: Path):
    """The ``engine`` package of checkout ``folder``, imported as ``engine_other`` (its
    imports inside the package are relative, so both live in one process)."""
    init = folder / "engine" / "__init__.py"
    spec = importlib.util.spec_from_file_location("engine_other", init,
                                                  submodule_search_locations=[str(init.parent)])
    mod = importlib.util.module_from_spec(spec)
    sys.modules["engine_other"] = mod
    spec.loader.exec_module(mod)
    return mod


def _row(eng, n, **cloud):
    """(frame callable, rasterize-stage callable, renderer) for ``n`` points drawn by
    package ``eng``."""
    rng = np.random.default_rng(0)
    pts = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    cols = rng.integers(0, 256, (n, 4), dtype=np.uint8)
    scene = eng.Scene(background=(0, 0, 0))
    scene.add(eng.Node("cloud", geometry=eng.PointCloud(pts, cols, **cloud)))
    cam = eng.PerspectiveCamera(fov_y=50, aspect=SIZE[0] / SIZE[1])
    cam.position = (0, 0, 3.2)
    scene.add(cam).look_at((0, 0, 0))
    r = eng.Renderer(scene, cam, SIZE, backend="numba")
    prims = r._assembly()
    view = r._view()
    inputs = r.backend.vertex_stage(r.batch, prims, view)
    return (lambda: r.render(copy=False)), (lambda: r.backend.rasterize(inputs, view)), r


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--points", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--against", type=Path, default=None, metavar="DIR",
                    help="another checkout whose 1-pixel squares to time beside these")
    args = ap.parse_args(argv)
    n = args.points
    rows = {
        "square 1 px": _row(engine, n, point_size=1.0, point_shape="square"),
        "round 1 px": _row(engine, n, point_size=1.0),
        "square 3 px": _row(engine, n, point_size=3.0, point_shape="square"),
        "round 3 px": _row(engine, n, point_size=3.0),
        "world round": _row(engine, n, point_size=0.012, size_units="world"),
    }
    if args.against is not None:
        rows["other 1 px"] = _row(_other_engine(args.against), n, point_size=1.0)
    for frame, splat, _ in rows.values():
        frame()  # compile, pack
        splat()
    times = {name: ([], []) for name in rows}
    order = np.random.default_rng(0)
    for _ in range(args.repeats):
        # a new order every repeat: no row is always the one after a cache-cold switch
        for name in order.permutation(list(rows)):
            frame, splat, _ = rows[name]
            t0 = time.perf_counter()
            frame()
            t1 = time.perf_counter()
            splat()
            t2 = time.perf_counter()
            times[name][0].append(t1 - t0)
            times[name][1].append(t2 - t1)
    base_f, base_s = (statistics.median(t) for t in times["square 1 px"])
    print(f"{n:,} points, {SIZE[0]}x{SIZE[1]}, numba backend; median ms (ratio to square "
          f"1 px) of {args.repeats} interleaved repeats")
    print(f"{'row':12s} {'frame':>16s} {'rasterize':>16s} {'covered px':>11s}")
    for name, (ft, st) in times.items():
        f, s = statistics.median(ft), statistics.median(st)
        covered = int((rows[name][2].render().depth < 1).sum())
        print(f"{name:12s} {1e3 * f:8.1f} ({f / base_f:4.2f}x) "
              f"{1e3 * s:8.1f} ({s / base_s:4.2f}x) {covered:11,d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
