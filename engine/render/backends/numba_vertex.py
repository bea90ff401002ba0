"""The surface vertex stage compiled by Numba: one pass over the vertices of the given
runs computes clip coordinates and, for shading, the varyings (the batch-frame position,
then every attribute of the layout by its space, engine.render.attributes), morphing
and skinning the vertices of deformed meshes first (engine.render.deform). Same maths,
in the same order, as ``engine.render.surface_vertices``.

Shaped for speed (issue 19's target: no slower than the same arithmetic written
inline in a ``prange`` loop; ``benchmarks/vertex_stage.py`` measures the ratio):

- the runs are cut into blocks of ``BLOCK`` vertices that Numba's threads take in
  parallel (below ``use_threads``'s measured size the serial twin runs);
- the per-slot matrices (VP @ M, M and the normal matrices) are made by a compiled
  pass into reused buffers, and nothing is converted or allocated per frame besides
  the small block table;
- the attribute layout is a compile-time constant (``_ROWS``), so the loop over its
  rows unrolls and each row's space is known to the compiler.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import literal_unroll

from ..attributes import VARYING_COUNT, layout_rows, packed_offset
from ..deform import kernel_tables
from .base import W_EPSILON, Projection
from .kernel_cache import cached
from .threads import call_twin

__all__ = ["BLOCK", "VertexBuffers", "surface_vertices_numba"]

_opts = {"cache": cached(), "boundscheck": False, "error_model": "numpy"}
#: Vertices per parallel work item.
BLOCK = 2048
_ROWS = tuple(tuple(int(v) for v in r) for r in layout_rows())
_NORMAL = packed_offset("normal")
_TANGENT = packed_offset("tangent")


def _slot_matrices_body(vp, model, mvp, m, nm):
    # per slot: M as float64, VP @ M (the reference's np.matmul order of products:
    # sum over j of vp[r, j] * M[j, c], j ascending) and the inverse transpose of M's
    # 3x3 part by its cofactors (zero when singular)
    for k in numba.prange(model.shape[0]):
        for r in range(4):
            for c in range(4):
                m[k, r, c] = np.float64(model[k, r, c])
        for r in range(4):
            for c in range(4):
                acc = vp[r, 0] * m[k, 0, c]
                for j in range(1, 4):
                    acc += vp[r, j] * m[k, j, c]
                mvp[k, r, c] = acc
        a00, a01, a02 = m[k, 0, 0], m[k, 0, 1], m[k, 0, 2]
        a10, a11, a12 = m[k, 1, 0], m[k, 1, 1], m[k, 1, 2]
        a20, a21, a22 = m[k, 2, 0], m[k, 2, 1], m[k, 2, 2]
        c00 = a11 * a22 - a12 * a21
        c01 = a12 * a20 - a10 * a22
        c02 = a10 * a21 - a11 * a20
        det = a00 * c00 + a01 * c01 + a02 * c02
        if abs(det) > 1e-300 and abs(det) < np.inf:
            inv = 1.0 / det
            nm[k, 0, 0], nm[k, 0, 1], nm[k, 0, 2] = c00 * inv, c01 * inv, c02 * inv
            nm[k, 1, 0] = (a02 * a21 - a01 * a22) * inv
            nm[k, 1, 1] = (a00 * a22 - a02 * a20) * inv
            nm[k, 1, 2] = (a01 * a20 - a00 * a21) * inv
            nm[k, 2, 0] = (a01 * a12 - a02 * a11) * inv
            nm[k, 2, 1] = (a02 * a10 - a00 * a12) * inv
            nm[k, 2, 2] = (a00 * a11 - a01 * a10) * inv
        else:
            for r in range(3):
                for c in range(3):
                    nm[k, r, c] = 0.0


_slot_matrices = numba.njit(parallel=True, **_opts)(_slot_matrices_body)


@numba.njit(inline="always")
def _point_span(p, lo, hi, c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23,
                c30, c31, c32, c33, clip, width, height, eps, xy, depth, visible):
    # clip space and window coordinates (_window's operations) with no branch in the
    # loop, so LLVM vectorises it (the general loop's branches cost a 10^6-point cloud
    # beside a mesh 36 ns a vertex instead of about 2); a second pass over the same
    # cached rows resets the vertices that are not visible, as _window does
    inf = np.inf
    for i in range(lo, hi):
        x, y, z = np.float64(p[i, 0]), np.float64(p[i, 1]), np.float64(p[i, 2])
        a0 = c00 * x + c01 * y + c02 * z + c03
        a1 = c10 * x + c11 * y + c12 * z + c13
        a2 = c20 * x + c21 * y + c22 * z + c23
        a3 = c30 * x + c31 * y + c32 * z + c33
        clip[i, 0], clip[i, 1], clip[i, 2], clip[i, 3] = a0, a1, a2, a3
        inv = 1.0 / a3
        xy[i, 0] = (a0 * inv * 0.5 + 0.5) * width
        xy[i, 1] = (0.5 - a1 * inv * 0.5) * height
        depth[i] = a2 * inv * 0.5 + 0.5
        visible[i] = ((a3 > eps) & (a3 < inf) & (abs(a0) <= a3) & (abs(a1) <= a3)
                      & (abs(a2) <= a3))
    for i in range(lo, hi):
        if not visible[i]:
            xy[i, 0] = 0.0
            xy[i, 1] = 0.0
            depth[i] = 1.0


@numba.njit(inline="always")
def _window(clip, i, width, height, eps, xy, depth, visible):
    # engine.render.backends.base.window_coordinates, one vertex
    x, y, z, w = clip[i, 0], clip[i, 1], clip[i, 2], clip[i, 3]
    ok = (w > eps) and (w < np.inf) and abs(x) <= w and abs(y) <= w and abs(z) <= w
    visible[i] = ok
    if ok:
        inv = 1.0 / w
        xy[i, 0] = (x * inv * 0.5 + 0.5) * width
        xy[i, 1] = (0.5 - y * inv * 0.5) * height
        depth[i] = z * inv * 0.5 + 0.5
    else:
        xy[i, 0] = 0.0
        xy[i, 1] = 0.0
        depth[i] = 1.0


def _vertices_body(p, blocks, runs, shaded, mvp, m, nm, attrs, shading, clip, vary, points,
                   width, height, eps, xy, depth, visible, deformed, slots, inf_joint,
                   inf_weight, deltas, weights, joints):
    # one block per work item; the block's loop is its own function: with it inline
    # (its ``continue`` statements in the unrolled layout loop) Numba found more than
    # one exit from the prange body and compiled a serial loop
    for b in numba.prange(blocks.shape[0]):
        _block(blocks[b, 0], blocks[b, 1], blocks[b, 2], p, runs, shaded, mvp, m, nm, attrs,
               shading, clip, vary, points, width, height, eps, xy, depth, visible, deformed,
               slots, inf_joint, inf_weight, deltas, weights, joints)


@numba.njit(**_opts)
def _block(lo, hi, r, p, runs, shaded, mvp, m, nm, attrs, shading, clip, vary, points, width,
           height, eps, xy, depth, visible, deformed, slots, inf_joint, inf_weight, deltas,
           weights, joints):
    k = runs[r, 2]
    shade = shading and shaded[r]
    first, sb, mb, nt, wb = 0, -1, 0, 0, 0
    if deformed:
        first, sb, mb, nt, wb = slots[k, 0], slots[k, 1], slots[k, 2], slots[k, 3], \
            slots[k, 4]
    # the slot's matrices in registers for the whole block
    c00, c01, c02, c03 = mvp[k, 0, 0], mvp[k, 0, 1], mvp[k, 0, 2], mvp[k, 0, 3]
    c10, c11, c12, c13 = mvp[k, 1, 0], mvp[k, 1, 1], mvp[k, 1, 2], mvp[k, 1, 3]
    c20, c21, c22, c23 = mvp[k, 2, 0], mvp[k, 2, 1], mvp[k, 2, 2], mvp[k, 2, 3]
    c30, c31, c32, c33 = mvp[k, 3, 0], mvp[k, 3, 1], mvp[k, 3, 2], mvp[k, 3, 3]
    m00, m01, m02, m03 = m[k, 0, 0], m[k, 0, 1], m[k, 0, 2], m[k, 0, 3]
    m10, m11, m12, m13 = m[k, 1, 0], m[k, 1, 1], m[k, 1, 2], m[k, 1, 3]
    m20, m21, m22, m23 = m[k, 2, 0], m[k, 2, 1], m[k, 2, 2], m[k, 2, 3]
    n00, n01, n02 = nm[k, 0, 0], nm[k, 0, 1], nm[k, 0, 2]
    n10, n11, n12 = nm[k, 1, 0], nm[k, 1, 1], nm[k, 1, 2]
    n20, n21, n22 = nm[k, 2, 0], nm[k, 2, 1], nm[k, 2, 2]
    # a tangent's handedness flips with a mirroring model matrix (attributes)
    mirror = -1.0 if (m00 * (m11 * m22 - m12 * m21) + m01 * (m12 * m20 - m10 * m22)
                      + m02 * (m10 * m21 - m11 * m20)) < 0 else 1.0
    if points and not shade and sb < 0 and nt == 0:  # a point cloud's block
        _point_span(p, lo, hi, c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23,
                    c30, c31, c32, c33, clip, width, height, eps, xy, depth, visible)
        return
    for i in range(lo, hi):
        x, y, z = np.float64(p[i, 0]), np.float64(p[i, 1]), np.float64(p[i, 2])
        # morphed normal (the "normal" attribute) and the skin's matrices
        q0 = q1 = q2 = g0 = g1 = g2 = 0.0
        if shade:
            q0, q1, q2 = attrs[i, _NORMAL], attrs[i, _NORMAL + 1], attrs[i, _NORMAL + 2]
            g0, g1, g2 = attrs[i, _TANGENT], attrs[i, _TANGENT + 1], attrs[i, _TANGENT + 2]
        hand = mirror
        s00 = s01 = s02 = s03 = s10 = s11 = s12 = s13 = s20 = s21 = s22 = s23 = 0.0
        skinned = sb >= 0
        if nt > 0:
            base = mb + (i - first) * nt
            for t in range(nt):
                w = weights[wb + t]
                x = x + w * np.float64(deltas[base + t, 0])
                y = y + w * np.float64(deltas[base + t, 1])
                z = z + w * np.float64(deltas[base + t, 2])
                q0 = q0 + w * np.float64(deltas[base + t, 3])
                q1 = q1 + w * np.float64(deltas[base + t, 4])
                q2 = q2 + w * np.float64(deltas[base + t, 5])
                g0 = g0 + w * np.float64(deltas[base + t, 6])
                g1 = g1 + w * np.float64(deltas[base + t, 7])
                g2 = g2 + w * np.float64(deltas[base + t, 8])
        if skinned:
            row = sb + (i - first)
            for c4 in range(0, inf_joint.shape[1], 4):  # sets of four: unrolled
                for c in range(c4, c4 + 4):
                    v = inf_weight[row, c]
                    j = inf_joint[row, c]
                    s00 += v * joints[j, 0]
                    s01 += v * joints[j, 1]
                    s02 += v * joints[j, 2]
                    s03 += v * joints[j, 3]
                    s10 += v * joints[j, 4]
                    s11 += v * joints[j, 5]
                    s12 += v * joints[j, 6]
                    s13 += v * joints[j, 7]
                    s20 += v * joints[j, 8]
                    s21 += v * joints[j, 9]
                    s22 += v * joints[j, 10]
                    s23 += v * joints[j, 11]
            x, y, z = (s00 * x + s01 * y + s02 * z + s03, s10 * x + s11 * y + s12 * z + s13,
                       s20 * x + s21 * y + s22 * z + s23)
        if skinned and shade:  # sign(det) x cofactors: the normal matrix of S
            t00 = s11 * s22 - s12 * s21
            t01 = s12 * s20 - s10 * s22
            t02 = s10 * s21 - s11 * s20
            det = s00 * t00 + s01 * t01 + s02 * t02
            sg = -1.0 if det < 0 else 1.0
            hand = mirror * sg
            if not (abs(det) > 0 and abs(det) < np.inf):
                sg = 0.0
            t00, t01, t02 = t00 * sg, t01 * sg, t02 * sg
            t10 = (s02 * s21 - s01 * s22) * sg
            t11 = (s00 * s22 - s02 * s20) * sg
            t12 = (s01 * s20 - s00 * s21) * sg
            t20 = (s01 * s12 - s02 * s11) * sg
            t21 = (s02 * s10 - s00 * s12) * sg
            t22 = (s00 * s11 - s01 * s10) * sg
        else:
            t00 = t01 = t02 = t10 = t11 = t12 = t20 = t21 = t22 = 0.0
        clip[i, 0] = c00 * x + c01 * y + c02 * z + c03
        clip[i, 1] = c10 * x + c11 * y + c12 * z + c13
        clip[i, 2] = c20 * x + c21 * y + c22 * z + c23
        clip[i, 3] = c30 * x + c31 * y + c32 * z + c33
        if points:
            _window(clip, i, width, height, eps, xy, depth, visible)
        if not shade:
            continue
        vary[i, 0] = m00 * x + m01 * y + m02 * z + m03
        vary[i, 1] = m10 * x + m11 * y + m12 * z + m13
        vary[i, 2] = m20 * x + m21 * y + m22 * z + m23
        for row_ in literal_unroll(_ROWS):
            src, dst, wid, space = row_
            if space == 2:  # none
                for c in range(wid):
                    vary[i, dst + c] = attrs[i, src + c]
                continue
            if src == _NORMAL:
                a, bb, cc = q0, q1, q2
            elif src == _TANGENT:
                a, bb, cc = g0, g1, g2
            else:
                a, bb, cc = attrs[i, src], attrs[i, src + 1], attrs[i, src + 2]
            if skinned:  # the skin's normal matrix or 3x3 part first
                if space == 0:
                    a, bb, cc = (t00 * a + t01 * bb + t02 * cc, t10 * a + t11 * bb + t12 * cc,
                                 t20 * a + t21 * bb + t22 * cc)
                else:
                    a, bb, cc = (s00 * a + s01 * bb + s02 * cc, s10 * a + s11 * bb + s12 * cc,
                                 s20 * a + s21 * bb + s22 * cc)
            if space == 0:  # normal: inverse transpose
                vx = n00 * a + n01 * bb + n02 * cc
                vy = n10 * a + n11 * bb + n12 * cc
                vz = n20 * a + n21 * bb + n22 * cc
            else:  # direction: the 3x3 part
                vx = m00 * a + m01 * bb + m02 * cc
                vy = m10 * a + m11 * bb + m12 * cc
                vz = m20 * a + m21 * bb + m22 * cc
            length = math.sqrt(vx * vx + vy * vy + vz * vz)
            if length > 0:
                vary[i, dst], vary[i, dst + 1], vary[i, dst + 2] = (vx / length, vy / length,
                                                                    vz / length)
            else:
                vary[i, dst] = vary[i, dst + 1] = vary[i, dst + 2] = 0.0
            if wid == 4:  # the handedness
                vary[i, dst + 3] = attrs[i, src + 3] * hand


_vertices_parallel = numba.njit(parallel=True, **_opts)(_vertices_body)
_vertices_serial = numba.njit(**_opts)(_vertices_body)


def blocks_of(runs: np.ndarray, block: int = BLOCK) -> np.ndarray:
    """(B, 3) int64 (start, stop, run) blocks of at most ``block`` vertices covering
    the runs, in order."""
    n = runs[:, 1] - runs[:, 0]
    count = np.maximum((n + block - 1) // block, 0)
    r = np.repeat(np.arange(len(runs), dtype=np.int64), count)
    first = np.repeat(np.cumsum(count) - count, count)
    lo = runs[r, 0] + (np.arange(len(r), dtype=np.int64) - first) * block
    return np.stack([lo, np.minimum(lo + block, runs[r, 1]), r], axis=1)


def surface_vertices_numba(positions, object_id, model, view_projection, attributes, runs,
                           with_shading=True, points=None, shaded=None, out=None,
                           deform=None):
    """Numba twin of ``engine.render.surface_vertices.surface_vertices`` (window
    coordinates of ``points`` in the same loop; ``deform``: the frame's
    engine.render.deform.DeformTables or None). ``out``: an optional VertexBuffers whose
    arrays are reused (nothing of the vertices' size is allocated per frame); rows of
    runs not transformed keep what they held."""
    from .numba_backend import use_threads

    n = len(positions)
    out = VertexBuffers() if out is None else out
    clip = out.clip(n)
    # one (N, V) row per vertex: the resolve reads every varying of the same three
    # vertices for each shaded pixel, so they share cache lines
    vary = out.varyings(n if with_shading else 0)
    mvp, m, nm = out.matrices(len(model))
    _slot_matrices(np.asarray(view_projection, np.float64),
                   model if model.dtype in (np.float32, np.float64) else model.astype(np.float64),
                   mvp, m, nm)
    if points is None:
        size, proj = (0, 0), out.no_points
    else:
        size, proj = points
    runs = np.ascontiguousarray(runs, np.int64)
    shaded = (np.ones(len(runs), np.bool_) if shaded is None
              else np.ascontiguousarray(shaded, np.bool_))
    attrs = attributes if with_shading else out.no_attributes
    d = kernel_tables(deform)
    call_twin(_vertices_parallel, _vertices_serial, use_threads(n),
              positions, blocks_of(runs), runs, shaded, mvp, m, nm, attrs, with_shading, clip,
              vary, points is not None, np.float64(size[0]), np.float64(size[1]),
              np.float64(W_EPSILON), proj.screen_xy, proj.depth, proj.visible,
              deform is not None, d["slots"], d["inf_joint"], d["inf_weight"], d["deltas"],
              d["weights"], d["joints"])
    return clip, (vary if with_shading else None)


class VertexBuffers:
    """The vertex stage's (N, 4) clip and (N, V) varyings arrays and the per-slot
    matrices, kept between frames and grown (by half again, never shrunk) when N or
    the slot count increases: a frame allocates nothing of the vertices' size."""

    def __init__(self):
        self._clip = np.empty((0, 4))
        self._vary = np.empty((0, VARYING_COUNT))
        self._mats = (np.empty((0, 4, 4)), np.empty((0, 4, 4)), np.empty((0, 3, 3)))
        self.no_points = Projection(np.zeros((0, 2), np.float32), np.zeros(0, np.float32),
                                    np.zeros(0, np.bool_))
        self.no_attributes = np.zeros((0, VARYING_COUNT - 3))

    # zeroed when grown (not per frame): rows no mesh writes (a point cloud's vertices
    # beside meshes) hold 0, not leftover memory that GL's float32 upload overflowed on
    def clip(self, n: int) -> np.ndarray:
        if len(self._clip) < n:
            self._clip = np.zeros((max(n, len(self._clip) * 3 // 2), 4))
        return self._clip[:n]

    def varyings(self, n: int) -> np.ndarray:
        if len(self._vary) < n:
            self._vary = np.zeros((max(n, len(self._vary) * 3 // 2), VARYING_COUNT))
        return self._vary[:n]

    def matrices(self, k: int):
        """(k, 4, 4) VP @ M, (k, 4, 4) M and (k, 3, 3) normal matrices, float64."""
        if len(self._mats[0]) < k:
            cap = max(k, len(self._mats[0]) * 3 // 2)
            self._mats = (np.empty((cap, 4, 4)), np.empty((cap, 4, 4)), np.empty((cap, 3, 3)))
        return tuple(a[:k] for a in self._mats)
