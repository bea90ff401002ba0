"""One clip played by every instance of an ``engine.scene.Instances`` node, each at its
own clip time: a crowd of animated copies without one Python call per instance.

``InstanceClips(instances, clip)`` keeps, for each of the node's K instances, a clip time
``times[i]``, a speed ``speeds[i]`` and a placement (``positions[i]``, ``rotations[i]``,
``scales[i]``: where the copy stands, in the Instances node's frame). The clip animates
one node of a model (its translation t, rotation r and scale s; what it does not animate
keeps that node's own value); ``apply()`` samples the clip at all K times at once
(``engine.scene.clips.Clip.sample_many``) and writes each instance's transform as the
placement composed with the animated pose,
``T(p_i) R(q_i) S(s_i) T(t) R(r) S(s) = T(p_i + R(q_i) (s_i * t)) R(q_i r) S(s_i * s)``,
which is exact when ``s_i`` is uniform or the pose does not rotate (otherwise the
product is not a translation-rotation-scale and ``apply`` refuses it). Looping wraps each
time as ``engine.animation.clips.clip_time`` does; without looping a copy holds the
clip's last pose.

The per-instance times are the part instanced skinned characters share: a skinned
model's joint poses are sampled the same way, K times at once.
"""

from __future__ import annotations

import numpy as np

from ..scene.clips import Clip
from ..scene.instances import Instances
from ..scene.transforms import _quat_mul_many, quat_to_matrices

__all__ = ["InstanceClips", "per_copy", "wrapped_times"]


def wrapped_times(clip: Clip, times: np.ndarray, loop: bool) -> np.ndarray:
    """(K,) clip times shown for playback times ``times``: wrapped into [0, duration)
    when looping (negative times from the end, as ``engine.animation.clips.clip_time``),
    else a copy of them."""
    d = clip.duration
    if loop and d > 0:
        return np.where(times >= 0, np.fmod(times, d), d - np.fmod(-times, d))
    return np.array(times, np.float64)


def per_copy(value, k: int, name: str) -> np.ndarray:
    """``value`` (one number or K numbers) as a (K,) float64 array; ValueError naming
    ``name`` for another shape or a non-finite value."""
    try:
        a = np.array(np.broadcast_to(np.asarray(value, np.float64), (k,)))
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number or {k} numbers, got {value!r}") from None
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite")
    return a


class InstanceClips:
    """Plays ``clip`` on every instance of ``instances`` at its own time (see the module
    docstring for the composition).

    Args:
        instances: the ``engine.scene.Instances`` node whose copies move.
        clip: an ``engine.scene.clips.Clip`` that animates one node (e.g. a loaded
            model's animated part, whose geometry the Instances node draws).
        times: (K,) starting clip times in seconds (default 0 for all), or one number.
        speeds: (K,) clip seconds per second of ``tick``, or one number (default 1).
        loop: wrap the times into the clip's duration.

    Attributes (K = ``instances.capacity`` when made; edit the arrays in place):
        times (K,) float64 and speeds (K,) float64; the placements positions (K, 3),
        rotations (K, 4) and scales (K, 3) float64, copied from the Instances node.

    Raises:
        TypeError: ``instances`` is not an Instances node, ``clip`` not a Clip.
        ValueError: a clip that animates no node or more than one (named); times or
            speeds that are not finite or not K of them.
    """

    def __init__(self, instances: Instances, clip: Clip, times=None, speeds=1.0,
                 loop: bool = True):
        if not isinstance(instances, Instances):
            raise TypeError(f"instances must be an engine.scene.Instances node, got "
                            f"{type(instances).__name__}")
        if not isinstance(clip, Clip):
            raise TypeError(f"clip must be an engine.scene.clips.Clip, got {type(clip).__name__}")
        nodes = clip.nodes
        if len(nodes) != 1:
            names = ", ".join(repr(n.name) for n in nodes) or "none"
            raise ValueError(f"{instances.name}: InstanceClips plays a clip of one node on "
                             f"the instances; {clip.name!r} animates {len(nodes)} ({names})")
        k = instances.capacity
        self.instances, self.clip, self.loop = instances, clip, bool(loop)
        self.node = nodes[0]
        self.times = per_copy(0.0 if times is None else times, k, "times")
        self.speeds = per_copy(speeds, k, "speeds")
        self.positions = instances.positions.copy()
        self.rotations = instances.rotations.copy()
        self.scales = instances.scales.copy()
        self._still = {"position": np.asarray(self.node.position, np.float64),
                       "rotation": np.asarray(self.node.rotation, np.float64),
                       "scale": np.asarray(self.node.scale, np.float64)}
        self.apply()

    def clip_times(self) -> np.ndarray:
        """(K,) clip times shown now: ``times`` wrapped into [0, duration) when looping
        (negative times from the end, as ``clip_time``), else as they are."""
        return wrapped_times(self.clip, self.times, self.loop)

    def apply(self):
        """Write every instance's transform: its placement composed with the clip's
        pose at its clip time. Raises ValueError when the Instances node's capacity
        changed since (make a new InstanceClips), or for a rotating pose under a
        non-uniform placement scale (naming the instance)."""
        inst = self.instances
        k = len(self.times)
        if inst.capacity != k:
            raise ValueError(f"{inst.name}: {inst.capacity} instances now, {k} when its "
                             f"InstanceClips was made: make a new one")
        pose = {attr: np.broadcast_to(v, (k, v.size)) for attr, v in self._still.items()}
        for _node, attr, _path, values in self.clip.sample_many(self.clip_times()).values():
            pose[attr] = values
        try:
            turn = quat_to_matrices(self.rotations)  # (K, 3, 3), normalised first
        except ValueError as exc:
            raise ValueError(f"{inst.name}: InstanceClips rotations: {exc}") from None
        q = self.rotations / np.linalg.norm(self.rotations, axis=1, keepdims=True)
        s = self.scales
        rotates = np.abs(np.abs(pose["rotation"][:, 3]) - 1.0) > 1e-12
        uneven = np.ptp(s, axis=1) > 1e-12 * np.max(np.abs(s), axis=1)
        bad = np.flatnonzero(rotates & uneven)
        if bad.size:
            i = int(bad[0])
            raise ValueError(f"{inst.name}: instance {i} has the non-uniform scale "
                             f"{tuple(float(v) for v in s[i])}, and a rotating clip pose "
                             "cannot be composed below it; give it a uniform scale")
        offset = np.einsum("kij,kj->ki", turn, s * pose["position"])
        inst.positions[:] = self.positions + offset
        inst.rotations[:] = _quat_mul_many(q, pose["rotation"])
        inst.scales[:] = s * pose["scale"]

    def tick(self, dt: float):
        """Advance every instance's time by ``speeds * dt`` seconds, then ``apply``."""
        self.times += self.speeds * float(dt)
        self.apply()
