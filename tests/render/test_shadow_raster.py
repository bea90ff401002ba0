"""The Numba shadow pass's depth-only raster (engine.render.backends.numba_shadow)
and its fused pass (``draw_casters``) against the reference: the NumPy key raster's keys
turned into depths (engine.render.shadows.depth_of_keys) must be the depth-only map bit
for bit, and the map's partial clear must leave every texel at 1.0."""

import numba
import numpy as np
import pytest

from engine.render.backends.numba_shadow import (
    SMALL_BOX,
    DepthMap,
    draw_casters,
    fold_keys,
    raster_depth,
)
from engine.render.backends.numba_triangles import setup_triangles_numba
from engine.render.backends.threads import set_threads, thread_count
from engine.render.frame import new_keys
from engine.render.shadows import depth_of_keys
from engine.render.triangles import SUBPIXEL, Workspace, raster_triangles, setup_triangles

SIZE = 96


def _triangles(seed, n=600):
    """Random clip-space triangles: small and map-sized ones, across the near and far
    planes and the guard band, some slivers and degenerate ones; half back-face
    culled. Orthographic (w = 1) and perspective (w varies) alike."""
    rng = np.random.default_rng(seed)
    clip = rng.normal(0, 0.6, (3 * n, 4))
    clip[:, 3] = rng.uniform(0.3, 2.0, 3 * n)
    clip[: n // 4, :2] *= 6.0  # large: many rows, long spans, some past the guard band
    clip[n // 4: n // 2, 3] = 1.0  # orthographic
    clip[-30:, 2] = rng.uniform(-3, 3, 30)  # across the near and far planes
    tris = rng.integers(0, 3 * n, (n, 3))
    tris[:10, 2] = tris[:10, 1]  # degenerate
    cull = rng.random(n) < 0.5
    return clip, tris, cull


def _reference(clip, tris, cull):
    keys = new_keys((SIZE, SIZE))
    raster_triangles(keys, setup_triangles(clip, tris, cull, (SIZE, SIZE)), (SIZE, SIZE), 0)
    return depth_of_keys(keys, SIZE)


def test_depth_raster_is_the_key_rasters_depth_bit_for_bit():
    target = DepthMap(SIZE)
    for seed in (0, 1, 2):  # one map reused: each frame cleared where the last drew
        clip, tris, cull = _triangles(seed)
        ref = _reference(clip, tris, cull)
        assert (ref < 1).mean() > 0.5 and len(np.unique(ref)) > 1000  # a real picture
        target.clear()
        raster_depth(target, setup_triangles_numba(clip, tris, cull, (SIZE, SIZE)))
        np.testing.assert_array_equal(target.depth.view(np.uint32), ref.view(np.uint32))


def test_shared_edges_and_a_full_map_quad():
    # a quad over the whole map (two triangles sharing a diagonal) and a fan of thin
    # triangles around one centre: every texel drawn once by the top-left rule, the
    # depth the plane's z = 0.25 x - 0.5 y (window (z + 1) / 2)
    k = 40
    ang = np.linspace(0, 2 * np.pi, k + 1)[:-1]
    fan = np.c_[0.3 + 0.5 * np.cos(ang), -0.2 + 0.5 * np.sin(ang)]
    xy = np.r_[[[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]], [[0.3, -0.2]], fan]
    clip = np.c_[xy, 0.25 * xy[:, 0] - 0.5 * xy[:, 1] - 0.05, np.ones(len(xy))]
    clip[4:, 2] -= 0.1  # the fan in front
    tris = np.r_[[[0, 1, 2], [0, 2, 3]], [[4, 5 + i, 5 + (i + 1) % k] for i in range(k)]]
    cull = np.zeros(len(tris), bool)
    target = DepthMap(SIZE)
    raster_depth(target, setup_triangles_numba(clip, tris, cull, (SIZE, SIZE)))
    ref = _reference(clip, tris, cull)
    np.testing.assert_array_equal(target.depth, ref)
    c = (np.arange(SIZE) + 0.5) / SIZE * 2 - 1
    x, y = np.meshgrid(c, -c)
    plane = (0.25 * x - 0.5 * y - 0.05) * 0.5 + 0.5
    in_fan = target.depth < plane - 0.02
    assert 0.1 < in_fan.mean() < 0.3  # pi 0.5^2 / 4 of the map, about 0.2
    np.testing.assert_allclose(target.depth[~in_fan], plane[~in_fan], atol=1e-6)


def test_clear_refills_only_what_was_drawn_and_fold_keys_takes_the_minimum():
    clip, tris, cull = _triangles(5)
    target = DepthMap(SIZE)
    raster_depth(target, setup_triangles_numba(clip, tris, cull, (SIZE, SIZE)))
    drawn = target.depth < 1
    lo, hi = target.row_lo, target.row_hi
    for py in range(SIZE):  # the spans hold every drawn texel
        cols = np.flatnonzero(drawn[py])
        if len(cols):
            assert lo[py] <= cols[0] and cols[-1] < hi[py]
    target.clear()
    np.testing.assert_array_equal(target.depth, np.ones((SIZE, SIZE), np.float32))
    assert (target.row_lo == SIZE).all() and (target.row_hi == 0).all()
    # the alpha-tested casters' keys folded in: the texelwise minimum of both maps
    clip2, tris2, cull2 = _triangles(6)
    raster_depth(target, setup_triangles_numba(clip, tris, cull, (SIZE, SIZE)))
    keys = new_keys((SIZE, SIZE))
    raster_triangles(keys, setup_triangles(clip2, tris2, cull2, (SIZE, SIZE)), (SIZE, SIZE), 0)
    fold_keys(target, keys)
    want = np.minimum(_reference(clip, tris, cull), depth_of_keys(keys, SIZE))
    np.testing.assert_array_equal(target.depth, want)
    target.clear()
    np.testing.assert_array_equal(target.depth, np.ones((SIZE, SIZE), np.float32))


def _fine_mesh(seed, n=40, ortho=True):
    """A jittered n x n grid of quads over most of the map, split into triangles a few
    texels wide (the small ones ``draw_casters`` draws itself), with a bumpy depth, and
    half of them turned over (culled where asked); some grid points on the clip planes'
    far side (for the setup's clipping) and one not finite."""
    rng = np.random.default_rng(seed)
    g = np.linspace(-0.9, 0.9, n)
    x, y = np.meshgrid(g, g)
    xy = np.c_[x.ravel(), y.ravel()] + rng.uniform(-0.01, 0.01, (n * n, 2))
    z = 0.3 * np.sin(5 * xy[:, 0]) * np.cos(3 * xy[:, 1]) + rng.uniform(-0.05, 0.05, n * n)
    w = np.ones(n * n) if ortho else rng.uniform(0.5, 2.0, n * n)
    clip = np.c_[xy * w[:, None], z * w, w]
    clip[:5, 2] = 3.0 * w[:5]  # past the far plane: the setup clips these
    clip[7, 0] = np.nan
    clip[9, 3] = np.inf  # a w of infinity: its triangles are not drawn
    tris = []
    for i in range(n - 1):
        for j in range(n - 1):
            a, b, c, d = i * n + j, i * n + j + 1, (i + 1) * n + j + 1, (i + 1) * n + j
            tris += [[a, b, c], [a, c, d]] if (i + j) % 3 else [[a, c, b], [a, d, c]]
    tris = np.array(tris, np.int64)
    cull = rng.random(len(tris)) < 0.7
    return clip, tris, cull


@pytest.mark.parametrize("threads", ["one", "all"])
def test_draw_casters_is_the_key_rasters_depth_bit_for_bit(threads):
    # the fused pass against the NumPy key raster: its own small triangles, the queued
    # large ones and the clipped ones, on one thread and on every thread of Numba's pool
    # (bands of rows; two on the 2-core CI machines)
    old = thread_count()
    set_threads(1 if threads == "one" else int(numba.config.NUMBA_NUM_THREADS))
    try:
        target, ws = DepthMap(SIZE), Workspace()
        cases = [_triangles(0), _triangles(1), _fine_mesh(2), _fine_mesh(3, ortho=False),
                 _fine_mesh(4, n=12)]
        for k, (clip, tris, cull) in enumerate(cases):
            ref = _reference(clip, tris, cull)
            if k % 2:  # cleared first, or in the pass itself
                target.clear()
            draw_casters(target, clip, tris, cull, ws, clear=k % 2 == 0)
            np.testing.assert_array_equal(target.depth.view(np.uint32), ref.view(np.uint32))
            drawn = target.depth < 1
            for py in range(SIZE):  # the spans hold every drawn texel
                cols = np.flatnonzero(drawn[py])
                if len(cols):
                    assert target.row_lo[py] <= cols[0] and cols[-1] < target.row_hi[py]
        # the fine meshes are mostly small triangles, the random ones mostly large
        s = setup_triangles(*_fine_mesh(2)[:2], np.zeros(len(_fine_mesh(2)[1]), bool),
                            (SIZE, SIZE))
        width = (s.x.max(axis=1) - s.x.min(axis=1)) / SUBPIXEL
        assert (width < SMALL_BOX - 1).mean() > 0.9
        target.clear()
        np.testing.assert_array_equal(target.depth, np.ones((SIZE, SIZE), np.float32))
        # no casters: a map drawn before is cleared by the pass alone
        clip, tris, cull = _fine_mesh(5)
        draw_casters(target, clip, tris, cull, ws, clear=True)
        assert (target.depth < 1).any()
        draw_casters(target, clip, tris[:0], cull[:0], ws, clear=True)
        np.testing.assert_array_equal(target.depth, np.ones((SIZE, SIZE), np.float32))
    finally:
        set_threads(old)
