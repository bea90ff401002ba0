"""The notebook view's core without any toolkit: jupyter_rfb event dictionaries in,
frames out, at the framebuffer size (logical size x pixel ratio), with pointer
coordinates in framebuffer pixels and the camera moved as the input says.

This module imports no jupyter_rfb, so its GPU test also runs on the GPU machine's
image (the same view on the CUDA path)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.notebook import InteractiveView
from engine.notebook.view import controller_key
from engine.scene.framing import VIEW_AZIMUTH
from engine.scene.procedural import demo_scene


def drag(view, x0, y0, x1, y1, button=1, steps=4):
    changed = [view.handle_event({"type": "pointer_down", "x": x0, "y": y0, "button": button,
                                  "buttons": (button,), "modifiers": ()})]
    for i in range(1, steps + 1):
        x = x0 + (x1 - x0) * i / steps
        y = y0 + (y1 - y0) * i / steps
        changed.append(view.handle_event({"type": "pointer_move", "x": x, "y": y,
                                          "button": button, "buttons": (button,),
                                          "modifiers": ()}))
    changed.append(view.handle_event({"type": "pointer_up", "x": x1, "y": y1, "button": button,
                                      "buttons": (), "modifiers": ()}))
    return changed


def resize(view, w, h, ratio):
    return view.handle_event({"type": "resize", "width": w, "height": h,
                              "pwidth": math.floor(w * ratio), "pheight": math.floor(h * ratio),
                              "ratio": ratio, "timestamp": 0})


def test_frames_follow_the_size_and_pixel_ratio():
    view = InteractiveView("demo", size=(80, 50), backend="numpy")
    assert view.frame().shape == (50, 80, 4) and view.size == (80, 50)
    assert resize(view, 60, 40, 2.0)
    assert view.size == (120, 80) and view.frame().shape == (80, 120, 4)
    assert view.controller.viewport == (120, 80)
    # older jupyter_rfb events: 'event_type', 'pixel_ratio', no physical size
    view.handle_event({"event_type": "resize", "width": 50, "height": 30, "pixel_ratio": 1.5})
    assert view.size == (75, 45) and view.frame().shape == (45, 75, 4)
    # the first frame is the framing of frustum render
    from engine.io.sources import load_source

    scene, cam = load_source("demo", 75 / 45)
    from engine import Renderer

    home = InteractiveView("demo", size=(75, 45), backend="numpy")
    np.testing.assert_array_equal(home.frame(),
                                  Renderer(scene, cam, (75, 45), backend="numpy").render().color)


def test_a_left_drag_orbits_by_the_framebuffer_pixels_dragged():
    view = InteractiveView("demo", size=(100, 60), backend="numpy")
    resize(view, 100, 60, 2.0)
    before = view.frame()
    az0, el0 = view.controller.azimuth, view.controller.elevation
    assert any(drag(view, 20, 30, 45, 30))  # 25 CSS px right = 50 framebuffer px
    assert view.pointer == (90.0, 60.0)  # framebuffer pixels, top-left origin
    # OrbitController: dragging right by d pixels turns the azimuth by -d * 0.3 degrees
    assert view.controller.azimuth == pytest.approx(az0 - 50 * 0.3)
    assert view.controller.elevation == pytest.approx(el0)
    after = view.frame()
    assert np.abs(after.astype(int) - before.astype(int)).mean() > 1.0
    drag(view, 50, 30, 50, 20)  # 10 CSS px up = 20 px: the camera goes down (elevation)
    assert view.controller.elevation == pytest.approx(el0 - 20 * 0.3)


def test_pan_zoom_keys_and_home():
    view = InteractiveView("demo", size=(80, 60), backend="numpy")
    target0 = view.controller.target.copy()
    drag(view, 40, 30, 40, 45, button=2)  # right drag pans
    assert not np.allclose(view.controller.target, target0)
    d0 = view.controller.distance
    assert view.handle_event({"type": "wheel", "x": 5, "y": 5, "dx": 0, "dy": -200,
                              "buttons": (), "modifiers": ()})
    assert view.controller.distance == pytest.approx(d0 / 1.1 ** 2)  # two steps in
    view.frame(now=10.0)
    assert view.handle_event({"type": "key_down", "key": "ArrowLeft", "modifiers": ()})
    assert view.animating
    az = view.controller.azimuth
    view.frame(now=10.05)  # the first frame after a key press starts the clock
    view.frame(now=10.10)
    assert view.controller.azimuth == pytest.approx(az + 90 * 0.05)
    view.handle_event({"type": "key_up", "key": "ArrowLeft", "modifiers": ()})
    assert not view.animating
    view.frame(now=20.0)
    assert view.controller.azimuth == pytest.approx(az + 90 * 0.05)
    assert view.handle_event({"type": "double_click", "x": 1, "y": 1, "button": 1,
                              "buttons": (), "modifiers": ()})
    assert view.controller.azimuth == pytest.approx(VIEW_AZIMUTH)
    np.testing.assert_allclose(view.controller.target, target0, atol=1e-9)
    view.handle_event({"type": "close"})
    assert view.closed and not view.handle_event({"type": "wheel", "dy": 100})


def test_fly_controls_move_with_held_keys():
    view = InteractiveView("demo", size=(64, 48), controller="fly", backend="numpy")
    p0 = view.camera.position.copy()
    view.frame(now=0.0)
    view.handle_event({"type": "key_down", "key": "w", "modifiers": ()})
    view.frame(now=1.0)
    view.frame(now=1.05)
    moved = view.camera.position - p0
    assert np.linalg.norm(moved) == pytest.approx(view.controller.speed * 0.05)
    assert np.dot(moved, view.camera.forward) > 0
    with pytest.raises(Exception, match="orbit"):
        InteractiveView("demo", controller="spin")



def test_browser_keys_get_the_engine_input_names():
    """One vocabulary: the browser's key values become engine.controls.input names, the
    same the window gives for the same physical key."""
    assert controller_key("ArrowUp") == "up" and controller_key("ArrowLeft") == "left"
    assert controller_key("Shift") == "lshift" and controller_key("D") == "d"
    # "+" is Shift and "=", "_" Shift and "-": one physical key each, one name
    assert controller_key("+") == controller_key("=") == "equal"
    assert controller_key("_") == controller_key("-") == "minus"
    assert controller_key(" ") == "space" and controller_key("7") == "_7"
    assert controller_key("Dead") is None and controller_key("é") is None


def test_a_key_released_after_shift_stops_the_zoom():
    view = InteractiveView("demo", size=(64, 48), backend="numpy")
    view.handle_event({"type": "key_down", "key": "=", "modifiers": ()})
    assert view.controller.held == {"equal"} and view.animating
    view.handle_event({"type": "key_down", "key": "Shift", "modifiers": ()})
    view.handle_event({"type": "key_up", "key": "+", "modifiers": ("Shift",)})
    view.handle_event({"type": "key_up", "key": "Shift", "modifiers": ()})
    assert view.controller.held == set() and not view.animating


def test_keys_the_engine_does_not_name_are_ignored():
    view = InteractiveView("demo", size=(64, 48), backend="numpy")
    assert view.handle_event({"type": "key_down", "key": "Unidentified"}) is False
    assert view.handle_event({"type": "key_up", "key": "Unidentified"}) is False
    assert view.controller.held == set()


@pytest.mark.gpu
def test_the_view_renders_on_the_cuda_path():
    # A Scene, not a file: this module must import on the GPU machine's image (no trimesh).
    cpu = InteractiveView(demo_scene()[0], size=(96, 64), backend="numba")
    gpu = InteractiveView(demo_scene()[0], size=(96, 64), backend="cupy")
    assert gpu.renderer.projector.name == "cupy"
    for view in (cpu, gpu):
        resize(view, 96, 64, 2.0)
        drag(view, 10, 10, 40, 20)
    a, b = cpu.frame(), gpu.frame()
    assert a.shape == b.shape == (128, 192, 4) and isinstance(b, np.ndarray)
    assert np.abs(a.astype(int) - b.astype(int)).max() <= 1


def test_the_release_position_completes_the_drag():
    # jupyter_rfb merges pointer moves; the release carries the final position
    view = InteractiveView("demo", size=(100, 60), backend="numpy")
    az0 = view.controller.azimuth
    view.handle_event({"type": "pointer_down", "x": 10, "y": 10, "button": 1, "buttons": (1,)})
    view.handle_event({"type": "pointer_move", "x": 20, "y": 10, "button": 1, "buttons": (1,)})
    assert view.handle_event({"type": "pointer_up", "x": 60, "y": 10, "button": 1,
                              "buttons": ()})
    assert view.controller.azimuth == pytest.approx(az0 - 50 * 0.3)
    view.handle_event({"type": "pointer_move", "x": 90, "y": 10, "button": 0, "buttons": ()})
    assert view.controller.azimuth == pytest.approx(az0 - 50 * 0.3)  # released: no drag
    assert view.pointer == (90.0, 10.0)
