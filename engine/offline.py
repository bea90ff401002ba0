"""Offline rendering of a camera motion to frames: frame k is rendered at exactly
t = k / fps seconds (never from the wall clock), so two renders of the same scene and
motion give identical frames.

A motion is anything with ``apply(camera, t)`` (``CameraPath``, ``CameraScript``); a
``CameraScript`` generator that returns ends the render early. Ctrl-C stops after the
current frame: the writer is closed, so the frames written so far are kept in a
finalised file. (In the main thread the first SIGINT only sets a flag checked between
frames, so a frame is never cut half-way into the encoder; a second Ctrl-C interrupts
at once. A ``KeyboardInterrupt`` raised anywhere in the loop is handled the same way.)
"""

from __future__ import annotations

import math
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .animation import CameraPath, CameraScript
from .io.video import FrameWriter
from .progress import Progress
from .renderer import Renderer

__all__ = ["RenderResult", "fit_clip_to_path", "frame_count", "frame_times", "render_motion"]


@dataclass
class RenderResult:
    """What ``render_motion`` did.

    frames: frames written; requested: frames asked for; interrupted: stopped by
    Ctrl-C (KeyboardInterrupt); elapsed: wall seconds; path: the output.
    """

    frames: int
    requested: int
    interrupted: bool
    elapsed: float
    path: object


def frame_count(duration: float, fps: float) -> int:
    """Frames in ``duration`` seconds at ``fps``: round(duration * fps), at least 1.

    Frames cover [0, duration): the last frame is at (n - 1) / fps, so a looping move
    (a full orbit) does not show its first pose twice.
    """
    duration, fps = float(duration), float(fps)
    if not (duration > 0 and math.isfinite(duration)):
        raise ValueError(f"duration must be positive and finite, got {duration}")
    if not (fps > 0 and math.isfinite(fps)):
        raise ValueError(f"fps must be positive and finite, got {fps}")
    return max(1, round(duration * fps))


def frame_times(n: int, fps: float) -> np.ndarray:
    """(n,) float64 times k / fps, seconds."""
    return np.arange(int(n)) / float(fps)


def fit_clip_to_path(camera, bounds, path: CameraPath):
    """Set near/far so the box ``bounds`` ((2, 3) world) stays inside the clip range
    from every keyframe position of ``path`` (with margin for the curve between keys)."""
    b = np.asarray(bounds, dtype=np.float64)
    center = 0.5 * (b[0] + b[1])
    radius = max(0.5 * float(np.linalg.norm(b[1] - b[0])), 1e-6)
    far_key = max(float(np.linalg.norm(k.position - center)) for k in path.keyframes)
    far = 1.5 * (far_key + radius)
    camera.set_clip(far * 1e-4, far)


class _StopOnSigint:
    """First SIGINT: remember it (the loop stops before the next frame); second: raise
    KeyboardInterrupt at once. Only in the main thread (where signal handlers live)."""

    def __init__(self):
        self.requested = False
        self._installed = threading.current_thread() is threading.main_thread()
        if self._installed:
            self._old = signal.signal(signal.SIGINT, self._handle)

    def _handle(self, signum, frame):
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def restore(self):
        if self._installed:
            # None: the previous handler was not set from Python; use Python's default.
            signal.signal(signal.SIGINT, signal.default_int_handler if self._old is None
                          else self._old)
            self._installed = False


def render_motion(renderer: Renderer, motion, fps: float, frames: int, writer: FrameWriter,
                  progress: Progress | None = None,
                  on_frame: Callable[[int, object], None] | None = None) -> RenderResult:
    """Render ``frames`` frames of ``motion`` at ``fps`` into ``writer`` and close it.

    Args:
        renderer: renders ``renderer.camera``; its size must match the writer's.
        motion: object with ``apply(camera, t)``; a CameraScript is reset first.
        on_frame: called as ``on_frame(k, frame)`` after frame k is written (for
            previews and tests; raising KeyboardInterrupt there stops the render).

    Returns a RenderResult. KeyboardInterrupt is caught (result.interrupted); any other
    error propagates after the writer is closed.
    """
    if tuple(renderer.size) != tuple(writer.size):
        raise ValueError(f"renderer size {renderer.size} differs from writer size {writer.size}")
    if isinstance(motion, CameraScript):
        motion.reset()
    t0 = time.perf_counter()
    interrupted = False
    stop = _StopOnSigint()
    try:
        for k in range(int(frames)):
            if stop.requested:
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
    finally:
        stop.restore()
        writer.close()
        if progress is not None:
            progress.finish()
    return RenderResult(writer.frames, int(frames), interrupted, time.perf_counter() - t0,
                        writer.path)
