"""Showing a scene wherever possible: a window if a display works, else an image drawn
with offscreen GL (EGL), else an image from the software rasterizer.

Each fallback logs one line on the ``engine`` logger saying why, so ``frustum view``
on a server still produces a picture, and on a machine with no display, no GL and no
GPU the PNG comes from the NumPy rasterizer.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from ..io.image import save_image
from ..render.gl import GLUnavailable

__all__ = ["present", "window_unavailable_reason"]

log = logging.getLogger("engine")


def window_unavailable_reason() -> str | None:
    """Why no window can be opened here, as far as can be told without opening one;
    None when worth trying.

    On Linux (X11) a window needs $DISPLAY unless pyglet runs headless
    (``PYGLET_HEADLESS=1``: EGL windows with no screen, for tests and servers).
    """
    if os.environ.get("PYGLET_HEADLESS", "").lower() in ("1", "true"):
        return None
    if "pyglet" in sys.modules and sys.modules["pyglet"].options["headless"]:
        return None
    if sys.platform.startswith("linux") and not os.environ.get("DISPLAY"):
        return "no display: $DISPLAY is not set"
    return None


def present(renderer, raster="auto", out="frustum-view.png", controller=None,
            on_frame=None, max_frames=None, **viewer_kwargs) -> Path | None:
    """Show ``renderer``'s scene in a window, or write it to ``out`` when no window opens.

    Args:
        renderer: an ``engine.Renderer``.
        raster: "auto", "gl" or "software" (see ``Viewer``). Without a window, "auto"
            and "gl" draw with offscreen GL, falling back to the software rasterizer
            when no GL context can be created; "software" uses the rasterizer directly.
        out: PNG path written when no window can be opened.
        controller: passed to ``Viewer``.
        on_frame: passed to ``Viewer``.
        max_frames: close the window after this many frames (None: until Esc/close).
        **viewer_kwargs: further keyword arguments, passed to ``Viewer``.

    Returns:
        None when a window was shown; otherwise the path of the written image.

    Raises:
        ValueError for an unknown raster mode; OSError when ``out`` cannot be written.
    """
    if raster not in ("auto", "gl", "software"):
        raise ValueError(f"raster must be 'auto', 'gl' or 'software', got {raster!r}")
    reason = window_unavailable_reason()
    if reason is None:
        try:
            from .window import Viewer

            viewer = Viewer(renderer, raster=raster, controller=controller,
                            on_frame=on_frame, **viewer_kwargs)
        except Exception as exc:  # noqa: BLE001 - pyglet raises many types (display, config, GL)
            reason = f"cannot open a window: {type(exc).__name__}: {exc}"
        else:
            viewer.run(max_frames)
            return None
    path = Path(out)
    log.info("%s; writing %s instead", reason, path)
    if raster != "software":
        renderer.raster = "gl"
        try:
            return save_image(path, renderer.render(depth=False).color)
        except GLUnavailable as exc:
            log.info("offscreen GL is unavailable (%s); using the software rasterizer", exc)
    renderer.raster = "software"
    return save_image(path, renderer.render(depth=False).color)
