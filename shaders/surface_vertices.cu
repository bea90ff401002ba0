// The surface vertex stage: one launch computes every vertex's clip-space position and,
// for shading, its batch-frame position and unit normal (engine/render/surface_vertices.py).
// mvp (k, 4, 4) = VP @ M and nm (k, 3, 3) = inverse transpose of M's 3x3 part are made on
// the host per frame in double; every product is in the reference's order (no fused
// multiply-add), so clip coordinates match the CPU backends bit for bit.
#include "common.cuh"

extern "C" __global__ void surface_vertices(const float* __restrict__ positions,     // (n, 3)
                                            const unsigned int* __restrict__ object_id,  // (n,)
                                            const double* __restrict__ mvp,          // (k, 4, 4)
                                            const double* __restrict__ model,        // (k, 4, 4)
                                            const double* __restrict__ nm,           // (k, 3, 3)
                                            const float* __restrict__ normals,       // (n, 3)
                                            long long n, int shading,
                                            double* __restrict__ clip,               // (n, 4)
                                            double* __restrict__ world,              // (n, 3)
                                            double* __restrict__ wn)                 // (n, 3)
{
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const long long k = object_id[i];
        const double x = positions[3 * i], y = positions[3 * i + 1], z = positions[3 * i + 2];
        const double* A = mvp + 16 * k;
        for (int r = 0; r < 4; ++r)
            clip[4 * i + r] = A[4 * r] * x + A[4 * r + 1] * y + A[4 * r + 2] * z + A[4 * r + 3];
        if (!shading) continue;
        const double* M = model + 16 * k;
        for (int r = 0; r < 3; ++r)
            world[3 * i + r] = M[4 * r] * x + M[4 * r + 1] * y + M[4 * r + 2] * z + M[4 * r + 3];
        const double a = normals[3 * i], b = normals[3 * i + 1], c = normals[3 * i + 2];
        const double* N = nm + 9 * k;
        double v[3];
        for (int r = 0; r < 3; ++r) v[r] = N[3 * r] * a + N[3 * r + 1] * b + N[3 * r + 2] * c;
        const double len = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        for (int r = 0; r < 3; ++r) wn[3 * i + r] = len > 0.0 ? v[r] / len : 0.0;
    }
}
