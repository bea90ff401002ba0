"""Playing a file's animation clips (``engine.scene.clips.Clip``, e.g. a glTF animation)
in offline renders, in windows, in notebooks and in an ``App``: play, loop, speed and
cross-fades between clips (walk -> run).

A clip is a pure function of time, so playback only decides which time to show::

    ClipPlayer     a schedule of clips on one clock: play(clip, loop=, speed=) cuts to a
                   clip, crossfade(clip, seconds) blends into it; tick(dt) advances the
                   clock and poses the nodes; pose_at(t) is the pose at any clock time.
                   It also wraps a window's controller object (every other attribute is
                   the controller's), so a window's events still reach it
    ClipMotion     a motion (``apply(camera, t)``, ``duration``) for
                   ``engine.animation.offline.render_motion``: a clip or a ClipPlayer's
                   schedule posed at t, then an optional camera motion
    play_sequence  clips one after another, each cross-fading into the next over the
                   end of the one before (the CLI's ``--animation N,M``)
    play_in(app)   a ClipPlayer advanced after every fixed update of an
                   ``engine.game.App`` at the app's simulated time (a headless run with
                   the same inputs gives the same frames)
    clip_bounds    the box the clip's geometry sweeps, to frame a camera on all of it

Clip time of a layer started at clock time ``s`` with speed ``v`` from clip time ``o``
is ``c(t) = o + v (t - s)``, wrapped into [0, duration) when looping (``clip_time``),
else held at the clip's ends. A cross-fade over ``T`` seconds started at ``s`` has the
weight ``f = clamp((t - s) / T, 0, 1)`` and blends every animated property of the clip
it leaves (A) and the clip it enters (B), both still playing::

    translation, scale and any other numeric channel   (1 - f) A + f B
    rotation                                           slerp(A, B, f), shortest arc
                                                       (engine.scene.transforms.slerp)

A property only one of the two animates blends against its rest value (the value it had
when the clip was made, ``Clip.rest_value``), so at f = 1 the pose is exactly B's with
everything B does not animate at rest. Fades started before the previous one ended
blend in order (the newest last).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..errors import as_finite
from ..scene.clips import Clip
from ..scene.transforms import slerp

__all__ = ["ClipMotion", "ClipPlayer", "blend_value", "clip_bounds", "clip_time",
           "play_in", "play_sequence"]


def clip_time(clip: Clip, t: float, loop: bool) -> float:
    """The clip time shown at playback time ``t`` (seconds): ``t`` modulo the duration
    when looping, else ``t`` (a clip holds its last pose after its end)."""
    t = float(t)
    d = clip.duration
    if loop and d > 0:
        return math.fmod(t, d) if t >= 0 else d - math.fmod(-t, d)
    return t


def blend_value(path: str, a, b, f: float) -> np.ndarray:
    """One property's value at fade weight ``f`` in [0, 1] between ``a`` and ``b``:
    the shortest-arc slerp of unit quaternions (x, y, z, w) for ``path`` "rotation",
    else the linear blend (1 - f) a + f b (float64, any shape)."""
    if path == "rotation":
        return slerp(np.asarray(a, np.float64), np.asarray(b, np.float64), f)
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return a + (b - a) * f



class _Layer(NamedTuple):
    clip: Clip
    begin: float   # clock time it was started: it counts from then, its fade starts then
    start: float   # clock time its clip time is measured from (moved by speed changes)
    offset: float  # its clip time at ``start``
    speed: float
    loop: bool
    fade: float    # seconds its cross-fade in lasts (0: a cut)

    def time(self, t: float) -> float:
        return clip_time(self.clip, self.offset + self.speed * (t - self.start), self.loop)

    def weight(self, t: float) -> float:
        if self.fade <= 0:
            return 1.0 if t >= self.begin else 0.0
        return min(1.0, max(0.0, (t - self.begin) / self.fade))


class ClipPlayer:
    """Plays clips on one clock, with loop, speed and cross-fades (see the module
    docstring for the formulas).

    Args:
        clip: the first ``Clip`` to play from clip time 0, or None (play one later).
        inner: an optional window controller the player wraps: its ``tick(dt)`` runs
            after the pose, and every attribute the player lacks is the controller's.
        loop: repeat ``clip`` (default True).
        speed: clip seconds per clock second (2 plays twice as fast, 0 holds, a
            negative speed plays backwards); finite.

    Attributes:
        clock: the player's time in seconds (what ``tick`` advances).
        playing: False pauses the clock (``tick`` still poses and ticks ``inner``).
        inner: the wrapped controller or None.

    ``clip``, ``time`` (the current clip's unwrapped clip time), ``speed`` and ``loop``
    describe the newest clip; ``fade`` is its cross-fade weight now (1 when none is in
    progress). ``play``, ``crossfade`` and the ``speed``/``time`` setters start at
    ``clock`` unless ``at`` gives another clock time (a schedule for offline videos,
    ``ClipMotion``), and the pose at clock time t is ``pose_at(t)``: a pure function of
    the schedule.

    Raises:
        TypeError: a clip that is not an ``engine.scene.clips.Clip``.
        ValueError: a non-finite speed, time or ``at``; a negative or non-finite fade.
    """

    def __init__(self, clip: Clip | None = None, inner=None, loop: bool = True,
                 speed: float = 1.0):
        self.inner = inner
        self.clock = 0.0
        self.playing = True
        self._layers: list[_Layer] = []
        if clip is not None:
            self.play(clip, loop=loop, speed=speed)

    # --- the schedule ------------------------------------------------------------------
    def _add(self, clip, seconds, loop, speed, at, offset=0.0):
        if not isinstance(clip, Clip):
            raise TypeError(f"clip must be an engine.scene.clips.Clip, got {type(clip).__name__}")
        start = self.clock if at is None else as_finite(at, "at")
        seconds = as_finite(seconds, "seconds")
        if seconds < 0:
            raise ValueError(f"a cross-fade lasts 0 seconds or more, got {seconds}")
        layer = _Layer(clip, start, start, as_finite(offset, "time"), as_finite(speed, "speed"),
                       bool(loop), seconds)
        # a layer scheduled before later ones is placed by its start (stable)
        k = len(self._layers)
        while k > 0 and self._layers[k - 1].begin > start:
            k -= 1
        self._layers.insert(k, layer)
        if start <= self.clock:
            self.apply_at(self.clock)
        return self

    def play(self, clip: Clip, loop: bool = True, speed: float = 1.0, at: float | None = None,
             time: float = 0.0) -> ClipPlayer:
        """Cut to ``clip`` at clock time ``at`` (default now) from clip time ``time``.
        Properties the previous clips animate and ``clip`` does not go back to rest.
        Returns the player."""
        return self._add(clip, 0.0, loop, speed, at, time)

    def crossfade(self, clip: Clip, seconds: float, loop: bool = True, speed: float = 1.0,
                  at: float | None = None, time: float = 0.0) -> ClipPlayer:
        """Blend from what plays into ``clip`` (from clip time ``time``) over
        ``seconds`` of clock time starting at ``at`` (default now); both keep playing
        during the fade. With nothing playing yet it is ``play``. Returns the player."""
        if not self._layers:
            return self.play(clip, loop, speed, at, time)
        return self._add(clip, seconds, loop, speed, at, time)

    def _current(self) -> _Layer:
        if not self._layers:
            raise AttributeError("nothing is playing: call play(clip) first")
        return self._layers[-1]

    @property
    def clip(self) -> Clip | None:
        return self._layers[-1].clip if self._layers else None

    @property
    def loop(self) -> bool:
        return self._current().loop

    @property
    def speed(self) -> float:
        return self._current().speed

    @speed.setter
    def speed(self, value: float):
        # the same clip continues from where it is now, at the new speed (a cross-fade
        # into it goes on)
        cur = self._current()
        now = cur.offset + cur.speed * (self.clock - cur.start)
        self._layers[-1] = cur._replace(start=self.clock, offset=now,
                                        speed=as_finite(value, "speed"))

    @property
    def time(self) -> float:
        """The newest clip's clip time (seconds, before looping wraps it)."""
        cur = self._current()
        return cur.offset + cur.speed * (self.clock - cur.start)

    @time.setter
    def time(self, value: float):
        cur = self._current()
        self._layers[-1] = cur._replace(start=self.clock, offset=as_finite(value, "time"))
        self.apply_at(self.clock)

    @property
    def fade(self) -> float:
        """The newest clip's cross-fade weight at ``clock`` (1 when it is complete)."""
        return self._current().weight(self.clock) if self._layers else 1.0

    @property
    def duration(self) -> float:
        """Clock time at which the newest clip ends its first pass from where it
        started (``start + (duration - time) / speed``; at its start for speed 0, and
        for a backwards speed when it reaches clip time 0)."""
        if not self._layers:
            return 0.0
        cur = self._layers[-1]
        if cur.speed > 0:
            return cur.start + max(0.0, cur.clip.duration - cur.offset) / cur.speed
        if cur.speed < 0:
            return cur.start + max(0.0, cur.offset) / -cur.speed
        return cur.start

    # --- poses -------------------------------------------------------------------------
    def pose_at(self, t: float) -> dict:
        """The blended pose at clock time ``t`` without setting it:
        {(id(node), attribute): (node, attribute, value)}. Layers scheduled after
        ``t`` do not count yet."""
        t = as_finite(t, "t")
        layers = [la for la in self._layers if la.begin <= t]
        # the newest layer whose fade is complete covers every layer before it: those
        # only send the properties they animate back to rest
        base = max((i for i, la in enumerate(layers) if la.weight(t) >= 1.0), default=0)
        pose: dict = {}  # key -> [node, attribute, path, value, rest]
        for la in layers[:base]:
            for tr in la.clip.tracks:
                rest = la.clip.rest_value(tr.node, tr.attribute)
                pose[(id(tr.node), tr.attribute)] = [tr.node, tr.attribute, tr.path, rest,
                                                     rest]
        for i, la in enumerate(layers[base:]):
            w = 1.0 if i == 0 else la.weight(t)
            sample = la.clip.sample(la.time(t))
            for key, entry in pose.items():
                if key not in sample and w > 0:  # animated before, not by this clip
                    entry[3] = entry[4] if w >= 1.0 else blend_value(entry[2], entry[3],
                                                                     entry[4], w)
            for key, (node, attr, path, value) in sample.items():
                if key in pose:
                    entry = pose[key]
                    entry[3] = value if w >= 1.0 else blend_value(path, entry[3], value, w)
                else:
                    rest = la.clip.rest_value(node, attr)
                    pose[key] = [node, attr, path,
                                 value if w >= 1.0 else blend_value(path, rest, value, w),
                                 rest]
        return {k: (e[0], e[1], e[3]) for k, e in pose.items()}

    def apply_at(self, t: float):
        """Set every animated property to ``pose_at(t)``."""
        for node, attr, value in self.pose_at(t).values():
            setattr(node, attr, value)

    def advance_to(self, clock: float):
        """Set ``clock`` and pose the nodes there; layers wholly covered by a finished
        cross-fade are then dropped (their rest values were just set)."""
        self.clock = as_finite(clock, "clock")
        self.apply_at(self.clock)
        done = [i for i, la in enumerate(self._layers)
                if la.begin <= self.clock and la.weight(self.clock) >= 1.0]
        if done and done[-1] > 0:
            del self._layers[:done[-1]]

    def tick(self, dt: float):
        """Advance the clock by ``dt`` seconds (when ``playing``), pose the nodes, then
        tick the wrapped controller."""
        self.advance_to(self.clock + (float(dt) if self.playing else 0.0))
        if self.inner is not None and hasattr(self.inner, "tick"):
            self.inner.tick(dt)

    def __getattr__(self, name):
        if name in ("loop", "speed", "time"):  # their property found nothing playing
            raise AttributeError(f"ClipPlayer.{name}: nothing is playing: call play(clip) "
                                 "first")
        inner = self.__dict__.get("inner")
        if inner is None or name.startswith("_"):
            raise AttributeError(name)
        return getattr(inner, name)


class ClipMotion:
    """A clip or a ClipPlayer's schedule (and optionally a camera motion) as one motion
    for ``render_motion``: frame t shows ``pose_at(t)``, a pure function of t.

    Args:
        clip: the ``Clip`` to play, or a ``ClipPlayer`` whose schedule (``play`` and
            ``crossfade`` with ``at=``) is played from clock time 0.
        camera_motion: an object with ``apply(camera, t)`` (``CameraPath``,
            ``CameraScript``) or None for a still camera.
        loop: repeat the clip when the render is longer than it (a Clip only).
        speed: clip seconds per video second (a Clip only).

    ``duration`` is the longer of the clip's (its schedule's ``duration``) and the
    camera motion's.
    """

    def __init__(self, clip, camera_motion=None, loop: bool = False, speed: float = 1.0):
        if isinstance(clip, ClipPlayer):
            self.player = clip
        elif isinstance(clip, Clip):
            self.player = ClipPlayer(clip, loop=loop, speed=speed)
        else:
            raise TypeError(f"clip must be an engine.scene.clips.Clip or a ClipPlayer, got "
                            f"{type(clip).__name__}")
        self.camera_motion, self.loop = camera_motion, bool(loop)

    @property
    def clip(self) -> Clip | None:
        return self.player.clip

    @property
    def duration(self) -> float:
        other = getattr(self.camera_motion, "duration", None) or 0.0
        return max(self.player.duration, float(other))

    def reset(self):
        if hasattr(self.camera_motion, "reset"):
            self.camera_motion.reset()

    def apply(self, camera, t: float):
        self.player.apply_at(t)
        if self.camera_motion is not None:
            return self.camera_motion.apply(camera, t)
        return True


def play_sequence(clips, crossfade: float = 0.5, speed: float = 1.0,
                  loop: bool = True) -> ClipPlayer:
    """A ClipPlayer scheduled to play ``clips`` one after another from clock 0, at
    ``speed``: clip k + 1 starts ``min(crossfade, length of clip k)`` seconds of clock
    time before clip k ends (length = duration / speed) and cross-fades in over that
    time, so the fade ends exactly when clip k does. Every clip but the last plays once;
    the last loops when ``loop``. ``duration`` is the clock time the last clip's first
    pass ends. Raises ValueError for no clips, a speed that is not > 0 or a negative
    crossfade."""
    clips = list(clips)
    if not clips:
        raise ValueError("play_sequence needs at least one clip")
    speed, crossfade = as_finite(speed, "speed"), as_finite(crossfade, "crossfade")
    if speed <= 0:
        raise ValueError(f"speed must be > 0, got {speed}")
    if crossfade < 0:
        raise ValueError(f"crossfade must be >= 0 seconds, got {crossfade}")
    last = len(clips) - 1
    player = ClipPlayer(clips[0], loop=loop and last == 0, speed=speed)
    end = clips[0].duration / speed
    for k, clip in enumerate(clips[1:], 1):
        fade = min(crossfade, clips[k - 1].duration / speed)
        player.crossfade(clip, fade, loop=loop and k == last, speed=speed, at=end - fade)
        end += clip.duration / speed - fade
    return player


def play_in(app, clip: Clip | None = None, loop: bool = True,
            speed: float = 1.0) -> ClipPlayer:
    """A ClipPlayer (playing ``clip`` when given) advanced after every fixed update of
    ``app`` (an ``engine.game.App``), after the app's own ``on_update``, to the
    simulated time since this call at the end of that update (``app.time + dt``
    minus ``app.time`` now). The first pose (clock 0) is applied at once. Call
    ``crossfade``/``play`` on the returned player from the game's update to change
    clips. Returns the player."""
    player = ClipPlayer(clip, loop=loop, speed=speed)
    previous, t0 = app.on_update, app.time

    def on_update(dt):
        previous(dt)
        player.advance_to(app.time + dt - t0)

    app.on_update = on_update
    return player


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
