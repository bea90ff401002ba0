"""The vertex stage's deformation tables: skinning and morph targets of every deformed
mesh of a frame, in flat arrays that every backend's vertex stage reads in the same
single pass over the vertices (the formulas: ``engine.scene.deform``).

Per assembly (rebuilt when the primitive assembly or the batch's world table changes)::

    slots        (K + 1, 5) int64 per model slot: first vertex, skin row base (-1: not
                 skinned), morph row base, morph target count T (0: none), weight base
    inf_joint    (M, I) int32 global joint row of each influence of each skinned
                 vertex (row = skin row base + vertex - first vertex)
    inf_weight   (M, I) float64 its weight (rows sum to 1; a vertex whose glTF weights
                 are all zero gets weight 1 on its skin's identity row: not skinned)
    deltas       (D, 9) float32 morph deltas (position xyz, normal xyz, tangent xyz),
                 vertex-major:
                 row = morph row base + (vertex - first vertex) * T + t

Per frame (``update``: array operations over every joint of every skin at once, one
copy to a device)::

    joints       (J, 12) float64 rows of the 3x4 skinning matrices
                 ``T(-o) inverse(W_node) W_joint IBM T(o)`` (``engine.scene.deform
                 .joint_matrices``, o the geometry origin), each skin's block followed
                 by one identity row
    weights      (W,) float64 every deformed node's morph weights

The vertex stage then, for vertex i of slot k with local index l = i - first::

    p, n, u = position, normal attribute, tangent attribute (xyz)
    p += sum_t w[wb + t] * deltas[mb + l T + t, 0:3]; n += ... deltas[..., 3:6];
    u += ... deltas[..., 6:9]
    S     = sum_c inf_weight[sb + l, c] * joints[inf_joint[sb + l, c]]   (in c order)
    p     = S (p, 1); normal-space attributes by sign(det S3) cofactor(S3) (the inverse
    transpose of S's 3x3 part S3 up to its positive length; zero when det S3 is 0 or not
    finite); direction-space attributes by S3 (a tangent's handedness times sign(det S3))
    then the model and view-projection matrices as for every vertex.

Instances nodes are drawn undeformed (every copy shares its geometry's rest shape).
"""

from __future__ import annotations

import numpy as np

from ..scene.deform import effective_morph_weights, is_deformed
from ..scene.instances import Instances

__all__ = ["KERNEL_TABLES", "DeformTables", "deform_tables", "kernel_tables"]

SLOT_COLUMNS = 5
DELTA_COLUMNS = 9  # position, normal, tangent xyz


class DeformTables:
    """The tables of the module docstring for one assembly; ``update(batch)`` computes
    the per-frame ``joints`` and ``weights``."""

    def __init__(self, batch, prims):
        self.key = _key(batch, prims)
        k = batch.null_slot + 1
        self.slots = np.zeros((k, SLOT_COLUMNS), np.int64)
        self.slots[:, 1] = -1
        self.nodes: list = []  # (node, slot) of every deformed node, in vertex order
        skins, morphs = [], []
        joint_rows = 0
        inf_rows, morph_rows, weight_rows, width = 0, 0, 0, 4
        for node, (start, stop) in sorted(batch.ranges.items(), key=lambda r: r[1][0]):
            if isinstance(node, Instances) or not is_deformed(node) \
                    or not prims.surface_mask[start]:
                continue
            slot = int(batch.slots_of(node)[0])
            g = node.geometry
            self.slots[slot, 0] = start
            self.nodes.append((node, slot))
            if node.skin is not None and g.joints is not None:
                self.slots[slot, 1] = inf_rows
                skins.append((node, g, joint_rows, inf_rows))
                joint_rows += len(node.skin.joints) + 1  # its identity row last
                inf_rows += g.vertex_count
                width = max(width, g.joints.shape[1])
            t = g.morph_target_count
            if t:
                self.slots[slot, 2:5] = (morph_rows, t, weight_rows)
                morphs.append((node, g, morph_rows, weight_rows))
                morph_rows += g.vertex_count * t
                weight_rows += t
        self.inf_joint = np.zeros((inf_rows, width), np.int32)
        self.inf_weight = np.zeros((inf_rows, width))
        self.deltas = np.zeros((morph_rows, DELTA_COLUMNS), np.float32)
        self.weights = np.zeros(weight_rows)
        self.joints = np.zeros((joint_rows, 12))
        # per joint row: the world-table entry of the joint (-1: an identity row or a
        # joint outside the table), its skin's index, and IBM @ T(o)
        self._joint_entry = np.full(joint_rows, -1, np.int64)
        self._owner = np.zeros(joint_rows, np.int64)
        self._ibm = np.tile(np.eye(4), (joint_rows, 1, 1))
        self._skins = []  # (node, first row, joints, origin) for the inverses
        worlds = batch.world_matrices
        for s, (node, g, jb, ib) in enumerate(skins):
            skin = node.skin
            nj = len(skin.joints)
            t = np.eye(4)
            t[:3, 3] = g.origin
            self._ibm[jb:jb + nj] = skin.inverse_bind_matrices @ t
            self._joint_entry[jb:jb + nj] = [worlds.index(j) if j in worlds else -1
                                             for j in skin.joints]
            self._owner[jb:jb + nj + 1] = s
            self._skins.append((node, jb, nj, np.asarray(g.origin, np.float64)))
            rows = slice(ib, ib + g.vertex_count)
            jw = g.joints.shape[1]
            self.inf_joint[rows, :jw] = g.joints.astype(np.int32) + jb
            self.inf_weight[rows, :jw] = g.weights
            rigid = np.flatnonzero(g.weights.sum(axis=1) == 0)
            self.inf_joint[ib + rigid, 0] = jb + nj
            self.inf_weight[ib + rigid, 0] = 1.0
        self._hidden_joints = [(r, j) for node, jb, nj, _ in self._skins
                               for r, j in zip(range(jb, jb + nj), node.skin.joints)
                               if self._joint_entry[r] < 0]
        self._identity_rows = np.array([jb + nj for _, jb, nj, _ in self._skins], np.int64)
        self._node_entry = np.array([worlds.index(node) for node, _, _, _ in self._skins],
                                    np.int64)
        self._origins = np.array([o for _, _, _, o in self._skins]).reshape(-1, 3)
        self._morphs = []
        for node, g, mb, wb in morphs:
            t, n = g.morph_target_count, g.vertex_count
            d = self.deltas[mb:mb + n * t].reshape(n, t, DELTA_COLUMNS)
            if g.morph_positions is not None:
                d[:, :, 0:3] = g.morph_positions.transpose(1, 0, 2)
            if g.morph_normals is not None:
                d[:, :, 3:6] = g.morph_normals.transpose(1, 0, 2)
            if g.morph_tangents is not None:
                d[:, :, 6:9] = g.morph_tangents.transpose(1, 0, 2)
            self._morphs.append((node, wb, t))
        self._world = np.zeros((joint_rows, 4, 4))
        self.revision = 0  # bumped by every update: devices copy the per-frame arrays

    @property
    def skinned(self) -> bool:
        """Whether any drawn mesh is skinned (else only morph targets)."""
        return len(self.joints) > 0

    def update(self, batch):
        """This frame's joint matrices and morph weights (from the batch's world table,
        updated by ``batch.sync``). Raises ValueError naming a node whose morph weights
        are wrong."""
        for node, wb, t in self._morphs:
            self.weights[wb:wb + t] = effective_morph_weights(node)
        if self.skinned:
            self._update_joints(batch.world_matrices.world)
        self.revision += 1

    def _update_joints(self, world: np.ndarray):
        w = self._world
        live = self._joint_entry >= 0
        w[live] = world[self._joint_entry[live]]
        for r, joint in self._hidden_joints:  # a joint outside the drawn subtree
            w[r] = joint.world_matrix
        node_world = world[self._node_entry]
        det = np.linalg.det(node_world[:, :3, :3])
        ok = np.isfinite(det) & (np.abs(det) > 1e-300)
        # a zero-scale node's model matrix flattens its mesh whatever the inverse
        # (so such a skinned mesh is not drawn): any invertible stand-in will do
        node_world[~ok] = np.eye(4)
        inv = np.linalg.inv(node_world)
        inv[:, :3, 3] -= self._origins  # T(-o) @ inverse(W_node)
        m = inv[self._owner] @ (w @ self._ibm)
        m[self._identity_rows] = np.eye(4)
        self.joints[:] = m[:, :3, :].reshape(-1, 12)


def _key(batch, prims):
    return (prims.key, id(prims), id(batch.world_matrices))


#: The tables a vertex kernel takes, in its argument order.
KERNEL_TABLES = ("slots", "inf_joint", "inf_weight", "deltas", "weights", "joints")
_EMPTY: dict = {}


def kernel_tables(tables: DeformTables | None) -> dict:
    """name -> array of ``KERNEL_TABLES`` for a vertex kernel: ``tables``' arrays, or
    one-row stand-ins (shared, never written) for a frame without deformation."""
    if tables is not None:
        return {name: getattr(tables, name) for name in KERNEL_TABLES}
    if not _EMPTY:
        _EMPTY["slots"] = np.zeros((1, SLOT_COLUMNS), np.int64)
        _EMPTY["slots"][:, 1] = -1
        _EMPTY["inf_joint"] = np.zeros((1, 4), np.int32)
        _EMPTY["inf_weight"] = np.zeros((1, 4))
        _EMPTY["deltas"] = np.zeros((1, DELTA_COLUMNS), np.float32)
        _EMPTY["weights"] = np.zeros(1)
        _EMPTY["joints"] = np.zeros((1, 12))
    return _EMPTY


def deform_tables(batch, prims, cached: DeformTables | None) -> DeformTables:
    """The frame's DeformTables (``cached`` when still valid: built once per assembly),
    updated for this frame when it deforms anything (``nodes`` is empty otherwise)."""
    if cached is None or cached.key != _key(batch, prims):
        cached = DeformTables(batch, prims)
    if cached.nodes:
        cached.update(batch)
    return cached
