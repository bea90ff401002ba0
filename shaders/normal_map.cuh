// Tangent-space normal mapping (engine/render/normal_map.py): the "normal" map's stored
// RGB c (linear data) filtered by its sampler at the pixel's level of detail,
// n_t = normalize((2c - 1)(scale, scale, 1)), taken through the frame
// T' = normalize(T - N (N.T)), B = cross(N, T') sign(w), N; a pixel whose tangent is
// zero or parallel to N keeps N. Compiled for the device and, in
// the tests, by the host compiler.
#pragma once
#include "shading.cuh"

namespace frustum {

// n: the unit normal (before a double-sided back face reverses it), replaced in place by
// the mapped one; vals: the interpolated varyings (the tangent and the map's uv set);
// lod: the map's level of detail (uv_lod of its uv set and size)
__host__ __device__ inline void mapped_normal(const Material& M, const double* vals,
                                              const long long* __restrict__ offsets,
                                              const float* __restrict__ texels,
                                              const long long* __restrict__ tex_info,
                                              double lod, double n[3]) {
    const double* uv = vals + uv_column(M, FR_UV_SET_NORMAL, offsets);
    double c[4];
    sample_texture(texels, tex_info, M.normal_texture, uv[0], uv[1], lod, c);
    double ts[3] = {(2.0 * c[0] - 1.0) * M.normal_scale, (2.0 * c[1] - 1.0) * M.normal_scale,
                    2.0 * c[2] - 1.0};
    const double tl = sqrt(ts[0] * ts[0] + ts[1] * ts[1] + ts[2] * ts[2]);
    if (tl > 0.0) {
        ts[0] /= tl; ts[1] /= tl; ts[2] /= tl;
    } else {
        ts[0] = 0.0; ts[1] = 0.0; ts[2] = 1.0;
    }
    const double* tg = vals + offsets[VARYING_TANGENT];
    const double nt = n[0] * tg[0] + n[1] * tg[1] + n[2] * tg[2];
    double t[3] = {tg[0] - n[0] * nt, tg[1] - n[1] * nt, tg[2] - n[2] * nt};
    const double t2 = t[0] * t[0] + t[1] * t[1] + t[2] * t[2];
    if (!(t2 > 1e-12)) return;
    const double inv_t = 1.0 / sqrt(t2);
    t[0] *= inv_t; t[1] *= inv_t; t[2] *= inv_t;
    const double hand = tg[3] < 0.0 ? -1.0 : 1.0;
    const double b[3] = {(n[1] * t[2] - n[2] * t[1]) * hand, (n[2] * t[0] - n[0] * t[2]) * hand,
                         (n[0] * t[1] - n[1] * t[0]) * hand};
    double m[3];
    for (int r = 0; r < 3; ++r) m[r] = ts[0] * t[r] + ts[1] * b[r] + ts[2] * n[r];
    const double m2 = m[0] * m[0] + m[1] * m[1] + m[2] * m[2];
    if (!(m2 > 0.0)) return;
    const double inv_m = 1.0 / sqrt(m2);
    for (int r = 0; r < 3; ++r) n[r] = m[r] * inv_m;
}

}  // namespace frustum
