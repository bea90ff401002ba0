"""Static shadow caching (engine.render.shadows.MapCache): a map is reused only while
everything it is drawn from is unchanged. Each step below changes one input (a caster
moved or edited, the light turned, the camera moved so that the fit changes, a caster's
flag, the map size) and the frame must equal, bit for bit, the frame of a Renderer that
draws every map every frame; the frames with no change must skip the light's pass."""

from __future__ import annotations

import numpy as np
import pytest
from shadow_scenes import box_on_plane

from engine import Renderer

pytestmark = pytest.mark.timeout(300)

SIZE = (96, 96)


def _counting(renderer):
    """The number of light passes ``renderer``'s backend has drawn, as a list of one."""
    calls = [0]
    backend = renderer.backend
    draw = backend.shadow_depth

    def counted(*args):
        calls[0] += 1
        return draw(*args)

    backend.shadow_depth = counted
    return calls


def _scene():
    scene, cam, light = box_on_plane(SIZE, map_size=256)
    box = next(n for n in scene.traverse() if n.name == "box")
    return scene, cam, light, box


def _edits(scene, cam, light, box):
    """(change, whether it changes what the shadow map is drawn from) in turn."""
    def move_box():
        box.position = (0.4, 0.5, -0.3)

    def turn_light():
        light.position = (np.cos(0.6), np.sin(0.6), 0.3)
        light.look_at((0.0, 0.0, 0.0))

    def widen_view():  # the view already held the whole scene: the same fit, no pass
        cam.height = 12.0

    def narrow_view():  # now it sees part of the plane: the fit changes
        cam.height = 4.0

    def edit_box_vertices():
        g = box.geometry
        g.positions = np.asarray(g.positions) * np.float32([1.0, 1.6, 1.0])

    def box_casts_none():
        box.cast_shadow = False

    def map_size():
        box.cast_shadow = True
        light.shadow_map_size = 512

    return [(move_box, True), (turn_light, True), (widen_view, False), (narrow_view, True),
            (edit_box_vertices, True), (box_casts_none, True), (map_size, True)]


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_map_reused_only_while_its_inputs_hold(backend):
    scene, cam, light, box = _scene()
    cached = Renderer(scene, cam, SIZE, backend=backend)
    drawn = Renderer(scene, cam, SIZE, backend=backend)
    drawn.backend.reuse_shadow_maps = False
    passes = _counting(cached)
    first = cached.render().color
    np.testing.assert_array_equal(first, drawn.render().color)
    assert passes[0] == 1
    # nothing changed: the map is reused, the frame the same
    np.testing.assert_array_equal(cached.render().color, first)
    assert passes[0] == 1
    previous, count = first, 1
    for change, redraws in _edits(scene, cam, light, box):
        change()
        frame = cached.render().color
        count += redraws
        assert passes[0] == count, f"{change.__name__}: {passes[0]} passes, not {count}"
        np.testing.assert_array_equal(frame, drawn.render().color,
                                      err_msg=f"{change.__name__}: a stale map")
        assert (frame != previous).any(), f"{change.__name__} changed nothing on screen"
        previous = frame
        np.testing.assert_array_equal(cached.render().color, frame)  # and kept again
        assert passes[0] == count

def test_maps_drawn_every_frame_when_reuse_is_off():
    scene, cam, _, box = _scene()
    r = Renderer(scene, cam, SIZE, backend="numba")
    r.backend.reuse_shadow_maps = False
    passes = _counting(r)
    for _ in range(3):
        r.render()
    assert passes[0] == 3
    # drawn with reuse off after a change, then reused once it is on: the recorded
    # inputs are the new ones, so the frame is the new scene's
    box.position = (0.4, 0.5, -0.3)
    moved = r.render().color
    r.backend.reuse_shadow_maps = True
    np.testing.assert_array_equal(r.render().color, moved)
    assert passes[0] == 4
    np.testing.assert_array_equal(moved, Renderer(scene, cam, SIZE, backend="numba")
                                  .render().color)

def test_alpha_tested_casters_drawn_every_frame():
    # their alpha may come from a texture edited in place: never reused
    from engine.scene.material import Material

    scene, cam, _, box = _scene()
    box.geometry.material = Material(color=(0.8, 0.3, 0.2, 1.0), alpha_cutoff=0.5,
                                     specular=0.0)
    r = Renderer(scene, cam, SIZE, backend="numba")
    passes = _counting(r)
    for _ in range(3):
        r.render()
    assert passes[0] == 3
