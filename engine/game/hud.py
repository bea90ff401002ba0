"""HUD: a text overlay (FPS, counts, score, messages, labels on objects) drawn onto frames.

The same drawing serves every output: headless and software frames get the text blended
straight into their (H, W, 4) uint8 RGBA colour buffer; a GL window draws the transparent
overlay image from ``overlay(size)`` over its frame with alpha blending. Text is laid out
in screen pixels of the frame (the framebuffer), origin top-left, y down (the engine's
screen frame).

Cost: each distinct text is rasterised once with Pillow into a small RGBA sprite (with a
1-pixel black shadow) and kept in a cache; a frame only alpha-blends the sprites of the
current lines, banner and labels into their small rectangles with NumPy, so a HUD whose
text does not change costs tens of microseconds per frame, and one whose score changes
re-draws only that line's text.

Labels: ``hud.label(key, text, at)`` shows ``text`` centred above a world point (or a
node's origin, followed as it moves); ``draw``/``overlay`` place them with the camera
they are given (labels behind the camera or outside the view are not drawn).

The font is Pillow's built-in scalable default font (``ImageFont.load_default(size)``,
FreeType), so no font file is needed and output is identical across machines with the
same Pillow version; ``Hud(font="path/to/font.ttf")`` (``App(hud_font=...)``) uses any
TrueType/OpenType file through ``ImageFont.truetype`` instead.

World-space labels: ``hud.label(..., world_size=h)`` gives a label a height of ``h``
world units at its anchor instead of a fixed pixel size: it is a camera-facing
billboard, drawn ``h * focal / depth`` pixels tall (``focal`` = the camera's focal
length in pixels), so it shrinks with distance like the objects it names.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import NamedTuple

import numpy as np

__all__ = ["Hud", "Label"]

SPRITE_CACHE = 512  # distinct (text, size, colour) sprites kept


class Label(NamedTuple):
    """A text anchored in the world: ``at`` is a (3,) world point or a Node (its world
    origin), ``offset`` (dx, dy) pixels from the projected point (negative dy: up),
    ``world_size`` the text height in world units (a billboard), or None for the HUD's
    pixel size."""

    text: str
    at: object
    offset: tuple[float, float]
    color: tuple[int, int, int, int] | None
    world_size: float | None = None


class Hud:
    """Ordered text lines at the top-left, an optional centred banner, and labels.

    Args:
        font_size: text height in pixels.
        color: RGBA (0-255) of the text; a 1-pixel black shadow keeps it readable.
        margin: distance in pixels from the top-left corner.
        font: None (Pillow's built-in font) or the path of a TrueType/OpenType font file.

    Raises:
        ValueError: ``font_size`` below 4. engine.errors.LoadError: a ``font`` file that
            is missing or that FreeType cannot read.

    Usage: ``hud["score"] = "Score: 3"`` sets (or replaces) a line, ``del hud["score"]``
    removes it, ``hud.banner = "GAME OVER"`` shows a large centred message (None hides it),
    ``hud.label("boss", "BOSS 3/10", boss_node)`` puts a label above a node.
    """

    def __init__(self, font_size: int = 14, color=(255, 255, 255, 255), margin: int = 6,
                 font=None):
        if int(font_size) < 4:
            raise ValueError(f"font_size must be at least 4 pixels, got {font_size}")
        self.font = None if font is None else str(font)
        if self.font is not None:
            self._load_font(self.font, 12)  # fail here, naming the file, not at a frame
        self.font_size = int(font_size)
        self.color = tuple(int(c) for c in color)
        self.margin = int(margin)
        self.enabled = True
        self.banner: str | None = None
        self._lines: dict[str, str] = {}
        self._labels: dict[str, Label] = {}
        self._fonts: dict[int, object] = {}
        self._sprites: OrderedDict = OrderedDict()
        self.sprites_drawn = 0  # texts rasterised with Pillow so far (cache misses)

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

    # --- labels --------------------------------------------------------------------------
    def label(self, key: str, text, at, offset=(0.0, -12.0), color=None,
              world_size: float | None = None) -> None:
        """Show ``text`` at the world point ``at`` ((3,) world coordinates, or a Node whose
        world origin it follows), centred ``offset`` pixels from its projection.
        ``world_size``: the text's height in world units (a camera-facing billboard that
        shrinks with distance; clamped to 4..512 pixels), or None for ``font_size``
        pixels. Replaces the label named ``key``. Raises ValueError for a point that is
        not 3 finite numbers or a world_size that is not positive and finite."""
        if world_size is not None:
            world_size = float(world_size)
            if not (world_size > 0 and np.isfinite(world_size)):
                raise ValueError(f"label {key!r}: world_size must be positive and finite, "
                                 f"got {world_size}")
        if not hasattr(at, "world_position"):
            p = np.asarray(at, np.float64).reshape(-1)
            if p.shape != (3,) or not np.all(np.isfinite(p)):
                raise ValueError(f"label {key!r}: at must be a Node or 3 finite numbers, "
                                 f"got {at!r}")
            at = p
        c = None if color is None else tuple(int(v) for v in color)
        self._labels[str(key)] = Label(str(text), at, (float(offset[0]), float(offset[1])), c,
                                       world_size)

    def remove_label(self, key: str) -> None:
        self._labels.pop(key, None)

    @property
    def labels(self) -> dict[str, Label]:
        return dict(self._labels)

    # --- sprites --------------------------------------------------------------------------
    @staticmethod
    def _load_font(path, size: int):
        from PIL import ImageFont

        from ..errors import LoadError

        try:
            # Basic layout, as Pillow's built-in font: the same pixels on every machine
            # (libraqm's shaping, where installed, would differ)
            return ImageFont.truetype(path, size, layout_engine=ImageFont.Layout.BASIC)
        except FileNotFoundError:
            raise LoadError(f"{path}: no such font file") from None
        except OSError as exc:
            raise LoadError(f"{path}: not a font FreeType can read ({exc})") from None

    def _font(self, size: int):
        from PIL import ImageFont

        if size not in self._fonts:
            self._fonts[size] = ImageFont.load_default(size=size) if self.font is None \
                else self._load_font(self.font, size)
        return self._fonts[size]

    def _sprite(self, text: str, size: int, shadow: int, frac=(0.0, 0.0)):
        """(shadow mask, text mask, dx, dy): glyph coverage (uint8 (h, w)) of ``text``
        and of its shadow ``shadow`` pixels down-right, placed so that the masks'
        top-left corner goes at (floor(x) + dx, floor(y) + dy) for text Pillow would draw
        at (x, y) with the fractional part ``frac``; cached."""
        key = (text, size, shadow, frac)
        hit = self._sprites.get(key)
        if hit is not None:
            self._sprites.move_to_end(key)
            return hit
        from PIL import Image, ImageDraw

        font = self._font(size)
        x0, y0, x1, y1 = ImageDraw.Draw(Image.new("L", (1, 1))).textbbox((0, 0), text,
                                                                        font=font)
        w, h = max(x1 - x0 + shadow + 3, 1), max(y1 - y0 + shadow + 3, 1)
        origin = (1 - x0 + frac[0], 1 - y0 + frac[1])
        masks = []
        for offset in (shadow, 0):
            img = Image.new("L", (w, h), 0)
            ImageDraw.Draw(img).text((origin[0] + offset, origin[1] + offset), text,
                                     font=font, fill=255)
            masks.append(np.asarray(img).copy())
        if not shadow:
            masks[0][...] = 0
        sprite = (masks[0], masks[1], x0 - 1, y0 - 1)
        self._sprites[key] = sprite
        self.sprites_drawn += 1
        if len(self._sprites) > SPRITE_CACHE:
            self._sprites.popitem(last=False)
        return sprite

    def _placements(self, width: int, height: int, camera=None):
        """(sprite, x, y, colour) of everything to draw, masks' top-left in pixels."""
        out = []
        y = self.margin
        for line in self._lines.values():
            sprite = self._sprite(line, self.font_size, 1)
            out.append((sprite, self.margin + sprite[2], y + sprite[3], self.color))
            y += int(self.font_size * 1.3)
        if self._labels and camera is not None:
            out += self._label_placements(width, height, camera)
        if self.banner:
            size = max(self.font_size * 2, min(width, height) // 10)
            from PIL import Image, ImageDraw

            x0, y0, x1, y1 = ImageDraw.Draw(Image.new("L", (1, 1))).textbbox(
                (0, 0), self.banner, font=self._font(size))
            px, py = (width - (x1 - x0)) / 2 - x0, (height - (y1 - y0)) / 2 - y0
            fx, fy = px - np.floor(px), py - np.floor(py)
            sprite = self._sprite(self.banner, size, 2, (float(fx), float(fy)))
            out.append((sprite, int(np.floor(px)) + sprite[2], int(np.floor(py)) + sprite[3],
                        self.color))
        return out

    def _label_placements(self, width, height, camera):
        labels = list(self._labels.values())
        pts = np.array([lb.at.world_position if hasattr(lb.at, "world_position") else lb.at
                        for lb in labels], np.float64)
        xy, _, visible = camera.project(pts, (width, height))
        sizes = np.full(len(labels), float(self.font_size))
        world = [i for i, lb in enumerate(labels) if lb.world_size is not None]
        if world:
            sizes[world] = _pixel_heights(camera, pts[world], [labels[i].world_size
                                                              for i in world], height)
        out = []
        for lb, (x, y), ok, size in zip(labels, xy, visible, sizes):
            if not ok:
                continue
            sprite = self._sprite(lb.text, int(size), 1)
            h, w = sprite[1].shape
            out.append((sprite, round(x + lb.offset[0] - w / 2), round(y + lb.offset[1] - h / 2),
                        lb.color or self.color))
        return out

    # --- output ---------------------------------------------------------------------------
    def draw(self, color: np.ndarray, camera=None) -> np.ndarray:
        """Blend the HUD into ``color`` ((H, W, 4) uint8 RGBA, host) in place; returns it.
        Labels are drawn when ``camera`` (the camera of the frame) is given. The blend is
        Pillow's own (``out = (dst * (255 - m) + ink * m) / 255`` with its rounding), so
        the pixels equal text drawn straight onto the frame.

        Raises ValueError for another shape or dtype.
        """
        if color.dtype != np.uint8 or color.ndim != 3 or color.shape[2] != 4:
            raise ValueError(f"HUD draws on (H, W, 4) uint8 images, got {color.shape} {color.dtype}")
        if not self.enabled or (not self._lines and not self.banner and not self._labels):
            return color
        h, w = color.shape[:2]
        for (shadow, text, _, _), x, y, ink in self._placements(w, h, camera):
            _blend(color, shadow, x, y, (0, 0, 0, ink[3]))
            _blend(color, text, x, y, ink)
        return color

    def overlay(self, size, camera=None) -> np.ndarray:
        """The HUD alone on a transparent (H, W, 4) uint8 RGBA image of ``size`` = (W, H),
        for alpha-blending over a GL frame (labels placed with ``camera`` when given)."""
        w, h = int(size[0]), int(size[1])
        img = np.zeros((h, w, 4), np.uint8)
        if self.enabled:
            for (shadow, text, _, _), x, y, ink in self._placements(w, h, camera):
                _blend(img, shadow, x, y, (0, 0, 0, ink[3]))
                _blend(img, text, x, y, ink)
        return img


def _pixel_heights(camera, points, world_sizes, height: int) -> np.ndarray:
    """Pixel heights of texts ``world_sizes`` world units tall at world ``points`` (a
    perspective camera: focal / view depth; orthographic: pixels per world unit),
    rounded and clamped to 4..512."""
    proj = camera.projection_matrix
    view = camera.view_matrix
    p = np.asarray(points, np.float64) @ view[:3, :3].T + view[:3, 3]
    scale = proj[1, 1] * height / 2  # focal length in pixels (perspective) or px / unit
    depth = np.where(proj[3, 3] == 1.0, 1.0, np.maximum(-p[:, 2], 1e-9))
    return np.clip(np.rint(np.asarray(world_sizes) * scale / depth), 4, 512)


def _blend(dst: np.ndarray, mask: np.ndarray, x: int, y: int, ink):
    """Pillow's fill-with-mask on every channel: DIV255(dst * (255 - m) + ink * m)."""
    h, w = mask.shape
    x0, y0 = max(x, 0), max(y, 0)
    x1, y1 = min(x + w, dst.shape[1]), min(y + h, dst.shape[0])
    if x1 <= x0 or y1 <= y0:
        return
    m = mask[y0 - y:y1 - y, x0 - x:x1 - x, None].astype(np.uint32)
    if not m.any():
        return
    region = dst[y0:y1, x0:x1]
    tmp = region * (255 - m) + np.asarray(ink, np.uint32) * m + 128
    region[...] = ((tmp >> 8) + tmp) >> 8
