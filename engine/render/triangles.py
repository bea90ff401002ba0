"""Triangle setup and rasterization into the shared key buffer (NumPy reference).

Stages, all on the (T, 3) packed index buffer of ``engine.render.primitives``:

1. Cull in clip space (before the divide). A triangle's homogeneous determinant
   ``det [x; y; w]`` of its three clip-space vertices is > 0 when it is counter-clockwise
   in NDC (front-facing, GL's default) and keeps that meaning when vertices lie behind
   the eye (Olano & Greer, "Triangle scan conversion using 2D homogeneous coordinates",
   HWWS 1997). det = 0 (edge-on) is dropped; det < 0 is dropped unless the material is
   double-sided. A triangle with all three vertices outside one clip plane is dropped.
2. Clip the rest against the near and far planes, ``w >= W_EPSILON`` and a guard band
   ``|x|, |y| <= GUARD * w`` (Sutherland-Hodgman on the polygon in clip space), so nothing
   is mirrored through the eye and screen coordinates stay within GUARD viewports.
   Clipped pieces keep the original triangle's id.
3. Snap to fixed point: screen coordinates (origin top-left, y down) with
   ``SUBPIXEL_BITS`` = 8 fractional bits, as int64.
4. Rasterize: pixel (px, py) is sampled at its centre (px + 0.5, py + 0.5). It is covered
   when all three edge functions are > 0, or = 0 on a top or left edge (the D3D/GL
   top-left fill rule), so triangles sharing an edge cover each pixel along it once.
5. Depth: window depth ``z_ndc * 0.5 + 0.5`` of the original triangle at the pixel
   centre, from its homogeneous barycentrics b = adj([x; y; w]) @ (x_ndc, y_ndc, 1):
   ``z_ndc = (b . z) / (b . w)`` (screen-linear interpolation of z_ndc).
6. Each covered pixel takes ``min(key, (float32 depth bits << 32) | (id_base + t))``,
   the same 64-bit key as points, so points and triangles share one depth buffer and
   ties go to the lowest id. ``engine.render.shading`` then shades each winner once.

The Numba twin (``engine.render.backends.numba_triangles``) builds a setup of the same
values in compiled passes and reused arrays, and gives the same keys.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .backends.base import W_EPSILON

__all__ = ["GUARD", "SUBPIXEL_BITS", "TriangleSetup", "Workspace", "classify_triangles",
           "raster_triangles", "setup_triangles"]

SUBPIXEL_BITS = 8
SUBPIXEL = 1 << SUBPIXEL_BITS
HALF = SUBPIXEL // 2
GUARD = 16.0
SPAN_CHUNK = 1 << 22  # candidate pixels tested at once (bounded temporary memory)

# clip planes as (a, b, c, d, e): inside when a x + b y + c z + d w + e >= 0
_PLANES = np.array([
    [0, 0, 1, 1, 0],            # near:  z >= -w
    [0, 0, -1, 1, 0],           # far:   z <= w
    [0, 0, 0, 1, -W_EPSILON],   # w >= W_EPSILON (also catches the all-zero null slot)
    [1, 0, 0, GUARD, 0],        # guard band: -GUARD w <= x <= GUARD w
    [-1, 0, 0, GUARD, 0],
    [0, 1, 0, GUARD, 0],
    [0, -1, 0, GUARD, 0],
], np.float64)


class TriangleSetup(NamedTuple):
    """What rasterization needs, per piece (M) and per original triangle (T).

    Attributes:
        piece_tri: (M,) int64 original triangle index of each piece.
        x, y: (M, 3) int64 fixed-point screen coordinates, oriented so the area is > 0.
            (The Numba setup stores these three as int32 where they fit.)
        adj: (T, 3, 3) float64 adjugate of [x; y; w] (rows: the homogeneous barycentric
            planes), for depth and perspective-correct attributes.
        clip: (N, 4) float64 clip-space vertices and triangles: (T, 3) int64 their
            indices, the setup's own inputs (not copies): depth reads the z and w of
            triangle t's vertices from ``clip[triangles[t]]``.
        front: (T,) bool, counter-clockwise in NDC (det > 0).
    """

    piece_tri: np.ndarray
    x: np.ndarray
    y: np.ndarray
    adj: np.ndarray
    clip: np.ndarray
    triangles: np.ndarray
    front: np.ndarray


def _adjugate(c):
    """(T, 3, 4) clip vertices -> adj (T, 3, 3) of M = [x; y; w] and det (T,)."""
    m = np.stack([c[:, :, 0], c[:, :, 1], c[:, :, 3]], axis=1)  # rows x, y, w; cols vertices
    a = np.empty_like(m)
    a[:, 0, 0] = m[:, 1, 1] * m[:, 2, 2] - m[:, 1, 2] * m[:, 2, 1]
    a[:, 0, 1] = m[:, 0, 2] * m[:, 2, 1] - m[:, 0, 1] * m[:, 2, 2]
    a[:, 0, 2] = m[:, 0, 1] * m[:, 1, 2] - m[:, 0, 2] * m[:, 1, 1]
    a[:, 1, 0] = m[:, 1, 2] * m[:, 2, 0] - m[:, 1, 0] * m[:, 2, 2]
    a[:, 1, 1] = m[:, 0, 0] * m[:, 2, 2] - m[:, 0, 2] * m[:, 2, 0]
    a[:, 1, 2] = m[:, 0, 2] * m[:, 1, 0] - m[:, 0, 0] * m[:, 1, 2]
    a[:, 2, 0] = m[:, 1, 0] * m[:, 2, 1] - m[:, 1, 1] * m[:, 2, 0]
    a[:, 2, 1] = m[:, 0, 1] * m[:, 2, 0] - m[:, 0, 0] * m[:, 2, 1]
    a[:, 2, 2] = m[:, 0, 0] * m[:, 1, 1] - m[:, 0, 1] * m[:, 1, 0]
    det = m[:, 0, 0] * a[:, 0, 0] + m[:, 0, 1] * a[:, 1, 0] + m[:, 0, 2] * a[:, 2, 0]
    return a, det


def _clip_polygon(poly):
    """Sutherland-Hodgman: a convex polygon (list of (4,) clip vertices) against _PLANES."""
    for plane in _PLANES:
        if not poly:
            break
        out = []
        d = [float(plane[:4] @ v + plane[4]) for v in poly]
        for i, v in enumerate(poly):
            j = (i + 1) % len(poly)
            if d[i] >= 0:
                out.append(v)
            if (d[i] >= 0) != (d[j] >= 0):
                t = d[i] / (d[i] - d[j])
                out.append(v + t * (poly[j] - v))
        poly = out
    return poly


class Workspace:
    """Arrays one call site reuses from frame to frame (grown by half again, never
    shrunk), so a frame's triangle setup allocates nothing: its outputs are overwritten
    by the next call with the same workspace. Allocating them afresh every frame cost
    page faults worth a third of a bunny frame in some processes (measured)."""

    def __init__(self):
        self._bufs: dict[str, np.ndarray] = {}

    def array(self, name: str, shape, dtype) -> np.ndarray:
        """A reused array of ``shape`` and ``dtype`` (contents undefined)."""
        n = int(np.prod(shape))
        buf = self._bufs.get(name)
        if buf is None or buf.size < n or buf.dtype != np.dtype(dtype):
            grown = 0 if buf is None or buf.dtype != np.dtype(dtype) else buf.size * 3 // 2
            buf = self._bufs[name] = np.empty(max(n, grown, 1), dtype)
        return buf[:n].reshape(shape)


def setup_triangles(clip, triangles, cull_back, size) -> TriangleSetup:
    """Cull, clip and snap the (T, 3) ``triangles`` of the (N, 4) ``clip`` vertices
    (the NumPy reference: new arrays every call, clipping in Python per clipped
    triangle; engine.render.backends.numba_triangles.setup_triangles_numba is its
    compiled twin).

    Args:
        clip: (N, 4) float64 clip-space vertices.
        triangles: (T, 3) int64 vertex indices.
        cull_back: (T,) bool, True where back faces are dropped (single-sided material).
        size: (width, height) of the viewport in pixels.

    Pieces are ordered: the unclipped triangles in index order, then the pieces of the
    clipped ones; pieces whose snapped area is 0 are dropped.
    """
    clip = np.ascontiguousarray(clip, np.float64)
    triangles = np.ascontiguousarray(triangles, np.int64)
    cull_back = np.ascontiguousarray(cull_back, np.bool_)
    adj, det, status, x, y, area = classify_triangles(
        clip, triangles, cull_back, float(size[0]), float(size[1]))
    whole = np.flatnonzero((status == 1) & (area != 0))
    front = det > 0
    extra_tri, extra = [], []
    for t in np.flatnonzero(status == 2):
        poly = _clip_polygon([clip[triangles[t, k]] for k in range(3)])
        for k in range(1, len(poly) - 1):  # fan: the polygon is convex
            extra_tri.append(t)
            extra.append((poly[0], poly[k], poly[k + 1]))
    if not extra:  # the common case: no triangle crosses a clip plane
        return TriangleSetup(whole, x[whole], y[whole], adj, clip, triangles, front)
    px, py, pa = _snap(np.asarray(extra, np.float64), size)
    keep = pa != 0
    return TriangleSetup(np.concatenate([whole, np.asarray(extra_tri, np.int64)[keep]]),
                         np.concatenate([x[whole], px[keep]]),
                         np.concatenate([y[whole], py[keep]]), adj, clip, triangles, front)


def _snap(p, size):
    """(M, 3, 4) clip vertices -> fixed-point window x, y (M, 3) int64 oriented to a
    positive area, and the area (M,) (0: degenerate after snapping)."""
    w_px, h_px = size
    sx = (p[:, :, 0] / p[:, :, 3] + 1.0) * (0.5 * w_px)
    sy = (1.0 - p[:, :, 1] / p[:, :, 3]) * (0.5 * h_px)
    x = np.rint(sx * SUBPIXEL).astype(np.int64)
    y = np.rint(sy * SUBPIXEL).astype(np.int64)
    area = (x[:, 1] - x[:, 0]) * (y[:, 2] - y[:, 0]) - (y[:, 1] - y[:, 0]) * (x[:, 2] - x[:, 0])
    flip = area < 0
    x[flip] = x[flip][:, [0, 2, 1]]
    y[flip] = y[flip][:, [0, 2, 1]]
    return x, y, area


def classify_triangles(clip, triangles, cull_back, width, height):
    """Per triangle: adj (T, 3, 3), det (T,), status (T,) int8
    (0 dropped, 1 inside every plane, 2 to be clipped), and for status 1 the snapped
    oriented x, y (T, 3) int64 and area (T,) (``_snap``)."""
    t_count = len(triangles)
    c = clip[triangles] if t_count else np.zeros((0, 3, 4))
    with np.errstate(invalid="ignore", over="ignore"):  # non-finite vertices: dropped below
        adj, det = _adjugate(c)
        d = np.einsum("tvk,pk->tvp", c, _PLANES[:, :4]) + _PLANES[:, 4]  # (T, 3, planes)
    finite = np.all(np.isfinite(c), axis=(1, 2)) & np.isfinite(det)
    keep = finite & (det != 0) & ((det > 0) | ~cull_back)
    inside = d >= 0
    keep &= ~np.any(np.all(~inside, axis=1), axis=1)  # all three outside one plane
    whole = keep & np.all(inside, axis=(1, 2))
    status = np.where(whole, 1, np.where(keep, 2, 0)).astype(np.int8)
    x = np.zeros((t_count, 3), np.int64)
    y = np.zeros((t_count, 3), np.int64)
    area = np.zeros(t_count, np.int64)
    sel = np.flatnonzero(whole)
    x[sel], y[sel], area[sel] = _snap(c[sel], (width, height))
    return adj, det, status, x, y, area


def pixel_bounds(x, y, size):
    """Per piece: first and last covered-candidate pixel columns and rows, clamped to the
    viewport (int64 arrays x0, x1, y0, y1; empty when x0 > x1 or y0 > y1)."""
    w, h = size
    x0 = np.maximum(-((HALF - x.min(axis=1)) // SUBPIXEL), 0)   # ceil((min - half) / sub)
    x1 = np.minimum((x.max(axis=1) - HALF) // SUBPIXEL, w - 1)
    y0 = np.maximum(-((HALF - y.min(axis=1)) // SUBPIXEL), 0)
    y1 = np.minimum((y.max(axis=1) - HALF) // SUBPIXEL, h - 1)
    return x0, x1, y0, y1


def edge_bias(x, y):
    """(M, 3) int64: 0 on a top or left edge, 1 elsewhere; edge i runs from vertex i+1 to
    vertex i+2 (the edge opposite vertex i). In y-down window coordinates with the area
    > 0, a top edge is horizontal with dx > 0 and a left edge has dy < 0."""
    dx = np.roll(x, -2, axis=1) - np.roll(x, -1, axis=1)
    dy = np.roll(y, -2, axis=1) - np.roll(y, -1, axis=1)
    top_left = (dy < 0) | ((dy == 0) & (dx > 0))
    return np.where(top_left, 0, 1).astype(np.int64)


def covered_pixels(setup: TriangleSetup, size, pieces=None):
    """Yield (piece index, px, py, depth float32) chunks of every covered pixel.

    Depth is the window depth of the original triangle at the pixel centre."""
    x, y = setup.x, setup.y
    sel = np.arange(len(x)) if pieces is None else np.asarray(pieces, np.int64)
    if sel.size == 0:
        return
    x0, x1, y0, y1 = pixel_bounds(x[sel], y[sel], size)
    ok = (x0 <= x1) & (y0 <= y1)
    sel, x0, x1, y0, y1 = sel[ok], x0[ok], x1[ok], y0[ok], y1[ok]
    bias = edge_bias(x, y)
    # spans: one per (piece, row), chunked by their total length
    rows = y1 - y0 + 1
    span_piece = np.repeat(np.arange(sel.size), rows)
    span_y = np.repeat(y0, rows) + (np.arange(span_piece.size) - np.repeat(np.cumsum(rows) - rows, rows))
    span_len = (x1 - x0 + 1)[span_piece]
    ends = np.cumsum(span_len)
    start = 0
    while start < span_piece.size:
        stop = int(np.searchsorted(ends, (ends[start] - span_len[start]) + SPAN_CHUNK, "right"))
        stop = max(stop, start + 1)
        sp, sy_, sl = span_piece[start:stop], span_y[start:stop], span_len[start:stop]
        k = np.repeat(sp, sl)
        py = np.repeat(sy_, sl)
        px = x0[k] + (np.arange(k.size) - np.repeat(np.cumsum(sl) - sl, sl))
        m = sel[k]
        cx = px * SUBPIXEL + HALF
        cy = py * SUBPIXEL + HALF
        inside = np.ones(k.size, bool)
        for i in range(3):
            a, b = (i + 1) % 3, (i + 2) % 3
            e = (x[m, b] - x[m, a]) * (cy - y[m, a]) - (y[m, b] - y[m, a]) * (cx - x[m, a])
            inside &= e >= bias[m, i]
        m, px, py = m[inside], px[inside], py[inside]
        yield m, px, py, pixel_depth(setup, setup.piece_tri[m], px, py, size)
        start = stop


def pixel_depth(setup: TriangleSetup, t, px, py, size):
    """(M,) float32 window depth of triangles ``t`` at the centres of pixels (px, py)."""
    w, h = size
    xn = (2.0 * px + 1.0) / w - 1.0
    yn = 1.0 - (2.0 * py + 1.0) / h
    a = setup.adj[t]
    b0 = a[:, 0, 0] * xn + a[:, 0, 1] * yn + a[:, 0, 2]
    b1 = a[:, 1, 0] * xn + a[:, 1, 1] * yn + a[:, 1, 2]
    b2 = a[:, 2, 0] * xn + a[:, 2, 1] * yn + a[:, 2, 2]
    v = setup.triangles[t]
    z, wc = setup.clip[v, 2], setup.clip[v, 3]
    zn = (b0 * z[:, 0] + b1 * z[:, 1] + b2 * z[:, 2]) / (b0 * wc[:, 0] + b1 * wc[:, 1] + b2 * wc[:, 2])
    return np.clip(zn * 0.5 + 0.5, 0.0, 1.0).astype(np.float32)


def raster_triangles(keys, setup: TriangleSetup, size, id_base: int, pieces=None, keep=None):
    """Write every covered pixel's key into ``keys`` ((H * W,) uint64, in place).

    ``keep(t, px, py)``, when given, returns a bool mask of candidate pixels to keep
    (alpha-cutoff materials drop pixels whose alpha is below the cutoff)."""
    w, _ = size
    for m, px, py, depth in covered_pixels(setup, size, pieces):
        t = setup.piece_tri[m]
        if keep is not None:
            ok = keep(t, px, py)
            t, px, py, depth = t[ok], px[ok], py[ok], depth[ok]
        k = (depth.view(np.uint32).astype(np.uint64) << np.uint64(32)) | (
            t.astype(np.uint64) + np.uint64(id_base))
        np.minimum.at(keys, py * w + px, k)
    return keys
