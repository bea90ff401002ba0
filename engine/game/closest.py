"""Closest points between the primitive shapes of the colliders (Numba kernels, float64,
world frame): point-segment, segment-segment, point-triangle, segment-triangle and
segment-box.

Sources: C. Ericson, "Real-Time Collision Detection", Morgan Kaufmann 2005:
point-triangle by Voronoi regions (section 5.1.5), segment-segment (5.1.9). Segment-
triangle: when the segment does not cross the triangle, the closest pair lies on a
boundary feature pair (an endpoint against the triangle, or a triangle edge against the
segment), so the minimum over those five is exact; a crossing (Moeller-Trumbore with t
in [0, 1], as in ``engine.game.bvh``) has distance 0. Segment-box: the distance from a
point to a convex box is a convex function, and so is its restriction to a segment, so
a golden-section search over the segment parameter converges to the exact minimum
(``_GOLDEN_STEPS`` steps shrink the interval below 1e-13 of the segment length).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ..render.backends.kernel_cache import cached
from .bvh import _moller_trumbore

__all__ = ["box_closest_point", "segment_box", "segment_segment", "segment_triangles"]

_GOLDEN_STEPS = 64
_INV_PHI = (math.sqrt(5.0) - 1.0) / 2.0


@numba.njit(cache=cached())
def _dot(a, b):
    """a . b of two (3,) vectors (Numba's ``@`` needs SciPy's BLAS)."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@numba.njit(cache=cached())
def _clamp01(x):
    return 0.0 if x < 0.0 else (min(x, 1.0))


@numba.njit(cache=cached())
def _point_segment(p, a, b):
    """Parameter t in [0, 1] of the point of segment ab nearest to p."""
    ab = b - a
    den = _dot(ab, ab)
    if den == 0.0:
        return 0.0
    return _clamp01(_dot(p - a, ab) / den)


@numba.njit(cache=cached())
def _segment_segment(p1, q1, p2, q2):
    """(s, t): parameters of the closest points p1 + s (q1 - p1) and p2 + t (q2 - p2)
    (Ericson 5.1.9, with its handling of degenerate segments)."""
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    a, e, f = _dot(d1, d1), _dot(d2, d2), _dot(d2, r)
    eps = 1e-300
    if a <= eps and e <= eps:
        return 0.0, 0.0
    if a <= eps:
        return 0.0, _clamp01(f / e)
    c = _dot(d1, r)
    if e <= eps:
        return _clamp01(-c / a), 0.0
    b = _dot(d1, d2)
    den = a * e - b * b
    s = _clamp01((b * f - c * e) / den) if den != 0.0 else 0.0
    t = (b * s + f) / e
    if t < 0.0:
        t, s = 0.0, _clamp01(-c / a)
    elif t > 1.0:
        t, s = 1.0, _clamp01((b - c) / a)
    return s, t


@numba.njit(cache=cached())
def _point_triangle(p, a, b, c):
    """The point of triangle abc nearest to p (Ericson 5.1.5, Voronoi regions)."""
    ab, ac, ap = b - a, c - a, p - a
    d1, d2 = _dot(ab, ap), _dot(ac, ap)
    if d1 <= 0.0 and d2 <= 0.0:
        return a.copy()
    bp = p - b
    d3, d4 = _dot(ab, bp), _dot(ac, bp)
    if d3 >= 0.0 and d4 <= d3:
        return b.copy()
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        return a + (d1 / (d1 - d3)) * ab
    cp = p - c
    d5, d6 = _dot(ab, cp), _dot(ac, cp)
    if d6 >= 0.0 and d5 <= d6:
        return c.copy()
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        return a + (d2 / (d2 - d6)) * ac
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
        return b + ((d4 - d3) / ((d4 - d3) + (d5 - d6))) * (c - b)
    den = 1.0 / (va + vb + vc)
    return a + ab * (vb * den) + ac * (vc * den)


@numba.njit(cache=cached())
def segment_triangles(a, b, v0, v1, v2):
    """Closest points between segment ab ((3,) each) and K triangles (v0, v1, v2 (K, 3)):
    (distance (K,), point on the segment (K, 3), point on the triangle (K, 3)); distance 0
    where the segment crosses the triangle."""
    k = v0.shape[0]
    dist = np.empty(k)
    qs = np.empty((k, 3))
    ps = np.empty((k, 3))
    d = b - a
    for i in range(k):
        t, _, _ = _moller_trumbore(a, d, v0[i], v1[i] - v0[i], v2[i] - v0[i], 1.0)
        if t < np.inf:
            x = a + t * d
            dist[i] = 0.0
            qs[i] = x
            ps[i] = x
            continue
        best = np.inf
        for end in range(2):
            q = a if end == 0 else b
            p = _point_triangle(q, v0[i], v1[i], v2[i])
            dd = math.sqrt(_dot(q - p, q - p))
            if dd < best:
                best, qs[i], ps[i] = dd, q, p
        for e in range(3):
            e0 = v0[i] if e == 0 else (v1[i] if e == 1 else v2[i])
            e1 = v1[i] if e == 0 else (v2[i] if e == 1 else v0[i])
            s, t2 = _segment_segment(a, b, e0, e1)
            q = a + s * d
            p = e0 + t2 * (e1 - e0)
            dd = math.sqrt(_dot(q - p, q - p))
            if dd < best:
                best, qs[i], ps[i] = dd, q, p
        dist[i] = best
    return dist, qs, ps


@numba.njit(cache=cached())
def _box_point(p, centre, axes, half):
    """The point of the box (centre, unit axes as columns (3, 3), half extents) nearest
    to p: p in box coordinates, clamped."""
    out = centre.copy()
    for k in range(3):
        x = _dot(p - centre, axes[:, k])
        x = min(max(x, -half[k]), half[k])
        out += x * axes[:, k]
    return out


@numba.njit(cache=cached())
def _segment_box(a, b, centre, axes, half):
    lo, hi = 0.0, 1.0
    d = b - a
    x1 = hi - _INV_PHI * (hi - lo)
    x2 = lo + _INV_PHI * (hi - lo)
    q1, q2 = a + x1 * d, a + x2 * d
    r1, r2 = q1 - _box_point(q1, centre, axes, half), q2 - _box_point(q2, centre, axes, half)
    f1, f2 = _dot(r1, r1), _dot(r2, r2)
    for _ in range(_GOLDEN_STEPS):
        if f1 <= f2:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - _INV_PHI * (hi - lo)
            q1 = a + x1 * d
            r1 = q1 - _box_point(q1, centre, axes, half)
            f1 = _dot(r1, r1)
        else:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + _INV_PHI * (hi - lo)
            q2 = a + x2 * d
            r2 = q2 - _box_point(q2, centre, axes, half)
            f2 = _dot(r2, r2)
    t = 0.5 * (lo + hi)
    for end in (0.0, 1.0):  # the minimum may sit on an end, outside the last bracket
        q = a + end * d
        r = q - _box_point(q, centre, axes, half)
        qt = a + t * d
        rt = qt - _box_point(qt, centre, axes, half)
        if _dot(r, r) < _dot(rt, rt):
            t = end
    return t


def segment_segment(p1, q1, p2, q2) -> tuple[float, float]:
    """(s, t) in [0, 1]: the closest points of segments p1q1 and p2q2 are
    p1 + s (q1 - p1) and p2 + t (q2 - p2). (3,) float world points."""
    f = np.asarray
    return _segment_segment(f(p1, np.float64), f(q1, np.float64), f(p2, np.float64),
                            f(q2, np.float64))


def box_closest_point(p, centre, axes, half) -> np.ndarray:
    """(3,) point of the oriented box nearest to ``p``: ``centre`` (3,), ``axes`` (3, 3)
    unit box axes as columns, ``half`` (3,) half extents (world units)."""
    return _box_point(np.asarray(p, np.float64), np.asarray(centre, np.float64),
                      np.ascontiguousarray(axes, np.float64), np.asarray(half, np.float64))


def segment_box(a, b, centre, axes, half) -> float:
    """Parameter t in [0, 1] of the point of segment ab nearest to the oriented box
    (as ``box_closest_point``); any t where the segment is inside the box."""
    f = np.asarray
    return _segment_box(f(a, np.float64), f(b, np.float64), f(centre, np.float64),
                        np.ascontiguousarray(axes, np.float64), f(half, np.float64))
