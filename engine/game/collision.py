"""Collision queries for games: exact ray casts against mesh triangles (``ray_cast``,
``height_at``) with bounding spheres as the broad phase, and the sphere helpers behind
it: sphere-sphere and ray-sphere tests, single or vectorised (NumPy, float64, world
frame, world units). Shapes attached to nodes and the character controller are in
``engine.game.colliders``.

A node's bounding sphere is computed once per geometry in its local frame (centre of
the bounding box of the finite points, radius = largest distance from it, so every
point is inside) and carried to the world frame by the node's world matrix: the centre
is transformed, the radius is scaled by the largest axis scale of the matrix (exact for
uniform scale, conservative otherwise). A geometry without any finite point (empty, or
all NaN/inf) has no bounding sphere: it occupies no space, so ``nodes_collide`` is
False for it and ``ray_cast`` passes it by.

Ray-sphere: for a ray ``o + t d`` (``d`` normalised) and a sphere (c, r), t solves
``|o + t d - c|^2 = r^2``: with ``f = o - c`` and ``b = d . f``,
``t = -b -/+ sqrt(r^2 - |f - b d|^2)``; the discriminant is written with the ray's
perpendicular offset ``f - b d`` from the centre instead of ``b^2 - |f|^2 + r^2``, which
loses every digit when the sphere is small and far away (Haines, Guenther and
Akenine-Moeller, "Precision Improvements for Ray/Sphere Intersection", Ray Tracing Gems,
2019, ch. 7). The smallest t >= 0 is the hit (t = 0 when the origin is inside); no hit
when the discriminant is negative or both roots are. Inputs are scaled by a power of
two first (exact), so coordinates anywhere in the float64 range give no overflow.

Instances: each active instance of an ``engine.Instances`` node has its own sphere (the
geometry's sphere through the instance's world matrix): ``instance_spheres`` gives them
as arrays for ``overlap_pairs``, ``ray_cast`` tests them all (the hit names the
instance), and ``nodes_collide`` is True when any instance sphere of one node touches
the other's; ``bounding_sphere`` of an Instances node encloses its active instances.

Every helper checks its inputs: centres, origins and directions must be finite 3-vectors
(a direction also non-zero), radii finite and >= 0; otherwise ValueError naming the
argument.
"""

from __future__ import annotations

import math
import weakref
from typing import NamedTuple

import numpy as np

from ..arrays import to_host
from ..errors import as_finite
from ..scene.deform import is_deformed, posed_vertices
from ..scene.geometry import Mesh
from ..scene.graph import Node
from ..scene.instances import Instances
from ..scene.transforms import as_vec3

__all__ = [
    "RayHit",
    "bounding_sphere",
    "height_at",
    "instance_spheres",
    "nodes_collide",
    "overlap_pairs",
    "ray_cast",
    "ray_sphere",
    "spheres_overlap",
]


class RayHit(NamedTuple):
    """What ``ray_cast`` hit first.

    node: the Node (or Instances node) hit.
    distance: world units along the unit ray direction.
    instance: the instance index for an Instances node, else None.
    point: (3,) float64 world point of the hit (origin + distance * direction).
    normal: (3,) float64 unit world normal of the triangle's front (counter-clockwise) face.
    triangle: index of the triangle hit in ``node.geometry.faces``.

    ``normal`` and ``triangle`` are None for geometry without triangles (points and
    lines are hit on their bounding spheres).
    """

    node: Node
    distance: float
    instance: int | None = None
    point: np.ndarray | None = None
    normal: np.ndarray | None = None
    triangle: int | None = None

_local_spheres: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _radius(r, name) -> float:
    try:
        r = float(r)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {r!r}") from None
    if not (math.isfinite(r) and r >= 0):
        raise ValueError(f"{name} must be finite and >= 0, got {r}")
    return r


def _local_sphere(geometry) -> tuple[np.ndarray, float] | None:
    """(centre, radius) in the geometry's local frame, or None without a finite point."""
    cached = _local_spheres.get(geometry)
    if cached is not None and cached[1] is geometry.positions and cached[2] == geometry.revision:
        return cached[0]
    b = geometry.bounds()
    if b is None:
        sphere = None
    else:
        centre = (b[0] + b[1]) * 0.5
        p = geometry.positions
        p = to_host(p).astype(np.float64)
        p = p[np.all(np.isfinite(p), axis=1)] + geometry.origin
        sphere = (centre, float(np.sqrt(np.max(np.sum((p - centre) ** 2, axis=1)))))
    _local_spheres[geometry] = (sphere, geometry.positions, geometry.revision)
    return sphere


def instance_spheres(node: Instances) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(indices (M,) int64, centres (M, 3) float64 world, radii (M,) float64) of the
    active instances of ``node``: the geometry's sphere through each instance's world
    matrix (radius times the largest axis scale). M = 0 when none is active or the
    geometry has no finite point. Raises TypeError for a node that is not an Instances
    node, ValueError when it holds non-finite values."""
    if not isinstance(node, Instances):
        raise TypeError(f"{node.name!r} is not an Instances node; use bounding_sphere")
    idx = np.flatnonzero(node.active)
    sphere = _local_sphere(node.geometry)
    if sphere is None or len(idx) == 0:
        return np.zeros(0, np.int64), np.zeros((0, 3)), np.zeros(0)
    centre, radius = sphere
    m = node.world_matrices(idx)
    scale = np.max(np.linalg.norm(m[:, :3, :3], axis=1), axis=1)
    c = np.einsum("kij,j->ki", m[:, :3, :3], centre) + m[:, :3, 3]
    return idx, c, radius * scale


def _world_sphere(node: Node) -> tuple[np.ndarray, float] | None:
    if node.geometry is None:
        raise ValueError(f"{node.name!r} has no geometry, so no bounding sphere")
    if isinstance(node, Instances):
        _, c, r = instance_spheres(node)
        if len(r) == 0:
            return None
        lo, hi = np.min(c - r[:, None], axis=0), np.max(c + r[:, None], axis=0)
        mid = 0.5 * (lo + hi)
        return mid, float(np.max(np.linalg.norm(c - mid, axis=1) + r))
    if is_deformed(node):  # skinned or morphed: the sphere of the posed vertices
        p = posed_vertices(node)[0]
        p = p[np.all(np.isfinite(p), axis=1)]
        if not len(p):
            return None
        c = 0.5 * (p.min(axis=0) + p.max(axis=0))
        return c, float(np.sqrt(np.max(np.sum((p - c) ** 2, axis=1))))
    sphere = _local_sphere(node.geometry)
    if sphere is None:
        return None
    centre, radius = sphere
    m = node.world_matrix
    scale = float(np.max(np.linalg.norm(m[:3, :3], axis=0)))
    with np.errstate(over="ignore", invalid="ignore"):
        c, r = m[:3, :3] @ centre + m[:3, 3], radius * scale
    if not (np.all(np.isfinite(c)) and math.isfinite(r)):
        raise ValueError(f"{node.name!r}: its world bounding sphere overflows float64")
    return c, r


def bounding_sphere(node: Node) -> tuple[np.ndarray, float]:
    """(centre (3,) float64 world, radius float world units) enclosing ``node``'s own
    geometry.

    Raises ValueError when the node has no geometry, or when its geometry has no finite
    point (empty, or every position NaN/inf), since then no sphere encloses anything.
    """
    sphere = _world_sphere(node)
    if sphere is None:
        raise ValueError(f"{node.name!r}: its geometry has no finite point, so no "
                         "bounding sphere")
    return sphere


def spheres_overlap(c1, r1, c2, r2) -> bool:
    """True when spheres (c1, r1) and (c2, r2) intersect or touch. Centres (3,) world,
    radii >= 0; ValueError naming a non-finite or malformed argument."""
    c1, c2 = as_vec3(c1, "c1"), as_vec3(c2, "c2")
    r1, r2 = _radius(r1, "r1"), _radius(r2, "r2")
    # Halves: exact, and neither the distance nor the radius sum can overflow.
    return math.dist(c1 * 0.5, c2 * 0.5) <= r1 * 0.5 + r2 * 0.5


def _spheres_of(node: Node):
    if isinstance(node, Instances):
        return instance_spheres(node)[1:]
    s = _world_sphere(node)
    if s is None:
        return np.zeros((0, 3)), np.zeros(0)
    return s[0][None], np.array([s[1]])


def nodes_collide(a: Node, b: Node) -> bool:
    """Sphere-sphere test on the nodes' world bounding spheres (every active instance's
    sphere for Instances nodes). False when either geometry has no finite point;
    ValueError when a node has no geometry."""
    for n in (a, b):
        if n.geometry is None:
            raise ValueError(f"{n.name!r} has no geometry, so no bounding sphere")
    ca, ra = _spheres_of(a)
    cb, rb = _spheres_of(b)
    if len(ra) == 0 or len(rb) == 0:
        return False
    return bool(overlap_pairs(ca, ra, cb, rb).any())


def overlap_pairs(centres_a, radii_a, centres_b, radii_b) -> np.ndarray:
    """(Na, Nb) bool: sphere i of A overlaps (or touches) sphere j of B.

    Centres (N, 3) world, radii (N,) >= 0, one radius per centre. Raises ValueError
    naming the argument for non-finite values, negative radii or mismatched counts.
    """
    def spheres(centres, radii, name):
        c = np.asarray(centres, np.float64)
        r = np.asarray(radii, np.float64).reshape(-1)
        if c.ndim > 2 or c.shape[-1:] != (3,):
            raise ValueError(f"centres_{name} must be (N, 3), got shape {c.shape}")
        c = c.reshape(-1, 3)
        if len(r) != len(c):
            raise ValueError(f"radii_{name} has {len(r)} values for {len(c)} centres")
        if not np.all(np.isfinite(c)):
            raise ValueError(f"centres_{name} must be finite")
        if not (np.all(np.isfinite(r)) and np.all(r >= 0)):
            raise ValueError(f"radii_{name} must be finite and >= 0")
        return c * 0.5, r * 0.5  # halves: exact, and nothing below can overflow

    ca, ra = spheres(centres_a, radii_a, "a")
    cb, rb = spheres(centres_b, radii_b, "b")
    d = ca[:, None, :] - cb[None, :, :]
    dist = np.hypot(np.hypot(d[..., 0], d[..., 1]), d[..., 2])
    return dist <= ra[:, None] + rb[None, :]


def _unit_direction(direction) -> np.ndarray:
    d = as_vec3(direction, "ray direction")
    big = float(np.max(np.abs(d)))
    if big == 0:
        raise ValueError(f"ray direction must be non-zero, got {direction!r}")
    d = d / big  # largest component 1: the norm can neither overflow nor underflow
    return d / np.linalg.norm(d)


def _ray_sphere(o: np.ndarray, d: np.ndarray, c: np.ndarray, r: float) -> float | None:
    """``ray_sphere`` on checked inputs (``d`` unit length)."""
    # Scale by 2^-e (exact) so every coordinate and r are below 1: no overflow anywhere.
    e = math.frexp(max(float(np.max(np.abs(o))), float(np.max(np.abs(c))), r))[1]
    f = np.ldexp(o, -e) - np.ldexp(c, -e)
    r = math.ldexp(r, -e)
    b = float(d @ f)
    perp = f - b * d
    disc = r * r - float(perp @ perp)
    if disc < 0:
        return None
    root = math.sqrt(disc)
    near, far = -b - root, -b + root
    if far < 0:
        return None
    with np.errstate(over="ignore"):
        return float(np.ldexp(near, e)) if near > 0 else 0.0


def _ray_spheres(o: np.ndarray, d: np.ndarray, c: np.ndarray, r: np.ndarray) -> np.ndarray:
    """``_ray_sphere`` for (M, 3) centres and (M,) radii at once: (M,) distances, NaN
    where the ray misses (same scaling and discriminant form)."""
    if len(r) == 0:
        return np.zeros(0)
    big = max(float(np.max(np.abs(o))), float(np.max(np.abs(c))), float(np.max(r)))
    e = math.frexp(big)[1]
    f = np.ldexp(o, -e)[None] - np.ldexp(c, -e)
    rs = np.ldexp(r, -e)
    b = f @ d
    perp = f - b[:, None] * d[None]
    disc = rs * rs - np.einsum("ij,ij->i", perp, perp)
    with np.errstate(invalid="ignore", over="ignore"):
        root = np.sqrt(disc)
        near, far = -b - root, -b + root
        t = np.where(near > 0, np.ldexp(near, e), 0.0)
    return np.where((disc >= 0) & (far >= 0), t, np.nan)


def ray_sphere(origin, direction, centre, radius) -> float | None:
    """Distance t >= 0 along the ray to the first hit of the sphere, or None.

    ``origin`` and ``centre`` are (3,) world points, ``radius`` world units (>= 0;
    0 is a single point). ``direction`` need not be normalised (t is in world units
    along the unit direction; inf only for a hit farther than the largest float).
    Raises ValueError naming the argument for a zero or non-finite direction, a
    non-finite point or a negative or non-finite radius.
    """
    return _ray_sphere(as_vec3(origin, "ray origin"), _unit_direction(direction),
                       as_vec3(centre, "centre"), _radius(radius, "radius"))


def _posed_bvh(node):
    """The BVH of a deformed node's posed triangles in the world frame
    (``engine.scene.deform.posed_vertices``), kept on the node and refit to each pose."""
    from .bvh import BVH

    p = posed_vertices(node)[0]
    cached = getattr(node, "_posed_bvh", None)
    faces = to_host(node.geometry.faces)
    if cached is not None and cached[1] is node.geometry.faces:
        try:
            cached[0].refit(p)
            return cached[0]
        except ValueError:  # other finite triangles: build anew
            pass
    bvh = BVH(p, faces)
    node._posed_bvh = (bvh, node.geometry.faces)
    return bvh


def _mesh_hits(o, d, matrices, geometry, best, bvh=None):
    """Nearest triangle hit of the world ray (o, unit d) on ``geometry`` placed by each
    of ``matrices`` (M, 4, 4) in turn (tried in the given order, each bounded by the best
    so far): (t, k, triangle, normal world) or None. The ray goes into each local frame
    through the inverse matrix without renormalising the direction, so the local t is
    the world distance. ``bvh``: the BVH to use instead of the geometry's own (a posed
    mesh's, in the frame ``matrices`` place)."""
    from .bvh import mesh_bvh  # Numba: imported when a mesh is first ray cast

    bvh = mesh_bvh(geometry) if bvh is None else bvh
    found = None
    for k, m in enumerate(matrices):
        try:
            inv = np.linalg.inv(m)
        except np.linalg.LinAlgError:
            continue  # a zero scale flattens the mesh: nothing to hit
        t, tri = bvh.intersect(inv[:3, :3] @ o + inv[:3, 3], inv[:3, :3] @ d, best)
        if tri[0] >= 0 and t[0] <= best:
            best = float(t[0])
            n = inv[:3, :3].T @ bvh.face_normals(tri)[0]  # normals go by the inverse transpose
            found = (best, k, int(tri[0]), n / np.linalg.norm(n))
    return found


def ray_cast(origin, direction, nodes) -> RayHit | None:
    """The first thing the ray hits among ``nodes``, or None, as a ``RayHit``.

    ``origin`` (3,) world point, ``direction`` (3,) world vector (normalised here);
    ``camera.screen_ray(x, y)`` / ``app.screen_ray()`` give both (a Ray unpacks into
    them). Each node is first tested by its world bounding sphere (the broad phase: a
    node whose sphere is missed, or is entered beyond the best hit so far, is skipped).
    Then:

    - ``Mesh`` geometry (on a Node or an ``Instances`` node): the exact nearest triangle
      through the mesh's BVH (``engine.game.bvh``, built once per geometry and refit or
      rebuilt when ``geometry.revision`` changes), in the node's (or each active
      instance's) world transform, so rotation, non-uniform scale and parents all count.
      A skinned or morphed mesh is hit where it is drawn: its posed triangles
      (``engine.scene.deform.posed_vertices``, the broad phase sphere too).
      Both faces of a triangle are hit. The hit has ``point``, the triangle's front-face
      unit ``normal`` in the world frame, ``triangle`` (index into ``faces``) and, for
      Instances, ``instance``.
    - Other geometry (points, lines): the bounding sphere itself, as before (``point`` on
      the sphere, ``normal`` and ``triangle`` None); pick drawn points with
      ``App.pick`` (pixel radius) instead.

    Nodes whose geometry has no finite point cannot be hit and are passed by; a node
    without geometry raises ValueError, as does a bad ray (see ``ray_sphere``).
    """
    o, d = as_vec3(origin, "ray origin"), _unit_direction(direction)
    best: RayHit | None = None
    limit = np.inf
    for node in nodes:
        if node.geometry is None:
            raise ValueError(f"{node.name!r} has no geometry, so no bounding sphere")
        mesh = isinstance(node.geometry, Mesh) and node.geometry.face_count > 0
        if isinstance(node, Instances):
            idx, centres, radii = instance_spheres(node)
            t = _ray_spheres(o, d, centres, radii)
            near = np.flatnonzero(np.isfinite(t) & (np.nan_to_num(t, nan=np.inf) <= limit))
            if len(near) == 0:
                continue
            near = near[np.argsort(t[near], kind="stable")]
            if not mesh:
                j = near[0]
                best, limit = RayHit(node, float(t[j]), int(idx[j]), o + t[j] * d), float(t[j])
                continue
            # candidates front to back by sphere entry; stop once a sphere starts beyond
            # the best hit
            for j in near:
                if t[j] > limit:
                    break
                hit = _mesh_hits(o, d, node.world_matrices([idx[j]]), node.geometry, limit)
                if hit is not None:
                    limit = hit[0]
                    best = RayHit(node, hit[0], int(idx[j]), o + hit[0] * d, hit[3], hit[2])
            continue
        sphere = _world_sphere(node)
        if sphere is None:
            continue
        t = _ray_sphere(o, d, *sphere)
        if t is None or t > limit:
            continue
        if not mesh:
            best, limit = RayHit(node, t, None, o + t * d), t
            continue
        if is_deformed(node):  # the posed triangles, already in the world frame
            hit = _mesh_hits(o, d, np.eye(4)[None], node.geometry, limit, _posed_bvh(node))
        else:
            hit = _mesh_hits(o, d, node.world_matrix[None], node.geometry, limit)
        if hit is not None:
            limit = hit[0]
            best = RayHit(node, hit[0], None, o + hit[0] * d, hit[3], hit[2])
    return best


def height_at(node: Node, x: float, z: float) -> float | None:
    """The world height y of ``node``'s mesh surface at world (x, z), exact on its
    triangles: the highest surface point on the vertical line through (x, z) (a ray
    cast straight down from above the node's bounding sphere), or None where the line
    misses the mesh (outside a height field). Works for any ``Mesh`` node in any
    transform, a ``heightfield`` being the usual one. Raises TypeError for a node
    without Mesh geometry, ValueError for a non-finite x or z."""
    if not isinstance(getattr(node, "geometry", None), Mesh):
        raise TypeError(f"height_at needs a node with Mesh geometry, got {node.name!r}")
    x, z = as_finite(x, "x"), as_finite(z, "z")
    sphere = _world_sphere(node)
    if sphere is None:
        return None
    top = sphere[0][1] + sphere[1] + 1.0
    hit = ray_cast((x, top, z), (0.0, -1.0, 0.0), [node])
    return None if hit is None else float(hit.point[1])


