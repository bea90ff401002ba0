"""Inline display: Frame._repr_png_, engine.show for frames, scenes, nodes, geometry,
files and clips (what IPython would display, captured), RenderResult's inline clip."""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest
from PIL import Image

import engine
from engine import Mesh, Node, PerspectiveCamera, PointCloud, Renderer, Scene
from engine.animation.shots import orbit
from engine.errors import EngineError
from engine.io.embed import media_mimebundle
from engine.io.sources import framed_camera, load_source
from engine.notebook import Media, render_still
from engine.scene.procedural import sphere_points


@pytest.fixture
def shown(monkeypatch):
    """What engine.show passes to IPython.display.display."""
    import IPython.display

    got = []
    monkeypatch.setattr(IPython.display, "display", lambda *objs, **kw: got.extend(objs))
    return got


def png(obj) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(obj._repr_png_())))


def quad_mesh():
    pos = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], np.float64)
    return Mesh(pos, np.array([[0, 1, 2], [0, 2, 3]]), colors=np.tile((0.9, 0.3, 0.1), (4, 1)))


def test_a_frame_is_its_png():
    scene, cam = load_source("demo", 2.0)
    frame = Renderer(scene, cam, (64, 32), backend="numpy").render()
    img = png(frame)
    assert img.shape == (32, 64, 4)
    np.testing.assert_array_equal(img, frame.color)


def test_show_a_file_frames_it_like_frustum_render(shown, tmp_path):
    engine.show("demo", size=(96, 54), backend="numpy")
    (frame,) = shown
    assert isinstance(frame, engine.Frame) and frame.color.shape == (54, 96, 4)
    scene, cam = load_source("demo", 96 / 54)
    np.testing.assert_array_equal(frame.color,
                                  Renderer(scene, cam, (96, 54), backend="numpy",
                                           msaa=4).render().color)  # both default to 4


def test_show_a_node_of_another_graph_leaves_the_graph_alone(shown):
    parent = Scene()
    holder = parent.add(Node("holder", position=(5, 0, 0)))
    node = holder.add(Node("ball", geometry=PointCloud(sphere_points(500), point_size=3)))
    engine.show(node, size=(48, 48), backend="numpy")
    assert node.parent is holder and holder.children == (node,)
    img = shown[0].color
    assert (np.any(img != img[0, 0], axis=2)).sum() > 50
    # the same picture as showing the geometry on its own (the node has no transform)
    engine.show(node.geometry, size=(48, 48), backend="numpy")
    np.testing.assert_array_equal(shown[1].color, img)


def test_show_a_scene_uses_its_camera_or_the_given_view(shown):
    scene = Scene(background=(0, 0, 0))
    scene.add(Node("quad", geometry=quad_mesh()))
    cam = scene.add(PerspectiveCamera(fov_y=40, position=(0, 0, 4)))
    engine.show(scene, size=(40, 40), backend="numpy")
    img = shown[0].color
    assert tuple(img[20, 20, :3]) != (0, 0, 0) and tuple(img[0, 0, :3]) == (0, 0, 0)
    engine.show(scene, size=(40, 40), camera=(90, 0), backend="numpy")  # edge-on: a line
    side = shown[1].color
    assert (np.any(side[..., :3] != 0, axis=2)).sum() < (np.any(img[..., :3] != 0, axis=2)).sum()
    assert render_still(scene, (40, 40), camera=cam, backend="numpy").color.shape == (40, 40, 4)
    with pytest.raises(EngineError, match="draw="):
        render_still(scene, (40, 40), draw="wireframe")


def test_clips_show_inline(shown, tmp_path):
    from engine import render_video

    scene = Scene()
    scene.add(Node("quad", geometry=quad_mesh()))
    cam = PerspectiveCamera()
    path = orbit((0, 0, 0), 4.0, 20, duration=0.5)
    mp4 = render_video(scene, cam, tmp_path / "c.mp4", path, fps=8, size=(32, 24))
    gif = render_video(scene, cam, tmp_path / "c.gif", path, fps=8, size=(32, 24))
    bundle = mp4._repr_mimebundle_()
    assert bundle["text/html"].startswith("<video")
    data = bundle["text/html"].split("base64,")[1].split('"')[0]
    assert base64.b64decode(data) == (tmp_path / "c.mp4").read_bytes()
    assert gif._repr_mimebundle_()["image/gif"] == (tmp_path / "c.gif").read_bytes()
    engine.show(gif)
    engine.show(str(tmp_path / "c.mp4"), width=200)
    assert isinstance(shown[0], Media) and shown[0].path == tmp_path / "c.gif"
    assert 'width="200"' in shown[1]._repr_mimebundle_()["text/html"]
    big = media_mimebundle(tmp_path / "c.mp4", embed_limit=10)
    assert "base64" not in big["text/html"] and "not embedded" in big["text/plain"]
    frames = render_video(scene, cam, tmp_path / "frames/", path, fps=8, size=(32, 24))
    fb = frames._repr_mimebundle_()
    assert fb["text/plain"].endswith("4 PNG frames") and fb["image/png"].startswith(b"\x89PNG")


def test_show_refuses_what_it_cannot_show(shown, tmp_path):
    with pytest.raises(EngineError, match="cannot show a int"):
        engine.show(42)
    with pytest.raises(EngineError, match="no such file"):
        engine.show(tmp_path / "missing.mp4")
    with pytest.raises(EngineError):
        engine.show(tmp_path / "missing.glb")
    with pytest.raises(EngineError, match="nothing to show"):
        framed_camera(Scene("empty"))
    assert shown == []


def test_a_shown_child_node_keeps_its_look():
    """render_still of a node inside a scene draws a copy of its subtree: the copy keeps
    the tint, the line colour and hidden-line removal (a white wireframe on white would
    otherwise be black edges, and its back edges drawn)."""
    import trimesh

    box = trimesh.creation.box((1.0, 1.0, 1.0))
    scene = Scene()
    parent = scene.add(Node("parent"))
    cube = parent.add(Node("cube", geometry=Mesh(box.vertices, box.faces), draw="wireframe",
                           line_color="red", hidden_line_removal=True))
    frame = render_still(cube, (120, 90), camera=(30, 25), background=(1.0, 1.0, 1.0))
    red = (frame.color[..., :3] == (255, 0, 0)).all(-1).sum()
    cube.hidden_line_removal = False
    every = render_still(cube, (120, 90), camera=(30, 25), background=(1.0, 1.0, 1.0))
    assert 0 < red < (every.color[..., :3] == (255, 0, 0)).all(-1).sum()
    assert not (frame.color[..., :3] == 0).all(-1).any()  # no default (black) edges
