"""Projection backends and their selection.

``get_projector(name)`` with name ``"auto"`` (default, or ``ENGINE_BACKEND``), ``"cupy"``,
``"numba"`` or ``"numpy"``. Auto picks CuPy when a device is available and the kernel
compiles, else the Numba CPU accelerator when installed, else NumPy. Asking for a
backend that cannot run raises engine.errors.BackendUnavailable (a RuntimeError) naming
why.
"""

from __future__ import annotations

import logging
import os

from ...errors import BackendUnavailable
from .base import Projection
from .numpy_backend import NumpyProjector

__all__ = ["BACKENDS", "Projection", "get_projector"]

BACKENDS = ("auto", "cupy", "numba", "numpy")
log = logging.getLogger("engine")


def _make(name: str):
    if name == "numpy":
        return NumpyProjector()
    if name == "numba":
        from .numba_backend import NumbaProjector

        return NumbaProjector()
    if name == "cupy":
        from .cupy_backend import CupyProjector

        return CupyProjector()
    raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")


def get_projector(name: str | None = None):
    """A projector instance for ``name`` (or ``$ENGINE_BACKEND``, or auto)."""
    env = os.environ.get("ENGINE_BACKEND")
    source = "" if name or not env else " (from the ENGINE_BACKEND environment variable)"
    name = (name or env or "auto").strip().lower()
    if name != "auto":
        try:
            return _make(name)
        except ValueError as exc:
            raise ValueError(f"{exc}{source}") from None
    for candidate in ("cupy", "numba"):
        try:
            return _make(candidate)
        except (BackendUnavailable, ImportError) as exc:
            log.debug("backend %s unavailable: %s", candidate, exc)
    return NumpyProjector()
