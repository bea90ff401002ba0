"""The scene's fog and sky on GL frames (``Renderer(raster="gl")`` and GL windows): the
frame is drawn into a colour + depth texture target, then one full-screen pass
(``shaders/atmosphere.frag``) writes the fogged colour, the sky where nothing was drawn,
and the same depth into the framebuffer that is read back or shown. A multisampled
frame skips the target: its resolve (engine.render.gl.multisample) is the same shader,
fogging each sample by its own depth before the samples are mixed. The formulas are
engine.render.atmosphere's, evaluated per pixel in GLSL floats; the parameters come from
``atmosphere_parameters``, the same as the compiled host pass's.
"""

from __future__ import annotations

import numpy as np

from .glsl import load_glsl

__all__ = ["AtmospherePass"]


class AtmospherePass:
    """A texture target of one size that frames are drawn into, and the pass that
    applies the fog and sky from it.

    Args:
        ctx: the moderngl context (current while any method runs).
        size: (width, height) in pixels.
    """

    def __init__(self, ctx, size):
        self.ctx, self.size = ctx, tuple(size)
        self.color = ctx.texture(self.size, 4)
        self.depth = ctx.depth_texture(self.size)
        self.depth.compare_func = ""  # read as values, not as a shadow comparison
        self.fbo = ctx.framebuffer(color_attachments=[self.color], depth_attachment=self.depth)
        self.program = ctx.program(vertex_shader=load_glsl("blit.vert"),
                                   fragment_shader=load_glsl("atmosphere.frag"))
        self.program["u_color"].value = 0
        self.program["u_depth"].value = 1
        self.vao = ctx.vertex_array(self.program, [])
        self._env = self._env_source = None  # the environment sky's texture, and its array

    def apply_into(self, target, parameters) -> None:
        """Draw the fogged frame (and its depth) from this target into ``target``.

        Args:
            target: the single-sample moderngl framebuffer written (colour and depth).
            parameters: engine.render.atmosphere.AtmosphereParameters of the frame.
        """
        import moderngl

        target.use()
        self.set_parameters(self.program, parameters)
        self.color.use(0)
        self.depth.use(1)
        self.ctx.enable(moderngl.DEPTH_TEST)
        self.ctx.depth_func = "1"  # every pixel written, its depth too
        try:
            self.vao.render(moderngl.TRIANGLE_STRIP, vertices=4)
        finally:
            self.ctx.depth_func = "<"

    def set_parameters(self, prog, parameters) -> None:
        """Set the uniforms of ``prog`` (a shaders/atmosphere.frag program: this pass's
        or the multisample resolve's, engine.render.gl.multisample) from ``parameters``
        (AtmosphereParameters) and bind the environment sky's texture to unit 2; the
        caller binds the frame's colour and depth to units 0 and 1."""
        p = parameters
        values = {
            "u_size": self.size,
            "u_inverse_projection": tuple(p.inverse_projection.astype(np.float32).T.ravel()),
            "u_camera_rotation": tuple(p.camera_rotation.astype(np.float32).T.ravel()),
            "u_orthographic": bool(p.orthographic),
            "u_fog_mode": int(p.fog_mode),
            "u_fog": tuple(float(v) for v in p.fog),
            "u_fog_color": tuple(float(v) for v in p.fog_color),
            "u_fog_to_sky": bool(p.fog_to_sky),
            "u_sky": len(p.sky) > 0,
            "u_env_sky": p.environment is not None,
            "u_exposure": float(p.exposure),
            "u_pbr_neutral": p.tone_map == "pbr-neutral",
            "u_env_map": 2,
        }
        if len(p.sky):
            for name, row in zip(("u_sky_horizon", "u_sky_zenith", "u_sky_ground"), p.sky):
                values[name] = tuple(float(v) for v in row)
        for name, value in values.items():
            uniform = prog.get(name, None)  # the GLSL compiler drops unused uniforms
            if uniform is not None:
                uniform.value = value
        # the surface painter leaves sampler objects bound (a mipmapped texture's
        # LINEAR_MIPMAP_LINEAR on unit 0): they would override these textures' own
        # filters, and a mipmap filter on a texture without levels reads zero
        self.ctx.clear_samplers()
        if p.environment is not None:
            self._environment(p.environment).use(2)

    def _environment(self, radiance):
        """The RGB32F texture of the environment sky's (H, W, 3) radiance: bilinear, u
        repeating, v clamped (engine.render.ibl.sample_equirect); made once per array."""
        if self._env_source is not radiance:
            import moderngl

            if self._env is not None:
                self._env.release()
            h, w, _ = radiance.shape
            self._env = self.ctx.texture((w, h), 3, np.ascontiguousarray(radiance, np.float32)
                                         .tobytes(), dtype="f4", alignment=4)
            self._env.filter = (moderngl.LINEAR, moderngl.LINEAR)
            self._env.repeat_x, self._env.repeat_y = True, False
            self._env_source = radiance
        return self._env

    def release(self):
        for obj in (self.vao, self.program, self.fbo, self.color, self.depth, self._env):
            if obj is not None:
                obj.release()
