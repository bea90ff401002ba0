// Image-based lighting (engine/render/ibl.py): the prefiltered environment's lookups and
// the ambient term they give a "pbr" or "lit" pixel, for resolve.cu and its host builds.
// The environment arrives as the arrays of engine/render/backends/numba_ibl.py
// environment_arrays: the specular chain's texels (3 floats each) with its level table
// (first texel, width, height) per level, 9 x 3 SH coefficients of irradiance / pi
// (Ramamoorthi & Hanrahan 2001), the n x n x 2 split-sum table (Karis 2013).
#pragma once
#include "common.cuh"

#define FR_IBL_LEVELS 5

namespace frustum {

// Bilinear sample of an equirectangular (w x h) map at unit direction d: u repeats,
// v clamps to the edge (engine/render/ibl.py sample_equirect)
__host__ __device__ inline void ibl_equirect(const float* __restrict__ texels, long long off,
                                             long long w, long long h, const double d[3],
                                             double out[3]) {
    const double pi = 3.14159265358979323846;
    const double dy = d[1] < -1.0 ? -1.0 : (d[1] > 1.0 ? 1.0 : d[1]);
    const double u = 0.5 + atan2(d[0], -d[2]) / (2.0 * pi);
    const double v = acos(dy) / pi;
    const double x = u * (double)w - 0.5, y = v * (double)h - 0.5;
    const double x0 = floor(x), y0 = floor(y);
    const double fx = x - x0, fy = y - y0;
    long long i0 = (long long)x0 % w;
    if (i0 < 0) i0 += w;
    const long long i1 = (i0 + 1) % w;
    long long j0 = (long long)y0, j1 = (long long)y0 + 1;
    j0 = j0 < 0 ? 0 : (j0 > h - 1 ? h - 1 : j0);
    j1 = j1 < 0 ? 0 : (j1 > h - 1 ? h - 1 : j1);
    const float* a = texels + 3 * (off + j0 * w + i0);
    const float* b = texels + 3 * (off + j0 * w + i1);
    const float* c = texels + 3 * (off + j1 * w + i0);
    const float* e = texels + 3 * (off + j1 * w + i1);
    for (int ch = 0; ch < 3; ++ch)
        out[ch] = (double)a[ch] * (1.0 - fx) * (1.0 - fy) + (double)b[ch] * fx * (1.0 - fy) +
                  (double)c[ch] * (1.0 - fx) * fy + (double)e[ch] * fx * fy;
}

// Irradiance / pi at unit normal n from the 9 x 3 SH coefficients, clamped at 0
__host__ __device__ inline void ibl_irradiance(const double* __restrict__ sh, const double n[3],
                                               double out[3]) {
    const double x = n[0], y = n[1], z = n[2];
    const double b[9] = {0.282095, 0.488603 * y, 0.488603 * z, 0.488603 * x,
                         1.092548 * x * y, 1.092548 * y * z, 0.315392 * (3.0 * z * z - 1.0),
                         1.092548 * x * z, 0.546274 * (x * x - y * y)};
    for (int ch = 0; ch < 3; ++ch) {
        double s = 0.0;
        for (int k = 0; k < 9; ++k) s += sh[3 * k + ch] * b[k];
        out[ch] = s > 0.0 ? s : 0.0;
    }
}

__host__ __device__ inline void ibl_lut_axis(double t, int n, int& i0, int& i1, double& f) {
    t = t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
    const double x = t * (n - 1), x0 = floor(x);  // engine/render/ibl.py lut_lookup
    f = x - x0;
    i0 = (int)x0 < 0 ? 0 : ((int)x0 > n - 1 ? n - 1 : (int)x0);
    i1 = (int)x0 + 1 < 0 ? 0 : ((int)x0 + 1 > n - 1 ? n - 1 : (int)x0 + 1);
}

// The environment's light on a "pbr" pixel (engine/render/ibl.py ambient_pbr): unit n, v,
// linear base, metallic m, perceptual roughness, occlusion; added to out
__host__ __device__ inline void ibl_pbr(const float* __restrict__ texels,
                                        const long long* __restrict__ info,
                                        const double* __restrict__ sh,
                                        const float* __restrict__ lut, int lut_n,
                                        const double n[3], const double v[3],
                                        const double base[3], double m, double rough,
                                        double occlusion, double out[3]) {
    double e[3], s[3], t[3];
    ibl_irradiance(sh, n, e);
    const double ndv = n[0] * v[0] + n[1] * v[1] + n[2] * v[2];
    const double r[3] = {2.0 * ndv * n[0] - v[0], 2.0 * ndv * n[1] - v[1],
                         2.0 * ndv * n[2] - v[2]};
    const double lod = (rough < 0.0 ? 0.0 : (rough > 1.0 ? 1.0 : rough)) * (FR_IBL_LEVELS - 1);
    int k0 = (int)floor(lod);
    k0 = k0 > FR_IBL_LEVELS - 1 ? FR_IBL_LEVELS - 1 : k0;
    const double f = lod - k0;
    ibl_equirect(texels, info[3 * k0], info[3 * k0 + 1], info[3 * k0 + 2], r, s);
    if (k0 + 1 < FR_IBL_LEVELS && f > 0.0) {
        const int k1 = k0 + 1;
        ibl_equirect(texels, info[3 * k1], info[3 * k1 + 1], info[3 * k1 + 2], r, t);
        for (int ch = 0; ch < 3; ++ch) s[ch] += (t[ch] - s[ch]) * f;
    }
    int i0, i1, j0, j1;
    double fx, fy;
    ibl_lut_axis(ndv, lut_n, i0, i1, fx);
    ibl_lut_axis(rough, lut_n, j0, j1, fy);
    double ab[2];
    for (int c = 0; c < 2; ++c)
        ab[c] = ((double)lut[2 * (j0 * lut_n + i0) + c] * (1.0 - fx) +
                 (double)lut[2 * (j0 * lut_n + i1) + c] * fx) * (1.0 - fy) +
                ((double)lut[2 * (j1 * lut_n + i0) + c] * (1.0 - fx) +
                 (double)lut[2 * (j1 * lut_n + i1) + c] * fx) * fy;
    for (int ch = 0; ch < 3; ++ch) {
        const double f0 = 0.04 * (1.0 - m) + base[ch] * m;
        out[ch] += (base[ch] * (1.0 - m) * e[ch] + s[ch] * (f0 * ab[0] + ab[1])) * occlusion;
    }
}

// The environment's arrays as resolve.cu receives them (on = 0: none)
struct Environment {
    const float* texels;
    const long long* info;
    const double* sh;
    const float* lut;
    int lut_n;
    int on;
};

}  // namespace frustum
