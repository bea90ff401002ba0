"""Clips for characters: play, loop, speed and cross-fades (ClipPlayer), in offline video
(ClipMotion), in an App (play_in), in the CLI (--animation N,M, --crossfade,
--animation-speed) and in the notebook view. The expected poses are computed here from
the keyframes with independent formulas (linear interpolation, axis-angle quaternions,
slerp from its definition)."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from engine import Node, PointCloud, Scene
from engine.animation.clips import ClipMotion, ClipPlayer, play_in, play_sequence
from engine.scene.clips import Clip, TransformTrack


def axis_angle(axis, degrees):
    """Unit quaternion (x, y, z, w) of a rotation by ``degrees`` about ``axis``."""
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    h = math.radians(degrees) / 2
    return np.array([*(a * math.sin(h)), math.cos(h)])


def slerp_reference(a, b, f):
    """Slerp from its definition: sin((1-f)θ)/sin θ a + sin(fθ)/sin θ b along the
    shortest arc (b negated when a.b < 0), normalised."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a @ b < 0:
        b = -b
    theta = math.acos(min(1.0, a @ b))
    q = (math.sin((1 - f) * theta) * a + math.sin(f * theta) * b) / math.sin(theta)
    return q / np.linalg.norm(q)


@pytest.fixture
def rig():
    """A 'walk' (2 s: hips translate +x by 1/s and turn about z by 45°/s; the arm moves
    up) and a 'run' (1 s: hips rise in y and turn about x by 120°/s; hips scale up)."""
    hips = Node("hips", position=(0.0, 0.0, 0.0))
    arm = Node("arm", position=(0.0, 5.0, 0.0))
    hips.add(arm)
    walk = Clip("walk", [
        TransformTrack(hips, "translation", [0, 2], [[0, 0, 0], [2, 0, 0]]),
        TransformTrack(hips, "rotation", [0, 2], [axis_angle((0, 0, 1), 0),
                                                  axis_angle((0, 0, 1), 90)]),
        TransformTrack(arm, "translation", [0, 2], [[0, 5, 0], [0, 7, 0]]),
    ])
    run = Clip("run", [
        TransformTrack(hips, "translation", [0, 1], [[0, 1, 0], [0, 3, 0]]),
        TransformTrack(hips, "rotation", [0, 1], [axis_angle((1, 0, 0), 0),
                                                  axis_angle((1, 0, 0), 120)]),
        TransformTrack(hips, "scale", [0, 1], [[1, 1, 1], [2, 2, 2]]),
    ])
    return hips, arm, walk, run


def walk_at(t):  # (hips translation, hips rotation, arm translation) at walk time t
    t = min(max(t, 0.0), 2.0)
    return np.array([t, 0, 0]), axis_angle((0, 0, 1), 45 * t), np.array([0, 5 + t, 0])


def run_at(t):  # (hips translation, hips rotation, hips scale) at run time t
    t = min(max(t, 0.0), 1.0)
    return np.array([0, 1 + 2 * t, 0]), axis_angle((1, 0, 0), 120 * t), np.full(3, 1 + t)


def test_crossfade_blends_translation_linearly_and_rotation_by_slerp(rig):
    hips, arm, walk, run = rig
    player = ClipPlayer(walk)
    player.tick(0.5)
    player.crossfade(run, 1.0)  # from clock 0.5 to 1.5
    for clock in (0.5, 0.75, 1.1, 1.4999):
        player.advance_to(clock)
        f = (clock - 0.5) / 1.0
        wt, wr, wa = walk_at(clock)  # walk keeps playing during the fade
        rt, rr, rs = run_at(clock - 0.5)
        np.testing.assert_allclose(hips.position, (1 - f) * wt + f * rt, atol=1e-12)
        np.testing.assert_allclose(hips.rotation, slerp_reference(wr, rr, f), atol=1e-9)
        # scale: only run animates it, so it blends from its rest value (1, 1, 1)
        np.testing.assert_allclose(hips.scale, (1 - f) * np.ones(3) + f * rs, atol=1e-12)
        # the arm: only walk animates it, so it blends towards its rest value (0, 5, 0)
        np.testing.assert_allclose(arm.position, (1 - f) * wa + f * np.array([0, 5, 0]),
                                   atol=1e-12)
        assert player.fade == pytest.approx(f)
    player.advance_to(1.75)  # the fade is over: run alone, the arm at rest
    rt, rr, rs = run_at(0.25)  # run loops: run time 1.25 wraps to 0.25
    np.testing.assert_allclose(hips.position, rt, atol=1e-12)
    np.testing.assert_allclose(hips.rotation, rr, atol=1e-12)
    np.testing.assert_allclose(arm.position, [0, 5, 0])
    assert player.clip is run and player.fade == 1.0 and len(player._layers) == 1


def test_slerp_takes_the_shortest_arc(rig):
    hips, _, _, _ = rig
    a = Clip("a", [TransformTrack(hips, "rotation", [0], [axis_angle((0, 1, 0), 10)])])
    # 350° about y is -10° the short way: halfway between +10° and -10° is 0°, not 180°
    b = Clip("b", [TransformTrack(hips, "rotation", [0], [axis_angle((0, 1, 0), 350)])])
    player = ClipPlayer(a).crossfade(b, 2.0)
    player.tick(1.0)
    np.testing.assert_allclose(np.abs(hips.rotation), [0, 0, 0, 1], atol=1e-12)


def test_speed_and_loop(rig):
    hips, _, walk, _ = rig
    player = ClipPlayer(walk, loop=False, speed=2.0)
    assert player.duration == 1.0  # a 2 s clip at speed 2 ends at half time
    player.tick(0.5)
    np.testing.assert_allclose(hips.position, [1, 0, 0])  # clip time 1.0
    player.tick(0.5)
    np.testing.assert_allclose(hips.position, [2, 0, 0])  # its end, at clock 1.0
    player.tick(0.5)
    np.testing.assert_allclose(hips.position, [2, 0, 0])  # held
    looping = ClipPlayer(walk, loop=True, speed=2.0)
    looping.advance_to(1.25)  # clip time 2.5 wraps to 0.5
    np.testing.assert_allclose(hips.position, [0.5, 0, 0], atol=1e-12)
    looping.speed = 0.5  # from clip time 2.5 on, at half speed
    looping.advance_to(2.25)  # +1 s of clock = +0.5 clip s: 3.0 -> wraps to 1.0
    np.testing.assert_allclose(hips.position, [1.0, 0, 0], atol=1e-12)
    assert looping.time == pytest.approx(3.0)
    backwards = ClipPlayer(walk, loop=True, speed=-1.0)
    backwards.advance_to(0.5)  # clip time -0.5 wraps to 1.5
    np.testing.assert_allclose(hips.position, [1.5, 0, 0], atol=1e-12)
    paused = ClipPlayer(walk)
    paused.playing = False
    paused.tick(1.0)
    assert paused.clock == 0.0
    with pytest.raises(ValueError, match="speed must be finite"):
        ClipPlayer(walk, speed=float("inf"))
    with pytest.raises(ValueError, match="a cross-fade lasts 0 seconds or more"):
        ClipPlayer(walk).crossfade(walk, -1)
    with pytest.raises(TypeError, match="clip must be an engine.scene.clips.Clip"):
        ClipPlayer("walk")


def test_a_cut_sends_what_the_new_clip_does_not_animate_to_rest(rig):
    hips, arm, walk, run = rig
    player = ClipPlayer(walk)
    player.tick(1.0)
    assert arm.position[1] == 6.0
    player.play(run, loop=False)
    np.testing.assert_allclose(arm.position, [0, 5, 0])
    np.testing.assert_allclose(hips.position, [0, 1, 0])


def test_a_schedule_is_a_pure_function_of_time_in_offline_video(rig):
    hips, arm, walk, run = rig
    scheduled = ClipPlayer(walk, loop=False).crossfade(run, 0.5, loop=False, at=1.5)
    motion = ClipMotion(scheduled)
    assert motion.duration == 2.5  # run (1 s) starts at 1.5
    times = [2.3, 0.2, 1.75, 1.0, 1.6]
    poses = {}
    for t in times:  # any order, as distributed renders ask
        motion.apply(None, t)
        poses[t] = np.concatenate([hips.position, hips.rotation, arm.position])
    for t in sorted(times):
        motion.apply(None, t)
        np.testing.assert_array_equal(
            np.concatenate([hips.position, hips.rotation, arm.position]), poses[t])
    motion.apply(None, 1.75)  # f = 0.5: walk at 1.75, run at 0.25
    f = 0.5
    np.testing.assert_allclose(hips.position, (1 - f) * walk_at(1.75)[0] + f * run_at(0.25)[0])
    motion.apply(None, 1.0)  # before the fade: walk alone
    np.testing.assert_allclose(hips.position, walk_at(1.0)[0])
    copy = pickle.loads(pickle.dumps(motion))  # distributed renders send the motion
    assert copy.duration == motion.duration
    # a plain clip at a speed
    fast = ClipMotion(walk, speed=2.0)
    assert fast.duration == 1.0
    fast.apply(None, 0.25)
    np.testing.assert_allclose(hips.position, [0.5, 0, 0])


def test_play_sequence_fades_at_the_end_of_each_clip(rig):
    hips, arm, walk, run = rig
    player = play_sequence([walk, run], crossfade=0.5, speed=2.0, loop=False)
    # walk lasts 1 s at speed 2 and run 0.5 s: run fades in over the last 0.5 s of
    # walk, [0.5, 1.0], so it has played through when walk ends
    assert player.duration == pytest.approx(1.0)
    player.advance_to(0.75)
    f = 0.5
    np.testing.assert_allclose(hips.position,
                               (1 - f) * walk_at(1.5)[0] + f * run_at(0.5)[0], atol=1e-12)
    player.advance_to(1.5)  # held at run's end, walk's arm at rest
    np.testing.assert_allclose(hips.position, run_at(1.0)[0])
    np.testing.assert_allclose(arm.position, [0, 5, 0])
    # a crossfade longer than the clip before it is shortened to that clip
    player = play_sequence([run, walk], crossfade=5.0)
    assert player.duration == pytest.approx(2.0)  # walk starts at 0, as run does
    with pytest.raises(ValueError, match="at least one clip"):
        play_sequence([])


def test_app_crossfades_at_its_simulated_time(rig):
    from engine import PerspectiveCamera
    from engine.game.app import App

    hips, _arm, walk, run = rig
    scene = Scene()
    scene.add(hips)
    cam = scene.add(PerspectiveCamera())
    cam.position = (0, 0, 10)
    app = App(scene, cam, size=(16, 12), backend="numpy", update_hz=60)
    player = play_in(app, walk)
    own = app.on_update

    def on_update(dt):
        own(dt)
        if app.updates == 29:  # the 30th update ends at 0.5 s: fade over 1 s from there
            player.crossfade(run, 1.0)

    app.on_update = on_update
    app.run_headless(66, frame_dt=1 / 60)  # 1.1 s
    assert app.time == pytest.approx(1.1)
    f = 0.6
    np.testing.assert_allclose(hips.position,
                               (1 - f) * walk_at(1.1)[0] + f * run_at(0.6)[0], atol=1e-9)
    np.testing.assert_allclose(hips.rotation,
                               slerp_reference(walk_at(1.1)[1], run_at(0.6)[1], f), atol=1e-9)


BOX_ANIMATED = "gltf-khronos/BoxAnimated/BoxAnimated.gltf"  # one 3.708329916 s animation


def test_cli_sequence_speed_and_crossfade(ref_assets, tmp_path, capsys):
    from PIL import Image

    from engine.cli import main

    common = [str(ref_assets / BOX_ANIMATED), "--size", "48x36", "--backend", "numpy"]
    rc = main(["render", *common, "--animation", "0,0", "--animation-speed", "2",
               "--crossfade", "1", "--fps", "4", "--out", f"{tmp_path / 'seq'}/"])
    assert rc == 0
    seq = sorted((tmp_path / "seq").glob("*.png"))
    # two passes of 3.708 / 2 s overlapping by the 1 s fade: 2.708 s at 4 fps
    assert len(seq) == round((2 * 3.708329916 / 2 - 1) * 4)
    rc = main(["render", *common, "--animation", "0", "--fps", "2", "--out",
               f"{tmp_path / 'one'}/"])
    assert rc == 0
    one = sorted((tmp_path / "one").glob("*.png"))
    # speed 2: the frame at 0.5 s shows clip time 1.0 s, as the plain render at 1.0 s
    np.testing.assert_array_equal(np.asarray(Image.open(seq[2])), np.asarray(Image.open(one[2])))
    assert not np.array_equal(np.asarray(Image.open(seq[2])), np.asarray(Image.open(seq[0])))
    capsys.readouterr()
    for bad, message in ((["--animation", "0,x"], ("--animation: expected N or N,M,... whole "
                                                  "numbers >= 0, got '0,x'")),
                         (["--animation", "0,4"], "--animation 4: "),
                         (["--animation", "0", "--crossfade", "-1"],
                          "--crossfade: must be a finite number of seconds >= 0, got '-1'"),
                         (["--animation", "0", "--animation-speed", "0"],
                          "--animation-speed: must be a finite number > 0, got '0'")):
        try:
            rc = main(["render", *common, *bad, "--out", str(tmp_path / "x.mp4")])
        except SystemExit as exc:  # argparse's errors
            rc = exc.code
        assert rc == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0], err


def test_notebook_view_plays_and_crossfades(rig, monkeypatch):
    from engine.notebook.view import InteractiveView

    hips, _arm, walk, run = rig
    hips.geometry = PointCloud([[0, 0, 0], [0.5, 0.5, 0]], point_size=4)
    scene = Scene()
    scene.add(hips)
    scene.add(Node("floor", geometry=PointCloud([[-4, -4, 0], [4, 8, 0]])))
    view = InteractiveView(scene, size=(32, 24), backend="numpy")
    player = view.play(walk, speed=2.0)
    assert view.animating  # frames keep coming while a clip plays
    first = view.frame(now=10.0)
    view.frame(now=10.25)  # 0.25 s at speed 2: walk time 0.5
    np.testing.assert_allclose(hips.position, walk_at(0.5)[0])
    player.crossfade(run, 0.2, speed=2.0)
    last = view.frame(now=10.35)  # f = 0.5: walk at 0.7, run at 0.2
    np.testing.assert_allclose(hips.position,
                               0.5 * walk_at(0.7)[0] + 0.5 * run_at(0.2)[0], atol=1e-12)
    assert not np.array_equal(first, last)
    player.playing = False
    assert not view.animating


def test_render_video_plays_a_player_schedule(rig, tmp_path):
    import engine

    hips, _arm, walk, run = rig
    hips.geometry = PointCloud([[0, 0, 0], [0.3, 0.3, 0]], point_size=3)
    scene = Scene()
    scene.add(hips)
    cam = engine.PerspectiveCamera(fov_y=60, position=(0, 1, 8))
    schedule = ClipPlayer(walk, loop=False).crossfade(run, 0.5, loop=False, at=1.5)
    result = engine.render_video(scene, cam, tmp_path / "frames", motion=schedule, fps=4,
                                 size=(32, 24), backend="numpy")
    assert result.frames == 10  # the schedule ends at 2.5 s: 10 frames at 4 fps
    schedule.apply_at(9 / 4)  # the last frame's pose: f = 1, run at 0.75
    np.testing.assert_allclose(hips.position, run_at(0.75)[0])
    from PIL import Image

    frames = sorted((tmp_path / "frames").glob("*.png"))
    # render_video's default 4 samples per pixel (engine.render.msaa)
    still = engine.Renderer(scene, cam, (32, 24), backend="numpy", msaa=4).render().color
    np.testing.assert_array_equal(np.asarray(Image.open(frames[-1]).convert("RGBA")), still)
    assert not np.array_equal(np.asarray(Image.open(frames[0]).convert("RGBA")), still)


def test_cli_view_plays_a_sequence_headless(ref_assets, tmp_path, capsys, monkeypatch):
    from engine.cli import main

    monkeypatch.delenv("DISPLAY", raising=False)
    out = tmp_path / "v.png"
    rc = main(["view", str(ref_assets / BOX_ANIMATED), "--animation", "0,0", "--crossfade",
               "0.2", "--animation-speed", "3", "--out", str(out), "--size", "48x36",
               "--frames", "2", "--raster", "software"])
    assert rc == 0 and out.exists()


def test_a_pickled_player_blends_against_the_copied_rest_pose(rig):
    """Distributed renders pickle the schedule with the scene: the rest values must
    follow the copied nodes."""
    hips, _arm, walk, run = rig
    player = ClipPlayer(walk, loop=False).crossfade(run, 1.0, loop=False, at=0.5)
    copy = pickle.loads(pickle.dumps((player, hips)))
    player_copy, hips_copy = copy
    player_copy.apply_at(1.0)  # f = 0.5: the arm (walk only) halfway to its rest
    arm_copy = hips_copy.children[0]
    np.testing.assert_allclose(arm_copy.position, 0.5 * walk_at(1.0)[2] + 0.5 * np.array([0, 5, 0]))
    np.testing.assert_allclose(hips_copy.scale, 0.5 + 0.5 * run_at(0.5)[2])


def test_a_speed_change_during_a_crossfade_keeps_the_fade_going(rig):
    hips, _arm, walk, run = rig
    player = ClipPlayer(walk)
    player.tick(0.5)
    player.crossfade(run, 1.0, loop=False)  # clock 0.5 to 1.5
    player.advance_to(1.0)
    player.speed = 2.0  # run from its time 0.5 on, twice as fast
    player.advance_to(1.25)  # f = 0.75; run time 0.5 + 2 * 0.25 = 1.0
    assert player.fade == pytest.approx(0.75) and player.time == pytest.approx(1.0)
    np.testing.assert_allclose(hips.position,
                               0.25 * walk_at(1.25)[0] + 0.75 * run_at(1.0)[0], atol=1e-12)
    with pytest.raises(AttributeError, match="nothing is playing"):
        ClipPlayer().speed  # noqa: B018
