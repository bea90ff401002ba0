"""Numba kernels of the batch's per-frame transform update (``engine.render.batch``).

The batch keeps the visible hierarchy as flat arrays in topological order (a parent's
index is below its children's), so one sequential pass computes, for every node whose
local transform stamp changed, its local matrix ``T @ R @ S`` from the scene graph's
transform table, and for every node whose own or parent's world matrix changed, its
world matrix. Two more passes write the float32 model matrices
``T(-origin) @ world @ T(geometry origin)`` of the slots that need them, for ordinary
nodes and for the instances of an Instances node (comparing each instance's values with
what was drawn last). Everything is float64 until the final cast, as in the NumPy
reference in ``batch.py``; the two agree to rounding (tests compare them).

Imported only when Numba is installed (the batch falls back to its NumPy path).
"""

from __future__ import annotations

import numba
import numpy as np

_opts = {"cache": True, "boundscheck": False}


@numba.njit(inline="always", **_opts)
def _trs(v, out):
    """Local matrix of table row ``v`` = [p(3), q(4) unit, s(3)] into ``out`` (4, 4)."""
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
def _mul(a, b, out):
    for i in range(4):
        a0, a1, a2, a3 = a[i, 0], a[i, 1], a[i, 2], a[i, 3]
        for j in range(4):
            out[i, j] = a0 * b[0, j] + a1 * b[1, j] + a2 * b[2, j] + a3 * b[3, j]


@numba.njit(inline="always", **_opts)
def _model(world, go, origin, out):
    """out (float32) = T(-origin) @ world @ T(go), every sum in float64 before the cast
    (origins are georeferenced magnitudes: float32 partial sums would lose the offset)."""
    t3 = world[3, 0] * go[0] + world[3, 1] * go[1] + world[3, 2] * go[2] + world[3, 3]
    for i in range(4):
        t = world[i, 0] * go[0] + world[i, 1] * go[1] + world[i, 2] * go[2] + world[i, 3]
        o = origin[i] if i < 3 else 0.0
        out[i, 0] = world[i, 0] - o * world[3, 0]
        out[i, 1] = world[i, 1] - o * world[3, 1]
        out[i, 2] = world[i, 2] - o * world[3, 2]
        out[i, 3] = t - o * t3


@numba.njit(**_opts)
def update_hierarchy(m, rows, parent, seen, alive, trs, rev, local, world, wch):
    """Entries 1..m-1 (entry 0, the root, is set by the caller): local matrices of the
    changed stamps, world matrices where the node or its parent changed; ``wch`` says
    which worlds changed. Returns how many locals were recomputed."""
    count = 0
    for i in range(1, m):
        if not alive[i]:
            wch[i] = False
            continue
        r = rows[i]
        changed = rev[r] != seen[i]
        if changed:
            seen[i] = rev[r]
            _trs(trs[r], local[i])
            count += 1
        p = parent[i]
        if changed or wch[p]:
            _mul(world[p], local[i], world[i])
            wch[i] = True
        else:
            wch[i] = False
    return count


@numba.njit(**_opts)
def write_models(slot_h, slot_inst, dirty, wch, world, go, origin, rebase, model):
    """Model matrices of ordinary slots whose world changed (all with ``rebase``).
    Returns (lo, hi) of the rows written (hi < lo: none)."""
    lo, hi = model.shape[0], -1
    for k in range(slot_h.shape[0]):
        h = slot_h[k]
        if h < 0 or slot_inst[k] >= 0:
            continue
        if not (rebase or dirty[k] or wch[h]):
            continue
        _model(world[h], go[k], origin, model[k])
        lo = min(lo, k)
        hi = max(hi, k)
    return lo, hi


@numba.njit(**_opts)
def write_instances(pos, rot, scl, act, snap, snap_act, slots, node_world, go, origin,
                    everything, model):
    """Model matrices of the instances whose values changed since ``snap`` (all with
    ``everything``); inactive ones get zeros. Returns (lo, hi, bad): the rows written
    and the first instance with a non-finite value or a zero quaternion (-1: none)."""
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
            _mul(node_world, local, world)
            _model(world, go, origin, model[k])
        else:
            for a in range(4):
                for b in range(4):
                    model[k, a, b] = 0.0
        snap[i, 0], snap[i, 1], snap[i, 2] = pos[i, 0], pos[i, 1], pos[i, 2]
        snap[i, 3], snap[i, 4], snap[i, 5], snap[i, 6] = rot[i, 0], rot[i, 1], rot[i, 2], \
            rot[i, 3]
        snap[i, 7], snap[i, 8], snap[i, 9] = scl[i, 0], scl[i, 1], scl[i, 2]
        snap_act[i] = act[i]
        lo = min(lo, k)
        hi = max(hi, k)
    return lo, hi, -1
