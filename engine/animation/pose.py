"""Camera poses in the world frame: what controllers and camera paths produce.

A pose is a world-space eye position, a unit orientation quaternion (x, y, z, w) and an
optional vertical field of view. The orientation rotates the camera's local axes into
the world: the camera looks down its local -Z with +Y up (OpenGL), so the world view
direction is ``R @ (0, 0, -1)``.

Yaw/pitch angles (used by the orbit and fly controllers) follow the right-handed
convention about world +Y: ``R = Ry(yaw) @ Rx(pitch)``, so yaw = 0, pitch = 0 looks
down -Z, positive yaw turns left (counter-clockwise seen from above) and positive pitch
looks up. The view direction is ``(-sin(yaw) cos(pitch), sin(pitch), -cos(yaw) cos(pitch))``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..scene.camera import Camera, PerspectiveCamera
from ..scene.transforms import (
    look_at_rotation,
    matrix_to_quat,
    quat_from_axis_angle,
    quat_multiply,
    quat_normalize,
    quat_to_matrix,
)

__all__ = [
    "CameraPose",
    "apply_pose",
    "camera_pose",
    "look_rotation",
    "look_rotations",
    "yaw_pitch_of",
    "yaw_pitch_rotation",
]


@dataclass(frozen=True)
class CameraPose:
    """A camera's world pose.

    Attributes:
        position: (3,) float64 eye position, world units.
        rotation: (4,) float64 unit quaternion (x, y, z, w), camera -> world.
        fov_y: vertical field of view in degrees, or None to leave the camera's own.
    """

    position: np.ndarray
    rotation: np.ndarray
    fov_y: float | None = None

    @property
    def forward(self) -> np.ndarray:
        """(3,) unit world view direction (the rotated local -Z axis)."""
        return -quat_to_matrix(self.rotation)[:, 2]


def look_rotation(eye, target, up=(0.0, 1.0, 0.0)) -> np.ndarray:
    """(4,) unit quaternion of a camera at ``eye`` looking at ``target`` with ``up`` hint.

    Raises ValueError when eye == target (see ``transforms.look_at_rotation``).
    """
    return matrix_to_quat(look_at_rotation(eye, target, up))


def look_rotations(eyes, targets, up=(0.0, 1.0, 0.0)) -> np.ndarray:
    """(M, 4) ``look_rotation`` of M eye/target pairs ((M, 3) each). Raises ValueError
    naming the row when an eye equals its target."""
    eyes, targets = np.asarray(eyes, np.float64), np.asarray(targets, np.float64)
    out = np.empty((len(eyes), 4))
    for i in range(len(eyes)):
        try:
            out[i] = look_rotation(eyes[i], targets[i], up)
        except ValueError as exc:
            raise ValueError(f"row {i}: {exc}") from None
    return out


def yaw_pitch_rotation(yaw: float, pitch: float) -> np.ndarray:
    """(4,) unit quaternion ``Ry(yaw) * Rx(pitch)``; angles in radians (see module doc)."""
    qy = quat_from_axis_angle((0.0, 1.0, 0.0), yaw)
    qx = quat_from_axis_angle((1.0, 0.0, 0.0), pitch)
    return quat_normalize(quat_multiply(qy, qx))


def yaw_pitch_of(direction) -> tuple[float, float]:
    """(yaw, pitch) in radians whose view direction is ``direction`` (3,), any length > 0.

    Inverse of ``yaw_pitch_rotation`` for the view direction; straight up/down gives yaw 0.
    Raises ValueError for a zero or non-finite direction.
    """
    d = np.asarray(direction, dtype=np.float64).reshape(3)
    n = float(np.linalg.norm(d))
    if not (n > 1e-12 and math.isfinite(n)):
        raise ValueError(f"direction must be finite and non-zero, got {d.tolist()}")
    d = d / n
    pitch = math.asin(max(-1.0, min(1.0, d[1])))
    horiz = math.hypot(d[0], d[2])
    yaw = math.atan2(-d[0], -d[2]) if horiz > 1e-12 else 0.0
    return yaw, pitch


def apply_pose(camera: Camera, pose: CameraPose) -> Camera:
    """Place ``camera`` at the world ``pose`` (converted into its parent's frame).

    The field of view is set on perspective cameras when ``pose.fov_y`` is not None.
    Raises ValueError for non-finite values or a fov outside (0, 180). Returns camera.
    """
    pos = np.asarray(pose.position, dtype=np.float64)
    rot = quat_to_matrix(pose.rotation)
    if camera.parent is not None:
        # The parent frame may scale; its inverse maps the world pose into local TRS.
        inv = np.linalg.inv(camera.parent.world_matrix)
        pos = (inv @ np.append(pos, 1.0))[:3]
        m = inv[:3, :3] @ rot
        rot = m / np.linalg.norm(m, axis=0, keepdims=True)
    camera.position = pos
    camera.rotation = matrix_to_quat(rot)
    if pose.fov_y is not None and isinstance(camera, PerspectiveCamera):
        camera.fov_y = pose.fov_y
    return camera


def camera_pose(camera: Camera) -> CameraPose:
    """The camera's current world pose (fov_y set for perspective cameras)."""
    m = np.asarray(camera.world_matrix, dtype=np.float64)
    r = m[:3, :3] / np.linalg.norm(m[:3, :3], axis=0, keepdims=True)
    fov = camera.fov_y if isinstance(camera, PerspectiveCamera) else None
    return CameraPose(m[:3, 3].copy(), matrix_to_quat(r), fov)
