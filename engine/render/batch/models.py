"""The batch's per-frame model matrices: world matrices from the scene
(``engine.scene.world.WorldMatrices``: only the nodes whose transform stamps changed and
their descendants, level by level), instance poses that changed
(``engine.render.batch.instances``), each rebased against the precision origin
(``engine.render.batch.rebase``) into its model slot. Array operations only, never a
Python loop over objects.
"""

from __future__ import annotations

import numpy as np

from ...scene.world import WorldMatrices, compose_world
from . import rebase

_KERNELS: list = []


def compiled_kernels():
    """The Numba twins (``engine.render.backends.numba_world``), or None when Numba is
    not installed (the NumPy path then does the work)."""
    if not _KERNELS:
        try:
            from ..backends import numba_world
        except ImportError:
            numba_world = None
        _KERNELS.append(numba_world)
    return _KERNELS[0]


class ModelMatrices:
    """The world matrices of the batch's visible subtree and the update of its slots.

    Args:
        kernels: ``compiled_kernels()`` for the compiled fast path (the same bits as
            the NumPy path, faster), or None for NumPy.

    Attributes:
        worlds: the ``WorldMatrices`` of ``root``'s visible nodes (slot ``entry`` values
            index it).
    """

    def __init__(self, root, capacity: int = 64, kernels=None):
        self.root = root
        self.kernels = kernels
        self.worlds = WorldMatrices(root, capacity,
                                    None if kernels is None else kernels.update_worlds)
        self.worlds.extend(list(root.traverse(visible_only=True))[1:])
        self._matrices = np.zeros((0, 4, 4))

    def update(self, slots, instances: dict, origin: np.ndarray, everything: bool):
        """Write the model matrices of the slots whose world matrix changed (all with
        ``everything``: the origin moved, or ``slots.dirty``) into ``slots``; the
        instances (``instances``: node -> InstanceSnapshot) whose arrays changed.

        Raises ValueError naming the node and instance when an Instances node holds a
        non-finite value or a zero quaternion."""
        changed = self.worlds.update()
        world = self.worlds.world
        if self.kernels is not None:
            self._compiled(slots, instances, origin, everything, changed, world)
            return
        kc = slots.capacity
        entry = slots.entry[:kc]
        todo = (entry >= 0) & (slots.instance[:kc] < 0)
        if not everything:
            todo &= changed[np.maximum(entry, 0)] | slots.dirty[:kc]
        todo = np.flatnonzero(todo)
        if len(todo):
            m = np.take(world, entry[todo], axis=0, out=self._buffer(len(todo)), mode="clip")
            slots.write(todo, rebase.model_matrices(m, slots.origin[todo], origin, out=m))
        for node, b in instances.items():
            i = self.worlds.index(node)
            self._instances(slots, node, b, world[i], origin,
                            everything or bool(changed[i] or slots.dirty[b.slots[0]]))
        slots.dirty[:] = False

    def _compiled(self, slots, instances, origin, everything, changed, world):
        k = self.kernels
        lo, hi = k.write_models(slots.entry, slots.instance, slots.dirty, changed, world,
                                slots.origin, origin, everything, slots.host)
        if hi >= lo:
            slots.mark(int(lo), int(hi))
        for node, b in instances.items():
            i = self.worlds.index(node)
            lo, hi, bad = k.write_instances(
                node.positions, node.rotations, node.scales, node.active, b.trs, b.active,
                b.slots, world[i], np.asarray(node.geometry.origin, np.float64), origin,
                everything or bool(changed[i] or slots.dirty[b.slots[0]]), slots.host)
            if hi >= lo:
                slots.mark(int(lo), int(hi))
            if bad >= 0:
                node.check_values([int(bad)])  # raises, naming the instance and value
                raise AssertionError("unreachable")  # pragma: no cover
        slots.dirty[:] = False

    def _instances(self, slots, node, b, node_world: np.ndarray, origin: np.ndarray,
                   everything: bool):
        """Model matrices of the instances whose arrays changed (all when the node's
        world matrix changed); inactive instances get the all-zero matrix."""
        idx, trs, act = b.pose_changes(node, everything)
        if len(idx) == 0:
            return
        on, off = idx[act[idx]], idx[~act[idx]]
        if len(on):
            rows = node.trs_rows(None if len(on) == len(b.slots) else on)
            m = compose_world(node_world, rows, out=self._buffer(len(on)))
            slots.write(b.slots[on], rebase.model_matrices(m, slots.origin[b.slots[on]],
                                                           origin, out=m))
        if len(off):
            slots.zero(b.slots[off])
        b.commit(idx, trs, act)

    def _buffer(self, n: int) -> np.ndarray:
        """(n, 4, 4) float64 view of a reused buffer (fresh megabyte-sized arrays every
        frame cost more in page faults than the arithmetic)."""
        if len(self._matrices) < n:
            self._matrices = np.zeros((max(n, len(self._matrices) * 3 // 2), 4, 4))
        return self._matrices[:n]
