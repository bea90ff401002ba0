"""The Numba backend's shadow-map pass: a depth-only raster into a float32 map.

The shadow pass (engine.render.shadows) needs only each texel's nearest depth, not the
key buffer's triangle ids. ``raster_depth`` draws a TriangleSetup straight into an
(S, S) float32 map: the same coverage (fixed-point edge functions, top-left rule) and
the same window depth, computed with the same float64 operations in the same order, as
the key raster of numba_triangles, so the map equals engine.render.shadows.depth_of_keys
of the reference's keys bit for bit (the minimum key's high word is the minimum depth:
window depths are >= 0, whose float32 bits order as the values do). What it saves:
half the memory of a uint64 key per texel to clear and write, and the pass that turns
keys into depths.

Each row of a wide piece's bounding box is walked only over its covered span, solved
from the three integer edge functions (exact: the same integers the per-texel test
compares), so a large triangle costs its covered texels rather than its whole box, in a
loop LLVM vectorizes; a narrow one (under NARROW_BOX texels) tests each texel.

``DepthMap`` keeps, per row, the span of texels drawn since its last clear, and its
``clear`` refills only those: the texels no caster reached stay 1.0 from frame to
frame.
"""

from __future__ import annotations

import numba
import numpy as np

from ..triangles import HALF, SUBPIXEL, TriangleSetup
from .kernel_cache import cached
from .numba_triangles import pixel_box

__all__ = ["DepthMap", "fold_keys", "raster_depth"]

_opts = {"cache": cached(), "boundscheck": False, "error_model": "numpy"}
# bounding boxes narrower than this many texels test each texel; wider ones solve each
# row's covered span (its three integer divisions cost more than a few tests)
NARROW_BOX = 16


class DepthMap:
    """An S x S shadow map reused from frame to frame.

    Attributes:
        depth: (S, S) float32 window depth, row 0 at the top; 1.0 where nothing drew.
        row_lo, row_hi: (S,) int64, per row the texels [lo, hi) drawn since the last
            ``clear`` (lo = S, hi = 0: none).
        centres: (S,) float64, ``(2 i + 1) / S - 1``: the NDC x of column i's texel
            centres (and, negated, the NDC y of row i's: the same value exactly), the
            raster's divisions done once.
    """

    def __init__(self, size: int):
        self.size = int(size)
        self.depth = np.ones((self.size, self.size), np.float32)
        self.row_lo = np.full(self.size, self.size, np.int64)
        self.row_hi = np.zeros(self.size, np.int64)
        self.centres = (2.0 * np.arange(self.size) + 1.0) / self.size - 1.0

    def clear(self):
        """Every texel back to 1.0 (only the drawn spans are written)."""
        _clear(self.depth.reshape(-1), self.row_lo, self.row_hi, self.size)


# serial: a memory-bound fill, 0.4 ms for 2048^2 on one thread, where a parallel loop
# took 8 to 20 ms waiting for the second core of the loaded machine (measured)
@numba.njit(**_opts)
def _clear(depth, row_lo, row_hi, size):
    for py in range(size):
        if row_lo[py] < row_hi[py]:
            depth[py * size + row_lo[py]: py * size + row_hi[py]] = np.float32(1.0)
        row_lo[py] = size
        row_hi[py] = 0


def raster_depth(target: DepthMap, setup: TriangleSetup, pieces=None) -> DepthMap:
    """The nearest window depth of ``setup``'s pieces (all, or the indices ``pieces``)
    folded into ``target`` (a map of the setup's viewport, S x S) in place: each covered
    texel keeps the minimum of its depth and the piece's. Returns ``target``."""
    sel = slice(None) if pieces is None else np.asarray(pieces, np.int64)
    x = np.ascontiguousarray(setup.x[sel])
    y = np.ascontiguousarray(setup.y[sel])
    if len(x):
        # one band of rows per thread; the caller picks the thread count
        # (engine.render.backends.threads.StageThreads)
        _raster(x, y, np.ascontiguousarray(setup.piece_tri[sel]), setup.adj,
                np.ascontiguousarray(setup.clip, np.float64),
                np.ascontiguousarray(setup.triangles, np.int64), target.size,
                target.centres, target.depth.reshape(-1), target.row_lo, target.row_hi,
                numba.get_num_threads())
    return target


@numba.njit(**{**_opts, "parallel": True})
def _raster(x, y, piece_tri, adj, clip, tris, size, centres, depth, row_lo, row_hi, bands):
    """Each of ``bands`` threads owns a band of rows (no two write the same texel)."""
    for band in numba.prange(bands):
        _raster_band(x, y, piece_tri, adj, clip, tris, size, centres, depth, row_lo, row_hi,
                     band * size // bands, (band + 1) * size // bands)


@numba.njit(inline="always")
def _span(lo, hi, e, b, d):
    """[lo, hi] narrowed to the steps j with e - d j >= b (integers; d the edge's
    decrement per texel)."""
    c = e - b
    if d > 0:
        hi = min(hi, c // d)
    elif d < 0:
        lo = max(lo, -(c // -d))  # ceil(c / d)
    elif c < 0:
        hi = lo - 1
    return lo, hi


@numba.njit(**_opts)
def _raster_band(x, y, piece_tri, adj, clip, tris, size, centres, depth, row_lo, row_hi,
                 band_lo, band_hi):
    for m in range(x.shape[0]):
        # the texel centres inside the bounding box, clamped to the map and the band
        bx0, bx1, by0, by1 = pixel_box(x[m, 0], x[m, 1], x[m, 2], y[m, 0], y[m, 1], y[m, 2],
                                       size, band_lo, band_hi)
        if bx0 > bx1 or by0 > by1:
            continue
        t = piece_tri[m]
        a00, a01, a02 = adj[t, 0, 0], adj[t, 0, 1], adj[t, 0, 2]
        a10, a11, a12 = adj[t, 1, 0], adj[t, 1, 1], adj[t, 1, 2]
        a20, a21, a22 = adj[t, 2, 0], adj[t, 2, 1], adj[t, 2, 2]
        i0, i1, i2 = tris[t, 0], tris[t, 1], tris[t, 2]
        z0, z1, z2 = clip[i0, 2], clip[i1, 2], clip[i2, 2]
        w0, w1, w2 = clip[i0, 3], clip[i1, 3], clip[i2, 3]
        # edge i runs from vertex i+1 to vertex i+2: E_i(p) = dx_i (py - ya) - dy_i (px - xa)
        xa0, ya0 = x[m, 1], y[m, 1]
        xa1, ya1 = x[m, 2], y[m, 2]
        xa2, ya2 = x[m, 0], y[m, 0]
        dx0, dy0 = x[m, 2] - x[m, 1], y[m, 2] - y[m, 1]
        dx1, dy1 = x[m, 0] - x[m, 2], y[m, 0] - y[m, 2]
        dx2, dy2 = x[m, 1] - x[m, 0], y[m, 1] - y[m, 0]
        # top-left rule (triangles.edge_bias): 0 on a top or left edge, else 1
        b0 = 0 if (dy0 < 0 or (dy0 == 0 and dx0 > 0)) else 1
        b1 = 0 if (dy1 < 0 or (dy1 == 0 and dx1 > 0)) else 1
        b2 = 0 if (dy2 < 0 or (dy2 == 0 and dx2 > 0)) else 1
        step = np.int64(SUBPIXEL)
        narrow = bx1 - bx0 < NARROW_BOX
        for py in range(by0, by1 + 1):
            cy = py * step + HALF
            cx = bx0 * step + HALF
            e0 = dx0 * (cy - ya0) - dy0 * (cx - xa0)
            e1 = dx1 * (cy - ya1) - dy1 * (cx - xa1)
            e2 = dx2 * (cy - ya2) - dy2 * (cx - xa2)
            yn = -centres[py]  # 1 - (2 py + 1) / S
            if narrow:  # each texel tested, as numba_triangles does
                px0, px1 = bx0, bx1
                row = py * size
                for px in range(bx0, bx1 + 1):
                    if e0 >= b0 and e1 >= b1 and e2 >= b2:
                        depth[row + px] = min(depth[row + px], _window_depth(
                            centres[px], yn, a00, a01, a02, a10, a11, a12, a20, a21, a22,
                            z0, z1, z2, w0, w1, w2))
                    e0 -= dy0 * step
                    e1 -= dy1 * step
                    e2 -= dy2 * step
            else:
                lo, hi = _span(np.int64(0), np.int64(bx1 - bx0), e0, b0, dy0 * step)
                lo, hi = _span(lo, hi, e1, b1, dy1 * step)
                lo, hi = _span(lo, hi, e2, b2, dy2 * step)
                if lo > hi:
                    continue
                px0, px1 = bx0 + lo, bx0 + hi
                # the span as a view indexed from 0: indices known non-negative, so LLVM
                # vectorizes the loop (a variable start kept Numba's negative-index
                # wraparound in it and cost 8 times as much, measured)
                span = depth[py * size + px0: py * size + px1 + 1]
                xs = centres[px0: px1 + 1]
                for j in range(span.shape[0]):
                    span[j] = min(span[j], _window_depth(
                        xs[j], yn, a00, a01, a02, a10, a11, a12, a20, a21, a22, z0, z1, z2,
                        w0, w1, w2))
            row_lo[py] = min(row_lo[py], px0)
            row_hi[py] = max(row_hi[py], px1 + 1)


@numba.njit(inline="always")
def _window_depth(xn, yn, a00, a01, a02, a10, a11, a12, a20, a21, a22, z0, z1, z2, w0, w1,
                  w2):
    """float32 window depth at NDC (xn, yn) from the homogeneous barycentrics (the key
    raster's float64 operations in its order)."""
    h0 = a00 * xn + a01 * yn + a02
    h1 = a10 * xn + a11 * yn + a12
    h2 = a20 * xn + a21 * yn + a22
    zn = (h0 * z0 + h1 * z1 + h2 * z2) / (h0 * w0 + h1 * w1 + h2 * w2)
    return np.float32(min(max(zn * 0.5 + 0.5, 0.0), 1.0))


def fold_keys(target: DepthMap, keys) -> DepthMap:
    """The depths of an (S * S,) uint64 key buffer (engine.render.frame keys: depth bits
    in the high word, empty keys skipped) folded into ``target`` by minimum, in place:
    the alpha-tested casters, which the NumPy raster draws into keys. Returns it."""
    _fold(keys, target.depth.reshape(-1), target.row_lo, target.row_hi, target.size)
    return target


@numba.njit(**{**_opts, "parallel": True})
def _fold(keys, depth, row_lo, row_hi, size):
    empty = np.uint64(0xFFFFFFFFFFFFFFFF)
    for py in numba.prange(size):
        row = py * size
        for px in range(size):
            k = keys[row + px]
            if k == empty:
                continue
            d = np.uint32(k >> np.uint64(32)).view(np.float32)
            depth[row + px] = min(depth[row + px], d)
            row_lo[py] = min(row_lo[py], px)
            row_hi[py] = max(row_hi[py], px + 1)
