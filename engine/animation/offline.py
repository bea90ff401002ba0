"""Offline rendering of a camera motion to frames: frame k is rendered at exactly
t = k / fps seconds (never from the wall clock), so two renders of the same scene and
motion give identical frames.

A motion is anything with ``apply(camera, t)`` (``CameraPath``, ``CameraScript``); a
``CameraScript`` generator that returns ends the render early. Ctrl-C (SIGINT) and
SIGTERM stop after the current frame: the writer is closed, so the frames written so far
are kept in a finalised file. (In the main thread the first signal only sets a flag
checked between frames, so a frame is never cut half-way into the encoder; a second one
interrupts at once. A ``KeyboardInterrupt`` raised anywhere in the loop is handled like
the first signal.) Any other error aborts the writer: nothing new is left at the output.

Renders are limited to ``MAX_FRAMES`` (1,000,000) frames: more is almost certainly a
mistyped fps or duration (at 30 fps it is over 9 hours of video).
"""

from __future__ import annotations

import math
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import EngineError
from ..io.video import FrameWriter
from ..progress import Progress
from ..render.renderer import Renderer
from .camera_path import CameraPath, CameraScript

__all__ = ["MAX_FRAMES", "RenderResult", "check_frame_count", "fit_clip_to_path", "frame_count",
           "frame_times", "render_motion"]

MAX_FRAMES = 1_000_000


@dataclass
class RenderResult:
    """What ``render_motion`` did.

    frames: frames written; requested: frames asked for; interrupted: stopped by
    Ctrl-C, SIGTERM or a KeyboardInterrupt; elapsed: wall seconds; path: the output;
    stop_signal: the signal number that stopped it (signal.SIGINT / SIGTERM), None
    when not stopped by a signal.
    """

    frames: int
    requested: int
    interrupted: bool
    elapsed: float
    path: object
    stop_signal: int | None = None

    def _repr_mimebundle_(self, include=None, exclude=None):
        """In Jupyter the written clip shows inline (an MP4 as an HTML5 video, a GIF as
        an animated image, a frames folder as its first frame); see engine.io.embed."""
        from ..io.embed import media_mimebundle

        try:
            return media_mimebundle(self.path)
        except FileNotFoundError:
            return {"text/plain": repr(self)}


def check_frame_count(n) -> int:
    """``n`` as an int if 1 <= n <= MAX_FRAMES; else EngineError saying the limit."""
    if not 1 <= n <= MAX_FRAMES:
        raise EngineError(f"{n:,} frames is outside the limit of 1 to {MAX_FRAMES:,} "
                          f"frames")
    return int(n)


def frame_count(duration: float, fps: float) -> int:
    """Frames in ``duration`` seconds at ``fps``: round(duration * fps), at least 1.

    Frames cover [0, duration): the last frame is at (n - 1) / fps, so a looping move
    (a full orbit) does not show its first pose twice. Raises ValueError for a duration
    or fps that is not positive and finite, EngineError when the count is over
    MAX_FRAMES (also when it overflows, e.g. 1e308 s).
    """
    duration, fps = float(duration), float(fps)
    if not (duration > 0 and math.isfinite(duration)):
        raise ValueError(f"duration must be positive and finite, got {duration}")
    if not (fps > 0 and math.isfinite(fps)):
        raise ValueError(f"fps must be positive and finite, got {fps}")
    exact = duration * fps  # may be inf: compare before rounding
    if exact >= MAX_FRAMES + 0.5:
        raise EngineError(f"{duration:g} s at {fps:g} fps is {exact:.3g} frames, over the "
                          f"limit of {MAX_FRAMES:,} frames")
    return max(1, round(exact))


def frame_times(n: int, fps: float) -> np.ndarray:
    """(n,) float64 times k / fps, seconds."""
    return np.arange(int(n)) / float(fps)


def fit_clip_to_path(camera, bounds, path: CameraPath):
    """Set near/far so the box ``bounds`` ((2, 3) world) stays inside the clip range
    from every keyframe position of ``path`` (with margin for the curve between keys)."""
    b = np.asarray(bounds, dtype=np.float64)
    center = 0.5 * (b[0] + b[1])
    radius = max(0.5 * float(np.linalg.norm(b[1] - b[0])), 1e-6)
    far_key = float(np.max(np.linalg.norm(path.positions - center, axis=1)))
    far = 1.5 * (far_key + radius)
    camera.set_clip(far * 1e-4, far)


class _StopOnSignals:
    """First SIGINT or SIGTERM: remember it (the loop stops before the next frame);
    a second one: raise KeyboardInterrupt at once. Only in the main thread (where signal
    handlers live)."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self):
        self.signum = None
        self._old = {}
        if threading.current_thread() is threading.main_thread():
            for s in self.SIGNALS:
                self._old[s] = signal.signal(s, self._handle)

    def _handle(self, signum, frame):
        if self.signum is not None:
            raise KeyboardInterrupt
        self.signum = signum

    def restore(self):
        for s, old in self._old.items():
            # None: the previous handler was not set from Python; use Python's default.
            if old is None:
                old = signal.default_int_handler if s == signal.SIGINT else signal.SIG_DFL
            signal.signal(s, old)
        self._old = {}


def render_motion(renderer: Renderer, motion, fps: float, frames: int, writer: FrameWriter,
                  progress: Progress | None = None,
                  on_frame: Callable[[int, object], None] | None = None) -> RenderResult:
    """Render ``frames`` frames of ``motion`` at ``fps`` into ``writer`` and close it.

    Args:
        renderer: renders ``renderer.camera``; its size must match the writer's.
        motion: object with ``apply(camera, t)``; a CameraScript is reset first.
        frames: 1 .. MAX_FRAMES.
        writer: a FrameWriter (``write``, ``close``, ``abort``).
        on_frame: called as ``on_frame(k, frame)`` after frame k is written (for
            previews and tests; raising KeyboardInterrupt there stops the render).

    Returns a RenderResult. Ctrl-C, SIGTERM and KeyboardInterrupt stop the render and
    the writer is closed (result.interrupted, result.stop_signal). Any other error
    aborts the writer (an earlier output file is left as it was) and propagates; so do
    errors from closing it (OutputError). A frame count outside 1..MAX_FRAMES raises
    EngineError (the writer is aborted).
    """
    if tuple(renderer.size) != tuple(writer.size):
        writer.abort()
        raise ValueError(f"renderer size {renderer.size} differs from writer size {writer.size}")
    try:
        frames = check_frame_count(frames)
    except EngineError:
        writer.abort()
        raise
    if isinstance(motion, CameraScript):
        motion.reset()
    t0 = time.perf_counter()
    interrupted = False
    stop = _StopOnSignals()
    try:
        try:
            for k in range(frames):
                if stop.signum is not None:
                    raise KeyboardInterrupt
                t = k / float(fps)
                if motion.apply(renderer.camera, t) is False:
                    break  # a generator script has finished
                frame = renderer.render()
                writer.write(frame.color)
                if progress is not None:
                    progress.update(k + 1)
                if on_frame is not None:
                    on_frame(k, frame)
        except KeyboardInterrupt:
            interrupted = True
        except BaseException:
            writer.abort()
            raise
        finally:
            if progress is not None:
                progress.finish()
        # Still under the handlers: a signal while the encoder finishes is only noted.
        writer.close()
    finally:
        stop.restore()
    return RenderResult(writer.frames, frames, interrupted, time.perf_counter() - t0,
                        writer.path, stop.signum if interrupted else None)
