"""Shadow maps: a depth-only pass from each shadowed light through the engine's own
pipeline, and the lookup that hides a light from the surfaces behind it.

Which lights: every visible DirectionalLight or SpotLight with ``shadows`` on
(engine.scene.light); the headlight of a scene without lights casts none. Per frame and
light, before the camera's pass, the backend runs its own stages with the light's view:
the vertex stage (the light's view-projection in place of the camera's), the triangle
setup and raster into a key buffer of ``shadow_map_size`` squared texels, no shading;
the map is the window depth of each texel's key (1.0 where nothing was drawn). The
Numba backend rasterizes depth only, straight into the float32 map, with the same
values bit for bit (engine.render.backends.numba_shadow). Only the
triangles of nodes with ``cast_shadow`` go in, culled as the camera culls them: the
faces of a single-sided material turned away from the light are left out (they are
unlit anyway; a single-sided open mesh, a plane, casts from its front side only), a
double-sided material's faces all go in. Alpha: a MASK material
(``alpha_cutoff``) casts where its alpha passes the cutoff, a BLEND one (``blend``)
where alpha >= BLEND_SHADOW_CUTOFF, per texel, as the camera's raster tests MASK.

The light's view, in the batch frame (``fit_directional``, ``fit_spot``):

- directional: orthographic along the rays, square, fitted to the part of the scene the
  camera can see: the axis-aligned box of the camera's view frustum intersected with
  the scene's box (every drawn surface), taken to light space for x and y; z spans the
  whole scene's box, so a caster outside the view still shadows into it. The centre
  snaps to whole texels, so a moving camera does not make shadow edges crawl.
- spot: perspective from the light's position along its axis, a square field of view of
  twice the outer cone angle (at most 2 x MAX_SPOT_HALF_ANGLE; beyond it the cone is
  unshadowed), far at the farthest corner of the scene's box (or the light's range),
  near at the nearest corner in front of it, at least far / 1000.

The lookup, for a surface point ``p`` with unit normal ``N`` and unit direction ``L`` to
the light (``visibility``, and its twins in numba_shading.py, shaders/shadow.cuh and
shaders/surface.frag, the same formulas):

1. Slope-scaled bias, in world units along L: ``b = t (BIAS_CONSTANT + BIAS_SLOPE
   min(k, MAX_SLOPE))``, ``k = sqrt(1 - (N.A)^2) / N.L`` with A the map's axis, ``t``
   the world size of one map texel at p (``texel_a + texel_b (p - origin) . axis``:
   the orthographic map's constant texel, or the perspective one's growing with the
   distance along its axis). Why k: the map stores depth along A; a plane through p
   changes that depth by ``t sin(N, A) cos(L, A) / N.L`` per texel, and moving p by b
   along L changes it by ``b cos(L, A)`` (for an orthographic map A = -L and k is
   tan theta, theta the angle of incidence). A lit plane differs from its own map by
   up to 1.5 sqrt(2) = 2.12 texels of that slope at the outer taps of the 3 x 3
   kernel: BIAS_SLOPE 2.5 covers it, BIAS_CONSTANT half a texel covers curvature and
   rounding. Moving p towards the light along L keeps its texel (the ray through p
   passes through the light), so the bias changes only the depth compared.
2. ``q = p + b L`` to the light's clip space, ``(x, y, z, w) = VP (q, 1)``; w <= 0:
   lit. Texel coordinates ``sx = (x / w + 1) S / 2``, ``sy = (1 - y / w) S / 2``
   (row 0 at the top, as the raster's), depth ``d = (z / w) / 2 + 1 / 2``.
3. Percentage-closer filtering (Reeves, Salesin and Cook, "Rendering antialiased
   shadows with depth maps", SIGGRAPH 1987) over the 3 x 3 texels around
   ``(floor(sx), floor(sy))``: each tap is lit when ``d <= map[row, col]`` or the tap
   lies outside the map; the visibility is the lit fraction, in ninths. A shadow edge
   spreads over PCF_RADIUS texels each side.

Static shadow caching (``MapCache``): a map depends only on the light's fitted
view-projection, its size and the casters (their vertices, transforms and the assembly
that says which triangles cast); while all of these are unchanged from the last frame
that drew it (a still camera, light and scene: a viewer between two inputs, a paused
game), that map is reused as it is, bit for bit what drawing it again gives, and its
pass is skipped. Maps with skinned or morphed casters, or alpha-tested ones (their
alpha may come from a texture edited in place), are drawn every frame; so is every
map of a backend whose ``reuse_shadow_maps`` is False.

The visibility multiplies the light's direct radiance (diffuse and specular, Blinn-Phong
and PBR alike) at the triangles of nodes with ``receive_shadow``; ambient light is never
shadowed. A receiver and its blocker touching (a box standing on a plane, the light at
elevation e above it): the bias leaves the shadow ``b cos e`` short of the box, with
k = cot e: 2.1 texels for a 45 degree light, under a pixel where the map's
texels are smaller than the camera's pixels on the plane (docs/surfaces.md: size the
map to the view).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..arrays import to_host
from ..scene.light import DirectionalLight, Light, PointLight, SpotLight
from .culling import run_bounds
from .frame import EMPTY_KEY

__all__ = [
    "BIAS_CONSTANT",
    "BIAS_SLOPE",
    "BLEND_SHADOW_CUTOFF",
    "MAP_COLUMNS",
    "MAX_SLOPE",
    "MAX_SPOT_HALF_ANGLE",
    "NO_SHADOWS",
    "PCF_RADIUS",
    "MapCache",
    "ShadowMap",
    "ShadowSet",
    "caster_cutoffs",
    "depth_of_keys",
    "fit_directional",
    "fit_spot",
    "plan_shadows",
    "scene_box",
    "shadow_tables",
    "shadowed_lights",
    "visibility",
]

BIAS_CONSTANT = 0.5  # texels
BIAS_SLOPE = 2.5  # texels per unit of tan(theta)
MAX_SLOPE = 10.0  # cap of the slope k: at grazing light N.L (the light's share) is ~0
PCF_RADIUS = 1  # taps each side: a 3 x 3 kernel
BLEND_SHADOW_CUTOFF = 0.5
MAX_SPOT_HALF_ANGLE = math.radians(80.0)
# table columns of one map for the kernels (``shadow_tables``)
MAP_COLUMNS = 26  # offset, size, VP (16, row-major), texel_a, texel_b, origin (3), axis (3)


class ShadowMap(NamedTuple):
    """One light's shadow map and the view it was rendered with (batch frame).

    Attributes:
        kind: "directional" or "point" (a spot light: it shades with the point lights).
        index: the light's row among the frame's directional lights (scene_lights order)
            or in engine.render.shading.point_light_arrays' combined point lights.
        view_projection: (4, 4) float64 batch frame -> the light's clip space.
        size: S, the map's side in texels.
        texel_a, texel_b, origin, axis: the world size of a texel at p is ``texel_a +
            texel_b * (p - origin) . axis`` (origin (3,), axis (3,) unit).
        depth: (S, S) float32 window depth per texel, row 0 at the top; 1.0 where empty
            (None until rendered).
    """

    kind: str
    index: int
    view_projection: np.ndarray
    size: int
    texel_a: float
    texel_b: float
    origin: np.ndarray
    axis: np.ndarray
    depth: np.ndarray | None = None


class ShadowSet(NamedTuple):
    """A frame's shadow maps and the triangles that receive them.

    Attributes:
        maps: [ShadowMap], rendered.
        receive: (T,) bool over the assembly's triangles (``Primitives.tri_receive``).
    """

    maps: tuple
    receive: np.ndarray

    def source(self, m: ShadowMap, n_directional: int) -> int:
        """Map m's light in the lit loops' order: directional lights, then points."""
        return m.index if m.kind == "directional" else n_directional + m.index


NO_SHADOWS = ShadowSet((), np.zeros(0, bool))


def shadowed_lights(scene):
    """[(light, kind, index)] of the visible lights with ``shadows`` on, ``index`` as in
    ShadowMap (the traversal order of engine.render.shading.scene_lights and
    punctual_lights, whose directional and point rows these name)."""
    out, n_dir, n_plain, windowed = [], 0, 0, []
    for node in scene.traverse(visible_only=True):
        if not isinstance(node, Light):
            continue
        if isinstance(node, DirectionalLight):
            if node.shadows:
                out.append((node, "directional", n_dir))
            n_dir += 1
        elif isinstance(node, SpotLight) or (isinstance(node, PointLight)
                                             and node.range is not None):
            windowed.append(node)
        elif isinstance(node, PointLight):
            n_plain += 1
    # spots and ranged lights follow the plain point lights (shading.point_light_arrays)
    out += [(node, "point", n_plain + k) for k, node in enumerate(windowed)
            if isinstance(node, SpotLight) and node.shadows]
    return out


class SceneBox:
    """The batch-frame box of every drawn surface, its per-run local boxes kept while the
    vertices are unchanged (engine.render.culling.run_bounds)."""

    def __init__(self):
        self._key = self._runs = self._bounds = None

    def __call__(self, batch, prims) -> np.ndarray | None:
        """(2, 3) float64 [lo, hi] of the surfaces, or None when there are none."""
        runs = batch.runs
        key = (batch.vertex_revision, batch.vertex_count)
        if (self._key != key or self._runs is None or self._runs.shape != runs.shape
                or not np.array_equal(self._runs, runs)):
            self._bounds = run_bounds(to_host(batch.positions), runs)
            self._key, self._runs = key, runs.copy()
        return scene_box(self._bounds, runs, batch.model_host, prims.surface_mask)


def scene_box(bounds, runs, model, surface_mask) -> np.ndarray | None:
    """(2, 3) [lo, hi] in the batch frame of the runs drawn as surfaces: their local
    boxes (R, 2, 3) through their model matrices (K, 4, 4); None when none is finite."""
    runs = np.asarray(runs, np.int64)
    if not len(runs):
        return None
    k = runs[:, 2]
    ok = (k >= 0) & (k < len(model)) & (runs[:, 1] > runs[:, 0])
    ok &= np.asarray(surface_mask)[np.minimum(runs[:, 0], len(surface_mask) - 1)]
    if not ok.any():
        return None
    bits = ((np.arange(8)[:, None] >> np.arange(3)) & 1).astype(bool)
    b = bounds[ok]
    corners = np.where(bits[None], b[:, 1:2], b[:, 0:1])  # (R, 8, 3)
    m = np.asarray(model, np.float64)[k[ok]]
    with np.errstate(invalid="ignore", over="ignore"):
        world = np.einsum("rij,rcj->rci", m[:, :3, :3], corners) + m[:, None, :3, 3]
        w = world[np.isfinite(world).all(axis=2)]
    if not len(w):
        return None
    return np.stack([w.min(axis=0), w.max(axis=0)])


def _basis(forward):
    """Unit right and up vectors completing the unit ``forward`` (right-handed)."""
    up = np.array([0.0, 1.0, 0.0]) if abs(forward[1]) < 0.99 else np.array([1.0, 0.0, 0.0])
    right = np.cross(forward, up)
    right /= np.linalg.norm(right)
    return right, np.cross(right, forward)


def _box_corners(box):
    bits = ((np.arange(8)[:, None] >> np.arange(3)) & 1).astype(bool)
    return np.where(bits, box[1], box[0])


def _frustum_box(view_projection):
    """(2, 3) box of the camera's view frustum (the NDC cube through the inverse)."""
    ndc = np.concatenate([_box_corners(np.array([[-1.0] * 3, [1.0] * 3])),
                          np.ones((8, 1))], axis=1)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        p = ndc @ np.linalg.inv(np.asarray(view_projection, np.float64)).T
        p = p[:, :3] / p[:, 3:]
    if not np.isfinite(p).all():
        return None
    return np.stack([p.min(axis=0), p.max(axis=0)])


def fit_directional(to_light, box, camera_vp, size):
    """(view_projection (4, 4), texel world size) of a directional light's map, or None
    when the camera sees none of ``box``.

    Args:
        to_light: (3,) unit vector against the rays (batch frame).
        box: (2, 3) scene box (``scene_box``).
        camera_vp: (4, 4) the camera's batch frame -> clip space.
        size: the map's side S in texels.
    """
    forward = -np.asarray(to_light, np.float64)
    right, up = _basis(forward)
    seen = box
    frustum = _frustum_box(camera_vp)
    if frustum is not None:
        seen = np.stack([np.maximum(box[0], frustum[0]), np.minimum(box[1], frustum[1])])
        if (seen[0] > seen[1]).any():
            return None
    rows = np.stack([right, up, forward])
    xy = _box_corners(seen) @ rows[:2].T
    z = _box_corners(box) @ forward
    lo, hi = xy.min(axis=0), xy.max(axis=0)
    # margin: the PCF taps one texel past the edge, and a caster on the boundary
    half = max(float((hi - lo).max()) / 2.0, 1e-6) * (1.0 + 4.0 / size)
    texel = 2.0 * half / size
    centre = np.floor((lo + hi) / 2.0 / texel) * texel  # whole texels: no crawling
    z0, z1 = float(z.min()), float(z.max())
    pad = max(z1 - z0, 1e-6) * 0.01 + 1e-6
    z0, z1 = z0 - pad, z1 + pad
    vp = np.zeros((4, 4))
    vp[0, :3], vp[0, 3] = right / half, -centre[0] / half
    vp[1, :3], vp[1, 3] = up / half, -centre[1] / half
    vp[2, :3], vp[2, 3] = 2.0 * forward / (z1 - z0), -2.0 * z0 / (z1 - z0) - 1.0
    vp[3, 3] = 1.0
    return vp, texel


def fit_spot(position, axis, outer_cone_angle, light_range, box, size):
    """(view_projection (4, 4), texel_b) of a spot light's perspective map (a texel at
    distance z along the axis is ``texel_b * z`` wide), or None when ``box`` lies
    behind the light. ``position``, ``axis`` (unit) in the batch frame."""
    position = np.asarray(position, np.float64)
    axis = np.asarray(axis, np.float64)
    dist = (_box_corners(box) - position) @ axis
    far = float(dist.max())
    if light_range is not None:
        far = min(far, float(light_range))
    if not far > 0:
        return None
    far *= 1.01
    near = max(float(dist.min()) * 0.99, far / 1000.0)
    if near >= far:
        near = far / 1000.0
    t = math.tan(min(outer_cone_angle, MAX_SPOT_HALF_ANGLE)) * (1.0 + 4.0 / size)
    right, up = _basis(axis)
    view = np.eye(4)
    view[0, :3], view[1, :3], view[2, :3] = right, up, axis
    view[:3, 3] = -view[:3, :3] @ position  # light frame: x right, y up, z along the axis
    proj = np.zeros((4, 4))
    proj[0, 0] = proj[1, 1] = 1.0 / t
    proj[2, 2] = (far + near) / (far - near)
    proj[2, 3] = -2.0 * far * near / (far - near)
    proj[3, 2] = 1.0
    return proj @ view, 2.0 * t / size


def plan_shadows(scene, batch, prims, camera_vp, box) -> list[ShadowMap]:
    """The frame's ShadowMaps (depth None) for ``shadowed_lights(scene)``: fitted to the
    scene box ``box`` (None: no surfaces, no maps) and the camera's view."""
    lights = shadowed_lights(scene)
    if not lights or box is None or not len(prims.triangles):
        return []
    out = []
    for light, kind, index in lights:
        m = light.world_matrix
        z = m[:3, 2] / np.linalg.norm(m[:3, 2])
        size = light.shadow_map_size
        if kind == "directional":
            fit = fit_directional(z, box, camera_vp, size)
            if fit is not None:
                out.append(ShadowMap(kind, index, fit[0], size, fit[1], 0.0,
                                     np.zeros(3), -z))
        else:
            pos = m[:3, 3] - batch.origin
            fit = fit_spot(pos, -z, light.outer_cone_angle, light.range, box, size)
            if fit is not None:
                out.append(ShadowMap(kind, index, fit[0], size, 0.0, fit[1], pos, -z))
    return out


class MapCache:
    """Each map slot's last depth and the inputs it was drawn from (static shadow
    caching, the module docstring): ``get`` gives it back while every input is equal."""

    def __init__(self):
        self._slots: dict = {}  # slot -> (inputs, depth)

    @staticmethod
    def inputs(batch, prims, m: ShadowMap, deform) -> tuple | None:
        """What map ``m`` is drawn from, or None where it must be drawn every frame
        (``deform``: the frame's skins and morph targets, or None; alpha-tested
        casters): the assembly (which triangles cast, their materials), the batch's
        vertex revision and count, the (K + 1, 4, 4) model matrices and the (4, 4)
        view-projection (the arrays themselves: ``put`` keeps copies), the map's side."""
        if deform is not None or (caster_cutoffs(prims.materials) >= 0).any():
            return None
        return (prims, batch.vertex_revision, batch.vertex_count, batch.model_host,
                m.view_projection, m.size)

    def get(self, slot: int, inputs: tuple | None):
        """Slot ``slot``'s depth when it was drawn from ``inputs`` (not None), else None."""
        held = self._slots.get(slot)
        if inputs is None or held is None:
            return None
        old = held[0]
        same = (old[0] is inputs[0] and old[1:3] == inputs[1:3] and old[5] == inputs[5]
                and old[3].shape == inputs[3].shape and np.array_equal(old[3], inputs[3])
                and np.array_equal(old[4], inputs[4]))
        return held[1] if same else None

    def put(self, slot: int, inputs: tuple | None, depth):
        """Slot ``slot`` now holds ``depth``, drawn from ``inputs`` (None: not reusable)."""
        if inputs is None:
            self._slots.pop(slot, None)
        else:  # copies: the batch updates its model matrices in place
            kept = inputs[:3] + (np.array(inputs[3], copy=True),
                                 np.array(inputs[4], np.float64, copy=True), inputs[5])
            self._slots[slot] = (kept, depth)


def caster_cutoffs(materials) -> np.ndarray:
    """(M,) float64 alpha cutoff of each material in the shadow pass: its
    ``alpha_cutoff`` (MASK), BLEND_SHADOW_CUTOFF for ``blend`` without one, -1 (opaque:
    no test) otherwise."""
    return np.array([m.alpha_cutoff if m.alpha_cutoff is not None
                     else (BLEND_SHADOW_CUTOFF if m.blend else -1.0) for m in materials],
                    np.float64).reshape(-1)


def depth_of_keys(keys, size, xp=np) -> np.ndarray:
    """(S, S) float32 window depth of an (S * S,) key buffer of array module ``xp``;
    1.0 where empty."""
    depth = (keys >> np.uint64(32)).astype(np.uint32).view(np.float32)
    depth = xp.where(keys == EMPTY_KEY, np.float32(1.0), depth)
    return depth.reshape(size, size)


def visibility(m: ShadowMap, p, n, to_light) -> np.ndarray:
    """(M,) float64 in [0, 1]: the fraction of light ``m`` reaching points p (M, 3) of
    unit normals n (M, 3) with unit directions to the light ``to_light`` (M, 3), batch
    frame (the module docstring's bias, projection and 3 x 3 PCF)."""
    p = np.asarray(p, np.float64)
    ndl = np.clip(np.einsum("ij,ij->i", n, to_light), 1e-30, 1.0)
    nda = n @ m.axis
    slope = np.minimum(np.sqrt(np.maximum(1.0 - nda * nda, 0.0)) / ndl, MAX_SLOPE)
    texel = m.texel_a + m.texel_b * ((p - m.origin) @ m.axis)
    q = p + to_light * (texel * (BIAS_CONSTANT + BIAS_SLOPE * slope))[:, None]
    vp = m.view_projection
    c = q @ vp[:, :3].T + vp[:, 3]
    w = c[:, 3]
    front = w > 0
    w = np.where(front, w, 1.0)
    s = m.size
    sx = (c[:, 0] / w + 1.0) * 0.5 * s
    sy = (1.0 - c[:, 1] / w) * 0.5 * s
    d = (c[:, 2] / w) * 0.5 + 0.5
    ok = front & np.isfinite(sx) & np.isfinite(sy)
    ix = np.floor(np.where(ok, np.clip(sx, -2.0, s + 2.0), -10.0)).astype(np.int64)
    iy = np.floor(np.where(ok, np.clip(sy, -2.0, s + 2.0), -10.0)).astype(np.int64)
    lit = np.zeros(len(p))
    for dj in range(-PCF_RADIUS, PCF_RADIUS + 1):
        for di in range(-PCF_RADIUS, PCF_RADIUS + 1):
            x, y = ix + di, iy + dj
            inside = (x >= 0) & (x < s) & (y >= 0) & (y < s)
            stored = m.depth[np.clip(y, 0, s - 1), np.clip(x, 0, s - 1)].astype(np.float64)
            lit += np.where(inside, d <= stored, True)
    taps = (2 * PCF_RADIUS + 1) ** 2
    return np.where(ok, lit / taps, 1.0)


def shadow_tables(shadows: ShadowSet, n_directional: int, n_point: int, xp=np):
    """The frame's maps as plain arrays for the compiled resolves: (texels (X,) float32
    every map's depth rows end to end (on the array module ``xp`` of the maps' depth:
    a device backend's stay there), table (K, MAP_COLUMNS) float64 per map: offset,
    size, the view-projection row-major, texel_a, texel_b, origin, axis; dir_map (D,)
    and point_map (P,) int64: each light's map row or -1; receive (T,) uint8)."""
    dir_map = np.full(n_directional, -1, np.int64)
    point_map = np.full(n_point, -1, np.int64)
    table = np.zeros((max(len(shadows.maps), 1), MAP_COLUMNS))
    parts, offset = [], 0
    for k, m in enumerate(shadows.maps):
        (dir_map if m.kind == "directional" else point_map)[m.index] = k
        table[k, 0], table[k, 1] = offset, m.size
        table[k, 2:18] = np.asarray(m.view_projection, np.float64).reshape(-1)
        table[k, 18], table[k, 19] = m.texel_a, m.texel_b
        table[k, 20:23], table[k, 23:26] = m.origin, m.axis
        parts.append(xp.ascontiguousarray(m.depth, np.float32).reshape(-1))
        offset += m.size * m.size
    # one map (the common case): its own array, no copy
    texels = (parts[0] if len(parts) == 1 else xp.concatenate(parts) if parts
              else xp.ones(1, np.float32))
    return (texels, table, dir_map, point_map,
            np.ascontiguousarray(shadows.receive, np.uint8))
