"""Point sprites (engine.render.sprites): disc coverage, world sizes, lit points, the
default size, the options' errors. The right values are computed here; every backend's
frames are compared in test_parity.py (rows round_points, world_size_points,
lit_points)."""

from __future__ import annotations

import numpy as np
import pytest

from engine import Node, OrthographicCamera, PerspectiveCamera, PointCloud, Renderer, Scene
from engine.io import load
from engine.render.frame import new_keys
from engine.render.sprites import MIN_DISC, splat_sprites
from engine.scene.geometry import default_point_size

pytestmark = pytest.mark.timeout(180)

def _disc(cx, cy, r, size):
    ys, xs = np.mgrid[0:size[1], 0:size[0]] + 0.5
    return (xs - cx) ** 2 + (ys - cy) ** 2 <= r * r


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("centre,diameter", [((10.3, 7.8), 5.0), ((12.0, 9.0), 4.0),
                                             ((8.71, 11.05), 9.37), ((3.2, 2.9), 2.2)])
def test_a_disc_covers_exactly_the_pixel_centres_within_its_radius(backend, centre, diameter):
    size = (24, 20)
    keys = new_keys(size)
    xy = np.array([centre], np.float32)
    z = np.array([0.5], np.float32)
    vis = np.ones(1, bool)
    if backend == "numpy":
        splat_sprites(keys, xy, z, vis, np.float32(diameter), True, size)
    else:
        from engine.render.backends.numba_raster import splat_sprites_into
        splat_sprites_into(keys, xy, z, vis, np.float32(diameter), True, size)
    got = (keys != np.iinfo(np.uint64).max).reshape(size[1], size[0])
    want = _disc(*centre, diameter / 2, size)
    assert got.sum() > 0 and (got == want).all()


def test_a_disc_under_sqrt2_is_one_pixel_and_a_square_stays_square():
    size = (8, 8)
    for d, shape, want in ((1.3, True, 1), (MIN_DISC, True, 1), (2.0, True, 5),
                           (3.0, False, 9)):
        keys = new_keys(size)
        # at the centre of pixel (4, 4): a disc of diameter 2 reaches its four neighbours
        splat_sprites(keys, np.array([[4.5, 4.5]], np.float32), np.array([0.5], np.float32),
                      np.ones(1, bool), np.float32(d), shape, size)
        assert int((keys != np.iinfo(np.uint64).max).sum()) == want, (d, shape)


def _scene(points, **cloud):
    scene = Scene(background=(0, 0, 0))
    scene.add(Node("cloud", geometry=PointCloud(np.asarray(points, np.float32),
                                                colors=(1.0, 1.0, 1.0), **cloud)))
    return scene


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_a_world_sized_point_covers_size_over_two_times_focal_over_depth(backend):
    """A point 0.2 units wide at view depths 2 and 5: pixel radius 0.1 * f / d with
    f = (H / 2) / tan(fov / 2), the covered pixel centres exactly that disc."""
    size = (80, 60)
    focal = 30 / np.tan(np.radians(25))
    for depth in (2.0, 5.0):
        scene = _scene([[0.013, -0.021, 0.0]], point_size=0.2, size_units="world")
        cam = PerspectiveCamera(fov_y=50, aspect=size[0] / size[1], near=0.1, far=100)
        cam.position = (0, 0, depth)
        scene.add(cam).look_at((0, 0, 0))
        f = Renderer(scene, cam, size, backend=backend).render()
        (cx, cy), = cam.project([[0.013, -0.021, 0.0]], size)[0]
        want = _disc(cx, cy, 0.1 * focal / depth, size)
        assert ((f.depth < 1) == want).all(), depth
        assert want.sum() == pytest.approx(np.pi * (0.1 * focal / depth) ** 2, rel=0.15)


def test_orthographic_world_size_is_independent_of_depth():
    size = (64, 64)
    cam = OrthographicCamera(height=4.0, aspect=1.0)  # 16 px per world unit
    scene = _scene([[0.0, 0.0, 0.0], [1.0, 0.0, -3.0]], point_size=0.5, size_units="world")
    cam.position = (0, 0, 5)
    scene.add(cam).look_at((0, 0, 0))
    f = Renderer(scene, cam, size, backend="numpy").render()
    xy = cam.project([[0.0, 0.0, 0.0], [1.0, 0.0, -3.0]], size)[0]
    want = _disc(*xy[0], 4.0, size) | _disc(*xy[1], 4.0, size)
    assert ((f.depth < 1) == want).all()


def test_a_lit_point_takes_the_lambert_value_of_its_normal():
    """Normal (0.6, 0, 0.8) under the headlight (0.7 along the view axis, ambient 0.15):
    linear c * (0.15 + 0.7 * 0.8), grey 200 decoded and encoded here."""
    scene = _scene([[0, 0, 0]], point_size=6, normals=[[0.6, 0.0, 0.8]])
    scene.children[0].geometry.update(colors=np.array([[200, 200, 200]], np.uint8))
    cam = PerspectiveCamera(fov_y=50, aspect=1.0)
    cam.position = (0, 0, 3)
    scene.add(cam).look_at((0, 0, 0))
    lin = ((200 / 255 + 0.055) / 1.055) ** 2.4 * (0.15 + 0.7 * 0.8)
    want = round(255 * (1.055 * lin ** (1 / 2.4) - 0.055))
    for backend in ("numpy", "numba"):
        f = Renderer(scene, cam, (32, 32), backend=backend).render()
        assert f.color[16, 16, :3].tolist() == [want] * 3
    # facing away: turned towards the camera (no back face), the same value
    scene.children[0].geometry.update(normals=[[0.6, 0.0, -0.8]])
    f = Renderer(scene, cam, (32, 32), backend="numpy").render()
    assert f.color[16, 16, :3].tolist() == [want] * 3


def test_the_four_point_ply_is_visible_by_default(ref_assets):
    """points.ply (4 points with normals): loaded with the default size of a cloud under
    10,000 points, 5 px discs: each covers the pixel centres within 2.5 px (12 or more
    wherever it lies: the disc's area is 19.6 pixels)."""
    model = load(ref_assets / "pointclouds/points.ply")
    g = model.geometry
    assert g.point_size == default_point_size(4) == 5.0 and g.point_shape == "round"
    assert g.normals is not None and g.normals.shape == (4, 3)
    scene = Scene(background=(0, 0, 0))
    scene.add(model)
    cam = PerspectiveCamera(fov_y=50, aspect=4 / 3)
    cam.position = (2.5, 2.0, 3.0)
    scene.add(cam).look_at((0.0, 0.5, 0.5))
    f = Renderer(scene, cam, (320, 240), backend="numba").render()
    world = model.geometry.positions + model.geometry.origin  # recentred float64 input
    xy, _, vis = cam.project(world, (320, 240))
    assert vis.all()
    want = np.zeros((240, 320), bool)
    for c in xy:
        want |= _disc(*c, 2.5, (320, 240))
    assert ((f.depth < 1) == want).all() and want.sum() >= 4 * 12


def test_default_point_sizes():
    assert [default_point_size(n) for n in (1, 9_999, 10_000, 99_999, 100_000, 999_999,
                                            1_000_000)] == [5.0, 5.0, 3.0, 3.0, 2.0, 2.0, 1.0]


@pytest.mark.parametrize("kwargs,match", [
    ({"point_shape": "oval"}, "point_shape must be one of round, square"),
    ({"size_units": "cm"}, "size_units must be one of px, world"),
    ({"normals": np.zeros((3, 3))}, r"normals must have shape \(2, 3\)"),
])
def test_bad_point_options_name_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        PointCloud(np.zeros((2, 3)), **kwargs)


def test_a_renderer_point_size_overrides_world_units():
    scene = _scene([[0, 0, 0]], point_size=0.5, size_units="world", point_shape="square")
    cam = PerspectiveCamera(fov_y=50, aspect=1.0)
    cam.position = (0, 0, 3)
    scene.add(cam).look_at((0, 0, 0))
    f = Renderer(scene, cam, (32, 32), backend="numpy", point_size=3).render()
    assert int((f.depth < 1).sum()) == 9  # 3 px square


def test_a_changed_shape_or_unit_is_seen_by_the_next_frame():
    scene = _scene([[0, 0, 0]], point_size=4)
    cam = PerspectiveCamera(fov_y=50, aspect=1.0)
    cam.position = (0, 0, 3)
    scene.add(cam).look_at((0, 0, 0))
    r = Renderer(scene, cam, (32, 32), backend="numba")
    (cx, cy), = cam.project([[0, 0, 0]], (32, 32))[0]
    assert ((r.render().depth < 1) == _disc(cx, cy, 2.0, (32, 32))).all()
    g = scene.children[0].geometry
    g.point_shape = "square"
    assert int((r.render().depth < 1).sum()) == 16
    g.size_units = "world"  # 4 units wide at depth 3: clamped to 255 px, the whole frame
    assert int((r.render().depth < 1).sum()) == 32 * 32


def test_numba_discs_equal_the_reference_bit_for_bit_at_ties():
    """Centres on pixel centres, edges and corners and diameters 2, 3, 4 (pixel centres
    exactly on the rim), mixed with random ones, squares among them: the Numba run-based
    raster gives the NumPy reference's keys."""
    from engine.render.backends.numba_raster import splat_sprites_into

    rng = np.random.default_rng(3)
    size = (97, 61)
    n = 3000
    xy = rng.uniform(-6, 103, (n, 2))
    xy[: n // 2] = np.round(xy[: n // 2] * 2) / 2  # centres, edges, corners of pixels
    d = rng.uniform(0.5, 14, n).astype(np.float32)
    d[::3] = rng.integers(1, 6, len(d[::3]))
    rnd = rng.uniform(size=n) < 0.8
    z = rng.uniform(0, 1, n).astype(np.float32)
    vis = rng.uniform(size=n) < 0.95
    xy = xy.astype(np.float32)
    want, got = new_keys(size), new_keys(size)
    splat_sprites(want, xy, z, vis, d, rnd, size)
    splat_sprites_into(got, xy, z, vis, d, rnd, size)
    assert (want != np.iinfo(np.uint64).max).sum() > 0.5 * size[0] * size[1]
    np.testing.assert_array_equal(got, want)
