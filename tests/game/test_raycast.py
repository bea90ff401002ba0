"""Exact ray casts against mesh triangles: height fields, a rotated and scaled box,
instance k of 1,000, BVH refit/rebuild on a geometry revision, and the BVH against a
brute-force NumPy Moeller-Trumbore over every triangle."""


import sys
from pathlib import Path

import numpy as np
import pytest

from engine import Instances
from engine.game.bvh import BVH, mesh_bvh
from engine.game.collision import height_at, ray_cast
from engine.scene import Mesh, Node, PointCloud
from engine.scene.procedural import box, heightfield, uv_sphere
from engine.scene.transforms import quat_from_euler, quat_to_matrix

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import raycast as raycast_bench


def terrain(rows=21, cols=31, size=(30.0, 20.0), seed=0):
    rng = np.random.default_rng(seed)
    h = rng.uniform(-1.0, 3.0, (rows, cols))
    return h, Node("ground", geometry=heightfield(h, size=size))


def test_a_ray_straight_down_at_a_grid_vertex_hits_its_height():
    h, ground = terrain()
    rows, cols = h.shape
    for i, j in [(0, 0), (3, 7), (10, 15), (20, 30), (13, 2)]:
        x = -15 + j * 30 / (cols - 1)
        z = -10 + i * 20 / (rows - 1)
        hit = ray_cast((x, 50.0, z), (0, -1, 0), [ground])
        assert hit.node is ground
        assert hit.point[1] == pytest.approx(h[i, j], abs=1e-5)
        assert hit.distance == pytest.approx(50.0 - h[i, j], abs=1e-5)
        assert height_at(ground, x, z) == pytest.approx(h[i, j], abs=1e-5)


def test_height_at_is_exact_inside_a_cell_and_none_outside():
    h, ground = terrain(rows=3, cols=3, size=(2.0, 2.0))
    ground.position = (10.0, 1.0, -4.0)  # the world transform counts
    # cell (0, 0) spans (x, z) = (-1, -1) .. (0, 0) around the node, split by the diagonal
    # from grid point (i, j) = (0, 0) to (1, 1): fractions fx > fz lie in the triangle
    # (0,0), (0,1), (1,1), fx < fz in (0,0), (1,1), (1,0); interpolate on that plane.
    fx, fz = 0.7, 0.2
    expected = h[0, 0] + fx * (h[0, 1] - h[0, 0]) + fz * (h[1, 1] - h[0, 1])
    assert height_at(ground, 10 - 1 + fx, -4 - 1 + fz) == pytest.approx(expected + 1, abs=1e-5)
    fx, fz = 0.2, 0.7  # the other half: (0,0), (1,1), (1,0)
    expected = h[0, 0] + fz * (h[1, 0] - h[0, 0]) + fx * (h[1, 1] - h[1, 0])
    assert height_at(ground, 10 - 1 + fx, -4 - 1 + fz) == pytest.approx(expected + 1, abs=1e-5)
    assert height_at(ground, 12.5, -4.0) is None
    with pytest.raises(ValueError, match="x must be finite"):
        height_at(ground, float("nan"), 0)
    with pytest.raises(TypeError, match="Mesh"):
        height_at(Node("p", geometry=PointCloud([[0, 0, 0]])), 0, 0)


def rotated_box():
    node = Node("crate", position=(5.0, 1.0, -2.0), rotation=(20.0, 35.0, -10.0),
                scale=(1.0, 2.0, 3.0), geometry=box((2.0, 2.0, 2.0)))
    m = node.world_matrix
    return node, m[:3, :3] @ np.diag([1.0, 0.5, 1 / 3]), m  # R, M


def test_a_rotated_scaled_box_is_hit_at_the_analytic_point_and_normal():
    node, rot, m = rotated_box()
    # R: the rotation alone (columns of M divided by the scales); faces are at local +-1
    for local, normal in [((0.3, -0.4, 1.0), (0, 0, 1)), ((1.0, 0.5, 0.2), (1, 0, 0)),
                          ((-0.6, -1.0, 0.7), (0, -1, 0))]:
        target = m[:3, :3] @ np.array(local) + m[:3, 3]
        n_world = rot @ np.array(normal, float)
        approach = n_world + 0.3 * rot @ np.array([1.0, 1.0, 1.0]) * (1 - np.abs(normal))
        origin = target + 7.0 * approach / np.linalg.norm(approach)
        hit = ray_cast(origin, target - origin, [node])
        np.testing.assert_allclose(hit.point, target, atol=1e-6)
        np.testing.assert_allclose(hit.normal, n_world, atol=1e-6)
        assert hit.distance == pytest.approx(7.0, abs=1e-6)
        f = node.geometry.faces[hit.triangle]
        p = node.geometry.positions[f] + node.geometry.origin
        axis = int(np.flatnonzero(normal)[0])
        np.testing.assert_allclose(p[:, axis], np.sum(normal))  # a triangle of that face
    # a ray that passes the box by, or points away from it, misses
    assert ray_cast(m[:3, 3] + (0, 10, 0), (1, 0, 0), [node]) is None
    assert ray_cast(m[:3, 3] + 20 * rot[:, 0], rot[:, 0], [node]) is None
    # from inside, the ray hits the far face (back face) at its analytic distance
    hit = ray_cast(m[:3, 3], rot[:, 2], [node])
    assert hit.distance == pytest.approx(3.0, abs=1e-6)  # scale z 3 x half-size 1
    np.testing.assert_allclose(hit.normal, rot[:, 2], atol=1e-6)


def test_instance_k_of_a_thousand_is_hit_exactly():
    rng = np.random.default_rng(5)
    k = 1000
    g = np.stack(np.meshgrid(np.arange(40), np.arange(25), indexing="ij"), -1).reshape(-1, 2)
    pos = np.column_stack([g[:, 0] * 3.0, rng.uniform(-1, 1, k), g[:, 1] * 3.0])
    yaw = rng.uniform(0, 360, k)
    scale = rng.uniform(0.5, 1.2, k)
    crates = Instances(box((2, 2, 2)), positions=pos, scales=scale, name="crates",
                       rotations=np.column_stack([np.zeros(k), yaw, np.zeros(k)]),
                       position=(-60.0, 0.0, 10.0))
    decoy = Node("decoy", position=(1000, 0, 0), geometry=box())
    for target in [0, 417, 999, 123]:
        top = pos[target] + (-60, 0, 10) + (0, scale[target], 0)  # the +Y face centre
        # aim at a point of the top face off its centre, in the instance's own frame
        r = quat_to_matrix(quat_from_euler((0, yaw[target], 0)))[:3, :3]
        point = top + r @ np.array([0.4, 0.0, -0.3]) * scale[target]
        hit = ray_cast(point + (0, 20, 0), (0, -1, 0), [decoy, crates])
        assert hit.node is crates and hit.instance == target
        np.testing.assert_allclose(hit.point, point, atol=1e-6)
        np.testing.assert_allclose(hit.normal, (0, 1, 0), atol=1e-6)
        assert hit.distance == pytest.approx(20.0, abs=1e-6)
        f = crates.geometry.faces[hit.triangle]
        np.testing.assert_allclose(crates.geometry.positions[f][:, 1], 1.0)
    crates.active[417] = False  # inactive instances are not hit: the ray goes to the floor
    top = pos[417] + (-60, 0, 10) + (0, scale[417], 0)
    assert ray_cast(top + (0, 20, 0), (0, -1, 0), [crates]) is None
    assert ray_cast((-100, 50, 0), (0, 1, 0), [crates]) is None  # a miss is None


def test_the_bvh_follows_the_geometry_revision():
    mesh = uv_sphere(1.0, 16, 8)
    node = Node("ball", geometry=mesh)
    first = mesh_bvh(mesh)
    assert mesh_bvh(mesh) is first  # built once
    assert ray_cast((0, 0, 5), (0, 0, -1), [node]).distance == pytest.approx(4.0, abs=1e-6)
    mesh.update(positions=mesh.positions * 2)  # same size: the revision tells the BVH
    assert ray_cast((0, 0, 5), (0, 0, -1), [node]).distance == pytest.approx(3.0, abs=1e-6)
    assert mesh_bvh(mesh) is first  # same faces: refit, not rebuilt
    mesh.faces = mesh.faces[: mesh.face_count // 2]  # the top half (rings from +Y) only
    rebuilt = mesh_bvh(mesh)
    assert rebuilt is not first and len(rebuilt.faces) == mesh.face_count
    assert ray_cast((0, -5, 0), (0, 1, 0), [node]).distance == pytest.approx(7.0, abs=1e-6)


def brute_force(origins, directions, v0, v1, v2):
    """Moeller-Trumbore over every triangle for every ray (benchmarks/raycast.py's)."""
    e1, e2 = v1 - v0, v2 - v0
    return np.array([raycast_bench.brute_force(o, d, v0, e1, e2)
                     for o, d in zip(origins, directions)])


def test_the_bvh_agrees_with_brute_force_on_random_rays():
    rng = np.random.default_rng(2)
    tris = rng.uniform(-5, 5, (3000, 1, 3)) + rng.normal(0, 0.6, (3000, 3, 3))
    bvh = BVH(tris.reshape(-1, 3), np.arange(9000).reshape(-1, 3))
    origins = rng.uniform(-8, 8, (300, 3))
    directions = rng.normal(size=(300, 3))
    t, tri = bvh.intersect(origins, directions)
    expected = brute_force(origins, directions, tris[:, 0], tris[:, 1], tris[:, 2])
    hit = np.isfinite(expected)
    assert hit.sum() > 100 and (~hit).sum() > 10  # both kinds of ray are tested
    np.testing.assert_array_equal(np.isfinite(t), hit)
    np.testing.assert_allclose(t[hit], expected[hit], rtol=1e-12, atol=1e-12)
    assert np.all(tri[~hit] == -1)
    # the reported triangle lies on the ray at t
    p = origins[hit] + t[hit, None] * directions[hit]
    v = tris[tri[hit]]
    n = np.cross(v[:, 1] - v[:, 0], v[:, 2] - v[:, 0])
    np.testing.assert_allclose(np.einsum("ij,ij->i", p - v[:, 0], n), 0, atol=1e-9)
    # box queries return exactly the triangles whose boxes overlap
    lo, hi = np.array([-1.0, -2, 0]), np.array([1.5, 0, 2])
    tlo, thi = tris.min(axis=1), tris.max(axis=1)
    want = np.flatnonzero(np.all((tlo <= hi) & (thi >= lo), axis=1))
    np.testing.assert_array_equal(np.sort(bvh.query_box(lo, hi)), want)


def test_points_keep_their_bounding_sphere_and_bad_meshes_say_why():
    cloud = Node("cloud", geometry=PointCloud([[-1, 0, 0], [1, 0, 0]]))
    hit = ray_cast((0, 0, -10), (0, 0, 1), [cloud])
    assert hit.distance == pytest.approx(9.0) and hit.normal is None and hit.triangle is None
    # a triangle with a non-finite vertex cannot be hit; the others still can
    holed = Mesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [5, 5, 0], [np.nan, 0, 0]],
                 [[0, 1, 2], [3, 4, 0]])
    node = Node("holed", geometry=holed)
    hit = ray_cast((0.2, 0.2, 5), (0, 0, -1), [node])
    assert hit.triangle == 0 and hit.distance == pytest.approx(5.0)
    assert ray_cast((2.0, 1.9, 5), (0, 0, -1), [node]) is None
    assert mesh_bvh(holed).valid.tolist() == [True, False]
    p = holed.positions.copy()
    p[4] = (0, 5, 0)  # now finite: the revision makes it a rebuild
    holed.update(positions=p)
    assert mesh_bvh(holed).valid.tolist() == [True, True]
    # triangle (5, 5), (0, 5), (0, 0): (2, 3) is inside it
    assert ray_cast((2.0, 3.0, 5), (0, 0, -1), [node]).triangle == 1


def test_a_split_that_leaves_single_triangles_still_builds():
    """Uneven splits (all but one centroid on one side at every level) make a deep tree
    with many one-triangle leaves: up to 2 M - 1 nodes, more than the first guess."""
    x = 2.0 ** -np.arange(200)  # each midpoint split peels off the largest one
    zero = np.zeros(200)
    tris = np.stack([np.column_stack([x, zero, zero]),
                     np.column_stack([1.001 * x, zero, zero]),
                     np.column_stack([x, np.full(200, 1e-3), zero])], axis=1)  # in z = 0
    bvh = BVH(tris.reshape(-1, 3), np.arange(600).reshape(-1, 3))
    assert bvh.node_count > 2 * 200 / 4 * 2  # beyond the first allocation
    t, tri = bvh.intersect(np.column_stack([1.0002 * x, np.full(200, 1e-4), zero + 5]),
                           np.tile([0.0, 0.0, -1.0], (200, 1)))
    np.testing.assert_allclose(t, 5.0)
    np.testing.assert_array_equal(tri, np.arange(200))
