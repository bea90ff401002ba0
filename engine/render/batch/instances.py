"""The batch's instance diffing: which instances of an Instances node changed since
they were drawn, found by comparing its arrays with a snapshot (one vectorised pass), so
games may write the arrays any way they like (indexing, ufuncs, Numba, ``np.copyto``).
"""

from __future__ import annotations

import numpy as np

from ...scene.instances import Instances


class InstanceSnapshot:
    """What the batch drew for one Instances node.

    Attributes:
        slots: (capacity,) int64 model slots (instance i in ``slots[i]``).
        trs: (capacity, 10) float64 drawn ``[position, rotation, scale]`` rows (as the
            node holds them, rotations not normalised); NaN before the first draw.
        active: (capacity,) bool drawn ``active`` flags.
        colors: (capacity, 4) drawn instance colours; color_rev: the node's colour
            revision drawn; layout_rev: its layout (capacity) revision drawn.
    """

    __slots__ = ("active", "color_rev", "colors", "layout_rev", "slots", "trs")

    def __init__(self, node: Instances, slots: np.ndarray):
        self.slots = slots
        k = len(slots)
        self.trs = np.full((k, 10), np.nan)  # NaN never equals: the first sync draws all
        self.active = np.zeros(k, bool)
        self.colors = node.colors.copy()
        self.layout_rev = node._layout_rev
        self.color_rev = node._color_rev

    def pose_changes(self, node: Instances, everything: bool):
        """(idx, trs, active): the indices of the instances whose position, rotation,
        scale or ``active`` flag differ from the snapshot (all with ``everything``), and
        the node's current (capacity, 10) rows and flags; ``commit`` them once drawn
        (a value that failed its check stays a change)."""
        trs = np.concatenate([node.positions, node.rotations, node.scales], axis=1)
        act = node.active.copy()
        if everything:
            return np.arange(len(self.slots)), trs, act
        idx = np.flatnonzero(np.any(trs != self.trs, axis=1) | (act != self.active))
        return idx, trs, act

    def commit(self, idx: np.ndarray, trs: np.ndarray, active: np.ndarray):
        self.trs[idx] = trs[idx]
        self.active[idx] = active[idx]

    def color_changes(self, node: Instances) -> np.ndarray:
        """Indices of the instances whose colour (or the node's tint) changed since the
        snapshot; the snapshot takes the new values."""
        if self.color_rev != node._color_rev:
            idx = np.arange(len(self.slots))
        else:
            idx = np.flatnonzero(np.any(self.colors != node.colors, axis=1))
        self.colors[idx] = node.colors[idx]
        self.color_rev = node._color_rev
        return idx
