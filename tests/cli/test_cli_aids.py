"""frustum render --line-color / --hidden-lines / --grid / --bbox / --axes on a cube OBJ
built here: the pixels the flags must change, and one line + exit 2 for bad values."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh
from PIL import Image

from engine.cli import main
from engine.scene.helpers import AXIS_COLORS, BOX_COLOR, GRID_COLOR


@pytest.fixture
def cube(tmp_path):
    path = tmp_path / "cube.obj"
    trimesh.creation.box((1.0, 1.0, 1.0)).export(path)
    return path


def _render(tmp_path, cube, *flags):
    out = tmp_path / "out.png"
    assert main(["render", str(cube), "--out", str(out), "--size", "200x150",
                 "--backend", "numba", "--msaa", "1", *flags]) == 0  # exact pixels
    return np.asarray(Image.open(out).convert("RGBA"))[..., :3].astype(int)


def _count(img, rgb, tol=2):
    return int((np.abs(img - np.asarray(rgb)).max(axis=-1) <= tol).sum())


def _u8(c):
    return np.rint(np.asarray(c[:3]) * 255).astype(int)


def test_wireframe_on_white_is_not_blank(tmp_path, cube):
    img = _render(tmp_path, cube, "--draw", "wireframe", "--background", "white")
    assert _count(img, (0, 0, 0)) > 300  # black edges (the white mesh would not show)
    assert _count(img, (0, 0, 0)) + _count(img, (255, 255, 255)) == img.shape[0] * img.shape[1]
    red = _render(tmp_path, cube, "--draw", "wireframe", "--background", "white",
                  "--line-color", "red")
    assert _count(red, (255, 0, 0)) == _count(img, (0, 0, 0))  # same pixels, recoloured


def test_hidden_lines_remove_edges(tmp_path, cube):
    wire = _render(tmp_path, cube, "--draw", "wireframe", "--background", "white")
    hidden = _render(tmp_path, cube, "--hidden-lines", "--background", "white")
    n_wire, n_hidden = _count(wire, (0, 0, 0)), _count(hidden, (0, 0, 0))
    # an edge pixel kept is one of the full wireframe's; the back edges are gone
    assert ((hidden == 0).all(-1) <= (wire == 0).all(-1)).all()
    assert 0.4 * n_wire < n_hidden < 0.85 * n_wire


def test_grid_bbox_axes_flags(tmp_path, cube):
    plain = _render(tmp_path, cube, "--background", "black")
    aids = _render(tmp_path, cube, "--background", "black", "--grid", "--bbox", "--axes")
    for colour in (GRID_COLOR, BOX_COLOR):  # (the lit cube has greys)
        assert _count(aids, _u8(colour)) > _count(plain, _u8(colour)) + 20, colour
    side = 150 // 4  # the gizmo's square, bottom-left: a quarter of the smaller side
    corner = aids[150 - 8 - side:150 - 8, 8:8 + side]
    for colour in AXIS_COLORS:
        assert _count(corner, _u8(colour)) > 5


@pytest.mark.parametrize("flags, message", [
    (["--line-color", "nope"], "--line-color: expected a colour"),
    (["--hidden-lines", "--draw", "solid"], "--hidden-lines hides edges of a wireframe"),
    (["--grid", "--workers", "2", "--frames", "2"], "not sent to Dask workers"),
])
def test_bad_aid_flags_exit_2_with_one_line(tmp_path, cube, capsys, flags, message):
    out = tmp_path / ("x.mp4" if "--workers" in flags else "x.png")
    code = None
    try:
        code = main(["render", str(cube), "--out", str(out), "--size", "32x32", *flags])
    except SystemExit as exc:  # argparse errors exit from the parser
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()
