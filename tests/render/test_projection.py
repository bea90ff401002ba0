"""The projection contract, one test body per behaviour, run on every backend."""

from __future__ import annotations

import numpy as np
import pytest

from engine.arrays import to_host
from engine.scene.camera import PerspectiveCamera
from engine.scene.transforms import perspective_matrix, translation_matrix


def reference_projection(pos, oid, model, vp, viewport):
    """Straightforward float64 implementation of the contract, for comparison."""
    w_, h_ = viewport
    p4 = np.concatenate([pos.astype(np.float64), np.ones((len(pos), 1))], axis=1)
    world = np.einsum("nij,nj->ni", model.astype(np.float64)[oid], p4)
    clip = world @ vp.astype(np.float64).T
    w = clip[:, 3]
    with np.errstate(invalid="ignore", divide="ignore"):
        vis = (w > 1e-7) & np.isfinite(w) & np.all(np.abs(clip[:, :3]) <= w[:, None], axis=1)
        ndc = clip[:, :3] / np.where(vis, w, 1.0)[:, None]
    xy = np.stack([(ndc[:, 0] * 0.5 + 0.5) * w_, (0.5 - ndc[:, 1] * 0.5) * h_], axis=1)
    depth = ndc[:, 2] * 0.5 + 0.5
    xy[~vis] = 0
    depth[~vis] = 1
    return xy, depth, vis


def camera_at_origin_vp(aspect=1.0):
    cam = PerspectiveCamera(fov_y=90.0, aspect=aspect, near=0.1, far=100.0)
    return cam.view_projection_matrix.astype(np.float32)


def project(projector, pos, oid=None, model=None, vp=None, viewport=(100, 100)):
    pos = np.asarray(pos, np.float32)
    oid = np.zeros(len(pos), np.uint32) if oid is None else oid
    model = np.eye(4, dtype=np.float32)[None] if model is None else model
    vp = camera_at_origin_vp() if vp is None else vp
    xp = projector.xp
    out = projector.project(xp.asarray(pos), xp.asarray(oid), xp.asarray(model), vp, viewport)
    return to_host(out.screen_xy).copy(), to_host(out.depth).copy(), to_host(out.visible).copy()


def assert_no_nonfinite(xy, depth):
    assert np.all(np.isfinite(xy)) and np.all(np.isfinite(depth))


def test_vertex_behind_camera_is_not_visible(projector):
    xy, depth, vis = project(projector, [[0, 0, 1]])
    assert not vis[0]
    assert_no_nonfinite(xy, depth)


def test_vertex_at_eye_is_not_visible(projector):
    xy, depth, vis = project(projector, [[0, 0, 0]])
    assert not vis[0]
    assert_no_nonfinite(xy, depth)



@pytest.mark.parametrize("extra", [0, 1])
def test_unit_points_visible_and_nan_culled(projector, extra):
    cam = PerspectiveCamera(fov_y=60.0, near=0.1, far=100.0, position=(0.5, 0.5, 5.0))
    cam.look_at((0.5, 0.5, 0.5))
    pts = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [np.nan, np.nan, np.nan]], np.float32)
    pts = np.concatenate([pts, np.full((extra, 3), np.inf, np.float32)])
    xy, depth, vis = project(projector, pts, vp=cam.view_projection_matrix.astype(np.float32))
    assert vis.tolist() == [True, True, True, False] + [False] * extra
    assert_no_nonfinite(xy, depth)
    visible = pts[vis]
    np.testing.assert_array_equal(visible.min(axis=0), [0, 0, 0])
    np.testing.assert_array_equal(visible.max(axis=0), [1, 1, 1])


def test_point_straight_ahead_lands_at_viewport_centre(projector):
    xy, depth, vis = project(projector, [[0, 0, -10]], viewport=(640, 480),
                             vp=camera_at_origin_vp(640 / 480))
    assert vis[0]
    np.testing.assert_allclose(xy[0], [320, 240], atol=1e-3)
    # depth of z=-10 with near 0.1, far 100: NDC z = (f+n)/(f-n) - 2fn/((f-n)*10)
    ndc_z = (100.1 / 99.9) - 2 * 100 * 0.1 / (99.9 * 10)
    assert depth[0] == pytest.approx(ndc_z * 0.5 + 0.5, rel=1e-6)


def test_screen_origin_is_top_left_y_down(projector):
    # fov_y 90 at aspect 2: x_ndc = x / (2 |z|), y_ndc = y / |z|.
    xy, _, vis = project(projector, [[-0.999, 0.999, -1.0], [0.5, -0.5, -1.0]], viewport=(200, 100),
                         vp=camera_at_origin_vp(2.0))
    assert vis.all()
    np.testing.assert_allclose(xy[0], [(-0.4995 * 0.5 + 0.5) * 200, (0.5 - 0.999 * 0.5) * 100],
                               rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(xy[1], [(0.25 * 0.5 + 0.5) * 200, (0.5 + 0.5 * 0.5) * 100], rtol=1e-5)


def test_outside_clip_volume_is_not_visible(projector):
    pts = [[0, 0, -200], [0, 0, -0.05], [5, 0, -1], [0, -5, -1]]  # beyond far, before near, sides
    xy, depth, vis = project(projector, pts)
    assert not vis.any()
    assert (depth == 1).all() and (xy == 0).all()


def test_matches_float64_reference_on_random_scene(projector):
    rng = np.random.default_rng(7)
    n, k = 5000, 7
    pos = rng.uniform(-5, 5, (n, 3)).astype(np.float32)
    oid = np.sort(rng.integers(0, k, n)).astype(np.uint32)
    model = np.stack([translation_matrix(rng.uniform(-2, 2, 3)) for _ in range(k)]).astype(np.float32)
    cam = PerspectiveCamera(fov_y=70, aspect=1.5, near=0.5, far=50, position=(1, 2, 15))
    cam.look_at((0, 0, 0))
    vp = cam.view_projection_matrix.astype(np.float32)
    xy, depth, vis = project(projector, pos, oid, model, vp, (300, 200))
    rxy, rdepth, rvis = reference_projection(pos, oid, model, vp, (300, 200))
    both = vis & rvis
    assert (vis != rvis).sum() <= 2  # float32 vs float64 on the clip boundary at most
    assert both.sum() > 1000
    np.testing.assert_allclose(xy[both], rxy[both], rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(depth[both], rdepth[both], rtol=1e-5, atol=1e-6)


def test_all_backends_agree(projector):
    """Same input through this backend and the NumPy backend: equal within rtol 1e-5."""
    from engine.render.backends import get_projector

    rng = np.random.default_rng(3)
    pos = rng.normal(0, 3, (20000, 3)).astype(np.float32)
    oid = np.repeat(np.arange(4, dtype=np.uint32), 5000)
    model = np.stack([translation_matrix((i, 0, 0)) for i in range(4)]).astype(np.float32)
    cam = PerspectiveCamera(fov_y=60, near=0.1, far=100, position=(0, 0, 12))
    vp = cam.view_projection_matrix.astype(np.float32)
    a = project(projector, pos, oid, model, vp, (512, 512))
    b = project(get_projector("numpy"), pos, oid, model, vp, (512, 512))
    np.testing.assert_array_equal(a[2], b[2])
    np.testing.assert_allclose(a[0], b[0], rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(a[1], b[1], rtol=1e-5)


def test_strided_positions_slice(projector):
    """verts[:, :3] of an (N, 4) array is not contiguous; the result must still be right."""
    rng = np.random.default_rng(1)
    verts4 = rng.uniform(-1, 1, (1000, 4)).astype(np.float32)
    verts4[:, 2] -= 3
    verts4[:, 3] = 1e9  # garbage in the 4th column must not leak in
    xp = projector.xp
    dev = xp.asarray(verts4)
    sl = dev[:, :3]
    assert not sl.flags.c_contiguous
    vp = camera_at_origin_vp()
    out = projector.project(sl, xp.zeros(1000, xp.uint32), xp.asarray(np.eye(4, dtype=np.float32)[None]),
                            vp, (64, 64))
    rxy, _, rvis = reference_projection(verts4[:, :3], np.zeros(1000, np.int64),
                                        np.eye(4)[None], vp, (64, 64))
    np.testing.assert_array_equal(to_host(out.visible), rvis)
    np.testing.assert_allclose(to_host(out.screen_xy), rxy, rtol=1e-5, atol=1e-4)


def test_large_n_last_vertex_transformed(projector):
    """N = 128 * 65536 + 1: one more vertex than 128 full grids of 65536 blocks' worth."""
    n = 128 * 65536 + 1
    pos = np.zeros((n, 3), np.float32)
    pos[:, 2] = -5.0
    pos[-1] = (1.0, 2.0, -4.0)
    pos[-2] = (-1.0, -2.0, -3.0)
    xy, _, vis = project(projector, pos, viewport=(1000, 1000))
    assert vis[-1] and vis[-2]
    f = 1.0  # 90 degree fov
    np.testing.assert_allclose(xy[-1], [(1 / 4 * f * 0.5 + 0.5) * 1000, (0.5 - 2 / 4 * 0.5) * 1000],
                               rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(xy[-2], [(-1 / 3 * 0.5 + 0.5) * 1000, (0.5 + 2 / 3 * 0.5) * 1000],
                               rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(xy[0], [500, 500], rtol=1e-6)


def test_object_id_out_of_range_is_not_visible(projector):
    """Contract: a vertex whose object id is >= K is culled on every backend."""
    pos = np.array([[0, 0, -2], [0, 0, -2]], np.float32)
    oid = np.array([3, 0], np.uint32)
    xy, depth, vis = project(projector, pos, oid)
    assert vis.tolist() == [False, True]
    assert xy[0].tolist() == [0, 0] and depth[0] == 1


def test_runs_must_tile_the_vertices():
    from engine.render.backends import get_projector

    pos = np.zeros((10, 3), np.float32)
    oid = np.zeros(10, np.uint32)
    eye = np.eye(4, dtype=np.float32)[None]
    for name in ("numpy", "numba"):
        with pytest.raises(ValueError, match="tiling"):
            get_projector(name).project(pos, oid, eye, eye[0], (8, 8), runs=[[0, 4, 0], [5, 10, 0]])


def test_bad_shapes_raise_naming_argument(projector):
    with pytest.raises(ValueError, match="positions"):
        project(projector, np.zeros((4, 2), np.float32))
    with pytest.raises(ValueError, match="viewport"):
        project(projector, np.zeros((4, 3), np.float32), viewport=(0, 10))


def test_cuda_kernel_on_the_cpu_matches_numpy_backend(tmp_path_factory):
    """shaders/transform.cu, compiled by the host compiler and launched on the CPU
    (tests/cuda_emulation.py), gives the NumPy backend's results."""
    from cuda_emulation import EmulatedModule, build

    from engine.render.backends import get_projector
    from engine.render.backends.cupy_backend import mat4_arg

    module = EmulatedModule(build(tmp_path_factory.mktemp("transform_emu")))
    rng = np.random.default_rng(11)
    n, k = 4000, 3
    pos = rng.uniform(-4, 4, (n, 3)).astype(np.float32)
    pos[:5] = [[0, 0, 0], [0, 0, 1], [np.nan, 0, -1], [np.inf, 0, -1], [0, 0, -1e30]]
    oid = np.repeat(np.arange(k, dtype=np.uint32), [1000, 1000, 2000])
    model = np.stack([translation_matrix((0, 0, -i)) for i in range(k)]).astype(np.float32)
    vp = perspective_matrix(75, 4 / 3, 0.1, 60).astype(np.float32)
    xy = np.empty((n, 2), np.float32)
    depth = np.empty(n, np.float32)
    vis = np.empty(n, np.uint8)
    module.get_function("transform.cu", "project_points")((7,), (64,), (
        pos, oid, model, mat4_arg(vp), np.uint32(k), np.float32(400), np.float32(300), np.int64(n),
        xy, depth, vis))
    ref = get_projector("numpy").project(pos, oid, model, vp, (400, 300))
    np.testing.assert_array_equal(vis.astype(bool), ref.visible)
    assert vis[:5].tolist() == [0, 0, 0, 0, 0]
    assert 1000 < vis.sum() < n
    np.testing.assert_allclose(xy, ref.screen_xy, rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(depth, ref.depth, rtol=1e-5)
    assert np.all(np.isfinite(xy)) and np.all(np.isfinite(depth))
