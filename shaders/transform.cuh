// Vertex projection math: local -> world (relative to the batch origin) -> clip -> NDC
// -> screen pixels. Column vectors, matrices as 16 floats row-major (p_clip = VP * M * p).
#pragma once
#include "common.cuh"

namespace frustum {

// A vertex is culled when its clip-space w is at or below this (at or behind the eye).
#define FR_W_EPSILON 1e-7f

struct Projected {
    float x;      // screen x in pixels, origin at the left edge
    float y;      // screen y in pixels, origin at the top edge, y down
    float depth;  // window depth in [0, 1] (NDC z * 0.5 + 0.5); 1 when not visible
    bool visible;
};

// out = m * (x, y, z, 1)
__host__ __device__ inline void mul_point(const float* m, float x, float y, float z, float out[4]) {
    for (int r = 0; r < 4; ++r) {
        out[r] = m[4 * r + 0] * x + m[4 * r + 1] * y + m[4 * r + 2] * z + m[4 * r + 3];
    }
}

// out = m * v (v has 4 components)
__host__ __device__ inline void mul_vec4(const float* m, const float v[4], float out[4]) {
    for (int r = 0; r < 4; ++r) {
        out[r] = m[4 * r + 0] * v[0] + m[4 * r + 1] * v[1] + m[4 * r + 2] * v[2] + m[4 * r + 3] * v[3];
    }
}

// Visible iff clip w > epsilon and -w <= x, y, z <= w. Every comparison is false for NaN,
// and a finite w bounds x, y, z, so non-finite input is never visible.
__host__ __device__ inline Projected project_vertex(float px, float py, float pz,
                                                    const float* model, const float* view_proj,
                                                    float viewport_w, float viewport_h) {
    float world[4];
    float clip[4];
    mul_point(model, px, py, pz, world);
    mul_vec4(view_proj, world, clip);
    const float w = clip[3];
    Projected out;
    out.visible = w > FR_W_EPSILON && FR_ISFINITE(w) &&
                  fabsf(clip[0]) <= w && fabsf(clip[1]) <= w && fabsf(clip[2]) <= w;
    if (out.visible) {
        const float inv_w = 1.0f / w;
        out.x = (clip[0] * inv_w * 0.5f + 0.5f) * viewport_w;
        out.y = (0.5f - clip[1] * inv_w * 0.5f) * viewport_h;
        out.depth = clip[2] * inv_w * 0.5f + 0.5f;
    } else {
        out.x = 0.0f;
        out.y = 0.0f;
        out.depth = 1.0f;
    }
    return out;
}

}  // namespace frustum
