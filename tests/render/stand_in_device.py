"""A stand-in CUDA device for machines without a GPU: enough of CuPy, backed by NumPy,
to run the engine's cupy backend end to end and count, per frame, what a real device
would do:

    launches   kernel launches (RawKernels, and CuPy array operations: ufuncs,
               reductions, casts, fills, copies between device arrays)
    h2d / d2h  copies host -> device and device -> host (explicit, and the implicit
               ones: ``bool(device_scalar)``, ``cupy.asarray(numpy_array)``)
    syncs      host waits on the device (stream/event/device synchronise, blocking copies)

The engine's own kernels (``shaders/*.cu``) run compiled by the host compiler
(tests/cuda_emulation.py: the exact kernel sources), so frames are real images that can
be compared with the NumPy renderer. ``install(monkeypatch, native_dir)`` puts the stand-in
in place of ``cupy``/``cupyx`` for one test and returns its ``Counters``.
"""

from __future__ import annotations

import functools
import sys
import types
from dataclasses import dataclass, fields

import numpy as np
from cuda_emulation import EmulatedModule, build


@dataclass
class Counters:
    launches: int = 0
    h2d: int = 0
    d2h: int = 0
    syncs: int = 0
    pinned_allocations: int = 0
    kernels: list = None

    def reset(self):
        for f in fields(self):
            setattr(self, f.name, [] if f.name == "kernels" else 0)

    def snapshot(self) -> dict:
        return {"launches": self.launches, "h2d": self.h2d, "d2h": self.d2h,
                "syncs": self.syncs}


COUNT = Counters(kernels=[])


class _Ptr:
    def __init__(self, ptr):
        self.ptr = ptr


class DeviceArray(np.ndarray):
    """An ndarray standing for device memory: operations count as launches, crossings
    to the host as copies (and waits)."""

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.dtype.str, "version": 3,
                "data": (self.ctypes.data, False),
                "strides": None if self.flags.c_contiguous else self.strides}

    @property
    def data(self):  # CuPy: arr.data.ptr
        return _Ptr(self.ctypes.data)

    def _host(self):
        return np.asarray(self).view(np.ndarray)

    def get(self, stream=None, order="C", out=None, blocking=True):
        COUNT.d2h += 1
        if blocking:
            COUNT.syncs += 1
        if out is not None:
            np.copyto(out, self._host())
            return out
        return self._host().copy()

    def set(self, arr, stream=None):
        COUNT.h2d += 1
        np.copyto(self._host(), np.asarray(arr))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        COUNT.launches += 1
        args = [a.view(np.ndarray) if isinstance(a, DeviceArray) else a for a in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(o.view(np.ndarray) if isinstance(o, DeviceArray) else o
                                  for o in kwargs["out"])
        result = getattr(ufunc, method)(*args, **kwargs)
        return _wrap(result)

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        if not copy and np.dtype(dtype) == self.dtype:
            return self
        COUNT.launches += 1
        return _wrap(self._host().astype(dtype, order=order))  # as CuPy's

    def copy(self, order="C"):
        COUNT.launches += 1
        return _wrap(self._host().copy())

    def __setitem__(self, key, value):
        if isinstance(value, np.ndarray) and not isinstance(value, DeviceArray) \
                and value.size > 1:
            COUNT.h2d += 1
        else:
            COUNT.launches += 1
        super().__setitem__(key, value.view(np.ndarray) if isinstance(value, DeviceArray)
                            else value)

    def _to_host_scalar(self):
        COUNT.d2h += 1
        COUNT.syncs += 1
        return self._host()

    def __bool__(self):
        return bool(self._to_host_scalar())

    def __float__(self):
        return float(self._to_host_scalar())

    def __int__(self):
        return int(self._to_host_scalar())

    def item(self, *args):
        return self._to_host_scalar().item(*args)

    def __array_function__(self, func, types, args, kwargs):
        # NumPy functions on device arrays run "on the device": one launch each, except
        # those that only read the array's metadata.
        if func not in _METADATA_ONLY:
            COUNT.launches += 1
        return _wrap(func(*_unwrap(args), **_unwrap(kwargs)))


_METADATA_ONLY = {np.ndim, np.shape, np.size, np.result_type}


def _unwrap(x):
    if isinstance(x, DeviceArray):
        return x.view(np.ndarray)
    if isinstance(x, (list, tuple)):
        return type(x)(_unwrap(v) for v in x)
    if isinstance(x, dict):
        return {k: _unwrap(v) for k, v in x.items()}
    return x


def _wrap(x):
    if isinstance(x, np.ndarray) and not isinstance(x, DeviceArray):
        return x.view(DeviceArray)
    if isinstance(x, np.generic):  # CuPy reductions give 0-d device arrays
        return np.asarray(x).view(DeviceArray)
    if isinstance(x, tuple):
        return tuple(_wrap(v) for v in x)
    return x


def _upload(a, dtype=None):
    if isinstance(a, DeviceArray):
        return a if dtype is None else a.astype(dtype, copy=False)
    host = np.asarray(a) if dtype is None else np.asarray(a, dtype)
    COUNT.h2d += 1
    return np.array(host).view(DeviceArray)


class _Stream:
    ptr = 0

    def synchronize(self):
        COUNT.syncs += 1


class _Event:
    def record(self, stream=None):
        pass

    def synchronize(self):
        COUNT.syncs += 1


class _Device:
    def __init__(self, device=0):
        self.id = 0

    def synchronize(self):
        COUNT.syncs += 1


def _empty(shape, dtype=np.float64):  # CuPy's default dtype, as NumPy's
    return np.empty(shape, dtype).view(DeviceArray)


def _filled(shape, value, dtype):
    COUNT.launches += 1
    return np.full(shape, value, dtype).view(DeviceArray)


def _ascontiguousarray(a, dtype=None):
    if isinstance(a, DeviceArray):
        a = a.astype(dtype, copy=False) if dtype is not None else a
        return a if a.flags.c_contiguous else a.copy()
    return _upload(np.ascontiguousarray(a, dtype))


def make_cupy():
    """The stand-in ``cupy`` module (and ``cupyx``)."""
    cp = types.ModuleType("cupy")
    cp.__version__ = "stand-in"
    cp.ndarray = DeviceArray
    for name in ("float32", "float64", "uint8", "uint32", "uint64", "int32", "int64", "bool_"):
        setattr(cp, name, getattr(np, name))
    cp.asarray = _upload
    cp.ascontiguousarray = _ascontiguousarray
    cp.asnumpy = lambda a, stream=None: a.get() if isinstance(a, DeviceArray) else np.asarray(a)
    cp.empty = _empty
    cp.zeros = lambda shape, dtype=np.float64: _filled(shape, 0, dtype)
    cp.ones = lambda shape, dtype=np.float64: _filled(shape, 1, dtype)
    cp.full = lambda shape, value, dtype=None: _filled(shape, value, dtype)
    for name in ("concatenate", "broadcast_to", "repeat", "all", "any", "isfinite", "clip",
                 "rint", "arange", "flatnonzero", "tile", "where"):
        setattr(cp, name, getattr(np, name))
    cuda = types.SimpleNamespace(
        is_available=lambda: True, Device=_Device, Stream=_Stream, Event=_Event,
        get_current_stream=lambda: _Stream(), get_elapsed_time=lambda a, b: 1.0,
        runtime=types.SimpleNamespace(
            getDeviceProperties=lambda i: {"name": b"Stand-in GPU", "major": 9, "minor": 0,
                                           "totalGlobalMem": 1 << 30},
            driverGetVersion=lambda: 13000, runtimeGetVersion=lambda: 13000,
            deviceGetAttribute=lambda attr, dev: 4, cudaDevAttrMultiProcessorCount=16))
    cp.cuda = cuda
    cp.show_config = lambda: print("CuPy: stand-in device (tests/render/stand_in_device.py)")
    cpx = types.ModuleType("cupyx")

    def empty_pinned(shape, dtype=np.float64):
        COUNT.pinned_allocations += 1
        return np.empty(shape, dtype)

    cpx.empty_pinned = empty_pinned
    return cp, cpx


@functools.cache
def _module(native_dir):
    return EmulatedModule(build(native_dir))


class Kernels:
    """The engine's kernels: the exact shaders/*.cu compiled by the host compiler
    (tests/cuda_emulation.py). ``_<kernel>`` methods may be replaced in a test to
    inject a fault into one kernel."""

    def __init__(self, native_dir):
        self.module = _module(native_dir)

    def get_function(self, source: str, name: str):
        kernel = self.module.get_function(source, name)

        def launch(grid, block, args, **kwargs):
            COUNT.launches += 1
            COUNT.kernels.append(name)
            impl = getattr(self, f"_{name}", None)
            if impl is None:
                kernel(grid, block, tuple(args))
            else:
                impl(kernel, grid, block, *args)

        return launch

    def _project_points(self, kernel, grid, block, *args):
        assert args[3].dtype.names == ("m",) and args[3].shape == (1,), "view_proj goes by value"
        kernel(grid, block, args)

    def _spin_wait(self, kernel, grid, block, *args):
        pass  # the timing kernel busy-waits on %globaltimer: nothing to emulate


def install(monkeypatch, native_dir) -> Counters:
    """Replace CuPy with the stand-in for this test; returns the (reset) counters."""
    from engine.render.backends import cupy_backend, cupy_raster

    cp, cpx = make_cupy()
    kernels = Kernels(native_dir)
    monkeypatch.setitem(sys.modules, "cupy", cp)
    monkeypatch.setitem(sys.modules, "cupyx", cpx)
    monkeypatch.setattr(cupy_backend, "cupy_unavailable_reason", lambda: None)
    monkeypatch.setattr(cupy_backend, "get_function", kernels.get_function)
    monkeypatch.setattr(cupy_raster, "get_function", kernels.get_function)
    monkeypatch.setattr(cupy_raster, "_default", {})
    monkeypatch.setenv("FRUSTUM_CROSSOVER", "0")
    COUNT.reset()
    return COUNT
