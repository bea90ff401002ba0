"""What ``frustum render`` and ``frustum view`` take from a loaded file besides its
geometry: ``--camera gltf:N`` (the file's own camera N) and ``--animation N[,M...]``
(its animations, played one after another with ``--crossfade`` and
``--animation-speed``, in the window and in videos)."""

from __future__ import annotations

from ..errors import EngineError
from ..scene.clips import Clip
from ..scene.model import Model
from .args import FileCamera

__all__ = ["file_camera", "file_clips", "file_playback"]


def _models(scene) -> list[Model]:
    return [n for n in scene.traverse() if isinstance(n, Model)]


def _sources(scene) -> str:
    return ", ".join(str(m.source or m.name) for m in _models(scene)) or "the scene"


def file_camera(args, scene, camera):
    """The camera to render through: the file's camera for ``--camera gltf:N`` (given
    the aspect of ``camera``, the auto-framed one), else ``camera``. Raises EngineError
    when no loaded file has camera N, or when that camera has no view (a zero scale on
    it or a parent node), naming the file."""
    spec = getattr(args, "camera", None)
    if not isinstance(spec, FileCamera):
        return camera
    have = 0
    for model in _models(scene):
        if spec.index < len(model.cameras):
            cam = model.cameras[spec.index]
            cam.aspect = camera.aspect
            try:
                cam.view_matrix  # noqa: B018 (raises when the camera has no view)
            except ValueError as exc:
                raise EngineError(f"--camera gltf:{spec.index}: {model.source or model.name}: "
                                  f"{exc}") from None
            return cam
        have = max(have, len(model.cameras))
    raise EngineError(f"--camera gltf:{spec.index}: {_sources(scene)} "
                      f"{'has no cameras' if not have else f'has {have} camera(s) (0 to {have - 1})'}")


def file_clips(args, scene, camera, framed: bool = True) -> list[Clip] | None:
    """The animations chosen by ``--animation N[,M...]``: for each index, clip N of every
    loaded file that has one, played together as one Clip, posed at t = 0; None
    without the option. When ``framed`` and no --camera was given, the camera is
    framed on everything the clips sweep. Raises EngineError when no loaded file has
    animation N."""
    indices = getattr(args, "animation", None)
    if indices is None:
        return None
    clips = []
    for index in indices:
        tracks, have = [], 0
        for model in _models(scene):
            have = max(have, len(model.clips))
            if index < len(model.clips):
                tracks.extend(model.clips[index].tracks)
        if not tracks and not any(index < len(m.clips) for m in _models(scene)):
            raise EngineError(f"--animation {index}: {_sources(scene)} "
                              f"{'has no animations' if not have else f'has {have} animation(s) (0 to {have - 1})'}")
        clips.append(Clip(f"animation {index}", tracks))
    for clip in reversed(clips):
        clip.apply(0.0)  # the first clip's first pose last
    if framed and getattr(args, "camera", None) is None:
        import numpy as np

        from ..animation.clips import clip_bounds

        boxes = [b for b in (clip_bounds(scene, c) for c in clips) if b is not None]
        clips[0].apply(0.0)
        if boxes:
            from .commands import VIEW_AZIMUTH, VIEW_ELEVATION

            bounds = np.stack([np.min([b[0] for b in boxes], axis=0),
                               np.max([b[1] for b in boxes], axis=0)])
            camera.frame(bounds, azimuth=VIEW_AZIMUTH, elevation=VIEW_ELEVATION)
    return clips


def file_playback(args, clips, loop: bool):
    """The ``engine.animation.clips.ClipPlayer`` for ``file_clips``' clips:
    ``play_sequence`` with ``--crossfade`` and ``--animation-speed``; the last clip
    loops when ``loop`` (the window), else holds its last pose (videos)."""
    from ..animation.clips import play_sequence

    return play_sequence(clips, crossfade=getattr(args, "crossfade", 0.5),
                         speed=getattr(args, "animation_speed", 1.0), loop=loop)
