// Host build of shaders/transform.cuh for tests: the same per-vertex math the CUDA
// kernel runs, called through ctypes and compared with the Python backends.
#include "../../shaders/transform.cuh"

extern "C" void project_points_host(const float* positions, const unsigned int* object_id,
                                    const float* model, unsigned int num_objects,
                                    const float* view_proj, float viewport_w, float viewport_h,
                                    long long n, float* screen_xy, float* depth,
                                    unsigned char* visible) {
    for (long long i = 0; i < n; ++i) {
        frustum::Projected p{0.0f, 0.0f, 1.0f, false};
        const unsigned int k = object_id[i];
        if (k < num_objects) {
            p = frustum::project_vertex(positions[3 * i], positions[3 * i + 1], positions[3 * i + 2],
                                        model + 16 * (size_t)k, view_proj, viewport_w, viewport_h);
        }
        screen_xy[2 * i] = p.x;
        screen_xy[2 * i + 1] = p.y;
        depth[i] = p.depth;
        visible[i] = p.visible ? 1 : 0;
    }
}
