// Shading math shared by resolve.cu and its host builds: sRGB transfer functions
// (IEC 61966-2-1), glTF/GL texture addressing and filtering, the engine's lighting model.
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

__host__ __device__ inline double srgb_decode(double c) {
    c = clamp01(c);
    return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
}

__host__ __device__ inline unsigned int unorm8(double v) {
    return (unsigned int)rint(clamp01(v) * 255.0);
}

// texel index wrap: 0 repeat, 1 clamp to edge, 2 mirrored repeat
__host__ __device__ inline long long wrap_index(long long i, long long n, long long mode) {
    if (mode == 0) {
        const long long m = i % n;
        return m < 0 ? m + n : m;
    }
    if (mode == 1) return i < 0 ? 0 : (i > n - 1 ? n - 1 : i);
    long long m = i % (2 * n);
    if (m < 0) m += 2 * n;
    return m < n ? m : 2 * n - 1 - m;
}

__host__ __device__ inline double texel(const unsigned char* texels, long long off, long long w,
                                        long long row, long long col, int ch, bool linear) {
    const double v = texels[4 * (off + row * w + col) + ch] / 255.0;
    return (linear && ch < 3) ? srgb_decode(v) : v;
}

// info = (offset, width, height, wrap_s, wrap_t, filter 0 nearest / 1 linear)
__host__ __device__ inline void sample_texture(const unsigned char* texels, const long long* info,
                                               double u, double v, bool linear, double out[4]) {
    const long long off = info[0], w = info[1], h = info[2];
    if (!(FR_ISFINITE(u) && FR_ISFINITE(v))) { u = 0.0; v = 0.0; }
    const double lim = 2147483648.0 / (double)(w > h ? w : h);
    u = u < -lim ? -lim : (u > lim ? lim : u);
    v = v < -lim ? -lim : (v > lim ? lim : v);
    double x = u * (double)w, y = v * (double)h;
    if (info[5] == 0) {
        const long long col = wrap_index((long long)floor(x), w, info[3]);
        const long long row = wrap_index((long long)floor(y), h, info[4]);
        for (int ch = 0; ch < 4; ++ch) out[ch] = texel(texels, off, w, row, col, ch, linear);
        return;
    }
    x -= 0.5;
    y -= 0.5;
    const double x0 = floor(x), y0 = floor(y), fx = x - x0, fy = y - y0;
    const long long i0 = wrap_index((long long)x0, w, info[3]), i1 = wrap_index((long long)x0 + 1, w, info[3]);
    const long long j0 = wrap_index((long long)y0, h, info[4]), j1 = wrap_index((long long)y0 + 1, h, info[4]);
    for (int ch = 0; ch < 4; ++ch) {
        const double top = texel(texels, off, w, j0, i0, ch, linear) * (1 - fx) +
                           texel(texels, off, w, j0, i1, ch, linear) * fx;
        const double bottom = texel(texels, off, w, j1, i0, ch, linear) * (1 - fx) +
                              texel(texels, off, w, j1, i1, ch, linear) * fx;
        out[ch] = top * (1 - fy) + bottom * fy;
    }
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
enum Varying { VARYING_POSITION = 0, VARYING_NORMAL, VARYING_UV0, VARYING_COLOR,
               VARYING_COLOR_LINEAR };
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

// Base colour from the interpolated varyings `vals`: material colour x vertex colour x
// texture, RGB linear when `linear` else sRGB-encoded, alpha as stored
// (SurfaceShader._base).
__host__ __device__ inline void base_color(const Material& M, bool linear, const double* vals,
                                           const long long* __restrict__ offsets,
                                           const unsigned char* __restrict__ texels,
                                           const long long* __restrict__ tex_info,
                                           double base[4]) {
    const double* vc = vals + offsets[linear ? VARYING_COLOR_LINEAR : VARYING_COLOR];
    for (int ch = 0; ch < 4; ++ch) {
        double c = linear ? M.color_linear[ch] : M.color[ch];
        if (M.flags & 1) c *= vc[ch];
        base[ch] = c;
    }
    if (M.texture >= 0) {
        const double* uv = vals + offsets[VARYING_UV0];
        double tex[4];
        sample_texture(texels, tex_info + 6 * M.texture, uv[0], uv[1], linear, tex);
        for (int ch = 0; ch < 4; ++ch) base[ch] *= tex[ch];
    }
}

}  // namespace frustum
