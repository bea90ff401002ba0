"""`frustum render FILE` on real files, and bad files -> one error line, exit status 2."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from engine.cli import main
from engine.render.frame import background_rgba

ROOT = Path(__file__).resolve().parents[2]
FILE_BACKGROUND = background_rgba((0.04, 0.05, 0.08))


def _drawn_pixels(png: Path) -> int:
    img = np.asarray(Image.open(png).convert("RGBA"))
    return int((img != FILE_BACKGROUND).any(axis=-1).sum())


@pytest.mark.parametrize("rel,points", [("classic/suzanne.obj", 507),
                                        ("pointclouds/b9_training.ply", 22_300),
                                        ("gltf/Duck.glb", 2_399)])
def test_render_real_file(ref_assets, tmp_path, capsys, rel, points):
    out = tmp_path / "x.png"
    rc = main(["render", str(ref_assets / rel), "--out", str(out), "--size", "160x120",
               "--camera", "30,20", "--point-size", "2", "--backend", "numpy"])
    assert rc == 0
    assert Image.open(out).size == (160, 120)
    assert _drawn_pixels(out) > 50
    stdout = capsys.readouterr().out
    assert f"{points} vertices" in stdout and str(out.resolve()) in stdout


def test_camera_distance_and_point_size_change_the_picture(ref_assets, tmp_path):
    f = str(ref_assets / "ply/bunny.ply")
    common = ["--size", "160x120", "--backend", "numpy", "--draw", "points"]  # splat sizes
    a, b, c = tmp_path / "a.png", tmp_path / "b.png", tmp_path / "c.png"
    assert main(["render", f, "--out", str(a), *common]) == 0
    # auto-framed distance (0.32 for this 0.15-unit bunny) vs 1.0: fewer pixels covered
    assert main(["render", f, "--out", str(b), "--camera", "35,25,1.0", *common]) == 0
    # larger than the default diameter (5 px: engine.scene.geometry.default_point_size)
    assert main(["render", f, "--out", str(c), "--point-size", "8", *common]) == 0
    assert _drawn_pixels(b) < _drawn_pixels(a) < _drawn_pixels(c)


@pytest.mark.parametrize("name,words", [
    ("pond.0.ply", ["truncated binary PLY", "69 missing"]),
    ("fuze_ascii.ply", ["line 523", "21 values", "declares 15"]),
])
def test_broken_files_exit_2_with_one_line(ref_assets, tmp_path, capsys, name, words):
    path = ref_assets / "broken" / name
    rc = main(["render", str(path), "--out", str(tmp_path / "x.png"), "--size", "64x48"])
    assert rc == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"frustum: error: {path}: ")
    assert "Traceback" not in err
    for w in words:
        assert w in lines[0]
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("name,content,words", [
    ("missing.obj", None, ["no such file"]),
    ("model.3ds", b"\x4d\x4d", ["unknown 3D file format '.3ds'"]),
])
def test_missing_and_unknown_files_exit_2(tmp_path, capsys, name, content, words):
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    assert main(["render", str(path), "--out", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and str(path) in err
    for w in words:
        assert w in err


@pytest.mark.parametrize("name,content,words", [
    ("empty.glb", b"", ["the file is empty (0 bytes)"]),
    ("empty.stl", b"", ["the file is empty (0 bytes)"]),
    ("b.gltf", b'{"asset":', ["not valid JSON: the text ends at line 1, column 10"]),
    ("t.stl", b"\0" * 80 + struct.pack("<I", 1000) + b"\0" * 50,
     ["truncated binary STL", "1,000 triangles = 50,084 bytes", "has 134 bytes"]),
    ("zero.obj", b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n",
     ["line 4: face references vertex 0, but OBJ indices start at 1"]),
    ("far.obj", b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 99\n",
     ["line 4: face references vertex 99 but only 3 are defined"]),
    ("colour.ply", (b"ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\n"
                   b"property float y\nproperty float z\nproperty float red\n"
                   b"property float green\nproperty float blue\nend_header\n0 0 0 1.5 0 0\n"),
     ["'vertex' 0 has red = 1.5", "float colours hold 0-1"]),
])
def test_bad_files_from_testing_exit_2(tmp_path, capsys, name, content, words):
    path = tmp_path / name
    path.write_bytes(content)
    rc = main(["render", str(path), "--out", str(tmp_path / "x.png"), "--size", "64x48"])
    assert rc == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"frustum: error: {path}: "), err
    assert "Traceback" not in err
    for w in words:
        assert w in err
    assert not (tmp_path / "x.png").exists()


def test_debug_shows_the_traceback(ref_assets, tmp_path):
    from engine.errors import LoadError

    with pytest.raises(LoadError):
        main(["--debug", "render", str(ref_assets / "broken/pond.0.ply"),
              "--out", str(tmp_path / "x.png")])


@pytest.mark.timeout(120)
def test_process_exit_status_and_stderr(ref_assets, tmp_path):
    """The real console entry point: status 2, one stderr line, no traceback, no hang."""
    env = dict(os.environ, ENGINE_BACKEND="numpy")
    proc = subprocess.run(
        [sys.executable, "-m", "engine", "render", str(ref_assets / "broken/fuze_ascii.ply"),
         "--out", str(tmp_path / "x.png")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=100, check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0, proc.stderr
    assert "fuze_ascii.ply" in proc.stderr and "Traceback" not in proc.stderr
