"""A scene's exposure and tone-map settings, checked (``Scene.exposure``,
``Scene.tone_map``); the operators themselves are engine.render.tonemap."""

from __future__ import annotations

import math

from ..errors import as_number

__all__ = ["TONE_MAPS", "check_exposure", "check_tone_map"]

TONE_MAPS = ("none", "pbr-neutral")


def check_exposure(value, name: str = "exposure") -> float:
    """``value`` as a finite float > 0, else ValueError naming ``name``."""
    e = as_number(value, name)
    if not (math.isfinite(e) and e > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return e


def check_tone_map(value, name: str = "tone_map") -> str:
    """``value`` if it is one of TONE_MAPS, else ValueError naming ``name``."""
    if value not in TONE_MAPS:
        raise ValueError(f"{name} must be one of {', '.join(TONE_MAPS)}, got {value!r}")
    return value
