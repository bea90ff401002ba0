"""Application layer: fixed-timestep loop, input actions, HUD, picking, collisions."""

import math

import numpy as np
import pytest

from engine import Node, PerspectiveCamera, PointCloud, Scene
from engine.controls.input import InputMap, InputScript, input_name, key, mouse
from engine.game.app import App
from engine.game.collision import (
    bounding_sphere,
    nodes_collide,
    overlap_pairs,
    ray_cast,
    ray_sphere,
    spheres_overlap,
)
from engine.game.hud import Hud
from engine.game.picking import pick_point


class Recorder(App):
    def __init__(self, **kw):
        super().__init__(size=(64, 48), backend="numpy", **kw)
        self.dts, self.started = [], 0

    def on_start(self):
        self.started += 1

    def on_update(self, dt):
        self.dts.append(dt)


# --- fixed timestep -------------------------------------------------------------------
@pytest.mark.parametrize("hz, frame_dt, frames", [(120, 1 / 60, 60), (120, 1 / 30, 45),
                                                  (60, 1 / 144, 144), (100, 0.01, 250)])
def test_fixed_timestep_runs_exactly_the_updates_simulated_time_covers(hz, frame_dt, frames):
    app = Recorder(update_hz=hz)
    counts = [app.advance(frame_dt) for _ in range(frames)]
    expected = round(frames * frame_dt * hz)
    assert app.updates == len(app.dts) == expected
    assert app.time == pytest.approx(frames * frame_dt, abs=1e-12)
    assert all(dt == 1.0 / hz for dt in app.dts) and app.started == 1
    if hz * frame_dt >= 1 and float(hz * frame_dt).is_integer():
        assert set(counts) == {int(hz * frame_dt)}  # exactly k updates every frame


def test_accumulator_carries_fractions_and_alpha_reports_them():
    app = Recorder(update_hz=100)
    assert app.advance(0.025) == 2 and app.alpha == pytest.approx(0.5)
    assert app.advance(0.005) == 1 and app.alpha == pytest.approx(0.0, abs=1e-9)
    assert app.updates == 3


def test_pause_time_scale_and_catch_up_cap():
    app = Recorder(update_hz=120, max_updates_per_frame=4)
    app.pause()
    assert app.advance(1.0) == 0 and app.updates == 0
    app.resume()
    app.time_scale = 0.5
    for _ in range(60):
        app.advance(1 / 60)
    assert app.updates == 60  # half a second of simulated time at 120 Hz
    app.time_scale = 1.0
    assert app.advance(1.0) == 4  # a 1 s hitch runs 4 updates and drops the rest
    assert app.dropped_time == pytest.approx(1.0 - 4 / 120)
    with pytest.raises(ValueError, match="time_scale"):
        app.time_scale = -1
    with pytest.raises(ValueError, match="frame_dt"):
        app.advance(float("nan"))


def test_headless_runs_are_reproducible_with_the_seed(tmp_path):
    def run(seed):
        scene = Scene()
        app = App(scene, PerspectiveCamera(position=(0, 0, 4)), (80, 60), backend="numpy",
                  seed=seed)

        def on_update(dt):
            if app.updates % 10 == 0:
                app.spawn(Node("p", position=app.rng.uniform(-1, 1, 3),
                               geometry=PointCloud(app.rng.uniform(-0.1, 0.1, (30, 3)),
                                                   point_size=2)))
        app.on_update = on_update
        return app.run_headless(12, out=tmp_path / f"s{seed}.png").color

    a, b, c = run(1), run(1), run(2)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert (tmp_path / "s1.png").stat().st_size > 0


def test_headless_per_frame_pattern_writes_every_frame(tmp_path):
    app = App(size=(32, 24), backend="numpy")
    app.scene.add(Node("p", geometry=PointCloud(np.zeros((1, 3)))))
    app.run_headless(3, out=tmp_path / "f{frame:02d}.png")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f00.png", "f01.png", "f02.png"]
    with pytest.raises(ValueError, match="frames"):
        app.run_headless(0)


# --- input ----------------------------------------------------------------------------
def test_pressed_held_released_latch_once_per_update():
    inp = InputMap().bind("fire", key.SPACE, "enter").bind_mouse("fire", mouse.LEFT)
    inp.key_down(key.SPACE)
    inp.update()
    assert (inp.pressed("fire"), inp.held("fire"), inp.released("fire")) == (True, True, False)
    inp.update()
    assert (inp.pressed("fire"), inp.held("fire"), inp.released("fire")) == (False, True, False)
    inp.key_up("space")
    inp.update()
    assert (inp.pressed("fire"), inp.held("fire"), inp.released("fire")) == (False, False, True)
    inp.update()
    assert not (inp.pressed("fire") or inp.held("fire") or inp.released("fire"))
    # A tap between two updates is pressed and released in one update, never held.
    inp.mouse_down(mouse.LEFT)
    inp.mouse_up("mouse_left")
    inp.update()
    assert (inp.pressed("fire"), inp.held("fire"), inp.released("fire")) == (True, False, True)
    # Two inputs on one action: held while either is down.
    inp.key_down("enter")
    inp.key_down(key.SPACE)
    inp.key_up("enter")
    inp.update()
    assert inp.held("fire") and inp.pressed("fire")


def test_input_names_and_errors():
    assert input_name(key.SPACE) == "space" and input_name(key.A) == "a"
    assert input_name("Left") == "left" and input_name("mouse_right") == "mouse_right"
    with pytest.raises(ValueError, match="unknown input 'spacebar'"):
        InputMap().bind("x", "spacebar")
    with pytest.raises(KeyError, match="no input is bound to action 'jump'"):
        InputMap().pressed("jump")
    with pytest.raises(ValueError, match="kind"):
        InputScript([(0, "wiggle", "a")])


def test_scripted_input_reaches_actions_hooks_and_cursor_on_the_right_update():
    app = Recorder()
    app.input.bind("fire", key.SPACE)
    seen, keys = [], []
    app.on_update = lambda dt: seen.append((app.updates, app.input.pressed("fire"),
                                            app.input.held("fire"), app.input.cursor))
    app.on_key = lambda name, down: keys.append((app.updates, name, down))
    app.script = InputScript([(2, "tap", "space"), (3, "move", (10, 20))])
    for _ in range(3):
        app.advance(1 / 60)  # 6 updates
    assert [s[1] for s in seen] == [False, False, True, False, False, False]
    assert [s[2] for s in seen] == [False, False, True, False, False, False]
    assert seen[3][3] == (10.0, 20.0)
    assert keys == [(2, "space", True), (3, "space", False)]


def test_window_mouse_coordinates_flip_to_top_left():
    inp = InputMap()
    inp.mouse_move(30, 10, height=100)
    assert inp.cursor == (30.0, 90.0)


# --- HUD --------------------------------------------------------------------------------
def test_hud_draws_text_in_headless_frames_and_overlay():
    app = App(size=(160, 60), backend="numpy")
    blank = app.render_frame().color.copy()
    app.hud["score"] = "Score 42"
    drawn = app.render_frame().color
    changed = np.any(drawn != blank, axis=2)
    ys, xs = np.nonzero(changed)
    assert changed.sum() > 30 and ys.max() < 30 and xs.max() < 100  # top-left text
    over = Hud().overlay((50, 20))
    assert over.shape == (20, 50, 4) and over[..., 3].max() == 0  # nothing to show
    hud = Hud()
    hud.banner = "GAME OVER"
    over = hud.overlay((200, 100))
    ys, xs = np.nonzero(over[..., 3])
    assert abs(xs.mean() - 100) < 10 and abs(ys.mean() - 50) < 10  # centred


# --- picking ----------------------------------------------------------------------------
def test_pick_returns_nearest_point_and_its_node():
    scene = Scene()
    a = scene.add(Node("a", position=(-1, 0, 0), geometry=PointCloud(np.zeros((1, 3)))))
    b = scene.add(Node("b", position=(1, 0, 0), geometry=PointCloud([[0, 0, 0], [0, 0.5, 0]])))
    cam = PerspectiveCamera(fov_y=90, position=(0, 0, 2), near=0.1, far=10)
    app = App(scene, cam, (200, 100), backend="numpy")
    # x = +1 at depth 2 with fov 90 and aspect 2: ndc x = 1 / (2 * 2) = 0.25 -> 125 px.
    p = app.pick(126, 51, radius=5)
    assert p.node is b and p.index == app.renderer.batch.ranges[b][0]
    assert p.screen_xy == pytest.approx([125, 50], abs=1e-3)
    assert p.distance_px == pytest.approx(math.hypot(1, 1), abs=1e-3)
    np.testing.assert_allclose(p.world, [1, 0, 0], atol=1e-6)
    # y = 0.5 -> ndc y = 0.5 / 2 = 0.25 -> 50 - 12.5 = 37.5 px
    assert app.pick(125, 38, radius=2).world[1] == pytest.approx(0.5)
    assert app.pick(75, 50, radius=1).node is a
    assert app.pick(100, 80, radius=5) is None
    with pytest.raises(ValueError, match="radius"):
        pick_point(app.renderer.project(), app.renderer.batch, 0, 0, -1)


def test_pick_prefers_the_nearer_point_when_two_overlap():
    scene = Scene()
    far = scene.add(Node("far", geometry=PointCloud([[0, 0, -3]])))
    near = scene.add(Node("near", geometry=PointCloud([[0, 0, -1]])))
    app = App(scene, PerspectiveCamera(position=(0, 0, 1)), (100, 100), backend="numpy")
    assert app.pick(50, 50).node is near
    app.despawn(near)
    assert app.pick(50, 50).node is far


# --- collisions -------------------------------------------------------------------------
def test_bounding_sphere_follows_the_world_matrix():
    pts = np.array([[1, 0, 0], [-1, 0, 0], [0, 2, 0], [0, 0, 0.5]], float)
    node = Node("n", position=(10, 0, 0), scale=3, geometry=PointCloud(pts))
    c, r = bounding_sphere(node)
    # Local sphere: box centre (0, 1, 0.25), radius to the farthest point; then x3, +10.
    np.testing.assert_allclose(c, [10, 3, 0.75])
    local_r = max(np.linalg.norm(pts - [0, 1, 0.25], axis=1))
    assert r == pytest.approx(3 * local_r)
    with pytest.raises(ValueError, match="no geometry"):
        bounding_sphere(Node("empty"))


def test_sphere_sphere_and_ray_sphere_values():
    assert spheres_overlap((0, 0, 0), 1, (2, 0, 0), 1)  # touching
    assert not spheres_overlap((0, 0, 0), 1, (2.001, 0, 0), 1)
    m = overlap_pairs([[0, 0, 0], [5, 0, 0]], [1, 1], [[1.5, 0, 0], [9, 0, 0]], [1, 0.5])
    assert m.tolist() == [[True, False], [False, False]]
    assert ray_sphere((0, 0, 0), (1, 0, 0), (5, 0, 0), 1) == pytest.approx(4.0)
    assert ray_sphere((0, 0, 0), (2, 0, 0), (5, 0.6, 0), 1) == pytest.approx(5 - math.sqrt(1 - 0.36))
    assert ray_sphere((0, 0, 0), (1, 0, 0), (5, 2, 0), 1) is None
    assert ray_sphere((0, 0, 0), (1, 0, 0), (-5, 0, 0), 1) is None  # behind
    assert ray_sphere((5, 0, 0), (1, 0, 0), (5, 0, 0), 1) == 0.0  # inside
    with pytest.raises(ValueError, match="direction"):
        ray_sphere((0, 0, 0), (0, 0, 0), (1, 0, 0), 1)
    a = Node("a", geometry=PointCloud([[0, 0, 0], [1, 0, 0]]))
    # Spheres: a = ((0.5, 0, 0), 0.5), b = ((x + 0.5, 0, 0), 0.5): touch while x <= 1.
    b = Node("b", position=(0.9, 0, 0), geometry=PointCloud([[0, 0, 0], [1, 0, 0]]))
    assert nodes_collide(a, b)
    b.position = (1.1, 0, 0)
    assert not nodes_collide(a, b)
    hit = ray_cast((-5, 0, 0), (1, 0, 0), [b, a])
    assert hit[0] is a and hit[1] == pytest.approx(5.0)


def test_geometry_without_a_finite_point_has_no_bounding_sphere():
    """Regression: an all-NaN cloud got the sphere ((0, 0, 0), 0) and could be 'hit'."""
    nan = Node("nan", geometry=PointCloud(np.full((4, 3), np.nan)))
    empty = Node("empty", geometry=PointCloud(np.zeros((0, 3))))
    for node in (nan, empty):
        with pytest.raises(ValueError, match="no finite point"):
            bounding_sphere(node)
    solid = Node("solid", position=(0, 0, 3), geometry=PointCloud([[-1, 0, 0], [1, 0, 0]]))
    assert not nodes_collide(nan, solid) and not nodes_collide(solid, empty)
    assert nodes_collide(solid, solid)
    hit = ray_cast((0, 0, -10), (0, 0, 1), [nan, empty, solid])  # passes the empty ones
    assert hit[0] is solid and hit[1] == pytest.approx(12.0)
    assert ray_cast((0, 0, -10), (0, 0, 1), [nan, empty]) is None
    # NaN rows are left out of the sphere: only (0, 0, 0) and (4, 0, 0) count
    mixed = Node("mixed", geometry=PointCloud([[0, 0, 0], [np.nan, 9, 9], [4, 0, 0]]))
    c, r = bounding_sphere(mixed)
    np.testing.assert_allclose(c, [2, 0, 0])
    assert r == pytest.approx(2.0)


def test_collision_helpers_reject_bad_input_naming_it():
    nan = float("nan")
    cases = [
        (lambda: ray_sphere((0, 0, 0), (1, 0, 0), (5, 0, 0), -1), "radius"),
        (lambda: ray_sphere((0, 0, 0), (1, 0, 0), (5, 0, 0), nan), "radius"),
        (lambda: ray_sphere((0, nan, 0), (1, 0, 0), (5, 0, 0), 1), "origin"),
        (lambda: ray_sphere((0, 0, 0), (1, 0, 0), (5, 0, float("inf")), 1), "centre"),
        (lambda: ray_sphere((0, 0, 0), (nan, 1, 0), (5, 0, 0), 1), "direction"),
        (lambda: ray_sphere((0, 0, 0), (1, 0), (5, 0, 0), 1), "direction"),
        (lambda: ray_cast((0, 0, 0), (0, 0, 0), []), "direction"),
        (lambda: spheres_overlap((nan, 0, 0), 1, (0, 0, 0), 1), "c1"),
        (lambda: spheres_overlap((0, 0, 0), 1, (0, 0, 0), -0.5), "r2"),
        (lambda: overlap_pairs([[0, 0, 0]], [1, 2], [[1, 0, 0]], [1]), "radii_a"),
        (lambda: overlap_pairs([[0, 0, 0]], [1], [[1, nan, 0]], [1]), "centres_b"),
        (lambda: overlap_pairs([[0, 0, 0]], [1], [[1, 0, 0]], [-1]), "radii_b"),
        (lambda: overlap_pairs([[0, 0]], [1], [[1, 0, 0]], [1]), "centres_a"),
    ]
    for call, name in cases:
        with pytest.raises(ValueError, match=name):
            call()
    # a zero radius is a point: hit only when the ray passes through it
    assert ray_sphere((0, 0, 0), (0, 0, 1), (0, 0, 2), 0) == pytest.approx(2.0)
    assert ray_sphere((0, 0, 0), (0, 0, 1), (0, 1e-9, 2), 0) is None


def test_collision_helpers_over_the_whole_float_range():
    big = 1e308  # squared distances overflow; the helpers must not
    assert spheres_overlap((-big, 0, 0), big, (big, 0, 0), big)  # touching
    assert not spheres_overlap((-big, 0, 0), big, (big, 0, 0), 0.9 * big)
    m = overlap_pairs([[-big, 0, 0]], [big], [[big, 0, 0], [big, big, 0]], [big, big])
    assert m.tolist() == [[True, False]]
    t = ray_sphere((-1e300, 0, 0), (1, 0, 0), (1e300, 0, 0), 1e299)
    assert t == pytest.approx(1.9e300, rel=1e-12)
    assert ray_sphere((0, 0, 0), (1e-310, 0, 0), (3e-300, 0, 0), 1e-300) == pytest.approx(2e-300)
    # A small sphere far away: |f|^2 - r^2 rounds to |f|^2 in the textbook discriminant
    # (t off by the whole radius); the perpendicular form keeps it.
    t = ray_sphere((0, 0, 0), (1, 0, 0), (1e9, 1e-3, 0), 0.01)
    assert t == pytest.approx(1e9 - math.sqrt(0.01**2 - 1e-3**2), abs=1e-6)


def test_window_events_reach_input_hooks_and_controller():
    """The pyglet event protocol the Viewer forwards, without opening a window."""
    from engine.controls.controllers import OrbitController
    from engine.display.viewport import Viewport
    from engine.game.app import _WindowEvents

    class FakeWindow:
        def get_size(self):
            return (200, 100)

    class FakeViewer:  # ratio 1: window points are frame pixels
        window = FakeWindow()
        viewport = Viewport(200, 100, 2.0)

    cam = PerspectiveCamera(position=(0, 0, 5))
    orbit = OrbitController(cam)
    app = App(camera=cam, size=(200, 100), backend="numpy", controller=orbit)
    app.input.bind("fire", key.SPACE).bind_mouse("shoot", mouse.LEFT).bind("turn", key.LEFT)
    events = _WindowEvents(app, FakeViewer())
    keys = []
    app.on_key = lambda name, down: keys.append((name, down))
    events.on_key_press(key.SPACE, 0)
    events.on_mouse_press(20, 30, mouse.LEFT, 0)  # pyglet: y up from the bottom
    events.tick(1 / 120)
    assert app.input.pressed("fire") and app.input.pressed("shoot")
    assert app.input.cursor == (20.0, 70.0)
    assert keys == [("space", True), ("mouse_left", True)]
    az = orbit.azimuth
    events.on_mouse_drag(30, 30, 10, 0, mouse.LEFT, 0)  # left drag rotates the orbit
    assert orbit.azimuth != pytest.approx(az)
    az = orbit.azimuth
    events.on_key_press(key.LEFT, 0)  # held arrow: the controller turns while ticking
    for _ in range(30):  # 0.5 s in 60 Hz frames; arrows orbit at 90 degrees/s
        events.tick(1 / 60)
    assert app.input.held("turn") and orbit.azimuth == pytest.approx(az + 45.0, abs=1e-6)
    d = orbit.distance
    events.on_mouse_scroll(0, 0, 0, 1)
    assert orbit.distance == pytest.approx(d / 1.1)
    events.on_key_press(0xFFFFFFFFFF, 0)  # an unknown key is ignored, not an error


def test_focus_loss_releases_every_held_key():
    """on_deactivate (the window lost focus and will not see the releases): the input map
    reports the held key and button released at the next update, on_key hears each go
    up, and the controller stops turning where it was."""
    from engine.controls.controllers import FlyController, OrbitController
    from engine.game.app import _WindowEvents

    cam = PerspectiveCamera(position=(0, 0, 5))
    orbit = OrbitController(cam)
    app = App(camera=cam, size=(200, 100), backend="numpy", controller=orbit,
              update_hz=60)
    app.input.bind("turn", key.LEFT).bind_mouse("shoot", mouse.LEFT)
    events = _WindowEvents(app, viewer=None)
    keys = []
    app.on_key = lambda name, down: keys.append((name, down))
    events.on_key_press(key.LEFT, 0)
    app.mouse_down(mouse.LEFT)
    for _ in range(30):  # 0.5 s of a held arrow in 60 Hz frames: 45 degrees at 90 deg/s
        events.tick(1 / 60)
    assert app.input.held("turn") and app.input.held("shoot")
    az = orbit.azimuth
    assert az == pytest.approx(45.0, abs=1e-6)
    events.on_deactivate()
    assert keys[-2:] == [("left", False), ("mouse_left", False)]
    for _ in range(30):
        events.tick(1 / 60)
    assert not (app.input.held("turn") or app.input.held("shoot"))
    assert orbit.held == set() and orbit.azimuth == pytest.approx(az)
    # the window's own controls (engine.display.controls) let go the same way
    from engine.display.controls import WindowControls

    fly = FlyController(PerspectiveCamera(position=(0, 0, 0)))
    controls = WindowControls(fly)
    controls.on_key_press(key.W, 0)
    assert fly.held == {"w"}
    controls.on_deactivate()
    controls.tick(1.0)
    assert fly.held == set() and np.array_equal(fly.camera.position, (0, 0, 0))
