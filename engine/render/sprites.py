"""Point sprites: each point's shape, its diameter on screen and its lit colour.

A vertex drawn as a point is a sprite centred on its projected position (x, y) (screen
pixels, engine.render.backends.base) with a diameter D in pixels::

    D = point_size                                 size_units "px"
    D = point_size * focal_px / w                  size_units "world"
    focal_px = P[1, 1] * height / 2                the projection's pixels per world unit
                                                   at view depth 1
    1 / w = (z P[3, 2] - P[2, 2]) / (P[3, 2] P[2, 3] - P[2, 2] P[3, 3]),  z = 2 d - 1

``point_size`` is a diameter (a square's side); w is the point's clip w, its depth along
the view axis for a perspective camera and 1 for an orthographic one, recovered from its
window depth d (the projection's z and w rows solved for w: linear in z, so a world
diameter is one multiply-add per point) so that every backend
and GL's vertex shader derive it from the same float32 depth (relative error about
6e-8 * w / near). Then D is clamped to [1, 255] (``MAX_POINT_SIZE``, GL's range here)
and the point covers::

    "square"   the pixel centres in the axis-aligned square of side round(D) (half to
               even) centred on it (engine.render.points, GL_POINTS)
    "round"    the pixel centres (c_x, c_y) with (c_x - x)^2 + (c_y - y)^2 <= (D / 2)^2,
               in double precision; with D < sqrt(2) a disc can fall between four pixel
               centres, so such a point covers one pixel, as a 1-pixel square

With MSAA (engine.render.msaa) every sample position is tested the same way, so discs
get anti-aliased rims. A frame whose points are all squares in pixels (or discs under
sqrt(2) pixels, which are 1-pixel squares) has no ``Sprites`` and takes the square
rasterizers unchanged: 10^6 one-pixel points cost what they did.

Lighting: a PointCloud with ``normals`` is lit per point like a "lit" surface without
specular (engine.render.shading): ``colour = c * (A + sum_lights E * max(N . L, 0))`` in
linear light, c the decoded vertex colour, N the normal in the batch frame (the model
matrix's inverse transpose), turned towards the camera where it faces away (a point has
no back face), then the scene's exposure and tone map and the sRGB encode. A point is
one sample of the surface, so one colour per point is exact for Lambert; every backend
(and GL) draws these colours, computed here in NumPy once per frame.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..arrays import to_host
from ..scene.colorspace import linear_to_srgb, srgb_to_linear, to_unorm8
from ..scene.geometry import PointCloud, changed_since, data_epoch
from .points import MAX_POINT_SIZE, splat_keys
from .surface_vertices import normal_matrices
from .tonemap import apply_tone_map

__all__ = ["MIN_DISC", "PointStyle", "Sprites", "lit_point_colors", "point_style",
           "splat_sprites", "sprite_diameters", "sprites_for_frame"]

#: The smallest disc diameter in pixels drawn as a disc: any position is within
#: sqrt(2) / 2 of a pixel centre, so from this diameter on a disc covers one at least.
MIN_DISC = math.sqrt(2.0)


class PointStyle(NamedTuple):
    """How a batch's vertices are drawn as points (``point_style``), host arrays.

    Attributes:
        world: (N,) bool, size in world units; None when every point is in pixels.
        round: True or False for every point, or (N,) bool.
        normals: (N, 3) float32 local-frame normals (zero rows for unlit vertices), or
            None when no point is lit.
        lit: (N,) bool, the vertices lit by their normals, or None.
        key: the cache key it was built for.
        on_device: device copies of ``round`` and ``world`` (``device``).
        sources: the ``id`` of each geometry whose vertices are drawn as points.
    """

    world: np.ndarray | None
    round: object
    normals: np.ndarray | None
    lit: np.ndarray | None
    key: tuple
    on_device: dict  # device copies of the arrays (``device``)
    sources: frozenset = frozenset()  # id() of the geometries drawn as points

    def device(self, name: str, xp):
        """Array field ``name`` ("round", "world") on ``xp``, copied there once per
        style (the frames of one style upload nothing)."""
        a = getattr(self, name)
        if xp is np:
            return a
        key = (name, id(xp))
        if key not in self.on_device:
            self.on_device[key] = xp.asarray(a)
        return self.on_device[key]


class Sprites(NamedTuple):
    """One frame's point sprites (``sprites_for_frame``): what the rasterizers draw.

    Attributes:
        diameter: (N,) float32 diameters in pixels (before the [1, 255] clamp), or a
            float for every point.
        round: bool for every point, or (N,) bool.
        size: the frame's ``point_size`` (float or (N,)), in each point's units.
        world: (N,) bool or None, as ``PointStyle.world``.
        depth_to_w: (P22, P23, P32, P33) of the camera's projection (GL recovers w).
        focal_px: P[1, 1] * height / 2.
    """

    diameter: object
    round: object
    size: object
    world: np.ndarray | None
    depth_to_w: tuple
    focal_px: float


def point_style(batch, prims, cached: PointStyle | None = None) -> PointStyle:
    """The PointStyle of ``batch``'s vertices under the assembly ``prims`` (its
    ``point_mask``), rebuilt only when the assembly, the vertex layout or some
    geometry's data (``engine.scene.geometry.data_epoch``: also a changed
    ``point_shape`` or ``size_units``) changed since ``cached``. Only PointCloud normals
    light points (a mesh drawn as points keeps its vertex colours)."""
    key = (prims.key, id(prims), batch.vertex_revision, batch.vertex_count, data_epoch())
    if cached is not None and cached.key == key:
        return cached
    if cached is not None and cached.key[:4] == key[:4]:
        # only geometry data changed: keep the style unless a point geometry did (a
        # mesh edited every frame costs no pass over the points)
        changed = changed_since(cached.key[4])
        if changed is not None and not any(id(g) in cached.sources for g in changed):
            return cached._replace(key=key)
    n = batch.vertex_count
    mask = prims.point_mask
    world = rnd = lit = normals = None
    sources = set()
    for node, (s, e) in batch.ranges.items():
        g = node.geometry
        if e <= s or not mask[s]:
            continue
        sources.add(id(g))
        if g.size_units == "world":
            world = np.zeros(n, bool) if world is None else world
            world[s:e] = True
        if g.point_shape == "round":
            rnd = np.zeros(n, bool) if rnd is None else rnd
            rnd[s:e] = True
        if isinstance(g, PointCloud) and g.normals is not None:
            if normals is None:
                normals, lit = np.zeros((n, 3), np.float32), np.zeros(n, bool)
            copies = (e - s) // max(g.vertex_count, 1)
            nrm = to_host(g.normals)
            normals[s:e] = np.tile(nrm, (copies, 1)) if copies != 1 else nrm
            lit[s:e] = True
    if rnd is not None and rnd[mask].all():
        rnd = True
    return PointStyle(world, False if rnd is None else rnd, normals, lit, key, {},
                      frozenset(sources))


def _depth_to_w(p):
    return (float(p[2, 2]), float(p[2, 3]), float(p[3, 2]), float(p[3, 3]))


def sprite_diameters(point_size, world, depth, projection, height: int, xp=np):
    """Diameters in pixels (module docstring): ``point_size`` itself (float or (N,))
    when ``world`` is None, else (N,) float32 with the world-sized points' sizes times
    focal_px / w, w recovered from ``depth`` ((N,) float32 window depth) through the
    (4, 4) ``projection`` matrix; ``height`` in pixels; arrays on ``xp``."""
    if world is None:
        return point_size
    p22, p23, p32, p33 = _depth_to_w(projection)
    focal = float(projection[1, 1]) * height / 2.0
    # D = size * focal / w = size * (a d + b), d the window depth, z = 2 d - 1 and
    # 1 / w = (z p32 - p22) / det (module docstring)
    det = p32 * p23 - p22 * p33
    a, b = 2.0 * p32 * focal / det, (-p32 - p22) * focal / det
    # NumPy functions on ``xp`` arrays: CuPy runs them on the device (NEP 13 / NEP 18)
    d = xp.asarray(depth).astype(np.float64)
    size = (xp.asarray(point_size).astype(np.float64) if np.ndim(point_size)
            else float(point_size))
    with np.errstate(invalid="ignore", over="ignore"):
        px = (d * a + b) * size
    # the rasterizers clamp to [1, 255]; a point behind the eye (not visible) is 1 px
    px = np.where(px > 0, px, 1.0)
    return np.where(xp.asarray(world), px, size).astype(np.float32)


def sprites_for_frame(style: PointStyle, view, projection, xp=np) -> Sprites | None:
    """The frame's Sprites, or None when every point is a pixel-sized square (or a disc
    of one size under ``MIN_DISC``): the square rasterizers' case. ``projection`` is the
    vertex stage's Projection (its depth), ``view`` the FrameView; with
    ``view.point_size_override`` every point is in pixels."""
    world = None if view.point_size_override else style.world
    size = view.point_size
    if world is None and (style.round is False or (np.ndim(size) == 0 and size < MIN_DISC)):
        return None
    proj = view.camera.projection_matrix
    diam = (sprite_diameters(size, style.device("world", xp), projection.depth, proj,
                             view.size[1], xp) if world is not None else size)
    rnd = style.round if isinstance(style.round, bool) else style.device("round", xp)
    return Sprites(diam, rnd, size, world, _depth_to_w(proj),
                   float(proj[1, 1]) * view.size[1] / 2.0)


def disc_spans(diameter):
    """(clamped diameter float64, disc radius float64, bounding box side int64) of
    ``diameter`` (float32 widened): the box of side floor(D) + 2 from
    floor(x - r - 0.5) holds every pixel centre within r of x."""
    d = np.clip(np.asarray(diameter, np.float64), 1.0, float(MAX_POINT_SIZE))
    return d, 0.5 * d, np.floor(d).astype(np.int64) + 2


def splat_sprites(keys, xy, z, vis, diameter, round_, size, chunk_pixels: int = 1 << 22):
    """Write the sprites of the visible points into ``keys`` ((H * W,) uint64, in place):
    the NumPy reference of the module docstring's rule. ``xy``, ``z``, ``vis`` as
    checked by ``engine.render.points.check_points``; ``diameter`` (N,) float32 or a
    float; ``round_`` a bool or (N,) bool. Point i's key is ``(depth bits << 32) | i``."""
    w, h = size
    n = xy.shape[0]
    d = np.broadcast_to(np.clip(np.asarray(to_host(diameter), np.float32).astype(np.float64),
                                1.0, float(MAX_POINT_SIZE)), (n,))
    disc = np.broadcast_to(np.asarray(to_host(round_), bool), (n,)) & (d >= MIN_DISC)
    square = vis & ~disc
    if square.any():
        splat_keys(keys, xy, z, square, np.ascontiguousarray(d), size)
    idx = np.flatnonzero(vis & disc)
    if not idx.size:
        return keys
    pkeys = (z[idx].view(np.uint32).astype(np.uint64) << np.uint64(32)) | idx.astype(np.uint64)
    cx, cy = xy[idx, 0].astype(np.float64), xy[idx, 1].astype(np.float64)
    _, r, span = disc_spans(np.asarray(diameter, np.float32)[idx] if np.ndim(diameter)
                            else np.full(idx.size, np.float32(diameter)))
    for s in np.unique(span):
        # a centre farther than the box from the image covers nothing; NaN fails too
        sel = np.flatnonzero((span == s) & (cx > -s) & (cx < w + s) & (cy > -s) & (cy < h + s))
        step = max(1, chunk_pixels // int(s * s))
        off = np.arange(s)
        for c in range(0, sel.size, step):
            part = sel[c:c + step]
            x0 = np.floor(cx[part] - r[part] - 0.5).astype(np.int64)
            y0 = np.floor(cy[part] - r[part] - 0.5).astype(np.int64)
            xs = x0[:, None, None] + off[None, None, :]
            ys = y0[:, None, None] + off[None, :, None]
            dx = (xs + 0.5) - cx[part, None, None]
            dy = (ys + 0.5) - cy[part, None, None]
            rr = (r[part] * r[part])[:, None, None]
            inside = (dx * dx + dy * dy <= rr) & (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
            k = np.broadcast_to(pkeys[part, None, None], inside.shape)
            pix = np.broadcast_to(ys * w + xs, inside.shape)
            np.minimum.at(keys, pix[inside], k[inside])
    return keys


def lit_point_colors(style: PointStyle, batch, colors, shader_eye, lights, spots, view_dir,
                     exposure: float = 1.0, tone_map: str = "none") -> np.ndarray | None:
    """(N, 4) uint8 host colours of the batch's points with the lit ones shaded (module
    docstring), or None when no point is lit.

    Args:
        style: the batch's PointStyle.
        batch: the VertexBatch (positions, object ids, model matrices, runs).
        colors: (N, 4) uint8 host vertex colours (sRGB, straight alpha).
        shader_eye: (3,) camera position in the batch frame.
        lights: engine.render.shading.scene_lights(...) (batch frame).
        spots: engine.render.shading.punctual_lights(...).
        view_dir: None (perspective) or the unit vector against an orthographic
            camera's view direction.
        exposure, tone_map: the scene's (engine.render.tonemap).
    """
    if style.lit is None:
        return None
    from .shading import SurfaceShader

    out = np.array(colors, np.uint8)
    pos = to_host(batch.positions)
    model = np.asarray(batch.model_host, np.float64)
    nmat = normal_matrices(model)
    sources = SurfaceShader(None, None, None, shader_eye, lights, None, view_dir, spots)
    for start, stop, k in batch.runs:
        rows = start + np.flatnonzero(style.lit[start:stop])
        if not rows.size or k >= len(model):
            continue
        m = model[k]
        p = pos[rows].astype(np.float64) @ m[:3, :3].T + m[:3, 3]
        nrm = style.normals[rows].astype(np.float64) @ nmat[k].T
        length = np.linalg.norm(nrm, axis=1, keepdims=True)
        nrm = np.where(length > 0, nrm / np.where(length > 0, length, 1.0), 0.0)
        view = (shader_eye - p) if view_dir is None else np.broadcast_to(view_dir, p.shape)
        away = np.einsum("ij,ij->i", nrm, view) < 0
        nrm[away] = -nrm[away]
        irradiance = np.broadcast_to(np.asarray(lights[0], np.float64), p.shape).copy()
        for to_light, e in sources._sources(p):
            ndl = np.einsum("ij,ij->i", nrm, to_light)[:, None]
            irradiance += e * np.maximum(ndl, 0.0)
        base = srgb_to_linear(out[rows, :3] / 255.0)
        rgb = apply_tone_map(base * irradiance, exposure, tone_map)
        out[rows, :3] = to_unorm8(linear_to_srgb(rgb))
    return out
