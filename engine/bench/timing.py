"""Synchronised timing: every figure waits for the work it times.

GPU launches (CuPy) and GL commands return before the work is done, so a host clock
read right after the call measures only the launch. Every timer here calls ``sync``
(stream synchronise, ``ctx.finish()``) before it reads the clock, both before the
timed call (so earlier queued work is not charged to it) and after it.

The first call is timed on its own and reported as start-up cost (JIT/NVRTC
compilation, cache loads, first-touch allocation); ``warmup`` more calls follow
untimed; then calls are repeated until both ``repeats`` and ``min_time_s`` are
reached, or ``max_time_s`` has passed (after at least ``min_repeats``).

Device time (``measure_device_time``) is measured with CUDA events around the kernels
only: a spin kernel (shaders/timing.cu) first keeps the GPU busy while the host queues
the timed call's launches, so the events bracket device execution, not the host's Python
between launches. The host's own cost per call (launch overhead) is reported separately
by ``unsynchronised_call_s``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass


def no_sync() -> None:
    """Synchronisation for host code: nothing is queued, nothing to wait for."""


def cupy_sync() -> Callable[[], None]:
    """A sync callable that waits for CuPy's current stream."""
    import cupy

    return lambda: cupy.cuda.get_current_stream().synchronize()


def gl_sync(ctx) -> Callable[[], None]:
    """A sync callable that waits until GL has executed every queued command."""
    return ctx.finish


@dataclass(frozen=True)
class Measurement:
    """Seconds per call: median, quartiles and extremes over ``repeats`` timed calls,
    plus the first call (start-up cost), which is not among the samples."""

    median_s: float
    q1_s: float
    q3_s: float
    min_s: float
    max_s: float
    repeats: int
    first_call_s: float

    @classmethod
    def from_samples(cls, samples: list[float], first_call_s: float) -> Measurement:
        if not samples:
            raise ValueError("no timing samples")
        s = sorted(samples)
        if len(s) >= 4:
            q1, _, q3 = statistics.quantiles(s, n=4, method="inclusive")
        else:
            q1, q3 = s[0], s[-1]
        return cls(statistics.median(s), q1, q3, s[0], s[-1], len(s), first_call_s)

    def to_dict(self) -> dict:
        return asdict(self)


def measure(fn: Callable[[], object], *, sync: Callable[[], None] = no_sync, repeats: int = 10,
            min_repeats: int = 3, min_time_s: float = 0.0, max_time_s: float = 2.0,
            warmup: int = 1, clock: Callable[[], float] = time.perf_counter) -> Measurement:
    """Wall time of ``fn()`` per call, synchronised with ``sync`` around every call.

    Args:
        fn: the work; called 1 + warmup + repeats times or more.
        sync: waits for queued device work (``no_sync`` for host code, ``cupy_sync()``,
            ``gl_sync(ctx)``); called before every clock read.
        repeats / min_time_s: keep timing until both are reached...
        max_time_s / min_repeats: ...unless max_time_s has passed and min_repeats are in.
        clock: seconds (injectable for tests).
    """
    sync()
    t0 = clock()
    fn()
    sync()
    first = clock() - t0
    for _ in range(warmup):
        fn()
    samples: list[float] = []
    spent = 0.0
    while True:
        sync()
        t0 = clock()
        fn()
        sync()
        dt = clock() - t0
        samples.append(dt)
        spent += dt
        enough = len(samples) >= repeats and spent >= min_time_s
        out_of_time = spent >= max_time_s and len(samples) >= min_repeats
        if enough or out_of_time:
            return Measurement.from_samples(samples, first)


def measure_cuda_events(fn: Callable[[], object], *, repeats: int = 10, warmup: int = 1,
                        event_factory=None, elapsed_ms=None) -> Measurement:
    """Device time of ``fn()`` from CUDA events recorded on the current stream around it.

    The end event is synchronised before the elapsed time is read. ``first_call_s`` is
    the device time of the first call. ``event_factory``/``elapsed_ms`` default to
    ``cupy.cuda.Event``/``cupy.cuda.get_elapsed_time`` (injectable for tests).
    """
    if event_factory is None or elapsed_ms is None:
        import cupy

        event_factory = event_factory or cupy.cuda.Event
        elapsed_ms = elapsed_ms or cupy.cuda.get_elapsed_time

    def once() -> float:
        start, end = event_factory(), event_factory()
        start.record()
        fn()
        end.record()
        end.synchronize()
        return elapsed_ms(start, end) / 1e3

    first = once()
    for _ in range(warmup):
        once()
    return Measurement.from_samples([once() for _ in range(repeats)], first)


def spin_kernel():
    """``spin(nanoseconds)``: launches shaders/timing.cu's ``spin_wait`` (one thread)
    on CuPy's current stream. Needs a CUDA device."""
    from ..render.backends.cupy_backend import spin_kernel as make

    return make()


@dataclass(frozen=True)
class DeviceTime:
    """Device execution time per call and how it was measured.

    ``method``: "events after a spin kernel" (device execution only) or, when the call
    itself waits for the device (a blocking copy), "events around the call (it
    synchronises: host time included)".
    """

    measurement: Measurement
    method: str
    spin_ns: int


def measure_device_time(fn: Callable[[], object], *, repeats: int = 10, warmup: int = 1,
                        spin=None, event_factory=None, elapsed_ms=None,
                        clock: Callable[[], float] = time.perf_counter,
                        spin_ns: int = 200_000, max_spin_ns: int = 50_000_000) -> DeviceTime:
    """Device time of the GPU work ``fn()`` queues, from CUDA events around its kernels.

    Each sample: ``spin(ns)`` occupies the GPU; the start event, ``fn()`` and the end
    event are queued behind it while it spins; the end event is synchronised and the
    elapsed time read. If queuing ``fn()`` took the host longer than the spin lasted,
    the GPU may have idled between launches: the spin doubles and the sample is taken
    again. A call that blocks on the device (it never returns before the spin ends)
    cannot be timed this way and falls back to events around the call, said in
    ``method``.

    ``spin``, ``event_factory``, ``elapsed_ms`` default to the CUDA implementations
    (``spin_kernel()``, ``cupy.cuda.Event``, ``cupy.cuda.get_elapsed_time``); tests
    inject stand-ins. ``clock`` reads host seconds.
    """
    if event_factory is None or elapsed_ms is None:
        import cupy

        event_factory = event_factory or cupy.cuda.Event
        elapsed_ms = elapsed_ms or cupy.cuda.get_elapsed_time
    if spin is None:
        spin = spin_kernel()
    state = {"ns": int(spin_ns), "blocking": False}

    def once() -> float:
        while True:
            start, end = event_factory(), event_factory()
            if not state["blocking"]:
                spin(state["ns"])
            start.record()
            t0 = clock()
            fn()
            queued_ns = (clock() - t0) * 1e9
            end.record()
            end.synchronize()
            if state["blocking"] or queued_ns < 0.5 * state["ns"]:
                return elapsed_ms(start, end) / 1e3
            if state["ns"] * 2 > max_spin_ns:
                state["blocking"] = True  # fn waits for the device: spinning cannot help
                continue
            state["ns"] *= 2

    first = once()
    for _ in range(warmup):
        once()
    m = Measurement.from_samples([once() for _ in range(repeats)], first)
    method = ("events around the call (it synchronises: host time included)"
              if state["blocking"] else "events after a spin kernel (device execution only)")
    return DeviceTime(m, method, state["ns"])


def measure_gl_query(ctx, fn: Callable[[], object], *, repeats: int = 10,
                     warmup: int = 1) -> Measurement:
    """GL time of ``fn()`` from a ``ctx.query(time=True)`` (GL_TIME_ELAPSED) around it.

    ``ctx.finish()`` is called before the query result is read, so the figure covers
    the completed work; ``elapsed`` is in nanoseconds.
    """
    def once() -> float:
        query = ctx.query(time=True)
        with query:
            fn()
        ctx.finish()
        return query.elapsed / 1e9

    first = once()
    for _ in range(warmup):
        once()
    return Measurement.from_samples([once() for _ in range(repeats)], first)


def unsynchronised_call_s(fn: Callable[[], object], sync: Callable[[], None], repeats: int = 5,
                          clock: Callable[[], float] = time.perf_counter) -> float:
    """Median host time of ``fn()`` read WITHOUT waiting for the device: the figure a
    naive timer reports. Only for the sync demo; the queue is drained between calls
    (outside the clock) so calls do not pile up."""
    samples = []
    for _ in range(repeats):
        sync()
        t0 = clock()
        fn()
        samples.append(clock() - t0)
        sync()
    return statistics.median(samples)
