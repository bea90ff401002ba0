"""engine.render.msaa.sample_layers compiled by Numba (the CPU fast path): the same
layers and counts, one pass over the pixels in parallel instead of NumPy's sort of the
edge pixels. Imported only when the numba backend is used."""

from __future__ import annotations

import numba
import numpy as np

from .kernel_cache import cached

__all__ = ["sample_layers_numba"]

_opts = {"cache": cached(), "boundscheck": False, "error_model": "numpy"}


@numba.njit(parallel=True, **_opts)
def _layers(keys, layers, counts, n_layers):
    s, p = keys.shape
    low = np.uint64(0xFFFFFFFF)
    empty = np.uint64(0xFFFFFFFFFFFFFFFF)
    for i in numba.prange(p):
        # the pixel's distinct ids, ascending (insertion, S <= 8), built in place in
        # its column: layers[m, i] the id's smallest key (nearest sample), counts its
        # samples; no per-pixel allocation
        n = 0
        for j in range(s):
            k = keys[j, i]
            d = k & low
            at = 0
            while at < n and (layers[at, i] & low) < d:
                at += 1
            if at < n and (layers[at, i] & low) == d:
                counts[at, i] += 1
                layers[at, i] = min(layers[at, i], k)
                continue
            for m in range(n, at, -1):
                layers[m, i] = layers[m - 1, i]
                counts[m, i] = counts[m - 1, i]
            layers[at, i] = k
            counts[at, i] = 1
            n += 1
        n_layers[i] = n
        for m in range(n, s):
            layers[m, i] = empty
            counts[m, i] = 0


def sample_layers_numba(keys: np.ndarray):
    """engine.render.msaa.sample_layers compiled: (S, P) uint64 keys -> (layers (K, P)
    uint64, counts (K, P) int64), the same values."""
    s, p = keys.shape
    layers = np.empty((s, p), np.uint64)
    counts = np.empty((s, p), np.int64)
    n_layers = np.empty(p, np.int64)
    _layers(np.ascontiguousarray(keys), layers, counts, n_layers)
    k = int(n_layers.max()) if p else 1
    return layers[:k], counts[:k]
