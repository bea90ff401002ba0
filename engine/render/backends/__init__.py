"""Backends and their selection.

A backend implements every stage of a frame (engine.render.backends.stages: the vertex
stage, rasterize, resolve, read): ``software.NumpyBackend`` (the reference),
``software.NumbaBackend`` (the CPU fast path), ``cuda_backend.CudaBackend`` (the GPU).
``get_backend(name)`` makes one, ``get_projector(name)`` just its projector (the vertex
projection alone, for benchmarks and tools).

``name`` is ``"auto"`` (default, or ``ENGINE_BACKEND``), ``"cupy"``, ``"numba"`` or
``"numpy"``. Auto picks CuPy when a device is available and the kernel
compiles, else Numba (a dependency: normally always there), else NumPy, logging one line
on the ``engine`` logger when it has to fall back to NumPy. Given the scene's
``vertex_count``, auto picks Numba instead of CuPy for scenes below this machine's
measured crossover (``engine.render.backends.crossover``: measured once, cached), where
the GPU's fixed per-frame host cost outweighs its speed. Asking for a backend that
cannot run raises engine.errors.BackendUnavailable (a RuntimeError) naming why.
"""

from __future__ import annotations

import logging
import os

from ...errors import BackendUnavailable
from .base import Projection
from .software import NumpyBackend
from .stages import Backend

__all__ = ["BACKENDS", "Backend", "Projection", "get_backend", "get_projector"]

BACKENDS = ("auto", "cupy", "numba", "numpy")
log = logging.getLogger("engine")


def _make(name: str) -> Backend:
    if name == "numpy":
        return NumpyBackend()
    if name not in ("numba", "cupy"):
        raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
    try:
        if name == "numba":
            from .software import NumbaBackend

            return NumbaBackend()
        from .cuda_backend import CudaBackend

        return CudaBackend()
    except ImportError as exc:  # a package missing or broken below the backend module
        raise BackendUnavailable(f"cannot use the {name} backend: {exc}") from None


def get_projector(name: str | None = None, vertex_count: int | None = None):
    """The projector of ``get_backend(name, vertex_count)``: ``project(positions,
    object_id, model, view_proj, viewport)`` (the contract of engine.render.backends.base)."""
    return get_backend(name, vertex_count).projector


def get_backend(name: str | None = None, vertex_count: int | None = None) -> Backend:
    """A backend instance for ``name`` (or ``$ENGINE_BACKEND``, or auto); one per Renderer
    (it keeps that renderer's buffers).

    ``vertex_count``: the scene's size, used only by auto to choose between Numba and
    CuPy at the measured crossover (None: CuPy whenever it works).
    """
    env = os.environ.get("ENGINE_BACKEND")
    source = "" if name or not env else " (from the ENGINE_BACKEND environment variable)"
    name = (name or env or "auto").strip().lower()
    if name != "auto":
        try:
            return _make(name)
        except ValueError as exc:
            raise ValueError(f"{exc}{source}") from None
    why = {}
    for candidate in ("cupy", "numba"):
        try:
            backend = _make(candidate)
        except (BackendUnavailable, ImportError) as exc:
            log.debug("backend %s unavailable: %s", candidate, exc)
            why[candidate] = exc
            continue
        if candidate == "cupy" and vertex_count is not None:
            small = _below_crossover(vertex_count)
            if small is not None:
                return small
        return backend
    if not _fallback_logged:
        _fallback_logged.append(True)
        log.info("backend auto: using the NumPy reference backend (slower): %s",
                 why.get("numba", "Numba is unavailable"))
    return NumpyBackend()


_fallback_logged: list = []


def _below_crossover(vertex_count: int):
    """A Numba backend when ``vertex_count`` is below the measured crossover, else None."""
    from .numba_backend import numba_available
    from .software import NumbaBackend

    if not numba_available():
        return None
    from .crossover import crossover

    try:
        limit = crossover()
    except Exception as exc:  # noqa: BLE001 - a failed measurement must not stop rendering
        log.info("backend crossover unavailable (%s); using cupy", exc)
        return None
    if vertex_count < limit:
        log.debug("auto: %d vertices < crossover %d: numba", vertex_count, limit)
        return NumbaBackend()
    return None
