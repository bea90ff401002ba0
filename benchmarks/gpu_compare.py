"""CuPy RawKernel against the CPU backend on 10^7 vertices: same results? how fast?

    PYTHONPATH=. python benchmarks/gpu_compare.py [--n 1e7] [--out DIR]

The scene has 16 objects (uneven sizes, each with its own model matrix), vertices in
front of, beside and behind the camera, and NaN vertices. The reference is the Numba
backend (the same float32 operation sequence as shaders/transform.cuh) or NumPy without
Numba. The CUDA build does not fuse multiply-adds (-fmad=false), so against Numba the
outputs must be bit-identical (visibility, screen xy and depth bits); against NumPy
(another summation order) vertices exactly on the clip boundary may flip (up to 1e-5
of all vertices) and, where both say visible, screen positions must agree to 1e-5
relative (+1e-3 px) and depth to 1e-5 relative (+1e-6).

Timings: the GPU's first call (compile or kernel-cache load, allocations) is reported
apart from the NVRTC compile time measured with no cache.

Writes gpu-compare.json to --out. Exit status: 0 agree, 1 disagree, 3 no usable GPU.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from engine.bench.paths import VIEWPORT, make_camera
from engine.bench.timing import cupy_sync, measure
from engine.render.backends import get_projector
from engine.render.backends.cupy_backend import cupy_unavailable_reason

MAX_FLIP_FRACTION = 1e-5


def make_scene(n: int, k: int = 16, seed: int = 7):
    """(positions (n,3) f32, object_id (n,) u32, model (k,4,4) f32, view_proj (4,4) f32)."""
    rng = np.random.default_rng(seed)
    pos = rng.uniform(-4, 4, (n, 3)).astype(np.float32)
    pos[::1009] = np.nan
    cuts = np.sort(rng.choice(np.arange(1, n), k - 1, replace=False))
    oid = np.zeros(n, np.uint32)
    for c in cuts:
        oid[c:] += 1
    model = np.repeat(np.eye(4, dtype=np.float32)[None], k, axis=0)
    angle = rng.uniform(0, 2 * np.pi, k)
    model[:, 0, 0] = model[:, 2, 2] = np.cos(angle)
    model[:, 0, 2], model[:, 2, 0] = np.sin(angle), -np.sin(angle)
    model[:, :3, 3] = rng.uniform(-1, 1, (k, 3))
    return pos, oid, model, make_camera().view_projection_matrix.astype(np.float32)


def compare(n: int) -> dict:
    """Project the scene on the GPU and the CPU; the agreement figures and timings."""
    import cupy

    pos, oid, model, vp = make_scene(n)
    cpu = get_projector("numba" if _has_numba() else "numpy")
    ref = cpu.project(pos, oid, model, vp, VIEWPORT)
    ref = [np.array(a) for a in ref]
    gpu = get_projector("cupy")
    d_pos, d_oid, d_model = cupy.asarray(pos), cupy.asarray(oid), cupy.asarray(model)
    out = gpu.project(d_pos, d_oid, d_model, vp, VIEWPORT)
    xy, depth, vis = out.screen_xy.get(), out.depth.get(), out.visible.get()
    flips = int(np.count_nonzero(vis != ref[2]))
    both = vis & ref[2]
    xy_ok = np.allclose(xy[both], ref[0][both], rtol=1e-5, atol=1e-3)
    z_ok = np.allclose(depth[both], ref[1][both], rtol=1e-5, atol=1e-6)
    finite = bool(np.isfinite(xy).all() and np.isfinite(depth).all())
    hidden_reset = bool((xy[~vis] == 0).all() and (depth[~vis] == 1).all())
    t_gpu = measure(lambda: gpu.project(d_pos, d_oid, d_model, vp, VIEWPORT), sync=cupy_sync(),
                    repeats=20, max_time_s=5.0)
    t_cpu = measure(lambda: cpu.project(pos, oid, model, vp, VIEWPORT), repeats=5,
                    max_time_s=10.0)
    identical = bool(flips == 0 and np.array_equal(xy.view(np.uint32), ref[0].view(np.uint32))
                     and np.array_equal(depth.view(np.uint32), ref[1].view(np.uint32)))
    if cpu.name == "numba":
        ok = identical and finite and hidden_reset
    else:
        ok = flips <= MAX_FLIP_FRACTION * n and xy_ok and z_ok and finite and hidden_reset
    from engine.render.backends.cuda_source import nvrtc_compile

    compile_s = nvrtc_compile("transform.cu")[1]
    return {
        "n": n, "reference": cpu.name, "ok": bool(ok),
        "visible_fraction": float(ref[2].mean()),
        "visibility_flips": flips, "max_flips": int(MAX_FLIP_FRACTION * n),
        "max_screen_diff_px": float(np.max(np.abs(xy[both] - ref[0][both]), initial=0.0)),
        "max_depth_diff": float(np.max(np.abs(depth[both] - ref[1][both]), initial=0.0)),
        "screen_close": bool(xy_ok), "depth_close": bool(z_ok), "all_finite": finite,
        "hidden_reset": hidden_reset, "bit_identical": identical,
        "nvrtc_compile_no_cache_s": compile_s,
        "gpu_median_s": t_gpu.median_s, "gpu_first_call_s": t_gpu.first_call_s,
        "cpu_median_s": t_cpu.median_s, "speedup": t_cpu.median_s / t_gpu.median_s,
    }


def _has_numba() -> bool:
    from engine.render.backends.numba_backend import numba_available

    return numba_available()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=float, default=1e7, help="vertex count (default 1e7)")
    ap.add_argument("--out", default=None, metavar="DIR", help="write gpu-compare.json here")
    args = ap.parse_args(argv)
    reason = cupy_unavailable_reason()
    if reason:
        print(f"gpu_compare: no usable GPU ({reason}); nothing compared")
        return 3
    res = compare(int(args.n))
    print(f"gpu_compare: N={res['n']:,} CuPy vs {res['reference']}: "
          f"{'AGREE' if res['ok'] else 'DISAGREE'} (bit-identical: {res['bit_identical']}); "
          f"visibility flips {res['visibility_flips']} "
          f"(max {res['max_flips']}), max screen diff {res['max_screen_diff_px']:.2e} px, "
          f"max depth diff {res['max_depth_diff']:.2e}, finite {res['all_finite']}, "
          f"hidden reset {res['hidden_reset']}")
    print(f"gpu_compare: GPU {res['gpu_median_s'] * 1e3:.3f} ms per frame, synchronised "
          f"(first call {res['gpu_first_call_s']:.2f} s: compile or kernel-cache load; NVRTC "
          f"compile with no cache {res['nvrtc_compile_no_cache_s']:.2f} s), CPU "
          f"{res['cpu_median_s'] * 1e3:.1f} ms, {res['speedup']:.0f}x")
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "gpu-compare.json").write_text(json.dumps(res, indent=1) + "\n")
    return 0 if res["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
