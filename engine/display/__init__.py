"""Showing projected points: offscreen GL (EGL), a pyglet window, and the automatic
choice between them. Only this package imports moderngl and pyglet, lazily, so the rest
of the engine runs without GL.

    OffscreenGL   GL_POINTS into a framebuffer on a headless EGL context -> Frame
    PointPainter  the GL_POINTS drawing shared by the offscreen and window paths
    ImageBlit     a software-rasterized image as a full-screen textured quad
    Viewer        the pyglet window (controller events, per-frame callbacks, F12)
    present       window, else offscreen GL image, else software image (logged)
    viewport_size window points x pixel ratio -> framebuffer viewport (HiDPI)
"""

from .blit import ImageBlit
from .offscreen import GLUnavailable, OffscreenGL, create_egl_context
from .points import PointPainter
from .present import present, window_unavailable_reason
from .viewport import Viewport, viewport_size
from .window import CONTROLLER_EVENTS, Viewer

__all__ = [
    "CONTROLLER_EVENTS",
    "GLUnavailable",
    "ImageBlit",
    "OffscreenGL",
    "PointPainter",
    "Viewer",
    "Viewport",
    "create_egl_context",
    "present",
    "viewport_size",
    "window_unavailable_reason",
]
