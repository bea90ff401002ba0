"""Cameras: scene-graph nodes that provide view and projection matrices.

The view matrix is the inverse of the camera node's world matrix (world -> view);
the camera looks down its local -Z axis with +Y up (OpenGL). Projection matrices map
view space to clip space and are cached until a parameter changes. The renderer calls
``set_viewport(width, height)`` every frame so the aspect ratio always follows the
viewport in pixels.
"""

from __future__ import annotations

import math

import numpy as np

from .graph import _TABLE, Node, _stamps
from .transforms import orthographic_matrix, perspective_matrix

__all__ = ["Camera", "OrthographicCamera", "PerspectiveCamera"]


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
            _TABLE.rev[self._row] = next(_stamps)

    @property
    def aspect(self) -> float:
        return self._aspect

    @aspect.setter
    def aspect(self, value: float):
        value = float(value)
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
        near, far = float(near), float(far)
        if not (0 < near < far and math.isfinite(far)):
            raise ValueError(f"{self.name}: need 0 < near < far < inf, got near={near}, far={far}")
        self._near, self._far = near, far
        self._changed()

    def set_viewport(self, width: int, height: int):
        """Adopt the aspect ratio of a viewport of ``width`` x ``height`` pixels."""
        if width <= 0 or height <= 0:
            raise ValueError(f"viewport must be positive, got {width}x{height}")
        self.aspect = width / height

    @property
    def view_matrix(self) -> np.ndarray:
        """(4, 4) float64 world -> view transform (inverse of ``world_matrix``)."""
        return np.linalg.inv(self.world_matrix)

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
        radius = max(float(np.linalg.norm(b[1] - b[0])) * 0.5, 1e-6)
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
        return f / np.linalg.norm(f)


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
        value = float(value)
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
        value = float(value)
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
