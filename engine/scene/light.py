"""Lights are scene-graph nodes, so they move with their parents like any object.

The kinds::

    DirectionalLight  parallel rays along the node's local -Z axis (like a camera's view
                      direction: aim it with ``look_at``), e.g. the sun
    PointLight        rays from the node's world position, intensity falling off with
                      the inverse square of the distance (glTF KHR_lights_punctual)
    AmbientLight      light from every direction, added to every lit surface

A scene without any light is lit by a default *headlight*: a directional light along the
camera's view direction (intensity 0.7) plus an ambient light of 0.15, so any loaded
model is readable with no set-up (engine.render.shading.DEFAULT_HEADLIGHT and
DEFAULT_AMBIENT).
Colours are linear RGB floats in [0, 1]; intensities are non-negative multipliers.
"""

from __future__ import annotations

import math

from ..errors import as_number
from .graph import Node

__all__ = ["AmbientLight", "DirectionalLight", "Light", "PointLight"]


class Light(Node):
    """Base class: ``color`` (3 floats in [0, 1], linear RGB) times ``intensity`` (>= 0).

    Raises:
        ValueError: a colour outside [0, 1] or a negative / non-finite intensity.
    """

    def __init__(self, name: str = "light", color=(1.0, 1.0, 1.0), intensity: float = 1.0,
                 **node_kwargs):
        super().__init__(name, **node_kwargs)
        self.color = color
        i = as_number(intensity, f"{name}: intensity")
        if not (math.isfinite(i) and i >= 0):
            raise ValueError(f"{name}: intensity must be a finite number >= 0, got {intensity!r}")
        self.intensity = i

    @property
    def color(self) -> tuple[float, float, float]:
        """(r, g, b) linear light colour, floats in [0, 1] (a light has no tint)."""
        return self._light_color

    @color.setter
    def color(self, value):
        try:
            c = tuple(float(x) for x in value)
        except (TypeError, ValueError):
            c = ()
        if len(c) != 3 or not all(0.0 <= x <= 1.0 for x in c):
            raise ValueError(f"{self.name}: color must be 3 floats in [0, 1], got {value!r}")
        self._light_color = c

    @property
    def radiance(self) -> tuple[float, float, float]:
        """color x intensity, linear RGB."""
        return tuple(c * self.intensity for c in self.color)


class DirectionalLight(Light):
    """Parallel light travelling along the node's local -Z axis (world frame)."""


class PointLight(Light):
    """Light from the node's world position; falls off as 1 / distance**2 (world units)."""


class AmbientLight(Light):
    """Uniform light added to every lit surface (its position and direction do not matter)."""
