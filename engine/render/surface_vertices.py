"""The vertex stage for surfaces (NumPy reference): every vertex's clip-space position
and its varyings (engine.render.attributes), for the object slot k of the vertex::

    clip      = VP @ M[k] @ (p, 1)                     (N, 4) float64
    varyings  (N, V) float64: position = M[k] @ (p, 1) in the batch frame, then each
              attribute of the layout carried by its space:
              normal     normalize(inverse(M[k][:3, :3]).T @ n)
              direction  normalize(M[k][:3, :3] @ t)
              none       as packed

M is the batch's model matrix (world relative to the batch origin) and VP its
view-projection. A slot whose 3x3 part is singular (a zero scale, or the all-zero null
slot of free vertices) gives zero normals. Non-finite positions stay non-finite (setup
culls their triangles). The Numba twin is ``engine.render.backends.numba_vertex``, the
CUDA one ``shaders/surface_vertices.cu``: the same operations in the same order, so the
three agree bit for bit.
"""

from __future__ import annotations

import numpy as np

from .attributes import VARYING_COUNT, layout_rows
from .backends.base import window_coordinates

__all__ = ["normal_matrices", "surface_vertices"]


def normal_matrices(model):
    """(K, 4, 4) model matrices -> (K, 3, 3) float64 inverse transposes of their 3x3
    parts; zero where the 3x3 part is singular."""
    lin = np.asarray(model, np.float64)[:, :3, :3]
    det = np.linalg.det(lin) if len(lin) else np.zeros(0)
    ok = np.isfinite(det) & (np.abs(det) > 1e-300)
    out = np.zeros_like(lin)
    if ok.any():
        out[ok] = np.transpose(np.linalg.inv(lin[ok]), (0, 2, 1))
    return out


def _unit_rows(v):
    """(n, 3) rows scaled to unit length, zero where the length is 0."""
    length = np.sqrt(v[:, 0] * v[:, 0] + v[:, 1] * v[:, 1] + v[:, 2] * v[:, 2])[:, None]
    return np.where(length > 0, v / np.where(length > 0, length, 1.0), 0.0)


def surface_vertices(positions, object_id, model, view_projection, attributes, runs,
                     with_shading=True, points=None, shaded=None):
    """(clip, varyings) as in the module docstring; varyings is None unless
    ``with_shading``. Host (NumPy) arrays: positions (N, 3) float32, object_id (N,),
    model (K, 4, 4), view_projection (4, 4), attributes (N, A) float64 packed by
    ``engine.render.attributes.pack_attributes``; ``runs`` (R, 3) (start, stop, k)
    covers the vertices to transform (others stay zero). ``points``: None, or (size,
    out) to also write every vertex's window coordinates into the Projection ``out``
    (engine.render.backends.base.window_coordinates) for the vertices drawn as points,
    in the same pass. ``shaded``: (R,) bool, the runs whose varyings are computed
    (default all; a point cloud's run needs none)."""
    p = np.asarray(positions, np.float64)
    m = np.asarray(model, np.float64)
    mvp = np.asarray(view_projection, np.float64) @ m
    n = len(p)
    clip = np.zeros((n, 4))
    vary = None
    if with_shading:
        vary = np.zeros((n, VARYING_COUNT))
        nm = normal_matrices(m)
        rows = layout_rows()
    # explicit products in a fixed order (no BLAS, which may fuse multiply-adds), so the
    # Numba and CUDA twins reproduce these values bit for bit
    with np.errstate(invalid="ignore", over="ignore"):  # non-finite stays non-finite
        runs = np.asarray(runs)
        shaded = np.ones(len(runs), bool) if shaded is None else np.asarray(shaded, bool)
        for (start, stop, k), shade in zip(runs, shaded):
            x, y, z = p[start:stop, 0], p[start:stop, 1], p[start:stop, 2]
            for r in range(4):
                a = mvp[k, r]
                clip[start:stop, r] = a[0] * x + a[1] * y + a[2] * z + a[3]
            if not (with_shading and shade):
                continue
            for r in range(3):
                a = m[k, r]
                vary[start:stop, r] = a[0] * x + a[1] * y + a[2] * z + a[3]
            for src, dst, width, space in rows:
                a = np.asarray(attributes[start:stop, src:src + width], np.float64)
                if space == 2:  # none
                    vary[start:stop, dst:dst + width] = a
                    continue
                mat = nm[k] if space == 0 else m[k, :3, :3]
                v = np.stack([mat[r, 0] * a[:, 0] + mat[r, 1] * a[:, 1] + mat[r, 2] * a[:, 2]
                              for r in range(3)], axis=1)
                vary[start:stop, dst:dst + 3] = _unit_rows(v)
    if points is not None:
        window_coordinates(clip, *points)
    return clip, vary
