"""Keyframe interpolation of vector channels: linear, centripetal Catmull-Rom, monotone
cubic (Fritsch-Carlson) and step.

A channel is a strictly increasing array of key times ``times`` (K,) in seconds and
values ``values`` (K, D) float64. ``evaluate_segment`` gives the value inside segment
k (between keys k and k+1) at normalised parameter u in [0, 1] for one mode, so a path
can choose the mode per segment.

Sources:

- Centripetal Catmull-Rom (alpha = 0.5): P. J. Barry and R. N. Goldman, "A recursive
  evaluation algorithm for a class of Catmull-Rom splines", SIGGRAPH 1988 (the pyramidal
  form used here); C. Yuksel et al., "Parameterization and applications of Catmull-Rom
  curves", CAD 2011 (why alpha = 0.5 has no cusps or self-intersections).
- Monotone cubic: F. N. Fritsch and R. E. Carlson, "Monotone piecewise cubic
  interpolation", SIAM J. Numer. Anal. 17(2), 1980: tangents from the secants, zeroed
  at local extrema and on flat segments, rescaled into the circle of radius 3.
"""

from __future__ import annotations

import numpy as np

__all__ = ["MODES", "evaluate_segment", "find_segment", "monotone_tangents"]

MODES = ("linear", "catmull_rom", "monotone", "step")


def find_segment(times: np.ndarray, t: float) -> tuple[int, float]:
    """(k, u): the segment holding ``t`` and the normalised time in it.

    ``t`` is clamped to [times[0], times[-1]]; at a key time the segment that starts
    there is returned (u = 0), except at the last key (last segment, u = 1). Needs at
    least two keys.
    """
    n = len(times)
    if t <= times[0]:
        return 0, 0.0
    if t >= times[-1]:
        return n - 2, 1.0
    k = int(np.searchsorted(times, t, side="right")) - 1
    return k, (t - times[k]) / (times[k + 1] - times[k])


def monotone_tangents(times: np.ndarray, values: np.ndarray) -> np.ndarray:
    """(K, D) Fritsch-Carlson tangents (value units per second), per component.

    Each component is treated as its own monotone data set: the cubic Hermite curve
    with these tangents never overshoots its neighbouring keys. The rescaling step runs
    segment by segment (each may shrink the tangent the next one starts from), so long
    paths use a Numba loop (``_monotone_rescale``) and short ones the same loop in
    Python; both give the same tangents.
    """
    times = np.asarray(times, np.float64)
    values = np.asarray(values, np.float64)
    h = np.diff(times)[:, None]
    d = np.diff(values, axis=0) / h  # secants (K-1, D)
    m = np.empty_like(values)
    m[0], m[-1] = d[0], d[-1]
    if len(d) > 1:
        m[1:-1] = 0.5 * (d[:-1] + d[1:])
        # A local extremum (secant sign change or a flat neighbour) gets a flat tangent.
        m[1:-1][d[:-1] * d[1:] <= 0] = 0.0
    if len(d) > NUMBA_FROM:
        from ._kernels import monotone_rescale

        monotone_rescale(d, m)
    else:
        _monotone_rescale(d, m)
    return m


NUMBA_FROM = 256  # segments from which the rescaling loop runs compiled


def _monotone_rescale(d: np.ndarray, m: np.ndarray):
    """Fritsch-Carlson steps 3-5 in place, segment by segment (reference loop)."""
    for k in range(len(d)):
        flat = d[k] == 0
        m[k][flat] = 0.0
        m[k + 1][flat] = 0.0
        with np.errstate(divide="ignore", invalid="ignore"):
            a = np.where(flat, 0.0, m[k] / d[k])
            b = np.where(flat, 0.0, m[k + 1] / d[k])
        s = a * a + b * b
        big = s > 9.0
        if np.any(big):
            tau = 3.0 / np.sqrt(s[big])
            m[k][big] = tau * a[big] * d[k][big]
            m[k + 1][big] = tau * b[big] * d[k][big]


def _clip_between(v, p1, p2):
    """Keep rounding from stepping outside the segment's endpoint range."""
    return np.clip(v, np.minimum(p1, p2), np.maximum(p1, p2))


def _catmull_rom(p0, p1, p2, p3, u):
    """Centripetal Catmull-Rom point between p1 and p2 (Barry-Goldman pyramid)."""
    def knot(a, b):
        # sqrt of the chord length; a tiny floor keeps coincident keys from dividing by 0.
        return max(float(np.linalg.norm(b - a)) ** 0.5, 1e-9)

    if np.array_equal(p1, p2):
        return p1.copy()
    t0 = 0.0
    t1 = t0 + knot(p0, p1)
    t2 = t1 + knot(p1, p2)
    t3 = t2 + knot(p2, p3)
    t = t1 + u * (t2 - t1)
    a1 = ((t1 - t) * p0 + (t - t0) * p1) / (t1 - t0)
    a2 = ((t2 - t) * p1 + (t - t1) * p2) / (t2 - t1)
    a3 = ((t3 - t) * p2 + (t - t2) * p3) / (t3 - t2)
    b1 = ((t2 - t) * a1 + (t - t0) * a2) / (t2 - t0)
    b2 = ((t3 - t) * a2 + (t - t1) * a3) / (t3 - t1)
    return ((t2 - t) * b1 + (t - t1) * b2) / (t2 - t1)


def evaluate_segment(mode: str, times: np.ndarray, values: np.ndarray, k: int, u: float,
                     tangents: np.ndarray | None = None, closed: bool = False) -> np.ndarray:
    """(D,) value in segment ``k`` at normalised time ``u`` in [0, 1].

    Args:
        mode: one of ``MODES``.
        times: (K,) strictly increasing key times, seconds.
        values: (K, D) float64 key values.
        tangents: (K, D) from ``monotone_tangents`` (needed for "monotone" only).

    "step" holds key k; "linear" and "monotone" results are clipped to the range of keys
    k and k+1 (they stay inside it mathematically; the clip only absorbs rounding), so
    monotone gives exactly the key value on a flat segment. Catmull-Rom uses keys k-1
    and k+2, reflected at the path ends, and may overshoot (that is its nature).
    """
    p1, p2 = values[k], values[k + 1]
    if mode == "step":
        return p1.copy()
    if mode == "linear":
        return _clip_between(p1 + (p2 - p1) * u, p1, p2)
    if mode == "monotone":
        if tangents is None:
            tangents = monotone_tangents(times, values)
        h = times[k + 1] - times[k]
        u2, u3 = u * u, u * u * u
        h10, h01, h11 = u3 - 2 * u2 + u, -2 * u3 + 3 * u2, u3 - u2
        # Written as p1 + ..., so a flat segment with zero tangents gives p1 exactly.
        v = p1 + (p2 - p1) * h01 + h * (tangents[k] * h10 + tangents[k + 1] * h11)
        return _clip_between(v, p1, p2)
    if mode == "catmull_rom":
        n = len(values)
        wrap = closed and n > 2
        p0 = values[k - 1] if k > 0 else (values[n - 2] if wrap else 2.0 * p1 - p2)
        p3 = values[k + 2] if k + 2 < n else (values[1] if wrap else 2.0 * p2 - p1)
        return _catmull_rom(p0, p1, p2, p3, u)
    raise ValueError(f"unknown interpolation {mode!r}; use one of {', '.join(MODES)}")
