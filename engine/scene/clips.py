"""Animation clips: keyframed translation, rotation and scale of scene nodes, and the
weights of their meshes' morph targets.

A ``TransformTrack`` drives one property of one node from keyframes (a glTF channel:
translation, rotation, scale, or ``weights``, which writes ``node.morph_weights``); a
``Clip`` is a named set of tracks played on one clock (a glTF animation). Both are pure
functions of time: ``clip.apply(t)`` sets every animated property from ``t`` alone, so
any frame can be evaluated on its own, in any order, in another process, and gives the
same pose. Properties no track animates keep their rest value.

Interpolation follows the glTF 2.0 specification (Appendix C, "Animation Sampler
Interpolation Modes"), with key times t_k, values v_k, t_k <= t < t_k+1,
t_d = t_k+1 - t_k and u = (t - t_k) / t_d::

    "step"         v_k
    "linear"       (1 - u) v_k + u v_k+1; rotations by spherical linear interpolation
                   along the shortest arc (engine.scene.transforms.slerp)
    "cubicspline"  Hermite spline with per-key in-tangent a_k and out-tangent b_k:
                   (2u^3 - 3u^2 + 1) v_k + t_d (u^3 - 2u^2 + u) b_k
                   + (-2u^3 + 3u^2) v_k+1 + t_d (u^3 - u^2) a_k+1;
                   rotations are normalised afterwards

Before the first key a track holds the first value, after the last key the last one.
Times are seconds; rotations are unit quaternions (x, y, z, w); weights are one number
per morph target (``engine.scene.deform``), interpolated component by component.

``Clip.sample(t)`` returns the pose without setting it (what blending two clips reads,
``engine.animation.clips.ClipPlayer``); ``Clip.apply(t)`` sets it.
"""

from __future__ import annotations

import math

import numpy as np

from .graph import Node
from .transforms import slerp

__all__ = ["INTERPOLATIONS", "PATHS", "Clip", "TransformTrack"]

INTERPOLATIONS = ("linear", "step", "cubicspline")
PATHS = ("translation", "rotation", "scale", "weights")
_WIDTH = {"translation": 3, "rotation": 4, "scale": 3}  # weights: one per morph target
_ATTR = {"translation": "position", "rotation": "rotation", "scale": "scale",
         "weights": "morph_weights"}
#: Largest key value accepted (keeps every interpolation step finite).
MAX_VALUE = 1e30


def _slerp_many(a: np.ndarray, b: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Row-wise ``engine.scene.transforms.slerp`` of (K, 4) unit quaternions at (K, 1)
    fractions ``u``: the shortest arc (b negated where a.b < 0), a normalised lerp where
    a.b > 0.9995."""
    d = np.sum(a * b, axis=1, keepdims=True)
    b = np.where(d < 0, -b, b)
    d = np.abs(d)
    near = d > 0.9995
    theta = np.arccos(np.minimum(d, 1.0))
    s = np.where(near, 1.0, np.sin(theta))
    arc = (np.sin((1 - u) * theta) * a + np.sin(u * theta) * b) / s
    lerp = a + u * (b - a)
    lerp = lerp / np.linalg.norm(lerp, axis=1, keepdims=True)
    return np.where(near, lerp, arc)


class TransformTrack:
    """Keyframes of one node property.

    Args:
        node: the ``Node`` it moves.
        path: "translation" (``node.position``), "rotation" (``node.rotation``),
            "scale" (``node.scale``) or "weights" (``node.morph_weights``).
        times: (K,) key times in seconds, finite and strictly increasing, K >= 1.
        values: (K, D) values (D = 3, 4 for rotations, the morph target count for
            weights); for "cubicspline" (K, 3, D):
            in-tangent, value and out-tangent of each key (glTF's layout).
        interpolation: "linear", "step" or "cubicspline".

    Raises:
        ValueError: an unknown path or interpolation, wrong shapes, times that are not
            finite and strictly increasing, values that are not finite or exceed
            ``MAX_VALUE``, a zero rotation key.
    """

    def __init__(self, node: Node, path: str, times, values, interpolation: str = "linear"):
        if path not in PATHS:
            raise ValueError(f"path must be one of {', '.join(PATHS)}, got {path!r}")
        if interpolation not in INTERPOLATIONS:
            raise ValueError(f"interpolation must be one of {', '.join(INTERPOLATIONS)}, "
                             f"got {interpolation!r}")
        t = np.asarray(times, np.float64).reshape(-1)
        if t.size < 1 or not np.all(np.isfinite(t)):
            raise ValueError("times must be at least one finite number")
        if t.size > 1 and not np.all(np.diff(t) > 0):
            k = int(np.argmax(~(np.diff(t) > 0))) + 1
            raise ValueError(f"times must increase strictly: key {k} at {float(t[k])!r} s "
                             f"follows {float(t[k - 1])!r} s")
        v = np.asarray(values, np.float64)
        d = _WIDTH.get(path, v.shape[-1] if v.ndim else 0)
        if path == "weights" and d < 1:
            raise ValueError("weights values need one column per morph target")
        want = (t.size, 3, d) if interpolation == "cubicspline" else (t.size, d)
        if v.shape != want:
            raise ValueError(f"{path} values must have shape {want}, got {v.shape}")
        if not np.all(np.isfinite(v)) or np.any(np.abs(v) > MAX_VALUE):
            raise ValueError(f"{path} values must be finite and at most {MAX_VALUE:g} in "
                             "magnitude")
        if path == "rotation":
            keys = v[:, 1] if interpolation == "cubicspline" else v
            if np.any(np.max(np.abs(keys), axis=-1) < 1e-12):
                raise ValueError("rotation keys must be non-zero quaternions")
            if interpolation != "cubicspline":  # unit keys (the same rotations)
                v = v / np.linalg.norm(v, axis=-1, keepdims=True)
        self.node, self.path, self.interpolation = node, path, interpolation
        self.times, self.values = t, v

    @property
    def attribute(self) -> str:
        """The node attribute the track sets ("position", "rotation" or "scale")."""
        return _ATTR[self.path]

    @property
    def start(self) -> float:
        return float(self.times[0])

    @property
    def end(self) -> float:
        return float(self.times[-1])

    def _key(self, k: int) -> np.ndarray:
        return self.values[k, 1] if self.interpolation == "cubicspline" else self.values[k]

    def value_at(self, t: float) -> np.ndarray:
        """(D,) float64 value at time ``t`` seconds (a unit quaternion for rotations):
        the one sampling function of every channel kind."""
        t = float(t)
        if not math.isfinite(t):
            raise ValueError(f"time must be finite, got {t}")
        times = self.times
        if t <= times[0] or times.size == 1:
            v = self._key(0).copy()
        elif t >= times[-1]:
            v = self._key(times.size - 1).copy()
        else:
            k = int(np.searchsorted(times, t, side="right")) - 1
            td = times[k + 1] - times[k]
            u = (t - times[k]) / td
            if self.interpolation == "step":
                v = self._key(k).copy()
            elif self.interpolation == "linear":
                a, b = self.values[k], self.values[k + 1]
                v = slerp(a, b, u) if self.path == "rotation" else a + (b - a) * u
            else:
                u2, u3 = u * u, u * u * u
                vk, bk = self.values[k, 1], self.values[k, 2]
                ak1, vk1 = self.values[k + 1, 0], self.values[k + 1, 1]
                v = ((2 * u3 - 3 * u2 + 1) * vk + td * (u3 - 2 * u2 + u) * bk
                     + (-2 * u3 + 3 * u2) * vk1 + td * (u3 - u2) * ak1)
        if self.path == "rotation":
            big = float(np.max(np.abs(v)))
            if not big > 1e-150:
                return np.array([0.0, 0.0, 0.0, 1.0])
            v = v / big
            v = v / float(np.linalg.norm(v))
        return v

    def values_at(self, times) -> np.ndarray:
        """(K, D) float64 values at K times (seconds) at once: ``value_at`` of each,
        vectorised (one pass whatever K; unit quaternions for rotations, the
        shortest-arc slerp falling back to a normalised lerp for near-parallel keys as
        ``engine.scene.transforms.slerp`` does). Raises ValueError for a non-finite
        time."""
        t = np.asarray(times, np.float64).reshape(-1)
        if not np.all(np.isfinite(t)):
            raise ValueError("times must be finite")
        keys, n = self.times, self.times.size
        if n == 1:
            v = np.repeat(self._key(0)[None], t.size, axis=0)
        else:
            k = np.clip(np.searchsorted(keys, t, side="right") - 1, 0, n - 2)
            td = keys[k + 1] - keys[k]
            u = np.clip((t - keys[k]) / td, 0.0, 1.0)[:, None]
            if self.interpolation == "step":
                v = self.values[k]
            elif self.interpolation == "linear":
                a, b = self.values[k], self.values[k + 1]
                v = _slerp_many(a, b, u) if self.path == "rotation" else a + (b - a) * u
            else:
                u2, u3, tdc = u * u, u * u * u, td[:, None]
                v = ((2 * u3 - 3 * u2 + 1) * self.values[k, 1]
                     + tdc * (u3 - 2 * u2 + u) * self.values[k, 2]
                     + (-2 * u3 + 3 * u2) * self.values[k + 1, 1]
                     + tdc * (u3 - u2) * self.values[k + 1, 0])
            # outside the keys: the first and last values themselves, as value_at
            v = np.where((t <= keys[0])[:, None], self._key(0), v)
            v = np.where((t >= keys[-1])[:, None], self._key(n - 1), v)
        if self.path == "rotation":
            big = np.max(np.abs(v), axis=1, keepdims=True)
            ok = big > 1e-150
            v = np.where(ok, v / np.where(ok, big, 1.0), [0.0, 0.0, 0.0, 1.0])
            v = v / np.linalg.norm(v, axis=1, keepdims=True)
        return v

    def apply(self, t: float):
        """Set the node's property to ``value_at(t)``."""
        setattr(self.node, self.attribute, self.value_at(t))

    def __repr__(self) -> str:
        return (f"TransformTrack({self.node.name!r}, {self.path}, {self.times.size} keys, "
                f"{self.interpolation}, {self.start:g}-{self.end:g} s)")


class Clip:
    """A named set of tracks on one clock (a glTF animation).

    Args:
        name: label (the glTF animation's name, or "animation N").
        tracks: ``TransformTrack`` objects.

    ``duration`` is the latest key time of any track (0 without tracks). ``apply(t)``
    poses every animated node at ``t`` seconds (clamped per track to its keys, never
    looped here: playback decides about looping). ``reset()`` restores the rest pose
    the nodes had when the clip was made.
    """

    def __init__(self, name: str, tracks=()):
        self.name = str(name)
        self.tracks: list[TransformTrack] = list(tracks)
        for tr in self.tracks:
            if not isinstance(tr, TransformTrack):
                raise TypeError(f"tracks must be TransformTrack objects, got {type(tr).__name__}")
        self._rest = {}
        for tr in self.tracks:
            attr = tr.attribute
            self._rest.setdefault((id(tr.node), attr), (tr.node, attr, getattr(tr.node, attr)))

    def __setstate__(self, state):
        # the rest values are keyed by id(node): a copy in another process has new ids
        self.__dict__.update(state)
        self._rest = {(id(n), a): (n, a, v) for n, a, v in state["_rest"].values()}

    @property
    def duration(self) -> float:
        return max((tr.end for tr in self.tracks), default=0.0)

    @property
    def nodes(self) -> list[Node]:
        """The animated nodes, each once, in track order."""
        seen, out = set(), []
        for tr in self.tracks:
            if id(tr.node) not in seen:
                seen.add(id(tr.node))
                out.append(tr.node)
        return out

    def apply(self, t: float):
        """Pose every animated node at time ``t`` seconds."""
        for tr in self.tracks:
            tr.apply(t)

    def sample(self, t: float) -> dict:
        """The pose at ``t`` seconds without setting it: {(id(node), attribute): (node,
        attribute, path, value)} with each track's ``value_at(t)`` (float64; a unit
        quaternion for "rotation"). A property animated by several tracks keeps the
        last one's value, as ``apply`` would."""
        return {(id(tr.node), tr.attribute): (tr.node, tr.attribute, tr.path, tr.value_at(t))
                for tr in self.tracks}

    def sample_many(self, times) -> dict:
        """The poses at K times at once: {(id(node), attribute): (node, attribute, path,
        (K, D) values)} (``TransformTrack.values_at``), e.g. one clip time per instance
        of an ``engine.scene.Instances`` node."""
        return {(id(tr.node), tr.attribute): (tr.node, tr.attribute, tr.path,
                                              tr.values_at(times)) for tr in self.tracks}

    def rest_value(self, node: Node, attribute: str):
        """The value ``node.<attribute>`` had when the clip was made (what ``reset``
        restores). Raises KeyError when no track of the clip animates it."""
        return self._rest[(id(node), attribute)][2]

    def reset(self):
        """Put every animated property back to its rest value."""
        for node, attr, value in self._rest.values():
            setattr(node, attr, value)

    def __repr__(self) -> str:
        return f"Clip({self.name!r}, {len(self.tracks)} tracks, {self.duration:g} s)"
