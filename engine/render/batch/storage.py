"""The batch's vertex storage: the packed per-vertex arrays and their geometric growth.

``positions`` (N, 3) float32, ``colors`` (N, 4) uint8 and ``object_id`` (N,) uint32 live
on the batch's array module (NumPy or CuPy); per-vertex point sizes stay on the host
(``point_size`` uploads them once per vertex revision when they differ).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ...arrays import to_host


def to_module(a, xp):
    """Move ``a`` to the array module ``xp`` (no-op when it is already there)."""
    is_device = hasattr(a, "__cuda_array_interface__")
    if xp is np:
        return to_host(a)
    return a if is_device else xp.asarray(a)


def grown(capacity: int, needed: int, minimum: int) -> int:
    """The next capacity: x1.5 (amortised O(1) copying per element), at least
    ``needed`` and ``minimum``."""
    return max(needed, capacity + capacity // 2, minimum)


class VertexArrays:
    """Per-vertex arrays of ``capacity`` vertices; ``object_id`` of unused vertices is
    ``null`` (the batch's all-zero model slot).

    Attributes:
        pos, col, oid: positions, colours, object ids on ``xp`` (capacity rows).
        size: (capacity,) float32 host point sizes.
        sizes_in_use: Counter of float32 point size -> live geometries using it.
    """

    def __init__(self, xp, capacity: int, null: int):
        self.xp = xp
        self.capacity = capacity
        self.pos = xp.zeros((capacity, 3), np.float32)
        self.col = xp.zeros((capacity, 4), np.uint8)
        self.oid = xp.full(capacity, null, np.uint32)
        self.size = np.ones(capacity, np.float32)
        self.sizes_in_use: Counter = Counter()
        self._size_device = None  # (vertex revision, sizes on xp)

    def fill(self, pos, col, oid, size):
        """Replace the arrays by packed ones (a repack: capacity = their length)."""
        self.pos, self.col, self.oid, self.size = pos, col, oid, size
        self.capacity = len(size)

    def grow(self, capacity: int, used: int, null: int):
        """Reallocate to ``capacity`` vertices keeping the first ``used``."""
        xp = self.xp
        pos = xp.zeros((capacity, 3), np.float32)
        col = xp.zeros((capacity, 4), np.uint8)
        oid = xp.full(capacity, null, np.uint32)
        size = np.ones(capacity, np.float32)
        pos[:used], col[:used], oid[:used] = self.pos[:used], self.col[:used], self.oid[:used]
        size[:used] = self.size[:used]
        self.fill(pos, col, oid, size)
        self.capacity = capacity

    def repoint(self, old_null: int, new_null: int):
        """Free vertices follow the null slot when the model array grows."""
        self.oid[self.oid == old_null] = new_null

    def add_size(self, size: float, delta: int):
        """Count a geometry's point size in (+1) or out (-1)."""
        key = float(np.float32(size))
        self.sizes_in_use[key] += delta
        if self.sizes_in_use[key] <= 0:
            del self.sizes_in_use[key]

    def point_size(self, used: int, revision: int):
        """One float when every live geometry has the same point size, else (used,)
        float32 per-vertex sizes on ``xp``, the same array while ``revision`` holds."""
        if len(self.sizes_in_use) <= 1:
            return float(next(iter(self.sizes_in_use), 1.0))
        cached = self._size_device
        if cached is None or cached[0] != revision:
            sizes = self.size[:used]
            cached = self._size_device = (revision, sizes if self.xp is np
                                          else self.xp.asarray(sizes))
        return cached[1]
