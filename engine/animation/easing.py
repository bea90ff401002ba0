"""Easing functions: remap a segment's normalised time u in [0, 1] to [0, 1].

Every function maps 0 -> 0 and 1 -> 1 exactly and is monotone non-decreasing, so an
eased segment still starts and ends on its keyframes and never runs backwards.
Formulas: quadratic ease-in/out, the cubic ease-in-out of R. Penner's easing equations,
and the Hermite smoothstep ``3u^2 - 2u^3``.
"""

from __future__ import annotations

__all__ = ["EASINGS", "ease", "get_easing"]


def _linear(u: float) -> float:
    return u


def _ease_in(u: float) -> float:
    return u * u


def _ease_out(u: float) -> float:
    v = 1.0 - u
    return 1.0 - v * v


def _ease_in_out(u: float) -> float:
    if u < 0.5:
        return 4.0 * u * u * u
    v = 2.0 - 2.0 * u
    return 1.0 - 0.5 * v * v * v


def _smoothstep(u: float) -> float:
    return u * u * (3.0 - 2.0 * u)


EASINGS = {
    "linear": _linear,
    "ease-in": _ease_in,
    "ease-out": _ease_out,
    "ease-in-out": _ease_in_out,
    "smoothstep": _smoothstep,
}


def get_easing(name: str):
    """The easing function called ``name`` (a key of ``EASINGS``); ValueError otherwise."""
    try:
        return EASINGS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown easing {name!r}; use one of {', '.join(EASINGS)}") from None


def ease(name: str, u: float) -> float:
    """``name`` easing of ``u``, with u clamped to [0, 1] first."""
    return get_easing(name)(min(1.0, max(0.0, float(u))))
