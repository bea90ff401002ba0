"""GL's transparency pass (engine.render.transparency): depth peeling of the BLEND
triangles into LAYERS colour + depth targets and a count of the fragments beyond them.

After the opaque frame (and its multisample resolve) the BLEND triangles are drawn
LAYERS times more, at one sample per pixel, each pass into its own RGBA8 colour and
depth texture with GL's depth test (``<``) and the fragment shader's discards
(shaders/surface.frag ``u_peel``): in front of the opaque frame's depth (its depth
texture) and, after the first, behind the previous layer's depth (Everitt, "Interactive
order-independent transparency", NVIDIA 2001). Layer i thus holds
each pixel's i-th nearest transparent fragment, shaded by the same fragment shader as
opaque ones, its base alpha written as alpha. The BLEND draws go nearest first
(SurfacePainter's front-to-back order), so in each pass the depth test rejects the
farther ones before they are shaded. A layer with no fragment (an occlusion query)
ends the peeling. When all LAYERS are filled, a last pass of a count-only program
(shaders/peel_count.*) adds 1 per fragment behind the last layer into a float target:
the overflow of the software k-buffer. With fog, each layer is fogged by its own depth
(the fog pass, engine.render.gl.atmosphere). The layers are read back and
composited on the host by the compiled twin of ``engine.render.transparency.composite_layers``
(engine.render.backends.numba_layers; Numba is a plain dependency), as the Numba backend
composites its own: the NumPy one took 160 ms of a 640x480 frame of 100 layers.

Depth alone orders the layers here, so of coplanar transparent fragments (equal depth)
one is kept, where the software k-buffer keeps both (ties by primitive id).
"""

from __future__ import annotations

import numpy as np

from ..backends.numba_layers import composite_layers_numba
from .surfaces import PEEL_UNITS

__all__ = ["DepthPeeler"]


class DepthPeeler:
    """The transparency targets of one size and layer count, and the passes into them.

    Args:
        ctx: the moderngl context (current while any method runs).
        size: (width, height) in pixels.
        layers: the k-buffer's depth (engine.render.transparency.LAYERS).
    """

    def __init__(self, ctx, size, layers: int):
        self.ctx, self.size, self.layers = ctx, tuple(size), layers
        self.color = [ctx.texture(self.size, 4) for _ in range(layers)]
        self.depth = [ctx.depth_texture(self.size) for _ in range(layers)]
        for d in self.depth:
            d.compare_func = ""  # read as depth values, not as a shadow comparison
        self.fbos = [ctx.framebuffer(color_attachments=[c], depth_attachment=d)
                     for c, d in zip(self.color, self.depth)]
        self.count = ctx.texture(self.size, 1, dtype="f4")
        self.count_fbo = ctx.framebuffer(color_attachments=[self.count])  # cleared here
        # drawn here: the count with the last layer's depth to test against, not written
        self._count_behind = ctx.framebuffer(color_attachments=[self.count],
                                             depth_attachment=self.depth[-1])
        self._count_behind.depth_mask = False
        self._query = ctx.query(samples=True)
        self.filled = 0  # layers the last peel drew fragments into
        # the opaque frame of a window (whose own depth buffer is not a texture): drawn
        # here, peeled against, composited and shown (engine.display.window)
        self._opaque = None

    def opaque_target(self):
        """A colour + depth-texture framebuffer of this size to draw the opaque frame
        into when the caller's own depth buffer cannot be sampled (a window's)."""
        if self._opaque is None:
            ctx = self.ctx
            self._opaque = ctx.framebuffer(color_attachments=[ctx.renderbuffer(self.size, 4)],
                                           depth_attachment=ctx.depth_texture(self.size))
        return self._opaque

    def read_opaque(self) -> np.ndarray:
        """(H, W, 4) uint8 colour of ``opaque_target``, rows from the top."""
        w, h = self.size
        data = self._opaque.read(components=4, alignment=1)
        return np.frombuffer(data, np.uint8).reshape(h, w, 4)[::-1]

    def peel(self, painter, inputs, opaque_depth, fog=None):
        """Draw the layers and the overflow count of ``inputs``'s BLEND triangles with
        the SurfacePainter ``painter`` (which drew the opaque frame), against the depth
        texture ``opaque_depth`` of the opaque frame. ``fog``: (the frame's
        engine.render.gl.atmosphere.AtmospherePass, its AtmosphereParameters): each
        layer is drawn into that pass's target, then fogged by its own depth into its
        layer target (the fog keeps the alpha; the sky it writes where the layer is
        empty is never read).

        An occlusion query counts each layer's fragments: a layer with none ends the
        peeling (every later one would be empty too), so a pixel-sparse or shallow
        stack costs only the passes it fills, and the overflow count runs only when
        every layer was filled (Everitt 2001 ends peeling the same way)."""
        import moderngl

        ctx = self.ctx
        opaque_depth.compare_func = ""
        self.filled = 0
        for i, fbo in enumerate(self.fbos):
            into = fbo if fog is None else fog[0].fbo
            into.use()
            into.clear(0.0, 0.0, 0.0, 0.0, depth=1.0)
            opaque_depth.use(PEEL_UNITS[0])  # (the fog pass binds its own textures)
            if i:
                self.depth[i - 1].use(PEEL_UNITS[1])
            with self._query:
                painter.draw_blended(inputs, 1 if i == 0 else 2)
            if not self._query.samples:
                return
            if fog is not None:
                fog[0].apply_into(fbo, fog[1])
            self.filled = i + 1
        # the count: the depth test (">", against the last layer's depth, not written)
        # keeps the fragments behind it, the count program those in front of the opaque
        # frame; 1 each, added
        self.count_fbo.use()
        self.count_fbo.clear(0.0, 0.0, 0.0, 0.0)
        self._count_behind.use()
        opaque_depth.use(PEEL_UNITS[0])
        ctx.enable(moderngl.DEPTH_TEST | moderngl.BLEND)
        ctx.depth_func = ">"
        ctx.blend_func = (moderngl.ONE, moderngl.ONE)
        try:
            painter.count_blended(inputs)
        finally:
            ctx.blend_func = moderngl.DEFAULT_BLENDING
            ctx.disable(moderngl.BLEND)
            ctx.depth_func = "<"

    def read(self):
        """(rgba (F, P, 4) uint8, present (F, P) bool, overflow (P,) int64) of the F
        layers the last ``peel`` filled, rows from the top (GL's bottom-up rows flipped),
        P = W * H: the arguments of ``composite_layers``."""
        w, h = self.size

        def flip(data, dtype):
            return np.frombuffer(data, dtype).reshape(h, w, -1)[::-1].reshape(w * h, -1)

        used = range(self.filled)
        rgba = np.stack([flip(self.color[i].read(alignment=1), np.uint8) for i in used])
        depth = np.stack([flip(self.depth[i].read(alignment=1), np.float32)[:, 0]
                          for i in used])
        if self.filled < self.layers:  # fewer layers than kept: nothing beyond them
            count = np.zeros(w * h, np.int64)
        else:
            count = np.rint(flip(self.count.read(alignment=1), np.float32)[:, 0]).astype(np.int64)
        return rgba, depth < 1.0, count

    def composite(self, color) -> np.ndarray:
        """(H, W, 4) uint8 opaque colour (rows from the top) with the layers of the last
        ``peel`` composited over it (its compiled twin of
        engine.render.transparency.composite_layers); the colour itself where that
        ``peel`` found no BLEND fragment in front of the opaque frame."""
        if not self.filled:
            return color
        w, h = self.size
        flat = np.ascontiguousarray(color, np.uint8).reshape(-1, 4)
        return composite_layers_numba(flat, *self.read()).reshape(h, w, 4)

    def release(self):
        for obj in (*self.fbos, *self.color, *self.depth, self.count_fbo, self._count_behind,
                    self.count):  # (a moderngl Query has no release)
            obj.release()
        if self._opaque is not None:
            for att in (*self._opaque.color_attachments, self._opaque.depth_attachment):
                att.release()
            self._opaque.release()

