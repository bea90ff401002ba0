"""Simple collision helpers for prototypes: bounding spheres, sphere-sphere and
ray-sphere tests, single or vectorised (NumPy, float64, world frame, world units).

A node's bounding sphere is computed once per geometry in its local frame (centre of
the bounding box of the finite points, radius = largest distance from it, so every
point is inside) and carried to the world frame by the node's world matrix: the centre
is transformed, the radius is scaled by the largest axis scale of the matrix (exact for
uniform scale, conservative otherwise).

Ray-sphere: for a ray ``o + t d`` (``d`` normalised) and a sphere (c, r), t solves
``|o + t d - c|^2 = r^2``: with ``b = d . (o - c)`` and ``q = |o - c|^2 - r^2``,
``t = -b -/+ sqrt(b^2 - q)``; the smallest t >= 0 is the hit (t = 0 when the origin is
inside), no hit when ``b^2 - q < 0`` or both roots are negative.
"""

from __future__ import annotations

import weakref

import numpy as np

from .scene import Node

__all__ = [
    "bounding_sphere",
    "nodes_collide",
    "overlap_pairs",
    "ray_cast",
    "ray_sphere",
    "spheres_overlap",
]

_local_spheres: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _local_sphere(geometry) -> tuple[np.ndarray, float]:
    cached = _local_spheres.get(geometry)
    if cached is not None and cached[2] is geometry.positions:
        return cached[0], cached[1]
    b = geometry.bounds()
    if b is None:
        centre, radius = geometry.origin.copy(), 0.0
    else:
        centre = (b[0] + b[1]) * 0.5
        p = geometry.positions
        p = np.asarray(p.get() if hasattr(p, "get") else p, np.float64)
        p = p[np.all(np.isfinite(p), axis=1)] + geometry.origin
        radius = float(np.sqrt(np.max(np.sum((p - centre) ** 2, axis=1))))
    _local_spheres[geometry] = (centre, radius, geometry.positions)
    return centre, radius


def bounding_sphere(node: Node) -> tuple[np.ndarray, float]:
    """(centre (3,) float64 world, radius float world units) enclosing ``node``'s own
    geometry. Raises ValueError when the node has no geometry."""
    if node.geometry is None:
        raise ValueError(f"{node.name!r} has no geometry, so no bounding sphere")
    centre, radius = _local_sphere(node.geometry)
    m = node.world_matrix
    scale = float(np.max(np.linalg.norm(m[:3, :3], axis=0)))
    return m[:3, :3] @ centre + m[:3, 3], radius * scale


def spheres_overlap(c1, r1, c2, r2) -> bool:
    """True when spheres (c1, r1) and (c2, r2) intersect or touch."""
    d = np.asarray(c1, np.float64) - np.asarray(c2, np.float64)
    return bool(d @ d <= (float(r1) + float(r2)) ** 2)


def nodes_collide(a: Node, b: Node) -> bool:
    """Sphere-sphere test on the nodes' world bounding spheres."""
    return spheres_overlap(*bounding_sphere(a), *bounding_sphere(b))


def overlap_pairs(centres_a, radii_a, centres_b, radii_b) -> np.ndarray:
    """(Na, Nb) bool: sphere i of A overlaps sphere j of B. Centres (N, 3), radii (N,)."""
    ca = np.asarray(centres_a, np.float64).reshape(-1, 3)
    cb = np.asarray(centres_b, np.float64).reshape(-1, 3)
    ra = np.asarray(radii_a, np.float64).reshape(-1)
    rb = np.asarray(radii_b, np.float64).reshape(-1)
    d2 = np.sum((ca[:, None, :] - cb[None, :, :]) ** 2, axis=2)
    return d2 <= (ra[:, None] + rb[None, :]) ** 2


def ray_sphere(origin, direction, centre, radius) -> float | None:
    """Distance t >= 0 along the ray to the first hit of the sphere, or None.

    ``direction`` need not be normalised (t is in world units along the unit direction).
    Raises ValueError for a zero or non-finite direction.
    """
    o = np.asarray(origin, np.float64)
    d = np.asarray(direction, np.float64)
    norm = float(np.linalg.norm(d))
    if not (norm > 0 and np.isfinite(norm)):
        raise ValueError(f"ray direction must be a finite non-zero vector, got {direction!r}")
    d = d / norm
    oc = o - np.asarray(centre, np.float64)
    b = float(d @ oc)
    q = float(oc @ oc) - float(radius) ** 2
    disc = b * b - q
    if disc < 0:
        return None
    root = float(np.sqrt(disc))
    near, far = -b - root, -b + root
    if far < 0:
        return None
    return max(near, 0.0)


def ray_cast(origin, direction, nodes) -> tuple[Node, float] | None:
    """The node whose bounding sphere the ray hits first, with the distance, or None."""
    best = None
    for node in nodes:
        t = ray_sphere(origin, direction, *bounding_sphere(node))
        if t is not None and (best is None or t < best[1]):
            best = (node, t)
    return best
