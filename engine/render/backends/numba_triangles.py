"""Triangle setup and rasterizer compiled by Numba: the CPU fast path for
``setup_triangles`` and ``raster_triangles``.

``setup_triangles_numba`` builds the NumPy reference's ``TriangleSetup``
(engine.render.triangles) with the same values in compiled passes over reused arrays
(classify, compaction at block prefix offsets, Sutherland-Hodgman). The raster consumes
any TriangleSetup and writes the reference's keys: fixed-point edge functions with the top-left rule, window depth
from the homogeneous barycentrics with the same float64 operations in the same order, so
the key buffers are bit-identical. The NumPy version expands every candidate pixel into
arrays; this one walks each piece's bounding box row by row: the three integer edge
functions change by constant increments along a row (Pineda, "A parallel algorithm for
polygon rasterization", SIGGRAPH 1988), so each row's covered span follows from their
values at its first column exactly, and depth is computed only for covered pixels. That walk
(``walk_piece``) is shared with the k-buffer raster (numba_layers) and the multisampled
one (``raster_samples_numba``: every piece walked at each sample position from the one
setup, engine.render.msaa).
"""

from __future__ import annotations

import numba
import numpy as np

from ..triangles import _PLANES, HALF, SUBPIXEL, TriangleSetup, Workspace
from .kernel_cache import cached

_opts = {"cache": cached(), "boundscheck": False, "error_model": "numpy"}


@numba.njit(inline="always")
def _inside(p, x, y, z, w, g, eps):
    if p == 0:
        return z >= -w     # near
    if p == 1:
        return z <= w      # far
    if p == 2:
        return w >= eps    # w >= W_EPSILON
    if p == 3:
        return x >= -g * w  # guard band
    if p == 4:
        return x <= g * w
    if p == 5:
        return y >= -g * w
    return y <= g * w


@numba.njit(inline="always")
def _plane_distance(p, x, y, z, w, g, eps):
    """Signed distance to clip plane ``p`` of triangles._PLANES with the floating-point
    operations NumPy's ``plane[:4] @ v + plane[4]`` performs (the zero terms are exact),
    so the clipped vertices are bit-identical to the reference's."""
    if p == 0:
        return z + w
    if p == 1:
        return w - z
    if p == 2:
        return w - eps
    if p == 3:
        return x + g * w
    if p == 4:
        return g * w - x
    if p == 5:
        return y + g * w
    return g * w - y


@numba.njit(inline="always")
def _snap_px(x, w, hw):
    return np.int64(np.rint((x / w + 1.0) * hw * SUBPIXEL))


@numba.njit(inline="always")
def _snap_py(y, w, hh):
    return np.int64(np.rint((1.0 - y / w) * hh * SUBPIXEL))


@numba.njit(inline="always")
def adjugate(x0, y0, w0, x1, y1, w1, x2, y2, w2):
    """The adjugate of M = [x; y; w] (rows; columns the three vertices), row-major: the
    products triangles.classify_triangles forms, in its order, so every compiled pass that
    sets a triangle up (the classify pass, the MSAA samples' moved vertices,
    numba_shadow.draw_casters) has the reference's values bit for bit."""
    return (y1 * w2 - y2 * w1, x2 * w1 - x1 * w2, x1 * y2 - x2 * y1,
            y2 * w0 - y0 * w2, x0 * w2 - x2 * w0, x2 * y0 - x0 * y2,
            y0 * w1 - y1 * w0, x1 * w0 - x0 * w1, x0 * y1 - x1 * y0)


@numba.njit(**{**_opts, "parallel": True})
def _classify(clip, tris, cull_back, width, height, g, eps, block, adj, front, status,
              counts):
    """Per triangle: adj, front and status (0 dropped, 1 drawn whole with a
    non-zero snapped area, 2 to be clipped); per block of ``block`` triangles the number
    of status 1 and status 2 triangles in ``counts`` (B, 2)."""
    t_count = tris.shape[0]
    hw, hh = 0.5 * width, 0.5 * height
    for b in numba.prange(counts.shape[0]):
        n_whole = 0
        n_cut = 0
        for t in range(b * block, min((b + 1) * block, t_count)):
            i0, i1, i2 = tris[t, 0], tris[t, 1], tris[t, 2]
            x0, y0, z0, w0 = clip[i0, 0], clip[i0, 1], clip[i0, 2], clip[i0, 3]
            x1, y1, z1, w1 = clip[i1, 0], clip[i1, 1], clip[i1, 2], clip[i1, 3]
            x2, y2, z2, w2 = clip[i2, 0], clip[i2, 1], clip[i2, 2], clip[i2, 3]
            a00, a01, a02, a10, a11, a12, a20, a21, a22 = adjugate(x0, y0, w0, x1, y1, w1,
                                                                   x2, y2, w2)
            adj[t, 0, 0], adj[t, 0, 1], adj[t, 0, 2] = a00, a01, a02
            adj[t, 1, 0], adj[t, 1, 1], adj[t, 1, 2] = a10, a11, a12
            adj[t, 2, 0], adj[t, 2, 1], adj[t, 2, 2] = a20, a21, a22
            d = x0 * a00 + x1 * a10 + x2 * a20
            front[t] = d > 0
            status[t] = 0
            if not (np.isfinite(x0) and np.isfinite(y0) and np.isfinite(z0)
                    and np.isfinite(w0) and np.isfinite(x1) and np.isfinite(y1)
                    and np.isfinite(z1) and np.isfinite(w1) and np.isfinite(x2)
                    and np.isfinite(y2) and np.isfinite(z2) and np.isfinite(w2)
                    and np.isfinite(d)):
                continue
            if d == 0 or (d < 0 and cull_back[t]):
                continue
            # fl(a + b) >= 0 exactly when a >= -b (rounding keeps the sign), so these
            # direct comparisons classify as NumPy's a x + b y + c z + d w + e >= 0 does
            all_in = True
            rejected = False
            for p in range(7):
                in0 = _inside(p, x0, y0, z0, w0, g, eps)
                in1 = _inside(p, x1, y1, z1, w1, g, eps)
                in2 = _inside(p, x2, y2, z2, w2, g, eps)
                if not (in0 or in1 or in2):
                    rejected = True
                    break
                if not (in0 and in1 and in2):
                    all_in = False
            if rejected:
                continue
            if not all_in:
                status[t] = 2
                n_cut += 1
                continue
            X0, X1, X2 = _snap_px(x0, w0, hw), _snap_px(x1, w1, hw), _snap_px(x2, w2, hw)
            Y0, Y1, Y2 = _snap_py(y0, w0, hh), _snap_py(y1, w1, hh), _snap_py(y2, w2, hh)
            if (X1 - X0) * (Y2 - Y0) - (Y1 - Y0) * (X2 - X0) != 0:
                status[t] = 1
                n_whole += 1
        counts[b, 0] = n_whole
        counts[b, 1] = n_cut


@numba.njit(inline="always")
def _emit(x, y, piece_tri, m, t, X0, X1, X2, Y0, Y1, Y2):
    """Write piece ``m`` of triangle ``t``, oriented to a positive area (vertices 1 and
    2 swapped where it is negative, as triangles._snap does)."""
    if (X1 - X0) * (Y2 - Y0) - (Y1 - Y0) * (X2 - X0) < 0:
        X1, X2 = X2, X1
        Y1, Y2 = Y2, Y1
    x[m, 0], x[m, 1], x[m, 2] = X0, X1, X2
    y[m, 0], y[m, 1], y[m, 2] = Y0, Y1, Y2
    piece_tri[m] = t


@numba.njit(**{**_opts, "parallel": True})
def _compact(clip, tris, status, width, height, block, offsets, x, y, piece_tri, cut):
    """Pieces of the whole triangles in index order (block b writes from offsets[b, 0])
    and the indices of the triangles to clip (from offsets[b, 1] into ``cut``)."""
    t_count = tris.shape[0]
    hw, hh = 0.5 * width, 0.5 * height
    for b in numba.prange(offsets.shape[0]):
        m = offsets[b, 0]
        c = offsets[b, 1]
        for t in range(b * block, min((b + 1) * block, t_count)):
            s = status[t]
            if s == 2:
                cut[c] = t
                c += 1
            elif s == 1:
                i0, i1, i2 = tris[t, 0], tris[t, 1], tris[t, 2]
                _emit(x, y, piece_tri, m, t,
                      _snap_px(clip[i0, 0], clip[i0, 3], hw), _snap_px(clip[i1, 0], clip[i1, 3], hw),
                      _snap_px(clip[i2, 0], clip[i2, 3], hw), _snap_py(clip[i0, 1], clip[i0, 3], hh),
                      _snap_py(clip[i1, 1], clip[i1, 3], hh), _snap_py(clip[i2, 1], clip[i2, 3], hh))
                m += 1


MAX_POLYGON = 3 + 7  # a triangle clipped by 7 planes: each adds at most one vertex


@numba.njit(**_opts)
def _clip_pieces(clip, tris, cut, width, height, g, eps, start, x, y, piece_tri, poly,
                 dist):
    """Sutherland-Hodgman against the 7 planes of triangles._PLANES for each triangle
    in ``cut``, fanned from the polygon's first vertex; pieces with a non-zero snapped
    area are written from index ``start`` on. ``poly`` (2, MAX_POLYGON, 4) and ``dist``
    (MAX_POLYGON,) float64: scratch. Returns the number of pieces written. Same operations in the same order
    as triangles._clip_polygon, so the pieces are the reference's bit for bit."""
    hw, hh = 0.5 * width, 0.5 * height
    m = start
    for k in range(cut.shape[0]):
        t = cut[k]
        for v in range(3):
            for c in range(4):
                poly[0, v, c] = clip[tris[t, v], c]
        n = 3
        src = 0
        for p in range(7):
            if n == 0:
                break
            for i in range(n):
                dist[i] = _plane_distance(p, poly[src, i, 0], poly[src, i, 1],
                                          poly[src, i, 2], poly[src, i, 3], g, eps)
            dst = 1 - src
            out = 0
            for i in range(n):
                j = (i + 1) % n
                if dist[i] >= 0:
                    for c in range(4):
                        poly[dst, out, c] = poly[src, i, c]
                    out += 1
                if (dist[i] >= 0) != (dist[j] >= 0):
                    s = dist[i] / (dist[i] - dist[j])
                    for c in range(4):
                        poly[dst, out, c] = poly[src, i, c] + s * (poly[src, j, c] - poly[src, i, c])
                    out += 1
            n = out
            src = dst
        for f in range(1, n - 1):  # fan: the polygon is convex
            X0 = _snap_px(poly[src, 0, 0], poly[src, 0, 3], hw)
            X1 = _snap_px(poly[src, f, 0], poly[src, f, 3], hw)
            X2 = _snap_px(poly[src, f + 1, 0], poly[src, f + 1, 3], hw)
            Y0 = _snap_py(poly[src, 0, 1], poly[src, 0, 3], hh)
            Y1 = _snap_py(poly[src, f, 1], poly[src, f, 3], hh)
            Y2 = _snap_py(poly[src, f + 1, 1], poly[src, f + 1, 3], hh)
            if (X1 - X0) * (Y2 - Y0) - (Y1 - Y0) * (X2 - X0) != 0:
                _emit(x, y, piece_tri, m, t, X0, X1, X2, Y0, Y1, Y2)
                m += 1
    return m - start


SETUP_BLOCK = 4096  # triangles per block of the classify and compaction passes


def setup_triangles_numba(clip, triangles, cull_back, size, workspace=None) -> TriangleSetup:
    """Numba twin of ``engine.render.triangles.setup_triangles``: the same TriangleSetup
    (same pieces in the same order, the same values; ``piece_tri``, ``x`` and ``y`` are
    int32 where they fit, always below 900,000 pixels), with no Python or NumPy work per
    triangle: a parallel classify pass counts the drawn and the to-be-clipped triangles
    per block of SETUP_BLOCK, a parallel compaction pass writes the whole triangles'
    pieces at the blocks' prefix offsets, and a compiled Sutherland-Hodgman pass
    appends the clipped triangles' pieces.

    Args:
        clip: (N, 4) float64 clip-space vertices.
        triangles: (T, 3) int64 vertex indices.
        cull_back: (T,) bool, True where back faces are dropped.
        size: (width, height) of the viewport in pixels.
        workspace: an engine.render.triangles.Workspace: the setup's arrays are views of
            it, valid until its next use (none is allocated once it has grown), or None
            for new arrays.
    """
    clip = np.ascontiguousarray(clip, np.float64)
    triangles = np.ascontiguousarray(triangles, np.int64)
    cull_back = np.ascontiguousarray(cull_back, np.bool_)
    ws = Workspace() if workspace is None else workspace
    t = triangles.shape[0]
    width, height = float(size[0]), float(size[1])
    g, eps = float(_PLANES[3, 3]), float(-_PLANES[2, 4])
    blocks = max(-(-t // SETUP_BLOCK), 1)
    adj = ws.array("adj", (t, 3, 3), np.float64)
    front = ws.array("front", (t,), np.bool_)
    status = ws.array("status", (t,), np.int8)
    counts = ws.array("counts", (blocks, 2), np.int64)
    counts.fill(0)
    _classify(clip, triangles, cull_back, width, height, g, eps, SETUP_BLOCK, adj, front,
              status, counts)
    offsets = ws.array("offsets", (blocks, 2), np.int64)
    np.cumsum(counts, axis=0, out=offsets)
    n_whole, n_cut = int(offsets[-1, 0]), int(offsets[-1, 1])
    offsets -= counts  # exclusive prefix sums
    room = n_whole + (MAX_POLYGON - 2) * n_cut  # a clipped triangle: at most 8 pieces
    # int32 pieces (half the reference's int64) where they fit: snapped coordinates lie
    # within the guard band, |x| <= (GUARD + 1) * width / 2 * SUBPIXEL; the edge
    # functions are evaluated in int64 all the same
    small = (g + 1.0) * 0.5 * max(width, height) * SUBPIXEL < 2**31 and t < 2**31
    itype = np.int32 if small else np.int64
    x, y = ws.array("x", (room, 3), itype), ws.array("y", (room, 3), itype)
    piece_tri = ws.array("piece_tri", (room,), itype)
    cut = ws.array("cut", (n_cut,), np.int64)
    _compact(clip, triangles, status, width, height, SETUP_BLOCK, offsets, x, y, piece_tri,
             cut)
    n = n_whole
    if n_cut:
        n += _clip_pieces(clip, triangles, cut, width, height, g, eps, n_whole, x, y,
                          piece_tri, ws.array("polygon", (2, MAX_POLYGON, 4), np.float64),
                          ws.array("distance", (MAX_POLYGON,), np.float64))
    return TriangleSetup(piece_tri[:n], x[:n], y[:n], adj, clip, triangles, front)


@numba.njit(**{**_opts, "parallel": True})
def _raster(x, y, piece_tri, adj, clip, tris, width, height, id_base, keys, bands, xs):
    """Each of ``bands`` threads owns a band of rows and draws every piece's part in it,
    so no two threads write the same pixel (no atomics; the keys are those of one serial
    pass, the minimum being order-free)."""
    for band in numba.prange(bands):
        _raster_band(x, y, piece_tri, adj, clip, tris, width, height, id_base, keys,
                     band * height // bands, (band + 1) * height // bands, xs)


@numba.njit(inline="always")
def pixel_box(x0, x1, x2, y0, y1, y2, width, row_lo, row_hi):
    """(bx0, bx1, by0, by1): the columns and rows of the pixel (or texel) centres inside
    the bounding box of the snapped vertices (x0, y0)..(x2, y2), clamped to columns
    [0, width) and rows [row_lo, row_hi); empty when bx0 > bx1 or by0 > by1 (the integer
    arithmetic of triangles.pixel_bounds)."""
    mnx, mxx = min(x0, x1, x2), max(x0, x1, x2)
    mny, mxy = min(y0, y1, y2), max(y0, y1, y2)
    return (max(-((HALF - mnx) // SUBPIXEL), 0), min((mxx - HALF) // SUBPIXEL, width - 1),
            max(-((HALF - mny) // SUBPIXEL), row_lo), min((mxy - HALF) // SUBPIXEL, row_hi - 1))


@numba.njit(inline="always")
def walk_piece(x, y, m, ox, oy, width, height, row_lo, row_hi, key_low, a, zw, xs, visit,
               out, arg, s):
    """Every pixel of rows ``row_lo`` to ``row_hi`` - 1 whose centre piece ``m`` covers
    with its snapped vertices moved by (-ox, -oy) sub-pixels (the pixel grid moved by
    (ox, oy) / SUBPIXEL pixels onto a sample position; (0, 0): the plain raster):
    ``visit(out, arg, s, p, key)`` with the pixel ``p`` (row-major) and its key (window
    depth bits << 32 | ``key_low``).

    The one pixel walk of the triangle rasters (the keys here, the multisampled keys of
    engine.render.msaa, the k-buffer of numba_layers): the candidate pixels are the
    centres in the bounding box, clamped to the viewport (the integer arithmetic of
    triangles.pixel_bounds); on each row the integer edge functions (top-left rule,
    triangles.edge_bias), which change by constant steps along the row (Pineda, above),
    give the covered span exactly by one integer division per edge (``_edge_span``), and
    the loop over the span tests nothing; depth from the homogeneous barycentrics of the
    adjugate ``a`` (9 values, row-major) and ``zw`` (z0, z1, z2, w0, w1, w2) in the
    reference's float64 operations, the pixel centres' NDC x read from ``xs``
    (``ndc_columns``). Before, every pixel of the box was tested (docs/performance.md
    has both measured)."""
    x0, x1, x2 = x[m, 0] - ox, x[m, 1] - ox, x[m, 2] - ox
    y0, y1, y2 = y[m, 0] - oy, y[m, 1] - oy, y[m, 2] - oy
    bx0, bx1, by0, by1 = pixel_box(x0, x1, x2, y0, y1, y2, width, row_lo, row_hi)
    if bx0 > bx1 or by0 > by1:
        return
    a00, a01, a02, a10, a11, a12, a20, a21, a22 = a
    z0, z1, z2, w0, w1, w2 = zw
    # edge i runs from vertex i+1 to vertex i+2: E_i(p) = dx_i (py - ya) - dy_i (px - xa)
    xa0, ya0 = x1, y1
    xa1, ya1 = x2, y2
    xa2, ya2 = x0, y0
    dx0, dy0 = x2 - x1, y2 - y1
    dx1, dy1 = x0 - x2, y0 - y2
    dx2, dy2 = x1 - x0, y1 - y0
    # top-left rule (triangles.edge_bias): 0 on a top or left edge, else 1
    b0 = 0 if (dy0 < 0 or (dy0 == 0 and dx0 > 0)) else 1
    b1 = 0 if (dy1 < 0 or (dy1 == 0 and dx1 > 0)) else 1
    b2 = 0 if (dy2 < 0 or (dy2 == 0 and dx2 > 0)) else 1
    step = np.int64(SUBPIXEL)
    s0, s1, s2 = dy0 * step, dy1 * step, dy2 * step  # each edge's decrease per pixel
    last = bx1 - bx0
    for py in range(by0, by1 + 1):
        cy = py * step + HALF
        cx = bx0 * step + HALF
        lo0, hi0 = _edge_span(dx0 * (cy - ya0) - dy0 * (cx - xa0), s0, b0)
        lo1, hi1 = _edge_span(dx1 * (cy - ya1) - dy1 * (cx - xa1), s1, b1)
        lo2, hi2 = _edge_span(dx2 * (cy - ya2) - dy2 * (cx - xa2), s2, b2)
        lo, hi = max(lo0, lo1, lo2), min(hi0, hi1, hi2, last)
        if lo > hi:
            continue
        yn = 1.0 - (2.0 * py + 1.0) / height
        # the products of the row's y, once a row: a00 xn + a01 yn + a02 is summed in
        # the same order, so the depth is the reference's bit for bit
        c0, c1, c2 = a01 * yn, a11 * yn, a21 * yn
        row = py * width
        for px in range(bx0 + lo, bx0 + hi + 1):
            xn = xs[px]
            h0 = a00 * xn + c0 + a02
            h1 = a10 * xn + c1 + a12
            h2 = a20 * xn + c2 + a22
            zn = (h0 * z0 + h1 * z1 + h2 * z2) / (h0 * w0 + h1 * w1 + h2 * w2)
            d = min(max(zn * 0.5 + 0.5, 0.0), 1.0)
            bits = np.float32(d).view(np.uint32)
            visit(out, arg, s, row + px, (np.uint64(bits) << np.uint64(32)) | key_low)


# beyond any column: an edge that bounds no side of the span
_UNBOUNDED = np.int64(1) << np.int64(40)


@numba.njit(inline="always")
def _edge_span(e, d, b):
    """(first, last): the steps k >= 0 along a row where the edge function e - k d
    (its value at the box's first column, ``d`` its decrease per pixel) is at least the
    bias ``b``; first > last when there are none, ``_UNBOUNDED`` where the edge leaves
    that side open."""
    if e >= b:
        if d <= 0:  # the edge function never falls along the row
            return np.int64(0), _UNBOUNDED
        return np.int64(0), (e - b) // d
    if d >= 0:  # below the bias and never rising
        return _UNBOUNDED, np.int64(-1)
    return (b - e - d - 1) // -d, _UNBOUNDED  # ceil((b - e) / -d)


# ndc_columns' arrays by width: the last few widths drawn (renderers of a few sizes in
# one process), not every width a resized window passed through
_COLUMNS: dict[int, np.ndarray] = {}
_KEPT_WIDTHS = 8


def ndc_columns(width: int) -> np.ndarray:
    """(width,) float64 NDC x of the pixel centres, ``(2 px + 1) / width - 1`` (the
    reference's operations), for ``walk_piece``; kept for the last ``_KEPT_WIDTHS``
    widths, so a frame's raster call allocates nothing."""
    xs = _COLUMNS.pop(width, None)
    if xs is None:
        xs = (2.0 * np.arange(width, dtype=np.float64) + 1.0) / width - 1.0
        if len(_COLUMNS) >= _KEPT_WIDTHS:
            del _COLUMNS[next(iter(_COLUMNS))]  # the least recently used
    _COLUMNS[width] = xs  # last in the order: the most recently used
    return xs


@numba.njit(inline="always")
def piece_walk(x, y, piece_tri, adj, clip, tris, width, height, id_base, m, row_lo, row_hi,
               xs, visit, out, arg):
    """``walk_piece`` of piece ``m`` unmoved, with its triangle's adjugate and depth."""
    t = piece_tri[m]
    i0, i1, i2 = tris[t, 0], tris[t, 1], tris[t, 2]
    walk_piece(x, y, m, 0, 0, width, height, row_lo, row_hi, np.uint64(t + id_base),
               (adj[t, 0, 0], adj[t, 0, 1], adj[t, 0, 2], adj[t, 1, 0], adj[t, 1, 1],
                adj[t, 1, 2], adj[t, 2, 0], adj[t, 2, 1], adj[t, 2, 2]),
               (clip[i0, 2], clip[i1, 2], clip[i2, 2], clip[i0, 3], clip[i1, 3], clip[i2, 3]),
               xs, visit, out, arg, 0)


@numba.njit(inline="always")
def _store_min(keys, unused, s, p, key):
    keys[p] = min(keys[p], key)


@numba.njit(**_opts)
def _raster_band(x, y, piece_tri, adj, clip, tris, width, height, id_base, keys, row_lo,
                 row_hi, xs):
    for m in range(x.shape[0]):
        piece_walk(x, y, piece_tri, adj, clip, tris, width, height, id_base, m, row_lo,
                   row_hi, xs, _store_min, keys, 0)


def raster_triangles_numba(keys, setup: TriangleSetup, size, id_base: int, pieces=None):
    """Numba twin of ``engine.render.triangles.raster_triangles`` (without ``keep``):
    same arguments, the same keys written into ``keys`` in place."""
    w, h = size
    sel = slice(None) if pieces is None else np.asarray(pieces, np.int64)
    x = np.ascontiguousarray(setup.x[sel])
    y = np.ascontiguousarray(setup.y[sel])
    if len(x) == 0:
        return keys
    # one band per thread; the caller picks the thread count (the Numba backend: from
    # measured time per piece, engine.render.backends.threads.StageThreads)
    bands = numba.get_num_threads()
    _raster(x, y, np.ascontiguousarray(setup.piece_tri[sel]), setup.adj,
            np.ascontiguousarray(setup.clip, np.float64),
            np.ascontiguousarray(setup.triangles, np.int64),
            w, h, np.int64(id_base), keys, bands, ndc_columns(w))
    return keys


@numba.njit(**{**_opts, "parallel": True})
def _raster_samples(x, y, piece_tri, clip, tris, width, height, id_base, sample_x, sample_y,
                    kx, ky, keys, bands, xs):
    """_raster at S sample positions: per band, each piece walked once per sample
    (``walk_piece`` moved by the sample's sub-pixel offset), with the adjugate of its
    triangle's clip vertices moved as engine.render.msaa.shifted_inputs moves them
    (x - kx w, y + ky w) in the products triangles.classify_triangles uses, so each
    sample's depth is the moved raster's bit for bit."""
    for band in numba.prange(bands):
        lo, hi = band * height // bands, (band + 1) * height // bands
        for m in range(x.shape[0]):
            t = piece_tri[m]
            i0, i1, i2 = tris[t, 0], tris[t, 1], tris[t, 2]
            w0, w1, w2 = clip[i0, 3], clip[i1, 3], clip[i2, 3]
            zw = (clip[i0, 2], clip[i1, 2], clip[i2, 2], w0, w1, w2)
            key_low = np.uint64(t + id_base)
            for s in range(sample_x.shape[0]):
                x0, x1, x2 = clip[i0, 0] - kx[s] * w0, clip[i1, 0] - kx[s] * w1, \
                    clip[i2, 0] - kx[s] * w2
                y0, y1, y2 = clip[i0, 1] + ky[s] * w0, clip[i1, 1] + ky[s] * w1, \
                    clip[i2, 1] + ky[s] * w2
                a = adjugate(x0, y0, w0, x1, y1, w1, x2, y2, w2)
                walk_piece(x, y, m, sample_x[s], sample_y[s], width, height, lo, hi, key_low,
                           a, zw, xs, _store_min, keys[s], 0, s)


def raster_samples_numba(keys, setup: TriangleSetup, size, id_base: int, offsets,
                         pieces=None):
    """The keys of ``raster_triangles_numba`` at S sample positions per pixel from one
    setup: row s of ``keys`` ((S, W * H) uint64, written in place, the minimum kept)
    gets the keys of the raster whose pixel grid is moved by ``offsets[s]`` (the
    moved raster of engine.render.msaa.moved_sample_keys), without S setups.

    Args:
        offsets: (S, 2) float sample offsets from the pixel centre in pixels (x right,
            y down), multiples of 1 / SUBPIXEL (engine.render.msaa.sample_offsets);
            ValueError otherwise.
        pieces: as raster_triangles_numba's.

    Each sample's walk moves the snapped vertices by its offset in sub-pixels and its
    depth comes from the adjugate of the moved clip vertices, so its keys are the moved
    raster's bit for bit wherever the moved setup snaps each vertex to the unmoved one
    plus the offset: always but where a vertex (or a clipped one) lies within float64
    rounding of half a sub-pixel, and where a guard-band clip (16 viewports out) cuts a
    moved triangle at another point of the same edge."""
    w, h = size
    offsets = np.asarray(offsets, np.float64)
    sub = np.rint(offsets * SUBPIXEL).astype(np.int64)
    if offsets.shape != (keys.shape[0], 2) or not np.array_equal(sub, offsets * SUBPIXEL):
        raise ValueError(f"offsets must be ({keys.shape[0]}, 2) multiples of 1/{SUBPIXEL} "
                         f"pixel, got {offsets!r}")
    sel = slice(None) if pieces is None else np.asarray(pieces, np.int64)
    x = np.ascontiguousarray(setup.x[sel])
    if len(x) == 0:
        return keys
    _raster_samples(x, np.ascontiguousarray(setup.y[sel]),
                    np.ascontiguousarray(setup.piece_tri[sel]),
                    np.ascontiguousarray(setup.clip, np.float64),
                    np.ascontiguousarray(setup.triangles, np.int64), w, h, np.int64(id_base),
                    np.ascontiguousarray(sub[:, 0]), np.ascontiguousarray(sub[:, 1]),
                    (2.0 * offsets[:, 0]) / w, (2.0 * offsets[:, 1]) / h, keys,
                    numba.get_num_threads(), ndc_columns(w))
    return keys
