"""``RenderWidget``: an interactive view in a notebook cell, on jupyter_rfb (a remote
frame buffer: the kernel renders, the browser shows the image and sends input back).

It needs no display server and no GL: frames come from the engine's renderer (the
software rasterizer on a CPU, the CUDA path on a GPU machine with ``backend="cupy"`` or
"auto") and travel as JPEG while the view moves and as a lossless PNG when it settles
(jupyter_rfb's ``quality``). Input handling and units are ``InteractiveView``'s:
pointer coordinates in framebuffer pixels (CSS pixels x devicePixelRatio), frames at
the framebuffer size, so HiDPI screens get sharp frames.

    w = engine.RenderWidget("model.glb", size=(640, 400))
    w            # last expression of a cell: shows it; drag to orbit, wheel to zoom
    w.camera     # the camera the drags move
    w.play(model.clips[0])   # play a file's animation (then w.player.crossfade(...))
"""

from __future__ import annotations

from jupyter_rfb import RemoteFrameBuffer

from .view import InteractiveView

__all__ = ["RenderWidget"]


class RenderWidget(RemoteFrameBuffer):
    """An interactive view of ``source`` (a Scene, Node, geometry, 3D file or 'demo').

    Args:
        size: (width, height) of the view in CSS pixels (the frame is that times the
            browser's devicePixelRatio).
        controller: "orbit" (left drag turns around the scene, right/middle drag pans,
            wheel zooms, arrows and +/- keys) or "fly" (WASD, Q/E, Shift; drag looks;
            wheel sets the speed). Double-click returns to the starting view.
        camera, backend, point_size, draw, shading, background: as ``engine.show``.
        kwargs: passed to ``jupyter_rfb.RemoteFrameBuffer`` (``quality``,
            ``max_buffered_frames``, ...).

    Attributes: ``view`` (the InteractiveView), ``camera``, ``controller``,
    ``renderer``, ``scene``; ``on_frame`` is a list of callables ``f(widget, frame)``
    called after each frame is produced.
    """

    _event_compatibility = 2  # jupyter_rfb's current event dicts ('type', 'ratio')

    def __init__(self, source, size=(640, 400), controller: str = "orbit", camera=None,
                 backend=None, point_size=None, draw=None, shading=None, background=None,
                 **kwargs):
        view = InteractiveView(source, size, 1.0, controller, camera, backend, point_size,
                               draw, shading, background)
        w, h = view.logical_size
        kwargs.setdefault("css_width", f"{w}px")
        kwargs.setdefault("css_height", f"{h}px")
        super().__init__(**kwargs)
        self.view = view
        self.on_frame: list = []

    @property
    def camera(self):
        return self.view.camera

    @property
    def controller(self):
        return self.view.controller

    @property
    def renderer(self):
        return self.view.renderer

    @property
    def scene(self):
        return self.view.scene

    def handle_event(self, event):
        """jupyter_rfb calls this for every browser event."""
        if self.view.handle_event(event):
            self.request_draw()

    def get_frame(self):
        """jupyter_rfb calls this to draw: one frame at the framebuffer size."""
        if self.view.closed:
            return None
        frame = self.view.frame()
        if self.view.animating:
            self.request_draw()  # held keys keep the camera moving, clips play
        for callback in list(self.on_frame):
            callback(self, frame)
        return frame

    def play(self, clip, loop: bool = True, speed: float = 1.0):
        """Play ``clip`` in the view (``InteractiveView.play``): frames keep coming
        while it plays. Returns the ``ClipPlayer`` (``crossfade(clip, seconds)`` to
        blend into another clip, ``playing = False`` to pause)."""
        player = self.view.play(clip, loop, speed)
        self.request_draw()
        return player

    @property
    def player(self):
        return self.view.player

    def redraw(self):
        """Draw a new frame (after the scene or camera was changed from code)."""
        self.request_draw()
