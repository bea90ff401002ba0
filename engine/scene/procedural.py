"""Procedural geometry the engine generates itself (no third-party data).

All generators return NumPy arrays in a local frame, world units, +Y up, and are
deterministic for a given ``seed``.
"""

from __future__ import annotations

import numpy as np

from .camera import PerspectiveCamera
from .geometry import PointCloud
from .graph import Node, Scene

__all__ = ["demo_scene", "grid_points", "icosphere", "random_box", "sphere_points", "torus_knot"]


def _hsv_to_rgb(h, s, v):
    """(N,) hue, scalar saturation/value in [0, 1] -> (N, 3) float RGB in [0, 1].

    Closed form of the HSV hexcone (Wikipedia "HSL and HSV", section "HSV to RGB
    alternative"): channel n in (5, 3, 1) is v - v s max(0, min(k, 4 - k, 1)),
    k = (n + 6 h) mod 6.
    """
    k = (np.array([5.0, 3.0, 1.0]) + 6.0 * np.asarray(h)[:, None]) % 6.0
    return v - v * s * np.clip(np.minimum(k, 4.0 - k), 0.0, 1.0)


def torus_knot(n=20000, p=2, q=3, radius=1.0, tube=0.25, seed=0):
    """(n, 3) points on a (p, q) torus knot tube and (n, 3) float colours by arc length."""
    rng = np.random.default_rng(seed)
    t = rng.uniform(0, 2 * np.pi, n)
    r = radius * (2 + np.cos(q * t)) / 3
    centre = np.stack([r * np.cos(p * t), radius * np.sin(q * t) / 3, r * np.sin(p * t)], axis=1)
    a = rng.normal(size=(n, 3))
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    pts = centre + tube * radius / 3 * a
    colors = _hsv_to_rgb(t / (2 * np.pi), 0.8, 1.0)
    return pts, colors


def sphere_points(n=5000, radius=1.0, seed=0):
    """(n, 3) points uniformly on a sphere of ``radius`` centred at the origin."""
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(n, 3))
    return radius * v / np.linalg.norm(v, axis=1, keepdims=True)


def grid_points(size=4.0, divisions=80):
    """Points along the lines of a square grid in the XZ plane (y = 0), centred at 0."""
    s = np.linspace(-size / 2, size / 2, divisions + 1)
    fine = np.linspace(-size / 2, size / 2, divisions * 8 + 1)
    a, b = np.meshgrid(s, fine, indexing="ij")
    lines_x = np.stack([b.ravel(), np.zeros(a.size), a.ravel()], axis=1)
    lines_z = np.stack([a.ravel(), np.zeros(a.size), b.ravel()], axis=1)
    return np.concatenate([lines_x, lines_z])


def random_box(n=10000, extent=1.0, seed=0):
    """(n, 3) uniform random points in the cube [-extent, extent]^3."""
    return np.random.default_rng(seed).uniform(-extent, extent, size=(n, 3))


def demo_scene(seed=0, aspect=1.0):
    """The demo: a coloured torus knot over a grid with two orbiting spheres (a small
    hierarchy). Returns (scene, camera) with the camera framed on the scene for an
    output of ``aspect`` = width / height."""
    scene = Scene("demo", background=(0.04, 0.05, 0.08))
    knot, colors = torus_knot(60000, seed=seed)
    scene.add(Node("knot", position=(0, 1.0, 0), geometry=PointCloud(knot, colors, point_size=2)))
    grid = grid_points(4.0, 20)
    scene.add(Node("grid", geometry=PointCloud(grid, np.full((len(grid), 3), 0.35))))
    pivot = scene.add(Node("pivot", position=(0, 1.0, 0)))
    for i, (hue, x) in enumerate([((1.0, 0.55, 0.1), 1.5), ((0.2, 0.6, 1.0), -1.5)]):
        pts = sphere_points(3000, 0.2, seed=seed + i + 1)
        pivot.add(Node(f"moon{i}", position=(x, 0.3 * (i - 0.5), 0),
                       geometry=PointCloud(pts, np.tile(hue, (len(pts), 1)), point_size=2)))
    camera = PerspectiveCamera(fov_y=50.0, aspect=aspect, name="camera")
    camera.frame(scene.bounds(), azimuth=35.0, elevation=25.0)
    scene.add(camera)
    return scene, camera


def icosphere(subdivisions: int = 0, radius: float = 1.0):
    """(positions (N, 3) float64, faces (M, 3) int32) of a sphere made by subdividing an
    icosahedron: 0 gives the icosahedron (12 vertices, 20 faces), each step splits every
    triangle in four (N = 10 * 4**s + 2, M = 20 * 4**s). Faces are counter-clockwise seen
    from outside (front-facing, normals out). Raises ValueError for subdivisions
    outside 0..7 or a radius that is not positive and finite."""
    s = int(subdivisions)
    if not 0 <= s <= 7 or s != subdivisions:
        raise ValueError(f"subdivisions must be a whole number in 0..7, got {subdivisions!r}")
    radius = float(radius)
    if not (radius > 0 and np.isfinite(radius)):
        raise ValueError(f"radius must be positive and finite, got {radius}")
    t = (1.0 + 5.0 ** 0.5) / 2.0
    v = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t),
         (0, -1, -t), (0, 1, -t), (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]
    f = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4),
         (11, 10, 2), (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8),
         (3, 8, 9), (4, 9, 5), (2, 4, 11), (6, 2, 10), (8, 6, 7), (9, 8, 1)]
    verts = [np.array(p, np.float64) / np.linalg.norm(p) for p in v]
    faces = f
    for _ in range(s):
        mid: dict[tuple[int, int], int] = {}

        def middle(a, b, mid=mid):
            key = (min(a, b), max(a, b))
            if key not in mid:
                m = verts[a] + verts[b]
                verts.append(m / np.linalg.norm(m))
                mid[key] = len(verts) - 1
            return mid[key]

        new = []
        for a, b, c in faces:
            ab, bc, ca = middle(a, b), middle(b, c), middle(c, a)
            new += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        faces = new
    return np.array(verts) * radius, np.array(faces, np.int32)
