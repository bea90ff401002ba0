"""``engine.render_video``: a scene and a camera move to an MP4, a GIF or PNG frames, in
one call.

    engine.render_video(scene, camera, "orbit.mp4", duration=6)           # turntable
    engine.render_video(scene, camera, "tour.gif", motion="tour.json")    # a path file
    engine.render_video(scene, camera, "spin.mp4", motion=spin, frames=120)

Frame k is rendered at t = k / fps seconds exactly (``engine.animation.offline``), so two
renders of the same scene and motion give the same frames. A motion is a
``CameraPath``, a ``CameraScript``, a path file (.json / .toml), or any function
``fn(camera, t)``: it may move the camera and animate nodes (it runs before each frame).
Without one the camera circles the scene's bounding box once from where it stands.

This is the public entry point for offline video; renderers that distribute frames
(e.g. over Dask) extend it with keyword arguments rather than a new function.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..errors import EngineError, OutputError
from ..io.video import open_frame_writer, output_kind
from ..progress import Progress
from ..render.renderer import Renderer, check_size
from ..scene.camera import Camera
from ..scene.graph import Scene
from .camera_path import CameraPath, CameraScript
from .offline import MAX_FRAMES, RenderResult, check_frame_count, frame_count, render_motion

__all__ = ["render_video"]

DEFAULT_TURNTABLE_S = 6.0


def _as_motion(motion, scene: Scene, camera: Camera, duration: float | None):
    """(motion object, its duration or None)."""
    if motion is None:
        from .shots import orbit

        bounds = scene.bounds()
        if bounds is None:
            raise EngineError("render_video: the scene has nothing to show (no finite "
                              "points) and no motion was given")
        centre = 0.5 * (bounds[0] + bounds[1])
        offset = camera.world_position - centre
        radius = float(np.linalg.norm(offset))
        if not radius > 0:
            raise EngineError("render_video: the camera is at the scene's centre; place it "
                              "first (camera.frame(scene.bounds())) or give a motion")
        elevation = math.degrees(math.asin(max(-1.0, min(1.0, offset[1] / radius))))
        elevation = max(-89.0, min(89.0, elevation))
        azimuth = math.degrees(math.atan2(offset[0], offset[2]))
        length = duration or DEFAULT_TURNTABLE_S
        return orbit(centre, radius, elevation, turns=1, duration=length,
                     start_azimuth=azimuth), length
    if isinstance(motion, (str, Path)):
        from .pathfile import load_path

        motion = load_path(motion)
    if isinstance(motion, (CameraPath, CameraScript)):
        return motion, motion.duration or None
    if callable(motion):
        return CameraScript(motion), None
    raise TypeError(f"motion must be a CameraPath, a CameraScript, a path file or a "
                    f"function fn(camera, t), got {type(motion).__name__}")


def render_video(scene: Scene, camera: Camera, out, motion=None, *, fps: float = 30.0,
                 duration: float | None = None, frames: int | None = None,
                 size=(1280, 720), backend: str | None = None, raster: str = "software",
                 point_size: float | None = None, pad: bool = False,
                 progress: bool = False, on_frame=None) -> RenderResult:
    """Render ``scene`` seen by ``camera`` along ``motion`` into the video ``out``.

    Args:
        scene, camera: what to render (the camera is moved by the motion).
        out: ".mp4" (H.264), ".gif", or a folder for numbered PNG frames (a name ending
            in "/" or without a suffix).
        motion: see the module docstring; None for a turntable around the scene.
        fps: frames per second (MP4 0.001-1000, GIF 0.002-50).
        duration: seconds of video (default: the motion's, 6 s for a turntable or a
            function). ``frames`` instead gives the frame count (1..1,000,000).
        size: (width, height) in pixels (an MP4 needs even sizes unless ``pad``).
        backend, raster, point_size: as ``engine.Renderer``.
        pad: MP4 with an odd size: repeat one edge row/column instead of refusing.
        progress: print a progress line to stderr.
        on_frame: called as ``on_frame(k, frame)`` after frame k is written.

    Returns:
        ``engine.animation.offline.RenderResult`` (frames written, interrupted, path...).
        Ctrl-C stops after the current frame and keeps a playable file.

    Raises:
        OutputError: ``out`` is an image name or cannot be written, an fps the format
            cannot store. EngineError: a frame count outside 1..1,000,000, a path file
            that does not load. ValueError/TypeError: bad arguments, naming them.
    """
    if not isinstance(scene, Scene):
        raise TypeError(f"scene must be an engine.Scene, got {type(scene).__name__}")
    if not isinstance(camera, Camera):
        raise TypeError(f"camera must be an engine.Camera, got {type(camera).__name__}")
    if output_kind(out) is None:
        raise OutputError(f"{out}: render_video writes .mp4, .gif or a folder of PNG frames "
                          f"(for one image use engine.Renderer(...).render() and "
                          f"engine.io.image.save_image)")
    size = check_size(size)
    fps = float(fps)
    if not (fps > 0 and math.isfinite(fps)):
        raise ValueError(f"fps must be a positive number, got {fps}")
    if duration is not None and frames is not None:
        raise ValueError("give duration or frames, not both")
    motion, motion_length = _as_motion(motion, scene, camera, duration)
    if frames is not None:
        n = check_frame_count(frames)
    else:
        length = duration or motion_length or DEFAULT_TURNTABLE_S
        try:
            n = frame_count(length, fps)
        except EngineError as exc:
            raise EngineError(f"{length:g} s at {fps:g} fps is over the limit of "
                              f"{MAX_FRAMES:,} frames: {exc}") from None
    renderer = Renderer(scene, camera, size, backend=backend, point_size=point_size,
                        raster=raster)
    try:
        writer = open_frame_writer(out, size, fps, pad=pad)
        return render_motion(renderer, motion, fps, n, writer,
                             Progress(n) if progress else None, on_frame)
    finally:
        renderer.close()
