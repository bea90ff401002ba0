"""Image-based lighting: an Environment (engine.scene.environment) prefiltered once, and
the ambient term it gives a surface, in NumPy (the reference the compiled resolves follow).

Prefiltered maps, per environment (``prefilter``, cached while the Environment lives):

- Diffuse: the irradiance ``E(N)`` as 9 spherical-harmonic coefficients per channel
  (R. Ramamoorthi and P. Hanrahan, "An Efficient Representation for Irradiance
  Environment Maps", SIGGRAPH 2001): the radiance projected on the real SH basis
  ``Y_lm`` (l <= 2, their equation 3, in world x, y, z) with each texel's solid angle,
  then convolved with the clamped cosine, ``A_0 = pi, A_1 = 2 pi / 3, A_2 = pi / 4``
  (their equation 8). The coefficients stored are ``A_l L_lm / pi``, so that
  ``irradiance(N) = sum_lm c_lm Y_lm(N)`` is the irradiance over pi, the radiance of a
  white Lambert surface (1 under a uniform environment of radiance 1); clamped at 0.
- Specular: an equirectangular chain of ``SPECULAR_LEVELS`` maps, level k for
  perceptual roughness ``k / (SPECULAR_LEVELS - 1)`` at ``SPECULAR_SIZE >> k`` texels, the
  radiance convolved with the GGX lobe under Karis's N = V = R assumption
  (B. Karis, "Real Shading in Unreal Engine 4", SIGGRAPH 2013 course notes)::

      S_k(R) = sum_l L(l) D(N.H) max(N.l, 0) dw(l) / sum_l D(N.H) max(N.l, 0) dw(l),
      N = R, H = normalize(N + l), N.H = sqrt((1 + N.l) / 2)

  summed over the texels of the radiance at ``_CONVOLVE_SIZE`` (the integral Karis's
  importance sampling estimates, evaluated directly); level 0 is the radiance itself
  (a mirror). A lookup reads level ``roughness * (SPECULAR_LEVELS - 1)``, linearly
  between the two nearest levels, each bilinearly (u repeats, v clamps to the edge:
  GL's LINEAR_MIPMAP_LINEAR on a mip chain of those sizes).
- The split-sum table (Karis 2013), computed once per process (``split_sum_table``):
  ``(A, B)`` on a ``LUT_SIZE`` x ``LUT_SIZE`` grid of (N.V, roughness) spanning [0, 1]
  (N.V from 1e-4), with
  ``F0 A + B = integral of f_spec(l) max(N.l, 0) dw`` for white incident light,
  ``f_spec = F D Vis`` the glTF BRDF's specular lobe (engine.render.pbr: GGX D,
  height-correlated Smith visibility, Schlick F split as ``F0 (1 - Fc) + Fc``,
  ``Fc = (1 - V.H)^5``), by ``LUT_SAMPLES`` Hammersley points importance-sampling D
  (sample weight ``4 Vis N.L V.H / N.H``); read bilinearly (``lut_lookup``).

The ambient term (``ambient_pbr``, ``ambient_lit``), for unit normal N, unit view vector V,
``R = 2 (N.V) N - V``, base colour c, metallic m, roughness r, ``c_diff = c (1 - m)``,
``F0 = lerp(0.04, c, m)``::

    pbr:  (c_diff irradiance(N) + S(R, r) (F0 A(N.V, r) + B(N.V, r))) x occlusion
    lit:  c x irradiance(N)       (Blinn-Phong: the environment joins the ambient)

A uniform environment of radiance L gives ``irradiance = L`` and ``S = L`` everywhere.
The diffuse part is not reduced by the specular's Fresnel (as the formula above is
usually written), so a white dielectric under a white environment reflects a little
more than it receives (about 4% facing the viewer); a rough metal a little less (the
split sum has no multiple scattering): tests/render/test_ibl.py measures both.
"""

from __future__ import annotations

import functools
import weakref
from typing import NamedTuple

import numpy as np

__all__ = ["LUT_SAMPLES", "LUT_SIZE", "SH_BASIS", "SPECULAR_LEVELS", "SPECULAR_SIZE",
           "Prefiltered", "ambient_lit", "ambient_pbr", "direction_uv", "environment_arrays", "irradiance",
           "lut_lookup", "prefilter", "sample_equirect", "scene_environment", "sh_basis",
           "sh_coefficients", "specular", "split_sum", "split_sum_table"]

SPECULAR_LEVELS = 5
SPECULAR_SIZE = (256, 128)  # (width, height) of level 0 of an image environment
_UNIFORM_SIZE = (32, 16)  # a uniform environment's level 0: the same chain, constant
_CONVOLVE_SIZE = (128, 64)  # the radiance the GGX lobes are summed over
_SH_MAX_SIZE = (256, 128)  # the radiance projected on the SH basis (at most)
_CHUNK = 256  # output texels per block of the convolution (bounded temporaries)
LUT_SIZE = 32
LUT_SAMPLES = 1024
# the real SH basis constants of Ramamoorthi & Hanrahan 2001, equation 3
SH_BASIS = (0.282095, 0.488603, 1.092548, 0.315392, 0.546274)
_SH_BAND = (0, 1, 1, 1, 2, 2, 2, 2, 2)
_SH_CONVOLUTION = (1.0, 2.0 / 3.0, 0.25)  # A_l / pi (equation 8)


class Prefiltered(NamedTuple):
    """An environment prefiltered for shading (module docstring).

    Attributes:
        sh: (9, 3) float64 coefficients of irradiance / pi, in ``sh_basis`` order.
        levels: SPECULAR_LEVELS (h_k, w_k, 3) float32 specular maps, halving in size.
        texels: (T, 3) float32 every level's texels, row-major, level after level.
        info: (SPECULAR_LEVELS, 3) int64 (first texel in ``texels``, width, height).
        lut: (LUT_SIZE, LUT_SIZE, 2) float32 the split-sum table (``split_sum_table``).
        radiance: the environment's (H, W, 3) float32 radiance (the sky reads it).
    """

    sh: np.ndarray
    levels: tuple
    texels: np.ndarray
    info: np.ndarray
    lut: np.ndarray
    radiance: np.ndarray


_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def scene_environment(scene) -> Prefiltered | None:
    """The Prefiltered environment of ``scene`` (``Scene.environment``), or None."""
    env = getattr(scene, "environment", None)
    return None if env is None else prefilter(env)


def prefilter(environment) -> Prefiltered:
    """The Prefiltered maps of an engine.scene.Environment, computed on the first call
    and kept while the environment lives (its radiance is read-only)."""
    got = _CACHE.get(environment)
    if got is None:
        rad = environment.radiance
        if environment.uniform:
            c = rad[0, 0].astype(np.float64)
            sh = np.zeros((9, 3))
            sh[0] = c / SH_BASIS[0]
            w, h = _UNIFORM_SIZE
            levels = tuple(np.broadcast_to(rad[0, 0], (h >> k, w >> k, 3)).astype(np.float32)
                           for k in range(SPECULAR_LEVELS))
        else:
            sh = sh_coefficients(_resample(rad, _SH_MAX_SIZE, shrink_only=True))
            levels = _specular_chain(rad)
        sizes = [lv.shape[0] * lv.shape[1] for lv in levels]
        first = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        info = np.array([(f, lv.shape[1], lv.shape[0]) for f, lv in zip(first, levels)],
                        np.int64)
        texels = np.ascontiguousarray(np.concatenate([lv.reshape(-1, 3) for lv in levels]))
        got = _CACHE[environment] = Prefiltered(sh, levels, texels, info, split_sum_table(),
                                                rad)
    return got


def _resample(radiance, size, shrink_only=False):
    """(h, w, 3) float32 radiance at ``size`` = (w, h): area-averaged where it shrinks,
    bilinear where it grows (Pillow, per channel); as is when ``shrink_only`` and it is
    no larger."""
    from PIL import Image

    w, h = size
    H, W, _ = radiance.shape
    if (W, H) == (w, h) or (shrink_only and W <= w and H <= h):
        return np.asarray(radiance, np.float32)
    f = Image.Resampling.BOX if w <= W and h <= H else Image.Resampling.BILINEAR
    return np.stack([np.asarray(Image.fromarray(np.ascontiguousarray(radiance[:, :, c],
                                                                     np.float32), "F")
                                .resize((w, h), f)) for c in range(3)], axis=2)


def _texel_directions(w, h):
    """((h, w, 3) float64 unit world directions of an equirectangular grid's texel
    centres, (h,) solid angle of one texel in each row)."""
    phi = ((np.arange(w) + 0.5) / w - 0.5) * 2.0 * np.pi  # atan2(x, -z)
    theta = (np.arange(h) + 0.5) / h * np.pi  # acos(y)
    st = np.sin(theta)[:, None]
    d = np.stack([st * np.sin(phi)[None, :], np.broadcast_to(np.cos(theta)[:, None], (h, w)),
                  -st * np.cos(phi)[None, :]], axis=2)
    edges = np.arange(h + 1) / h * np.pi
    omega = (np.cos(edges[:-1]) - np.cos(edges[1:])) * (2.0 * np.pi / w)
    return d, omega


def sh_basis(d):
    """(..., 9) the real SH basis Y_lm (l <= 2; Ramamoorthi & Hanrahan 2001, equation 3)
    at unit directions d (..., 3) in world x, y, z, in the order (0,0), (1,-1), (1,0),
    (1,1), (2,-2), (2,-1), (2,0), (2,1), (2,2) of their formula with z as given."""
    x, y, z = d[..., 0], d[..., 1], d[..., 2]
    k0, k1, k2, k3, k4 = SH_BASIS
    return np.stack([np.full_like(x, k0), k1 * y, k1 * z, k1 * x, k2 * x * y, k2 * y * z,
                     k3 * (3.0 * z * z - 1.0), k2 * x * z, k4 * (x * x - y * y)], axis=-1)


def sh_coefficients(radiance):
    """(9, 3) float64 coefficients of irradiance / pi (module docstring) of an
    equirectangular (H, W, 3) radiance map: ``A_l / pi x sum L Y_lm dw``."""
    h, w, _ = radiance.shape
    d, omega = _texel_directions(w, h)
    y = sh_basis(d) * omega[:, None, None]  # (h, w, 9)
    lm = np.einsum("hwk,hwc->kc", y, np.asarray(radiance, np.float64))
    return lm * np.array([_SH_CONVOLUTION[b] for b in _SH_BAND])[:, None]


def irradiance(sh, n):
    """(..., 3) irradiance / pi at unit normals n (..., 3) from ``sh`` (9, 3), >= 0."""
    return np.maximum(sh_basis(np.asarray(n, np.float64)) @ sh, 0.0)


def _specular_chain(radiance):
    """The SPECULAR_LEVELS maps of the module docstring for an image environment."""
    w0, h0 = SPECULAR_SIZE
    levels = [_resample(radiance, (w0, h0))]
    src = _resample(radiance, _CONVOLVE_SIZE).reshape(-1, 3).astype(np.float64)
    sw, sh_ = _CONVOLVE_SIZE
    dirs, omega = _texel_directions(sw, sh_)
    dirs = dirs.reshape(-1, 3)
    omega = np.repeat(omega, sw)
    for k in range(1, SPECULAR_LEVELS):
        a2 = (k / (SPECULAR_LEVELS - 1)) ** 4  # alpha^2, alpha = roughness^2
        w, h = w0 >> k, h0 >> k
        out_dirs = _texel_directions(w, h)[0].reshape(-1, 3)
        out = np.empty((w * h, 3))
        for s in range(0, len(out_dirs), _CHUNK):
            c = out_dirs[s:s + _CHUNK] @ dirs.T  # N.l
            ndh2 = np.maximum((1.0 + c) * 0.5, 0.0)
            q = ndh2 * (a2 - 1.0) + 1.0
            wt = np.maximum(c, 0.0) * omega / (q * q)  # D up to its constant factor
            out[s:s + _CHUNK] = (wt @ src) / np.maximum(wt.sum(axis=1), 1e-300)[:, None]
        levels.append(out.reshape(h, w, 3).astype(np.float32))
    return tuple(np.ascontiguousarray(lv, np.float32) for lv in levels)


def direction_uv(d):
    """(u (...,), v (...,)) equirectangular coordinates of unit world directions d
    (..., 3) (engine.scene.environment)."""
    d = np.asarray(d, np.float64)
    u = 0.5 + np.arctan2(d[..., 0], -d[..., 2]) / (2.0 * np.pi)
    v = np.arccos(np.clip(d[..., 1], -1.0, 1.0)) / np.pi
    return u, v


def sample_equirect(image, d):
    """(..., 3) bilinear sample of an (h, w, 3) equirectangular map at unit directions d
    (..., 3): texel centres at ((i + 0.5) / w, (j + 0.5) / h), u repeating, v clamped to
    the edge (GL's REPEAT / CLAMP_TO_EDGE)."""
    h, w, _ = image.shape
    u, v = direction_uv(d)
    x, y = u * w - 0.5, v * h - 0.5
    x0, y0 = np.floor(x), np.floor(y)
    fx, fy = (x - x0)[..., None], (y - y0)[..., None]
    i0 = np.mod(x0, w).astype(np.int64)
    i1 = np.mod(i0 + 1, w)
    j0 = np.clip(y0, 0, h - 1).astype(np.int64)
    j1 = np.clip(y0 + 1, 0, h - 1).astype(np.int64)
    img = np.asarray(image, np.float64)
    top = img[j0, i0] * (1.0 - fx) + img[j0, i1] * fx
    bottom = img[j1, i0] * (1.0 - fx) + img[j1, i1] * fx
    return top * (1.0 - fy) + bottom * fy


def specular(pre: Prefiltered, r, roughness):
    """(..., 3) prefiltered radiance S(R, roughness) at unit reflection directions r
    (..., 3): level ``roughness * (SPECULAR_LEVELS - 1)``, linear between levels."""
    lod = np.clip(np.asarray(roughness, np.float64), 0.0, 1.0) * (SPECULAR_LEVELS - 1)
    lod = np.broadcast_to(lod, np.shape(r)[:-1])
    k = np.minimum(np.floor(lod).astype(np.int64), SPECULAR_LEVELS - 1)
    f = (lod - k)[..., None]
    out = np.zeros(np.shape(r))
    for level in range(SPECULAR_LEVELS):
        sel = k == level
        if sel.any():
            lo = sample_equirect(pre.levels[level], r[sel])
            if level + 1 < SPECULAR_LEVELS:
                lo = lo + (sample_equirect(pre.levels[level + 1], r[sel]) - lo) * f[sel]
            out[sel] = lo
    return out


def _hammersley(n):
    """(n, 2) the Hammersley points (i / n, base-2 radical inverse of i)."""
    i = np.arange(n, dtype=np.uint32)
    b = i.copy()
    b = ((b << 16) | (b >> 16)) & 0xFFFFFFFF
    b = ((b & 0x55555555) << 1) | ((b & 0xAAAAAAAA) >> 1)
    b = ((b & 0x33333333) << 2) | ((b & 0xCCCCCCCC) >> 2)
    b = ((b & 0x0F0F0F0F) << 4) | ((b & 0xF0F0F0F0) >> 4)
    b = ((b & 0x00FF00FF) << 8) | ((b & 0xFF00FF00) >> 8)
    return np.stack([i / n, b.astype(np.float64) / 2.0**32], axis=1)


def split_sum(n_dot_v, roughness, samples: int = LUT_SAMPLES):
    """(A, B) arrays (shape of the broadcast inputs) of the split sum at N.V in (0, 1]
    and perceptual roughness in [0, 1] (module docstring), by ``samples`` Hammersley
    points importance-sampling the GGX distribution (Karis 2013)."""
    nv, r = np.broadcast_arrays(np.asarray(n_dot_v, np.float64),
                                np.asarray(roughness, np.float64))
    nv = np.maximum(nv, 1e-4)[..., None]
    a2 = (r ** 4)[..., None]
    xi = _hammersley(samples)
    phi = 2.0 * np.pi * xi[:, 0]
    cos_t = np.sqrt((1.0 - xi[:, 1]) / (1.0 + (a2 - 1.0) * xi[:, 1]))  # GGX, by D N.H
    sin_t = np.sqrt(np.maximum(1.0 - cos_t * cos_t, 0.0))
    hx, hz = sin_t * np.cos(phi), cos_t  # N = +z, V in the xz plane
    vx, vz = np.sqrt(1.0 - nv * nv), nv
    vdh = vx * hx + vz * hz
    nl = 2.0 * vdh * hz - vz  # L = 2 (V.H) H - V, its z
    ok = (nl > 0) & (vdh > 0)
    anl, anv = np.maximum(nl, 0.0), nv
    vis = 1.0 / ((anl + np.sqrt(a2 + (1.0 - a2) * anl * anl))
                 * (anv + np.sqrt(a2 + (1.0 - a2) * anv * anv)))
    weight = np.where(ok, 4.0 * vis * anl * vdh / np.maximum(hz, 1e-300), 0.0)
    fc = (1.0 - np.clip(vdh, 0.0, 1.0)) ** 5
    return (weight * (1.0 - fc)).mean(axis=-1), (weight * fc).mean(axis=-1)


@functools.lru_cache(maxsize=1)
def split_sum_table() -> np.ndarray:
    """(LUT_SIZE, LUT_SIZE, 2) float32 (A, B) at roughness j / (LUT_SIZE - 1) in row j,
    N.V i / (LUT_SIZE - 1) in column i (the table's edges are the range's ends, so no
    lookup is clamped short of roughness 1 or N.V 1); computed once per process
    (read-only)."""
    c = np.arange(LUT_SIZE) / (LUT_SIZE - 1)
    a, b = split_sum(c[None, :], c[:, None])
    t = np.stack([a, b], axis=2).astype(np.float32)
    t.flags.writeable = False
    return t


def lut_lookup(lut, n_dot_v, roughness):
    """(A, B) bilinear lookup of the split-sum table at N.V and roughness in [0, 1]
    (clamped): at ``t (n - 1)`` texels along each axis (``split_sum_table``; GL's LINEAR
    at texture coordinate ``(t (n - 1) + 0.5) / n``)."""
    n = lut.shape[0]

    def axis(t):
        x = np.clip(np.asarray(t, np.float64), 0.0, 1.0) * (n - 1)
        x0 = np.floor(x)
        f = x - x0
        return (np.clip(x0, 0, n - 1).astype(np.int64), np.clip(x0 + 1, 0, n - 1).astype(np.int64),
                f)

    i0, i1, fx = axis(n_dot_v)
    j0, j1, fy = axis(roughness)
    t = np.asarray(lut, np.float64)
    top = t[j0, i0] * (1.0 - fx)[..., None] + t[j0, i1] * fx[..., None]
    bottom = t[j1, i0] * (1.0 - fx)[..., None] + t[j1, i1] * fx[..., None]
    ab = top * (1.0 - fy)[..., None] + bottom * fy[..., None]
    return ab[..., 0], ab[..., 1]


def ambient_pbr(pre: Prefiltered, n, v, base, metallic, roughness, occlusion):
    """(M, 3) the environment's light on a "pbr" surface (module docstring): unit normals
    n (M, 3), unit view vectors v (M, 3), linear base (M, 3), metallic, roughness (M,),
    occlusion (M, 1)."""
    m = np.asarray(metallic, np.float64)[:, None]
    f0 = 0.04 * (1.0 - m) + base * m
    ndv = np.einsum("ij,ij->i", n, v)
    r = 2.0 * ndv[:, None] * n - v
    a, b = lut_lookup(pre.lut, np.clip(ndv, 0.0, 1.0), roughness)
    spec = specular(pre, r, roughness) * (f0 * a[:, None] + b[:, None])
    return (base * (1.0 - m) * irradiance(pre.sh, n) + spec) * occlusion


def ambient_lit(pre: Prefiltered, n):
    """(M, 3) the environment's irradiance / pi at unit normals n (M, 3): what a
    Blinn-Phong ("lit") material adds to its ambient radiance."""
    return irradiance(pre.sh, n)


def environment_arrays(pre):
    """The arrays the compiled resolves take (engine.render.backends.numba_ibl,
    shaders/ibl.cuh): (texels (T, 3) float32, info (L, 3) int64, sh (9, 3) float64, lut
    (n, n, 2) float32, on) of a Prefiltered, or small stand-ins and on = False for
    None; every array a read-only view, so that a frame with an environment and one
    without pass Numba the same types (the split-sum table is read-only, and a
    writeable stand-in made the first environment frame compile the whole resolve
    again: 105 s after ``frustum warmup``)."""
    if pre is None:
        arrays = (np.zeros((1, 3), np.float32), np.zeros((1, 3), np.int64), np.zeros((9, 3)),
                  np.zeros((1, 1, 2), np.float32))
    else:
        arrays = (pre.texels, pre.info, np.ascontiguousarray(pre.sh, np.float64),
                  np.ascontiguousarray(pre.lut))
    return (*(_read_only(a) for a in arrays), pre is not None)


def _read_only(a):
    view = a.view()
    view.flags.writeable = False
    return view
