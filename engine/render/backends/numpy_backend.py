"""Vectorised NumPy projector (no per-vertex Python loop).

Vertices of one object are contiguous in a batch, so each run of equal ``object_id``
is moved to the world frame by a few float32 ufuncs with its model matrix, then every
vertex to clip space by the view-projection matrix; the per-frame cost in Python grows
with the number of objects K, not with N. The two float32 stages, not one composed
model-view-projection matmul (BLAS sums in an order of its own), are the Numba and CUDA
kernels' arithmetic: the three backends give the same bits (tests/render/test_parity.py).
That costs this reference backend speed (10^6 vertices, one object, measured side by side
on a 2-core machine: 10.9 ms against 4.0 ms for the composed matmul); the fast paths are
Numba and CUDA.
Output and scratch buffers are reused across frames.

Clip coordinates are kept as four contiguous rows (x, y, z, w), not (N, 4): every
following ufunc then streams over contiguous memory, where column views of an (N, 4)
array (16-byte stride) and broadcasting a (4,) bias over rows of 4 made each pass
several times slower (10^6 vertices on a 2-core machine: 147 ms before, 16-40 ms after,
about the naive NumPy function's time; reaching 4x it needs the fused Numba backend).
"""

from __future__ import annotations

import numpy as np

from .base import W_EPSILON, OutputBuffers, Projection, check_viewport, prepare_inputs


def object_runs(object_id: np.ndarray) -> np.ndarray:
    """(R, 3) int64 rows (start, stop, k) of maximal runs of equal ``object_id``."""
    n = object_id.shape[0]
    if n == 0:
        return np.zeros((0, 3), np.int64)
    starts = np.concatenate([[0], np.flatnonzero(object_id[1:] != object_id[:-1]) + 1])
    stops = np.append(starts[1:], n)
    return np.stack([starts, stops, object_id[starts].astype(np.int64)], axis=1)


def _affine(m, rows, out, tmp):
    """``out[r] = m[r, 0] * rows[0] + m[r, 1] * rows[1] + m[r, 2] * rows[2] + m[r, 3]``
    (``+ m[r, 3] * rows[3]`` when ``rows`` has four), float32, for r in 0..3: the
    operations and their order of the Numba and CUDA kernels
    (numba_kernels.project_span), so all three give the same bits. ``tmp``: a scratch
    row shaped like ``out[0]``."""
    for r in range(4):
        o = out[r]
        np.multiply(m[r, 0], rows[0], out=o)
        for c in range(1, rows.shape[0]):
            np.multiply(m[r, c], rows[c], out=tmp)
            o += tmp
        if rows.shape[0] == 3:
            o += m[r, 3]


class NumpyProjector:
    """CPU projector on NumPy. See ``engine.render.backends.base`` for the contract."""

    name = "numpy"
    xp = np

    def __init__(self):
        self._out = OutputBuffers(np)
        self._clip = np.empty((4, 0), np.float32)
        self._world = np.empty((4, 0), np.float32)
        self._tmp = np.empty(0, np.float32)
        self._mask = np.empty(0, np.bool_)

    def project(self, positions, object_id, model, view_proj, viewport, runs=None) -> Projection:
        """Project N vertices; returns views of reused buffers (overwritten next call).

        ``runs`` is an optional (R, 3) array of (start, stop, k) contiguous object runs
        (the batch knows them); without it they are found from ``object_id``.
        Vertices whose object_id is >= K are not visible (as on every backend).
        Raises ValueError for runs that do not tile [0, N) in order.
        """
        pos, oid, mdl, vp = prepare_inputs(np, positions, object_id, model, view_proj)
        vw, vh = check_viewport(viewport)
        n, k = pos.shape[0], mdl.shape[0]
        out = self._out.get(n)
        if n == 0:
            return out
        if runs is None:
            runs = object_runs(oid)
        runs = np.asarray(runs, np.int64)
        if (runs.ndim != 2 or runs.shape[1] != 3 or len(runs) == 0 or runs[0, 0] != 0 or runs[-1, 1] != n
                or np.any(runs[1:, 0] != runs[:-1, 1]) or np.any(runs[:, 1] <= runs[:, 0])):
            raise ValueError(f"runs must be (R, 3) rows (start, stop, k) tiling the {n} "
                             f"vertices in order, got shape {runs.shape}")
        if self._clip.shape[1] < n:
            self._clip = np.empty((4, n), np.float32)
            self._world = np.empty((4, n), np.float32)
            self._tmp = np.empty(n, np.float32)
            self._mask = np.empty(n, np.bool_)
        clip, world = self._clip[:, :n], self._world[:, :n]
        tmp, mask = self._tmp[:n], self._mask[:n]
        # Model matrix K is all zeros (clip w = 0, culled) for object ids beyond the
        # model array.
        models = np.zeros((k + 1, 4, 4), np.float32)
        models[:k] = mdl
        runs = runs.copy()
        runs[:, 2] = np.minimum(runs[:, 2], k)
        with np.errstate(invalid="ignore", over="ignore"):
            for start, stop, obj in runs:
                _affine(models[obj], pos[start:stop].T, world[:, start:stop], tmp[start:stop])
            _affine(vp, world, clip, tmp)
            return self._project_clip(clip, tmp, mask, out, vw, vh)

    @staticmethod
    def _project_clip(clip, tmp, mask, out, vw, vh) -> Projection:
        x, y, z, w = clip
        vis = out.visible
        np.greater(w, W_EPSILON, out=vis)
        np.less(w, np.inf, out=mask)
        vis &= mask
        for c in (x, y, z):
            np.abs(c, out=tmp)
            np.less_equal(tmp, w, out=mask)
            vis &= mask
        # Culled vertices divide by 1 so nothing below produces inf or NaN.
        np.logical_not(vis, out=mask)
        np.copyto(w, np.float32(1.0), where=mask)
        np.divide(np.float32(1.0), w, out=tmp)
        # Finish each coordinate in its contiguous row, then one strided copy out.
        for row, sign, scale in ((x, 0.5, vw), (y, -0.5, vh), (z, 0.5, None)):
            row *= tmp
            row *= np.float32(sign)
            row += np.float32(0.5)
            if scale is not None:
                row *= np.float32(scale)
            np.copyto(row, np.float32(0.0 if scale is not None else 1.0), where=mask)
        out.screen_xy[:, 0] = x
        out.screen_xy[:, 1] = y
        out.depth[...] = z
        return out
