"""Cameras: scene-graph nodes that provide view and projection matrices.

The view matrix is the inverse of the camera node's world matrix (world -> view);
the camera looks down its local -Z axis with +Y up (OpenGL). Projection matrices map
view space to clip space and are cached until a parameter changes. The renderer calls
``set_viewport(width, height)`` every frame so the aspect ratio always follows the
viewport in pixels.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..errors import as_number
from .graph import Node
from .transform_table import STAMPS, TABLE
from .transforms import orthographic_matrix, perspective_matrix

__all__ = ["Camera", "OrthographicCamera", "PerspectiveCamera", "Ray"]


class Ray(NamedTuple):
    """A ray in the world frame: ``origin`` (3,) float64 world point and ``direction``
    (3,) float64 unit vector; ``at(t)`` is the point t world units along it."""

    origin: np.ndarray
    direction: np.ndarray

    def at(self, t: float) -> np.ndarray:
        return self.origin + float(t) * self.direction


class Camera(Node):
    """Base camera node. Subclasses implement ``_build_projection``.

    Args:
        aspect: width / height of the viewport (updated by ``set_viewport``).
        near, far: clip distances along the view direction, world units, 0 < near < far.
    """

    def __init__(self, name="camera", aspect=1.0, near=0.1, far=1000.0, **node_kwargs):
        super().__init__(name, **node_kwargs)
        self._params_rev = 0
        self._proj_cache: tuple[int, np.ndarray] | None = None
        self._aspect = 1.0
        self._near, self._far = 0.1, 1000.0
        self.viewport: tuple[int, int] | None = None
        self.aspect = aspect
        self.set_clip(near, far)

    def _changed(self):
        self._params_rev += 1

    def _touch(self):
        # A camera without children moves no geometry: leave the global transform epoch
        # alone so a moving camera does not make the batch re-check every object.
        if self._children:
            super()._touch()
        else:
            TABLE.revs[self._row] = next(STAMPS)

    @property
    def aspect(self) -> float:
        return self._aspect

    @aspect.setter
    def aspect(self, value: float):
        value = as_number(value, f"{self.name}: aspect")
        if not (value > 0 and math.isfinite(value)):
            raise ValueError(f"{self.name}: aspect must be positive and finite, got {value}")
        if value != self._aspect:
            self._aspect = value
            self._changed()

    @property
    def near(self) -> float:
        return self._near

    @property
    def far(self) -> float:
        return self._far

    def set_clip(self, near: float, far: float):
        """Set the near/far clip distances (world units). Raises ValueError unless 0 < near < far."""
        near, far = as_number(near, f"{self.name}: near"), as_number(far, f"{self.name}: far")
        if not (0 < near < far and math.isfinite(far)):
            raise ValueError(f"{self.name}: need 0 < near < far < inf, got near={near}, far={far}")
        self._near, self._far = near, far
        self._changed()

    def set_viewport(self, width: int, height: int):
        """Adopt the aspect ratio of a viewport of ``width`` x ``height`` pixels and
        remember the size (``viewport``) for ``screen_ray``/``unproject``/``project``.
        The renderer calls this every frame with its frame size."""
        if width <= 0 or height <= 0:
            raise ValueError(f"viewport must be positive, got {width}x{height}")
        self.viewport = (int(width), int(height))
        self.aspect = width / height

    # --- screen <-> world ---------------------------------------------------------------
    def _viewport(self, viewport) -> tuple[int, int]:
        if viewport is None:
            viewport = self.viewport
        if viewport is None:
            raise ValueError(f"{self.name}: no viewport yet: render a frame first (the "
                             f"renderer sets it) or pass viewport=(width, height) in pixels")
        w, h = (int(v) for v in viewport)
        if w <= 0 or h <= 0:
            raise ValueError(f"viewport must be positive, got {w}x{h}")
        return w, h

    def _projection_for(self, w: int, h: int) -> np.ndarray:
        """The projection matrix for a w x h viewport (the camera's aspect may lag)."""
        aspect = w / h
        if aspect == self._aspect:
            return self.projection_matrix
        saved, self._aspect = self._aspect, aspect
        try:
            return self._build_projection()
        finally:
            self._aspect = saved

    def _ndc(self, x, y, viewport):
        w, h = self._viewport(viewport)
        x = np.asarray(x, np.float64)
        y = np.asarray(y, np.float64)
        if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
            raise ValueError(f"screen coordinates must be finite, got x={x!r}, y={y!r}")
        return 2.0 * x / w - 1.0, 1.0 - 2.0 * y / h

    def unproject(self, x, y, depth=0.0, viewport=None) -> np.ndarray:
        """World point(s) at screen pixel (x, y) and window ``depth``.

        Args:
            x, y: screen pixels (origin top-left, y down; the frame the renderer, picking
                and the App's cursor use), scalars or arrays of one shape S.
            depth: window depth in [0, 1] as the projectors report it: 0 is the near
                plane, 1 the far plane.
            viewport: (width, height) in pixels; default: the last ``set_viewport``.

        Returns:
            (3,) or S + (3,) float64 world points. Computed in view space first and then
            moved by the camera's world matrix, so georeferenced cameras keep precision.

        Raises:
            ValueError: no viewport known, non-finite coordinates, depth outside [0, 1].
        """
        xn, yn = self._ndc(x, y, viewport)
        proj = self._projection_for(*self._viewport(viewport))
        d = np.asarray(depth, np.float64)
        if not (np.all(d >= 0) and np.all(d <= 1)):
            raise ValueError(f"depth must be a window depth in [0, 1], got {depth!r}")
        xn, yn, zn = np.broadcast_arrays(xn, yn, 2.0 * d - 1.0)
        ndc = np.stack([xn, yn, zn, np.ones_like(xn)], axis=-1)
        view = ndc @ np.linalg.inv(proj).T
        view = view[..., :3] / view[..., 3:4]
        m = self.world_matrix
        return view @ m[:3, :3].T + m[:3, 3]

    def screen_ray(self, x: float, y: float, viewport=None) -> Ray:
        """The world ray through screen pixel (x, y) (top-left origin, y down), for
        picking and aiming: from the eye for a perspective camera, from the near plane
        along the view direction for an orthographic one. ``viewport`` as in
        ``unproject``. Raises ValueError like ``unproject``."""
        near = self.unproject(x, y, 0.0, viewport)
        far = self.unproject(x, y, 1.0, viewport)
        d = far - near
        origin = self.world_position if isinstance(self, PerspectiveCamera) else near
        return Ray(np.asarray(origin, np.float64), d / np.linalg.norm(d))

    def project(self, points, viewport=None):
        """Screen positions of world points, as the projectors compute them (float64).

        Args:
            points: (3,) or (N, 3) world points.
            viewport: as in ``unproject``.

        Returns:
            (screen_xy (N, 2) pixels, depth (N,) window depth in [0, 1], visible (N,) bool:
            inside the view volume); N = 1 for a single point.
        """
        p = np.asarray(points, np.float64).reshape(-1, 3)
        w, h = self._viewport(viewport)
        m = self.world_matrix
        # the inverse rotation-scale (the view matrix's, which names a camera without one)
        r_inv = self.view_matrix[:3, :3]
        view = (p - m[:3, 3]) @ r_inv.T  # camera-relative first: precision
        proj = self._projection_for(w, h)
        clip = np.concatenate([view, np.ones((len(p), 1))], axis=1) @ proj.T
        cw = clip[:, 3]
        ok = (cw > 1e-7) & np.all(np.abs(clip[:, :3]) <= cw[:, None], axis=1)
        safe = np.where(cw > 1e-7, cw, 1.0)
        ndc = clip[:, :3] / safe[:, None]
        xy = np.stack([(ndc[:, 0] * 0.5 + 0.5) * w, (0.5 - ndc[:, 1] * 0.5) * h], axis=1)
        return xy, ndc[:, 2] * 0.5 + 0.5, ok

    @property
    def view_matrix(self) -> np.ndarray:
        """(4, 4) float64 world -> view transform (inverse of ``world_matrix``).

        Raises ValueError naming the camera when its world transform has no inverse: a
        zero scale on the camera or a parent node (named), or a non-finite matrix."""
        world = self.world_matrix
        a = world[:3, :3]
        with np.errstate(all="ignore"):  # judged on the matrix scaled to unit size
            big = float(np.abs(a).max())
            det = np.linalg.det(a / big) if 0 < big < math.inf else 0.0
        if not (np.all(np.isfinite(world)) and abs(det) > 1e-12):
            raise ValueError(self._no_view(world))
        return np.linalg.inv(world)

    def _no_view(self, world) -> str:
        """Why the world transform of this camera cannot be inverted (one line)."""
        if not np.all(np.isfinite(world)):
            return (f"camera {self.name!r}: its world transform overflows the float64 "
                    "range, so it has no view")
        flat = []
        node = self
        while node is not None:
            if np.any(np.asarray(node.scale) == 0):
                flat.append(f"{'the camera' if node is self else f'node {node.name!r}'} "
                            f"has scale {tuple(float(v) for v in node.scale)}")
            node = node.parent
        cause = "; ".join(flat) or "its axes are (nearly) parallel"
        return (f"camera {self.name!r}: its world transform is singular ({cause}), so it "
                "has no view")

    @property
    def projection_matrix(self) -> np.ndarray:
        """(4, 4) float64 view -> clip transform (cached)."""
        if self._proj_cache is None or self._proj_cache[0] != self._params_rev:
            self._proj_cache = (self._params_rev, self._build_projection())
        return self._proj_cache[1]

    @property
    def view_projection_matrix(self) -> np.ndarray:
        """(4, 4) float64 world -> clip transform ``P @ V``."""
        return self.projection_matrix @ self.view_matrix

    def _build_projection(self) -> np.ndarray:
        raise NotImplementedError

    def frame(self, bounds, azimuth=30.0, elevation=20.0, distance=None, margin=1.1) -> Camera:
        """Place the camera to see the box ``bounds`` ((2, 3) world min/max) entirely.

        The camera sits on a sphere around the box centre at ``azimuth`` degrees (about
        +Y, from +Z towards +X) and ``elevation`` degrees above the XZ plane, looking at
        the centre. ``distance`` defaults to the distance at which the bounding sphere
        (times ``margin``) fits the narrower field of view; near/far are set around the
        sphere. Returns self. Raises ValueError for non-finite bounds or distance <= 0.
        """
        b = np.asarray(bounds, dtype=np.float64)
        if b.shape != (2, 3) or not np.all(np.isfinite(b)):
            raise ValueError(f"bounds must be a finite (2, 3) array, got {b!r}")
        center = (b[0] + b[1]) * 0.5
        # A single point, identical points or an object smaller than the coordinates'
        # float64 resolution has (almost) no size: frame a sphere of a radius relative to
        # the coordinates' magnitude (2**-30 of it: far above the ~2**-52 spacing, so
        # eye and target stay distinct at 4e6 as at 0; at least 2**-20, far above the
        # projection's w > 1e-7 cut-off), and it shows at the centre.
        magnitude = float(np.max(np.abs(b)))
        scale = max(magnitude, float(np.max(np.abs(b[1] - b[0]))), 1e-300)
        radius = max(float(np.linalg.norm((b[1] - b[0]) / scale)) * 0.5 * scale,
                     magnitude * 2.0**-30, 2.0**-20)
        if distance is None:
            distance = self._fit_distance(radius * margin)
        distance = float(distance)
        if not (distance > 0 and math.isfinite(distance)):
            raise ValueError(f"camera distance must be positive, got {distance}")
        az, el = math.radians(float(azimuth)), math.radians(float(elevation))
        offset = distance * np.array(
            [math.cos(el) * math.sin(az), math.sin(el), math.cos(el) * math.cos(az)])
        self.position = center + offset
        self.look_at(center)
        far = distance + 2.0 * radius
        near = max(distance - 2.0 * radius, far * 1e-4)
        if not near < far:  # radius below the float spacing at this distance
            near, far = distance * 0.5, distance * 2.0
        self.set_clip(near, far)
        return self

    def _fit_distance(self, radius: float) -> float:
        raise NotImplementedError

    @property
    def forward(self) -> np.ndarray:
        """(3,) unit view direction in world coordinates (the world-space -Z axis)."""
        f = -self.world_matrix[:3, 2]
        f = f / np.linalg.norm(f)
        f.setflags(write=False)
        return f


class PerspectiveCamera(Camera):
    """Pinhole camera. ``fov_y`` is the full vertical field of view in degrees."""

    def __init__(self, fov_y=60.0, aspect=1.0, near=0.1, far=1000.0, name="camera", **kw):
        self._fov_y = 60.0
        super().__init__(name, aspect, near, far, **kw)
        self.fov_y = fov_y

    @property
    def fov_y(self) -> float:
        return self._fov_y

    @fov_y.setter
    def fov_y(self, value: float):
        value = as_number(value, f"{self.name}: fov_y")
        if not (0 < value < 180):
            raise ValueError(f"{self.name}: fov_y must be in (0, 180) degrees, got {value}")
        self._fov_y = value
        self._changed()

    def _build_projection(self):
        return perspective_matrix(self._fov_y, self._aspect, self._near, self._far)

    def _fit_distance(self, radius: float) -> float:
        half_y = math.radians(self._fov_y) / 2.0
        half = min(half_y, math.atan(math.tan(half_y) * self._aspect))
        return radius / math.sin(half)


class OrthographicCamera(Camera):
    """Parallel projection. ``height`` is the visible vertical extent in world units;
    the width is ``height * aspect``."""

    def __init__(self, height=2.0, aspect=1.0, near=0.1, far=1000.0, name="camera", **kw):
        self._height = 2.0
        super().__init__(name, aspect, near, far, **kw)
        self.height = height

    @property
    def height(self) -> float:
        return self._height

    @height.setter
    def height(self, value: float):
        value = as_number(value, f"{self.name}: height")
        if not (value > 0 and math.isfinite(value)):
            raise ValueError(f"{self.name}: height must be positive, got {value}")
        self._height = value
        self._changed()

    def _fit_distance(self, radius: float) -> float:
        self.height = 2.0 * radius / min(1.0, self._aspect)
        return 2.0 * radius

    def _build_projection(self):
        h = self._height / 2.0
        w = h * self._aspect
        return orthographic_matrix(-w, w, -h, h, self._near, self._far)
