"""Resolve: turn the key buffer into colours, shading each covered pixel once.

A pixel's key names its winner: a point (id < number of batch vertices: its colour) or a
triangle (id - that number). A triangle pixel is shaded from the triangle's homogeneous
barycentrics at the pixel centre, ``b = adj @ (x_ndc, y_ndc, 1)`` and ``l = b / sum(b)``,
which are perspective-correct (engine.render.triangles), so colours, UVs and normals are
interpolated as in GL.

Lighting (materials "lit" and "flat"), in linear RGB, for base colour ``c``, unit normal
``N``, unit view vector ``V`` and, per light, the unit direction to it ``L``, its radiance
``E`` (colour x intensity; a point light's divided by the squared distance) and the half
vector ``H = normalize(L + V)``:

    colour = c * (A + sum_lights E * max(N . L, 0))
             + specular * sum_lights [N . L > 0] E * max(N . H, 0) ** shininess

(Lambert diffuse, Blinn-Phong specular: J. Blinn, "Models of light reflection for
computer synthesized pictures", SIGGRAPH 1977), ``A`` the summed ambient radiance; then
encoded to sRGB (engine.scene.colorspace) and rounded to 8 bits. Base colour =
material colour x interpolated vertex colour x texture sample, all in linear light: the
factors decoded once per material and vertex, the texture filtered from its decoded
texels (``Texture.linear``) and its mip chain at the level of detail of the UVs'
analytic screen derivatives (``SurfaceShader.uv_lod``), as is every map (each at
the level of detail of its own size and UV set; the data maps from their stored values
and their chains, ``Texture.stored_mipmaps``). "flat" uses the triangle's geometric normal; a
double-sided material's back faces use the reversed normal. A "normal" map bends the
normal of every lit kind through the tangent frame first (engine.render.normal_map), and
each texture reads uv0 or uv1 as ``Material.tex_coords`` says. "pbr" is the glTF 2.0
metallic-roughness BRDF (engine.render.pbr) with its maps and emission. A scene's
environment (image-based lighting, engine.render.ibl) adds ``ibl.ambient_pbr`` to a
"pbr" surface and its irradiance to a "lit" one's ambient ``A``. Every surface
colour passes the scene's exposure and tone map (engine.render.tonemap; clamp by
default) before the encode. Spot lights and lights with a ``range`` are
``punctual_lights``: the KHR_lights_punctual cone and range windows times the inverse
square law, for "lit" and "pbr" alike. "unlit" writes the base
colour encoded to sRGB (glTF 2.0 section 3.9.2 filters decoded texels: half-way between
a red and a green texel is (188, 188, 0)).
The alpha written is ``materials.FRAME_ALPHA`` (opaque) whatever the base alpha, which
only the MASK test reads (engine.render.materials), except for a BLEND material
(``Material.blend``): its pixels write the base alpha, rounded to 8 bits, which the
transparency pass composites (engine.render.transparency).

World frame here means the batch frame (world minus ``batch.origin``): a translation,
so directions, angles and distances are those of the world.
"""

from __future__ import annotations

import numpy as np

from ..scene.colorspace import linear_to_srgb, srgb_to_linear, to_unorm8
from ..scene.light import AmbientLight, DirectionalLight, Light, PointLight, SpotLight
from ..scene.sampling import level_of_detail, sample
from . import ibl, pbr, shadows
from .attributes import VARYINGS, material_span
from .frame import EMPTY_KEY, Frame, background_rgba
from .materials import FRAME_ALPHA
from .normal_map import mapped_normals
from .tonemap import apply_tone_map

__all__ = ["DEFAULT_AMBIENT", "DEFAULT_HEADLIGHT", "SurfaceShader", "light_arrays",
           "point_light_arrays", "punctual_lights", "scene_lights"]

DEFAULT_AMBIENT = 0.15
DEFAULT_HEADLIGHT = 0.7
_LOW = np.uint64(0xFFFFFFFF)


def scene_lights(scene, camera, origin):
    """The scene's visible lights in the batch frame.

    Returns (ambient (3,), directional [(L (3,), E (3,))], point [(position (3,), E (3,))]).
    With neither a light nor an environment (``Scene.environment``) in the scene: the
    headlight (DEFAULT_HEADLIGHT along the camera's view direction) and DEFAULT_AMBIENT;
    a scene with either gets only what it has (glTF lights and image-based lighting,
    engine.render.ibl).
    """
    ambient = np.zeros(3)
    directional, point = [], []
    found = False
    for node in scene.traverse(visible_only=True):
        if not isinstance(node, Light):
            continue
        found = True
        e = np.asarray(node.radiance, np.float64)
        m = node.world_matrix
        if isinstance(node, AmbientLight):
            ambient += e
        elif isinstance(node, DirectionalLight):
            to_light = m[:3, 2] / np.linalg.norm(m[:3, 2])  # local +Z: against the rays (-Z)
            directional.append((to_light, e))
        elif isinstance(node, PointLight) and not _windowed(node):
            point.append((m[:3, 3] - origin, e))
    if not found and getattr(scene, "environment", None) is None:
        z = camera.world_matrix[:3, 2]
        directional.append((z / np.linalg.norm(z), np.full(3, DEFAULT_HEADLIGHT)))
        ambient[:] = DEFAULT_AMBIENT
    return ambient, directional, point


def _windowed(light) -> bool:
    """A spot light, or a point light with a range: drawn by ``punctual_lights``."""
    return isinstance(light, SpotLight) or getattr(light, "range", None) is not None


def punctual_lights(scene, origin):
    """The visible spot lights and ranged point lights in the batch frame (scene_lights
    has the others): a list of (position (3,), axis (3,) unit direction the spot
    points along or None for a point light, E (3,) radiance, range or None, inner and
    outer cone angles in radians or None)."""
    out = []
    for node in scene.traverse(visible_only=True):
        if not (isinstance(node, PointLight) and _windowed(node)):
            continue
        m = node.world_matrix
        e = np.asarray(node.radiance, np.float64)
        if isinstance(node, SpotLight):
            axis = -m[:3, 2] / np.linalg.norm(m[:3, 2])
            out.append((m[:3, 3] - origin, axis, e, node.range, node.inner_cone_angle,
                        node.outer_cone_angle))
        else:
            out.append((m[:3, 3] - origin, None, e, node.range, None, None))
    return out


def light_arrays(lights):
    """scene_lights(...) -> (ambient (3,), directional directions (D, 3) and radiances
    (D, 3), point positions (P, 3) and radiances (P, 3)), float64 arrays for kernels."""
    ambient, directional, point = lights
    return (np.asarray(ambient, np.float64),
            np.array([d for d, _ in directional], np.float64).reshape(-1, 3),
            np.array([e for _, e in directional], np.float64).reshape(-1, 3),
            np.array([q for q, _ in point], np.float64).reshape(-1, 3),
            np.array([e for _, e in point], np.float64).reshape(-1, 3))


def point_light_arrays(pos, radiance, spots):
    """The point lights (P, 3) and the spots and ranged lights of
    ``engine.render.shading.punctual_lights`` as one set: (positions (L, 3), radiances
    (L, 3), cones (L, 5) of axis, cos outer, 1 / (cos inner - cos outer), ranges (L,),
    0 for none, whether any light has a cone or range). A light without a cone gets
    cos outer -2 (every direction passes)."""
    cone = np.zeros((len(pos), 5))
    cone[:, 3], cone[:, 4] = -2.0, 1.0
    ranges = np.zeros(len(pos))
    if not spots:
        return pos, radiance, cone, ranges, False
    extra_cone = np.zeros((len(spots), 5))
    for k, (_, axis, _, _, inner, outer) in enumerate(spots):
        if axis is None:
            extra_cone[k, 3:] = (-2.0, 1.0)
        else:
            co, ci = np.cos(outer), np.cos(inner)
            extra_cone[k] = (*axis, co, 1.0 / max(ci - co, 1e-4))
    return (np.concatenate([pos, np.array([s[0] for s in spots], np.float64)]),
            np.concatenate([radiance, np.array([s[2] for s in spots], np.float64)]),
            np.concatenate([cone, extra_cone]),
            np.concatenate([ranges, [s[3] or 0.0 for s in spots]]), True)


def _unit(v):
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return np.where(n > 0, v / np.where(n > 0, n, 1.0), 0.0)


def _slot(name):
    off, width = VARYINGS[name]
    return slice(off, off + width)


_POSITION, _NORMAL, _UV0 = _slot("position"), _slot("normal"), _slot("uv0")
_COLOR_LINEAR = _slot("color_linear")
_TANGENT, _UV1 = _slot("tangent"), _slot("uv1")


def _uv(mat, role, vals):
    """(M, 2) the texture coordinates texture ``role`` of ``mat`` reads (uv0 or uv1 by
    ``Material.tex_coords``)."""
    return vals[:, _UV1 if mat.tex_coords.get(role, 0) == 1 else _UV0]


class SurfaceShader:
    """Per-frame shading context for the triangles of one ``Primitives`` assembly.

    Args:
        prims: the Primitives (triangles, materials).
        setup: the TriangleSetup of this frame (adj, front), filled by the rasterizer.
        varyings: (N, V) float64 vertex stage output (engine.render.attributes.VARYINGS:
            batch-frame position, unit normal, texture coordinates, colours).
        eye: (3,) camera position in the batch frame.
        lights: scene_lights(...) result.
        size: (width, height) in pixels.
        view_dir: None for a perspective camera (V points to ``eye``), else the unit
            vector against an orthographic camera's view direction (V is the same
            everywhere).
        spots: punctual_lights(...) result (spot and ranged point lights).
        exposure, tone_map: the scene's (engine.render.tonemap).
        environment: the scene's environment prefiltered (engine.render.ibl.Prefiltered),
            or None.
        shadow_set: the frame's engine.render.shadows.ShadowSet (its maps hide their
            lights from the receiving triangles).
    """

    def __init__(self, prims, setup, varyings, eye, lights, size, view_dir=None, spots=(),
                 exposure=1.0, tone_map="none", environment=None,
                 shadow_set=shadows.NO_SHADOWS):
        self.prims, self.setup, self.varyings = prims, setup, varyings
        self.eye, self.lights, self.size = np.asarray(eye, np.float64), lights, size
        self.view_dir = None if view_dir is None else np.asarray(view_dir, np.float64)
        self.spots, self.exposure, self.tone_map = list(spots), exposure, tone_map
        self.environment = environment
        self.shadows = shadow_set

    def barycentrics(self, t, px, py):
        """(M, 3) perspective-correct barycentrics of triangles t at pixel centres."""
        w, h = self.size
        xn = (2.0 * px + 1.0) / w - 1.0
        yn = 1.0 - (2.0 * py + 1.0) / h
        a = self.setup.adj[t]
        b = a[:, :, 0] * xn[:, None] + a[:, :, 1] * yn[:, None] + a[:, :, 2]
        s = b.sum(axis=1, keepdims=True)
        return b / np.where(s != 0, s, 1.0)

    def interpolate(self, t, lam, mat):
        """(M, V) the varyings of triangles t at barycentrics lam: the columns material
        ``mat`` reads (engine.render.attributes.material_span) in one generic pass, zero
        elsewhere."""
        lo, hi = material_span(mat)
        v = self.prims.triangles[t]
        a = self.varyings[:, lo:hi]
        out = np.zeros((len(t), self.varyings.shape[1]))
        out[:, lo:hi] = (a[v[:, 0]] * lam[:, :1] + a[v[:, 1]] * lam[:, 1:2]
                         + a[v[:, 2]] * lam[:, 2:3])
        return out

    def _lod(self, t, px, py, mat):
        return None if mat.texture is None else self.uv_lod(t, px, py, mat)

    def uv_lod(self, t, px, py, mat, role="base_color"):
        """(M,) texture level of detail (engine.scene.sampling.level_of_detail) of
        material ``mat``'s texture of ``role`` (engine.scene.material.TEXTURE_ROLES: its
        base colour texture or one of its maps) on triangles t at pixel centres, from
        the analytic screen derivatives of the UV set it reads (uv0 or uv1). With b_i = adj_i . (x, y, 1) (x, y in NDC) and
        S = sum_i b_i, uv = sum_i b_i uv_i / S, so
        d uv / dx = sum_i adj_i0 (uv_i - uv) / S (and adj_i1 for y), times dx/dpx =
        2 / width (dy/dpy = -2 / height). Raises KeyError for a map ``role`` that
        ``mat.maps`` does not have."""
        w, h = self.size
        xn = (2.0 * px + 1.0) / w - 1.0
        yn = 1.0 - (2.0 * py + 1.0) / h
        a = self.setup.adj[t]
        b = a[:, :, 0] * xn[:, None] + a[:, :, 1] * yn[:, None] + a[:, :, 2]
        s = b.sum(axis=1)
        s = np.where(s != 0, s, 1.0)[:, None]
        slot = _UV1 if mat.tex_coords.get(role, 0) == 1 else _UV0
        uvi = self.varyings[self.prims.triangles[t]][:, :, slot]   # (M, 3, 2)
        uv = np.einsum("mi,mik->mk", b, uvi) / s
        rel = uvi - uv[:, None, :]
        dx = np.einsum("mi,mik->mk", a[:, :, 0], rel) / s * (2.0 / w)
        dy = np.einsum("mi,mik->mk", a[:, :, 1], rel) / s * (2.0 / h)
        tw, th = (mat.texture if role == "base_color" else mat.maps[role]).size
        return level_of_detail(dx[:, 0], dx[:, 1], dy[:, 0], dy[:, 1], tw, th)

    @staticmethod
    def _base(mat, vals, lod=None):
        """(M, 4) base colour: RGB linear, alpha as stored (never decoded); ``lod`` the
        texture's level of detail per pixel (``uv_lod``)."""
        c = np.empty((len(vals), 4))
        c[:, :3] = srgb_to_linear(np.asarray(mat.color[:3], np.float64))
        c[:, 3] = mat.color[3]
        if mat.vertex_colors:
            c *= vals[:, _COLOR_LINEAR]
        if mat.texture is not None:
            c *= sample(mat.texture, _uv(mat, "base_color", vals), linear=True, lod=lod)
        return c

    def alpha_keep(self, t, px, py):
        """Bool mask: candidate pixels whose base alpha reaches their material's cutoff."""
        keep = np.ones(len(t), bool)
        mats = self.prims.tri_material[t]
        for m in np.unique(mats):
            mat = self.prims.materials[m]
            if mat.alpha_cutoff is None:
                continue
            sel = np.flatnonzero(mats == m)
            vals = self.interpolate(t[sel], self.barycentrics(t[sel], px[sel], py[sel]), mat)
            # the MASK test reads the full-size level (the magnification filter): the CUDA
            # raster decides it with no fused multiply-add, which rules out log2
            keep[sel] = self._base(mat, vals)[:, 3] >= mat.alpha_cutoff
        return keep

    def shade(self, t, px, py):
        """(M, 4) uint8 RGBA of triangles t at pixels (px, py)."""
        out = np.empty((len(t), 4), np.uint8)
        mats = self.prims.tri_material[t]
        for m in np.unique(mats):
            mat = self.prims.materials[m]
            sel = np.flatnonzero(mats == m)
            ts = t[sel]
            vals = self.interpolate(ts, self.barycentrics(ts, px[sel], py[sel]), mat)
            c = self._base(mat, vals, self._lod(ts, px[sel], py[sel], mat))
            # a drawn pixel is opaque whatever its base alpha (materials.FRAME_ALPHA),
            # but a blended one's layer (engine.render.transparency) keeps it
            out[sel, 3] = to_unorm8(c[:, 3]) if mat.blend else FRAME_ALPHA
            if mat.shading == "pbr":
                rgb = self._pbr(mat, ts, vals, c[:, :3], px[sel], py[sel])
            else:
                rgb = c[:, :3] if mat.shading == "unlit" else self._light(mat, ts, vals, c[:, :3],
                                                                          px[sel], py[sel])
            rgb = apply_tone_map(rgb, self.exposure, self.tone_map)
            out[sel, :3] = to_unorm8(linear_to_srgb(rgb))
        return out

    def _normal_view(self, mat, t, vals, px, py):
        """(unit normals (M, 3), unit view vectors (M, 3), positions (M, 3)) at pixels
        (px, py) (the normal map's level of detail)."""
        v = self.prims.triangles[t]
        world = self.varyings[:, _POSITION]
        p = vals[:, _POSITION]
        geo = _unit(np.cross(world[v[:, 1]] - world[v[:, 0]], world[v[:, 2]] - world[v[:, 0]]))
        if mat.shading == "flat" or (mat.shading == "pbr" and mat.flat_normals):
            n = geo
        else:
            n = _unit(vals[:, _NORMAL])
            n = np.where(np.any(n != 0, axis=1, keepdims=True), n, geo)
        if "normal" in mat.maps:  # stored values (data), filtered as its sampler says
            texel = sample(mat.maps["normal"], _uv(mat, "normal", vals), linear=False,
                           lod=self.uv_lod(t, px, py, mat, "normal"))
            n = mapped_normals(n, vals[:, _TANGENT], texel, mat.normal_scale)
        if mat.double_sided:
            n = np.where(self.setup.front[t][:, None], n, -n)
        view = _unit(self.eye - p) if self.view_dir is None else np.broadcast_to(self.view_dir, p.shape)
        return n, view, p

    def _sources(self, p):
        """[(unit direction to the light (M, 3), radiance arriving (M, 3))] at points p."""
        _, directional, point = self.lights
        sources = [(np.broadcast_to(d, p.shape), np.broadcast_to(e, p.shape))
                   for d, e in directional]
        for pos, e in point:
            d = pos - p
            r2 = np.maximum(np.einsum("ij,ij->i", d, d), 1e-30)[:, None]
            sources.append((_unit(d), e / r2))
        for pos, axis, e, light_range, inner, outer in self.spots:
            d = pos - p
            r2 = np.maximum(np.einsum("ij,ij->i", d, d), 1e-30)
            to_light = _unit(d)
            k = pbr.range_window(np.sqrt(r2), light_range) / r2
            if axis is not None:
                k = k * pbr.spot_factor(-to_light @ axis, inner, outer)
            sources.append((to_light, e * k[:, None]))
        return sources

    def _shadowed(self, sources, p, n, t):
        """``sources`` with each shadowed light's radiance times its visibility
        (engine.render.shadows.visibility) at the receiving triangles t."""
        if not self.shadows.maps:
            return sources
        out = list(sources)
        receive = self.shadows.receive[t]
        n_dir = len(self.lights[1])
        for m in self.shadows.maps:
            k = self.shadows.source(m, n_dir)
            to_light, e = out[k]
            vis = np.ones(len(t))
            if receive.any():
                vis[receive] = shadows.visibility(m, p[receive], n[receive],
                                                  to_light[receive])
            out[k] = (to_light, e * vis[:, None])
        return out

    def _light(self, mat, t, vals, base, px, py):
        n, view, p = self._normal_view(mat, t, vals, px, py)
        ambient = self.lights[0]
        diffuse = np.broadcast_to(ambient, base.shape).copy()
        if self.environment is not None:  # the environment joins the ambient (engine.render.ibl)
            diffuse += ibl.ambient_lit(self.environment, n)
        spec = np.zeros_like(base)
        for to_light, e in self._shadowed(self._sources(p), p, n, t):
            ndl = np.einsum("ij,ij->i", n, to_light)[:, None]
            diffuse += e * np.maximum(ndl, 0.0)
            if mat.specular > 0:
                ndh = np.einsum("ij,ij->i", n, _unit(to_light + view))[:, None]
                spec += (ndl > 0) * e * mat.specular * np.maximum(ndh, 0.0) ** mat.shininess
        return base * diffuse + spec

    def _pbr(self, mat, t, vals, base, px, py):
        """(M, 3) linear radiance of a "pbr" material (engine.render.pbr) at pixels (px,
        py); its maps filtered as their samplers say at their own level of detail
        (``uv_lod``: each map's size and UV set), the data maps from their stored
        values."""
        n, view, p = self._normal_view(mat, t, vals, px, py)
        metallic = np.full(len(t), mat.metallic)
        roughness = np.full(len(t), mat.roughness)
        maps = mat.maps
        if "metallic_roughness" in maps:  # linear data: B metal, G roughness
            mr = sample(maps["metallic_roughness"], _uv(mat, "metallic_roughness", vals),
                        linear=False, lod=self.uv_lod(t, px, py, mat, "metallic_roughness"))
            metallic, roughness = metallic * mr[:, 2], roughness * mr[:, 1]
        occlusion = np.ones((len(t), 1))
        if "occlusion" in maps:
            r = sample(maps["occlusion"], _uv(mat, "occlusion", vals), linear=False,
                       lod=self.uv_lod(t, px, py, mat, "occlusion"))[:, :1]
            occlusion = 1.0 + mat.occlusion_strength * (r - 1.0)
        f0 = pbr.DIELECTRIC_F0 * (1.0 - metallic[:, None]) + base * metallic[:, None]
        rgb = self.lights[0] * (base * (1.0 - metallic[:, None]) + f0) * occlusion
        if self.environment is not None:
            rgb = rgb + ibl.ambient_pbr(self.environment, n, view, base, metallic, roughness,
                                        occlusion)
        for to_light, e in self._shadowed(self._sources(p), p, n, t):
            ndl = np.maximum(np.einsum("ij,ij->i", n, to_light), 0.0)[:, None]
            f = pbr.brdf(n, view, to_light, base, metallic, roughness)
            rgb = rgb + np.pi * f * e * ndl
        emissive = np.asarray(mat.emissive, np.float64)
        if "emissive" in maps:
            emissive = emissive * sample(maps["emissive"], _uv(mat, "emissive", vals),
                                         linear=True,
                                         lod=self.uv_lod(t, px, py, mat, "emissive"))[:, :3]
        return rgb + emissive


def resolve(keys, size, n_points, point_colors, background, shader: SurfaceShader | None,
            n_triangles: int = 0, line_rgba=None):
    """(H * W,) uint64 keys -> Frame: ids [0, n_points) are points and take their colour,
    the next ``n_triangles`` ids are triangles (shaded by ``shader``), the rest lines
    (``line_rgba`` (L, 4) uint8); empty pixels take the background (depth 1.0)."""
    w, h = size
    empty = keys == EMPTY_KEY
    low = (keys & _LOW).astype(np.int64)
    color = np.empty((h * w, 4), np.uint8)
    color[:] = background_rgba(background)
    pts = np.flatnonzero(~empty & (low < n_points))
    color[pts] = point_colors[low[pts]]
    n_surface = n_points + n_triangles
    tri = np.flatnonzero(~empty & (low >= n_points) & (low < n_surface))
    if tri.size:
        color[tri] = shader.shade(low[tri] - n_points, tri % w, tri // w)
    lin = np.flatnonzero(~empty & (low >= n_surface))
    if lin.size:
        color[lin] = line_rgba[low[lin] - n_surface]
    depth = (keys >> np.uint64(32)).astype(np.uint32).view(np.float32)
    depth[empty] = 1.0
    return Frame(color.reshape(h, w, 4), depth.reshape(h, w))
