// Point rasterizer math shared by the CUDA kernels (raster.cu) and their host tests.
// Must stay identical to engine/render/points.py: the 64-bit key, the splat coverage rule and
// the resolve of a key to (point index, depth), so both produce the same image.
#pragma once
#include "common.cuh"
#if !defined(__CUDACC_RTC__)
#include <cstring>
#endif

namespace frustum {

// Key of an empty pixel: larger than every key a point can make (an index < 2^32 - 1).
#define FR_EMPTY_KEY 0xFFFFFFFFFFFFFFFFull

__host__ __device__ inline unsigned int float_bits(float f) {
#ifdef __CUDA_ARCH__
    return __float_as_uint(f);
#else
    unsigned int u;
    std::memcpy(&u, &f, sizeof u);
    return u;
#endif
}

__host__ __device__ inline float bits_float(unsigned int u) {
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
#endif
}

// (depth bits << 32) | index. Non-negative IEEE-754 floats order like their bit patterns
// read as unsigned integers, so the minimum key is the nearest point, and on equal depth
// the lowest index: a deterministic winner whatever order the atomics run in.
__host__ __device__ inline unsigned long long make_key(float depth, unsigned int index) {
    return ((unsigned long long)float_bits(depth) << 32) | (unsigned long long)index;
}

__host__ __device__ inline unsigned int key_index(unsigned long long key) {
    return (unsigned int)(key & 0xFFFFFFFFull);
}

__host__ __device__ inline float key_depth(unsigned long long key) {
    return bits_float((unsigned int)(key >> 32));
}

// First pixel covered along one axis by a splat of `size` pixels centred at `coord`:
// pixel i (centre i + 0.5) is covered when coord - size/2 < i + 0.5 <= coord + size/2.
// Evaluated in double with the same operations as engine.render.points.splat_origin (float32
// coordinate widened to float64, floor), so both pick the same pixels at every edge.
__host__ __device__ inline double splat_origin(float coord, int size) {
    return floor((double)coord - 0.5 * (double)size + 0.5);
}

// Pixels [lo, hi) covered along an axis of `extent` pixels, clipped at the border;
// lo >= hi when none. Both comparisons are false for NaN, so a non-finite coordinate
// covers nothing, and the cast to integer only happens for an origin in (-size, extent).
__host__ __device__ inline void splat_range(float coord, int size, int extent, int* lo, int* hi) {
    const double origin = splat_origin(coord, size);
    if (!(origin > -(double)size && origin < (double)extent)) {
        *lo = 0;
        *hi = 0;
        return;
    }
    const int first = (int)origin;
    const int last = first + size;  // exclusive
    *lo = first > 0 ? first : 0;
    *hi = last < extent ? last : extent;
}

// Point sprites (engine/render/sprites.py): a diameter clamped to [1, 255] pixels; a
// round point from FR_MIN_DISC (sqrt 2) on covers the pixel centres within half of it.
#define FR_MIN_DISC 1.4142135623730951

__host__ __device__ inline double sprite_diameter(float d) {
    const double v = (double)d;
    return v < 1.0 ? 1.0 : (v > 255.0 ? 255.0 : v);  // finite: sprite_diameters sees to it
}

// Whether pixel (x, y)'s centre is within r of (cx, cy): the same operations, in double,
// as engine.render.sprites.splat_sprites (compiled without fused multiply-adds).
__host__ __device__ inline bool disc_covers(int x, int y, double cx, double cy, double rr) {
    const double dx = ((double)x + 0.5) - cx;
    const double dy = ((double)y + 0.5) - cy;
    return dx * dx + dy * dy <= rr;
}

}  // namespace frustum
