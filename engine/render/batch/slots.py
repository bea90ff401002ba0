"""The batch's model slots: one model matrix per drawn object (per instance of an
Instances node), the free-slot list and the range of rows waiting for upload.

``model`` is (K + 1, 4, 4) float32 on the batch's array module with a host twin
``host``; row K is the *null slot*, all zeros, which free vertices point at (a zero
model matrix gives clip w = 0, which every backend culls).
"""

from __future__ import annotations

import numpy as np

from ...scene.graph import FLOAT32_MAX, TransformError
from .storage import grown

MIN_SLOT_GROWTH = 64


class SlotTable:
    """K model slots and what each holds.

    Attributes:
        capacity: K; the null slot's index.
        host: (K + 1, 4, 4) float32 host model matrices; model: the same on ``xp``.
        nodes: list of K: the node in each slot, or None for a free slot.
        geometry: list of K: the geometry the slot was bound with.
        entry: (K,) int64 the node's entry in the batch's ``WorldMatrices`` (-1: free).
        instance: (K,) int64 instance index for an Instances node's slots, else -1.
        origin: (K, 3) float64 the geometry's origin.
        dirty: (K,) bool: recompute the slot's matrix on the next update.
        mirrored: (K,) bool: the slot's matrix has a negative 3x3 determinant (a mirror
            image), recomputed for the rows each upload covers.
        mirror_revision: bumped when a ``mirrored`` flag changes.
    """

    def __init__(self, xp, capacity: int):
        self.xp = xp
        self.capacity = capacity
        self.host = np.zeros((capacity + 1, 4, 4), np.float32)
        self.model = xp.asarray(self.host)
        self.nodes: list = [None] * capacity
        self.geometry: list = [None] * capacity
        self.entry = np.full(capacity, -1, np.int64)
        self.instance = np.full(capacity, -1, np.int64)
        self.origin = np.zeros((capacity, 3))
        self.dirty = np.zeros(capacity, bool)
        self.mirrored = np.zeros(capacity, bool)
        self.mirror_revision = 0
        self.free = list(range(capacity - 1, -1, -1))  # pop() gives the lowest
        self._pending = [capacity + 1, -1]  # rows [lo, hi] written, not uploaded

    def alloc(self, count: int) -> tuple[np.ndarray, int | None]:
        """(``count`` free slots, lowest first; the old null slot when the table grew,
        else None: the caller re-points free vertices to the new ``capacity``)."""
        old_null = None
        if count == 0:
            return np.zeros(0, np.int64), None
        if len(self.free) < count:
            old_null = self._grow(grown(self.capacity, self.capacity + count - len(self.free),
                                        MIN_SLOT_GROWTH))
        taken = self.free[-count:][::-1]
        del self.free[-count:]
        return np.array(taken, np.int64), old_null

    def _grow(self, capacity: int) -> int:
        old = self.capacity
        host = np.zeros((capacity + 1, 4, 4), np.float32)
        host[:old] = self.host[:old]
        self.host, self.model = host, self.xp.asarray(host)
        extra = capacity - old
        self.nodes += [None] * extra
        self.geometry += [None] * extra
        self.entry = np.concatenate([self.entry, np.full(extra, -1, np.int64)])
        self.instance = np.concatenate([self.instance, np.full(extra, -1, np.int64)])
        self.origin = np.concatenate([self.origin, np.zeros((extra, 3))])
        self.dirty = np.concatenate([self.dirty, np.zeros(extra, bool)])
        self.mirrored = np.concatenate([self.mirrored, np.zeros(extra, bool)])
        self.free = list(range(capacity - 1, old - 1, -1)) + self.free
        self.capacity = capacity
        self._pending = [0, capacity]
        return old

    def bind(self, slots: np.ndarray, node, entry: int, instanced: bool):
        """Give ``slots`` to ``node`` (instance i in ``slots[i]`` when ``instanced``)."""
        g = node.geometry
        for k in slots.tolist():
            self.nodes[k] = node
            self.geometry[k] = g
        self.entry[slots] = entry
        self.instance[slots] = np.arange(len(slots)) if instanced else -1
        self.origin[slots] = g.origin
        self.dirty[slots] = True

    def release(self, slots: np.ndarray):
        """Free ``slots``: their rows become the zero matrix."""
        for k in slots.tolist():
            self.nodes[k] = self.geometry[k] = None
        self.entry[slots] = -1
        self.instance[slots] = -1
        self.dirty[slots] = False
        self.zero(slots)
        self.free.extend(sorted(slots.tolist(), reverse=True))

    def write(self, slots: np.ndarray, matrices: np.ndarray):
        """host[slots] = matrices (cast to float32), marked for upload."""
        with np.errstate(over="ignore", invalid="ignore"):  # reported by ``upload``
            self.host[slots] = matrices
        self.mark(int(slots.min()), int(slots.max()))

    def zero(self, slots: np.ndarray):
        self.host[slots] = 0.0
        self.mark(int(slots.min()), int(slots.max()))

    def mark(self, lo: int, hi: int):
        """Rows [lo, hi] were written (by a compiled kernel): upload them."""
        self._pending[0] = min(self._pending[0], lo)
        self._pending[1] = max(self._pending[1], hi)

    def upload(self) -> bool:
        """Copy the contiguous row range covering every written row to ``model`` in one
        copy. Returns False when nothing was written. Raises
        engine.scene.graph.TransformError naming the node of a written row that is not
        finite in float32."""
        lo, hi = self._pending
        if hi < lo:
            return False
        self._check(lo, min(hi, self.capacity - 1))
        if self.xp is np:
            self.model = self.host
        else:
            self.model[lo:hi + 1].set(self.host[lo:hi + 1])
        self._pending = [self.capacity + 1, -1]
        return True

    def _check(self, lo: int, hi: int):
        """The rows [lo, hi] about to be uploaded: raise TransformError naming the node of
        a row that is not finite in float32 (its world transform overflows, or reaches
        beyond the float32 range); recompute ``mirrored`` for them, a change bumping
        ``mirror_revision`` (the primitive assembly then reverses their winding)."""
        if hi < lo:
            return
        rows = self.host[lo:hi + 1]
        bad = np.flatnonzero(~np.isfinite(rows).all(axis=(1, 2)))
        if len(bad):
            node = self.nodes[lo + int(bad[0])]
            raise TransformError(f"node {getattr(node, 'name', '?')!r}: its model matrix is "
                                 "not finite in float32: its world transform overflows or "
                                 f"reaches beyond the float32 range ({FLOAT32_MAX:.3g})")
        a = rows[:, :3, :3].astype(np.float64)
        with np.errstate(over="ignore", invalid="ignore"):  # inf/NaN rows: not mirrored
            det = np.einsum("ki,ki->k", a[:, 0], np.cross(a[:, 1], a[:, 2]))
        neg = det < 0
        if not np.array_equal(neg, self.mirrored[lo:hi + 1]):
            self.mirrored[lo:hi + 1] = neg
            self.mirror_revision += 1
