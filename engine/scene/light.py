"""Lights are scene-graph nodes, so they move with their parents like any object.

The kinds::

    DirectionalLight  parallel rays along the node's local -Z axis (like a camera's view
                      direction: aim it with ``look_at``), e.g. the sun
    PointLight        rays from the node's world position, intensity falling off with
                      the inverse square of the distance (glTF KHR_lights_punctual)
    SpotLight         a point light limited to a cone around the node's local -Z axis,
                      with the smooth edge of KHR_lights_punctual
    AmbientLight      light from every direction, added to every lit surface

A scene without any light is lit by a default *headlight*: a directional light along the
camera's view direction (intensity 0.7) plus an ambient light of 0.15, so any loaded
model is readable with no set-up (engine.render.shading.DEFAULT_HEADLIGHT and
DEFAULT_AMBIENT).
Colours are linear RGB floats in [0, 1]; intensities are non-negative multipliers. In
the units of glTF KHR_lights_punctual a directional light's intensity is an illuminance
(lux) and a point or spot light's a luminous intensity (candela): the loader keeps the
file's numbers, and ``Scene.exposure`` scales the result (engine.render.tonemap).

Point and spot lights take an optional ``range`` (world units, None = unlimited): the
light is zero beyond it, with KHR_lights_punctual's recommended window
``clamp(1 - (d / range) ** 4, 0, 1) ** 2`` times the inverse square law
(engine.render.pbr.range_window).
"""

from __future__ import annotations

import math

from ..errors import as_number
from .graph import Node

__all__ = ["AmbientLight", "DirectionalLight", "Light", "PointLight", "SpotLight"]


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


def _range(name, value):
    if value is None:
        return None
    r = as_number(value, f"{name}: range")
    if not (math.isfinite(r) and r > 0):
        raise ValueError(f"{name}: range must be a finite number > 0 or None, got {value!r}")
    return r


class PointLight(Light):
    """Light from the node's world position; falls off as 1 / distance**2 (world units).

    Args:
        range: None (unlimited) or the distance > 0 beyond which the light is zero
            (module docstring).

    Raises:
        ValueError: a range that is not a finite number > 0.
    """

    def __init__(self, name: str = "light", color=(1.0, 1.0, 1.0), intensity: float = 1.0,
                 range: float | None = None, **node_kwargs):
        super().__init__(name, color, intensity, **node_kwargs)
        self.range = _range(name, range)


class SpotLight(PointLight):
    """A point light limited to a cone around the node's local -Z axis (aim it with
    ``look_at``), as KHR_lights_punctual defines it.

    Args:
        inner_cone_angle: radians from the axis where the falloff starts, in
            [0, outer_cone_angle).
        outer_cone_angle: radians from the axis where the light reaches zero, in
            (0, pi / 2].
        range: as for PointLight.

    Between the two cones the intensity is scaled by ``t ** 2`` with ``t = clamp((cos a -
    cos outer) / (cos inner - cos outer), 0, 1)``, ``a`` the angle from the axis (the
    extension's recommended smooth falloff; engine.render.pbr.spot_factor).

    Raises:
        ValueError: angles outside those ranges, or inner >= outer.
    """

    def __init__(self, name: str = "light", color=(1.0, 1.0, 1.0), intensity: float = 1.0,
                 inner_cone_angle: float = 0.0, outer_cone_angle: float = math.pi / 4,
                 range: float | None = None, **node_kwargs):
        super().__init__(name, color, intensity, range, **node_kwargs)
        inner = as_number(inner_cone_angle, f"{name}: inner_cone_angle")
        outer = as_number(outer_cone_angle, f"{name}: outer_cone_angle")
        if not (0.0 < outer <= math.pi / 2 and 0.0 <= inner < outer):
            raise ValueError(f"{name}: cone angles must satisfy 0 <= inner_cone_angle < "
                             f"outer_cone_angle <= pi/2, got {inner_cone_angle!r}, "
                             f"{outer_cone_angle!r}")
        self.inner_cone_angle, self.outer_cone_angle = inner, outer


class AmbientLight(Light):
    """Uniform light added to every lit surface (its position and direction do not matter)."""
