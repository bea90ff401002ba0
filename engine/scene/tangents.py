"""Per-vertex tangents for normal mapping, generated where a mesh has none.

glTF 2.0 (section 3.7.2.1, TANGENT) stores a tangent as a vec4: xyz a unit vector along
increasing u of the normal texture's coordinates, w = +1 or -1 the handedness, so that
the bitangent is ``B = cross(N, T.xyz) * T.w``; where a file has no TANGENT the spec asks
for tangents in the MikkTSpace convention (M. Mikkelsen, "Simulation of Wrinkled
Surfaces Revisited", 2008; mikktspace.com). ``vertex_tangents`` follows that convention
but not the full MikkTSpace algorithm: it never splits a vertex (MikkTSpace splits
vertices whose faces disagree in handedness or direction), so a vertex shared by faces
of opposite UV winding (a mirrored UV seam on one vertex) gets the handedness of the
larger summed contribution. Per triangle with edges ``e1 = p1 - p0``, ``e2 = p2 - p0``
and UV edges ``(du1, dv1)``, ``(du2, dv2)``, ``r = du1 dv2 - du2 dv1``::

    T_f = (e1 dv2 - e2 dv1) / r         (the direction of increasing u: dp/du)
    B_f = (e2 du1 - e1 du2) / r         (dp/dv)

(E. Lengyel, "Computing Tangent Space Basis Vectors for an Arbitrary Mesh", 2001). Each
vertex sums ``T_f`` and ``B_f`` of its faces weighted by their area in UV space
(``|r| / 2``, so the sums are ``sign(r) (e1 dv2 - e2 dv1) / 2``: no division by a
vanishing r), orthogonalises the summed tangent against its unit normal (Gram-Schmidt:
``T = normalize(T - N (N . T))``) and takes ``w = +1`` where ``dot(cross(N, T), B) >= 0``,
else -1.

The engine's UV origin is the image's top-left with v growing downwards, as glTF's; so
"increasing v" is down the image, as in every glTF viewer.
"""

from __future__ import annotations

import numpy as np

__all__ = ["vertex_tangents"]


def vertex_tangents(positions, normals, uvs, faces) -> np.ndarray:
    """(N, 4) float32 tangents (xyz unit, w = +-1) in the frame of ``positions``.

    Args:
        positions: (N, 3) float vertex positions.
        normals: (N, 3) float unit vertex normals (same frame).
        uvs: (N, 2) float texture coordinates of the normal texture.
        faces: (M, 3) integer vertex indices, counter-clockwise.

    A vertex on no face with a usable UV area, whose summed tangent is parallel to its
    normal, or whose inputs are not finite gets (0, 0, 0, 1): the shading then skips the
    normal map there (engine.render.shading).
    """
    p = np.asarray(positions, np.float64)
    n = np.asarray(normals, np.float64)
    uv = np.asarray(uvs, np.float64)
    f = np.asarray(faces, np.int64).reshape(-1, 3)
    count = len(p)
    with np.errstate(invalid="ignore", over="ignore"):
        e1, e2 = p[f[:, 1]] - p[f[:, 0]], p[f[:, 2]] - p[f[:, 0]]
        d1, d2 = uv[f[:, 1]] - uv[f[:, 0]], uv[f[:, 2]] - uv[f[:, 0]]
        r = d1[:, 0] * d2[:, 1] - d2[:, 0] * d1[:, 1]
        s = np.sign(r)[:, None] * 0.5  # the UV area weight |r| / 2 over r
        t_f = (e1 * d2[:, 1:2] - e2 * d1[:, 1:2]) * s
        b_f = (e2 * d1[:, 0:1] - e1 * d2[:, 0:1]) * s
        ok = np.all(np.isfinite(t_f), axis=1) & np.all(np.isfinite(b_f), axis=1)
        t_f[~ok] = 0.0
        b_f[~ok] = 0.0
    t = np.zeros((count, 3))
    b = np.zeros((count, 3))
    for k in range(3):  # bincount: several times faster than np.add.at
        for c in range(3):
            t[:, c] += np.bincount(f[:, k], weights=t_f[:, c], minlength=count)
            b[:, c] += np.bincount(f[:, k], weights=b_f[:, c], minlength=count)
    with np.errstate(invalid="ignore", over="ignore"):
        t = t - n * np.einsum("ij,ij->i", n, t)[:, None]
        length = np.linalg.norm(t, axis=1, keepdims=True)
        good = (length[:, 0] > 1e-20) & np.isfinite(length[:, 0])
        out = np.zeros((count, 4))
        out[:, 3] = 1.0
        out[good, :3] = t[good] / length[good]
        hand = np.einsum("ij,ij->i", np.cross(n, out[:, :3]), b)
    out[good & (hand < 0), 3] = -1.0
    return out.astype(np.float32)
