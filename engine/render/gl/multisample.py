"""GL multisampling for ``Renderer(raster="gl", msaa=S)``: the frame is drawn into a
multisampled colour + depth target, then resolved into the single-sample framebuffer by
a full-screen pass (``shaders/atmosphere.frag`` with ``MULTISAMPLE``) that averages each
pixel's samples in linear light and keeps the nearest sample's depth, as the software
path does (engine.render.msaa); with the scene's fog or sky each sample is fogged by its
own depth first (an empty sample shows the sky), as the software path fogs each of its
sample layers. A plain ``glBlitFramebuffer`` resolve would average the stored
sRGB bytes instead, darkening every edge.

The sample positions are the driver's: Mesa llvmpipe offers only 4 samples (a 2x request
gets 4, and the resolve averages every sample stored, ``textureSamples``) in its own
pattern; a request above ``GL_MAX_SAMPLES`` is an EngineError. So GL
frames agree with the software path in total coverage along an edge, not pixel by
pixel (tests/render/test_parity.py).
"""

from __future__ import annotations

from ...errors import EngineError
from .glsl import load_glsl

__all__ = ["MultisampleTarget"]


class MultisampleTarget:
    """A multisampled framebuffer of one size and sample count, and its resolve pass.

    Args:
        ctx: the moderngl context (current while any method runs).
        size: (width, height) in pixels.
        samples: samples per pixel requested (the driver may give more, never fewer).

    Raises:
        EngineError: ``samples`` above the context's GL_MAX_SAMPLES.
    """

    def __init__(self, ctx, size, samples: int):
        limit = int(ctx.max_samples)
        if samples > limit:
            raise EngineError(f"msaa={samples}: this GL driver ({ctx.info['GL_RENDERER']}) "
                              f"offers at most {limit} samples per pixel")
        self.ctx, self.size, self.samples = ctx, tuple(size), samples
        self.color = ctx.texture(self.size, 4, samples=samples)
        self.depth = ctx.depth_texture(self.size, samples=samples)
        self.fbo = ctx.framebuffer(color_attachments=[self.color], depth_attachment=self.depth)
        self.program = ctx.program(vertex_shader=load_glsl("blit.vert"),
                                   fragment_shader=load_glsl("atmosphere.frag", ("MULTISAMPLE",)))
        self.program["u_color"].value = 0
        self.program["u_depth"].value = 1
        # the environment sky's unit (AtmospherePass.set_parameters binds it there): on
        # unit 0 by default, beside the sampler2DMS colour, the draw would fail
        self.program["u_env_map"].value = 2
        self.vao = ctx.vertex_array(self.program, [])

    def resolve_into(self, target, atmosphere=None):
        """Resolve into the single-sample framebuffer ``target`` (its colour and depth
        overwritten: the depth test passes always while the pass runs). ``atmosphere``:
        (the frame's engine.render.gl.atmosphere.AtmospherePass, its
        AtmosphereParameters) to fog each sample first; None for none."""
        import moderngl

        ctx = self.ctx
        target.use()
        if atmosphere is None:
            for name, value in (("u_fog_mode", -1), ("u_sky", False), ("u_env_sky", False)):
                self.program[name].value = value
        else:
            atmosphere[0].set_parameters(self.program, atmosphere[1])
        self.color.use(0)
        self.depth.use(1)
        requested = self.program.get("u_samples", None)  # unused where GLSL can ask
        if requested is not None:
            requested.value = self.samples
        ctx.enable(moderngl.DEPTH_TEST)
        ctx.depth_func = "1"
        try:
            self.vao.render(moderngl.TRIANGLE_STRIP, vertices=4)
        finally:
            ctx.depth_func = "<"

    def release(self):
        for obj in (self.vao, self.program, self.fbo, self.color, self.depth):
            obj.release()
