// Triangle setup and rasterization on the GPU, into the same 64-bit key buffer as the
// point splats (raster.cu):
//   classify_triangles -> per triangle: cull, trivial accept/reject, snap (triangles.cuh)
//   clip_triangles     -> per triangle crossing a plane: Sutherland-Hodgman, up to
//                         FR_MAX_PIECES snapped pieces (area 0: none)
//   raster_triangles   -> per piece: every covered pixel's key by one 64-bit atomicMin
//   raster_masked_triangles -> the same for alpha-cutoff pieces, with the alpha test
//   raster_layer_triangles  -> BLEND pieces into the transparency pass's k-buffer
// Same results as engine/render/triangles.py bit for bit. 64-bit grid-stride loops.
#include "shading.cuh"
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

extern "C" __global__ void clip_triangles(const double* __restrict__ clip,       // (n, 4)
                                          const long long* __restrict__ tris,    // (t, 3)
                                          const long long* __restrict__ cut,     // (c,)
                                          long long c_count,
                                          double width, double height,
                                          long long* __restrict__ x,             // (c * P, 3)
                                          long long* __restrict__ y,             // (c * P, 3)
                                          long long* __restrict__ piece_tri,     // (c * P,)
                                          long long* __restrict__ area)          // (c * P,)
{
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < c_count; k += stride) {
        const long long t = cut[k];
        const long long s = k * FR_MAX_PIECES;
        frustum::clip_triangle(clip + 4 * tris[3 * t], clip + 4 * tris[3 * t + 1],
                               clip + 4 * tris[3 * t + 2], width, height, x + 3 * s, y + 3 * s,
                               area + s);
        for (int p = 0; p < FR_MAX_PIECES; ++p) piece_tri[s + p] = t;
    }
}

// One piece: walk its bounding box (clamped to the viewport) row by row with incremental
// integer edge functions; a covered pixel that `keep(px, py)` accepts takes
// min(key, depth | id). keep: always true for opaque pieces, the alpha test for masked.
template <class Keep>
__device__ inline void raster_piece(const long long* X, const long long* Y, long long t,
                                    const double* __restrict__ adj, const double* __restrict__ zc,
                                    const double* __restrict__ wc, int width, int height,
                                    long long id_base, unsigned long long* keys, Keep keep)
{
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
    if (bx0 > bx1 || by0 > by1) return;
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
                // (and, for masked pieces, the texture fetch of the alpha test)
                if (key < row[px] && keep(px, py)) atomicMin(row + px, key);
            }
            for (int i = 0; i < 3; ++i) e[i] -= dy[i] * FR_SUBPIXEL;
        }
    }
}

// One thread per opaque piece (raster_piece with no test).
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
    for (long long m = (long long)blockIdx.x * blockDim.x + threadIdx.x; m < m_count; m += stride)
        raster_piece(x + 3 * m, y + 3 * m, piece_tri[m], adj, zc, wc, width, height, id_base,
                     keys, [](long long, long long) { return true; });
}

// One thread per piece of an alpha-cutoff material (glTF alphaMode MASK): a covered pixel
// is written only where its base alpha (material x vertex colour x texture, shading.cuh
// base_color) reaches the material's cutoff, as SurfaceShader.alpha_keep decides on the
// CPU. The material records and the rest as resolve_surfaces takes them.
extern "C" __global__ void raster_masked_triangles(
    const long long* __restrict__ x, const long long* __restrict__ y,
    const long long* __restrict__ piece_tri, long long m_count,
    const double* __restrict__ adj, const double* __restrict__ zc, const double* __restrict__ wc,
    int width, int height, long long id_base, unsigned long long* keys,
    const long long* __restrict__ tris, const int* __restrict__ tri_material,
    const frustum::Material* __restrict__ materials,
    const double* __restrict__ vary, int n_vary, const long long* __restrict__ offsets,
    const float* __restrict__ texels, const long long* __restrict__ tex_info)
{
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (long long m = (long long)blockIdx.x * blockDim.x + threadIdx.x; m < m_count; m += stride) {
        const long long t = piece_tri[m];
        const int mat = tri_material[t];
        const long long v0 = tris[3 * t], v1 = tris[3 * t + 1], v2 = tris[3 * t + 2];
        const frustum::Material& M = materials[mat];
        const double limit = M.alpha_cutoff;
        const double* A = adj + 9 * t;
        raster_piece(x + 3 * m, y + 3 * m, t, adj, zc, wc, width, height, id_base, keys,
                     [=](long long px, long long py) {
                         double b[3], base[4], vals[FR_MAX_VARYINGS];
                         frustum::pixel_barycentrics(A, px, py, width, height, b);
                         frustum::interpolate(M, vary, n_vary, v0, v1, v2, b, vals);
                         // the full-size level (no log2 here: this file has no fused
                         // multiply-add, and libdevice's log2 has them)
                         frustum::base_color(M, vals, offsets, texels, tex_info, FR_LOD_NONE,
                                             base);
                         return base[3] >= limit;
                     });
    }
}

// One pixel's sorted list of n_layers keys (layers[p * n_layers + i], ascending, EMPTY
// after its last): the key goes in by one atomicMin per slot, the larger of the two
// moving on to the next slot, so the slots keep the smallest keys in order whatever the
// arrival order; a key pushed past the last slot counts in overflow[p]
// (engine/render/transparency.py's k-buffer).
__device__ inline void insert_layer(unsigned long long* layers, int n_layers, long long p,
                                    unsigned long long key, unsigned int* overflow)
{
    unsigned long long* list = layers + p * n_layers;
    for (int i = 0; i < n_layers; ++i) {
        const unsigned long long old = atomicMin(list + i, key);
        if (old == 0xFFFFFFFFFFFFFFFFull) return;  // an empty slot took it
        key = old > key ? old : key;
    }
    atomicAdd(overflow + p, 1u);
}

// One thread per piece of a BLEND material: every covered pixel whose key is below the
// opaque bound (transparency.opaque_bound) goes into the pixel's k-buffer. raster_piece
// does the walk and the bound test (the bound stands in for its key buffer, never
// written: keep inserts the key and declines the atomicMin).
extern "C" __global__ void raster_layer_triangles(
    const long long* __restrict__ x, const long long* __restrict__ y,
    const long long* __restrict__ piece_tri, long long m_count,
    const double* __restrict__ adj, const double* __restrict__ zc, const double* __restrict__ wc,
    int width, int height, long long id_base, const unsigned long long* bound,
    unsigned long long* layers, int n_layers, unsigned int* overflow)
{
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (long long m = (long long)blockIdx.x * blockDim.x + threadIdx.x; m < m_count; m += stride) {
        const long long t = piece_tri[m];
        const double* A = adj + 9 * t;
        const unsigned long long low = (unsigned long long)(t + id_base);
        raster_piece(x + 3 * m, y + 3 * m, t, adj, zc, wc, width, height, id_base,
                     const_cast<unsigned long long*>(bound),
                     [=](long long px, long long py) {
                         const float d = frustum::pixel_depth(A, zc + 3 * t, wc + 3 * t, px,
                                                              py, width, height);
                         insert_layer(layers, n_layers, py * (long long)width + px,
                                      ((unsigned long long)frustum::float_bits(d) << 32) | low,
                                      overflow);
                         return false;
                     });
    }
}
