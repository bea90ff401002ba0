"""The game base at game scale: pointer units on HiDPI windows, screen rays and
unprojection, picking/rays/collisions on instances, the cached HUD and its labels,
sounds without an audio device, and the no-display message."""

import logging
import math
import wave

import numpy as np
import pytest

from engine import (
    Instances,
    Mesh,
    Node,
    OrthographicCamera,
    PerspectiveCamera,
    PointCloud,
    Scene,
)
from engine.display.viewport import Viewport
from engine.display.window import Viewer
from engine.errors import EngineError, LoadError
from engine.game.app import App, _WindowEvents
from engine.game.collision import (
    instance_spheres,
    nodes_collide,
    overlap_pairs,
    ray_cast,
    ray_sphere,
)
from engine.game.hud import Hud
from engine.scene.procedural import icosphere


# --- pointer units: one unit (frame pixels) everywhere -------------------------------------
class FakeWindow:
    def __init__(self, points):
        self.points = points

    def get_size(self):
        return self.points


def hidpi_viewer(app, points=(400, 300), pixels=(800, 600)):
    """A Viewer as pyglet makes it on a pixel-ratio-2 display, without opening a window."""
    viewer = Viewer.__new__(Viewer)
    viewer.window = FakeWindow(points)
    viewer.viewport = Viewport(pixels[0], pixels[1], pixels[0] / pixels[1])
    viewer.controller = _WindowEvents(app, viewer)
    app.renderer.resize(*pixels)
    return viewer


def test_hidpi_cursor_is_in_frame_pixels_and_picks_what_it_is_over():
    scene = Scene()
    cam = PerspectiveCamera(fov_y=60, position=(0, 0, 5))
    app = App(scene, cam, (800, 600), backend="numpy")
    viewer = hidpi_viewer(app)
    # a point drawn at frame pixel (503.9, 216.9) (window depth 0.99)
    target = cam.unproject(503.9, 216.9, 0.99, viewport=(800, 600))
    scene.add(Node("dot", geometry=PointCloud([target])))
    xy = app.renderer.project().screen_xy[0]
    np.testing.assert_allclose(xy, [503.9, 216.9], atol=1e-3)
    # pyglet reports that spot in window points, bottom-left origin: (251.95, 300 - 108.45)
    viewer._forwarder("on_mouse_motion")(251.95, 300 - 108.45, 0.0, 0.0)
    assert app.input.cursor == pytest.approx((503.9, 216.9))
    hit = app.pick()
    assert hit is not None and hit.node.name == "dot" and hit.distance_px < 0.01
    ray = app.screen_ray()
    np.testing.assert_allclose(ray.at(np.linalg.norm(target - ray.origin)), target, atol=1e-9)


def test_hidpi_drags_reach_the_controller_in_frame_pixels():
    drags = []

    class Ctl:
        def mouse_drag(self, dx, dy, button):
            drags.append((dx, dy, button))

    app = App(size=(800, 600), backend="numpy", controller=Ctl())
    viewer = hidpi_viewer(app)
    viewer._forwarder("on_mouse_drag")(10, 10, 3, -2, 1, 0)
    assert drags == [(6.0, -4.0, "mouse_left")]


# --- screen rays and unprojection ------------------------------------------------------------
def test_screen_ray_and_unproject_invert_the_projection():
    x0, y0, z0 = 596650.25, 120.0, -4137000.5  # georeferenced, looking down -Z
    cam = PerspectiveCamera(fov_y=90, position=(x0, y0, z0), near=0.5, far=100)
    cam.set_viewport(200, 100)
    ray = cam.screen_ray(100, 50)  # the centre of the frame: straight ahead
    np.testing.assert_allclose(ray.direction, [0, 0, -1], atol=1e-12)
    np.testing.assert_allclose(ray.origin, cam.world_position)
    pts = np.array([[x0 + 3, y0 + 1.5, z0 - 20], [x0 - 7, y0 - 10, z0 - 60]])
    xy, depth, visible = cam.project(pts)
    assert visible.all()
    back = cam.unproject(xy[:, 0], xy[:, 1], depth)
    np.testing.assert_allclose(back, pts, atol=1e-6)
    # fov 90, aspect 2: x = +3 at distance 20 -> ndc 3 / (20 * 2) -> 100 + 7.5 px
    assert xy[0, 0] == pytest.approx(107.5)
    with pytest.raises(ValueError, match="no viewport yet"):
        PerspectiveCamera().screen_ray(1, 1)
    with pytest.raises(ValueError, match="depth"):
        cam.unproject(1, 1, 2.0)


def test_orthographic_screen_ray_starts_on_the_near_plane():
    cam = OrthographicCamera(height=4, position=(0, 0, 10), near=1, far=20)
    ray = cam.screen_ray(0, 0, viewport=(100, 100))  # top-left corner
    np.testing.assert_allclose(ray.direction, [0, 0, -1], atol=1e-12)
    np.testing.assert_allclose(ray.origin, [-2, 2, 9], atol=1e-12)


# --- instances work with picking, rays and collisions ---------------------------------------
def rocks(k=5):
    p, f = icosphere(0, 0.5)
    pos = np.stack([np.arange(k) * 2.0 - (k - 1), np.zeros(k), np.zeros(k)], axis=1)
    return Instances(Mesh(p, f), positions=pos, name="rocks")


def test_pick_and_ray_cast_name_the_instance():
    scene = Scene()
    inst = scene.add(rocks())
    cam = PerspectiveCamera(fov_y=60, position=(0, 0, 10))
    app = App(scene, cam, (320, 240), backend="numpy")
    app.render_frame()
    vertex = icosphere(0, 0.5)[0][4] + (2, 0, 0)  # a front vertex of instance 3
    x, y = cam.project(vertex)[0][0]
    hit = app.pick(x, y, radius=3)
    assert hit.node is inst and hit.instance == 3
    np.testing.assert_allclose(hit.world, vertex, atol=1e-6)
    ray_hit = ray_cast(*app.screen_ray(x, y), [inst])
    assert ray_hit.node is inst and ray_hit.instance == 3
    ray = app.screen_ray(x, y)
    # the ray ends on the mesh exactly at the vertex, which lies on the bounding sphere
    # (radius 0.5 to float32 rounding), so the sphere's entry distance is the same
    assert ray_hit.distance == pytest.approx(ray_sphere(*ray, (2, 0, 0), 0.5), rel=1e-7)
    np.testing.assert_allclose(ray_hit.point, vertex, atol=1e-6)
    inst.active[3] = False  # inactive instances cannot be hit
    assert ray_cast(*app.screen_ray(x, y), [inst]) is None
    app.render_frame()
    p = app.pick(x, y, radius=3)
    assert p is None or p.instance != 3


def test_instance_spheres_and_collisions():
    inst = rocks(4)
    inst.scales[1] = 2.0
    idx, centres, radii = instance_spheres(inst)
    assert idx.tolist() == [0, 1, 2, 3]
    np.testing.assert_allclose(centres[:, 0], [-3, -1, 1, 3], atol=1e-12)
    np.testing.assert_allclose(radii, [0.5, 1.0, 0.5, 0.5])
    probe = Node("probe", position=(-0.2, 0, 0), geometry=PointCloud([[0, 0, 0]]))
    assert nodes_collide(inst, probe)  # inside instance 1's sphere (radius 1 at x = -1)
    inst.active[1] = False
    assert not nodes_collide(inst, probe)
    pairs = overlap_pairs([[1.4, 0, 0]], [0.0], *instance_spheres(inst)[1:])
    assert pairs.tolist() == [[False, True, False]]  # active instances 0, 2, 3


# --- the HUD: cached text, labels -------------------------------------------------------------
def test_hud_rasterises_each_text_once_and_only_changed_lines_again():
    app = App(size=(200, 80), backend="numpy")
    app.hud["score"] = "Score 1"
    app.hud["lives"] = "Lives 3"
    first = app.render_frame().color.copy()
    drawn = app.hud.sprites_drawn
    assert drawn == 2
    for _ in range(5):
        np.testing.assert_array_equal(app.render_frame().color, first)
    assert app.hud.sprites_drawn == drawn  # unchanged text is blended from the cache
    app.hud["score"] = "Score 2"
    changed = app.render_frame().color
    assert app.hud.sprites_drawn == drawn + 1  # only the new line is rasterised
    rows = np.flatnonzero(np.any(changed != first, axis=(1, 2)))
    assert rows.max() < 6 + 14 * 1.3 + 2  # and only the first line's pixels change


def test_hud_labels_follow_nodes_through_the_camera():
    scene = Scene()
    target = scene.add(Node("t", position=(1, 0, 0)))
    cam = PerspectiveCamera(fov_y=90, position=(0, 0, 2))
    app = App(scene, cam, (200, 100), backend="numpy")
    blank = app.render_frame().color.copy()
    app.hud.label("tag", "HERE", target, offset=(0, 0))
    frame = app.render_frame().color
    ys, xs = np.nonzero(np.any(frame != blank, axis=2))
    # x = 1 at depth 2, fov 90, aspect 2 -> ndc 0.25 -> 125 px; centred there
    assert abs(xs.mean() - 125) < 4 and abs(ys.mean() - 50) < 4
    target.position = (0, 0, 5)  # behind the camera: not drawn
    np.testing.assert_array_equal(app.render_frame().color, blank)
    with pytest.raises(ValueError, match="label 'x'"):
        app.hud.label("x", "bad", (1, 2))


def test_hud_overlay_and_draw_agree_in_shape():
    hud = Hud()
    hud["a"] = "abc"
    over = hud.overlay((60, 30))
    assert over.shape == (30, 60, 4) and over[..., 3].max() == 255
    assert over[..., 3][:, 40:].max() == 0  # short text stays left


# --- sound ----------------------------------------------------------------------------------
def test_play_is_silent_with_one_log_line_without_an_audio_device(tmp_path, caplog):
    path = tmp_path / "hit.wav"
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(22050)
        t = np.arange(2205) / 22050
        w.writeframes((np.sin(2 * math.pi * 440 * t) * 8000).astype("<i2").tobytes())
    app = App(size=(32, 32), backend="numpy")
    with caplog.at_level(logging.INFO, logger="engine"):
        results = [app.play(path) for _ in range(3)]
    if app.sounds.played:  # a machine with speakers: it played
        assert results == [True] * 3
    else:
        assert results == [False] * 3 and app.sounds.skipped == 3
        silent = [r for r in caplog.records if "sounds are silent" in r.message]
        assert len(silent) == 1 and silent[0].levelno == logging.WARNING
    with pytest.raises(LoadError, match="no such sound file"):
        app.play(tmp_path / "missing.wav")
    with pytest.raises(ValueError, match="volume"):
        app.play(path, volume=2)


# --- no display -------------------------------------------------------------------------------
def test_run_without_a_display_says_what_to_do(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("PYGLET_HEADLESS", raising=False)
    import sys

    monkeypatch.setattr(sys, "platform", "linux")
    pyglet = sys.modules.get("pyglet")
    if pyglet is not None:
        monkeypatch.setitem(pyglet.options.__dict__ if hasattr(pyglet.options, "__dict__")
                            else pyglet.options, "headless", False)
    app = App(size=(32, 32), backend="numpy")
    with pytest.raises(EngineError) as info:
        app.run(frames=1)
    msg = str(info.value)
    for hint in ("run_headless", "PYGLET_HEADLESS=1", "xvfb-run"):
        assert hint in msg
    assert "--headless" not in msg.split("(")[0]  # the flag is only a hint for examples


def test_app_attributes_are_documented():
    doc = App.__doc__
    for name in ("scene", "camera", "renderer", "input", "hud", "rng", "sounds", "controller"):
        assert f"        {name}" in doc or f" {name}:" in doc, name
