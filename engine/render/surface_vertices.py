"""The vertex stage for surfaces (NumPy reference): every vertex's clip-space position,
and for shading its position and unit normal in the batch frame.

    clip   = VP @ M[k] @ (p, 1)                  (N, 4) float64
    world  = M[k] @ (p, 1)                       (N, 3) float64, batch frame
    normal = normalize(inverse(M[k][:3, :3]).T @ n)   (N, 3) float64

for the vertex's object slot k; M is the batch's model matrix (world relative to the
batch origin) and VP its view-projection. A slot whose 3x3 part is singular (a zero
scale, or the all-zero null slot of free vertices) gives zero normals. Non-finite
positions stay non-finite (setup culls their triangles). The Numba twin is
``engine.render.backends.numba_vertex``.
"""

from __future__ import annotations

import numpy as np

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


def surface_vertices(positions, object_id, model, view_projection, normals, runs,
                     with_shading=True):
    """(clip, world, normals) as in the module docstring; world and normals are None
    unless ``with_shading``. Host (NumPy) arrays; ``runs`` (R, 3) (start, stop, k)
    covers the vertices."""
    p = np.asarray(positions, np.float64)
    m = np.asarray(model, np.float64)
    mvp = np.asarray(view_projection, np.float64) @ m
    n = len(p)
    clip = np.zeros((n, 4))
    world = wn = None
    if with_shading:
        world, wn = np.zeros((n, 3)), np.zeros((n, 3))
        nm = normal_matrices(m)
    # explicit products in a fixed order (no BLAS, which may fuse multiply-adds), so the
    # Numba and CUDA twins reproduce these values bit for bit
    with np.errstate(invalid="ignore", over="ignore"):  # non-finite stays non-finite
        for start, stop, k in np.asarray(runs):
            x, y, z = p[start:stop, 0], p[start:stop, 1], p[start:stop, 2]
            for r in range(4):
                a = mvp[k, r]
                clip[start:stop, r] = a[0] * x + a[1] * y + a[2] * z + a[3]
            if not with_shading:
                continue
            for r in range(3):
                a = m[k, r]
                world[start:stop, r] = a[0] * x + a[1] * y + a[2] * z + a[3]
            nrm = np.asarray(normals[start:stop], np.float64)
            v = np.stack([nm[k, r, 0] * nrm[:, 0] + nm[k, r, 1] * nrm[:, 1]
                          + nm[k, r, 2] * nrm[:, 2] for r in range(3)], axis=1)
            length = np.sqrt(v[:, 0] * v[:, 0] + v[:, 1] * v[:, 1] + v[:, 2] * v[:, 2])[:, None]
            wn[start:stop] = np.where(length > 0, v / np.where(length > 0, length, 1.0), 0.0)
    return clip, world, wn
