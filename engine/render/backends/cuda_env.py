"""Which CUDA major version this machine runs, and the install hints that follow from it.

CuPy ships one wheel per CUDA major (``cupy-cuda12x``, ``cupy-cuda13x``) and NVRTC one
package per major (``nvidia-cuda-nvrtc-cu12``; ``nvidia-cuda-nvrtc`` 13.x). Two CuPy
wheels in one environment break ``import cupy``, and NVRTC of another major than the
installed CuPy does not load, so every hint the engine prints names the packages of one
major, chosen in this order:

1. the installed CuPy wheel's major (``cupy-cudaNNx``), when there is one: NVRTC and
   the interop bindings must match it;
2. else the driver's CUDA version (``cuDriverGetVersion`` from ``libcuda``, which needs
   no GPU context), the newest runtime the driver can run;
3. else None, and the hint names both extras.

Extras in ``pyproject.toml`` (``EXTRAS``): ``gpu`` (CUDA 12) and ``gpu-cuda13``.
``scripts/setup.sh`` makes the same choice for the checkout's virtual environment.
Imports nothing from the GPU stack at module level.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.metadata
import re

__all__ = [
    "EXTRAS",
    "NVRTC_PACKAGES",
    "cuda_major",
    "cupy_wheel_major",
    "driver_cuda_version",
    "install_hint",
    "nvrtc_hint",
]

# CUDA major -> the pip extra that installs CuPy, NVRTC and the CUDA Python bindings for it.
EXTRAS = {12: "gpu", 13: "gpu-cuda13"}
# CUDA major -> the NVRTC requirement matching that major's CuPy wheel. 13.0 is pinned:
# PTX from a newer NVRTC 13.x has an ISA version a 13.0 driver (580) cannot load.
NVRTC_PACKAGES = {12: "nvidia-cuda-nvrtc-cu12", 13: "nvidia-cuda-nvrtc==13.0.*"}

_CUPY_WHEEL = re.compile(r"^cupy-cuda(\d+)x$")
# the CUDA majors whose cupy-cudaNNx wheel is looked for (11x-13x exist today)
_CUPY_MAJORS = range(10, 21)


def _installed_cupy_wheels() -> list[str]:
    """The cupy-cudaNNx distributions installed, each looked up by name: reading every
    installed distribution's metadata instead took about 0.25 s of each command's
    start-up (334 distributions in the development environment)."""
    names = []
    for major in _CUPY_MAJORS:
        name = f"cupy-cuda{major}x"
        try:
            importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        names.append(name)
    return names


def cupy_wheel_major(distributions=None) -> int | None:
    """CUDA major of the installed CuPy wheel (``cupy-cuda13x`` -> 13), or None.

    ``distributions``: an iterable of distribution names (default: the installed ones);
    for tests. Raises RuntimeError when two CuPy wheels are installed side by side (the
    import is broken then; uninstall one).
    """
    if distributions is None:
        distributions = _installed_cupy_wheels()
    majors = set()
    for name in distributions:
        m = _CUPY_WHEEL.match(str(name).strip().lower().replace("_", "-"))
        if m:
            majors.add(int(m.group(1)))
    if len(majors) > 1:
        names = ", ".join(f"cupy-cuda{m}x" for m in sorted(majors))
        raise RuntimeError(f"two CuPy wheels are installed ({names}): uninstall all but one")
    return majors.pop() if majors else None


@functools.cache
def driver_cuda_version() -> tuple[int, int] | None:
    """(major, minor) of the newest CUDA the installed driver supports, or None when no
    driver library is found. Calls ``cuDriverGetVersion``, which needs no device."""
    for name in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        version = ctypes.c_int(0)
        try:
            if lib.cuDriverGetVersion(ctypes.byref(version)) != 0 or version.value <= 0:
                return None
        except AttributeError:
            return None
        return version.value // 1000, (version.value % 1000) // 10
    return None


def cuda_major() -> int | None:
    """The CUDA major every hint follows: the installed CuPy wheel's, else the driver's
    (12 for drivers of CUDA 12.x, 13 for 13.x and newer), else None."""
    major = cupy_wheel_major()
    if major is not None:
        return major
    driver = driver_cuda_version()
    if driver is None:
        return None
    return 13 if driver[0] >= 13 else 12


def install_hint(major: int | None = None) -> str:
    """One line saying how to install the GPU backend for ``major`` (default
    ``cuda_major()``), e.g. ``pip install 'frustum[gpu-cuda13]'``; a major without an
    extra (unknown: no CuPy wheel, no driver) names both extras."""
    major = cuda_major() if major is None else major
    if major in EXTRAS:
        return f"pip install 'frustum[{EXTRAS[major]}]'"
    return ("pip install 'frustum[gpu-cuda13]' for a CUDA 13 driver (580 or newer), "
            "'frustum[gpu]' for CUDA 12")


def nvrtc_hint(major: int | None = None) -> str:
    """How to install the NVRTC matching the installed CuPy (or the driver)."""
    major = cuda_major() if major is None else major
    if major in NVRTC_PACKAGES:
        return f"pip install '{NVRTC_PACKAGES[major]}'"
    return (f"pip install '{NVRTC_PACKAGES[13]}' for cupy-cuda13x, "
            f"'{NVRTC_PACKAGES[12]}' for cupy-cuda12x")
