"""Procedural geometry the engine generates itself (no third-party data).

The point generators return NumPy arrays, the primitives (``box``, ``plane``,
``uv_sphere``, ``cylinder``, ``cone``, ``capsule``, ``torus``, ``heightfield``) ``Mesh``
objects with unit normals and UVs; all in a local frame, world units, +Y up, and
deterministic for a given ``seed``.
"""

from __future__ import annotations

import numpy as np

from .geometry import Lines, Mesh
from .graph import Node, Scene

__all__ = ["box", "capsule", "cone", "cylinder", "demo_scene", "grid_lines", "grid_points",
           "heightfield", "heightfield_from_image", "icosphere", "plane", "random_box",
           "sphere_points", "torus", "torus_knot", "torus_knot_tube", "uv_sphere"]


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


# --- primitives: closed or open Mesh shapes with unit normals and UVs ------------------------
#
# Conventions for every primitive below: local frame, +Y up, centred on the origin, world
# units; faces counter-clockwise seen from outside (front-facing); normals are unit
# per-vertex normals of the smooth surface (flat per face for the box and the plane);
# UVs are in [0, 1] with (0, 0) the texture's top-left. Seams (where u wraps or a normal
# jumps) duplicate vertices, so a closed shape is watertight in its positions (every
# edge shared by two faces once duplicates at the same position are merged), not in its
# vertex indices. Keyword arguments (``colors``, ``material``, ...) go to ``Mesh``.

def _positive(value, name: str) -> float:
    v = float(value)
    if not (v > 0 and np.isfinite(v)):
        raise ValueError(f"{name} must be positive and finite, got {value!r}")
    return v


def _segments(value, name: str, least: int) -> int:
    if isinstance(value, bool) or int(value) != value or int(value) < least:
        raise ValueError(f"{name} must be a whole number >= {least}, got {value!r}")
    return int(value)


def _grid_faces(rows: int, cols: int, start: int = 0) -> np.ndarray:
    """Faces of a (rows + 1) x (cols + 1) vertex grid stored row by row: quad (i, j) is
    (a, b, c, d) = (i j, i j+1, i+1 j+1, i+1 j), split into (a, b, c) and (a, c, d), so the
    front face is the one for which "j grows" then "i grows" turn counter-clockwise."""
    i, j = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    a = start + i * (cols + 1) + j
    b, d = a + 1, a + cols + 1
    c = d + 1
    quads = np.stack([a, b, c, d], axis=-1).reshape(-1, 4)
    return np.concatenate([quads[:, [0, 1, 2]], quads[:, [0, 2, 3]]]).astype(np.int32)


def _mesh(parts, mesh_kwargs):
    """One Mesh from [(positions, normals, uvs, faces)] parts (faces local to each part)."""
    from .geometry import Mesh

    pos, nor, uv, faces, n = [], [], [], [], 0
    for p, nrm, t, f in parts:
        pos.append(p)
        nor.append(nrm)
        uv.append(t)
        faces.append(np.asarray(f) + n)
        n += len(p)
    nor = np.concatenate(nor)
    nor /= np.linalg.norm(nor, axis=1, keepdims=True)
    return Mesh(np.concatenate(pos), np.concatenate(faces).astype(np.int32), normals=nor,
                uvs=np.clip(np.concatenate(uv), 0.0, 1.0), **mesh_kwargs)


def _revolve(strip, segments: int):
    """A surface of revolution about +Y from a profile strip [(r, y, nr, ny, v), ...]
    (bottom to top, r >= 0): ``segments + 1`` vertices per profile point (the seam at
    u = 1 repeats u = 0), x = r sin(phi), z = r cos(phi). A profile point with r = 0 is a
    pole: its quads become single triangles, so no face is degenerate."""
    prof = np.asarray(strip, np.float64)
    k = len(prof)
    phi = np.linspace(0.0, 2 * np.pi, segments + 1)
    s, c = np.sin(phi)[None, :], np.cos(phi)[None, :]
    s[0, -1], c[0, -1] = 0.0, 1.0  # the seam repeats phi = 0 exactly, not sin(2 pi) ~ 1e-16
    r, y, nr, ny, v = (prof[:, q][:, None] for q in range(5))
    pos = np.stack(np.broadcast_arrays(r * s, y, r * c), axis=-1).reshape(-1, 3)
    nor = np.stack(np.broadcast_arrays(nr * s, ny, nr * c), axis=-1).reshape(-1, 3)
    u = np.broadcast_to(phi[None, :] / (2 * np.pi), (k, segments + 1))
    uv = np.stack([u, np.broadcast_to(1.0 - v, (k, segments + 1))], axis=-1).reshape(-1, 2)
    faces = _grid_faces(k - 1, segments).reshape(2, k - 1, segments, 3)
    lower_pole = prof[:-1, 0] == 0  # quad row whose bottom ring is a pole: keep (a, c, d)
    upper_pole = prof[1:, 0] == 0   # quad row whose top ring is a pole: keep (a, b, c)
    keep = np.stack([~lower_pole, ~upper_pole])[:, :, None]
    faces = faces[np.broadcast_to(keep, faces.shape[:3])]
    return pos, nor, uv, faces


def _arc(radius, theta0, theta1, n, y0, v0, v1):
    """Profile points of a circular arc of ``radius`` centred at (0, y0), polar angle
    theta from -Y (0) to +Y (pi), n steps, v from v0 to v1."""
    t = np.linspace(theta0, theta1, n + 1)
    sin = np.where((t == 0) | (t == np.pi), 0.0, np.sin(t))  # poles exactly on the axis
    return [(radius * sa, y0 - radius * np.cos(a), sa, -np.cos(a), vv)
            for a, sa, vv in zip(t, sin, np.linspace(v0, v1, n + 1))]


def _disc(radius, y, up: bool, v):
    """A cap: the profile from the axis to the rim (bottom cap) or back (top cap)."""
    ny = 1.0 if up else -1.0
    ring = [(0.0, y, 0.0, ny, v), (radius, y, 0.0, ny, v)]
    return ring[::-1] if up else ring


def box(size=(1.0, 1.0, 1.0), segments: int = 1, **mesh_kwargs):
    """A box ``size`` = (width x, height y, depth z) centred on the origin, each face a
    ``segments`` x ``segments`` grid with its own flat normal and UVs over [0, 1]
    (6 (segments + 1)^2 vertices: faces do not share vertices, so normals stay flat).
    Closed: area 2(wh + hd + dw), volume w h d. Raises ValueError for a size that is not
    three positive finite numbers or segments < 1."""
    w, h, d = (_positive(v, "box size") for v in np.broadcast_to(size, (3,)))
    n = _segments(segments, "segments", 1)
    half = np.array([w, h, d]) / 2
    t = np.linspace(0.0, 1.0, n + 1)
    vv, uu = np.meshgrid(t, t, indexing="ij")
    parts = []
    # (normal axis, sign, u axis, v axis with the sign that makes u x v = +normal)
    for axis, sign in [(0, 1), (0, -1), (1, 1), (1, -1), (2, 1), (2, -1)]:
        ua, va = [a for a in range(3) if a != axis]
        normal = np.zeros(3)
        normal[axis] = sign
        u_dir, v_dir = np.eye(3)[ua], np.eye(3)[va]
        if np.dot(np.cross(u_dir, v_dir), normal) < 0:
            u_dir = -u_dir
        # grid rows go along -v (image rows go down), columns along u
        p = (normal * half)[None, None] + (2 * uu[..., None] - 1) * (u_dir * half) \
            + (1 - 2 * vv[..., None]) * (v_dir * half)
        parts.append((p.reshape(-1, 3), np.tile(normal, ((n + 1) ** 2, 1)),
                      np.stack([uu, vv], axis=-1).reshape(-1, 2), _grid_faces(n, n)[:, ::-1]))
    return _mesh(parts, mesh_kwargs)


def plane(size=(1.0, 1.0), segments=1, **mesh_kwargs):
    """A flat plane in the XZ plane (y = 0) facing +Y, ``size`` = (width x, depth z),
    centred on the origin, ``segments`` (one number or (along x, along z)) quads per
    side. UV (0, 0) is the corner (-w/2, 0, -d/2). Open: area w d. Raises ValueError for
    a non-positive size or segments < 1."""
    w, d = (_positive(v, "plane size") for v in np.broadcast_to(size, (2,)))
    nx, nz = (_segments(v, "segments", 1) for v in np.broadcast_to(segments, (2,)))
    return heightfield(np.zeros((nz + 1, nx + 1)), size=(w, d), **mesh_kwargs)


def uv_sphere(radius: float = 1.0, segments: int = 64, rings: int = 32, **mesh_kwargs):
    """A latitude-longitude sphere: ``segments`` around Y, ``rings`` from pole to pole;
    u follows longitude, v latitude (v = 0 at the north pole, +Y). Closed: area
    4 pi r^2, volume 4/3 pi r^3 (the default tessellation is within 1% of both; see
    ``icosphere`` for evenly sized triangles). Raises ValueError for a non-positive
    radius, segments < 3 or rings < 2."""
    r = _positive(radius, "radius")
    n = _segments(segments, "segments", 3)
    m = _segments(rings, "rings", 2)
    return _mesh([_revolve(_arc(r, 0.0, np.pi, m, 0.0, 0.0, 1.0), n)], mesh_kwargs)


def cylinder(radius: float = 0.5, height: float = 1.0, segments: int = 48,
             caps: bool = True, **mesh_kwargs):
    """A cylinder about Y from y = -height/2 to +height/2, ``segments`` around, with flat
    caps when ``caps`` (closed: area 2 pi r (r + h), volume pi r^2 h; open without them).
    Raises ValueError for a non-positive radius or height or segments < 3."""
    r, h = _positive(radius, "radius"), _positive(height, "height")
    n = _segments(segments, "segments", 3)
    parts = [_revolve([(r, -h / 2, 1.0, 0.0, 0.0), (r, h / 2, 1.0, 0.0, 1.0)], n)]
    if caps:
        parts += [_revolve(_disc(r, -h / 2, False, 0.0), n), _revolve(_disc(r, h / 2, True, 1.0), n)]
    return _mesh(parts, mesh_kwargs)


def cone(radius: float = 0.5, height: float = 1.0, segments: int = 48, cap: bool = True,
         **mesh_kwargs):
    """A cone about Y: base circle of ``radius`` at y = -height/2, apex at +height/2,
    smooth side normals, a flat base when ``cap`` (closed: area pi r (r + sqrt(r^2 +
    h^2)), volume pi r^2 h / 3). Raises ValueError for a non-positive radius or height
    or segments < 3."""
    r, h = _positive(radius, "radius"), _positive(height, "height")
    n = _segments(segments, "segments", 3)
    slant = np.hypot(r, h)
    nr, ny = h / slant, r / slant  # the side's outward normal, constant along a meridian
    parts = [_revolve([(r, -h / 2, nr, ny, 0.0), (0.0, h / 2, nr, ny, 1.0)], n)]
    if cap:
        parts.append(_revolve(_disc(r, -h / 2, False, 0.0), n))
    return _mesh(parts, mesh_kwargs)


def capsule(radius: float = 0.5, height: float = 2.0, segments: int = 48, rings: int = 16,
            **mesh_kwargs):
    """A capsule about Y: a cylinder of ``radius`` with hemispherical ends, ``height`` the
    whole length tip to tip (>= 2 radius; equal gives a sphere), ``rings`` per hemisphere.
    Closed: area 2 pi r (2r + l), volume pi r^2 (4r/3 + l), l = height - 2 radius.
    Raises ValueError for non-positive sizes, height < 2 radius, segments < 3 or
    rings < 1."""
    r, h = _positive(radius, "radius"), _positive(height, "height")
    if h < 2 * r:
        raise ValueError(f"capsule height {h} is less than twice its radius {r}")
    n = _segments(segments, "segments", 3)
    m = _segments(rings, "rings", 1)
    half = h / 2 - r
    arc = np.pi * r / 2
    total = 2 * arc + 2 * half
    bottom = _arc(r, 0.0, np.pi / 2, m, -half, 0.0, arc / total)
    top = _arc(r, np.pi / 2, np.pi, m, half, (arc + 2 * half) / total, 1.0)
    strip = bottom + top if half > 0 else bottom + top[1:]
    return _mesh([_revolve(strip, n)], mesh_kwargs)


def torus(radius: float = 1.0, tube: float = 0.25, segments: int = 64, tube_segments: int = 32,
          **mesh_kwargs):
    """A ring torus in the XZ plane (axis Y): centre-line circle of ``radius``, tube of
    radius ``tube`` < ``radius``; u around Y, v around the tube. Closed: area
    4 pi^2 R r, volume 2 pi^2 R r^2. Raises ValueError for non-positive sizes,
    tube >= radius, segments < 3 or tube_segments < 3."""
    big, small = _positive(radius, "radius"), _positive(tube, "tube")
    if small >= big:
        raise ValueError(f"torus tube {small} must be smaller than its radius {big}")
    n = _segments(segments, "segments", 3)
    m = _segments(tube_segments, "tube_segments", 3)
    # the tube's cross-section as a profile, angle a from -Y through the inside (-r)
    t = np.linspace(0.0, 2 * np.pi, m + 1)
    strip = [(big - small * np.sin(a), -small * np.cos(a), -np.sin(a), -np.cos(a), k / m)
             for k, a in enumerate(t)]
    p, nrm, uv, f = _revolve(strip, n)
    # going up the inside of the tube turns the profile the other way round: flip faces
    return _mesh([(p, nrm, uv, f[:, ::-1])], mesh_kwargs)


def heightfield(heights, size=(1.0, 1.0), **mesh_kwargs):
    """A terrain Mesh from a (rows, cols) array of heights (world units).

    ``heights[i, j]`` is the height (y) at x = -width/2 + j width/(cols - 1),
    z = -depth/2 + i depth/(rows - 1): rows run along +Z, like an image's rows, and the
    field is centred on the origin in x and z. Each grid cell is two triangles
    (diagonal from (i, j) to (i+1, j+1)), front faces up. Normals are the smooth normals
    of the height function, (-dh/dx, 1, -dh/dz) normalised with central differences
    (one-sided at the border); UV (j/(cols-1), i/(rows-1)), so an image of the same
    shape lies on it as in the heights array (row 0, the image's top, at z = -depth/2).
    Open: its area is that of its triangles.

    Raises ValueError for an array that is not 2-D with at least 2 x 2 finite values, or
    a size that is not two positive finite numbers.
    """
    h = np.asarray(heights, np.float64)
    if h.ndim != 2 or h.shape[0] < 2 or h.shape[1] < 2:
        raise ValueError(f"heights must be a 2-D array of at least 2 x 2, got shape {h.shape}")
    if not np.all(np.isfinite(h)):
        raise ValueError("heights must be finite (found NaN or inf)")
    w, d = (_positive(v, "heightfield size") for v in np.broadcast_to(size, (2,)))
    rows, cols = h.shape
    x = np.linspace(-w / 2, w / 2, cols)
    z = np.linspace(-d / 2, d / 2, rows)
    gz, gx = np.gradient(h, z, x)
    zz, xx = np.meshgrid(z, x, indexing="ij")
    pos = np.stack([xx, h, zz], axis=-1).reshape(-1, 3)
    nor = np.stack([-gx, np.ones_like(h), -gz], axis=-1).reshape(-1, 3)
    vv, uu = np.meshgrid(np.linspace(0, 1, rows), np.linspace(0, 1, cols), indexing="ij")
    uv = np.stack([uu, vv], axis=-1).reshape(-1, 2)
    # j grows along +x, i along +z: x then z turns clockwise seen from +Y, so flip
    return _mesh([(pos, nor, uv, _grid_faces(rows - 1, cols - 1)[:, ::-1])], mesh_kwargs)


def heightfield_from_image(path, size=(1.0, 1.0), height: float = 1.0, **mesh_kwargs):
    """``heightfield`` from a greyscale image read with Pillow: pixel (row i, column j)
    of the image gives ``heights[i, j]`` = ``height`` * value / full scale (0 black to
    ``height`` white; 8-bit, 16-bit and float images; colour images are converted to
    luma first, ITU-R 601 as Pillow's "L" mode does). Raises engine.errors.LoadError
    naming the file when it is missing or not an image, ValueError for a bad size or
    height."""
    from PIL import Image, UnidentifiedImageError

    from ..errors import LoadError

    height = float(height)
    if not np.isfinite(height):
        raise ValueError(f"height must be finite, got {height}")
    try:
        with Image.open(path) as img:
            img.load()
            if img.mode in ("I;16", "I;16B", "I;16L", "I"):
                a = np.asarray(img, np.float64)
                full = 65535.0 if img.mode.startswith("I;16") or a.max() > 255 else 255.0
            elif img.mode == "F":
                a, full = np.asarray(img, np.float64), 1.0
            else:
                a, full = np.asarray(img.convert("L"), np.float64), 255.0
    except FileNotFoundError:
        raise LoadError(f"{path}: no such file") from None
    except (UnidentifiedImageError, OSError) as exc:
        raise LoadError(f"{path}: not a readable image ({exc})") from None
    return heightfield(a * (height / full), size=size, **mesh_kwargs)
