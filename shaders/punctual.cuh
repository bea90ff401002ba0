// A point light's direction and arriving radiance at a surface point (engine/render/
// shading.py point_light_arrays, the same formulas as numba_shading.py _point): the
// inverse square law, times KHR_lights_punctual's spot cone t^2 (t = clamp((cos a -
// cos outer) / (cos inner - cos outer), 0, 1)) and its range window
// clamp(1 - (d / range)^4, 0, 1) (engine/render/pbr.py range_window) when the frame has
// spots or ranged lights.
#pragma once
#include "common.cuh"

namespace frustum {

// The point lights of a frame: positions and radiances (n, 3); cones (n, 5) of axis,
// cos outer, 1 / (cos inner - cos outer) (cos outer -2 for no cone); ranges (n,), 0 for
// none; windowed 0 when no light has a cone or range (then neither is read).
struct PointLights {
    const double* pos;
    const double* e;
    const double* cone;
    const double* range;
    int windowed;
    int n;
};

// Unit direction l from batch-frame point w to light q and the radiance e arriving.
__host__ __device__ inline void point_light(const PointLights& P, int q, const double w[3],
                                            double l[3], double e[3]) {
    for (int r = 0; r < 3; ++r) l[r] = P.pos[3 * q + r] - w[r];
    double r2 = l[0] * l[0] + l[1] * l[1] + l[2] * l[2];
    r2 = r2 > 1e-30 ? r2 : 1e-30;
    const double ll = sqrt(r2);
    for (int r = 0; r < 3; ++r) l[r] /= ll;
    double k = 1.0 / r2;
    if (P.windowed) {
        const double* c = P.cone + 5 * q;
        const double cos_a = -(l[0] * c[0] + l[1] * c[1] + l[2] * c[2]);
        double s = (cos_a - c[3]) * c[4];
        s = s < 0.0 ? 0.0 : (s > 1.0 ? 1.0 : s);
        k *= s * s;
        const double range = P.range[q];
        if (range > 0.0) {
            const double q4 = r2 * r2 / (range * range * range * range);
            const double win = 1.0 - q4;
            k *= win < 0.0 ? 0.0 : (win > 1.0 ? 1.0 : win);
        }
    }
    for (int r = 0; r < 3; ++r) e[r] = P.e[3 * q + r] * k;
}

}  // namespace frustum
