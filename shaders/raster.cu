// Software point rasterizer on the GPU, three launches per frame:
//   clear_keys   -> every pixel key = FR_EMPTY_KEY
//   splat_points -> one 64-bit atomicMin of (depth bits << 32 | index) per covered pixel
//   resolve_keys -> key -> RGBA of the winning point (or background) and its depth
// Same math as engine/render/points.py (see raster.cuh). All loops are 64-bit grid-stride loops,
// so any grid size and more than 2^31 items work.
#include "raster.cuh"

extern "C" __global__ void clear_keys(unsigned long long* __restrict__ keys, long long num_pixels)
{
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < num_pixels; i += stride) {
        keys[i] = FR_EMPTY_KEY;
    }
}

// sizes[i * size_stride] is point i's splat side in pixels (1..255): size_stride 1 for
// per-point sizes, 0 for one size shared by every point.
extern "C" __global__ void splat_points(const float* __restrict__ screen_xy,      // (n, 2)
                                        const float* __restrict__ depth,          // (n,)
                                        const unsigned char* __restrict__ visible,  // (n,)
                                        const unsigned char* __restrict__ sizes,
                                        long long size_stride,
                                        long long n,
                                        int width, int height,
                                        unsigned long long* keys)                 // (height, width)
{
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (!visible[i]) continue;
        const int size = sizes[i * size_stride];
        int x0, x1, y0, y1;
        frustum::splat_range(screen_xy[2 * i], size, width, &x0, &x1);
        frustum::splat_range(screen_xy[2 * i + 1], size, height, &y0, &y1);
        const unsigned long long key = frustum::make_key(depth[i], (unsigned int)i);
        for (int y = y0; y < y1; ++y) {
            unsigned long long* row = keys + (long long)y * width;
            for (int x = x0; x < x1; ++x) {
                // Keys only ever decrease, so a plain read that already beats this key
                // proves the atomic would change nothing: skip it (saves atomic traffic
                // where many points overlap).
                if (key < row[x]) atomicMin(row + x, key);
            }
        }
    }
}

// Point sprites (engine/render/sprites.py): diameters[i * diameter_stride] pixels
// (float), rounds[i * round_stride] 1 for a disc; stride 0 shares one value. A disc
// covers the pixel centres within half its diameter, a square rint(diameter) pixels.
extern "C" __global__ void splat_sprites(const float* __restrict__ screen_xy,      // (n, 2)
                                         const float* __restrict__ depth,          // (n,)
                                         const unsigned char* __restrict__ visible,  // (n,)
                                         const float* __restrict__ diameters,
                                         long long diameter_stride,
                                         const unsigned char* __restrict__ rounds,
                                         long long round_stride,
                                         long long n,
                                         int width, int height,
                                         unsigned long long* keys)                 // (height, width)
{
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (!visible[i]) continue;
        const double d = frustum::sprite_diameter(diameters[i * diameter_stride]);
        const unsigned long long key = frustum::make_key(depth[i], (unsigned int)i);
        int x0, x1, y0, y1;
        if (rounds[i * round_stride] && d >= FR_MIN_DISC) {
            const double cx = (double)screen_xy[2 * i], cy = (double)screen_xy[2 * i + 1];
            const double r = 0.5 * d;
            const double rr = r * r;
            const int s = (int)floor(d) + 2;
            if (!(cx > -s && cx < (double)width + s && cy > -s && cy < (double)height + s)) continue;
            const int bx = (int)floor(cx - r - 0.5), by = (int)floor(cy - r - 0.5);
            x0 = bx > 0 ? bx : 0;
            y0 = by > 0 ? by : 0;
            x1 = bx + s < width ? bx + s : width;
            y1 = by + s < height ? by + s : height;
            for (int y = y0; y < y1; ++y) {
                unsigned long long* row = keys + (long long)y * width;
                for (int x = x0; x < x1; ++x) {
                    if (frustum::disc_covers(x, y, cx, cy, rr) && key < row[x]) atomicMin(row + x, key);
                }
            }
            continue;
        }
        const int side = (int)rint(d);
        frustum::splat_range(screen_xy[2 * i], side, width, &x0, &x1);
        frustum::splat_range(screen_xy[2 * i + 1], side, height, &y0, &y1);
        for (int y = y0; y < y1; ++y) {
            unsigned long long* row = keys + (long long)y * width;
            for (int x = x0; x < x1; ++x) {
                if (key < row[x]) atomicMin(row + x, key);
            }
        }
    }
}

extern "C" __global__ void resolve_keys(const unsigned long long* __restrict__ keys,  // (h, w)
                                        const unsigned int* __restrict__ colors,      // (n,) RGBA8
                                        unsigned int background,                      // RGBA8
                                        long long num_pixels,
                                        unsigned int* __restrict__ out_color,         // (h, w) RGBA8
                                        float* __restrict__ out_depth)                // (h, w)
{
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < num_pixels; i += stride) {
        const unsigned long long key = keys[i];
        if (key == FR_EMPTY_KEY) {
            out_color[i] = background;
            out_depth[i] = 1.0f;
        } else {
            out_color[i] = colors[frustum::key_index(key)];
            out_depth[i] = frustum::key_depth(key);
        }
    }
}
