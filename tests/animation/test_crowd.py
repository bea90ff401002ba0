"""Crowd: K copies of a skinned model, each at its own clip time. The posed vertices of
every copy are checked against the skinning formula written out in
tests/render/deform_scenes.py (``strip_expected``) plus the copy's placement."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from engine import Node, PerspectiveCamera, Renderer, Scene
from engine.animation import crowd as crowd_module
from engine.animation.crowd import Crowd
from engine.scene.clips import Clip
from engine.scene.deform import Skin, posed_vertices

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "render"))
from deform_scenes import strip_expected, strip_mesh, strip_scene

PLACES = [[0.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 6.0, 0.0], [4.0, 0.0, -1.0]]


def _crowd(times, **kw):
    template = Node("character")
    strip, clip = strip_scene(template)
    scene = Scene()
    crowd = Crowd(template, clip, len(times), scene, positions=PLACES[:len(times)],
                  times=times, **kw)
    return scene, crowd, strip


def test_every_copy_is_posed_at_its_own_time_by_the_skinning_formula():
    _, crowd, strip = _crowd([0.0, 0.5, 1.0, 0.25], loop=False)
    crowd.apply()
    for k, copy in enumerate(crowd.copies):
        node = copy.find("strip")
        assert node.geometry is strip.geometry  # shared, not copied
        assert node.skin is not strip.skin and node.skin.joints[0] is not strip.skin.joints[0]
        want = strip_expected(90.0 * crowd.times[k]) + PLACES[k]
        np.testing.assert_allclose(posed_vertices(node)[0], want, atol=1e-5)
    # the template itself is untouched: its joint still at rest
    np.testing.assert_allclose(posed_vertices(strip)[0], strip_expected(0.0), atol=1e-5)


def test_the_backends_draw_the_same_crowd_and_the_times_show():
    scene, crowd, _ = _crowd([0.0, 0.5, 1.0, 0.25], loop=False)
    cam = scene.add(PerspectiveCamera(fov_y=60, aspect=4 / 3, position=(1.5, 3.0, 12.0)))
    crowd.apply()
    keys = {}
    for backend in ("numpy", "numba"):
        r = Renderer(scene, cam, (160, 120), backend=backend)
        r.render()
        keys[backend] = r.visibility()
    np.testing.assert_array_equal(keys["numba"], keys["numpy"])
    crowd.times[:] = 0.0  # every copy straight: a different picture
    crowd.apply()
    r = Renderer(scene, cam, (160, 120), backend="numba")
    r.render()
    assert (r.visibility() != keys["numpy"]).sum() > 20


def test_one_set_transforms_call_per_animated_joint_whatever_the_count(monkeypatch):
    calls = []
    real = crowd_module.set_transforms

    def counting(nodes, **kw):
        calls.append(len(nodes))
        real(nodes, **kw)

    monkeypatch.setattr(crowd_module, "set_transforms", counting)
    template = Node("character")
    _, clip = strip_scene(template)
    crowd = Crowd(template, clip, 60, Scene(), times=np.linspace(0, 1, 60))
    calls.clear()
    crowd.apply()
    assert calls == [60]  # the clip animates one joint: one call for all 60 copies


def test_tick_advances_by_speed_and_loops():
    _, crowd, _ = _crowd([0.0, 0.9], speeds=[1.0, 0.5])
    crowd.tick(0.4)
    np.testing.assert_allclose(crowd.times, [0.4, 1.1])
    np.testing.assert_allclose(crowd.clip_times(), [0.4, 0.1])  # the clip lasts 1 s
    k1 = crowd.copies[1].find("strip")
    np.testing.assert_allclose(posed_vertices(k1)[0], strip_expected(9.0) + PLACES[1],
                               atol=1e-5)


def test_bad_input_names_the_problem():
    template = Node("character")
    _, clip = strip_scene(template)
    with pytest.raises(ValueError, match="count must be >= 1"):
        Crowd(template, clip, 0, Scene())
    with pytest.raises(ValueError, match="times must be a number or 3 numbers"):
        Crowd(template, clip, 3, Scene(), times=[0, 1])
    other = Node("other")
    _, foreign = strip_scene(other)
    with pytest.raises(ValueError, match="animates 'joint 1', which is not under 'character'"):
        Crowd(template, foreign, 2, Scene())
    # a skin whose skeleton lies outside the subtree cannot be given its own copy
    loose = Node("loose")
    mesh_node = loose.add(Node("strip", geometry=strip_mesh()))
    mesh_node.skin = Skin([other, other.children[0]])
    with pytest.raises(ValueError, match="joints outside the subtree"):
        Crowd(loose, Clip("still", []), 2, Scene())
