"""Image-based lighting compiled by Numba: engine.render.ibl's lookups per pixel, for the
Numba resolve (engine.render.backends.numba_shading) and the sky stage
(engine.render.backends.numba_atmosphere).

The prefiltered environment travels as plain arrays
(engine.render.ibl.environment_arrays): the
specular chain's texels (T, 3) float32 with its level table (L, 3) int64 (first texel,
width, height), the 9 SH coefficients (9, 3) and the split-sum table (n, n, 2). The
formulas are engine.render.ibl's: equirectangular bilinear samples (u repeating, v
clamped), linear between the two roughness levels, the SH irradiance clamped at 0, the
table read bilinearly with clamped edges. ``_ibl_pbr`` is compiled on its own (not
inlined into the resolve: see numba_shading's note on compile time).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ..ibl import SH_BASIS, SPECULAR_LEVELS
from .kernel_cache import cached

__all__: list[str] = []

_opts = {"cache": cached(), "boundscheck": False, "error_model": "numpy",
         "fastmath": {"contract"}}
_K0, _K1, _K2, _K3, _K4 = SH_BASIS
_TWO_PI = 2.0 * math.pi


@numba.njit(inline="always")
def _equirect(texels, off, w, h, dx, dy, dz):
    """Bilinear sample of the (h, w) equirectangular map whose texels start at row
    ``off`` of ``texels`` at unit direction d (engine.render.ibl.sample_equirect)."""
    u = 0.5 + math.atan2(dx, -dz) / _TWO_PI
    v = math.acos(min(max(dy, -1.0), 1.0)) / math.pi
    x, y = u * w - 0.5, v * h - 0.5
    x0, y0 = math.floor(x), math.floor(y)
    fx, fy = x - x0, y - y0
    i0 = np.int64(x0) % w
    i1 = (i0 + 1) % w
    j0 = min(max(np.int64(y0), 0), h - 1)
    j1 = min(max(np.int64(y0) + 1, 0), h - 1)
    a, b = off + j0 * w + i0, off + j0 * w + i1
    c, d = off + j1 * w + i0, off + j1 * w + i1
    w00, w01, w10, w11 = (1.0 - fx) * (1.0 - fy), fx * (1.0 - fy), (1.0 - fx) * fy, fx * fy
    return (texels[a, 0] * w00 + texels[b, 0] * w01 + texels[c, 0] * w10 + texels[d, 0] * w11,
            texels[a, 1] * w00 + texels[b, 1] * w01 + texels[c, 1] * w10 + texels[d, 1] * w11,
            texels[a, 2] * w00 + texels[b, 2] * w01 + texels[c, 2] * w10 + texels[d, 2] * w11)


@numba.njit(inline="always")
def _lut_axis(t, n):
    x = min(max(t, 0.0), 1.0) * (n - 1)  # engine.render.ibl.lut_lookup
    x0 = math.floor(x)
    i0 = min(max(np.int64(x0), 0), n - 1)
    return i0, min(max(np.int64(x0) + 1, 0), n - 1), x - x0


@numba.njit(inline="always")
def _ibl_irradiance(env_sh, nx, ny, nz):
    """Irradiance / pi at unit N (engine.render.ibl.irradiance): a "lit" pixel's
    environment ambient."""
    y = (_K0, _K1 * ny, _K1 * nz, _K1 * nx, _K2 * nx * ny, _K2 * ny * nz,
         _K3 * (3.0 * nz * nz - 1.0), _K2 * nx * nz, _K4 * (nx * nx - ny * ny))
    er = eg = eb = 0.0
    for k in range(9):
        er += env_sh[k, 0] * y[k]
        eg += env_sh[k, 1] * y[k]
        eb += env_sh[k, 2] * y[k]
    return max(er, 0.0), max(eg, 0.0), max(eb, 0.0)


# no reference counting: called per "pbr" pixel (numba_shading._pbr_pixel), where each
# array argument's increment and decrement are atomic operations
@numba.njit(**{**_opts, "_nrt": False})
def _ibl_pbr(env_texels, env_info, env_sh, env_lut, nx, ny, nz, vx, vy, vz, r, g, b,
             metallic, rough, occlusion):
    """The environment's light on a "pbr" pixel (engine.render.ibl.ambient_pbr) for unit
    N, V, linear base (r, g, b), metallic, perceptual roughness and occlusion."""
    er, eg, eb = _ibl_irradiance(env_sh, nx, ny, nz)  # diffuse (Ramamoorthi & Hanrahan)
    # specular: the chain at R, linear between roughness levels (Karis 2013)
    ndv = nx * vx + ny * vy + nz * vz
    rx, ry, rz = 2.0 * ndv * nx - vx, 2.0 * ndv * ny - vy, 2.0 * ndv * nz - vz
    lod = min(max(rough, 0.0), 1.0) * (SPECULAR_LEVELS - 1)
    k0 = min(np.int64(math.floor(lod)), SPECULAR_LEVELS - 1)
    f = lod - k0
    sr, sg, sb = _equirect(env_texels, env_info[k0, 0], env_info[k0, 1], env_info[k0, 2],
                           rx, ry, rz)
    if k0 + 1 < SPECULAR_LEVELS and f > 0.0:
        k1 = k0 + 1
        tr, tg, tb = _equirect(env_texels, env_info[k1, 0], env_info[k1, 1], env_info[k1, 2],
                               rx, ry, rz)
        sr, sg, sb = sr + (tr - sr) * f, sg + (tg - sg) * f, sb + (tb - sb) * f
    # the split-sum table at (N.V, roughness)
    n = env_lut.shape[0]
    i0, i1, fx = _lut_axis(ndv, n)
    j0, j1, fy = _lut_axis(rough, n)
    a = ((env_lut[j0, i0, 0] * (1.0 - fx) + env_lut[j0, i1, 0] * fx) * (1.0 - fy)
         + (env_lut[j1, i0, 0] * (1.0 - fx) + env_lut[j1, i1, 0] * fx) * fy)
    bb = ((env_lut[j0, i0, 1] * (1.0 - fx) + env_lut[j0, i1, 1] * fx) * (1.0 - fy)
          + (env_lut[j1, i0, 1] * (1.0 - fx) + env_lut[j1, i1, 1] * fx) * fy)
    dm = 1.0 - metallic
    f0r, f0g, f0b = 0.04 * dm + r * metallic, 0.04 * dm + g * metallic, 0.04 * dm + b * metallic
    return ((r * dm * er + sr * (f0r * a + bb)) * occlusion,
            (g * dm * eg + sg * (f0g * a + bb)) * occlusion,
            (b * dm * eb + sb * (f0b * a + bb)) * occlusion)
