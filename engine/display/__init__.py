"""Showing frames: a pyglet window, and the automatic choice between a window, an
offscreen GL image and a software image. pyglet and moderngl are imported lazily (GL
rasterizing itself lives in engine.render.gl).

Imports: engine.render, engine.io, engine.animation (camera-path playback) and the
helpers; never engine.game or the CLI.

    ImageBlit     a software-rasterized image as a full-screen textured quad
    Viewer        the pyglet window (controller events, per-frame callbacks, F12)
    present       window, else offscreen GL image, else software image (logged)
    viewport_size window points x pixel ratio -> framebuffer viewport (HiDPI)
"""

from .blit import ImageBlit
from .present import present, window_unavailable_reason
from .viewport import Viewport, viewport_size
from .window import CONTROLLER_EVENTS, Viewer

__all__ = [
    "CONTROLLER_EVENTS",
    "ImageBlit",
    "Viewer",
    "Viewport",
    "present",
    "viewport_size",
    "window_unavailable_reason",
]
