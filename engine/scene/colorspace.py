"""sRGB transfer functions (IEC 61966-2-1:1999, the piecewise sRGB curve): what the
sRGB-encoded colours of materials, vertices and textures mean.

    decode (sRGB -> linear):  c / 12.92 for c <= 0.04045, else ((c + 0.055) / 1.055) ** 2.4
    encode (linear -> sRGB):  12.92 l for l <= 0.0031308, else 1.055 l ** (1 / 2.4) - 0.055

Both take and return float arrays in [0, 1] (values outside are clipped first).
Lighting happens in linear space between a decode and an encode.
"""

from __future__ import annotations

import numpy as np

__all__ = ["linear_to_srgb", "srgb_to_linear", "to_unorm8"]


def srgb_to_linear(c):
    """sRGB-encoded values in [0, 1] -> linear, same shape, float64."""
    c = np.clip(np.asarray(c, np.float64), 0.0, 1.0)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def linear_to_srgb(lin, xp=np):
    """Linear values -> sRGB-encoded in [0, 1], same shape, float64 (or the input's
    float type when it is an ``xp`` array: a CuPy frame stays on its device)."""
    lin = (xp.clip(lin, 0.0, 1.0) if isinstance(lin, xp.ndarray) and lin.dtype.kind == "f"
           else xp.clip(xp.asarray(lin, xp.float64), 0.0, 1.0))
    return xp.where(lin <= 0.0031308, lin * 12.92, 1.055 * lin ** (1 / 2.4) - 0.055)


def to_unorm8(c):
    """Floats in [0, 1] -> uint8 by round-half-to-even of c * 255 (as GL's UNORM8)."""
    return np.rint(np.clip(c, 0.0, 1.0) * 255.0).astype(np.uint8)
