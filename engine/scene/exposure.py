"""A scene's exposure and tone-map settings, checked (``Scene.exposure``,
``Scene.tone_map``); the operators themselves are engine.render.tonemap."""

from __future__ import annotations

import math

from ..errors import as_number

__all__ = ["MAX_EXPOSURE", "TONE_MAPS", "check_exposure", "check_tone_map"]

TONE_MAPS = ("none", "pbr-neutral")

#: The largest exposure: 2**20 times, 20 stops over 1, far past where every radiance
#: saturates. Without a bound, radiance times exposure overflowed to infinity (1e308
#: was accepted) and the tone map turned it into NaN (infinity times 1 / infinity).
MAX_EXPOSURE = 2.0**20


def check_exposure(value, name: str = "exposure") -> float:
    """``value`` as a finite float in (0, MAX_EXPOSURE], else ValueError naming
    ``name``."""
    e = as_number(value, name)
    if not (math.isfinite(e) and 0 < e <= MAX_EXPOSURE):
        raise ValueError(f"{name} must be a finite number > 0 and at most "
                         f"{MAX_EXPOSURE:g}, got {value!r}")
    return e


def check_tone_map(value, name: str = "tone_map") -> str:
    """``value`` if it is one of TONE_MAPS, else ValueError naming ``name``."""
    if value not in TONE_MAPS:
        raise ValueError(f"{name} must be one of {', '.join(TONE_MAPS)}, got {value!r}")
    return value
