"""GL_POINTS painter: draws projected points into the bound framebuffer of a moderngl
context (an offscreen FBO or a window).

Each point is a square of ``point_size`` pixels in its own RGBA colour, depth-tested
with the projector's window depth (GL_LESS, cleared to 1.0), so the nearest point wins
and, at equal depth, the first drawn (lowest index) wins - the software rasterizer's
rule. Differences from ``engine.render.points.rasterize_points`` that remain: GL compares depth
at the depth buffer's precision (24 bits here) rather than float32, and a point exactly
on a pixel-centre boundary may round to the other side after the pixel -> NDC -> pixel
round trip.

Buffers: one VBO per attribute, reused every frame. A frame writes into the existing
buffer after orphaning it (so the driver need not wait for the previous draw); a buffer
is reallocated only when the point count outgrows it (capacity doubles), and only then
is the vertex array rebuilt. ``allocations`` counts those GL allocations. Colours and
per-point sizes are static between batch repacks: with a ``colors_revision`` they are
uploaded once per revision.

Device (CuPy) inputs are copied into the VBOs by CUDA-GL interop (``interop.py``): device
to device, never through host memory. Those buffers are not orphaned (a registered buffer
must keep its storage; mapping it orders the copy after the previous draw instead).
Where interop is unavailable (no cuda-python, a GL context off the CUDA device such as
llvmpipe) the first draw logs why and every draw copies through the host instead.
"""

from __future__ import annotations

import numpy as np

from ...arrays import to_host
from ..points import MAX_POINT_SIZE
from .glsl import load_glsl
from .interop import InteropSlot, InteropUnavailable, is_device_array

__all__ = ["PointPainter"]

# attribute name -> (moderngl format, components per point, draw() argument)
_ATTRIBUTES = {
    "in_xy": ("2f", 2, "screen_xy"),
    "in_depth": ("1f", 1, "depth"),
    "in_visible": ("1u1", 1, "visible"),
    "in_color": ("4f1", 4, "colors"),
    "in_size": ("1f", 1, "point_size"),
    "in_style": ("1u1", 1, "sprites"),
}


class PointPainter:
    """Draws projected points as GL_POINTS with a moderngl context ``ctx``.

    Creates its two programs (uniform size, per-point size) once; ``draw`` creates no
    GL object unless a buffer must grow.
    """

    def __init__(self, ctx, interop_factory=None):
        import moderngl

        self.ctx = ctx
        self._mgl = moderngl
        self._color_key = None  # (colors_revision, N) of the colours in the GPU buffer
        self._sizes_key = None  # (colors_revision, N) of the per-point sizes uploaded
        self._interop = InteropSlot() if interop_factory is None else InteropSlot(interop_factory)
        self.host_uploads = 0  # attribute arrays written from host memory
        ctx.enable(moderngl.PROGRAM_POINT_SIZE)  # gl_PointSize is ignored without it
        lo, hi = ctx.info.get("GL_POINT_SIZE_RANGE", (1.0, float(MAX_POINT_SIZE)))
        self.size_range = (float(lo), float(min(hi, MAX_POINT_SIZE)))
        vert, frag = load_glsl("points.vert"), load_glsl("points.frag")
        self._programs = {
            False: ctx.program(vertex_shader=vert, fragment_shader=frag),
            True: ctx.program(vertex_shader=load_glsl("points.vert", ("PER_POINT_SIZE",)),
                              fragment_shader=frag),
            "sprites": ctx.program(vertex_shader=load_glsl("points.vert", ("SPRITES",)),
                                   fragment_shader=load_glsl("points.frag", ("SPRITES",))),
        }
        self._buffers: dict[str, object] = {}
        self._vaos: dict[bool, object] = {}
        self.allocations = 0

    @property
    def interop(self):
        """The CudaGLInterop in use, or None (not needed yet, or unavailable)."""
        return self._interop.interop

    def _buffer(self, name: str, nbytes: int, orphan: bool):
        buf = self._buffers.get(name)
        if buf is None or buf.size < nbytes:
            if buf is not None:
                if self._interop.interop is not None:
                    self._interop.interop.forget(buf)
                buf.release()
            cap = max(256, 1 << int(np.ceil(np.log2(max(nbytes, 1)))))
            self._buffers[name] = buf = self.ctx.buffer(reserve=cap, dynamic=True)
            self.allocations += 1
            for vao in self._vaos.values():
                vao.release()
            self._vaos.clear()
        elif orphan:
            buf.orphan()  # fresh storage: no stall on the previous frame's draw
        return buf

    def _upload(self, name: str, data, interop=None):
        if interop is not None:
            buf = self._buffer(name, data.nbytes, orphan=False)
            if is_device_array(data):
                interop.copy_to_buffer(buf, data)
                return
            if data.nbytes:  # host data (e.g. a visibility mask made on the host): written
                buf.write(data)  # in place, no orphan, as the buffer may be registered
            self.host_uploads += 1
            return
        buf = self._buffer(name, data.nbytes, orphan=True)
        if data.nbytes:
            buf.write(data)
        self.host_uploads += 1

    def _vao(self, per_point):
        vao = self._vaos.get(per_point)
        if vao is None:
            names = ["in_xy", "in_depth", "in_visible", "in_color"]
            names += ["in_size"] if per_point else []
            names += ["in_style"] if per_point == "sprites" else []
            content = [(self._buffers[n], _ATTRIBUTES[n][0], n) for n in names]
            vao = self.ctx.vertex_array(self._programs[per_point], content)
            self._vaos[per_point] = vao
            self.allocations += 1
        return vao

    def draw(self, screen_xy, depth, visible, colors, viewport, point_size=1.0,
             colors_revision=None):
        """Draw points into the currently bound framebuffer (clearing is the caller's job).

        Args:
            screen_xy: (N, 2) float32 pixels, origin top-left, y down.
            depth: (N,) float32 window depth in [0, 1].
            visible: (N,) bool; invisible points are not drawn.
            colors: (N, 4) uint8 RGBA.
            viewport: (width, height) in pixels of the target framebuffer.
            point_size: pixels, scalar or (N,); rounded half-to-even and clamped to
                [1, 255] and to the driver's point size range.
            colors_revision: optional version of ``colors`` and of a per-point
                ``point_size`` (``VertexBatch.vertex_revision``); when it equals the last
                one drawn with the same N, neither is copied or uploaded again (both are
                static between repacks).

        NumPy inputs are uploaded from host memory. CuPy inputs (the cupy backend's
        projection) are copied device to device by CUDA-GL interop, or copied to the host
        first where interop is unavailable. Raises ValueError on mismatched shapes or a bad
        point size.
        """
        interop = self._interop.get() if is_device_array(screen_xy) else None
        if interop is not None:
            try:
                return self._draw(screen_xy, depth, visible, colors, viewport, point_size,
                                  colors_revision, interop)
            except InteropUnavailable as exc:
                self._interop.disable(str(exc))
                self._color_key = self._sizes_key = None  # re-upload from the host
        return self._draw(screen_xy, depth, visible, colors, viewport, point_size,
                          colors_revision, None)

    def _draw(self, screen_xy, depth, visible, colors, viewport, point_size, colors_revision,
              interop):
        mgl = self._mgl
        if interop is not None:
            def conv(a, dtype):  # stays on the device: a view when already right
                a = a.astype(dtype, copy=False)
                return a if a.flags.c_contiguous else a.copy()
        else:
            def conv(a, dtype):
                return np.ascontiguousarray(to_host(a), dtype)
        xy = conv(screen_xy, np.float32)
        n = xy.shape[0]
        arrays = {
            "in_xy": xy,
            "in_depth": conv(depth, np.float32),
            "in_visible": conv(visible, np.bool_).view(np.uint8),
        }
        key = None if colors_revision is None else (colors_revision, n)
        if key is None or key != self._color_key:
            arrays["in_color"] = conv(colors, np.uint8)
        for name, a in arrays.items():
            _, comps, arg = _ATTRIBUTES[name]
            want = (n, comps) if comps > 1 else (n,)
            if tuple(a.shape) != want:
                raise ValueError(f"{arg} must have shape {want}, got {tuple(a.shape)}")
        per_point = np.ndim(point_size) > 0
        if not per_point or key is None or key != self._sizes_key:
            # Checked and rounded on the host: once per revision for per-point sizes.
            sizes = np.asarray(to_host(point_size), np.float64)
            if per_point and sizes.shape != (n,):
                raise ValueError(f"point_size must be a scalar or have shape ({n},), "
                                 f"got {sizes.shape}")
            if not np.all(np.isfinite(sizes)) or np.any(sizes <= 0):
                raise ValueError("point_size must be positive and finite")
            # np.rint (half to even) as in the software rasterizer; GL would truncate or
            # round up.
            sizes = np.clip(np.rint(sizes), 1, MAX_POINT_SIZE).astype(np.float32)
        else:
            sizes = None  # per-point sizes of this revision are in the GPU buffer
        w, h = (int(v) for v in viewport)
        prog = self._programs[per_point]
        prog["u_viewport"].value = (float(w), float(h))
        prog["u_size_range"].value = self.size_range
        if not per_point:
            prog["u_point_size"].value = float(sizes)
        if n == 0:
            return
        for name, a in arrays.items():
            if interop is None:
                self._upload(name, a)
            else:
                self._upload(name, a, interop)
        if per_point and sizes is not None:
            self._upload("in_size", sizes)  # host: rounded on the host, once per revision
            self._sizes_key = key
        self._color_key = key
        self.ctx.enable(mgl.DEPTH_TEST)
        self.ctx.depth_func = "<"
        self._vao(per_point).render(mgl.POINTS, vertices=n)

    def draw_sprites(self, screen_xy, depth, visible, colors, viewport, sprites):
        """``draw`` for the round and world-sized points of ``sprites`` (an
        engine.render.sprites.Sprites): each point's size in its units and its style go
        to the vertex shader, which derives the diameter by the sprites' formula; a disc
        discards the fragments outside its radius. Inputs are copied through the host."""
        n = int(screen_xy.shape[0])
        host = lambda a, dtype: np.ascontiguousarray(to_host(a), dtype)
        size = np.broadcast_to(host(sprites.size, np.float32), (n,))
        style = np.broadcast_to(host(sprites.round, np.uint8), (n,)).copy()
        if sprites.world is not None:
            style |= host(sprites.world, np.uint8) << 1
        arrays = {"in_xy": host(screen_xy, np.float32), "in_depth": host(depth, np.float32),
                  "in_visible": host(visible, np.bool_).view(np.uint8),
                  "in_color": host(colors, np.uint8), "in_size": np.ascontiguousarray(size),
                  "in_style": style}
        for name, a in arrays.items():
            comps = _ATTRIBUTES[name][1]
            if a.shape != ((n, comps) if comps > 1 else (n,)):
                raise ValueError(f"{_ATTRIBUTES[name][2]} must have {n} rows, got {a.shape}")
        prog = self._programs["sprites"]
        w, h = (int(v) for v in viewport)
        prog["u_viewport"].value = (float(w), float(h))
        prog["u_size_range"].value = self.size_range
        prog["u_depth_to_w"].value = tuple(float(v) for v in sprites.depth_to_w)
        prog["u_focal"].value = float(sprites.focal_px)
        self._color_key = self._sizes_key = None  # the buffers now hold these
        if n == 0:
            return
        for name, a in arrays.items():
            self._upload(name, a)
        self.ctx.enable(self._mgl.DEPTH_TEST)
        self.ctx.depth_func = "<"
        self._vao("sprites").render(self._mgl.POINTS, vertices=n)

    def release(self):
        """Free the programs, buffers and vertex arrays (unregistering them from CUDA)."""
        self._interop.release()
        for obj in [*self._vaos.values(), *self._buffers.values(), *self._programs.values()]:
            obj.release()
        self._vaos.clear()
        self._buffers.clear()
        self._programs.clear()
