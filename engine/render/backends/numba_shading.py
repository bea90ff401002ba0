"""Resolve and shading compiled by Numba: the CPU fast path for engine.render.shading.

The same model as the NumPy resolve (perspective-correct attributes, base colour =
material x vertex colour x texture in linear light, ambient + Lambert + Blinn-Phong,
sRGB encode), arranged so that a pixel costs its arithmetic:

- Work: the screen in bands of ``BAND_ROWS`` rows, handed to Numba's threads one band at
  a time (dynamic chunks of 1), so a thread that loses its core to another process
  leaves its remaining bands to the others.
- Attributes: a run of pixels of one triangle along a row shares one setup. The
  homogeneous barycentrics ``b_i = adj_i . (x, y, 1)`` make every attribute a ratio of
  two planes, ``a(x, y) = (sum_i a_i adj_i) . (x, y, 1) / (sum_i adj_i) . (x, y, 1)``
  (the same perspective-correct value as ``sum_i a_i b_i / sum_i b_i``), so when the
  triangle changes the kernel forms the numerator planes of the material's varyings
  once (the three vertices read there, the row's y folded in); each pixel then costs
  one reciprocal and one multiply-add and multiply per varying, with no vertex gather.
  A flat normal is a constant plane; a double-sided back face's normal planes are
  negated in the setup.
- Textures: float32 linear texels (``Texture.linear`` and its mip levels,
  engine.render.materials); the level of detail from the run's u, v planes (their x
  coefficients and, set per run, the y ones: analytic derivatives, no neighbours; its
  log2 from the float's bits, numba_texels.log2), wrap modes computed once per sample
  and axis with the floor of one product (by the wrap period's reciprocal) and selects
  (engine.scene.sampling), or in the run loops a mask for a power-of-two period
  (``_axis_linear``), so no texel is decoded and no index takes an integer modulo; the
  four texels of a bilinear sample are blended in one 4-wide vector
  (numba_texels.blend4). The base colour texture is sampled once per run
  (``_texture_run``, up to ``RUN_PIXELS`` pixels at a time, into the band's sample row):
  where every pixel of the stretch reads level 0 with the magnification filter (the min
  filter reads level 0 anyway, or a bound of the level of detail over the stretch,
  ``_magnified``, is below the switch point) no level of detail is computed; the default
  "linear_mipmap_linear" has its own branch-free loop (and one for power-of-two chains,
  ``_trilinear_pow2``); the other min filters go through
  ``_sample``. The values are the per-pixel sampler's, bit for bit.
- sRGB encode: linear interpolation in a 4097-entry table of the exact curve: at most
  0.005/255 from the formula, so the 8-bit result differs from the NumPy resolve's in
  about 2 of 100,000 values, by 1.
- Specular: no ``pow`` per pixel. ``max(N.H, 0) ** s`` is 0 below the per-material
  ``N.H = c = 2 ** (-16 / s)`` (there it is under 2**-16, 0.05 of an 8-bit step at
  the encode's steepest slope, 12.92 x 255 x 2**-16) and above it is read by linear
  interpolation from a per-material table of ``SPECULAR_STEPS + 1`` values at evenly
  spaced ``N.H`` in [c, 1]. The interpolation error is at most h**2 / 8 times the
  curve's second derivative, h = (1 - c) / SPECULAR_STEPS: below 2e-5 for every
  shininess in [1, 10000] (checked in the tests), so the 8-bit colour stays within 1 of
  the NumPy resolve's exact power.

- PBR ("pbr" materials): the glTF metallic-roughness BRDF of engine.render.pbr per
  light (``_pbr_light``), inlined into the pixel loop (``_pbr_pixel``: a call per pixel
  cost more than the BRDF); its maps filtered by ``_sample``'s body as their samplers
  say at each one's level of detail per pixel (``_map_sample``, from the run's UV slopes
  in the tail of its planes, ``_map_slopes``).
- Normal maps (any lit kind): ``_mapped_normal`` (engine.render.normal_map) from the
  run's tangent planes, the map read by ``_map_sample`` as the "pbr" maps; each
  texture's uv0 or uv1 planes by the record's ``uv_sets``.
- Spot and ranged lights join the point lights' arrays with a cone row (axis, cos outer,
  1 / (cos inner - cos outer); a plain point light's cone lets everything through) and a
  range (0: none), read only when some light has either
  (engine.render.shading.point_light_arrays).
- Exposure and tone map (engine.render.tonemap) before the encode (``_display``).
- Image-based lighting (engine.render.ibl): a "pbr" pixel adds ``numba_ibl._ibl_pbr``
  (compiled on its own), a "lit" one the environment's irradiance to its ambient.
- Shadows: each light's row in the frame's shadow tables (engine.render.shadows.
  shadow_tables; -1: unshadowed) and, where it has a map and the triangle receives,
  its radiance times ``_shadow``'s visibility (the bias, projection and 3 x 3 PCF of
  engine.render.shadows.visibility), a function of its own like ``_sample``.

Depth comes from the key unchanged; colours match the NumPy resolve within 1/255.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ...scene.colorspace import linear_to_srgb
from ..attributes import VARYING_COUNT, varying_offsets
from ..frame import background_rgba
from ..ibl import environment_arrays
from ..materials import FRAME_ALPHA, pack_materials
from ..shading import light_arrays, point_light_arrays
from ..shadows import (
    BIAS_CONSTANT,
    BIAS_SLOPE,
    MAX_SLOPE,
    NO_SHADOWS,
    PCF_RADIUS,
    shadow_tables,
)
from ..tonemap import TONE_MAPS
from .kernel_cache import cached
from .numba_ibl import _ibl_irradiance, _ibl_pbr
from .numba_prefetch import prefetch
from .numba_texels import blend4, log2

__all__ = ["BAND_ROWS", "SPECULAR_STEPS", "resolve_numba", "specular_tables"]

# contract: fused multiply-adds (the results stay within the 1/255 of the NumPy resolve)
_opts = {"cache": cached(), "boundscheck": False, "error_model": "numpy",
         "fastmath": {"contract"}}
# for the texture functions called per pixel or per run (not inlined): no reference
# counting. With it, every call increfs and decrefs each array argument's meminfo
# (atomics on lines the threads share): about 30 ns of a 40 ns bilinear sample
# (measured). They allocate nothing, and the caller holds the arrays for the call
# (Numba's own string helpers take the same option)
_call_opts = {**_opts, "_nrt": False}
BAND_ROWS = 8
# each shadow lookup first prefetches the map rows of the pixel this many pixels further
# on its row (``_prefetch_ahead``): a map much finer than the pixels (2048^2 over the
# bunny on a plane at 1280x720: 20 texels a pixel) misses the cache at every lookup
SHADOW_AHEAD = 3
# the varyings this resolve reads, by their index in the offsets array it is given
_VARYINGS = ("position", "normal", "uv0", "color_linear", "tangent", "uv1")
_POSITION, _NORMAL, _UV0, _COLOR_LINEAR, _TANGENT, _UV1 = range(len(_VARYINGS))
_ENCODE_STEPS = 4096
_ENCODE = linear_to_srgb(np.linspace(0.0, 1.0, _ENCODE_STEPS + 1))
_SPECULAR_FLOOR = 2.0**-16  # see the module docstring
SPECULAR_STEPS = 1024
# per-material float and integer columns (pack_materials records as plain arrays:
# indexing a record's fields in the pixel loop cost Numba about 10% of the frame)
_F_COLOR, _F_SPECULAR, _F_SPEC_FROM, _F_SPEC_SCALE = 0, 4, 5, 6
_F_METALLIC, _F_ROUGHNESS, _F_OCCLUSION, _F_EMISSIVE, _F_NORMAL_SCALE = 7, 8, 9, 10, 13
_I_SHADING, _I_FLAGS, _I_TEXTURE, _I_MR, _I_OCCLUSION, _I_EMISSIVE = range(6)
_I_NORMAL, _I_UV_SETS = 6, 7
# materials.UV_SET_BITS
_UV_BASE, _UV_MR, _UV_OCCLUSION, _UV_EMISSIVE, _UV_NORMAL = 1, 2, 4, 8, 16
_PBR = 3  # materials.SHADING_CODES["pbr"]
_TONE_START, _TONE_DESATURATION = 0.8 - 0.04, 0.15  # engine.render.tonemap's constants
_PLANE = 2  # stored per plane and row: the x coefficient, the row's constant (y folded in)
# after the planes (a band's scratch row), for the maps' levels of detail (_map_slopes):
# the y coefficients of the uv0 numerators (u, v), of uv1's, of the denominator, the NDC
# steps of a pixel along x and y, and per map (metallic-roughness, occlusion, emissive,
# normal: _MAP_SLOTS) 1.0 where it is magnified along the whole row
_TAIL = _PLANE * (VARYING_COUNT + 1)
_TAIL_SIZE = 11
_MAP_SLOTS = ((7, _I_MR, _UV_MR), (8, _I_OCCLUSION, _UV_OCCLUSION),
              (9, _I_EMISSIVE, _UV_EMISSIVE), (10, _I_NORMAL, _UV_NORMAL))


@numba.njit(inline="always")
def _axis(u, n, mode, linear, rp):
    """Wrapped texel indices along one axis (engine.scene.sampling._axis): (i0, i1, f).
    ``rp`` is 1 / the wrap period (n for repeat, 2n for mirror): a multiply, not a
    division, per sample; the quotient's rounding is corrected by the selects."""
    x = u * n
    if mode == 1:
        x = min(max(x, -1.0), n + 1.0)
    else:
        x = min(max(x, -2.0**40), 2.0**40)
    if linear:
        x -= 0.5
    x0 = np.floor(x)
    f = x - x0 if linear else 0.0
    if mode == 1:
        a = min(max(x0, 0.0), n - 1.0)
        b = min(max(x0 + 1, 0.0), n - 1.0)
    else:
        p = n if mode == 0 else 2.0 * n
        m = x0 - p * np.floor(x0 * rp)
        m = m + p if m < 0 else (m - p if m >= p else m)
        m1 = 0.0 if m + 1 >= p else m + 1
        if mode == 2:
            m = m if m < n else p - 1 - m
            m1 = m1 if m1 < n else p - 1 - m1
        a, b = m, m1
    if not linear:
        b = a
    return np.int64(a), np.int64(b), f


@numba.njit(inline="always")
def _axis_linear(u, n, mode, rp):
    """``_axis`` of a linear filter for the run loops: where the wrap period (n for
    repeat, 2n for mirror) is a power of two, the index modulo it is the integer
    floor(x) & (period - 1) in two's complement (negative indices too, |x| <= 2**40):
    the same indices as the float path, in fewer operations. Only there: each inlined
    copy of both paths costs compile time (``_sample`` keeps the float path)."""
    if mode == 1 or (n & (n - 1)) != 0:
        return _axis(u, n, mode, True, rp)
    return _axis_pow2(u, n, mode == 2)


@numba.njit(inline="always")
def _axis_pow2(u, n, mirror):
    """``_axis_linear``'s mask path: n a power of two, wrap repeat or (``mirror``)
    mirrored repeat."""
    x = min(max(u * n, -2.0**40), 2.0**40) - 0.5
    x0 = np.floor(x)
    p1 = 2 * n - 1 if mirror else n - 1
    a = np.int64(x0) & p1
    b = (a + 1) & p1
    if mirror:
        a = a if a < n else p1 - a
        b = b if b < n else p1 - b
    return a, b, x - x0


# _sample is compiled as a function of its own, not inlined into the resolve: inlined at
# every call site (then the base texture and three PBR maps, each with its trilinear
# levels) the resolve took about 6 minutes to compile on 2 cores
@numba.njit(**_call_opts)
def _sample(texels, info, periods, k, u, v, lam):
    """Texture k at (u, v) and level of detail ``lam`` -> linear (r, g, b, a)
    (engine.scene.sampling.sample: magnification, the min filter's levels)."""
    return _sampled(texels, info, periods, k, u, v, lam)


# the body of _sample, inlined into the two functions that filter (_sample, _map_sample)
@numba.njit(inline="always")
def _sampled(texels, info, periods, k, u, v, lam):
    """``_sample``'s value."""
    if not (math.isfinite(u) and math.isfinite(v)):
        u, v = 0.0, 0.0
    mag_linear, code = info[k, 5] != 0, info[k, 6]
    c = 0.5 if mag_linear and (code == 2 or code == 4) else 0.0
    # the level (table row) and filter, and the second level of a "*_mipmap_linear"
    # blend: two filter sites, not one per case (each inlined copy costs compile time)
    row, linear, second, f = k, mag_linear, np.int64(-1), np.float32(0.0)
    if lam > c:  # minification (nan reads as magnification)
        linear = code % 2 == 1
        if code >= 2:
            q = info[k, 7] - 1
            first = info[k, 8]
            if code < 4:
                row = first + (0 if lam <= 0.5 else min(np.int64(math.ceil(lam + 0.5)) - 1, q))
            else:
                top = min(lam, q)
                d = np.int64(math.floor(top))
                f = np.float32(top - d)
                row = first + d
                if f > 0:
                    second = row + 1
    r, g, b, a = _filtered(texels, info, periods, row, u, v, linear)
    if second >= 0:
        r1, g1, b1, a1 = _filtered(texels, info, periods, second, u, v, linear)
        r, g, b, a = r + (r1 - r) * f, g + (g1 - g) * f, b + (b1 - b) * f, a + (a1 - a) * f
    return r, g, b, a


@numba.njit(inline="always")
def _filtered(texels, info, periods, k, u, v, linear):
    """Texture table row k (a texture or one of its mip levels) at finite (u, v) ->
    linear (r, g, b, a), bilinear when ``linear``, else the nearest texel;
    ``periods[k]``: 1 / the wrap period along u and v (``_material_arrays``)."""
    off, w = info[k, 0], info[k, 1]
    i0, i1, fx = _axis(u, w, info[k, 3], linear, periods[k, 0])
    j0, j1, fy = _axis(v, info[k, 2], info[k, 4], linear, periods[k, 1])
    return _blend(texels, off, w, i0, i1, fx, j0, j1, fy)


@numba.njit(inline="always")
def _filtered_at(texels, off, w, h, wrap_s, wrap_t, rp_s, rp_t, u, v):
    """``_filtered`` bilinear for the run loops (``_axis_linear``), of the texture table
    row (off, w, h, wrap_s, wrap_t) with periods (rp_s, rp_t) read by the caller (the
    level-0 loop reads them once: its stores to the samples could alias the table, so
    the compiler would read them again per pixel)."""
    i0, i1, fx = _axis_linear(u, w, wrap_s, rp_s)
    j0, j1, fy = _axis_linear(v, h, wrap_t, rp_t)
    return _blend(texels, off, w, i0, i1, fx, j0, j1, fy)


@numba.njit(inline="always")
def _blend(texels, off, w, i0, i1, fx, j0, j1, fy):
    """The bilinear blend of texels (i0 or i1, j0 or j1) of the level at ``off`` of width
    w, weights 1 - fx, fx along a row and 1 - fy, fy down (nearest: fx = fy = 0)."""
    r0, r1 = off + j0 * w, off + j1 * w
    # the blend in float32, as the texels are: no conversion per texel (1e-7 relative)
    w00, w01 = np.float32((1.0 - fx) * (1.0 - fy)), np.float32(fx * (1.0 - fy))
    w10, w11 = np.float32((1.0 - fx) * fy), np.float32(fx * fy)
    # one 4-wide vector for the four channels (numba_texels.blend4)
    return blend4(texels, r0 + i0, r0 + i1, r1 + i0, r1 + i1, w00, w01, w10, w11)


@numba.njit(inline="always")
def _at(plane, c, xn, inv):
    """Varying column c at the pixel: its numerator plane at x, over the denominator."""
    return (plane[_PLANE * (c + 1)] * xn + plane[_PLANE * (c + 1) + 1]) * inv


@numba.njit(inline="always")
def _frame_alpha(flags, a):
    """The 8-bit alpha a drawn pixel writes: opaque whatever its base alpha ``a``
    (materials.FRAME_ALPHA), except for a blended material (flag 8): ``a`` rounded, as
    colorspace.to_unorm8 (the transparency pass composites it)."""
    if flags & 8:
        return np.uint32(np.rint(min(max(a, 0.0), 1.0) * 255.0))
    return np.uint32(FRAME_ALPHA)


@numba.njit(inline="always")
def _encode(lin, table):
    x = min(max(lin, 0.0), 1.0) * _ENCODE_STEPS
    i = min(np.int64(x), _ENCODE_STEPS - 1)
    f = x - i
    s = table[i] + (table[i + 1] - table[i]) * f
    return np.uint32(np.rint(s * 255.0))


@numba.njit(inline="always")
def _columns(c0, c1, v0, v1, v2, vary, adj, t, r0, r1, r2, plane):
    """Numerator planes of varying columns [c0, c1) (see _setup)."""
    for c in range(c0, c1):
        a0, a1, a2 = vary[v0, c], vary[v1, c], vary[v2, c]
        plane[_PLANE * (c + 1)] = a0 * adj[t, 0, 0] + a1 * adj[t, 1, 0] + a2 * adj[t, 2, 0]
        plane[_PLANE * (c + 1) + 1] = a0 * r0 + a1 * r1 + a2 * r2


@numba.njit(inline="always")
def _setup(t, yn, tris, adj, front, vary, mat_i, mi, offsets, position, plane):
    """The planes of triangle t on row yn into plane[]: plane[0:2] the denominator's
    x coefficient and the row's constant, then for each varying column c the material
    reads, plane[2 (c + 1):2 (c + 2)], its numerator's: the position when ``position``
    (point lights, the specular view vector), the normal when lit, the colour with
    vertex colours, uv0 when textured. Flat normals become constant planes; back faces
    of double-sided materials get negated normal planes."""
    po, no = offsets[_POSITION], offsets[_NORMAL]
    uo, co = offsets[_UV0], offsets[_COLOR_LINEAR]
    v0, v1, v2 = tris[t, 0], tris[t, 1], tris[t, 2]
    qa = adj[t, 0, 0] + adj[t, 1, 0] + adj[t, 2, 0]
    qr = (adj[t, 0, 1] + adj[t, 1, 1] + adj[t, 2, 1]) * yn + (
        adj[t, 0, 2] + adj[t, 1, 2] + adj[t, 2, 2])
    plane[0], plane[1] = qa, qr
    r0 = adj[t, 0, 1] * yn + adj[t, 0, 2]
    r1 = adj[t, 1, 1] * yn + adj[t, 1, 2]
    r2 = adj[t, 2, 1] * yn + adj[t, 2, 2]
    shading, flags = mat_i[mi, _I_SHADING], mat_i[mi, _I_FLAGS]
    # "pbr" with flat normals (flag 4) takes the flat path's geometric normal
    flat = shading == 2 or (shading == _PBR and (flags & 4) != 0)
    if shading != 0 and (position or shading == _PBR):
        _columns(po, po + 3, v0, v1, v2, vary, adj, t, r0, r1, r2, plane)
    if (shading == 1 or shading == _PBR) and not flat:
        _columns(no, no + 3, v0, v1, v2, vary, adj, t, r0, r1, r2, plane)
    if flags & 1:
        _columns(co, co + 4, v0, v1, v2, vary, adj, t, r0, r1, r2, plane)
    # each texture's uv set (uv_sets bit set: uv1), and the tangent for a normal map
    sets = mat_i[mi, _I_UV_SETS]
    reads0 = reads1 = False
    if mat_i[mi, _I_TEXTURE] >= 0:
        reads0, reads1 = reads0 or not (sets & _UV_BASE), reads1 or (sets & _UV_BASE) != 0
    if shading == _PBR:
        for k_, bit in ((_I_MR, _UV_MR), (_I_OCCLUSION, _UV_OCCLUSION),
                        (_I_EMISSIVE, _UV_EMISSIVE)):
            if mat_i[mi, k_] >= 0:
                reads0, reads1 = reads0 or not (sets & bit), reads1 or (sets & bit) != 0
    if shading != 0 and mat_i[mi, _I_NORMAL] >= 0:
        reads0 = reads0 or not (sets & _UV_NORMAL)
        reads1 = reads1 or (sets & _UV_NORMAL) != 0
        to = offsets[_TANGENT]
        _columns(to, to + 4, v0, v1, v2, vary, adj, t, r0, r1, r2, plane)
    if reads0:
        _columns(uo, uo + 2, v0, v1, v2, vary, adj, t, r0, r1, r2, plane)
    if reads1:
        _columns(offsets[_UV1], offsets[_UV1] + 2, v0, v1, v2, vary, adj, t, r0, r1, r2, plane)
    if flat:  # the geometric normal, constant over the triangle
        e1x, e1y, e1z = (vary[v1, po] - vary[v0, po], vary[v1, po + 1] - vary[v0, po + 1],
                         vary[v1, po + 2] - vary[v0, po + 2])
        e2x, e2y, e2z = (vary[v2, po] - vary[v0, po], vary[v2, po + 1] - vary[v0, po + 1],
                         vary[v2, po + 2] - vary[v0, po + 2])
        nx, ny, nz = e1y * e2z - e1z * e2y, e1z * e2x - e1x * e2z, e1x * e2y - e1y * e2x
        gl = math.sqrt(nx * nx + ny * ny + nz * nz)
        g = (nx, ny, nz)
        for r in range(3):  # a constant g is the plane g * (denominator plane)
            k = _PLANE * (no + r + 1)
            plane[k] = g[r] / gl * qa if gl > 0 else 0.0
            plane[k + 1] = g[r] / gl * qr if gl > 0 else 0.0
    if shading != 0 and (flags & 2) and not front[t]:
        for r in range(3):
            k = _PLANE * (no + r + 1)
            plane[k] = -plane[k]
            plane[k + 1] = -plane[k + 1]


@numba.njit(**{**_opts, "parallel": True})
def _resolve(keys, width, height, n_points, n_tris, point_rgba, line_rgba, background,
             tris, tri_material, adj, front, vary, offsets, mat_f, mat_i, spec_table, texels,
             tex_info, tex_periods, ambient, dir_l, dir_e, pt_pos, pt_e, pt_cone, pt_range,
             windowed, eye, ortho, view_dir, exposure, tone, encode, scratch, tex_runs,
             color_out, depth_out, env_texels, env_info, env_sh, env_lut, has_env, sh_texels,
             sh_table, sh_dir, sh_point, sh_receive, n_maps):
    empty = np.uint64(0xFFFFFFFFFFFFFFFF)
    low_mask = np.uint64(0xFFFFFFFF)
    n_surface = n_points + n_tris
    n_dir = dir_l.shape[0]
    n_light = n_dir + pt_pos.shape[0]
    needs_position = pt_pos.shape[0] > 0 or n_maps > 0  # shadow lookups need p too
    x_scale, x_offset = 2.0 / width, 1.0 / width - 1.0
    ahead = SHADOW_AHEAD * x_scale  # NDC x of SHADOW_AHEAD pixels
    y_scale = 2.0 / height
    po, no, uo, co = offsets[_POSITION], offsets[_NORMAL], offsets[_UV0], offsets[_COLOR_LINEAR]
    n_bands = (height + BAND_ROWS - 1) // BAND_ROWS
    for band in numba.prange(n_bands):
        # this band's planes, allocated once by the caller and reused: allocating in
        # worker threads cost a third of the frame (measured)
        plane = scratch[band]
        samples = tex_runs[band]  # the texture samples of the current run (_texture_run)
        for py in range(band * BAND_ROWS, min(height, (band + 1) * BAND_ROWS)):
            yn = 1.0 - (2.0 * py + 1.0) / height
            last = np.int64(-1)
            mi = shading = flags = ti = np.int64(0)
            bo = uo
            lod_qy = lod_uy = lod_vy = lod_w = lod_h = 0.0
            tex_start = tex_end = np.int64(0)
            for px in range(width):
                p = py * width + px
                k = keys[p]
                if k == empty:
                    color_out[p] = background
                    depth_out[p] = np.uint32(0x3F800000)  # 1.0f
                    continue
                depth_out[p] = np.uint32(k >> np.uint64(32))
                i = np.int64(k & low_mask)
                if i < n_points:
                    color_out[p] = point_rgba[i]
                    continue
                if i >= n_surface:
                    color_out[p] = line_rgba[i - n_surface]
                    continue
                t = i - n_points
                if t != last:  # a new run: this triangle's planes on this row
                    last = t
                    mi = np.int64(tri_material[t])
                    shading, flags, ti = mat_i[mi, _I_SHADING], mat_i[mi, _I_FLAGS], \
                        mat_i[mi, _I_TEXTURE]
                    _setup(t, yn, tris, adj, front, vary, mat_i, mi, offsets,
                           needs_position or (mat_f[mi, _F_SPECULAR] > 0 and not ortho),
                           plane)
                    bo = offsets[_UV1] if mat_i[mi, _I_UV_SETS] & _UV_BASE else uo
                    if _reads_maps(mat_i, mi, shading):
                        _map_slopes(t, tris, adj, vary, offsets, x_scale, y_scale, x_offset,
                                    (width - 1) * x_scale + x_offset, mat_i, mi, tex_info,
                                    plane)
                    if ti >= 0:
                        lod_qy, lod_uy, lod_vy, lod_w, lod_h = _uv_slopes(
                            t, tris, adj, vary, bo, ti, tex_info)
                xn = px * x_scale + x_offset
                q = plane[0] * xn + plane[1]
                inv = 1.0 / q if q != 0 else 1.0
                r, g = mat_f[mi, _F_COLOR], mat_f[mi, _F_COLOR + 1]
                b, a = mat_f[mi, _F_COLOR + 2], mat_f[mi, _F_COLOR + 3]
                if flags & 1:
                    r, g = r * _at(plane, co, xn, inv), g * _at(plane, co + 1, xn, inv)
                    b, a = b * _at(plane, co + 2, xn, inv), a * _at(plane, co + 3, xn, inv)
                if ti >= 0:
                    if px >= tex_end:  # a run's first pixel (or its next RUN_PIXELS)
                        tex_start = px
                        tex_end = px + _texture_run(
                            keys, p, px, min(RUN_PIXELS, width - px), x_scale, x_offset,
                            y_scale, plane, bo, lod_qy, lod_uy, lod_vy, lod_w, lod_h, texels,
                            tex_info, tex_periods, ti, samples)
                    j = px - tex_start
                    tr, tg, tb, ta = samples[j, 0], samples[j, 1], samples[j, 2], samples[j, 3]
                    r, g, b, a = r * tr, g * tg, b * tb, a * ta
                alpha = _frame_alpha(flags, a)
                if shading == 0:
                    lr, lg, lb = _display(r, g, b, exposure, tone)
                    color_out[p] = (_encode(lr, encode) | (_encode(lg, encode) << 8)
                                    | (_encode(lb, encode) << 16) | (alpha << 24))
                    continue
                if shading == _PBR:
                    receives = n_maps > 0 and sh_receive[t] != 0
                    lights = (ambient, dir_l, dir_e, pt_pos, pt_e, pt_cone, pt_range, windowed)
                    env = (env_texels, env_info, env_sh, env_lut, has_env)
                    shadow = (sh_texels, sh_table, sh_dir, sh_point, ahead)
                    lr, lg, lb = _pbr_pixel(plane, xn, inv, t, mi, r, g, b, tris, vary, offsets,
                                            flags, front, mat_f, mat_i, texels, tex_info,
                                            tex_periods, lights, eye, ortho, view_dir, env,
                                            shadow, receives)
                    lr, lg, lb = _display(lr, lg, lb, exposure, tone)
                    color_out[p] = (_encode(lr, encode) | (_encode(lg, encode) << 8)
                                    | (_encode(lb, encode) << 16) | (alpha << 24))
                    continue
                nx, ny, nz = (_at(plane, no, xn, inv), _at(plane, no + 1, xn, inv),
                              _at(plane, no + 2, xn, inv))
                nl = nx * nx + ny * ny + nz * nz
                if nl > 0:
                    k_n = 1.0 / math.sqrt(nl)
                    nx, ny, nz = nx * k_n, ny * k_n, nz * k_n
                else:  # no usable normal: the geometric one
                    nx, ny, nz = _geometric(t, tris, vary, po, flags, front)
                if mat_i[mi, _I_NORMAL] >= 0:
                    nx, ny, nz = _mapped_normal(plane, xn, inv, nx, ny, nz,
                                                (flags & 2) != 0 and not front[t], mi, mat_f,
                                                mat_i, offsets, texels, tex_info, tex_periods)
                spec = mat_f[mi, _F_SPECULAR]
                wx = wy = wz = 0.0
                if needs_position or (spec > 0 and not ortho):  # point lights, view vector
                    wx, wy, wz = (_at(plane, po, xn, inv), _at(plane, po + 1, xn, inv),
                                  _at(plane, po + 2, xn, inv))
                dr, dg, db = ambient[0], ambient[1], ambient[2]
                if has_env:  # the environment joins the ambient (engine.render.ibl)
                    dr, dg, db = _add3(dr, dg, db, _ibl_irradiance(env_sh, nx, ny, nz))
                sr = sg = sb = 0.0
                if spec > 0:
                    if ortho:
                        vx, vy, vz = view_dir[0], view_dir[1], view_dir[2]
                    else:
                        vx, vy, vz = eye[0] - wx, eye[1] - wy, eye[2] - wz
                        vl = vx * vx + vy * vy + vz * vz
                        if vl > 0:
                            k_v = 1.0 / math.sqrt(vl)
                            vx, vy, vz = vx * k_v, vy * k_v, vz * k_v
                for li in range(n_light):
                    if li < n_dir:
                        lx, ly, lz = dir_l[li, 0], dir_l[li, 1], dir_l[li, 2]
                        er, eg, eb = dir_e[li, 0], dir_e[li, 1], dir_e[li, 2]
                    else:
                        qi = li - n_dir
                        lx, ly, lz, k_l = _point(pt_pos, pt_cone, pt_range, windowed, qi,
                                                 wx, wy, wz)
                        er, eg, eb = pt_e[qi, 0] * k_l, pt_e[qi, 1] * k_l, pt_e[qi, 2] * k_l
                    ndl = nx * lx + ny * ly + nz * lz
                    if ndl > 0 and n_maps > 0 and sh_receive[t] != 0:
                        vis = _light_visibility(sh_texels, sh_table, sh_dir, sh_point, li,
                                                n_dir, wx, wy, wz, nx, ny, nz, ndl, lx, ly, lz,
                                                plane, po, xn + ahead)
                        er, eg, eb = er * vis, eg * vis, eb * vis
                    if ndl > 0:
                        dr += er * ndl
                        dg += eg * ndl
                        db += eb * ndl
                        if spec > 0:
                            hx, hy, hz = lx + vx, ly + vy, lz + vz
                            hl = hx * hx + hy * hy + hz * hz
                            ndh = (nx * hx + ny * hy + nz * hz) / math.sqrt(hl) if hl > 0 else 0.0
                            if ndh > mat_f[mi, _F_SPEC_FROM]:
                                x = min((ndh - mat_f[mi, _F_SPEC_FROM]) * mat_f[mi, _F_SPEC_SCALE],
                                        SPECULAR_STEPS - 1e-9)
                                j = np.int64(x)
                                lo = spec_table[mi, j]
                                f = spec * (lo + (spec_table[mi, j + 1] - lo) * (x - j))
                                sr += er * f
                                sg += eg * f
                                sb += eb * f
                lr, lg, lb = _display(r * dr + sr, g * dg + sg, b * db + sb, exposure, tone)
                color_out[p] = (_encode(lr, encode) | (_encode(lg, encode) << 8)
                                | (_encode(lb, encode) << 16) | (alpha << 24))


@numba.njit(inline="always")
def _point(pt_pos, pt_cone, pt_range, windowed, qi, wx, wy, wz):
    """(unit direction to point light qi from (wx, wy, wz), the factor of its radiance
    arriving there): 1 / d^2, times KHR_lights_punctual's spot cone t^2 and range window
    clamp(1 - (d / range)^4, 0, 1) when ``windowed`` (engine.render.pbr.range_window)."""
    lx, ly, lz = pt_pos[qi, 0] - wx, pt_pos[qi, 1] - wy, pt_pos[qi, 2] - wz
    r2 = max(lx * lx + ly * ly + lz * lz, 1e-30)
    k_l = 1.0 / math.sqrt(r2)
    lx, ly, lz = lx * k_l, ly * k_l, lz * k_l
    k = 1.0 / r2
    if windowed:
        cos_a = -(lx * pt_cone[qi, 0] + ly * pt_cone[qi, 1] + lz * pt_cone[qi, 2])
        s = min(max((cos_a - pt_cone[qi, 3]) * pt_cone[qi, 4], 0.0), 1.0)
        k *= s * s
        if pt_range[qi] > 0:
            q = r2 * r2 / (pt_range[qi] ** 4)
            k *= min(max(1.0 - q, 0.0), 1.0)
    return lx, ly, lz, k


@numba.njit(inline="always")
def _display(r, g, b, exposure, tone):
    """Exposure, then tone map ``tone`` (0 none: the encode clamps; 1 Khronos PBR
    Neutral), as engine.render.tonemap.apply_tone_map."""
    r, g, b = r * exposure, g * exposure, b * exposure
    if tone == 0:
        return r, g, b
    r, g, b = max(r, 0.0), max(g, 0.0), max(b, 0.0)
    x = min(r, min(g, b))
    off = x - 6.25 * x * x if x < 0.08 else 0.04
    r, g, b = r - off, g - off, b - off
    peak = max(r, max(g, b))
    if peak < _TONE_START:
        return r, g, b
    d = 1.0 - _TONE_START
    new_peak = 1.0 - d * d / (peak + d - _TONE_START)
    k = new_peak / peak
    w = 1.0 - 1.0 / (_TONE_DESATURATION * (peak - new_peak) + 1.0)
    return (r * k * (1.0 - w) + new_peak * w, g * k * (1.0 - w) + new_peak * w,
            b * k * (1.0 - w) + new_peak * w)


@numba.njit(inline="always")
def _pbr_light(nx, ny, nz, vx, vy, vz, lx, ly, lz, r, g, b, metallic, a2):
    """pi x the glTF metallic-roughness BRDF (engine.render.pbr, glTF 2.0 Appendix B)
    for unit N, V, L and linear base (r, g, b), metallic, alpha**2: (r, g, b) factors
    of the light's radiance times max(N.L, 0)."""
    ndl = nx * lx + ny * ly + nz * lz
    if ndl <= 0:
        return 0.0, 0.0, 0.0
    hx, hy, hz = lx + vx, ly + vy, lz + vz
    hl = math.sqrt(hx * hx + hy * hy + hz * hz)
    if hl > 0:
        hx, hy, hz = hx / hl, hy / hl, hz / hl
    ndh = nx * hx + ny * hy + nz * hz
    ndv = nx * vx + ny * vy + nz * vz
    vdh = vx * hx + vy * hy + vz * hz
    hdl = hx * lx + hy * ly + hz * lz
    d = 0.0
    if ndh > 0:
        q = ndh * ndh * (a2 - 1.0) + 1.0
        d = a2 / (math.pi * max(q * q, 1e-300))
    vis = 0.0
    if hdl > 0 and vdh > 0:
        anl, anv = abs(ndl), abs(ndv)
        vis = 1.0 / max((anl + math.sqrt(a2 + (1.0 - a2) * anl * anl))
                        * (anv + math.sqrt(a2 + (1.0 - a2) * anv * anv)), 1e-300)
    x = 1.0 - abs(vdh)
    k = x * x * x * x * x  # Schlick's (1 - V.H)^5 without pow
    # pi f N.L = ((1 - F) c (1 - m) + pi F D Vis) N.L, per channel (no array per pixel)
    dv, dm = math.pi * d * vis, 1.0 - metallic
    fr = 0.04 * dm + r * metallic
    fr += (1.0 - fr) * k
    fg = 0.04 * dm + g * metallic
    fg += (1.0 - fg) * k
    fb = 0.04 * dm + b * metallic
    fb += (1.0 - fb) * k
    return (((1.0 - fr) * r * dm + fr * dv) * ndl, ((1.0 - fg) * g * dm + fg * dv) * ndl,
            ((1.0 - fb) * b * dm + fb * dv) * ndl)


# inlined into the resolve, its one caller: as a function of its own (ed1bef1) its some
# forty arguments, passed per pixel, cost more than the BRDF (benchmarks/pbr.py: the
# textured quad 1.25x -> 1.74x Blinn-Phong's frame). The lights, environment and shadow
# arrays come as tuples: Python passes a call of more than 30 arguments as *args, which
# Numba's inliner refuses
@numba.njit(inline="always")
def _pbr_pixel(plane, xn, inv, t, mi, r, g, b, tris, vary, offsets, flags, front, mat_f,
               mat_i, texels, tex_info, tex_periods, lights, eye, ortho, view_dir, env,
               shadow, receives):
    """Linear radiance of a "pbr" pixel of base (r, g, b) (SurfaceShader._pbr);
    ``lights``: (ambient, dir_l, dir_e, pt_pos, pt_e, pt_cone, pt_range, windowed),
    ``env``: (env_texels, env_info, env_sh, env_lut, has_env), ``shadow``: (sh_texels,
    sh_table, sh_dir, sh_point) as ``_resolve`` takes them and the NDC x step of
    SHADOW_AHEAD pixels; ``receives``: the shadow maps apply to this pixel."""
    ambient, dir_l, dir_e, pt_pos, pt_e, pt_cone, pt_range, windowed = lights
    env_texels, env_info, env_sh, env_lut, has_env = env
    sh_texels, sh_table, sh_dir, sh_point, ahead = shadow
    po, no = offsets[_POSITION], offsets[_NORMAL]
    nx, ny, nz = (_at(plane, no, xn, inv), _at(plane, no + 1, xn, inv),
                  _at(plane, no + 2, xn, inv))
    nl = nx * nx + ny * ny + nz * nz
    if nl > 0:
        k_n = 1.0 / math.sqrt(nl)
        nx, ny, nz = nx * k_n, ny * k_n, nz * k_n
    else:
        nx, ny, nz = _geometric(t, tris, vary, po, flags, front)
    if mat_i[mi, _I_NORMAL] >= 0:
        nx, ny, nz = _mapped_normal(plane, xn, inv, nx, ny, nz,
                                    (flags & 2) != 0 and not front[t], mi, mat_f, mat_i,
                                    offsets, texels, tex_info, tex_periods)
    wx, wy, wz = (_at(plane, po, xn, inv), _at(plane, po + 1, xn, inv),
                  _at(plane, po + 2, xn, inv))
    if ortho:
        vx, vy, vz = view_dir[0], view_dir[1], view_dir[2]
    else:
        vx, vy, vz = eye[0] - wx, eye[1] - wy, eye[2] - wz
        vl = vx * vx + vy * vy + vz * vz
        if vl > 0:
            k_v = 1.0 / math.sqrt(vl)
            vx, vy, vz = vx * k_v, vy * k_v, vz * k_v
    metallic, rough = mat_f[mi, _F_METALLIC], mat_f[mi, _F_ROUGHNESS]
    occlusion = 1.0
    er, eg, eb = mat_f[mi, _F_EMISSIVE], mat_f[mi, _F_EMISSIVE + 1], mat_f[mi, _F_EMISSIVE + 2]
    k_mr, k_occ, k_em = mat_i[mi, _I_MR], mat_i[mi, _I_OCCLUSION], mat_i[mi, _I_EMISSIVE]
    if k_mr >= 0 or k_occ >= 0 or k_em >= 0:
        # each map at its own level of detail (its size, its uv set: _map_sample)
        sets = mat_i[mi, _I_UV_SETS]
        if k_mr >= 0:  # B metal, G roughness, stored values
            _, sg, sb, _ = _map_sample(plane, xn, inv, offsets, sets & _UV_MR, 7, texels,
                                       tex_info, tex_periods, k_mr)
            metallic, rough = metallic * sb, rough * sg
        if k_occ >= 0:
            sr, _, _, _ = _map_sample(plane, xn, inv, offsets, sets & _UV_OCCLUSION, 8,
                                      texels, tex_info, tex_periods, k_occ)
            occlusion = 1.0 + mat_f[mi, _F_OCCLUSION] * (sr - 1.0)
        if k_em >= 0:
            sr, sg, sb, _ = _map_sample(plane, xn, inv, offsets, sets & _UV_EMISSIVE, 9,
                                        texels, tex_info, tex_periods, k_em)
            er, eg, eb = er * sr, eg * sg, eb * sb
    a2 = rough ** 4
    f0r, f0g, f0b = (0.04 * (1.0 - metallic) + r * metallic, 0.04 * (1.0 - metallic)
                     + g * metallic, 0.04 * (1.0 - metallic) + b * metallic)
    lr = ambient[0] * (r * (1.0 - metallic) + f0r) * occlusion
    lg = ambient[1] * (g * (1.0 - metallic) + f0g) * occlusion
    lb = ambient[2] * (b * (1.0 - metallic) + f0b) * occlusion
    if has_env:  # image-based lighting (engine.render.ibl.ambient_pbr)
        lr, lg, lb = _add3(lr, lg, lb, _ibl_pbr(env_texels, env_info, env_sh, env_lut, nx, ny,
                                                nz, vx, vy, vz, r, g, b, metallic, rough,
                                                occlusion))
    n_dir = dir_l.shape[0]
    for li in range(n_dir + pt_pos.shape[0]):
        if li < n_dir:
            lx, ly, lz = dir_l[li, 0], dir_l[li, 1], dir_l[li, 2]
            cr, cg, cb = dir_e[li, 0], dir_e[li, 1], dir_e[li, 2]
        else:
            qi = li - n_dir
            lx, ly, lz, k_l = _point(pt_pos, pt_cone, pt_range, windowed, qi, wx, wy, wz)
            cr, cg, cb = pt_e[qi, 0] * k_l, pt_e[qi, 1] * k_l, pt_e[qi, 2] * k_l
        ndl = nx * lx + ny * ly + nz * lz
        if receives and ndl > 0:
            vis = _light_visibility(sh_texels, sh_table, sh_dir, sh_point, li, n_dir, wx, wy,
                                    wz, nx, ny, nz, ndl, lx, ly, lz, plane, po, xn + ahead)
            cr, cg, cb = cr * vis, cg * vis, cb * vis
        fr, fg, fb = _pbr_light(nx, ny, nz, vx, vy, vz, lx, ly, lz, r, g, b, metallic, a2)
        lr += fr * cr
        lg += fg * cg
        lb += fb * cb
    return lr + er, lg + eg, lb + eb


@numba.njit(inline="always")
def _light_visibility(sh_texels, sh_table, sh_dir, sh_point, li, n_dir, wx, wy, wz, nx, ny,
                      nz, ndl, lx, ly, lz, plane, po, xn_ahead):
    """Visibility in [0, 1] of light li (li < n_dir: directional li, else point li -
    n_dir) at a receiving pixel with N.L ``ndl`` > 0: its map's ``_shadow``, 1 when the
    light has no map (the lit and the "pbr" paths' one lookup); ``plane``, ``po`` and
    ``xn_ahead`` for its prefetch (``_prefetch_ahead``)."""
    sm = sh_dir[li] if li < n_dir else sh_point[li - n_dir]
    if sm < 0:
        return 1.0
    return _shadow(sh_texels, sh_table, sm, wx, wy, wz, nx, ny, nz, ndl, lx, ly, lz, plane, po,
                   xn_ahead)


@numba.njit(inline="always")
def _prefetch_ahead(texels, table, k, plane, po, xn):
    """Start the cache misses of a later lookup in map k: the three map rows around the
    texel of this run's position at NDC x ``xn`` (unbiased: the bias moves a point along
    L, which keeps its texel). A hint only: nothing is read or written."""
    q = plane[0] * xn + plane[1]
    if q == 0:
        return
    inv = 1.0 / q
    wx, wy, wz = _at(plane, po, xn, inv), _at(plane, po + 1, xn, inv), _at(plane, po + 2, xn,
                                                                           inv)
    w = table[k, 14] * wx + table[k, 15] * wy + table[k, 16] * wz + table[k, 17]
    if not w > 0:
        return
    s = np.int64(table[k, 1])
    cx = table[k, 2] * wx + table[k, 3] * wy + table[k, 4] * wz + table[k, 5]
    cy = table[k, 6] * wx + table[k, 7] * wy + table[k, 8] * wz + table[k, 9]
    if w != 1.0:  # an orthographic map's w is 1 (_shadow): no divisions
        cx, cy = cx / w, cy / w
    sx = (cx + 1.0) * 0.5 * s
    sy = (1.0 - cy) * 0.5 * s
    if 1.0 <= sx < s - 1 and 1.0 <= sy < s - 1:  # and finite
        row = np.int64(table[k, 0]) + np.int64(sy) * s + np.int64(sx)
        prefetch(texels, row - s)
        prefetch(texels, row)
        prefetch(texels, row + s)


# no reference counting (_call_opts): called per pixel and light, as _sample is
@numba.njit(**_call_opts)
def _shadow(texels, table, k, wx, wy, wz, nx, ny, nz, ndl, lx, ly, lz, plane, po, xn_ahead):
    """Visibility in [0, 1] of shadow map k at batch-frame point (wx, wy, wz) of unit
    normal (nx, ny, nz), for N.L ``ndl`` > 0 and unit direction to the light (lx, ly,
    lz): the slope-scaled bias, the light's projection and the 3 x 3 PCF of
    engine.render.shadows.visibility. First the map rows of the run's point at NDC x
    ``xn_ahead`` are prefetched (``_prefetch_ahead``, ``plane`` and ``po`` the run's
    planes and position offset), for the lookup of a pixel further on."""
    _prefetch_ahead(texels, table, k, plane, po, xn_ahead)
    ndl = min(ndl, 1.0)
    nda = nx * table[k, 23] + ny * table[k, 24] + nz * table[k, 25]
    slope = min(math.sqrt(max(1.0 - nda * nda, 0.0)) / ndl, MAX_SLOPE)
    texel = table[k, 18] + table[k, 19] * ((wx - table[k, 20]) * table[k, 23]
                                           + (wy - table[k, 21]) * table[k, 24]
                                           + (wz - table[k, 22]) * table[k, 25])
    b = texel * (BIAS_CONSTANT + BIAS_SLOPE * slope)
    qx, qy, qz = wx + lx * b, wy + ly * b, wz + lz * b
    # the rows of the view-projection (no array per pixel)
    cx = table[k, 2] * qx + table[k, 3] * qy + table[k, 4] * qz + table[k, 5]
    cy = table[k, 6] * qx + table[k, 7] * qy + table[k, 8] * qz + table[k, 9]
    cz = table[k, 10] * qx + table[k, 11] * qy + table[k, 12] * qz + table[k, 13]
    w = table[k, 14] * qx + table[k, 15] * qy + table[k, 16] * qz + table[k, 17]
    if not w > 0:
        return 1.0
    s = np.int64(table[k, 1])
    if w == 1.0:  # an orthographic map's (its last row is 0 0 0 1): x / 1 is x exactly
        sx, sy, d = (cx + 1.0) * 0.5 * s, (1.0 - cy) * 0.5 * s, cz * 0.5 + 0.5
    else:
        sx = (cx / w + 1.0) * 0.5 * s
        sy = (1.0 - cy / w) * 0.5 * s
        d = (cz / w) * 0.5 + 0.5
    if not (math.isfinite(sx) and math.isfinite(sy)):
        return 1.0
    ix = np.int64(math.floor(min(max(sx, -2.0), s + 2.0)))
    iy = np.int64(math.floor(min(max(sy, -2.0), s + 2.0)))
    off = np.int64(table[k, 0])
    lit = 0
    if PCF_RADIUS <= ix < s - PCF_RADIUS and PCF_RADIUS <= iy < s - PCF_RADIUS:
        # every tap inside the map (all but its border): no tests per tap
        for dj in range(-PCF_RADIUS, PCF_RADIUS + 1):
            row = off + (iy + dj) * s + ix
            for di in range(-PCF_RADIUS, PCF_RADIUS + 1):
                lit += d <= texels[row + di]
        return lit / ((2 * PCF_RADIUS + 1) ** 2)
    for dj in range(-PCF_RADIUS, PCF_RADIUS + 1):
        y = iy + dj
        for di in range(-PCF_RADIUS, PCF_RADIUS + 1):
            x = ix + di
            if x < 0 or x >= s or y < 0 or y >= s or d <= texels[off + y * s + x]:
                lit += 1
    return lit / ((2 * PCF_RADIUS + 1) ** 2)


@numba.njit(inline="always")
def _reads_maps(mat_i, mi, shading):
    """Whether material mi (of kind ``shading``) reads a map through ``_map_sample``: a
    normal map (any lit kind) or a "pbr" map."""
    return (shading != 0 and mat_i[mi, _I_NORMAL] >= 0) or (shading == _PBR and (
        mat_i[mi, _I_MR] >= 0 or mat_i[mi, _I_OCCLUSION] >= 0 or mat_i[mi, _I_EMISSIVE] >= 0))


@numba.njit(inline="always")
def _map_slopes(t, tris, adj, vary, offsets, x_scale, y_scale, xa, xb, mat_i, mi, info,
                plane):
    """Per run, into the tail of its planes (``_TAIL``): what ``_map_sample``'s level of
    detail needs beside the planes, the y coefficients of triangle t's uv0 and uv1
    numerator planes and of its denominator (``_uv_slopes``), the NDC steps of a pixel
    along x and y, and for each map of material mi whether ``_magnified`` bounds its
    level of detail at or below the switch point over the whole row (NDC x from xa to
    xb, the first and last pixel centres): there no pixel computes one (the cost of the
    maps where they are magnified)."""
    v0, v1, v2 = tris[t, 0], tris[t, 1], tris[t, 2]
    a0, a1, a2 = adj[t, 0, 1], adj[t, 1, 1], adj[t, 2, 1]
    for k, c in ((0, offsets[_UV0]), (1, offsets[_UV0] + 1), (2, offsets[_UV1]),
                 (3, offsets[_UV1] + 1)):
        plane[_TAIL + k] = vary[v0, c] * a0 + vary[v1, c] * a1 + vary[v2, c] * a2
    plane[_TAIL + 4] = a0 + a1 + a2
    plane[_TAIL + 5], plane[_TAIL + 6] = x_scale, y_scale
    for slot, column, bit in _MAP_SLOTS:
        k = mat_i[mi, column]
        mag = False
        if k >= 0:
            second = (mat_i[mi, _I_UV_SETS] & bit) != 0
            uo = offsets[_UV1] if second else offsets[_UV0]
            j = _TAIL + (2 if second else 0)
            tw, th = np.float64(info[k, 1]), np.float64(info[k, 2])
            c = 0.5 if info[k, 5] != 0 and (info[k, 6] == 2 or info[k, 6] == 4) else 0.0
            mag = _magnified(plane, uo, xa, xb, plane[_TAIL + 4], plane[j], plane[j + 1],
                             tw * x_scale, th * x_scale, tw * y_scale, th * y_scale, c)
        plane[_TAIL + slot] = 1.0 if mag else 0.0


# its own function, as _sample (no reference counting), with _sample's body inlined:
# one call per map read (a call to _sample from here cost 30 ns more per read), and
# one compiled copy (inlined at the four map reads, the cold compile took 45 s longer)
@numba.njit(**_call_opts)
def _map_sample(plane, xn, inv, offsets, second, slot, texels, info, periods, k):
    """A map (the "pbr" ones, the normal map), texture k, at the pixel (NDC x = xn on
    the row of ``plane``, 1 / q = ``inv``) -> (r, g, b, a) as ``_sample`` filters it
    (SurfaceShader._pbr, SurfaceShader.uv_lod): at the level of detail of its uv set
    (uv1 when ``second``, its uv_sets bit) and size, ``_lod`` from the run's slopes
    (``_map_slopes``; ``slot``: the map's in ``_MAP_SLOTS``). None is computed where the
    row is magnified (``_map_slopes``) or the sampler's min filter is its magnification
    filter on the full-size level ("nearest"/"linear" beside the same magFilter)."""
    uo = offsets[_UV1] if second else offsets[_UV0]
    u, v = _at(plane, uo, xn, inv), _at(plane, uo + 1, xn, inv)
    code = info[k, 6]
    lam = 0.0
    if plane[_TAIL + slot] == 0.0 and not (code < 2 and (code == 1) == (info[k, 5] != 0)):
        j = _TAIL + (2 if second else 0)
        xs, ys = plane[_TAIL + 5], plane[_TAIL + 6]
        tw, th = np.float64(info[k, 1]), np.float64(info[k, 2])
        lam = _lod(plane, uo, xn, inv, _lod_x(plane, uo, tw * xs, th * xs), plane[_TAIL + 4],
                   plane[j], plane[j + 1], tw * ys, th * ys)
    return _sampled(texels, info, periods, k, u, v, lam)


# its own function, as _sample is: one copy for the lit and the "pbr" paths; no
# reference counting (_call_opts): called per pixel with seven arrays
@numba.njit(**_call_opts)
def _mapped_normal(plane, xn, inv, nx, ny, nz, back, mi, mat_f, mat_i, offsets, texels,
                   tex_info, tex_periods):
    """The unit normal (nx, ny, nz) (reversed already when ``back``: a double-sided back
    face) through the "normal" map (engine.render.normal_map.mapped_normals: the frame
    of the unreversed normal, the result reversed again for a back face), filtered at
    its level of detail (``_map_sample``)."""
    if back:
        nx, ny, nz = -nx, -ny, -nz
    cr, cg, cb, _ = _map_sample(plane, xn, inv, offsets, mat_i[mi, _I_UV_SETS] & _UV_NORMAL,
                                10, texels, tex_info, tex_periods, mat_i[mi, _I_NORMAL])
    scale = mat_f[mi, _F_NORMAL_SCALE]
    sx, sy, sz = (2.0 * cr - 1.0) * scale, (2.0 * cg - 1.0) * scale, 2.0 * cb - 1.0
    sl = math.sqrt(sx * sx + sy * sy + sz * sz)
    if sl > 0:
        sx, sy, sz = sx / sl, sy / sl, sz / sl
    else:
        sx, sy, sz = 0.0, 0.0, 1.0
    to = offsets[_TANGENT]
    gx, gy, gz = _at(plane, to, xn, inv), _at(plane, to + 1, xn, inv), _at(plane, to + 2, xn, inv)
    hand = -1.0 if _at(plane, to + 3, xn, inv) < 0 else 1.0
    d = nx * gx + ny * gy + nz * gz
    tx, ty, tz = gx - nx * d, gy - ny * d, gz - nz * d
    t2 = tx * tx + ty * ty + tz * tz
    mx, my, mz = nx, ny, nz
    if t2 > 1e-12:
        k = 1.0 / math.sqrt(t2)
        tx, ty, tz = tx * k, ty * k, tz * k
        bx, by, bz = ((ny * tz - nz * ty) * hand, (nz * tx - nx * tz) * hand,
                      (nx * ty - ny * tx) * hand)
        ax, ay, az = (sx * tx + sy * bx + sz * nx, sx * ty + sy * by + sz * ny,
                      sx * tz + sy * bz + sz * nz)
        m2 = ax * ax + ay * ay + az * az
        if m2 > 0:
            k = 1.0 / math.sqrt(m2)
            mx, my, mz = ax * k, ay * k, az * k
    if back:
        mx, my, mz = -mx, -my, -mz
    return mx, my, mz


@numba.njit(inline="always")
def _add3(r, g, b, extra):
    return r + extra[0], g + extra[1], b + extra[2]


@numba.njit(inline="always")
def _uv_slopes(t, tris, adj, vary, uo, ti, tex_info):
    """Per run, for the level of detail: the y coefficients of triangle t's denominator
    and u, v numerator planes (their x coefficients are in the run's planes), and the
    texture's size (W, H) in texels."""
    v0, v1, v2 = tris[t, 0], tris[t, 1], tris[t, 2]
    qy = adj[t, 0, 1] + adj[t, 1, 1] + adj[t, 2, 1]
    uy = vary[v0, uo] * adj[t, 0, 1] + vary[v1, uo] * adj[t, 1, 1] + vary[v2, uo] * adj[t, 2, 1]
    vy = (vary[v0, uo + 1] * adj[t, 0, 1] + vary[v1, uo + 1] * adj[t, 1, 1]
          + vary[v2, uo + 1] * adj[t, 2, 1])
    return qy, uy, vy, np.float64(tex_info[ti, 1]), np.float64(tex_info[ti, 2])


@numba.njit(inline="always")
def _lod_x(plane, uo, sx_u, sx_v):
    """Per run, for ``_lod``: q^4 times the squared texel footprint of one pixel step
    along x. Along a row q = qx x + qr and N_u = ax x + ar, so d(N_u / q)/dx =
    (ax qr - ar qx) / q^2, a constant over q^2 (the same for v); ``sx_u``, ``sx_v``: the
    texture's width and height times the NDC step of one pixel along x."""
    qx, qr = plane[0], plane[1]
    cu = (plane[_PLANE * (uo + 1)] * qr - plane[_PLANE * (uo + 1) + 1] * qx) * sx_u
    cv = (plane[_PLANE * (uo + 2)] * qr - plane[_PLANE * (uo + 2) + 1] * qx) * sx_v
    return cu * cu + cv * cv


@numba.njit(inline="always")
def _lod(plane, uo, xn, inv, kx, qy, uy, vy, sy_u, sy_v):
    """Level of detail at NDC x = xn of the row (SurfaceShader.uv_lod), ``inv`` = 1 / q
    there: d(N / q) = (q dN - N dq) / q^2 along x (``kx`` = ``_lod_x``: q^4 times its
    squared length in texels) and y (for u: uy q - qy N_u, the y slopes of ``_uv_slopes``;
    ``sy_u``, ``sy_v``: width and height times the NDC step of one pixel along y), then
    log2 of the larger length."""
    q = plane[0] * xn + plane[1]
    nu = plane[_PLANE * (uo + 1)] * xn + plane[_PLANE * (uo + 1) + 1]
    nv = plane[_PLANE * (uo + 2)] * xn + plane[_PLANE * (uo + 2) + 1]
    eu, ev = (uy * q - qy * nu) * sy_u, (vy * q - qy * nv) * sy_v
    i2 = inv * inv
    rho2 = max(kx, eu * eu + ev * ev) * (i2 * i2)
    return 0.5 * log2(rho2) if rho2 > 0 else -math.inf  # numba_texels.log2


# the longest stretch of a run the texture sampler fills at once (``_texture_run``)
RUN_PIXELS = 64


@numba.njit(**_call_opts)
def _texture_run(keys, p, px, n_max, x_scale, x_offset, y_scale, plane, uo, qy, uy, vy,
                 tw, th, texels, info, periods, k, out):
    """Texture k at the pixels of one run: pixel p (column px) and the next ones with
    the same key id, at most ``n_max``; out[j] = _sample's (r, g, b, a) at column px + j
    (the pixel loop's u, v; the level of detail of ``_lod`` from the run's y slopes
    qy, uy, vy and the texture's size tw x th, ``_uv_slopes``). Returns the count.

    One call per run, not per pixel, one loop per case with its filter known: where
    every pixel of the stretch reads level 0 with the magnification filter (the min
    filter does, or ``_magnified`` bounds the level of detail over the stretch) one pass
    of bilinear or nearest on level 0 with no level of detail; else a first pass of (u,
    v, lambda) into ``out``, then "linear_mipmap_linear" by ``_trilinear`` (or
    ``_trilinear_pow2``) and any other min filter by ``_sample``."""
    low = np.uint64(0xFFFFFFFF)
    key_id = keys[p] & low
    n = 1
    while n < n_max and (keys[p + n] & low) == key_id:
        n += 1
    mag_linear, code = info[k, 5] != 0, info[k, 6]
    c = 0.5 if mag_linear and (code == 2 or code == 4) else 0.0
    level0 = (code < 2 and (code == 1) == mag_linear) or _magnified(
        plane, uo, px * x_scale + x_offset, (px + n - 1) * x_scale + x_offset, qy, uy, vy,
        tw * x_scale, th * x_scale, tw * y_scale, th * y_scale, c)
    if level0:  # one pass, the texture's row read once
        off, w, h, ws, wt = info[k, 0], info[k, 1], info[k, 2], info[k, 3], info[k, 4]
        rs, rt = periods[k, 0], periods[k, 1]
        for j in range(n):
            u, v, _ = _run_uv(plane, uo, px + j, x_scale, x_offset)
            ok = u * 0.0 + v * 0.0 == 0.0  # both finite, else (0, 0) as _sample reads
            u, v = u if ok else 0.0, v if ok else 0.0
            if mag_linear:
                _put(out, j, _filtered_at(texels, off, w, h, ws, wt, rs, rt, u, v))
            else:
                _put(out, j, _filtered(texels, info, periods, k, u, v, False))
    else:
        # two passes, (u, v, lambda) first: shorter loop bodies, whose iterations the
        # processor overlaps (a division, a log2 and the texel reads in one chain)
        kx, sy_u, sy_v = _lod_x(plane, uo, tw * x_scale, th * x_scale), tw * y_scale, th * y_scale
        for j in range(n):
            u, v, inv = _run_uv(plane, uo, px + j, x_scale, x_offset)
            lam = _lod(plane, uo, (px + j) * x_scale + x_offset, inv, kx, qy, uy, vy, sy_u, sy_v)
            out[j, 0], out[j, 1], out[j, 2] = u, v, lam
        if code == 5 and mag_linear and _pow2_chain(info, k):  # the common texture
            # the chain's table entries read once: the stores to ``out`` could alias the
            # table, so read in the loop they would be read again per pixel
            q, first, w, h = info[k, 7] - 1, info[k, 8], info[k, 1], info[k, 2]
            ms, mt = info[k, 3] == 2, info[k, 4] == 2
            for j in range(n):
                _put(out, j, _trilinear_pow2(texels, info, q, first, w, h, ms, mt, out[j, 0],
                                             out[j, 1], out[j, 2]))
        elif code == 5 and mag_linear:  # "linear_mipmap_linear", bilinear magnified
            for j in range(n):
                _put(out, j, _trilinear(texels, info, periods, k, out[j, 0], out[j, 1],
                                        out[j, 2]))
        else:
            for j in range(n):
                _put(out, j, _sample(texels, info, periods, k, out[j, 0], out[j, 1],
                                     out[j, 2]))
    return n


@numba.njit(inline="always")
def _run_uv(plane, uo, px, x_scale, x_offset):
    """(u, v, 1 / q) at column px of the row, exactly as the pixel loop computes them."""
    xn = px * x_scale + x_offset
    q = plane[0] * xn + plane[1]
    inv = 1.0 / q if q != 0 else 1.0
    return _at(plane, uo, xn, inv), _at(plane, uo + 1, xn, inv), inv


@numba.njit(inline="always")
def _put(out, j, rgba):
    out[j, 0], out[j, 1], out[j, 2], out[j, 3] = rgba


@numba.njit(inline="always")
def _trilinear(texels, info, periods, k, u, v, lam):
    """``_sample`` for a "linear_mipmap_linear" texture with a linear ``filter`` (the
    default sampler), every filter known here and without branches: lambda <= 0 (nan
    too) reads level 0 with weight 0 on level 1, as ``_sample``'s magnification does
    (level 0 of the chain is texture k); the second level is read even at weight 0
    (x + (y - x) * 0 is x), clamped to the chain."""
    ok = u * 0.0 + v * 0.0 == 0.0  # both finite
    u, v = u if ok else 0.0, v if ok else 0.0
    q = info[k, 7] - 1
    top = min(lam if lam > 0.0 else 0.0, q)  # noqa: FURB136 (nan reads as 0)
    d = np.int64(math.floor(top))
    f = np.float32(top - d)
    first = info[k, 8]
    r, g, b, a = _filtered_row(texels, info, periods, first + d, u, v)
    r1, g1, b1, a1 = _filtered_row(texels, info, periods, first + min(d + 1, q), u, v)
    return r + (r1 - r) * f, g + (g1 - g) * f, b + (b1 - b) * f, a + (a1 - a) * f


@numba.njit(inline="always")
def _pow2_chain(info, k):
    """Whether every level of texture k's chain takes the mask path: both sizes powers of
    two (then so is every level's, max(1, W >> d): engine.scene.mipmap.level_sizes) and
    neither wrap clamps."""
    w, h = info[k, 1], info[k, 2]
    return (w & (w - 1)) == 0 and (h & (h - 1)) == 0 and info[k, 3] != 1 and info[k, 4] != 1


@numba.njit(inline="always")
def _trilinear_pow2(texels, info, q, first, w, h, ms, mt, u, v, lam):
    """``_trilinear`` for a ``_pow2_chain`` texture k, given its table entries: q = the
    chain's last level (info[k, 7] - 1), ``first`` its first row (info[k, 8]), the size
    w x h (info[k, 1:3]) and whether each wrap mirrors (info[k, 3:5] == 2). Each level's
    size from a shift and its offset from the table, the indices by ``_axis_pow2`` (no
    size, wrap or period read per level); the same values."""
    ok = u * 0.0 + v * 0.0 == 0.0  # both finite
    u, v = u if ok else 0.0, v if ok else 0.0
    top = min(lam if lam > 0.0 else 0.0, q)  # noqa: FURB136 (nan reads as 0)
    d = np.int64(math.floor(top))
    f = np.float32(top - d)
    d1 = min(d + 1, q)
    w0, h0, w1, h1 = max(w >> d, 1), max(h >> d, 1), max(w >> d1, 1), max(h >> d1, 1)
    i0, i1, fx = _axis_pow2(u, w0, ms)
    j0, j1, fy = _axis_pow2(v, h0, mt)
    r, g, b, a = _blend(texels, info[first + d, 0], w0, i0, i1, fx, j0, j1, fy)
    i0, i1, fx = _axis_pow2(u, w1, ms)
    j0, j1, fy = _axis_pow2(v, h1, mt)
    r1, g1, b1, a1 = _blend(texels, info[first + d1, 0], w1, i0, i1, fx, j0, j1, fy)
    return r + (r1 - r) * f, g + (g1 - g) * f, b + (b1 - b) * f, a + (a1 - a) * f


@numba.njit(inline="always")
def _filtered_row(texels, info, periods, k, u, v):
    """``_filtered_at`` of texture table row k."""
    return _filtered_at(texels, info[k, 0], info[k, 1], info[k, 2], info[k, 3], info[k, 4],
                        periods[k, 0], periods[k, 1], u, v)


@numba.njit(inline="always")
def _magnified(plane, uo, xa, xb, qy, uy, vy, sux, svx, suy, svy, c):
    """Whether ``_lod`` is at most c at every pixel of a row between NDC x = xa and xb.

    Along a row the planes are affine in x: q = qx x + qr, N_u = ax x + ar. So
    du/dx = (ax qr - ar qx) / q^2 (a constant over q^2) and du/dy = (uy q - qy N_u) / q^2
    (affine over q^2), the same for v; q keeps its sign over the stretch (checked at the
    ends), so |q| is smallest and each affine numerator largest in magnitude at an end.
    That bounds rho^2 over the stretch; a margin of 1% in rho^2 (0.007 in lambda) covers
    the rounding of the per-pixel values, with |u|, |v| <= 2^20 at the ends (u and v are
    monotone along the row). ``s..``: texels per NDC unit (texture size times the NDC
    step of one pixel) for u and v along x and y."""
    qx, qr = plane[0], plane[1]
    ax, ar = plane[_PLANE * (uo + 1)], plane[_PLANE * (uo + 1) + 1]
    bx, br = plane[_PLANE * (uo + 2)], plane[_PLANE * (uo + 2) + 1]
    qa, qb = qx * xa + qr, qx * xb + qr
    if not qa * qb > 0:  # a sign change, a zero or nan
        return False
    na, nb = ax * xa + ar, ax * xb + ar
    ma, mb = bx * xa + br, bx * xb + br
    lim = 2.0**20
    if not (abs(na) <= lim * abs(qa) and abs(nb) <= lim * abs(qb)
            and abs(ma) <= lim * abs(qa) and abs(mb) <= lim * abs(qb)):
        return False
    ku, kv = (ax * qr - ar * qx) * sux, (bx * qr - br * qx) * svx
    eu = max(abs(uy * qa - qy * na), abs(uy * qb - qy * nb)) * suy
    ev = max(abs(vy * qa - qy * ma), abs(vy * qb - qy * mb)) * svy
    q2 = min(qa * qa, qb * qb)
    rho2 = max(ku * ku + kv * kv, eu * eu + ev * ev) / (q2 * q2)
    return rho2 <= 0.99 * 4.0**c


@numba.njit(inline="always")
def _geometric(t, tris, vary, po, flags, front):
    """Unit geometric normal of triangle t (towards the viewer for a double-sided back
    face), for a pixel whose interpolated normal is zero."""
    v0, v1, v2 = tris[t, 0], tris[t, 1], tris[t, 2]
    e1x, e1y, e1z = (vary[v1, po] - vary[v0, po], vary[v1, po + 1] - vary[v0, po + 1],
                     vary[v1, po + 2] - vary[v0, po + 2])
    e2x, e2y, e2z = (vary[v2, po] - vary[v0, po], vary[v2, po + 1] - vary[v0, po + 1],
                     vary[v2, po + 2] - vary[v0, po + 2])
    nx, ny, nz = e1y * e2z - e1z * e2y, e1z * e2x - e1x * e2z, e1x * e2y - e1y * e2x
    gl = math.sqrt(nx * nx + ny * ny + nz * nz)
    if gl > 0:
        nx, ny, nz = nx / gl, ny / gl, nz / gl
    if (flags & 2) and not front[t]:
        nx, ny, nz = -nx, -ny, -nz
    return nx, ny, nz


def specular_tables(shininess):
    """Per shininess s ((M,) float): (start c = 2 ** (-16 / s) (M,), scale
    SPECULAR_STEPS / (1 - c) (M,), table (M, SPECULAR_STEPS + 1) of x ** s at
    x = c + k (1 - c) / SPECULAR_STEPS). The resolve reads ``max(N.H, 0) ** s`` as 0
    below c, else by linear interpolation at (N.H - c) * scale (module docstring)."""
    s = np.asarray(shininess, np.float64).reshape(-1, 1)
    start = _SPECULAR_FLOOR ** (1.0 / s)
    x = start + (1.0 - start) * np.linspace(0.0, 1.0, SPECULAR_STEPS + 1)
    return start[:, 0], SPECULAR_STEPS / (1.0 - start[:, 0]), x**s


def _material_arrays(prims):
    """(mat_f (M, 14) float64, mat_i (M, 8) int64, specular tables, texels, texture
    table, (X, 2) float64 1 / the wrap period of each texture along u and v) of an
    assembly, packed once and kept in ``prims.derived`` (textures are decoded once per
    texture, engine.scene.material.Texture.linear)."""
    packed = prims.derived.get("numba_materials")
    if packed is None:
        records, texels, info = pack_materials(prims.materials)
        start, scale, table = specular_tables(records["shininess"])
        mat_f = np.concatenate([records["color_linear"], records["specular"][:, None],
                                start[:, None], scale[:, None], records["metallic"][:, None],
                                records["roughness"][:, None],
                                records["occlusion_strength"][:, None],
                                records["emissive"][:, :3], records["normal_scale"][:, None]],
                               axis=1)
        mat_i = np.stack([records["shading"], records["flags"], records["texture"],
                          records["mr_texture"], records["occlusion_texture"],
                          records["emissive_texture"], records["normal_texture"],
                          records["uv_sets"]], axis=1)
        # wrap periods in texels: the size for repeat, twice it for mirror (clamp: unused)
        size = info[:, 1:3].astype(np.float64)
        periods = 1.0 / np.where(info[:, 3:5] == 2, 2.0 * size, size)
        packed = prims.derived["numba_materials"] = (
            np.ascontiguousarray(mat_f), np.ascontiguousarray(mat_i, np.int64),
            np.ascontiguousarray(table), texels, info, np.ascontiguousarray(periods))
    return packed


def _scratch(prims, height):
    """The bands' scratch rows, kept with the assembly (no allocation per frame)."""
    n_bands = (height + BAND_ROWS - 1) // BAND_ROWS
    width = _TAIL + _TAIL_SIZE
    s = prims.derived.get("numba_resolve_scratch")
    if s is None or s.shape[0] < n_bands:
        s = prims.derived["numba_resolve_scratch"] = np.zeros((n_bands, width))
    return s


def _texture_scratch(prims, height):
    """The bands' texture samples of a run, (bands, RUN_PIXELS, 4) float64 (the float32
    samples, or u, v and lambda on their way), kept with the assembly (no allocation
    per frame)."""
    n_bands = (height + BAND_ROWS - 1) // BAND_ROWS
    s = prims.derived.get("numba_resolve_texture_runs")
    if s is None or s.shape[0] < n_bands:
        s = prims.derived["numba_resolve_texture_runs"] = np.zeros((n_bands, RUN_PIXELS, 4))
    return s


def resolve_numba(keys, size, n_points, point_colors, background, shader, n_triangles=0,
                  line_rgba=None):
    """Numba twin of ``engine.render.shading.resolve``: same arguments, same depth,
    colours within 1/255. Returns a host Frame."""
    from ..frame import Frame

    w, h = size
    color = np.empty((h, w, 4), np.uint8)
    depth = np.empty((h, w), np.float32)
    u32 = lambda a: np.ascontiguousarray(a, np.uint8).reshape(-1, 4).view(np.uint32).reshape(-1)
    bg = np.ascontiguousarray(background_rgba(background)).view(np.uint32)[0]
    lines = u32(line_rgba if line_rgba is not None else np.zeros((1, 4), np.uint8))
    if shader is None:
        from ..primitives import Primitives

        shader = _EmptyShader(Primitives(len(point_colors)))
    prims, st = shader.prims, shader.setup
    mat_f, mat_i, spec_table, texels, info, periods = _material_arrays(prims)
    ambient, dl, de, pp, pe = light_arrays(shader.lights)
    pp, pe, cone, ranges, windowed = point_light_arrays(pp, pe, shader.spots)
    ortho = shader.view_dir is not None
    view_dir = shader.view_dir if ortho else np.zeros(3)
    sh = shader.shadows
    sh_texels, sh_table, sh_dir, sh_point, sh_receive = shadow_tables(sh, len(dl), len(pp))
    if not sh.maps:  # the flag per triangle is read only with maps
        sh_receive = np.zeros(1, np.uint8)
    # bands handed out one at a time (balanced on a busy machine); only this call: the
    # other kernels keep Numba's static split
    with numba.parallel_chunksize(1):
        _resolve(keys, w, h, np.int64(n_points), np.int64(n_triangles), u32(point_colors), lines,
                 bg, prims.triangles, prims.tri_material, st.adj, st.front,
                 shader.varyings, varying_offsets(_VARYINGS), mat_f, mat_i, spec_table,
                 texels, info, periods, ambient, dl, de, pp, pe, cone, ranges, windowed,
                 shader.eye, ortho, np.asarray(view_dir, np.float64),
                 float(shader.exposure), TONE_MAPS.index(shader.tone_map), _ENCODE, _scratch(prims, h), _texture_scratch(prims, h), color.reshape(-1, 4).view(np.uint32).reshape(-1),
                 depth.reshape(-1).view(np.uint32),
                 *environment_arrays(getattr(shader, "environment", None)), sh_texels, sh_table,
                 sh_dir, sh_point, sh_receive, np.int64(len(sh.maps)))
    return Frame(color, depth)


class _EmptyShader:
    """Stand-in context for frames without triangles (lines and points only)."""

    def __init__(self, prims):
        self.prims = prims
        self.setup = _EmptySetup()
        self.lights = (np.zeros(3), [], [])
        self.spots, self.exposure, self.tone_map = [], 1.0, "none"
        self.view_dir = self.environment = None
        self.shadows = NO_SHADOWS
        self.varyings = np.zeros((1, VARYING_COUNT))
        self.eye = np.zeros(3)


class _EmptySetup:
    adj = np.zeros((0, 3, 3))
    front = np.zeros(0, np.bool_)
