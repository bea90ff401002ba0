// The engine's CUDA kernels, compiled unchanged by the host compiler against cuda_emu.h
// and launched like cuLaunchKernel: by name, with an array of pointers to the argument
// values. Python calls fr_launch_kernel through ctypes (tests/cuda_emulation.py).
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#include "cuda_emu.h"

#include "../../shaders/raster.cu"
#include "../../shaders/resolve.cu"
#include "../../shaders/surface_vertices.cu"
#include "../../shaders/transform.cu"
#include "../../shaders/triangles.cu"

template <class... A, std::size_t... I>
static void call(void (*k)(A...), void** params, std::index_sequence<I...>) {
    k(*static_cast<std::remove_cv_t<std::remove_reference_t<A>>*>(params[I])...);
}

template <class... A>
static int launch(void (*k)(A...), unsigned grid, unsigned block, unsigned workers,
                  void** params, int count) {
    if (count != (int)sizeof...(A)) return -(int)sizeof...(A) - 1;  // wrong argument count
    fr_launch(grid, block, workers, [=] { call(k, params, std::index_sequence_for<A...>{}); });
    return 0;
}

// 0 on success, -1 for an unknown kernel, -(arity + 1) for a wrong argument count.
extern "C" int fr_launch_kernel(const char* name, unsigned grid, unsigned block,
                                unsigned workers, void** params, int count) {
#define FR_KERNEL(k) \
    if (std::strcmp(name, #k) == 0) return launch(k, grid, block, workers, params, count);
    FR_KERNEL(project_points)
    FR_KERNEL(clear_keys)
    FR_KERNEL(splat_points)
    FR_KERNEL(splat_sprites)
    FR_KERNEL(resolve_keys)
    FR_KERNEL(surface_vertices)
    FR_KERNEL(classify_triangles)
    FR_KERNEL(clip_triangles)
    FR_KERNEL(raster_triangles)
    FR_KERNEL(raster_masked_triangles)
    FR_KERNEL(raster_layer_triangles)
    FR_KERNEL(resolve_surfaces)
#undef FR_KERNEL
    return -1;
}
