"""The faults of issue 12, each fixed as a kind and checked with its right value."""

import json
import logging
import sys

import numpy as np
import pytest
from PIL import Image

from engine import (
    CameraPath,
    Node,
    OrthographicCamera,
    PerspectiveCamera,
    PointCloud,
    Renderer,
    Scene,
    load,
    rasterize_points,
)
from engine.animation.pathfile import load_path
from engine.cli import main
from engine.errors import EngineError
from engine.render.backends import get_projector
from engine.render.backends import threads as T


def write_ply(path, points):
    lines = ["ply", "format ascii 1.0", f"element vertex {len(points)}", "property double x",
             "property double y", "property double z", "end_header"]
    lines += [" ".join(repr(float(v)) for v in p) for p in points]
    path.write_text("\n".join(lines) + "\n")


# --- auto-framing with tolerances relative to the coordinates ---------------------------------
@pytest.mark.parametrize("points", [
    [[596650.25, 4137000.5, 120.0]] * 3,          # identical georeferenced points
    [[596650.25, 4137000.5, 120.0]],              # one point
    [[0.0, 0.0, 0.0]],                            # one point at the origin
    [[596650.25, 4137000.5, 120.0], [596650.2500001, 4137000.5, 120.0]],  # 0.1 mm object
])
def test_render_frames_a_point_or_a_tiny_object_at_the_image_centre(tmp_path, capsys, points):
    ply = tmp_path / "pts.ply"
    write_ply(ply, points)
    out = tmp_path / "out.png"
    assert main(["render", str(ply), "-o", str(out), "--size", "64x48", "--point-size", "1",
                 "--background", "black"]) == 0, capsys.readouterr().err
    img = np.asarray(Image.open(out))[..., :3]
    ys, xs = np.nonzero(img.max(axis=2) > 40)
    assert len(xs) and abs(xs.mean() - 31.5) <= 1.0 and abs(ys.mean() - 23.5) <= 1.0


def test_framing_an_orthographic_camera_on_one_georeferenced_point():
    cam = OrthographicCamera(aspect=4 / 3)
    cam.frame(np.array([[596650.25, 4137000.5, 120.0]] * 2))
    assert np.isfinite(cam.world_matrix).all() and cam.height > 0


# --- camera path values that cannot give a finite pose ------------------------------------------
def path_file(tmp_path, keys, name="p.json"):
    f = tmp_path / name
    f.write_text(json.dumps({"keyframes": keys}) if name.endswith(".json") else keys)
    return f


def test_a_huge_coordinate_is_refused_naming_file_keyframe_and_field(tmp_path):
    f = path_file(tmp_path, [{"time": 0, "position": [0, 0, 5], "target": [0, 0, 0]},
                             {"time": 1, "position": [1e308, 0, 5], "target": [0, 0, 0]}])
    with pytest.raises(EngineError, match=r"p\.json: keyframe 1: position\[0\]: 1e\+308 is "
                                          r"too large"):
        load_path(f)


def test_a_400_digit_time_is_refused_not_a_traceback(tmp_path, capsys):
    f = tmp_path / "long.json"
    f.write_text('{"keyframes": [{"time": 0, "position": [0,0,5], "target": [0,0,0]}, '
                 '{"time": 1' + "0" * 399 + ', "position": [0,0,6], "target": [0,0,0]}]}')
    with pytest.raises(EngineError, match=r"long\.json: keyframe 1: time: a 400-digit integer "
                                          r"is too large"):
        load_path(f)
    toml = tmp_path / "long.toml"
    toml.write_text('[[keyframes]]\ntime = 0\nposition = [0, 0, 5]\ntarget = [0, 0, 0]\n'
                    '[[keyframes]]\ntime = 1\nposition = [0, 0, 6]\ntarget = [0, 0, 0]\n'
                    'fov = 1' + "0" * 399 + "\n")
    with pytest.raises(EngineError, match=r"keyframe 1: fov: a 400-digit integer"):
        load_path(toml)
    out = tmp_path / "v.gif"
    assert main(["render", "demo", "--camera", str(f), "-o", str(out), "--size", "8x8"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "long.json: keyframe 1: time" in err


def test_keys_too_close_in_time_for_their_distance_are_refused(tmp_path):
    """Monotone curves take slopes (distance / time): keys 1e150 apart 1e-300 s apart
    overflow them, so the file is refused; Catmull-Rom parameterises by distance and
    gives finite poses from the same keys."""
    keys = [{"time": 0, "position": [0, 0, 5], "target": [0, 0, 0]},
            {"time": 1e-300, "position": [1e150, 0, 5], "target": [0, 0, 0]},
            {"time": 1, "position": [0, 0, 7], "target": [0, 0, 0]}]
    f = tmp_path / "steep.json"
    f.write_text(json.dumps({"interpolation": "monotone", "keyframes": keys}))
    with pytest.raises(EngineError, match=r"steep\.json: keyframe [01]: position: the change"):
        load_path(f)
    path = load_path(path_file(tmp_path, keys))
    for t in (0.0, 5e-301, 0.5, 1.0):
        pose = path.pose(t)
        assert np.isfinite(pose.position).all() and np.isfinite(pose.rotation).all()


# --- long paths are arrays ------------------------------------------------------------------------
def test_a_long_json_path_loads_as_arrays_and_matches_the_key_by_key_path(tmp_path):
    k = 20_000
    t = np.arange(k) * 0.05
    a = t * 0.1
    keys = [{"time": float(t[i]), "position": [10 * np.cos(a[i]), 2.0 + (i % 7), 10 * np.sin(a[i])],
             "target": [0.0, 0.0, 0.0], "fov": 50.0 + (i % 3)} for i in range(k)]
    keys[5]["interpolation"] = "linear"
    f = path_file(tmp_path, keys)
    fast = load_path(f)
    assert fast._keys is None and len(fast) == k  # no Keyframe objects were made
    slow = CameraPath(interpolation="catmull_rom")
    for kd in keys[:300]:
        slow.add(kd["time"], kd["position"], target=kd["target"], fov=kd["fov"],
                 interpolation=kd.get("interpolation"))
    for time_s in (0.0, 0.12, 0.26, 3.3, 7.777, 14.9):
        a_, b_ = fast.pose(time_s), slow.pose(time_s)
        if time_s < 14.9:
            np.testing.assert_allclose(a_.position, b_.position, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(a_.rotation, b_.rotation, rtol=1e-12, atol=1e-12)
            assert a_.fov_y == pytest.approx(b_.fov_y, rel=1e-12)
    assert fast.keyframes[5].interpolation == "linear"  # materialised on demand
    assert fast.duration == pytest.approx(t[-1])


def test_a_broken_key_in_a_long_file_is_still_named_exactly(tmp_path):
    keys = [{"time": i, "position": [i, 0, 5], "target": [0, 0, 0]} for i in range(2000)]
    keys[1234]["position"] = [1, "2", 3]
    with pytest.raises(EngineError, match=r"keyframe 1234: position\[1\]: must be a number"):
        load_path(path_file(tmp_path, keys))
    keys[1234]["position"] = [1, 2, 3]
    keys[1500]["time"] = 1499
    with pytest.raises(EngineError, match=r"keyframe 1500: time: must be greater"):
        load_path(path_file(tmp_path, keys))


# --- --backend cupy without CuPy ------------------------------------------------------------------
@pytest.mark.parametrize("how", ["flag", "env"])
def test_cupy_backend_without_cupy_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch, how):
    monkeypatch.setitem(sys.modules, "cupy", None)  # "import cupy" fails as if not installed
    args = ["render", "demo", "--size", "8x8", "-o", str(tmp_path / "x.png")]
    if how == "flag":
        args += ["--backend", "cupy"]
    else:
        monkeypatch.setenv("ENGINE_BACKEND", "cupy")
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("frustum: error: cannot use the cupy backend") and err.count("\n") == 1
    assert "pip install" in err


def test_auto_falls_back_to_numpy_with_one_log_line(monkeypatch, caplog):
    import engine.render.backends as B

    monkeypatch.setitem(sys.modules, "cupy", None)
    monkeypatch.setitem(sys.modules, "numba", None)
    monkeypatch.setattr(B, "_fallback_logged", [])
    monkeypatch.delenv("ENGINE_BACKEND", raising=False)
    with caplog.at_level(logging.INFO, logger="engine"):
        names = [get_projector("auto").name for _ in range(3)]
    assert names == ["numpy"] * 3
    assert sum("using the NumPy reference backend" in r.message for r in caplog.records) == 1


# --- argument errors name the argument ------------------------------------------------------------
@pytest.mark.parametrize("call, message", [
    (lambda: PerspectiveCamera(fov_y="wide"), "fov_y must be a number, got 'wide'"),
    (lambda: PerspectiveCamera(near="x"), "near must be a number"),
    (lambda: OrthographicCamera(height=None), "height must be a number, got None"),
    (lambda: PointCloud(np.zeros((2, 3)), point_size="big"), "point_size must be a number"),
    (lambda: Node(scale=(1, 2)), "scale .*3 numbers"),
    (lambda: rasterize_points(np.zeros((2, 2), np.float32), np.zeros(2, np.float32),
                              np.ones(2, bool), None, (8, 8)), "colors must be an array, got None"),
    (lambda: rasterize_points(np.zeros((2, 2), np.float32), np.zeros(2, np.float32),
                              np.ones(2, bool), np.zeros((2, 4), np.uint8), None),
     r"size must be \(width, height\) in pixels, got None"),
    (lambda: Renderer(Scene(), PerspectiveCamera(), None), "size must be"),
])
def test_argument_errors_name_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()
    with pytest.raises(TypeError, match=r"path must be a file path \(str or pathlib.Path\), "
                                        r"got None"):
        load(None)


# --- the threading policy ---------------------------------------------------------------------------
def test_parallel_threshold_is_the_size_from_which_threads_keep_winning():
    serial = {30_000: 1.0, 100_000: 3.0, 300_000: 9.0, 1_000_000: 30.0, 3_000_000: 90.0}
    loaded = {30_000: 8.0, 100_000: 2.0, 300_000: 10.0, 1_000_000: 16.0, 3_000_000: 45.0}
    n, times = T.measure_parallel_from(seconds=lambda par, n: (loaded if par else serial)[n])
    assert n == 1_000_000  # wins at 1e5, loses at 3e5, wins from 1e6 on
    assert times["serial"] == serial
    never = T.measure_parallel_from(seconds=lambda par, n: 2.0 if par else 1.0)[0]
    assert never == 6_000_000


def test_parallel_threshold_is_cached_and_configurable(tmp_path, monkeypatch):
    monkeypatch.setenv("FRUSTUM_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("FRUSTUM_PARALLEL_FROM", raising=False)
    monkeypatch.setattr(T, "_memo", {})
    monkeypatch.setattr(T, "thread_count", lambda: 2)
    calls = []

    def fake():
        calls.append(1)
        return 123_456, {"serial": {}, "parallel": {}}

    assert T.parallel_from(fake) == 123_456 and T.parallel_from(fake) == 123_456
    assert len(calls) == 1
    monkeypatch.setattr(T, "_memo", {})
    assert T.parallel_from(fake) == 123_456 and len(calls) == 1  # from the file
    assert json.loads((tmp_path / "numba-threads.json").read_text())["parallel_from"] == 123_456
    monkeypatch.setenv("FRUSTUM_PARALLEL_FROM", "5000")
    assert T.parallel_from(fake) == 5000
    monkeypatch.setenv("FRUSTUM_PARALLEL_FROM", "lots")
    with pytest.raises(ValueError, match="FRUSTUM_PARALLEL_FROM"):
        T.parallel_from(fake)


def test_thread_count_is_settable_within_the_pool():
    import numba

    before = numba.get_num_threads()
    try:
        assert T.set_threads(1) == 1 and numba.get_num_threads() == 1
        with pytest.raises(ValueError, match="threads must be between 1 and"):
            T.set_threads(numba.config.NUMBA_NUM_THREADS + 1)
        with pytest.raises(ValueError, match="whole number"):
            T.set_threads("many")
    finally:
        numba.set_num_threads(before)
