"""The glTF 2.0 metallic-roughness BRDF and the KHR_lights_punctual falloffs, in NumPy.

The reference the compiled resolves follow (``Material(shading="pbr")``). Formulas from
the glTF 2.0 specification, Appendix B "BRDF Implementation" (Khronos, 2021), for unit
normal ``N``, view ``V`` and light ``L`` vectors, ``H = normalize(L + V)``, base colour
``c`` (linear RGB), ``metallic`` m and perceptual ``roughness`` r::

    alpha   = r ** 2
    D       = alpha**2 [N.H > 0] / (pi ((N.H)**2 (alpha**2 - 1) + 1)**2)
              (Trowbridge-Reitz / GGX distribution)
    Vis     = [H.L > 0] / (|N.L| + sqrt(alpha**2 + (1 - alpha**2) (N.L)**2))
              x [H.V > 0] / (|N.V| + sqrt(alpha**2 + (1 - alpha**2) (N.V)**2))
              (height-correlated Smith visibility, G / (4 |N.L| |N.V|))
    F0      = lerp(0.04, c, m)
    F       = F0 + (1 - F0) (1 - |V.H|)**5              (Schlick Fresnel)
    c_diff  = lerp(c, 0, m)
    f       = (1 - F) c_diff / pi + F D Vis             (Lambert diffuse + specular)

and per light the outgoing radiance ``pi * f * E * max(N.L, 0)``. The factor pi keeps the
engine's light unit, in which a white Lambert surface facing a light of intensity 1 has
radiance 1 (as for "lit" materials, so the headlight draws a PBR dielectric as bright as
a Blinn-Phong one); the glTF loader divides KHR_lights_punctual intensities by pi, so a
file's light gives exactly Appendix B's ``f * I * N.L``. The ambient radiance ``A`` (the
headlight's ambient, AmbientLight nodes) lights a PBR surface as a uniform environment
would with the split-sum look-up taken as (1, 0): ``A * (c_diff + F0) * occlusion``
(Karis, "Real Shading in Unreal Engine 4", SIGGRAPH 2013 course notes), so a metal is
never black under ambient light. Emission is added last: ``emissive x emissive map``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["DIELECTRIC_F0", "brdf", "distribution_ggx", "fresnel_schlick", "range_window",
           "spot_factor", "visibility_smith_ggx"]

DIELECTRIC_F0 = 0.04  # glTF 2.0 Appendix B: the Fresnel reflectance of dielectrics at 0 degrees


def _dot(a, b):
    return np.einsum("...i,...i->...", a, b)


def distribution_ggx(n_dot_h, alpha):
    """Trowbridge-Reitz / GGX normal distribution D (Appendix B), zero where N.H <= 0.
    ``n_dot_h`` and ``alpha`` (= roughness**2) broadcast; returns float64."""
    a2 = np.asarray(alpha, np.float64) ** 2
    x = np.asarray(n_dot_h, np.float64)
    d = x * x * (a2 - 1.0) + 1.0
    return np.where(x > 0, a2 / (np.pi * np.maximum(d * d, 1e-300)), 0.0)


def visibility_smith_ggx(n_dot_l, n_dot_v, h_dot_l, h_dot_v, alpha):
    """Height-correlated Smith visibility ``V = G / (4 abs(N.L) abs(N.V))`` (Appendix B), zero
    where H.L <= 0 or H.V <= 0. Arguments broadcast; returns float64."""
    a2 = np.asarray(alpha, np.float64) ** 2
    nl, nv = np.abs(n_dot_l), np.abs(n_dot_v)
    gl = nl + np.sqrt(a2 + (1.0 - a2) * nl * nl)
    gv = nv + np.sqrt(a2 + (1.0 - a2) * nv * nv)
    return np.where((np.asarray(h_dot_l) > 0) & (np.asarray(h_dot_v) > 0),
                    1.0 / np.maximum(gl * gv, 1e-300), 0.0)


def fresnel_schlick(f0, v_dot_h):
    """Schlick's Fresnel ``F0 + (1 - F0) (1 - |V.H|)**5`` (Appendix B); f0 (..., 3)."""
    k = (1.0 - np.abs(np.asarray(v_dot_h, np.float64))) ** 5
    return f0 + (1.0 - f0) * k[..., None]


def brdf(n, v, light, base, metallic, roughness):
    """(..., 3) the metallic-roughness BRDF f (1/sr) of the module docstring.

    Args:
        n, v, light: (..., 3) unit normal, direction to the viewer, direction to the
            light (any frame, the same for the three).
        base: (..., 3) linear base colour.
        metallic, roughness: (...,) or scalars in [0, 1].
    """
    n, v, light = (np.asarray(x, np.float64) for x in (n, v, light))
    base = np.asarray(base, np.float64)
    m = np.asarray(metallic, np.float64)[..., None]
    alpha = np.asarray(roughness, np.float64) ** 2
    h = light + v
    h = h / np.maximum(np.linalg.norm(h, axis=-1, keepdims=True), 1e-300)
    f0 = DIELECTRIC_F0 * (1.0 - m) + base * m
    f = fresnel_schlick(f0, _dot(v, h))
    d = distribution_ggx(_dot(n, h), alpha)
    vis = visibility_smith_ggx(_dot(n, light), _dot(n, v), _dot(h, light), _dot(h, v), alpha)
    return (1.0 - f) * (base * (1.0 - m)) / np.pi + f * (d * vis)[..., None]


def range_window(distance, light_range):
    """KHR_lights_punctual's recommended range falloff ``clamp(1 - (d / range)**4, 0,
    1)`` (multiplying the inverse square law: the extension's README, "Range Property",
    ``max(min(1 - (d / range)^4, 1), 0) / d^2``); 1 for ``light_range`` None."""
    if light_range is None:
        return np.ones_like(np.asarray(distance, np.float64))
    q = (np.asarray(distance, np.float64) / light_range) ** 4
    return np.clip(1.0 - q, 0.0, 1.0)


def spot_factor(cos_angle, inner_cone_angle, outer_cone_angle):
    """KHR_lights_punctual's smooth spot cone: ``t**2`` with ``t = clamp((cos a - cos
    outer) / (cos inner - cos outer), 0, 1)``, ``cos a`` the cosine of the angle between
    the spot's axis and the direction from the light to the point."""
    co, ci = np.cos(outer_cone_angle), np.cos(inner_cone_angle)
    t = np.clip((np.asarray(cos_angle, np.float64) - co) / max(ci - co, 1e-4), 0.0, 1.0)
    return t * t
