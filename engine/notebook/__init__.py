"""Frustum in Jupyter (``pip install 'frustum[notebook]'``; docs/notebooks.md).

- ``Frame`` objects show inline (``Frame._repr_png_``), and so do the results of the
  offline renders (``RenderResult``: the clip as an HTML5 video or a GIF).
- ``show(x)``: a Scene, Node, geometry, 3D file or rendered clip, inline.
- ``RenderWidget(x)``: an interactive view (orbit/fly with the pointer, wheel and
  keys) on jupyter_rfb, rendered by the engine in the kernel; no display server or GL.
- ``InteractiveView``: the widget's toolkit-free core (events in, frames out).

``RenderWidget`` is imported on first use, so the rest works without jupyter_rfb.
"""

from .display import Media, render_still, show
from .view import InteractiveView

__all__ = ["InteractiveView", "Media", "RenderWidget", "render_still", "show"]


def __getattr__(name: str):
    if name == "RenderWidget":
        try:
            from .widget import RenderWidget
        except ImportError as exc:
            from ..errors import EngineError

            raise EngineError(f"RenderWidget needs jupyter_rfb ({exc.name} is missing): "
                              f"pip install 'frustum[notebook]'") from None
        globals()["RenderWidget"] = RenderWidget
        return RenderWidget
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
