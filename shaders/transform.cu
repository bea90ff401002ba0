// One launch projects every vertex of the scene: object_id selects the model matrix.
// 64-bit grid-stride loop so N > 2^31 and any grid size work.
#include "transform.cuh"

// The view-projection matrix passed by value (16 floats, row-major) in the launch's
// parameter block: no per-frame upload of a 64-byte array before the launch.
struct FrMat4 {
    float m[16];
};

extern "C" __global__ void project_points(const float* __restrict__ positions,   // (n, 3)
                                          const unsigned int* __restrict__ object_id,  // (n,)
                                          const float* __restrict__ model,       // (k, 4, 4)
                                          const FrMat4 view_proj,                // (4, 4) by value
                                          unsigned int num_objects,
                                          float viewport_w, float viewport_h,
                                          long long n,
                                          float* __restrict__ screen_xy,         // (n, 2)
                                          float* __restrict__ depth,             // (n,)
                                          unsigned char* __restrict__ visible)   // (n,)
{
    float vp[16];
    for (int j = 0; j < 16; ++j) vp[j] = view_proj.m[j];
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const unsigned int k = object_id[i];
        frustum::Projected p;
        if (k < num_objects) {
            p = frustum::project_vertex(positions[3 * i], positions[3 * i + 1], positions[3 * i + 2],
                                        model + 16 * (size_t)k, vp, viewport_w, viewport_h);
        } else {
            p.x = 0.0f; p.y = 0.0f; p.depth = 1.0f; p.visible = false;
        }
        screen_xy[2 * i] = p.x;
        screen_xy[2 * i + 1] = p.y;
        depth[i] = p.depth;
        visible[i] = p.visible ? 1 : 0;
    }
}
