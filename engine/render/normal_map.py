"""Tangent-space normal mapping (NumPy reference; the compiled resolves follow it).

glTF 2.0 (section 3.9.3, normalTexture) stores a tangent-space normal in a texture's RGB
as linear data (never sRGB-decoded): ``X = 2 R - 1`` along the tangent, ``Y = 2 G - 1``
along the bitangent, ``Z = 2 B - 1`` along the normal, with ``normalTextureInfo.scale``
scaling X and Y. Per pixel, with the interpolated unit normal ``N`` (the geometric one
for flat shading) and the interpolated tangent ``(T, w)`` (engine.scene.tangents: glTF
TANGENT or generated in the MikkTSpace convention)::

    n_t = normalize((2 c - 1) * (scale, scale, 1))      c: the map's stored RGB / 255
    T'  = normalize(T - N (N . T))                      Gram-Schmidt: T' orthogonal to N
    B   = cross(N, T') * sign(w)                        glTF 2.0 3.7.2.1
    n   = normalize(n_t.x T' + n_t.y B + n_t.z N)

(the per-pixel bitangent of the MikkTSpace convention, mikktspace.com). Where T is zero
or parallel to N (no tangent: a mesh without texture coordinates) the pixel keeps N. A
double-sided material's back face then reverses the mapped normal, as it reverses N
(the whole frame flips: glTF Sample Viewer's convention).
"""

from __future__ import annotations

import numpy as np

__all__ = ["mapped_normals"]


def mapped_normals(n, tangent, texel, scale):
    """(M, 3) unit normals of the module docstring.

    Args:
        n: (M, 3) unit normals (batch frame).
        tangent: (M, 4) interpolated tangents (xyz, handedness w), same frame.
        texel: (M, 3+) the normal map's stored values / 255 (engine.scene.sampling.sample
            with ``linear=False``).
        scale: the map's scale (Material.normal_scale).
    """
    n = np.asarray(n, np.float64)
    tangent = np.asarray(tangent, np.float64)
    ts = 2.0 * np.asarray(texel, np.float64)[:, :3] - 1.0
    ts[:, :2] *= scale
    ts_len = np.sqrt(np.einsum("ij,ij->i", ts, ts))[:, None]
    ts = np.where(ts_len > 0, ts / np.where(ts_len > 0, ts_len, 1.0), np.array([0.0, 0.0, 1.0]))
    t = tangent[:, :3] - n * np.einsum("ij,ij->i", n, tangent[:, :3])[:, None]
    t2 = np.einsum("ij,ij->i", t, t)[:, None]
    ok = t2 > 1e-12
    t = np.where(ok, t / np.sqrt(np.where(ok, t2, 1.0)), 0.0)
    b = np.cross(n, t) * np.where(tangent[:, 3:4] < 0, -1.0, 1.0)
    m = ts[:, :1] * t + ts[:, 1:2] * b + ts[:, 2:3] * n
    m2 = np.einsum("ij,ij->i", m, m)[:, None]
    good = ok & (m2 > 0)
    return np.where(good, m / np.sqrt(np.where(good, m2, 1.0)), n)
