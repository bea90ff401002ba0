// Triangle setup and rasterization on the GPU, into the same 64-bit key buffer as the
// point splats (raster.cu):
//   classify_triangles -> per triangle: cull, trivial accept/reject, snap (triangles.cuh)
//   raster_triangles   -> per piece: every covered pixel's key by one 64-bit atomicMin
// Same results as engine/render/triangles.py bit for bit. 64-bit grid-stride loops.
#include "triangles.cuh"

extern "C" __global__ void classify_triangles(const double* __restrict__ clip,        // (n, 4)
                                              const long long* __restrict__ tris,     // (t, 3)
                                              const unsigned char* __restrict__ cull_back,  // (t,)
                                              long long t_count,
                                              double width, double height,
                                              double* __restrict__ adj,               // (t, 3, 3)
                                              double* __restrict__ det,               // (t,)
                                              double* __restrict__ zc,                // (t, 3)
                                              double* __restrict__ wc,                // (t, 3)
                                              signed char* __restrict__ status,       // (t,)
                                              long long* __restrict__ x,              // (t, 3)
                                              long long* __restrict__ y,              // (t, 3)
                                              long long* __restrict__ area)           // (t,)
{
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < t_count; t += stride) {
        status[t] = (signed char)frustum::classify_triangle(
            clip + 4 * tris[3 * t], clip + 4 * tris[3 * t + 1], clip + 4 * tris[3 * t + 2],
            cull_back[t] != 0, width, height, adj + 9 * t, det + t, zc + 3 * t, wc + 3 * t,
            x + 3 * t, y + 3 * t, area + t);
    }
}

// One thread per piece walks its bounding box (clamped to the viewport) row by row with
// incremental integer edge functions; a covered pixel takes min(key, depth | id).
extern "C" __global__ void raster_triangles(const long long* __restrict__ x,          // (m, 3)
                                            const long long* __restrict__ y,          // (m, 3)
                                            const long long* __restrict__ piece_tri,  // (m,)
                                            long long m_count,
                                            const double* __restrict__ adj,           // (t, 3, 3)
                                            const double* __restrict__ zc,            // (t, 3)
                                            const double* __restrict__ wc,            // (t, 3)
                                            int width, int height,
                                            long long id_base,
                                            unsigned long long* keys)                 // (h, w)
{
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (long long m = (long long)blockIdx.x * blockDim.x + threadIdx.x; m < m_count; m += stride) {
        const long long* X = x + 3 * m;
        const long long* Y = y + 3 * m;
        long long mnx = X[0], mxx = X[0], mny = Y[0], mxy = Y[0];
        for (int k = 1; k < 3; ++k) {
            mnx = X[k] < mnx ? X[k] : mnx;
            mxx = X[k] > mxx ? X[k] : mxx;
            mny = Y[k] < mny ? Y[k] : mny;
            mxy = Y[k] > mxy ? Y[k] : mxy;
        }
        // ceil((min - half) / sub) and floor((max - half) / sub), clamped (floor division)
        long long bx0 = -frustum::floor_div(FR_HALF - mnx, FR_SUBPIXEL);
        long long bx1 = frustum::floor_div(mxx - FR_HALF, FR_SUBPIXEL);
        long long by0 = -frustum::floor_div(FR_HALF - mny, FR_SUBPIXEL);
        long long by1 = frustum::floor_div(mxy - FR_HALF, FR_SUBPIXEL);
        bx0 = bx0 > 0 ? bx0 : 0;
        by0 = by0 > 0 ? by0 : 0;
        bx1 = bx1 < width - 1 ? bx1 : width - 1;
        by1 = by1 < height - 1 ? by1 : height - 1;
        if (bx0 > bx1 || by0 > by1) continue;
        const long long t = piece_tri[m];
        const unsigned long long low = (unsigned long long)(t + id_base);
        // edge i runs from vertex i+1 to vertex i+2
        long long ax[3], ay[3], dx[3], dy[3], bias[3];
        for (int i = 0; i < 3; ++i) {
            const int a = (i + 1) % 3, b = (i + 2) % 3;
            ax[i] = X[a];
            ay[i] = Y[a];
            dx[i] = X[b] - X[a];
            dy[i] = Y[b] - Y[a];
            bias[i] = frustum::edge_bias(dx[i], dy[i]);
        }
        const double* A = adj + 9 * t;
        for (long long py = by0; py <= by1; ++py) {
            const long long cy = py * FR_SUBPIXEL + FR_HALF;
            const long long cx = bx0 * FR_SUBPIXEL + FR_HALF;
            long long e[3];
            for (int i = 0; i < 3; ++i) e[i] = dx[i] * (cy - ay[i]) - dy[i] * (cx - ax[i]);
            unsigned long long* row = keys + py * (long long)width;
            for (long long px = bx0; px <= bx1; ++px) {
                if (e[0] >= bias[0] && e[1] >= bias[1] && e[2] >= bias[2]) {
                    const float d = frustum::pixel_depth(A, zc + 3 * t, wc + 3 * t, px, py,
                                                         width, height);
                    const unsigned long long key =
                        ((unsigned long long)frustum::float_bits(d) << 32) | low;
                    // keys only decrease: a plain read that already wins skips the atomic
                    if (key < row[px]) atomicMin(row + px, key);
                }
                for (int i = 0; i < 3; ++i) e[i] -= dy[i] * FR_SUBPIXEL;
            }
        }
    }
}
