"""engine.render.msaa's steps after the raster compiled by Numba (the CPU fast path):
the per-pixel layers of the sample keys, the coverage-weighted mix of the layers'
colours and the nearest sample's depth, with the reference's values. Imported only when
the numba backend is used.

The layers come in two passes over the pixels in parallel, with no per-pixel
allocation: the first finds each pixel's layer 0 (its smallest id's nearest sample;
where every sample holds one id, the nearest sample) and whether its samples hold more
than one id; the second lists, for those mixed pixels only, every layer by ascending id
(a selection of the next id above the last, S <= 8 samples) with its nearest sample
and its sample count.
"""

from __future__ import annotations

import numba
import numpy as np

from .kernel_cache import cached
from .numba_layers import _DECODE, _encode8

__all__ = ["finish_mix_numba", "mix_layer_numba", "mixed_layers_numba",
           "nearest_depth_numba", "sample_layers_numba"]

_opts = {"cache": cached(), "boundscheck": False, "error_model": "numpy"}
_LOW = np.uint64(0xFFFFFFFF)
_EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)
_HALF = np.uint64(32)


@numba.njit(parallel=True, **_opts)
def _first_layers(keys, first, n_layers, width, x0, x1, y0, y1):
    s, p = keys.shape
    for py in numba.prange(p // width):
        row = py * width
        if py < y0 or py >= y1:  # no sample drawn in this row
            for i in range(row, row + width):
                first[i] = _EMPTY
                n_layers[i] = 1
            continue
        for i in range(row, row + x0):
            first[i] = _EMPTY
            n_layers[i] = 1
        for i in range(row + x0, row + x1):
            _first_layer(keys, first, n_layers, s, i)
        for i in range(row + x1, row + width):
            first[i] = _EMPTY
            n_layers[i] = 1


@numba.njit(inline="always")
def _first_layer(keys, first, n_layers, s, i):
    """Pixel i's layer 0 (the least of its keys with the words swapped, id << 32 |
    depth: the smallest id's nearest sample) and 1 where every sample holds that id,
    else 2; branch-free (which pixels are mixed is unpredictable)."""
    k0 = keys[0, i]
    diff = np.uint64(0)
    least = (k0 << _HALF) | (k0 >> _HALF)
    for j in range(1, s):
        k = keys[j, i]
        diff |= k ^ k0
        least = min(least, (k << _HALF) | (k >> _HALF))
    first[i] = (least << _HALF) | (least >> _HALF)
    n_layers[i] = 1 + np.uint8((diff & _LOW) != 0)


@numba.njit(parallel=True, **_opts)
def _mixed_layers(keys, mixed, layers, counts, n_layers):
    s = keys.shape[0]
    for e in numba.prange(mixed.shape[0]):
        i = mixed[e]
        # the samples' keys with the words swapped (id << 32 | depth), sorted in the
        # pixel's own column of ``layers`` (insertion, S <= 8): runs of one id, each
        # its nearest sample first; then the runs compacted in place
        for j in range(s):
            v = (keys[j, i] << _HALF) | (keys[j, i] >> _HALF)
            at = j
            while at > 0 and layers[at - 1, e] > v:
                layers[at, e] = layers[at - 1, e]
                at -= 1
            layers[at, e] = v
        n = 0
        for j in range(s):
            v = layers[j, e]
            if j == 0 or (v >> _HALF) != (layers[n - 1, e] >> _HALF):
                # a new id: the run's first (nearest) key, swapped back below
                layers[n, e] = v
                counts[n, e] = 1
                n += 1
            else:
                counts[n - 1, e] += 1
        for k in range(s):
            if k < n:
                v = layers[k, e]
                layers[k, e] = (v << _HALF) | (v >> _HALF)
            else:
                layers[k, e] = _EMPTY
                counts[k, e] = 0
        n_layers[e] = n


def mixed_layers_numba(keys: np.ndarray, first: np.ndarray | None = None, region=None):
    """engine.render.msaa.mixed_layers compiled: (S, P) uint64 keys -> (first (P,)
    uint64, mixed (E,) int64, layers (K, E) uint64, counts (K, E) int64), the same
    values.

    Args:
        first: a (P,) uint64 array to write layer 0 into (reused between frames), or
            None for a new one.
        region: (width, x0, x1, y0, y1): the frame's width and the pixels [x0, x1) x
            [y0, y1) outside which every sample is empty (their keys are not read), or
            None: every pixel is read (as a one-row frame)."""
    keys = np.ascontiguousarray(keys)
    s, p = keys.shape
    if first is None or first.shape != (p,):
        first = np.empty(p, np.uint64)
    flags = np.empty(p, np.uint8)
    width, x0, x1, y0, y1 = (max(p, 1), 0, p, 0, 1) if region is None else region
    _first_layers(keys, first, flags, np.int64(width), np.int64(x0), np.int64(x1),
                  np.int64(y0), np.int64(y1))
    mixed = np.flatnonzero(flags > 1)
    layers = np.empty((s, mixed.size), np.uint64)
    counts = np.empty((s, mixed.size), np.int64)
    n_layers = np.empty(mixed.size, np.int64)
    _mixed_layers(keys, mixed, layers, counts, n_layers)
    k = int(n_layers.max()) if mixed.size else 1
    return first, mixed, layers[:k], counts[:k]


def sample_layers_numba(keys: np.ndarray):
    """engine.render.msaa.sample_layers compiled: (S, P) uint64 keys -> (layers (K, P)
    uint64, counts (K, P) int64), the same values: ``mixed_layers_numba``'s compact
    layers spread over the frame (the renderer uses the compact form)."""
    s, p = keys.shape
    first, mixed, lay, cnt = mixed_layers_numba(keys)
    layers = np.full((len(lay), p), _EMPTY, np.uint64)
    counts = np.zeros((len(lay), p), np.int64)
    layers[0] = first
    counts[0] = s
    layers[:, mixed], counts[:, mixed] = lay, cnt
    return layers, counts


@numba.njit(parallel=True, **_opts)
def _mix_layer(acc, color, mixed, counts, samples, decode):
    for e in numba.prange(mixed.shape[0]):
        i = mixed[e]
        wgt = counts[e] / samples
        a = color[i, 3] / 255.0
        wa = wgt * a
        for c in range(3):
            lin = decode[color[i, c]]
            acc[e, c] += wa * lin
            acc[e, 3 + c] += wgt * lin
        acc[e, 6] += wa


def mix_layer_numba(acc, color, mixed, counts, samples):
    """engine.render.msaa.mix_layer compiled (the same float64 operations)."""
    _mix_layer(acc, np.ascontiguousarray(color, np.uint8), mixed,
               np.ascontiguousarray(counts), np.float64(samples), _DECODE)


@numba.njit(parallel=True, **_opts)
def _finish_mix(acc, color, mixed):
    for e in numba.prange(mixed.shape[0]):
        i = mixed[e]
        alpha = acc[e, 6]
        for c in range(3):
            color[i, c] = _encode8(acc[e, c] / alpha if alpha > 0 else acc[e, 3 + c])
        color[i, 3] = np.uint8(np.rint(min(max(alpha, 0.0), 1.0) * 255.0))


def finish_mix_numba(acc, color, mixed):
    """engine.render.msaa.finish_mix compiled: the same bytes within 1 level where the
    encode rounds at a tie (the IEC 61966-2-1 formula, numba_layers._encode8)."""
    _finish_mix(acc, color, mixed)


@numba.njit(parallel=True, **_opts)
def _nearest_depth(first, mixed, layers, out):
    for i in numba.prange(first.shape[0]):
        k = first[i]
        out[i] = np.uint32(0x3F800000) if k == _EMPTY else np.uint32(k >> np.uint64(32))
    for e in numba.prange(mixed.shape[0]):
        k = layers[0, e]
        for j in range(1, layers.shape[0]):
            k = min(k, layers[j, e])
        out[mixed[e]] = np.uint32(0x3F800000) if k == _EMPTY else np.uint32(k >> np.uint64(32))


def nearest_depth_numba(first, mixed, layers) -> np.ndarray:
    """engine.render.msaa.nearest_depth compiled: the same (P,) float32."""
    out = np.empty(first.shape[0], np.float32)
    _nearest_depth(first, mixed, layers, out.view(np.uint32))
    return out
