"""The vertex stage for surfaces (NumPy reference): every vertex's clip-space position
and its varyings (engine.render.attributes), for the object slot k of the vertex::

    clip      = VP @ M[k] @ (p, 1)                     (N, 4) float64
    varyings  (N, V) float64: position = M[k] @ (p, 1) in the batch frame, then each
              attribute of the layout carried by its space:
              normal     normalize(inverse(M[k][:3, :3]).T @ n)
              direction  normalize(M[k][:3, :3] @ t); a fourth component (the
                         tangent's handedness) times sign(det M[k][:3, :3])
              none       as packed

M is the batch's model matrix (world relative to the batch origin) and VP its
view-projection. Vertices of a deformed mesh (``deform``: engine.render.deform's tables)
are morphed and skinned in their local frame first (position, the "normal" and
"tangent" attributes, direction-space attributes), by that module's formulas, in this fixed order. A slot whose 3x3 part is singular (a zero scale, or the all-zero null
slot of free vertices) gives zero normals. Non-finite positions stay non-finite (setup
culls their triangles). The Numba twin is ``engine.render.backends.numba_vertex``, the
CUDA one ``shaders/surface_vertices.cu``: the same operations in the same order, so the
three agree bit for bit.
"""

from __future__ import annotations

import numpy as np

from ..scene.deform import normal_matrices3
from .attributes import VARYING_COUNT, layout_rows, packed_offset
from .backends.base import window_coordinates

__all__ = ["deformed_run", "mvp_matrices", "normal_matrices", "skin_normal_matrices",
           "surface_vertices"]


def normal_matrices(model):
    """(K, 4, 4) model matrices -> (K, 3, 3) float64 inverse transposes of their 3x3
    parts by their cofactors (engine.scene.deform.normal_matrices3: the expressions the
    Numba twin writes); zero where the 3x3 part is singular."""
    return normal_matrices3(np.asarray(model, np.float64)[:, :3, :3])


def mvp_matrices(view_projection, model):
    """(K, 4, 4) float64 ``VP @ M[k]`` with each entry summed over j = 0..3 in order
    (no BLAS, so the Numba twin's loop gives the same bits)."""
    vp = np.asarray(view_projection, np.float64)
    m = np.asarray(model, np.float64)
    out = np.empty(m.shape)
    for r in range(4):
        for c in range(4):
            acc = vp[r, 0] * m[:, 0, c]
            for j in range(1, 4):
                acc = acc + vp[r, j] * m[:, j, c]
            out[:, r, c] = acc
    return out


def _unit_rows(v):
    """(n, 3) rows scaled to unit length, zero where the length is 0."""
    length = np.sqrt(v[:, 0] * v[:, 0] + v[:, 1] * v[:, 1] + v[:, 2] * v[:, 2])[:, None]
    return np.where(length > 0, v / np.where(length > 0, length, 1.0), 0.0)


def deformed_run(deform, k, start, stop, x, y, z, attributes, rows):
    """Local-frame (x, y, z) of vertices [start, stop) of slot k morphed and skinned
    (engine.render.deform), and a copy of their packed attributes with the "normal"
    row morphed and skinned and direction rows skinned; (x, y, z, attributes) as given
    when the slot is not deformed. Products in the twins' order."""
    first, sb, mb, t, wb = (int(v) for v in deform.slots[k])
    if sb < 0 and t == 0:
        return x, y, z, attributes
    n = stop - start
    local = np.arange(start - first, stop - first)
    a = None if attributes is None else np.array(attributes, np.float64)
    nsrc, tsrc = packed_offset("normal"), packed_offset("tangent")
    if t:
        x, y, z = x.copy(), y.copy(), z.copy()
        for j in range(t):
            d = deform.deltas[mb + local * t + j].astype(np.float64)
            w = deform.weights[wb + j]
            x, y, z = x + w * d[:, 0], y + w * d[:, 1], z + w * d[:, 2]
            if a is not None:
                for c in range(3):
                    a[:, nsrc + c] = a[:, nsrc + c] + w * d[:, 3 + c]
                for c in range(3):
                    a[:, tsrc + c] = a[:, tsrc + c] + w * d[:, 6 + c]
    if sb >= 0:
        row = sb + local
        s = np.zeros((n, 12))
        for c in range(deform.inf_joint.shape[1]):
            jw = deform.inf_weight[row, c][:, None]
            j = deform.inf_joint[row, c]
            s = s + jw * deform.joints[j]
        sn = skin_normal_matrices(s)
        x, y, z = (s[:, 4 * r] * x + s[:, 4 * r + 1] * y + s[:, 4 * r + 2] * z + s[:, 4 * r + 3]
                   for r in range(3))
        if a is not None:
            for src, _, width, space in rows:
                if space == 2:
                    continue
                mat = sn.reshape(n, 3, 3) if space == 0 else s.reshape(n, 3, 4)
                v0, v1, v2 = a[:, src].copy(), a[:, src + 1].copy(), a[:, src + 2].copy()
                for r in range(3):
                    a[:, src + r] = mat[:, r, 0] * v0 + mat[:, r, 1] * v1 + mat[:, r, 2] * v2
                if width == 4:  # the handedness flips with a mirroring skin
                    a[:, src + 3] = a[:, src + 3] * np.where(_det3(s, 4) < 0, -1.0, 1.0)
    return x, y, z, a


def _det3(s, w):
    """(n,) determinants of the 3x3 parts of (n, 3 w) row-major rows (w = 3 or 4): the
    cofactor expansion the Numba and CUDA twins write."""
    a00, a01, a02 = s[:, 0], s[:, 1], s[:, 2]
    a10, a11, a12 = s[:, w], s[:, w + 1], s[:, w + 2]
    a20, a21, a22 = s[:, 2 * w], s[:, 2 * w + 1], s[:, 2 * w + 2]
    return (a00 * (a11 * a22 - a12 * a21) + a01 * (a12 * a20 - a10 * a22)
            + a02 * (a10 * a21 - a11 * a20))


def skin_normal_matrices(s):
    """(n, 9) sign(det) x cofactor matrices of the 3x3 parts of (n, 12) row-major 3x4
    skinning matrices (engine.render.deform), zero where the determinant is 0 or not
    finite; the expressions of the Numba and CUDA twins."""
    a00, a01, a02 = s[:, 0], s[:, 1], s[:, 2]
    a10, a11, a12 = s[:, 4], s[:, 5], s[:, 6]
    a20, a21, a22 = s[:, 8], s[:, 9], s[:, 10]
    c00 = a11 * a22 - a12 * a21
    c01 = a12 * a20 - a10 * a22
    c02 = a10 * a21 - a11 * a20
    det = a00 * c00 + a01 * c01 + a02 * c02
    sign = np.where(det < 0, -1.0, 1.0)
    sign = np.where((np.abs(det) > 0) & (np.abs(det) < np.inf), sign, 0.0)
    c = np.stack([c00, c01, c02, a02 * a21 - a01 * a22, a00 * a22 - a02 * a20,
                  a01 * a20 - a00 * a21, a01 * a12 - a02 * a11, a02 * a10 - a00 * a12,
                  a00 * a11 - a01 * a10], axis=1)
    return c * sign[:, None]


def surface_vertices(positions, object_id, model, view_projection, attributes, runs,
                     with_shading=True, points=None, shaded=None, deform=None):
    """(clip, varyings) as in the module docstring; varyings is None unless
    ``with_shading``. Host (NumPy) arrays: positions (N, 3) float32, object_id (N,),
    model (K, 4, 4), view_projection (4, 4), attributes (N, A) float64 packed by
    ``engine.render.attributes.pack_attributes``; ``runs`` (R, 3) (start, stop, k)
    covers the vertices to transform (others stay zero). ``points``: None, or (size,
    out) to also write every vertex's window coordinates into the Projection ``out``
    (engine.render.backends.base.window_coordinates) for the vertices drawn as points,
    in the same pass. ``shaded``: (R,) bool, the runs whose varyings are computed
    (default all; a point cloud's run needs none). ``deform``: the frame's
    engine.render.deform.DeformTables, or None."""
    p = np.asarray(positions, np.float64)
    m = np.asarray(model, np.float64)
    mvp = mvp_matrices(view_projection, m)
    n = len(p)
    clip = np.zeros((n, 4))
    vary = None
    if with_shading:
        vary = np.zeros((n, VARYING_COUNT))
        nm = normal_matrices(m)
        mirrors = _det3(m[:, :3, :].reshape(len(m), 12), 4) < 0
    # explicit products in a fixed order (no BLAS, which may fuse multiply-adds), so the
    # Numba and CUDA twins reproduce these values bit for bit
    with np.errstate(invalid="ignore", over="ignore"):  # non-finite stays non-finite
        runs = np.asarray(runs)
        shaded = np.ones(len(runs), bool) if shaded is None else np.asarray(shaded, bool)
        rows = layout_rows()
        for (start, stop, k), shade in zip(runs, shaded):
            x, y, z = p[start:stop, 0], p[start:stop, 1], p[start:stop, 2]
            attrs = attributes[start:stop] if with_shading and shade else None
            if deform is not None:
                x, y, z, attrs = deformed_run(deform, k, start, stop, x, y, z, attrs, rows)
            for r in range(4):
                a = mvp[k, r]
                clip[start:stop, r] = a[0] * x + a[1] * y + a[2] * z + a[3]
            if not (with_shading and shade):
                continue
            for r in range(3):
                a = m[k, r]
                vary[start:stop, r] = a[0] * x + a[1] * y + a[2] * z + a[3]
            for src, dst, width, space in rows:
                a = np.asarray(attrs[:, src:src + width], np.float64)
                if space == 2:  # none
                    vary[start:stop, dst:dst + width] = a
                    continue
                mat = nm[k] if space == 0 else m[k, :3, :3]
                v = np.stack([mat[r, 0] * a[:, 0] + mat[r, 1] * a[:, 1] + mat[r, 2] * a[:, 2]
                              for r in range(3)], axis=1)
                vary[start:stop, dst:dst + 3] = _unit_rows(v)
                if width == 4:  # the handedness (attributes: times sign(det M))
                    vary[start:stop, dst + 3] = -a[:, 3] if mirrors[k] else a[:, 3]
    if points is not None:
        window_coordinates(clip, *points)
    return clip, vary
