"""Numba loops of the animation package (imported on first use of a long path)."""

from __future__ import annotations

import numba

from ..render.backends.kernel_cache import cached


@numba.njit(cache=cached())
def monotone_rescale(d, m):
    """``interpolation._monotone_rescale`` compiled: the same operations in the same
    order, per segment and component."""
    for k in range(d.shape[0]):
        for j in range(d.shape[1]):
            dk = d[k, j]
            if dk == 0.0:
                m[k, j] = 0.0
                m[k + 1, j] = 0.0
                continue
            a = m[k, j] / dk
            b = m[k + 1, j] / dk
            s = a * a + b * b
            if s > 9.0:
                tau = 3.0 / s ** 0.5
                m[k, j] = tau * a * dk
                m[k + 1, j] = tau * b * dk
