"""engine.render.msaa's steps after the raster compiled by Numba (the CPU fast path):
the per-pixel layers of the sample keys, the coverage-weighted mix of the layers'
colours and the nearest sample's depth, with the reference's values. Imported only when
the numba backend is used.

The layers come in two passes over the pixels in parallel, with no per-pixel
allocation: the first finds each pixel's layer 0 (its smallest id's nearest sample;
where every sample holds one id, the nearest sample) and its number of distinct ids;
the second lists, for the mixed pixels only (more than one id), every layer by
ascending id (a selection of the next id above the last, S <= 8 samples) with its
nearest sample and its sample count.
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


@numba.njit(parallel=True, **_opts)
def _first_layers(keys, first, n_layers):
    s, p = keys.shape
    for i in numba.prange(p):
        k0 = keys[0, i]
        d0 = k0 & _LOW
        uniform = True
        for j in range(1, s):
            if (keys[j, i] & _LOW) != d0:
                uniform = False
                break
        if uniform:
            m = k0
            for j in range(1, s):
                m = min(m, keys[j, i])
            first[i] = m
            n_layers[i] = 1
            continue
        best = d0
        m = k0
        n = 1
        for j in range(1, s):
            k = keys[j, i]
            d = k & _LOW
            seen = False
            for q in range(j):
                if (keys[q, i] & _LOW) == d:
                    seen = True
                    break
            if not seen:
                n += 1
            if d < best:
                best, m = d, k
            elif d == best:
                m = min(m, k)
        first[i] = m
        n_layers[i] = n


@numba.njit(parallel=True, **_opts)
def _mixed_layers(keys, mixed, layers, counts):
    s = keys.shape[0]
    n_layers = layers.shape[0]
    for e in numba.prange(mixed.shape[0]):
        i = mixed[e]
        prev = np.int64(-1)
        for k in range(n_layers):
            # the smallest id above the previous layer's: its nearest sample and count
            best = np.int64(1) << 40
            m = _EMPTY
            c = 0
            for j in range(s):
                key = keys[j, i]
                d = np.int64(key & _LOW)
                if d > prev:
                    if d < best:
                        best, m, c = d, key, 1
                    elif d == best:
                        m = min(m, key)
                        c += 1
            layers[k, e] = m
            counts[k, e] = c
            if c:
                prev = best


def mixed_layers_numba(keys: np.ndarray, first: np.ndarray | None = None):
    """engine.render.msaa.mixed_layers compiled: (S, P) uint64 keys -> (first (P,)
    uint64, mixed (E,) int64, layers (K, E) uint64, counts (K, E) int64), the same
    values; ``first``: a (P,) uint64 array to write layer 0 into (reused between
    frames), or None for a new one."""
    keys = np.ascontiguousarray(keys)
    p = keys.shape[1]
    if first is None or first.shape != (p,):
        first = np.empty(p, np.uint64)
    n_layers = np.empty(p, np.uint8)
    _first_layers(keys, first, n_layers)
    mixed = np.flatnonzero(n_layers > 1)
    k = int(n_layers.max()) if p else 1
    layers = np.empty((k, mixed.size), np.uint64)
    counts = np.empty((k, mixed.size), np.int64)
    _mixed_layers(keys, mixed, layers, counts)
    return first, mixed, layers, counts


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
