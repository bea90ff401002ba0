"""OpenGL as the rasterize and resolve stages (``Renderer(raster="gl")``): GL draws the
vertex stage's output of the renderer's compute backend — clip-space positions and
varyings through a pass-through vertex shader, the engine's shading in the fragment
shader — so every vertex computation exists once per compute backend and never in GLSL.
On the CUDA backend the vertex stage's device buffers reach GL by CUDA-GL interop where
it works (engine.render.gl.interop)."""

from __future__ import annotations

from ..atmosphere import atmosphere_parameters
from ..backends.stages import Backend

__all__ = ["GLStages"]


class GLStages(Backend):
    """The stage contract (engine.render.backends.stages) with GL rasterizing and shading.

    Args:
        compute: the Backend whose vertex stage feeds GL.
        offscreen: the OffscreenGL context and framebuffer drawn into.
    """

    name = "gl"
    atmosphere_reads_depth = False  # the fog and sky are drawn in GL (rasterize)
    samples = 1  # GL multisampling (Renderer.msaa), engine.render.gl.multisample

    def __init__(self, compute: Backend, offscreen):
        super().__init__()
        self.compute = compute
        self.offscreen = offscreen
        self.projector = compute.projector
        self._size = None  # of the last resolved frame: where read() finds its depth
        self._color = None  # the colour Frame read back by rasterize, for resolve

    def vertex_stage(self, batch, prims, view):
        return self.compute.vertex_stage(batch, prims, view)

    def rasterize(self, inputs, view):
        """Draw the frame into the framebuffer, the scene's fog and sky applied by a
        full-screen pass (engine.render.gl.atmosphere), and read its colour back in the
        same span of the context being current (OffscreenGL.draw_frame); GL keeps its
        depth buffer there, so there are no visibility keys to return (None)."""
        self._color = self.offscreen.draw_frame(
            inputs, view.size, view.point_size, view.background,
            colors_revision=view.vertex_revision, samples=self.samples,
            atmosphere=atmosphere_parameters(view.scene, view.camera), read=True)

    def resolve(self, keys, inputs, view):
        """The fragments GL shaded while drawing: the colour read back by ``rasterize``
        as a host Frame (depth None; ``read`` reads it when the caller wants it)."""
        self._size = view.size
        frame, self._color = self._color, None
        return frame

    def atmosphere(self, frame, view):
        """Nothing: GL applied the fog and sky while drawing (``rasterize``,
        engine.render.gl.atmosphere), so the frame read back has them."""

    def read(self, frame, depth: bool = True, host: bool = True, copy: bool = True):
        """The frame, with GL's depth buffer read back only when ``depth`` is True (about
        3.7 MB at 1280x720 that ``render(depth=False)`` does not move)."""
        if not depth:
            return frame
        return type(frame)(frame.color, self.offscreen.read_depth(self._size))
