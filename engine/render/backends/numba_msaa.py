"""engine.render.msaa.sample_layers compiled by Numba (the CPU fast path): the same
layers and counts, one pass over the pixels in parallel instead of NumPy's sort of the
edge pixels. Imported only when the numba backend is used."""

from __future__ import annotations

import numba
import numpy as np

from .kernel_cache import cached

__all__ = ["sample_layers_numba"]

_opts = {"cache": cached(), "boundscheck": False, "error_model": "numpy"}
_LOW = np.uint64(0xFFFFFFFF)


@numba.njit(parallel=True, **_opts)
def _layers(keys, layers, counts, n_layers):
    s, p = keys.shape
    low = np.uint64(0xFFFFFFFF)
    for i in numba.prange(p):
        # distinct ids of the pixel, ascending (insertion: S <= 8), each with its
        # smallest key (nearest sample) and its sample count
        ids = np.empty(8, np.uint64)
        best = np.empty(8, np.uint64)
        cnt = np.zeros(8, np.int64)
        n = 0
        for j in range(s):
            k = keys[j, i]
            d = k & low
            at = 0
            while at < n and ids[at] < d:
                at += 1
            if at < n and ids[at] == d:
                cnt[at] += 1
                if k < best[at]:
                    best[at] = k
                continue
            for m in range(n, at, -1):
                ids[m], best[m], cnt[m] = ids[m - 1], best[m - 1], cnt[m - 1]
            ids[at], best[at], cnt[at] = d, k, 1
            n += 1
        n_layers[i] = n
        if n == 1:  # uniform: layer 0 alone (its key the smallest of the samples)
            layers[0, i] = best[0]
            counts[0, i] = s
        else:
            for m in range(n):
                layers[m, i] = best[m]
                counts[m, i] = cnt[m]
        for m in range(n, s):
            layers[m, i] = np.uint64(0xFFFFFFFFFFFFFFFF)
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
