"""Geometry attached to scene nodes: point clouds and triangle meshes.

Arrays may be NumPy or CuPy: every operation here is a NumPy function, which CuPy
arrays execute on the device through ``__array_function__`` / ``__array_ufunc__``
(NEP 18 / NEP 13), so device data never travels to the host and this module imports
no GPU library.

Frames: positions are in the owning node's *local* frame, in world units.

Precision: float32 has 24 mantissa bits, so near x = 596,650 its spacing is 0.0625.
float64 positions are therefore recentred on load: ``positions`` holds float32
offsets from ``origin`` (float64 (3,), the midpoint of the finite bounding box) and the
batch composes ``origin`` into the model matrix in float64 before casting.
"""

from __future__ import annotations

import weakref
from collections import deque

import numpy as np

from ..arrays import to_host
from ..errors import as_number
from .color import as_rgba
from .material import Material
from .readonly import DEFORM_FIELDS, freeze
from .tangents import vertex_tangents

__all__ = ["POINT_SHAPES", "SIZE_UNITS", "Geometry", "Lines", "Mesh", "PointCloud",
           "changed_since", "data_epoch", "default_point_size"]

# Bumped by every change of any geometry's data: lets the batch skip its per-geometry
# check entirely on frames where no vertex array changed.
_data_epoch = [0]
#: How many recent changes ``changed_since`` remembers.
CHANGE_LOG = 4096
_recent: deque = deque(maxlen=CHANGE_LOG)  # (data epoch after the change, weakref)


def data_epoch() -> int:
    """Counter that changes whenever any geometry's data changes (``Geometry.update``,
    ``mark_changed`` or assigning a data field)."""
    return _data_epoch[0]


def changed_since(epoch: int) -> list | None:
    """The geometries (still alive) whose data changed after ``data_epoch()`` was
    ``epoch``, so a renderer checks those instead of every node; None when more than
    the last ``CHANGE_LOG`` changes happened since (check everything)."""
    if epoch == _data_epoch[0]:
        return []
    if not _recent or _recent[0][0] > epoch + 1:
        return None
    found = {}
    for e, ref in _recent:
        g = ref() if e > epoch else None
        if g is not None:
            found[id(g)] = g
    return list(found.values())


def _as_array(a, name: str):
    """NumPy/CuPy arrays pass through untouched; anything else becomes a NumPy array."""
    if hasattr(a, "__array_function__"):
        return a
    try:
        return np.asarray(a)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name}: cannot make an array from {type(a).__name__}") from exc


#: The largest float32: geometry is stored and drawn in float32.
FLOAT32_MAX = float(np.finfo(np.float32).max)


def _to_float32(a, name: str):
    """``a`` as a C-contiguous float32 array. Non-finite values stay as they are (not
    drawn); a finite value beyond ``FLOAT32_MAX`` raises ValueError naming ``name``
    (the cast would make it infinite)."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.ascontiguousarray(a.astype(np.float32))
    overflow = np.isinf(out) & np.isfinite(a)
    if overflow.any():
        raise ValueError(f"{name}: values up to {float(np.abs(a[overflow]).max()):.3g} "
                         f"overflow float32 (largest {FLOAT32_MAX:.3g})")
    return out


def _colors_to_rgba8(colors, n: int):
    """(n, 3|4) uint8 or float in [0, 1] -> (n, 4) uint8 RGBA (alpha 255 when absent).

    One colour (3-4 floats in [0, 1], a CSS name, "#rrggbb") is given to every point."""
    if isinstance(colors, str) or (np.ndim(colors) == 1 and len(colors) in (3, 4)):
        rgba = as_rgba(colors, "colors")
        one = np.array([round(c * 255.0) for c in rgba], np.uint8)
        return np.ascontiguousarray(np.broadcast_to(one, (n, 4)))
    c = _as_array(colors, "colors")
    if c.ndim != 2 or c.shape[0] != n or c.shape[1] not in (3, 4):
        raise ValueError(f"colors must have shape ({n}, 3) or ({n}, 4), got {tuple(c.shape)}")
    if c.dtype == np.uint8:
        rgba = c
    elif np.issubdtype(c.dtype, np.floating):
        if not bool(np.all(np.isfinite(c))) or bool(np.any(c < 0)) or bool(np.any(c > 1)):
            raise ValueError("float colors must be finite and in [0, 1]")
        rgba = np.rint(c * 255.0).astype(np.uint8)
    else:
        raise TypeError(f"colors must be uint8 or float in [0, 1], got dtype {c.dtype}")
    if rgba.shape[1] == 3:
        alpha = np.full_like(rgba[:, :1], 255)
        rgba = np.concatenate([rgba, alpha], axis=1)
    # a copy the geometry owns: the caller's array must not alias the frozen data
    return np.ascontiguousarray(rgba.copy() if rgba is c else rgba)


class Geometry:
    """Base class: vertex positions in the node's local frame, optional colours.

    Attributes:
        positions: (N, 3) float32, local frame, relative to ``origin``.
        origin: (3,) float64 NumPy array added back in float64 by the batch (zeros unless
            float64 input was recentred).
        colors: (N, 4) uint8 RGBA or None (the batch then draws the points white). The
            constructor takes (N, 3|4) uint8 or floats in [0, 1], or one colour for every
            vertex: 3-4 floats in [0, 1], a CSS name or "#rrggbb".
        point_size: the diameter of the vertices drawn as points (float > 0, in
            ``size_units``); None to the constructor: ``default_point_size(N)``.
        size_units, point_shape: what ``point_size`` measures ("px" or "world") and how
            a vertex drawn as a point looks ("round" or "square"); see PointCloud.
            Meshes and lines start as "px" and "square", point clouds as "px" and
            "round".
        attributes: dict of extra per-vertex arrays (name -> (N,) or (N, k) NumPy array)
            that loaders keep and renderers ignore, e.g. a LAS file's ``intensity`` and
            ``classification``. Empty by default.
        revision: int that grows whenever the data changes (``update``, assigning a data
            field, ``mark_changed``); caches derived from the vertex data (bounding
            spheres, the ray-cast BVH of ``engine.game``, the renderer's batch) compare
            it with the revision they were built at. ``field_revision(name)`` is the
            same per field.

    The data fields (``positions``, ``colors`` and a Mesh's ``normals``, ``uvs``,
    ``faces``, a Lines' ``segments``) are read-only NumPy arrays
    (``engine.scene.readonly``): a write in place raises ValueError naming ``update``,
    the method whose changes reach the next frame. Assigning a field
    (``mesh.positions = p``) is ``update(positions=p)``; assigning a Mesh's
    ``material`` is seen by the next frame too (``field_revision("material")``). Device (CuPy) arrays cannot be
    made read-only: after editing one in place, call ``mark_changed(name)``.

    Raises:
        ValueError: wrong shapes, NaN colours, colours outside [0, 1], point_size <= 0,
            finite positions (after recentring) or attributes beyond the float32 range.
        TypeError: unsupported dtypes.
    """

    #: The data fields this class has, vertex fields first (rows = vertices).
    FIELDS: tuple[str, ...] = ("positions", "colors")
    #: The fields holding vertex indices (rows = primitives).
    INDEX_FIELDS: tuple[str, ...] = ()
    #: ``point_shape`` of a new geometry: squares for the vertices of meshes and lines
    #: drawn as points, discs for point clouds.
    DEFAULT_POINT_SHAPE = "square"

    def __init__(self, positions, colors=None, point_size: float = 1.0):
        object.__setattr__(self, "revision", 0)
        object.__setattr__(self, "_revisions", {})
        self.origin = np.zeros(3)
        p = _as_array(positions, "positions")
        if p.ndim == 2 and p.shape[1] == 3 and p.dtype == np.float64 and p.shape[0] > 0:
            finite = np.all(np.isfinite(p), axis=1)
            if bool(np.any(finite)):
                pf = p[finite]
                mid = (np.min(pf, axis=0) + np.max(pf, axis=0)) * 0.5
                self.origin = to_host(mid).astype(np.float64)
        self._store("positions", self._checked_positions(p))
        n = self.vertex_count
        self._store("colors", None if colors is None else _colors_to_rgba8(colors, n))
        if point_size is None:
            point_size = default_point_size(n)
        point_size = as_number(point_size, "point_size")
        if not (point_size > 0 and np.isfinite(point_size)):
            raise ValueError(f"point_size must be a positive number of pixels, got {point_size}")
        self.point_size = point_size
        self.size_units = "px"
        self.point_shape = self.DEFAULT_POINT_SHAPE
        self.attributes: dict = {}

    def _checked_positions(self, positions):
        """(N, 3) float32 positions relative to ``origin`` (float64 input has ``origin``
        subtracted in float64 first)."""
        p = _as_array(positions, "positions")
        if p.ndim != 2 or p.shape[1] != 3:
            raise ValueError(f"positions must have shape (N, 3), got {tuple(p.shape)}")
        if not np.issubdtype(p.dtype, np.number) or np.issubdtype(p.dtype, np.complexfloating):
            raise TypeError(f"positions must be real numbers, got dtype {p.dtype}")
        if p.dtype == np.float64 and np.any(self.origin != 0):
            p = p.copy()  # column by column with Python floats: NumPy and CuPy alike
            for k in range(3):
                p[:, k] -= float(self.origin[k])
        return _to_float32(p, "positions")

    def _checked(self, name: str, value, n: int):
        """The stored form of field ``name`` for ``n`` vertices (subclasses add theirs)."""
        if name == "positions":
            return self._checked_positions(value)
        if name == "colors":
            return None if value is None else _colors_to_rgba8(value, n)
        raise TypeError(f"{type(self).__name__} has no field {name!r}")

    def _store(self, name: str, value):
        object.__setattr__(self, name, freeze(value, name))

    def __setattr__(self, name, value):
        if name in self.FIELDS or name in self.INDEX_FIELDS:
            if name in self.__dict__:
                self.update(**{name: value})  # validated, and seen by the next frame
                return
            self._store(name, value)  # the constructor's first value
            return
        replaced = name == "material" and name in self.__dict__
        object.__setattr__(self, name, value)
        if replaced:  # a Mesh's new material: the next frame's assembly takes it
            self._changed(["material"])

    def __setstate__(self, state):
        # unpickled arrays are writable: freeze them again
        self.__dict__.update(state)
        for name in self.FIELDS + self.INDEX_FIELDS:
            if name in state:
                self._store(name, state[name])

    def update(self, **fields) -> None:
        """Replace data fields at once, e.g. ``mesh.update(positions=p, normals=n)``;
        the next frame draws them.

        Keyword args: any of ``FIELDS`` and ``INDEX_FIELDS`` (``positions``, ``colors``;
        a Mesh's ``normals``, ``uvs``, ``faces``; a Lines' ``segments``), each in the
        form the constructor takes; None removes an optional field. Positions are in
        the frame of ``positions`` (relative to ``origin``; float64 ones have ``origin``
        subtracted). The new arrays are copied, never aliased.

        Cost in the renderer: the same vertex count rewrites only the changed fields in
        place (no repack; positions and colours are uploaded to the batch's arrays, the
        surface attributes re-packed); a new vertex count, or new faces/segments,
        rebuilds what depends on the layout (a new count: a repack on the next frame).

        Raises:
            TypeError: a field this geometry does not have.
            ValueError: the constructor's checks; per-vertex fields, indices or
                ``attributes`` arrays left unchanged that do not fit a new vertex count
                (the message names them); an index outside [0, N).
        """
        unknown = sorted(set(fields) - set(self.FIELDS) - set(self.INDEX_FIELDS))
        if unknown:
            raise TypeError(f"{type(self).__name__}.update: no field {unknown[0]!r} (fields: "
                            f"{', '.join(self.FIELDS + self.INDEX_FIELDS)})")
        if "positions" in fields and fields["positions"] is None:
            raise ValueError("positions cannot be None: a geometry has vertices")
        n = self.vertex_count
        new = {}
        if "positions" in fields:
            new["positions"] = self._checked_positions(fields["positions"])
            n = int(new["positions"].shape[0])
        for name in self.FIELDS[1:] + self.INDEX_FIELDS:
            if name in fields:
                new[name] = self._checked(name, fields[name], n)
        if n != self.vertex_count:
            for name in self.FIELDS[1:]:
                if name not in new and getattr(self, name) is not None:
                    raise ValueError(
                        f"update: {name} has {getattr(self, name).shape[0]} rows but the new "
                        f"positions have {n}: give {name}= too (or {name}=None)")
            for name in self.INDEX_FIELDS:
                if name not in new:
                    new[name] = self._checked(name, getattr(self, name), n)
            for name in DEFORM_FIELDS:
                if getattr(self, name, None) is not None:
                    raise ValueError(f"update: {name} (skin or morph data, fixed at "
                                     f"construction) has rows for {self.vertex_count} "
                                     f"vertices, not {n}: build a new Mesh instead")
            for key, a in self.attributes.items():
                if len(a) != n:
                    raise ValueError(f"update: attributes[{key!r}] has {len(a)} rows but the "
                                     f"new positions have {n}: replace or remove it first")
        for name, value in new.items():
            self._store(name, value)
        self._changed(list(new))

    def mark_changed(self, *fields: str) -> None:
        """Tell the renderer and caches that data fields were edited in place (only
        possible for device (CuPy) arrays; NumPy ones are read-only): bumps their
        revisions (every field when none is named), so the next frame uploads them,
        the next ray cast refits its BVH and bounding spheres are recomputed.
        Raises TypeError for a field this geometry does not have."""
        names = fields or self.FIELDS + self.INDEX_FIELDS
        for name in names:
            if name not in self.FIELDS and name not in self.INDEX_FIELDS:
                raise TypeError(f"{type(self).__name__} has no field {name!r}")
        self._changed(names)

    def _changed(self, names):
        revs = self._revisions
        for name in names:
            revs[name] = revs.get(name, 0) + 1
        object.__setattr__(self, "revision", self.revision + 1)
        _data_epoch[0] += 1
        _recent.append((_data_epoch[0], weakref.ref(self)))

    def field_revision(self, name: str) -> int:
        """How many times field ``name`` changed (0 for its constructor value)."""
        return self._revisions.get(name, 0)

    @property
    def size_units(self) -> str:
        """"px" or "world" (``SIZE_UNITS``); assigning one is seen by the next frame."""
        return self._size_units

    @size_units.setter
    def size_units(self, value: str):
        first = "_size_units" not in self.__dict__
        object.__setattr__(self, "_size_units", _choice(value, SIZE_UNITS, "size_units"))
        if not first:
            self._changed(["size_units"])

    @property
    def point_shape(self) -> str:
        """"round" or "square" (``POINT_SHAPES``); assigning one is seen by the next
        frame."""
        return self._point_shape

    @point_shape.setter
    def point_shape(self, value: str):
        first = "_point_shape" not in self.__dict__
        object.__setattr__(self, "_point_shape", _choice(value, POINT_SHAPES, "point_shape"))
        if not first:
            self._changed(["point_shape"])

    @property
    def vertex_count(self) -> int:
        return int(self.positions.shape[0])

    @property
    def colors_float(self):
        """(N, 4) float32 RGBA in [0, 1] (uint8 / 255), or None."""
        return None if self.colors is None else self.colors.astype(np.float32) / 255.0

    def bounds(self):
        """(2, 3) float64 NumPy [min, max] of the finite positions in the local frame
        (``origin`` added back), or None when no position is finite."""
        p = self.positions
        finite = np.all(np.isfinite(p), axis=1)
        if not bool(np.any(finite)):
            return None
        pf = p[finite]
        lo, hi = to_host(np.min(pf, axis=0)), to_host(np.max(pf, axis=0))
        return np.stack([lo, hi]).astype(np.float64) + self.origin


#: How a point is drawn: a disc (the pixel centres within its radius) or a square.
POINT_SHAPES = ("round", "square")
#: What ``point_size`` measures: pixels on screen, or world units (shrinking with depth).
SIZE_UNITS = ("px", "world")
#: ``default_point_size``: (fewer than this many points, diameter in pixels), in order;
#: from the last count on, 1 pixel.
DEFAULT_POINT_SIZES = ((10_000, 5.0), (100_000, 3.0), (1_000_000, 2.0))


def default_point_size(n: int) -> float:
    """The diameter in pixels a geometry of ``n`` vertices gets without a ``point_size``:
    5 px under 10,000 points, 3 px under 100,000, 2 px under 1,000,000, 1 px from there
    (``DEFAULT_POINT_SIZES``). A small cloud stays visible (a 4-point file covers about
    4 x 21 pixels with round points); a dense scan covers its pixels with 1-pixel points,
    the rasterizers' fastest case."""
    for below, size in DEFAULT_POINT_SIZES:
        if n < below:
            return size
    return 1.0


def _choice(value, choices, name: str) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


class PointCloud(Geometry):
    """Points drawn as sprites: discs or squares of ``point_size``.

    Args:
        positions: (N, 3) float, local frame.
        colors: optional (N, 3|4) uint8 or float in [0, 1], or one colour for all
            (``colors=(0.15, 0.2, 0.35)``, ``colors="orange"``).
        point_size: the sprite's diameter (a square's side), > 0, in ``size_units``;
            None (default): ``default_point_size(N)`` pixels.
        normals: optional (N, 3) float per-point normals (local frame, any length but
            not zero): the points are then lit like a "lit" surface (Lambert diffuse
            only, in linear light, by the scene's lights or the headlight; a normal
            facing away from the camera is turned towards it, as a double-sided
            surface's back face; engine.render.sprites).
        size_units: "px" (screen pixels, the same at every distance) or "world" (world
            units: a point of diameter s at view depth w covers
            ``s * focal_px / w`` pixels, focal_px = P[1, 1] * height / 2, the projection's
            pixels per unit at depth 1; orthographic cameras: ``s * P[1, 1] * height / 2``).
        point_shape: "round" (a disc: the pixel centres, or MSAA samples, within
            diameter / 2 of the projected point) or "square" (the pixel centres in the
            square of that side, as GL_POINTS).

    Raises:
        ValueError: the Geometry checks, normals not (N, 3), an unknown shape or unit.
    """

    FIELDS = ("positions", "colors", "normals")
    DEFAULT_POINT_SHAPE = "round"

    def __init__(self, positions, colors=None, point_size=None, normals=None,
                 size_units: str = "px", point_shape: str = "round"):
        super().__init__(positions, colors, point_size)
        self.normals = self._checked("normals", normals, self.vertex_count)
        self.size_units = size_units
        self.point_shape = point_shape

    def _checked(self, name, value, n):
        if name == "normals":
            if value is None:
                return None
            a = _as_array(value, name)
            if a.shape != (n, 3):
                raise ValueError(f"normals must have shape ({n}, 3), got {tuple(a.shape)}")
            return _to_float32(a, name)
        return super()._checked(name, value, n)

def _checked_indices(value, width: int, name: str, n: int):
    """(L, width) int32 copy of vertex indices ``value``, each in [0, n)."""
    a = _as_array(value, name)
    if a.ndim != 2 or a.shape[1] != width:
        raise ValueError(f"{name} must have shape ({'M' if width == 3 else 'L'}, {width}), "
                         f"got {tuple(a.shape)}")
    if a.shape[0] and not np.issubdtype(a.dtype, np.integer):
        raise TypeError(f"{name} must be integer indices, got dtype {a.dtype}")
    if a.shape[0] and (int(np.min(a)) < 0 or int(np.max(a)) >= n):
        what = "face" if name == "faces" else "segment"
        raise ValueError(f"{what} indices must be in [0, {n}), got range "
                         f"[{int(np.min(a))}, {int(np.max(a))}]")
    return np.ascontiguousarray(a.astype(np.int32))


class Lines(Geometry):
    """Line segments between vertices, drawn one pixel wide (``Node.draw`` "wireframe",
    the default) or as their vertices ("points").

    Args:
        positions: (N, 3) float, local frame.
        segments: (L, 2) integer vertex indices, 0-based, each in [0, N).
        colors: optional (N, 3|4) per-vertex colours (a segment is drawn in the mean of
            its two vertices' colours).

    Raises:
        ValueError: segments not (L, 2), an index outside [0, N).
    """

    INDEX_FIELDS = ("segments",)

    def __init__(self, positions, segments, colors=None, point_size=1.0):
        super().__init__(positions, colors, point_size)
        self.segments = _checked_indices(segments, 2, "segments", self.vertex_count)

    def _checked(self, name, value, n):
        if name == "segments":
            return _checked_indices(value, 2, "segments", n)
        return super()._checked(name, value, n)

    @property
    def segment_count(self) -> int:
        """Number of segments L (rows of ``segments``), as ``Mesh.face_count`` for
        triangles."""
        return int(self.segments.shape[0])


class Mesh(Geometry):
    """Triangle mesh, drawn as filled triangles (see ``Node.draw`` for the other modes).

    Args:
        positions: (N, 3) float, local frame.
        faces: (M, 3) integer vertex indices, 0-based, each in [0, N).
        colors: optional (N, 3|4) per-vertex colours, or one colour for all (3-4 floats
            in [0, 1], a CSS name, "#rrggbb").
        normals: optional (N, 3) float32 per-vertex normals (local frame).
        uvs: optional (N, 2) float32 texture coordinates, (0, 0) = the image's top-left.
        material: an ``engine.scene.Material``; default: lit, white (times the vertex
            colours when there are any).
        joints, weights: optional skin influences, (N, 4 S) joint indices into the
            node's ``Skin`` and their weights (normalised here when a row does not sum
            to 1; ``engine.scene.deform``). The node needs ``node.skin`` to be skinned.
        morph_positions, morph_normals, morph_tangents: optional (T, N, 3) morph target
            deltas (glTF 2.0 3.7.2.2); at least positions or normals for T targets.
        morph_weights: (T,) default morph weights (zeros by default); a node's
            ``morph_weights`` overrides them.
        tangents: optional (N, 4) float32 tangents (glTF 2.0 TANGENT, local frame): xyz
            along increasing u of the normal map's texture coordinates, w = +1 or -1 the
            handedness (bitangent = cross(normal, xyz) * w). Without them a material
            with a "normal" map gets generated ones (``vertex_tangents``).
        uvs1: optional (N, 2) float32 second texture coordinates (glTF TEXCOORD_1),
            read by the textures a material assigns to set 1 (``Material.tex_coords``;
            drawing such a material on a mesh without ``uvs1`` raises ValueError).

    Editing: ``mesh.update(positions=..., normals=..., colors=..., uvs=..., faces=...)``
    (see ``Geometry.update``); the arrays themselves are read-only.

    Raises:
        ValueError: faces not (M, 3), an index outside [0, N), wrong attribute shapes.
    """

    FIELDS = ("positions", "colors", "normals", "uvs", "tangents", "uvs1")
    INDEX_FIELDS = ("faces",)

    def __init__(self, positions, faces, colors=None, normals=None, uvs=None, point_size=1.0,
                 material=None, joints=None, weights=None, morph_positions=None,
                 morph_normals=None, morph_tangents=None, morph_weights=None, tangents=None,
                 uvs1=None):
        super().__init__(positions, colors, point_size)
        if material is not None and not isinstance(material, Material):
            raise TypeError(f"material must be an engine.scene.Material, got {type(material).__name__}")
        self.material = material if material is not None else Material()
        n = self.vertex_count
        self.faces = _checked_indices(faces, 3, "faces", n)
        self.normals = self._checked("normals", normals, n)
        self.uvs = self._checked("uvs", uvs, n)
        self.tangents = self._checked("tangents", tangents, n)
        self.uvs1 = self._checked("uvs1", uvs1, n)
        self.joints = self.weights = None
        if (joints is None) != (weights is None):
            raise ValueError("joints and weights come together (both or neither)")
        if joints is not None:
            from .deform import normalized_influences

            j = to_host(_as_array(joints, "joints"))
            w = to_host(_as_array(weights, "weights"))
            if j.ndim != 2 or j.shape[0] != n or j.shape[1] % 4 or j.shape != w.shape:
                raise ValueError(f"joints and weights must both have shape ({n}, 4 S), got "
                                 f"{tuple(j.shape)} and {tuple(w.shape)}")
            joints, weights = normalized_influences([j], [w], 1 << 16, "mesh")
            self.joints, self.weights = freeze(joints, "joints"), freeze(weights, "weights")
        self.morph_positions = self._targets(morph_positions, "morph_positions")
        self.morph_normals = self._targets(morph_normals, "morph_normals")
        self.morph_tangents = self._targets(morph_tangents, "morph_tangents")
        counts = {len(a) for a in (self.morph_positions, self.morph_normals,
                                   self.morph_tangents) if a is not None}
        if len(counts) > 1:
            raise ValueError(f"morph target deltas disagree on the target count: {counts}")
        t = counts.pop() if counts else 0
        w = np.zeros(t) if morph_weights is None else np.asarray(morph_weights, np.float64)
        if w.shape != (t,) or not np.all(np.isfinite(w)):
            raise ValueError(f"morph_weights must be {t} finite numbers (one per target), "
                             f"got shape {w.shape}")
        self.morph_weights = w


    def _checked(self, name, value, n):
        if name == "faces":
            return _checked_indices(value, 3, "faces", n)
        if name in ("normals", "uvs", "tangents", "uvs1"):
            if value is None:
                return None
            width = {"normals": 3, "tangents": 4}.get(name, 2)
            a = _as_array(value, name)
            if a.shape != (n, width):
                raise ValueError(f"{name} must have shape ({n}, {width}), got {tuple(a.shape)}")
            a = _to_float32(a, name)
            if name == "tangents" and a.shape[0]:
                w = to_host(a[:, 3])
                if not np.all((w == 1.0) | (w == -1.0)):
                    bad = int(np.argmax((w != 1.0) & (w != -1.0)))
                    raise ValueError(f"tangents[{bad}] has w = {float(w[bad])!r}: the "
                                     "handedness must be +1 or -1 (glTF 2.0 TANGENT)")
            return a
        return super()._checked(name, value, n)

    def _targets(self, a, name):
        if a is None:
            return None
        a = to_host(_as_array(a, name))
        if a.ndim != 3 or a.shape[1:] != (self.vertex_count, 3) or len(a) == 0:
            raise ValueError(f"{name} must have shape (T, {self.vertex_count}, 3), T >= 1, "
                             f"got {tuple(a.shape)}")
        return freeze(_to_float32(a, name), name)

    @property
    def morph_target_count(self) -> int:
        """Number of morph targets T (0 without)."""
        return len(self.morph_weights)

    @property
    def face_count(self) -> int:
        """Number of triangles M (rows of ``faces``)."""
        return int(self.faces.shape[0])

    def vertex_tangents(self, uv_set: int = 0):
        """(N, 4) float32 tangents, local frame: ``tangents`` when given, else generated
        from the positions, ``vertex_normals()`` and texture coordinates ``uv_set`` (0:
        ``uvs``, 1: ``uvs1``) in the MikkTSpace convention (engine.scene.tangents; cached
        until those change), or None when that set is absent."""
        if self.tangents is not None:
            return self.tangents
        uv = self.uvs if uv_set == 0 else self.uvs1
        if uv is None:
            return None
        key = (uv_set,) + tuple(self.field_revision(f) for f in
                                ("positions", "faces", "normals", "uvs", "uvs1"))
        cached = getattr(self, "_computed_tangents", None)
        if cached is None or cached[0] != key:
            t = vertex_tangents(to_host(self.positions), to_host(self.vertex_normals()),
                                to_host(uv), to_host(self.faces))
            cached = self._computed_tangents = (key, freeze(t, "tangents"))
        return cached[1]

    def vertex_normals(self):
        """(N, 3) float32 unit normals, local frame: ``normals`` when given, else computed
        (and cached until the positions or faces change) as the area-weighted sum of the
        normals of the faces around each vertex (the unnormalised cross products sum, so
        bigger faces weigh more), with counter-clockwise faces facing out. A vertex on no
        face, whose faces cancel or touch a non-finite position, gets (0, 0, 0)."""
        if self.normals is not None:
            return self.normals
        key = (self.field_revision("positions"), self.field_revision("faces"))
        cached = getattr(self, "_computed_normals", None)
        if cached is None or cached[0] != key:
            p = to_host(self.positions).astype(np.float64)
            f = to_host(self.faces)
            # a face with a non-finite corner gives a non-finite sum: zero below
            with np.errstate(over="ignore", invalid="ignore"):
                a = p[f[:, 0]]
                e1, e2 = p[f[:, 1]] - a, p[f[:, 2]] - a
                # e1 x e2 written out: np.cross is several times slower on (M, 3)
                cross = np.stack([e1[:, 1] * e2[:, 2] - e1[:, 2] * e2[:, 1],
                                  e1[:, 2] * e2[:, 0] - e1[:, 0] * e2[:, 2],
                                  e1[:, 0] * e2[:, 1] - e1[:, 1] * e2[:, 0]], axis=1)
                # each face's cross product summed into its three corners; bincount is
                # several times faster than np.add.at (deforming meshes redo this)
                n = len(p)
                acc = np.stack([sum(np.bincount(f[:, k], weights=cross[:, c], minlength=n)
                                    for k in range(3)) for c in range(3)], axis=1)
                length = np.linalg.norm(acc, axis=1, keepdims=True)
            ok = (length > 0) & np.isfinite(length)
            acc = np.where(ok, acc / np.where(ok, length, 1.0), 0.0)
            cached = self._computed_normals = (key, freeze(acc.astype(np.float32), "normals"))
        return cached[1]
