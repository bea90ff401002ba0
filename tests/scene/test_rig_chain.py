"""rig_chain: a mesh skinned along Y with a chain of joints; the posed vertices against
the skinning formula written out here for a rotation of one joint."""

import numpy as np
import pytest

from engine.scene.deform import posed_vertices, rig_chain
from engine.scene.procedural import box, capsule
from engine.scene.transforms import quat_from_axis_angle


def test_rest_pose_is_the_mesh_and_a_bent_joint_turns_what_lies_above_it():
    mesh = capsule(0.3, 2.0, segments=16, rings=6)
    root, joints = rig_chain(mesh, bones=3)
    node = root.children[1]
    rest = np.asarray(mesh.positions, np.float64) + mesh.origin
    np.testing.assert_allclose(posed_vertices(node)[0], rest, atol=1e-6)
    lo, length = -1.0, 2.0 / 3
    joints[1].rotation = quat_from_axis_angle((0, 0, 1), 90, degrees=True)
    got = posed_vertices(node)[0]
    pivot = np.array([0.0, lo + length, 0.0])  # joint 1's place
    turn = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    above = rest[:, 1] >= lo + 1.5 * length  # weight 1 on joints 1 and 2
    below = rest[:, 1] <= lo + 0.5 * length  # weight 1 on joint 0
    assert above.sum() > 20 and below.sum() > 20
    np.testing.assert_allclose(got[above], pivot + (rest[above] - pivot) @ turn.T, atol=1e-5)
    np.testing.assert_allclose(got[below], rest[below], atol=1e-6)
    # in between, the blend of the two: v' = (1 - f) p + f (pivot + R (p - pivot))
    mid = ~above & ~below
    f = (rest[mid, 1] - lo) / length - 0.5 - np.floor((rest[mid, 1] - lo) / length - 0.5)
    want = (1 - f)[:, None] * rest[mid] + f[:, None] * (pivot + (rest[mid] - pivot) @ turn.T)
    np.testing.assert_allclose(got[mid], want, atol=1e-5)


def test_bad_input():
    with pytest.raises(ValueError, match="bones must be >= 1"):
        rig_chain(box(), bones=0)
    flat = box((1.0, 1.0, 1.0))
    flat.update(positions=flat.positions * (1, 0, 1))
    with pytest.raises(ValueError, match="no extent along Y"):
        rig_chain(flat)
