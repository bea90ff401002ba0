"""Node ergonomics and scale: in-place vector edits, Euler angles, colours, argument
errors that name the argument, many nodes moved from arrays, linear-time hierarchies."""

import math

import numpy as np
import pytest

import engine
from engine import Node, PointCloud, Scene
from engine.scene.graph import get_transforms, set_transforms
from engine.scene.transforms import (
    EULER_ORDERS,
    euler_from_quat,
    quat_from_axis_angle,
    quat_from_euler,
    quat_to_matrices,
    quat_to_matrix,
    trs_matrices,
    trs_matrix,
)


# --- in-place edits of position / rotation / scale work ----------------------------------
def test_item_assignment_on_position_moves_the_node():
    n = Node(position=(1, 2, 3))
    n.position[0] += 1
    assert n.position.tolist() == [2, 2, 3]
    n.position.y = 7
    assert n.position.tolist() == [2, 7, 3]
    n.position[1:] = 0
    assert n.position.tolist() == [2, 0, 0]
    np.testing.assert_allclose(n.world_matrix[:3, 3], [2, 0, 0])


def test_in_place_arithmetic_writes_back_and_results_are_plain_arrays():
    n = Node(position=(1, 1, 1))
    v = n.position
    v += (1, 2, 3)
    assert n.position.tolist() == [2, 3, 4]
    np.multiply(v, 2, out=v)
    assert n.position.tolist() == [4, 6, 8]
    n.position += 1  # read, add in place, assign: the same value twice
    assert n.position.tolist() == [5, 7, 9]
    s = n.position + 1
    assert type(s) is np.ndarray and n.position.tolist() == [5, 7, 9]
    c = n.position.copy()
    c[0] = 100  # a copy belongs to no node
    assert n.position[0] == 5
    np.copyto(v, [0, 0, 1])
    assert n.position.tolist() == [0, 0, 1]


def test_in_place_edits_of_rotation_and_scale():
    n = Node()
    n.scale[2] = 4
    assert n.scale.tolist() == [1, 1, 4]
    n.rotation[:] = quat_from_axis_angle((0, 1, 0), 90, degrees=True)
    np.testing.assert_allclose(n.world_matrix[:3, :3] @ [0, 0, -1], [-4, 0, 0], atol=1e-12)
    r = n.rotation
    r[3] = 0.0  # (0, 0.707, 0, 0) is normalised on write-back: 180 degrees about Y
    np.testing.assert_allclose(n.rotation, [0, 1, 0, 0], atol=1e-12)


def test_in_place_non_finite_value_fails_loudly():
    n = Node("probe")
    with pytest.raises(ValueError, match="'probe': position must be finite"):
        n.position[0] = np.nan
    with pytest.raises(ValueError, match="quaternion must be non-zero"):
        n.rotation[:] = 0
    world = n.world_position
    with pytest.raises(ValueError, match="read-only"):
        world[0] = 1  # the world position is derived: editing it cannot move the node


# --- Euler angles ---------------------------------------------------------------------------
def test_rotation_accepts_euler_degrees_in_yxz_order():
    n = Node(rotation=(0, 90, 0))  # yaw 90: looks down -X
    np.testing.assert_allclose(quat_to_matrix(n.rotation) @ [0, 0, -1], [-1, 0, 0], atol=1e-12)
    n.rotation = (30, 0, 0)  # pitch up 30
    np.testing.assert_allclose(quat_to_matrix(n.rotation) @ [0, 0, -1],
                               [0, 0.5, -math.sqrt(3) / 2], atol=1e-12)
    n.euler = (10, 20, 30)
    np.testing.assert_allclose(n.euler, [10, 20, 30], atol=1e-9)
    # YXZ: yaw about Y, then pitch about the turned X, then roll about the turned Z
    r = [quat_to_matrix(quat_from_axis_angle(ax, a, degrees=True))
         for ax, a in (((0, 1, 0), 20), ((1, 0, 0), 10), ((0, 0, 1), 30))]
    np.testing.assert_allclose(quat_to_matrix(n.rotation), r[0] @ r[1] @ r[2], atol=1e-12)


@pytest.mark.parametrize("order", EULER_ORDERS)
def test_euler_round_trip_and_gimbal_lock_for_every_order(order):
    rng = np.random.default_rng(3)
    a = rng.uniform(-179, 179, (500, 3))
    mid = "XYZ".index(order[1])
    a[:, mid] = rng.uniform(-89, 89, 500)
    np.testing.assert_allclose(euler_from_quat(quat_from_euler(a, order), order), a, atol=1e-9)
    a[:, mid] = 90.0  # gimbal lock: the angles change, the rotation does not
    q = quat_from_euler(a, order)
    back = quat_from_euler(euler_from_quat(q, order), order)
    np.testing.assert_allclose(quat_to_matrices(back), quat_to_matrices(q), atol=1e-9)
    axes = [np.eye(3)["XYZ".index(c)] for c in order]
    m = np.eye(3)
    for ax, c in zip(axes, order):
        m = m @ quat_to_matrix(quat_from_axis_angle(ax, a[0, "XYZ".index(c)], degrees=True))
    np.testing.assert_allclose(quat_to_matrix(q[0]), m, atol=1e-12)


def test_quaternion_and_euler_helpers_are_exported_from_engine():
    for name in ("quat_from_euler", "euler_from_quat", "quat_from_axis_angle",
                 "quat_multiply", "quat_to_matrix", "slerp", "set_transforms",
                 "get_transforms", "Instances"):
        assert hasattr(engine, name) and name in engine.__all__, name


# --- argument errors name the argument -------------------------------------------------------
@pytest.mark.parametrize("kwargs, message", [
    ({"scale": (1, 2)}, "scale .*3 numbers"),
    ({"scale": "big"}, "scale .*the string 'big'"),
    ({"position": "123"}, "position must be 3 numbers, got the string '123'"),
    ({"position": (1, 2)}, "position must be 3 numbers, got 2"),
    ({"rotation": (0, 0)}, "rotation .*quaternion"),
    ({"rotation": "up"}, "rotation must be a quaternion"),
    ({"color": "not-a-colour"}, "color: unknown colour 'not-a-colour'"),
    ({"color": (2, 0, 0)}, "color components must be floats in"),
])
def test_node_argument_errors_name_the_argument(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Node("n", **kwargs)


def test_scale_takes_one_number_or_three():
    assert Node(scale=2).scale.tolist() == [2, 2, 2]
    assert Node(scale=np.float32(3)).scale.tolist() == [3, 3, 3]
    assert Node(scale=np.array(4.0)).scale.tolist() == [4, 4, 4]
    assert Node(scale=[1, 2, 3]).scale.tolist() == [1, 2, 3]


# --- colours ----------------------------------------------------------------------------------
def test_single_colour_shorthand_for_geometry():
    pts = np.zeros((5, 3))
    pc = PointCloud(pts, colors=(0.15, 0.2, 0.35))
    assert pc.colors.shape == (5, 4)
    assert pc.colors.tolist() == [[38, 51, 89, 255]] * 5  # rint(0.15 * 255) = 38...
    assert PointCloud(pts, colors="red").colors[0].tolist() == [255, 0, 0, 255]
    assert PointCloud(pts, colors=(0, 1, 0, 0.5)).colors[0].tolist() == [0, 255, 0, 128]
    with pytest.raises(ValueError, match="colors"):
        PointCloud(pts, colors=(1, 2))


def test_node_colour_forms():
    n = Node(color="#ff8000")
    assert n.color == (1.0, 128 / 255, 0.0, 1.0)
    n.color = (0.5, 0.5, 0.5)
    assert n.color == (0.5, 0.5, 0.5, 1.0)
    n.color = None
    assert n.color is None
    assert Scene(background="navy").background == (0.0, 0.0, 128 / 255, 1.0)
    # CSS's keyword: black with alpha 0 (Pillow's colour table lacks it)
    assert Scene(background="transparent").background == (0.0, 0.0, 0.0, 0.0)
    assert Scene(background=" Transparent ").background == (0.0, 0.0, 0.0, 0.0)


# --- many nodes from arrays --------------------------------------------------------------------
def test_set_transforms_matches_the_single_setters():
    rng = np.random.default_rng(0)
    k = 50
    a = [Node() for _ in range(k)]
    b = [Node() for _ in range(k)]
    pos = rng.normal(size=(k, 3))
    q = rng.normal(size=(k, 4))
    s = rng.uniform(0.5, 2, (k, 3))
    set_transforms(a, positions=pos, rotations=q, scales=s)
    for n, p, r, sc in zip(b, pos, q, s):
        n.position, n.rotation, n.scale = p, r, sc
    for x, y in zip(a, b):
        np.testing.assert_allclose(x.world_matrix, y.world_matrix, atol=1e-14)
    p2, r2, s2 = get_transforms(a)
    np.testing.assert_allclose(p2, pos)
    np.testing.assert_allclose(r2, q / np.linalg.norm(q, axis=1, keepdims=True))
    np.testing.assert_allclose(s2, s)
    Scene().set_transforms(a, rotations=np.zeros((k, 3)) + (0, 90, 0), scales=2.0)
    np.testing.assert_allclose(a[3].world_matrix[:3, :3] @ [0, 0, -1], [-2, 0, 0], atol=1e-12)
    set_transforms(a, scales=np.arange(1, k + 1))
    assert a[4].scale.tolist() == [5, 5, 5]


def test_set_transforms_errors_name_argument_and_row():
    nodes = [Node() for _ in range(4)]
    with pytest.raises(ValueError, match=r"positions must have shape \(4, 3\)"):
        set_transforms(nodes, positions=np.zeros((3, 3)))
    bad = np.zeros((4, 3))
    bad[2, 1] = np.inf
    with pytest.raises(ValueError, match="positions: row 2 is not finite"):
        set_transforms(nodes, positions=bad)
    q = np.tile([0, 0, 0, 1.0], (4, 1))
    q[1] = 0
    with pytest.raises(ValueError, match="rotations: row 1 is a zero quaternion"):
        set_transforms(nodes, rotations=q)
    with pytest.raises(TypeError, match="Node objects"):
        set_transforms([Node(), "x"], positions=np.zeros((2, 3)))


def test_vectorised_trs_equals_trs_matrix():
    rng = np.random.default_rng(2)
    p, q, s = rng.normal(size=(20, 3)), rng.normal(size=(20, 4)), rng.uniform(0.1, 3, (20, 3))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    many = trs_matrices(p, q, s)
    for i in range(20):
        np.testing.assert_allclose(many[i], trs_matrix(p[i], q[i], s[i]), atol=1e-14)


# --- hierarchies are linear in size --------------------------------------------------------------
class CountingNode(Node):
    """Counts reads of the parent link: how far structure bookkeeping walks up."""

    reads = 0

    @property
    def _parent(self):
        CountingNode.reads += 1
        return self.__dict__["_parent_"]

    @_parent.setter
    def _parent(self, value):
        self.__dict__["_parent_"] = value


def test_adding_under_the_deepest_node_does_not_walk_the_chain():
    root = Scene()
    node = root
    for _ in range(2000):
        node = node.add(CountingNode())
    _ = root.structure_revision  # a reader looked: the next change must reach the root again
    CountingNode.reads = 0
    node = node.add(CountingNode())
    first = CountingNode.reads  # walks up once, to the root: ~ depth reads
    CountingNode.reads = 0
    for _ in range(100):
        node = node.add(CountingNode())
    assert first >= 2000
    assert CountingNode.reads <= 100 * 4  # O(1) each: stops at the first marked ancestor
    r0 = root.structure_revision
    node.add(CountingNode())
    assert root.structure_revision != r0


def test_a_hundred_thousand_levels():
    root = Scene()
    node = root
    for _ in range(100_000):
        node = node.add(Node(position=(0.001, 0, 0)))
    node.geometry = PointCloud(np.zeros((1, 3)))
    np.testing.assert_allclose(node.world_position, [100.0, 0, 0], rtol=1e-9)
    np.testing.assert_allclose(root.bounds(), [[100, 0, 0], [100, 0, 0]], rtol=1e-9)


def test_removing_children_keeps_order_and_costs_no_scan():
    root = Scene()
    kids = [root.add(Node(str(i))) for i in range(5)]
    root.remove(kids[2])
    assert [c.name for c in root.children] == ["0", "1", "3", "4"]
    assert [n.name for n in root.traverse()] == ["scene", "0", "1", "3", "4"]
    with pytest.raises(ValueError, match="under itself"):
        kids[0].add(kids[0])
