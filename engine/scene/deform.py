"""Vertex deformation data of meshes: skins (linear blend skinning) and morph targets,
and the host evaluation of a deformed node's vertices.

The formulas are glTF 2.0's (sections 3.7.2.2 "Morph Targets" and 3.7.3 "Skins"). For
a vertex with local position p, normal n, morph target deltas (dp_t, dn_t) and
weights w_t, and skin influences (joint j_i, weight v_i)::

    p_m = p + sum_t w_t dp_t                       n_m = n + sum_t w_t dn_t
    S   = sum_i v_i J[j_i]                         J[j] = W_joint[j] @ IBM[j]
    p_world = S @ (p_m, 1)                         n_world = normalize(N_S n_m)

with W_joint[j] the joint node's local -> world matrix, IBM[j] its inverse bind matrix
and N_S = inverse(S[:3, :3]).T, the normal matrix of the blended transform (computed as
its cofactor matrix times the sign of its determinant: the length does not matter, the
normal is renormalised; zero when S is singular). For rigid joints it is S's 3x3 part.
A skinned mesh node's own transform is ignored (3.7.3.3: the joints place the mesh);
an unskinned (morphed) node's vertices go through its world matrix as usual. Weights
are normalised to sum 1 when they do not; a vertex whose weights are all zero is not
skinned (it stays where the mesh node's transform puts it). The renderer evaluates the
same formulas in its vertex stage (``engine.render.deform``); ``posed_vertices`` here
is the host evaluation for exact ray casts, bounds and tests.

Data layout::

    Skin                  joints: list of Node (J), inverse_bind_matrices (J, 4, 4)
                          float64, set on the mesh's node as ``node.skin``
    Mesh.joints           (N, 4 S) uint16 joint indices into ``skin.joints`` (S sets of
                          glTF JOINTS_n side by side)
    Mesh.weights          (N, 4 S) float64 weights, normalised rows (WEIGHTS_n)
    Mesh.morph_positions  (T, N, 3) float32 position deltas of T targets (or None)
    Mesh.morph_normals    (T, N, 3) float32 normal deltas (or None)
    Mesh.morph_tangents   (T, N, 3) float32 tangent deltas (kept; the attribute layout
                          has no tangent yet, so nothing draws them)
    Mesh.morph_weights    (T,) float64 default weights (glTF ``mesh.weights``)
    Node.morph_weights    (T,) float64 or None: overrides the mesh's (glTF
                          ``node.weights``); animation ``weights`` channels write it
"""

from __future__ import annotations

import numpy as np

__all__ = ["Skin", "effective_morph_weights", "is_deformed", "joint_matrices",
           "normal_matrices3", "normalized_influences", "posed_vertices", "rig_chain"]


class Skin:
    """The joints of a skinned mesh and their inverse bind matrices (glTF ``skins``).

    Args:
        joints: sequence of Node (J >= 1): joint j of ``Mesh.joints`` is ``joints[j]``.
        inverse_bind_matrices: (J, 4, 4) float, model frame -> joint j's bind frame;
            default identities (the glTF default).
        name: label.

    Raises:
        ValueError: no joints, a matrix array of the wrong shape, non-finite values, or
            a last row that is not (0, 0, 0, 1).
        TypeError: a joint that is not a Node.
    """

    def __init__(self, joints, inverse_bind_matrices=None, name: str = "skin"):
        from .graph import Node

        self.joints = list(joints)
        if not self.joints:
            raise ValueError(f"skin {name!r}: needs at least one joint")
        for j in self.joints:
            if not isinstance(j, Node):
                raise TypeError(f"skin {name!r}: joints must be Nodes, got {type(j).__name__}")
        n = len(self.joints)
        m = (np.tile(np.eye(4), (n, 1, 1)) if inverse_bind_matrices is None
             else np.array(inverse_bind_matrices, np.float64))
        if m.shape != (n, 4, 4):
            raise ValueError(f"skin {name!r}: inverse_bind_matrices must have shape "
                             f"({n}, 4, 4) for {n} joints, got {m.shape}")
        if not np.all(np.isfinite(m)):
            raise ValueError(f"skin {name!r}: inverse_bind_matrices must be finite")
        if not np.allclose(m[:, 3], [0.0, 0.0, 0.0, 1.0], atol=1e-6):
            bad = int(np.argmax(~np.all(np.isclose(m[:, 3], [0, 0, 0, 1], atol=1e-6), 1)))
            raise ValueError(f"skin {name!r}: inverse bind matrix {bad} is not affine (its "
                             "last row is not 0, 0, 0, 1)")
        m[:, 3] = (0.0, 0.0, 0.0, 1.0)
        self.inverse_bind_matrices = m
        self.name = str(name)

    def __repr__(self) -> str:
        return f"Skin({self.name!r}, {len(self.joints)} joints)"


def normalized_influences(joint_sets, weight_sets, joint_count: int, where: str = "mesh"):
    """(joints (N, 4 S) uint16, weights (N, 4 S) float64) from S glTF JOINTS_n /
    WEIGHTS_n pairs: each (N, 4) array (unsigned byte/short joints; float or normalized
    weights already mapped to [0, 1]). Rows whose weights do not sum to 1 are divided
    by their sum (all-zero rows stay zero: not skinned).

    Raises ValueError (naming ``where``) for unequal set counts or shapes, a joint index
    >= ``joint_count`` with a non-zero weight, or negative / non-finite weights."""
    if len(joint_sets) != len(weight_sets) or not joint_sets:
        raise ValueError(f"{where}: {len(joint_sets)} JOINTS sets but {len(weight_sets)} "
                         "WEIGHTS sets (they come in pairs)")
    j = np.concatenate([np.asarray(a) for a in joint_sets], axis=1)
    w = np.concatenate([np.asarray(a, np.float64) for a in weight_sets], axis=1)
    if j.shape != w.shape or j.ndim != 2:
        raise ValueError(f"{where}: joints {j.shape} and weights {w.shape} differ in shape")
    if not np.all(np.isfinite(w)) or (w < 0).any():
        raise ValueError(f"{where}: skin weights must be finite and >= 0")
    if np.issubdtype(j.dtype, np.floating) and not np.array_equal(j, np.floor(j)):
        raise ValueError(f"{where}: joint indices must be integers")
    j = j.astype(np.int64)
    used = w > 0
    if (j[used] >= joint_count).any() or (j < 0).any():
        bad = int(j[used].max()) if (j[used] >= joint_count).any() else int(j.min())
        raise ValueError(f"{where}: joint index {bad} is out of range for a skin of "
                         f"{joint_count} joints")
    j = np.where(used, j, 0)
    total = w.sum(axis=1, keepdims=True)
    w = np.where(total > 0, w / np.where(total > 0, total, 1.0), 0.0)
    return j.astype(np.uint16), w


def is_deformed(node) -> bool:
    """True when ``node``'s geometry is skinned (``node.skin`` and Mesh joints) or has
    morph targets."""
    g = node.geometry
    if g is None:
        return False
    skinned = getattr(node, "skin", None) is not None and getattr(g, "joints", None) is not None
    return skinned or getattr(g, "morph_positions", None) is not None \
        or getattr(g, "morph_normals", None) is not None \
        or getattr(g, "morph_tangents", None) is not None


def effective_morph_weights(node) -> np.ndarray:
    """(T,) float64 morph weights of ``node``'s mesh: ``node.morph_weights`` when set,
    else the mesh's defaults. Raises ValueError naming the node for a wrong length or
    non-finite values."""
    g = node.geometry
    t = g.morph_target_count
    w = getattr(node, "morph_weights", None)
    if w is None:
        return g.morph_weights
    w = np.asarray(w, np.float64).reshape(-1)
    if w.shape != (t,) or not np.all(np.isfinite(w)):
        raise ValueError(f"node {node.name!r}: morph_weights must be {t} finite numbers "
                         f"(one per morph target), got {np.asarray(w).tolist()!r}")
    return w


def joint_matrices(skin: Skin, node_world: np.ndarray, joint_worlds=None,
                   origin=None) -> np.ndarray:
    """(J, 4, 4) float64 skinning matrices in the mesh node's local frame:
    ``T(-o) @ inverse(node_world) @ W_joint @ IBM @ T(o)``, so that the
    node's world matrix (which the renderer applies after them, its geometry
    ``origin`` o composed in) cancels: the skinned vertices land where the joints put
    them whatever the node's own transform. ``joint_worlds``: (J, 4, 4) world matrices
    of the joints (default: read from the nodes). Used for one skin on the host; the
    renderer computes every skin's at once (``engine.render.deform``)."""
    if joint_worlds is None:
        joint_worlds = np.stack([j.world_matrix for j in skin.joints])
    inv = _inverse_or_identity(np.asarray(node_world, np.float64))
    t = np.eye(4)
    o = np.zeros(3) if origin is None else np.asarray(origin, np.float64)
    t[:3, 3] = o
    t_inv = np.eye(4)
    t_inv[:3, 3] = -o
    return (t_inv @ inv) @ (np.asarray(joint_worlds, np.float64)
                            @ skin.inverse_bind_matrices) @ t


def _inverse_or_identity(m: np.ndarray) -> np.ndarray:
    det = np.linalg.det(m[:3, :3])
    if not (np.isfinite(det) and abs(det) > 1e-300):
        return np.eye(4)
    return np.linalg.inv(m)


def normal_matrices3(a: np.ndarray) -> np.ndarray:
    """(K, 3, 3) float64 inverse transposes of (K, 3, 3) matrices by the cofactor
    formula (inverse(A).T = cofactor(A) / det A); zero where det A is 0 or not finite."""
    a = np.asarray(a, np.float64)
    c = np.empty_like(a)
    c[:, 0, 0] = a[:, 1, 1] * a[:, 2, 2] - a[:, 1, 2] * a[:, 2, 1]
    c[:, 0, 1] = a[:, 1, 2] * a[:, 2, 0] - a[:, 1, 0] * a[:, 2, 2]
    c[:, 0, 2] = a[:, 1, 0] * a[:, 2, 1] - a[:, 1, 1] * a[:, 2, 0]
    c[:, 1, 0] = a[:, 0, 2] * a[:, 2, 1] - a[:, 0, 1] * a[:, 2, 2]
    c[:, 1, 1] = a[:, 0, 0] * a[:, 2, 2] - a[:, 0, 2] * a[:, 2, 0]
    c[:, 1, 2] = a[:, 0, 1] * a[:, 2, 0] - a[:, 0, 0] * a[:, 2, 1]
    c[:, 2, 0] = a[:, 0, 1] * a[:, 1, 2] - a[:, 0, 2] * a[:, 1, 1]
    c[:, 2, 1] = a[:, 0, 2] * a[:, 1, 0] - a[:, 0, 0] * a[:, 1, 2]
    c[:, 2, 2] = a[:, 0, 0] * a[:, 1, 1] - a[:, 0, 1] * a[:, 1, 0]
    det = a[:, 0, 0] * c[:, 0, 0] + a[:, 0, 1] * c[:, 0, 1] + a[:, 0, 2] * c[:, 0, 2]
    ok = np.isfinite(det) & (np.abs(det) > 1e-300)
    inv = 1.0 / np.where(ok, det, 1.0)
    return np.where(ok[:, None, None], c * inv[:, None, None], 0.0)


def posed_vertices(node, frame: str = "world") -> tuple[np.ndarray, np.ndarray | None]:
    """The deformed vertices of ``node``'s mesh as the renderer draws them now (its
    current joint poses and morph weights), evaluated on the host in NumPy.

    Args:
        node: a Node with a Mesh (deformed or not).
        frame: "world" (default) or "local" (the node's local frame: for a skinned mesh
            the world positions mapped back through the inverse of the node's world
            matrix).

    Returns (positions (N, 3) float64, normals (N, 3) float64 unit or None without
    normals). Raises ValueError for an unknown frame or bad morph weights.
    """
    if frame not in ("world", "local"):
        raise ValueError(f"frame must be 'world' or 'local', got {frame!r}")
    g = node.geometry
    p = np.asarray(g.positions, np.float64) + g.origin
    normals = getattr(g, "vertex_normals", None)
    n = None if normals is None else np.asarray(normals(), np.float64)
    if getattr(g, "morph_target_count", 0):
        w = effective_morph_weights(node)
        if g.morph_positions is not None:
            p = p + np.einsum("t,tnc->nc", w, g.morph_positions.astype(np.float64))
        if n is not None and g.morph_normals is not None:
            n = n + np.einsum("t,tnc->nc", w, g.morph_normals.astype(np.float64))
    world = node.world_matrix
    skin = getattr(node, "skin", None)
    if skin is not None and g.joints is not None:
        m = joint_matrices(skin, world)
        wts = g.weights
        s = np.einsum("ni,nirc->nrc", wts, m[g.joints.astype(np.int64)])
        rigid = wts.sum(axis=1) == 0  # all-zero weights: not skinned
        s[rigid] = np.eye(4)
        sn = normal_matrices3(s[:, :3, :3])
        p = np.einsum("nrc,nc->nr", s[:, :3, :3], p) + s[:, :3, 3]
        if n is not None:
            n = np.einsum("nrc,nc->nr", sn, n)
    if frame == "world":
        p = p @ world[:3, :3].T + world[:3, 3]
        if n is not None:
            n = n @ normal_matrices3(world[None, :3, :3])[0].T
    if n is not None:
        length = np.linalg.norm(n, axis=1, keepdims=True)
        n = np.where(length > 0, n / np.where(length > 0, length, 1.0), 0.0)
    return p, n


def rig_chain(mesh, bones: int = 3, name: str = "rig"):
    """A mesh rigged along its Y axis with a chain of ``bones`` joints, for characters
    built in code (tails, tentacles, a swaying figure): returns ``(root, joints)``, a
    root Node holding joint 0 (joint i + 1 a child of joint i) and a node drawing a
    skinned copy of ``mesh`` (same positions, faces, normals, colours, uvs, material).

    Joint i stands at y_i = y_min + i L (L = (y_max - y_min) / bones, the mesh's extent
    along Y split evenly; joint i's local position is (0, L, 0) for i > 0, (0, y_min, 0)
    for joint 0), with inverse bind matrix T(0, -y_i, 0). A vertex at height y, with
    u = (y - y_min) / L - 0.5 clamped to [0, bones - 1], has weight 1 - frac(u) on joint
    floor(u) and frac(u) on the next: the skin bends smoothly between bone centres.
    Rotate the joints (a clip's rotation tracks, or their ``rotation``) to bend it.

    Raises:
        ValueError: bones < 1, or a mesh with no extent along Y.
    """
    from .geometry import Mesh
    from .graph import Node

    b = int(bones)
    if b < 1:
        raise ValueError(f"bones must be >= 1, got {bones}")
    y = mesh.positions[:, 1].astype(np.float64) + float(mesh.origin[1])
    lo, hi = float(y.min()), float(y.max())
    if not hi > lo:
        raise ValueError("rig_chain: the mesh has no extent along Y to place bones on")
    length = (hi - lo) / b
    u = np.clip((y - lo) / length - 0.5, 0.0, b - 1)
    first = np.minimum(np.floor(u).astype(np.int64), max(b - 2, 0))
    frac = u - first
    joints = np.zeros((len(y), 4), np.uint16)
    weights = np.zeros((len(y), 4))
    joints[:, 0], weights[:, 0] = first, 1.0 - frac
    if b > 1:
        joints[:, 1], weights[:, 1] = first + 1, frac
    root = Node(name)
    chain = [root.add(Node(f"{name} joint 0", position=(0.0, lo, 0.0)))]
    for i in range(1, b):
        chain.append(chain[-1].add(Node(f"{name} joint {i}", position=(0.0, length, 0.0))))
    ibm = np.tile(np.eye(4), (b, 1, 1))
    ibm[:, 1, 3] = -(lo + length * np.arange(b))
    skinned = Mesh(np.asarray(mesh.positions) + mesh.origin, mesh.faces, colors=mesh.colors,
                   normals=mesh.normals, uvs=mesh.uvs, material=mesh.material,
                   joints=joints, weights=weights)
    node = root.add(Node(f"{name} mesh", geometry=skinned))
    node.skin = Skin(chain, ibm, name=name)
    return root, chain
