"""engine.render_video: one public call from a scene to a video."""

import numpy as np
import pytest

import engine
from engine import Node, PerspectiveCamera, PointCloud, Scene
from engine.errors import OutputError
from engine.game.app import App


def scene_and_camera():
    scene = Scene(background=(0, 0, 0))
    rng = np.random.default_rng(0)
    scene.add(Node("cloud", geometry=PointCloud(rng.uniform(-1, 1, (500, 3)), colors="white",
                                                point_size=2)))
    cam = PerspectiveCamera(position=(0, 1, 4))
    cam.look_at((0, 0, 0))
    return scene, cam


def test_turntable_to_png_frames_without_any_other_module(tmp_path):
    scene, cam = scene_and_camera()
    res = engine.render_video(scene, cam, tmp_path / "frames", fps=4, duration=1,
                              size=(64, 48))
    files = sorted((tmp_path / "frames").glob("frame_*.png"))
    assert res.frames == 4 and len(files) == 4 and not res.interrupted
    # the camera went round: the first and third frames differ, the distance stayed
    from PIL import Image

    a, c = (np.asarray(Image.open(f)) for f in (files[0], files[2]))
    assert not np.array_equal(a, c)
    assert np.linalg.norm(cam.world_position) == pytest.approx(np.sqrt(17), rel=1e-3)


def test_a_function_motion_animates_nodes_and_camera(tmp_path):
    scene, cam = scene_and_camera()
    seen = []

    def spin(camera, t):
        scene.children[0].rotation = (0, 90 * t, 0)
        seen.append(t)

    res = engine.render_video(scene, cam, tmp_path / "spin.gif", spin, fps=10, frames=5,
                              size=(32, 32))
    assert res.frames == 5 and seen == [0.0, 0.1, 0.2, 0.3, 0.4]
    assert (tmp_path / "spin.gif").stat().st_size > 0


def test_render_video_refuses_an_image_name(tmp_path):
    scene, cam = scene_and_camera()
    with pytest.raises(OutputError, match="render_video writes .mp4, .gif"):
        engine.render_video(scene, cam, tmp_path / "x.png")
    with pytest.raises(ValueError, match="duration or frames"):
        engine.render_video(scene, cam, tmp_path / "x.gif", duration=1, frames=2)
    with pytest.raises(TypeError, match="motion must be"):
        engine.render_video(scene, cam, tmp_path / "x.gif", motion=3)


def test_app_run_headless_records_a_video(tmp_path):
    scene, cam = scene_and_camera()
    app = App(scene, cam, (32, 32), backend="numpy")
    app.run_headless(6, frame_dt=0.1, out=tmp_path / "play.gif")
    from PIL import Image

    with Image.open(tmp_path / "play.gif") as gif:
        assert gif.n_frames >= 1 and gif.info["duration"] == 100
