"""Scripted camera movement: keyframed ``CameraPath`` and per-frame ``CameraScript``.

Both are *motions*: objects with ``apply(camera, t)`` (t in seconds from the start)
and a ``duration`` (seconds, or None when open-ended). The offline renderer and the
window drive any motion the same way, at t = frame / fps.

A keyframe holds a time, an eye position, and either a look-at ``target`` or an
``orientation`` quaternion (x, y, z, w), plus an optional vertical ``fov`` in degrees.
When every key has a target, the path interpolates eye and target as two curves and
looks from one to the other (best for orbits and tours). Otherwise the orientation of
each key (targets converted with ``look_rotation``) is interpolated by slerp along the
shortest arc. Positions, targets and fov use the segment's interpolation mode (see
engine.animation.interpolation); the segment's easing remaps its normalised time first.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from ..scene.camera import Camera
from ..scene.transforms import quat_normalize, slerp
from .easing import get_easing
from .interpolation import MODES, evaluate_segment, find_segment, monotone_tangents
from .pose import CameraPose, apply_pose, camera_pose, look_rotation

__all__ = ["CameraPath", "CameraScript", "Keyframe"]


def _finite(value, n: int, field: str) -> np.ndarray:
    a = np.asarray(value, dtype=np.float64).reshape(-1)
    if a.shape != (n,):
        raise ValueError(f"{field} must have {n} numbers, got {np.size(value)}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{field} must be finite, got {a.tolist()}")
    return a


@dataclass(frozen=True)
class Keyframe:
    """One camera key. Exactly one of ``target`` / ``orientation`` is given.

    Attributes:
        time: seconds from the path start (finite, >= 0).
        position: (3,) float64 eye position, world units.
        target: (3,) float64 look-at point, or None.
        orientation: (4,) float64 unit quaternion (x, y, z, w), or None.
        fov: vertical field of view in degrees in (0, 180), or None.
        interpolation: mode of the segment starting at this key (None: the path's).
        easing: easing of the segment starting at this key (None: the path's).

    Raises ValueError naming the field for wrong lengths, NaN/inf, a zero quaternion,
    a target equal to the position, or an unknown mode/easing.
    """

    time: float
    position: np.ndarray
    target: np.ndarray | None = None
    orientation: np.ndarray | None = None
    fov: float | None = None
    interpolation: str | None = None
    easing: str | None = None

    def __post_init__(self):
        t = float(self.time)
        if not (math.isfinite(t) and t >= 0):
            raise ValueError(f"time must be a finite number >= 0, got {self.time!r}")
        object.__setattr__(self, "time", t)
        object.__setattr__(self, "position", _finite(self.position, 3, "position"))
        if (self.target is None) == (self.orientation is None):
            raise ValueError("give exactly one of target and orientation")
        if self.target is not None:
            tgt = _finite(self.target, 3, "target")
            if np.allclose(tgt, self.position, rtol=0, atol=1e-12):
                raise ValueError("target must differ from position")
            object.__setattr__(self, "target", tgt)
        else:
            q = _finite(self.orientation, 4, "orientation")
            try:
                q = quat_normalize(q)
            except ValueError:
                raise ValueError("orientation must be a non-zero quaternion (x, y, z, w)") from None
            object.__setattr__(self, "orientation", q)
        if self.fov is not None:
            f = float(self.fov)
            if not (0 < f < 180):
                raise ValueError(f"fov must be in (0, 180) degrees, got {self.fov!r}")
            object.__setattr__(self, "fov", f)
        if self.interpolation is not None and self.interpolation not in MODES:
            raise ValueError(f"unknown interpolation {self.interpolation!r}; "
                             f"use one of {', '.join(MODES)}")
        if self.easing is not None:
            get_easing(self.easing)

    @property
    def rotation(self) -> np.ndarray:
        """(4,) orientation quaternion, derived from the target when one is given."""
        if self.orientation is not None:
            return self.orientation
        return look_rotation(self.position, self.target)


class CameraPath:
    """A keyframed camera move.

    Args:
        keyframes: ``Keyframe`` objects with strictly increasing times.
        interpolation: default mode per segment: "linear", "catmull_rom" (centripetal),
            "monotone" (Fritsch-Carlson, no overshoot) or "step".
        easing: default easing per segment (see engine.animation.easing.EASINGS).

    ``pose(t)`` clamps t to [0, duration]: before the first key the camera holds the
    first key, after the last it holds the last. Raises ValueError for non-increasing
    times, unknown modes, or fov given on some keys but not others.
    """

    def __init__(self, keyframes: Iterable[Keyframe] = (), interpolation: str = "catmull_rom",
                 easing: str = "linear"):
        if interpolation not in MODES:
            raise ValueError(f"unknown interpolation {interpolation!r}; use one of {', '.join(MODES)}")
        get_easing(easing)
        self.interpolation = interpolation
        self.easing = easing
        self._keys: list[Keyframe] = []
        self._cache = None
        for k in keyframes:
            self.append(k)

    @property
    def keyframes(self) -> tuple[Keyframe, ...]:
        return tuple(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    @property
    def duration(self) -> float:
        """Time of the last key, seconds (0 for an empty or one-key path)."""
        return self._keys[-1].time if self._keys else 0.0

    def append(self, key: Keyframe) -> Keyframe:
        """Add ``key`` at the end; its time must be later than the last key's."""
        if self._keys and not key.time > self._keys[-1].time:
            raise ValueError(f"keyframe times must increase: {key.time} after "
                             f"{self._keys[-1].time}")
        if self._keys and (key.fov is None) != (self._keys[0].fov is None):
            raise ValueError("fov must be given on every keyframe or on none")
        self._keys.append(key)
        self._cache = None
        return key

    def add(self, time: float, position, target=None, orientation=None, fov=None,
            interpolation=None, easing=None) -> Keyframe:
        """Build a ``Keyframe`` from the arguments and append it (see Keyframe)."""
        return self.append(Keyframe(time, position, target, orientation, fov,
                                    interpolation, easing))

    def add_camera(self, camera: Camera, time: float | None = None,
                   interval: float = 2.0) -> Keyframe:
        """Append the camera's current world pose (orientation and fov) as a key at
        ``time`` (default: ``interval`` seconds after the last key, or 0)."""
        if time is None:
            time = self.duration + interval if self._keys else 0.0
        pose = camera_pose(camera)
        fov = pose.fov_y if (not self._keys or self._keys[0].fov is not None) else None
        return self.add(time, pose.position, orientation=pose.rotation, fov=fov)

    def _arrays(self):
        if self._cache is None:
            keys = self._keys
            times = np.array([k.time for k in keys])
            pos = np.array([k.position for k in keys])
            use_target = all(k.target is not None for k in keys)
            tgt = np.array([k.target for k in keys]) if use_target else None
            rot = None if use_target else np.array([k.rotation for k in keys])
            fov = (np.array([[k.fov] for k in keys]) if keys[0].fov is not None else None)
            tangents = {}
            if len(keys) > 1:
                for name, v in (("position", pos), ("target", tgt), ("fov", fov)):
                    if v is not None:
                        tangents[name] = monotone_tangents(times, v)
            self._cache = (times, pos, tgt, rot, fov, tangents)
        return self._cache

    def pose(self, t: float) -> CameraPose:
        """World ``CameraPose`` at time ``t`` seconds. Raises ValueError on an empty path
        or a non-finite t."""
        if not self._keys:
            raise ValueError("camera path has no keyframes")
        t = float(t)
        if not math.isfinite(t):
            raise ValueError(f"time must be finite, got {t}")
        times, pos, tgt, rot, fov, tangents = self._arrays()
        if len(self._keys) == 1:
            key = self._keys[0]
            return CameraPose(key.position.copy(), key.rotation.copy(), key.fov)
        k, u = find_segment(times, t)
        key = self._keys[k]
        mode = key.interpolation or self.interpolation
        u = get_easing(key.easing or self.easing)(u)

        def channel(name, values):
            # Closed within rounding (a full orbit's last key is cos/sin of 2*pi).
            scale = 1.0 + float(np.abs(values).max())
            closed = bool(np.allclose(values[0], values[-1], rtol=0, atol=1e-9 * scale))
            return evaluate_segment(mode, times, values, k, u, tangents.get(name), closed)

        p = channel("position", pos)
        if tgt is not None:
            target = channel("target", tgt)
            try:
                q = look_rotation(p, target)
            except ValueError:
                # Eye passes through its target mid-segment: keep the key's own view.
                q = self._keys[k].rotation
        else:
            q = rot[k].copy() if mode == "step" else slerp(rot[k], rot[k + 1], u)
        f = None if fov is None else float(np.clip(channel("fov", fov)[0], 1e-3, 179.999))
        return CameraPose(p, q, f)

    def apply(self, camera: Camera, t: float) -> Camera:
        """Place ``camera`` at ``pose(t)``. Returns camera."""
        return apply_pose(camera, self.pose(t))

    def __repr__(self) -> str:
        return (f"CameraPath({len(self._keys)} keys, {self.duration:g} s, "
                f"{self.interpolation}, {self.easing})")


class CameraScript:
    """A camera move written as plain Python, run once per frame.

    ``fn`` is either

    - a function ``fn(camera, t)`` called every frame with the time in seconds, or
    - a generator function ``fn(camera, t)``: it is started with the first frame's time,
      and each later frame's time is sent in (``t = yield``). When it returns, the
      script has ended (``apply`` returns False).

    ``duration`` (seconds, or None) tells renderers how long the move lasts when no
    other length is given.
    """

    def __init__(self, fn: Callable, duration: float | None = None):
        if not callable(fn):
            raise TypeError(f"camera script must be callable, got {fn!r}")
        if duration is not None and not (float(duration) > 0 and math.isfinite(duration)):
            raise ValueError(f"duration must be positive, got {duration!r}")
        self.fn = fn
        self.duration = None if duration is None else float(duration)
        self._is_generator = inspect.isgeneratorfunction(fn)
        self._gen = None
        self.finished = False

    def reset(self):
        """Start over: the next ``apply`` starts a fresh generator."""
        if self._gen is not None:
            self._gen.close()
        self._gen = None
        self.finished = False

    def apply(self, camera: Camera, t: float) -> bool:
        """Run the script for time ``t``; False once a generator script has returned."""
        if self.finished:
            return False
        t = float(t)
        if not self._is_generator:
            self.fn(camera, t)
            return True
        try:
            if self._gen is None:
                self._gen = self.fn(camera, t)
                next(self._gen)
            else:
                self._gen.send(t)
        except StopIteration:
            self.finished = True
            return False
        return True

