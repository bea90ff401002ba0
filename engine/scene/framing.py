"""The default view of a scene: where ``frustum render``, ``engine.show`` and the
notebook widget put the camera when none is given: a 50-degree perspective camera from
azimuth 35 / elevation 25 degrees, at the distance where the scene's bounding box, as
projected, spans ``FILL`` (85 %) of the image's smaller side.

Why the projected box and not the bounding sphere (``Camera.frame``): a sphere around a
box is loose for anything but a cube seen along its diagonal; models framed by their
sphere spanned 28-43 % of the image width.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["DEFAULT_BACKGROUND", "FILL", "VIEW_AZIMUTH", "VIEW_ELEVATION", "VIEW_FOV_Y",
           "fit_view", "framed_camera", "view_target"]

VIEW_AZIMUTH, VIEW_ELEVATION = 35.0, 25.0  # default framing direction, degrees
VIEW_FOV_Y = 50.0  # vertical field of view, degrees
DEFAULT_BACKGROUND = (0.04, 0.05, 0.08)
#: Fraction of the image's smaller side the default view gives the projected bounds.
FILL = 0.85


def framed_camera(scene, aspect: float = 1.0, azimuth: float = VIEW_AZIMUTH,
                  elevation: float = VIEW_ELEVATION, distance: float | None = None):
    """A new perspective camera (not added to ``scene``) that sees the whole of
    ``scene``: ``VIEW_FOV_Y`` vertical field of view, from ``azimuth``/``elevation``
    degrees, placed by ``fit_view`` (or at ``distance`` from the centre of the bounds,
    looking at it). Raises EngineError when the scene has no finite point."""
    from ..errors import EngineError
    from .camera import PerspectiveCamera

    bounds = scene.bounds()
    if bounds is None:
        raise EngineError(f"{scene.name}: nothing to show (no finite points)")
    camera = PerspectiveCamera(fov_y=VIEW_FOV_Y, aspect=aspect, name="camera")
    camera.frame(bounds, azimuth=azimuth, elevation=elevation, distance=distance)
    fit = fit_view(camera, bounds) if distance is None else None
    if fit is not None:
        d, shift = fit
        camera.frame(bounds, azimuth=azimuth, elevation=elevation, distance=d)
        camera.position = camera.position + shift  # same direction, box centred
    return camera


def view_target(camera, bounds) -> np.ndarray:
    """(3,) world point straight ahead of ``camera`` in the plane through the centre of
    ``bounds`` ((2, 3), or None: the origin) across its view: the orbit centre that keeps
    the view as it is (``framed_camera`` centres the projected box, so the camera does
    not look exactly at the centre of the bounds)."""
    center = (np.zeros(3) if bounds is None
              else 0.5 * (np.asarray(bounds[0], np.float64) + np.asarray(bounds[1], np.float64)))
    pos = np.asarray(camera.world_matrix[:3, 3], np.float64)
    forward = np.asarray(camera.forward, np.float64)
    ahead = float(np.dot(center - pos, forward))
    return pos + forward * (ahead if ahead > 1e-9 else float(np.linalg.norm(center - pos)))


def fit_view(camera, bounds, fill: float = FILL):
    """(distance, shift): where the perspective ``camera`` (already looking at the centre
    of ``bounds``, (2, 3) world min/max) must stand for the projected box to span
    ``fill`` of the image's smaller side, centred in the image: ``distance`` from the
    centre along the view direction, then moved by ``shift`` ((3,) world, across the
    view direction). None when the box has no extent across the view (a point, or a
    segment along it): the bounding-sphere framing of ``Camera.frame`` then stays.

    The span is that of the 8 corners' projections, in pixels of an image of the
    camera's aspect, along whichever image axis it is larger. It falls as the camera
    backs away, so the distance is found by bisection (60 halvings) between the nearest
    distance with every corner in front of the camera and one far enough; perspective
    makes the projection lopsided (near corners look larger), so the camera is then
    moved across to centre it, and the two steps repeat (a few rounds converge).
    """
    b = np.asarray(bounds, np.float64)
    center = (b[0] + b[1]) * 0.5
    corners = np.array([[b[i, 0], b[j, 1], b[k, 2]] for i in (0, 1) for j in (0, 1)
                        for k in (0, 1)]) - center
    m = camera.world_matrix.astype(np.float64)
    right, up, back = (m[:3, k] / np.linalg.norm(m[:3, k]) for k in range(3))
    x, y, z = corners @ right, corners @ up, corners @ back  # view frame, z towards eye
    ty = math.tan(math.radians(camera.fov_y) / 2)
    aspect = float(camera.aspect)
    tx = ty * aspect
    size = float(np.max(np.abs(corners)))
    # below the size Camera.frame gives a point (relative to the coordinates' magnitude,
    # so eye and target stay distinct in float64), keep its framing
    if size <= max(float(np.max(np.abs(b))) * 2.0**-30, 2.0**-20):
        return None

    def ndc(d, cx, cy):
        depth = d - z
        return (x - cx) / (depth * tx), (y - cy) / (depth * ty)

    def span(d, cx, cy):  # larger projected extent over the smaller side, both in pixels
        u, v = ndc(d, cx, cy)
        return max(np.ptp(u) * aspect, np.ptp(v)) / 2 / min(aspect, 1.0)

    lo0 = float(np.max(z)) + size * 1e-6  # every corner in front of the eye
    if span(lo0, 0.0, 0.0) <= fill:  # no extent across the view: nothing to fit
        return None
    cx = cy = 0.0
    d = lo0
    for _ in range(6):
        lo, hi = lo0, lo0 + size * 4.0
        while span(hi, cx, cy) > fill:
            hi = lo + (hi - lo) * 2.0
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if span(mid, cx, cy) > fill else (lo, mid)
        d = hi
        u, v = ndc(d, cx, cy)
        depth = float(np.mean(d - z))
        cx += (u.max() + u.min()) / 2 * depth * tx
        cy += (v.max() + v.min()) / 2 * depth * ty
    return d, cx * right + cy * up
