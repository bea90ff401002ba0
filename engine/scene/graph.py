"""Scene graph: nodes with a local TRS transform, lazily cached world matrices.

Imports no GPU or GL module (geometry arrays may still live on the device).

Storage: every node's local transform is one row of a process-wide table of float64
``[px py pz  qx qy qz qw  sx sy sz]`` rows with a revision stamp per row
(``engine.scene.transform_table``), so the world matrices of thousands of nodes are
found and recomposed with a few array operations (``engine.scene.world.WorldMatrices``,
what the renderer's batch uses), and ``set_transforms`` moves many nodes with one array
write. Single-node setters stay cheap: they check three or four Python floats, write
them and stamp the row.

Caching: reading ``world_matrix`` revalidates up the parent chain (O(depth)), so moving a
parent invalidates every descendant without any "update" call. Each recomputation
(``engine.scene.world.compose_one``: the one composition, ``compose_world``, for one
node) takes a new ``world_stamp`` from a global counter.

Structure: adding, removing or reparenting nodes, replacing geometry, hiding or showing
change ``structure_revision`` of the node and its ancestors, which tells the batch to
repack. The change is recorded by walking up only until an ancestor already holds a mark
newer than the last time anyone read a structure revision, so building a hierarchy costs
O(1) amortised per ``add`` whatever its depth (a chain of 100,000 nodes is linear).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Iterator

import numpy as np

from .atmosphere import SKY_ENVIRONMENT, Fog, Sky
from .color import as_rgba
from .deform import is_deformed, posed_vertices
from .environment import Environment
from .exposure import check_exposure, check_tone_map
from .geometry import FLOAT32_MAX, Geometry
from .transform_table import STAMPS, TABLE
from .transforms import (
    DEFAULT_EULER_ORDER,
    IDENTITY_QUAT,
    euler_from_quat,
    look_at_rotation,
    matrix_to_quat,
    quat_from_euler,
)
from .world import compose_one

__all__ = ["DRAW_MODES", "FLOAT32_MAX", "Node", "NodeVector", "Scene", "TransformError",
           "get_transforms", "set_transforms", "subtree_bounds", "transform_epoch"]

class TransformError(ValueError):
    """A node's world transform cannot be drawn: composing it overflows the float64
    range, or it puts the node's geometry beyond ``FLOAT32_MAX``. The message names the
    node and the cause."""

DRAW_MODES = ("points", "wireframe", "solid", "solid+wireframe")

# Bumped by every transform or hierarchy change anywhere: lets the batch skip its
# per-object check entirely on frames where nothing moved.
_transform_epoch = [0]
# Bumped whenever a node's colour changes (the batch rewrites that node's vertex colours).
_appearance_epoch = [0]
# Structure marks (see the module docstring): a change marks its node and ancestors with
# the current clock value; reading a structure revision that equals it advances the clock.
_structure_clock = [1]


def transform_epoch() -> int:
    """Counter that changes whenever any node's transform or parent changes."""
    return _transform_epoch[0]


def appearance_epoch() -> int:
    """Counter that changes whenever any node's ``color`` changes."""
    return _appearance_epoch[0]




def _numbers(value, n: int, what: str, owner) -> tuple:
    """``n`` finite Python floats from a sequence (tuple, list, NumPy array...).

    The single-node hot path: no NumPy computation for tuples, lists and 1-D arrays.
    Raises ValueError naming the node and the argument.
    """
    if isinstance(value, (str, bytes)):  # ValueError, the engine's bad-argument error
        raise ValueError(f"{owner}: {what} must be {n} numbers, got the string {value!r}")  # noqa: TRY004
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "fiub":
            raise ValueError(f"{owner}: {what} must be {n} numbers, got {value!r}")
        value = value.reshape(-1).tolist()
    try:
        vals = tuple(map(float, value))
    except (TypeError, ValueError):
        raise ValueError(f"{owner}: {what} must be {n} numbers, got {value!r}") from None
    if len(vals) != n:
        raise ValueError(f"{owner}: {what} must be {n} numbers, got {len(vals)}: {value!r}")
    for v in vals:
        if v - v != 0.0:  # NaN and +-inf
            raise ValueError(f"{owner}: {what} must be finite, got {value!r}")
    return vals


def _component(i: int) -> property:
    def get(self):
        return float(self[i])

    def set_(self, value):
        self[i] = value

    return property(get, set_, doc=f"component {i} (writes back to the node)")


class NodeVector(np.ndarray):
    """A node's ``position``, ``rotation`` or ``scale``: a float64 NumPy array that
    writes back to its node.

    Item assignment (``node.position[0] += 1``, ``v[1:] = 0``), the ``x``/``y``/``z``/
    ``w`` attributes (``node.position.y = 2``) and in-place arithmetic
    (``v += velocity * dt``, ``np.add(v, 1, out=v)``) set the node's vector through its
    checked setter, so a non-finite value raises ValueError there. Any other result
    (``node.position + 1``, ``v.copy()``) is a plain array that belongs to no node.
    The array is a snapshot taken when it was read: writing back sets the whole vector
    as this array holds it.
    """

    def __new__(cls, values, owner=None, attr: str | None = None):
        obj = np.array(values, dtype=np.float64).view(cls)
        obj._owner, obj._attr = owner, attr
        return obj

    def __array_finalize__(self, obj):
        # A view (slice) of a bound vector writes back through the bound vector; a copy
        # is detached.
        root = None
        if isinstance(obj, NodeVector):
            root = obj if getattr(obj, "_owner", None) is not None else getattr(
                obj, "_root_vector", None)
        if root is not None and self.base is not None and np.may_share_memory(self, root):
            self._root_vector = root
        else:
            self._root_vector = None
        self._owner = self._attr = None

    @property
    def _bound(self):
        if getattr(self, "_owner", None) is not None:
            return self
        return getattr(self, "_root_vector", None)

    def _write_back(self):
        v = self._bound
        if v is not None:
            setattr(v._owner, v._attr, v.view(np.ndarray))

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        self._write_back()

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        args = tuple(x.view(np.ndarray) if isinstance(x, NodeVector) else x for x in inputs)
        if out is not None:
            kwargs["out"] = tuple(o.view(np.ndarray) if isinstance(o, NodeVector) else o
                                  for o in out)
        result = getattr(ufunc, method)(*args, **kwargs)
        if out is None:
            return result
        for o in out:
            if isinstance(o, NodeVector):
                o._write_back()
        return out[0] if len(out) == 1 else out

    def __array_function__(self, func, types, args, kwargs):
        result = super().__array_function__(func, types, args, kwargs)
        writes = (np.copyto, np.place, np.putmask, np.put, np.put_along_axis)
        if func in writes and args and isinstance(args[0], NodeVector):
            args[0]._write_back()
        return result

    def fill(self, value):
        super().fill(value)
        self._write_back()

    def sort(self, *args, **kwargs):
        super().sort(*args, **kwargs)
        self._write_back()

    def put(self, *args, **kwargs):
        super().put(*args, **kwargs)
        self._write_back()

    def __reduce__(self):
        return self.view(np.ndarray).__reduce__()

    x = _component(0)
    y = _component(1)
    z = _component(2)
    w = _component(3)


class Node:
    """A scene-graph node.

    Args:
        name: label used by ``find``; need not be unique.
        position: (3,) translation in the parent frame (world units).
        rotation: unit quaternion (x, y, z, w), normalised on assignment; or three Euler
            angles in degrees about X, Y, Z applied in "YXZ" order (yaw, pitch, roll;
            see ``engine.scene.transforms.quat_from_euler``), e.g. ``(0, 90, 0)``.
        scale: (3,) per-axis scale, or one number for all three axes.
        geometry: optional ``PointCloud`` / ``Mesh`` in this node's local frame.
        visible: hidden nodes (and their subtrees) are left out of the batch.
        draw: how the geometry is drawn (see ``draw``).
        color: optional tint of this node's own geometry (not its children's): one
            colour (3-4 floats in [0, 1], a CSS name or "#rrggbb") multiplied into the
            vertex colours (white geometry takes exactly this colour).
        line_color: the colour of this node's lines (see ``line_color``).
        hidden_line_removal: hide lines behind this mesh's own faces (see
            ``hidden_line_removal``).

    Deformation (``engine.scene.deform``): ``skin`` (None, or the ``Skin`` whose joints
    place this node's skinned Mesh; the node's own transform is then ignored) and
    ``morph_weights`` (None, or (T,) float64 weights of the mesh's morph targets that
    override the mesh's defaults; animation ``weights`` channels write it).

    The local matrix is ``T @ R @ S`` (float64 (4, 4)); ``world_matrix`` is
    ``parent.world_matrix @ local_matrix``. Reading ``position``, ``rotation`` or
    ``scale`` gives a ``NodeVector``: editing it in place (``node.position[0] += 1``,
    ``node.position.y = 2``) moves the node.

    Raises:
        ValueError: non-finite transform values, wrong vector lengths, a zero quaternion,
            strings where numbers belong (each message names the node and argument),
            cycles.
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
        color=None,
        line_color=None,
        hidden_line_removal: bool = False,
    ):
        self._row = TABLE.alloc()
        self.name = str(name)
        self._parent: Node | None = None
        self._children: dict[Node, None] = {}
        self._smark = 0
        self._local_cache: tuple[int, np.ndarray] | None = None
        self._world_cache: tuple[int, int, np.ndarray] | None = None  # (rev, parent stamp, M)
        self.world_stamp = 0
        self._geometry = None
        self._visible = bool(visible)
        self._color = None
        self._color_rev = 0
        self.position = position
        self.rotation = rotation
        self.scale = scale
        self.geometry = geometry
        self._draw = None
        self.draw = draw
        self._line_color = None
        self.line_color = line_color
        self._hidden_lines = False
        self.hidden_line_removal = hidden_line_removal
        # vertex deformation (engine.scene.deform): the skin that places this node's
        # mesh, and morph weights overriding the mesh's defaults
        self._skin = None
        self.morph_weights = None
        if color is not None:
            self.color = color

    def __del__(self):
        row = self.__dict__.get("_row")
        if row is not None:
            with contextlib.suppress(Exception):  # interpreter shutdown: no table any more
                TABLE.release(row)

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_trs_values"] = TABLE.trs[state.pop("_row")].copy()
        return state

    def __setstate__(self, state):
        values = state.pop("_trs_values")
        self.__dict__.update(state)
        self._row = TABLE.alloc()
        TABLE.trs[self._row] = values
        self._touch()

    def _label(self) -> str:
        return repr(self.name)

    # --- local transform -------------------------------------------------------------
    @property
    def revision(self) -> int:
        """Stamp of the local transform: changes whenever position, rotation or scale is
        set (a global counter value, not a count of changes)."""
        return int(TABLE.rev[self._row])

    def _touch(self):
        TABLE.revs[self._row] = next(STAMPS)
        _transform_epoch[0] += 1

    @property
    def position(self) -> NodeVector:
        """(3,) float64 translation in the parent frame (a ``NodeVector``: in-place edits
        move the node)."""
        return NodeVector(TABLE.trs[self._row, 0:3], self, "position")

    @position.setter
    def position(self, value):
        try:
            if type(value) is np.ndarray and value.dtype.kind == "f":
                value = value.tolist()
            if type(value) is str:
                raise TypeError
            x, y, z = value
            x = float(x)
            y = float(y)
            z = float(z)
            if x - x != 0.0 or y - y != 0.0 or z - z != 0.0:
                raise ValueError
        except (TypeError, ValueError):
            x, y, z = _numbers(value, 3, "position", self._label())  # raises, naming it
        f, b = TABLE.flat, self._row * 10
        f[b] = x
        f[b + 1] = y
        f[b + 2] = z
        self._touch()

    @property
    def rotation(self) -> NodeVector:
        """(4,) float64 unit quaternion (x, y, z, w) relative to the parent frame.

        Assign a quaternion (normalised here) or three Euler angles in degrees about
        X, Y, Z in "YXZ" order (see ``euler``)."""
        return NodeVector(TABLE.trs[self._row, 3:7], self, "rotation")

    @rotation.setter
    def rotation(self, value):
        if isinstance(value, (str, bytes)):
            raise ValueError(f"{self._label()}: rotation must be a quaternion (x, y, z, w) or "  # noqa: TRY004
                             f"3 Euler angles in degrees, got the string {value!r}")
        try:
            n = len(value)
        except TypeError:
            raise ValueError(f"{self._label()}: rotation must be a quaternion (x, y, z, w) "
                             f"or 3 Euler angles in degrees, got {value!r}") from None
        if n == 3:
            q = quat_from_euler(_numbers(value, 3, "rotation (Euler degrees)", self._label()))
            x, y, z, w = q.tolist()
        else:
            try:
                if type(value) is np.ndarray and value.dtype.kind == "f":
                    value = value.tolist()
                x, y, z, w = value
                x = float(x)
                y = float(y)
                z = float(z)
                w = float(w)
            except (TypeError, ValueError):
                x, y, z, w = _numbers(value, 4, "rotation (quaternion x, y, z, w)",
                                      self._label())
            norm = math.sqrt(x * x + y * y + z * z + w * w)
            if not (norm >= 1e-12 and norm < math.inf):
                raise ValueError(f"{self._label()}: rotation quaternion must be non-zero "
                                 f"and finite, got {value!r}")
            if norm != 1.0:
                x, y, z, w = x / norm, y / norm, z / norm, w / norm
        f, b = TABLE.flat, self._row * 10
        f[b + 3] = x
        f[b + 4] = y
        f[b + 5] = z
        f[b + 6] = w
        self._touch()

    @property
    def euler(self) -> np.ndarray:
        """(3,) float64 Euler angles in degrees about X, Y, Z, order "YXZ" (yaw about Y,
        then pitch about the turned X, then roll about the turned Z), read-only array;
        assign three angles to set the rotation."""
        e = euler_from_quat(TABLE.trs[self._row, 3:7], DEFAULT_EULER_ORDER)
        e.setflags(write=False)
        return e

    @euler.setter
    def euler(self, value):
        self.rotation = _numbers(value, 3, "euler (degrees)", self._label())

    @property
    def scale(self) -> NodeVector:
        """(3,) float64 per-axis scale (a ``NodeVector``); assign 3 numbers or one."""
        return NodeVector(TABLE.trs[self._row, 7:10], self, "scale")

    @scale.setter
    def scale(self, value):
        if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
            s = float(value)
            if s - s != 0.0:
                raise ValueError(f"{self._label()}: scale must be finite, got {value!r}")
            x = y = z = s
        elif isinstance(value, np.ndarray) and value.ndim == 0:
            x = y = z = _numbers(value.reshape(1), 1, "scale", self._label())[0]
        else:
            x, y, z = _numbers(value, 3, "scale (3 numbers, or one for every axis)",
                               self._label())
        f, b = TABLE.flat, self._row * 10
        f[b + 7] = x
        f[b + 8] = y
        f[b + 9] = z
        self._touch()

    @property
    def local_matrix(self) -> np.ndarray:
        """(4, 4) float64 local -> parent transform ``T @ R @ S`` (cached; do not modify)."""
        rev = TABLE.rev[self._row]
        if self._local_cache is None or self._local_cache[0] != rev:
            m = compose_one(None, TABLE.trs[self._row].tolist())
            m.setflags(write=False)
            self._local_cache = (rev, m)
        return self._local_cache[1]

    @property
    def world_matrix(self) -> np.ndarray:
        """(4, 4) float64 local -> world transform (cached; do not modify):
        ``parent.world_matrix @ local_matrix``, by ``engine.scene.world.compose_one``
        (``compose_world`` for one node).

        Revalidates the chain from the root down, iteratively (any depth works). A
        product that overflows gives non-finite entries, without a NumPy warning: the
        code that draws it reports the node (``subtree_bounds``, ``Camera.view_matrix``,
        the renderer's batch).
        """
        chain = []
        node = self
        while node is not None:
            chain.append(node)
            node = node._parent
        parent_m, parent_stamp = None, 0
        rev = TABLE.rev
        for node in reversed(chain):
            c = node._world_cache
            r = rev[node._row]
            if c is None or c[0] != r or c[1] != parent_stamp:
                m = compose_one(parent_m, TABLE.trs[node._row].tolist())
                m.setflags(write=False)
                node._world_cache = (r, parent_stamp, m)
                node.world_stamp = next(STAMPS)
            parent_m, parent_stamp = node._world_cache[2], node.world_stamp
        return parent_m

    @property
    def world_position(self) -> np.ndarray:
        """(3,) float64 origin of this node in world coordinates (read-only array: set
        ``position``, which is in the parent frame, to move the node)."""
        p = self.world_matrix[:3, 3].copy()
        p.setflags(write=False)
        return p

    # --- appearance -------------------------------------------------------------------
    @property
    def color(self) -> tuple[float, float, float, float] | None:
        """RGBA tint in [0, 1] multiplied into this node's own vertex colours, or None
        (no tint). Assign a colour (3-4 floats, a CSS name, "#rrggbb") or None; the
        renderer rewrites only this node's colours on the next frame."""
        return self._color

    @color.setter
    def color(self, value):
        c = None if value is None else as_rgba(value, f"{self._label()}: color")
        if c != self._color:
            self._color = c
            self._color_rev += 1
            _appearance_epoch[0] += 1

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
        own = TABLE.trs[self._row, 0:3].copy()
        self.rotation = matrix_to_quat(look_at_rotation(own, tgt, up_local))
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
    def line_color(self) -> tuple[float, float, float, float] | None:
        """RGBA in [0, 1] of the lines this node draws (a mesh's wireframe edges, a
        ``Lines`` geometry's segments), unlit; or None (default): a ``Lines`` geometry
        keeps its vertex colours, and a mesh's edges take its base colour (material
        colour x vertex colours) unless that has a contrast ratio below 3:1 with the
        scene's background (WCAG 2.1, non-text contrast), where they are drawn black or
        white, whichever contrasts more; edges drawn over their own faces
        ("solid+wireframe") are black or white, whichever contrasts more with that base
        colour (``engine.render.lines.line_colors``). Assign a colour (3-4 floats, a CSS
        name, "#rrggbb") or None. Raises ValueError for anything else, naming the node."""
        return self._line_color

    @line_color.setter
    def line_color(self, value):
        c = None if value is None else as_rgba(value, f"{self._label()}: line_color")
        if c != self._line_color:
            self._line_color = c
            self._structure_changed()

    @property
    def hidden_line_removal(self) -> bool:
        """For a mesh drawn "wireframe": True draws only the edges not hidden by its own
        faces (and hides whatever else is behind them), as a depth-only pre-pass of the
        faces pushed back by a slope-scaled offset (``engine.render.lines``). No effect in
        the other draw modes (solid faces hide what is behind them anyway)."""
        return self._hidden_lines

    @hidden_line_removal.setter
    def hidden_line_removal(self, value: bool):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{self._label()}: hidden_line_removal must be True or False, "
                            f"got {value!r}")
        if bool(value) != self._hidden_lines:
            self._hidden_lines = bool(value)
            self._structure_changed()

    # shadows (engine.render.shadows): class defaults, so every node starts with both on
    _cast_shadow = True
    _receive_shadow = True

    @property
    def cast_shadow(self) -> bool:
        """This node's triangles go into the shadow maps of the lights with ``shadows``
        on (default True). Per node, not per subtree; a light is a node too, but this
        flag is about geometry: a light's own switch is ``Light.shadows``."""
        return self._cast_shadow

    @cast_shadow.setter
    def cast_shadow(self, value: bool):
        self._set_shadow_flag("cast_shadow", value)

    @property
    def receive_shadow(self) -> bool:
        """This node's triangles are darkened where a shadow map says a light is hidden
        (default True); False lights them as if no shadow fell on them."""
        return self._receive_shadow

    @receive_shadow.setter
    def receive_shadow(self, value: bool):
        self._set_shadow_flag("receive_shadow", value)

    def _set_shadow_flag(self, name: str, value):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{self._label()}: {name} must be True or False, got {value!r}")
        if bool(value) != getattr(self, "_" + name):
            setattr(self, "_" + name, bool(value))
            self._structure_changed()  # the assembly's per-triangle flags follow

    @property
    def skin(self):
        """The ``engine.scene.deform.Skin`` placing this node's skinned Mesh, or None.
        Setting it changes the structure (the renderer rebuilds its tables)."""
        return self._skin

    @skin.setter
    def skin(self, value):
        from .deform import Skin

        if value is not None and not isinstance(value, Skin):
            raise TypeError(f"node {self.name!r}: skin must be an engine.scene.deform.Skin "
                            f"or None, got {type(value).__name__}")
        self._skin = value
        self._structure_changed()

    @property
    def draw_mode(self) -> str | None:
        """The mode in effect: ``draw`` or the geometry's default; None without geometry.
        Line geometry (``segments``) draws as "wireframe" unless "points" is asked for."""
        g = self._geometry
        if g is None:
            return None
        if hasattr(g, "segments"):
            return "points" if self._draw == "points" else "wireframe"
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

    @property
    def structure_revision(self) -> int:
        """A value that changes whenever the structure of this node's subtree changes
        (children added or removed, geometry replaced, visibility or draw mode)."""
        mark = self._smark
        if mark == _structure_clock[0]:
            _structure_clock[0] += 1  # a later change must reach this node again
        return mark

    def _structure_changed(self):
        clock = _structure_clock[0]
        node = self
        while node is not None and node._smark != clock:
            node._smark = clock
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
        transform). Returns the child. O(1) for a child without children (the common
        case); O(depth) otherwise, for the cycle check. Raises ValueError on a cycle."""
        if not isinstance(child, Node):
            raise TypeError(f"can only add Node objects, got {type(child).__name__}")
        if child is self:
            raise ValueError(f"cannot add {child.name!r} under itself")
        if child._children:
            anc = self._parent
            while anc is not None:
                if anc is child:
                    raise ValueError(f"cannot add {child.name!r} under its own descendant "
                                     f"{self.name!r}")
                anc = anc._parent
        if child._parent is not None:
            child._parent.remove(child)
        child._parent = self
        self._children[child] = None
        child._world_cache = None
        _transform_epoch[0] += 1
        self._structure_changed()
        return child

    def remove(self, child: Node) -> Node:
        """Detach ``child`` (O(1)). Raises ValueError if it is not a child of this node."""
        if child not in self._children:
            raise ValueError(f"{getattr(child, 'name', child)!r} is not a child of {self.name!r}")
        del self._children[child]
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
        """Every node named ``name`` in this subtree (this node included, hidden ones
        too), in depth-first pre-order like ``traverse``; empty when there is none.
        Names need not be unique: a loaded model often repeats them ("Cube", "mesh_0")."""
        return [n for n in self.traverse() if n.name == name]

    def set_transforms(self, nodes, positions=None, rotations=None, scales=None):
        """``set_transforms(nodes, ...)`` (see the module function): move many nodes
        with array writes. The nodes need not be under this one."""
        set_transforms(nodes, positions, rotations, scales)

    def __repr__(self) -> str:
        g = "" if self._geometry is None else f", {type(self._geometry).__name__}"
        g += f"[{self._geometry.vertex_count}]" if self._geometry is not None else ""
        return f"{type(self).__name__}({self.name!r}{g}, children={len(self._children)})"


def _rows_of(nodes) -> np.ndarray:
    if isinstance(nodes, Node):
        raise TypeError("nodes must be a sequence of Node objects, not one Node")
    try:
        return np.fromiter((n._row for n in nodes), np.int64)
    except AttributeError:
        bad = next(n for n in nodes if not isinstance(n, Node))
        raise TypeError(f"nodes must all be Node objects, got {type(bad).__name__}") from None


def _array_arg(value, name: str, k: int, widths: tuple[int, ...]) -> np.ndarray:
    from .transforms import _float_array

    a = _float_array(value, name)
    if a.ndim == 1 and a.shape[0] in widths:
        a = np.broadcast_to(a, (k, a.shape[0]))
    if a.ndim != 2 or a.shape[0] != k or a.shape[1] not in widths:
        want = " or ".join(f"({k}, {w})" for w in widths)
        raise ValueError(f"{name} must have shape {want} for {k} nodes, got {a.shape}")
    bad = ~np.all(np.isfinite(a), axis=1)
    if bad.any():
        raise ValueError(f"{name}: row {int(np.argmax(bad))} is not finite: "
                         f"{a[int(np.argmax(bad))].tolist()}")
    return a


def set_transforms(nodes: Iterable[Node], positions=None, rotations=None, scales=None):
    """Set the local transforms of many nodes with array writes (no per-node setter).

    Args:
        nodes: a sequence of K ``Node`` objects (anywhere, in any scene).
        positions: (K, 3) translations in each node's parent frame, or None to keep.
        rotations: (K, 4) quaternions (x, y, z, w), normalised here, or (K, 3) Euler
            angles in degrees (X, Y, Z about "YXZ", as ``Node.rotation``), or None.
        scales: (K, 3) per-axis scales; (K,) or (K, 1) uniform scales (use (K, 1) when
            K is 3, where (3,) means one per-axis row for every node); a scalar; or None.

    A (3,)/(4,) row is broadcast to every node. Costs one pass over ``nodes`` to find
    their table rows plus vectorised writes; renderers see the moves on their next
    frame like any setter's.

    Raises:
        ValueError: a wrong shape, non-finite values or a zero quaternion (naming the
            argument and the row). TypeError: something in ``nodes`` is not a Node.
    """
    rows = _rows_of(nodes)
    k = len(rows)
    if k == 0:
        return
    table = TABLE
    new = []
    if positions is not None:
        new.append((slice(0, 3), _array_arg(positions, "positions", k, (3,))))
    if rotations is not None:
        q = _array_arg(rotations, "rotations", k, (4, 3))
        if q.shape[1] == 3:
            q = quat_from_euler(q)
        else:
            n = np.linalg.norm(q, axis=1)
            bad = ~(n >= 1e-12)
            if bad.any():
                raise ValueError(f"rotations: row {int(np.argmax(bad))} is a zero quaternion")
            q = q / n[:, None]
        new.append((slice(3, 7), q))
    if scales is not None:
        from .transforms import _float_array

        s = _float_array(scales, "scales")
        if s.ndim == 0:
            s = np.full((k, 3), float(s))
        elif (s.ndim == 1 and s.shape[0] == k and k != 3) or s.shape == (k, 1):
            s = np.repeat(s.reshape(k, 1), 3, axis=1)
        new.append((slice(7, 10), _array_arg(s, "scales", k, (3,))))
    for cols, values in new:
        table.trs[rows, cols] = values
    table.rev[rows] = next(STAMPS)
    _transform_epoch[0] += 1


def get_transforms(nodes: Iterable[Node]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(positions (K, 3), rotations (K, 4) unit quaternions, scales (K, 3)) float64 of
    ``nodes``' local transforms, gathered in one array read (new arrays)."""
    t = TABLE.trs[_rows_of(nodes)]
    return t[:, 0:3].copy(), t[:, 3:7].copy(), t[:, 7:10].copy()


class Scene(Node):
    """Root of a scene graph. ``background`` is the RGBA clear colour (floats in [0, 1],
    or a CSS name / "#rrggbb"). ``exposure`` (linear factor > 0) and ``tone_map``
    ("none" or "pbr-neutral") map the surfaces' linear radiance to the display
    (engine.render.tonemap); the defaults 1 and "none" leave colours as they are.
    ``fog`` is an engine.scene.atmosphere.Fog or None; ``sky`` an
    engine.scene.atmosphere.Sky drawn instead of the background, ``"environment"`` (the
    scene's environment shown behind it), or None. ``environment`` is an
    engine.scene.environment.Environment lighting every surface (image-based lighting,
    engine.render.ibl), or None.

    Raises:
        ValueError: a bad background, exposure or tone map.
        TypeError: ``fog``, ``sky`` or ``environment`` set to anything but its class (or
            "environment" for the sky) or None.
    """

    def __init__(self, name: str = "scene", background=(0.0, 0.0, 0.0, 1.0),
                 exposure: float = 1.0, tone_map: str = "none", fog=None, sky=None,
                 environment=None):
        super().__init__(name)
        self.background = as_rgba(background, "background")
        self.exposure = exposure
        self.tone_map = tone_map
        self.fog = fog
        self.sky = sky
        self.environment = environment

    @property
    def exposure(self) -> float:
        """Linear factor > 0 applied to surface radiance before the tone map."""
        return self._exposure

    @exposure.setter
    def exposure(self, value):
        self._exposure = check_exposure(value)

    @property
    def tone_map(self) -> str:
        """"none" (clamp) or "pbr-neutral" (engine.render.tonemap)."""
        return self._tone_map

    @tone_map.setter
    def tone_map(self, value):
        self._tone_map = check_tone_map(value)

    @property
    def fog(self):
        """The scene's Fog, or None (no fog)."""
        return self._fog

    @fog.setter
    def fog(self, value):
        if value is not None and not isinstance(value, Fog):
            raise TypeError(f"Scene.fog must be an engine.scene.Fog or None, got {value!r}")
        self._fog = value

    @property
    def sky(self):
        """The scene's Sky behind the geometry, ``"environment"`` (``environment``'s
        radiance in each pixel's direction, engine.scene.atmosphere), or None (the
        background colour)."""
        return self._sky

    @sky.setter
    def sky(self, value):
        if value is not None and not isinstance(value, Sky) and not (
                isinstance(value, str) and value == SKY_ENVIRONMENT):
            raise TypeError(f"Scene.sky must be an engine.scene.Sky, {SKY_ENVIRONMENT!r} "
                            f"or None, got {value!r}")
        self._sky = value

    @property
    def environment(self):
        """The scene's Environment (image-based lighting), or None. A scene with an
        environment or lights gets only what it has; one with neither the headlight
        and a uniform ambient (engine.render.shading.scene_lights)."""
        return self._environment

    @environment.setter
    def environment(self, value):
        if value is not None and not isinstance(value, Environment):
            raise TypeError("Scene.environment must be an engine.scene.Environment or None, "
                            f"got {value!r}")
        self._environment = value

    def bounds(self):
        """(2, 3) float64 world-space bounding box of the visible finite geometry, or None
        (``subtree_bounds``; raises TransformError naming a node that cannot be drawn)."""
        return subtree_bounds(self)


_CORNERS = np.array([(i, j, k) for i in (0, 1) for j in (0, 1) for k in (0, 1)])


def subtree_bounds(root: Node):
    """(2, 3) float64 world-space bounding box of the visible finite geometry under
    ``root`` (included, with its own world matrix), or None when there is none.

    A deformed mesh (skinned or morphed, ``engine.scene.deform``) contributes its posed
    vertices, so the box follows the pose. Otherwise computed from each geometry's local
    box corners through its world matrix, in one
    traversal that composes world matrices top-down (linear in the node count whatever
    the depth). That is where every world transform is composed once, so it is checked
    here: raises TransformError naming the first node whose world matrix overflows the
    float64 range (40 nested scales of 1e10, say) or whose geometry reaches beyond
    ``FLOAT32_MAX`` world units (a scale of 1e300), which the float32 vertex pipeline
    cannot draw.
    """
    if not root._visible:
        return None
    boxes = []
    stack = [(root, root.world_matrix)]
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported below
        while stack:
            node, world = stack.pop()
            if not np.all(np.isfinite(world)):
                raise TransformError(
                    f"node {node.name!r}: its world transform overflows the float64 range "
                    "(the scales and translations along its path multiply past 1.8e+308)")
            g = node.geometry
            b = None if g is None else g.bounds()
            if b is not None:
                if is_deformed(node):  # the posed vertices (skins ignore ``world``)
                    box = posed_vertices(node)[0]
                    box = box[np.all(np.isfinite(box), axis=1)]
                else:
                    corners = np.ones((8, 4))
                    corners[:, :3] = b[_CORNERS, [0, 1, 2]]
                    box = (corners @ world.T)[:, :3]
                reach = float(np.abs(box).max())
                if not reach <= FLOAT32_MAX:
                    far = f"{reach:.3g}" if math.isfinite(reach) else "more than 1.8e+308"
                    raise TransformError(
                        f"node {node.name!r}: its world transform puts its geometry {far} "
                        f"world units out, beyond the float32 range ({FLOAT32_MAX:.3g}) "
                        "vertices are drawn in")
                boxes.append(box)
            for child in node._children:
                if child._visible:
                    stack.append((child, compose_one(world, TABLE.trs[child._row].tolist())))
    if not boxes:
        return None
    allc = np.concatenate(boxes)
    return np.stack([allc.min(axis=0), allc.max(axis=0)])
