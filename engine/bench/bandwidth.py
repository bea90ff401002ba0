"""Copy bandwidth measured in the same run as the projection figures.

The projection is memory-bound (it reads ~12-16 B and writes ~13-16 B per vertex), so
its ceiling is (copy bandwidth) / (bytes per vertex). A copy of ``nbytes`` reads and
writes ``nbytes`` each, so the bandwidth is ``2 * nbytes / time`` (read + write bytes).
"""

from __future__ import annotations

from .timing import cupy_sync, measure, measure_cuda_events


def host_copy_bandwidth(nbytes: int = 256 << 20, max_time_s: float = 1.0) -> dict:
    """Host memcpy (``np.copyto`` of ``nbytes`` uint8): read+write bytes per second.

    Use a buffer well above the last-level cache (the default 256 MiB) so the figure is
    DRAM bandwidth. Returns {"bytes_per_s", "nbytes", "timing"}.
    """
    import numpy as np

    src = np.ones(nbytes, np.uint8)
    dst = np.zeros_like(src)
    m = measure(lambda: np.copyto(dst, src), repeats=7, min_repeats=3, max_time_s=max_time_s)
    return {"bytes_per_s": 2 * nbytes / m.median_s, "nbytes": nbytes, "timing": m.to_dict()}


def device_copy_bandwidth(nbytes: int = 2 << 30) -> dict:
    """Device-to-device copy (``cupy.copyto``) timed with CUDA events: read+write bytes
    per second. Needs a CUDA device."""
    import cupy

    src = cupy.ones(nbytes, cupy.uint8)
    dst = cupy.zeros_like(src)
    cupy_sync()()
    m = measure_cuda_events(lambda: cupy.copyto(dst, src), repeats=10)
    return {"bytes_per_s": 2 * nbytes / m.median_s, "nbytes": nbytes, "timing": m.to_dict()}
