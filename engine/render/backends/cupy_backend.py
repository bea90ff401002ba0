"""GPU projector: the ``project_points`` CuPy RawKernel from ``shaders/transform.cu``.

One launch per frame projects every vertex of the scene. The module is compiled once
per process and device (CuPy also caches the binary on disk). Inputs that are already
CuPy arrays stay on the device; NumPy inputs are uploaded (the caller asked for that by
passing host data). The (4, 4) view-projection matrix is the exception: it travels by
value in the launch's parameter block (a 64-byte struct), so a moving camera costs no
upload and no allocation per frame.
"""

from __future__ import annotations

import functools

import numpy as np

from ...arrays import to_host
from ...errors import BackendUnavailable
from .base import OutputBuffers, Projection, check_viewport, prepare_inputs
from .cuda_env import install_hint, nvrtc_hint
from .cuda_source import NVRTC_OPTIONS, load_cuda_source

THREADS_PER_BLOCK = 256
_modules: dict[tuple[str, int], object] = {}

# ``struct FrMat4 { float m[16]; }`` of shaders/transform.cu: CuPy passes a (1,) array
# of this structured dtype by value.
MAT4_STRUCT = np.dtype({"names": ["m"], "formats": [(np.float32, (16,))]})


def mat4_arg(matrix) -> np.ndarray:
    """A (4, 4) host matrix as the kernel's by-value ``FrMat4`` argument: a (1,) array of
    ``MAT4_STRUCT`` holding the 16 float32 values row-major. Raises ValueError for
    another shape; device (CuPy) matrices are copied to the host first."""
    m = np.ascontiguousarray(to_host(matrix), np.float32)
    if m.shape != (4, 4):
        raise ValueError(f"view_proj must have shape (4, 4), got {m.shape}")
    return m.reshape(16).view(MAT4_STRUCT)


def cupy_unavailable_reason() -> str | None:
    """None when CuPy can launch kernels here, else a sentence saying why not."""
    try:
        import cupy
    except ImportError as exc:
        return f"CuPy is not installed ({exc}); {install_hint()}"
    try:
        if not cupy.cuda.is_available():
            return "CuPy is installed but no CUDA device/driver is available"
    except Exception as exc:  # noqa: BLE001 - CUDA runtime errors come in several classes
        return f"CUDA is not usable: {exc}"
    return None


def get_function(source_name: str, function: str):
    """Compiled ``function`` from ``shaders/<source_name>`` for the current device (cached).

    Raises engine.errors.BackendUnavailable (a RuntimeError) naming the cause when CuPy, the driver or NVRTC is missing.
    """
    reason = cupy_unavailable_reason()
    if reason:
        raise BackendUnavailable(f"cannot use the cupy backend: {reason}")
    import cupy

    key = (source_name, cupy.cuda.Device().id)
    mod = _modules.get(key)
    if mod is None:
        try:
            mod = cupy.RawModule(code=load_cuda_source(source_name), options=NVRTC_OPTIONS)
            mod.compile()
        except Exception as exc:
            raise BackendUnavailable(
                f"cannot use the cupy backend: compiling shaders/{source_name} failed "
                f"(is NVRTC installed? {nvrtc_hint()}): {exc}"
            ) from exc
        _modules[key] = mod
    return mod.get_function(function)


@functools.cache
def _multiprocessors(device_id: int) -> int:
    import cupy

    # One attribute query, cached: Device().attributes builds a dict of all of them.
    return int(cupy.cuda.runtime.deviceGetAttribute(
        cupy.cuda.runtime.cudaDevAttrMultiProcessorCount, device_id))


def spin_kernel():
    """``spin(nanoseconds)``: launches shaders/timing.cu's ``spin_wait`` (one thread) on
    CuPy's current stream, keeping the device busy that long (benchmark timing helper).
    Raises engine.errors.BackendUnavailable as ``get_function``."""
    kernel = get_function("timing.cu", "spin_wait")
    return lambda ns: kernel((1,), (1,), (np.uint64(int(ns)),))


def launch_grid(n: int) -> tuple[int]:
    """Blocks for a grid-stride loop over n items: enough to fill the device, no more."""
    import cupy

    sms = _multiprocessors(cupy.cuda.Device().id)
    return (max(1, min((n + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK, sms * 32)),)


class CupyProjector:
    """GPU projector; see ``engine.render.backends.base`` for the contract.

    Raises engine.errors.BackendUnavailable at construction when CuPy, a device or NVRTC is missing.
    """

    name = "cupy"

    def __init__(self):
        reason = cupy_unavailable_reason()  # before importing CuPy: it may be absent
        if reason:
            raise BackendUnavailable(f"cannot use the cupy backend: {reason}")
        import cupy

        self._kernel = get_function("transform.cu", "project_points")
        self.xp = cupy
        self._out = OutputBuffers(cupy)
        self._vp_placeholder = cupy.zeros((4, 4), cupy.float32)

    def project(self, positions, object_id, model, view_proj, viewport, runs=None) -> Projection:
        """Project N vertices in one launch (asynchronous: synchronise before timing).
        Returns views of reused device buffers. ``runs`` is ignored.

        ``view_proj`` is best passed as a host (NumPy) (4, 4) array: it is sent by value
        with the launch. A device matrix is copied to the host first (one blocking copy).
        """
        vp = mat4_arg(view_proj)
        # The placeholder is already a contiguous device (4, 4) float32: no copy.
        pos, oid, mdl, _ = prepare_inputs(self.xp, positions, object_id, model,
                                          self._vp_placeholder)
        vw, vh = check_viewport(viewport)
        n = pos.shape[0]
        out = self._out.get(n)
        if n:
            self._kernel(
                launch_grid(n), (THREADS_PER_BLOCK,),
                (pos, oid, mdl, vp, np.uint32(mdl.shape[0]), np.float32(vw), np.float32(vh),
                 np.int64(n), out.screen_xy, out.depth, out.visible),
            )
        return out
