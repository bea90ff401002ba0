"""Resolve and shading compiled by Numba: the CPU fast path for engine.render.shading.

One pass over the pixels (rows in parallel on Numba's threads): the key's id picks a
point colour, a line colour, or a triangle to shade with the same model as the NumPy
resolve (perspective-correct barycentrics, base colour = material x vertex colour x
texture, sRGB decode, ambient + Lambert + Blinn-Phong, sRGB encode). Depth comes from the
key unchanged; colours match the NumPy resolve within 1/255 (float operations are not all
in the same order).

Materials are a record array of engine.render.materials.MATERIAL and textures one texel
array with a table (``pack_materials``), so the kernel sees no Python objects.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ...scene.colorspace import linear_to_srgb, srgb_to_linear
from ..attributes import VARYING_COUNT, varying_offsets
from ..frame import background_rgba
from ..materials import FRAME_ALPHA, pack_materials
from ..shading import light_arrays

_opts = {"cache": True, "boundscheck": False, "error_model": "numpy"}
_DECODE = srgb_to_linear(np.arange(256) / 255.0)
# the varyings this resolve reads, by their index in the offsets array it is given
_VARYINGS = ("position", "normal", "uv0", "color", "color_linear")
_POSITION, _NORMAL, _UV0, _COLOR, _COLOR_LINEAR = range(len(_VARYINGS))


@numba.njit(inline="always")
def _wrap(i, n, mode):
    if mode == 0:
        return i % n
    if mode == 1:
        return min(max(i, 0), n - 1)
    m = i % (2 * n)
    return m if m < n else 2 * n - 1 - m


@numba.njit(inline="always")
def _texel(texels, off, w, row, col, ch, linear, decode):
    v = texels[off + row * w + col, ch]
    if linear and ch < 3:
        return decode[v]
    return v / 255.0


@numba.njit(**_opts)
def _sample(texels, info, k, u, v, linear, decode, out):
    off, w, h, ws, wt, filt = info[k, 0], info[k, 1], info[k, 2], info[k, 3], info[k, 4], info[k, 5]
    if not (np.isfinite(u) and np.isfinite(v)):
        u, v = 0.0, 0.0
    lim = 2.0**31 / max(w, h)
    u = min(max(u, -lim), lim)
    v = min(max(v, -lim), lim)
    x, y = u * w, v * h
    if filt == 0:
        col = _wrap(np.int64(math.floor(x)), w, ws)
        row = _wrap(np.int64(math.floor(y)), h, wt)
        for ch in range(4):
            out[ch] = _texel(texels, off, w, row, col, ch, linear, decode)
        return
    x -= 0.5
    y -= 0.5
    x0, y0 = math.floor(x), math.floor(y)
    fx, fy = x - x0, y - y0
    i0, i1 = _wrap(np.int64(x0), w, ws), _wrap(np.int64(x0) + 1, w, ws)
    j0, j1 = _wrap(np.int64(y0), h, wt), _wrap(np.int64(y0) + 1, h, wt)
    for ch in range(4):
        top = (_texel(texels, off, w, j0, i0, ch, linear, decode) * (1 - fx)
               + _texel(texels, off, w, j0, i1, ch, linear, decode) * fx)
        bottom = (_texel(texels, off, w, j1, i0, ch, linear, decode) * (1 - fx)
                  + _texel(texels, off, w, j1, i1, ch, linear, decode) * fx)
        out[ch] = top * (1 - fy) + bottom * fy


# linear -> sRGB by linear interpolation in a 4097-entry table of the exact curve: at most
# 0.005/255 from the formula (engine.scene.colorspace), so the 8-bit result differs from
# the NumPy resolve's in about 2 of 100,000 values, by 1
_ENCODE_STEPS = 4096
_ENCODE = linear_to_srgb(np.linspace(0.0, 1.0, _ENCODE_STEPS + 1))


@numba.njit(inline="always")
def _encode(lin, table):
    x = min(max(lin, 0.0), 1.0) * _ENCODE_STEPS
    i = min(np.int64(x), _ENCODE_STEPS - 1)
    f = x - i
    s = table[i] + (table[i + 1] - table[i]) * f
    return np.uint8(np.rint(s * 255.0))


@numba.njit(**{**_opts, "parallel": True})
def _resolve(keys, width, height, n_points, n_tris, point_rgba, line_rgba, background,
             tris, tri_material, adj, front, vary, offsets, materials, mat_color, spans, texels, tex_info, ambient, dir_l, dir_e, pt_pos, pt_e, eye, ortho, view_dir,
             decode, encode, color_out, depth_out):
    empty = np.uint64(0xFFFFFFFFFFFFFFFF)
    low_mask = np.uint64(0xFFFFFFFF)
    n_surface = n_points + n_tris
    n_vary = vary.shape[1]
    scratch = np.empty((height, 8 + n_vary))
    # reciprocals instead of divisions in the pixel loop (colours need only agree with
    # the NumPy resolve within 1/255)
    x_scale, x_offset = 2.0 / width, 1.0 / width - 1.0
    for py in numba.prange(height):
        # the row's scratch (texel, base colour, varyings): allocated once, before the
        # parallel loop (allocating in the worker threads cost a third of the frame in
        # kernel time on some runs, measured)
        tex, base, vals = scratch[py, :4], scratch[py, 4:8], scratch[py, 8:]
        yn = 1.0 - (2.0 * py + 1.0) / height
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
            xn = px * x_scale + x_offset
            b0 = adj[t, 0, 0] * xn + adj[t, 0, 1] * yn + adj[t, 0, 2]
            b1 = adj[t, 1, 0] * xn + adj[t, 1, 1] * yn + adj[t, 1, 2]
            b2 = adj[t, 2, 0] * xn + adj[t, 2, 1] * yn + adj[t, 2, 2]
            s = b0 + b1 + b2
            if s != 0:
                inv = 1.0 / s
                b0, b1, b2 = b0 * inv, b1 * inv, b2 * inv
            v0, v1, v2 = tris[t, 0], tris[t, 1], tris[t, 2]
            mi = tri_material[t]
            mat = materials[mi]
            shading = np.int64(mat.shading)
            flags = np.int64(mat.flags)
            linear = shading != 0
            for c in range(spans[mi, 0], spans[mi, 1]):  # what it reads, one generic loop
                vals[c] = vary[v0, c] * b0 + vary[v1, c] * b1 + vary[v2, c] * b2
            vc = offsets[_COLOR_LINEAR] if linear else offsets[_COLOR]
            for ch in range(4):
                c = mat_color[mi, 4 + ch] if linear else mat_color[mi, ch]
                if flags & 1:
                    c *= vals[vc + ch]
                base[ch] = c
            ti = mat.texture
            if ti >= 0:
                uv = offsets[_UV0]
                _sample(texels, tex_info, ti, vals[uv], vals[uv + 1], linear, decode, tex)
                for ch in range(4):
                    base[ch] *= tex[ch]
            alpha = np.uint8(FRAME_ALPHA)  # a drawn pixel is opaque whatever base[3]
            if not linear:
                r = np.uint8(np.rint(min(max(base[0], 0.0), 1.0) * 255.0))
                g = np.uint8(np.rint(min(max(base[1], 0.0), 1.0) * 255.0))
                bb = np.uint8(np.rint(min(max(base[2], 0.0), 1.0) * 255.0))
                color_out[p] = (np.uint32(r) | (np.uint32(g) << 8) | (np.uint32(bb) << 16)
                                | (np.uint32(alpha) << 24))
                continue
            # position, geometric and shading normals in the batch frame
            po, no = offsets[_POSITION], offsets[_NORMAL]
            wx, wy, wz = vals[po], vals[po + 1], vals[po + 2]
            nx = ny = nz = nl = 0.0
            if shading != 2:
                nx, ny, nz = vals[no], vals[no + 1], vals[no + 2]
                nl = math.sqrt(nx * nx + ny * ny + nz * nz)
                if nl > 0:
                    inv = 1.0 / nl
                    nx, ny, nz = nx * inv, ny * inv, nz * inv
            if shading == 2 or not nl > 0:  # flat, or no usable normal: the geometric one
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
            if ortho:
                vx, vy, vz = view_dir[0], view_dir[1], view_dir[2]
            else:
                vx, vy, vz = eye[0] - wx, eye[1] - wy, eye[2] - wz
                vl = math.sqrt(vx * vx + vy * vy + vz * vz)
                if vl > 0:
                    inv = 1.0 / vl
                    vx, vy, vz = vx * inv, vy * inv, vz * inv
            dr, dg, db = ambient[0], ambient[1], ambient[2]
            sr = sg = sb = 0.0
            spec, shin = mat.specular, mat.shininess
            for li in range(dir_l.shape[0] + pt_pos.shape[0]):
                if li < dir_l.shape[0]:
                    lx, ly, lz = dir_l[li, 0], dir_l[li, 1], dir_l[li, 2]
                    er, eg, eb = dir_e[li, 0], dir_e[li, 1], dir_e[li, 2]
                else:
                    q = li - dir_l.shape[0]
                    lx, ly, lz = pt_pos[q, 0] - wx, pt_pos[q, 1] - wy, pt_pos[q, 2] - wz
                    r2 = max(lx * lx + ly * ly + lz * lz, 1e-30)
                    ll = math.sqrt(lx * lx + ly * ly + lz * lz)
                    if ll > 0:
                        lx, ly, lz = lx / ll, ly / ll, lz / ll
                    er, eg, eb = pt_e[q, 0] / r2, pt_e[q, 1] / r2, pt_e[q, 2] / r2
                ndl = nx * lx + ny * ly + nz * lz
                if ndl > 0:
                    dr += er * ndl
                    dg += eg * ndl
                    db += eb * ndl
                    if spec > 0:
                        hx, hy, hz = lx + vx, ly + vy, lz + vz
                        hl = math.sqrt(hx * hx + hy * hy + hz * hz)
                        ndh = 0.0
                        if hl > 0:
                            ndh = max((nx * hx + ny * hy + nz * hz) / hl, 0.0)
                        f = spec * ndh ** shin
                        sr += er * f
                        sg += eg * f
                        sb += eb * f
            r = _encode(base[0] * dr + sr, encode)
            g = _encode(base[1] * dg + sg, encode)
            bb = _encode(base[2] * db + sb, encode)
            color_out[p] = (np.uint32(r) | (np.uint32(g) << 8) | (np.uint32(bb) << 16)
                            | (np.uint32(alpha) << 24))


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
    packed = prims.derived.get("numba_materials")
    if packed is None:  # once per assembly, not per frame (textures are copied here)
        records, texels, info = pack_materials(prims.materials)
        # the record's array fields as plain (M, k) arrays: indexing an array field of a
        # record in the pixel loop cost Numba about 10% of the frame (measured)
        fields = (np.ascontiguousarray(np.concatenate([records["color"],
                                                       records["color_linear"]], axis=1)),
                  np.ascontiguousarray(records["span"], np.int64))
        packed = prims.derived["numba_materials"] = (records, *fields, texels, info)
    materials, mat_color, spans, texels, info = packed
    ambient, dl, de, pp, pe = light_arrays(shader.lights)
    ortho = shader.view_dir is not None
    view_dir = shader.view_dir if ortho else np.zeros(3)
    _resolve(keys, w, h, np.int64(n_points), np.int64(n_triangles), u32(point_colors), lines,
             bg, prims.triangles, prims.tri_material, st.adj, st.front,
             shader.varyings, varying_offsets(_VARYINGS), materials, mat_color, spans,
             texels, info, ambient,
             dl, de, pp, pe, shader.eye, ortho, np.asarray(view_dir, np.float64), _DECODE, _ENCODE,
             color.reshape(-1, 4).view(np.uint32).reshape(-1), depth.reshape(-1).view(np.uint32))
    return Frame(color, depth)


class _EmptyShader:
    """Stand-in context for frames without triangles (lines and points only)."""

    def __init__(self, prims):
        self.prims = prims
        self.setup = _EmptySetup()
        self.lights = (np.zeros(3), [], [])
        self.view_dir = None
        self.varyings = np.zeros((1, VARYING_COUNT))
        self.eye = np.zeros(3)


class _EmptySetup:
    adj = np.zeros((0, 3, 3))
    front = np.zeros(0, np.bool_)
