"""Window size -> framebuffer viewport (HiDPI aware).

On a HiDPI display a window is measured in logical points while GL draws into a
framebuffer of ``points * pixel_ratio`` pixels (macOS "backing scale factor", Wayland/X11
scale). The engine renders at framebuffer resolution, and the camera aspect is the
framebuffer's width / height.
"""

from __future__ import annotations

from typing import NamedTuple


class Viewport(NamedTuple):
    """Framebuffer size in pixels and its aspect ratio (width / height)."""

    width: int
    height: int
    aspect: float


def viewport_size(window_size, pixel_ratio: float = 1.0) -> Viewport:
    """Viewport for a window of ``window_size`` = (width, height) logical points.

    Example: (800, 600) at pixel ratio 2 -> Viewport(1600, 1200, 4/3).
    Sizes are rounded to whole pixels and kept >= 1 (a minimised window reports 0x0).

    Raises ValueError for a ratio that is not positive and finite.
    """
    ratio = float(pixel_ratio)
    if not (ratio > 0 and ratio != float("inf")):
        raise ValueError(f"pixel ratio must be positive and finite, got {pixel_ratio!r}")
    w = max(1, round(float(window_size[0]) * ratio))
    h = max(1, round(float(window_size[1]) * ratio))
    return Viewport(w, h, w / h)
