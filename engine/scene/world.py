"""World matrices: the one composition of local TRS transforms into local -> world
matrices, for one node or for every node of a subtree at once.

``compose_world(parent_world, trs)`` is the formula, ``parent_world @ T(p) @ R(q) @ S(s)``
(float64, column vectors), vectorised over K rows of the transform table's layout
(``engine.scene.transform_table``). Everything that needs a world matrix goes through it:
``Node.world_matrix`` (one node at a time, lazily along its parent chain),
``Instances.world_matrices``, ``Scene.bounds`` and ``WorldMatrices`` (a whole subtree
level by level: the renderer's batch, every frame). Each result row depends only on its
own inputs and is computed by the same NumPy calls whatever K, so a node's matrix is the
same to the bit whichever of them computed it (tests/scene/test_world.py checks it).

``WorldMatrices`` keeps a subtree as flat arrays (transform-table row, parent entry and
depth per entry, parents before children) and ``update()`` costs array operations only,
never a Python loop over nodes: one gather of the revision stamps finds the nodes whose
local transform changed, then each depth's changed entries (own stamp or parent world
changed) are composed in one ``compose_world`` call, shallowest first. A renderer may
hand it a compiled twin of that loop (one pass over the entries, no temporaries) that
writes the same expression and so gives the same bits.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .transform_table import TABLE
from .transforms import trs_matrices

__all__ = ["WorldMatrices", "compose_one", "compose_world", "product"]


def compose_world(parent_world: np.ndarray | None, trs: np.ndarray,
                  out: np.ndarray | None = None, local: np.ndarray | None = None) -> np.ndarray:
    """(K, 4, 4) float64 local -> world matrices ``parent_world @ T(p) @ R(q) @ S(s)``.

    Args:
        parent_world: (K, 4, 4) or (4, 4) float64 local -> world matrices of the parents,
            or None for nodes without a parent (the result is then the local matrix).
        trs: (K, 10) float64 rows ``[px py pz qx qy qz qw sx sy sz]``: translation in
            the parent frame, a *unit* quaternion (x, y, z, w), per-axis scale; used as
            given (the scene graph normalises and checks values when they are set).
        out, local: optional (K, 4, 4) float64 buffers for the result and for the local
            matrices (callers composing thousands of matrices every frame reuse them:
            fresh megabyte-sized arrays cost more in page faults than the arithmetic).
            ``out`` must not overlap ``parent_world`` or ``local``.

    Returns ``out`` (a new array without it). R(q) is the rotation matrix of a unit
    quaternion (Shoemake, "Animating rotation with quaternion curves", SIGGRAPH 1985);
    ``engine.scene.transforms.trs_matrices`` builds ``T @ R @ S``, ``product`` the
    matrix product in a fixed order. The buffers change where the result is written,
    never its bits.
    """
    trs = np.asarray(trs, np.float64)
    if len(trs) == 1 and out is None and local is None and (
            parent_world is None or parent_world.shape == (4, 4)):
        return compose_one(parent_world, trs[0].tolist())[None]
    local = trs_matrices(trs[:, 0:3], trs[:, 3:7], trs[:, 7:10], out=local)
    if parent_world is None:
        if out is None:
            return local
        out[...] = local
        return out
    return product(parent_world, local, out)


def compose_one(parent: np.ndarray | None, row: list) -> np.ndarray:
    """``compose_world(parent, [row])[0]`` for one node: (4, 4) float64 from a (4, 4)
    parent matrix (or None) and its 10 table values as Python floats. The same
    expressions as ``trs_matrices`` and ``product`` on Python floats (IEEE double, no
    fused multiply-add), so the same bits, without NumPy's per-call overhead: the
    single-node reads of ``Node.world_matrix``."""
    px, py, pz, x, y, z, w, sx, sy, sz = row
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz, xw, yw, zw = x * y, x * z, y * z, x * w, y * w, z * w
    l00, l01, l02 = (1 - 2 * (yy + zz)) * sx, 2 * (xy - zw) * sy, 2 * (xz + yw) * sz
    l10, l11, l12 = 2 * (xy + zw) * sx, (1 - 2 * (xx + zz)) * sy, 2 * (yz - xw) * sz
    l20, l21, l22 = 2 * (xz - yw) * sx, 2 * (yz + xw) * sy, (1 - 2 * (xx + yy)) * sz
    if parent is None:
        return np.array(((l00, l01, l02, px), (l10, l11, l12, py), (l20, l21, l22, pz),
                         (0.0, 0.0, 0.0, 1.0)))
    rows = []
    for a0, a1, a2, a3 in parent.tolist():  # local row 3 is (0, 0, 0, 1)
        rows.append((a0 * l00 + a1 * l10 + a2 * l20 + a3 * 0.0,
                     a0 * l01 + a1 * l11 + a2 * l21 + a3 * 0.0,
                     a0 * l02 + a1 * l12 + a2 * l22 + a3 * 0.0,
                     a0 * px + a1 * py + a2 * pz + a3 * 1.0))
    return np.array(rows)


def product(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``a @ b`` for (..., 4, 4) float64 stacks (broadcast), every entry summed in the
    order ``((a_i0 b_0j + a_i1 b_1j) + a_i2 b_2j) + a_i3 b_3j`` with separate multiplies
    and adds (no BLAS, no fused multiply-add): the same bits for any stack size, and a
    compiled twin that writes the same expression reproduces them exactly
    (``engine.render.backends.numba_world``)."""
    shape = np.broadcast_shapes(a.shape, b.shape)
    out = np.empty(shape) if out is None else out
    tmp = np.empty(shape)
    np.multiply(a[..., :, 0:1], b[..., 0:1, :], out=out)
    for k in range(1, 4):
        np.multiply(a[..., :, k:k + 1], b[..., k:k + 1, :], out=tmp)
        out += tmp
    return out


class WorldMatrices:
    """The world matrices of chosen nodes of the subtree under ``root``, kept up to
    date by ``update()`` in vectorised passes.

    Entries are numbered in the order nodes are added; entry 0 is ``root``, whose world
    matrix is read from the scene graph (``root.world_matrix``, so ``root`` may sit
    anywhere in a larger tree). Every other node must be added after its parent.
    A node's parent is read when it is added: after reparenting a node, ``discard`` it
    and ``add`` it again (its subtree too). Removed entries stay as dead holes until
    the owner builds a new ``WorldMatrices`` (``dead`` says how many).

    ``kernel``, when given, is a compiled twin of the NumPy composition loop of
    ``update``: called as ``kernel(m, rows, parent, seen, alive, table_trs, table_rev,
    world, changed)`` for entries 1..m-1 in entry order (parents first), it must
    compose each changed entry with exactly ``compose_world``'s expression, so both give
    the same bits (``engine.render.backends.numba_world.update_worlds``; tests compare
    them). The scene imports no compiler: renderers pass it in.

    Attributes:
        root: the subtree's root node.
        dead: number of removed entries.
        kernel: the compiled twin in use, or None (NumPy).
    """

    def __init__(self, root, capacity: int = 64, kernel=None):
        self.root = root
        self.kernel = kernel
        capacity = max(int(capacity), 1)
        self._nodes: list = []
        self._index: dict = {}
        self._rows = np.zeros(capacity, np.int64)
        self._parent = np.full(capacity, -1, np.int64)
        self._level = np.zeros(capacity, np.int64)
        self._seen = np.full(capacity, -1, np.int64)  # stamp the world was composed at
        self._alive = np.zeros(capacity, bool)
        self._world = np.zeros((capacity, 4, 4))
        self._scratch = (np.zeros((0, 10)), np.zeros((0, 4, 4)), np.zeros((0, 4, 4)),
                         np.zeros((0, 4, 4)))  # trs, parent world, local, result
        self._levels: list[np.ndarray] | None = None
        self.dead = 0
        self.add(root)

    def __len__(self) -> int:
        """Entries, dead ones included (the length of ``world`` and of ``update()``)."""
        return len(self._nodes)

    def __contains__(self, node) -> bool:
        return node in self._index

    def index(self, node) -> int:
        """The entry of ``node``. Raises KeyError when it was not added (or removed)."""
        try:
            return self._index[node]
        except KeyError:
            raise KeyError(f"{node.name!r} is not in these world matrices") from None

    @property
    def world(self) -> np.ndarray:
        """(len, 4, 4) float64 local -> world matrix of each entry as of the last
        ``update()`` (dead entries: stale values). A view: do not modify."""
        return self._world[: len(self._nodes)]

    def add(self, node) -> int:
        """Append ``node`` (its parent must already be an entry, unless it is ``root``)
        and return its entry; its world matrix is composed on the next ``update()``.
        Raises KeyError when the parent is missing."""
        i = len(self._nodes)
        if i == len(self._rows):
            self._grow(2 * i)
        parent = -1 if node is self.root else self.index(node.parent)
        self._nodes.append(node)
        self._index[node] = i
        self._rows[i] = node._row
        self._parent[i] = parent
        self._level[i] = 0 if parent < 0 else self._level[parent] + 1
        self._seen[i] = -1
        self._alive[i] = True
        self._levels = None
        return i

    def extend(self, nodes: Iterable) -> None:
        """``add`` each node in order (e.g. ``top.traverse(visible_only=True)``)."""
        for node in nodes:
            self.add(node)

    def discard(self, node) -> None:
        """Remove ``node``'s entry if it has one (its index becomes a dead hole)."""
        i = self._index.pop(node, None)
        if i is not None:
            self._alive[i] = False
            self._nodes[i] = None
            self.dead += 1
            self._levels = None

    def _grow(self, capacity: int):
        n = len(self._nodes)
        for name in ("_rows", "_parent", "_level", "_seen", "_alive", "_world"):
            old = getattr(self, name)
            new = np.zeros((capacity,) + old.shape[1:], old.dtype)
            new[:n] = old[:n]
            setattr(self, name, new)

    def _level_groups(self) -> list[np.ndarray]:
        """Live non-root entries grouped by depth, shallowest first."""
        if self._levels is None:
            alive = np.flatnonzero(self._alive[: len(self._nodes)])
            alive = alive[self._level[alive] > 0]
            lv = self._level[alive]
            order = np.argsort(lv, kind="stable")
            alive, lv = alive[order], lv[order]
            self._levels = np.split(alive, np.flatnonzero(np.diff(lv)) + 1) if len(alive) \
                else []
        return self._levels

    def update(self) -> np.ndarray:
        """Recompose the world matrices that changed since the last call: an entry's
        own local transform was set (its transform-table stamp changed), an ancestor's
        did, or it is new. Returns (len,) bool: which entries' ``world`` changed
        (False for dead entries)."""
        m = len(self._nodes)
        changed = np.zeros(m, bool)
        root_world = self.root.world_matrix
        if self._seen[0] < 0 or not np.array_equal(root_world, self._world[0]):
            self._world[0] = root_world
            self._seen[0] = 0
            changed[0] = True
        if m == 1:
            return changed
        if self.kernel is not None:
            self.kernel(m, self._rows, self._parent, self._seen, self._alive, TABLE.trs,
                        TABLE.rev, self._world, changed)
            return changed
        rows = self._rows[:m]
        rev = TABLE.rev[rows]
        own = (rev != self._seen[:m]) & self._alive[:m]
        own[0] = False
        self._seen[:m][own] = rev[own]
        changed |= own
        if not changed.any():
            return changed
        world, parent = self._world, self._parent
        for group in self._level_groups():
            todo = changed[group] | changed[parent[group]]
            if not todo.any():
                continue
            sel = group[todo]
            changed[sel] = True
            trs, par, local, out = self._buffers(len(sel))
            np.take(TABLE.trs, rows[sel], axis=0, out=trs, mode="clip")  # "raise" buffers
            p = parent[sel]
            if p[0] == p[-1] and (p == p[0]).all():
                par = world[p[0]]  # one parent (children of the root): broadcast, no gather
            else:
                np.take(world, p, axis=0, out=par, mode="clip")
            world[sel] = compose_world(par, trs, out=out, local=local)
        return changed

    def _buffers(self, n: int):
        """Views of ``n`` rows of the reused buffers (grown x1.5 when too small)."""
        if len(self._scratch[0]) < n:
            cap = max(n, len(self._scratch[0]) * 3 // 2)
            self._scratch = (np.zeros((cap, 10)),) + tuple(np.zeros((cap, 4, 4))
                                                           for _ in range(3))
        return tuple(b[:n] for b in self._scratch)
