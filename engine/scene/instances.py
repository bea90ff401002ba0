"""Instances: one geometry drawn many times, each copy moved by arrays (like three.js
``InstancedMesh``), for thousands of moving objects with no per-object Python.

An ``Instances`` node holds K instances as plain NumPy arrays that games edit in place
(``rocks.positions += rocks.velocity * dt``): per-instance position, rotation, scale,
colour and an ``active`` flag. Instance i is drawn with the world matrix
``node.world_matrix @ T(positions[i]) @ R(rotations[i]) @ S(scales[i])`` and its vertex
colours multiplied by ``colors[i]`` (and by the node's ``color``). The renderer finds
what changed by comparing the arrays with what it drew last (one vectorised pass), so
any way of writing them works: indexing, ufuncs, Numba, ``np.copyto``.

Inactive instances are not drawn, picked or hit by collisions; ``spawn`` reuses them
before growing the arrays. Growing (more instances than ``capacity``) reallocates the
arrays: read ``node.positions`` again after ``spawn`` rather than keeping an old array.

Frames: positions, rotations and scales are in the Instances node's local frame (its
own transform moves all instances together); colours are sRGB-encoded RGBA in [0, 1].
Values are checked when drawn: a non-finite value or a zero quaternion raises
ValueError naming the node and the instance.
"""

from __future__ import annotations

import numpy as np

from .color import as_rgba
from .geometry import Geometry
from .graph import Node, _transform_epoch
from .transforms import _float_array, quat_from_euler, trs_matrices

__all__ = ["Instances"]

MIN_GROWTH = 16


class Instances(Node):
    """K copies of ``geometry`` with per-instance transforms (see the module docstring).

    Args:
        geometry: the shared ``PointCloud`` or ``Mesh`` (instance-local frame).
        count: number of instances when no ``positions`` are given (all at the origin).
        positions: (K, 3) positions in this node's frame, world units.
        rotations: (K, 4) quaternions (x, y, z, w; normalised when drawn) or (K, 3) Euler
            angles in degrees (X, Y, Z, "YXZ" order as ``Node.rotation``).
        scales: (K, 3) per-axis scales, (K,) uniform scales, or one number for all.
        colors: (K, 3|4) floats in [0, 1], or one colour for all (a CSS name works).
        active: (K,) bool, default all True.
        name, ``**node_kwargs``: as ``Node`` (position, rotation, scale of the whole group).

    Attributes (arrays of length ``capacity``, edit in place):
        positions (K, 3) float64, rotations (K, 4) float64, scales (K, 3) float64,
        colors (K, 4) float32, active (K,) bool.

    Raises:
        ValueError: wrong shapes or values (naming the argument); TypeError: no geometry.
    """

    def __init__(self, geometry: Geometry, count: int | None = None, positions=None,
                 rotations=None, scales=None, colors=None, active=None,
                 name: str = "instances", **node_kwargs):
        if not isinstance(geometry, Geometry):
            raise TypeError(f"{name}: Instances needs a PointCloud or Mesh geometry, got "
                            f"{type(geometry).__name__}")
        if positions is not None:
            p = _float_array(positions, f"{name}: positions")
            if p.ndim != 2 or p.shape[1] != 3:
                raise ValueError(f"{name}: positions must have shape (K, 3), got {p.shape}")
            k = p.shape[0]
            if count is not None and int(count) != k:
                raise ValueError(f"{name}: count {count} differs from {k} positions")
        else:
            k = 0 if count is None else _count(count, f"{name}: count")
            p = np.zeros((k, 3))
        self._layout_rev = 0
        self._alloc(k)
        super().__init__(name, geometry=geometry, **node_kwargs)
        self.positions = p
        if rotations is not None:
            self.rotations = rotations
        if scales is not None:
            self.scales = scales
        if colors is not None:
            self.colors = colors
        if active is not None:
            self.active = active

    def _alloc(self, k: int):
        self._pos = np.zeros((k, 3))
        self._rot = np.zeros((k, 4))
        self._rot[:, 3] = 1.0
        self._scl = np.ones((k, 3))
        self._col = np.ones((k, 4), np.float32)
        self._act = np.ones(k, bool)

    # --- arrays ----------------------------------------------------------------------
    @property
    def capacity(self) -> int:
        """K, the length of the instance arrays (active or not)."""
        return len(self._act)

    @property
    def count(self) -> int:
        """Number of active instances."""
        return int(np.count_nonzero(self._act))

    def __len__(self) -> int:
        return self.capacity

    @property
    def positions(self) -> np.ndarray:
        """(K, 3) float64 instance positions in this node's frame (edit in place)."""
        return self._pos

    @positions.setter
    def positions(self, value):
        self._pos[...] = self._rows(value, "positions", (3,))

    @property
    def rotations(self) -> np.ndarray:
        """(K, 4) float64 quaternions (x, y, z, w), normalised when drawn. Assigning
        (K, 3) Euler angles in degrees converts them ("YXZ", as ``Node.rotation``)."""
        return self._rot

    @rotations.setter
    def rotations(self, value):
        self._rot[...] = self._quats(value)

    @property
    def scales(self) -> np.ndarray:
        """(K, 3) float64 per-axis scales (edit in place); assign (K,) or a number for
        uniform scales."""
        return self._scl

    @scales.setter
    def scales(self, value):
        self._scl[...] = self._scale_rows(value)

    @property
    def colors(self) -> np.ndarray:
        """(K, 4) float32 RGBA tints in [0, 1] multiplied into the vertex colours."""
        return self._col

    @colors.setter
    def colors(self, value):
        self._col[...] = self._color_rows(value)

    @property
    def active(self) -> np.ndarray:
        """(K,) bool: which instances are drawn (edit in place to hide or show)."""
        return self._act

    @active.setter
    def active(self, value):
        a = np.asarray(value)
        if a.dtype != bool:
            raise ValueError(f"{self.name}: active must be booleans, got dtype {a.dtype}")
        self._act[...] = np.broadcast_to(a, self._act.shape)

    # --- argument conversion (k rows; default: the capacity) ----------------------------
    def _rows(self, value, what: str, widths, k: int | None = None) -> np.ndarray:
        a = _float_array(value, f"{self.name}: {what}")
        k = self.capacity if k is None else k
        if a.ndim == 1 and a.shape[0] in widths:
            a = np.broadcast_to(a, (k, a.shape[0]))
        if a.ndim != 2 or a.shape[0] != k or a.shape[1] not in widths:
            want = " or ".join(f"({k}, {w})" for w in widths)
            raise ValueError(f"{self.name}: {what} must have shape {want}, got {a.shape}")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{self.name}: {what} must be finite")
        return a

    def _quats(self, value, k: int | None = None) -> np.ndarray:
        r = self._rows(value, "rotations", (4, 3), k)
        return quat_from_euler(r) if r.shape[1] == 3 else r

    def _scale_rows(self, value, k: int | None = None) -> np.ndarray:
        k = self.capacity if k is None else k
        s = _float_array(value, f"{self.name}: scales")
        if s.ndim == 0 or (s.ndim == 1 and s.shape[0] == k and k != 3) or s.shape == (k, 1):
            s = np.broadcast_to(s.reshape(-1, 1) if s.ndim else s, (k, 3))
        return self._rows(s, "scales", (3,), k)

    def _color_rows(self, value, k: int | None = None) -> np.ndarray:
        k = self.capacity if k is None else k
        if isinstance(value, str) or (np.ndim(value) == 1 and np.shape(value)[0] in (3, 4)):
            return np.broadcast_to(np.array(as_rgba(value, f"{self.name}: colors"),
                                            np.float32), (k, 4))
        c = self._rows(value, "colors", (4, 3), k)
        if np.any(c < 0) or np.any(c > 1):
            raise ValueError(f"{self.name}: colors must be in [0, 1]")
        if c.shape[1] == 3:
            c = np.concatenate([c, np.ones((k, 1))], axis=1)
        return c.astype(np.float32)

    # --- spawning ----------------------------------------------------------------------
    def reserve(self, capacity: int) -> Instances:
        """Grow the arrays to at least ``capacity`` instances (new ones inactive).
        Returns self."""
        capacity = _count(capacity, f"{self.name}: capacity")
        k = self.capacity
        if capacity <= k:
            return self
        old = (self._pos, self._rot, self._scl, self._col, self._act)
        self._alloc(capacity)
        self._pos[:k], self._rot[:k], self._scl[:k], self._col[:k], self._act[:k] = old
        self._act[k:] = False
        self._layout_rev += 1
        _transform_epoch[0] += 1
        if k == 0:
            self._structure_changed()  # an empty Instances node was not drawn at all
        return self

    def spawn(self, position=(0.0, 0.0, 0.0), rotation=(0.0, 0.0, 0.0, 1.0), scale=1.0,
              color=(1.0, 1.0, 1.0, 1.0)) -> int:
        """Activate one instance (the lowest inactive index, growing the arrays by half
        when none is free) with the given transform (rotation: a quaternion or Euler
        degrees) and colour. Returns its index."""
        scale = [scale] * 3 if np.ndim(scale) == 0 else scale
        color = as_rgba(color, f"{self.name}: color")
        return int(self.spawn_many([position], [rotation], [scale], [color])[0])

    def spawn_many(self, positions, rotations=None, scales=None, colors=None) -> np.ndarray:
        """Activate len(positions) instances at once (inactive indices first, then new
        ones). Arguments as the constructor's, for those M instances only (defaults:
        identity rotation, scale 1, white). Returns their (M,) int64 indices."""
        p = _float_array(positions, f"{self.name}: positions")
        if p.ndim != 2 or p.shape[1] != 3:
            raise ValueError(f"{self.name}: positions must have shape (M, 3), got {p.shape}")
        m = p.shape[0]
        p = self._rows(p, "positions", (3,), m)
        q = self._quats(rotations, m) if rotations is not None else (0.0, 0.0, 0.0, 1.0)
        s = self._scale_rows(scales, m) if scales is not None else 1.0
        c = self._color_rows(colors, m) if colors is not None else 1.0
        free = np.flatnonzero(~self._act)
        if len(free) < m:
            need = self.capacity + m - len(free)
            self.reserve(max(need, self.capacity + self.capacity // 2, MIN_GROWTH))
            free = np.flatnonzero(~self._act)
        idx = free[:m]
        self._pos[idx], self._rot[idx], self._scl[idx], self._col[idx] = p, q, s, c
        self._act[idx] = True
        return idx

    def despawn(self, indices) -> None:
        """Deactivate instances (an index or an array of them); ``spawn`` reuses them."""
        idx = np.asarray(indices, np.int64)
        if idx.size and (idx.min() < -self.capacity or idx.max() >= self.capacity):
            raise IndexError(f"{self.name}: instance index out of range 0..{self.capacity - 1}")
        self._act[idx] = False

    # --- matrices ----------------------------------------------------------------------
    def unit_rotations(self, indices=None) -> np.ndarray:
        """(M, 4) normalised rotations of ``indices`` (all by default). Raises
        ValueError naming the first instance with a zero or non-finite quaternion."""
        q = self._rot if indices is None else self._rot[indices]
        n = np.linalg.norm(q, axis=1)
        bad = ~(np.isfinite(n) & (n >= 1e-12))
        if bad.any():
            i = int(np.argmax(bad))
            which = i if indices is None else int(np.asarray(indices).reshape(-1)[i])
            raise ValueError(f"{self.name}: instance {which}: rotation must be a finite, "
                             f"non-zero quaternion, got {self._rot[which].tolist()}")
        return q / n[:, None]

    def check_values(self, indices=None):
        """Raise ValueError naming the first instance (of ``indices``, default all) with a
        non-finite position or scale or a bad quaternion; the renderer calls this."""
        sel = slice(None) if indices is None else indices
        for what, a in (("position", self._pos), ("scale", self._scl)):
            bad = ~np.all(np.isfinite(a[sel]), axis=1)
            if bad.any():
                i = int(np.argmax(bad))
                which = i if indices is None else int(np.asarray(indices).reshape(-1)[i])
                raise ValueError(f"{self.name}: instance {which}: {what} must be finite, got "
                                 f"{a[which].tolist()}")
        self.unit_rotations(indices)

    def local_matrices(self, indices=None) -> np.ndarray:
        """(M, 4, 4) float64 instance -> node matrices ``T @ R @ S`` of ``indices``
        (default: every instance, active or not). Raises ValueError for bad values."""
        self.check_values(indices)
        sel = slice(None) if indices is None else indices
        return trs_matrices(self._pos[sel], self.unit_rotations(indices), self._scl[sel])

    def world_matrices(self, indices=None) -> np.ndarray:
        """(M, 4, 4) float64 instance -> world matrices: ``world_matrix @ local``."""
        return np.matmul(self.world_matrix, self.local_matrices(indices))

    def __repr__(self) -> str:
        return (f"Instances({self.name!r}, {type(self.geometry).__name__}"
                f"[{self.geometry.vertex_count}] x {self.capacity}, {self.count} active)")


def _count(value, what: str) -> int:
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a whole number >= 0, got {value!r}") from None
    if not (f >= 0 and f.is_integer()):
        raise ValueError(f"{what} must be a whole number >= 0, got {value!r}")
    return int(f)
