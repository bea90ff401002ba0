// Resolve: one thread per pixel turns the key buffer into colour and depth, shading each
// triangle pixel once (engine/render/shading.py): perspective-correct barycentrics from
// the triangle's adjugate, base colour = material x vertex colour x texture in linear
// light, then (unlit) as is, or ambient + Lambert + Blinn-Phong, or the glTF
// metallic-roughness BRDF ("pbr", pbr.cuh), with the normal through a "normal" map
// first (normal_map.cuh), the environment's light (ibl.cuh) when the scene has one and
// spot cones and range windows on point lights (punctual.cuh), through the exposure
// and tone map (tonemap.cuh) and sRGB-encoded. One
// thread per pixel gathers its triangle's vertices: on a GPU neighbouring threads share
// them through the cache, and pow is a hardware exp2/log2, so the CPU resolve's runs of
// pixels and specular tables (numba_shading.py) would buy nothing here.
// Ids: [0, n_points) points, then n_tris triangles, then lines. 64-bit grid-stride loop.
#include "raster.cuh"
#include "shading.cuh"
#include "pbr.cuh"
#include "normal_map.cuh"
#include "shadow.cuh"
#include "punctual.cuh"
#include "tonemap.cuh"

// materials: one frustum::Material record each (material.cuh)
extern "C" __global__ void resolve_surfaces(
    const unsigned long long* __restrict__ keys, int width, int height,
    long long n_points, long long n_tris,
    const unsigned int* __restrict__ point_rgba, const unsigned int* __restrict__ line_rgba,
    unsigned int background,
    const long long* __restrict__ tris, const int* __restrict__ tri_material,
    const double* __restrict__ adj, const unsigned char* __restrict__ front,
    const double* __restrict__ vary, int n_vary,                               // (n, n_vary)
    const long long* __restrict__ offsets,                 // varyings' first columns
    const frustum::Material* __restrict__ materials,
    const float* __restrict__ texels, const long long* __restrict__ tex_info,
    const double* __restrict__ ambient, int n_dir, const double* __restrict__ dir_l,
    const double* __restrict__ dir_e, int n_pt, const double* __restrict__ pt_pos,
    const double* __restrict__ pt_e, const double* __restrict__ eye, int ortho,
    const double* __restrict__ view_dir,
    unsigned int* __restrict__ color_out, float* __restrict__ depth_out,
    const float* __restrict__ env_texels, const long long* __restrict__ env_info,
    const double* __restrict__ env_sh, const float* __restrict__ env_lut, int env_lut_n,
    int has_env,                                 // the environment (ibl.cuh), has_env 0: none
    // the shadow maps (shadow.cuh ShadowMaps): read only when n_maps > 0
    const float* __restrict__ sh_texels, const double* __restrict__ sh_table,
    const long long* __restrict__ sh_dir, const long long* __restrict__ sh_point,
    const unsigned char* __restrict__ sh_receive, int n_maps,
    // spot cones and ranges of the point lights (punctual.cuh PointLights), read only
    // when windowed; the scene's exposure and tone map (tonemap.cuh)
    const double* __restrict__ pt_cone, const double* __restrict__ pt_range, int windowed,
    double exposure, int tone)
{
    const frustum::PointLights pts = {pt_pos, pt_e, pt_cone, pt_range, windowed, n_pt};
    const frustum::Environment env = {env_texels, env_info, env_sh, env_lut, env_lut_n, has_env};
    const frustum::ShadowMaps maps = {sh_texels, sh_table, sh_dir, sh_point, sh_receive, n_maps};
    const long long num = (long long)width * height;
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < num; p += stride) {
        const unsigned long long k = keys[p];
        if (k == FR_EMPTY_KEY) {
            color_out[p] = background;
            depth_out[p] = 1.0f;
            continue;
        }
        depth_out[p] = frustum::key_depth(k);
        const long long i = (long long)frustum::key_index(k);
        if (i < n_points) { color_out[p] = point_rgba[i]; continue; }
        if (i >= n_points + n_tris) { color_out[p] = line_rgba[i - n_points - n_tris]; continue; }
        const long long t = i - n_points;
        const long long px = p % width, py = p / width;
        double bc[3];
        frustum::pixel_barycentrics(adj + 9 * t, px, py, width, height, bc);
        const long long v0 = tris[3 * t], v1 = tris[3 * t + 1], v2 = tris[3 * t + 2];
        const frustum::Material& M = materials[tri_material[t]];
        double vals[FR_MAX_VARYINGS];
        frustum::interpolate(M, vary, n_vary, v0, v1, v2, bc, vals);
        const int shading = M.shading;
        const int flags = M.flags;
        double base[4];
        const double lod = M.texture < 0 ? FR_LOD_NONE : frustum::uv_lod(
            adj + 9 * t, vary, n_vary, v0, v1, v2,
            frustum::uv_column(M, FR_UV_SET_BASE_COLOR, offsets), px, py,
            width, height, tex_info[FR_TEXTURE_COLUMNS * M.texture + 1],
            tex_info[FR_TEXTURE_COLUMNS * M.texture + 2]);
        frustum::base_color(M, vals, offsets, texels, tex_info, lod, base);
        // opaque whatever base[3], but for a blended material (the transparency pass)
        const unsigned int alpha = (flags & FR_BLENDED) ? frustum::unorm8(base[3]) : FR_FRAME_ALPHA;
        if (shading == 0) {
            double lin[3] = {base[0], base[1], base[2]};
            frustum::display(lin, exposure, tone);
            color_out[p] = frustum::unorm8(frustum::srgb_encode(lin[0])) |
                           (frustum::unorm8(frustum::srgb_encode(lin[1])) << 8) |
                           (frustum::unorm8(frustum::srgb_encode(lin[2])) << 16) | (alpha << 24);
            continue;
        }
        const double* w3 = vals + offsets[frustum::VARYING_POSITION];
        double n[3] = {0.0, 0.0, 0.0};
        double nl = 0.0;
        const bool flat = shading == 2 || (shading == 3 && (flags & 4));  // pbr flat normals
        if (!flat) {
            for (int r = 0; r < 3; ++r) n[r] = vals[offsets[frustum::VARYING_NORMAL] + r];
            nl = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
            if (nl > 0.0) { n[0] /= nl; n[1] /= nl; n[2] /= nl; }
        }
        if (flat || !(nl > 0.0)) {  // flat, or no usable normal: the geometric one
            double e1[3], e2[3];
            const long long p = offsets[frustum::VARYING_POSITION];
            for (int r = 0; r < 3; ++r) {
                e1[r] = vary[n_vary * v1 + p + r] - vary[n_vary * v0 + p + r];
                e2[r] = vary[n_vary * v2 + p + r] - vary[n_vary * v0 + p + r];
            }
            n[0] = e1[1] * e2[2] - e1[2] * e2[1];
            n[1] = e1[2] * e2[0] - e1[0] * e2[2];
            n[2] = e1[0] * e2[1] - e1[1] * e2[0];
            const double gl = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
            if (gl > 0.0) { n[0] /= gl; n[1] /= gl; n[2] /= gl; }
        }
        if (M.normal_texture >= 0) {  // normal_map.cuh, before a back face reverses it
            const long long row = FR_TEXTURE_COLUMNS * (long long)M.normal_texture;
            const double lod = frustum::uv_lod(
                adj + 9 * t, vary, n_vary, v0, v1, v2,
                frustum::uv_column(M, FR_UV_SET_NORMAL, offsets), px, py, width, height,
                tex_info[row + 1], tex_info[row + 2]);
            frustum::mapped_normal(M, vals, offsets, texels, tex_info, lod, n);
        }
        if ((flags & 2) && !front[t]) { n[0] = -n[0]; n[1] = -n[1]; n[2] = -n[2]; }
        double v[3];
        if (ortho) {
            v[0] = view_dir[0]; v[1] = view_dir[1]; v[2] = view_dir[2];
        } else {
            for (int r = 0; r < 3; ++r) v[r] = eye[r] - w3[r];
            const double vl = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
            if (vl > 0.0) { v[0] /= vl; v[1] /= vl; v[2] /= vl; }
        }
        // this pixel's shadow maps, or null where there are none or it receives none
        const frustum::ShadowMaps* shadows = n_maps > 0 && sh_receive[t] ? &maps : nullptr;
        if (shading == 3) {
            double lin[3], map_lod[3];
            frustum::pbr_map_lods(M, adj + 9 * t, vary, n_vary, v0, v1, v2, offsets, tex_info,
                                  px, py, width, height, map_lod);
            frustum::pbr_pixel(M, n, v, w3, base, vals, map_lod, offsets, texels, tex_info,
                               ambient, n_dir, dir_l, dir_e, pts, env, lin, shadows);
            frustum::display(lin, exposure, tone);
            color_out[p] = frustum::unorm8(frustum::srgb_encode(lin[0])) |
                           (frustum::unorm8(frustum::srgb_encode(lin[1])) << 8) |
                           (frustum::unorm8(frustum::srgb_encode(lin[2])) << 16) | (alpha << 24);
            continue;
        }
        double diff[3] = {ambient[0], ambient[1], ambient[2]}, spec[3] = {0.0, 0.0, 0.0};
        if (env.on) {  // the environment joins the ambient (engine/render/ibl.py)
            double e[3];
            frustum::ibl_irradiance(env.sh, n, e);
            for (int r = 0; r < 3; ++r) diff[r] += e[r];
        }
        const double ks = M.specular, shin = M.shininess;
        for (int li = 0; li < n_dir + n_pt; ++li) {
            double l[3], e[3];
            if (li < n_dir) {
                for (int r = 0; r < 3; ++r) { l[r] = dir_l[3 * li + r]; e[r] = dir_e[3 * li + r]; }
            } else {
                frustum::point_light(pts, li - n_dir, w3, l, e);
            }
            frustum::shadow_scale(shadows, li, n_dir, w3, n, l, e);
            const double ndl = n[0] * l[0] + n[1] * l[1] + n[2] * l[2];
            if (ndl > 0.0) {
                for (int r = 0; r < 3; ++r) diff[r] += e[r] * ndl;
                if (ks > 0.0) {
                    const double h[3] = {l[0] + v[0], l[1] + v[1], l[2] + v[2]};
                    const double hl = sqrt(h[0] * h[0] + h[1] * h[1] + h[2] * h[2]);
                    double ndh = 0.0;
                    if (hl > 0.0) {
                        ndh = (n[0] * h[0] + n[1] * h[1] + n[2] * h[2]) / hl;
                        ndh = ndh > 0.0 ? ndh : 0.0;
                    }
                    const double f = ks * pow(ndh, shin);
                    for (int r = 0; r < 3; ++r) spec[r] += e[r] * f;
                }
            }
        }
        double lin[3];
        for (int r = 0; r < 3; ++r) lin[r] = base[r] * diff[r] + spec[r];
        frustum::display(lin, exposure, tone);
        unsigned int rgb[3];
        for (int r = 0; r < 3; ++r) rgb[r] = frustum::unorm8(frustum::srgb_encode(lin[r]));
        color_out[p] = rgb[0] | (rgb[1] << 8) | (rgb[2] << 16) | (alpha << 24);
    }
}
