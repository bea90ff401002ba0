"""Vertex attributes and varyings: the one declaration of what each vertex carries from
its geometry to the resolve.

Each ``Attribute`` names a per-vertex value, where the primitive assembly reads it on a
geometry, its width, and how the vertex stage carries it into the batch frame::

    space "normal"     n' = normalize(M^-T n)   (zero for a singular model)
    space "direction"  t' = normalize(M t)      (the 3x3 part: tangents); a fourth
                       component (the tangent's handedness w) times sign(det M)
    space "none"       as is                    (texture coordinates, colours)

(M the 3x3 part of the model matrix, and first of the skin's matrix for a skinned
vertex. The handedness flips with a mirroring matrix because the shading forms the
bitangent as ``cross(n', t') w'``, and ``cross(M^-T n, M t) . (M b)`` has the sign of
``det M`` for any invertible M, b = cross(n, t).)

The primitive assembly packs the attributes of every vertex into one (N, A) float64
array (``AttributeLayout.pack``); the vertex stage of every backend (NumPy, Numba, CUDA)
turns it into one (N, V) float64 array of *varyings* — the batch-frame position first,
then each attribute in declaration order — with one generic loop over the layout's rows
(in offset, out offset, width, space); every resolve interpolates all V columns in one
generic loop (perspective-correct barycentrics) and its shading reads them by the
offsets here (``VARYINGS``). GL gets the same (N, V) array as one interleaved vertex
buffer, its inputs and outputs generated from this table (``glsl_varyings``).

Adding an attribute: declare it in ``ATTRIBUTES``, fill it in the loader (a geometry
attribute), and use it in each backend's shading source. Nothing else changes.

Vertex inputs that make no varying of their own — skin influences (glTF JOINTS_n /
WEIGHTS_n, ``Mesh.joints`` / ``Mesh.weights``) and morph target deltas — are read by the
vertex stage from the deformation tables of ``engine.render.deform``, which morph and
skin the position and the attributes above by their spaces ("normal" by the skin's
normal matrix, "direction" by its 3x3 part; morph normal deltas add to the attribute
at ``packed_offset("normal")``, morph tangent deltas to the xyz of the one at
``packed_offset("tangent")``) before the model matrix.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ..scene.colorspace import srgb_to_linear
from ..scene.material import textures_read

__all__ = ["ATTRIBUTES", "SPACES", "VARYINGS", "VARYING_COUNT", "Attribute",
           "glsl_varyings", "layout_rows", "material_span", "pack_attributes", "packed_offset",
           "varying_offsets"]

SPACES = {"normal": 0, "direction": 1, "none": 2}


class Attribute(NamedTuple):
    """One per-vertex attribute.

    Attributes:
        name: the varying's name (GLSL ``v_<name>``).
        width: floats per vertex.
        space: "normal", "direction" or "none" (see the module docstring).
        read: ``read(geometry, colors)`` -> the (n, width) values of the geometry's n
            vertices (repeated for each copy an Instances node draws), or of every vertex
            of its range, or None where the geometry lacks it (then zeros); ``colors``
            are the batch's (m, 4) uint8 sRGB-encoded colours of the range's m vertices
            (instance and node colours applied).
    """

    name: str
    width: int
    space: str
    read: Callable


def _normals(g, colors):
    return g.vertex_normals()


def _uv0(g, colors):
    return g.uvs


def _uv1(g, colors):
    return getattr(g, "uvs1", None)


def _tangents(g, colors):
    """The mesh's tangents, generated (engine.scene.tangents) only for a mesh whose
    material has a normal map, from that map's texture coordinates."""
    given = getattr(g, "tangents", None)
    if given is not None:
        return given
    material = getattr(g, "material", None)
    if material is None or "normal" not in material.maps:
        return None
    return g.vertex_tangents(material.tex_coords.get("normal", 0))


def _color_linear(g, colors):
    out = colors / 255.0
    out[:, :3] = srgb_to_linear(out[:, :3])
    return out


# Ordered so that what one material reads is a short contiguous span of the varyings
# (``material_span``): lit reads position, normal, the linear colour (and uv0 when
# textured); unlit reads the linear colour and uv0. Colours are decoded per vertex and
# interpolated in linear light, as GL interpolates a decoded vertex attribute.
ATTRIBUTES = (
    Attribute("normal", 3, "normal", _normals),        # unit vertex normal
    Attribute("color_linear", 4, "none", _color_linear),  # vertex colour, RGB linear
    Attribute("uv0", 2, "none", _uv0),                 # texture coordinates (glTF TEXCOORD_0)
    # read only by materials with a normal map or a texture on the second UV set: last,
    # so the other materials' spans stay as short as they were
    Attribute("tangent", 4, "direction", _tangents),   # xyz unit, w handedness (glTF TANGENT)
    Attribute("uv1", 2, "none", _uv1),                 # second texture coordinates (TEXCOORD_1)
)

# varyings: the batch-frame position, then the attributes; name -> (offset, width)
VARYINGS = {"position": (0, 3)}
for _a in ATTRIBUTES:
    VARYINGS[_a.name] = (sum(VARYINGS[k][1] for k in VARYINGS), _a.width)
VARYING_COUNT = sum(w for _, w in VARYINGS.values())
ATTRIBUTE_COUNT = VARYING_COUNT - 3


def varying_offsets(names) -> np.ndarray:
    """(len(names),) int64 first columns of the named varyings: a compiled resolve takes
    them in the order its own source names the varyings (so its cached build never
    depends on this table's order). Raises KeyError for an undeclared name."""
    return np.array([VARYINGS[n][0] for n in names], np.int64)


def material_span(material) -> tuple[int, int]:
    """(first, last + 1) varying columns the shading of ``material`` (an
    engine.scene.Material) reads: position and normal when lit, the linear colour with
    vertex colours, uv0 or uv1 for each texture by its set (``Material.tex_coords``:
    the base colour texture, a "pbr" material's maps, the normal map of a lit one) and the
    tangent for a lit material's normal map. Every resolve interpolates just this span
    for the material's pixels."""
    lit = material.shading != "unlit"
    names = ["position", "normal"] if lit else []
    if material.vertex_colors:
        names.append("color_linear")
    roles = [r for r, t in textures_read(material)]
    for r in roles:
        names.append("uv1" if material.tex_coords.get(r, 0) == 1 else "uv0")
    if "normal" in roles:
        names.append("tangent")
    if not names:
        return 0, 0
    cols = [(VARYINGS[n][0], VARYINGS[n][0] + VARYINGS[n][1]) for n in names]
    return min(a for a, _ in cols), max(b for _, b in cols)


def layout_rows() -> np.ndarray:
    """(A, 4) int64 rows (offset in the packed attributes, offset in the varyings, width,
    space code) for the vertex stages' generic loop."""
    rows, at = [], 0
    for a in ATTRIBUTES:
        rows.append((at, VARYINGS[a.name][0], a.width, SPACES[a.space]))
        at += a.width
    return np.array(rows, np.int64)


def packed_offset(name: str) -> int:
    """First column of attribute ``name`` in the packed (N, A) attributes (morph
    targets add their normal deltas at the "normal" one). Raises KeyError."""
    at = 0
    for a in ATTRIBUTES:
        if a.name == name:
            return at
        at += a.width
    raise KeyError(name)


def pack_attributes(ranges, colors) -> np.ndarray:
    """(N, A) float64 packed attributes of a batch (A = VARYING_COUNT - 3).

    Args:
        ranges: (geometry, start, stop, copies) of every node drawn as a surface:
            its vertex range in the batch, holding ``copies`` copies of the geometry.
        colors: (N, 4) uint8 host vertex colours of the batch.
    """
    out = np.zeros((len(colors), ATTRIBUTE_COUNT))
    for g, start, stop, copies in ranges:
        at = 0
        for a in ATTRIBUTES:
            values = a.read(g, colors[start:stop])
            if values is not None:
                values = np.asarray(values, np.float64)
                if len(values) != stop - start:  # the geometry's own: once per copy
                    values = np.tile(values, (copies, 1))
                out[start:stop, at:at + a.width] = values
            at += a.width
    return out


def glsl_varyings(stage: str) -> str:
    """GLSL declarations of the varyings for ``stage``: "vertex" (``in_<name>`` inputs,
    ``v_<name>`` outputs and a ``copy_varyings()`` function) or "fragment" (``v_<name>``
    inputs)."""
    types = {2: "vec2", 3: "vec3", 4: "vec4"}
    if stage == "fragment":
        return "\n".join(f"in {types[w]} v_{name};" for name, (_, w) in VARYINGS.items())
    decl = [f"in {types[w]} in_{name};\nout {types[w]} v_{name};"
            for name, (_, w) in VARYINGS.items()]
    body = "".join(f"    v_{name} = in_{name};\n" for name in VARYINGS)
    return "\n".join(decl) + "\nvoid copy_varyings() {\n" + body + "}"


def gl_buffer_format(names=None) -> tuple[str, list[str]]:
    """The moderngl buffer format of the (N, V) float32 varyings and the attribute names,
    e.g. ("3f 3f 2f 4f 4f", ["in_position", ...]); with ``names`` (varying names), of
    just those columns interleaved in ``VARYINGS`` order. Raises KeyError for an
    undeclared name."""
    chosen = list(VARYINGS)
    if names is not None:
        unknown = set(names) - set(VARYINGS)
        if unknown:
            raise KeyError(f"undeclared varyings: {sorted(unknown)}")
        chosen = [n for n in VARYINGS if n in set(names)]
    return (" ".join(f"{VARYINGS[n][1]}f" for n in chosen), [f"in_{n}" for n in chosen])
