"""glTF 2.0 materials, textures and samplers -> engine materials.

Colour spaces: glTF's ``baseColorFactor`` and ``COLOR_0`` are linear (spec 3.9.2,
3.7.2.1), its base colour texture is sRGB-encoded; engine colours are sRGB-encoded. The
loader multiplies factor x COLOR_0 x texture in linear space and encodes the result.

pbrMetallicRoughness -> ``Material(shading="pbr")``: the glTF 2.0 Appendix B BRDF
(engine.render.pbr) with ``metallicFactor``/``roughnessFactor`` as ``metallic``/
``roughness``, and ``metallicRoughnessTexture``, ``occlusionTexture`` (+ ``strength``) and
``emissiveTexture`` as the "metallic_roughness", "occlusion" and "emissive" maps,
``normalTexture`` (+ ``scale``) as the "normal" map (``normal_scale``; drawn through the
primitive's TANGENT, or tangents generated in the MikkTSpace convention:
engine.scene.tangents); each texture reads the TEXCOORD_0 or TEXCOORD_1 its textureInfo's
``texCoord`` names (``Material.tex_coords``; the mesh's ``uvs`` and ``uvs1``);
``emissiveFactor`` times ``KHR_materials_emissive_strength`` as ``emissive``. A
primitive without NORMAL gets ``flat_normals`` (the spec's flat normals; its TANGENT is
then ignored, as the spec asks).
``KHR_materials_unlit`` -> shading "unlit". ``alphaMode`` MASK -> ``alpha_cutoff``
(default 0.5); BLEND -> ``blend`` (order-independent "over" compositing,
engine.render.transparency). ``doubleSided`` -> ``double_sided``. Not drawn (noted by the
loader): a texCoord beyond 1 (read at TEXCOORD_0), and a KHR_texture_transform other than
the first one on the same UV set (the base colour texture's first: each set is
transformed once, when the mesh is built; the others read those UVs). OBJ/MTL materials
keep the Lambert + Blinn-Phong kind "lit" (engine.io.mtl).

Samplers: wrapS/wrapT REPEAT (10497), CLAMP_TO_EDGE (33071), MIRRORED_REPEAT (33648)
per axis; magFilter (NEAREST 9728 / LINEAR 9729; absent: the minFilter's within-level
filter, else linear) and minFilter (9728, 9729 and the mipmap filters 9984-9987, all
drawn: engine.scene.material.MIN_FILTERS; absent: the engine's default, trilinear for a
linear magFilter). ``KHR_texture_transform`` (offset, rotation,
scale, texCoord) is applied to the UVs of the set a texture reads when the mesh is
built (an affine map of UVs is exact per vertex, since the rasterizer interpolates UVs
linearly in perspective-correct barycentrics).
"""

from __future__ import annotations

import math

import numpy as np

from ...scene.colorspace import linear_to_srgb
from ...scene.material import MIN_FILTERS, Material, Sampler, Texture
from ..textures import decode_image
from .document import Document

__all__ = ["GLTF_TEXTURE_NAMES", "MaterialInfo", "Materials", "texture_transform"]

_WRAP = {10497: "repeat", 33071: "clamp", 33648: "mirror"}
_FILTER = {9728: "nearest", 9729: "linear", 9984: "nearest", 9985: "linear",
           9986: "nearest", 9987: "linear"}
_MIN_FILTER = dict(zip((9728, 9729, 9984, 9985, 9986, 9987), MIN_FILTERS))


def texture_transform(offset=(0.0, 0.0), rotation: float = 0.0, scale=(1.0, 1.0)) -> np.ndarray:
    """(3, 3) KHR_texture_transform matrix T(offset) @ R(rotation) @ S(scale), applied
    to column vectors (u, v, 1); R = [[cos, -sin], [sin, cos]] (the extension's GLSL,
    whose mat3 constructor is column-major)."""
    c, s = math.cos(rotation), math.sin(rotation)
    t = np.array([[1.0, 0.0, offset[0]], [0.0, 1.0, offset[1]], [0.0, 0.0, 1.0]])
    r = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    sc = np.diag([scale[0], scale[1], 1.0])
    return t @ r @ sc


# Material.tex_coords roles -> the glTF material property of each texture
GLTF_TEXTURE_NAMES = {"base_color": "baseColorTexture",
                      "metallic_roughness": "metallicRoughnessTexture",
                      "occlusion": "occlusionTexture", "emissive": "emissiveTexture",
                      "normal": "normalTexture"}


class MaterialInfo:
    """What a primitive needs from its glTF material.

    factor: (4,) linear RGBA base colour factor; texture: engine Texture of the base
    colour or None; texcoord: which TEXCOORD_n it reads; transform: (3, 3) UV transform
    or None; tex_coords: role -> UV set (0 or 1) of every texture; set_transforms: UV set
    -> the (3, 3) transform (or None) applied to it when the mesh is built; and the engine
    material parameters.
    """

    def __init__(self):
        self.factor = np.ones(4)
        self.texture: Texture | None = None
        self.texcoord = 0
        self.transform: np.ndarray | None = None
        self.shading = "pbr"
        self.metallic = 1.0
        self.roughness = 1.0
        self.occlusion_strength = 1.0
        self.double_sided = False
        self.alpha_cutoff: float | None = None
        self.blend = False
        self.emissive = (0.0, 0.0, 0.0)
        self.maps: dict[str, Texture] = {}
        self.normal_scale = 1.0
        self.tex_coords: dict[str, int] = {}
        self.set_transforms: dict[int, np.ndarray | None] = {}
        self._engine: dict[tuple, Material] = {}

    def roles_on(self, sets) -> list[str]:
        """The texture roles (Material.tex_coords keys) that read one of the UV ``sets``."""
        roles = (["base_color"] if self.texture is not None else []) + list(self.maps)
        return [r for r in roles if self.tex_coords.get(r, 0) in sets]

    def engine_material(self, vertex_colors: bool, flat: bool = False,
                        without=()) -> Material:
        """The engine Material (one object per flavour, shared by primitives).

        ``vertex_colors``: the geometry's colours carry factor x COLOR_0 (the material
        colour is then white); otherwise they are only for point drawing and the
        material carries the factor itself. ``flat``: the primitive has no normals, so
        shading uses each triangle's own normal (the spec's flat normals). ``without``:
        texture roles left out (their UV set is missing on the primitive).
        """
        without = frozenset(without)
        texture = None if "base_color" in without else self.texture
        vc = bool(vertex_colors) or texture is None
        key = (vc, bool(flat), without)
        if key not in self._engine:
            color = (1.0, 1.0, 1.0, 1.0) if vc else tuple(
                np.append(linear_to_srgb(self.factor[:3]), np.clip(self.factor[3], 0, 1)))
            self._engine[key] = Material(
                color=color, shading=self.shading, texture=texture, vertex_colors=vc,
                double_sided=self.double_sided, alpha_cutoff=self.alpha_cutoff,
                blend=self.blend, emissive=self.emissive,
                maps={r: t for r, t in self.maps.items() if r not in without},
                metallic=self.metallic, roughness=self.roughness,
                occlusion_strength=self.occlusion_strength, flat_normals=bool(flat),
                normal_scale=self.normal_scale,
                tex_coords={r: k for r, k in self.tex_coords.items() if r not in without})
        return self._engine[key]


class Materials:
    """Reads ``materials``, ``textures``, ``samplers`` and ``images`` of a Document.

    ``notes`` is the loader's NotDrawn collector (``add(what, which)``).
    """

    def __init__(self, doc: Document, notes):
        self.doc, self.notes = doc, notes
        self._materials: dict = {}
        self._textures: dict[int, Texture | None] = {}
        self._images: dict[int, np.ndarray | None] = {}
        self._samplers: dict[int, Sampler] = {}

    # ------------------------------------------------------------------ samplers
    def sampler(self, index: int | None) -> Sampler:
        if index is None:
            return Sampler("repeat", "repeat", "linear")
        if index in self._samplers:
            return self._samplers[index]
        doc = self.doc
        where = f"samplers[{index}]"
        s = doc.item("samplers", index)
        wrap = []
        for key in ("wrapS", "wrapT"):
            v = doc.integer(s, key, where, default=10497)
            if v not in _WRAP:
                raise doc.error(f"{where}.{key}", f"{v} is not a glTF wrap mode (10497 REPEAT, "
                                "33071 CLAMP_TO_EDGE or 33648 MIRRORED_REPEAT)")
            wrap.append(_WRAP[v])
        mag = doc.integer(s, "magFilter", where, default=None)
        if mag is not None and mag not in (9728, 9729):
            raise doc.error(f"{where}.magFilter", f"{mag} is not 9728 NEAREST or 9729 LINEAR")
        mini = doc.integer(s, "minFilter", where, default=None)
        if mini is not None and mini not in _FILTER:
            raise doc.error(f"{where}.minFilter", f"{mini} is not a glTF filter (9728, 9729 "
                            "or 9984-9987)")
        filt = _FILTER[mag] if mag is not None else _FILTER.get(mini, "linear")
        out = Sampler(wrap[0], wrap[1], filt, _MIN_FILTER.get(mini))
        self._samplers[index] = out
        return out

    # ------------------------------------------------------------------ textures
    def _image(self, index: int) -> np.ndarray | None:
        if index not in self._images:
            data, label = self.doc.image_bytes(index)
            try:
                self._images[index] = decode_image(data)
            except ValueError as exc:
                self.notes.left_out(f"images[{index}] ({label}: {exc})")
                self._images[index] = None
        return self._images[index]

    def texture(self, index: int, where: str) -> Texture | None:
        """Engine Texture of ``textures[index]`` (None when its image is unusable)."""
        if index in self._textures:
            return self._textures[index]
        doc = self.doc
        tw = f"textures[{index}]"
        t = doc.item("textures", index)
        source = doc.ref(t, "source", tw, "images", default=None)
        ext = doc.obj(t, "extensions", tw) or {}
        for name in ("EXT_texture_webp",):  # sources Pillow decodes
            e = ext.get(name)
            if isinstance(e, dict) and "source" in e:
                source = doc.ref(e, "source", f"{tw}.extensions.{name}", "images")
        if source is None:
            self.notes.left_out(f"{tw} (no image the engine can decode)")
            tex = None
        else:
            image = self._image(source)
            sampler = self.sampler(doc.ref(t, "sampler", tw, "samplers", default=None))
            tex = None if image is None else Texture(image, sampler)
        self._textures[index] = tex
        return tex

    def texture_info(self, info: dict, where: str):
        """(Texture or None, texCoord set, (3, 3) transform or None) of a textureInfo."""
        doc = self.doc
        index = doc.ref(info, "index", where, "textures")
        texcoord = doc.integer(info, "texCoord", where, default=0)
        transform = None
        ext = doc.obj(info, "extensions", where) or {}
        tt = ext.get("KHR_texture_transform")
        if tt is not None:
            tw = f"{where}.extensions.KHR_texture_transform"
            if not isinstance(tt, dict):
                raise doc.error(tw, "must be an object")
            offset = doc.numbers(tt, "offset", tw, 2, default=(0.0, 0.0))
            rotation = doc.number(tt, "rotation", tw, default=0.0)
            scale = doc.numbers(tt, "scale", tw, 2, default=(1.0, 1.0))
            texcoord = doc.integer(tt, "texCoord", tw, default=texcoord)
            transform = texture_transform(offset, rotation, scale)
        return self.texture(index, where), texcoord, transform

    # ----------------------------------------------------------------- materials
    def get(self, index: int | None) -> MaterialInfo:
        """MaterialInfo of ``materials[index]``; None -> the spec's default material
        (base colour 1, metallic 1, roughness 1, opaque, single-sided)."""
        if index in self._materials:
            return self._materials[index]
        info = MaterialInfo()
        if index is not None:
            info.metallic, info.roughness = self._read(index, info)
        self._materials[index] = info
        return info

    def _read(self, index: int, info: MaterialInfo):
        doc = self.doc
        where = f"materials[{index}]"
        m = doc.item("materials", index)
        label = f"{where} {m['name']!r}" if isinstance(m.get("name"), str) else where
        metallic = roughness = 1.0
        pbr = doc.obj(m, "pbrMetallicRoughness", where)
        if pbr is not None:
            pw = f"{where}.pbrMetallicRoughness"
            factor = doc.numbers(pbr, "baseColorFactor", pw, 4, default=(1.0, 1.0, 1.0, 1.0))
            for i, c in enumerate(factor):
                if not 0.0 <= c <= 1.0:
                    raise doc.error(f"{pw}.baseColorFactor[{i}]", f"must be in [0, 1], got {c:g}")
            info.factor = np.array(factor)
            metallic = doc.number(pbr, "metallicFactor", pw, default=1.0, lo=0.0, hi=1.0)
            roughness = doc.number(pbr, "roughnessFactor", pw, default=1.0, lo=0.0, hi=1.0)
            base = doc.obj(pbr, "baseColorTexture", pw)
            if base is not None:
                info.texture, info.texcoord, info.transform = self.texture_info(
                    base, f"{pw}.baseColorTexture")
                if info.texture is not None:
                    info.texcoord = self._uv_set(info, "base_color", info.texcoord,
                                                 info.transform, label)
            mr = doc.obj(pbr, "metallicRoughnessTexture", pw)
            if mr is not None:
                self._map(info, "metallic_roughness", mr, f"{pw}.metallicRoughnessTexture",
                          "metallic-roughness textures", label)
        for key, role, what in (("normalTexture", "normal", "normal textures"),
                                ("occlusionTexture", "occlusion", "occlusion textures"),
                                ("emissiveTexture", "emissive", "emissive textures")):
            t = doc.obj(m, key, where)
            if t is not None:
                self._map(info, role, t, f"{where}.{key}", what, label)
        emissive = np.array(doc.numbers(m, "emissiveFactor", where, 3, default=(0.0, 0.0, 0.0)))
        for i, c in enumerate(emissive):
            if not 0.0 <= c <= 1.0:
                raise doc.error(f"{where}.emissiveFactor[{i}]", f"must be in [0, 1], got {c:g}")
        ext = doc.obj(m, "extensions", where) or {}
        strength = ext.get("KHR_materials_emissive_strength")
        if isinstance(strength, dict):
            emissive = emissive * doc.number(
                strength, "emissiveStrength", f"{where}.extensions."
                "KHR_materials_emissive_strength", default=1.0, lo=0.0)
        if emissive.any():
            info.emissive = tuple(float(x) for x in emissive)
        mode = doc.string(m, "alphaMode", where, default="OPAQUE",
                          choices=("OPAQUE", "MASK", "BLEND"))
        cutoff = doc.number(m, "alphaCutoff", where, default=0.5, lo=0.0)
        if mode == "MASK":
            info.alpha_cutoff = min(cutoff, 1.0)
        elif mode == "BLEND":
            info.blend = True  # drawn blended (engine.render.transparency)
        info.double_sided = doc.boolean(m, "doubleSided", where, False)
        if "KHR_materials_unlit" in ext:
            info.shading = "unlit"
        for name in ext:
            if name not in ("KHR_materials_unlit", "KHR_materials_emissive_strength"):
                self.notes.add(f"extension {name}", label)
        return metallic, roughness

    def _map(self, info, role, tinfo, where, what, label):
        if role == "normal":  # normalTextureInfo.scale, occlusionTextureInfo.strength
            info.normal_scale = self.doc.number(tinfo, "scale", where, default=1.0)
        elif role == "occlusion":
            info.occlusion_strength = self.doc.number(tinfo, "strength", where, default=1.0,
                                                      lo=0.0, hi=1.0)
        tex, texcoord, transform = self.texture_info(tinfo, where)
        if tex is not None:
            info.maps[role] = tex
            self._uv_set(info, role, texcoord, transform, label, what)

    def _uv_set(self, info, role, texcoord, transform, label, what="base colour textures"):
        """Record the UV set texture ``role`` reads (0 or 1; a texCoord beyond 1 reads
        0, noted) and its set's transform (the first texture's on that set; a different
        one later is noted); returns the set."""
        k = texcoord
        if k > 1:
            self.notes.add(f"{what} on TEXCOORD_{k} (read at TEXCOORD_0: the engine "
                           "carries two UV sets)", label)
            k = 0
        info.tex_coords[role] = k
        if k not in info.set_transforms:
            info.set_transforms[k] = transform
        elif not _same_transform(transform, info.set_transforms[k]):
            self.notes.add(f"{what} with another KHR_texture_transform than the first "
                           f"texture on TEXCOORD_{k} (read with that one)", label)
        return k


def _same_transform(a, b) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and np.allclose(a, b))
