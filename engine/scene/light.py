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

Shadows: ``light.shadows = True`` on a DirectionalLight or a SpotLight makes it render a
shadow map each frame (``light.shadow_map_size`` texels square, default
DEFAULT_SHADOW_MAP_SIZE; reused while nothing it depends on changed) that hides it from the surfaces behind an object's
``cast_shadow`` triangles (engine.render.shadows: fitting, bias and filtering). Point
lights and ambient lights cast no shadows (a point light would need six maps, a cube:
not drawn yet), so asking one for them raises ValueError.

Point and spot lights take an optional ``range`` (world units, None = unlimited): the
light is zero beyond it, with KHR_lights_punctual's recommended window
``clamp(1 - (d / range) ** 4, 0, 1)`` times the inverse square law
(engine.render.pbr.range_window).
"""

from __future__ import annotations

import math

from ..errors import as_number
from .graph import Node

__all__ = ["DEFAULT_SHADOW_MAP_SIZE", "MAX_SHADOW_MAP_SIZE", "AmbientLight",
           "DirectionalLight", "Light", "PointLight", "SpotLight", "enable_shadows"]

DEFAULT_SHADOW_MAP_SIZE = 1024
MAX_SHADOW_MAP_SIZE = 8192


class Light(Node):
    """Base class: ``color`` (3 floats in [0, 1], linear RGB) times ``intensity`` (>= 0);
    ``shadows`` and ``shadow_map_size`` as the properties of those names.

    Raises:
        ValueError: a colour outside [0, 1] or a negative / non-finite intensity.
    """

    def __init__(self, name: str = "light", color=(1.0, 1.0, 1.0), intensity: float = 1.0,
                 *, shadows: bool = False, shadow_map_size: int = DEFAULT_SHADOW_MAP_SIZE,
                 **node_kwargs):
        super().__init__(name, **node_kwargs)
        self.color = color
        i = as_number(intensity, f"{name}: intensity")
        if not (math.isfinite(i) and i >= 0):
            raise ValueError(f"{name}: intensity must be a finite number >= 0, got {intensity!r}")
        self.intensity = i
        self.shadows = shadows
        self.shadow_map_size = shadow_map_size

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

    # the shadow switches (module docstring): class defaults, set through the properties
    _shadows = False
    _shadow_map_size = DEFAULT_SHADOW_MAP_SIZE

    @property
    def casts_shadows(self) -> bool:
        """Whether this kind of light can render a shadow map (directional and spot)."""
        return isinstance(self, (DirectionalLight, SpotLight))

    @property
    def shadows(self) -> bool:
        """True: this light renders a shadow map every frame, or reuses the last one
        while nothing it depends on changed (engine.render.shadows).

        Raises:
            ValueError: set True on a point or ambient light (no shadow maps for them).
            TypeError: not a bool.
        """
        return self._shadows

    @shadows.setter
    def shadows(self, value: bool):
        if not isinstance(value, bool):
            raise TypeError(f"{self.name}: shadows must be True or False, got {value!r}")
        if value and not self.casts_shadows:
            raise ValueError(f"{self.name}: only directional and spot lights cast shadows, "
                             f"not a {type(self).__name__}")
        self._shadows = value

    @property
    def shadow_map_size(self) -> int:
        """Side of the square shadow map in texels, a whole number in
        [16, MAX_SHADOW_MAP_SIZE] (default DEFAULT_SHADOW_MAP_SIZE). Raises ValueError
        otherwise."""
        return self._shadow_map_size

    @shadow_map_size.setter
    def shadow_map_size(self, value: int):
        v = as_number(value, f"{self.name}: shadow_map_size")
        if isinstance(value, bool) or not (float(v).is_integer()
                                           and 16 <= v <= MAX_SHADOW_MAP_SIZE):
            raise ValueError(f"{self.name}: shadow_map_size must be a whole number of texels "
                             f"in [16, {MAX_SHADOW_MAP_SIZE}], got {value!r}")
        self._shadow_map_size = int(v)


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


def enable_shadows(root: Node, on: bool = True) -> int:
    """``shadows = on`` for every DirectionalLight and SpotLight under ``root`` (itself
    included; hidden ones too). Returns how many lights that was (0: a scene lit only by
    the default headlight, which casts no shadows). The CLI's ``--shadows``."""
    lights = [n for n in root.traverse() if isinstance(n, (DirectionalLight, SpotLight))]
    for light in lights:
        light.shadows = bool(on)
    return len(lights)
