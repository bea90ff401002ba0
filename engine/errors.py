"""Errors the engine reports to users (the CLI prints them as one line, exit status 2)."""

import math


class EngineError(Exception):
    """A user-facing problem with an input (file, argument, path); the message names it."""


class BackendUnavailable(EngineError, RuntimeError):
    """A projection backend that was asked for cannot run here; the message says why
    (no CuPy, no CUDA driver or device, no NVRTC, no Numba)."""


class LoadError(EngineError):
    """A 3D file could not be loaded; the message names the file and what is wrong."""


class OutputError(EngineError):
    """An output file or folder cannot be written (a missing or read-only folder, a file
    where a folder should be, an encoder that failed, an fps the format cannot store);
    the message starts with the output path."""


def as_number(value, name: str) -> float:
    """``value`` as a float, or ValueError naming ``name`` (for a string, None, a bool
    or anything float() refuses: "fov_y must be a number, got 'wide'"), so argument
    errors never surface as a bare "could not convert string to float"."""
    if isinstance(value, (str, bytes, bool)) or value is None:
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None


def as_finite(value, name: str) -> float:
    """``as_number(value, name)``, and ValueError "NAME must be finite, got inf" for an
    infinity or NaN."""
    v = as_number(value, name)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v}")
    return v
