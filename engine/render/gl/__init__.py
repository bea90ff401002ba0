"""Rasterizing through OpenGL (moderngl): GL_POINTS on an offscreen EGL context for
``Renderer(raster="gl")``, and the point painter and GLSL loader the window shares.
moderngl is imported lazily, so the rest of the engine runs without GL.

    OffscreenGL   GL_POINTS into a framebuffer on a headless EGL context -> Frame
    PointPainter  the GL_POINTS drawing shared by the offscreen and window paths
    load_glsl     GLSL sources from engine.shaders with #define lines
"""

from .offscreen import GLUnavailable, OffscreenGL, create_egl_context
from .points import PointPainter

__all__ = ["GLUnavailable", "OffscreenGL", "PointPainter", "create_egl_context"]
