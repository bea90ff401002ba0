"""Pixels of a decoded Pillow image as 8-bit arrays, whatever its bit depth.

Pillow's ``Image.convert`` to "L", "RGB" or "RGBA" clips the values of a 16-bit grey
image (modes "I;16", "I;16B", "I;16L", and "I", which Pillow gives 16-bit PNGs on some
versions) at 255 instead of scaling them: a 16-bit grey PNG used as a texture or an
environment read as pure white. ``pixels`` scales such an image to 8 bits first.
"""

from __future__ import annotations

import numpy as np

__all__ = ["WIDE_GREY_MODES", "pixels"]

#: Pillow modes of one integer channel wider than 8 bits.
WIDE_GREY_MODES = ("I;16", "I;16B", "I;16L", "I")


def pixels(img, mode: str) -> np.ndarray:
    """``np.asarray(img.convert(mode))`` ((H, W) or (H, W, C) uint8, ``mode`` "L", "RGB"
    or "RGBA"), a wide grey image (``WIDE_GREY_MODES``) first scaled to 8 bits: value x
    255 / full scale, rounded, full scale 65535 for the 16-bit modes and for an "I"
    image with a value above 255, else 255 (an "I" image of 8-bit values); values
    outside [0, full scale] are clipped. ``img`` must be loaded (``Image.load``)."""
    from PIL import Image

    if img.mode in WIDE_GREY_MODES:
        a = np.asarray(img, np.float64)
        full = 65535.0 if img.mode.startswith("I;16") or (a.size and a.max() > 255) else 255.0
        img = Image.fromarray(np.rint(np.clip(a, 0.0, full) * (255.0 / full)).astype(np.uint8),
                              "L")
    return np.asarray(img.convert(mode))
