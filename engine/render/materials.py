"""The material record: one definition of what every compiled resolve reads per material.

``MATERIAL`` is a NumPy structured dtype (C layout, ``align=True``); the Numba resolve
reads a record array of it, the CUDA kernels the C struct ``frustum::Material`` of
``material.cuh`` in ``shaders/`` (a test compiles that struct with NVRTC and the host compiler
and checks every field offset against this dtype), and the GL fragment shader a std140
uniform block generated from the same field table (``glsl_material_block``;
``std140_record`` packs one material into it). Fields::

    color         float64 (4,)  base colour factor RGBA, sRGB-encoded (Material.color)
    color_linear  float64 (4,)  the same with RGB decoded to linear (IEC 61966-2-1)
    specular      float64       Blinn-Phong specular strength in [0, 1]
    shininess     float64       Blinn-Phong exponent in [1, 10000]
    alpha_cutoff  float64       glTF MASK threshold in [0, 1]; -1 for an opaque or a
                                BLEND material
    shading       int32         0 unlit, 1 lit (smooth), 2 flat
    flags         int32         1 multiply vertex colours | 2 double-sided | 4 "pbr"
                                flat normals | 8 blended (glTF BLEND: the resolve
                                writes the base alpha, engine.render.transparency)
    texture       int32         index into the texture table (``pack_materials``); -1 none
    span          int32 (2,)    the varying columns [first, last) its shading reads
                                (engine.render.attributes.material_span): the resolves
                                interpolate only those
    pad           int32         0 (keeps the record a multiple of 8 bytes)
    metallic      float64       "pbr" metalness factor in [0, 1]
    roughness     float64       "pbr" perceptual roughness factor in [0, 1]
    occlusion_strength float64  "pbr" occlusion map strength in [0, 1]
    emissive      float64 (4,)  "pbr" emitted linear RGB (Material.emissive), 0
    mr_texture, occlusion_texture, emissive_texture
                  int32         texture table rows of the "pbr" maps; -1 none
    pbr_pad       int32         0
    normal_scale  float64       the "normal" map's scale (Material.normal_scale)
    normal_texture int32        texture table row of the "normal" map (any lit kind); -1
    uv_sets       int32         bit i set: texture role i (UV_SET_BITS) reads uv1, else uv0

Textures of all materials share one texel array in linear light: ``pack_materials``
returns it with a table of (offset, width, height, wrap_s, wrap_t, filter, min_filter,
levels, first_level) rows (wrap 0 repeat, 1 clamp, 2 mirror; filter 0 nearest, 1 linear;
min_filter the index in engine.scene.material.MIN_FILTERS); a texture used by several
materials is stored once. Row k < X (X textures) is texture k; its mip chain (levels
rows, level 0 included, engine.scene.mipmap) follows the X texture rows, level d at row
``first_level + d``, with the texture's sampler columns and levels = first_level = 0.
A texture whose min_filter reads no mip level has one level row (level 0). The texels are
``Texture.linear`` (float32 RGBA, RGB decoded from sRGB once per texture, alpha / 255),
or for the data maps (metallic-roughness, occlusion, normal) ``Texture.stored`` (the
stored values / 255), each with its own mip chain (the stored values averaged, not
linear light: engine.scene.mipmap), row-major from the image's top row, so a
sampler reads four floats per texel and filters them as they are, for lit and unlit
materials alike: no decode per texel and no 8-bit texel in any resolve. Why float32
(16 bytes a texel, 4x the image) rather than 8 or 16 bits: a bilinear sample reads 4
texels, which sit in one or two cache lines either way, and filtering needs no unpacking
or decode table lookup per texel (16 per sample before). The mip levels are appended to
the same texel array.

Alpha: a pixel's base alpha (``color`` alpha x vertex colour alpha x texel alpha) decides
only the MASK test (``alpha_cutoff``: drawn where base alpha >= cutoff). The frame's alpha
is what covers the pixel, not the material's: every drawn surface pixel writes
``FRAME_ALPHA`` (opaque), as glTF 2.0 section 3.9.4 asks for OPAQUE ("the alpha value is
ignored") and MASK (a pixel that passes is "fully opaque"). So a texel (200, 0, 0, 0) of
an OPAQUE material gives (200, 0, 0, 255), never a pixel an image viewer shows as empty.
BLEND materials (``Material.blend``, flag 8) are the exception: their pixels are drawn
by the transparency pass (engine.render.transparency), whose layer resolves write the
base alpha (rounded to 8 bits) for the "over" compositing.
"""

from __future__ import annotations

import numpy as np

from ..scene.colorspace import srgb_to_linear
from ..scene.material import FILTERS, MIN_FILTERS, TEXTURE_ROLES, WRAP_MODES, textures_read
from .attributes import material_span

__all__ = ["FRAME_ALPHA", "MATERIAL", "MATERIAL_STD140", "TEXTURE_COLUMNS", "UV_SET_BITS",
           "glsl_material_block", "pack_materials", "std140_record"]

# name, kind ("f" floating point, "i" integer), count: the one field table
FIELDS = (("color", "f", 4), ("color_linear", "f", 4), ("specular", "f", 1),
          ("shininess", "f", 1), ("alpha_cutoff", "f", 1), ("shading", "i", 1),
          ("flags", "i", 1), ("texture", "i", 1), ("span", "i", 2), ("pad", "i", 1),
          ("metallic", "f", 1), ("roughness", "f", 1), ("occlusion_strength", "f", 1),
          ("emissive", "f", 4), ("mr_texture", "i", 1), ("occlusion_texture", "i", 1),
          ("emissive_texture", "i", 1), ("pbr_pad", "i", 1),
          ("normal_scale", "f", 1), ("normal_texture", "i", 1), ("uv_sets", "i", 1))

MATERIAL = np.dtype([(name, "<f8" if kind == "f" else "<i4", (count,) if count > 1 else ())
                     for name, kind, count in FIELDS], align=True)
GLSL_TYPES = {("f", 1): "float", ("f", 4): "vec4", ("i", 1): "int", ("i", 2): "ivec2"}

SHADING_CODES = {"unlit": 0, "lit": 1, "flat": 2, "pbr": 3}
# the 8-bit alpha every drawn surface pixel writes (see the module docstring); mirrored as
# FR_FRAME_ALPHA in material.cuh, 1.0 in surface.frag
FRAME_ALPHA = 255
VERTEX_COLORS, DOUBLE_SIDED, FLAT_NORMALS, BLENDED = 1, 2, 4, 8
# Material.maps roles the "pbr" kind reads, and the record field holding each one's row
PBR_MAPS = (("metallic_roughness", "mr_texture"), ("occlusion", "occlusion_texture"),
            ("emissive", "emissive_texture"))
# the ``uv_sets`` bit of each texture role (engine.scene.material.TEXTURE_ROLES order);
# mirrored as FR_UV_SET_* in material.cuh and in surface.frag
UV_SET_BITS = {role: 1 << i for i, role in enumerate(TEXTURE_ROLES)}


def _std140_dtype() -> np.dtype:
    """FIELDS in float32/int32 at std140 offsets (OpenGL 4.6 section 7.6.2.2: a scalar
    aligns to 4 bytes, a two-component vector to 8, a four-component one to 16; the block
    size rounds up to 16)."""
    names, formats, offsets, at = [], [], [], 0
    for name, kind, count in FIELDS:
        align = 4 * (1 if count == 1 else 2 if count == 2 else 4)
        at = -(-at // align) * align
        names.append(name)
        formats.append(("<f4" if kind == "f" else "<i4", (count,)) if count > 1 else
                       ("<f4" if kind == "f" else "<i4"))
        offsets.append(at)
        at += 4 * count
    return np.dtype({"names": names, "formats": formats, "offsets": offsets,
                     "itemsize": -(-at // 16) * 16})


MATERIAL_STD140 = _std140_dtype()


def glsl_material_block(instance: str = "u_material") -> str:
    """The GLSL declaration of the std140 uniform block ``Material`` with FIELDS (float
    fields as float/vec4, integer ones as int), named ``instance`` in the shader."""
    body = "".join(f"    {GLSL_TYPES[kind, count]} {name};\n" for name, kind, count in FIELDS)
    return f"layout(std140) uniform Material {{\n{body}}} {instance};"


def std140_record(record) -> bytes:
    """One ``MATERIAL`` record as the bytes of the std140 block (MATERIAL_STD140)."""
    out = np.zeros(1, MATERIAL_STD140)
    for name in MATERIAL.names:
        out[name] = record[name]
    return out.tobytes()


TEXTURE_COLUMNS = 9  # the texture table's row width (the module docstring)


def pack_materials(materials):
    """Materials -> (records (M,) MATERIAL, texels (texel count, 4) float32 linear RGBA
    (``Texture.linear`` and its mip levels), texture table (X + level rows, 9) int64 of
    (offset, width, height, wrap_s, wrap_t, filter, min_filter, levels, first_level): see
    the module docstring).

    Raises nothing for valid ``engine.scene.Material`` objects (they check themselves)."""
    records = np.zeros(len(materials), MATERIAL)
    texels, info, seen, chains = [], [], {}, []
    offset = 0
    for i, m in enumerate(materials):
        r = records[i]
        r["color"] = m.color
        r["color_linear"][:3] = srgb_to_linear(np.asarray(m.color[:3]))
        r["color_linear"][3] = m.color[3]
        r["specular"], r["shininess"] = m.specular, m.shininess
        # a BLEND material has no alpha test (glTF: the cutoff belongs to MASK)
        r["alpha_cutoff"] = -1.0 if m.alpha_cutoff is None or m.blend else m.alpha_cutoff
        r["shading"] = SHADING_CODES[m.shading]
        r["flags"] = (VERTEX_COLORS if m.vertex_colors else 0) | (
            DOUBLE_SIDED if m.double_sided else 0) | (
            FLAT_NORMALS if m.shading == "pbr" and m.flat_normals else 0) | (
            BLENDED if m.blend else 0)
        r["texture"] = -1
        r["span"] = material_span(m)
        r["metallic"], r["roughness"] = m.metallic, m.roughness
        r["occlusion_strength"] = m.occlusion_strength
        r["emissive"][:3] = m.emissive
        for _, field in PBR_MAPS:
            r[field] = -1
        if m.shading == "pbr":
            for role, field in PBR_MAPS:
                t = m.maps.get(role)
                if t is not None:
                    # linear data (metal, roughness, occlusion) is read as stored, the
                    # emissive colour decoded from sRGB
                    offset = _add_texture(t, role != "emissive", seen, info, texels, offset,
                                          chains)
                    r[field] = seen[id(t), role != "emissive"]
        r["normal_scale"] = m.normal_scale
        r["normal_texture"] = -1
        r["uv_sets"] = sum(UV_SET_BITS[role] for role, _ in textures_read(m)
                           if m.tex_coords.get(role, 0) == 1)
        normal = m.maps.get("normal") if m.shading != "unlit" else None
        if normal is not None:  # linear data: read as stored
            offset = _add_texture(normal, True, seen, info, texels, offset, chains)
            r["normal_texture"] = seen[id(normal), True]
        t = m.texture
        if t is None:
            continue
        offset = _add_texture(t, False, seen, info, texels, offset, chains)
        r["texture"] = seen[id(t), False]
    levels = []
    for row, chain in chains:
        row[7], row[8] = len(chain), len(info) + len(levels)
        for d, level in enumerate(chain):
            lh, lw = level.shape[:2]
            levels.append([row[0] if d == 0 else offset, lw, lh] + row[3:7] + [0, 0])
            if d:
                texels.append(level.reshape(-1, 4))
                offset += lw * lh
    texels = np.concatenate(texels) if texels else np.zeros((1, 4), np.float32)
    info = np.array(info + levels, np.int64).reshape(-1, TEXTURE_COLUMNS)
    return records, np.ascontiguousarray(texels), info


def _add_texture(t, raw, seen, info, texels, offset, chains):
    """Append texture ``t`` to the table unless there (by identity and ``raw``: its
    texels as stored / 255, for data maps, rather than decoded); its row and level chain
    go to ``chains`` (the mip chain when its min filter uses mipmaps: of the linear light
    ``Texture.mipmaps``, or for ``raw`` of the stored values, ``Texture.stored_mipmaps``);
    returns the next offset."""
    if (id(t), raw) in seen:
        return offset
    seen[id(t), raw] = len(info)
    w, h = t.size
    s = t.sampler
    row = [offset, w, h, WRAP_MODES.index(s.wrap_s), WRAP_MODES.index(s.wrap_t),
           FILTERS.index(s.filter), MIN_FILTERS.index(s.min_filter), 0, 0]
    info.append(row)
    data = t.stored if raw else t.linear
    texels.append(data.reshape(-1, 4))
    # MIN_FILTERS index >= 2: the filter reads mipmaps
    chains.append((row, (t.stored_mipmaps if raw else t.mipmaps) if row[6] >= 2 else [data]))
    return offset + w * h
