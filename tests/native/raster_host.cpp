// Host build of shaders/raster.cuh for tests: the clear / splat / resolve passes of
// shaders/raster.cu run sequentially (atomicMin becomes a plain min, which gives the same
// result because min is order-independent), called through ctypes and compared with
// engine.render.points.rasterize_points.
#include "../../shaders/raster.cuh"

// The three passes one at a time (the stand-in device runs them as its "kernels").
extern "C" void clear_keys_host(unsigned long long* keys, long long num_pixels) {
    for (long long i = 0; i < num_pixels; ++i) keys[i] = FR_EMPTY_KEY;
}

extern "C" void splat_points_host(const float* screen_xy, const float* depth,
                                  const unsigned char* visible, const unsigned char* sizes,
                                  long long size_stride, long long n, int width, int height,
                                  unsigned long long* keys) {
    for (long long i = 0; i < n; ++i) {
        if (!visible[i]) continue;
        const int size = sizes[i * size_stride];
        int x0, x1, y0, y1;
        frustum::splat_range(screen_xy[2 * i], size, width, &x0, &x1);
        frustum::splat_range(screen_xy[2 * i + 1], size, height, &y0, &y1);
        const unsigned long long key = frustum::make_key(depth[i], (unsigned int)i);
        for (int y = y0; y < y1; ++y) {
            unsigned long long* row = keys + (long long)y * width;
            for (int x = x0; x < x1; ++x) {
                if (key < row[x]) row[x] = key;
            }
        }
    }
}

extern "C" void resolve_keys_host(const unsigned long long* keys, const unsigned int* colors,
                                  unsigned int background, long long num_pixels,
                                  unsigned int* out_color, float* out_depth) {
    for (long long i = 0; i < num_pixels; ++i) {
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

extern "C" void rasterize_points_host(const float* screen_xy, const float* depth,
                                      const unsigned char* visible, const unsigned char* sizes,
                                      long long size_stride, long long n, int width, int height,
                                      const unsigned int* colors, unsigned int background,
                                      unsigned long long* keys, unsigned int* out_color,
                                      float* out_depth) {
    const long long num_pixels = (long long)width * height;
    clear_keys_host(keys, num_pixels);
    splat_points_host(screen_xy, depth, visible, sizes, size_stride, n, width, height, keys);
    resolve_keys_host(keys, colors, background, num_pixels, out_color, out_depth);
}

// The per-axis coverage rule alone, for edge cases: writes [lo, hi) for each coordinate.
extern "C" void splat_range_host(const float* coords, long long n, int size, int extent,
                                 int* lo, int* hi) {
    for (long long i = 0; i < n; ++i) frustum::splat_range(coords[i], size, extent, lo + i, hi + i);
}
