"""Orbit and fly controllers (no window: actions and synthetic input events) and the
aspect ratio following a resize."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine import Node, PerspectiveCamera, PointCloud, Renderer, Scene
from engine.controllers import FlyController, OrbitController
from engine.procedural import sphere_points


def finite_pose(cam):
    m = cam.world_matrix
    return np.all(np.isfinite(m)) and np.all(np.isfinite(cam.view_matrix))


def test_orbit_starts_from_the_camera_and_keeps_its_distance():
    cam = PerspectiveCamera(position=(3.0, 4.0, 0.0))
    orb = OrbitController(cam, target=(0, 0, 0))
    assert orb.distance == pytest.approx(5.0)
    assert orb.elevation == pytest.approx(math.degrees(math.atan2(4, 3)))
    assert orb.azimuth == pytest.approx(90.0)
    np.testing.assert_allclose(cam.position, (3, 4, 0), atol=1e-12)
    rng = np.random.default_rng(1)
    for _ in range(200):
        orb.rotate(*rng.uniform(-60, 60, 2))
        assert np.linalg.norm(cam.position) == pytest.approx(5.0, rel=1e-12)
        np.testing.assert_allclose(cam.forward, -cam.position / 5.0, atol=1e-12)


@pytest.mark.parametrize("push", [1e3, -1e3, 1e9])
def test_orbit_pitch_is_clamped_away_from_the_poles(push):
    cam = PerspectiveCamera(position=(0, 0, 5))
    orb = OrbitController(cam, max_pitch=89.0)
    orb.rotate(0, push)
    assert abs(orb.elevation) == pytest.approx(89.0)
    assert finite_pose(cam)
    up = cam.world_matrix[:3, 1]
    assert up[1] > 0  # never upside down
    orb.mouse_drag(0, -push, "left")  # dragging keeps it clamped too
    assert abs(orb.elevation) <= 89.0 + 1e-9 and finite_pose(cam)


def test_orbit_zoom_pan_and_events():
    cam = PerspectiveCamera(fov_y=90.0, position=(0, 0, 10))
    orb = OrbitController(cam, min_distance=0.5, max_distance=50)
    orb.zoom(2.0)
    assert orb.distance == pytest.approx(5.0)
    orb.zoom(1e-9)
    assert orb.distance == 50
    orb.zoom(1e9)
    assert orb.distance == 0.5
    with pytest.raises(ValueError):
        orb.zoom(0)
    orb.zoom(0.1)  # back to 5
    # fov 90 at distance 5: visible height is 10, so pan(0.1, 0) slides 1 unit right
    orb.pan(0.1, 0.0)
    np.testing.assert_allclose(orb.target, (1, 0, 0), atol=1e-12)
    np.testing.assert_allclose(cam.position, (1, 0, 5), atol=1e-12)
    orb.resize(800, 500)
    orb.mouse_drag(0, 50, "right")  # drag the scene up by 0.1 heights: camera moves down
    np.testing.assert_allclose(orb.target, (1, -1, 0), atol=1e-12)
    orb.scroll(2)
    assert orb.distance == pytest.approx(5 / 1.21)
    orb.key_down("left")
    orb.tick(0.5)  # 45 degrees at 90 deg/s
    orb.key_up("left")
    orb.tick(0.5)
    assert orb.azimuth == pytest.approx(45.0)


def test_orbit_rejects_bad_input():
    cam = PerspectiveCamera(position=(0, 0, 0))
    with pytest.raises(ValueError, match="on its target"):
        OrbitController(cam)
    orb = OrbitController(PerspectiveCamera(position=(0, 0, 3)))
    with pytest.raises(ValueError, match="finite"):
        orb.rotate(float("nan"), 0)
    assert finite_pose(orb.camera)


def test_fly_moves_with_wasd_shift_and_scroll():
    cam = PerspectiveCamera(position=(0, 1, 0))
    fly = FlyController(cam, speed=2.0, fast_factor=3.0)
    fly.key_down("w")
    fly.tick(0.5)
    np.testing.assert_allclose(cam.position, (0, 1, -1), atol=1e-12)
    fly.key_down("shift")
    fly.tick(0.5)
    np.testing.assert_allclose(cam.position, (0, 1, -4), atol=1e-12)
    fly.key_up("shift")
    fly.key_up("w")
    fly.key_down("d")
    fly.key_down("e")
    fly.tick(1.0)
    np.testing.assert_allclose(cam.position, (2, 3, -4), atol=1e-12)
    fly.key_up("d")
    fly.key_up("e")
    fly.tick(1.0)
    np.testing.assert_allclose(cam.position, (2, 3, -4), atol=1e-12)
    fly.scroll(1)
    assert fly.speed == pytest.approx(2.5)
    fly.scroll(-1e6)
    assert fly.speed == 1e-4


def test_fly_look_turns_and_clamps():
    cam = PerspectiveCamera(position=(0, 0, 0))
    fly = FlyController(cam, look_speed=0.5)
    fly.look(90, 0)  # turn left: -Z -> -X
    np.testing.assert_allclose(cam.forward, (-1, 0, 0), atol=1e-12)
    fly.move(1, 0, 0)
    np.testing.assert_allclose(cam.position, (-1, 0, 0), atol=1e-12)
    fly.mouse_motion(0, 1e6)  # look up past the pole: clamped
    assert math.degrees(fly.pitch) == pytest.approx(89.0)
    assert finite_pose(cam) and cam.world_matrix[1, 1] > 0
    fly.move(0, 1, 0)  # strafing stays horizontal even when looking up
    np.testing.assert_allclose(cam.position[1], 0.0, atol=1e-12)
    for _ in range(1000):
        fly.mouse_motion(123.4, -56.7)
    assert finite_pose(cam)


def test_fly_starts_from_the_camera_pose():
    cam = PerspectiveCamera(position=(1, 2, 3)).look_at((4, 2, 3))
    fly = FlyController(cam)
    np.testing.assert_allclose(fly.forward, (1, 0, 0), atol=1e-12)
    np.testing.assert_allclose(cam.forward, (1, 0, 0), atol=1e-12)


def pixel_radii(frame):
    covered = np.argwhere(frame.depth < 1.0)
    (y0, x0), (y1, x1) = covered.min(axis=0), covered.max(axis=0)
    return (x1 - x0 + 1) / 2, (y1 - y0 + 1) / 2


def test_resize_updates_aspect_and_keeps_a_sphere_round():
    scene = Scene()
    pts = sphere_points(20000, radius=1.0, seed=2)
    scene.add(Node("ball", geometry=PointCloud(pts, np.ones((len(pts), 3)), point_size=1)))
    cam = scene.add(PerspectiveCamera(fov_y=40, position=(0, 0, 6))).look_at((0, 0, 0))
    r = Renderer(scene, cam, size=(400, 600), backend="numpy")
    rx0, ry0 = pixel_radii(r.render())
    assert cam.aspect == pytest.approx(400 / 600)
    r.resize(800, 600)
    frame = r.render()
    assert frame.color.shape == (600, 800, 4)
    assert cam.aspect == pytest.approx(4 / 3)
    rx1, ry1 = pixel_radii(frame)
    # same vertical fov and height: the sphere keeps its size, and stays round
    assert abs(rx1 - ry1) <= 1.0 and abs(rx0 - ry0) <= 1.0
    assert abs(ry1 - ry0) <= 1.0
    # expected radius from the projection: f * r / sqrt(d^2 - r^2) * h/2
    f = 1 / math.tan(math.radians(20))
    expected = f / math.sqrt(35) * 300
    assert ry1 == pytest.approx(expected, abs=1.5)


@pytest.mark.timeout(120)
def test_controllers_in_a_real_window_record_save_and_play(tmp_path):
    """A pyglet window (headless EGL, its own process) forwards synthetic key, drag and
    scroll events through WindowControls; K records, P saves, Space plays back."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    probe = Path(__file__).with_name("controls_probe.py")
    env = dict(os.environ, PYGLET_HEADLESS="1")
    proc = subprocess.run([sys.executable, str(probe), str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=100, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    r = json.loads((tmp_path / "controls.json").read_text())
    assert r["azimuth_after_arrow"] == pytest.approx(45.0)  # held arrow: 90 deg/s * 0.5 s
    assert r["elevation_after_drag"] == pytest.approx(30.0)  # 100 px * 0.3 deg/px
    assert r["distance_after_scroll"] == pytest.approx(5 / 1.21)  # two scroll steps
    assert r["recorded_times"] == [0.0, 1.5]  # K twice, record_interval 1.5 s
    np.testing.assert_allclose(r["recorded_pos1"], r["camera_pos"], atol=1e-12)
    assert r["playing"] and r["playback_error"] < 1e-12
    assert not r["playing_after_stop"] and r["distance_after_stop"] > 0
    assert r["fly_moved"] == pytest.approx(2.0)  # W + shift: 2 u/s * 4 * 0.25 s


def test_view_command_wires_controller_playback_and_recording(tmp_path):
    from engine import cli
    from engine.display.controls import WindowControls
    from engine.pathfile import save_path
    from engine.shots import orbit

    path = orbit((0, 1, 0), 6.0, 20, turns=0.25, duration=3.0)
    pf = save_path(path, tmp_path / "p.json")
    args = cli.build_parser().parse_args(
        ["view", "demo", "--camera", str(pf), "--record", str(tmp_path / "rec.json")])
    scene, camera = cli.load_sources(args.files)
    playback = cli._place_camera(args, scene, camera)
    r = Renderer(scene, camera, (32, 24), backend="numpy")
    controls = cli._window_controls(args, scene, camera, r, playback)
    assert isinstance(controls, WindowControls) and controls.playing
    assert isinstance(controls.controller, OrbitController)
    controls.tick(1.25)
    np.testing.assert_allclose(camera.world_matrix[:3, 3], path.pose(1.25).position, atol=1e-9)
    controls.tick(2.0)  # loops: 3.25 s -> 0.25 s
    np.testing.assert_allclose(camera.world_matrix[:3, 3], path.pose(0.25).position, atol=1e-9)
    controls.toggle_playback()  # hand over to the orbit controller, view unchanged
    np.testing.assert_allclose(camera.world_matrix[:3, 3], path.pose(0.25).position, atol=1e-9)
    controls.record_keyframe()
    controls.controller.rotate(30, 0)
    controls.record_keyframe()
    saved = controls.save_recording()
    from engine.pathfile import load_path

    assert [k.time for k in load_path(saved).keyframes] == [0.0, 2.0]
    args = cli.build_parser().parse_args(["view", "demo", "--controller", "fly"])
    scene, camera = cli.load_sources(args.files)
    controls = cli._window_controls(args, scene, camera, r, cli._place_camera(args, scene, camera))
    assert isinstance(controls.controller, FlyController) and not controls.playing
