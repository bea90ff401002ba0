"""Bad input gets one clear line naming the argument; edge values never crash or NaN."""

import numpy as np
import pytest

from engine import Node, PerspectiveCamera, PointCloud, Renderer, Scene
from engine.arrays import to_host
from engine.cli import main
from engine.cli.commands import load_source
from engine.render.points import rasterize_points


def test_argument_errors_are_one_line(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["render", "--size", "abc"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "usage:" not in err
    assert "frustum render: error: argument --size" in err and "--help" in err


def test_debug_accepted_after_the_subcommand(tmp_path, capsys):
    from engine.errors import LoadError

    with pytest.raises(LoadError):  # --debug: the exception propagates (traceback)
        main(["render", str(tmp_path / "missing.ply"), "--debug", "--out", str(tmp_path / "x.png")])
    assert main(["render", str(tmp_path / "missing.ply"), "--out", str(tmp_path / "x.png")]) == 2


@pytest.mark.parametrize("spec,msg", [("0,1000", "elevation must be in [-90, 90]"),
                                      ("0,0,1e300", "distance must be in"),
                                      ("0,0,-3", "distance must be in")])
def test_camera_spec_limits(spec, msg, capsys):
    with pytest.raises(SystemExit):
        main(["render", "--camera", spec])
    assert msg in capsys.readouterr().err


def test_far_camera_distance_stays_finite(tmp_path):
    out = tmp_path / "far.png"
    assert main(["render", "--camera", "0,0,1e12", "--size", "32x24", "--out", str(out)]) == 0
    assert out.stat().st_size > 0


def test_backend_errors_name_their_source(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("ENGINE_BACKEND", "bogus")
    assert main(["render", "--size", "8x8", "--out", str(tmp_path / "a.png")]) == 2
    assert "ENGINE_BACKEND" in capsys.readouterr().err
    from engine.render.backends.cupy_backend import cupy_unavailable_reason

    if cupy_unavailable_reason() is None:
        return  # a GPU is present: cupy works
    monkeypatch.delenv("ENGINE_BACKEND")
    assert main(["render", "--backend", "cupy", "--size", "8x8",
                 "--out", str(tmp_path / "b.png")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("frustum: error: cannot use the cupy backend") and err.count("\n") == 1


@pytest.mark.parametrize("size", [(150, 400), (400, 150)])
def test_auto_framing_fits_the_output_aspect(size):
    scene, camera = load_source("demo", size[0] / size[1])
    r = Renderer(scene, camera, size, backend="numpy")
    p = r.project()
    assert to_host(p.visible).all()  # the whole demo is inside the frustum
    xy = to_host(p.screen_xy)
    assert xy[:, 0].min() >= 0 and xy[:, 0].max() <= size[0]


@pytest.mark.parametrize("size,err", [("1280x720", "(width, height)"), ((64.5, 48), "whole"),
                                      ((100000, 10), "between"), ((0, 5), "between"),
                                      ((1, 2, 3), "(width, height)")])
def test_renderer_rejects_bad_sizes(size, err):
    scene = Scene()
    with pytest.raises(ValueError, match=err.replace("(", r"\(").replace(")", r"\)")):
        Renderer(scene, PerspectiveCamera(), size)


def test_renderer_needs_a_camera():
    with pytest.raises(TypeError, match="camera"):
        Renderer(Scene(), None)


def test_empty_scene_renders_background():
    scene = Scene(background=(0.0, 0.5, 1.0))
    frame = Renderer(scene, PerspectiveCamera(), (8, 6), backend="numpy").render()
    assert (frame.color == [0, 128, 255, 255]).all() and (frame.depth == 1).all()


def test_big_splats_are_chunked_with_identical_result(monkeypatch):
    rng = np.random.default_rng(5)
    n = 300
    xy = rng.uniform(-20, 120, (n, 2)).astype(np.float32)
    z = rng.choice(np.float32([0.25, 0.5, 0.75]), n)
    vis = np.ones(n, bool)
    col = rng.integers(0, 256, (n, 4)).astype(np.uint8)
    whole = rasterize_points(xy, z, vis, col, (100, 80), 17)
    from engine.render import points as raster

    monkeypatch.setattr(raster, "SPLAT_CHUNK_PIXELS", 17 * 17 * 7)  # 7 points per chunk
    chunked = rasterize_points(xy, z, vis, col, (100, 80), 17)
    np.testing.assert_array_equal(whole.color, chunked.color)
    np.testing.assert_array_equal(whole.depth, chunked.depth)


def test_scene_far_from_origin_with_node_transforms():
    scene = Scene()
    scene.add(Node("far", position=(1e7, 0, 0), geometry=PointCloud(np.zeros((3, 3)))))
    cam = PerspectiveCamera(position=(1e7, 0, 10))
    cam.look_at((1e7, 0, 0))
    p = Renderer(scene, cam, (20, 20), backend="numba").project()
    assert to_host(p.visible).all()
    np.testing.assert_allclose(to_host(p.screen_xy), 10, atol=1e-3)


def test_a_frame_too_large_for_memory_is_one_line(tmp_path):
    # the largest --size with 4x MSAA asks for 8 GiB of sample keys: in a process whose
    # address space is limited to 6 GB that allocation fails; the CLI names --size and
    # --msaa instead of a traceback (found by a new-user pass)
    import resource
    import subprocess
    import sys

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (6 * 2**30, 6 * 2**30))

    r = subprocess.run([sys.executable, "-m", "engine", "render", "demo", "--size",
                        "16384x16384", "--msaa", "4", "--out", str(tmp_path / "big.png")],
                       capture_output=True, text=True, timeout=600, preexec_fn=limit,
                       check=False)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert lines[-1].startswith("frustum: error: out of memory (") and "--size or --msaa" in lines[-1]
    assert not (tmp_path / "big.png").exists()
