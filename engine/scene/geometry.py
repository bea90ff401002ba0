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

import numpy as np

from ..arrays import to_host
from ..errors import as_number
from .color import as_rgba
from .material import Material

__all__ = ["Geometry", "Lines", "Mesh", "PointCloud"]


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
    return np.ascontiguousarray(rgba)


class Geometry:
    """Base class: vertex positions in the node's local frame, optional colours.

    Attributes:
        positions: (N, 3) float32, local frame, relative to ``origin``.
        origin: (3,) float64 NumPy array added back in float64 by the batch (zeros unless
            float64 input was recentred).
        colors: (N, 4) uint8 RGBA or None (the batch then draws the points white). The
            constructor takes (N, 3|4) uint8 or floats in [0, 1], or one colour for every
            vertex: 3-4 floats in [0, 1], a CSS name or "#rrggbb".
        point_size: splat size in pixels (float > 0) used by point rendering.
        attributes: dict of extra per-vertex arrays (name -> (N,) or (N, k) NumPy array)
            that loaders keep and renderers ignore, e.g. a LAS file's ``intensity`` and
            ``classification``. Empty by default.
        revision: int that grows whenever ``positions`` or ``faces`` is assigned or
            ``mark_changed()`` is called (after editing those arrays in place); caches
            derived from the vertex data (bounding spheres, the ray-cast BVH of
            ``engine.game``) compare it with the revision they were built at.

    Raises:
        ValueError: wrong shapes, NaN colours, colours outside [0, 1], point_size <= 0,
            finite positions (after recentring) or attributes beyond the float32 range.
        TypeError: unsupported dtypes.
    """

    _DATA = frozenset({"positions", "faces"})  # assigning one of these bumps ``revision``

    def __init__(self, positions, colors=None, point_size: float = 1.0):
        self.revision = 0
        p = _as_array(positions, "positions")
        if p.ndim != 2 or p.shape[1] != 3:
            raise ValueError(f"positions must have shape (N, 3), got {tuple(p.shape)}")
        if not np.issubdtype(p.dtype, np.number) or np.issubdtype(p.dtype, np.complexfloating):
            raise TypeError(f"positions must be real numbers, got dtype {p.dtype}")
        self.origin = np.zeros(3)
        if p.dtype == np.float64 and p.shape[0] > 0:
            finite = np.all(np.isfinite(p), axis=1)
            if bool(np.any(finite)):
                pf = p[finite]
                mid = (np.min(pf, axis=0) + np.max(pf, axis=0)) * 0.5
                self.origin = to_host(mid).astype(np.float64)
                p = p - mid
        self.positions = _to_float32(p, "positions")
        n = self.positions.shape[0]
        self.colors = None if colors is None else _colors_to_rgba8(colors, n)
        point_size = as_number(point_size, "point_size")
        if not (point_size > 0 and np.isfinite(point_size)):
            raise ValueError(f"point_size must be a positive number of pixels, got {point_size}")
        self.point_size = point_size
        self.attributes: dict = {}

    def __setattr__(self, name, value):
        if name in Geometry._DATA:
            object.__setattr__(self, "revision", self.revision + 1)
        object.__setattr__(self, name, value)

    def mark_changed(self) -> None:
        """Tell caches that ``positions`` (or ``faces``) were edited in place: bumps
        ``revision``, so the next ray cast refits its BVH and bounding spheres are
        recomputed."""
        self.revision += 1

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


class PointCloud(Geometry):
    """Points: positions (N, 3), optional colours (N, 3|4) uint8 or float in [0, 1], or
    one colour for all (``colors=(0.15, 0.2, 0.35)``, ``colors="orange"``)."""


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

    def __init__(self, positions, segments, colors=None, point_size=1.0):
        super().__init__(positions, colors, point_size)
        s = _as_array(segments, "segments")
        if s.ndim != 2 or s.shape[1] != 2:
            raise ValueError(f"segments must have shape (L, 2), got {tuple(s.shape)}")
        if s.shape[0] and not np.issubdtype(s.dtype, np.integer):
            raise TypeError(f"segments must be integer indices, got dtype {s.dtype}")
        n = self.vertex_count
        if s.shape[0] and (int(np.min(s)) < 0 or int(np.max(s)) >= n):
            raise ValueError(f"segment indices must be in [0, {n}), got range "
                             f"[{int(np.min(s))}, {int(np.max(s))}]")
        self.segments = np.ascontiguousarray(s.astype(np.int32))

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

    Raises:
        ValueError: faces not (M, 3), an index outside [0, N), wrong attribute shapes.
    """

    def __init__(self, positions, faces, colors=None, normals=None, uvs=None, point_size=1.0,
                 material=None, joints=None, weights=None, morph_positions=None,
                 morph_normals=None, morph_tangents=None, morph_weights=None):
        super().__init__(positions, colors, point_size)
        if material is not None and not isinstance(material, Material):
            raise TypeError(f"material must be an engine.scene.Material, got {type(material).__name__}")
        self.material = material if material is not None else Material()
        n = self.vertex_count
        f = _as_array(faces, "faces")
        if f.ndim != 2 or f.shape[1] != 3:
            raise ValueError(f"faces must have shape (M, 3), got {tuple(f.shape)}")
        if f.shape[0] and not np.issubdtype(f.dtype, np.integer):
            raise TypeError(f"faces must be integer indices, got dtype {f.dtype}")
        if f.shape[0] and (int(np.min(f)) < 0 or int(np.max(f)) >= n):
            raise ValueError(
                f"face indices must be in [0, {n}), got range "
                f"[{int(np.min(f))}, {int(np.max(f))}]"
            )
        self.faces = np.ascontiguousarray(f.astype(np.int32))
        self.normals = self._attr(normals, "normals", 3)
        self.uvs = self._attr(uvs, "uvs", 2)
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
            self.joints, self.weights = normalized_influences([j], [w], 1 << 16, "mesh")
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

    def _targets(self, a, name):
        if a is None:
            return None
        a = to_host(_as_array(a, name))
        if a.ndim != 3 or a.shape[1:] != (self.vertex_count, 3) or len(a) == 0:
            raise ValueError(f"{name} must have shape (T, {self.vertex_count}, 3), T >= 1, "
                             f"got {tuple(a.shape)}")
        return _to_float32(a, name)

    @property
    def morph_target_count(self) -> int:
        """Number of morph targets T (0 without)."""
        return len(self.morph_weights)

    def _attr(self, a, name, width):
        if a is None:
            return None
        a = _as_array(a, name)
        if a.shape != (self.vertex_count, width):
            raise ValueError(
                f"{name} must have shape ({self.vertex_count}, {width}), got {tuple(a.shape)}"
            )
        return _to_float32(a, name)

    @property
    def face_count(self) -> int:
        """Number of triangles M (rows of ``faces``)."""
        return int(self.faces.shape[0])

    def vertex_normals(self):
        """(N, 3) float32 unit normals, local frame: ``normals`` when given, else computed
        once (and cached) as the area-weighted sum of the normals of the faces around each
        vertex (the unnormalised cross products sum, so bigger faces weigh more), with
        counter-clockwise faces facing out. A vertex on no face, whose faces cancel or
        touch a non-finite position, gets (0, 0, 0)."""
        if self.normals is not None:
            return self.normals
        if getattr(self, "_computed_normals", None) is None:
            p = to_host(self.positions).astype(np.float64)
            f = to_host(self.faces)
            # a face with a non-finite corner gives a non-finite sum: zero below
            with np.errstate(over="ignore", invalid="ignore"):
                cross = np.cross(p[f[:, 1]] - p[f[:, 0]], p[f[:, 2]] - p[f[:, 0]])
                acc = np.zeros_like(p)
                for k in range(3):
                    np.add.at(acc, f[:, k], cross)
                length = np.linalg.norm(acc, axis=1, keepdims=True)
            ok = (length > 0) & np.isfinite(length)
            acc = np.where(ok, acc / np.where(ok, length, 1.0), 0.0)
            self._computed_normals = acc.astype(np.float32)
        return self._computed_normals
