// The glTF 2.0 metallic-roughness BRDF (Appendix B: GGX distribution, height-correlated
// Smith visibility, Schlick Fresnel, Lambert diffuse for the non-metal part) and the PBR
// pixel of resolve.cu: the same formulas as engine/render/pbr.py and
// SurfaceShader._pbr (engine/render/shading.py), compiled for the device and, in the
// tests, by the host compiler.
#pragma once
#include "shading.cuh"
#include "ibl.cuh"
#include "shadow.cuh"
#include "punctual.cuh"

namespace frustum {

// pi x f x max(N.L, 0) for unit N, V, L, linear base c, metallic m, alpha^2 = a2:
// the factors of the light's radiance (engine/render/pbr.py module docstring)
__host__ __device__ inline void pbr_light(const double n[3], const double v[3],
                                          const double l[3], const double c[3], double m,
                                          double a2, double out[3]) {
    const double pi = 3.14159265358979323846;
    const double ndl = n[0] * l[0] + n[1] * l[1] + n[2] * l[2];
    out[0] = out[1] = out[2] = 0.0;
    if (!(ndl > 0.0)) return;
    double h[3] = {l[0] + v[0], l[1] + v[1], l[2] + v[2]};
    const double hl = sqrt(h[0] * h[0] + h[1] * h[1] + h[2] * h[2]);
    if (hl > 0.0) { h[0] /= hl; h[1] /= hl; h[2] /= hl; }
    const double ndh = n[0] * h[0] + n[1] * h[1] + n[2] * h[2];
    const double ndv = n[0] * v[0] + n[1] * v[1] + n[2] * v[2];
    const double vdh = v[0] * h[0] + v[1] * h[1] + v[2] * h[2];
    const double hdl = h[0] * l[0] + h[1] * l[1] + h[2] * l[2];
    double d = 0.0;
    if (ndh > 0.0) {
        const double q = ndh * ndh * (a2 - 1.0) + 1.0;
        d = a2 / (pi * (q * q > 1e-300 ? q * q : 1e-300));
    }
    double vis = 0.0;
    if (hdl > 0.0 && vdh > 0.0) {
        const double anl = fabs(ndl), anv = fabs(ndv);
        const double g = (anl + sqrt(a2 + (1.0 - a2) * anl * anl)) *
                         (anv + sqrt(a2 + (1.0 - a2) * anv * anv));
        vis = 1.0 / (g > 1e-300 ? g : 1e-300);
    }
    const double k = pow(1.0 - fabs(vdh), 5.0);
    for (int ch = 0; ch < 3; ++ch) {
        const double f0 = 0.04 * (1.0 - m) + c[ch] * m;
        const double f = f0 + (1.0 - f0) * k;
        out[ch] = pi * ((1.0 - f) * c[ch] * (1.0 - m) / pi + f * d * vis) * ndl;
    }
}

// The levels of detail of M's "pbr" maps (metallic-roughness, occlusion, emissive) at
// the centre of pixel (px, py) of the triangle with homogeneous adjugate `a` and vertices
// v0..v2: uv_lod of each map's uv set and size (SurfaceShader.uv_lod of its role);
// FR_LOD_NONE for a map M lacks.
__host__ __device__ inline void pbr_map_lods(const Material& M, const double* a,
                                             const double* __restrict__ vary, int n_vary,
                                             long long v0, long long v1, long long v2,
                                             const long long* __restrict__ offsets,
                                             const long long* __restrict__ tex_info,
                                             long long px, long long py, int width,
                                             int height, double lod[3]) {
    const int maps[3] = {M.mr_texture, M.occlusion_texture, M.emissive_texture};
    const int bits[3] = {FR_UV_SET_METALLIC_ROUGHNESS, FR_UV_SET_OCCLUSION,
                         FR_UV_SET_EMISSIVE};
    for (int k = 0; k < 3; ++k) {
        const long long row = FR_TEXTURE_COLUMNS * (long long)maps[k];
        lod[k] = maps[k] < 0 ? FR_LOD_NONE
                             : uv_lod(a, vary, n_vary, v0, v1, v2, uv_column(M, bits[k], offsets),
                                      px, py, width, height, tex_info[row + 1],
                                      tex_info[row + 2]);
    }
}

// Linear radiance of a "pbr" pixel: unit normal n, unit view vector v, batch-frame
// position w, linear base colour base, the interpolated varyings vals (uv0 for the
// maps: uv0 or uv1 each), the maps' levels of detail map_lod (pbr_map_lods), the scene's
// ambient, directional and point lights (spots and ranged lights among them,
// punctual.cuh), its environment (ibl.cuh); `shadows`: the frame's shadow maps where the pixel receives
// them (shadow.cuh), else null.
__host__ __device__ inline void pbr_pixel(const Material& M, const double n[3],
                                          const double v[3], const double w[3],
                                          const double base[3], const double* vals,
                                          const double map_lod[3],
                                          const long long* __restrict__ offsets,
                                          const float* __restrict__ texels,
                                          const long long* __restrict__ tex_info,
                                          const double* __restrict__ ambient, int n_dir,
                                          const double* __restrict__ dir_l,
                                          const double* __restrict__ dir_e,
                                          const PointLights& pts,
                                          const Environment& env, double out[3],
                                          const ShadowMaps* shadows = nullptr) {
    double metallic = M.metallic, rough = M.roughness, occlusion = 1.0;
    double em[3] = {M.emissive[0], M.emissive[1], M.emissive[2]};
    double s[4];  // each map filtered by its sampler at its level of detail
    if (M.mr_texture >= 0) {  // B metal, G roughness, stored values
        const double* uv = vals + uv_column(M, FR_UV_SET_METALLIC_ROUGHNESS, offsets);
        sample_texture(texels, tex_info, M.mr_texture, uv[0], uv[1], map_lod[0], s);
        metallic *= s[2];
        rough *= s[1];
    }
    if (M.occlusion_texture >= 0) {
        const double* uv = vals + uv_column(M, FR_UV_SET_OCCLUSION, offsets);
        sample_texture(texels, tex_info, M.occlusion_texture, uv[0], uv[1], map_lod[1], s);
        occlusion = 1.0 + M.occlusion_strength * (s[0] - 1.0);
    }
    if (M.emissive_texture >= 0) {
        const double* uv = vals + uv_column(M, FR_UV_SET_EMISSIVE, offsets);
        sample_texture(texels, tex_info, M.emissive_texture, uv[0], uv[1], map_lod[2], s);
        for (int ch = 0; ch < 3; ++ch) em[ch] *= s[ch];
    }
    const double a2 = rough * rough * rough * rough;
    for (int ch = 0; ch < 3; ++ch) {
        const double f0 = 0.04 * (1.0 - metallic) + base[ch] * metallic;
        out[ch] = ambient[ch] * (base[ch] * (1.0 - metallic) + f0) * occlusion;
    }
    if (env.on)  // image-based lighting (ibl.cuh)
        ibl_pbr(env.texels, env.info, env.sh, env.lut, env.lut_n, n, v, base, metallic, rough,
                occlusion, out);
    for (int li = 0; li < n_dir + pts.n; ++li) {
        double l[3], e[3], f[3];
        if (li < n_dir) {
            for (int r = 0; r < 3; ++r) { l[r] = dir_l[3 * li + r]; e[r] = dir_e[3 * li + r]; }
        } else {
            point_light(pts, li - n_dir, w, l, e);
        }
        shadow_scale(shadows, li, n_dir, w, n, l, e);  // shadow.cuh: null when not received
        pbr_light(n, v, l, base, metallic, a2, f);
        for (int ch = 0; ch < 3; ++ch) out[ch] += f[ch] * e[ch];
    }
    for (int ch = 0; ch < 3; ++ch) out[ch] += em[ch];
}

}  // namespace frustum
