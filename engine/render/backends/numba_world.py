"""Numba twins of the batch's per-frame matrix work: the compiled fast path of
``engine.scene.world`` (world matrices of a subtree) and of ``engine.render.batch``'s
model and instance updates, for thousands of objects moved every frame.

Each kernel writes the NumPy reference's expressions in the same order, with separate
multiplies and adds (Numba contracts nothing into fused multiply-adds without
``fastmath``), so both paths give the same bits (tests/render/test_world_kernels.py):

- local ``T @ R @ S`` as ``engine.scene.transforms.trs_matrices``;
- products as ``engine.scene.world.product``: ``((a_i0 b_0j + a_i1 b_1j) + a_i2 b_2j)
  + a_i3 b_3j``;
- model matrices as ``engine.render.batch.rebase.model_matrices``;
- instance quaternions normalised as ``engine.scene.Instances.trs_rows``.

The kernels fuse what the NumPy path does in passes (one loop, no temporaries), which
is where their speed comes from. Imported only when Numba is installed.
"""

from __future__ import annotations

import numba
import numpy as np

from .kernel_cache import cached

_opts = {"cache": cached(), "boundscheck": False}


@numba.njit(inline="always", **_opts)
def _trs(v, out):
    """Local matrix of the row ``v`` = [p(3), q(4) unit, s(3)] into ``out`` (4, 4)."""
    x, y, z, w = v[3], v[4], v[5], v[6]
    sx, sy, sz = v[7], v[8], v[9]
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz, xw, yw, zw = x * y, x * z, y * z, x * w, y * w, z * w
    out[0, 0] = (1 - 2 * (yy + zz)) * sx
    out[0, 1] = 2 * (xy - zw) * sy
    out[0, 2] = 2 * (xz + yw) * sz
    out[0, 3] = v[0]
    out[1, 0] = 2 * (xy + zw) * sx
    out[1, 1] = (1 - 2 * (xx + zz)) * sy
    out[1, 2] = 2 * (yz - xw) * sz
    out[1, 3] = v[1]
    out[2, 0] = 2 * (xz - yw) * sx
    out[2, 1] = 2 * (yz + xw) * sy
    out[2, 2] = (1 - 2 * (xx + yy)) * sz
    out[2, 3] = v[2]
    out[3, 0] = 0.0
    out[3, 1] = 0.0
    out[3, 2] = 0.0
    out[3, 3] = 1.0


@numba.njit(inline="always", **_opts)
def _product(a, b, out):
    for i in range(4):
        a0, a1, a2, a3 = a[i, 0], a[i, 1], a[i, 2], a[i, 3]
        for j in range(4):
            out[i, j] = a0 * b[0, j] + a1 * b[1, j] + a2 * b[2, j] + a3 * b[3, j]


@numba.njit(inline="always", **_opts)
def _model(world, go, origin, out):
    """out (float32) = T(-origin) @ world @ T(go), in float64 until the cast."""
    for i in range(3):
        out[i, 0] = world[i, 0]
        out[i, 1] = world[i, 1]
        out[i, 2] = world[i, 2]
        t = world[i, 0] * go[0] + world[i, 1] * go[1] + world[i, 2] * go[2] + world[i, 3]
        out[i, 3] = t - origin[i]
    for j in range(4):
        out[3, j] = world[3, j]


@numba.njit(**_opts)
def update_worlds(m, rows, parent, seen, alive, trs, rev, world, changed):
    """``engine.scene.world.WorldMatrices``'s composition loop for entries 1..m-1
    (entry 0, the root, is set by the caller): an entry whose stamp changed or whose
    parent's world changed gets ``world[parent] @ T R S`` of its table row; ``changed``
    (zeros on entry) says which."""
    local = np.empty((4, 4))
    for i in range(1, m):
        if not alive[i]:
            continue
        r = rows[i]
        own = rev[r] != seen[i]
        if own:
            seen[i] = rev[r]
        p = parent[i]
        if own or changed[p]:
            _trs(trs[r], local)
            _product(world[p], local, world[i])
            changed[i] = True


@numba.njit(**_opts)
def write_models(slot_entry, slot_instance, dirty, changed, world, go, origin, everything,
                 model):
    """Model matrices of ordinary slots whose world changed (all with ``everything``).
    Returns (lo, hi) of the rows written (hi < lo: none)."""
    lo, hi = model.shape[0], -1
    for k in range(slot_entry.shape[0]):
        h = slot_entry[k]
        if h < 0 or slot_instance[k] >= 0:
            continue
        if not (everything or dirty[k] or changed[h]):
            continue
        _model(world[h], go[k], origin, model[k])
        lo = min(lo, k)
        hi = max(hi, k)
    return lo, hi


@numba.njit(**_opts)
def write_instances(pos, rot, scl, act, snap, snap_act, slots, node_world, go, origin,
                    everything, model):
    """Model matrices of the instances whose values changed since the snapshot
    (``snap`` rows, ``snap_act`` flags; all with ``everything``), which then takes them;
    inactive ones get zeros. Returns (lo, hi, bad): the rows written and the first
    instance with a non-finite value or a zero quaternion (-1: none)."""
    lo, hi = model.shape[0], -1
    v = np.empty(10)
    local = np.empty((4, 4))
    world = np.empty((4, 4))
    for i in range(pos.shape[0]):
        v[0], v[1], v[2] = pos[i, 0], pos[i, 1], pos[i, 2]
        v[3], v[4], v[5], v[6] = rot[i, 0], rot[i, 1], rot[i, 2], rot[i, 3]
        v[7], v[8], v[9] = scl[i, 0], scl[i, 1], scl[i, 2]
        if not everything and act[i] == snap_act[i]:
            same = True
            for c in range(10):
                if v[c] != snap[i, c]:
                    same = False
                    break
            if same:
                continue
        k = slots[i]
        if act[i]:
            for c in range(10):
                if not np.isfinite(v[c]):
                    return lo, hi, i
            n = np.sqrt(v[3] * v[3] + v[4] * v[4] + v[5] * v[5] + v[6] * v[6])
            if not (n >= 1e-12) or not np.isfinite(n):
                return lo, hi, i
            v[3], v[4], v[5], v[6] = v[3] / n, v[4] / n, v[5] / n, v[6] / n
            _trs(v, local)
            _product(node_world, local, world)
            _model(world, go, origin, model[k])
        else:
            for a in range(4):
                for b in range(4):
                    model[k, a, b] = 0.0
        for c in range(3):
            snap[i, c] = pos[i, c]
            snap[i, 7 + c] = scl[i, c]
        for c in range(4):
            snap[i, 3 + c] = rot[i, c]
        snap_act[i] = act[i]
        lo = min(lo, k)
        hi = max(hi, k)
    return lo, hi, -1
