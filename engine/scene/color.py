"""Colours given by users: one colour as RGBA floats, from the forms people type.

Accepted for one colour: 3 or 4 numbers in [0, 1] (RGB, RGBA; alpha 1 when absent), a
uint8 NumPy array of 3 or 4 values in 0-255, or a string Pillow's ``ImageColor``
understands (a CSS name such as "orange", "#rgb", "#rrggbb", "#rrggbbaa"), or
"transparent", CSS's keyword for black with alpha 0 (CSS Color Module Level 4: ``rgb(0 0
0 / 0)``). Values are sRGB-encoded (what a colour picker shows), like vertex colours and
material colours.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["as_rgba"]


def as_rgba(value, name: str = "color") -> tuple[float, float, float, float]:
    """(r, g, b, a) floats in [0, 1] from one colour (see the module docstring).

    Raises:
        ValueError: naming ``name``, for an unknown colour name, a wrong length, values
            outside [0, 1] (or 0-255 for uint8) or non-finite values.
    """
    if isinstance(value, str):
        from PIL import ImageColor

        if value.strip().lower() == "transparent":  # not in Pillow's table of CSS names
            return (0.0, 0.0, 0.0, 0.0)
        try:
            rgba = ImageColor.getcolor(value, "RGBA")
        except ValueError:
            raise ValueError(f"{name}: unknown colour {value!r} (use a CSS name, #rrggbb or "
                             f"3-4 floats in [0, 1])") from None
        return tuple(c / 255.0 for c in rgba)
    if isinstance(value, np.ndarray) and value.dtype == np.uint8:
        if value.shape not in ((3,), (4,)):
            raise ValueError(f"{name} must have 3 or 4 components, got shape {value.shape}")
        c = [float(v) / 255.0 for v in value]
    else:
        try:
            c = [float(v) for v in value]
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be 3 or 4 numbers in [0, 1] or a colour name, "
                             f"got {value!r}") from None
        if len(c) not in (3, 4):
            raise ValueError(f"{name} must have 3 or 4 components (RGB or RGBA), got "
                             f"{len(c)}: {value!r}")
        if not all(math.isfinite(v) and 0.0 <= v <= 1.0 for v in c):
            raise ValueError(f"{name} components must be floats in [0, 1], got {value!r}")
    if len(c) == 3:
        c.append(1.0)
    return tuple(c)
