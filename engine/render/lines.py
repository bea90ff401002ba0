"""Line rasterization (wireframes, axes, paths) into the shared key buffer.

Each segment of the (L, 2) index buffer is clipped in clip space against the same planes
as triangles (engine.render.triangles: near, far, w >= W_EPSILON, guard band) by the
parametric (Liang-Barsky) method, divided, and stepped one pixel per column (x-major) or
row (y-major): at each pixel centre along the major axis the minor coordinate is
interpolated and floored, so a line of length n pixels along its major axis lights n
pixels, with no gaps and no doubled pixels. Depth is the window depth interpolated
linearly in screen space, minus ``LINE_DEPTH_BIAS`` so that a wireframe drawn over its
own surface ("solid+wireframe") wins the depth test (GL would use glPolygonOffset).
A line is drawn unlit in the mean of its two vertices' colours.
"""

from __future__ import annotations

import numpy as np

from .triangles import _PLANES

__all__ = ["LINE_DEPTH_BIAS", "line_colors", "raster_lines"]

LINE_DEPTH_BIAS = 2e-5


def clip_segments(a, b):
    """Liang-Barsky against _PLANES: (L, 4) endpoints -> (t0, t1) parameters (L,) of the
    visible part of a + t (b - a); empty where t0 > t1."""
    da = a @ _PLANES[:, :4].T + _PLANES[:, 4]
    db = b @ _PLANES[:, :4].T + _PLANES[:, 4]
    t0 = np.zeros(len(a))
    t1 = np.ones(len(a))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = da / (da - db)
    entering = (da < 0) & (db >= 0)
    leaving = (da >= 0) & (db < 0)
    outside = (da < 0) & (db < 0)
    t0 = np.max(np.where(entering, t, 0.0), axis=1, initial=0.0)
    t1 = np.min(np.where(leaving, t, 1.0), axis=1, initial=1.0)
    t1 = np.where(np.any(outside, axis=1), -1.0, t1)
    return t0, t1


def raster_lines(keys, clip, lines, size, id_base: int):
    """Write the pixels of every segment into ``keys`` ((H * W,) uint64, in place).

    Args:
        clip: (N, 4) float64 clip-space vertices; lines: (L, 2) int64 vertex indices.
        size: (width, height); id_base: key id of segment 0 (segment i is id_base + i).
    """
    w, h = size
    lines = np.asarray(lines, np.int64)
    a, b = clip[lines[:, 0]], clip[lines[:, 1]]
    ok = np.all(np.isfinite(a), axis=1) & np.all(np.isfinite(b), axis=1)
    t0, t1 = clip_segments(np.where(ok[:, None], a, 0), np.where(ok[:, None], b, 0))
    ok &= t0 <= t1
    pa = a + t0[:, None] * (b - a)
    pb = a + t1[:, None] * (b - a)
    sel = np.flatnonzero(ok)
    pa, pb = pa[sel], pb[sel]
    xa = (pa[:, 0] / pa[:, 3] + 1.0) * (0.5 * w)
    ya = (1.0 - pa[:, 1] / pa[:, 3]) * (0.5 * h)
    xb = (pb[:, 0] / pb[:, 3] + 1.0) * (0.5 * w)
    yb = (1.0 - pb[:, 1] / pb[:, 3]) * (0.5 * h)
    za = pa[:, 2] / pa[:, 3] * 0.5 + 0.5
    zb = pb[:, 2] / pb[:, 3] * 0.5 + 0.5
    x_major = np.abs(xb - xa) >= np.abs(yb - ya)
    # along the major axis u (x or y), pixel centres c + 0.5 in [min(u), max(u))
    ua, ub = np.where(x_major, xa, ya), np.where(x_major, xb, yb)
    va, vb = np.where(x_major, ya, xa), np.where(x_major, yb, xb)
    lo, hi = np.minimum(ua, ub), np.maximum(ua, ub)
    limit = np.where(x_major, w, h)
    first = np.maximum(np.ceil(lo - 0.5), 0).astype(np.int64)
    last = np.minimum(np.ceil(hi - 0.5) - 1, limit - 1).astype(np.int64)
    count = np.maximum(last - first + 1, 0)
    seg = np.repeat(np.arange(sel.size), count)
    u = np.repeat(first, count) + (np.arange(seg.size) - np.repeat(np.cumsum(count) - count, count))
    du = (ub - ua)[seg]
    f = np.where(du != 0, (u + 0.5 - ua[seg]) / np.where(du != 0, du, 1.0), 0.0)
    v = np.floor(va[seg] + f * (vb - va)[seg]).astype(np.int64)
    px = np.where(x_major[seg], u, v)
    py = np.where(x_major[seg], v, u)
    inside = (px >= 0) & (px < w) & (py >= 0) & (py < h)
    depth = np.clip(za[seg] + f * (zb - za)[seg] - LINE_DEPTH_BIAS, 0.0, 1.0).astype(np.float32)
    k = (depth.view(np.uint32).astype(np.uint64) << np.uint64(32)) | (
        sel[seg].astype(np.uint64) + np.uint64(id_base))
    np.minimum.at(keys, (py * w + px)[inside], k[inside])
    return keys


def line_colors(colors, lines):
    """(L, 4) uint8: the mean of each segment's two vertex colours, rounded."""
    c = colors[np.asarray(lines, np.int64)].astype(np.uint16)
    return ((c[:, 0] + c[:, 1] + 1) // 2).astype(np.uint8)
