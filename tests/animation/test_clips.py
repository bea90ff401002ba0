"""File animations (glTF clips): pure functions of time, played in offline video, in
an App and in a window's controller, and through the CLI (--animation N)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from engine import PerspectiveCamera, Renderer, Scene
from engine.animation.clips import ClipMotion, ClipPlayer, clip_bounds, clip_time, play_in
from engine.animation.offline import render_motion
from engine.cli import main
from engine.io import load

ROOT = Path(__file__).resolve().parents[2]
BOX_ANIMATED = "gltf-khronos/BoxAnimated/BoxAnimated.gltf"


def _pose(model):
    return np.concatenate([np.concatenate([n.position, n.rotation, n.scale])
                           for n in model.traverse()])


def test_a_clip_is_a_pure_function_of_time(ref_assets):
    model = load(ref_assets / BOX_ANIMATED)
    clip = model.clips[0]
    times = np.linspace(-0.5, 4.5, 41)
    sequential = []
    for t in times:
        clip.apply(t)
        sequential.append(_pose(model))
    order = np.random.default_rng(5).permutation(len(times))
    for k in order:
        clip.apply(times[k])
        np.testing.assert_array_equal(_pose(model), sequential[k])
    # another process, fresh load, one time each: the same pose
    code = ("import json, sys, numpy as np\nfrom engine.io import load\n"
            f"m = load({str(ref_assets / BOX_ANIMATED)!r})\n"
            "out = []\n"
            "for t in json.loads(sys.argv[1]):\n"
            "    m.clips[0].apply(t)\n"
            "    out.append(np.concatenate([np.concatenate([n.position, n.rotation, n.scale])"
            " for n in m.traverse()]).tolist())\n"
            "print(json.dumps(out))\n")
    picked = [float(times[k]) for k in order[:5]]
    res = subprocess.run([sys.executable, "-c", code, json.dumps(picked)], cwd=ROOT,
                         capture_output=True, text=True, check=True, timeout=120)
    for t, pose in zip(picked, json.loads(res.stdout)):
        np.testing.assert_allclose(pose, sequential[list(times).index(t)], rtol=0, atol=0)


def test_clip_time_loops_and_holds():
    class C:
        duration = 2.0

    assert clip_time(C, 5.0, loop=True) == 1.0
    assert clip_time(C, -0.5, loop=True) == 1.5
    assert clip_time(C, 5.0, loop=False) == 5.0


def _box_scene(ref_assets):
    scene = Scene()
    model = scene.add(load(ref_assets / BOX_ANIMATED))
    clip = model.clips[0]
    cam = scene.add(PerspectiveCamera(fov_y=50))
    cam.frame(clip_bounds(scene, clip), azimuth=30, elevation=10)
    return scene, model, clip, cam


def test_clip_bounds_cover_the_whole_motion(ref_assets):
    scene, model, clip, _ = _box_scene(ref_assets)
    rest = scene.bounds()
    swept = clip_bounds(scene, clip)
    # the inner box (y within +-0.5) rises by 2.52 out of the outer one (also +-0.5)
    assert rest[1, 1] == pytest.approx(0.5)
    # ... and flips about X while up there: its box (half sizes 0.33504 x 0.5 x 0.33504)
    # reaches 0.5 cos a + 0.33504 sin a above its centre, at most the half diagonal
    assert swept[1, 1] == pytest.approx(2.52 + np.hypot(0.5, 0.33504), abs=2e-3)
    assert np.all(swept[0] <= rest[0])
    assert model.find("node 0").position[1] == 0.0  # left at t = 0


class _Frames:
    """A FrameWriter stand-in that keeps the frames."""

    def __init__(self, size):
        self.size, self.frames, self.path, self.got = size, 0, "memory", []

    def write(self, color):
        self.got.append(np.array(color))
        self.frames += 1

    def close(self):
        pass

    def abort(self):
        pass


def test_offline_video_frames_are_the_clip_at_k_over_fps(ref_assets):
    scene, _model, clip, cam = _box_scene(ref_assets)
    r = Renderer(scene, cam, (64, 48), backend="numpy")
    fps, n = 4.0, 16
    writer = _Frames((64, 48))
    render_motion(r, ClipMotion(clip), fps, n, writer)
    assert writer.frames == n
    # frame k is the clip posed at k / fps, whatever was rendered before
    for k in (11, 2, 7):
        clip.apply(k / fps)
        np.testing.assert_array_equal(r.render().color, writer.got[k])
    assert not np.array_equal(writer.got[0], writer.got[5])  # the box has risen at 1.25 s


def test_app_plays_a_clip_at_its_simulated_time(ref_assets):
    from engine.game.app import App

    scene, model, clip, cam = _box_scene(ref_assets)
    app = App(scene, cam, size=(32, 24), backend="numpy", update_hz=60)
    play_in(app, clip, loop=False)
    app.run_headless(75, frame_dt=1 / 60)  # 1.25 s
    assert app.time == pytest.approx(1.25)
    assert model.find("node 0").position[1] == pytest.approx(2.52)


def test_window_player_ticks_and_delegates(ref_assets):
    _, model, clip, _ = _box_scene(ref_assets)

    class Inner:
        ticks = 0

        def tick(self, dt):
            self.ticks += 1

        def on_key_press(self, symbol, modifiers):
            return "pressed"

    inner = Inner()
    player = ClipPlayer(clip, inner)
    for _ in range(5):
        player.tick(0.25)
    assert player.time == 1.25 and inner.ticks == 5
    assert model.find("node 0").position[1] == pytest.approx(2.52)
    assert player.on_key_press(1, 0) == "pressed"
    player.tick(clip.duration)  # loops: 1.25 + 3.708 -> 1.25
    assert model.find("node 0").position[1] == pytest.approx(2.52)


def test_cli_renders_an_animation_to_video_frames(ref_assets, tmp_path, capsys):
    out = tmp_path / "frames"
    rc = main(["render", str(ref_assets / BOX_ANIMATED), "--animation", "0", "--out",
               f"{out}/", "--fps", "2", "--size", "64x48", "--backend", "numpy"])
    assert rc == 0
    files = sorted(out.glob("*.png"))
    assert len(files) == round(3.708329916 * 2)  # the animation's length at 2 fps
    a, b = (np.asarray(Image.open(files[k])) for k in (0, 3))  # t = 0 and t = 1.5
    assert not np.array_equal(a, b)
    assert "wrote" in capsys.readouterr().out


def test_cli_animation_errors(ref_assets, tmp_path, capsys):
    rc = main(["render", str(ref_assets / BOX_ANIMATED), "--animation", "3", "--out",
               str(tmp_path / "x.png")])
    assert rc == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [(f"frustum: error: --animation 3: {ref_assets / BOX_ANIMATED} has 1 "
                   "animation(s) (0 to 0)")]
    rc = main(["render", str(ref_assets / "gltf-khronos/Box/Box.gltf"), "--animation", "0",
               "--out", str(tmp_path / "x.png")])
    assert rc == 2 and "has no animations" in capsys.readouterr().err


def test_cli_view_plays_an_animation_headless(ref_assets, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    out = tmp_path / "v.png"
    rc = main(["view", str(ref_assets / BOX_ANIMATED), "--animation", "0", "--out", str(out),
               "--size", "64x48", "--frames", "2", "--raster", "software"])
    assert rc == 0 and out.exists()
