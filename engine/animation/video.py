"""The argument check of ``engine.render_video`` (``engine.distributed.video``): a
scene, a camera, an output and a motion become a ``VideoPlan`` (the motion object, the
frame count, size and fps), the same for a render in this process and one spread over
Dask workers, so both refuse the same arguments with the same messages and render the
same frames.

A motion is a ``CameraPath``, a ``CameraScript``, a path file (.json / .toml), a clip
(``engine.animation.clips.ClipMotion``, or a ``Clip`` / ``ClipPlayer`` played with a
still camera; the video lasts its ``duration``), or any function ``fn(camera, t)``: it
may move the camera and animate nodes (it runs before each frame). Without one the camera circles the scene's bounding box once from where it
stands.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import EngineError, OutputError
from ..io.video import output_kind
from ..render.renderer import check_size
from ..scene.camera import Camera
from ..scene.clips import Clip
from ..scene.graph import Scene
from .camera_path import CameraPath, CameraScript
from .clips import ClipMotion, ClipPlayer
from .offline import MAX_FRAMES, check_frame_count, frame_count

__all__ = ["DEFAULT_TURNTABLE_S", "VideoPlan", "plan_video"]

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
    if isinstance(motion, (Clip, ClipPlayer)):
        motion = ClipMotion(motion)  # a still camera
    if isinstance(motion, (CameraPath, CameraScript, ClipMotion)):
        return motion, motion.duration or None
    if callable(motion):
        return CameraScript(motion), None
    raise TypeError(f"motion must be a CameraPath, a CameraScript, a path file, a clip "
                    f"(Clip, ClipPlayer, ClipMotion) or a function fn(camera, t), got "
                    f"{type(motion).__name__}")


@dataclass(frozen=True)
class VideoPlan:
    """What ``plan_video`` settled: ``motion`` (an object with ``apply(camera, t)``),
    ``frames`` (1..MAX_FRAMES), ``size`` (width, height) and ``fps``."""

    motion: object
    frames: int
    size: tuple
    fps: float


def plan_video(scene: Scene, camera: Camera, out, motion=None, *, fps: float = 30.0,
               duration: float | None = None, frames: int | None = None,
               size=(1280, 720)) -> VideoPlan:
    """Check the arguments of ``engine.render_video`` and settle the motion and the
    frame count (``duration`` default: the motion's, 6 s for a turntable or a
    function).

    Raises TypeError for a scene or camera of the wrong type, OutputError for an output
    that is not a video (an image name, an empty name), ValueError for a bad fps or both
    duration and frames, EngineError for a frame count outside 1..1,000,000 or a path
    file that does not load.
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
    return VideoPlan(motion, n, size, fps)
