"""Instances and the vectorised transform update: the same pixels as separate nodes,
moves found by comparing arrays, inactive instances culled, growth without repacks,
colour tints, and the Numba and NumPy transform paths agreeing."""

import numpy as np
import pytest
from conftest import backend_params

from engine import Instances, Material, Mesh, Node, PerspectiveCamera, PointCloud, Renderer, Scene
from engine.render.batch import VertexBatch
from engine.render.batch.rebase import model_matrices
from engine.scene.procedural import icosphere
from engine.scene.transforms import translation_matrix


def rock(color=None):
    p, f = icosphere(0, 0.4)
    return Mesh(p, f, colors=color, material=Material(shading="flat"))


def layout(k=12, seed=0):
    rng = np.random.default_rng(seed)
    pos = np.stack([np.linspace(-4, 4, k), rng.uniform(-1.5, 1.5, k), rng.uniform(-1, 1, k)], 1)
    rot = rng.normal(size=(k, 4))
    scl = rng.uniform(0.6, 1.3, (k, 3))
    col = rng.uniform(0.2, 1.0, (k, 4)).astype(np.float32)
    col[:, 3] = 1
    return pos, rot, scl, col


def camera():
    cam = PerspectiveCamera(fov_y=50, position=(0, 0, 9), near=0.5, far=40)
    return cam


def nodes_scene(geo, pos, rot, scl, col, parent_pos=(0, 0, 0)):
    scene = Scene(background=(0.1, 0.1, 0.1))
    group = scene.add(Node("group", position=parent_pos))
    for i in range(len(pos)):
        n = Node(f"n{i}", position=pos[i], rotation=rot[i], scale=scl[i], geometry=geo)
        n.color = tuple(col[i].tolist())
        group.add(n)
    return scene


def instanced_scene(geo, pos, rot, scl, col, parent_pos=(0, 0, 0)):
    scene = Scene(background=(0.1, 0.1, 0.1))
    group = scene.add(Node("group", position=parent_pos))
    inst = group.add(Instances(geo, positions=pos, rotations=rot, scales=scl, colors=col))
    return scene, inst


@pytest.mark.parametrize("backend", backend_params())
@pytest.mark.parametrize("kind", ["mesh", "points"])
def test_instances_draw_exactly_what_separate_nodes_draw(backend, kind):
    pos, rot, scl, col = layout()
    geo = rock() if kind == "mesh" else PointCloud(icosphere(1, 0.4)[0], colors="white",
                                                   point_size=3)
    a = Renderer(nodes_scene(geo, pos, rot, scl, col, (0.5, 0, 0)), camera(), (160, 90),
                 backend=backend).render()
    scene, _ = instanced_scene(geo, pos, rot, scl, col, (0.5, 0, 0))
    r = Renderer(scene, camera(), (160, 90), backend=backend)
    b = r.render()
    # Model matrices agree to rounding (a quaternion normalised by math.sqrt here, by
    # np.linalg.norm there): depths within a float32 ulp, every pixel the same colour.
    np.testing.assert_array_equal(a.color, b.color)
    np.testing.assert_allclose(a.depth, b.depth, rtol=0, atol=2.5e-7)
    assert (a.color[..., :3] != 26).any(axis=2).sum() > 500  # something is drawn
    if kind == "mesh":
        assert len(r._prims.triangles) == 20 * len(pos)  # every instance's triangles


@pytest.mark.parametrize("transforms", ["numba", "numpy"])
def test_moves_are_found_by_comparing_the_arrays(transforms):
    pos, rot, scl, col = layout()
    scene, inst = instanced_scene(rock(), pos, rot, scl, col)
    b = VertexBatch(scene, transforms=transforms)
    b.sync()
    before = b.model.copy()
    uploads = b.uploads
    b.sync()
    assert b.uploads == uploads  # nothing changed, nothing uploaded
    inst.positions[3, 1] += 2.0  # plain NumPy edit, no setter
    inst.rotations[7] = (0, 0, 0, 5)  # not unit: normalised when drawn
    b.sync()
    changed = np.flatnonzero(np.any(b.model != before, axis=(1, 2)))
    assert changed.tolist() == [3, 7]
    assert b.model[3][1, 3] - before[3][1, 3] == pytest.approx(2.0)
    np.testing.assert_allclose(b.model[7][:3, :3] / scl[7], np.eye(3), atol=1e-6)


@pytest.mark.parametrize("transforms", ["numba", "numpy"])
def test_model_matrices_are_the_scene_graphs_world_matrices_on_a_hierarchy(transforms):
    """The batch composes world matrices with the scene graph's own expression
    (engine.scene.world.compose_world; the Numba twin writes the same one), so its model
    matrices are the scene graph's world matrices rebased, to the bit, on both paths
    while subtrees move; and T(-origin) @ world @ T(geometry origin) to float32 rounding
    (a float64 product computed here)."""
    rng = np.random.default_rng(5)
    scene = Scene()
    nodes = []
    for i in range(30):
        parent = scene if i < 5 else nodes[rng.integers(0, len(nodes))]
        nodes.append(parent.add(Node(f"n{i}", position=rng.normal(size=3),
                                     rotation=rng.normal(size=4), scale=rng.uniform(0.5, 2, 3),
                                     geometry=PointCloud(rng.normal(size=(3, 3))))))
    pos, rot, scl, _ = layout(9)
    inst = nodes[7].add(Instances(rock(), positions=pos, rotations=rot, scales=scl))
    # georeferenced geometry: its float64 origin must survive the composition
    geo = scene.add(Node("geo", geometry=PointCloud(np.array([[596650.25, 4137000.5, 120.0],
                                                              [596650.26, 4137000.5, 120.0]]))))
    nodes.append(geo)
    b = VertexBatch(scene, transforms=transforms)
    for step in range(3):
        b.sync()
        for n in nodes:
            k = b.slots_of(n)[0]
            go = np.asarray(n.geometry.origin, np.float64)[None]
            exact = model_matrices(n.world_matrix[None], go, b.origin)[0]
            np.testing.assert_array_equal(b.model[k], exact.astype(np.float32))
            want = translation_matrix(-b.origin) @ n.world_matrix @ translation_matrix(
                n.geometry.origin)
            np.testing.assert_allclose(b.model[k], want, rtol=1e-6, atol=1e-5)
        go = np.tile(inst.geometry.origin, (len(pos), 1))
        exact = model_matrices(inst.world_matrices(), go, b.origin).astype(np.float32)
        np.testing.assert_array_equal(b.model[b.slots_of(inst)], exact)
        nodes[step * 3].position = rng.normal(size=3)  # moves a subtree
        nodes[12].rotation = rng.normal(size=4)


@pytest.mark.parametrize("transforms", ["numba", "numpy"])
def test_inactive_instances_get_the_zero_matrix_and_are_not_drawn(transforms):
    pos, rot, scl, col = layout()
    scene, inst = instanced_scene(rock(), pos, rot, scl, col)
    r = Renderer(scene, camera(), (160, 90), backend="numpy")
    r.batch = VertexBatch(scene, transforms=transforms)
    full = r.render()
    inst.active[::2] = False
    part = r.render()
    slots = r.batch.slots_of(inst)
    assert not np.any(r.batch.model[slots[::2]])
    keep = [i for i in range(len(pos)) if i % 2]
    ref = Renderer(nodes_scene(rock(), pos[keep], rot[keep], scl[keep], col[keep]), camera(),
                   (160, 90), backend="numpy").render()
    np.testing.assert_array_equal(part.color, ref.color)
    assert r.batch.repacks == 1 and not np.array_equal(full.color, part.color)
    inst.active[:] = True
    np.testing.assert_array_equal(r.render().color, full.color)


def test_spawn_past_capacity_relays_out_without_a_repack():
    pos, rot, scl, col = layout(4)
    scene, inst = instanced_scene(rock(), pos, rot, scl, col)
    r = Renderer(scene, camera(), (160, 90), backend="numba")
    r.render()
    b = r.batch
    i = inst.spawn((0, 2, 0), (0, 45, 0), 0.5, "orange")
    assert i == 4 and inst.capacity == 16 and inst.count == 5
    frame = r.render()
    assert b.repacks == 1 and b.copies(inst) == 16
    assert len(r._prims.triangles) == 16 * 20
    ref = Renderer(scene, camera(), (160, 90), backend="numba").render()
    np.testing.assert_array_equal(frame.color, ref.color)
    inst.despawn([0, 1])
    assert inst.count == 3 and inst.spawn((1, 1, 1)) == 0


def test_empty_instances_start_drawing_when_the_first_is_spawned():
    scene = Scene()
    inst = scene.add(Instances(rock()))
    r = Renderer(scene, camera(), (64, 48), backend="numpy")
    assert r.render().color[..., :3].max() == 0
    inst.spawn((0, 0, 0), scale=3)
    assert r.render().color[..., :3].max() > 0


@pytest.mark.parametrize("transforms", ["numba", "numpy"])
def test_bad_instance_values_fail_loudly_naming_the_instance(transforms):
    pos, rot, scl, col = layout(5)
    scene, inst = instanced_scene(rock(), pos, rot, scl, col)
    inst.name = "rocks"
    b = VertexBatch(scene, transforms=transforms)
    b.sync()
    inst.positions[2, 0] = np.nan
    with pytest.raises(ValueError, match="rocks: instance 2: position must be finite"):
        b.sync()
    inst.positions[2, 0] = 0
    inst.rotations[4] = 0
    with pytest.raises(ValueError, match="rocks: instance 4: rotation must be a finite"):
        b.sync()
    with pytest.raises(ValueError, match="rocks: instance 4: rotation must be a finite"):
        b.sync()  # a value that failed its check is checked again, not taken as drawn


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_colour_changes_rewrite_only_colours(backend):
    pos, rot, scl, col = layout(6)
    scene, inst = instanced_scene(rock(), pos, rot, scl, col)
    r = Renderer(scene, camera(), (160, 90), backend=backend)
    r.render()
    prims, layout_rev = r._prims, r.batch.layout_revision
    inst.colors[2] = (1, 0, 0, 1)
    col[2] = (1, 0, 0, 1)
    inst.color = "#80ff80"  # the node tint multiplies the instance colours
    frame = r.render()
    assert r._prims is prims and r.batch.layout_revision == layout_rev
    ref_scene = nodes_scene(rock(), pos, rot, scl, col * np.array([128 / 255, 1, 128 / 255, 1]))
    ref = Renderer(ref_scene, camera(), (160, 90), backend=backend).render()
    assert np.abs(frame.color.astype(int) - ref.color).max() <= 1
    node = scene.add(Node("plain", position=(0, -2.5, 0), geometry=rock()))
    r.render()
    node.color = (0.2, 0.4, 1.0)
    s, _ = r.batch.ranges[node]
    r.render()
    assert r.batch.colors[s].tolist() == [51, 102, 255, 255] and r.batch.repacks == 2


def test_instances_spawn_and_despawn_through_the_batch():
    pos, rot, scl, _ = layout(5)
    scene = Scene()
    scene.add(Node("static", geometry=PointCloud(np.zeros((10, 3)))))
    r = Renderer(scene, camera(), (80, 60), backend="numpy")
    r.render()
    inst = r.batch.spawn(Instances(rock(), positions=pos, rotations=rot, scales=scl))
    r.render()
    assert r.batch.repacks == 1 and r.batch.object_count == 6
    assert r.batch.runs.shape == (6, 3)
    r.batch.despawn(inst)
    r.render()
    assert r.batch.object_count == 1 and inst.parent is None


@pytest.mark.parametrize("transforms", ["numba", "numpy"])
def test_georeferenced_geometry_keeps_centimetres(transforms):
    """Model matrices are composed in float64 before the cast: two points 1 cm apart at
    x = 596,650 stay 1 cm apart and centred (a float32 partial sum lost 5 mm)."""
    scene = Scene()
    pts = np.array([[596650.25, 4137000.5, 120.0], [596650.26, 4137000.5, 120.0]])
    scene.add(Node("geo", geometry=PointCloud(pts)))
    b = VertexBatch(scene, transforms=transforms)
    b.sync()
    world = b.positions.astype(np.float64) @ b.model[0][:3, :3].T + b.model[0][:3, 3]
    np.testing.assert_allclose(world + b.origin, pts, rtol=0, atol=1e-6)
