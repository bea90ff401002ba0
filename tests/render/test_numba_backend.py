"""The Numba projector's run walking: many objects across parallel chunk boundaries,
object ids beyond K, and runs that do not tile the vertices."""

from __future__ import annotations

import numpy as np
import pytest

from engine.render.backends.numba_backend import NumbaProjector
from engine.render.backends.numba_kernels import CHUNK
from engine.render.backends.numpy_backend import NumpyProjector, object_runs
from engine.scene.camera import PerspectiveCamera


def _scene(n, k, seed=0):
    rng = np.random.default_rng(seed)
    pos = rng.uniform(-3, 3, (n, 3)).astype(np.float32)
    pos[::97] = np.nan
    # Uneven object sizes so run boundaries fall inside and at the edges of chunks.
    cuts = np.sort(rng.choice(np.arange(1, n), k - 1, replace=False))
    oid = np.zeros(n, np.uint32)
    for c in cuts:
        oid[c:] += 1
    model = np.repeat(np.eye(4, dtype=np.float32)[None], k, axis=0)
    model[:, :3, 3] = rng.uniform(-1, 1, (k, 3))
    cam = PerspectiveCamera(fov_y=60, near=0.1, far=50, position=(0.5, 1.0, 6.0))
    cam.look_at((0, 0, 0))
    return pos, oid, model, cam.view_projection_matrix.astype(np.float32)


@pytest.mark.parametrize("threads", [True, False], ids=["parallel", "serial"])
@pytest.mark.parametrize("n,k", [(1000, 7), (2 * CHUNK + 1, 1), (5 * CHUNK + 123, 40)])
def test_matches_numpy_backend_serial_and_parallel(n, k, threads, monkeypatch):
    # Large batches take the multi-threaded kernel when Numba has threads; force both.
    monkeypatch.setattr("engine.render.backends.numba_backend.use_threads",
                        lambda n=None: threads)
    pos, oid, model, vp = _scene(n, k)
    ref = NumpyProjector().project(pos, oid, model, vp, (640, 480))
    nb = NumbaProjector()
    for runs in (None, object_runs(oid)):
        out = nb.project(pos, oid, model, vp, (640, 480), runs=runs)
        np.testing.assert_array_equal(out.visible, ref.visible)
        assert 0.2 * n < int(out.visible.sum()) < n
        np.testing.assert_allclose(out.screen_xy, ref.screen_xy, rtol=1e-5, atol=1e-3)
        np.testing.assert_allclose(out.depth, ref.depth, rtol=1e-5, atol=1e-6)
        assert np.all(out.screen_xy[~out.visible] == 0) and np.all(out.depth[~out.visible] == 1)


def test_object_beyond_model_is_not_visible_in_a_parallel_batch(monkeypatch):
    monkeypatch.setattr("engine.render.backends.numba_backend.use_threads", lambda n=None: True)
    n = 3 * CHUNK
    pos, oid, model, vp = _scene(n, 3)
    oid[oid == 2] = 9  # K = 3 matrices, the last object points past them
    out = NumbaProjector().project(pos, oid, model, vp, (640, 480))
    assert not out.visible[oid == 9].any()
    assert out.visible[oid != 9].any()


def test_runs_that_do_not_tile_the_vertices_raise():
    pos, oid, model, vp = _scene(100, 2)
    nb = NumbaProjector()
    for bad in ([[0, 50, 0]], [[0, 40, 0], [50, 100, 1]], [[0, 100, -1]]):
        with pytest.raises(ValueError, match="runs"):
            nb.project(pos, oid, model, vp, (64, 64), runs=np.array(bad))
    with pytest.raises(ValueError, match="runs"):
        nb.project(pos, oid, model, vp, (64, 64), runs=np.zeros(3, np.int64))
