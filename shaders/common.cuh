// Shared definitions for the engine's CUDA sources and their host-side tests.
// Outside nvcc/NVRTC the CUDA qualifiers are defined away, so the same headers compile
// with the host C++ compiler and are compared against the NumPy backend in tests.
#pragma once

#ifndef __CUDACC__
#include <cmath>
#include <cstdint>
#define __host__
#define __device__
#define FR_ISFINITE(v) std::isfinite(v)
#else
#define FR_ISFINITE(v) isfinite(v)
#endif
