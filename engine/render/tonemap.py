"""Exposure and tone mapping: linear scene radiance -> linear display values in [0, 1].

Applied by the resolve to every lit and unlit surface pixel before the sRGB encode
(points, lines and the background are display colours already and are left alone)::

    display = tone_map(exposure * radiance)

``Scene.exposure`` (a linear factor > 0, default 1) and ``Scene.tone_map``:

    "none"         clamp to [0, 1] (the default: with exposure 1 a scene looks exactly
                   as it did before tone mapping existed)
    "pbr-neutral"  Khronos PBR Neutral (Khronos 3D Commerce working group, "Khronos PBR
                   Neutral Tone Mapper", 2024): colours below about 0.76 keep their
                   hue and value except a small toe (minus an offset up to 0.04 near
                   black), brighter ones are compressed towards 1 and desaturated, so
                   lights in the physical units of KHR_lights_punctual do not clip
"""

from __future__ import annotations

import numpy as np

from ..scene.exposure import TONE_MAPS

__all__ = ["TONE_MAPS", "apply_tone_map"]

_START = 0.8 - 0.04  # where compression starts (the tone mapper's start_compression)
_DESATURATION = 0.15


def apply_tone_map(rgb, exposure: float = 1.0, tone_map: str = "none") -> np.ndarray:
    """(..., 3) linear radiance -> (..., 3) float64 linear display values in [0, 1]."""
    c = np.asarray(rgb, np.float64) * exposure
    if tone_map == "none":
        return np.clip(c, 0.0, 1.0)
    c = np.maximum(c, 0.0)
    x = c.min(axis=-1, keepdims=True)
    c = c - np.where(x < 0.08, x - 6.25 * x * x, 0.04)
    peak = c.max(axis=-1, keepdims=True)
    d = 1.0 - _START
    new_peak = 1.0 - d * d / (peak + d - _START)
    squeezed = c * (new_peak / np.where(peak > 0, peak, 1.0))
    g = 1.0 - 1.0 / (_DESATURATION * (peak - new_peak) + 1.0)
    squeezed = squeezed * (1.0 - g) + new_peak * g
    return np.clip(np.where(peak < _START, c, squeezed), 0.0, 1.0)
