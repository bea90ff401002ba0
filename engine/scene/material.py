"""Materials: how a surface's colour is made, and the textures it samples.

A ``Material`` is one of four kinds, from least to most work per pixel::

    "unlit"   the base colour (times vertex colours / the texture, when present)
    "flat"    "lit" with each triangle's own normal
    "lit"     base colour lit by the scene's lights: ambient + Lambert diffuse +
              Blinn-Phong specular, computed in linear space (see engine.render.shading);
              OBJ/MTL materials and the default material
    "pbr"     the glTF 2.0 metallic-roughness BRDF (Appendix B: GGX distribution,
              height-correlated Smith visibility, Schlick Fresnel, Lambert diffuse for the
              non-metal part; engine.render.pbr) with ``metallic``, ``roughness``, the
              "metallic_roughness", "occlusion" and "emissive" maps and ``emissive``:
              what the glTF loader makes of a pbrMetallicRoughness material

Base colour sources multiply, as in glTF 2.0 (section 3.9.2, "baseColorFactor" times
"baseColorTexture" times COLOR_0): ``color`` x per-vertex colours x the texture sample.

Colour space: ``color``, vertex colours and texture texels are sRGB-encoded values in
[0, 1] (what an image file or a colour picker holds). Every kind decodes them to linear,
multiplies (and filters textures) there, lights when lit, and encodes the result to sRGB
(glTF 2.0 section 3.9.2; KHR_materials_unlit computes the same base colour), so an unlit
colour alone comes out exactly as given, and half-way between a red and a green texel is
sRGB (188, 188, 0), not (128, 128, 0).
"""

from __future__ import annotations

import numpy as np

from .colorspace import srgb_to_linear
from .mipmap import mip_chain

__all__ = ["FILTERS", "MIN_FILTERS", "SHADINGS", "TEXTURE_ROLES", "WRAP_MODES", "Material", "Sampler", "Texture",
           "material_epoch", "textures_read"]

# Bumped when a field of an existing Material is assigned: the renderer's per-assembly
# material tables (packed records, GL blocks) are rebuilt on the next frame.
_material_epoch = [0]


def material_epoch() -> int:
    """Counter that changes whenever a field of an existing ``Material`` is assigned
    (``mesh.material.color = ...``)."""
    return _material_epoch[0]

WRAP_MODES = ("repeat", "clamp", "mirror")   # glTF REPEAT, CLAMP_TO_EDGE, MIRRORED_REPEAT
FILTERS = ("nearest", "linear")
# glTF 2.0 minFilter 9728, 9729, 9984, 9985, 9986, 9987 (GL's names, lower case): the
# filter within a level (index % 2: nearest, linear) and across levels (index // 2: the
# base level only, the nearest level, a blend of the two nearest levels)
MIN_FILTERS = ("nearest", "linear", "nearest_mipmap_nearest", "linear_mipmap_nearest",
               "nearest_mipmap_linear", "linear_mipmap_linear")
SHADINGS = ("lit", "unlit", "flat", "pbr")
# the textures of a material by role (Material.tex_coords keys): the base colour texture,
# then the maps
TEXTURE_ROLES = ("base_color", "metallic_roughness", "occlusion", "emissive", "normal")


class Sampler:
    """How a texture is read (glTF 2.0 samplers, GL texel addressing).

    Args:
        wrap_s, wrap_t: "repeat", "clamp" (to edge) or "mirror" (mirrored repeat) for u and v.
        filter: the magnification filter (glTF magFilter), used where a texel covers
            more than a pixel: "nearest" (texel ``floor(u * W)``) or "linear" (bilinear
            between texel centres at ``(i + 0.5) / W``).
        min_filter: the minification filter (glTF minFilter), one of MIN_FILTERS, used
            where a texel is smaller than a pixel (engine.scene.sampling: the level of
            detail): "nearest"/"linear" read the full-size image, ``*_mipmap_nearest`` the
            nearest mip level (engine.scene.mipmap), ``*_mipmap_linear`` blend the two
            nearest levels; the first word is the filter within a level. Default
            (None): "linear_mipmap_linear" (trilinear) when ``filter`` is "linear",
            else "nearest".

    Raises:
        ValueError: an unknown mode.
    """

    def __init__(self, wrap_s: str = "repeat", wrap_t: str = "repeat", filter: str = "linear",
                 min_filter: str | None = None):
        if min_filter is None:
            min_filter = "linear_mipmap_linear" if filter == "linear" else "nearest"
        for name, v, allowed in (("wrap_s", wrap_s, WRAP_MODES), ("wrap_t", wrap_t, WRAP_MODES),
                                 ("filter", filter, FILTERS), ("min_filter", min_filter,
                                                               MIN_FILTERS)):
            if v not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {v!r}")
        self.wrap_s, self.wrap_t, self.filter = wrap_s, wrap_t, filter
        self.min_filter = min_filter

    def __repr__(self) -> str:
        return (f"Sampler({self.wrap_s!r}, {self.wrap_t!r}, {self.filter!r}, "
                f"{self.min_filter!r})")


class Texture:
    """An image on the host with its sampler.

    Args:
        image: (H, W, 3|4) uint8 RGB(A), or float in [0, 1]; row 0 is the top row of the
            picture. Texture coordinates (u, v) = (0, 0) are the top-left corner of the
            image (glTF's convention; the loader converts OBJ/trimesh UVs, whose v
            points up).
        sampler: a ``Sampler`` (default: repeat, bilinear).

    Attributes:
        image: (H, W, 4) uint8 RGBA, C-contiguous. Treat it as read-only once the
            texture has been drawn: ``linear`` is decoded from it once.

    Raises:
        ValueError: a wrong shape, an empty image, float values outside [0, 1].
    """

    def __init__(self, image, sampler: Sampler | None = None):
        a = np.asarray(image)
        if a.ndim != 3 or a.shape[2] not in (3, 4) or a.shape[0] < 1 or a.shape[1] < 1:
            raise ValueError(f"texture image must have shape (H, W, 3|4), got {a.shape}")
        if a.dtype != np.uint8:
            if not np.issubdtype(a.dtype, np.floating):
                raise ValueError(f"texture image must be uint8 or float, got {a.dtype}")
            if not (np.all(np.isfinite(a)) and a.min() >= 0 and a.max() <= 1):
                raise ValueError("float texture values must be finite and in [0, 1]")
            a = np.rint(a * 255).astype(np.uint8)
        if a.shape[2] == 3:
            a = np.concatenate([a, np.full(a.shape[:2] + (1,), 255, np.uint8)], axis=2)
        self.image = np.ascontiguousarray(a)
        self.sampler = sampler if sampler is not None else Sampler()

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) in texels."""
        return int(self.image.shape[1]), int(self.image.shape[0])

    @property
    def linear(self) -> np.ndarray:
        """(H, W, 4) float32 texels in linear light: RGB decoded from sRGB (IEC 61966-2-1),
        alpha / 255. Decoded once, on first use, and kept: every sampler filters these
        (16 bytes a texel, 4x the image), so no pixel decodes a texel again."""
        if getattr(self, "_linear", None) is None:
            decode = np.concatenate([srgb_to_linear(np.arange(256) / 255.0)[:, None]
                                     .repeat(3, 1), (np.arange(256) / 255.0)[:, None]], 1)
            lin = decode[self.image, np.arange(4)].astype(np.float32)
            lin.flags.writeable = False
            self._linear = lin
        return self._linear

    @property
    def mipmaps(self) -> list[np.ndarray]:
        """The mip chain of ``linear`` (engine.scene.mipmap.mip_chain): read-only
        (h_k, w_k, 4) float32 linear RGBA levels, ``linear`` first, down to 1 x 1. Built
        once, on first use, and kept."""
        if getattr(self, "_mipmaps", None) is None:
            self._mipmaps = mip_chain(self.linear)
        return self._mipmaps

    @property
    def stored(self) -> np.ndarray:
        """(H, W, 4) float32 texels as stored, / 255, never decoded: the texels of a data
        map (metallic-roughness, occlusion, normal: glTF 2.0 section 3.9.3 keeps them
        linear). Made once, on first use, and kept; read-only."""
        if getattr(self, "_stored", None) is None:
            data = self.image.astype(np.float32) / np.float32(255.0)
            data.flags.writeable = False
            self._stored = data
        return self._stored

    @property
    def stored_mipmaps(self) -> list[np.ndarray]:
        """The mip chain of ``stored`` (engine.scene.mipmap.mip_chain): a data map's
        levels average the stored values (a metalness of 0 and 1 averages to 0.5), where
        ``mipmaps`` averages linear light. Read-only (h_k, w_k, 4) float32 levels,
        ``stored`` first, down to 1 x 1; built once, on first use, and kept."""
        if getattr(self, "_stored_mipmaps", None) is None:
            self._stored_mipmaps = mip_chain(self.stored)
        return self._stored_mipmaps


def _unit_float(name: str, v, lo=0.0, hi=1.0) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {v!r}") from None
    if not lo <= f <= hi:
        raise ValueError(f"{name} must be in [{lo}, {hi}], got {v!r}")
    return f


def _checked_field(name: str, value):
    """A Material field's stored value (the constructor's checks, for every assignment)."""
    if name == "color":
        c = np.asarray(value, np.float64).reshape(-1)
        if c.shape not in ((3,), (4,)) or not np.all((c >= 0) & (c <= 1)):
            raise ValueError(f"color must be 3 or 4 floats in [0, 1], got {value!r}")
        return tuple(float(x) for x in (np.append(c, 1.0) if c.size == 3 else c))
    if name == "shading":
        if value not in SHADINGS:
            raise ValueError(f"shading must be one of {', '.join(SHADINGS)}, got {value!r}")
        return value
    if name == "texture":
        if value is not None and not isinstance(value, Texture):
            raise ValueError(f"texture must be an engine.scene.Texture, got {type(value).__name__}")
        return value
    if name in ("vertex_colors", "double_sided", "blend", "flat_normals"):
        return bool(value)
    if name == "specular":
        return _unit_float("specular", value)
    if name == "shininess":
        return _unit_float("shininess", value, 1.0, 10000.0)
    if name in ("metallic", "roughness", "occlusion_strength"):
        return _unit_float(name, value)
    if name == "alpha_cutoff":
        return None if value is None else _unit_float("alpha_cutoff", value)
    if name == "emissive":
        e = np.asarray(value, np.float64).reshape(-1)
        if e.shape != (3,) or not np.all(np.isfinite(e) & (e >= 0)):
            raise ValueError(f"emissive must be 3 finite floats >= 0, got {value!r}")
        return tuple(float(x) for x in e)
    if name == "normal_scale":
        try:
            f = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"normal_scale must be a number, got {value!r}") from None
        if not np.isfinite(f):
            raise ValueError(f"normal_scale must be finite, got {value!r}")
        return f
    if name == "tex_coords":
        sets = dict(value or {})
        for role, k in sets.items():
            if role not in TEXTURE_ROLES:
                raise ValueError(f"tex_coords: unknown texture role {role!r} (roles: "
                                 f"{', '.join(TEXTURE_ROLES)})")
            if k not in (0, 1) or isinstance(k, bool):
                raise ValueError(f"tex_coords[{role!r}] must be 0 (uvs) or 1 (uvs1), got {k!r}")
        return {role: int(k) for role, k in sets.items()}
    if name == "maps":
        maps = dict(value or {})
        for role, tex in maps.items():
            if not isinstance(tex, Texture):
                raise TypeError(f"maps[{role!r}] must be an engine.scene.Texture, "
                                f"got {type(tex).__name__}")
        return maps
    return value


class Material:
    """Surface appearance of a mesh.

    Args:
        color: base colour factor, RGB or RGBA floats in [0, 1] (sRGB-encoded).
        shading: "lit" (smooth: interpolated vertex normals), "flat" (lit with each
            triangle's own normal), "unlit" or "pbr" (the glTF metallic-roughness BRDF,
            smooth normals).
        texture: a ``Texture`` multiplied into the base colour at the pixel's UV, or None.
        vertex_colors: multiply the mesh's per-vertex colours in (when it has them).
        specular: Blinn-Phong specular strength in [0, 1] (0 = matte).
        shininess: Blinn-Phong exponent in [1, 10000].
        double_sided: draw back faces too (no back-face culling), lit from the side
            facing the camera.
        alpha_cutoff: None (opaque) or a threshold in [0, 1]: pixels whose alpha is below
            it are not drawn (glTF alphaMode MASK); ignored when ``blend`` is set.
        blend: alpha blending (glTF alphaMode BLEND): the surface is drawn with "over"
            compositing of its base alpha (colour alpha x vertex colour alpha x texel
            alpha) in linear light, independent of draw order, exact for up to 4
            overlapping transparent layers per pixel (engine.render.transparency: the
            merge beyond, depth, picking and MSAA rules).
        emissive: emitted colour, 3 floats >= 0, linear RGB (glTF emissiveFactor times
            KHR_materials_emissive_strength), added to a "pbr" pixel's radiance (times
            the "emissive" map); kept, not drawn, by the other kinds.
        maps: other textures by role (name -> ``Texture``), read at the pixel's uv0 by
            "pbr": "metallic_roughness" (B scales metallic, G roughness, linear values),
            "occlusion" (R, linear: ``1 + occlusion_strength * (R - 1)`` scales the
            ambient light), "emissive" (sRGB, times ``emissive``) and "normal" (a
            tangent-space normal map, linear RGB: ``n = normalize((2 rgb - 1) (s, s, 1))``
            with s = ``normal_scale``, taken through the mesh's tangent frame; read by
            "pbr", "lit" and "flat" alike: engine.render.normal_map).
        metallic: "pbr" metalness in [0, 1] (glTF metallicFactor).
        roughness: "pbr" perceptual roughness in [0, 1] (glTF roughnessFactor; the GGX
            alpha is its square).
        occlusion_strength: in [0, 1], glTF occlusionTexture.strength.
        flat_normals: "pbr" with each triangle's own normal (a glTF primitive without
            NORMAL: the spec's flat normals), as "flat" is "lit" with them.
        normal_scale: the "normal" map's scale (glTF normalTextureInfo.scale), a finite
            number: it scales the map's X and Y.
        tex_coords: which texture coordinates each texture reads, role -> 0 (the mesh's
            ``uvs``, the default) or 1 (``uvs1``); roles ``TEXTURE_ROLES``: "base_color"
            (``texture``) and the ``maps`` roles (glTF textureInfo.texCoord).

    Assigning a field later (``material.shading = "unlit"``) is checked as the
    constructor checks it and seen by the next frame (``material_epoch``).

    Raises:
        ValueError: a value out of range or an unknown shading.
    """

    def __init__(self, color=(1.0, 1.0, 1.0, 1.0), shading: str = "lit", texture=None,
                 vertex_colors: bool = True, specular: float = 0.0, shininess: float = 32.0,
                 double_sided: bool = False, alpha_cutoff: float | None = None,
                 blend: bool = False, emissive=(0.0, 0.0, 0.0), maps: dict | None = None,
                 metallic: float = 0.0, roughness: float = 0.5,
                 occlusion_strength: float = 1.0, flat_normals: bool = False,
                 normal_scale: float = 1.0, tex_coords: dict | None = None):
        self.color = color  # each field checked by __setattr__
        self.shading = shading
        self.texture = texture
        self.vertex_colors = vertex_colors
        self.specular = specular
        self.shininess = shininess
        self.double_sided = double_sided
        self.alpha_cutoff = alpha_cutoff
        self.blend = blend
        self.emissive = emissive
        self.maps = maps
        self.metallic = metallic
        self.roughness = roughness
        self.occlusion_strength = occlusion_strength
        self.flat_normals = flat_normals
        self.normal_scale = normal_scale
        self.tex_coords = tex_coords

    def __setattr__(self, name, value):
        value = _checked_field(name, value)
        if name in self.__dict__:
            _material_epoch[0] += 1
        object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        return (f"Material(color={self.color}, shading={self.shading!r}, "
                f"texture={'yes' if self.texture is not None else None})")


def textures_read(material) -> list:
    """[(role, Texture)] the shading of ``material`` samples: the base colour texture
    ("base_color"), a "pbr" material's metallic-roughness, occlusion and emissive maps,
    and the "normal" map of any lit kind (engine.render.normal_map)."""
    out = [] if material.texture is None else [("base_color", material.texture)]
    maps = material.maps
    if material.shading == "pbr":
        out += [(r, maps[r]) for r in ("metallic_roughness", "occlusion", "emissive")
                if r in maps]
    if material.shading != "unlit" and "normal" in maps:
        out.append(("normal", maps["normal"]))
    return out
