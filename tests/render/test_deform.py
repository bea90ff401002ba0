"""Skinning and morph targets in the vertex stage (issue 20): the posed vertices of every
compute backend (NumPy, Numba, the CUDA kernel through the CPU emulation) against the
glTF formulas evaluated independently here, the host read
(``engine.scene.deform.posed_vertices``), bounds that follow the pose."""

from __future__ import annotations

import numpy as np
import pytest
import stand_in_device
from deform_scenes import (
    morph_quad,
    morph_weight,
    strip_expected,
    strip_mesh,
    strip_scene,
)

from engine import Mesh, Node, PerspectiveCamera, Renderer, Scene
from engine.scene.deform import Skin, posed_vertices
from engine.scene.graph import subtree_bounds

pytestmark = pytest.mark.timeout(300)
BACKENDS = ("numpy", "numba", "cuda")


def _posed(backend, scene, cam, node, monkeypatch, native_dir):
    """World positions and normals of ``node``'s vertices out of ``backend``'s vertex
    stage (the varyings of a rendered frame), and the frame."""
    count = None
    if backend == "cuda":
        count = stand_in_device.install(monkeypatch, native_dir)
        r = Renderer(scene, cam, (96, 72), backend="cupy")
    else:
        r = Renderer(scene, cam, (96, 72), backend=backend)
    frame = r.render()
    inputs = r.frame_inputs()
    if count is not None:
        assert "surface_vertices" in count.kernels  # the CUDA kernel did the work
    start, stop = r.batch.ranges[node]
    vary = np.asarray(inputs.shader.varyings)[start:stop]
    return vary[:, 0:3] + r.batch.origin, vary[:, 3:6], frame


def _camera(scene, position=(1.0, 0.5, 6.0)):
    cam = scene.add(PerspectiveCamera(fov_y=60, aspect=4 / 3, near=0.1, far=50))
    cam.position = position
    return cam


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("t, angle", [(0.0, 0.0), (0.5, 45.0), (1.0, 90.0)])
def test_two_joint_strip_bends_by_the_spec_formula(backend, t, angle, monkeypatch,
                                                   native_dir):
    scene = Scene()
    node, clip = strip_scene(scene)
    cam = _camera(scene)
    clip.apply(t)
    pos, normals, _ = _posed(backend, scene, cam, node, monkeypatch, native_dir)
    want = strip_expected(angle)
    np.testing.assert_allclose(pos, want, atol=1e-5)
    if t == 1.0:  # the issue's values: the outer ring at (0.9, 1) and (1.1, 1)
        np.testing.assert_allclose(pos[-2:, :2], [[1.1, 1.0], [0.9, 1.0]], atol=1e-5)
    # a rotation about z keeps the +z normals
    np.testing.assert_allclose(normals, np.tile([0, 0, 1.0], (len(pos), 1)), atol=1e-6)
    host, _ = posed_vertices(node)
    np.testing.assert_allclose(host, want, atol=1e-9)


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_influence_sets_and_unnormalised_weights(backend, monkeypatch, native_dir):
    # the middle ring's two influences sit in JOINTS_0 and JOINTS_1 and every weight is
    # tripled: normalised, the pose is the one-set strip's
    scene = Scene()
    node, clip = strip_scene(scene, sets=2)
    assert node.geometry.joints.shape[1] == 8
    np.testing.assert_allclose(node.geometry.weights.sum(axis=1), 1.0)
    clip.apply(1.0)
    pos, _, _ = _posed(backend, scene, _camera(scene), node, monkeypatch, native_dir)
    np.testing.assert_allclose(pos, strip_expected(90.0), atol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_skinned_normals_turn_with_their_joint(backend, monkeypatch, native_dir):
    # normals along +x on the strip: joint 1's vertices turn them to +y at 90 degrees,
    # the middle ring to the normalised mean (1, 1, 0) / sqrt(2)
    scene = Scene()
    node, clip = strip_scene(scene)
    g = node.geometry
    node.geometry = Mesh(g.positions, g.faces, normals=np.tile([1.0, 0, 0], (len(g.positions), 1)),
                         joints=g.joints, weights=g.weights)
    clip.apply(1.0)
    _, normals, _ = _posed(backend, scene, _camera(scene), node, monkeypatch, native_dir)
    x = g.positions[:, 0]
    np.testing.assert_allclose(normals[x < 1], np.tile([1, 0, 0], ((x < 1).sum(), 1)),
                               atol=1e-6)
    np.testing.assert_allclose(normals[x > 1], np.tile([0, 1, 0], ((x > 1).sum(), 1)),
                               atol=1e-6)
    np.testing.assert_allclose(normals[x == 1], np.tile([1, 1, 0] / np.sqrt(2), (2, 1)),
                               atol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("interpolation", ["linear", "step", "cubicspline"])
def test_morph_quad_top_edge_follows_the_animated_weight(backend, interpolation,
                                                         monkeypatch, native_dir):
    scene = Scene()
    node, clip = morph_quad(interpolation)
    scene.add(node)
    cam = _camera(scene, position=(0.5, 1.0, 5.0))
    assert clip.duration == 1.0
    for t in (0.25, 0.5, 0.9):
        clip.apply(t)
        pos, _, _ = _posed(backend, scene, cam, node, monkeypatch, native_dir)
        w = morph_weight(interpolation, t)
        np.testing.assert_allclose(pos[:, 1], [0, 0, 1 + w, 1 + w], atol=1e-6)
        np.testing.assert_allclose(posed_vertices(node)[0][:, 1], [0, 0, 1 + w, 1 + w],
                                   atol=1e-12)


def test_many_morph_targets_and_node_weights_override_the_mesh():
    rng = np.random.default_rng(4)
    pos = rng.uniform(-1, 1, (30, 3))
    deltas = rng.normal(size=(6, 30, 3))
    faces = np.arange(30).reshape(10, 3)
    mesh = Mesh(pos, faces, morph_positions=deltas, morph_weights=np.full(6, 0.1))
    scene = Scene()
    node = scene.add(Node("m", geometry=mesh, position=(1, 2, 3)))
    cam = _camera(scene, position=(0, 0, 8))
    w = rng.uniform(-1, 1, 6)
    for weights in (None, w):  # the mesh's defaults, then the node's
        node.morph_weights = weights
        use = np.full(6, 0.1) if weights is None else w
        want = pos + np.einsum("t,tnc->nc", use, deltas.astype(np.float32).astype(float)) \
            + [1, 2, 3]
        for backend in ("numpy", "numba"):
            r = Renderer(scene, cam, (64, 48), backend=backend)
            r.render()
            start, stop = r.batch.ranges[node]
            got = r.frame_inputs().shader.varyings[start:stop, :3] + r.batch.origin
            np.testing.assert_allclose(got, want, atol=1e-5)


def test_backends_give_the_same_bits_for_a_deformed_frame(monkeypatch, native_dir):
    scene = Scene()
    _, clip = strip_scene(scene)
    quad, lift = morph_quad("linear")
    scene.add(quad)
    quad.position = (-1.5, 0, 0)
    cam = _camera(scene)
    clip.apply(0.3)
    lift.apply(0.7)
    got = {}
    for backend in BACKENDS:
        if backend == "cuda":
            stand_in_device.install(monkeypatch, native_dir)
        r = Renderer(scene, cam, (96, 72), backend="cupy" if backend == "cuda" else backend)
        r.render()
        got[backend] = (np.asarray(r.frame_inputs().clip), r.visibility())
    for backend in ("numba", "cuda"):
        np.testing.assert_array_equal(got[backend][0], got["numpy"][0])
        np.testing.assert_array_equal(got[backend][1], got["numpy"][1])


def test_the_skinned_node_own_transform_is_ignored_and_bounds_follow_the_pose():
    scene = Scene()
    node, clip = strip_scene(scene, offset=(40.0, 0.0, 0.0))
    clip.apply(1.0)
    lo, hi = subtree_bounds(scene)
    want = strip_expected(90.0)
    np.testing.assert_allclose(lo, want.min(axis=0), atol=1e-9)
    np.testing.assert_allclose(hi, want.max(axis=0), atol=1e-9)
    # moving the skinned node moves nothing
    node.position = (0, 50, 0)
    np.testing.assert_allclose(posed_vertices(node)[0], want, atol=1e-9)
    local, _ = posed_vertices(node, frame="local")
    np.testing.assert_allclose(local @ node.world_matrix[:3, :3].T + node.world_matrix[:3, 3],
                               want, atol=1e-9)


def test_rendered_frames_follow_the_clip():
    scene = Scene()
    _, clip = strip_scene(scene)
    cam = _camera(scene)
    r = Renderer(scene, cam, (96, 72), backend="numba")
    frames = []
    for t in (0.0, 0.5, 1.0):
        clip.apply(t)
        frames.append(r.render().depth < 1)
    assert (frames[0] != frames[1]).sum() > 20 and (frames[1] != frames[2]).sum() > 20


def test_bad_skin_and_morph_input_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="at least one joint"):
        Skin([])
    with pytest.raises(ValueError, match="shape"):
        Skin([Node()], np.eye(4)[None].repeat(2, 0))
    pos = np.zeros((3, 3))
    with pytest.raises(ValueError, match="both or neither"):
        Mesh(pos, [[0, 1, 2]], joints=np.zeros((3, 4)))
    with pytest.raises(ValueError, match=">= 0"):
        Mesh(pos, [[0, 1, 2]], joints=np.zeros((3, 4)), weights=-np.ones((3, 4)))
    with pytest.raises(ValueError, match="morph_positions must have shape"):
        Mesh(pos, [[0, 1, 2]], morph_positions=np.zeros((3, 3)))
    node = Node("m", geometry=Mesh(pos, [[0, 1, 2]], morph_positions=np.zeros((2, 3, 3))))
    node.morph_weights = [1.0]
    with pytest.raises(ValueError, match="node 'm': morph_weights must be 2 finite numbers"):
        posed_vertices(node)
    scene = Scene()
    scene.add(node)
    with pytest.raises(ValueError, match="node 'm': morph_weights"):
        Renderer(scene, _camera(scene), (32, 24), backend="numpy").render()
    with pytest.raises(TypeError, match="skin must be"):
        node.skin = "bones"


def test_strip_mesh_helper_matches_the_issue_layout():
    g = strip_mesh()
    x = g.positions[:, 0]
    assert x.min() == 0 and x.max() == 2 and (x == 1).sum() == 2
    np.testing.assert_array_equal(g.weights[x == 1][:, :2], [[0.5, 0.5]] * 2)


def test_ray_casts_hit_the_posed_mesh():
    from engine.game.collision import bounding_sphere, ray_cast

    scene = Scene()
    node, clip = strip_scene(scene)
    clip.apply(1.0)  # joint 1's half stands up along +y at x in [0.9, 1.1]
    hit = ray_cast((1.05, 0.6, 5.0), (0, 0, -1), [node])
    assert hit is not None and hit.distance == pytest.approx(5.0)
    np.testing.assert_allclose(hit.point, [1.05, 0.6, 0.0], atol=1e-9)
    assert abs(hit.normal[2]) == pytest.approx(1.0)
    # where that half lay unbent there is nothing now
    assert ray_cast((1.8, 0.0, 5.0), (0, 0, -1), [node]) is None
    centre, radius = bounding_sphere(node)
    want = strip_expected(90.0)
    assert np.linalg.norm(want - centre, axis=1).max() == pytest.approx(radius)
    clip.apply(0.0)  # back to the rest pose: the same BVH, refit
    assert ray_cast((1.8, 0.0, 5.0), (0, 0, -1), [node]) is not None


@pytest.mark.parametrize("backend", ("numpy", "numba"))
def test_a_morph_that_moves_the_mesh_into_view_is_not_culled_by_its_rest_bounds(backend):
    # the rest quad lies at x in [-0.5, 0.5], outside a camera looking at x = 20; its one
    # target moves it by +20 in x: posed, it fills the middle of the view
    pos = np.array([[-0.5, -0.5, 0], [0.5, -0.5, 0], [0.5, 0.5, 0], [-0.5, 0.5, 0]],
                   np.float32)
    scene = Scene()
    scene.add(Node("quad", geometry=Mesh(
        pos, [[0, 1, 2], [0, 2, 3]], morph_positions=np.tile([20.0, 0, 0], (1, 4, 1)),
        morph_weights=[1.0])))
    cam = scene.add(PerspectiveCamera(fov_y=40, aspect=4 / 3, near=0.1, far=50))
    cam.position = (20, 0, 3)
    frame = Renderer(scene, cam, (96, 72), backend=backend).render()
    # the quad (1 wide at distance 3, fov_y 40: 0.92 of the view's height of 2.18) covers
    # about 33 x 33 pixels of the 96 x 72 frame around its centre
    assert (frame.depth < 1)[36, 48] and 900 < (frame.depth < 1).sum() < 1300


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_shadowed_skinned_caster_updates_its_joints_once_a_frame(backend, monkeypatch,
                                                                    native_dir):
    # the light's pass and the camera's pass of a frame pose the mesh from one update of
    # the joint matrices and morph weights (engine.render.deform.DeformTables.update)
    from engine.render.deform import DeformTables
    from engine.scene.light import DirectionalLight

    scene = Scene()
    _, clip = strip_scene(scene, offset=(0.0, 0.0, 0.0))
    quad, _ = morph_quad()
    scene.add(quad)
    sun = scene.add(DirectionalLight(shadows=True, shadow_map_size=256,
                                     position=(0.3, 0.4, 1.0)))
    sun.look_at((1.0, 0.5, 0.0))
    cam = _camera(scene)
    calls = {"update": 0, "joints": 0}
    update, joints = DeformTables.update, DeformTables._update_joints

    def counted_update(self, batch):
        calls["update"] += 1
        return update(self, batch)

    def counted_joints(self, world):
        calls["joints"] += 1
        return joints(self, world)

    monkeypatch.setattr(DeformTables, "update", counted_update)
    monkeypatch.setattr(DeformTables, "_update_joints", counted_joints)
    if backend == "cuda":
        stand_in_device.install(monkeypatch, native_dir)
    r = Renderer(scene, cam, (96, 72), backend="cupy" if backend == "cuda" else backend)
    for k, t in enumerate((0.0, 0.5, 1.0)):
        clip.apply(t)
        r.render()
        assert calls == {"update": k + 1, "joints": k + 1}, calls
    maps = r.frame_inputs().shader.shadows.maps
    assert len(maps) == 1 and (np.asarray(maps[0].depth) < 1).sum() > 50  # the casters drawn
