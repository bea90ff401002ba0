"""Scene graph: cached TRS matrices, invalidation through revisions, hierarchy edits."""

import math

import numpy as np
import pytest

from engine import Lines, Mesh, Node, PointCloud, Scene
from engine.scene.transforms import quat_from_axis_angle


def test_world_matrix_composes_parents():
    root = Scene()
    a = root.add(Node("a", position=(1, 0, 0), rotation=quat_from_axis_angle((0, 1, 0), math.pi / 2)))
    b = a.add(Node("b", position=(0, 0, 2), scale=3))
    np.testing.assert_allclose(b.world_matrix @ [1, 0, 0, 1], [3, 0, -3, 1], atol=1e-12)
    np.testing.assert_allclose(b.world_position, [3, 0, 0], atol=1e-12)


def test_world_matrix_cached_and_invalidated_through_parent():
    root = Scene()
    a = root.add(Node("a"))
    b = a.add(Node("b", position=(0, 1, 0)))
    m1 = b.world_matrix
    assert b.world_matrix is m1  # cached: same object, no recomputation
    s1 = b.world_stamp
    a.position = (5, 0, 0)  # no update call needed
    m2 = b.world_matrix
    assert m2 is not m1 and b.world_stamp != s1
    np.testing.assert_allclose(m2[:3, 3], [5, 1, 0])


def test_matrices_are_read_only():
    n = Node()
    with pytest.raises(ValueError):
        n.world_matrix[0, 0] = 2


def test_reparent_keeps_local_and_changes_world():
    root = Scene()
    a = root.add(Node("a", position=(10, 0, 0)))
    c = root.add(Node("c", position=(1, 0, 0)))
    assert c.world_position[0] == 1
    a.add(c)
    assert c.parent is a and c not in root.children
    assert c.world_position[0] == 11
    root.add(c)
    assert c.world_position[0] == 1


def test_cycles_rejected():
    a = Node("a")
    b = a.add(Node("b"))
    with pytest.raises(ValueError, match="descendant"):
        b.add(a)


def test_remove_and_find():
    root = Scene()
    a = root.add(Node("a"))
    a.add(Node("target"))
    assert root.find("target").name == "target"
    assert [n.name for n in root.traverse()] == ["scene", "a", "target"]
    root.remove(a)
    assert root.find("target") is None
    with pytest.raises(ValueError, match="not a child"):
        root.remove(a)


def test_find_all_lists_every_node_of_a_name_depth_first():
    """Names repeat (loaded models do): find_all gives each, hidden ones too, in the
    order traverse visits them, starting with the node itself."""
    root = Scene()
    a = root.add(Node("part"))
    b = a.add(Node("other"))
    c = b.add(Node("part", visible=False))
    d = root.add(Node("part"))
    assert root.find_all("part") == [a, c, d]
    assert a.find_all("part") == [a, c]
    assert b.find_all("part") == [c] and root.find("part") is a
    assert root.find_all("missing") == []
    root.remove(a)
    assert root.find_all("part") == [d]


def test_structure_revision_propagates_to_ancestors():
    root = Scene()
    a = root.add(Node("a"))
    r0 = root.structure_revision
    a.add(Node("leaf"))
    assert root.structure_revision > r0
    r1 = root.structure_revision
    a.position = (1, 2, 3)  # a transform change is not structural
    assert root.structure_revision == r1
    a.geometry = PointCloud(np.zeros((2, 3)))
    assert root.structure_revision > r1


@pytest.mark.parametrize("field,value", [("position", (1, 2)), ("position", (np.nan, 0, 0)),
                                         ("rotation", (0, 0, 0, 0)), ("scale", (np.inf, 1, 1))])
def test_bad_transform_values_raise(field, value):
    with pytest.raises(ValueError):
        setattr(Node("n"), field, value)


def test_scene_bounds_ignore_non_finite_points_and_hidden_nodes():
    root = Scene()
    pts = np.array([[0, 0, 0], [1, 2, 3], [np.nan, 0, 0], [np.inf, 1, 1]], np.float32)
    root.add(Node("p", position=(1, 0, 0), geometry=PointCloud(pts)))
    root.add(Node("hidden", geometry=PointCloud(np.full((1, 3), 100.0)), visible=False))
    np.testing.assert_allclose(root.bounds(), [[1, 0, 0], [2, 2, 3]])


def test_mesh_validates_faces():
    pos = np.zeros((3, 3))
    assert Mesh(pos, [[0, 1, 2]]).face_count == 1
    assert Mesh(np.zeros((4, 3)), [[0, 1, 2], [0, 2, 3]]).face_count == 2
    with pytest.raises(ValueError, match="face indices"):
        Mesh(pos, [[0, 1, 3]])
    with pytest.raises(ValueError, match=r"\(M, 3\)"):
        Mesh(pos, [[0, 1, 2, 0]])
    with pytest.raises(ValueError, match="normals"):
        Mesh(pos, [[0, 1, 2]], normals=np.zeros((2, 3)))


def test_deep_hierarchy_has_no_recursion_limit():
    root = Scene()
    node = root
    for _ in range(5000):
        node = node.add(Node(position=(0.001, 0, 0)))
    np.testing.assert_allclose(node.world_position, [5.0, 0, 0], rtol=1e-9)


def test_lines_count_their_segments():
    square = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]])
    outline = Lines(square, [[0, 1], [1, 2], [2, 3], [3, 0]])
    assert outline.segment_count == 4 and outline.vertex_count == 4
    assert Lines(square, [[0, 2]]).segment_count == 1
    assert Lines(square, np.zeros((0, 2), np.int32)).segment_count == 0
