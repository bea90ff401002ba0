// The material record of engine/render/materials.py (MATERIAL, align=True): one struct
// per material, read by resolve.cu and the masked raster of triangles.cu. A test
// compiles this header with NVRTC and the host compiler and checks every offset against
// the NumPy dtype, so the three definitions cannot drift.
#pragma once

// The alpha every drawn surface pixel writes into the frame (materials.FRAME_ALPHA): the
// base alpha decides only the MASK test (glTF 2.0 section 3.9.4)
#define FR_FRAME_ALPHA 255u
// Material.flags bit of a BLEND material: its pixels write their base alpha instead
// (materials.BLENDED, engine/render/transparency.py)
#define FR_BLENDED 8

// the uv_sets bits (engine/render/materials.py UV_SET_BITS)
#define FR_UV_SET_BASE_COLOR 1
#define FR_UV_SET_METALLIC_ROUGHNESS 2
#define FR_UV_SET_OCCLUSION 4
#define FR_UV_SET_EMISSIVE 8
#define FR_UV_SET_NORMAL 16

namespace frustum {

struct Material {
    double color[4];         // base colour factor RGBA, sRGB-encoded
    double color_linear[4];  // RGB decoded to linear, alpha as is
    double specular;         // Blinn-Phong strength
    double shininess;        // Blinn-Phong exponent
    double alpha_cutoff;     // glTF MASK threshold; -1: opaque
    int shading;             // 0 unlit, 1 lit, 2 flat
    int flags;               // 1 vertex colours | 2 double-sided | 4 flat | 8 blended
    int texture;             // texture table row, -1: none
    int span[2];             // the varying columns [first, last) its shading reads
    int pad;
    double metallic;            // "pbr" factors (engine/render/pbr.py)
    double roughness;
    double occlusion_strength;
    double emissive[4];         // linear RGB, 0
    int mr_texture;             // texture table rows of the "pbr" maps, -1: none
    int occlusion_texture;
    int emissive_texture;
    int pbr_pad;
    double normal_scale;        // the "normal" map's scale
    int normal_texture;         // texture table row of the "normal" map, -1: none
    int uv_sets;                // bit FR_UV_SET_<role> set: that texture reads uv1
};

}  // namespace frustum
