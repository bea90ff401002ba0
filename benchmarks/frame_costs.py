"""Frame costs besides shading: triangle setup, memory per triangle, thread use under
load and whole points frames, in one run:

    .venv/bin/python benchmarks/frame_costs.py [clip] [rss] [busy] [points] [--frame 1280x720] [--json PATH]

Sections (all by default):

    clip   the Numba triangle setup (cull, clip, snap, compact; one thread) of 200,000
           triangles in view, once with every triangle inside the frustum and once with
           CLIPPED of them crossing the near plane: (difference) / CLIPPED is the cost
           per clipped triangle; the same for the NumPy reference (its clipping is the
           Python loop the Numba path used before). Interleaved medians.
    rss    a new process builds a 4 * 10^6-triangle height field (1415 x 1415 vertices)
           and renders one Numba frame; its peak RSS increase over the RSS before
           loading, against the mesh data (float32 positions + int32 indices, what a GL
           program holds: 72 MB).
    big    the same height field and the bunny subdivided twice (1.1 * 10^6 triangles):
           Numba frames against Mesa llvmpipe drawing the same mesh without culling
           (the engine draws the back faces of open meshes: the same work), medians.
    busy   the bunny (or an icosphere) on the Numba path and on Mesa llvmpipe, each
           timed alone and then with one competitor process spinning on a core (20
           frames of warm-up in each state, then the median of 15); each path's
           slowdown (busy / idle median) and the ratio of the two slowdowns.
    points whole Numba frames of 10^6 and 10^4 coloured points (projection, splat,
           resolve), ``render(copy=False)`` (no allocation) and ``render()`` (a new
           frame the caller owns), interleaved with the naive NumPy projection alone of
           the same number of points (engine.bench.paths.naive_project). The fixed cost
           is a frame of 10^4 one-pixel points less 10^4 points at the per-point slope
           between it and the 10^6 frame (also one-pixel points): both frames splat
           alike. The 10^4 frame at its default size (default_point_size: 3-pixel
           discs, about ten times a one-pixel point's cost each) is timed beside them;
           its slope against the 10^6 frame would count the discs as fixed cost.

Compare ratios, never absolute times from other runs (shared, noisy machines).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

CLIPPED = 20_000  # of 200,000: enough signal over a shared machine's noise


def _clip_scene(n, rng):
    """(clip (3n, 4) float64, tris (n, 3)): small triangles in view."""
    centre = rng.uniform(-0.9, 0.9, (n, 1, 2))
    xy = centre + rng.uniform(-0.01, 0.01, (n, 3, 2))
    w = rng.uniform(1.0, 2.0, (n, 3, 1))
    z = rng.uniform(-0.5, 0.5, (n, 3, 1))
    c = np.concatenate([xy * w, z * w, w], axis=2)
    return np.ascontiguousarray(c.reshape(-1, 4)), np.arange(3 * n).reshape(n, 3)


def _per_clipped_us(setup, whole, cut, clipped, repeats):
    """(median setup ms of ``whole``, of ``cut``, us per clipped triangle), interleaved."""
    setup(whole), setup(cut)  # compile / load, grow the workspace
    a, b = [], []
    for _ in range(repeats):
        for clip, out in ((whole, a), (cut, b)):
            t0 = time.perf_counter()
            setup(clip)
            out.append((time.perf_counter() - t0) * 1e3)
    ms, ms_cut = statistics.median(a), statistics.median(b)
    return ms, ms_cut, (ms_cut - ms) * 1e3 / clipped


def clip_section(size, n=200_000, repeats=9):
    """The compiled setup (one thread: its clipping pass is serial, and one thread is
    least disturbed by other processes) against the NumPy reference, whose clipping is
    the Python Sutherland-Hodgman loop the Numba path used before (issue 19)."""
    from engine.render.backends import numba_triangles as nt
    from engine.render.backends.threads import set_threads, thread_count
    from engine.render.triangles import Workspace, setup_triangles

    rng = np.random.default_rng(1)
    whole, tris = _clip_scene(n, rng)
    cut = whole.reshape(n, 3, 4).copy()
    cut[:CLIPPED, 0, 2] = -1.5 * cut[:CLIPPED, 0, 3]  # first vertex behind the near plane
    cut = cut.reshape(-1, 4)
    cull = np.zeros(n, bool)
    ws = Workspace()
    before = thread_count()
    set_threads(1)
    try:
        ms, ms_cut, us = _per_clipped_us(
            lambda c: nt.setup_triangles_numba(c, tris, cull, size, workspace=ws),
            whole, cut, CLIPPED, repeats)
    finally:
        set_threads(before)
    few = CLIPPED // 10  # the reference: 2,000 clipped triangles (Python per triangle)
    cut_few = whole.reshape(n, 3, 4).copy()
    cut_few[:few, 0, 2] = -1.5 * cut_few[:few, 0, 3]
    ref_ms, _, ref_us = _per_clipped_us(
        lambda c: setup_triangles(c, tris, cull, size), whole, cut_few.reshape(-1, 4), few, 3)
    row = {"triangles": n, "clipped": CLIPPED, "setup_ms": ms, "setup_clipped_ms": ms_cut,
           "us_per_clipped": us, "ns_per_triangle": ms * 1e6 / n,
           "reference_clipped": few, "reference_setup_ms": ref_ms,
           "reference_us_per_clipped": ref_us, "clip_speedup": ref_us / us if us > 0 else None}
    print(f"clip   {n:,} triangles, one thread: setup {ms:.2f} ms ({row['ns_per_triangle']:.1f} "
          f"ns/triangle); {us:.3f} us per clipped triangle (of {CLIPPED:,}) against "
          f"{ref_us:.1f} us in the NumPy reference's Python clipper", flush=True)
    return row


def _height_field(k=1415):
    """(positions (k*k, 3) float32, faces (2 (k-1)^2, 3) int64): a rippled grid."""
    u = np.linspace(-1.0, 1.0, k, dtype=np.float32)
    gx, gz = np.meshgrid(u, u)
    pos = np.stack([gx, 0.05 * np.sin(8 * gx) * np.cos(8 * gz), gz], -1).reshape(-1, 3)
    i = np.arange(k * k).reshape(k, k)[:-1, :-1].reshape(-1)
    faces = np.concatenate([np.stack([i, i + k, i + 1], 1),
                            np.stack([i + 1, i + k, i + k + 1], 1)])
    return pos, faces


def big_section(size, repeats=3):
    import moderngl
    from triangles import base_mesh, llvmpipe_frame, make_scene, subdivided

    from engine import Renderer

    rows = []
    v, f = base_mesh()
    for name, (pos, faces) in (("1M tris", subdivided(v, f, 2)), ("4M height field", _height_field())):
        scene, camera = make_scene(np.asarray(pos, np.float64), faces, size)
        r = Renderer(scene, camera, size, backend="numba")
        row = {"scene": name, "triangles": len(faces),
               "numba_ms": _timed_ms(partial(r.render, depth=False), repeats, warm=2)}
        del r  # its buffers freed before llvmpipe's
        gl_frame, release = llvmpipe_frame(scene, camera, size)
        if gl_frame:
            ctx = moderngl.get_context()
            ctx.disable(moderngl.CULL_FACE)  # the engine's work: both faces drawn
            row["llvmpipe_ms"] = _timed_ms(gl_frame, repeats, warm=2)
            row["ratio"] = row["numba_ms"] / row["llvmpipe_ms"]
            release()
        rows.append(row)
        ratio = f" ({row['ratio']:.2f}x llvmpipe {row['llvmpipe_ms']:.1f} ms)" if gl_frame else ""
        print(f"big    {name}: {len(faces):,} triangles, numba {row['numba_ms']:.1f} ms{ratio}",
              flush=True)
    return rows


_RSS = r"""
import os, resource, sys
import numpy as np
def rss():
    return int(open('/proc/self/statm').read().split()[1]) * os.sysconf('SC_PAGE_SIZE')
from engine import Mesh, Node, PerspectiveCamera, Renderer, Scene
import engine.render.backends.numba_triangles, engine.render.backends.numba_vertex
start = rss()
k = 1415
u = np.linspace(-1.0, 1.0, k, dtype=np.float32)
gx, gz = np.meshgrid(u, u)
pos = np.stack([gx, 0.05 * np.sin(8 * gx) * np.cos(8 * gz), gz], -1).reshape(-1, 3)
i = np.arange(k * k).reshape(k, k)[:-1, :-1].reshape(-1)
faces = np.concatenate([np.stack([i, i + k, i + 1], 1), np.stack([i + 1, i + k, i + k + 1], 1)])
data = pos.nbytes + faces.shape[0] * 3 * 4
scene = Scene()
scene.add(Node('field', geometry=Mesh(pos, faces)))
del pos, faces, gx, gz, i
cam = scene.add(PerspectiveCamera(fov_y=50, aspect=__SIZE__[0] / __SIZE__[1], position=(0, 1.2, 1.6)))
cam.look_at((0, 0, 0))
r = Renderer(scene, cam, __SIZE__, backend='numba')
r.render(depth=False)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(len(scene.find('field').geometry.faces), data, peak - start)
"""


def rss_section(size):
    out = subprocess.run([sys.executable, "-c", _RSS.replace("__SIZE__", repr(tuple(size)))],
                         check=True, capture_output=True, text=True, cwd=ROOT).stdout.split()
    tris, data, grown = (int(x) for x in out[-3:])
    row = {"triangles": tris, "mesh_bytes": data, "rss_increase_bytes": grown,
           "ratio": grown / data, "bytes_per_triangle": grown / tris}
    print(f"rss    {tris:,} triangles: peak RSS +{grown / 2**20:.0f} MiB for "
          f"{data / 2**20:.0f} MiB of mesh data ({row['ratio']:.1f}x, "
          f"{row['bytes_per_triangle']:.0f} B per triangle)", flush=True)
    return row


def _spin(stop):
    x = 0
    while not stop.is_set():
        x += 1


def _timed_ms(fn, repeats, warm=20):
    for _ in range(warm):  # the engine's per-stage thread choice adapts to the load here
        fn()
    t = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        t.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(t)


def busy_section(size, repeats=15):
    from triangles import base_mesh, llvmpipe_frame, make_scene

    from engine import Renderer

    v, f = base_mesh()
    scene, camera = make_scene(v, f, size)
    r = Renderer(scene, camera, size, backend="numba")
    engine_frame = lambda: r.render(depth=False)
    gl_frame, release = llvmpipe_frame(scene, camera, size)
    row = {"triangles": len(f)}
    for state in ("idle", "busy"):
        stop = multiprocessing.Event()
        comp = None
        if state == "busy":
            comp = multiprocessing.Process(target=_spin, args=(stop,), daemon=True)
            comp.start()
            time.sleep(0.2)
        row[f"numba_{state}_ms"] = _timed_ms(engine_frame, repeats)
        row[f"numba_{state}_threads"] = {s: r.backend.stage_threads.choice(s) for s in
                                         ("vertex", "setup", "raster", "resolve")}
        if gl_frame:
            row[f"llvmpipe_{state}_ms"] = _timed_ms(gl_frame, repeats)
        if comp:
            stop.set()
            comp.join()
    if release:
        release()
    row["numba_slowdown"] = row["numba_busy_ms"] / row["numba_idle_ms"]
    line = (f"busy   bunny {len(f):,} tris, one competitor process: numba "
            f"{row['numba_idle_ms']:.1f} -> {row['numba_busy_ms']:.1f} ms "
            f"({row['numba_slowdown']:.2f}x)")
    if gl_frame:
        row["llvmpipe_slowdown"] = row["llvmpipe_busy_ms"] / row["llvmpipe_idle_ms"]
        row["slowdown_ratio"] = row["numba_slowdown"] / row["llvmpipe_slowdown"]
        line += (f", llvmpipe {row['llvmpipe_idle_ms']:.1f} -> {row['llvmpipe_busy_ms']:.1f} ms "
                 f"({row['llvmpipe_slowdown']:.2f}x): {row['slowdown_ratio']:.2f}x llvmpipe's "
                 "slowdown")
    print(line, flush=True)
    print(f"       stage threads idle {row['numba_idle_threads']}, busy "
          f"{row['numba_busy_threads']}", flush=True)
    return row


def _load():
    try:
        return open("/proc/loadavg").read().split()[0]
    except OSError:
        return "?"


def _points_renderer(n, size, point_size=None):
    from engine import Node, PerspectiveCamera, PointCloud, Renderer, Scene

    scene = Scene(background=(0.05, 0.05, 0.1))
    pts = np.random.default_rng(0).uniform(-1, 1, (n, 3)).astype(np.float32)
    scene.add(Node("cloud", geometry=PointCloud(pts, colors=(pts + 1) / 2,
                                                point_size=point_size)))
    camera = scene.add(PerspectiveCamera(fov_y=60, aspect=size[0] / size[1],
                                         position=(2.5, 2.0, 3.5)))
    camera.look_at((0, 0, 0))
    return Renderer(scene, camera, size, backend="numba")


def points_section(size, repeats=9):
    from engine.bench.paths import make_workload, naive_project
    from engine.scene.geometry import default_point_size

    row = {}
    small_size = default_point_size(10**4)
    for n, label, point_size in ((10**6, 10**6, None), (10**4, "1e4 1px", 1.0),
                                 (10**4, 10**4, None)):
        r = _points_renderer(n, size, point_size)
        w = make_workload(n)
        fns = {"frame_ms": partial(r.render, copy=False), "owned_frame_ms": r.render,
               "naive_projection_ms": partial(naive_project, w.positions, w.shift, w.rotation,
                                              w.focal)}
        t = {k: [] for k in fns}
        for fn in fns.values():
            fn()
        for _ in range(repeats):  # interleaved: all see the same machine load
            for k, fn in fns.items():
                t0 = time.perf_counter()
                fn()
                t[k].append((time.perf_counter() - t0) * 1e3)
        row[label] = {k: statistics.median(v) for k, v in t.items()}
        row[label]["ratio"] = row[label]["frame_ms"] / row[label]["naive_projection_ms"]
        row[label]["owned_ratio"] = (row[label]["owned_frame_ms"]
                                     / row[label]["naive_projection_ms"])
    big, small, one_px = row[10**6], row[10**4], row["1e4 1px"]
    slope = (big["frame_ms"] - one_px["frame_ms"]) / (10**6 - 10**4)
    fixed = one_px["frame_ms"] - 10**4 * slope
    out = {"1e6": big, "1e4": small, "1e4_1px": one_px, "point_size_1e4": small_size,
           "slope_ns": slope * 1e6, "fixed_ms": fixed}
    print(f"points 10^6: frame {big['frame_ms']:.1f} ms (copy=False), {big['owned_frame_ms']:.1f} "
          f"ms (owned) vs naive NumPy projection alone {big['naive_projection_ms']:.1f} ms: "
          f"{big['ratio']:.2f}x ({big['owned_ratio']:.2f}x owned); 10^4: "
          f"{small['frame_ms']:.2f} ms ({small_size:g}-px discs), {one_px['frame_ms']:.2f} ms "
          f"(1-px points; {slope * 1e6:.1f} ns a point from there to 10^6): fixed cost "
          f"{fixed:.2f} ms at {size[0]}x{size[1]}",
          flush=True)
    return out


def main(argv=None):
    from engine.render.renderer import parse_size

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("sections", nargs="*", metavar="SECTION",
                   help=f"any of {', '.join(SECTIONS)} (default: all)")
    p.add_argument("--frame", type=parse_size, default=(1280, 720), help="WIDTHxHEIGHT")
    p.add_argument("--json", type=Path, default=None, help="also write the rows as JSON")
    args = p.parse_args(argv)
    unknown = sorted(set(args.sections) - set(SECTIONS))
    if unknown:
        p.error(f"unknown section {unknown[0]!r}: choose from {', '.join(SECTIONS)}")
    rows, load = {}, {}
    for name in args.sections or SECTIONS:
        load[name] = _load()  # 1-minute load average before the section: the machine's state
        rows[name] = SECTIONS[name](args.frame)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"frame": list(args.frame), "cpus": os.cpu_count(),
                                         "load_before": load, **rows}, indent=2))
    return 0


SECTIONS = {"clip": clip_section, "rss": rss_section, "big": big_section,
            "busy": busy_section, "points": points_section}

if __name__ == "__main__":
    raise SystemExit(main())
