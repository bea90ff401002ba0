// Benchmark helper, not part of a frame: keeps the GPU busy for a given time so the host
// can queue the timed work behind it. CUDA events recorded after this kernel and after
// the timed work then measure device execution only, not the host's Python between
// launches (engine/bench/timing.py, measure_device_time).
extern "C" __global__ void spin_wait(unsigned long long nanoseconds)
{
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < nanoseconds);
}
