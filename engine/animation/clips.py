"""Playing a file's animation clips (``engine.scene.clips.Clip``, e.g. a glTF animation)
in offline renders, in windows and in an ``App``.

A clip is a pure function of time, so playback only decides which time to show::

    ClipMotion     a motion (``apply(camera, t)``, ``duration``) for
                   ``engine.animation.offline.render_motion``: poses the clip at t (looped
                   or held at its end) and then runs an optional camera motion
    ClipPlayer     wraps a window's controller object: each ``tick(dt)`` advances a clock
                   and poses the clip (looping), everything else is passed through
    play_in(app)   poses the clip after every fixed update of an ``engine.game.App`` at
                   the app's simulated time (so a headless run with the same inputs gives
                   the same frames)
    clip_bounds    the box the clip's geometry sweeps, to frame a camera on all of it
"""

from __future__ import annotations

import math

import numpy as np

from ..scene.clips import Clip

__all__ = ["ClipMotion", "ClipPlayer", "clip_bounds", "clip_time", "play_in"]


def clip_time(clip: Clip, t: float, loop: bool) -> float:
    """The clip time shown at playback time ``t`` (seconds): ``t`` modulo the duration
    when looping, else ``t`` (a clip holds its last pose after its end)."""
    t = float(t)
    d = clip.duration
    if loop and d > 0:
        return math.fmod(t, d) if t >= 0 else d - math.fmod(-t, d)
    return t


class ClipMotion:
    """A clip (and optionally a camera motion) as one motion for ``render_motion``.

    Args:
        clip: the ``Clip`` to play.
        camera_motion: an object with ``apply(camera, t)`` (``CameraPath``,
            ``CameraScript``) or None for a still camera.
        loop: repeat the clip when the render is longer than it.

    ``duration`` is the longer of the clip's and the camera motion's.
    """

    def __init__(self, clip: Clip, camera_motion=None, loop: bool = False):
        if not isinstance(clip, Clip):
            raise TypeError(f"clip must be an engine.scene.clips.Clip, got {type(clip).__name__}")
        self.clip, self.camera_motion, self.loop = clip, camera_motion, bool(loop)

    @property
    def duration(self) -> float:
        other = getattr(self.camera_motion, "duration", None) or 0.0
        return max(self.clip.duration, float(other))

    def reset(self):
        if hasattr(self.camera_motion, "reset"):
            self.camera_motion.reset()

    def apply(self, camera, t: float):
        self.clip.apply(clip_time(self.clip, t, self.loop))
        if self.camera_motion is not None:
            return self.camera_motion.apply(camera, t)
        return True


class ClipPlayer:
    """A window controller wrapper that plays ``clip`` on its own clock (looping).

    Every attribute but ``tick`` is the wrapped controller's, so the window's events
    still reach it. ``time`` is the playback clock in seconds; ``playing`` pauses it.
    """

    def __init__(self, clip: Clip, inner=None, loop: bool = True):
        self.clip, self.inner, self.loop = clip, inner, loop
        self.time = 0.0
        self.playing = True
        clip.apply(0.0)

    def tick(self, dt: float):
        if self.playing:
            self.time += float(dt)
        self.clip.apply(clip_time(self.clip, self.time, self.loop))
        if self.inner is not None and hasattr(self.inner, "tick"):
            self.inner.tick(dt)

    def __getattr__(self, name):
        inner = self.__dict__.get("inner")
        if inner is None:
            raise AttributeError(name)
        return getattr(inner, name)


def play_in(app, clip: Clip, loop: bool = True):
    """Pose ``clip`` after every fixed update of ``app`` (an ``engine.game.App``) at the
    end of that update (``app.time + dt``), after the app's own ``on_update``. The
    first pose (t = 0) is applied at once. Returns the clip."""
    previous = app.on_update

    def on_update(dt):
        previous(dt)
        clip.apply(clip_time(clip, app.time + dt, loop))

    app.on_update = on_update
    clip.apply(0.0)
    return clip


def clip_bounds(root, clip: Clip, samples: int = 32):
    """(2, 3) world box of the visible geometry under ``root`` over the clip (sampled at
    ``samples`` evenly spaced times and every key time, at most 4,096 poses), or None.
    The clip is left at t = 0."""
    times = {0.0, clip.duration}
    times.update(np.linspace(0.0, clip.duration, max(2, int(samples))).tolist())
    for tr in clip.tracks:
        times.update(tr.times.tolist())
    times = sorted(t for t in times if math.isfinite(t))
    if len(times) > 4096:
        times = [times[int(i)] for i in np.linspace(0, len(times) - 1, 4096)]
    lo = hi = None
    for t in times:
        clip.apply(t)
        b = root.bounds() if hasattr(root, "bounds") else None
        if b is None:
            continue
        lo = b[0] if lo is None else np.minimum(lo, b[0])
        hi = b[1] if hi is None else np.maximum(hi, b[1])
    clip.apply(0.0)
    return None if lo is None else np.stack([lo, hi])
