"""Affine transforms, quaternions and projection matrices (host side, float64).

Conventions (see docs/conventions.md): right-handed world, +Y up, the camera looks
down its local -Z axis (OpenGL). Column vectors: ``p_clip = P @ V @ M @ p``. Matrices
are (4, 4) float64 NumPy arrays, row-major in memory; the scene graph composes them in
float64 and only the batch casts to float32 for the device. Quaternions are
``(x, y, z, w)`` (glTF / SciPy order), unit length.

Formula sources: the perspective and orthographic matrices are the OpenGL ones
(``gluPerspective`` / ``glOrtho``, OpenGL 2.1 reference pages); quaternion to matrix and
slerp follow K. Shoemake, "Animating rotation with quaternion curves", SIGGRAPH 1985.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "EULER_ORDERS",
    "as_vec3",
    "decompose_trs",
    "euler_from_quat",
    "look_at_rotation",
    "matrix_to_quat",
    "orthographic_matrix",
    "perspective_matrix",
    "quat_from_axis_angle",
    "quat_from_euler",
    "quat_multiply",
    "quat_normalize",
    "quat_to_matrices",
    "quat_to_matrix",
    "scale_matrix",
    "slerp",
    "translation_matrix",
    "trs_matrices",
    "trs_matrix",
]

IDENTITY_QUAT = np.array([0.0, 0.0, 0.0, 1.0])


def as_vec3(v, name: str) -> np.ndarray:
    """(3,) float64 copy of ``v``; ValueError naming ``name`` unless it is 3 finite numbers."""
    try:
        a = np.array(v, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be 3 finite numbers, got {v!r}") from None
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be 3 finite numbers, got {v!r}")
    return a


def translation_matrix(t) -> np.ndarray:
    """(4, 4) float64 matrix translating by ``t`` (3,)."""
    m = np.eye(4)
    m[:3, 3] = as_vec3(t, "translation")
    return m


def scale_matrix(s) -> np.ndarray:
    """(4, 4) float64 matrix scaling by ``s`` (3,) (per axis)."""
    m = np.eye(4)
    m[[0, 1, 2], [0, 1, 2]] = as_vec3(s, "scale")
    return m


def quat_normalize(q) -> np.ndarray:
    """Unit quaternion (x, y, z, w) from ``q``; raises ValueError for a zero or non-finite q."""
    a = np.asarray(q, dtype=np.float64).reshape(-1)
    if a.shape != (4,):
        raise ValueError(f"quaternion must have 4 components (x, y, z, w), got shape {np.shape(q)}")
    n = float(np.linalg.norm(a))
    if not math.isfinite(n) or n < 1e-12:
        raise ValueError(f"quaternion must be finite and non-zero, got {a.tolist()}")
    return a / n


def quat_from_axis_angle(axis, angle: float, degrees: bool = False) -> np.ndarray:
    """Unit quaternion (x, y, z, w) rotating ``angle`` about ``axis`` (3,), right-handed
    (counter-clockwise looking down the axis towards the origin).

    ``angle`` is in radians, or in degrees with ``degrees=True``. Raises ValueError for a
    zero or non-finite axis or a non-finite angle.
    """
    ax = as_vec3(axis, "axis")
    n = np.linalg.norm(ax)
    if n < 1e-12:
        raise ValueError("rotation axis must be non-zero")
    try:
        angle = float(angle)
    except (TypeError, ValueError):
        raise ValueError(f"angle must be a number, got {angle!r}") from None
    if not math.isfinite(angle):
        raise ValueError(f"angle must be finite, got {angle}")
    h = 0.5 * (math.radians(angle) if degrees else angle)
    return np.concatenate([ax / n * math.sin(h), [math.cos(h)]])


def quat_multiply(a, b) -> np.ndarray:
    """Hamilton product ``a * b`` (apply b, then a) of (x, y, z, w) quaternions."""
    x1, y1, z1, w1 = np.asarray(a, dtype=np.float64)
    x2, y2, z2, w2 = np.asarray(b, dtype=np.float64)
    return np.array(
        [
            w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
            w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
            w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
        ]
    )


def quat_to_matrix(q) -> np.ndarray:
    """(3, 3) float64 rotation matrix of the unit quaternion ``q`` = (x, y, z, w)."""
    return np.array(_rotation_rows(*quat_normalize(q)))


def _rotation_rows(x, y, z, w):
    """Rows of the rotation matrix of a unit quaternion, as Python floats (no validation)."""
    return (
        (1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)),
        (2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)),
        (2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)),
    )


def matrix_to_quat(r) -> np.ndarray:
    """Unit quaternion (x, y, z, w), w >= 0, of a (3, 3) rotation matrix (Shepperd's method)."""
    m = np.asarray(r, dtype=np.float64)[:3, :3]
    tr = m[0, 0] + m[1, 1] + m[2, 2]
    if tr > 0:
        s = 2.0 * math.sqrt(tr + 1.0)
        q = [(m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s, 0.25 * s]
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = 2.0 * math.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2])
        q = [0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s, (m[2, 1] - m[1, 2]) / s]
    elif m[1, 1] > m[2, 2]:
        s = 2.0 * math.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2])
        q = [(m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s, (m[0, 2] - m[2, 0]) / s]
    else:
        s = 2.0 * math.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1])
        q = [(m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s, (m[1, 0] - m[0, 1]) / s]
    q = quat_normalize(q)
    return -q if q[3] < 0 else q


def slerp(q0, q1, t: float) -> np.ndarray:
    """Spherical linear interpolation of unit quaternions along the shortest arc.

    ``t`` in [0, 1]; returns a unit (x, y, z, w). q and -q are the same rotation, so q1 is
    negated when ``dot(q0, q1) < 0`` (shortest arc). Near-parallel inputs fall back to a
    normalised lerp to avoid dividing by sin(theta) ~ 0.
    """
    a = quat_normalize(q0)
    b = quat_normalize(q1)
    d = float(np.dot(a, b))
    if d < 0.0:
        b, d = -b, -d
    if d > 0.9995:
        return quat_normalize(a + t * (b - a))
    theta = math.acos(min(d, 1.0))
    s = math.sin(theta)
    return (math.sin((1 - t) * theta) * a + math.sin(t * theta) * b) / s


def trs_matrix(position, rotation, scale) -> np.ndarray:
    """(4, 4) float64 local matrix ``T @ R @ S`` from position (3,), quaternion (4,), scale (3,).

    Raises ValueError for wrong lengths, non-finite values or a zero quaternion.
    """
    p, s = as_vec3(position, "position"), as_vec3(scale, "scale")
    return trs_matrix_unchecked(p.tolist(), quat_normalize(rotation).tolist(), s.tolist())


def trs_matrix_unchecked(position, rotation, scale) -> np.ndarray:
    """``trs_matrix`` for values already validated (finite, unit quaternion), given as
    sequences of Python floats: the scene graph's per-node hot path, built in one
    ``np.array`` call instead of a dozen small NumPy operations."""
    (r0, r1, r2) = _rotation_rows(*rotation)
    sx, sy, sz = scale
    px, py, pz = position
    return np.array((
        (r0[0] * sx, r0[1] * sy, r0[2] * sz, px),
        (r1[0] * sx, r1[1] * sy, r1[2] * sz, py),
        (r2[0] * sx, r2[1] * sy, r2[2] * sz, pz),
        (0.0, 0.0, 0.0, 1.0),
    ))


def decompose_trs(matrix) -> dict:
    """(4, 4) affine matrix -> {"position", "rotation" (x, y, z, w), "scale"} such that
    ``T @ R @ S`` reproduces it (Node keyword arguments); a negative determinant goes
    into the x scale, a zero scale keeps the identity rotation on that axis.

    Raises ValueError saying "non-affine" for a projective or non-finite matrix and
    "shear" for one that no T @ R @ S can represent.
    """
    m = np.asarray(matrix, dtype=np.float64)
    if m.shape != (4, 4) or not np.all(np.isfinite(m)) or not np.allclose(m[3], [0, 0, 0, 1]):
        raise ValueError("non-affine or non-finite transform (the last row is not 0, 0, 0, 1)")
    a = m[:3, :3]
    # column norms with each column divided by its largest entry first: a pure 1e308
    # scale must not overflow the squares (and then read as a shear)
    big = np.abs(a).max(axis=0)
    unit = a / np.where(big == 0, 1.0, big)
    length = np.linalg.norm(unit, axis=0)  # in [1, sqrt(3)], or 0 for a zero column
    scale = np.where(big == 0, 0.0, big) * length
    rot = unit / np.where(length == 0, 1.0, length)
    if np.linalg.det(unit) < 0:
        scale[0], rot[:, 0] = -scale[0], -rot[:, 0]
    rot[:, scale == 0] = np.eye(3)[:, scale == 0]
    if not np.allclose(rot.T @ rot, np.eye(3), atol=1e-5):
        raise ValueError("shear, which translation, rotation and scale cannot represent")
    return {"position": m[:3, 3], "rotation": matrix_to_quat(rot), "scale": scale}


def look_at_rotation(eye, target, up=(0.0, 1.0, 0.0)) -> np.ndarray:
    """(3, 3) float64 rotation whose -Z column points from ``eye`` to ``target``.

    Columns are the camera's right (+X), up (+Y) and back (+Z) axes in the parent frame;
    det = +1. When the view direction is parallel to ``up`` (looking straight down, say),
    the world axis least aligned with the view direction is used as the up hint instead,
    so the result stays finite and orthonormal.

    Raises:
        ValueError: ``eye == target`` (no direction to look along), or non-finite input.
    """
    e = as_vec3(eye, "eye")
    t = as_vec3(target, "target")
    u = as_vec3(up, "up")
    fwd = t - e
    # Scale by the largest component first so the norm cannot overflow (|d| ~ 1e300).
    big = float(np.abs(fwd).max())
    if not np.isfinite(big):
        raise ValueError(f"look_at: eye {e.tolist()} and target {t.tolist()} are too far apart")
    if big <= 1e-12 * max(1.0, float(np.abs(e).max())):
        raise ValueError(f"look_at: eye and target coincide at {e.tolist()}; no view direction")
    fwd /= big
    fwd /= np.linalg.norm(fwd)
    right = np.cross(fwd, u)
    if np.linalg.norm(right) < 1e-6 * max(np.linalg.norm(u), 1e-300):
        fallback = np.eye(3)[int(np.argmin(np.abs(fwd)))]
        right = np.cross(fwd, fallback)
    right /= np.linalg.norm(right)
    true_up = np.cross(right, fwd)
    return np.stack([right, true_up, -fwd], axis=1)


def perspective_matrix(fov_y_deg: float, aspect: float, near: float, far: float) -> np.ndarray:
    """OpenGL perspective projection (4, 4) float64: view space -> clip space.

    ``fov_y_deg`` is the full vertical field of view in degrees, ``aspect`` = width/height,
    ``near``/``far`` > 0 are distances along -Z in world units. Maps z = -near to NDC -1
    and z = -far to NDC +1 (gluPerspective).
    """
    if not (0.0 < fov_y_deg < 180.0):
        raise ValueError(f"fov_y must be in (0, 180) degrees, got {fov_y_deg}")
    if not (aspect > 0 and math.isfinite(aspect)):
        raise ValueError(f"aspect must be positive and finite, got {aspect}")
    if not (0.0 < near < far and math.isfinite(far)):
        raise ValueError(f"need 0 < near < far < inf, got near={near}, far={far}")
    f = 1.0 / math.tan(math.radians(fov_y_deg) / 2.0)
    m = np.zeros((4, 4))
    m[0, 0] = f / aspect
    m[1, 1] = f
    m[2, 2] = (far + near) / (near - far)
    m[2, 3] = 2.0 * far * near / (near - far)
    m[3, 2] = -1.0
    return m


def orthographic_matrix(left, right, bottom, top, near, far) -> np.ndarray:
    """OpenGL orthographic projection (4, 4) float64 (glOrtho); w stays 1."""
    if not (right > left and top > bottom and far > near):
        raise ValueError(
            f"orthographic volume is empty: left={left} right={right} "
            f"bottom={bottom} top={top} near={near} far={far}"
        )
    m = np.eye(4)
    m[0, 0] = 2.0 / (right - left)
    m[1, 1] = 2.0 / (top - bottom)
    m[2, 2] = -2.0 / (far - near)
    m[0, 3] = -(right + left) / (right - left)
    m[1, 3] = -(top + bottom) / (top - bottom)
    m[2, 3] = -(far + near) / (far - near)
    return m


# --- Euler angles ------------------------------------------------------------------------
EULER_ORDERS = ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")
DEFAULT_EULER_ORDER = "YXZ"
_AXIS = {"X": 0, "Y": 1, "Z": 2}
_EVEN = ("XYZ", "YZX", "ZXY")


def _euler_order(order) -> tuple[int, int, int]:
    o = str(order).upper()
    if o not in EULER_ORDERS:
        raise ValueError(f"Euler order must be one of {', '.join(EULER_ORDERS)}, got {order!r}")
    return _AXIS[o[0]], _AXIS[o[1]], _AXIS[o[2]]


def quat_from_euler(angles, order: str = DEFAULT_EULER_ORDER, degrees: bool = True) -> np.ndarray:
    """Unit quaternions (x, y, z, w) from Euler angles.

    Args:
        angles: (3,) or (..., 3) rotation angles about the X, Y and Z axes, always in
            that component order whatever ``order`` is; degrees (radians with
            ``degrees=False``).
        order: the axis sequence, one of ``EULER_ORDERS``. The rotation is
            ``R = R_a @ R_b @ R_c`` for ``order = "abc"`` (column vectors): rotate about
            a, then about the *rotated* b, then the rotated c (intrinsic), which is the
            same as c, b, a about the fixed parent axes. The default "YXZ" is yaw (Y),
            pitch (X), roll (Z), as in the camera controllers: (0, 90, 0) turns a node
            to look down -X, (30, 0, 0) tilts its view up 30 degrees.

    Returns:
        (4,) or (..., 4) float64 unit quaternions.

    Raises:
        ValueError: an unknown order, a last axis that is not 3 long, non-finite angles.
    """
    a = _float_array(angles, "Euler angles")
    if a.shape[-1:] != (3,):
        raise ValueError(f"Euler angles must have 3 components (x, y, z), got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"Euler angles must be finite, got {a.tolist()}")
    axes = _euler_order(order)
    half = 0.5 * (np.radians(a) if degrees else a)
    q = None
    for axis in axes:
        qa = np.zeros(a.shape[:-1] + (4,))
        qa[..., axis] = np.sin(half[..., axis])
        qa[..., 3] = np.cos(half[..., axis])
        q = qa if q is None else _quat_mul_many(q, qa)
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def euler_from_quat(q, order: str = DEFAULT_EULER_ORDER, degrees: bool = True) -> np.ndarray:
    """Euler angles (about X, Y, Z) of unit quaternions: the inverse of
    ``quat_from_euler`` for the same ``order``.

    The middle axis of ``order`` gets an angle in [-90, 90] degrees, the other two in
    (-180, 180]. At gimbal lock (middle angle +-90) the last axis' angle is 0 and the
    first carries the whole turn, so ``quat_from_euler(euler_from_quat(q))`` is the same
    rotation as q (up to sign) everywhere.

    Args:
        q: (4,) or (..., 4) quaternions (x, y, z, w); normalised first.

    Returns:
        (3,) or (..., 3) float64 angles, degrees (radians with ``degrees=False``).

    Raises:
        ValueError: an unknown order, a zero or non-finite quaternion.
    """
    i, j, k = _euler_order(order)
    r = quat_to_matrices(q)
    s = 1.0 if str(order).upper() in _EVEN else -1.0
    cos_mid = np.hypot(r[..., i, i], r[..., i, j])
    mid = np.arctan2(s * r[..., i, k], cos_mid)
    first = np.arctan2(-s * r[..., j, k], r[..., k, k])
    last = np.arctan2(-s * r[..., i, j], r[..., i, i])
    lock = cos_mid < 1e-12
    if np.any(lock):
        first = np.where(lock, np.arctan2(s * r[..., k, j], r[..., j, j]), first)
        last = np.where(lock, 0.0, last)
    out = np.empty(r.shape[:-2] + (3,))
    out[..., i], out[..., j], out[..., k] = first, mid, last
    return np.degrees(out) if degrees else out


# --- many transforms at once ---------------------------------------------------------------
def _float_array(v, name: str) -> np.ndarray:
    if isinstance(v, (str, bytes)):
        raise ValueError(f"{name} must be numbers, got {v!r}")  # noqa: TRY004
    try:
        return np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numbers, got {v!r}") from None


def _quat_mul_many(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    x1, y1, z1, w1 = np.moveaxis(a, -1, 0)
    x2, y2, z2, w2 = np.moveaxis(b, -1, 0)
    return np.stack([w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                     w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
                     w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2], axis=-1)


def quat_to_matrices(q) -> np.ndarray:
    """(..., 3, 3) float64 rotation matrices of (..., 4) quaternions (x, y, z, w),
    normalised first. Raises ValueError for a zero or non-finite quaternion."""
    a = _float_array(q, "quaternions")
    if a.shape[-1:] != (4,):
        raise ValueError(f"quaternions must have 4 components (x, y, z, w), got shape {a.shape}")
    n = np.linalg.norm(a, axis=-1, keepdims=True)
    if not np.all(np.isfinite(n)) or np.any(n < 1e-12):
        raise ValueError("quaternions must be finite and non-zero")
    return _unit_quat_matrices(a / n)


def _unit_quat_matrices(q: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Rotation matrices of unit quaternions (no checks); into ``out[..., :3, :3]``."""
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    r = np.empty(q.shape[:-1] + (3, 3)) if out is None else out
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz, xw, yw, zw = x * y, x * z, y * z, x * w, y * w, z * w
    r[..., 0, 0] = 1 - 2 * (yy + zz)
    r[..., 0, 1] = 2 * (xy - zw)
    r[..., 0, 2] = 2 * (xz + yw)
    r[..., 1, 0] = 2 * (xy + zw)
    r[..., 1, 1] = 1 - 2 * (xx + zz)
    r[..., 1, 2] = 2 * (yz - xw)
    r[..., 2, 0] = 2 * (xz - yw)
    r[..., 2, 1] = 2 * (yz + xw)
    r[..., 2, 2] = 1 - 2 * (xx + yy)
    return r


def trs_matrices(positions, rotations, scales, out: np.ndarray | None = None) -> np.ndarray:
    """(K, 4, 4) float64 local matrices ``T @ R @ S``, vectorised ``trs_matrix``.

    Args:
        positions: (K, 3) translations; rotations: (K, 4) unit quaternions (x, y, z, w)
            (not re-normalised: pass what ``quat_normalize``/the scene graph stores);
            scales: (K, 3) per-axis scales.
        out: optional (K, 4, 4) float64 array to write into.

    No value checks (the scene graph validates on assignment); shapes must match.
    """
    p = np.asarray(positions, np.float64)
    q = np.asarray(rotations, np.float64)
    s = np.asarray(scales, np.float64)
    k = p.shape[0]
    m = np.empty((k, 4, 4)) if out is None else out
    _unit_quat_matrices(q, m[:, :3, :3])
    m[:, :3, :3] *= s[:, None, :]
    m[:, :3, 3] = p
    m[:, 3, :3] = 0.0
    m[:, 3, 3] = 1.0
    return m
