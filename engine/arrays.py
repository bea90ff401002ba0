"""Where arrays live: the one helper that brings NumPy or CuPy data to the host.

Imports no GPU module: a CuPy array is recognised by its ``get()`` method.
"""

from __future__ import annotations

import numpy as np

__all__ = ["to_host"]


def to_host(a) -> np.ndarray:
    """NumPy view or copy of ``a``: CuPy arrays are copied off the device (``a.get()``),
    anything else goes through ``np.asarray``. Call it only where host data is needed."""
    return a.get() if hasattr(a, "get") else np.asarray(a)
