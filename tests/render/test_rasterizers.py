"""Every point rasterizer (Numba, CUDA) gives exactly the NumPy rasterizer's image.

Without a GPU the same clear / splat / resolve passes run from shaders/raster.cuh built
with g++ ("host"); with a GPU the real kernels run too ("cupy"); the Numba CPU fast path
is compared the same way ("numba"). Every test body runs on
each implementation and compares images and depth buffers bit for bit with
engine.render.points.rasterize_points.
"""

from __future__ import annotations

import numpy as np
import pytest
from cuda_emulation import EmulatedModule, build

from engine.render.frame import background_rgba
from engine.render.points import rasterize_points, splat_origin, splat_sizes


@pytest.fixture(scope="session")
def cuda_module(tmp_path_factory):
    """shaders/raster.cu's kernels compiled by the host compiler (tests/cuda_emulation.py)."""
    return EmulatedModule(build(tmp_path_factory.mktemp("raster_emu")))


def _emulated_rasterizer(module):
    """The exact CUDA kernels (clear, splat, resolve) launched on the CPU."""

    def rasterize(screen_xy, depth, visible, colors, size, point_size=1.0,
                  background=(0.0, 0.0, 0.0, 1.0)):
        w, h = size
        xy = np.ascontiguousarray(screen_xy, np.float32)
        z = np.ascontiguousarray(depth, np.float32)
        vis = np.ascontiguousarray(visible, np.uint8)
        col = np.ascontiguousarray(colors, np.uint8)
        n = len(z)
        sizes = np.ascontiguousarray(splat_sizes(point_size, n))
        stride = np.int64(0 if sizes.shape == (1,) else 1)
        bg = background_rgba(background).view(np.uint32)[0]
        keys = np.empty(w * h, np.uint64)
        color = np.empty((h, w, 4), np.uint8)
        zbuf = np.empty((h, w), np.float32)
        f = module.get_function
        f("raster.cu", "clear_keys")((3,), (64,), (keys, np.int64(w * h)))
        f("raster.cu", "splat_points")((5,), (64,), (xy, z, vis, sizes, stride, np.int64(n),
                                                     np.int32(w), np.int32(h), keys))
        f("raster.cu", "resolve_keys")((3,), (64,), (
            keys, col.view(np.uint32).reshape(-1), np.uint32(bg), np.int64(w * h),
            color.view(np.uint32).reshape(-1), zbuf))
        return color, zbuf

    return rasterize


def _cupy_rasterizer():
    import cupy

    from engine.render.backends.cupy_raster import rasterize_points_cuda

    def rasterize(screen_xy, depth, visible, colors, size, point_size=1.0,
                  background=(0.0, 0.0, 0.0, 1.0)):
        ps = point_size if np.ndim(point_size) == 0 else cupy.asarray(point_size)
        return rasterize_points_cuda(cupy.asarray(screen_xy), cupy.asarray(depth),
                                     cupy.asarray(visible), cupy.asarray(colors), size, ps,
                                     background)

    return rasterize


@pytest.fixture(params=[
    pytest.param("numpy", id="numpy"),
    pytest.param("numba", id="numba"),
    pytest.param("emulated", id="cuda-emulated"),
    pytest.param("cupy", id="cupy", marks=pytest.mark.gpu),
])
def rasterize(request):
    """rasterize(screen_xy, depth, visible, colors, size, point_size, background) ->
    (color, depth) on the host, for one implementation."""
    if request.param == "numpy":
        return rasterize_points
    if request.param == "numba":
        from engine.render.backends.numba_raster import rasterize_points_numba

        return rasterize_points_numba
    if request.param == "emulated":
        return _emulated_rasterizer(request.getfixturevalue("cuda_module"))
    return _cupy_rasterizer()


def assert_same_as_numpy(rasterize, *args, **kwargs):
    color, depth = rasterize(*args, **kwargs)
    ref = rasterize_points(*args, **kwargs)
    assert color.dtype == np.uint8 and depth.dtype == np.float32
    np.testing.assert_array_equal(color, ref.color)
    np.testing.assert_array_equal(depth.view(np.uint32), ref.depth.view(np.uint32))
    return color, depth


def random_scene(rng, n, w, h, margin=12.0, depth_levels=None):
    xy = np.stack([rng.uniform(-margin, w + margin, n), rng.uniform(-margin, h + margin, n)],
                  axis=1).astype(np.float32)
    if depth_levels:  # few distinct depths: many exact ties between overlapping points
        z = (rng.integers(0, depth_levels, n) / depth_levels).astype(np.float32)
    else:
        z = rng.uniform(0, 1, n).astype(np.float32)
    vis = rng.random(n) < 0.8
    colors = rng.integers(0, 256, (n, 4), dtype=np.uint8)
    return xy, z, vis, colors


@pytest.mark.parametrize("point_size", [1, 2, 3, 4.5, 7, 16])
@pytest.mark.parametrize("size", [(97, 61), (64, 64)])
def test_random_scene_matches_numpy(rasterize, point_size, size):
    rng = np.random.default_rng(int(point_size * 10) + size[0])
    xy, z, vis, col = random_scene(rng, 1500, *size)
    color, depth = assert_same_as_numpy(rasterize, xy, z, vis, col, size, point_size,
                                        (0.1, 0.2, 0.3))
    drawn = depth < 1.0
    assert 0.05 < drawn.mean()  # the scene really drew something
    assert np.all(color[~drawn] == background_rgba((0.1, 0.2, 0.3)))


def test_one_pixel_points_on_pixel_edges(rasterize):
    """One-pixel points (the compiled splat's own loop) exactly on pixel edges, just
    inside and outside the image, NaN: pixel (floor x, floor y) or nothing."""
    w, h = 7, 5
    xy = np.array([[0.0, 0.0], [6.999, 4.999], [7.0, 2.0], [-0.001, 2.0], [3.0, 5.0],
                   [2.5, -0.5], [np.nan, 1.0], [3.0, 2.0], [3.999, 2.0]], np.float32)
    z = np.linspace(0.1, 0.9, len(xy)).astype(np.float32)
    vis = np.ones(len(xy), bool)
    col = np.arange(len(xy) * 4, dtype=np.uint8).reshape(-1, 4)
    _, depth = assert_same_as_numpy(rasterize, xy, z, vis, col, (w, h), 1, (0, 0, 0))
    drawn = {(int(y), int(x)) for y, x in zip(*np.nonzero(depth < 1))}
    assert drawn == {(0, 0), (4, 6), (2, 3)}  # the last two points share pixel (3, 2)
    assert depth[2, 3] == z[7]  # the nearer one wins


def test_ties_at_equal_depth_match_numpy(rasterize):
    """Four depth levels over 2000 big splats: most pixels are contested by exact ties."""
    rng = np.random.default_rng(5)
    xy, z, vis, col = random_scene(rng, 2000, 41, 33, depth_levels=4)
    assert_same_as_numpy(rasterize, xy, z, vis, col, (41, 33), 5)


def test_per_point_sizes_match_numpy(rasterize):
    rng = np.random.default_rng(9)
    n = 800
    xy, z, vis, col = random_scene(rng, n, 75, 49)
    sizes = rng.uniform(0.2, 12.0, n).astype(np.float32)
    sizes[:3] = [0.5, 1.5, 2.5]  # round half to even: 0 -> clamped to 1, 2, 2
    assert_same_as_numpy(rasterize, xy, z, vis, col, (75, 49), sizes)


def test_lowest_index_wins_a_tie_nearest_wins_otherwise(rasterize):
    xy = np.array([[5.5, 5.5], [5.5, 5.5], [5.5, 5.5], [2.5, 2.5], [2.5, 2.5]], np.float32)
    z = np.array([0.5, 0.5, 0.7, 0.6, 0.2], np.float32)
    vis = np.ones(5, bool)
    col = np.array([[10, 0, 0, 255], [20, 0, 0, 255], [30, 0, 0, 255],
                    [40, 0, 0, 255], [50, 0, 0, 255]], np.uint8)
    color, depth = assert_same_as_numpy(rasterize, xy, z, vis, col, (8, 8), 1)
    assert color[5, 5].tolist() == [10, 0, 0, 255]  # index 0 beats index 1 at equal depth
    assert color[2, 2].tolist() == [50, 0, 0, 255]  # nearer point wins despite higher index
    assert depth[5, 5] == np.float32(0.5) and depth[2, 2] == np.float32(0.2)
    assert (depth < 1).sum() == 2


def test_size_10_point_lights_10x10_pixels_top_left_origin(rasterize):
    xy = np.array([[32.0, 32.0], [0.5, 0.5]], np.float32)
    z = np.array([0.3, 0.4], np.float32)
    col = np.array([[255, 0, 0, 255], [0, 255, 0, 255]], np.uint8)
    sizes = np.array([10.0, 1.0], np.float32)
    color, depth = assert_same_as_numpy(rasterize, xy, z, np.ones(2, bool), col, (64, 64), sizes)
    red = np.all(color == [255, 0, 0, 255], axis=-1)
    assert red.sum() == 100
    assert red[27:37, 27:37].all()
    assert color[0, 0].tolist() == [0, 255, 0, 255]  # row 0 is the top row
    assert (depth < 1).sum() == 101


@pytest.mark.parametrize("size", [(1, 1), (1, 7), (3, 5), (101, 50)])
def test_tiny_and_odd_images_match_numpy(rasterize, size):
    rng = np.random.default_rng(size[0] * 100 + size[1])
    xy, z, vis, col = random_scene(rng, 300, *size, margin=4.0)
    for point_size in (1, 2, 6):
        assert_same_as_numpy(rasterize, xy, z, vis, col, size, point_size, (1.0, 1.0, 1.0, 0.5))


def test_points_outside_and_non_finite_cover_nothing(rasterize):
    xy = np.array([[-3.0, 4.0], [40.0, 4.0], [np.nan, 4.0], [4.0, np.inf], [-np.inf, 2.0],
                   [1e30, 1e30], [-0.6, 4.5], [-0.4, 4.5]], np.float32)
    z = np.full(8, 0.5, np.float32)
    col = np.full((8, 4), 200, np.uint8)
    color, depth = assert_same_as_numpy(rasterize, xy, z, np.ones(8, bool), col, (9, 9), 2)
    # A size-2 splat covers pixel centres in [x - 1, x + 1): at x = -0.6 that misses pixel 0
    # (centre 0.5); at x = -0.4 it reaches it, and rows 4 and 5 (y = 4.5).
    drawn = np.argwhere(depth < 1)
    assert drawn.tolist() == [[4, 0], [5, 0]]
    assert np.all(color[depth == 1] == [0, 0, 0, 255])


def test_splat_straddling_the_border_is_clipped(rasterize):
    xy = np.array([[0.0, 0.0], [9.0, 7.0]], np.float32)
    z = np.array([0.1, 0.2], np.float32)
    col = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.uint8)
    color, depth = assert_same_as_numpy(rasterize, xy, z, np.ones(2, bool), col, (9, 7), 4)
    assert (depth == np.float32(0.1)).sum() == 4  # 2x2 quarter of a 4x4 splat at the corner
    assert (depth == np.float32(0.2)).sum() == 4
    assert np.all(color[0:2, 0:2] == [1, 2, 3, 4]) and np.all(color[5:7, 7:9] == [5, 6, 7, 8])


def test_no_visible_points_gives_background(rasterize):
    xy = np.zeros((3, 2), np.float32)
    color, depth = assert_same_as_numpy(rasterize, xy, np.zeros(3, np.float32), np.zeros(3, bool),
                                        np.full((3, 4), 9, np.uint8), (5, 4), 3, (0.0, 1.0, 0.0))
    assert np.all(color == [0, 255, 0, 255]) and np.all(depth == 1.0)
    empty = assert_same_as_numpy(rasterize, np.zeros((0, 2), np.float32), np.zeros(0, np.float32),
                                 np.zeros(0, bool), np.zeros((0, 4), np.uint8), (6, 2))
    assert np.all(empty[1] == 1.0)


def test_splat_coverage_on_and_around_pixel_edges_matches_splat_origin(cuda_module):
    """The CUDA kernel's per-axis coverage equals NumPy's floor rule at, just below and
    just above every quarter-pixel coordinate: one point per 10-row band, so no splat
    overlaps another, for every splat side 1..9."""
    base = np.arange(-12.0, 24.0, 0.25, dtype=np.float32)
    coords = np.concatenate([base, np.nextafter(base, np.float32(-np.inf)),
                             np.nextafter(base, np.float32(np.inf))]).astype(np.float32)
    extent, n = 13, coords.size
    size = (extent, 10 * n)
    xy = np.stack([coords, 10 * np.arange(n) + 5.0], axis=1).astype(np.float32)
    z = np.full(n, 0.5, np.float32)
    colors = np.full((n, 4), 255, np.uint8)
    rasterize = _emulated_rasterizer(cuda_module)
    for side in range(1, 10):
        color, _ = rasterize(xy, z, np.ones(n, bool), colors, size, float(side))
        covered = color[:, :, 0].reshape(n, 10, extent)[:, 5] == 255  # each band's own row
        origin = splat_origin(coords.astype(np.float64), side)
        cols = np.arange(extent)
        want = (cols >= origin[:, None]) & (cols < origin[:, None] + side)
        np.testing.assert_array_equal(covered, want)


@pytest.mark.gpu
class TestOnDevice:
    def test_buffers_reused_across_frames_and_sizes(self):
        import cupy

        from engine.render.backends.cupy_raster import CudaRasterizer

        r = CudaRasterizer()
        rng = np.random.default_rng(3)
        xy, z, vis, col = random_scene(rng, 500, 80, 60)
        big = r.rasterize(xy, z, vis, col, (80, 60), 3)
        keys_ptr = r._keys.data.ptr
        ref = rasterize_points(xy, z, vis, col, (80, 60), 3)
        np.testing.assert_array_equal(cupy.asnumpy(big.color), ref.color)
        small = r.rasterize(xy, z, vis, col, (31, 17), 2, host=True)
        assert r._keys.data.ptr == keys_ptr  # a smaller frame reuses the same buffers
        ref = rasterize_points(xy, z, vis, col, (31, 17), 2)
        np.testing.assert_array_equal(small.color, ref.color)
        np.testing.assert_array_equal(small.depth, ref.depth)

    def test_large_n_last_point_drawn(self):
        """N = 128 * 65536 + 1 points: the grid-stride loop reaches the last one."""
        import cupy

        from engine.render.backends.cupy_raster import default_rasterizer

        n = 128 * 65536 + 1
        xy = cupy.full((n, 2), 0.5, cupy.float32)
        xy[-1] = cupy.asarray([3.5, 2.5], cupy.float32)
        z = cupy.full(n, 0.5, cupy.float32)
        z[-1] = 0.25
        col = cupy.zeros((n, 4), cupy.uint8)
        col[-1] = cupy.asarray([1, 2, 3, 4], cupy.uint8)
        f = default_rasterizer().rasterize(xy, z, cupy.ones(n, bool), col, (8, 4), 1, host=True)
        assert f.color[2, 3].tolist() == [1, 2, 3, 4] and f.depth[2, 3] == np.float32(0.25)
        assert f.depth[0, 0] == np.float32(0.5) and f.color[0, 0].tolist() == [0, 0, 0, 0]

    def test_bad_input_raises_naming_the_problem(self):
        from engine.render.backends.cupy_raster import rasterize_points_cuda

        with pytest.raises(ValueError, match="shape mismatch"):
            rasterize_points_cuda(np.zeros((4, 2)), np.zeros(3), np.ones(4, bool),
                                  np.zeros((4, 4), np.uint8), (8, 8))
        with pytest.raises(ValueError, match="image size"):
            rasterize_points_cuda(np.zeros((1, 2)), np.zeros(1), np.ones(1, bool),
                                  np.zeros((1, 4), np.uint8), (0, 8))
        with pytest.raises(ValueError, match="point_size"):
            rasterize_points_cuda(np.zeros((1, 2)), np.zeros(1), np.ones(1, bool),
                                  np.zeros((1, 4), np.uint8), (8, 8), np.array([np.nan]))

    def test_renderer_on_cupy_uses_cuda_rasterizer(self, monkeypatch):
        from engine.render.backends import cupy_raster
        from engine.render.renderer import Renderer
        from engine.scene import Node, PointCloud, Scene, procedural
        from engine.scene.framing import framed_camera

        # points only (the demo is drawn with triangles): the points raster's scene
        scene = Scene(background=(0.04, 0.05, 0.08))
        scene.add(Node("knot", geometry=PointCloud(*procedural.torus_knot(60000),
                                                   point_size=2)))
        camera = scene.add(framed_camera(scene, 16 / 9))
        r = Renderer(scene, camera, size=(160, 90), backend="cupy")
        calls = []
        real = cupy_raster.rasterize_points_cuda
        monkeypatch.setattr(cupy_raster, "rasterize_points_cuda",
                            lambda *a, **k: calls.append(1) or real(*a, **k))
        frame = r.render()
        assert calls == [1]
        p = r.project()
        ref = rasterize_points(p.screen_xy, p.depth, p.visible, r.batch.colors, r.size,
                               r.effective_point_size(), scene.background)
        np.testing.assert_array_equal(frame.color, ref.color)
        np.testing.assert_array_equal(frame.depth, ref.depth)


@pytest.mark.parametrize("point_size, side", [(0.3, 1), (1.5, 2), (2.5, 2), (3.5, 4), (3.49, 3),
                                              (np.float32(2.5), 2), (1e300, 255)])
def test_scalar_splat_size_rounds_half_to_even_within_bounds(point_size, side):
    sizes = splat_sizes(point_size, 7)
    assert sizes.dtype == np.uint8 and sizes.tolist() == [side]
    # the per-point path rounds the same way (np.rint)
    assert splat_sizes(np.full(7, point_size, np.float64), 7).tolist() == [side] * 7


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), np.full(3, np.nan)])
def test_splat_size_refuses_non_positive_or_non_finite(bad):
    with pytest.raises(ValueError, match="point_size must be positive and finite"):
        splat_sizes(bad, 3)
