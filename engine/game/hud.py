"""HUD: a text overlay (FPS, counts, score, messages) drawn onto frames with Pillow.

The same drawing serves every output: headless and software frames get the text drawn
straight into their (H, W, 4) uint8 RGBA colour buffer; a GL window draws the
transparent overlay image from ``overlay(size)`` over its frame with alpha blending.
Text is laid out in screen pixels, origin top-left, y down (the engine's screen frame).

The font is Pillow's built-in scalable default font (``ImageFont.load_default(size)``,
FreeType), so no font file is needed and output is identical across machines with the
same Pillow version.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Hud"]


class Hud:
    """Ordered text lines at the top-left, plus an optional centred banner.

    Args:
        font_size: text height in pixels.
        color: RGBA (0-255) of the text; a 1-pixel black shadow keeps it readable.
        margin: distance in pixels from the top-left corner.

    Usage: ``hud["score"] = "Score: 3"`` sets (or replaces) a line, ``del hud["score"]``
    removes it, ``hud.banner = "GAME OVER"`` shows a large centred message (None hides it).
    """

    def __init__(self, font_size: int = 14, color=(255, 255, 255, 255), margin: int = 6):
        if int(font_size) < 4:
            raise ValueError(f"font_size must be at least 4 pixels, got {font_size}")
        self.font_size = int(font_size)
        self.color = tuple(int(c) for c in color)
        self.margin = int(margin)
        self.enabled = True
        self.banner: str | None = None
        self._lines: dict[str, str] = {}
        self._fonts: dict[int, object] = {}

    def __setitem__(self, key: str, text) -> None:
        self._lines[str(key)] = str(text)

    def __getitem__(self, key: str) -> str:
        return self._lines[key]

    def __delitem__(self, key: str) -> None:
        self._lines.pop(key, None)

    def __contains__(self, key: str) -> bool:
        return key in self._lines

    @property
    def lines(self) -> list[str]:
        return list(self._lines.values())

    def _font(self, size: int):
        from PIL import ImageFont

        if size not in self._fonts:
            self._fonts[size] = ImageFont.load_default(size=size)
        return self._fonts[size]

    def _draw_text(self, draw, width: int, height: int):
        font = self._font(self.font_size)
        y = self.margin
        shadow = (0, 0, 0, self.color[3])
        for line in self._lines.values():
            draw.text((self.margin + 1, y + 1), line, font=font, fill=shadow)
            draw.text((self.margin, y), line, font=font, fill=self.color)
            y += int(self.font_size * 1.3)
        if self.banner:
            big = self._font(max(self.font_size * 2, min(width, height) // 10))
            x0, y0, x1, y1 = draw.textbbox((0, 0), self.banner, font=big)
            pos = ((width - (x1 - x0)) / 2 - x0, (height - (y1 - y0)) / 2 - y0)
            draw.text((pos[0] + 2, pos[1] + 2), self.banner, font=big, fill=shadow)
            draw.text(pos, self.banner, font=big, fill=self.color)

    def draw(self, color: np.ndarray) -> np.ndarray:
        """Draw the HUD into ``color`` ((H, W, 4) uint8 RGBA, host) in place; returns it.

        Raises ValueError for another shape or dtype.
        """
        from PIL import Image, ImageDraw

        if color.dtype != np.uint8 or color.ndim != 3 or color.shape[2] != 4:
            raise ValueError(f"HUD draws on (H, W, 4) uint8 images, got {color.shape} {color.dtype}")
        if not self.enabled or (not self._lines and not self.banner):
            return color
        h, w = color.shape[:2]
        img = Image.fromarray(color, "RGBA")
        self._draw_text(ImageDraw.Draw(img), w, h)
        color[...] = np.asarray(img)
        return color

    def overlay(self, size) -> np.ndarray:
        """The HUD alone on a transparent (H, W, 4) uint8 RGBA image of ``size`` = (W, H),
        for alpha-blending over a GL frame."""
        from PIL import Image, ImageDraw

        w, h = int(size[0]), int(size[1])
        img = Image.new("RGBA", (w, h), (0, 0, 0, 0))
        if self.enabled:
            self._draw_text(ImageDraw.Draw(img), w, h)
        return np.asarray(img).copy()
