"""Geometry inputs: colours, recentring of float64 coordinates, validation."""

import numpy as np
import pytest

from engine import Node, PerspectiveCamera, PointCloud, Renderer, Scene
from engine.arrays import to_host


def test_uint8_and_float_colours_become_rgba8():
    pc = PointCloud(np.zeros((2, 3)), colors=np.array([[255, 128, 0], [1, 2, 3]], np.uint8))
    assert pc.colors.dtype == np.uint8 and pc.colors.shape == (2, 4)
    np.testing.assert_allclose(pc.colors_float[0], [1.0, 0.50196, 0.0, 1.0], atol=1e-5)
    pc2 = PointCloud(np.zeros((1, 3)), colors=[[1.0, 0.5, 0.0, 0.25]])
    assert pc2.colors.tolist() == [[255, 128, 0, 64]]


@pytest.mark.parametrize("colors,err", [([[1.5, 0, 0]], ValueError), ([[np.nan, 0, 0]], ValueError),
                                        (np.zeros((1, 5)), ValueError),
                                        (np.array([["a", "b", "c"]]), TypeError)])
def test_bad_colours_raise(colors, err):
    with pytest.raises(err):
        PointCloud(np.zeros((1, 3)), colors=colors)


def test_bad_positions_raise():
    with pytest.raises(ValueError, match=r"\(N, 3\)"):
        PointCloud(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="point_size"):
        PointCloud(np.zeros((1, 3)), point_size=0)


def test_float64_input_is_recentred():
    pts = np.array([[596650.00, 243650.0, 10.0], [596650.01, 243650.0, 10.0]])
    pc = PointCloud(pts)
    np.testing.assert_allclose(pc.origin, [596650.005, 243650.0, 10.0])
    assert pc.positions.dtype == np.float32
    assert abs(pc.positions[1, 0] - pc.positions[0, 0] - 0.01) < 1e-6
    np.testing.assert_allclose(pc.bounds(), [[596650.0, 243650.0, 10.0], [596650.01, 243650, 10]])


def test_large_coordinates_keep_precision_in_view_space(projector):
    """Two points 0.01 apart near x = 596,650 stay 0.01 +/- 0.001 apart after projection."""
    pts = np.array([[596650.000, 243650.0, 12.0], [596650.010, 243650.0, 12.0]])
    # The world origin is in the scene too, so the scene's centre is ~300 km from the pair.
    far = np.array([[0.0, 0.0, 0.0], [597300.0, 244300.0, 30.0]])
    scene = Scene()
    scene.add(Node("pair", geometry=PointCloud(pts)))
    scene.add(Node("context", geometry=PointCloud(far)))
    # An orthographic-like check in view space: camera 0.2 m away looking along -Z at the pair.
    cam = PerspectiveCamera(fov_y=10, near=0.01, far=100, position=(596650.005, 243650.0, 12.2))
    cam.look_at((596650.005, 243650.0, 12.0))
    scene.add(cam)
    r = Renderer(scene, cam, (1000, 1000), backend=projector.name)
    p = r.project()
    xy = to_host(p.screen_xy)[:2]
    assert to_host(p.visible)[:2].all()
    # pixels per metre at distance 0.2 with fov 10 deg over 1000 px:
    px_per_m = 1000 / (2 * 0.2 * np.tan(np.radians(5)))
    sep = (xy[1, 0] - xy[0, 0]) / px_per_m
    assert sep == pytest.approx(0.01, abs=0.001)
    # and float32 without recentring really would have failed (spacing 0.0625 there)
    assert np.float32(596650.01) - np.float32(596650.0) in (0.0, 0.0625)
