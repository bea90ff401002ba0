"""The transparency pass compiled by Numba: the CPU fast path of
``engine.render.transparency.raster_layers`` (the k-buffer raster) and
``composite_layers`` (the back-to-front "over").

The opaque raster's pixel walk (``numba_triangles.piece_walk``: each thread a band of
rows, every piece's part in it), so each fragment gets the opaque raster's key bit for
bit; a fragment below the pixel's opaque bound is
inserted into the pixel's sorted list of L keys (an insertion sort step: the larger key
moves down a slot, the one pushed past the last slot counts as overflow). A band owns
its pixels, so no atomics are needed and the result is the reference's.

The compositing is the reference's per pixel, in the same float64 operations, over
the pixels in parallel (the sRGB decode by the reference's 256-entry table, the encode
by the IEC 61966-2-1 formula), so its bytes are the reference's within 1 level where a
value rounds at a tie.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ...scene.colorspace import srgb_to_linear
from ..frame import EMPTY_KEY
from ..triangles import TriangleSetup
from .kernel_cache import cached
from .numba_triangles import ndc_columns, piece_walk

_opts = {"cache": cached(), "boundscheck": False, "error_model": "numpy"}
# 8-bit sRGB -> linear light, the decode of a resolved colour byte (as the reference's)
_DECODE = srgb_to_linear(np.arange(256) / 255.0)


@numba.njit(inline="always")
def _insert(layers, overflow, p, key):
    """``key`` into pixel ``p``'s ascending list ``layers[p]``."""
    last = layers.shape[1] - 1
    if key >= layers[p, last]:  # behind a full list (the last slot is not EMPTY_KEY)
        overflow[p] += 1
        return
    for i in range(last + 1):
        old = layers[p, i]
        if key < old:
            layers[p, i] = key
            key = old
        if key == EMPTY_KEY:
            return
    overflow[p] += 1


@numba.njit(**{**_opts, "parallel": True})
def _raster(x, y, piece_tri, adj, clip, tris, width, height, id_base, bound, layers,
            overflow, bands, xs):
    for band in numba.prange(bands):
        _raster_band(x, y, piece_tri, adj, clip, tris, width, height, id_base, bound, layers,
                     overflow, band * height // bands, (band + 1) * height // bands, xs)


@numba.njit(inline="always")
def _insert_in_front(layers, arg, s, p, key):
    """A fragment in front of pixel ``p``'s opaque bound ``arg[0][p]`` into its list
    (``arg[1]``: the overflow counts)."""
    bound, overflow = arg
    if key < bound[p]:
        _insert(layers, overflow, p, key)


@numba.njit(**_opts)
def _raster_band(x, y, piece_tri, adj, clip, tris, width, height, id_base, bound, layers,
                 overflow, row_lo, row_hi, xs):
    for m in range(x.shape[0]):
        piece_walk(x, y, piece_tri, adj, clip, tris, width, height, id_base, m, row_lo,
                   row_hi, xs, _insert_in_front, layers, (bound, overflow))


def raster_layers_numba(layers, overflow, setup: TriangleSetup, size, id_base: int, pieces,
                        bound):
    """Numba twin of ``engine.render.transparency.raster_layers``: same arguments, the
    same ``layers`` and ``overflow`` written in place."""
    w, h = size
    sel = np.asarray(pieces, np.int64)
    if len(sel) == 0:
        return layers, overflow
    _raster(np.ascontiguousarray(setup.x[sel]), np.ascontiguousarray(setup.y[sel]),
            np.ascontiguousarray(setup.piece_tri[sel]), setup.adj,
            np.ascontiguousarray(setup.clip, np.float64),
            np.ascontiguousarray(setup.triangles, np.int64), w, h, np.int64(id_base),
            np.ascontiguousarray(bound, np.uint64), layers, overflow,
            numba.get_num_threads(), ndc_columns(w))
    return layers, overflow


@numba.njit(inline="always")
def _encode8(lin):
    """Linear light -> 8-bit sRGB (colorspace.linear_to_srgb, then to_unorm8)."""
    lin = min(max(lin, 0.0), 1.0)
    s = lin * 12.92 if lin <= 0.0031308 else 1.055 * math.pow(lin, 1.0 / 2.4) - 0.055
    return np.uint8(np.rint(min(max(s, 0.0), 1.0) * 255.0))


@numba.njit(**{**_opts, "parallel": True})
def _composite(out, layer_rgba, present, overflow, decode):
    n_layers = layer_rgba.shape[0]
    for p in numba.prange(out.shape[0]):
        if not present[0, p]:
            continue
        alpha = out[p, 3] / 255.0
        r = decode[out[p, 0]] * alpha
        g = decode[out[p, 1]] * alpha
        b = decode[out[p, 2]] * alpha
        count = 0
        for i in range(n_layers):
            count += present[i, p]
        for i in range(count - 1, -1, -1):
            a = layer_rgba[i, p, 3] / 255.0
            if i == count - 1:
                a = 1.0 - (1.0 - a) ** (1 + overflow[p])
            r = r * (1.0 - a) + a * decode[layer_rgba[i, p, 0]]
            g = g * (1.0 - a) + a * decode[layer_rgba[i, p, 1]]
            b = b * (1.0 - a) + a * decode[layer_rgba[i, p, 2]]
            alpha += a * (1.0 - alpha)
        if alpha > 0:
            out[p, 0], out[p, 1], out[p, 2] = (_encode8(r / alpha), _encode8(g / alpha),
                                               _encode8(b / alpha))
        out[p, 3] = np.uint8(np.rint(min(max(alpha, 0.0), 1.0) * 255.0))


def composite_layers_numba(color, layer_rgba, present, overflow):
    """Numba twin of ``engine.render.transparency.composite_layers``: same arguments,
    the same (P, 4) uint8 result."""
    out = np.array(color, np.uint8)
    _composite(out, np.ascontiguousarray(layer_rgba, np.uint8),
               np.ascontiguousarray(present, np.bool_),
               np.ascontiguousarray(overflow, np.int64), _DECODE)
    return out
