"""Numba kernels of the ``numba`` projector (see ``numba_backend`` for why they are
shaped this way). Module-level functions so Numba's on-disk cache is hit across
processes (functions built inside a closure were recompiled in every process).

Imported only when the numba backend is used: importing it needs Numba.
"""

from __future__ import annotations

import numba
import numpy as np

from .base import W_EPSILON
from .kernel_cache import cached

# Vertices per parallel work item: small enough to balance two threads on 10^5
# vertices, large enough that the per-item run search is negligible.
CHUNK = 1 << 14

_opts = {"cache": cached(), "boundscheck": False, "error_model": "numpy"}


@numba.njit(inline="always", **_opts)
def project_span(pos, m, vp, vw, vh, xy, depth, visible):
    half = np.float32(0.5)
    one = np.float32(1.0)
    inf = np.float32(np.inf)
    m00, m01, m02, m03 = m[0, 0], m[0, 1], m[0, 2], m[0, 3]
    m10, m11, m12, m13 = m[1, 0], m[1, 1], m[1, 2], m[1, 3]
    m20, m21, m22, m23 = m[2, 0], m[2, 1], m[2, 2], m[2, 3]
    m30, m31, m32, m33 = m[3, 0], m[3, 1], m[3, 2], m[3, 3]
    v00, v01, v02, v03 = vp[0, 0], vp[0, 1], vp[0, 2], vp[0, 3]
    v10, v11, v12, v13 = vp[1, 0], vp[1, 1], vp[1, 2], vp[1, 3]
    v20, v21, v22, v23 = vp[2, 0], vp[2, 1], vp[2, 2], vp[2, 3]
    v30, v31, v32, v33 = vp[3, 0], vp[3, 1], vp[3, 2], vp[3, 3]
    for i in range(depth.shape[0]):
        px = pos[3 * i]
        py = pos[3 * i + 1]
        pz = pos[3 * i + 2]
        wx = m00 * px + m01 * py + m02 * pz + m03
        wy = m10 * px + m11 * py + m12 * pz + m13
        wz = m20 * px + m21 * py + m22 * pz + m23
        ww = m30 * px + m31 * py + m32 * pz + m33
        cx = v00 * wx + v01 * wy + v02 * wz + v03 * ww
        cy = v10 * wx + v11 * wy + v12 * wz + v13 * ww
        cz = v20 * wx + v21 * wy + v22 * wz + v23 * ww
        cw = v30 * wx + v31 * wy + v32 * wz + v33 * ww
        # Every comparison is false for NaN, and a finite w bounds x, y, z.
        ok = (cw > W_EPSILON) & (cw < inf) & (abs(cx) <= cw) & (abs(cy) <= cw) & (abs(cz) <= cw)
        inv = one / cw
        xy[2 * i] = (cx * inv * half + half) * vw
        xy[2 * i + 1] = (half - cy * inv * half) * vh
        depth[i] = cz * inv * half + half
        visible[i] = ok
    for i in range(depth.shape[0]):
        if not visible[i]:
            xy[2 * i] = 0.0
            xy[2 * i + 1] = 0.0
            depth[i] = 1.0

@numba.njit(inline="always", **_opts)
def span(pos, k, model, vp, vw, vh, xy, depth, visible, lo, hi):
    # Vertices of an object id >= K are not visible (as on the GPU).
    if k >= model.shape[0]:
        xy[2 * lo:2 * hi] = 0.0
        depth[lo:hi] = 1.0
        visible[lo:hi] = 0
        return
    # Views starting at 0: a loop from lo keeps LLVM from proving that 3 * i does
    # not wrap, and it then refuses to vectorise.
    project_span(pos[3 * lo:3 * hi], model[k], vp, vw, vh, xy[2 * lo:2 * hi],
                 depth[lo:hi], visible[lo:hi])

@numba.njit(**_opts)
def runs_status(runs, n):
    # 0: runs tile [0, n) in order with k >= 0; 1: they do not.
    if runs.shape[0] < 1 or runs[0, 0] != 0 or runs[runs.shape[0] - 1, 1] != n:
        return 1
    for j in range(runs.shape[0]):
        if runs[j, 1] < runs[j, 0] or (j > 0 and runs[j, 0] != runs[j - 1, 1]):
            return 1
        if runs[j, 2] < 0:
            return 1
    return 0

@numba.njit(**_opts)
def find_runs(object_id):
    n = object_id.shape[0]
    count = 1
    for i in range(1, n):
        count += object_id[i] != object_id[i - 1]
    runs = np.empty((count, 3), np.int64)
    j = 0
    runs[0, 0] = 0
    runs[0, 2] = object_id[0]
    for i in range(1, n):
        if object_id[i] != object_id[i - 1]:
            runs[j, 1] = i
            j += 1
            runs[j, 0] = i
            runs[j, 2] = object_id[i]
    runs[j, 1] = n
    return runs

@numba.njit(**_opts)
def project_serial(pos, runs, model, vp, vw, vh, xy, depth, visible):
    status = runs_status(runs, depth.shape[0])
    if status != 0:
        return status
    for j in range(runs.shape[0]):
        span(pos, runs[j, 2], model, vp, vw, vh, xy, depth, visible, runs[j, 0], runs[j, 1])
    return 0

@numba.njit(parallel=True, **_opts)
def project_parallel(pos, runs, model, vp, vw, vh, xy, depth, visible):
    n = depth.shape[0]
    status = runs_status(runs, n)
    if status != 0:
        return status
    for c in numba.prange((n + CHUNK - 1) // CHUNK):
        lo = c * CHUNK
        hi = min(lo + CHUNK, n)
        j = np.searchsorted(runs[:, 1], lo, side="right")  # first run ending after lo
        while lo < hi:
            stop = min(hi, runs[j, 1])
            span(pos, runs[j, 2], model, vp, vw, vh, xy, depth, visible, lo, stop)
            lo = stop
            j += 1
    return 0


@numba.njit(**_opts)
def mark_culled(clip, visible, runs, with_clip, with_visible):
    # engine.render.culling.mark_culled: zero clip rows / not visible for the culled runs
    for j in range(runs.shape[0]):
        for i in range(runs[j, 0], runs[j, 1]):
            if with_clip:
                for c in range(4):
                    clip[i, c] = 0.0
            if with_visible:
                visible[i] = False
