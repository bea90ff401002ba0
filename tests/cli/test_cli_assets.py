"""The CLI with asset files: a file's own camera (--camera gltf:N), and inputs that used
to trace back (deep nesting, huge counts) now exit 2 with one line."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from engine.cli import main

ROOT = Path(__file__).resolve().parents[2]
CAMERAS = "gltf-khronos/Cameras/Cameras.gltf"


def _glb_with_json(js: bytes) -> bytes:
    js += b" " * (-len(js) % 4)
    chunk = struct.pack("<I4s", len(js), b"JSON") + js
    return struct.pack("<4sII", b"glTF", 2, 12 + len(chunk)) + chunk


def _triangle(field: str, value) -> bytes:
    import base64

    data = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], "<f4").tobytes()
    doc = {"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
           "nodes": [{"mesh": 0}], "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
           "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3"}],
           "bufferViews": [{"buffer": 0, "byteLength": 36}],
           "buffers": [{"byteLength": 36, "uri": "data:application/octet-stream;base64,"
                        + base64.b64encode(data).decode()}]}
    doc["accessors"][0][field] = value
    return json.dumps(doc).encode()


@pytest.mark.parametrize("name,content,words", [
    ("deep.gltf", b"[" * 100_000, ["nested too deeply to read"]),
    ("deep.glb", _glb_with_json(b"[" * 100_000), [("JSON in the JSON chunk is nested too "
                                                  "deeply to read")]),
    ("count.gltf", _triangle("count", 9223372036854775808),
     ["accessors[0]: byteOffset 0 + 9,223,372,036,854,775,808 elements"]),
    ("offset.gltf", _triangle("byteOffset", 9223372036854775808),
     ["accessors[0]: byteOffset 9,223,372,036,854,775,808 + 3 elements"]),
    ("digits.gltf", _triangle("count", 1).replace(b'"count": 1', b'"count": ' + b"9" * 5000),
     ["has a number that cannot be read"]),
])
def test_inputs_that_used_to_trace_back_exit_2(tmp_path, capsys, name, content, words):
    f = tmp_path / name
    f.write_bytes(content)
    rc = main(["render", str(f), "--out", str(tmp_path / "x.png"), "--size", "32x24"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith(f"frustum: error: {f}: ")
    for w in words:
        assert w in err[0]


@pytest.mark.parametrize("text,words", [
    ("[" * 100_000, "nested too deeply to be a camera path"),
    ('{"keyframes": [{"time": ' + "9" * 5000 + "}]}", "a number cannot be read"),
])
def test_bad_camera_path_exits_2_in_a_real_process(tmp_path, text, words):
    path = tmp_path / "p.json"
    path.write_text(text)
    res = subprocess.run([sys.executable, "-m", "engine", "render", "demo", "--camera",
                          str(path), "--out", str(tmp_path / "x.png"), "--size", "32x24"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 2
    err = res.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"frustum: error: {path}: {words}"), err


def test_render_through_the_files_camera(ref_assets, tmp_path):
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    common = ["--size", "100x100", "--backend", "numpy"]
    assert main(["render", str(ref_assets / CAMERAS), "--out", str(a), "--camera", "gltf:0",
                 *common]) == 0
    assert main(["render", str(ref_assets / CAMERAS), "--out", str(b), "--camera", "gltf:1",
                 *common]) == 0
    img_a, img_b = (np.asarray(Image.open(p).convert("RGB")).astype(int) for p in (a, b))
    bg = np.array([10, 13, 20])  # the CLI's file background (0.04, 0.05, 0.08)
    cover_a = (np.abs(img_a - bg).sum(-1) > 30).mean()
    cover_b = (np.abs(img_b - bg).sum(-1) > 30).mean()
    # the quad seen from (0.5, 0.5, 3): the perspective camera (yfov 0.7 rad) shows it
    # smaller than the orthographic one (ymag 1: 2 units tall)
    assert 0.05 < cover_a < cover_b < 0.6


def test_missing_file_camera_is_one_line(ref_assets, tmp_path, capsys):
    f = ref_assets / CAMERAS
    rc = main(["render", str(f), "--out", str(tmp_path / "x.png"), "--camera", "gltf:2"])
    assert rc == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"frustum: error: --camera gltf:2: {f} has 2 camera(s) (0 to 1)"]


@pytest.mark.parametrize("spec", ["gltf:x", "gltf:-1"])
def test_argparse_rejects_a_bad_file_camera(ref_assets, capsys, spec):
    with pytest.raises(SystemExit) as e:
        main(["render", str(ref_assets / CAMERAS), "--camera", spec])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"--camera gltf:N needs a camera number N >= 0, got {spec!r}" \
        in err[0]
