// Shading math shared by resolve.cu and its host builds: the sRGB encode (IEC 61966-2-1),
// glTF/GL texture addressing, mip level selection and filtering of linear float texels,
// the base colour.
// Must stay identical to engine/render/shading.py and engine/scene/sampling.py.
#pragma once
#include "common.cuh"
#include "material.cuh"

namespace frustum {

__host__ __device__ inline double clamp01(double v) { return v < 0.0 ? 0.0 : (v > 1.0 ? 1.0 : v); }

__host__ __device__ inline double srgb_encode(double l) {
    l = clamp01(l);
    return l <= 0.0031308 ? l * 12.92 : 1.055 * pow(l, 1.0 / 2.4) - 0.055;
}

__host__ __device__ inline unsigned int unorm8(double v) {
    return (unsigned int)rint(clamp01(v) * 255.0);
}

// One axis of a texel address (engine/scene/sampling.py _axis): GL's wrapped indices
// (0 repeat, 1 clamp to edge, 2 mirrored repeat) computed once per sample and axis: one
// float floor division for the period, selects, no integer modulo. Nearest: i1 = i0.
__host__ __device__ inline void texel_axis(double u, long long n, long long mode, bool linear,
                                           long long& i0, long long& i1, double& f) {
    const double nn = (double)n;
    double x = u * nn;
    // clamp: one texel beyond each edge; repeat and mirror: +-2^40, exact float integers
    const double lo = mode == 1 ? -1.0 : -1099511627776.0;
    const double hi = mode == 1 ? nn + 1.0 : 1099511627776.0;
    x = x < lo ? lo : (x > hi ? hi : x);
    if (linear) x -= 0.5;
    const double x0 = floor(x);
    f = linear ? x - x0 : 0.0;
    double a, b;
    if (mode == 1) {
        a = x0 < 0.0 ? 0.0 : (x0 > nn - 1.0 ? nn - 1.0 : x0);
        b = x0 + 1.0 < 0.0 ? 0.0 : (x0 + 1.0 > nn - 1.0 ? nn - 1.0 : x0 + 1.0);
    } else {
        const double p = mode == 0 ? nn : 2.0 * nn;  // the period in texels
        double m = x0 - p * floor(x0 / p);
        m = m < 0.0 ? m + p : (m >= p ? m - p : m);
        double m1 = m + 1.0 >= p ? 0.0 : m + 1.0;
        if (mode == 2) {
            m = m < nn ? m : p - 1.0 - m;
            m1 = m1 < nn ? m1 : p - 1.0 - m1;
        }
        a = m;
        b = m1;
    }
    i0 = (long long)a;
    i1 = linear ? (long long)b : i0;
}

// The texture table's row width (engine/render/materials.py TEXTURE_COLUMNS): (offset,
// width, height, wrap_s, wrap_t, filter, min_filter, levels, first_level)
#define FR_TEXTURE_COLUMNS 9
// the level of detail of a pixel whose uv does not change: magnification
#define FR_LOD_NONE (-1.0e30)

// texels: float RGBA in linear light, 4 per texel (engine/render/materials.py);
// info = one texture table row (a texture or one of its mip levels): (offset, width,
// height, wrap_s, wrap_t, ...); bilinear when `linear`, else the nearest texel
__host__ __device__ inline void filter_level(const float* texels, const long long* info,
                                             double u, double v, bool linear, double out[4]) {
    const long long off = info[0], w = info[1], h = info[2];
    long long i0, i1, j0, j1;
    double fx, fy;
    texel_axis(u, w, info[3], linear, i0, i1, fx);
    texel_axis(v, h, info[4], linear, j0, j1, fy);
    const float* a = texels + 4 * (off + j0 * w + i0);
    const float* b = texels + 4 * (off + j0 * w + i1);
    const float* c = texels + 4 * (off + j1 * w + i0);
    const float* d = texels + 4 * (off + j1 * w + i1);
    for (int ch = 0; ch < 4; ++ch)
        out[ch] = ((double)a[ch] * (1 - fx) + (double)b[ch] * fx) * (1 - fy) +
                  ((double)c[ch] * (1 - fx) + (double)d[ch] * fx) * fy;
}

// Texture k of the table at (u, v) and level of detail lam (engine/scene/sampling.py
// sample): the magnification filter where lam <= c, else the min filter's level(s).
__host__ __device__ inline void sample_texture(const float* texels, const long long* tex_info,
                                               long long k, double u, double v, double lam,
                                               double out[4]) {
    const long long* info = tex_info + FR_TEXTURE_COLUMNS * k;
    if (!(FR_ISFINITE(u) && FR_ISFINITE(v))) { u = 0.0; v = 0.0; }
    const bool mag_linear = info[5] != 0;
    const long long code = info[6];
    const double c = mag_linear && (code == 2 || code == 4) ? 0.5 : 0.0;
    if (!(lam > c)) { filter_level(texels, info, u, v, mag_linear, out); return; }
    const bool within = code % 2 == 1;
    if (code < 2) { filter_level(texels, info, u, v, within, out); return; }
    const long long q = info[7] - 1;
    const long long* first = tex_info + FR_TEXTURE_COLUMNS * info[8];
    if (code < 4) {
        long long d = lam <= 0.5 ? 0 : (long long)ceil(lam + 0.5) - 1;
        d = d < q ? d : q;
        filter_level(texels, first + FR_TEXTURE_COLUMNS * d, u, v, within, out);
        return;
    }
    const double top = lam < (double)q ? lam : (double)q;
    const long long d = (long long)floor(top);
    const double f = top - (double)d;
    filter_level(texels, first + FR_TEXTURE_COLUMNS * d, u, v, within, out);
    if (f > 0.0) {
        double next[4];
        filter_level(texels, first + FR_TEXTURE_COLUMNS * (d + 1), u, v, within, next);
        for (int ch = 0; ch < 4; ++ch) out[ch] += (next[ch] - out[ch]) * f;
    }
}

// Level of detail of the UV set at columns uo, uo + 1 of the varyings (uv0 or uv1) of
// the triangle with homogeneous adjugate `a` and vertices v0..v2 at the centre of pixel
// (px, py), for a
// tw x th level 0 (SurfaceShader.uv_lod): b_i = a_i . (x, y, 1), S = sum b_i,
// d uv / dx = sum_i a_i0 (uv_i - uv) / S (a_i1 for y), times 2 / width (2 / height).
__host__ __device__ inline double uv_lod(const double* a, const double* __restrict__ vary,
                                         int n_vary, long long v0, long long v1, long long v2,
                                         long long uo, long long px, long long py, int width,
                                         int height, long long tw, long long th) {
    const double xn = (2.0 * (double)px + 1.0) / (double)width - 1.0;
    const double yn = 1.0 - (2.0 * (double)py + 1.0) / (double)height;
    const long long vs[3] = {v0, v1, v2};
    double b[3], s = 0.0, u = 0.0, v = 0.0;
    for (int i = 0; i < 3; ++i) {
        b[i] = a[3 * i] * xn + a[3 * i + 1] * yn + a[3 * i + 2];
        s += b[i];
    }
    if (s == 0.0) s = 1.0;
    for (int i = 0; i < 3; ++i) {
        u += b[i] * vary[n_vary * vs[i] + uo];
        v += b[i] * vary[n_vary * vs[i] + uo + 1];
    }
    u /= s;
    v /= s;
    double ux = 0.0, vx = 0.0, uy = 0.0, vy = 0.0;
    for (int i = 0; i < 3; ++i) {
        const double du = vary[n_vary * vs[i] + uo] - u, dv = vary[n_vary * vs[i] + uo + 1] - v;
        ux += a[3 * i] * du;
        vx += a[3 * i] * dv;
        uy += a[3 * i + 1] * du;
        vy += a[3 * i + 1] * dv;
    }
    const double kx = 2.0 / ((double)width * s), ky = 2.0 / ((double)height * s);
    ux *= kx * (double)tw;
    vx *= kx * (double)th;
    uy *= ky * (double)tw;
    vy *= ky * (double)th;
    const double rx = ux * ux + vx * vx, ry = uy * uy + vy * vy;
    const double rho2 = rx > ry ? rx : ry;
    return rho2 > 0.0 ? 0.5 * log2(rho2) : FR_LOD_NONE;
}

// Perspective-correct barycentrics b of the triangle whose homogeneous adjugate is `a`
// (row-major 3x3) at the centre of pixel (px, py): SurfaceShader.barycentrics.
__host__ __device__ inline void pixel_barycentrics(const double* a, long long px, long long py,
                                                   int width, int height, double b[3]) {
    const double xn = (2.0 * (double)px + 1.0) / (double)width - 1.0;
    const double yn = 1.0 - (2.0 * (double)py + 1.0) / (double)height;
    b[0] = a[0] * xn + a[1] * yn + a[2];
    b[1] = a[3] * xn + a[4] * yn + a[5];
    b[2] = a[6] * xn + a[7] * yn + a[8];
    const double s = b[0] + b[1] + b[2];
    if (s != 0.0) { b[0] /= s; b[1] /= s; b[2] /= s; }
}

// The varyings the kernels read: the index of each in the `offsets` array they take (its
// first column in a varyings row, engine/render/attributes.py); cupy_surfaces reads this
// enum to build that array in this order.
enum Varying { VARYING_POSITION = 0, VARYING_NORMAL, VARYING_UV0, VARYING_COLOR_LINEAR,
               VARYING_TANGENT, VARYING_UV1 };
#define FR_MAX_VARYINGS 64

// The varyings material M reads (columns M.span) of triangle (v0, v1, v2) at
// barycentrics b: one generic pass over those columns of the (n, n_vary) varyings
// (SurfaceShader.interpolate).
__host__ __device__ inline void interpolate(const Material& M, const double* __restrict__ vary,
                                            int n_vary, long long v0, long long v1,
                                            long long v2, const double b[3], double out[]) {
    const double* a = vary + (long long)n_vary * v0;
    const double* c = vary + (long long)n_vary * v1;
    const double* d = vary + (long long)n_vary * v2;
    for (int k = M.span[0]; k < M.span[1]; ++k) out[k] = a[k] * b[0] + c[k] * b[1] + d[k] * b[2];
}

// The first column of the texture coordinates M's texture with uv_sets bit `bit` reads
// (uv1 where the bit is set, else uv0: Material.tex_coords)
__host__ __device__ inline long long uv_column(const Material& M, int bit,
                                               const long long* __restrict__ offsets) {
    return offsets[(M.uv_sets & bit) ? VARYING_UV1 : VARYING_UV0];
}

// Base colour from the interpolated varyings `vals`: material colour x vertex colour x
// texture at level of detail lod (uv_lod), RGB in linear light, alpha as stored
// (SurfaceShader._base).
__host__ __device__ inline void base_color(const Material& M, const double* vals,
                                           const long long* __restrict__ offsets,
                                           const float* __restrict__ texels,
                                           const long long* __restrict__ tex_info,
                                           double lod, double base[4]) {
    const double* vc = vals + offsets[VARYING_COLOR_LINEAR];
    for (int ch = 0; ch < 4; ++ch) {
        double c = M.color_linear[ch];
        if (M.flags & 1) c *= vc[ch];
        base[ch] = c;
    }
    if (M.texture >= 0) {
        const double* uv = vals + uv_column(M, FR_UV_SET_BASE_COLOR, offsets);
        double tex[4];
        sample_texture(texels, tex_info, M.texture, uv[0], uv[1], lod, tex);
        for (int ch = 0; ch < 4; ++ch) base[ch] *= tex[ch];
    }
}

}  // namespace frustum
