"""The transform table: every live node's local TRS, one row of a process-wide array.

A row is ``[px py pz  qx qy qz qw  sx sy sz]`` float64 (translation in the parent frame,
unit quaternion x, y, z, w, per-axis scale) with a revision stamp beside it, taken from
``STAMPS`` whenever the row is written. Readers gather the rows of thousands of nodes in
one read and find the moved ones by comparing stamps (``engine.scene.world``).

Scene-internal: ``Node`` owns its row (``engine.scene.graph``); code outside the scene
reads transforms through ``Node``, ``get_transforms`` and ``engine.scene.world``.
"""

from __future__ import annotations

import itertools

import numpy as np

WIDTH = 10  # px py pz qx qy qz qw sx sy sz
IDENTITY_ROW = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0)

# Process-wide, strictly increasing: revision stamps of rows and of cached world matrices.
STAMPS = itertools.count(1)


class TransformTable:
    """Local TRS rows of every live node. Rows are reused after their node is garbage
    collected; the arrays grow geometrically (so hold no reference to ``trs``/``rev``
    across an allocation).

    Attributes:
        trs: (capacity, 10) float64 rows (see the module docstring).
        rev: (capacity,) int64 revision stamp of each row.
        flat, revs: flat memoryviews of ``trs`` and ``rev``: writing one element from
            Python through them costs a third of NumPy's item assignment (the
            single-node setters' hot path).
    """

    def __init__(self, capacity: int = 1024):
        self.trs = np.tile(np.array(IDENTITY_ROW), (capacity, 1))
        self.rev = np.zeros(capacity, np.int64)
        self.free: list[int] = []
        self.used = 0
        self._views()

    def _views(self):
        self.flat = memoryview(self.trs).cast("B").cast("d")
        self.revs = memoryview(self.rev).cast("B").cast("q")

    def alloc(self) -> int:
        """A free row index (an identity row)."""
        if self.free:
            return self.free.pop()
        if self.used == len(self.rev):
            cap = 2 * len(self.rev)
            trs = np.tile(np.array(IDENTITY_ROW), (cap, 1))
            trs[: self.used] = self.trs
            rev = np.zeros(cap, np.int64)
            rev[: self.used] = self.rev
            self.trs, self.rev = trs, rev
            self._views()
        self.used += 1
        return self.used - 1

    def release(self, row: int):
        """Give ``row`` back (reset to identity with a new stamp)."""
        self.trs[row] = IDENTITY_ROW
        self.rev[row] = next(STAMPS)
        self.free.append(row)


TABLE = TransformTable()
