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
from .pose import CameraPose, apply_pose, camera_pose, look_rotation, look_rotations

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


def _no_check(mask, what):
    """Stands in for ``from_arrays``'s checks when the caller has made them."""


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

    Storage: the keys are kept as arrays (``times``, ``positions``, ...), so a path of a
    million keys loads, checks and evaluates with array operations (``from_arrays``,
    ``engine.animation.pathfile``); ``keyframes`` builds ``Keyframe`` objects on demand.
    """

    def __init__(self, keyframes: Iterable[Keyframe] = (), interpolation: str = "catmull_rom",
                 easing: str = "linear"):
        if interpolation not in MODES:
            raise ValueError(f"unknown interpolation {interpolation!r}; use one of {', '.join(MODES)}")
        get_easing(easing)
        self.interpolation = interpolation
        self.easing = easing
        self._keys: list[Keyframe] | None = []
        self._cols: dict | None = None
        self._cache = None
        for k in keyframes:
            self.append(k)

    @classmethod
    def from_arrays(cls, times, positions, targets=None, orientations=None, fovs=None,
                    modes=None, easings=None, interpolation: str = "catmull_rom",
                    easing: str = "linear", _checked: bool = False) -> CameraPath:
        """A path from K keys given as arrays, checked with array operations.

        Args:
            times: (K,) strictly increasing seconds >= 0.
            positions: (K, 3) eye positions.
            targets: (K, 3) look-at points with NaN rows for keys that have an orientation
                instead, or None (every key has an orientation).
            orientations: (K, 4) quaternions with NaN rows for keys that have a target, or
                None (every key has a target).
            fovs: (K,) degrees in (0, 180), or None.
            modes, easings: (K,) per-key segment mode / easing names or None entries, or
                None.

        Raises ValueError naming the first bad key (index) and field.
        """
        t = np.asarray(times, np.float64).reshape(-1)
        k = len(t)
        p = np.asarray(positions, np.float64).reshape(k, 3)
        tgt = None if targets is None else np.asarray(targets, np.float64).reshape(k, 3)
        q = None if orientations is None else np.asarray(orientations, np.float64).reshape(k, 4)
        has_t = np.zeros(k, bool) if tgt is None else ~np.isnan(tgt).all(axis=1)
        has_q = np.zeros(k, bool) if q is None else ~np.isnan(q).all(axis=1)

        def first(mask, what):
            if mask.any():
                raise ValueError(f"keyframe {int(np.argmax(mask))}: {what}")

        if _checked:  # the caller (the path-file loader) has checked every rule
            first = _no_check
        first(~(np.isfinite(t) & (t >= 0)), "time must be a finite number >= 0")
        if k > 1:
            first(np.concatenate([[False], ~(t[1:] > t[:-1])]),
                  "time must be greater than the previous key's time")
        first(~np.isfinite(p).all(axis=1), "position must be finite")
        first(has_t == has_q, "give exactly one of target and orientation")
        if tgt is not None:
            first(has_t & ~np.isfinite(tgt).all(axis=1), "target must be finite")
            first(has_t & np.all(np.abs(np.where(has_t[:, None], tgt, 0) - p) <= 1e-12, axis=1),
                  "target must differ from position")
        if q is not None and has_q.any():
            first(has_q & ~np.isfinite(q).all(axis=1), "orientation must be finite")
            n = np.linalg.norm(np.where(has_q[:, None], q, 1.0), axis=1)
            first(has_q & ~(n > 1e-12), "orientation must be a non-zero quaternion")
            q = np.where(has_q[:, None], q / n[:, None], np.nan)
        f = None
        if fovs is not None:
            f = np.asarray(fovs, np.float64).reshape(k)
            first(~((f > 0) & (f < 180)), "fov must be in (0, 180) degrees")
        codes = {}
        for name, values, allowed in (("interpolation", modes, MODES),
                                      ("easing", easings, None)):
            c = np.full(k, -1, np.int16)
            if values is not None:
                table = {}
                for i, v in enumerate(values):
                    if v is None:
                        continue
                    if v not in table:
                        if allowed is not None and v not in allowed:
                            raise ValueError(f"keyframe {i}: unknown {name} {v!r}")
                        if allowed is None:
                            get_easing(v)
                        table[v] = len(table)
                    c[i] = table[v]
                codes[name] = (c, list(table))
            else:
                codes[name] = (c, [])
        path = cls(interpolation=interpolation, easing=easing)
        path._keys = None
        path._cols = {"times": t, "positions": p,
                      "targets": tgt if tgt is not None and has_t.any() else None,
                      "has_target": has_t, "orientations": q if has_q.any() else None,
                      "fovs": f, "modes": codes["interpolation"], "easings": codes["easing"]}
        return path

    # --- keys ----------------------------------------------------------------------------
    def _columns(self) -> dict:
        if self._cols is None:
            keys = self._keys
            k = len(keys)
            tgt = np.full((k, 3), np.nan)
            q = np.full((k, 4), np.nan)
            has_t = np.zeros(k, bool)
            for i, key in enumerate(keys):
                if key.target is not None:
                    tgt[i], has_t[i] = key.target, True
                else:
                    q[i] = key.orientation
            cols = {"times": np.array([key.time for key in keys], np.float64),
                    "positions": np.array([key.position for key in keys]).reshape(k, 3),
                    "targets": tgt if has_t.any() else None, "has_target": has_t,
                    "orientations": q if not has_t.all() else None,
                    "fovs": (np.array([key.fov for key in keys], np.float64)
                             if k and keys[0].fov is not None else None)}
            for name, attr in (("modes", "interpolation"), ("easings", "easing")):
                table, c = {}, np.full(k, -1, np.int16)
                for i, key in enumerate(keys):
                    v = getattr(key, attr)
                    if v is not None:
                        c[i] = table.setdefault(v, len(table))
                cols[name] = (c, list(table))
            self._cols = cols
        return self._cols

    @property
    def keyframes(self) -> tuple[Keyframe, ...]:
        """The keys as ``Keyframe`` objects (built on first use for array-made paths)."""
        if self._keys is None:
            c = self._cols
            mode_c, mode_names = c["modes"]
            ease_c, ease_names = c["easings"]
            keys = []
            for i in range(len(c["times"])):
                has_t = bool(c["has_target"][i])
                keys.append(Keyframe(
                    float(c["times"][i]), c["positions"][i],
                    c["targets"][i] if has_t else None,
                    None if has_t else c["orientations"][i],
                    None if c["fovs"] is None else float(c["fovs"][i]),
                    mode_names[mode_c[i]] if mode_c[i] >= 0 else None,
                    ease_names[ease_c[i]] if ease_c[i] >= 0 else None))
            self._keys = keys
        return tuple(self._keys)

    @property
    def times(self) -> np.ndarray:
        """(K,) float64 key times, seconds (a copy)."""
        return self._columns()["times"].copy()

    @property
    def positions(self) -> np.ndarray:
        """(K, 3) float64 key eye positions (a copy)."""
        return self._columns()["positions"].copy()

    def __len__(self) -> int:
        return len(self._keys) if self._keys is not None else len(self._cols["times"])

    @property
    def duration(self) -> float:
        """Time of the last key, seconds (0 for an empty or one-key path)."""
        if not len(self):
            return 0.0
        return float(self._columns()["times"][-1])

    def append(self, key: Keyframe) -> Keyframe:
        """Add ``key`` at the end; its time must be later than the last key's."""
        if self._keys is None:
            self.keyframes  # noqa: B018 - materialise the Keyframe list once
        keys = self._keys
        if keys and not key.time > keys[-1].time:
            raise ValueError(f"keyframe times must increase: {key.time} after "
                             f"{keys[-1].time}")
        if keys and (key.fov is None) != (keys[0].fov is None):
            raise ValueError("fov must be given on every keyframe or on none")
        keys.append(key)
        self._cols, self._cache = None, None
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
            time = self.duration + interval if len(self) else 0.0
        pose = camera_pose(camera)
        first_fov = self._columns()["fovs"] if len(self) else None
        fov = pose.fov_y if (not len(self) or first_fov is not None) else None
        return self.add(time, pose.position, orientation=pose.rotation, fov=fov)

    def _arrays(self):
        if self._cache is None:
            c = self._columns()
            times, pos = c["times"], c["positions"]
            use_target = bool(c["has_target"].all())
            tgt = c["targets"] if use_target else None
            rot = None
            if not use_target:
                rot = np.array(c["orientations"] if c["orientations"] is not None
                               else np.full((len(times), 4), np.nan))
                has_t = c["has_target"]
                if has_t.any():
                    rot[has_t] = look_rotations(pos[has_t], c["targets"][has_t])
            fov = c["fovs"][:, None] if c["fovs"] is not None else None
            tangents, closed = {}, {}
            mode_c, mode_names = c["modes"]
            monotone = self.interpolation == "monotone" if not len(mode_names) else (
                "monotone" in mode_names or (self.interpolation == "monotone"
                                             and bool((mode_c < 0).any())))
            for name, v in (("position", pos), ("target", tgt), ("fov", fov)):
                if v is None:
                    continue
                if len(times) > 1 and monotone:  # only monotone segments use tangents
                    tangents[name] = monotone_tangents(times, v)
                # Closed within rounding (a full orbit's last key is cos/sin of 2*pi).
                scale = 1.0 + float(np.abs(v).max())
                closed[name] = bool(np.allclose(v[0], v[-1], rtol=0, atol=1e-9 * scale))
            self._cache = (times, pos, tgt, rot, fov, tangents, closed)
        return self._cache

    def pose(self, t: float) -> CameraPose:
        """World ``CameraPose`` at time ``t`` seconds. Raises ValueError on an empty path
        or a non-finite t."""
        if not len(self):
            raise ValueError("camera path has no keyframes")
        t = float(t)
        if not math.isfinite(t):
            raise ValueError(f"time must be finite, got {t}")
        times, pos, tgt, rot, fov, tangents, closed = self._arrays()
        c = self._columns()
        if len(times) == 1:
            q = rot[0].copy() if rot is not None else look_rotation(pos[0], tgt[0])
            return CameraPose(pos[0].copy(), q, None if fov is None else float(fov[0, 0]))
        k, u = find_segment(times, t)
        mode_c, mode_names = c["modes"]
        ease_c, ease_names = c["easings"]
        mode = mode_names[mode_c[k]] if mode_c[k] >= 0 else self.interpolation
        u = get_easing(ease_names[ease_c[k]] if ease_c[k] >= 0 else self.easing)(u)

        def channel(name, values):
            return evaluate_segment(mode, times, values, k, u, tangents.get(name),
                                    closed[name])

        p = channel("position", pos)
        if tgt is not None:
            target = channel("target", tgt)
            try:
                q = look_rotation(p, target)
            except ValueError:
                # Eye passes through its target mid-segment: keep the key's own view.
                q = look_rotation(pos[k], tgt[k])
        else:
            q = rot[k].copy() if mode == "step" else slerp(rot[k], rot[k + 1], u)
        f = None if fov is None else float(np.clip(channel("fov", fov)[0], 1e-3, 179.999))
        return CameraPose(p, q, f)

    def apply(self, camera: Camera, t: float) -> Camera:
        """Place ``camera`` at ``pose(t)``. Returns camera."""
        return apply_pose(camera, self.pose(t))

    def __repr__(self) -> str:
        return (f"CameraPath({len(self)} keys, {self.duration:g} s, "
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

