"""InstanceClips: every instance of an Instances node plays one clip at its own clip
time. Each instance's transform is checked against the product of its placement matrix
and the clip pose matrix at its time, built here one instance at a time from
``value_at`` and ``trs_matrix``."""

from __future__ import annotations

import numpy as np
import pytest

from engine import Instances, Mesh, Node, OrthographicCamera, Renderer, Scene
from engine.animation.clips import clip_time
from engine.animation.instance_clips import InstanceClips
from engine.scene.clips import Clip, TransformTrack
from engine.scene.procedural import box
from engine.scene.transforms import quat_from_axis_angle, trs_matrix

K = 40


def _crowd(uniform=True):
    rng = np.random.default_rng(11)
    part = Node("part", position=(0.0, 0.5, 0.0))
    clip = Clip("bob", [
        TransformTrack(part, "translation", [0, 1, 2], [[0, 0.5, 0], [0, 1.5, 0], [0, 0.5, 0]]),
        TransformTrack(part, "rotation", [0, 2], [quat_from_axis_angle((0, 1, 0), 0),
                                                  quat_from_axis_angle((0, 1, 0), 3.0)]),
        TransformTrack(part, "scale", [0, 2], [[1, 1, 1], [1.5, 0.5, 1]], "step"),
    ])
    scales = rng.uniform(0.5, 2, K) if uniform else rng.uniform(0.5, 2, (K, 3))
    inst = Instances(box((0.3, 0.3, 0.3)), name="crowd",
                     positions=rng.uniform(-5, 5, (K, 3)),
                     rotations=rng.uniform(-180, 180, (K, 3)), scales=scales)
    return inst, clip, part, rng


def _expected(player, i):
    """World-in-node matrix of instance i: placement @ pose(clip time), one at a time."""
    t = clip_time(player.clip, player.times[i], player.loop)
    pose = {"translation": (0, 0.5, 0), "rotation": (0, 0, 0, 1), "scale": (1, 1, 1)}
    for tr in player.clip.tracks:
        pose[tr.path] = tr.value_at(t)
    placement = trs_matrix(player.positions[i], player.rotations[i], player.scales[i])
    return placement @ trs_matrix(pose["translation"], pose["rotation"], pose["scale"])


def test_every_instance_shows_the_clip_at_its_own_time():
    inst, clip, _, rng = _crowd()
    player = InstanceClips(inst, clip, times=rng.uniform(-3, 3, K),
                           speeds=rng.uniform(0.5, 2, K))
    for step in range(3):
        player.tick(0.37)
        for i in range(K):
            got = trs_matrix(inst.positions[i], inst.rotations[i], inst.scales[i])
            np.testing.assert_allclose(got, _expected(player, i), atol=1e-9)
    assert len({round(float(t), 6) for t in player.clip_times()}) == K  # all different


def test_holds_the_last_pose_without_looping_and_draws():
    inst, clip, _, _rng = _crowd()
    player = InstanceClips(inst, clip, times=np.linspace(0, 3, K), loop=False)
    assert player.clip_times()[-1] == 3.0
    late = trs_matrix(inst.positions[-1], inst.rotations[-1], inst.scales[-1])
    np.testing.assert_allclose(late, _expected(player, K - 1), atol=1e-9)
    scene = Scene()
    scene.add(inst)
    cam = scene.add(OrthographicCamera(height=14, aspect=1.0))
    cam.position = (0, 0, 20)
    r = Renderer(scene, cam, (48, 48), backend="numpy")
    first = r.render().color
    player.times[:] = 0.5
    player.apply()
    assert not np.array_equal(first, r.render().color)  # the copies moved


def test_errors_name_the_problem():
    inst, clip, part, _ = _crowd(uniform=False)
    with pytest.raises(ValueError, match=r"crowd: instance 0 has the non-uniform scale"):
        InstanceClips(inst, clip, times=1.0)  # turned by 1.5 rad at t = 1
    other = Node("other")
    both = Clip("both", clip.tracks + [TransformTrack(other, "translation", [0], [[0, 0, 0]])])
    with pytest.raises(ValueError, match=r"plays a clip of one node on the instances; 'both' "
                                         r"animates 2 \('part', 'other'\)"):
        InstanceClips(inst, both)
    with pytest.raises(TypeError, match="instances must be an engine.scene.Instances node"):
        InstanceClips(Node("plain", geometry=Mesh([[0, 0, 0]] * 3, [[0, 1, 2]])), clip)
    still = Clip("slide", [TransformTrack(part, "translation", [0, 1], [[0, 0, 0], [1, 0, 0]])])
    player = InstanceClips(inst, still, times=2.25)  # no rotation: uneven scales compose
    slid = trs_matrix((0.25, 0, 0), (0, 0, 0, 1), (1, 1, 1))  # 2.25 s wraps to 0.25 s
    for i in range(K):
        np.testing.assert_allclose(
            trs_matrix(inst.positions[i], inst.rotations[i], inst.scales[i]),
            trs_matrix(player.positions[i], player.rotations[i], player.scales[i]) @ slid,
            atol=1e-9)
    inst.spawn_many(np.zeros((60, 3)))
    with pytest.raises(ValueError, match=r"crowd: \d+ instances now, 40 when its "
                                         r"InstanceClips was made"):
        player.apply()
    with pytest.raises(ValueError, match="speeds must be finite"):
        InstanceClips(inst, still, speeds=np.inf)


@pytest.mark.parametrize("interpolation", ["linear", "step", "cubicspline"])
@pytest.mark.parametrize("path", ["translation", "rotation", "scale"])
def test_values_at_many_times_equal_value_at_each(interpolation, path):
    rng = np.random.default_rng(5)
    keys = np.unique(rng.uniform(0, 4, 6))
    d = 4 if path == "rotation" else 3
    shape = (len(keys), 3, d) if interpolation == "cubicspline" else (len(keys), d)
    track = TransformTrack(Node("n"), path, keys, rng.normal(size=shape), interpolation)
    times = np.concatenate([rng.uniform(-1, 5, 300), keys, [keys[0] - 1e-9, keys[-1] + 1]])
    want = np.array([track.value_at(t) for t in times])
    np.testing.assert_allclose(track.values_at(times), want, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="times must be finite"):
        track.values_at([0.0, np.nan])
