"""CUDA point rasterizer: the kernels of ``shaders/raster.cu`` launched through CuPy.

Same input, output and tie rule as ``engine.render.points.rasterize_points`` (the NumPy
version), so both give the identical image and depth buffer: every visible point covers
a square splat of ``point_size`` pixels, and each covered pixel takes the minimum of the
64-bit key ``(float32 depth bits << 32) | point index`` with one ``atomicMin``
(nearest point wins; equal depth -> lowest index). Three launches per frame: clear the
key buffer, splat, resolve keys to RGBA and depth.

The key, colour and depth buffers are allocated once per image size and reused (grown,
never shrunk), so a frame allocates no image-sized device memory. Per-point sizes given
with a ``sizes_revision`` are converted to splat sides once per revision (a batch's
sizes change only with its vertex revision), so a frame with mixed point sizes costs no
upload, no validation kernels and no synchronisation. ``readback`` copies a frame into
pinned host buffers that are reused from frame to frame (the depth copy is optional),
with one synchronisation per frame.
"""

from __future__ import annotations

import numpy as np

from ..frame import Frame, background_rgba
from ..points import check_points, splat_sizes
from .cupy_backend import THREADS_PER_BLOCK, get_function, launch_grid

__all__ = ["CudaRasterizer", "benchmark_rasterize", "default_rasterizer", "rasterize_points_cuda",
           "sprite_arguments"]

_default: dict[int, CudaRasterizer] = {}


class CudaRasterizer:
    """Z-buffered square point splats on the GPU with reused device buffers.

    Raises RuntimeError at construction when CuPy, a device or NVRTC is missing (the
    message says which).
    """

    def __init__(self):
        import cupy

        self.xp = cupy
        self._clear = get_function("raster.cu", "clear_keys")
        self._splat = get_function("raster.cu", "splat_points")
        self._splat_sprites = get_function("raster.cu", "splat_sprites")
        self._resolve = get_function("raster.cu", "resolve_keys")
        self._capacity = 0  # pixels the buffers below hold
        self._keys = self._color = self._depth = None
        self._uniform_sizes: dict[int, object] = {}  # splat side -> (1,) uint8 device array
        self._sizes_key = None  # (sizes_revision, N) of the cached per-point splat sides
        self._sizes_cached = None
        self._pinned_capacity = 0  # pixels the pinned host buffers hold
        self._host_color = self._host_depth = None

    def _buffers(self, w: int, h: int):
        """(keys (H*W,) uint64, color (H, W, 4) uint8, depth (H, W) float32) device views."""
        xp = self.xp
        npix = w * h
        if npix > self._capacity:
            self._keys = xp.empty(npix, xp.uint64)
            self._color = xp.empty(npix * 4, xp.uint8)
            self._depth = xp.empty(npix, xp.float32)
            self._capacity = npix
        return (self._keys[:npix], self._color[:npix * 4].reshape(h, w, 4),
                self._depth[:npix].reshape(h, w))

    def _sizes(self, point_size, n: int, revision=None):
        """(device uint8 sizes, stride): stride 0 when one size serves every point.
        Per-point sizes with a ``revision`` equal to the last one (same N) are reused."""
        if np.ndim(point_size) == 0:
            side = int(splat_sizes(point_size, n)[0])
            buf = self._uniform_sizes.get(side)
            if buf is None:
                buf = self._uniform_sizes[side] = self.xp.full(1, side, self.xp.uint8)
            return buf, 0
        key = None if revision is None else (revision, n)
        if key is None or key != self._sizes_key:
            self._sizes_cached = splat_sizes(point_size, n, self.xp)
            self._sizes_key = key
        return self._sizes_cached, 1

    def rasterize(self, screen_xy, depth, visible, colors, size, point_size=1.0,
                  background=(0.0, 0.0, 0.0, 1.0), host: bool = False,
                  sizes_revision=None) -> Frame:
        """Rasterize N projected points into a ``size`` = (width, height) image.

        Args:
            screen_xy: (N, 2) float32 pixel coordinates, origin top-left, y down.
            depth: (N,) float32 window depth in [0, 1] (smaller is nearer).
            visible: (N,) bool; invisible points are skipped.
            colors: (N, 4) uint8 RGBA.
            size: (width, height) of the image in pixels.
            point_size: splat side in pixels, scalar or (N,), rounded to an integer in [1, 255].
            background: RGB or RGBA floats in [0, 1] for uncovered pixels.
            host: return NumPy arrays (copied off the device, owned by the caller) instead
                of CuPy arrays.
            sizes_revision: optional version of a per-point ``point_size`` array (e.g.
                ``VertexBatch.vertex_revision``): while it and N stay the same, the splat
                sides converted and checked on the first call are reused (no upload, no
                validation kernels, no synchronisation). Change it whenever the sizes change.

        Arrays may be CuPy (used in place when already of the right dtype and C-contiguous)
        or NumPy (uploaded). The launches are asynchronous; synchronise before timing.

        Returns:
            Frame(color (H, W, 4) uint8, depth (H, W) float32, 1.0 where empty). With
            ``host=False`` these are views of this rasterizer's reused device buffers,
            overwritten by its next call: copy them to keep a frame.

        Raises:
            ValueError: a non-positive size, mismatched shapes, 2**32 or more points, bad
            point sizes or background.
        """
        keys, col = self.splat(screen_xy, depth, visible, colors, size, point_size,
                               sizes_revision)
        return self.resolve(keys, col, size, background, host)

    def splat(self, screen_xy, depth, visible, colors, size, point_size=1.0,
              sizes_revision=None):
        """The visibility half of ``rasterize`` (same arguments): clear the key buffer and
        splat the points. Returns (keys (H * W,) uint64, colours (N, 4) uint8 as checked),
        device arrays; ``keys`` is this rasterizer's reused buffer."""
        xp = self.xp
        xy, z, vis, col, (w, h) = check_points(screen_xy, depth, visible, colors, size, xp)
        n = xy.shape[0]
        sizes, size_stride = self._sizes(point_size, n, sizes_revision)
        keys, _, _ = self._buffers(w, h)
        npix = w * h
        block = (THREADS_PER_BLOCK,)
        self._clear(launch_grid(npix), block, (keys, np.int64(npix)))
        if n:
            self._splat(launch_grid(n), block,
                        (xy, z, vis.view(xp.uint8), sizes, np.int64(size_stride), np.int64(n),
                         np.int32(w), np.int32(h), keys))
        return keys, col

    def splat_sprites(self, screen_xy, depth, visible, colors, size, diameter, round_):
        """``splat`` for point sprites (engine.render.sprites): discs and squares of
        ``diameter`` pixels ((N,) float32 or a float), ``round_`` a bool or (N,) bool.
        Returns (keys, colours) as ``splat``."""
        xp = self.xp
        xy, z, vis, col, (w, h) = check_points(screen_xy, depth, visible, colors, size, xp)
        n = xy.shape[0]
        keys, _, _ = self._buffers(w, h)
        npix = w * h
        block = (THREADS_PER_BLOCK,)
        self._clear(launch_grid(npix), block, (keys, np.int64(npix)))
        if n:
            self._splat_sprites(launch_grid(n), block,
                                (xy, z, vis.view(xp.uint8), *sprite_arguments(xp, diameter, round_),
                                 np.int64(n), np.int32(w), np.int32(h), keys))
        return keys, col

    def resolve(self, keys, colors, size, background=(0.0, 0.0, 0.0, 1.0),
                host: bool = False) -> Frame:
        """The shading half of ``rasterize``: ``keys`` from ``splat`` -> Frame of each
        pixel's winning point colour (or ``background``) and depth, in this rasterizer's
        reused device buffers (``host``: copies owned by the caller)."""
        xp = self.xp
        w, h = size
        _, color, zbuf = self._buffers(w, h)
        bg = background_rgba(background).view(np.uint32)[0]  # same byte order as colours
        npix = w * h
        # (N, 4) uint8 RGBA read and written as one 32-bit word per point/pixel.
        self._resolve(launch_grid(npix), (THREADS_PER_BLOCK,),
                      (keys, colors.view(xp.uint32), np.uint32(bg), np.int64(npix),
                       color.view(xp.uint32), zbuf))
        if host:
            return Frame(color.get(), zbuf.get())
        return Frame(color, zbuf)

    def readback(self, frame: Frame, depth: bool = True) -> Frame:
        """Copy a device frame from ``rasterize`` into pinned host buffers.

        The buffers are allocated once (page-locked, grown never shrunk) and reused: the
        copies need no staging, no fresh allocation and no page faults, and the frame
        waits on the device once (one stream synchronisation after the copies).

        Args:
            frame: Frame(color (H, W, 4) uint8, depth (H, W) float32) of CuPy arrays.
            depth: also copy the depth buffer; False leaves ``depth`` None (half the
                bytes when only the image is wanted).

        Returns:
            Frame of NumPy views of the pinned buffers, overwritten by the next
            ``readback``: copy them to keep a frame.
        """
        import cupyx

        h, w = frame.color.shape[:2]
        npix = w * h
        if npix > self._pinned_capacity:
            self._host_color = cupyx.empty_pinned(npix * 4, np.uint8)
            self._host_depth = cupyx.empty_pinned(npix, np.float32)
            self._pinned_capacity = npix
        stream = self.xp.cuda.get_current_stream()
        color = self._host_color[:npix * 4].reshape(h, w, 4)
        frame.color.get(stream=stream, out=color, blocking=False)
        zbuf = None
        if depth:
            zbuf = self._host_depth[:npix].reshape(h, w)
            frame.depth.get(stream=stream, out=zbuf, blocking=False)
        stream.synchronize()
        return Frame(color, zbuf)


_SHARED: dict = {}  # (module, dtype, value) -> a (1,) device array, made once


def _shared(xp, dtype, value):
    key = (id(xp), np.dtype(dtype).str, value)
    a = _SHARED.get(key)
    if a is None:
        a = _SHARED[key] = xp.full(1, value, dtype)
    return a


def sprite_arguments(xp, diameter, round_):
    """The splat_sprites kernel's (diameters, stride, rounds, stride) for a diameter
    ((N,) or a float) and a shape (a bool or (N,) bool, uint8 on the device): device
    arrays, stride 0 for one value shared by every point (made once per value)."""
    if np.ndim(diameter) == 0:
        d, ds = _shared(xp, np.float32, float(np.float32(diameter))), 0
    else:
        d, ds = xp.ascontiguousarray(xp.asarray(diameter), xp.float32), 1
    if np.ndim(round_) == 0:
        r, rs = _shared(xp, np.uint8, int(bool(round_))), 0
    else:
        r, rs = xp.ascontiguousarray(xp.asarray(round_).view(np.uint8)), 1
    return d, np.int64(ds), r, np.int64(rs)


def default_rasterizer() -> CudaRasterizer:
    """The process's CudaRasterizer for the current device (created on first use)."""
    import cupy

    dev = cupy.cuda.Device().id
    r = _default.get(dev)
    if r is None:
        r = _default[dev] = CudaRasterizer()
    return r


def rasterize_points_cuda(screen_xy, depth, visible, colors, size, point_size=1.0,
                          background=(0.0, 0.0, 0.0, 1.0)) -> Frame:
    """``engine.render.points.rasterize_points`` on the GPU; returns a host (NumPy) Frame.

    Arguments and errors as ``CudaRasterizer.rasterize``. Uses ``default_rasterizer()``,
    whose device buffers are reused from frame to frame. For device output (no copy to
    the host) call ``default_rasterizer().rasterize(...)`` directly.
    """
    return default_rasterizer().rasterize(screen_xy, depth, visible, colors, size,
                                          point_size, background, host=True)


def benchmark_rasterize(screen_xy, depth, visible, colors, size, point_size=1.0,
                        repeats: int = 20, warmup: int = 3) -> dict:
    """GPU time of one frame of the CUDA rasterizer (clear + splat + resolve), for benchmarks.

    Inputs are uploaded once before timing; each repeat is timed with CUDA events around
    ``CudaRasterizer.rasterize`` (device output, no host copy), so the figure is
    synchronised device time, not launch time.

    Returns:
        {"ms_median": float, "ms_min": float, "points": N, "pixels": W*H}.
    """
    import cupy

    xy, z, vis, col = (cupy.asarray(a) for a in (screen_xy, depth, visible, colors))
    r = CudaRasterizer()
    for _ in range(warmup):
        r.rasterize(xy, z, vis, col, size, point_size)
    times = []
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    for _ in range(max(1, repeats)):
        start.record()
        r.rasterize(xy, z, vis, col, size, point_size)
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop))
    return {"ms_median": float(np.median(times)), "ms_min": float(np.min(times)),
            "points": int(xy.shape[0]), "pixels": int(size[0]) * int(size[1])}
