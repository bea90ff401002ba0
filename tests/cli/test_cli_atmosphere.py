"""frustum render --fog / --sky: the sky behind the model, the model fogged, and bad
values one line + exit 2."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from engine.cli import main


def _ply(path, n=400):
    rng = np.random.default_rng(3)
    pts = rng.uniform(-1, 1, (n, 3))
    lines = ["ply", "format ascii 1.0", f"element vertex {n}", "property float x",
             "property float y", "property float z", "end_header"]
    lines += [f"{x:.4f} {y:.4f} {z:.4f}" for x, y, z in pts]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_render_with_sky_and_fog(tmp_path):
    src = _ply(tmp_path / "cloud.ply")
    plain, fogged = tmp_path / "plain.png", tmp_path / "fogged.png"
    # one sample per pixel: exact pixels (edge pixels under MSAA mix fog and sky by
    # coverage, test_atmosphere.py)
    base = ["render", str(src), "--size", "96x64", "--backend", "numba",
            "--point-size", "3", "--msaa", "1"]
    assert main([*base, "--out", str(plain)]) == 0
    # fog of the horizon colour's own, fully opaque at any distance beyond 0.01
    assert main([*base, "--out", str(fogged), "--sky", "#ff0000,#0000ff",
                 "--fog", "linear:0:0.01:#00ff00"]) == 0
    a = np.asarray(Image.open(plain).convert("RGBA")).astype(int)
    b = np.asarray(Image.open(fogged).convert("RGBA")).astype(int)
    drawn = np.any(a[..., :3] != a[0, 0, :3], axis=-1)  # the points of the plain render
    assert drawn.sum() > 100
    assert (b[drawn][:, :3] == [0, 255, 0]).all()  # every point is the fog's green
    sky = b[~drawn]
    assert (sky[:, 1] == 0).all() and (sky[:, 3] == 255).all()  # sky: red to blue


@pytest.mark.parametrize("flag,value,words", [
    ("--fog", "exp2:-1", "density must be > 0"),
    ("--fog", "linear:9:2", "start < end"),
    ("--fog", "mist:1", "--fog must be"),
    ("--sky", "red", "--sky must be"),
    ("--sky", "red,notacolour", "sky zenith"),
    # colours there are names or #rrggbb only (',' and ':' separate the fields)
    ("--fog", "exp:0.2:1,0,0", ("--fog 'exp:0.2:1,0,0': fog color: unknown colour '1,0,0' "
                               "(use a CSS name or #rrggbb)")),
    ("--sky", "1,0,0", ("--sky '1,0,0': sky horizon: unknown colour '1' (use a CSS name or "
                       "#rrggbb)")),
])
def test_bad_values_are_one_line(tmp_path, capsys, flag, value, words):
    src = _ply(tmp_path / "cloud.ply")
    with pytest.raises(SystemExit) as e:
        main(["render", str(src), "--out", str(tmp_path / "x.png"), flag, value])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0], err
