// A small CUDA emulation for the host compiler, so the engine's exact .cu kernels run on
// the CPU in tests: __global__ functions become host functions, threadIdx / blockIdx /
// blockDim / gridDim are thread-local variables set by fr_launch, which runs every thread
// of every block (blocks spread over a few std::threads, so the atomics really race), and
// atomicMin is a compare-and-swap loop on std::atomic_ref. The kernels use grid-stride
// loops and no shared memory, so __syncthreads is not needed and not provided: a kernel
// that starts using it fails to compile here instead of running wrongly.
#pragma once
#include <atomic>
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

struct fr_dim3 {
    unsigned int x = 1, y = 1, z = 1;
};

inline thread_local fr_dim3 threadIdx, blockIdx, blockDim, gridDim;

#define __global__

inline unsigned long long atomicMin(unsigned long long* address, unsigned long long value) {
    std::atomic_ref<unsigned long long> a(*address);
    unsigned long long old = a.load();
    while (value < old && !a.compare_exchange_weak(old, value)) {
    }
    return old;
}

inline unsigned int atomicAdd(unsigned int* address, unsigned int value) {
    return std::atomic_ref<unsigned int>(*address).fetch_add(value);
}

// Run kernel() as a 1-D grid of `grid` blocks of `block` threads on `workers` host threads.
template <class Kernel>
void fr_launch(unsigned int grid, unsigned int block, unsigned int workers, Kernel kernel) {
    std::vector<std::thread> pool;
    for (unsigned int w = 0; w < workers; ++w) {
        pool.emplace_back([=] {
            gridDim.x = grid;
            blockDim.x = block;
            for (unsigned int b = w; b < grid; b += workers) {
                blockIdx.x = b;
                for (unsigned int t = 0; t < block; ++t) {
                    threadIdx.x = t;
                    kernel();
                }
            }
        });
    }
    for (auto& th : pool) th.join();
}
