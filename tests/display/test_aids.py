"""The viewer aids in real windows (headless EGL and Xvfb, software and GL raster): the
G / B / X keys change the picture where the camera puts the grid, the box and the gizmo,
and a click names the node under the cursor with its world position. The right pixels
come from the camera's projection of the aids' geometry, computed here.

Runs in a subprocess (tests/display/aids_probe.py), like tests/display/test_window.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from aids_probe import SIZE, aids_scene
from probe_run import run_probe

from engine.scene.helpers import AXIS_COLORS, BOX_COLOR, GRID_COLOR

PROBE = Path(__file__).with_name("aids_probe.py")


def _u8(rgba):
    return np.rint(np.asarray(rgba[:3]) * 255).astype(int)


def _near(img, xy, rgb, radius=1, tol=2):
    x, y = int(np.floor(xy[0])), int(np.floor(xy[1]))
    patch = img[max(y - radius, 0):y + radius + 1, max(x - radius, 0):x + radius + 1, :3]
    return bool((np.abs(patch.astype(int) - rgb).max(axis=-1) <= tol).any())


def _run(tmp_path, raster, xvfb):
    proc = run_probe(PROBE, tmp_path, raster, xvfb, timeout=120)
    assert "keys: G grid, B box, X axes" in proc.stderr  # the help line, logged once
    shots = dict(np.load(tmp_path / "shots.npz"))
    return shots, json.loads((tmp_path / "result.json").read_text())


@pytest.mark.timeout(180)
@pytest.mark.parametrize("xvfb", [False, True], ids=["headless-egl", "xvfb"])
@pytest.mark.parametrize("raster", ["gl", "software"])
def test_aid_keys_and_click_in_a_window(tmp_path, raster, xvfb):
    shots, result = _run(tmp_path, raster, xvfb)
    assert result["raster"] == raster
    _, cam = aids_scene()
    cam.set_viewport(*SIZE)

    def at(p):
        return cam.project(p)[0][0]

    grid_pt = at((0.0, -0.5, 0.57))        # on the grid line x = 0, in front of the cube
    box_pt = at((0.0, 0.5, -0.5))          # the middle of the box's top back edge
    rot = cam.world_matrix[:3, :3]         # the gizmo: bottom-left, 8 px in, a square
    side = SIZE[1] // 4                    # a quarter of the smaller side (37 px)
    x0, y0 = 8, SIZE[1] - 8 - side
    y_dir = np.array([rot[:, 0][1], -rot[:, 1][1]])  # world +Y on screen
    gizmo_y = (x0 + side / 2 + 0.75 * side / 2.4 * y_dir[0],
               y0 + side / 2 + 0.75 * side / 2.4 * y_dir[1])
    grey, box, green = _u8(GRID_COLOR), _u8(BOX_COLOR), _u8(AXIS_COLORS[1])
    expect = {  # (grid, box, gizmo) shown in each step
        "plain": (False, False, False), "grid": (True, False, False),
        "grid_box": (True, True, False), "grid_box_axes": (True, True, True),
        "box_axes": (False, True, True)}
    for name, (g, b, x) in expect.items():
        img = shots[name]
        assert img.shape == (SIZE[1], SIZE[0], 4)
        assert _near(img, grid_pt, grey) == g, name
        assert _near(img, box_pt, box) == b, name
        assert _near(img, gizmo_y, green) == x, name
    # a key changes only what it toggles: B added the box, nothing moved the cube
    cube = shots["plain"][..., 0] < 250
    assert cube.sum() > 2000
    assert (shots["grid"][..., :3] != shots["plain"][..., :3]).any(axis=-1).sum() > 100
    assert result["state"] == [False, True, True]

    # the click: the cube's front-most surface under its centre, in the title
    pick = result["pick"]
    assert pick is not None and pick["node"] == "cube" and pick["kind"] == "triangle"
    ray = cam.screen_ray(*pick["screen_xy"], SIZE)
    # the right value: the nearest of the ray's hits with the cube's six face planes
    # that lies on the cube
    hits = []
    for axis in range(3):
        for plane in (-0.5, 0.5):
            if abs(ray.direction[axis]) > 1e-9:
                t = (plane - ray.origin[axis]) / ray.direction[axis]
                p = ray.origin + t * ray.direction
                if t > 0 and np.all(np.abs(p) <= 0.5 + 1e-9):
                    hits.append((t, p))
    want = min(hits, key=lambda h: h[0])[1]
    np.testing.assert_allclose(pick["world"], want, atol=3e-3)
    assert "cube (triangle) at (" in result["caption"]
    assert "G grid, B box, X axes, click picks" in result["caption"]


def test_viewer_aids_without_a_window(caplog):
    """ViewerAids on a renderer alone: the nodes come and go with the toggles, the grid is
    sized without the aids themselves, an empty scene gets no grid (a warning), and a
    wrong aid name is a ValueError."""
    import logging

    from engine import Renderer, Scene
    from engine.display.aids import AID_NODE_NAMES, ViewerAids

    scene, cam = aids_scene()
    r = Renderer(scene, cam, SIZE, backend="numpy")
    aids = ViewerAids(r)
    before = len(list(scene.traverse()))
    assert aids.toggle("grid") and aids.toggle("bbox")
    grid = scene.find(AID_NODE_NAMES["grid"])
    assert grid is not None and len(list(scene.traverse())) == before + 2
    lo, hi = grid.geometry.bounds()
    assert lo[1] == hi[1] == -0.5 and hi[0] - lo[0] == pytest.approx(1.2)  # 12 x 0.1
    aids.show_grid(True)  # rebuilt from the scene without the box: the same grid
    lo2, hi2 = scene.find(AID_NODE_NAMES["grid"]).geometry.bounds()
    np.testing.assert_allclose([lo2, hi2], [lo, hi])
    assert not aids.toggle("grid") and not aids.toggle("bbox")
    assert len(list(scene.traverse())) == before
    assert aids.toggle("axes") and r.overlays == [aids.gizmo]
    assert not aids.toggle("axes") and r.overlays == []
    with pytest.raises(ValueError, match="aid must be one of"):
        aids.toggle("compass")
    empty = Scene()
    cam2 = empty.add(type(cam)())
    with caplog.at_level(logging.WARNING, logger="engine"):
        assert not ViewerAids(Renderer(empty, cam2, SIZE, backend="numpy")).show_grid(True)
    assert any("no grid" in rec.getMessage() for rec in caplog.records)
