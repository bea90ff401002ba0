// Triangle setup and rasterization math shared by the CUDA kernels (triangles.cu) and
// their host builds. Must stay identical to engine/render/triangles.py: the clip planes,
// the homogeneous determinant and adjugate, fixed-point snapping with 8 sub-pixel bits,
// the top-left fill rule and the window depth from homogeneous barycentrics. Every
// operation is in double, in the same order as the NumPy/Numba code, so keys match bit
// for bit (compiled with -fmad=false, so no multiply-add is fused).
#pragma once
#include "common.cuh"
#include "raster.cuh"

namespace frustum {

// floor(a / b) for b > 0 (C++ division truncates towards zero; Python's // floors)
__host__ __device__ inline long long floor_div(long long a, long long b) {
    const long long q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

#define FR_SUBPIXEL 256LL
#define FR_HALF 128LL
#define FR_GUARD 16.0
#define FR_NUM_PLANES 7
// W_EPSILON of the projection contract (a float32 1e-7, widened to double)
#define FR_TRI_W_EPSILON ((double)1e-7f)

// (a, b, c, d, e): a vertex is inside when a x + b y + c z + d w + e >= 0
__host__ __device__ inline void clip_plane(int p, double* q) {
    const double planes[FR_NUM_PLANES][5] = {
        {0, 0, 1, 1, 0},                      // near: z >= -w
        {0, 0, -1, 1, 0},                     // far: z <= w
        {0, 0, 0, 1, -FR_TRI_W_EPSILON},      // w >= epsilon
        {1, 0, 0, FR_GUARD, 0},               // guard band
        {-1, 0, 0, FR_GUARD, 0},
        {0, 1, 0, FR_GUARD, 0},
        {0, -1, 0, FR_GUARD, 0},
    };
    for (int i = 0; i < 5; ++i) q[i] = planes[p][i];
}

__host__ __device__ inline bool finite4(const double* v) {
    return FR_ISFINITE(v[0]) && FR_ISFINITE(v[1]) && FR_ISFINITE(v[2]) && FR_ISFINITE(v[3]);
}

// round half to even, as NumPy's rint
__host__ __device__ inline double rint_even(double v) { return rint(v); }

// Classify triangle (v0, v1, v2) given as clip-space (x, y, z, w) doubles. Writes the
// adjugate of M = [x; y; w] (row-major 3x3), det, z and w, and for status 1 the snapped
// oriented fixed-point coordinates and the area before orientation.
// Returns 0 (dropped), 1 (inside every plane) or 2 (to be clipped: clip_triangle).
__host__ __device__ inline int classify_triangle(const double* c0, const double* c1,
                                                 const double* c2, bool cull_back,
                                                 double width, double height, double* adj,
                                                 double* det, double* z, double* w,
                                                 long long* x, long long* y, long long* area) {
    const double x0 = c0[0], y0 = c0[1], z0 = c0[2], w0 = c0[3];
    const double x1 = c1[0], y1 = c1[1], z1 = c1[2], w1 = c1[3];
    const double x2 = c2[0], y2 = c2[1], z2 = c2[2], w2 = c2[3];
    z[0] = z0; z[1] = z1; z[2] = z2;
    w[0] = w0; w[1] = w1; w[2] = w2;
    adj[0] = y1 * w2 - y2 * w1;
    adj[1] = x2 * w1 - x1 * w2;
    adj[2] = x1 * y2 - x2 * y1;
    adj[3] = y2 * w0 - y0 * w2;
    adj[4] = x0 * w2 - x2 * w0;
    adj[5] = x2 * y0 - x0 * y2;
    adj[6] = y0 * w1 - y1 * w0;
    adj[7] = x1 * w0 - x0 * w1;
    adj[8] = x0 * y1 - x1 * y0;
    const double d = x0 * adj[0] + x1 * adj[3] + x2 * adj[6];
    *det = d;
    *area = 0;
    x[0] = x[1] = x[2] = 0;
    y[0] = y[1] = y[2] = 0;
    if (!(finite4(c0) && finite4(c1) && finite4(c2) && FR_ISFINITE(d))) return 0;
    if (d == 0.0 || (d < 0.0 && cull_back)) return 0;
    bool all_in = true;
    for (int p = 0; p < FR_NUM_PLANES; ++p) {
        double q[5];
        clip_plane(p, q);
        const bool in0 = q[0] * x0 + q[1] * y0 + q[2] * z0 + q[3] * w0 + q[4] >= 0.0;
        const bool in1 = q[0] * x1 + q[1] * y1 + q[2] * z1 + q[3] * w1 + q[4] >= 0.0;
        const bool in2 = q[0] * x2 + q[1] * y2 + q[2] * z2 + q[3] * w2 + q[4] >= 0.0;
        if (!(in0 || in1 || in2)) return 0;
        if (!(in0 && in1 && in2)) all_in = false;
    }
    if (!all_in) return 2;
    const double hw = 0.5 * width, hh = 0.5 * height, sub = (double)FR_SUBPIXEL;
    long long X0 = (long long)rint_even((x0 / w0 + 1.0) * hw * sub);
    long long X1 = (long long)rint_even((x1 / w1 + 1.0) * hw * sub);
    long long X2 = (long long)rint_even((x2 / w2 + 1.0) * hw * sub);
    long long Y0 = (long long)rint_even((1.0 - y0 / w0) * hh * sub);
    long long Y1 = (long long)rint_even((1.0 - y1 / w1) * hh * sub);
    long long Y2 = (long long)rint_even((1.0 - y2 / w2) * hh * sub);
    const long long a = (X1 - X0) * (Y2 - Y0) - (Y1 - Y0) * (X2 - X0);
    *area = a;
    if (a < 0) {
        long long t = X1; X1 = X2; X2 = t;
        t = Y1; Y1 = Y2; Y2 = t;
    }
    x[0] = X0; x[1] = X1; x[2] = X2;
    y[0] = Y0; y[1] = Y1; y[2] = Y2;
    return 1;
}

// A triangle clipped by the FR_NUM_PLANES planes has at most 3 + FR_NUM_PLANES vertices
// (each plane adds at most one), so at most FR_MAX_PIECES fan pieces.
#define FR_MAX_POLYGON (3 + FR_NUM_PLANES)
#define FR_MAX_PIECES (FR_MAX_POLYGON - 2)

// Snap clip-space (x, y, w) to fixed-point window coordinates, as classify_triangle does.
__host__ __device__ inline void snap_vertex(const double* v, double hw, double hh,
                                            long long* X, long long* Y) {
    const double sub = (double)FR_SUBPIXEL;
    *X = (long long)rint_even((v[0] / v[3] + 1.0) * hw * sub);
    *Y = (long long)rint_even((1.0 - v[1] / v[3]) * hh * sub);
}

// Sutherland-Hodgman of triangle (c0, c1, c2) against the clip planes, fanned from the
// polygon's first vertex: piece k (k < FR_MAX_PIECES) gets snapped, oriented x[3 k..],
// y[3 k..] and its area before orientation in area[k]; 0 marks no piece (the polygon has
// fewer, or the piece is degenerate after snapping). Same operations in the same order
// as engine/render/triangles.py _clip_polygon and _snap, so the pieces match bit for bit.
__host__ __device__ inline void clip_triangle(const double* c0, const double* c1,
                                              const double* c2, double width, double height,
                                              long long* x, long long* y, long long* area) {
    double poly[2][FR_MAX_POLYGON][4];
    double dist[FR_MAX_POLYGON];
    for (int c = 0; c < 4; ++c) {
        poly[0][0][c] = c0[c];
        poly[0][1][c] = c1[c];
        poly[0][2][c] = c2[c];
    }
    int n = 3, src = 0;
    for (int p = 0; p < FR_NUM_PLANES && n > 0; ++p) {
        double q[5];
        clip_plane(p, q);
        for (int i = 0; i < n; ++i) {
            const double* v = poly[src][i];
            dist[i] = q[0] * v[0] + q[1] * v[1] + q[2] * v[2] + q[3] * v[3] + q[4];
        }
        const int dst = 1 - src;
        int out = 0;
        for (int i = 0; i < n; ++i) {
            const int j = (i + 1) % n;
            const double* v = poly[src][i];
            const double* u = poly[src][j];
            if (dist[i] >= 0.0) {
                for (int c = 0; c < 4; ++c) poly[dst][out][c] = v[c];
                ++out;
            }
            if ((dist[i] >= 0.0) != (dist[j] >= 0.0)) {
                const double t = dist[i] / (dist[i] - dist[j]);
                for (int c = 0; c < 4; ++c) poly[dst][out][c] = v[c] + t * (u[c] - v[c]);
                ++out;
            }
        }
        n = out;
        src = dst;
    }
    const double hw = 0.5 * width, hh = 0.5 * height;
    for (int k = 0; k < FR_MAX_PIECES; ++k) {
        area[k] = 0;
        if (k + 2 >= n) continue;
        long long X[3], Y[3];
        snap_vertex(poly[src][0], hw, hh, &X[0], &Y[0]);
        snap_vertex(poly[src][k + 1], hw, hh, &X[1], &Y[1]);
        snap_vertex(poly[src][k + 2], hw, hh, &X[2], &Y[2]);
        const long long a = (X[1] - X[0]) * (Y[2] - Y[0]) - (Y[1] - Y[0]) * (X[2] - X[0]);
        area[k] = a;
        if (a < 0) {
            long long t = X[1]; X[1] = X[2]; X[2] = t;
            t = Y[1]; Y[1] = Y[2]; Y[2] = t;
        }
        for (int i = 0; i < 3; ++i) {
            x[3 * k + i] = X[i];
            y[3 * k + i] = Y[i];
        }
    }
}

// Top-left rule for the edge with (dx, dy) in y-down fixed point, area > 0: 0 on a top
// (horizontal, dx > 0) or left (dy < 0) edge, else 1 (an edge function must reach it).
__host__ __device__ inline long long edge_bias(long long dx, long long dy) {
    return (dy < 0 || (dy == 0 && dx > 0)) ? 0 : 1;
}

// Window depth of the triangle (adjugate, clip z and w) at the centre of pixel (px, py).
__host__ __device__ inline float pixel_depth(const double* a, const double* z, const double* w,
                                             long long px, long long py, int width, int height) {
    const double xn = (2.0 * (double)px + 1.0) / (double)width - 1.0;
    const double yn = 1.0 - (2.0 * (double)py + 1.0) / (double)height;
    const double h0 = a[0] * xn + a[1] * yn + a[2];
    const double h1 = a[3] * xn + a[4] * yn + a[5];
    const double h2 = a[6] * xn + a[7] * yn + a[8];
    const double zn = (h0 * z[0] + h1 * z[1] + h2 * z[2]) / (h0 * w[0] + h1 * w[1] + h2 * w[2]);
    double d = zn * 0.5 + 0.5;
    d = d < 0.0 ? 0.0 : (d > 1.0 ? 1.0 : d);
    return (float)d;
}

}  // namespace frustum
