"""Quaternions, look_at and projection matrices."""

import math

import numpy as np
import pytest

from engine.scene.camera import OrthographicCamera, PerspectiveCamera
from engine.scene.transforms import (
    look_at_rotation,
    matrix_to_quat,
    perspective_matrix,
    quat_from_axis_angle,
    quat_multiply,
    quat_to_matrix,
    slerp,
    trs_matrix,
)


def assert_rotation(r):
    assert np.all(np.isfinite(r))
    np.testing.assert_allclose(r.T @ r, np.eye(3), atol=1e-12)
    assert np.linalg.det(r) == pytest.approx(1.0, abs=1e-12)


def test_quat_to_matrix_90_about_z():
    q = quat_from_axis_angle((0, 0, 1), math.pi / 2)
    np.testing.assert_allclose(quat_to_matrix(q) @ [1, 0, 0], [0, 1, 0], atol=1e-12)


def test_matrix_to_quat_round_trip():
    rng = np.random.default_rng(0)
    for _ in range(50):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        back = matrix_to_quat(quat_to_matrix(q))
        assert min(np.abs(back - q).max(), np.abs(back + q).max()) < 1e-9


def test_quat_multiply_composes_rotations():
    a = quat_from_axis_angle((0, 1, 0), 0.3)
    b = quat_from_axis_angle((1, 0, 0), -1.1)
    np.testing.assert_allclose(quat_to_matrix(quat_multiply(a, b)),
                               quat_to_matrix(a) @ quat_to_matrix(b), atol=1e-12)


def test_slerp_takes_shortest_arc():
    q = slerp((0, 0, 0, 1), (0, 0, 0.7071, -0.7071), 0.5)
    expected = np.array([0, 0, -0.3827, 0.9239])
    assert min(np.abs(q - expected).max(), np.abs(q + expected).max()) < 1e-4


def test_trs_matrix_order_scale_then_rotate_then_translate():
    m = trs_matrix((1, 2, 3), quat_from_axis_angle((0, 0, 1), math.pi / 2), (2, 1, 1))
    np.testing.assert_allclose(m @ [1, 0, 0, 1], [1, 4, 3, 1], atol=1e-12)


def test_look_at_points_minus_z_at_target():
    r = look_at_rotation((0, 0, 5), (0, 0, 0))
    assert_rotation(r)
    np.testing.assert_allclose(-r[:, 2], [0, 0, -1], atol=1e-12)
    np.testing.assert_allclose(r[:, 1], [0, 1, 0], atol=1e-12)


@pytest.mark.parametrize("eye,target", [((100, 30, 100), (100, 0, 100)),
                                        ((0, -4, 0), (0, 3, 0))])
def test_look_at_parallel_to_up_uses_fallback(eye, target):
    r = look_at_rotation(eye, target, up=(0, 1, 0))
    assert_rotation(r)
    fwd = np.subtract(target, eye) / np.linalg.norm(np.subtract(target, eye))
    np.testing.assert_allclose(-r[:, 2], fwd, atol=1e-12)


def test_look_at_eye_equals_target_raises():
    with pytest.raises(ValueError, match="coincide"):
        look_at_rotation((1, 2, 3), (1, 2, 3))
    cam = PerspectiveCamera(position=(1, 2, 3))
    with pytest.raises(ValueError, match="coincide"):
        cam.look_at((1, 2, 3))


def test_camera_look_at_straight_down_is_finite():
    cam = PerspectiveCamera(position=(100, 30, 100))
    cam.look_at((100, 0, 100))
    vp = cam.view_projection_matrix
    assert np.all(np.isfinite(vp))
    assert_rotation(quat_to_matrix(cam.rotation))
    clip = vp @ [100, 0, 100, 1]
    np.testing.assert_allclose(clip[:2] / clip[3], [0, 0], atol=1e-9)


def test_perspective_maps_near_far_to_ndc():
    p = perspective_matrix(60, 1.5, 0.5, 20)
    for z, ndc in ((-0.5, -1.0), (-20, 1.0)):
        c = p @ [0, 0, z, 1]
        assert c[2] / c[3] == pytest.approx(ndc)
    c = p @ [math.tan(math.radians(30)) * 1.5, 0, -1, 1]
    assert c[0] / c[3] == pytest.approx(1.0)


def test_projection_cache_invalidated_by_setters():
    cam = PerspectiveCamera(fov_y=60, aspect=1)
    p1 = cam.projection_matrix
    assert cam.projection_matrix is p1  # cached
    cam.set_viewport(800, 600)
    p2 = cam.projection_matrix
    assert p2 is not p1 and p2[0, 0] == pytest.approx(p2[1, 1] * 600 / 800)
    cam.fov_y = 30
    assert cam.projection_matrix[1, 1] == pytest.approx(1 / math.tan(math.radians(15)))


def test_orthographic_keeps_w_one_and_fits_height():
    cam = OrthographicCamera(height=4, aspect=2, near=1, far=10)
    c = cam.projection_matrix @ [4, 2, -5, 1]
    assert c[3] == 1 and c[0] == pytest.approx(1) and c[1] == pytest.approx(1)


@pytest.mark.parametrize("bad", [{"fov_y": 0}, {"fov_y": 180}, {"near": 0},
                                 {"near": 5, "far": 1}])
def test_camera_rejects_bad_parameters(bad):
    with pytest.raises(ValueError):
        PerspectiveCamera(**bad)


def test_frame_sees_whole_box():
    cam = PerspectiveCamera(fov_y=40, aspect=0.5)
    box = np.array([[-3, -1, -2], [5, 2, 7]], float)
    cam.frame(box, azimuth=70, elevation=-30)
    corners = np.array([[box[i, 0], box[j, 1], box[k, 2], 1] for i in (0, 1) for j in (0, 1)
                        for k in (0, 1)])
    clip = corners @ cam.view_projection_matrix.T
    ndc = clip[:, :3] / clip[:, 3:]
    assert np.all(np.abs(ndc) <= 1)
