"""What lies between the camera and the scene, and behind it: distance fog and a sky.

``Fog`` fades each drawn pixel towards a fog colour by its distance from the eye, with
the fixed-function fog factors of OpenGL (the OpenGL 2.1 specification, section 3.10,
"Fog"), ``f`` being the fraction of the shaded colour that is kept::

    mode     f(d), clamped to [0, 1]            parameters
    linear   (end - d) / (end - start)         start, end (world units)
    exp      exp(-density * d)                 density (1 / world units)
    exp2     exp(-(density * d) ** 2)          density (1 / world units)

    colour = f * shaded + (1 - f) * fog colour      (linear light, per RGB channel)

``d`` is the eye distance of the pixel's surface point: its Euclidean distance from the
camera's position for a perspective camera (radial, so fog does not change as the camera
turns), its depth along the view direction for an orthographic one (parallel rays have
no one eye point).

``Sky`` is a vertical gradient drawn where nothing covers a pixel, by the elevation
``e`` (degrees above the horizontal plane, world +Y up) of the view ray through the
pixel centre, so it follows the camera's pitch: the horizon colour where the ray is
horizontal, the zenith colour straight up, the ground colour straight down::

    e >= 0:  mix(horizon, zenith, e / 90)         e < 0:  mix(horizon, ground, -e / 90)

mixed in linear light. The fog colour is the sky's colour in the pixel's direction when
the scene has a sky and the fog no colour of its own (distant geometry then fades into
the sky behind it, with no seam at the horizon), else the fog's ``color``, else the
scene's background. Colours are sRGB-encoded like every user colour
(engine.scene.color).

``Scene.sky = "environment"`` (``SKY_ENVIRONMENT``) shows the scene's environment
(engine.scene.environment, the light of image-based lighting) behind it instead: each
empty pixel takes the environment's radiance in its ray's direction (its full-size image,
bilinear), through the scene's exposure and tone map like the surfaces it lights, so the
picture behind a model is the light on it (one environment, one loader). Fog without a
colour of its own then fades into that radiance too.
"""

from __future__ import annotations

import numpy as np

from ..errors import as_finite
from .color import as_rgba

__all__ = ["FOG_MODES", "SKY_ENVIRONMENT", "Fog", "Sky"]

FOG_MODES = ("linear", "exp", "exp2")
# Scene.sky: show the scene's environment behind it
SKY_ENVIRONMENT = "environment"



class Fog:
    """Distance fog (see the module docstring for the formulas).

    Args:
        mode: "linear", "exp" or "exp2".
        start, end: linear fog: the eye distances (world units) where fog begins (f = 1)
            and where it is complete (f = 0); 0 <= start < end.
        density: exp and exp2 fog: the density in 1 / world units, > 0.
        color: the fog colour (sRGB, a CSS name, "#rrggbb" or 3-4 floats in [0, 1]), or
            None: the sky's colour in each pixel's direction, or the background
            without a sky.

    Raises:
        ValueError: naming the argument, for an unknown mode, a missing or out-of-range
            parameter, or a bad colour.
    """

    def __init__(self, mode: str = "exp2", *, start: float | None = None,
                 end: float | None = None, density: float | None = None, color=None):
        if mode not in FOG_MODES:
            raise ValueError(f"fog mode must be one of {', '.join(FOG_MODES)}, got {mode!r}")
        self.mode = mode
        self.color = None if color is None else as_rgba(color, "fog color")
        if mode == "linear":
            if start is None or end is None or density is not None:
                raise ValueError("linear fog takes start and end (world units), not density")
            self.start, self.end = as_finite(start, "fog start"), as_finite(end, "fog end")
            if not 0.0 <= self.start < self.end:
                raise ValueError(f"linear fog needs 0 <= start < end, got start {start!r}, "
                                 f"end {end!r}")
            self.density = None
        else:
            if density is None or start is not None or end is not None:
                raise ValueError(f"{mode} fog takes density (1 / world units), not start "
                                 "and end")
            self.density = as_finite(density, "fog density")
            if self.density <= 0.0:
                raise ValueError(f"fog density must be > 0, got {density!r}")
            self.start = self.end = None

    def factor(self, distance, xp=np):
        """The fraction f of the shaded colour kept at eye ``distance`` (world units; a
        number or an array of the array module ``xp``, NumPy or CuPy): see the module
        docstring. float32, same shape, in [0, 1]."""
        d = xp.asarray(distance, dtype=xp.float32)
        if self.mode == "linear":
            f = (self.end - d) / (self.end - self.start)
        elif self.mode == "exp":
            f = xp.exp(-self.density * d)
        else:
            f = xp.exp(-(self.density * d) ** 2)
        return xp.clip(f, 0.0, 1.0)

    def __repr__(self):
        args = (f"start={self.start}, end={self.end}" if self.mode == "linear"
                else f"density={self.density}")
        return f"Fog({self.mode!r}, {args}, color={self.color})"


class Sky:
    """A vertical sky gradient behind the scene (see the module docstring).

    Args:
        horizon: the colour where the view ray is horizontal.
        zenith: the colour straight up.
        ground: the colour straight down; None: the horizon colour (a flat ground below
            the horizon).

    Colours are sRGB (a CSS name, "#rrggbb" or 3-4 floats in [0, 1]; alpha is ignored:
    the sky is opaque). Raises ValueError naming the colour that is bad.
    """

    def __init__(self, horizon="#c8d8e8", zenith="#3a6ea5", ground=None):
        self.horizon = as_rgba(horizon, "sky horizon")
        self.zenith = as_rgba(zenith, "sky zenith")
        self.ground = self.horizon if ground is None else as_rgba(ground, "sky ground")

    def __repr__(self):
        return f"Sky(horizon={self.horizon}, zenith={self.zenith}, ground={self.ground})"
