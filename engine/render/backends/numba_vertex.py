"""The surface vertex stage compiled by Numba: one pass over the vertices of the given
runs computes clip coordinates and, for shading, batch-frame positions and unit normals.
Same maths, in the same order, as ``engine.render.surface_vertices``.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ..surface_vertices import normal_matrices

_opts = {"cache": True, "boundscheck": False, "error_model": "numpy"}


@numba.njit(**_opts)
def _vertices(p, runs, mvp, m, nm, normals, shading, clip, world, wn):
    for r in range(runs.shape[0]):
        for i in range(runs[r, 0], runs[r, 1]):
            _vertex(p, i, runs[r, 2], mvp, m, nm, normals, shading, clip, world, wn)


@numba.njit(inline="always")
def _vertex(p, i, k, mvp, m, nm, normals, shading, clip, world, wn):
    x, y, z = np.float64(p[i, 0]), np.float64(p[i, 1]), np.float64(p[i, 2])
    for r in range(4):
        clip[i, r] = mvp[k, r, 0] * x + mvp[k, r, 1] * y + mvp[k, r, 2] * z + mvp[k, r, 3]
    if not shading:
        return
    for r in range(3):
        world[i, r] = m[k, r, 0] * x + m[k, r, 1] * y + m[k, r, 2] * z + m[k, r, 3]
    a, b, c = np.float64(normals[i, 0]), np.float64(normals[i, 1]), np.float64(normals[i, 2])
    vx = nm[k, 0, 0] * a + nm[k, 0, 1] * b + nm[k, 0, 2] * c
    vy = nm[k, 1, 0] * a + nm[k, 1, 1] * b + nm[k, 1, 2] * c
    vz = nm[k, 2, 0] * a + nm[k, 2, 1] * b + nm[k, 2, 2] * c
    length = math.sqrt(vx * vx + vy * vy + vz * vz)
    if length > 0:
        wn[i, 0], wn[i, 1], wn[i, 2] = vx / length, vy / length, vz / length
    else:
        wn[i, 0] = wn[i, 1] = wn[i, 2] = 0.0


def surface_vertices_numba(positions, object_id, model, view_projection, normals, runs,
                           with_shading=True):
    """Numba twin of ``engine.render.surface_vertices.surface_vertices``."""
    m = np.ascontiguousarray(model, np.float64)
    mvp = np.ascontiguousarray(np.asarray(view_projection, np.float64) @ m)
    n = len(positions)
    clip = np.empty((n, 4))
    # positions and normals side by side in one (N, 6) buffer: the resolve reads both for
    # the same three vertices of every shaded pixel, so they share cache lines
    packed = np.empty((n if with_shading else 0, 6))
    world, wn = packed[:, :3], packed[:, 3:]
    nm = normal_matrices(m) if with_shading else np.zeros((len(m), 3, 3))
    _vertices(np.ascontiguousarray(positions), np.ascontiguousarray(runs, np.int64), mvp, m,
              nm, np.ascontiguousarray(normals), with_shading, clip, world, wn)
    return clip, (world if with_shading else None), (wn if with_shading else None)
