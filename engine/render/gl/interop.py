"""CUDA-GL interop: device arrays copied into GL buffers and textures on the GPU.

On the cupy backend what GL shows (the projected points for GL_POINTS, or the software
frame for the window's textured quad) is already in device memory. ``CudaGLInterop``
registers the GL object with CUDA once (cuda-python's graphics-resource API,
``cuda.bindings.runtime``), and per frame maps it, copies device to device on CuPy's
current stream, and unmaps it: no host memory, no host synchronisation (mapping orders
the copy after GL's earlier use of the object, unmapping orders GL's later use after
the copy).

Where interop cannot work (no cuda-python, a GL context that is not on the CUDA device,
e.g. Mesa llvmpipe) the first attempt raises ``InteropUnavailable`` and the callers
(``PointPainter``, ``engine.display.blit.ImageBlit``) fall back to a host copy, logging
the reason once.

GL objects registered here must not be re-specified while registered (no ``orphan()``
or reallocation without ``forget`` first): a different GL name or a larger size
registers again.
"""

from __future__ import annotations

import logging

__all__ = ["CudaGLInterop", "InteropSlot", "InteropUnavailable", "device_pointer",
           "is_device_array", "load_runtime"]

log = logging.getLogger("engine")

GL_TEXTURE_2D = 0x0DE1


class InteropUnavailable(RuntimeError):
    """CUDA-GL interop cannot be used here; the message says why (the caller copies
    through the host instead)."""


def is_device_array(a) -> bool:
    """True for arrays in CUDA device memory (CuPy, or anything with the CUDA array
    interface)."""
    return hasattr(a, "__cuda_array_interface__")


def device_pointer(a) -> int:
    """Device address of a C-contiguous device array. Raises ValueError for a
    non-contiguous one (interop copies are plain byte ranges)."""
    iface = a.__cuda_array_interface__
    strides = iface.get("strides")
    if strides is not None:
        # A C-contiguous array may state its strides explicitly.
        itemsize = int(a.dtype.itemsize)
        expect, step = [], itemsize
        for dim in reversed(iface["shape"]):
            expect.append(step)
            step *= int(dim)
        if tuple(reversed(expect)) != tuple(strides):
            raise ValueError("interop copies need C-contiguous device arrays")
    return int(iface["data"][0])


def load_runtime():
    """``cuda.bindings.runtime`` (cuda-python). Raises InteropUnavailable without it."""
    try:
        from cuda.bindings import runtime
    except ImportError as exc:
        raise InteropUnavailable(f"cuda-python is not installed ({exc}); install the GPU "
                                 "extra (docs/gpu.md) for CUDA-GL interop") from None
    return runtime


def _current_stream() -> int:
    import cupy

    return int(cupy.cuda.get_current_stream().ptr)


class CudaGLInterop:
    """Copies device arrays into registered GL buffers and RGBA8 2D textures.

    Args:
        runtime: the ``cuda.bindings.runtime`` module (default) or a stand-in with the
            same functions (tests).
        stream: callable returning the CUDA stream handle to copy on (default: CuPy's
            current stream).

    Attributes:
        registrations, maps, copies: counts since creation (for tests and benchmarks).

    Raises:
        InteropUnavailable: cuda-python is not installed (at construction), or CUDA
        refuses to register a GL object (first copy into it), e.g. a GL context that
        does not run on the CUDA device.
    """

    def __init__(self, runtime=None, stream=None):
        self.rt = load_runtime() if runtime is None else runtime
        self._stream = stream or _current_stream
        self._resources: dict[int, tuple] = {}  # id(gl object) -> (glo, nbytes, resource)
        self.registrations = self.maps = self.copies = 0

    def _check(self, what: str, result):
        err, *rest = result if isinstance(result, tuple) else (result,)
        if int(err) != int(self.rt.cudaError_t.cudaSuccess):
            name = getattr(err, "name", str(err))
            raise InteropUnavailable(f"{what} failed: {name}")
        return rest[0] if len(rest) == 1 else tuple(rest)

    def _resource(self, obj, nbytes: int, image: bool):
        key = id(obj)
        entry = self._resources.get(key)
        if entry is not None and entry[0] == obj.glo and entry[1] >= nbytes:
            return entry[2]
        if entry is not None:
            self.forget(obj)
        flags = int(self.rt.cudaGraphicsRegisterFlags.cudaGraphicsRegisterFlagsWriteDiscard)
        what = "cudaGraphicsGLRegisterImage" if image else "cudaGraphicsGLRegisterBuffer"
        try:
            result = (self.rt.cudaGraphicsGLRegisterImage(obj.glo, GL_TEXTURE_2D, flags) if image
                      else self.rt.cudaGraphicsGLRegisterBuffer(obj.glo, flags))
        except Exception as exc:  # a binding that cannot be called here
            raise InteropUnavailable(f"{what} raised {type(exc).__name__}: {exc}") from exc
        res = self._check(what, result)
        self._resources[key] = (obj.glo, nbytes, res)
        self.registrations += 1
        return res

    def copy_to_buffer(self, buffer, array, offset: int = 0):
        """Copy the device ``array`` (C-contiguous) into the GL ``buffer`` (a moderngl
        Buffer) at byte ``offset``. Raises ValueError when it does not fit,
        InteropUnavailable when CUDA refuses the buffer or a call fails."""
        nbytes = int(array.nbytes)
        if offset < 0 or offset + nbytes > buffer.size:
            raise ValueError(f"{nbytes} bytes at offset {offset} do not fit a GL buffer of "
                             f"{buffer.size} bytes")
        if nbytes == 0:
            return
        res = self._resource(buffer, buffer.size, image=False)
        stream = self._stream()
        self._check("cudaGraphicsMapResources", self.rt.cudaGraphicsMapResources(1, res, stream))
        self.maps += 1
        try:
            ptr, size = self._check("cudaGraphicsResourceGetMappedPointer",
                                    self.rt.cudaGraphicsResourceGetMappedPointer(res))
            if offset + nbytes > int(size):
                raise ValueError(f"mapped GL buffer holds {int(size)} bytes, need "
                                 f"{offset + nbytes}")
            self._check("cudaMemcpyAsync", self.rt.cudaMemcpyAsync(
                int(ptr) + offset, device_pointer(array), nbytes,
                self.rt.cudaMemcpyKind.cudaMemcpyDeviceToDevice, stream))
            self.copies += 1
        finally:
            self._check("cudaGraphicsUnmapResources",
                        self.rt.cudaGraphicsUnmapResources(1, res, stream))

    def copy_to_texture(self, texture, image):
        """Copy the device ``image`` ((H, W, 4) uint8, C-contiguous, row 0 first as in
        ``texture.write``) into the RGBA8 2D ``texture`` (a moderngl Texture of size
        (W, H)). Raises ValueError on a size mismatch, InteropUnavailable as above."""
        h, w = int(image.shape[0]), int(image.shape[1])
        if tuple(texture.size) != (w, h) or image.shape[2:] != (4,) or image.dtype.itemsize != 1:
            raise ValueError(f"image {tuple(image.shape)} {image.dtype} does not match an "
                             f"RGBA8 texture of {texture.size}")
        res = self._resource(texture, w * h * 4, image=True)
        stream = self._stream()
        self._check("cudaGraphicsMapResources", self.rt.cudaGraphicsMapResources(1, res, stream))
        self.maps += 1
        try:
            array = self._check("cudaGraphicsSubResourceGetMappedArray",
                                self.rt.cudaGraphicsSubResourceGetMappedArray(res, 0, 0))
            self._check("cudaMemcpy2DToArrayAsync", self.rt.cudaMemcpy2DToArrayAsync(
                array, 0, 0, device_pointer(image), w * 4, w * 4, h,
                self.rt.cudaMemcpyKind.cudaMemcpyDeviceToDevice, stream))
            self.copies += 1
        finally:
            self._check("cudaGraphicsUnmapResources",
                        self.rt.cudaGraphicsUnmapResources(1, res, stream))

    def forget(self, obj):
        """Unregister ``obj`` (before it is released or re-specified)."""
        entry = self._resources.pop(id(obj), None)
        if entry is not None:
            try:
                self._check("cudaGraphicsUnregisterResource",
                            self.rt.cudaGraphicsUnregisterResource(entry[2]))
            except InteropUnavailable as exc:
                log.debug("unregistering a GL object: %s", exc)

    def release(self):
        """Unregister every GL object."""
        for key in list(self._resources):
            entry = self._resources.pop(key)
            try:
                self._check("cudaGraphicsUnregisterResource",
                            self.rt.cudaGraphicsUnregisterResource(entry[2]))
            except InteropUnavailable as exc:
                log.debug("unregistering a GL object: %s", exc)


class InteropSlot:
    """The interop state one GL consumer keeps: created on the first device array,
    disabled for good (with one log line) when interop turns out unusable.

    ``factory``: builds the CudaGLInterop (tests pass a stand-in).
    """

    def __init__(self, factory=CudaGLInterop):
        self._factory = factory
        self.interop: CudaGLInterop | None = None
        self.unavailable: str | None = None

    def get(self) -> CudaGLInterop | None:
        if self.interop is None and self.unavailable is None:
            try:
                self.interop = self._factory()
            except InteropUnavailable as exc:
                self.disable(str(exc))
        return self.interop

    def disable(self, reason: str):
        if self.unavailable is None:
            log.info("CUDA-GL interop unavailable (%s): copying through the host", reason)
        self.unavailable = reason
        if self.interop is not None:
            self.interop.release()
            self.interop = None

    def release(self):
        if self.interop is not None:
            self.interop.release()
            self.interop = None
