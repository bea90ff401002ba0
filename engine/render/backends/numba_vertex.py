"""The surface vertex stage compiled by Numba: one pass over the vertices of the given
runs computes clip coordinates and, for shading, the varyings (the batch-frame position,
then every attribute of the layout by its space, engine.render.attributes). Same maths,
in the same order, as ``engine.render.surface_vertices``.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ..attributes import VARYING_COUNT, layout_rows
from ..surface_vertices import normal_matrices
from .base import W_EPSILON, Projection

_opts = {"cache": True, "boundscheck": False, "error_model": "numpy"}


@numba.njit(**_opts)
def _vertices(p, runs, shaded, mvp, m, nm, attrs, rows, shading, clip, vary, points, width,
              height, eps, xy, depth, visible):
    for r in range(runs.shape[0]):
        lo, hi, k = runs[r, 0], runs[r, 1], runs[r, 2]
        if shading and shaded[r]:
            for i in range(lo, hi):
                _vertex(p, i, k, mvp, m, nm, attrs, rows, True, clip, vary)
                if points:
                    _window(clip, i, width, height, eps, xy, depth, visible)
        elif points:
            _point_span(p, lo, hi, k, mvp, clip, width, height, eps, xy, depth, visible)
        else:
            for i in range(lo, hi):
                _vertex(p, i, k, mvp, m, nm, attrs, rows, False, clip, vary)


@numba.njit(inline="always")
def _point_span(p, lo, hi, k, mvp, clip, width, height, eps, xy, depth, visible):
    # A point cloud's run: clip space and window coordinates (_window's operations) with
    # no branch in the main loop, so LLVM vectorises it; a second pass over the same
    # (cached) rows resets the vertices that are not visible.
    inf = np.inf
    for i in range(lo, hi):
        x, y, z = np.float64(p[i, 0]), np.float64(p[i, 1]), np.float64(p[i, 2])
        c0 = mvp[k, 0, 0] * x + mvp[k, 0, 1] * y + mvp[k, 0, 2] * z + mvp[k, 0, 3]
        c1 = mvp[k, 1, 0] * x + mvp[k, 1, 1] * y + mvp[k, 1, 2] * z + mvp[k, 1, 3]
        c2 = mvp[k, 2, 0] * x + mvp[k, 2, 1] * y + mvp[k, 2, 2] * z + mvp[k, 2, 3]
        c3 = mvp[k, 3, 0] * x + mvp[k, 3, 1] * y + mvp[k, 3, 2] * z + mvp[k, 3, 3]
        clip[i, 0], clip[i, 1], clip[i, 2], clip[i, 3] = c0, c1, c2, c3
        inv = 1.0 / c3
        xy[i, 0] = (c0 * inv * 0.5 + 0.5) * width
        xy[i, 1] = (0.5 - c1 * inv * 0.5) * height
        depth[i] = c2 * inv * 0.5 + 0.5
        visible[i] = ((c3 > eps) & (c3 < inf) & (abs(c0) <= c3) & (abs(c1) <= c3)
                      & (abs(c2) <= c3))
    for i in range(lo, hi):
        if not visible[i]:
            xy[i, 0] = 0.0
            xy[i, 1] = 0.0
            depth[i] = 1.0


@numba.njit(inline="always")
def _window(clip, i, width, height, eps, xy, depth, visible):
    # engine.render.backends.base.window_coordinates, one vertex
    x, y, z, w = clip[i, 0], clip[i, 1], clip[i, 2], clip[i, 3]
    ok = (w > eps) and (w < np.inf) and abs(x) <= w and abs(y) <= w and abs(z) <= w
    visible[i] = ok
    if ok:
        inv = 1.0 / w
        xy[i, 0] = (x * inv * 0.5 + 0.5) * width
        xy[i, 1] = (0.5 - y * inv * 0.5) * height
        depth[i] = z * inv * 0.5 + 0.5
    else:
        xy[i, 0] = 0.0
        xy[i, 1] = 0.0
        depth[i] = 1.0


@numba.njit(inline="always")
def _vertex(p, i, k, mvp, m, nm, attrs, rows, shading, clip, vary):
    x, y, z = np.float64(p[i, 0]), np.float64(p[i, 1]), np.float64(p[i, 2])
    for r in range(4):
        clip[i, r] = mvp[k, r, 0] * x + mvp[k, r, 1] * y + mvp[k, r, 2] * z + mvp[k, r, 3]
    if not shading:
        return
    for r in range(3):
        vary[i, r] = m[k, r, 0] * x + m[k, r, 1] * y + m[k, r, 2] * z + m[k, r, 3]
    for j in range(rows.shape[0]):
        src, dst, width, space = rows[j, 0], rows[j, 1], rows[j, 2], rows[j, 3]
        if space == 2:  # none
            for c in range(width):
                vary[i, dst + c] = attrs[i, src + c]
            continue
        mat = nm if space == 0 else m  # normal: inverse transpose; direction: the 3x3 part
        a, b, c = attrs[i, src], attrs[i, src + 1], attrs[i, src + 2]
        vx = mat[k, 0, 0] * a + mat[k, 0, 1] * b + mat[k, 0, 2] * c
        vy = mat[k, 1, 0] * a + mat[k, 1, 1] * b + mat[k, 1, 2] * c
        vz = mat[k, 2, 0] * a + mat[k, 2, 1] * b + mat[k, 2, 2] * c
        length = math.sqrt(vx * vx + vy * vy + vz * vz)
        if length > 0:
            vary[i, dst], vary[i, dst + 1], vary[i, dst + 2] = vx / length, vy / length, vz / length
        else:
            vary[i, dst] = vary[i, dst + 1] = vary[i, dst + 2] = 0.0


def surface_vertices_numba(positions, object_id, model, view_projection, attributes, runs,
                           with_shading=True, points=None, shaded=None, out=None):
    """Numba twin of ``engine.render.surface_vertices.surface_vertices`` (window
    coordinates of ``points`` in the same loop). ``out``: an optional VertexBuffers whose
    arrays are reused (no 8 * 20 bytes per vertex allocated per frame); rows of runs not
    transformed keep what they held."""
    m = np.ascontiguousarray(model, np.float64)
    mvp = np.ascontiguousarray(np.asarray(view_projection, np.float64) @ m)
    n = len(positions)
    out = VertexBuffers() if out is None else out
    clip = out.clip(n)
    # one (N, V) row per vertex: the resolve reads every varying of the same three
    # vertices for each shaded pixel, so they share cache lines
    vary = out.varyings(n if with_shading else 0)
    nm = normal_matrices(m) if with_shading else np.zeros((len(m), 3, 3))
    if points is None:
        size, out = (0, 0), Projection(np.zeros((0, 2), np.float32), np.zeros(0, np.float32),
                                       np.zeros(0, np.bool_))
    else:
        size, out = points
    runs = np.ascontiguousarray(runs, np.int64)
    shaded = (np.ones(len(runs), np.bool_) if shaded is None
              else np.ascontiguousarray(shaded, np.bool_))
    _vertices(np.ascontiguousarray(positions), runs, shaded, mvp, m,
              nm, np.ascontiguousarray(attributes, np.float64), layout_rows(), with_shading,
              clip, vary, points is not None, np.float64(size[0]), np.float64(size[1]),
              np.float64(W_EPSILON), out.screen_xy, out.depth, out.visible)
    return clip, (vary if with_shading else None)


class VertexBuffers:
    """The vertex stage's (N, 4) clip and (N, V) varyings arrays, kept between frames and
    grown (by half again, never shrunk) when N increases: a frame allocates nothing."""

    def __init__(self):
        self._clip = np.empty((0, 4))
        self._vary = np.empty((0, VARYING_COUNT))

    def clip(self, n: int) -> np.ndarray:
        if len(self._clip) < n:
            self._clip = np.empty((max(n, len(self._clip) * 3 // 2), 4))
        return self._clip[:n]

    def varyings(self, n: int) -> np.ndarray:
        if len(self._vary) < n:
            self._vary = np.empty((max(n, len(self._vary) * 3 // 2), VARYING_COUNT))
        return self._vary[:n]
