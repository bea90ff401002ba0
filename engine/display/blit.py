"""Shows a software-rasterized image: upload to an RGBA8 texture, draw a full-screen quad.

The texture is created once and reallocated only when the image size changes; each
frame writes into it. With nearest filtering and texture size = viewport, each image
pixel lands on exactly one framebuffer pixel, so the window shows the same bytes.

A device (CuPy) image, the cupy backend's frame from ``Renderer.render(host=False)``, is
copied into the texture by CUDA-GL interop (device to device); where interop is
unavailable the first frame logs why and frames are copied through the host instead.
"""

from __future__ import annotations

import numpy as np

from ..arrays import to_host
from ..render.gl.glsl import load_glsl
from ..render.gl.interop import InteropSlot, InteropUnavailable, is_device_array

__all__ = ["ImageBlit"]


class ImageBlit:
    """Draws (H, W, 4) uint8 RGBA images (row 0 = top) to the bound framebuffer."""

    def __init__(self, ctx, interop_factory=None):
        import moderngl

        self.ctx = ctx
        self._interop = InteropSlot() if interop_factory is None else InteropSlot(interop_factory)
        self.host_uploads = 0  # frames written from host memory
        self._mgl = moderngl
        self._program = ctx.program(vertex_shader=load_glsl("blit.vert"),
                                    fragment_shader=load_glsl("blit.frag"))
        self._vao = ctx.vertex_array(self._program, [])  # positions come from gl_VertexID
        self._texture = None
        self.allocations = 0

    @property
    def interop(self):
        """The CudaGLInterop in use, or None (not needed yet, or unavailable)."""
        return self._interop.interop

    def draw(self, color):
        """Upload ``color`` and cover the viewport with it (depth test off).

        ``color``: (H, W, 4) uint8 RGBA, row 0 = top; a NumPy array, or a CuPy array
        (copied by CUDA-GL interop, or through the host where that is unavailable).

        Raises ValueError unless ``color`` is (H, W, 4) uint8.
        """
        if color.dtype != np.uint8 or color.ndim != 3 or color.shape[2] != 4:
            raise ValueError(f"image must be (H, W, 4) uint8, got {tuple(color.shape)} "
                             f"{color.dtype}")
        h, w = int(color.shape[0]), int(color.shape[1])
        tex = self._texture
        if tex is None or tex.size != (w, h):
            if tex is not None:
                if self._interop.interop is not None:
                    self._interop.interop.forget(tex)
                tex.release()
            tex = self._texture = self.ctx.texture((w, h), 4, alignment=1)
            tex.filter = (self._mgl.NEAREST, self._mgl.NEAREST)
            self.allocations += 1
        interop = self._interop.get() if is_device_array(color) else None
        copied = False
        if interop is not None:
            try:
                interop.copy_to_texture(tex, color if color.flags.c_contiguous else color.copy())
                copied = True
            except InteropUnavailable as exc:
                self._interop.disable(str(exc))
        if not copied:
            tex.write(np.ascontiguousarray(to_host(color)), alignment=1)
            self.host_uploads += 1
        tex.use(0)
        self._program["u_image"].value = 0
        self.ctx.disable(self._mgl.DEPTH_TEST)
        self._vao.render(self._mgl.TRIANGLE_STRIP, vertices=4)

    def release(self):
        """Free the texture, vertex array and program (unregistering them from CUDA)."""
        self._interop.release()
        for obj in (self._texture, self._vao, self._program):
            if obj is not None:
                obj.release()
        self._texture = None
