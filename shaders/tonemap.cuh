// Exposure and tone mapping of a linear colour before the sRGB encode (engine/render/
// tonemap.py apply_tone_map, the same formulas as numba_shading.py _display): tone 0
// none (the encode clamps), 1 Khronos PBR Neutral (Khronos 3D Commerce working group,
// "Khronos PBR Neutral Tone Mapper", 2024).
#pragma once
#include "common.cuh"

#define FR_TONE_START (0.8 - 0.04)  // tonemap.py _START
#define FR_TONE_DESATURATION 0.15   // tonemap.py _DESATURATION

namespace frustum {

__host__ __device__ inline void display(double c[3], double exposure, int tone) {
    for (int r = 0; r < 3; ++r) c[r] *= exposure;
    if (tone == 0) return;
    for (int r = 0; r < 3; ++r) c[r] = c[r] > 0.0 ? c[r] : 0.0;
    double x = c[0] < c[1] ? c[0] : c[1];
    x = x < c[2] ? x : c[2];
    const double off = x < 0.08 ? x - 6.25 * x * x : 0.04;
    for (int r = 0; r < 3; ++r) c[r] -= off;
    double peak = c[0] > c[1] ? c[0] : c[1];
    peak = peak > c[2] ? peak : c[2];
    if (peak < FR_TONE_START) return;
    const double d = 1.0 - FR_TONE_START;
    const double new_peak = 1.0 - d * d / (peak + d - FR_TONE_START);
    const double k = new_peak / peak;
    const double g = 1.0 - 1.0 / (FR_TONE_DESATURATION * (peak - new_peak) + 1.0);
    for (int r = 0; r < 3; ++r) c[r] = c[r] * k * (1.0 - g) + new_peak * g;
}

}  // namespace frustum
