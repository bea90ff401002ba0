"""Threads of the Numba CPU kernels: how many, and from which size the projection uses
them, measured on this machine rather than guessed.

Why measured: waking Numba's thread pool costs a scheduler time slice. On an idle
machine two threads halve a large projection; on a busy shared one the parallel kernel
waits for a free core (measured on a shared 2-core machine: 10^4 vertices 0.03 ms on
one thread, 7.5 ms on two; 10^6 vertices 2.7 ms on one, 6.1 ms on two), so a fixed
threshold is wrong somewhere. The projection therefore runs on one thread below
``parallel_from()`` vertices: the smallest measured size from which the parallel kernel
was faster at that and every larger measured size (``2 * max(SIZES)``, i.e. never, when
it never wins). The measurement (median of a few runs of both kernels at each of
``SIZES``, about half a second) happens once per machine and thread count and is cached
in ``$FRUSTUM_CACHE_DIR`` (see ``engine.render.backends.crossover``) as
``numba-threads.json``.

The stages of a surface frame (vertex stage, triangle setup, raster, resolve) choose
their thread count frame by frame instead (``StageThreads``): each stage runs on every
thread or on one, whichever has lately cost less time per unit of its work (vertices,
triangles, pieces, pixels) in this process, trying the other choice now and then (after
8 calls, then 16, ... up to 64 while it keeps losing). A competing process makes the
parallel choice wait for a core; the stage then moves to one thread within a few frames,
and back when the machine is free again (measured with benchmarks/frame_costs.py
``busy``).

Configuration:
    FRUSTUM_THREADS=N          threads for every Numba kernel (projection, rasterizers,
                               shading); ``set_threads(N)`` does the same at run time.
                               At most Numba's pool size (``NUMBA_NUM_THREADS``, the
                               core count by default). The stages choose between 1 and N.
    FRUSTUM_PARALLEL_FROM=N    the projection's threshold in vertices, not measured
                               (0: always parallel when there are threads).
"""

from __future__ import annotations

import logging
import os
import platform
import statistics
import time

import numpy as np

from .crossover import cache_path, cached_measurement

__all__ = ["SIZES", "StageThreads", "call_twin", "measure_parallel_from", "parallel_from",
           "set_threads", "thread_count"]

SIZES = (3 * 10**4, 10**5, 3 * 10**5, 10**6, 3 * 10**6)
CACHE_NAME = "numba-threads.json"
log = logging.getLogger("engine")
_memo: dict[str, int] = {}
_env_applied = [False]


def _numba():
    import numba

    return numba


def set_threads(n: int) -> int:
    """Run every Numba kernel on ``n`` threads (1 = no thread pool). Returns n.

    Raises ValueError for n outside 1..NUMBA_NUM_THREADS (Numba's pool size, fixed
    when the process starts: the core count unless the variable is set)."""
    numba = _numba()
    most = int(numba.config.NUMBA_NUM_THREADS)
    try:
        n = int(n)
    except (TypeError, ValueError):
        raise ValueError(f"threads must be a whole number, got {n!r}") from None
    if not 1 <= n <= most:
        raise ValueError(f"threads must be between 1 and {most} (NUMBA_NUM_THREADS), got {n}")
    numba.set_num_threads(n)
    return n


def thread_count() -> int:
    """Threads the Numba kernels run on now (``FRUSTUM_THREADS`` applied first)."""
    apply_environment()
    return int(_numba().get_num_threads())


def apply_environment():
    """Apply ``FRUSTUM_THREADS`` once per process. Raises ValueError for a bad value."""
    if _env_applied[0]:
        return
    _env_applied[0] = True
    env = os.environ.get("FRUSTUM_THREADS")
    if env:
        try:
            set_threads(env)
        except ValueError as exc:
            raise ValueError(f"FRUSTUM_THREADS: {exc}") from None


def _key(threads: int) -> str:
    numba = _numba()
    return (f"{platform.processor() or platform.machine()}|{os.cpu_count()} cpus|"
            f"{threads} threads|numba {numba.__version__}")


def _kernel_seconds(parallel: bool, n: int, repeats: int = 7) -> float:
    """Median seconds of one projection of n vertices (one object) by one kernel."""
    from . import numba_kernels as k
    from .base import OutputBuffers

    rng = np.random.default_rng(0)
    pos = rng.uniform(-1, 1, (n, 3)).astype(np.float32).reshape(-1)
    runs = np.array([[0, n, 0]], np.int64)
    model = np.eye(4, dtype=np.float32)[None].copy()
    model[0, 2, 3] = -3.0
    vp = np.eye(4, dtype=np.float32)
    vp[3, 2], vp[2, 3] = -1.0, -0.2
    out = OutputBuffers(np).get(n)
    kernel = k.project_parallel if parallel else k.project_serial
    args = (pos, runs, model, vp, np.float32(640), np.float32(480),
            out.screen_xy.reshape(-1), out.depth, out.visible.view(np.uint8))
    kernel(*args)  # compile or load from the cache, warm the buffers
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        kernel(*args)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def measure_parallel_from(sizes=SIZES, seconds=_kernel_seconds) -> tuple[int, dict]:
    """(threshold in vertices, {"serial": {n: s}, "parallel": {n: s}}) measured now.
    ``seconds(parallel, n)`` is injectable for tests."""
    times = {"serial": {}, "parallel": {}}
    for n in sorted(int(s) for s in sizes):
        times["serial"][n] = seconds(False, n)
        times["parallel"][n] = seconds(True, n)
    threshold = 2 * max(int(s) for s in sizes)
    for n in sorted(times["serial"])[::-1]:
        if times["parallel"][n] >= times["serial"][n]:
            break
        threshold = n
    return threshold, times


def parallel_from(measure=measure_parallel_from) -> int:
    """Vertices from which the Numba projection runs on all threads (see the module
    docstring): ``FRUSTUM_PARALLEL_FROM``, else the cached measurement for this machine
    and thread count, else measured now (and cached; an unwritable cache is logged).
    With one thread there is nothing to measure: never. Raises ValueError for a bad
    ``FRUSTUM_PARALLEL_FROM``."""
    threads = thread_count()
    if threads <= 1 and not os.environ.get("FRUSTUM_PARALLEL_FROM"):
        return 1 << 62
    return cached_measurement("FRUSTUM_PARALLEL_FROM", cache_path().with_name(CACHE_NAME),
                              lambda: _key(threads), "parallel_from", measure, _memo,
                              f"where {threads} Numba threads pay off")


def call_twin(parallel_kernel, serial_kernel, parallel: bool, *args):
    """Call the parallel or the serial Numba twin of a kernel on ``args``; the first time,
    the other twin is loaded too for the same argument types (from the disk cache, or
    compiled). A stage whose thread count StageThreads (or the projection's threshold)
    later flips would otherwise load its other twin inside that frame: a one-off hitch
    (about 20 ms from the cache, seconds when it compiles), counted in the trial that
    decides between the two, and 140 KB allocated inside a points frame that otherwise
    allocates nothing (tests/render/test_frame_allocations.py)."""
    kernel, other = ((parallel_kernel, serial_kernel) if parallel
                     else (serial_kernel, parallel_kernel))
    if not other.overloads:
        other.compile(tuple(_numba().typeof(a) for a in args))
    return kernel(*args)


class StageThreads:
    """Per stage, one thread or all of them, chosen from the time per unit of work
    measured in this process (see the module docstring).

    Args:
        clock: seconds (injectable for tests; ``time.perf_counter``).
        threads: () -> the thread count to choose from (``thread_count``).
        set_count: n -> None, run Numba kernels on n threads (``numba.set_num_threads``).

    The current choice's cost per unit is an exponential average (weight ``ALPHA`` for
    the newest call); the other choice is tried when the current one has run
    ``interval`` calls (8 at first, doubled up to ``MAX_INTERVAL`` each time the trial
    loses, back to 8 when it wins by ``MARGIN``), its one fresh sample standing for it,
    and at once when the current choice's average has grown above that sample (the
    machine got busy or free).
    """

    ALPHA = 0.3
    FIRST_INTERVAL = 8
    MAX_INTERVAL = 64
    MARGIN = 0.9  # switch when the other choice costs < 90% of the current one

    def __init__(self, clock=time.perf_counter, threads=None, set_count=None):
        self._clock = clock
        self._threads = threads or thread_count
        self._set = set_count or (lambda n: _numba().set_num_threads(n))
        self._state: dict[str, dict] = {}

    def choice(self, stage: str) -> int | None:
        """The thread count the stage uses now (None before its first call)."""
        st = self._state.get(stage)
        return None if st is None else st["current"]

    def run(self, stage: str, work: int, fn, *args, **kwargs):
        """Call ``fn(*args, **kwargs)`` on the thread count chosen for ``stage`` with
        ``work`` units (> 0) to do; returns its result. The previous count is restored."""
        most = self._threads()
        if most <= 1 or work <= 0:
            return fn(*args, **kwargs)
        st = self._state.get(stage)
        if st is None:  # the first call compiles or loads kernels: not measured
            self._state[stage] = {"cost": {}, "current": most, "calls": 0,
                                  "interval": self.FIRST_INTERVAL}
            return fn(*args, **kwargs)
        cost = st["cost"]
        if st["current"] not in (1, most):  # the pool size changed (set_threads)
            st["current"] = most
            cost.pop(most, None)
        other = 1 if st["current"] != 1 else most
        if 1 not in cost and most in cost:
            n = 1  # measure both choices first
        elif st["calls"] >= st["interval"] or cost.get(st["current"], 0.0) > cost.get(other, np.inf):
            n = other  # its turn, or the current choice now costs more than it did
        else:
            n = st["current"]
        before = _numba().get_num_threads()
        self._set(n)
        try:
            t0 = self._clock()
            out = fn(*args, **kwargs)
            per_unit = (self._clock() - t0) / work
        finally:
            self._set(before)
        old = cost.get(n)
        if n == st["current"]:
            cost[n] = per_unit if old is None else old + self.ALPHA * (per_unit - old)
            st["calls"] += 1
        else:  # a trial: its fresh sample replaces what was measured calls ago
            cost[n] = per_unit
            now = cost.get(st["current"])
            if now is None or cost[n] < self.MARGIN * now:
                st["current"], st["interval"] = n, self.FIRST_INTERVAL
            else:
                st["interval"] = min(2 * st["interval"], self.MAX_INTERVAL)
            st["calls"] = 0
        return out
