"""Rasterizing through OpenGL (moderngl): the engine's projected points and clip-space
surfaces drawn by GL on an offscreen EGL context for ``Renderer(raster="gl")``, and the
painters the window shares. moderngl is imported lazily, so the rest of the engine runs
without GL.

    OffscreenGL     a framebuffer on a headless EGL context -> Frame
    PointPainter    projected points as GL_POINTS
    SurfacePainter  clip-space triangles and lines, the engine's shading in GLSL
    draw_frame      one frame (surfaces, then points) into the bound framebuffer
    GLStages        GL as the rasterize and resolve stages of a Renderer
    load_glsl       GLSL sources from engine.shaders with #define lines
"""

from .offscreen import GLUnavailable, OffscreenGL, create_egl_context, draw_frame
from .points import PointPainter
from .stages import GLStages
from .surfaces import SurfacePainter

__all__ = ["GLStages", "GLUnavailable", "OffscreenGL", "PointPainter", "SurfacePainter",
           "create_egl_context", "draw_frame"]
