"""Colliders: shapes attached to nodes, overlap tests between them, and a swept
move-and-slide character controller.

Shapes (each follows its node's world transform; sizes in the node's local frame, world
units; without a node the shape sits in the world frame)::

    SphereCollider(radius, centre=(0, 0, 0), node=None)
    CapsuleCollider(radius, height, centre=(0, 0, 0), node=None)   axis: local +Y,
                       ``height`` tip to tip (as ``procedural.capsule``)
    BoxCollider(size, centre=(0, 0, 0), node=None)                 oriented (OBB): rotated
                       and scaled with the node
    AABBCollider(size, centre=(0, 0, 0), node=None)                axis-aligned in the
                       world: moves with the node's origin, ignores its rotation and scale
    MeshCollider(node)                                             the node's Mesh
                       triangles, static (its BVH from ``engine.game.bvh``)

Spheres and capsules scale with the largest axis scale of the node's world matrix
(exact for uniform scale); boxes take the scaled, rotated axes (world matrices without
shear, as TRS node chains with uniform parent scales give).

``overlap(a, b)`` is True when two shapes intersect or touch: sphere and capsule
against anything by their closest points (``engine.game.closest``), box against box
and box against mesh triangles by the separating-axis test (15 axes for two boxes,
Gottschalk, Lin and Manocha, "OBBTree", SIGGRAPH 1996; 13 for a box and a triangle,
Akenine-Moeller, "Fast 3D Triangle-Box Overlap Testing", 2001). Two mesh colliders are
not tested against each other (meshes are static); that pair raises TypeError.

``move_and_slide(collider, velocity, dt, colliders)`` moves a sphere or capsule
collider's node by ``velocity * dt`` and stops it at the other colliders, sliding along
them: the motion is split into sub-steps no longer than half the shape's radius (so the
swept shape cannot pass through a wall or a triangle between two sub-steps), and after
each sub-step every contact is resolved by pushing the shape out along the contact
normal and removing the velocity's component into it (up to ``max_slides`` rounds).
A contact whose normal is within ``floor_max_angle`` of +Y is floor: it is resolved
straight up (so the character stands on a slope instead of sliding down it) and it
sets ``on_floor``. Contacts against triangles take the triangle's side the shape came
from, so a fast fall does not push it through the ground.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..scene.geometry import Mesh
from ..scene.graph import Node
from ..scene.instances import Instances
from ..scene.transforms import as_vec3
from .bvh import mesh_bvh
from .closest import _box_point, _segment_box, _segment_segment, segment_triangles

__all__ = ["AABBCollider", "BoxCollider", "CapsuleCollider", "Collider", "Contact",
           "MeshCollider", "SlideResult", "SphereCollider", "contact", "move_and_slide",
           "overlap"]


def _positive(v, name) -> float:
    try:
        v = float(v)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {v!r}") from None
    if not (v > 0 and math.isfinite(v)):
        raise ValueError(f"{name} must be positive and finite, got {v}")
    return v


class Collider:
    """Base of the collider shapes: ``node`` (or None: world frame), ``centre`` (3,)
    float64 offset in the node's local frame, and ``on_floor``: whether the last
    ``move_and_slide`` of this shape ended on a floor."""

    def __init__(self, centre=(0.0, 0.0, 0.0), node: Node | None = None):
        if node is not None and not isinstance(node, Node):
            raise TypeError(f"node must be an engine Node, got {type(node).__name__}")
        self.node = node
        self.centre = as_vec3(centre, "collider centre")
        self.on_floor = False  # set by move_and_slide for the shape it moves

    def _matrix(self) -> np.ndarray:
        return np.eye(4) if self.node is None else self.node.world_matrix

    def _world_centre(self) -> np.ndarray:
        m = self._matrix()
        return m[:3, :3] @ self.centre + m[:3, 3]

    def _scale(self) -> float:
        return float(np.max(np.linalg.norm(self._matrix()[:3, :3], axis=0)))

    def __repr__(self) -> str:
        name = None if self.node is None else self.node.name
        return f"{type(self).__name__}(node={name!r})"


class SphereCollider(Collider):
    """A sphere of ``radius`` (local units) at ``centre`` of ``node``."""

    def __init__(self, radius: float, centre=(0.0, 0.0, 0.0), node: Node | None = None):
        super().__init__(centre, node)
        self.radius = _positive(radius, "sphere radius")

    def segment(self):
        """World (a, b, radius) of the swept point: a = b = the centre."""
        c = self._world_centre()
        return c, c, self.radius * self._scale()


class CapsuleCollider(Collider):
    """A capsule along the node's local +Y: ``radius`` and ``height`` tip to tip
    (>= 2 radius), centred at ``centre``. Raises ValueError for bad sizes."""

    def __init__(self, radius: float, height: float, centre=(0.0, 0.0, 0.0),
                 node: Node | None = None):
        super().__init__(centre, node)
        self.radius = _positive(radius, "capsule radius")
        self.height = _positive(height, "capsule height")
        if self.height < 2 * self.radius:
            raise ValueError(f"capsule height {self.height} is less than twice its "
                             f"radius {self.radius}")

    def segment(self):
        """World (a, b, radius): the end points of the capsule's inner segment."""
        m = self._matrix()
        half = np.array([0.0, self.height / 2 - self.radius, 0.0])
        a = m[:3, :3] @ (self.centre - half) + m[:3, 3]
        b = m[:3, :3] @ (self.centre + half) + m[:3, 3]
        return a, b, self.radius * self._scale()


class BoxCollider(Collider):
    """An oriented box of ``size`` (x, y, z, local units) at ``centre``, rotated and
    scaled with ``node``. Raises ValueError for a size that is not three positive
    numbers."""

    def __init__(self, size, centre=(0.0, 0.0, 0.0), node: Node | None = None):
        super().__init__(centre, node)
        s = as_vec3(size, "box size")
        if not np.all(s > 0):
            raise ValueError(f"box size must be three positive numbers, got {tuple(s)}")
        self.size = s

    def box(self):
        """World (centre (3,), unit axes as columns (3, 3), half extents (3,))."""
        m = self._matrix()[:3, :3]
        scale = np.linalg.norm(m, axis=0)
        return self._world_centre(), m / scale, self.size / 2 * scale


class AABBCollider(BoxCollider):
    """A box aligned with the world axes, ``size`` in world units, at the node's world
    origin + ``centre`` (the node's rotation and scale do not turn or grow it)."""

    def box(self):
        m = self._matrix()
        return m[:3, 3] + self.centre, np.eye(3), self.size / 2


class MeshCollider(Collider):
    """The triangles of ``node``'s Mesh geometry in its world transform (static level
    geometry: terrain, walls). Raises TypeError for a node without Mesh geometry."""

    def __init__(self, node: Node):
        if not isinstance(getattr(node, "geometry", None), Mesh):
            raise TypeError(f"MeshCollider needs a node with Mesh geometry, got "
                            f"{getattr(node, 'name', node)!r}")
        if isinstance(node, Instances):
            raise TypeError(f"MeshCollider takes one mesh node, not the Instances node "
                            f"{node.name!r}; give its instances sphere or box colliders")
        super().__init__((0.0, 0.0, 0.0), node)

    def triangles_near(self, lo, hi):
        """World triangles (v0, v1, v2 (K, 3) each, face normals (K, 3)) whose boxes can
        overlap the world box [lo, hi]."""
        m = self._matrix()
        inv = np.linalg.inv(m)
        corners = np.array(np.meshgrid(*zip(lo, hi), indexing="ij")).reshape(3, -1).T
        local = corners @ inv[:3, :3].T + inv[:3, 3]
        bvh = mesh_bvh(self.node.geometry)
        idx = bvh.query_box(local.min(axis=0), local.max(axis=0))
        tri = bvh.positions[bvh.faces[idx]] @ m[:3, :3].T + m[:3, 3]
        n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
        with np.errstate(invalid="ignore", divide="ignore"):
            n = n / np.linalg.norm(n, axis=1, keepdims=True)
        ok = np.all(np.isfinite(n), axis=1)  # a degenerate triangle has no side
        return (np.ascontiguousarray(tri[ok, 0]), np.ascontiguousarray(tri[ok, 1]),
                np.ascontiguousarray(tri[ok, 2]), n[ok])


class Contact(NamedTuple):
    """A penetration of a moving sphere or capsule into another shape: ``normal`` (3,)
    unit world vector pointing out of the other shape, ``depth`` world units the shape
    must move along it to just touch, ``collider`` the other shape."""

    normal: np.ndarray
    depth: float
    collider: Collider


def _swept(c: Collider):
    if isinstance(c, (SphereCollider, CapsuleCollider)):
        return c.segment()
    return None


def contact(mover: Collider, other: Collider, came_from=None) -> Contact | None:
    """The deepest contact of a sphere or capsule ``mover`` with ``other``, or None when
    they do not touch. ``came_from``: a (3,) world point on the side the mover came from
    (its centre before the move), used to choose a triangle's side. Raises TypeError
    when the mover is not a sphere or capsule."""
    seg = _swept(mover)
    if seg is None:
        raise TypeError(f"contact needs a sphere or capsule mover, got {type(mover).__name__}")
    a, b, r = seg
    mid = 0.5 * (a + b) if came_from is None else as_vec3(came_from, "came_from")
    os = _swept(other)
    if os is not None:
        oa, ob, orad = os
        s, t = _segment_segment(a, b, oa, ob)
        q, p = a + s * (b - a), oa + t * (ob - oa)
        return _contact_from(q, p, r + orad, other, fallback=mid - 0.5 * (oa + ob))
    if isinstance(other, BoxCollider):
        centre, axes, half = other.box()
        t = _segment_box(a, b, centre, axes, half)
        q = a + t * (b - a)
        p = _box_point(q, centre, axes, half)
        d = float(np.linalg.norm(q - p))
        if d > 1e-9 * (1.0 + float(np.max(half))):  # clearly outside: rounding cannot flip n
            return _contact_from(q, p, r, other)
        # the segment's nearest point is inside the box: out through the nearest face
        local = axes.T @ (q - centre)
        gap = half - np.abs(local)
        k = int(np.argmin(gap))
        n = axes[:, k] * (1.0 if local[k] >= 0 else -1.0)
        return Contact(n, float(gap[k] + r), other)
    if isinstance(other, MeshCollider):
        lo = np.minimum(a, b) - r
        hi = np.maximum(a, b) + r
        v0, v1, v2, fn = other.triangles_near(lo, hi)
        if len(v0) == 0:
            return None
        dist, q, p = segment_triangles(a, b, v0, v1, v2)
        near = np.flatnonzero(dist <= r)
        if len(near) == 0:
            return None
        # each triangle's side: the one the mover came from
        side = np.sign(np.einsum("ij,ij->i", mid - v0[near], fn[near]))
        side[side == 0] = 1.0
        face = fn[near] * side[:, None]
        diff = q[near] - p[near]
        along = np.einsum("ij,ij->i", diff, face)
        dn = np.linalg.norm(diff, axis=1)
        # the direction between the closest points when it points to the mover's side,
        # else (crossed, or touching the face) the face normal of that side
        use_diff = (dn > 1e-12) & (along > 0)
        normal = np.where(use_diff[:, None], diff / np.maximum(dn, 1e-300)[:, None], face)
        depth = np.where(use_diff, r - dn, r + np.abs(along))
        j = int(np.argmax(depth))
        return Contact(normal[j], float(depth[j]), other)
    raise TypeError(f"cannot test {type(other).__name__}")


def _contact_from(q, p, reach, other, fallback=None):
    diff = q - p
    d = float(np.linalg.norm(diff))
    if d > reach:
        return None
    if d > 0:
        n = diff / d
    else:  # centres coincide: out along the way it came, else up
        f = np.zeros(3) if fallback is None else np.asarray(fallback, np.float64)
        n = f / np.linalg.norm(f) if np.linalg.norm(f) > 0 else np.array([0.0, 1.0, 0.0])
    return Contact(n, float(reach - d), other)


def _sat(axes, ca, ha_axes, ha, points_b=None, cb=None, hb_axes=None, hb=None) -> bool:
    """True when no axis of ``axes`` (K, 3) separates box A from B (a box, or a point
    set such as a triangle's vertices)."""
    norms = np.linalg.norm(axes, axis=1)
    axes = axes[norms > 1e-12 * max(1.0, float(norms.max(initial=0.0)))]
    ra = np.abs(axes @ ha_axes) @ ha
    pa = axes @ ca
    if points_b is not None:
        proj = points_b @ axes.T  # (n, K)
        lo, hi = proj.min(axis=0), proj.max(axis=0)
        return bool(np.all((lo <= pa + ra) & (hi >= pa - ra)))
    rb = np.abs(axes @ hb_axes) @ hb
    return bool(np.all(np.abs(axes @ cb - pa) <= ra + rb))


def _box_box(a: BoxCollider, b: BoxCollider) -> bool:
    ca, aa, ha = a.box()
    cb, ab, hb = b.box()
    crosses = np.cross(aa.T[:, None, :], ab.T[None, :, :]).reshape(-1, 3)
    axes = np.concatenate([aa.T, ab.T, crosses])
    return _sat(axes, ca, aa, ha, cb=cb, hb_axes=ab, hb=hb)


def _box_mesh(box: BoxCollider, mesh: MeshCollider) -> bool:
    c, axes, half = box.box()
    reach = np.abs(axes) @ half
    v0, v1, v2, fn = mesh.triangles_near(c - reach, c + reach)
    for tri, n in zip(np.stack([v0, v1, v2], axis=1), fn):
        edges = np.stack([tri[1] - tri[0], tri[2] - tri[1], tri[0] - tri[2]])
        crosses = np.cross(axes.T[:, None, :], edges[None, :, :]).reshape(-1, 3)
        if _sat(np.concatenate([axes.T, n[None], crosses]), c, axes, half, points_b=tri):
            return True
    return False


def overlap(a: Collider, b: Collider) -> bool:
    """True when colliders ``a`` and ``b`` intersect or touch (see the module
    docstring for the methods). Raises TypeError for two MeshColliders."""
    for x, y in ((a, b), (b, a)):
        if _swept(x) is not None:
            return contact(x, y) is not None
    if isinstance(a, MeshCollider) and isinstance(b, MeshCollider):
        raise TypeError("two MeshColliders are not tested against each other (meshes are "
                        "static); give one of them a sphere, capsule or box collider")
    if isinstance(a, MeshCollider):
        a, b = b, a
    if isinstance(b, MeshCollider):
        return _box_mesh(a, b)
    return _box_box(a, b)


class SlideResult(NamedTuple):
    """What ``move_and_slide`` did: ``position`` (3,) the node's new world position,
    ``velocity`` (3,) the velocity left after sliding (components into what it hit
    removed), ``on_floor`` whether it stands on a floor contact, ``floor_normal`` (3,)
    of that contact (else None), ``contacts`` the contacts resolved."""

    position: np.ndarray
    velocity: np.ndarray
    on_floor: bool
    floor_normal: np.ndarray | None
    contacts: list


def _move_node(node: Node, delta: np.ndarray):
    if not np.any(delta):
        return
    parent = node.parent
    if parent is None:
        node.position = node.position + delta
    else:
        node.position = node.position + np.linalg.solve(parent.world_matrix[:3, :3], delta)


def _resolve(collider, others, before, v, cos_floor, rounds, resolved):
    """Push ``collider`` out of every contact (floors straight up), removing the
    velocity into them; returns the floor normal met, or None."""
    floor_n = None
    for _round in range(rounds):
        found = [c for c in (contact(collider, o, came_from=before) for o in others)
                 if c is not None and c.depth > 0]
        if not found:
            break
        for c in found:
            n = c.normal
            if n[1] >= cos_floor:  # floor: straight up, no slide down the slope
                _move_node(collider.node, np.array([0.0, c.depth / n[1], 0.0]))
                v[1] = max(v[1], 0.0)
                floor_n = n
            else:
                _move_node(collider.node, n * c.depth)
                into = float(v @ n)
                if into < 0:
                    v -= into * n
            resolved.append(c)
    return floor_n


def move_and_slide(collider: Collider, velocity, dt: float, colliders, *,
                   floor_max_angle: float = 45.0, max_slides: int = 4,
                   snap: float = 0.0) -> SlideResult:
    """Move ``collider``'s node by ``velocity * dt`` (world units per second, world
    frame), sliding along ``colliders`` instead of entering them (see the module
    docstring: sub-steps of at most half the radius, push-out along contact normals,
    floors within ``floor_max_angle`` degrees of +Y resolved upward). ``snap`` (world
    units, like Godot's ``floor_snap_length``): when the collider stood on a floor at
    its last move and is not moving up, it is kept on a floor up to ``snap`` below,
    so running downhill does not become a series of small jumps. ``collider.on_floor``
    keeps the last result.

    ``collider``: a SphereCollider or CapsuleCollider with a node; the other
    ``colliders`` may include it (it is skipped). Returns a ``SlideResult``; feed its
    ``velocity`` back next update (gravity: ``v[1] -= 9.81 * dt`` first). Raises
    TypeError for a mover that is not a sphere or capsule on a node, ValueError for a
    non-finite velocity or a negative or non-finite dt.
    """
    if _swept(collider) is None or collider.node is None:
        raise TypeError("move_and_slide needs a SphereCollider or CapsuleCollider on a node")
    v = as_vec3(velocity, "velocity").copy()
    dt = float(dt)
    if not (dt >= 0 and math.isfinite(dt)):
        raise ValueError(f"dt must be a finite number of seconds >= 0, got {dt}")
    cos_floor = math.cos(math.radians(float(floor_max_angle)))
    rounds = max(1, int(max_slides))
    others = [c for c in colliders if c is not collider]
    radius = collider.segment()[2]
    steps = max(1, math.ceil(float(np.linalg.norm(v)) * dt / (0.5 * radius)))
    h = dt / steps
    floor_n, resolved = None, []
    for _ in range(steps):
        a, b, _r = collider.segment()
        before = 0.5 * (a + b)
        _move_node(collider.node, v * h)
        met = _resolve(collider, others, before, v, cos_floor, rounds, resolved)
        floor_n = met if met is not None else floor_n
    snap = float(snap)
    if floor_n is None and snap > 0 and collider.on_floor and v[1] <= 0:
        # it stood on a floor last time and is not jumping: follow the ground down (a
        # step or a downhill faster than gravity) if there is floor within ``snap``
        a, b, _r = collider.segment()
        before = 0.5 * (a + b)
        _move_node(collider.node, np.array([0.0, -snap, 0.0]))
        floor_n = _resolve(collider, others, before, v, cos_floor, rounds, resolved)
        if floor_n is None:
            _move_node(collider.node, np.array([0.0, snap, 0.0]))
    on_floor = floor_n is not None
    collider.on_floor = on_floor
    return SlideResult(collider.node.world_position.copy(), v, on_floor, floor_n, resolved)
