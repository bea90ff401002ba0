"""The default view of a scene: where ``frustum render``, ``engine.show`` and the
notebook widget put the camera when none is given (a 50-degree perspective camera from
azimuth 35 / elevation 25 degrees, at the distance that fits the scene's bounding sphere
in the narrower side of the image)."""

from __future__ import annotations

__all__ = ["DEFAULT_BACKGROUND", "VIEW_AZIMUTH", "VIEW_ELEVATION", "VIEW_FOV_Y",
           "framed_camera"]

VIEW_AZIMUTH, VIEW_ELEVATION = 35.0, 25.0  # default framing direction, degrees
VIEW_FOV_Y = 50.0  # vertical field of view, degrees
DEFAULT_BACKGROUND = (0.04, 0.05, 0.08)


def framed_camera(scene, aspect: float = 1.0, azimuth: float = VIEW_AZIMUTH,
                  elevation: float = VIEW_ELEVATION, distance: float | None = None):
    """A new perspective camera (not added to ``scene``) that sees the whole of
    ``scene``: ``VIEW_FOV_Y`` vertical field of view, from ``azimuth``/``elevation``
    degrees at the distance that fits the bounding sphere in the narrower side (or at
    ``distance``). Raises EngineError when the scene has no finite point."""
    from ..errors import EngineError
    from .camera import PerspectiveCamera

    bounds = scene.bounds()
    if bounds is None:
        raise EngineError(f"{scene.name}: nothing to show (no finite points)")
    camera = PerspectiveCamera(fov_y=VIEW_FOV_Y, aspect=aspect, name="camera")
    camera.frame(bounds, azimuth=azimuth, elevation=elevation, distance=distance)
    return camera
