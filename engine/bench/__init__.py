"""Benchmarks of the projection paths people try, measured side by side (``frustum bench``).

Modules::

    timing     synchronised timers: host clock after a device/GL sync, CUDA events,
               GL time queries; warm-up excluded, first call reported separately
    bandwidth  copy bandwidth measured in the same run (host memcpy, device copy)
    paths      the workloads: naive NumPy, Numba, NumPy-on-CuPy, torch, engine
               backends, GLSL transform feedback, end to end, many objects
    report     results JSON, Markdown tables, target checks, the CPU/GPU crossover
    runner     runs everything for a list of sizes and writes the files

Benchmarks print and save figures; they are never timed tests.
"""

from .report import render_markdown
from .runner import run_benchmarks, run_sync_demo
from .timing import Measurement, measure, measure_cuda_events, measure_gl_query

__all__ = [
    "Measurement",
    "measure",
    "measure_cuda_events",
    "measure_gl_query",
    "render_markdown",
    "run_benchmarks",
    "run_sync_demo",
]
