"""Orbit and fly controllers (no window: actions and synthetic input events) and the
aspect ratio following a resize."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine import Node, PerspectiveCamera, PointCloud, Renderer, Scene
from engine.controls.controllers import FlyController, OrbitController
from engine.scene.procedural import sphere_points


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
    orb.mouse_drag(0, -push, "mouse_left")  # dragging keeps it clamped too
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
    orb.mouse_drag(0, 50, "mouse_right")  # drag the scene up by 0.1 heights: camera moves down
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
    fly.key_down("lshift")
    fly.tick(0.5)
    np.testing.assert_allclose(cam.position, (0, 1, -4), atol=1e-12)
    fly.key_up("lshift")
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


BIG = 1.7976931348623157e308  # largest finite float64


@pytest.mark.parametrize("steps", [1e6, BIG])
def test_scrolling_any_finite_amount_clamps_distance_and_speed(steps):
    """Regression: 1.1 ** 1e6 overflowed and 1.1 ** -1e6 became a zoom factor of 0."""
    orb = OrbitController(PerspectiveCamera(position=(0, 0, 5)), min_distance=0.5,
                          max_distance=50)
    orb.scroll(steps)
    assert orb.distance == 0.5 and finite_pose(orb.camera)
    np.testing.assert_allclose(orb.camera.position, (0, 0, 0.5), atol=1e-12)
    orb.scroll(-steps)
    assert orb.distance == 50 and finite_pose(orb.camera)
    np.testing.assert_allclose(orb.camera.position, (0, 0, 50), atol=1e-12)
    orb.scroll(-1)  # at the limit: stays there
    assert orb.distance == 50
    orb.scroll(1)  # and comes back by one step
    assert orb.distance == pytest.approx(50 / 1.1)
    fly = FlyController(PerspectiveCamera(), speed=2.0, min_speed=0.01, max_speed=100)
    fly.scroll(steps)
    assert fly.speed == 100
    fly.scroll(-steps)
    assert fly.speed == 0.01
    fly.scroll(2)
    assert fly.speed == pytest.approx(0.01 * 1.25**2)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), "x", None])
def test_non_finite_input_is_rejected_naming_the_argument_and_keeps_the_camera(bad):
    orb = OrbitController(PerspectiveCamera(position=(1, 2, 5)))
    fly = FlyController(PerspectiveCamera(position=(1, 2, 5)))
    calls = [
        (orb, "rotate", (bad, 0), "d_azimuth"), (orb, "rotate", (0, bad), "d_elevation"),
        (orb, "pan", (bad, 0), "dx"), (orb, "pan", (0, bad), "dy"),
        (orb, "zoom", (bad,), "factor"), (orb, "scroll", (bad,), "steps"),
        (orb, "mouse_drag", (bad, 0, "mouse_left"), "dx"),
        (orb, "mouse_drag", (0, bad, "mouse_right"), "dy"),
        (orb, "tick", (bad,), "dt"), (orb, "resize", (bad, 100), "width"),
        (fly, "move", (bad, 0, 0), "forward"), (fly, "move", (0, bad, 0), "right"),
        (fly, "move", (0, 0, bad), "up"), (fly, "look", (bad, 0), "d_yaw"),
        (fly, "look", (0, bad), "d_pitch"), (fly, "mouse_motion", (0, bad), "dy"),
        (fly, "scroll", (bad,), "steps"), (fly, "tick", (bad,), "dt"),
        (fly, "resize", (100, bad), "height"),
    ]
    for ctrl, method, args, name in calls:
        before = ctrl.camera.world_matrix.copy()
        with pytest.raises(ValueError, match=name):
            getattr(ctrl, method)(*args)
        np.testing.assert_array_equal(ctrl.camera.world_matrix, before)
    with pytest.raises(ValueError, match="speed"):
        fly.speed = bad


def test_constructors_reject_bad_settings():
    cam = PerspectiveCamera(position=(0, 0, 5))
    for kw, name in [({"max_distance": float("inf")}, "max_distance"),
                     ({"min_distance": float("nan")}, "min_distance"),
                     ({"min_distance": 10, "max_distance": 1}, "min_distance < max_distance"),
                     ({"rotate_speed": -0.3}, "rotate_speed"),
                     ({"target": (0, float("nan"), 0)}, "target"),
                     ({"max_pitch": float("nan")}, "max_pitch")]:
        with pytest.raises(ValueError, match=name):
            OrbitController(cam, **kw)
    for kw, name in [({"speed": -1}, "speed"), ({"speed": 0}, "speed"),
                     ({"speed": float("inf")}, "speed"), ({"fast_factor": -4}, "fast_factor"),
                     ({"look_speed": float("nan")}, "look_speed"),
                     ({"min_speed": 5, "max_speed": 1}, "min_speed < max_speed")]:
        with pytest.raises(ValueError, match=name):
            FlyController(cam, **kw)
    # a positive speed outside the range is clamped, like the orbit's starting distance
    assert FlyController(cam, speed=1e9).speed == 1e6
    assert FlyController(cam, speed=1e-9).speed == 1e-4


def test_negative_speed_and_dt_are_rejected_zero_dt_is_a_no_op():
    """Regression: FlyController(speed=-1) and tick(-1) flew the camera backwards."""
    with pytest.raises(ValueError, match="speed"):
        FlyController(PerspectiveCamera(), speed=-1)
    fly = FlyController(PerspectiveCamera(position=(0, 0, 0)), speed=2.0)
    with pytest.raises(ValueError, match="speed"):
        fly.speed = -1
    fly.key_down("w")
    with pytest.raises(ValueError, match="dt"):
        fly.tick(-1)
    np.testing.assert_array_equal(fly.camera.position, (0, 0, 0))
    fly.tick(0)
    np.testing.assert_array_equal(fly.camera.position, (0, 0, 0))
    fly.tick(0.25)
    np.testing.assert_allclose(fly.camera.position, (0, 0, -0.5), atol=1e-12)
    orb = OrbitController(PerspectiveCamera(position=(0, 0, 5)))
    orb.key_down("left")
    with pytest.raises(ValueError, match="dt"):
        orb.tick(-0.5)
    orb.tick(0)
    assert orb.azimuth == pytest.approx(0.0)


def test_huge_finite_input_keeps_the_camera_finite_or_is_rejected():
    cam = PerspectiveCamera(fov_y=90.0, position=(0, 0, 5))
    orb = OrbitController(cam, min_distance=0.5, max_distance=50)
    orb.rotate(1e308, 1e308)  # the azimuth wraps exactly, the elevation clamps
    assert orb.azimuth == pytest.approx(math.remainder(math.fmod(1e308, 360.0), 360.0))
    assert orb.elevation == pytest.approx(89.0) and finite_pose(cam)
    orb.rotate(0, -BIG)
    assert orb.elevation == pytest.approx(-89.0) and finite_pose(cam)
    orb.zoom(5e-324)  # tiniest positive factor: as far as allowed
    assert orb.distance == 50
    # fov 90 at distance 50: one screen height is 100 world units, so BIG heights
    # overflow and are refused without moving.
    target = orb.target.copy()
    with pytest.raises(ValueError, match="dx"):
        orb.pan(BIG, 0)
    np.testing.assert_array_equal(orb.target, target)
    orb.zoom(BIG)
    assert orb.distance == 0.5  # now one screen height is 1 world unit
    orb.rotate(0, 89.0 - orb.elevation)
    orb.pan(0, 1e300)
    assert orb.target[1] == pytest.approx(1e300 * math.cos(math.radians(89.0)), rel=1e-9)
    assert finite_pose(cam)
    orb.key_down("left")
    orb.key_down("plus")
    az = orb.azimuth
    orb.tick(BIG)  # whole turns drop out; zoomed fully in
    assert orb.azimuth == pytest.approx(math.remainder(az + 90.0 * math.fmod(BIG, 4.0), 360.0))
    assert orb.distance == 0.5 and finite_pose(cam)
    with pytest.raises(ValueError, match="dx"):
        OrbitController(PerspectiveCamera(position=(0, 0, 5)), rotate_speed=10).mouse_drag(BIG, 0)

    fly = FlyController(PerspectiveCamera(position=(0, 0, 0)), speed=2.0, look_speed=10)
    fly.look(BIG, BIG)
    assert math.degrees(fly.pitch) == pytest.approx(89.0) and finite_pose(fly.camera)
    fly.look(-math.degrees(fly.yaw), -math.degrees(fly.pitch))  # back to looking down -Z
    fly.move(1e308, 0, 0)
    np.testing.assert_allclose(fly.camera.position, (0, 0, -1e308))
    with pytest.raises(ValueError, match="forward"):
        fly.move(1e308, 0, 0)  # would pass -1.8e308
    fly.key_down("s")
    fly.tick(1e307)  # back 2e307
    np.testing.assert_allclose(fly.camera.position, (0, 0, -8e307))
    with pytest.raises(ValueError, match="dt"):
        fly.tick(BIG)
    np.testing.assert_allclose(fly.camera.position, (0, 0, -8e307))
    with pytest.raises(ValueError, match="dx"):
        fly.mouse_motion(BIG, 0)  # 10 deg per pixel overflows
    assert finite_pose(fly.camera)


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
    from engine.animation.pathfile import save_path
    from engine.animation.shots import orbit
    from engine.cli import commands as cli
    from engine.display.controls import WindowControls

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
    from engine.animation.pathfile import load_path

    assert [k.time for k in load_path(saved).keyframes] == [0.0, 2.0]
    args = cli.build_parser().parse_args(["view", "demo", "--controller", "fly"])
    scene, camera = cli.load_sources(args.files)
    controls = cli._window_controls(args, scene, camera, r, cli._place_camera(args, scene, camera))
    assert isinstance(controls.controller, FlyController) and not controls.playing


# --- one input vocabulary (engine.controls.input names) ------------------------------------
def test_every_zoom_key_halves_the_distance_per_second():
    """"plus", "equal" (the same key on most layouts) and "num_add" zoom in by a factor
    2 per second, "minus" and "num_subtract" out: 4 -> 2 -> 4 here."""
    for zoom_in, zoom_out in (("plus", "minus"), ("equal", "num_subtract"),
                              ("num_add", "minus")):
        orb = OrbitController(PerspectiveCamera(position=(0, 0, 4)))
        orb.key_down(zoom_in)
        orb.tick(1.0)
        orb.key_up(zoom_in)
        assert orb.distance == pytest.approx(2.0)
        np.testing.assert_allclose(orb.camera.position, (0, 0, 2), atol=1e-12)
        orb.key_down(zoom_out)
        orb.tick(1.0)
        assert orb.distance == pytest.approx(4.0)


def test_either_shift_key_speeds_the_flight_up():
    for shift in ("lshift", "rshift"):
        fly = FlyController(PerspectiveCamera(position=(0, 0, 0)), speed=1.0, fast_factor=5.0)
        fly.key_down(shift)
        fly.key_down("w")
        fly.tick(0.5)  # 1 unit/s x 5 for 0.5 s along -Z
        np.testing.assert_allclose(fly.camera.position, (0, 0, -2.5), atol=1e-12)


def test_keys_and_buttons_may_be_pyglet_constants():
    from engine.controls.input import key, mouse

    a, b = (OrbitController(PerspectiveCamera(position=(0, 0, 5))) for _ in range(2))
    a.mouse_drag(20, 0, mouse.LEFT)
    b.mouse_drag(20, 0, "mouse_left")  # 20 px x 0.3 deg/px = 6 degrees
    assert a.azimuth == pytest.approx(b.azimuth) == pytest.approx(-6.0)
    a.key_down(key.LSHIFT)
    assert a.held == {"lshift"}


def test_unknown_keys_and_buttons_are_errors_naming_them():
    orb = OrbitController(PerspectiveCamera(position=(0, 0, 5)))
    with pytest.raises(ValueError, match="'shfit'"):
        orb.key_down("shfit")
    with pytest.raises(ValueError, match="unknown mouse button 'space'"):
        orb.mouse_drag(1, 1, "space")
    with pytest.raises(ValueError, match="unknown mouse button 'wheel'"):
        FlyController(PerspectiveCamera()).mouse_drag(1, 1, "wheel")
    assert orb.held == set()


def test_the_former_names_still_work_with_a_deprecation_warning():
    """Until the next release: "left"/"middle"/"right" as mouse_drag buttons and "shift"
    as a key act exactly like "mouse_left"/"mouse_middle"/"mouse_right" and "lshift"."""
    for old, new in (("left", "mouse_left"), ("right", "mouse_right"),
                     ("middle", "mouse_middle")):
        a, b = (OrbitController(PerspectiveCamera(position=(0, 0, 5))) for _ in range(2))
        with pytest.warns(DeprecationWarning, match=f"'{old}' is deprecated: use '{new}'"):
            a.mouse_drag(30, -10, old)
        b.mouse_drag(30, -10, new)
        np.testing.assert_array_equal(a.camera.position, b.camera.position)
        np.testing.assert_array_equal(a.target, b.target)
    fly = FlyController(PerspectiveCamera(position=(0, 0, 0)), speed=1.0, fast_factor=5.0)
    with pytest.warns(DeprecationWarning, match="'shift' is deprecated: use 'lshift'"):
        fly.key_down("shift")
    assert fly.held == {"lshift"}
    fly.key_down("w")
    fly.tick(0.5)
    np.testing.assert_allclose(fly.camera.position, (0, 0, -2.5), atol=1e-12)
    with pytest.warns(DeprecationWarning):
        fly.key_up("shift")
    assert fly.held == {"w"}


def test_the_window_names_pyglet_input_as_the_controllers_do():
    from engine.controls.input import key, mouse
    from engine.display.controls import WindowControls, button_name, key_name

    assert key_name(key.LSHIFT) == "lshift" and key_name(key.EQUAL) == "equal"
    assert key_name(key.LEFT) == "left" and key_name(0xFFFFFFFFFF) is None
    assert button_name(mouse.LEFT | mouse.RIGHT) == "mouse_left"  # left wins
    assert button_name(mouse.MIDDLE | mouse.RIGHT) == "mouse_middle"
    assert button_name(mouse.RIGHT) == "mouse_right" and button_name(0) is None
    # pyglet's right shift reaches the fly controller and speeds it up
    fly = FlyController(PerspectiveCamera(position=(0, 0, 0)), speed=1.0, fast_factor=5.0)
    controls = WindowControls(fly)
    for symbol in (key.RSHIFT, key.W):
        controls.on_key_press(symbol, 0)
    controls.on_key_press(0xFFFFFFFFFF, 0)  # a key pyglet has no name for: ignored
    controls.tick(0.5)
    np.testing.assert_allclose(fly.camera.position, (0, 0, -2.5), atol=1e-12)
    controls.on_key_release(key.RSHIFT, 0)
    assert fly.held == {"w"}
    # a right drag pans the orbit like the controller's own "mouse_right"
    a, b = (OrbitController(PerspectiveCamera(position=(0, 0, 5))) for _ in range(2))
    WindowControls(a).on_mouse_drag(0, 0, 0, 40, mouse.RIGHT, 0)
    b.mouse_drag(0, 40, "mouse_right")
    assert not np.allclose(a.target, 0) and np.array_equal(a.target, b.target)
