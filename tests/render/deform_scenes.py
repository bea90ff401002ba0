"""Scenes of deformed meshes shared by the deformation tests and the parity matrix: the
two-joint strip of issue 20 and a quad with one morph target."""

from __future__ import annotations

import numpy as np

from engine import Mesh, Node
from engine.scene import Clip, TransformTrack
from engine.scene.deform import Skin

XS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0)
HALF_WIDTH = 0.1


def strip_mesh(sets=1):
    """A strip along x in [0, 2], |y| <= 0.1: weight 1 on joint 0 for x < 1, on joint 1
    for x > 1, 0.5 / 0.5 on the middle ring (x = 1). ``sets`` = 2 splits every
    influence over two JOINTS/WEIGHTS sets (and scales the weights by 3, so they are
    normalised)."""
    pos = np.array([[x, y, 0.0] for x in XS for y in (-HALF_WIDTH, HALF_WIDTH)], np.float32)
    faces = []
    for i in range(len(XS) - 1):
        a, b, c, d = 2 * i, 2 * i + 1, 2 * i + 2, 2 * i + 3
        faces += [[a, c, d], [a, d, b]]
    n = len(pos)
    joints = np.zeros((n, 4 * sets), np.uint8)
    weights = np.zeros((n, 4 * sets))
    for v, (x, _, _) in enumerate(pos):
        if x < 1:
            joints[v, 0], weights[v, 0] = 0, 1.0
        elif x > 1:
            joints[v, 0], weights[v, 0] = 1, 1.0
        elif sets == 1:
            joints[v, :2], weights[v, :2] = (0, 1), (0.5, 0.5)
        else:  # one influence in each set
            joints[v, 0], weights[v, 0] = 0, 0.5
            joints[v, 4], weights[v, 4] = 1, 0.5
    if sets > 1:
        weights *= 3.0
    normals = np.tile([0.0, 0.0, 1.0], (n, 1))
    return Mesh(pos, faces, normals=normals, joints=joints, weights=weights)


def strip_scene(root, sets=1, offset=(5.0, -3.0, 2.0)):
    """Adds the skinned strip under ``root``: joint 0 at the origin, joint 1 at x = 1
    (its child), the mesh node elsewhere (``offset``: its own transform, which skinning
    ignores). Returns (mesh node, clip): joint 1 turns 0 -> 90 degrees about z over
    t in [0, 1] (LINEAR, so t = 0.5 is 45 degrees)."""
    j0 = root.add(Node("joint 0"))
    j1 = j0.add(Node("joint 1", position=(1.0, 0.0, 0.0)))
    ibm = np.tile(np.eye(4), (2, 1, 1))
    ibm[1, 0, 3] = -1.0  # joint 1's bind pose sits at x = 1
    node = root.add(Node("strip", geometry=strip_mesh(sets), position=offset,
                         scale=(2.0, 2.0, 2.0)))
    node.skin = Skin([j0, j1], ibm)
    s = np.sin(np.pi / 4)
    clip = Clip("bend", [TransformTrack(j1, "rotation", [0.0, 1.0],
                                        [[0, 0, 0, 1], [0, 0, s, s]])])
    return node, clip


def strip_expected(angle_deg):
    """(N, 3) world positions of the strip with joint 1 at ``angle_deg`` about z, by the
    spec's formula written out: p' = sum_i w_i (J_i @ IBM_i) p."""
    a = np.radians(angle_deg)
    rot = np.eye(4)
    rot[:2, :2] = [[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]]
    tr = np.eye(4)
    tr[0, 3] = 1.0
    ibm1 = np.eye(4)
    ibm1[0, 3] = -1.0
    mats = [np.eye(4), tr @ rot @ ibm1]
    out = []
    for x in XS:
        for y in (-HALF_WIDTH, HALF_WIDTH):
            w = (1.0, 0.0) if x < 1 else (0.0, 1.0) if x > 1 else (0.5, 0.5)
            m = w[0] * mats[0] + w[1] * mats[1]
            out.append((m @ [x, y, 0.0, 1.0])[:3])
    return np.array(out)


def morph_quad(interpolation="linear"):
    """A unit quad (x, y in [0, 1]) whose one morph target lifts the top edge by 1, and
    a clip animating its weight 0 -> 1 over t in [0, 1]: LINEAR, STEP, or CUBICSPLINE
    with tangents 0 (in) / 0 (out) at both keys, so w(t) = 3t^2 - 2t^3."""
    pos = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], np.float32)
    delta = np.zeros((1, 4, 3), np.float32)
    delta[0, 2:, 1] = 1.0
    mesh = Mesh(pos, [[0, 1, 2], [0, 2, 3]], normals=np.tile([0, 0, 1.0], (4, 1)),
                morph_positions=delta)
    node = Node("quad", geometry=mesh)
    if interpolation == "cubicspline":
        values = [[[0.0], [0.0], [0.0]], [[0.0], [1.0], [0.0]]]
    else:
        values = [[0.0], [1.0]]
    clip = Clip("lift", [TransformTrack(node, "weights", [0.0, 1.0], values, interpolation)])
    return node, clip


def morph_weight(interpolation, t):
    """The quad's weight at time t in [0, 1] (the glTF Appendix C formulas)."""
    if interpolation == "step":
        return 0.0 if t < 1 else 1.0
    if interpolation == "linear":
        return t
    return 3 * t * t - 2 * t ** 3
