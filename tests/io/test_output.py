"""The output lifecycle (engine.io.output): names checked before rendering, every file
through a temporary name and a rename, one session for signals and close-or-abort; the
image suffixes that work, asked of Pillow; one render_video for both paths."""

from __future__ import annotations

import io
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import engine
from engine import Node, PerspectiveCamera, PointCloud, Scene
from engine.errors import EngineError, OutputError
from engine.io.image import image_formats, image_suffixes, save_image
from engine.io.output import Output, PartialFile, check_output_name
from engine.io.video import ImageWriter, open_writer

ROOT = Path(__file__).resolve().parents[2]
# The suffixes the issue reported (each rendered the whole job, then failed).
UNWRITABLE = (".psd", ".pcd", ".cur", ".xpm", ".fli", ".mpg", ".ras", ".eps", ".blp")


def picture(w=48, h=32, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 256, (h, w, 4), np.uint8)
    a[..., 3] = 255
    return a


def test_every_listed_suffix_writes_an_image_that_reads_back_at_its_size(tmp_path):
    a = picture(261, 7)
    assert ".png" in image_suffixes() and ".jpg" in image_suffixes()
    for ext in image_suffixes():
        out = save_image(tmp_path / f"x{ext}", a)
        with Image.open(out) as im:
            im.load()
            assert im.size == (261, 7), ext
            back = np.asarray(im.convert("RGB"), dtype=np.int16)
        fmt, _mode = image_formats()[ext]
        if fmt in ("PNG", "BMP", "TIFF", "PPM", "TGA", "SGI", "QOI"):  # lossless formats
            assert np.array_equal(back, a[..., :3]), ext
        assert not (tmp_path / f"x.partial{ext}").exists()


def test_reported_unwritable_suffixes_are_not_offered_and_are_refused_by_name(tmp_path):
    from PIL import Image as PILImage

    for ext in UNWRITABLE:
        assert ext not in image_suffixes()
        with pytest.raises(OutputError) as e:
            save_image(tmp_path / f"x{ext}", picture())
        assert str(e.value).startswith(str(tmp_path / f"x{ext}"))
        assert ".png" in str(e.value) and ".jpg" in str(e.value)
        # independently: Pillow has no writer for the read-only ones
        fmt = PILImage.registered_extensions().get(ext)
        if ext in (".psd", ".pcd", ".cur", ".xpm", ".fli", ".mpg", ".ras"):
            assert fmt is None or fmt not in PILImage.SAVE
    assert not list(tmp_path.iterdir())


def run_cli(*args, cwd=None, preexec_fn=None, timeout=180):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "engine", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, check=False, cwd=cwd, env=env,
                          preexec_fn=preexec_fn)


def test_cli_refuses_unwritable_suffixes_before_rendering_with_one_line(tmp_path):
    for ext in UNWRITABLE:
        out = tmp_path / f"x{ext}"
        # 'missing.obj' does not exist: the output is checked first, so that is not
        # the error (nothing is loaded or rendered).
        r = run_cli("render", tmp_path / "missing.obj", "--out", out, "--size", "32x24")
        assert r.returncode == 2, (ext, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1, (ext, r.stderr)
        assert lines[0].startswith(f"frustum: error: --out {out}: cannot write"), lines
        assert ".png" in lines[0] and ".jpg" in lines[0] and "missing.obj" not in lines[0]
        assert not out.exists()
    r = run_cli("view", "demo", "--out", tmp_path / "v.psd", "--frames", "1")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--out" in r.stderr
    r = run_cli("example", "galaxy", "--headless", "--frames", "1", "--size", "32x24",
                "--out", tmp_path / "g.psd")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert f"{tmp_path / 'g.psd'}: cannot write '.psd' images" in r.stderr
    assert not list(tmp_path.iterdir())


def test_empty_out_exits_2_and_nothing_is_written_or_deleted(tmp_path):
    (tmp_path / "frame_000000.png").write_bytes(b"an earlier frame")
    (tmp_path / "keep.txt").write_text("x")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    for args in (["render", "demo", "--out", ""], ["render", "demo", "--out", "  "],
                 ["render", "demo", "-o", "", "--frames", "3"],
                 ["render-many", "*.obj", "--out", ""], ["view", "demo", "--out", ""]):
        r = run_cli(*args, cwd=tmp_path)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr.count("\n") == 1 and "output name is empty" in r.stderr, r.stderr
        assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    for bad in ("", " "):
        with pytest.raises(OutputError, match="output name is empty"):
            check_output_name(bad)
        with pytest.raises(OutputError, match="output name is empty"):
            open_writer(bad, (8, 8), 10.0)


def _limit_file_size(limit):
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past it fails with EFBIG
    return apply


def test_a_full_disk_never_overwrites_a_good_image_in_place(tmp_path):
    # The same render once without a limit first, so compiler and measurement caches
    # are on disk and the limited run writes nothing but its image.
    warm = run_cli("render", "demo", "--out", tmp_path / "warm.png", "--size", "640x480",
                   "--backend", "numpy")
    assert warm.returncode == 0, warm.stderr
    (tmp_path / "warm.png").unlink()
    out = tmp_path / "x.png"
    noise = picture(400, 300, seed=3)
    save_image(out, noise)
    good = out.read_bytes()
    assert len(good) > 300_000  # random pixels do not compress
    # A file size limit below the size of the new image stands in for a full disk: the
    # write fails part-way, as it does with ENOSPC.
    limit = 8192
    r = run_cli("render", "demo", "--out", out, "--size", "640x480", "--backend", "numpy",
                preexec_fn=_limit_file_size(limit))
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and f"--out {out}: cannot write" in r.stderr, r.stderr
    assert out.read_bytes() == good  # the earlier file, whole
    with Image.open(out) as im:
        im.load()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.png"]  # no partial left
    # without the limit the same render replaces it whole
    r = run_cli("render", "demo", "--out", out, "--size", "640x480", "--backend", "numpy")
    assert r.returncode == 0, r.stderr
    assert out.stat().st_size > limit  # so the limited render did run out of room
    with Image.open(out) as im:
        assert im.size == (640, 480)


def test_partial_file_commits_whole_or_leaves_the_old_file(tmp_path):
    out = tmp_path / "a.bin"
    out.write_bytes(b"old")
    with pytest.raises(RuntimeError), PartialFile(out) as tmp:
        tmp.write_bytes(b"half")
        raise RuntimeError("encoder failed")
    assert out.read_bytes() == b"old" and not (tmp_path / "a.partial.bin").exists()
    with PartialFile(out) as tmp:
        assert tmp == tmp_path / "a.partial.bin"
        tmp.write_bytes(b"new")
    assert out.read_bytes() == b"new" and sorted(os.listdir(tmp_path)) == ["a.bin"]


def test_session_closes_on_a_signal_and_aborts_on_an_error(tmp_path):
    writer = open_writer(tmp_path / "f/", (16, 12), 10.0)
    with Output(writer, 5) as out:
        for k in range(5):
            if k == 3:
                os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C: stops at once
            out.write(picture(16, 12, seed=k))
    r = out.result
    assert r.interrupted and r.stop_signal == signal.SIGINT and r.frames == 3
    assert sorted(p.name for p in (tmp_path / "f").iterdir()) == [
        "frame_000000.png", "frame_000001.png", "frame_000002.png"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored

    save_image(tmp_path / "g.png", picture(16, 12, seed=9))
    earlier = (tmp_path / "g.png").read_bytes()
    writer = ImageWriter(tmp_path / "g.png", (16, 12))
    with pytest.raises(ValueError), Output(writer, 1) as out:
        raise ValueError("render failed")
    assert (tmp_path / "g.png").read_bytes() == earlier


def small_scene():
    scene = Scene(background=(0, 0, 0))
    rng = np.random.default_rng(0)
    scene.add(Node("c", geometry=PointCloud(rng.uniform(-1, 1, (200, 3)), colors="white")))
    cam = PerspectiveCamera(position=(0, 1, 4))
    cam.look_at((0, 0, 0))
    return scene, cam


def test_one_render_video_checks_arguments_once_for_both_paths(tmp_path):
    scene, cam = small_scene()
    bad = [{"out": tmp_path / "x.png"}, {"out": ""}, {"fps": -1},
           {"duration": 1, "frames": 3}, {"frames": 0}, {"size": (0, 8)},
           {"fps": 1e9, "duration": 1e9}]
    for kw in bad:
        kw = {"out": tmp_path / "v.gif", **kw}
        errors = []
        for dask in ({}, {"workers": 2}):
            with pytest.raises((EngineError, ValueError, TypeError)) as e:
                engine.render_video(scene, cam, **kw, **dask)
            errors.append((type(e.value), str(e.value)))
        assert errors[0] == errors[1], kw  # the same check, before any cluster starts
    assert not list(tmp_path.iterdir())
    assert not hasattr(engine.animation.video, "render_video")  # one public function
    res = engine.render_video(scene, cam, tmp_path / "v.gif", fps=5, frames=3, size=(32, 24))
    assert res.frames == 3 and not res.interrupted
    with Image.open(tmp_path / "v.gif") as im:
        assert im.n_frames == 3


def test_image_writer_checks_before_rendering_and_writes_once(tmp_path):
    w = open_writer(tmp_path / "deep" / "x.jpg", (20, 10))
    assert isinstance(w, ImageWriter)
    w.write(picture(20, 10))
    with pytest.raises(ValueError, match="one frame"):
        w.write(picture(20, 10))
    w.close()
    data = (tmp_path / "deep" / "x.jpg").read_bytes()
    with Image.open(io.BytesIO(data)) as im:
        assert im.format == "JPEG" and im.size == (20, 10)
    w = open_writer(tmp_path / "none" / "y.png", (20, 10))
    w.abort()  # nothing written: the folder made for it goes again
    assert not (tmp_path / "none").exists()
