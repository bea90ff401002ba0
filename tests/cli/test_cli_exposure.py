"""frustum render / render-many --exposure and --tone-map: an unlit quad of linear 0.2
comes out at exposure x 0.2 (sRGB-encoded), PBR Neutral compresses exposure 10 below
white, and bad values are one line + exit 2."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from engine.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "io"))
from gltf_files import FLOAT, USHORT, Gltf

SIZE = "64x48"


def _grey_quad(path, linear=0.2):
    """An unlit quad whose (linear) base colour factor is ``linear`` grey."""
    g = Gltf()
    mat = g.material(pbrMetallicRoughness={"baseColorFactor": [linear] * 3 + [1]},
                     extensions={"KHR_materials_unlit": {}})
    g.doc["extensionsUsed"] = ["KHR_materials_unlit"]
    g.mesh({"POSITION": g.accessor([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], FLOAT)},
           indices=g.accessor(np.array([0, 1, 2, 0, 2, 3]), USHORT), material=mat)
    return g.write_gltf(path)


def _encode(lin):
    return round(255 * (1.055 * lin ** (1 / 2.4) - 0.055))


@pytest.mark.parametrize("flags, want", [
    ([], _encode(0.2)), (["--exposure", "2.5"], _encode(0.5)),
    (["--exposure", "10"], 255),
    # PBR Neutral of 2.0 (written out in tests/render/test_pbr.py): 0.96
    (["--exposure", "10", "--tone-map", "pbr-neutral"], _encode(0.96)),
])
def test_render_exposure_and_tone_map(tmp_path, flags, want):
    src = _grey_quad(tmp_path / "quad.gltf")
    out = tmp_path / "out.png"
    assert main(["render", str(src), "--out", str(out), "--size", SIZE, *flags]) == 0
    px = np.asarray(Image.open(out))[24, 32, :3].astype(int)
    assert np.abs(px - want).max() <= 1, (px, want)


def test_render_many_takes_the_exposure(tmp_path):
    _grey_quad(tmp_path / "quad.gltf")
    out = tmp_path / "thumbs"
    assert main(["render-many", str(tmp_path / "*.gltf"), "--out", str(out), "--size", SIZE,
                 "--exposure", "2.5"]) == 0
    px = np.asarray(Image.open(out / "quad.png"))[24, 32, :3].astype(int)
    assert np.abs(px - _encode(0.5)).max() <= 1


@pytest.mark.parametrize("flags, message", [
    # one wording for every refused number
    (["--exposure", "0"], "--exposure: must be a finite number > 0, got '0'"),
    (["--exposure", "nan"], "--exposure: must be a finite number > 0, got 'nan'"),
    (["--exposure", "inf"], "--exposure: must be a finite number > 0, got 'inf'"),
    # radiance times 1e308 overflowed, and the tone map made the infinity NaN
    (["--exposure", "1e308"], "--exposure: must be a finite number > 0 and at most 1.04858e+06"),
    (["--tone-map", "aces"], "--tone-map: invalid choice: 'aces'"),
])
def test_bad_exposure_values_are_one_line(tmp_path, capsys, flags, message):
    src = _grey_quad(tmp_path / "quad.gltf")
    with pytest.raises(SystemExit) as exc:
        main(["render", str(src), "--out", str(tmp_path / "x.png"), *flags])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err
    assert not (tmp_path / "x.png").exists()
