"""Interactive camera controllers, independent of any window toolkit.

A controller owns a camera and moves it through action methods (``rotate``, ``pan``,
``zoom``, ``move``, ``look``) that scripts and tests call directly; the input-event
methods (``mouse_drag``, ``mouse_motion``, ``scroll``, ``key_down``, ``key_up``) and
``tick(dt)`` translate window input into those actions, so a window only forwards its
events. Keys and buttons are named as everywhere in the engine (engine.controls.input):
keys by their pyglet names or codes ("w", "a", ..., "lshift"/"rshift", the arrows "up",
"down", "left", "right", "plus"/"equal"/"num_add", "minus"/"num_subtract"), mouse
buttons "mouse_left", "mouse_middle", "mouse_right" or pyglet's mouse constants. An
unknown name raises ValueError. The former names "shift" (key) and "left", "middle",
"right" (``mouse_drag``'s button) still work in this release with a
``DeprecationWarning``; the next release drops them. Mouse deltas are in pixels with +y
up (pyglet's convention).

Orientation uses yaw/pitch about world +Y (see engine.animation.pose). Pitch is clamped to
``max_pitch`` degrees (default 89) away from the poles, so the view direction is never
parallel to world up, the camera never flips, and no NaN can appear.

Every numeric argument must be finite (ValueError naming it otherwise). Finite input of
any size keeps the camera finite: angles wrap or clamp, zoom and fly speed are clamped
to their documented ranges (scaled in log space, so no power overflows), and a
translation that would leave the float64 range raises ValueError naming the argument
before the camera moves. ``dt`` must be >= 0.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..animation.pose import CameraPose, apply_pose, camera_pose, yaw_pitch_of, yaw_pitch_rotation
from ..errors import as_finite
from ..scene.camera import Camera, OrthographicCamera, PerspectiveCamera
from ..scene.transforms import as_vec3
from .input import input_name, mouse_name

__all__ = ["FlyController", "OrbitController"]

# Keys a held set is read through (canonical engine.controls.input names).
_SHIFT = frozenset({"lshift", "rshift"})
_ZOOM_IN = frozenset({"plus", "equal", "num_add"})  # "+" shares its key with "="
_ZOOM_OUT = frozenset({"minus", "num_subtract"})


def _key(k) -> str:
    """Canonical name of a key given to a controller (see the module docstring)."""
    if isinstance(k, str) and k.strip().lower() == "shift":
        warnings.warn("controller key 'shift' is deprecated: use 'lshift' or 'rshift' "
                      "(engine.controls.input names)", DeprecationWarning, stacklevel=3)
        return "lshift"
    return input_name(k)




def _positive(x, name) -> float:
    x = as_finite(x, name)
    if not x > 0:
        raise ValueError(f"{name} must be > 0, got {x}")
    return x


def _duration(dt) -> float:
    dt = as_finite(dt, "dt")
    if dt < 0:
        raise ValueError(f"dt must be >= 0 seconds, got {dt}")
    return dt


def _product(x, k, name) -> float:
    """``x * k`` for an input ``x`` scaled by a setting ``k``; ValueError naming ``x``
    when the product leaves the float range."""
    p = as_finite(x, name) * k
    if not math.isfinite(p):
        raise ValueError(f"{name}={x} is too large (times {k} it overflows)")
    return p


def _scale_clamped(value: float, log_factor: float, lo: float, hi: float) -> float:
    """``value * exp(log_factor)`` clamped to [lo, hi] (value in [lo, hi], all > 0).

    The clamp is decided in log space, so a huge finite ``log_factor`` (many scroll
    steps) returns ``lo`` or ``hi`` instead of overflowing ``exp`` or reaching 0."""
    if log_factor >= math.log(hi / value):
        return hi
    if log_factor <= math.log(lo / value):
        return lo
    return min(hi, max(lo, value * math.exp(log_factor)))


def _finite_position(p, what) -> np.ndarray:
    if not np.all(np.isfinite(p)):
        raise ValueError(f"{what} would move the camera outside the float64 range")
    return p


class _Controller:
    """Shared state: the camera, held keys, the viewport and the pitch clamp."""

    def __init__(self, camera: Camera, max_pitch: float = 89.0):
        max_pitch = as_finite(max_pitch, "max_pitch")
        if not 0 < max_pitch < 90:
            raise ValueError(f"max_pitch must be in (0, 90) degrees, got {max_pitch}")
        self.camera = camera
        self.max_pitch = max_pitch
        self.held: set[str] = set()
        self.viewport = (640, 480)
        self.yaw = 0.0  # radians
        self.pitch = 0.0  # radians

    def _clamp_pitch(self):
        lim = math.radians(self.max_pitch)
        self.pitch = min(lim, max(-lim, self.pitch))

    def resize(self, width: int, height: int):
        """Viewport size in pixels (used to turn pixel drags into world distances).
        Raises ValueError unless both are finite and >= 1."""
        for name, v in (("width", width), ("height", height)):
            if not as_finite(v, name) >= 1:
                raise ValueError(f"viewport {name} must be >= 1 pixel, got {v}")
        self.viewport = (int(width), int(height))

    def key_down(self, key):
        """A key (name or pyglet code, see the module docstring) went down; ``tick``
        applies it while held. Raises ValueError for an unknown key."""
        self.held.add(_key(key))

    def key_up(self, key):
        """A key went up (no-op when it was not held). Raises ValueError for an unknown
        key."""
        self.held.discard(_key(key))

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
        rotate_speed: degrees per dragged pixel (> 0).
        min_distance, max_distance: distance clamp, world units, finite,
            0 < min_distance < max_distance; a starting distance outside is clamped.
        max_pitch: elevation limit in degrees (< 90).

    Input: a "mouse_left" drag rotates, "mouse_right" or "mouse_middle" drags pan,
    scroll zooms (an orthographic camera by its height, see ``zoom``), the arrow keys rotate and "plus"/"equal"/"num_add" zoom in,
    "minus"/"num_subtract" out while held (applied in ``tick``).
    Raises ValueError when the camera sits on the target or an argument is out of range.
    """

    def __init__(self, camera: Camera, target=(0.0, 0.0, 0.0), rotate_speed=0.3,
                 min_distance=1e-3, max_distance=1e6, max_pitch=89.0):
        super().__init__(camera, max_pitch)
        self.target = as_vec3(target, "target")
        lo, hi = as_finite(min_distance, "min_distance"), as_finite(max_distance, "max_distance")
        if not 0 < lo < hi:
            raise ValueError(f"need 0 < min_distance < max_distance, got {lo}, {hi}")
        self.min_distance, self.max_distance = lo, hi
        self.rotate_speed = _positive(rotate_speed, "rotate_speed")
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
        ``d_elevation`` degrees (the elevation is clamped to +-max_pitch; the azimuth
        wraps, so any finite angle is fine)."""
        # fmod first: exact for any finite angle, and keeps yaw small before radians().
        self.yaw += math.radians(math.fmod(as_finite(d_azimuth, "d_azimuth"), 360.0))
        self.yaw = math.remainder(self.yaw, 2 * math.pi)
        self.pitch -= math.radians(as_finite(d_elevation, "d_elevation"))
        self._clamp_pitch()
        self.update_camera()

    def pan(self, dx: float, dy: float):
        """Slide camera and target in the view plane by (dx, dy) fractions of the visible
        height at the target (dx to the camera's right, dy up): pan(0, 1) moves the
        view by one screen height. Raises ValueError naming dx/dy when they are not finite
        or so large that the target would leave the float64 range."""
        dx, dy = as_finite(dx, "dx"), as_finite(dy, "dy")
        r = np.asarray(self.camera.world_matrix)[:3, :3]
        right = r[:, 0] / np.linalg.norm(r[:, 0])
        up = r[:, 1] / np.linalg.norm(r[:, 1])
        span = 2.0 * self._half_height_at(self.distance)
        with np.errstate(over="ignore", invalid="ignore"):
            target = self.target + span * (dx * right + dy * up)
        self.target = _finite_position(target, f"pan(dx={dx}, dy={dy})")
        self.update_camera()

    def zoom(self, factor: float):
        """Zoom in by ``factor`` (> 1 closer): a perspective camera dollies (the distance
        to the target is divided by ``factor``, the field of view is unchanged); an
        orthographic camera, which a dolly would not change, has its ``height`` divided
        by ``factor`` (zoom(2) halves it; the distance stays). Both are clamped to
        [min_distance, max_distance] world units. Raises ValueError unless ``factor`` is
        finite and > 0."""
        factor = as_finite(factor, "factor")
        if not factor > 0:
            raise ValueError(f"zoom factor must be > 0, got {factor}")
        self._dolly(-math.log(factor))

    def _dolly(self, log_factor: float):
        """Multiply the zoomed length by ``exp(log_factor)`` (< 0 zooms in): the distance
        of a perspective camera, the height of an orthographic one (see ``zoom``)."""
        if isinstance(self.camera, OrthographicCamera):
            height = min(self.max_distance, max(self.min_distance, self.camera.height))
            self.camera.height = _scale_clamped(height, log_factor, self.min_distance,
                                                self.max_distance)
        else:
            self.distance = _scale_clamped(self.distance, log_factor, self.min_distance,
                                           self.max_distance)
        self.update_camera()

    def mouse_drag(self, dx: float, dy: float, button="mouse_left"):
        """"mouse_left": rotate (dragging right turns the scene right); "mouse_right" or
        "mouse_middle": pan; other buttons do nothing. ``button`` is a name or pyglet
        constant (ValueError when unknown); ``dx``, ``dy`` in pixels, finite (ValueError
        naming them otherwise)."""
        button = mouse_name(button)
        if button == "mouse_left":
            self.rotate(-_product(dx, self.rotate_speed, "dx"),
                        -_product(dy, self.rotate_speed, "dy"))
        elif button in ("mouse_right", "mouse_middle"):
            h = self.viewport[1]
            self.pan(-as_finite(dx, "dx") / h, -as_finite(dy, "dy") / h)

    def scroll(self, steps: float):
        """Each scroll step up zooms in by 1.1 (``zoom(1.1)``: the distance, or an
        orthographic camera's height, divided by 1.1), each step down out; any finite
        number of steps stays within [min_distance, max_distance]. Raises ValueError
        naming ``steps`` when it is not finite."""
        self._dolly(-as_finite(steps, "steps") * math.log(1.1))

    def tick(self, dt: float):
        """Apply held keys for ``dt`` >= 0 seconds: arrows rotate at 90 deg/s, the zoom
        keys (see the class docstring) by a factor 2 per second (distance clamped). Raises ValueError naming ``dt``
        when it is negative or not finite."""
        dt = _duration(dt)
        h = self.held
        # A full turn takes 4 s and the whole elevation range under 2 s, so reducing dt
        # first gives the same view and no overflow for any finite dt.
        d_az = (("left" in h) - ("right" in h)) * 90.0 * math.fmod(dt, 4.0)
        d_el = (("up" in h) - ("down" in h)) * 90.0 * min(dt, 2.0)
        if d_az or d_el:
            self.rotate(d_az, d_el)
        z = bool(_ZOOM_IN & h) - bool(_ZOOM_OUT & h)
        if z:
            self._dolly(-z * dt * math.log(2.0))


class FlyController(_Controller):
    """First-person flight: WASD moves, Q/E go down/up, the mouse looks around.

    Args:
        camera: the camera to drive; its current pose is the start.
        speed: world units per second, > 0; clamped to [min_speed, max_speed].
        fast_factor: speed multiplier while "lshift" or "rshift" is held (> 0).
        look_speed: degrees per pixel of mouse motion (> 0).
        max_pitch: look-up/down limit in degrees (< 90).
        min_speed, max_speed: speed clamp, world units per second, finite,
            0 < min_speed < max_speed.

    Scrolling multiplies the speed by 1.25 per step, clamped to [min_speed, max_speed].
    Raises ValueError naming an argument that is not finite or out of range.
    """

    def __init__(self, camera: Camera, speed=2.0, fast_factor=4.0, look_speed=0.2,
                 max_pitch=89.0, min_speed=1e-4, max_speed=1e6):
        super().__init__(camera, max_pitch)
        lo, hi = as_finite(min_speed, "min_speed"), as_finite(max_speed, "max_speed")
        if not 0 < lo < hi:
            raise ValueError(f"need 0 < min_speed < max_speed, got {lo}, {hi}")
        self.min_speed, self.max_speed = lo, hi
        self.speed = speed
        self.fast_factor = _positive(fast_factor, "fast_factor")
        self.look_speed = _positive(look_speed, "look_speed")
        self.sync()

    @property
    def speed(self) -> float:
        """Flight speed, world units per second, in [min_speed, max_speed]. Setting it
        clamps into that range; ValueError unless the value is finite and > 0."""
        return self._speed

    @speed.setter
    def speed(self, value: float):
        self._speed = min(self.max_speed, max(self.min_speed, _positive(value, "speed")))

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
        camera's horizontal right axis and ``up`` along world +Y. Raises ValueError naming
        the arguments when one is not finite or the camera would leave the float64
        range (it then stays where it was)."""
        self._translate(as_finite(forward, "forward"), as_finite(right, "right"),
                        as_finite(up, "up"), f"move(forward={forward}, right={right}, up={up})")

    def _translate(self, forward: float, right: float, up: float, what: str):
        f = self.forward
        r = np.array([math.cos(self.yaw), 0.0, -math.sin(self.yaw)])
        with np.errstate(over="ignore", invalid="ignore"):
            position = self.position + (forward * f + right * r
                                        + up * np.array([0.0, 1.0, 0.0]))
        self.position = _finite_position(position, what)
        self.update_camera()

    def look(self, d_yaw: float, d_pitch: float):
        """Turn left by ``d_yaw`` and up by ``d_pitch`` degrees (yaw wraps, pitch is
        clamped, so any finite angle is fine; ValueError naming a non-finite one)."""
        d_yaw = math.fmod(as_finite(d_yaw, "d_yaw"), 360.0)  # exact; keeps yaw small
        self.yaw = math.remainder(self.yaw + math.radians(d_yaw), 2 * math.pi)
        self.pitch += math.radians(as_finite(d_pitch, "d_pitch"))
        self._clamp_pitch()
        self.update_camera()

    def mouse_motion(self, dx: float, dy: float):
        """Mouse moved (dx right, dy up, pixels, finite): look right/up."""
        self.look(-_product(dx, self.look_speed, "dx"), _product(dy, self.look_speed, "dy"))

    def mouse_drag(self, dx: float, dy: float, button="mouse_left"):
        """A drag with any button looks around, like mouse motion (``button``: a name or
        pyglet constant, ValueError when unknown)."""
        mouse_name(button)
        self.mouse_motion(dx, dy)

    def scroll(self, steps: float):
        """Each step up multiplies the flight speed by 1.25, each step down divides it;
        any finite number of steps stays within [min_speed, max_speed]. Raises
        ValueError naming ``steps`` when it is not finite."""
        self._speed = _scale_clamped(self._speed, as_finite(steps, "steps") * math.log(1.25),
                                     self.min_speed, self.max_speed)

    def tick(self, dt: float):
        """Move for ``dt`` >= 0 seconds by the held keys: w/s forward/back, a/d
        left/right, e/q up/down; "lshift"/"rshift" multiply the speed by ``fast_factor``.
        Raises ValueError naming ``dt`` when it is negative, not finite, or so large
        that the camera would leave the float64 range (it then stays where it was)."""
        dt = _duration(dt)
        h = self.held
        f = ("w" in h) - ("s" in h)
        r = ("d" in h) - ("a" in h)
        u = ("e" in h) - ("q" in h)
        if f or r or u:
            v = self.speed * (self.fast_factor if _SHIFT & h else 1.0) * dt
            self._translate(f * v, r * v, u * v, f"tick(dt={dt})")
