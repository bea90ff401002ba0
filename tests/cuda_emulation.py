"""The engine's CUDA kernels on the CPU: tests/native/kernels_host.cpp compiles the exact
shaders/*.cu files with the host compiler against tests/native/cuda_emu.h, and
``EmulatedModule`` launches them the way CuPy's RawModule does
(``module.get_function(name)(grid, block, args)``) on NumPy arrays. So indexing, bounds,
grid-stride loops, atomics and the argument types of every launch are checked on every
CI run; only the hardware remains for a GPU."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

NATIVE = Path(__file__).resolve().parent / "native"

# NumPy scalar type -> the C type CuPy passes for it
_CTYPES = {
    np.dtype(np.float64): ctypes.c_double, np.dtype(np.float32): ctypes.c_float,
    np.dtype(np.int64): ctypes.c_longlong, np.dtype(np.int32): ctypes.c_int,
    np.dtype(np.uint64): ctypes.c_ulonglong, np.dtype(np.uint32): ctypes.c_uint,
    np.dtype(np.uint8): ctypes.c_ubyte, np.dtype(np.int8): ctypes.c_byte,
    np.dtype(np.bool_): ctypes.c_bool,
}


def build(tmp_dir: Path) -> ctypes.CDLL:
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        pytest.fail("a host C++ compiler (g++) is needed to run the CUDA kernels on the CPU")
    lib = tmp_dir / "kernels_host.so"
    r = subprocess.run([cxx, "-std=c++20", "-O2", "-ffp-contract=off", "-shared", "-fPIC",
                        "-pthread", str(NATIVE / "kernels_host.cpp"), "-o", str(lib)],
                       capture_output=True, text=True, check=False)
    if r.returncode:
        pytest.fail(f"host build of the CUDA kernels failed:\n{r.stderr}")
    return ctypes.CDLL(str(lib))


class EmulatedModule:
    """``get_function(source, name)`` like engine.render.backends.cupy_backend's, for the
    host build. ``launches`` counts the kernel launches by name."""

    def __init__(self, lib: ctypes.CDLL, workers: int = 2):
        self.lib = lib
        self.workers = workers
        self.launches: dict[str, int] = {}
        lib.fr_launch_kernel.restype = ctypes.c_int
        lib.fr_launch_kernel.argtypes = [ctypes.c_char_p, ctypes.c_uint, ctypes.c_uint,
                                         ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p),
                                         ctypes.c_int]

    def get_function(self, source: str, name: str):
        def kernel(grid, block, args):
            values, ptrs = [], []
            for i, a in enumerate(args):
                if isinstance(a, np.ndarray) and a.dtype.names is not None:
                    # a structured array of one element: a struct passed by value (as
                    # CuPy passes it); the parameter points at its bytes
                    assert a.size == 1, f"{name} argument {i}: a struct is one element"
                    values.append(None)
                    ptrs.append(ctypes.c_void_p(a.ctypes.data))
                    continue
                if isinstance(a, np.ndarray):
                    assert a.flags.c_contiguous, f"{name} argument {i}: not C-contiguous"
                    values.append(ctypes.c_void_p(a.ctypes.data))
                elif isinstance(a, np.generic):
                    values.append(_CTYPES[a.dtype](a.item()))
                else:  # CuPy would guess a C type for a Python scalar: the engine must not
                    raise TypeError(f"{name} argument {i}: pass a NumPy scalar, not "
                                    f"{type(a).__name__}")
                ptrs.append(ctypes.cast(ctypes.pointer(values[-1]), ctypes.c_void_p))
            params = (ctypes.c_void_p * len(ptrs))(*ptrs)
            rc = self.lib.fr_launch_kernel(name.encode(), int(grid[0]), int(block[0]),
                                           self.workers, params, len(values))
            if rc == -1:
                raise KeyError(f"no kernel {name} in the host build")
            if rc < -1:
                raise TypeError(f"{name} takes {-rc - 1} arguments, got {len(values)}")
            self.launches[name] = self.launches.get(name, 0) + 1

        return kernel
