"""View-frustum culling of whole objects (engine.render.culling): the box test against
hand-placed boxes, and on the host backends the runs the vertex stage is given (a culled
object's vertices are not transformed) with frames identical to the scene without it."""

import numpy as np
import pytest

from engine import Instances, Mesh, Node, PerspectiveCamera, PointCloud, Renderer, Scene
from engine.render.culling import mark_culled, run_bounds, visible_runs
from engine.scene.procedural import icosphere

BACKENDS = ["numpy", "numba"]


def _view_projection():
    # 90 degree camera at the origin looking down -Z, near 1, far 10
    n, f = 1.0, 10.0
    return np.array([[1, 0, 0, 0], [0, 1, 0, 0],
                     [0, 0, -(f + n) / (f - n), -2 * f * n / (f - n)], [0, 0, -1, 0]], float)


def _box(centre, half):
    c = np.asarray(centre, float)
    return np.stack([c - half, c + half])


@pytest.mark.parametrize("centre, half, seen", [
    ((0, 0, -5), 0.5, True),      # straight ahead
    ((0, 0, 5), 0.5, False),      # behind the camera
    ((-8, 0, -5), 0.5, False),    # left of the 90 degree frustum (|x| > -z)
    ((-5.4, 0, -5), 0.5, True),   # straddles the left plane x = z
    ((0, 0, -12), 1.0, False),    # beyond the far plane
    ((0, 0, -0.5), 0.2, False),   # between the eye and the near plane
    ((0, 0, 0), 3.0, True),       # the camera inside the box
])
def test_box_against_the_frustum(centre, half, seen):
    bounds = _box(centre, half)[None]
    runs = np.array([[0, 8, 0]])
    assert visible_runs(bounds, runs, np.eye(4)[None], _view_projection())[0] == seen


def test_model_matrix_null_slot_and_bad_boxes():
    vp = _view_projection()
    bounds = np.stack([_box((0, 0, 0), 0.5)] * 4)
    models = np.stack([np.eye(4), np.eye(4), np.zeros((4, 4))])
    models[0, :3, 3] = (0, 0, -5)   # moved in front of the camera: seen
    models[1, :3, 3] = (0, 0, 5)    # moved behind it: culled
    runs = np.array([[0, 1, 0], [1, 2, 1], [2, 3, 2], [3, 4, 3]])  # slot 2: all-zero, 3: none
    np.testing.assert_array_equal(visible_runs(bounds, runs, models, vp),
                                  [True, False, False, False])
    nan_box = np.full((1, 2, 3), np.nan)
    assert visible_runs(nan_box, runs[:1], models, vp)[0]  # undecidable: drawn


def test_run_bounds_and_marking():
    pos = np.array([[0, 0, 0], [1, 2, 3], [-1, 5, 0], [4, 4, 4]], np.float32)
    runs = np.array([[0, 2, 0], [2, 2, 1], [2, 4, 2]])
    b = run_bounds(pos, runs)
    np.testing.assert_array_equal(b[0], [[0, 0, 0], [1, 2, 3]])
    np.testing.assert_array_equal(b[2], [[-1, 4, 0], [4, 5, 4]])
    assert np.all(b[1, 0] == np.inf) and np.all(b[1, 1] == -np.inf)  # empty run
    assert not visible_runs(b, runs, np.eye(4)[None].repeat(3, 0), _view_projection())[1]
    clip, vis = np.ones((4, 4)), np.ones(4, bool)
    mark_culled(clip, vis, runs[[0]])
    np.testing.assert_array_equal(clip[:2], 0)
    np.testing.assert_array_equal(clip[2:], 1)
    np.testing.assert_array_equal(vis, [False, False, True, True])


def _scene():
    scene = Scene(background=(0.1, 0.1, 0.1))
    v, f = icosphere(2)
    scene.add(Node("ahead", geometry=Mesh(v, f), position=(0, 0, -4)))
    scene.add(Node("behind", geometry=Mesh(v, f), position=(0, 0, 6)))
    scene.add(Node("left", geometry=Mesh(v, f), position=(-40, 0, -4)))
    cam = scene.add(PerspectiveCamera(fov_y=60, aspect=1.0))
    return scene, cam


def _spy(renderer, attr):
    seen = []
    target = renderer.backend
    inner = getattr(target, attr)

    def wrapped(*args, **kwargs):
        seen.append(np.array(args[5] if attr == "_surface_vertices" else kwargs["runs"]))
        return inner(*args, **kwargs)

    setattr(target, attr, wrapped)
    return seen


@pytest.mark.parametrize("backend", BACKENDS)
def test_objects_outside_the_frustum_get_no_vertex_work(backend):
    size = (48, 48)
    scene, cam = _scene()
    r = Renderer(scene, cam, size, backend=backend)
    runs_given = _spy(r, "_surface_vertices")
    frame = r.render()
    ranges = {n.name: r.batch.ranges[n] for n in scene.traverse() if n.geometry is not None}
    (runs,) = runs_given
    transformed = {(int(s), int(e)) for s, e, _ in runs}
    assert transformed == {tuple(ranges["ahead"])}  # the stage's input: one run only
    # the frame and its visibility keys are those of the same renderer drawing every run
    keys = r.visibility().copy()
    ref = Renderer(scene, cam, size, backend=backend)
    ref.backend.in_view = lambda batch, view: np.ones(len(batch.runs), bool)
    ref_frame = ref.render()
    np.testing.assert_array_equal(frame.color, ref_frame.color)
    np.testing.assert_array_equal(frame.depth, ref_frame.depth)
    np.testing.assert_array_equal(keys, ref.visibility())
    assert (frame.depth < 1).sum() > 100  # the sphere ahead is drawn
    # moving the camera round brings the one behind into view: its run is transformed
    cam.position = (0, 0, 12)
    cam.look_at((0, 0, 0))
    r.render()
    assert tuple(ranges["behind"]) in {(int(s), int(e)) for s, e, _ in runs_given[-1]}


@pytest.mark.parametrize("backend", BACKENDS)
def test_culled_points_and_instances(backend):
    size = (40, 40)
    scene = Scene()
    rng = np.random.default_rng(0)
    cloud = rng.uniform(-0.5, 0.5, (200, 3)).astype(np.float32)
    scene.add(Node("seen", geometry=PointCloud(cloud), position=(0, 0, -3)))
    scene.add(Node("hidden", geometry=PointCloud(cloud), position=(0, 0, 3)))
    cam = scene.add(PerspectiveCamera(fov_y=60, aspect=1.0))
    r = Renderer(scene, cam, size, backend=backend)
    seen_runs = []
    project = r.backend._project

    def spy(*args, **kwargs):
        seen_runs.append(np.array(kwargs["runs"]))
        return project(*args, **kwargs)

    r.backend._project = spy
    frame = r.render()
    (runs,) = seen_runs
    k_past = len(r.batch.model_host)
    hidden = r.batch.ranges[scene.find("hidden")]
    row = runs[runs[:, 0] == hidden[0]][0]
    assert row[2] == k_past  # culled: past the model array, not transformed
    drawn = (frame.depth < 1).sum()
    assert drawn > 50
    # instances: one run per instance; those behind the camera are culled
    scene = Scene()
    v, f = icosphere(1)
    poses = np.zeros((4, 3), np.float32)
    poses[:, 2] = [-3, 3, -5, 5]
    scene.add(Instances(Mesh(v, f), positions=poses, name="many"))
    cam = scene.add(PerspectiveCamera(fov_y=60, aspect=1.0))
    r = Renderer(scene, cam, size, backend=backend)
    given = _spy(r, "_surface_vertices")
    r.render()
    assert len(given[0]) == 2  # two of the four instances are in front


def test_boxes_are_computed_once_per_vertex_revision(monkeypatch):
    from engine.render import culling

    computed = []
    real = culling.run_bounds
    monkeypatch.setattr(culling, "run_bounds", lambda p, runs: computed.append(1) or real(p, runs))
    scene, cam = _scene()
    r = Renderer(scene, cam, (32, 32), backend="numba")
    for _ in range(3):
        r.render()
    assert len(computed) == 1
    scene.find("left").position = (0, 0, -8)  # a transform: same boxes, a new test result
    r.render()
    assert len(computed) == 1
    scene.add(Node("new", geometry=Mesh(*icosphere(1)), position=(0, 1, -5)))  # a repack
    r.render()
    assert len(computed) == 2
