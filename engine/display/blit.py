"""Shows a software-rasterized image: upload to an RGBA8 texture, draw a full-screen quad.

The texture is created once and reallocated only when the image size changes; each
frame writes into it. With nearest filtering and texture size = viewport, each image
pixel lands on exactly one framebuffer pixel, so the window shows the same bytes.
"""

from __future__ import annotations

import numpy as np

from ..render.gl.glsl import load_glsl

__all__ = ["ImageBlit"]


class ImageBlit:
    """Draws (H, W, 4) uint8 RGBA images (row 0 = top) to the bound framebuffer."""

    def __init__(self, ctx):
        import moderngl

        self.ctx = ctx
        self._mgl = moderngl
        self._program = ctx.program(vertex_shader=load_glsl("blit.vert"),
                                    fragment_shader=load_glsl("blit.frag"))
        self._vao = ctx.vertex_array(self._program, [])  # positions come from gl_VertexID
        self._texture = None
        self.allocations = 0

    def draw(self, color: np.ndarray):
        """Upload ``color`` and cover the viewport with it (depth test off).

        Raises ValueError unless ``color`` is (H, W, 4) uint8.
        """
        a = np.ascontiguousarray(color)
        if a.dtype != np.uint8 or a.ndim != 3 or a.shape[2] != 4:
            raise ValueError(f"image must be (H, W, 4) uint8, got {a.shape} {a.dtype}")
        h, w = a.shape[:2]
        tex = self._texture
        if tex is None or tex.size != (w, h):
            if tex is not None:
                tex.release()
            tex = self._texture = self.ctx.texture((w, h), 4, alignment=1)
            tex.filter = (self._mgl.NEAREST, self._mgl.NEAREST)
            self.allocations += 1
        tex.write(a, alignment=1)
        tex.use(0)
        self._program["u_image"].value = 0
        self.ctx.disable(self._mgl.DEPTH_TEST)
        self._vao.render(self._mgl.TRIANGLE_STRIP, vertices=4)

    def release(self):
        """Free the texture, vertex array and program."""
        for obj in (self._texture, self._vao, self._program):
            if obj is not None:
                obj.release()
        self._texture = None
