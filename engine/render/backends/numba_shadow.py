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

``draw_casters`` is the light's whole pass after its vertex stage in one compiled pass
over the casters' triangles, without the TriangleSetup's arrays: each thread takes every
triangle, classifies it as the setup does (the same clip tests, adjugate, culling and
snapping, float64 operations in the same order), and draws the small ones (bounding
boxes of at most SMALL_BOX texel centres each way, most triangles of a detailed mesh in a 2048^2
map) straight away in its own band of rows; the larger ones are queued for
``raster_depth``'s walk, and the few that need clipping (outside a clip plane, not
finite) for the setup's own clipping path. The map is the same bit for bit.

``DepthMap`` keeps, per row, the span of texels drawn since its last clear, and its
``clear`` refills only those: the texels no caster reached stay 1.0 from frame to
frame.
"""

from __future__ import annotations

import numba
import numpy as np

from ..triangles import _PLANES, HALF, SUBPIXEL, TriangleSetup, Workspace
from .kernel_cache import cached
from .numba_triangles import adjugate, pixel_box, setup_triangles_numba

__all__ = ["DepthMap", "draw_casters", "fold_keys", "raster_depth"]

_opts = {"cache": cached(), "boundscheck": False, "error_model": "numpy"}
# bounding boxes narrower than this many texels test each texel; wider ones solve each
# row's covered span (its three integer divisions cost more than a few tests)
NARROW_BOX = 16
# bounding boxes of at most this many texel centres each way are drawn inside draw_casters' pass
# (texel by texel, one branch per texel); larger ones by raster_depth's walk, whose
# rows cost less for them (measured: the coin game's 14 x 16 texel pieces)
SMALL_BOX = 8


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
    _clear_rows(depth, row_lo, row_hi, size, 0, size)


@numba.njit(inline="always")
def _clear_rows(depth, row_lo, row_hi, size, first, stop):
    """Rows [first, stop) of ``DepthMap.clear``."""
    for py in range(first, stop):
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
            if narrow:  # each texel tested: faster here than solving the spans (performance.md)
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


def draw_casters(target: DepthMap, clip, triangles, cull_back, workspace: Workspace,
                 clear: bool = False) -> DepthMap:
    """The nearest window depth of the triangles ``triangles`` of clip-space vertices
    ``clip`` folded into ``target`` in place, as ``raster_depth`` of their TriangleSetup
    would (the same map bit for bit), in one pass over the triangles (the module
    docstring); with ``clear`` the map is first cleared as ``DepthMap.clear`` does, in
    the same pass (each thread its own rows: no second launch). Returns ``target``.

    Args:
        target: the map (S x S; the viewport of the setup it stands for).
        clip: (N, 4) float64 clip-space vertices (the light's vertex stage).
        triangles: (T, 3) int64 vertex indices.
        cull_back: (T,) bool, True where a back face (det <= 0 in NDC) is dropped.
        workspace: engine.render.triangles.Workspace for the queues (reused; its arrays
            are named ``cast_*``, beside the setup's own for the clipped triangles).
    """
    clip = np.ascontiguousarray(clip, np.float64)
    triangles = np.ascontiguousarray(triangles, np.int64)
    cull_back = np.ascontiguousarray(cull_back, np.bool_)
    t, size = len(triangles), target.size
    if not t:
        if clear:
            target.clear()
        return target
    g, eps = float(_PLANES[3, 3]), float(-_PLANES[2, 4])
    # the queued pieces' coordinates and triangles as int32 where they fit, as the setup
    # stores them (raster_depth's kernel then has one signature)
    itype = np.int32 if (g + 1.0) * 0.5 * size * SUBPIXEL < 2**31 and t < 2**31 else np.int64
    rest = workspace.array("cast_rest", (t,), np.int64)
    qx = workspace.array("cast_x", (t, 3), itype)
    qy = workspace.array("cast_y", (t, 3), itype)
    qtri = workspace.array("cast_tri", (t,), itype)
    adj = workspace.array("cast_adj", (t, 3, 3), np.float64)
    counts = workspace.array("cast_counts", (2,), np.int64)
    bands = numba.get_num_threads()  # the caller picks the thread count (StageThreads)
    depth = target.depth.reshape(-1)
    _draw(clip, triangles, cull_back, size, g, eps, target.centres, depth, target.row_lo,
          target.row_hi, bands, clear, rest, qx, qy, qtri, adj, counts)
    n_rest, n_queued = int(counts[0]), int(counts[1])
    if n_queued:
        _raster(qx[:n_queued], qy[:n_queued], qtri[:n_queued], adj, clip, triangles, size,
                target.centres, depth, target.row_lo, target.row_hi, bands)
    if n_rest:  # clipped by the setup's Sutherland-Hodgman (or dropped there)
        sel = rest[:n_rest]
        raster_depth(target, setup_triangles_numba(clip, triangles[sel], cull_back[sel],
                                                   (size, size), workspace))
    return target


@numba.njit(**{**_opts, "parallel": True})
def _draw(clip, tris, cull_back, size, g, eps, centres, depth, row_lo, row_hi, bands, clear,
          rest, qx, qy, qtri, adj, counts):
    """Each of ``bands`` threads (first clearing its rows, with ``clear``) draws the
    small triangles' part in its band of rows (no two write the same texel); band 0 also
    queues the others (``counts``: how many triangles in ``rest`` and pieces in ``qx``,
    ``qy``, ``qtri``, with their adjugates at their triangles' rows of ``adj``)."""
    for band in numba.prange(bands):
        lo, hi = band * size // bands, (band + 1) * size // bands
        if clear:
            _clear_rows(depth, row_lo, row_hi, size, lo, hi)
        _draw_band(clip, tris, cull_back, size, g, eps, centres, depth, row_lo, row_hi, lo,
                   hi, band == 0, rest, qx, qy, qtri, adj, counts)


@numba.njit(inline="always")
def _inside(x, y, z, w, g, eps):
    """Inside all 7 clip planes of triangles._PLANES (numba_triangles' tests) and finite:
    any NaN fails a comparison; an infinite w passes them all, hence its own test."""
    return (z >= -w and z <= w and w >= eps and x >= -g * w and x <= g * w
            and y >= -g * w and y <= g * w and w < np.inf)


@numba.njit(inline="always")
def _snap_x(q, half):
    """numba_triangles' snap of NDC x ``q`` (``x / w``): fixed-point texels."""
    return np.int64(np.rint((q + 1.0) * half * SUBPIXEL))


@numba.njit(inline="always")
def _snap_y(q, half):
    """numba_triangles' snap of NDC y ``q`` (``y / w``): fixed-point texels, y down."""
    return np.int64(np.rint((1.0 - q) * half * SUBPIXEL))


@numba.njit(**_opts)
def _draw_band(clip, tris, cull_back, size, g, eps, centres, depth, row_lo, row_hi, band_lo,
               band_hi, first, rest, qx, qy, qtri, adj, counts):
    half = 0.5 * size
    n_rest = 0
    n_queued = 0
    step = np.int64(SUBPIXEL)
    for t in range(tris.shape[0]):
        i0, i1, i2 = tris[t, 0], tris[t, 1], tris[t, 2]
        x0, y0, z0, w0 = clip[i0, 0], clip[i0, 1], clip[i0, 2], clip[i0, 3]
        x1, y1, z1, w1 = clip[i1, 0], clip[i1, 1], clip[i1, 2], clip[i1, 3]
        x2, y2, z2, w2 = clip[i2, 0], clip[i2, 1], clip[i2, 2], clip[i2, 3]
        if not (_inside(x0, y0, z0, w0, g, eps) and _inside(x1, y1, z1, w1, g, eps)
                and _inside(x2, y2, z2, w2, g, eps)):
            if first:  # for the setup: clipped, rejected or not finite there
                rest[n_rest] = t
                n_rest += 1
            continue
        # numba_triangles._classify's adjugate, determinant and culling
        a00, a01, a02, a10, a11, a12, a20, a21, a22 = adjugate(x0, y0, w0, x1, y1, w1, x2,
                                                               y2, w2)
        d = x0 * a00 + x1 * a10 + x2 * a20
        if not np.isfinite(d) or d == 0 or (d < 0 and cull_back[t]):
            continue
        # an orthographic map's w is 1 exactly, and then y / w is y: no divisions
        ortho = w0 == 1.0 and w1 == 1.0 and w2 == 1.0
        if ortho:
            Y0, Y1, Y2 = _snap_y(y0, half), _snap_y(y1, half), _snap_y(y2, half)
        else:
            Y0, Y1, Y2 = _snap_y(y0 / w0, half), _snap_y(y1 / w1, half), _snap_y(y2 / w2, half)
        by0 = max(-((HALF - min(Y0, Y1, Y2)) // SUBPIXEL), 0)
        by1 = min((max(Y0, Y1, Y2) - HALF) // SUBPIXEL, size - 1)
        if by0 > by1:
            continue
        small = by1 - by0 < SMALL_BOX
        if small and not first and (by1 < band_lo or by0 >= band_hi):
            continue  # not in this band (band 0 queues the large ones)
        if ortho:
            X0, X1, X2 = _snap_x(x0, half), _snap_x(x1, half), _snap_x(x2, half)
        else:
            X0, X1, X2 = _snap_x(x0 / w0, half), _snap_x(x1 / w1, half), _snap_x(x2 / w2, half)
        area = (X1 - X0) * (Y2 - Y0) - (Y1 - Y0) * (X2 - X0)
        if area == 0:
            continue
        if area < 0:  # oriented to a positive area, as numba_triangles._emit does
            X1, X2 = X2, X1
            Y1, Y2 = Y2, Y1
        bx0 = max(-((HALF - min(X0, X1, X2)) // SUBPIXEL), 0)
        bx1 = min((max(X0, X1, X2) - HALF) // SUBPIXEL, size - 1)
        if bx0 > bx1:
            continue
        if not (small and bx1 - bx0 < SMALL_BOX):
            if first:
                qx[n_queued, 0], qx[n_queued, 1], qx[n_queued, 2] = X0, X1, X2
                qy[n_queued, 0], qy[n_queued, 1], qy[n_queued, 2] = Y0, Y1, Y2
                qtri[n_queued] = t
                adj[t, 0, 0], adj[t, 0, 1], adj[t, 0, 2] = a00, a01, a02
                adj[t, 1, 0], adj[t, 1, 1], adj[t, 1, 2] = a10, a11, a12
                adj[t, 2, 0], adj[t, 2, 1], adj[t, 2, 2] = a20, a21, a22
                n_queued += 1
            continue
        ry0, ry1 = max(by0, band_lo), min(by1, band_hi - 1)
        if ry0 > ry1:
            continue
        dx0, dy0 = X2 - X1, Y2 - Y1
        dx1, dy1 = X0 - X2, Y0 - Y2
        dx2, dy2 = X1 - X0, Y1 - Y0
        cy = ry0 * step + HALF
        cx = bx0 * step + HALF
        # the edge functions at the box's first texel less their top-left biases
        # (triangles.edge_bias, as _raster_band's): covered where all three are >= 0,
        # which is where their bitwise OR is (one branch per texel, not three)
        r0 = dx0 * (cy - Y1) - dy0 * (cx - X1) - (0 if (dy0 < 0 or (dy0 == 0 and dx0 > 0))
                                                    else 1)
        r1 = dx1 * (cy - Y2) - dy1 * (cx - X2) - (0 if (dy1 < 0 or (dy1 == 0 and dx1 > 0))
                                                    else 1)
        r2 = dx2 * (cy - Y0) - dy2 * (cx - X0) - (0 if (dy2 < 0 or (dy2 == 0 and dx2 > 0))
                                                    else 1)
        for py in range(ry0, ry1 + 1):
            yn = -centres[py]
            row = py * size
            e0, e1, e2 = r0, r1, r2
            hit = False
            for px in range(bx0, bx1 + 1):
                if (e0 | e1 | e2) >= 0:
                    depth[row + px] = min(depth[row + px], _window_depth(
                        centres[px], yn, a00, a01, a02, a10, a11, a12, a20, a21, a22, z0,
                        z1, z2, w0, w1, w2))
                    hit = True
                e0 -= dy0 * step
                e1 -= dy1 * step
                e2 -= dy2 * step
            if hit:  # the box's columns: a superset of the row's drawn texels
                row_lo[py] = min(row_lo[py], bx0)
                row_hi[py] = max(row_hi[py], bx1 + 1)
            r0 += dx0 * step
            r1 += dx1 * step
            r2 += dx2 * step
    if first:
        counts[0] = n_rest
        counts[1] = n_queued
