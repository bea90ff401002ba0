"""VertexBatch: pack once, repack only on structure changes, upload only what moved,
one projection launch per frame whatever the number of objects."""

import numpy as np
import pytest

from engine import Node, PerspectiveCamera, PointCloud, Renderer, Scene, VertexBatch
from engine.render.backends import get_projector


def make_scene(k=3, n=10):
    scene = Scene()
    rng = np.random.default_rng(0)
    for i in range(k):
        scene.add(Node(f"obj{i}", position=(i, 0, 0),
                       geometry=PointCloud(rng.uniform(-1, 1, (n, 3)).astype(np.float32))))
    return scene


def test_packs_contiguous_runs_per_object():
    scene = make_scene(3, 10)
    scene.children[1].geometry = PointCloud(np.zeros((4, 3), np.float32),
                                            colors=np.tile([255, 0, 0], (4, 1)).astype(np.uint8))
    b = VertexBatch(scene)
    assert b.sync() is True
    assert b.vertex_count == 24 and b.object_count == 3
    assert b.runs.tolist() == [[0, 10, 0], [10, 14, 1], [14, 24, 2]]
    assert b.object_id.dtype == np.uint32 and b.object_id.tolist() == [0] * 10 + [1] * 4 + [2] * 10
    assert b.colors[10].tolist() == [255, 0, 0, 255] and b.colors[0].tolist() == [255] * 4
    assert b.positions.dtype == np.float32 and b.positions.flags.c_contiguous


def test_repacks_only_on_structure_change():
    scene = make_scene()
    b = VertexBatch(scene)
    b.sync()
    assert b.repacks == 1
    scene.children[0].position = (3, 3, 3)
    assert b.sync() is False and b.repacks == 1
    scene.add(Node("new", geometry=PointCloud(np.zeros((2, 3)))))
    assert b.sync() is True and b.repacks == 2 and b.vertex_count == 32
    scene.children[0].visible = False
    b.sync()
    assert b.repacks == 3 and b.vertex_count == 22
    scene.children[1].geometry = PointCloud(np.zeros((1, 3)))
    b.sync()
    assert b.repacks == 4 and b.vertex_count == 13


def test_uploads_only_changed_model_matrices():
    scene = make_scene(5)
    b = VertexBatch(scene)
    b.sync()
    uploads = b.uploads
    before = b.model.copy()
    b.sync()
    assert b.uploads == uploads  # nothing moved: nothing uploaded
    scene.children[3].position = (0, 7, 0)
    b.sync()
    assert b.uploads == uploads + 1
    changed = np.flatnonzero(np.any(b.model != before, axis=(1, 2)))
    assert changed.tolist() == [3]
    assert b.model[3][1, 3] - before[3][1, 3] == pytest.approx(7)


def test_parent_move_updates_descendant_models():
    scene = Scene()
    parent = scene.add(Node("parent"))
    child = parent.add(Node("child", position=(1, 0, 0), geometry=PointCloud(np.zeros((1, 3)))))
    b = VertexBatch(scene)
    b.sync()
    x0 = b.model[0][0, 3]
    parent.position = (10, 0, 0)
    b.sync()
    assert b.model[0][0, 3] - x0 == pytest.approx(10)
    assert child.world_position[0] == 11


class CountingProjector:
    """Wraps a projector and counts launches."""

    def __init__(self, inner):
        self.inner, self.xp, self.name, self.calls = inner, inner.xp, inner.name, 0

    def project(self, *args, **kw):
        self.calls += 1
        return self.inner.project(*args, **kw)


def test_one_launch_per_frame_for_a_thousand_objects():
    scene = make_scene(1000, 5)
    cam = PerspectiveCamera(position=(500, 0, 800))
    cam.look_at((500, 0, 0))
    r = Renderer(scene, cam, (320, 240), backend="numpy")
    spy = CountingProjector(r.projector)
    r.projector = spy
    for frame in range(3):
        scene.children[frame].position = (frame, 5, 0)
        p = r.project()
    assert spy.calls == 3
    assert np.asarray(p.visible).sum() > 4000


def test_numba_and_numpy_agree_through_the_batch():
    scene = make_scene(50, 200)
    cam = PerspectiveCamera(position=(25, 5, 40))
    cam.look_at((25, 0, 0))
    frames = []
    for name in ("numpy", "numba"):
        r = Renderer(scene, cam, (200, 100), backend=name)
        frames.append(r.render())
    np.testing.assert_array_equal(frames[0].color, frames[1].color)


def test_env_var_selects_backend(monkeypatch):
    monkeypatch.setenv("ENGINE_BACKEND", "numpy")
    assert get_projector().name == "numpy"
    monkeypatch.setenv("ENGINE_BACKEND", "bogus")
    with pytest.raises(ValueError, match="unknown backend"):
        get_projector()


def test_asking_for_cupy_without_gpu_says_why():
    from engine.render.backends.cupy_backend import cupy_unavailable_reason

    reason = cupy_unavailable_reason()
    if reason is None:
        pytest.skip("a GPU is available here: cupy constructs")
    with pytest.raises(RuntimeError, match="cannot use the cupy backend"):
        get_projector("cupy")


def test_auto_falls_back_to_a_cpu_backend_without_gpu():
    from engine.render.backends.cupy_backend import cupy_unavailable_reason

    name = get_projector("auto").name
    assert name == ("cupy" if cupy_unavailable_reason() is None else "numba")


def test_moving_a_leaf_camera_does_not_recheck_every_object():
    from engine.scene.graph import transform_epoch

    scene = make_scene(3)
    cam = scene.add(PerspectiveCamera(position=(0, 0, 10)))
    epoch = transform_epoch()
    cam.position = (1, 2, 10)
    assert transform_epoch() == epoch  # nothing the batch draws moved
    np.testing.assert_allclose(cam.world_position, [1, 2, 10])
    child = cam.add(Node("gun", geometry=PointCloud(np.zeros((1, 3)))))
    epoch = transform_epoch()
    cam.position = (3, 2, 10)
    assert transform_epoch() != epoch  # now the camera carries geometry
    np.testing.assert_allclose(child.world_position, [3, 2, 10])
