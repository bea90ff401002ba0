"""Scene graph: nodes with a local TRS transform, lazily cached world matrices.

Imports no GPU or GL module (geometry arrays may still live on the device).

Caching: every node keeps a ``revision`` of its local transform. A world matrix is
cached together with the stamp of the parent world matrix it was built from; reading
``world_matrix`` revalidates up the parent chain (O(depth)), so moving a parent
invalidates every descendant without any "update" call. Each recomputation takes a new
``world_stamp`` from a global counter, which the batch compares to decide which model
matrices to upload. Structural changes (add/remove/reparent, geometry replaced,
visibility) bump ``structure_revision`` on the node and all its ancestors, which tells
the batch to repack.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np

from .geometry import Geometry
from .transforms import (
    IDENTITY_QUAT,
    look_at_rotation,
    matrix_to_quat,
    quat_normalize,
    trs_matrix_unchecked,
)

__all__ = ["DRAW_MODES", "Node", "Scene", "transform_epoch"]

DRAW_MODES = ("points", "wireframe", "solid", "solid+wireframe")

_stamps = itertools.count(1)
# Bumped by every transform or hierarchy change anywhere: lets the batch skip its
# per-object check entirely on frames where nothing moved.
_transform_epoch = [0]


def transform_epoch() -> int:
    """Counter that changes whenever any node's transform or parent changes."""
    return _transform_epoch[0]


class Node:
    """A scene-graph node.

    Args:
        name: label used by ``find``; need not be unique.
        position: (3,) translation in the parent frame (world units).
        rotation: unit quaternion (x, y, z, w); normalised on assignment.
        scale: (3,) per-axis scale (a scalar is broadcast).
        geometry: optional ``PointCloud`` / ``Mesh`` in this node's local frame.
        visible: hidden nodes (and their subtrees) are left out of the batch.

    The local matrix is ``T @ R @ S`` (float64 (4, 4)); ``world_matrix`` is
    ``parent.world_matrix @ local_matrix``.

    Raises:
        ValueError: non-finite transform values, wrong vector lengths, cycles.
    """

    def __init__(
        self,
        name: str = "node",
        position=(0.0, 0.0, 0.0),
        rotation=IDENTITY_QUAT,
        scale=(1.0, 1.0, 1.0),
        geometry: Geometry | None = None,
        visible: bool = True,
        draw: str | None = None,
    ):
        self.name = str(name)
        self._parent: Node | None = None
        self._children: list[Node] = []
        self._position = np.zeros(3)
        self._rotation = IDENTITY_QUAT.copy()
        self._scale = np.ones(3)
        self.revision = 0
        self.structure_revision = 0
        self._local_cache: tuple[int, np.ndarray] | None = None
        self._world_cache: tuple[int, int, np.ndarray] | None = None  # (rev, parent stamp, M)
        self.world_stamp = 0
        self._geometry = None
        self._visible = bool(visible)
        self.position = position
        self.rotation = rotation
        self.scale = scale
        self.geometry = geometry
        self._draw = None
        self.draw = draw

    # --- local transform -------------------------------------------------------------
    def _touch(self):
        self.revision += 1
        _transform_epoch[0] += 1

    @property
    def position(self) -> np.ndarray:
        """(3,) float64 translation in the parent frame (read-only copy)."""
        return self._position.copy()

    @position.setter
    def position(self, value):
        v = np.asarray(value, dtype=np.float64).reshape(-1)
        if v.shape != (3,) or not np.all(np.isfinite(v)):
            raise ValueError(f"{self.name}: position must be 3 finite numbers, got {value!r}")
        self._position = v.copy()
        self._touch()

    @property
    def rotation(self) -> np.ndarray:
        """(4,) float64 unit quaternion (x, y, z, w) relative to the parent frame."""
        return self._rotation.copy()

    @rotation.setter
    def rotation(self, value):
        try:
            self._rotation = quat_normalize(value)
        except ValueError as exc:
            raise ValueError(f"{self.name}: {exc}") from None
        self._touch()

    @property
    def scale(self) -> np.ndarray:
        """(3,) float64 per-axis scale."""
        return self._scale.copy()

    @scale.setter
    def scale(self, value):
        v = np.broadcast_to(np.asarray(value, dtype=np.float64), (3,)).copy()
        if not np.all(np.isfinite(v)):
            raise ValueError(f"{self.name}: scale must be finite, got {value!r}")
        self._scale = v
        self._touch()

    @property
    def local_matrix(self) -> np.ndarray:
        """(4, 4) float64 local -> parent transform ``T @ R @ S`` (cached; do not modify)."""
        if self._local_cache is None or self._local_cache[0] != self.revision:
            m = trs_matrix_unchecked(self._position.tolist(), self._rotation.tolist(),
                                     self._scale.tolist())
            m.setflags(write=False)
            self._local_cache = (self.revision, m)
        return self._local_cache[1]

    @property
    def world_matrix(self) -> np.ndarray:
        """(4, 4) float64 local -> world transform (cached; do not modify).

        Revalidates the chain from the root down, iteratively (any depth works).
        """
        chain = []
        node = self
        while node is not None:
            chain.append(node)
            node = node._parent
        parent_m, parent_stamp = None, 0
        for node in reversed(chain):
            c = node._world_cache
            if c is None or c[0] != node.revision or c[1] != parent_stamp:
                local = node.local_matrix
                m = local if parent_m is None else parent_m @ local
                m.setflags(write=False)
                node._world_cache = (node.revision, parent_stamp, m)
                node.world_stamp = next(_stamps)
            parent_m, parent_stamp = node._world_cache[2], node.world_stamp
        return parent_m

    @property
    def world_position(self) -> np.ndarray:
        """(3,) float64 origin of this node in world coordinates."""
        return self.world_matrix[:3, 3].copy()

    # --- geometry and visibility ---------------------------------------------------
    @property
    def geometry(self) -> Geometry | None:
        return self._geometry

    @geometry.setter
    def geometry(self, g: Geometry | None):
        if g is not None and not isinstance(g, Geometry):
            raise TypeError(f"{self.name}: geometry must be a PointCloud or Mesh, got {type(g)}")
        self._geometry = g
        self._structure_changed()

    def look_at(self, target, up=(0.0, 1.0, 0.0)):
        """Rotate the node in place so its local -Z axis points at ``target`` (world
        frame): a camera's view direction, a directional light's rays.

        Uses a fallback up axis when the direction is parallel to ``up``.
        Raises ValueError when the node is at ``target``. Returns self.
        """
        parent_inv = np.eye(4) if self.parent is None else np.linalg.inv(self.parent.world_matrix)
        tgt = (parent_inv @ np.append(np.asarray(target, dtype=np.float64), 1.0))[:3]
        up_local = parent_inv[:3, :3] @ np.asarray(up, dtype=np.float64)
        self.rotation = matrix_to_quat(look_at_rotation(self.position, tgt, up_local))
        return self

    @property
    def draw(self) -> str | None:
        """How the node's geometry is drawn: "points", "wireframe", "solid",
        "solid+wireframe", or None for the default (meshes "solid", point clouds
        "points"; a point cloud is always drawn as points).

        Raises:
            ValueError: an unknown mode.
        """
        return self._draw

    @draw.setter
    def draw(self, mode: str | None):
        if mode is not None and mode not in DRAW_MODES:
            raise ValueError(f"draw must be one of {', '.join(DRAW_MODES)} or None, got {mode!r}")
        if mode != getattr(self, "_draw", None):
            self._draw = mode
            self._structure_changed()

    @property
    def draw_mode(self) -> str | None:
        """The mode in effect: ``draw`` or the geometry's default; None without geometry."""
        g = self._geometry
        if g is None:
            return None
        if self._draw is None or not hasattr(g, "faces"):
            return "solid" if hasattr(g, "faces") else "points"
        return self._draw

    @property
    def visible(self) -> bool:
        return self._visible

    @visible.setter
    def visible(self, v: bool):
        if bool(v) != self._visible:
            self._visible = bool(v)
            self._structure_changed()

    def _structure_changed(self):
        node = self
        while node is not None:
            node.structure_revision += 1
            node = node._parent

    # --- hierarchy -------------------------------------------------------------------
    @property
    def parent(self) -> Node | None:
        return self._parent

    @property
    def children(self) -> tuple[Node, ...]:
        return tuple(self._children)

    def add(self, child: Node) -> Node:
        """Attach ``child`` (detaching it from any previous parent, keeping its local
        transform). Returns the child. Raises ValueError on a cycle."""
        if not isinstance(child, Node):
            raise TypeError(f"can only add Node objects, got {type(child).__name__}")
        anc = self
        while anc is not None:
            if anc is child:
                raise ValueError(f"cannot add {child.name!r} under its own descendant {self.name!r}")
            anc = anc._parent
        if child._parent is not None:
            child._parent.remove(child)
        child._parent = self
        self._children.append(child)
        child._world_cache = None
        _transform_epoch[0] += 1
        self._structure_changed()
        return child

    def remove(self, child: Node) -> Node:
        """Detach ``child``. Raises ValueError if it is not a child of this node."""
        try:
            self._children.remove(child)
        except ValueError:
            raise ValueError(f"{child.name!r} is not a child of {self.name!r}") from None
        self._structure_changed()
        child._parent = None
        child._world_cache = None
        _transform_epoch[0] += 1
        return child

    def traverse(self, visible_only: bool = False) -> Iterator[Node]:
        """Depth-first pre-order over this node and its descendants (iterative)."""
        stack = [self]
        while stack:
            node = stack.pop()
            if visible_only and not node._visible:
                continue
            yield node
            stack.extend(reversed(node._children))

    def find(self, name: str) -> Node | None:
        """First node named ``name`` in depth-first order, or None."""
        return next((n for n in self.traverse() if n.name == name), None)

    def find_all(self, name: str) -> list[Node]:
        return [n for n in self.traverse() if n.name == name]

    def __repr__(self) -> str:
        g = "" if self._geometry is None else f", {type(self._geometry).__name__}"
        g += f"[{self._geometry.vertex_count}]" if self._geometry is not None else ""
        return f"{type(self).__name__}({self.name!r}{g}, children={len(self._children)})"


class Scene(Node):
    """Root of a scene graph. ``background`` is the RGBA clear colour (floats in [0, 1])."""

    def __init__(self, name: str = "scene", background=(0.0, 0.0, 0.0, 1.0)):
        super().__init__(name)
        bg = np.asarray(background, dtype=np.float64).reshape(-1)
        if bg.shape not in ((3,), (4,)) or not np.all((bg >= 0) & (bg <= 1)):
            raise ValueError(f"background must be 3 or 4 floats in [0, 1], got {background!r}")
        self.background = tuple(float(c) for c in (np.append(bg, 1.0) if bg.size == 3 else bg))

    def bounds(self):
        """(2, 3) float64 world-space bounding box of the visible finite geometry, or None.

        Computed from each geometry's local box corners through its world matrix.
        """
        boxes = []
        for node in self.traverse(visible_only=True):
            g = node.geometry
            if g is None:
                continue
            b = g.bounds()
            if b is None:
                continue
            corners = np.array([[b[i, 0], b[j, 1], b[k, 2], 1.0]
                                for i in (0, 1) for j in (0, 1) for k in (0, 1)])
            w = corners @ node.world_matrix.T
            boxes.append(w[:, :3])
        if not boxes:
            return None
        allc = np.concatenate(boxes)
        return np.stack([allc.min(axis=0), allc.max(axis=0)])
