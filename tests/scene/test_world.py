"""engine.scene.world: the one composition of local TRS into world matrices, checked
against matrices multiplied out by hand, and the same bits whether a matrix is composed
alone (Node.world_matrix), for many instances, or for a whole subtree (WorldMatrices)."""

import math

import numpy as np
import pytest

from engine.scene import Instances, Node, PointCloud, Scene, WorldMatrices, compose_world
from engine.scene.graph import set_transforms

S = math.sqrt(0.5)  # quaternion components of a 90 degree turn

# A: at (1, 2, 3), turned 90 degrees about Z: x -> y, y -> -x.
W_A = np.array([[0, -1, 0, 1], [1, 0, 0, 2], [0, 0, 1, 3], [0, 0, 0, 1.0]])
# B under A: at (4, 0, 0), scaled (2, 1, 3): R_A diag(2, 1, 3), R_A (4, 0, 0) + (1, 2, 3).
W_B = np.array([[0, -1, 0, 1], [2, 0, 0, 6], [0, 0, 3, 3], [0, 0, 0, 1.0]])
# C under B: at (0, 1, 1), turned 90 degrees about X (y -> z, z -> -y), scaled 0.5:
# W_B[:3, :3] @ [[.5, 0, 0], [0, 0, -.5], [0, .5, 0]], W_B[:3, :3] @ (0, 1, 1) + (1, 6, 3).
W_C = np.array([[0, 0, 0.5, 0], [1, 0, 0, 6], [0, 1.5, 0, 6], [0, 0, 0, 1.0]])
# C moved under A, keeping its local transform: W_A[:3, :3] @ the same, R_A (0, 1, 1) + t_A.
W_C_UNDER_A = np.array([[0, 0, 0.5, 0], [0.5, 0, 0, 2], [0, 0.5, 0, 4], [0, 0, 0, 1.0]])


def three_levels():
    scene = Scene()
    a = scene.add(Node("a", position=(1, 2, 3), rotation=(0, 0, S, S)))
    b = a.add(Node("b", position=(4, 0, 0), scale=(2, 1, 3)))
    c = b.add(Node("c", position=(0, 1, 1), rotation=(S, 0, 0, S), scale=0.5))
    return scene, a, b, c


def test_node_world_matrices_equal_the_matrices_multiplied_by_hand():
    _, a, b, c = three_levels()
    for node, want in ((a, W_A), (b, W_B), (c, W_C)):
        np.testing.assert_allclose(node.world_matrix, want, rtol=0, atol=1e-14)
    # C's local point (2, 0, 0): scaled (1, 0, 0), turned (1, 0, 0), moved (1, 1, 1) in B;
    # B scales (2, 1, 3) and moves (6, 1, 3) in A; A turns (-1, 6, 3) and moves (0, 8, 6).
    np.testing.assert_allclose(c.world_matrix @ (2, 0, 0, 1), (0, 8, 6, 1), atol=1e-14)
    a.add(c)  # reparent: the local transform is kept, the world follows the new parent
    np.testing.assert_allclose(c.world_matrix, W_C_UNDER_A, rtol=0, atol=1e-14)


def test_world_matrices_of_a_subtree_equal_the_hand_values_and_follow_a_reparent():
    scene, a, b, c = three_levels()
    w = WorldMatrices(scene)
    w.extend([a, b, c])
    assert w.update().tolist() == [True, True, True, True]  # everything is new
    for node, want in ((a, W_A), (b, W_B), (c, W_C)):
        np.testing.assert_allclose(w.world[w.index(node)], want, rtol=0, atol=1e-14)
    assert w.update().tolist() == [False] * 4  # nothing moved, nothing recomposed
    b.position = (4, 0, 1)  # moves B and, through it, C
    assert w.update().tolist() == [False, False, True, True]
    # B's origin rises by 1 in A's frame; A's turn about Z leaves z alone: C rises by 1
    np.testing.assert_allclose(w.world[w.index(c)][:3, 3], (0, 6, 7), atol=1e-14)
    b.position = (4, 0, 0)
    a.add(c)
    w.discard(c)
    w.add(c)
    assert w.dead == 1 and len(w) == 5
    changed = w.update()
    assert changed[w.index(c)] and changed[w.index(b)] and not changed[w.index(a)]
    np.testing.assert_allclose(w.world[w.index(c)], W_C_UNDER_A, rtol=0, atol=1e-14)
    np.testing.assert_allclose(w.world[w.index(b)], W_B, rtol=0, atol=1e-14)


def test_compose_world_is_parent_times_t_r_s():
    trs = np.array([[4, 0, 0, 0, 0, 0, 1, 2, 1, 3], [0, 1, 1, S, 0, 0, S, 0.5, 0.5, 0.5]])
    local = compose_world(None, trs)
    np.testing.assert_allclose(local[0], [[2, 0, 0, 4], [0, 1, 0, 0], [0, 0, 3, 0],
                                          [0, 0, 0, 1]], atol=0)
    np.testing.assert_allclose(local[1], [[0.5, 0, 0, 0], [0, 0, -0.5, 1], [0, 0.5, 0, 1],
                                          [0, 0, 0, 1]], atol=1e-14)
    np.testing.assert_allclose(compose_world(W_A, trs[:1])[0], W_B, atol=1e-14)
    np.testing.assert_allclose(compose_world(np.stack([W_A, W_B]), trs)[1], W_C, atol=1e-14)


def random_tree(rng, n=120):
    scene = Scene()
    nodes = []
    for i in range(n):
        parent = scene if i < 6 else nodes[rng.integers(max(0, i - 12), i)]  # deep chains
        nodes.append(parent.add(Node(f"n{i}", position=rng.normal(size=3) * 10,
                                     rotation=rng.normal(size=4),
                                     scale=rng.uniform(0.2, 3, 3))))
    return scene, nodes


def test_a_subtree_and_single_nodes_give_the_same_bits():
    """One function, the same NumPy calls whatever the batch size: a node's world matrix
    composed alone (Node.world_matrix) equals the one composed among all others."""
    rng = np.random.default_rng(3)
    scene, nodes = random_tree(rng)
    scene.position = (5, -2, 1)  # the root's own transform reaches every entry
    w = WorldMatrices(scene)
    w.extend(list(scene.traverse())[1:])
    assert max(w._level[: len(w)]) >= 5
    for step in range(4):
        w.update()
        for node in nodes:
            got, alone = w.world[w.index(node)], node.world_matrix  # (4, 4) float64 each
            assert np.array_equal(got.view(np.uint64), alone.view(np.uint64)), node.name
        moved = nodes[step::7]
        set_transforms(moved, positions=rng.normal(size=(len(moved), 3)),
                       rotations=rng.normal(size=(len(moved), 4)))


def test_instances_world_matrices_are_composed_by_the_same_function():
    rng = np.random.default_rng(4)
    _scene, nodes = random_tree(rng, 20)
    inst = nodes[15].add(Instances(PointCloud(np.zeros((1, 3))),
                                   positions=rng.normal(size=(50, 3)),
                                   rotations=rng.normal(size=(50, 4)), scales=2.0))
    got = inst.world_matrices()
    for i in (0, 17, 49):  # one instance alone, as Node.world_matrix composes a node
        alone = compose_world(inst.world_matrix, inst.trs_rows([i]))[0]
        assert np.array_equal(got[i].view(np.uint64), alone.view(np.uint64))
    q = inst.rotations[17] / np.linalg.norm(inst.rotations[17])
    child = Node("probe", position=inst.positions[17], rotation=q, scale=2.0)
    inst.add(child)
    np.testing.assert_allclose(got[17], child.world_matrix, rtol=0, atol=1e-12)


def test_a_subtree_root_anywhere_in_the_tree_takes_its_world_from_the_graph():
    _scene, a, b, c = three_levels()
    w = WorldMatrices(b)
    w.add(c)
    w.update()
    np.testing.assert_allclose(w.world[0], W_B, atol=1e-14)
    np.testing.assert_allclose(w.world[1], W_C, atol=1e-14)
    a.position = (0, 0, 0)  # an ancestor outside the subtree moves everything in it
    assert w.update().tolist() == [True, True]
    np.testing.assert_allclose(w.world[1][:3, 3], W_C[:3, 3] - (1, 2, 3), atol=1e-14)


def test_missing_parents_and_unknown_nodes_are_named():
    scene, a, b, _c = three_levels()
    w = WorldMatrices(scene)
    with pytest.raises(KeyError, match="'a' is not in these world matrices"):
        w.add(b)  # its parent a was never added
    w.add(a)
    w.discard(a)
    with pytest.raises(KeyError, match="'a' is not in these world matrices"):
        w.index(a)
    w.discard(a)  # discarding twice is a no-op
    assert w.dead == 1
