"""Offline rendering of a camera motion to frames: frame k is rendered at exactly
t = k / fps seconds (never from the wall clock), so two renders of the same scene and
motion give identical frames.

A motion is anything with ``apply(camera, t)`` (``CameraPath``, ``CameraScript``); a
``CameraScript`` generator that returns ends the render early. The frames go through
the one output session of ``engine.io.output`` (``Output``): Ctrl-C (SIGINT) and SIGTERM
stop at once, a frame being written is finished first, and the writer is closed, so the
frames written so far are kept in a finalised file; any other error aborts the writer
and nothing new is left at the output.

Renders are limited to ``MAX_FRAMES`` (1,000,000) frames: more is almost certainly a
mistyped fps or duration (at 30 fps it is over 9 hours of video).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..errors import EngineError
from ..io.output import Output, RenderResult
from ..io.video import FrameWriter
from ..progress import Progress
from ..render.renderer import Renderer
from .camera_path import CameraPath, CameraScript

__all__ = ["MAX_FRAMES", "RenderResult", "check_frame_count", "fit_clip_to_path", "frame_count",
           "frame_times", "render_motion"]

MAX_FRAMES = 1_000_000


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

    Returns a RenderResult (``engine.io.output``). Ctrl-C, SIGTERM and
    KeyboardInterrupt stop the render and the writer is closed (result.interrupted,
    result.stop_signal). Any other error
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
    with Output(writer, frames, progress) as out:
        for k in range(frames):
            t = k / float(fps)
            if motion.apply(renderer.camera, t) is False:
                break  # a generator script has finished
            frame = renderer.render()
            out.write(frame.color)
            if on_frame is not None:
                on_frame(k, frame)
    return out.result
