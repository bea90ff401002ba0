"""Interactive camera controllers, independent of any window toolkit.

A controller owns a camera and moves it through action methods (``rotate``, ``pan``,
``zoom``, ``move``, ``look``) that scripts and tests call directly; the input-event
methods (``mouse_drag``, ``mouse_motion``, ``scroll``, ``key_down``, ``key_up``) and
``tick(dt)`` translate window input into those actions, so a window only forwards its
events. Keys are lower-case names: letters ("w", "a", ...), "shift", "up", "down",
"left", "right", "plus", "minus"; mouse buttons are "left", "middle", "right". Mouse
deltas are in pixels with +y up (pyglet's convention).

Orientation uses yaw/pitch about world +Y (see engine.pose). Pitch is clamped to
``max_pitch`` degrees (default 89) away from the poles, so the view direction is never
parallel to world up, the camera never flips, and no NaN can appear.
"""

from __future__ import annotations

import math

import numpy as np

from .camera import Camera, PerspectiveCamera
from .pose import CameraPose, apply_pose, camera_pose, yaw_pitch_of, yaw_pitch_rotation

__all__ = ["FlyController", "OrbitController"]


def _finite3(v, name):
    a = np.asarray(v, dtype=np.float64).reshape(-1)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be 3 finite numbers, got {v!r}")
    return a


def _finite(x, name) -> float:
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite, got {x}")
    return x


class _Controller:
    """Shared state: the camera, held keys, the viewport and the pitch clamp."""

    def __init__(self, camera: Camera, max_pitch: float = 89.0):
        if not 0 < max_pitch < 90:
            raise ValueError(f"max_pitch must be in (0, 90) degrees, got {max_pitch}")
        self.camera = camera
        self.max_pitch = float(max_pitch)
        self.held: set[str] = set()
        self.viewport = (640, 480)
        self.yaw = 0.0  # radians
        self.pitch = 0.0  # radians

    def _clamp_pitch(self):
        lim = math.radians(self.max_pitch)
        self.pitch = min(lim, max(-lim, self.pitch))

    def resize(self, width: int, height: int):
        """Viewport size in pixels (used to turn pixel drags into world distances)."""
        if width <= 0 or height <= 0:
            raise ValueError(f"viewport must be positive, got {width}x{height}")
        self.viewport = (int(width), int(height))

    def key_down(self, key: str):
        self.held.add(str(key).lower())

    def key_up(self, key: str):
        self.held.discard(str(key).lower())

    @property
    def rotation(self) -> np.ndarray:
        """(4,) quaternion of the current yaw/pitch."""
        return yaw_pitch_rotation(self.yaw, self.pitch)

    def _half_height_at(self, distance: float) -> float:
        """Half the visible height, world units, at ``distance`` in front of the camera."""
        if isinstance(self.camera, PerspectiveCamera):
            return distance * math.tan(math.radians(self.camera.fov_y) / 2)
        return getattr(self.camera, "height", 2.0) / 2


class OrbitController(_Controller):
    """Turn around a ``target`` point, pan it, and dolly towards or away from it.

    Args:
        camera: the camera to drive; its current position sets the starting azimuth,
            elevation and distance around ``target``.
        target: (3,) world point to orbit.
        rotate_speed: degrees per dragged pixel and per second of a held arrow key / 90.
        min_distance, max_distance: distance clamp, world units.
        max_pitch: elevation limit in degrees (< 90).

    Input: left drag rotates, right or middle drag pans, scroll zooms, arrow keys rotate
    and "plus"/"minus" zoom while held (applied in ``tick``).
    Raises ValueError when the camera sits on the target.
    """

    def __init__(self, camera: Camera, target=(0.0, 0.0, 0.0), rotate_speed=0.3,
                 min_distance=1e-3, max_distance=1e6, max_pitch=89.0):
        super().__init__(camera, max_pitch)
        self.target = _finite3(target, "target")
        if not 0 < min_distance < max_distance:
            raise ValueError(f"need 0 < min_distance < max_distance, got {min_distance}, "
                             f"{max_distance}")
        self.min_distance, self.max_distance = float(min_distance), float(max_distance)
        self.rotate_speed = float(rotate_speed)
        self.sync()

    def sync(self):
        """Adopt the camera's current position (after something else moved it): keep
        the target, take azimuth, elevation and distance from the camera, and look at
        the target. Raises ValueError when the camera sits on the target."""
        offset = camera_pose(self.camera).position - self.target
        dist = float(np.linalg.norm(offset))
        if not dist > 0:
            raise ValueError("OrbitController: the camera sits on its target")
        self.distance = min(self.max_distance, max(self.min_distance, dist))
        self.yaw, self.pitch = yaw_pitch_of(-offset)
        self._clamp_pitch()
        self.update_camera()

    @property
    def azimuth(self) -> float:
        """Degrees about +Y from +Z towards +X of the camera seen from the target."""
        return math.degrees(self.yaw)

    @property
    def elevation(self) -> float:
        """Degrees of the camera above the target's horizontal plane."""
        return -math.degrees(self.pitch)

    def pose(self) -> CameraPose:
        q = self.rotation
        fwd = np.array([-math.sin(self.yaw) * math.cos(self.pitch), math.sin(self.pitch),
                        -math.cos(self.yaw) * math.cos(self.pitch)])
        return CameraPose(self.target - self.distance * fwd, q)

    def update_camera(self):
        apply_pose(self.camera, self.pose())

    def rotate(self, d_azimuth: float, d_elevation: float):
        """Turn the camera ``d_azimuth`` degrees about the target's +Y axis and raise it
        ``d_elevation`` degrees (the elevation is clamped to +-max_pitch)."""
        self.yaw += math.radians(_finite(d_azimuth, "d_azimuth"))
        self.yaw = math.remainder(self.yaw, 2 * math.pi)
        self.pitch -= math.radians(_finite(d_elevation, "d_elevation"))
        self._clamp_pitch()
        self.update_camera()

    def pan(self, dx: float, dy: float):
        """Slide camera and target in the view plane by (dx, dy) fractions of the visible
        height at the target (dx to the camera's right, dy up): pan(0, 1) moves the
        view by one screen height."""
        r = np.asarray(self.camera.world_matrix)[:3, :3]
        right = r[:, 0] / np.linalg.norm(r[:, 0])
        up = r[:, 1] / np.linalg.norm(r[:, 1])
        span = 2.0 * self._half_height_at(self.distance)
        self.target = self.target + span * (_finite(dx, "dx") * right + _finite(dy, "dy") * up)
        self.update_camera()

    def zoom(self, factor: float):
        """Dolly: divide the distance to the target by ``factor`` (> 1 moves closer);
        the field of view is unchanged. Clamped to [min_distance, max_distance]."""
        factor = _finite(factor, "factor")
        if not factor > 0:
            raise ValueError(f"zoom factor must be > 0, got {factor}")
        self.distance = min(self.max_distance, max(self.min_distance, self.distance / factor))
        self.update_camera()

    def mouse_drag(self, dx: float, dy: float, button: str = "left"):
        """Left: rotate (dragging right turns the scene right); right/middle: pan."""
        if button == "left":
            self.rotate(-dx * self.rotate_speed, -dy * self.rotate_speed)
        elif button in ("right", "middle"):
            h = self.viewport[1]
            self.pan(-dx / h, -dy / h)

    def scroll(self, steps: float):
        """One scroll step up zooms in by 10 %."""
        self.zoom(1.1 ** _finite(steps, "steps"))

    def tick(self, dt: float):
        """Apply held keys for ``dt`` seconds: arrows rotate at 90 deg/s, plus/minus zoom
        by a factor 2 per second."""
        dt = _finite(dt, "dt")
        h = self.held
        d_az = (("left" in h) - ("right" in h)) * 90.0 * dt
        d_el = (("up" in h) - ("down" in h)) * 90.0 * dt
        if d_az or d_el:
            self.rotate(d_az, d_el)
        z = ("plus" in h) - ("minus" in h)
        if z:
            self.zoom(2.0 ** (z * dt))


class FlyController(_Controller):
    """First-person flight: WASD moves, Q/E go down/up, the mouse looks around.

    Args:
        camera: the camera to drive; its current pose is the start.
        speed: world units per second.
        fast_factor: speed multiplier while "shift" is held.
        look_speed: degrees per pixel of mouse motion.
        max_pitch: look-up/down limit in degrees (< 90).

    Scrolling multiplies the speed by 1.25 per step (clamped to [1e-4, 1e6]).
    """

    def __init__(self, camera: Camera, speed=2.0, fast_factor=4.0, look_speed=0.2,
                 max_pitch=89.0):
        super().__init__(camera, max_pitch)
        self.speed = float(speed)
        self.fast_factor = float(fast_factor)
        self.look_speed = float(look_speed)
        self.sync()

    def sync(self):
        """Adopt the camera's current pose (after something else moved it); roll is
        dropped and pitch clamped."""
        pose = camera_pose(self.camera)
        self.position = pose.position
        self.yaw, self.pitch = yaw_pitch_of(pose.forward)
        self._clamp_pitch()
        self.update_camera()

    def pose(self) -> CameraPose:
        return CameraPose(self.position.copy(), self.rotation)

    def update_camera(self):
        apply_pose(self.camera, self.pose())

    @property
    def forward(self) -> np.ndarray:
        """(3,) unit view direction."""
        return np.array([-math.sin(self.yaw) * math.cos(self.pitch), math.sin(self.pitch),
                         -math.cos(self.yaw) * math.cos(self.pitch)])

    def move(self, forward: float, right: float, up: float):
        """Move ``forward`` world units along the view direction, ``right`` along the
        camera's horizontal right axis and ``up`` along world +Y."""
        f = self.forward
        r = np.array([math.cos(self.yaw), 0.0, -math.sin(self.yaw)])
        step = (_finite(forward, "forward") * f + _finite(right, "right") * r
                + _finite(up, "up") * np.array([0.0, 1.0, 0.0]))
        self.position = self.position + step
        self.update_camera()

    def look(self, d_yaw: float, d_pitch: float):
        """Turn left by ``d_yaw`` and up by ``d_pitch`` degrees (pitch clamped)."""
        self.yaw = math.remainder(self.yaw + math.radians(_finite(d_yaw, "d_yaw")), 2 * math.pi)
        self.pitch += math.radians(_finite(d_pitch, "d_pitch"))
        self._clamp_pitch()
        self.update_camera()

    def mouse_motion(self, dx: float, dy: float):
        """Mouse moved (dx right, dy up, pixels): look right/up."""
        self.look(-dx * self.look_speed, dy * self.look_speed)

    def mouse_drag(self, dx: float, dy: float, button: str = "left"):
        """Any drag looks around, like mouse motion."""
        self.mouse_motion(dx, dy)

    def scroll(self, steps: float):
        """Each step up multiplies the flight speed by 1.25."""
        self.speed = min(1e6, max(1e-4, self.speed * 1.25 ** _finite(steps, "steps")))

    def tick(self, dt: float):
        """Move for ``dt`` seconds by the held keys: w/s forward/back, a/d left/right,
        e/q up/down; "shift" multiplies the speed by ``fast_factor``."""
        dt = _finite(dt, "dt")
        h = self.held
        f = ("w" in h) - ("s" in h)
        r = ("d" in h) - ("a" in h)
        u = ("e" in h) - ("q" in h)
        if f or r or u:
            v = self.speed * (self.fast_factor if "shift" in h else 1.0) * dt
            self.move(f * v, r * v, u * v)
