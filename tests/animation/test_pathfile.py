"""Camera path files: JSON/TOML round trips and validation errors that name the file,
the keyframe and the field."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.animation.camera_path import CameraPath
from engine.animation.pathfile import load_path, save_path
from engine.animation.shots import look_around, orbit
from engine.errors import EngineError

GOOD = {
    "version": 1,
    "interpolation": "monotone",
    "easing": "smoothstep",
    "keyframes": [
        {"time": 0, "position": [4, 2, 4], "target": [0, 0.5, 0], "fov": 50},
        {"time": 2.5, "position": [-4, 1, 4], "target": [0, 0.5, 0], "fov": 40,
         "interpolation": "linear", "easing": "ease-out"},
        {"time": 5, "position": [0, 3, -5], "target": [0, 0, 0], "fov": 45},
    ],
}

GOOD_TOML = """\
version = 1
interpolation = "catmull_rom"

[[keyframes]]
time = 0.0
position = [0.0, 1.0, 5.0]
orientation = [0.0, 0.0, 0.0, 1.0]

[[keyframes]]
time = 3
position = [5.0, 1.0, 0.0]
orientation = [0.0, 0.7071068, 0.0, 0.7071068]
easing = "ease-in-out"
"""


def write(tmp_path, data, name="p.json"):
    p = tmp_path / name
    p.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return p


def test_load_json(tmp_path):
    path = load_path(write(tmp_path, GOOD))
    assert len(path) == 3 and path.duration == 5.0
    assert path.interpolation == "monotone" and path.easing == "smoothstep"
    k1 = path.keyframes[1]
    assert k1.interpolation == "linear" and k1.easing == "ease-out" and k1.fov == 40
    np.testing.assert_array_equal(path.pose(2.5).position, [-4, 1, 4])


def test_load_toml(tmp_path):
    path = load_path(write(tmp_path, GOOD_TOML, "p.toml"))
    assert [k.time for k in path.keyframes] == [0.0, 3.0]
    np.testing.assert_allclose(path.pose(3.0).forward, (-1, 0, 0), atol=1e-6)
    assert path.keyframes[1].easing == "ease-in-out"


@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_save_and_reload_is_lossless(tmp_path, suffix):
    for original in (orbit((0.1, 0.2, 0.3), 3.3, 25, 1, 7.0, fov=47.5),
                     load_path(write(tmp_path, GOOD)), look_around((1, 2, 3), 4.0)):
        f = save_path(original, tmp_path / f"out{suffix}")
        again = load_path(f)
        assert again.interpolation == original.interpolation
        assert again.easing == original.easing
        for a, b in zip(original.keyframes, again.keyframes, strict=True):
            assert a.time == b.time and a.fov == b.fov
            np.testing.assert_array_equal(a.position, b.position)
            np.testing.assert_array_equal(a.rotation, b.rotation)
        for t in np.linspace(0, original.duration, 17):
            np.testing.assert_array_equal(original.pose(t).position, again.pose(t).position)


def bad(data_mutation):
    data = json.loads(json.dumps(GOOD))
    data_mutation(data)
    return data


CASES = [
    ("unknown key", lambda d: d["keyframes"][1].update(speed=3),
     r"p\.json: keyframe 1: speed: unknown field"),
    ("unknown top key", lambda d: d.update(loop=True), r"p\.json: loop: unknown key"),
    ("missing time", lambda d: d["keyframes"][2].pop("time"),
     r"p\.json: keyframe 2: time: missing"),
    ("missing position", lambda d: d["keyframes"][0].pop("position"),
     r"p\.json: keyframe 0: position: missing"),
    ("equal times", lambda d: d["keyframes"][2].update(time=2.5),
     r"p\.json: keyframe 2: time: must be greater than the previous key's time 2\.5"),
    ("decreasing times", lambda d: d["keyframes"][1].update(time=-1),
     r"p\.json: keyframe 1: time: must be >= 0"),
    ("short vector", lambda d: d["keyframes"][1].update(position=[1, 2]),
     r"p\.json: keyframe 1: position: must have 3 numbers, got 2"),
    ("long quaternion", lambda d: d["keyframes"][0].update(orientation=[0, 0, 0, 1, 0],
                                                          target=None) or
     d["keyframes"][0].pop("target"),
     r"p\.json: keyframe 0: orientation: must have 4 numbers, got 5"),
    ("NaN", lambda d: d["keyframes"][2]["target"].__setitem__(1, float("nan")),
     r"p\.json: keyframe 2: target\[1\]: must be finite"),
    ("Infinity fov", lambda d: d["keyframes"][0].update(fov=float("inf")),
     r"p\.json: keyframe 0: fov: must be finite"),
    ("string number", lambda d: d["keyframes"][1].update(time="2.5"),
     r"p\.json: keyframe 1: time: must be a number"),
    ("bool number", lambda d: d["keyframes"][1]["position"].__setitem__(0, True),
     r"p\.json: keyframe 1: position\[0\]: must be a number"),
    ("both target and orientation", lambda d: d["keyframes"][1].update(orientation=[0, 0, 0, 1]),
     r"p\.json: keyframe 1: target/orientation: give exactly one"),
    ("zero quaternion", lambda d: d["keyframes"][1].pop("target") and
     d["keyframes"][1].update(orientation=[0, 0, 0, 0]),
     r"p\.json: keyframe 1: orientation: must be a non-zero quaternion"),
    ("fov on some keys", lambda d: d["keyframes"][2].pop("fov"),
     r"p\.json: keyframe 2: fov: give fov on every keyframe or on none"),
    ("fov out of range", lambda d: d["keyframes"][1].update(fov=180),
     r"p\.json: keyframe 1: fov: must be in \(0, 180\)"),
    ("unknown mode", lambda d: d["keyframes"][0].update(interpolation="cubic"),
     r"p\.json: keyframe 0: interpolation: must be one of linear, catmull_rom"),
    ("unknown easing", lambda d: d.update(easing="bounce"), r"p\.json: easing: must be one of"),
    ("target at eye", lambda d: d["keyframes"][0].update(target=[4, 2, 4]),
     r"p\.json: keyframe 0: target: equals position"),
    ("no keyframes", lambda d: d.update(keyframes=[]), r"p\.json: keyframes: must be a non-empty"),
    ("wrong version", lambda d: d.update(version=2), r"p\.json: version: only version 1"),
]


@pytest.mark.parametrize("label, mutate, message", CASES, ids=[c[0] for c in CASES])
def test_bad_json_names_file_keyframe_and_field(tmp_path, label, mutate, message):
    p = write(tmp_path, bad(mutate))
    with pytest.raises(EngineError, match=message):
        load_path(p)


def test_bad_toml_names_file_keyframe_and_field(tmp_path):
    text = GOOD_TOML.replace("time = 3\n", "time = 3\nroll = 5.0\n")
    with pytest.raises(EngineError, match=r"p\.toml: keyframe 1: roll: unknown field"):
        load_path(write(tmp_path, text, "p.toml"))
    text = GOOD_TOML.replace("position = [5.0, 1.0, 0.0]", "position = [5.0, nan, 0.0]")
    with pytest.raises(EngineError, match=r"p\.toml: keyframe 1: position\[1\]: must be finite"):
        load_path(write(tmp_path, text, "p.toml"))
    text = GOOD_TOML.replace("time = 0.0\n", "")
    with pytest.raises(EngineError, match=r"p\.toml: keyframe 0: time: missing"):
        load_path(write(tmp_path, text, "p.toml"))


def test_syntax_errors_and_missing_files(tmp_path):
    with pytest.raises(EngineError, match=r"p\.json: invalid JSON at line 1 column"):
        load_path(write(tmp_path, '{"keyframes": [', "p.json"))
    with pytest.raises(EngineError, match=r"p\.toml: invalid TOML"):
        load_path(write(tmp_path, "keyframes = [", "p.toml"))
    with pytest.raises(EngineError, match=r"nope\.json: camera path file not found"):
        load_path(tmp_path / "nope.json")
    with pytest.raises(EngineError, match=r"must end in \.json or \.toml"):
        load_path(tmp_path / "p.yaml")
    with pytest.raises(EngineError, match="no keyframes"):
        save_path(CameraPath(), tmp_path / "empty.json")


def test_loading_never_evaluates_code(tmp_path):
    # A string where a number belongs is rejected, not evaluated.
    data = bad(lambda d: d["keyframes"][0].update(time="__import__('os').getpid()"))
    with pytest.raises(EngineError, match="time: must be a number"):
        load_path(write(tmp_path, data))
