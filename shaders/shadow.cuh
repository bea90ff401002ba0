// The shadow-map lookup (engine/render/shadows.py visibility, the same formulas): a
// slope-scaled bias along the direction to the light, the light's projection and 3 x 3
// percentage-closer filtering of the map's window depths.
#pragma once
#include "common.cuh"

#define FR_MAP_COLUMNS 26  // engine/render/shadows.py MAP_COLUMNS
#define FR_BIAS_CONSTANT 0.5  // BIAS_CONSTANT, texels
#define FR_BIAS_SLOPE 2.5  // BIAS_SLOPE
#define FR_MAX_SLOPE 10.0  // MAX_SLOPE
#define FR_PCF_RADIUS 1  // PCF_RADIUS: a 3 x 3 kernel

namespace frustum {

// A frame's shadow maps (engine/render/shadows.py shadow_tables): every map's depth
// rows end to end, one table row per map (offset, size, the view-projection row-major,
// texel_a, texel_b, origin, axis), each light's map row or -1, and per triangle whether
// it receives shadows.
struct ShadowMaps {
    const float* texels;
    const double* table;
    const long long* dir_map;
    const long long* pt_map;
    const unsigned char* receive;
    int n_maps;
};

// Visibility in [0, 1] of map row k at batch-frame point w of unit normal n, unit
// direction to the light l and N.L ndl > 0.
__host__ __device__ inline double shadow_visibility(const ShadowMaps& S, long long k,
                                                    const double w[3], const double n[3],
                                                    const double l[3], double ndl) {
    const double* row = S.table + FR_MAP_COLUMNS * k;
    ndl = ndl < 1.0 ? ndl : 1.0;
    const double nda = n[0] * row[23] + n[1] * row[24] + n[2] * row[25];
    const double sin2 = 1.0 - nda * nda;
    double slope = sqrt(sin2 > 0.0 ? sin2 : 0.0) / ndl;
    slope = slope < FR_MAX_SLOPE ? slope : FR_MAX_SLOPE;
    const double texel = row[18] + row[19] * ((w[0] - row[20]) * row[23] +
                                              (w[1] - row[21]) * row[24] +
                                              (w[2] - row[22]) * row[25]);
    const double b = texel * (FR_BIAS_CONSTANT + FR_BIAS_SLOPE * slope);
    const double q[3] = {w[0] + l[0] * b, w[1] + l[1] * b, w[2] + l[2] * b};
    double c[4];
    for (int r = 0; r < 4; ++r)
        c[r] = row[2 + 4 * r] * q[0] + row[3 + 4 * r] * q[1] + row[4 + 4 * r] * q[2] +
               row[5 + 4 * r];
    if (!(c[3] > 0.0)) return 1.0;
    const long long s = (long long)row[1];
    const double sx = (c[0] / c[3] + 1.0) * 0.5 * (double)s;
    const double sy = (1.0 - c[1] / c[3]) * 0.5 * (double)s;
    const double d = (c[2] / c[3]) * 0.5 + 0.5;
    if (!(FR_ISFINITE(sx) && FR_ISFINITE(sy))) return 1.0;
    const double cx = sx < -2.0 ? -2.0 : (sx > (double)s + 2.0 ? (double)s + 2.0 : sx);
    const double cy = sy < -2.0 ? -2.0 : (sy > (double)s + 2.0 ? (double)s + 2.0 : sy);
    const long long ix = (long long)floor(cx), iy = (long long)floor(cy);
    const float* map = S.texels + (long long)row[0];
    int lit = 0;
    for (int dj = -FR_PCF_RADIUS; dj <= FR_PCF_RADIUS; ++dj) {
        const long long y = iy + dj;
        for (int di = -FR_PCF_RADIUS; di <= FR_PCF_RADIUS; ++di) {
            const long long x = ix + di;
            if (x < 0 || x >= s || y < 0 || y >= s || d <= (double)map[y * s + x]) ++lit;
        }
    }
    return (double)lit / (double)((2 * FR_PCF_RADIUS + 1) * (2 * FR_PCF_RADIUS + 1));
}

// Light li's radiance e (li < n_dir: directional, else point li - n_dir) times its
// shadow visibility at w, for a pixel that receives shadows (S null: it does not).
__host__ __device__ inline void shadow_scale(const ShadowMaps* S, int li, int n_dir,
                                             const double w[3], const double n[3],
                                             const double l[3], double e[3]) {
    if (S == nullptr) return;
    const long long k = li < n_dir ? S->dir_map[li] : S->pt_map[li - n_dir];
    const double ndl = n[0] * l[0] + n[1] * l[1] + n[2] * l[2];
    if (k < 0 || !(ndl > 0.0)) return;
    const double vis = shadow_visibility(*S, k, w, n, l, ndl);
    for (int r = 0; r < 3; ++r) e[r] *= vis;
}

}  // namespace frustum
