"""Procedural geometry the engine generates itself (no third-party data).

All generators return NumPy arrays in a local frame, world units, +Y up, and are
deterministic for a given ``seed``.
"""

from __future__ import annotations

import numpy as np

from .geometry import Lines, Mesh
from .graph import Node, Scene

__all__ = ["demo_scene", "grid_lines", "grid_points", "icosphere", "random_box", "sphere_points",
           "torus_knot", "torus_knot_tube"]


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


def torus_knot_tube(p=2, q=3, segments=720, sides=24, tube=0.12):
    """A tube around the (p, q) torus knot: (positions (N, 3) float64, faces (M, 3)
    int64, normals (N, 3) float64, uv (N, 2) float64), N = (segments + 1)(sides + 1),
    M = 2 segments sides, for a knot of radius 1 (its centre line runs at (2 + cos qt)/3
    from the Y axis and sin(qt)/3 above the XZ plane).

    The grid has a seam column and row of duplicated vertices so u (along the knot) and
    v (around the tube) run 0..1 without wrapping, v = 0 at the top of the image (the
    engine's UV convention); the normals are the exact tube normals, so the seam does
    not show in the lighting; faces are counter-clockwise seen from outside.
    """
    t = np.linspace(0, 2 * np.pi, segments + 1)

    def centre(tt):
        rr = (2 + np.cos(q * tt)) / 3
        return np.stack([rr * np.cos(p * tt), np.sin(q * tt) / 3, rr * np.sin(p * tt)], axis=-1)

    c = centre(t)
    tangent = centre(t + 1e-4) - centre(t - 1e-4)
    tangent /= np.linalg.norm(tangent, axis=1, keepdims=True)
    normal = np.cross(tangent, [0.0, 1.0, 0.0])
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    binormal = np.cross(tangent, normal)
    a = np.linspace(0, 2 * np.pi, sides + 1)
    ring = (np.cos(a)[None, :, None] * normal[:, None, :]
            + np.sin(a)[None, :, None] * binormal[:, None, :])
    verts = (c[:, None, :] + tube * ring).reshape(-1, 3)
    i, j = np.meshgrid(np.arange(segments), np.arange(sides), indexing="ij")
    cols = sides + 1
    v00, v10 = i * cols + j, (i + 1) * cols + j
    v01, v11 = i * cols + j + 1, (i + 1) * cols + j + 1
    # counter-clockwise seen from outside: d/d(around) x d/d(along) is the outward normal
    faces = np.concatenate([np.stack([v00, v11, v10], -1).reshape(-1, 3),
                            np.stack([v00, v01, v11], -1).reshape(-1, 3)]).astype(np.int64)
    uu, vv = np.meshgrid(t / (2 * np.pi), a / (2 * np.pi), indexing="ij")
    uv = np.stack([uu.ravel(), vv.ravel()], axis=1)
    return verts, faces, ring.reshape(-1, 3), uv


def grid_lines(size=4.0, divisions=20):
    """(positions (N, 3), segments (M, 2)) of a square grid in the XZ plane (y = 0),
    centred at 0: divisions + 1 lines along X and as many along Z."""
    s = np.linspace(-size / 2, size / 2, divisions + 1)
    ends = []
    for x in s:
        ends += [(x, 0.0, -size / 2), (x, 0.0, size / 2), (-size / 2, 0.0, x), (size / 2, 0.0, x)]
    pos = np.asarray(ends, np.float64)
    return pos, np.arange(len(pos), dtype=np.int64).reshape(-1, 2)


def demo_scene(seed=0, aspect=1.0):
    """The demo: a lit, solid torus knot coloured along its length over a grid of lines,
    with two spheres orbiting it (a small hierarchy). Returns (scene, camera) with the
    camera framed on the scene for an output of ``aspect`` = width / height
    (``engine.scene.framing.framed_camera``). ``seed`` varies the hue."""
    from .framing import framed_camera
    from .material import Material

    scene = Scene("demo", background=(0.04, 0.05, 0.08))
    verts, faces, normals, uv = torus_knot_tube(segments=540, sides=20, tube=0.13)
    hue = (uv[:, 0] + 0.1 * seed) % 1.0
    colors = _hsv_to_rgb(hue, 0.75, 1.0)
    scene.add(Node("knot", position=(0, 0.6, 0), geometry=Mesh(
        verts, faces, colors=colors, normals=normals,
        material=Material(specular=0.4, shininess=40.0))))
    pos, seg = grid_lines(2.8, 14)
    scene.add(Node("grid", geometry=Lines(pos, seg, np.full((len(pos), 3), 0.35))))
    pivot = scene.add(Node("pivot", position=(0, 0.6, 0)))
    ball, ball_faces = icosphere(3, 0.18)
    for i, (rgb, x) in enumerate([((1.0, 0.55, 0.1), 1.3), ((0.2, 0.6, 1.0), -1.3)]):
        pivot.add(Node(f"moon{i}", position=(x, 0.3 * (i - 0.5), 0), geometry=Mesh(
            ball, ball_faces, colors=np.tile(rgb, (len(ball), 1)), normals=ball / 0.18)))
    camera = scene.add(framed_camera(scene, aspect))
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
