"""Ready-made camera moves, each returned as a ``CameraPath`` (so it can be edited,
saved to a path file or rendered like any other path).

Angles are in degrees. Azimuth is measured about +Y from +Z towards +X and elevation
above the XZ plane, as in ``Camera.frame``.
"""

from __future__ import annotations

import math

import numpy as np

from ..scene.transforms import as_vec3
from .camera_path import CameraPath
from .pose import yaw_pitch_rotation

__all__ = ["dolly", "fly_through", "look_around", "orbit", "turntable"]


def _positive(value, name):
    v = float(value)
    if not (v > 0 and math.isfinite(v)):
        raise ValueError(f"{name} must be positive and finite, got {value!r}")
    return v


def _below_90(value, name) -> float:
    if not abs(float(value)) < 90:
        raise ValueError(f"{name} must be within (-90, 90) degrees, got {value!r}")
    return float(value)


def _turns(turns) -> float:
    if not (float(turns) != 0 and math.isfinite(turns)):
        raise ValueError(f"turns must be non-zero and finite, got {turns!r}")
    return float(turns)


def orbit(target=(0.0, 0.0, 0.0), radius=5.0, elevation=20.0, turns=1.0, duration=8.0,
          start_azimuth=0.0, fov=None, keys_per_turn=24) -> CameraPath:
    """Circle ``target`` at ``radius`` world units and ``elevation`` degrees, ``turns``
    times (negative: clockwise seen from above) in ``duration`` seconds, looking at it.

    Keys every 360 / ``keys_per_turn`` degrees, joined by centripetal Catmull-Rom, at
    constant angular speed. With 24 keys per turn the radius stays within 0.01 % of
    ``radius`` on whole turns (the closed curve wraps around); the first and last
    segments of a partial turn, which have no neighbour beyond the end, within 0.5 %. Raises ValueError for a non-positive radius/duration, ``|elevation| >= 90``
    or turns == 0.
    """
    c = as_vec3(target, "target")
    radius = _positive(radius, "radius")
    duration = _positive(duration, "duration")
    _below_90(elevation, "elevation")
    _turns(turns)
    n = max(2, math.ceil(abs(turns) * keys_per_turn)) + 1
    el = math.radians(elevation)
    path = CameraPath(interpolation="catmull_rom")
    for i in range(n):
        s = i / (n - 1)
        az = math.radians(start_azimuth + 360.0 * turns * s)
        offset = radius * np.array([math.cos(el) * math.sin(az), math.sin(el),
                                    math.cos(el) * math.cos(az)])
        path.add(duration * s, c + offset, target=c, fov=fov)
    return path


def dolly(position, target, distance, duration=4.0, easing="ease-in-out",
          fov=None) -> CameraPath:
    """Move from ``position`` straight towards ``target`` by ``distance`` world units
    (negative: back away) in ``duration`` seconds, looking at the target.

    Raises ValueError when the move would reach or pass the target.
    """
    p = as_vec3(position, "position")
    c = as_vec3(target, "target")
    duration = _positive(duration, "duration")
    gap = float(np.linalg.norm(c - p))
    if gap == 0:
        raise ValueError("dolly: position and target coincide")
    if not float(distance) < gap:
        raise ValueError(f"dolly: moving {distance} would reach the target {gap:g} away")
    end = p + (c - p) / gap * float(distance)
    path = CameraPath(interpolation="linear", easing=easing)
    path.add(0.0, p, target=c, fov=fov)
    path.add(duration, end, target=c, fov=fov)
    return path


def look_around(position, duration=8.0, turns=1.0, pitch=0.0, start_yaw=0.0,
                fov=None) -> CameraPath:
    """Stand at ``position`` and turn ``turns`` times about +Y (positive: to the left)
    in ``duration`` seconds, looking ``pitch`` degrees up (negative: down).

    Keys every 45 degrees joined by slerp give a constant turning speed (slerp takes the
    shortest arc, so keys must be less than 180 degrees apart).
    """
    p = as_vec3(position, "position")
    duration = _positive(duration, "duration")
    _below_90(pitch, "pitch")
    _turns(turns)
    n = max(1, math.ceil(abs(turns) * 8)) + 1
    path = CameraPath(interpolation="linear")
    for i in range(n):
        s = i / (n - 1)
        yaw = math.radians(start_yaw + 360.0 * turns * s)
        path.add(duration * s, p, orientation=yaw_pitch_rotation(yaw, math.radians(pitch)),
                 fov=fov)
    return path


def fly_through(points, duration=10.0, fov=None) -> CameraPath:
    """Fly through ``points`` ((N, 3), N >= 2, world units) in ``duration`` seconds,
    looking along the direction of travel.

    Key times are proportional to the distance travelled, so the speed is about
    constant; the path is centripetal Catmull-Rom, and each key looks at the next point
    (the last looks further along its incoming direction). Raises ValueError for fewer
    than two points, non-finite values, or two consecutive equal points.
    """
    pts = np.asarray(points, dtype=np.float64)
    if pts.ndim != 2 or pts.shape[1] != 3 or len(pts) < 2 or not np.all(np.isfinite(pts)):
        raise ValueError(f"fly_through needs (N >= 2, 3) finite points, got shape {pts.shape}")
    duration = _positive(duration, "duration")
    seg = np.linalg.norm(np.diff(pts, axis=0), axis=1)
    if np.any(seg == 0):
        raise ValueError(f"fly_through: point {int(np.argmin(seg)) + 1} repeats the one before")
    dist = np.concatenate([[0.0], np.cumsum(seg)])
    targets = np.concatenate([pts[1:], [pts[-1] + (pts[-1] - pts[-2])]])
    path = CameraPath(interpolation="catmull_rom")
    for i in range(len(pts)):
        path.add(duration * dist[i] / dist[-1], pts[i], target=targets[i], fov=fov)
    return path


def turntable(camera, bounds, duration=6.0, turns=1.0) -> CameraPath:
    """One ``orbit`` around the centre of ``bounds`` ((2, 3) world min/max) that starts
    where ``camera`` stands: same distance, elevation and azimuth, ``turns`` turns in
    ``duration`` seconds. This is the move ``frustum render`` makes when no camera path
    is given (and ``engine.distributed.render_video``, ``frustum render-many
    --turntable``). Raises ValueError when the camera sits at the centre.
    """
    b = np.asarray(bounds, dtype=np.float64)
    center = 0.5 * (b[0] + b[1])
    offset = np.asarray(camera.world_matrix)[:3, 3] - center
    radius = float(np.linalg.norm(offset))
    if not radius > 0:
        raise ValueError("turntable: the camera sits at the centre of the bounds")
    elevation = math.degrees(math.asin(max(-1.0, min(1.0, offset[1] / radius))))
    azimuth = math.degrees(math.atan2(offset[0], offset[2]))
    return orbit(center, radius, elevation, turns=turns, duration=duration,
                 start_azimuth=azimuth)
