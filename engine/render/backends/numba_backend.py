"""CPU projector JIT-compiled by Numba: fused, vectorised, multi-threaded passes.

The default CPU backend (Numba is a dependency of frustum; the NumPy backend stays as
the reference and the fallback where Numba cannot be imported): the NumPy backend makes several
passes over (N, 4) temporaries, while this kernel reads 12 bytes and writes 13 bytes per
vertex once, which is what the memory-bound transform needs. The arithmetic is the same
float32 sequence as ``shaders/transform.cuh``.

Why it is shaped this way (measured with ``benchmarks/transform.py``):

- Vertices of one object are contiguous in a batch, so the kernel walks the batch's
  object runs and keeps each run's model matrix in registers; a per-vertex matrix
  lookup keeps LLVM from vectorising the loop.
- The main loop has no branches or conditional expressions (Numba lowers ``a if c else
  b`` to branches, which also stop vectorisation): it writes the raw projection and the
  visibility flag, and a second, cheap pass over the same block (still in cache) resets
  the outputs of culled vertices to screen (0, 0), depth 1.
- ``error_model="numpy"`` drops the Python zero-division check (a branch per division);
  w = 0 gives inf/NaN in the raw pass, which the reset pass overwrites.
- Threads are used where they were measured to pay off (``engine.render.backends.
  threads``): below ``parallel_from()`` vertices the serial kernel runs. On a machine
  whose cores are busy with other processes, waking the thread pool waits for a
  scheduler time slice (measured on a shared 2-core machine at 10^6 vertices: one thread
  2.7-3.5 ms; two threads 1.6 ms idle, 6-16 ms loaded), so the threshold is measured
  once per machine and thread count and cached; ``FRUSTUM_THREADS`` / ``set_threads``
  choose the thread count, ``FRUSTUM_PARALLEL_FROM`` the threshold. An earlier
  load-average switch was removed: the caller's own process raised the load it read, so
  timings flipped between the kernels.
"""

from __future__ import annotations

import numpy as np

from ...errors import BackendUnavailable
from .base import OutputBuffers, Projection, check_viewport, prepare_inputs
from .threads import call_twin


def numba_available() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def use_threads(n: int | None = None) -> bool:
    """True when the projection of ``n`` vertices should run on Numba's threads: more
    than one thread, and n at least the measured ``threads.parallel_from()`` (and more
    than two chunks). Without ``n``: whether there is more than one thread."""
    from . import threads
    from .numba_kernels import CHUNK

    if threads.thread_count() <= 1:
        return False
    return n is None or (n > 2 * CHUNK and n >= threads.parallel_from())


class NumbaProjector:
    """Fused CPU projector (Numba). See ``engine.render.backends.base`` for the contract.

    The first call in a process compiles the kernels (or loads them from Numba's cache).
    Raises engine.errors.BackendUnavailable when Numba is not installed.
    """

    name = "numba"
    xp = np

    def __init__(self):
        if not numba_available():
            raise BackendUnavailable("the numba backend needs Numba, a dependency of frustum: "
                                     "pip install numba")
        from . import numba_kernels, threads

        threads.apply_environment()
        self._k = numba_kernels
        self._out = OutputBuffers(np)

    def project(self, positions, object_id, model, view_proj, viewport, runs=None) -> Projection:
        """Project N vertices; returns views of reused buffers (overwritten next call).

        ``runs`` is an optional (R, 3) array of (start, stop, k) contiguous object runs
        (the batch knows them); without it they are found from ``object_id``.
        Vertices whose object_id is >= K are not visible (as on the GPU).
        Raises ValueError for runs that do not tile the vertices in order.
        """
        pos, oid, mdl, vp = prepare_inputs(np, positions, object_id, model, view_proj)
        vw, vh = check_viewport(viewport)
        n = pos.shape[0]
        out = self._out.get(n)
        if n == 0:
            return out
        k = self._k
        runs = k.find_runs(oid) if runs is None else np.ascontiguousarray(runs, dtype=np.int64)
        if runs.ndim != 2 or runs.shape[1] != 3:
            raise ValueError(f"runs must have shape (R, 3), got {runs.shape}")
        status = call_twin(k.project_parallel, k.project_serial, use_threads(n),
                           pos.reshape(-1), runs, mdl, vp, np.float32(vw), np.float32(vh),
                           out.screen_xy.reshape(-1), out.depth, out.visible.view(np.uint8))
        if status:
            raise ValueError(f"runs must be (R, 3) rows (start, stop, k) tiling the {n} "
                             f"vertices in order, got shape {runs.shape}")
        return out
