"""Triangle rasterizer compiled by Numba: the CPU fast path for ``raster_triangles``.

Consumes the same ``TriangleSetup`` as the NumPy reference (engine.render.triangles)
and writes the same keys: fixed-point edge functions with the top-left rule, window depth
from the homogeneous barycentrics with the same float64 operations in the same order, so
the key buffers are bit-identical. The NumPy version expands every candidate pixel into
arrays; this one walks each piece's bounding box row by row, stepping the three integer
edge functions by constant increments (Pineda, "A parallel algorithm for polygon
rasterization", SIGGRAPH 1988), and computes depth only for covered pixels.
"""

from __future__ import annotations

import numba
import numpy as np

from ..triangles import HALF, SUBPIXEL, TriangleSetup, edge_bias, pixel_bounds

_opts = {"cache": True, "boundscheck": False, "error_model": "numpy"}


@numba.njit(**_opts)
def _raster(x, y, bias, piece_tri, bx0, bx1, by0, by1, adj, zc, wc, width, height,
            id_base, keys):
    for m in range(x.shape[0]):
        if bx0[m] > bx1[m] or by0[m] > by1[m]:
            continue
        t = piece_tri[m]
        key_low = np.uint64(t + id_base)
        a00, a01, a02 = adj[t, 0, 0], adj[t, 0, 1], adj[t, 0, 2]
        a10, a11, a12 = adj[t, 1, 0], adj[t, 1, 1], adj[t, 1, 2]
        a20, a21, a22 = adj[t, 2, 0], adj[t, 2, 1], adj[t, 2, 2]
        z0, z1, z2 = zc[t, 0], zc[t, 1], zc[t, 2]
        w0, w1, w2 = wc[t, 0], wc[t, 1], wc[t, 2]
        # edge i runs from vertex i+1 to vertex i+2: E_i(p) = dx_i (py - ya) - dy_i (px - xa)
        xa0, ya0 = x[m, 1], y[m, 1]
        xa1, ya1 = x[m, 2], y[m, 2]
        xa2, ya2 = x[m, 0], y[m, 0]
        dx0, dy0 = x[m, 2] - x[m, 1], y[m, 2] - y[m, 1]
        dx1, dy1 = x[m, 0] - x[m, 2], y[m, 0] - y[m, 2]
        dx2, dy2 = x[m, 1] - x[m, 0], y[m, 1] - y[m, 0]
        b0, b1, b2 = bias[m, 0], bias[m, 1], bias[m, 2]
        step = np.int64(SUBPIXEL)
        for py in range(by0[m], by1[m] + 1):
            cy = py * step + HALF
            cx = bx0[m] * step + HALF
            e0 = dx0 * (cy - ya0) - dy0 * (cx - xa0)
            e1 = dx1 * (cy - ya1) - dy1 * (cx - xa1)
            e2 = dx2 * (cy - ya2) - dy2 * (cx - xa2)
            yn = 1.0 - (2.0 * py + 1.0) / height
            row = py * width
            for px in range(bx0[m], bx1[m] + 1):
                if e0 >= b0 and e1 >= b1 and e2 >= b2:
                    xn = (2.0 * px + 1.0) / width - 1.0
                    h0 = a00 * xn + a01 * yn + a02
                    h1 = a10 * xn + a11 * yn + a12
                    h2 = a20 * xn + a21 * yn + a22
                    zn = (h0 * z0 + h1 * z1 + h2 * z2) / (h0 * w0 + h1 * w1 + h2 * w2)
                    d = min(max(zn * 0.5 + 0.5, 0.0), 1.0)
                    bits = np.float32(d).view(np.uint32)
                    key = (np.uint64(bits) << np.uint64(32)) | key_low
                    keys[row + px] = min(keys[row + px], key)
                e0 -= dy0 * step
                e1 -= dy1 * step
                e2 -= dy2 * step


def raster_triangles_numba(keys, setup: TriangleSetup, size, id_base: int, pieces=None):
    """Numba twin of ``engine.render.triangles.raster_triangles`` (without ``keep``):
    same arguments, the same keys written into ``keys`` in place."""
    w, h = size
    sel = slice(None) if pieces is None else np.asarray(pieces, np.int64)
    x = np.ascontiguousarray(setup.x[sel])
    y = np.ascontiguousarray(setup.y[sel])
    if len(x) == 0:
        return keys
    bx0, bx1, by0, by1 = pixel_bounds(x, y, size)
    _raster(x, y, edge_bias(x, y), np.ascontiguousarray(setup.piece_tri[sel]), bx0, bx1,
            by0, by1, setup.adj, setup.z, setup.w, w, h, np.int64(id_base), keys)
    return keys
