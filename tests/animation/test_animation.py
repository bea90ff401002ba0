"""Easing, interpolation, CameraPath, shot helpers and per-frame camera scripts."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine import PerspectiveCamera, Scene
from engine.animation.camera_path import CameraPath, CameraScript, Keyframe
from engine.animation.easing import EASINGS, ease
from engine.animation.interpolation import evaluate_segment, monotone_tangents
from engine.animation.pose import look_rotation
from engine.animation.shots import dolly, fly_through, look_around, orbit
from engine.scene.transforms import quat_from_axis_angle, quat_to_matrix, slerp

IDENT = (0.0, 0.0, 0.0, 1.0)


def scalar_path(pairs, mode):
    """A path whose position x carries the scalar keys (other channels fixed)."""
    path = CameraPath(interpolation=mode)
    for t, v in pairs:
        path.add(t, (v, 0.0, 0.0), orientation=IDENT)
    return path


def test_slerp_takes_the_shortest_arc():
    q = slerp((0, 0, 0, 1), (0, 0, 0.7071, -0.7071), 0.5)
    expected = np.array([0.0, 0.0, -0.3827, 0.9239])
    sign = 1.0 if q[3] > 0 else -1.0
    np.testing.assert_allclose(sign * q, expected, atol=1e-4)
    # -45 degrees about Z, not +135: rotates +X towards -Y.
    x = quat_to_matrix(q) @ np.array([1.0, 0.0, 0.0])
    np.testing.assert_allclose(x, [math.sqrt(0.5), -math.sqrt(0.5), 0.0], atol=1e-4)


def test_path_slerps_orientation_keys_along_the_shortest_arc():
    path = CameraPath(interpolation="linear")
    path.add(0.0, (0, 0, 0), orientation=(0, 0, 0, 1))
    path.add(1.0, (0, 0, 0), orientation=(0, 0, 0.7071, -0.7071))
    q = path.pose(0.5).rotation
    np.testing.assert_allclose(q * np.sign(q[3]), [0, 0, -0.3827, 0.9239], atol=1e-4)


def test_monotone_holds_a_flat_segment_exactly():
    path = scalar_path([(0, 0.0), (1, 10.0), (2, 10.0)], "monotone")
    for t in np.linspace(1.0, 2.0, 101):
        assert path.pose(t).position[0] == 10.0
    # and it rises monotonically on [0, 1] without passing 10
    xs = [path.pose(t).position[0] for t in np.linspace(0.0, 1.0, 101)]
    assert np.all(np.diff(xs) >= 0) and xs[0] == 0.0 and xs[-1] == 10.0


@pytest.mark.parametrize("mode", ["linear", "monotone"])
def test_segments_stay_within_neighbouring_keys(mode):
    rng = np.random.default_rng(3)
    values = rng.normal(size=12) * 100
    path = scalar_path(list(enumerate(values)), mode)
    for k in range(len(values) - 1):
        lo, hi = sorted(values[k:k + 2])
        for t in np.linspace(k, k + 1, 37):
            x = path.pose(t).position[0]
            assert lo <= x <= hi


def test_linear_and_step_values():
    lin = scalar_path([(0, 2.0), (4, 6.0)], "linear")
    assert lin.pose(1.0).position[0] == pytest.approx(3.0)
    assert lin.pose(-5).position[0] == 2.0 and lin.pose(99).position[0] == 6.0
    step = scalar_path([(0, 2.0), (4, 6.0), (5, 1.0)], "step")
    assert step.pose(3.999).position[0] == 2.0
    assert step.pose(4.0).position[0] == 6.0


def test_monotone_tangents_fritsch_carlson():
    times = np.array([0.0, 1.0, 2.0, 3.0])
    values = np.array([[0.0], [1.0], [1.0], [0.0]])
    m = monotone_tangents(times, values)
    # extrema and flat neighbours get zero tangents; ends take the end secants
    np.testing.assert_array_equal(m[:, 0], [1.0, 0.0, 0.0, -1.0])


def test_catmull_rom_passes_through_keys_and_is_centripetal_safe():
    values = np.array([[0.0, 0, 0], [1, 0, 0], [1, 0, 0], [2, 1, 0]])  # a repeated key
    times = np.arange(4.0)
    for k in range(3):
        np.testing.assert_allclose(evaluate_segment("catmull_rom", times, values, k, 0.0),
                                   values[k], atol=1e-12)
        np.testing.assert_allclose(evaluate_segment("catmull_rom", times, values, k, 1.0),
                                   values[k + 1], atol=1e-12)
        for u in np.linspace(0, 1, 11):
            assert np.all(np.isfinite(evaluate_segment("catmull_rom", times, values, k, u)))


def test_per_segment_interpolation_and_easing():
    path = CameraPath(interpolation="linear")
    path.add(0, (0, 0, 0), orientation=IDENT, easing="ease-in")
    path.add(1, (1, 0, 0), orientation=IDENT, interpolation="step")
    path.add(2, (2, 0, 0), orientation=IDENT)
    assert path.pose(0.5).position[0] == pytest.approx(0.25)  # ease-in: u^2
    assert path.pose(1.9).position[0] == 1.0  # step segment holds its first key


@pytest.mark.parametrize("name", list(EASINGS))
def test_easings_fix_the_ends_and_never_run_backwards(name):
    assert ease(name, 0.0) == 0.0 and ease(name, 1.0) == 1.0
    u = np.linspace(0, 1, 201)
    v = np.array([ease(name, x) for x in u])
    assert np.all(np.diff(v) >= 0)


def test_easing_values():
    assert ease("ease-in", 0.5) == 0.25
    assert ease("ease-out", 0.5) == 0.75
    assert ease("ease-in-out", 0.25) == pytest.approx(0.0625)
    assert ease("ease-in-out", 0.5) == 0.5
    assert ease("smoothstep", 0.25) == pytest.approx(0.15625)
    with pytest.raises(ValueError, match="unknown easing"):
        ease("bounce", 0.5)


def test_target_keys_look_at_the_interpolated_target():
    path = CameraPath(interpolation="linear")
    path.add(0, (0, 0, 5), target=(0, 0, 0), fov=40)
    path.add(2, (5, 0, 0), target=(0, 1, 0), fov=60)
    pose = path.pose(1.0)
    np.testing.assert_allclose(pose.position, [2.5, 0, 2.5])
    expected = np.array([0, 0.5, 0]) - pose.position
    np.testing.assert_allclose(pose.forward, expected / np.linalg.norm(expected), atol=1e-12)
    assert pose.fov_y == pytest.approx(50.0)


def test_apply_moves_a_camera_under_a_transformed_parent():
    scene = Scene()
    from engine import Node

    rig = scene.add(Node("rig", position=(10, 0, 0),
                         rotation=quat_from_axis_angle((0, 1, 0), 0.7), scale=2.0))
    cam = rig.add(PerspectiveCamera(fov_y=50))
    path = CameraPath()
    path.add(0, (1, 2, 3), target=(0, 0, 0), fov=35)
    path.apply(cam, 0.0)
    np.testing.assert_allclose(cam.world_matrix[:3, 3], [1, 2, 3], atol=1e-9)
    np.testing.assert_allclose(cam.forward, -np.array([1, 2, 3]) / math.sqrt(14), atol=1e-9)
    assert cam.fov_y == 35


def test_keyframe_and_path_validation():
    with pytest.raises(ValueError, match="exactly one"):
        Keyframe(0, (0, 0, 0))
    with pytest.raises(ValueError, match="position must have 3"):
        Keyframe(0, (0, 0), target=(1, 1, 1))
    with pytest.raises(ValueError, match="finite"):
        Keyframe(0, (0, 0, float("nan")), target=(1, 1, 1))
    path = CameraPath()
    path.add(1, (0, 0, 1), target=(0, 0, 0))
    with pytest.raises(ValueError, match="increase"):
        path.add(1, (0, 0, 2), target=(0, 0, 0))
    with pytest.raises(ValueError, match="fov"):
        path.add(2, (0, 0, 2), target=(0, 0, 0), fov=30)
    with pytest.raises(ValueError, match="no keyframes"):
        CameraPath().pose(0)


def test_orbit_shot_keeps_radius_and_looks_at_target():
    target = np.array([1.0, 2.0, -3.0])
    path = orbit(target, radius=4.0, elevation=30.0, turns=1, duration=6.0)
    for t in np.linspace(0, 6, 301):
        pose = path.pose(t)
        off = pose.position - target
        assert np.linalg.norm(off) == pytest.approx(4.0, rel=1e-4)
        assert math.degrees(math.asin(off[1] / np.linalg.norm(off))) == pytest.approx(30, abs=0.01)
        np.testing.assert_allclose(pose.forward, -off / np.linalg.norm(off), atol=1e-9)
    # a quarter of the duration is a quarter turn (azimuth 90: +X side)
    off = path.pose(1.5).position - target
    assert math.degrees(math.atan2(off[0], off[2])) == pytest.approx(90.0, abs=1e-6)


def test_dolly_look_around_and_fly_through():
    d = dolly((0, 0, 10), (0, 0, 0), 6.0, duration=2.0)
    np.testing.assert_allclose(d.pose(2.0).position, [0, 0, 4])
    assert d.pose(1.0).position[2] == pytest.approx(7.0)  # ease-in-out is symmetric
    with pytest.raises(ValueError, match="reach the target"):
        dolly((0, 0, 10), (0, 0, 0), 10.0)

    la = look_around((1, 2, 3), duration=8.0, turns=1.0)
    for t, fwd in [(0, (0, 0, -1)), (2, (-1, 0, 0)), (4, (0, 0, 1)), (5, (0.7071, 0, 0.7071))]:
        np.testing.assert_allclose(la.pose(t).forward, fwd, atol=1e-4)
        np.testing.assert_allclose(la.pose(t).position, (1, 2, 3))

    pts = [(0, 0, 0), (4, 0, 0), (4, 0, -3)]
    ft = fly_through(pts, duration=7.0)
    assert [k.time for k in ft.keyframes] == [0.0, 4.0, 7.0]  # proportional to distance
    np.testing.assert_allclose(ft.pose(4.0).position, (4, 0, 0))
    np.testing.assert_allclose(ft.pose(0.0).forward, (1, 0, 0), atol=1e-12)


def test_function_script_runs_per_frame():
    cam = PerspectiveCamera()
    seen = []

    def script(camera, t):
        seen.append(t)
        camera.position = (math.cos(t), 0.0, math.sin(t))
        camera.look_at((0, 0, 0))

    s = CameraScript(script)
    for k in range(4):
        assert s.apply(cam, k / 30)
    assert seen == [0.0, 1 / 30, 2 / 30, 3 / 30]
    np.testing.assert_allclose(cam.position, (math.cos(0.1), 0, math.sin(0.1)))


def test_generator_script_receives_each_time_and_can_finish():
    cam = PerspectiveCamera()
    seen = []

    def script(camera, t):
        while t < 0.1:
            seen.append(t)
            camera.position = (0.0, 0.0, 5.0 + t)
            t = yield
        # returning ends the move

    s = CameraScript(script)
    results = [s.apply(cam, k / 30) for k in range(6)]
    assert results == [True, True, True, False, False, False]
    assert seen == [0.0, 1 / 30, 2 / 30]
    s.reset()
    assert s.apply(cam, 0.0) and seen[-1] == 0.0


def test_look_rotation_matches_camera_look_at():
    cam = PerspectiveCamera(position=(3, 4, 5)).look_at((0, 1, 0))
    q = look_rotation((3, 4, 5), (0, 1, 0))
    np.testing.assert_allclose(quat_to_matrix(q), quat_to_matrix(cam.rotation), atol=1e-12)
