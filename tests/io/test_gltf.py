"""glTF 2.0 loading: the cases of issue 11 with their right values, every accessor,
sampler, texture-coordinate, primitive-mode and animation feature on small files built
here (gltf_files.Gltf), URIs, extensions, errors with JSON paths, and the Khronos sample
models (../shared/ref-assets/gltf-khronos) against what their READMEs state."""

from __future__ import annotations

import json
import logging
import math
import struct

import numpy as np
import pytest
from gltf_files import (
    BYTE,
    FLOAT,
    RED_GREEN,
    SHORT,
    UBYTE,
    UINT,
    USHORT,
    Gltf,
    geometries,
    glb,
    png_bytes,
    world_points,
)

from engine import OrthographicCamera, PerspectiveCamera, Renderer, Scene
from engine.errors import LoadError
from engine.io import load
from engine.scene.deform import posed_vertices
from engine.scene.geometry import Lines, Mesh, PointCloud
from engine.scene.transforms import quat_to_matrix

GREEN, RED = [0, 255, 0, 255], [255, 0, 0, 255]
QUAD = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], np.float32)
QUAD_FACES = np.array([0, 1, 2, 0, 2, 3], np.uint16)


def _error(path, *words) -> str:
    with pytest.raises(LoadError) as e:
        load(path)
    msg = str(e.value)
    assert "\n" not in msg and str(path) in msg
    for w in words:
        assert w in msg, msg
    return msg


def _render_center(model, size=(41, 41)):
    """RGBA at the centre of an orthographic view of ``model`` from +Z."""
    scene = Scene()
    scene.add(model)
    cam = scene.add(OrthographicCamera(height=4.0, position=(0, 0, 5), near=0.1, far=10))
    return Renderer(scene, cam, size, backend="numpy").render().color


# ------------------------------------------------------------------ issue 11 cases
def test_texture_transform_offset_moves_the_uv(tmp_path):
    # 2x1 red|green texture, UV (0.25, 0.5) with KHR_texture_transform offset (0.5, 0):
    # the transformed UV is (0.75, 0.5), the green texel
    g = Gltf()
    tex = g.image(RED_GREEN)
    mat = g.material(pbrMetallicRoughness={"baseColorTexture": {
        "index": tex, "extensions": {"KHR_texture_transform": {"offset": [0.5, 0]}}}},
        extensions={"KHR_materials_unlit": {}})
    g.mesh({"POSITION": g.accessor(QUAD), "TEXCOORD_0": g.accessor([[0.25, 0.5]] * 4)},
           indices=g.accessor(QUAD_FACES, USHORT), material=mat)
    g.doc["extensionsUsed"] = ["KHR_texture_transform", "KHR_materials_unlit"]
    model = load(g.write_gltf(tmp_path / "tt.gltf"))
    mesh = geometries(model)[0]
    np.testing.assert_allclose(mesh.uvs, [[0.75, 0.5]] * 4)
    assert mesh.colors.tolist() == [GREEN] * 4  # the vertex (points) colour
    assert mesh.material.shading == "unlit"
    assert _render_center(model)[20, 20].tolist() == GREEN  # the per-pixel sample


def test_sampler_repeat_wraps_the_coordinate(tmp_path):
    # wrapS REPEAT (the default) at u = 1.25, -0.75, 2.75 reads u = 0.25, 0.25, 0.75
    g = Gltf()
    tex = g.image(RED_GREEN)
    mat = g.material(pbrMetallicRoughness={"baseColorTexture": {"index": tex}})
    g.mesh({"POSITION": g.accessor([[0, 0, 0], [1, 0, 0], [2, 0, 0]]),
            "TEXCOORD_0": g.accessor([[1.25, 0.5], [-0.75, 0.5], [2.75, 0.5]])},
           mode=0, material=mat)
    pc = geometries(load(g.write_gltf(tmp_path / "wrap.gltf")))[0]
    assert isinstance(pc, PointCloud)
    assert pc.colors.tolist() == [RED, RED, GREEN]


@pytest.mark.parametrize("wrap,expected", [
    (10497, [RED, RED, GREEN]),      # REPEAT: 0.25, 0.25, 0.75
    (33071, [GREEN, RED, GREEN]),    # CLAMP_TO_EDGE: 1, 0, 1
    (33648, [GREEN, GREEN, GREEN]),  # MIRRORED_REPEAT: 0.75, 0.75, 0.75
])
@pytest.mark.parametrize("filt", [9728, 9729])
def test_every_wrap_mode_and_filter_on_the_coordinate(tmp_path, wrap, expected, filt):
    g = Gltf()
    tex = g.image(RED_GREEN, wrapS=wrap, wrapT=10497, magFilter=filt, minFilter=filt)
    mat = g.material(pbrMetallicRoughness={"baseColorTexture": {"index": tex}})
    g.mesh({"POSITION": g.accessor([[0, 0, 0], [1, 0, 0], [2, 0, 0]]),
            "TEXCOORD_0": g.accessor([[1.25, 0.5], [-0.75, 0.5], [2.75, 0.5]])},
           mode=0, material=mat)
    pc = geometries(load(g.write_gltf(tmp_path / "wrap.gltf")))[0]
    assert pc.colors.tolist() == expected


def test_sampler_wrap_and_filter_are_per_axis(tmp_path):
    g = Gltf()
    tex = g.image(RED_GREEN, wrapS=33071, wrapT=33648, magFilter=9728, minFilter=9987)
    mat = g.material(pbrMetallicRoughness={"baseColorTexture": {"index": tex}})
    g.mesh({"POSITION": g.accessor(QUAD), "TEXCOORD_0": g.accessor([[0, 0]] * 4)},
           indices=g.accessor(QUAD_FACES, USHORT), material=mat)
    model = load(g.write_gltf(tmp_path / "s.gltf"))
    s = geometries(model)[0].material.texture.sampler
    assert (s.wrap_s, s.wrap_t, s.filter) == ("clamp", "mirror", "nearest")
    # LINEAR_MIPMAP_LINEAR is drawn (trilinear minification): nothing to warn about
    assert s.min_filter == "linear_mipmap_linear"
    assert model.warnings == []


def test_vertex_sampling_follows_the_renderers_rules():
    from engine.io.textures import sample_texture, to_rgba8
    from engine.scene.colorspace import linear_to_srgb
    from engine.scene.material import Sampler, Texture
    from engine.scene.sampling import sample

    rng = np.random.default_rng(3)
    image = rng.integers(0, 256, (5, 7, 4), dtype=np.uint8)
    uv = rng.uniform(-3, 3, (500, 2))
    for wrap in ("repeat", "clamp", "mirror"):
        for filt in ("nearest", "linear"):
            tex = Texture(image, Sampler(wrap, "repeat" if wrap == "clamp" else wrap, filt))
            ours = sample_texture(tex, uv)
            ref = sample(tex, uv, linear=True)
            ref[:, :3] = linear_to_srgb(ref[:, :3])
            np.testing.assert_array_equal(to_rgba8(ours), to_rgba8(ref))


def test_percent_encoded_buffer_uri(tmp_path):
    g = Gltf()
    g.mesh({"POSITION": g.accessor([[0, 0, 0], [1, 0, 0], [0, 1, 0]])})
    path = g.write_gltf(tmp_path / "m.gltf", bin_name="mesh data.bin")
    assert json.loads(path.read_text())["buffers"][0]["uri"] == "mesh%20data.bin"
    np.testing.assert_allclose(world_points(load(path)), [[0, 0, 0], [1, 0, 0], [0, 1, 0]])


def test_mesh_quantization_normalized_short_positions(tmp_path):
    g = Gltf()
    pos = g.accessor([[32767, 0, 0], [0, 32767, 0], [0, 0, 0]], SHORT, normalized=True)
    g.mesh({"POSITION": pos}, scale=[2, 2, 2])
    g.doc["extensionsUsed"] = g.doc["extensionsRequired"] = ["KHR_mesh_quantization"]
    pts = world_points(load(g.write_gltf(tmp_path / "q.gltf")))
    np.testing.assert_allclose(pts, [[2, 0, 0], [0, 2, 0], [0, 0, 0]], atol=1e-6)


@pytest.mark.parametrize("kind", ["gltf", "glb"])
def test_deeply_nested_json_is_one_clean_error(tmp_path, kind):
    if kind == "gltf":
        f = tmp_path / "deep.gltf"
        f.write_bytes(b"[" * 100_000)
    else:
        f = tmp_path / "deep.glb"
        f.write_bytes(_raw_glb(b"[" * 100_000))
    _error(f, "nested too deeply to read", "deeper than 500 levels at line 1, column 501")


def _raw_glb(json_bytes: bytes) -> bytes:
    json_bytes += b" " * (-len(json_bytes) % 4)
    chunk = struct.pack("<I4s", len(json_bytes), b"JSON") + json_bytes
    return struct.pack("<4sII", b"glTF", 2, 12 + len(chunk)) + chunk


@pytest.mark.parametrize("field,value,words", [
    ("count", 9223372036854775808, [("accessors[0]: byteOffset 0 + 9,223,372,036,854,775,808 "
                                    "elements x 12 bytes needs"), "bufferViews[0] has 36"]),
    ("byteOffset", 9223372036854775808, [("accessors[0]: byteOffset "
                                         "9,223,372,036,854,775,808 + 3 elements")]),
    ("count", 10**400, ["accessors[0]: byteOffset 0 + ", "bufferViews[0] has 36"]),
    ("componentType", 5124, ["accessors[0].componentType: 5124 is not a glTF component"]),
    ("type", "VEC5", ["accessors[0].type: must be one of SCALAR"]),
    ("count", 0, ["accessors[0].count: must be >= 1, got 0"]),
    ("count", 2.5, ["accessors[0].count: must be an integer, got 2.5"]),
])
def test_huge_or_wrong_accessor_fields_name_their_json_path(tmp_path, field, value, words):
    g = Gltf()
    g.mesh({"POSITION": g.accessor([[0, 0, 0], [1, 0, 0], [0, 1, 0]])})
    doc = g.document("data:application/octet-stream;base64,"
                     + __import__("base64").b64encode(bytes(g.bin)).decode())
    doc["accessors"][0][field] = value
    f = tmp_path / "h.gltf"
    f.write_text(json.dumps(doc))
    _error(f, *words)


def test_huge_buffer_view_offset(tmp_path):
    g = Gltf()
    g.mesh({"POSITION": g.accessor([[0, 0, 0], [1, 0, 0], [0, 1, 0]])})
    f = g.write_glb(tmp_path / "v.glb")
    doc = g.document()
    doc["bufferViews"][0]["byteOffset"] = 2**70
    f.write_bytes(glb(doc, bytes(g.bin)))
    _error(f, "bufferViews[0]: byteOffset 1,180,591,620,717,411,303,424 + byteLength 36 runs "
              "past the end of buffers[0] (36 bytes)")


@pytest.mark.parametrize("mutate,words", [
    (lambda d: d["meshes"][0]["primitives"][0].update(indices=9),
     ["meshes[0].primitives[0].indices: refers to accessors[9] but the file has 2 accessors"]),
    (lambda d: d["accessors"][1].pop("componentType"),
     ["accessors[1]: 'componentType' is required"]),
    (lambda d: d["nodes"][0].update(rotation=[0, 0, 0]),
     ["nodes[0].rotation: must be an array of 4 numbers, got an array of 3"]),
    (lambda d: (d.update(extensionsUsed=["KHR_lights_punctual"], extensions={
        "KHR_lights_punctual": {"lights": [{"type": "point", "color": [1, 0]}]}}),
        d["nodes"][0].update(extensions={"KHR_lights_punctual": {"light": 0}})),
     ["lights[0].color: must be an array of 3 numbers, got an array of 2"]),
    (lambda d: d["nodes"][0].update(children=[0]), ["nodes[0].children[0]: a node cannot be"]),
    (lambda d: d.update(nodes=[{"children": [1]}, {"children": [0]}]),
     ["the node hierarchy has a cycle"]),
    (lambda d: d["meshes"][0]["primitives"][0].update(mode=7),
     ["meshes[0].primitives[0].mode: must be <= 6, got 7"]),
    (lambda d: d["buffers"][0].update(byteLength=1000),
     ["buffers[0]: byteLength is 1,000 but the GLB binary chunk holds only 44 bytes"]),
    (lambda d: d.update(extensionsRequired=["KHR_draco_mesh_compression"]),
     [("extensionsRequired: the file needs extension KHR_draco_mesh_compression "
      "(Draco-compressed geometry")]),
    (lambda d: d.update(extensionsRequired=["EXT_unknown_thing"]),
     ["the file needs extension EXT_unknown_thing, which this engine does not implement"]),
    (lambda d: d["accessors"][0].update(byteOffset=2),
     [("accessors[0]: byteOffset 2 + 3 elements x 2 bytes needs 8 bytes, but bufferViews[1] "
      "has 6")]),
])
def test_malformed_documents_say_what_and_where(tmp_path, mutate, words):
    g = Gltf()
    g.mesh({"POSITION": g.accessor([[0, 0, 0], [1, 0, 0], [0, 1, 0]])},
           indices=g.accessor([0, 1, 2], USHORT))
    g.doc["accessors"] = g.doc["accessors"][::-1]  # indices first: accessors[0]
    g.doc["meshes"][0]["primitives"][0] = {"attributes": {"POSITION": 1}, "indices": 0}
    doc = g.document()
    mutate(doc)
    f = tmp_path / "bad.glb"
    f.write_bytes(glb(doc, bytes(g.bin)))
    msg = _error(f, *words)
    assert "AssertionError" not in msg


# --------------------------------------------------------------------- accessors
def test_every_component_type_normalized_and_not(tmp_path):
    g = Gltf()
    cases = [(BYTE, [[-128, 0, 127]], [[-1.0, 0.0, 1.0]]),
             (UBYTE, [[0, 51, 255]], [[0.0, 0.2, 1.0]]),
             (SHORT, [[-32768, -32767, 32767]], [[-1.0, -1.0, 1.0]]),
             (USHORT, [[0, 13107, 65535]], [[0.0, 0.2, 1.0]])]
    for comp, values, _ in cases:
        g.mesh({"POSITION": g.accessor(values, comp, normalized=True)}, mode=0)
    for comp, values, _ in cases:
        g.mesh({"POSITION": g.accessor(values, comp)}, mode=0)
    model = load(g.write_gltf(tmp_path / "c.gltf"))
    got = [g.positions.astype(np.float64) + g.origin for g in geometries(model)]
    for k, (_, values, normalized) in enumerate(cases):
        np.testing.assert_allclose(got[k], normalized, atol=1e-7)
        np.testing.assert_allclose(got[k + 4], values)


def test_interleaved_strided_attributes(tmp_path):
    # POSITION (12 B) and NORMAL (12 B) interleaved in one view, stride 28 (4 B padding)
    g = Gltf()
    pos = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32)
    nrm = np.array([[0, 0, 1]] * 3, np.float32)
    rows = b"".join(p.tobytes() + n.tobytes() + b"\xff" * 4 for p, n in zip(pos, nrm))
    view = g.view(rows, stride=28)
    g.doc["accessors"] += [
        {"bufferView": view, "componentType": FLOAT, "count": 3, "type": "VEC3",
         "min": [0, 0, 0], "max": [1, 1, 0]},
        {"bufferView": view, "byteOffset": 12, "componentType": FLOAT, "count": 3,
         "type": "VEC3"}]
    g.mesh({"POSITION": 0, "NORMAL": 1})
    mesh = geometries(load(g.write_gltf(tmp_path / "i.gltf")))[0]
    np.testing.assert_allclose(mesh.positions + mesh.origin, pos)
    np.testing.assert_allclose(mesh.normals, nrm)


def test_matrix_accessors_skip_column_padding(tmp_path):
    # MAT3 of signed bytes: each 3-byte column padded to 4 bytes (spec "Data Alignment");
    # used as an animation-free extra attribute read through the accessor reader
    from engine.io.gltf.accessors import AccessorReader
    from engine.io.gltf.document import read_document

    g = Gltf()
    cols = bytes([1, 2, 3, 0, 4, 5, 6, 0, 7, 8, 9, 0])
    view = g.view(cols * 2)
    g.doc["accessors"].append({"bufferView": view, "componentType": BYTE, "count": 2,
                               "type": "MAT3"})
    f = g.write_glb(tmp_path / "m.glb")
    reader = AccessorReader(read_document(f, f.read_bytes()))
    np.testing.assert_array_equal(reader.read(0).data, [list(range(1, 10))] * 2)
    # MAT2 of unsigned shorts needs no padding: 2 x 2 x 2 bytes
    g.doc["accessors"].append({"bufferView": g.view(np.arange(8, dtype="<u2").tobytes()),
                               "componentType": USHORT, "count": 2, "type": "MAT2"})
    f = g.write_glb(tmp_path / "m2.glb")
    reader = AccessorReader(read_document(f, f.read_bytes()))
    np.testing.assert_array_equal(reader.read(1).data, [[0, 1, 2, 3], [4, 5, 6, 7]])


def test_sparse_accessor_over_data_and_over_zeros(tmp_path):
    g = Gltf()
    base = g.accessor([[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0]])
    idx = g.view(np.array([1, 3], "<u1").tobytes())
    val = g.view(np.array([[1, 5, 0], [3, 7, 0]], "<f4").tobytes())
    sparse = {"count": 2, "indices": {"bufferView": idx, "componentType": UBYTE},
              "values": {"bufferView": val}}
    g.doc["accessors"][base]["sparse"] = sparse
    g.mesh({"POSITION": base}, mode=0)
    # no bufferView: zeros with the same substitution
    g.doc["accessors"].append({"componentType": FLOAT, "count": 4, "type": "VEC3",
                               "sparse": sparse})
    g.mesh({"POSITION": len(g.doc["accessors"]) - 1}, mode=0)
    a, b = geometries(load(g.write_gltf(tmp_path / "sp.gltf")))
    np.testing.assert_allclose(a.positions + a.origin, [[0, 0, 0], [1, 5, 0], [2, 0, 0],
                                                        [3, 7, 0]])
    np.testing.assert_allclose(b.positions + b.origin, [[0, 0, 0], [1, 5, 0], [0, 0, 0],
                                                        [3, 7, 0]])
    # sparse indices must increase strictly
    g.bin[g.doc["bufferViews"][idx]["byteOffset"]] = 3
    _error(g.write_gltf(tmp_path / "sp2.gltf"), "accessors[0].sparse.indices: indices must "
           "increase strictly: index 1 is 3 after 3")


def test_accessor_without_buffer_view_is_bounded(tmp_path):
    g = Gltf()
    g.doc["accessors"].append({"componentType": FLOAT, "count": 10**12, "type": "VEC3"})
    g.mesh({"POSITION": 0}, mode=0)
    g.doc["buffers"] = []
    f = tmp_path / "z.gltf"
    f.write_text(json.dumps(g.doc))
    _error(f, "accessors[0].count: 1,000,000,000,000 elements without a bufferView would "
              "decode to 24,000,000,000,000 bytes")


def test_uint_indices_and_texcoord_sets(tmp_path):
    g = Gltf()
    tex = g.image(RED_GREEN, magFilter=9728)
    mat = g.material(pbrMetallicRoughness={"baseColorTexture": {"index": tex,
                                                                "texCoord": 1}})
    g.mesh({"POSITION": g.accessor([[0, 0, 0], [1, 0, 0], [0, 1, 0]]),
            "TEXCOORD_0": g.accessor([[0.25, 0.5]] * 3),
            "TEXCOORD_1": g.accessor([[191, 128]] * 3, UBYTE, normalized=True)},
           indices=g.accessor([2, 1, 0], UINT), material=mat)
    mesh = geometries(load(g.write_gltf(tmp_path / "t.gltf")))[0]
    assert mesh.faces.tolist() == [[2, 1, 0]]
    # both sets are carried where a texture reads them: here only set 1 (Mesh.uvs1)
    np.testing.assert_allclose(mesh.uvs1, [[191 / 255, 128 / 255]] * 3, atol=1e-6)
    assert mesh.uvs is None and mesh.material.tex_coords == {"base_color": 1}
    assert mesh.colors.tolist() == [GREEN] * 3  # texCoord 1 -> u = 0.749: green


def test_texture_transform_rotation_scale_and_texcoord_override():
    from engine.io.gltf.materials import texture_transform

    # the extension's matrix T(offset) R(rotation) S(scale) on (u, v, 1)
    m = texture_transform((0.5, 0.0), math.pi / 2, (2.0, 1.0))
    np.testing.assert_allclose(m @ [0.25, 0.5, 1.0], [0.5 - 0.5, 0.5, 1.0], atol=1e-12)
    np.testing.assert_allclose(texture_transform(scale=(1.5, 1.5)) @ [1, 1, 1], [1.5, 1.5, 1])


def test_texture_transform_texcoord_override(tmp_path):
    g = Gltf()
    tex = g.image(RED_GREEN, magFilter=9728)
    mat = g.material(pbrMetallicRoughness={"baseColorTexture": {
        "index": tex, "texCoord": 0,
        "extensions": {"KHR_texture_transform": {"texCoord": 1, "scale": [0.5, 1]}}}})
    g.mesh({"POSITION": g.accessor([[0, 0, 0], [1, 0, 0], [0, 1, 0]]),
            "TEXCOORD_0": g.accessor([[1.5, 0.5]] * 3),
            "TEXCOORD_1": g.accessor([[1.8, 0.5]] * 3)}, material=mat)
    mesh = geometries(load(g.write_gltf(tmp_path / "o.gltf")))[0]
    # the extension's texCoord 1 wins: set 1 carried (Mesh.uvs1) and transformed
    np.testing.assert_allclose(mesh.uvs1, [[0.9, 0.5]] * 3, atol=1e-6)  # 1.8 * 0.5
    assert mesh.material.tex_coords == {"base_color": 1}
    assert mesh.colors.tolist() == [GREEN] * 3


# --------------------------------------------------------------- primitive modes
HEX = np.array([[0, 0, 0], [0.866, -0.5, 0], [0.866, 0.5, 0], [0, 1, 0], [-0.866, 0.5, 0],
                [-0.866, -0.5, 0], [0, -1, 0]], np.float32)


@pytest.mark.parametrize("mode,indices,kind,expected", [
    (0, [0, 1, 2], PointCloud, HEX[[0, 1, 2]]),
    (1, [0, 1, 0, 2], Lines, [[0, 1], [0, 2]]),
    (2, [0, 1, 2, 3], Lines, [[0, 1], [1, 2], [2, 3], [3, 0]]),
    (3, [0, 1, 2, 3], Lines, [[0, 1], [1, 2], [2, 3]]),
    (4, [0, 1, 2, 0, 2, 3], Mesh, [[0, 1, 2], [0, 2, 3]]),
    (5, [2, 3, 1, 4, 6, 5], Mesh, [[2, 3, 1], [3, 4, 1], [1, 4, 6], [4, 5, 6]]),
    (6, [0, 1, 2, 3], Mesh, [[1, 2, 0], [2, 3, 0]]),
    (5, None, Mesh, [[0, 1, 2], [1, 3, 2], [2, 3, 4], [3, 5, 4], [4, 5, 6]]),
    (6, None, Mesh, [[1, 2, 0], [2, 3, 0], [3, 4, 0], [4, 5, 0], [5, 6, 0]]),
    (2, None, Lines, [[0, 1], [1, 2], [2, 3], [3, 4], [4, 5], [5, 6], [6, 0]]),
])
def test_primitive_modes_follow_the_spec_topology(tmp_path, mode, indices, kind, expected):
    g = Gltf()
    idx = None if indices is None else g.accessor(indices, UBYTE)
    g.mesh({"POSITION": g.accessor(HEX)}, indices=idx, mode=mode)
    geom = geometries(load(g.write_gltf(tmp_path / "m.gltf")))[0]
    assert type(geom) is kind
    if kind is PointCloud:
        np.testing.assert_allclose(geom.positions + geom.origin, expected, atol=1e-6)
    elif kind is Lines:
        assert geom.segments.tolist() == expected
    else:
        assert geom.faces.tolist() == expected


def test_lines_and_points_draw_as_lines_and_points(tmp_path):
    g = Gltf()
    g.mesh({"POSITION": g.accessor([[-1, 0, 0], [1, 0, 0]])}, mode=1)
    g.mesh({"POSITION": g.accessor([[0, 1, 0]])}, mode=0)
    color = _render_center(load(g.write_gltf(tmp_path / "l.gltf")))
    drawn = (color[..., :3] > 0).any(axis=-1)
    assert drawn[20, 10:31].all()          # the segment from x = -1 to 1 at y = 0
    assert drawn[10, 20] and not drawn[15, 20]  # the point at y = 1, nothing between


def test_mesh_with_several_primitives_and_materials(tmp_path):
    g = Gltf()
    red = g.material(pbrMetallicRoughness={"baseColorFactor": [1, 0, 0, 1]})
    blue = g.material(pbrMetallicRoughness={"baseColorFactor": [0, 0, 1, 1]})
    pos = g.accessor(QUAD)
    g.doc["meshes"] = [{"name": "two", "primitives": [
        {"attributes": {"POSITION": pos}, "indices": g.accessor([0, 1, 2], USHORT),
         "material": red},
        {"attributes": {"POSITION": pos}, "indices": g.accessor([0, 2, 3], USHORT),
         "material": blue}]}]
    g.node(mesh=0)
    model = load(g.write_gltf(tmp_path / "p.gltf"))
    node = model.children[0]
    assert [c.name for c in node.children] == ["two/0", "two/1"]
    assert [c.geometry.colors[0].tolist() for c in node.children] == [RED, [0, 0, 255, 255]]


# ----------------------------------------------------------------------- nodes
def test_node_matrix_and_trs_hierarchy(tmp_path):
    g = Gltf()
    child = g.mesh({"POSITION": g.accessor([[1, 0, 0], [0, 1, 0], [0, 0, 0]])}, root=False,
                   translation=[0, 0, 5], rotation=[0, 0, math.sin(math.pi / 4),
                                                    math.cos(math.pi / 4)])
    # column-major matrix: scale 2 and translation (10, 0, 0)
    g.node(children=[child], matrix=[2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0, 10, 0, 0, 1])
    pts = world_points(load(g.write_gltf(tmp_path / "n.gltf")))
    # child: rotate 90 deg about Z, move +5 z; parent: scale 2, move +10 x
    np.testing.assert_allclose(pts, [[10, 2, 10], [8, 0, 10], [10, 0, 10]], atol=1e-9)


def test_sheared_node_matrix_is_refused(tmp_path):
    g = Gltf()
    g.mesh({"POSITION": g.accessor([[1, 0, 0], [0, 1, 0], [0, 0, 0]])},
           matrix=[1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1])
    _error(g.write_gltf(tmp_path / "s.gltf"), "nodes[0].matrix: has shear")


def test_cameras_are_imported(tmp_path):
    g = Gltf()
    g.mesh({"POSITION": g.accessor([[1, 0, 0], [0, 1, 0], [0, 0, 0]])})
    g.doc["cameras"] = [{"type": "perspective", "perspective": {"yfov": 0.5, "znear": 0.1}},
                        {"type": "orthographic", "orthographic": {"xmag": 3, "ymag": 2,
                                                                  "znear": 0, "zfar": 50}}]
    g.node(camera=1, translation=[0, 0, 4])
    model = load(g.write_gltf(tmp_path / "c.gltf"))
    persp, ortho = model.cameras
    assert isinstance(persp, PerspectiveCamera) and isinstance(ortho, OrthographicCamera)
    assert persp.fov_y == pytest.approx(math.degrees(0.5))
    assert persp.near == 0.1 and np.isfinite(persp.far) and persp.far > 2  # no zfar
    assert ortho.height == 4.0 and ortho.far == 50.0
    np.testing.assert_allclose(ortho.world_position, [0, 0, 4])


def test_morph_targets_at_default_weights_and_skins_in_bind_pose(tmp_path, caplog):
    # the drawn (posed) vertices: engine.scene.deform.posed_vertices, what the vertex
    # stage computes
    g = Gltf()
    base = g.accessor([[0, 0, 0], [1, 0, 0], [0, 1, 0]])
    delta = g.accessor([[0, 0, 1], [0, 0, 1], [0, 0, 1]])
    g.doc["meshes"] = [{"weights": [0.5], "primitives": [
        {"attributes": {"POSITION": base}, "targets": [{"POSITION": delta}]}]}]
    g.node(mesh=0)
    g.node(mesh=0, weights=[2.0], translation=[5, 0, 0])
    joint = g.node(root=False)
    g.doc["skins"] = [{"joints": [joint]}]
    g.node(mesh=0, skin=0, translation=[100, 0, 0])
    with caplog.at_level(logging.WARNING, logger="engine"):
        model = load(g.write_gltf(tmp_path / "m.gltf"))
    a, b, c = (n for n in model.traverse() if n.geometry is not None)
    np.testing.assert_allclose(posed_vertices(a)[0][:, 2], [0.5] * 3)
    np.testing.assert_allclose(posed_vertices(b)[0][:, 2], [2.0] * 3)
    # the skinned node's own transform is ignored (spec): bind pose at the model origin
    np.testing.assert_allclose(posed_vertices(c)[0][:, 0], [0, 1, 0])
    # skins and morph targets are drawn: the one note is this mesh's missing JOINTS_0
    lines = [r.message for r in caplog.records]
    assert len(lines) == 1 and "skinned mesh primitive without JOINTS_0" in lines[0] \
        and "bind pose" not in lines[0] and "morph target animation" not in lines[0]


# ------------------------------------------------------------------- materials
def test_pbr_mapping_and_material_fields(tmp_path):
    g = Gltf()
    tex = g.image(png_bytes([[[10, 20, 30, 255]]]))
    m = g.material(pbrMetallicRoughness={"baseColorFactor": [0.5, 0.25, 1, 0.5],
                                         "metallicFactor": 0, "roughnessFactor": 0.5},
                   alphaMode="MASK", alphaCutoff=0.3, doubleSided=True,
                   emissiveFactor=[1, 0.5, 0], normalTexture={"index": tex},
                   occlusionTexture={"index": tex},
                   extensions={"KHR_materials_emissive_strength": {"emissiveStrength": 2}})
    b = g.material(alphaMode="BLEND")
    g.mesh({"POSITION": g.accessor([[1, 0, 0], [0, 1, 0], [0, 0, 0]]),
            "TEXCOORD_0": g.accessor([[0, 0]] * 3)}, material=m)
    g.mesh({"POSITION": g.accessor([[1, 0, 0], [0, 1, 0], [0, 0, 0]])}, material=b)
    model = load(g.write_gltf(tmp_path / "p.gltf"))
    mesh, blended = geometries(model)
    mat = mesh.material
    assert (mat.shading, mat.metallic, mat.roughness) == ("pbr", 0.0, 0.5)
    assert mat.alpha_cutoff == 0.3 and mat.double_sided and not mat.blend
    assert mat.emissive == (2.0, 1.0, 0.0)
    assert set(mat.maps) == {"normal", "occlusion"} and mat.occlusion_strength == 1.0
    assert mat.flat_normals  # no NORMAL attribute: the spec's flat normals
    # factor (0.5, 0.25, 1) linear -> sRGB (0.7354, 0.5370, 1), alpha 0.5
    np.testing.assert_allclose(mesh.colors_float[0], [0.7354, 0.5370, 1.0, 0.5], atol=1 / 255)
    assert blended.material.blend
    # the spec's default material: metallic 1, roughness 1
    assert (blended.material.metallic, blended.material.roughness) == (1.0, 1.0)
    # the normal map is drawn (engine.render.normal_map) and BLEND is blended (maps on a
    # missing UV set: test_a_texture_on_a_missing_uv_set_is_left_out_as_noted)
    assert model.warnings == []


def test_a_texture_on_a_missing_uv_set_is_left_out_as_noted(tmp_path):
    # baseColorTexture (red) on texCoord 1 of a primitive with TEXCOORD_0 only: the quad
    # is drawn with the factor alone (green), as the "left out" note says, not red
    g = Gltf()
    tex = g.image(png_bytes([[RED]]))
    mat = g.material(pbrMetallicRoughness={"baseColorFactor": [0, 1, 0, 1],
                                           "baseColorTexture": {"index": tex, "texCoord": 1}},
                     extensions={"KHR_materials_unlit": {}})
    g.mesh({"POSITION": g.accessor(QUAD), "TEXCOORD_0": g.accessor([[0.5, 0.5]] * 4)},
           indices=g.accessor(QUAD_FACES, USHORT), material=mat)
    g.doc["extensionsUsed"] = ["KHR_materials_unlit"]
    model = load(g.write_gltf(tmp_path / "t1.gltf"))
    mesh = geometries(model)[0]
    assert mesh.material.texture is None and mesh.uvs is None and mesh.uvs1 is None
    assert _render_center(model)[20, 20].tolist() == GREEN
    note = "left out: meshes[0].primitives[0]: baseColorTexture without TEXCOORD_1"
    assert model.warnings == [f"{tmp_path / 't1.gltf'}: {note}"]
    # every other role alike: each map on texCoord 1 is left out and named
    g = Gltf()
    tex = g.image(png_bytes([[RED]]))
    on1 = {"index": tex, "texCoord": 1}
    mat = g.material(pbrMetallicRoughness={"metallicRoughnessTexture": on1},
                     normalTexture=on1, occlusionTexture=on1, emissiveTexture=on1,
                     emissiveFactor=[1, 1, 1])
    g.mesh({"POSITION": g.accessor(QUAD), "NORMAL": g.accessor([[0, 0, 1]] * 4),
            "TEXCOORD_0": g.accessor([[0.5, 0.5]] * 4)},
           indices=g.accessor(QUAD_FACES, USHORT), material=mat)
    model = load(g.write_gltf(tmp_path / "maps.gltf"))
    assert geometries(model)[0].material.maps == {}
    names = ("metallicRoughnessTexture", "normalTexture", "occlusionTexture",
             "emissiveTexture")
    assert model.warnings == [f"{tmp_path / 'maps.gltf'}: left out: " + "; ".join(
        f"meshes[0].primitives[0]: {n} without TEXCOORD_1" for n in names)]


def test_blend_material_renders_blended(tmp_path):
    # an unlit red quad, baseColorFactor alpha 0.5, alphaMode BLEND, in front of an
    # opaque unlit blue one: "over" in linear light, linear (0.5, 0, 0.5) = sRGB
    # (188, 0, 188); the same file with OPAQUE gives plain red (glTF 2.0 3.9.4)
    quad = [[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]]
    faces = np.array([0, 1, 2, 0, 2, 3], np.uint16)
    unlit = {"KHR_materials_unlit": {}}
    want = round((1.055 * 0.5 ** (1 / 2.4) - 0.055) * 255)
    assert want == 188
    for mode, rgba in (("BLEND", [want, 0, want, 255]), ("OPAQUE", [255, 0, 0, 255])):
        g = Gltf()
        blue = g.material(pbrMetallicRoughness={"baseColorFactor": [0, 0, 1, 1]},
                          extensions=unlit)
        red = g.material(pbrMetallicRoughness={"baseColorFactor": [1, 0, 0, 0.5]},
                         alphaMode=mode, extensions=unlit)
        g.mesh({"POSITION": g.accessor(np.array(quad) * [2, 2, 1] + [0, 0, -1])},
               indices=g.accessor(faces, USHORT, "SCALAR"), material=blue)
        g.mesh({"POSITION": g.accessor(quad)}, indices=g.accessor(faces, USHORT, "SCALAR"),
               material=red)
        model = load(g.write_gltf(tmp_path / f"{mode}.gltf"))
        assert model.warnings == []
        assert geometries(model)[1].material.blend == (mode == "BLEND")
        scene = Scene(background=(0, 0, 0))
        scene.add(model)
        cam = scene.add(OrthographicCamera(height=4.0, position=(0, 0, 5), near=0.1, far=10))
        img = Renderer(scene, cam, (40, 40), backend="numpy").render().color
        assert np.abs(img[20, 20].astype(int) - rgba).max() <= 1, mode
        assert img[20, 2].tolist() == [0, 0, 255, 255]  # blue alone outside the red quad


def test_vertex_colors_are_linear_and_multiply_the_factor(tmp_path):
    g = Gltf()
    mat = g.material(pbrMetallicRoughness={"baseColorFactor": [0.5, 1, 1, 1]})
    g.mesh({"POSITION": g.accessor([[1, 0, 0], [0, 1, 0], [0, 0, 0]]),
            "COLOR_0": g.accessor([[65535, 0, 32768, 65535]] * 3, USHORT, normalized=True)},
           material=mat)
    mesh = geometries(load(g.write_gltf(tmp_path / "v.gltf")))[0]
    # linear (0.5 * 1, 0, 1 * 0.50001) -> sRGB (0.7354, 0, 0.7354)
    np.testing.assert_allclose(mesh.colors_float[0], [0.7354, 0, 0.7354, 1], atol=1 / 255)
    assert mesh.material.vertex_colors and mesh.material.color == (1.0, 1.0, 1.0, 1.0)


# ------------------------------------------------------------------------- URIs
@pytest.mark.parametrize("uri,words", [
    ("../outside.bin", ["buffers[0].uri: '../outside.bin' is outside the model's folder"]),
    ("/etc/passwd", [("'/etc/passwd' is not a relative reference to a file (absolute paths "
                     "are refused)")]),
    ("C:\\\\data\\\\x.bin", [("is not a relative reference to a file (absolute paths are "
                            "refused)")]),
    ("http://example.com/x.bin", ["buffers[0].uri: http: URIs are not fetched"]),
    ("data:application/octet-stream;base64,@@@", ["data: URI is not valid base64"]),
    ("sub%2Fnope.bin", ["the file 'sub/nope.bin' it names is missing"]),
])
def test_uris_outside_the_folder_or_broken_are_refused(tmp_path, uri, words):
    (tmp_path / "outside.bin").write_bytes(b"\0" * 36)
    inner = tmp_path / "in"
    inner.mkdir()
    g = Gltf()
    g.mesh({"POSITION": g.accessor([[0, 0, 0], [1, 0, 0], [0, 1, 0]])})
    f = inner / "u.gltf"
    f.write_text(json.dumps(g.document(uri)))
    _error(f, *words)


def test_relative_uri_in_a_subfolder_and_an_image_file(tmp_path):
    g = Gltf()
    mat = g.material(pbrMetallicRoughness={"baseColorTexture": {"index": 0}})
    g.doc["images"] = [{"uri": "tex/red%20green.png"}]
    g.doc["textures"] = [{"source": 0}]
    g.mesh({"POSITION": g.accessor([[0, 0, 0], [1, 0, 0], [0, 1, 0]]),
            "TEXCOORD_0": g.accessor([[0.75, 0.5]] * 3)}, material=mat)
    (tmp_path / "tex").mkdir()
    (tmp_path / "tex" / "red green.png").write_bytes(RED_GREEN)
    (tmp_path / "bin").mkdir()
    f = g.write_gltf(tmp_path / "r.gltf", bin_name="bin/data.bin")
    assert geometries(load(f))[0].colors.tolist() == [GREEN] * 3


def test_missing_image_is_a_warning_and_the_factor_is_drawn(tmp_path, caplog):
    g = Gltf()
    mat = g.material(pbrMetallicRoughness={"baseColorTexture": {"index": 0},
                                           "baseColorFactor": [1, 0, 0, 1]})
    g.doc["images"] = [{"uri": "data:image/png;base64,AAAA"}]
    g.doc["textures"] = [{"source": 0}]
    g.mesh({"POSITION": g.accessor([[0, 0, 0], [1, 0, 0], [0, 1, 0]]),
            "TEXCOORD_0": g.accessor([[0.75, 0.5]] * 3)}, material=mat)
    with caplog.at_level(logging.WARNING, logger="engine"):
        mesh = geometries(load(g.write_gltf(tmp_path / "x.gltf")))[0]
    assert mesh.colors.tolist() == [RED] * 3 and mesh.material.texture is None
    assert [r.message for r in caplog.records] == [
        (f"{tmp_path / 'x.gltf'}: left out: images[0] (data:image/png;base64,AAAA: not an image "
        "format Pillow can read)")]


# ------------------------------------------------------------------- animation
def _animated(tmp_path, interpolation, times, values, path="translation", name="a.gltf"):
    g = Gltf()
    g.mesh({"POSITION": g.accessor([[0, 0, 0], [1, 0, 0], [0, 1, 0]])})
    g.doc["animations"] = [{"samplers": [{"input": g.accessor(np.array(times)[:, None]),
                                          "output": g.accessor(values),
                                          "interpolation": interpolation}],
                            "channels": [{"sampler": 0, "target": {"node": 0, "path": path}}]}]
    model = load(g.write_gltf(tmp_path / name))
    return model, model.clips[0], model.children[0]


def test_step_linear_and_cubicspline_tracks(tmp_path):
    _model, clip, node = _animated(tmp_path, "STEP", [0, 1, 2], [[0, 0, 0], [1, 0, 0],
                                                                [3, 0, 0]])
    for t, x in ((-1, 0), (0.99, 0), (1.0, 1), (1.5, 1), (2, 3), (9, 3)):
        clip.apply(t)
        assert node.position[0] == x
    _, clip, node = _animated(tmp_path, "LINEAR", [0, 1, 2], [[0, 0, 0], [1, 0, 0],
                                                              [3, 0, 0]], name="b.gltf")
    for t, x in ((0.5, 0.5), (1.25, 1.5), (2.5, 3)):
        clip.apply(t)
        assert node.position[0] == pytest.approx(x)
    # CUBICSPLINE: (in-tangent, value, out-tangent) per key; keys 0 and 2 s, values 0 and
    # 1, out-tangent of key 0 = 1, in-tangent of key 1 = 0: at u = 0.5, t_d = 2:
    # 0.5 * 0 + 2 * (0.125 - 0.5 + 0.5) * 1 + 0.5 * 1 + 2 * (0.125 - 0.25) * 0 = 0.75
    vals = [[0, 0, 0], [0, 0, 0], [1, 0, 0], [0, 0, 0], [1, 0, 0], [0, 0, 0]]
    _, clip, node = _animated(tmp_path, "CUBICSPLINE", [0, 2], vals, name="c.gltf")
    clip.apply(1.0)
    assert node.position[0] == pytest.approx(0.75)
    clip.apply(2.0)
    assert node.position[0] == pytest.approx(1.0)


def test_rotation_tracks_slerp_and_cubic_rotations_are_normalised(tmp_path):
    q90 = [0, 0, math.sin(math.pi / 4), math.cos(math.pi / 4)]
    _, clip, node = _animated(tmp_path, "LINEAR", [0, 1], [[0, 0, 0, 1], q90], "rotation")
    clip.apply(0.5)
    np.testing.assert_allclose(node.rotation, [0, 0, math.sin(math.pi / 8),
                                               math.cos(math.pi / 8)], atol=1e-7)
    vals = [[0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 0], [0, 0, 0, 0], q90, [0, 0, 0, 0]]
    _, clip, node = _animated(tmp_path, "CUBICSPLINE", [0, 1], vals, "rotation", "r.gltf")
    clip.apply(0.5)
    assert np.linalg.norm(node.rotation) == pytest.approx(1.0)
    # Hermite with zero tangents at u = 0.5 is the plain average, normalised
    avg = (np.array([0, 0, 0, 1]) + np.array(q90)) / 2
    np.testing.assert_allclose(node.rotation, avg / np.linalg.norm(avg), atol=1e-7)


def test_animation_errors_name_the_sampler(tmp_path):
    with pytest.raises(LoadError, match=r"animations\[0\]\.samplers\[0\] \(used by "
                                        r"animations\[0\]\.channels\[0\]\.target\): times "
                                        r"must increase strictly: key 1 at 0\.0 s"):
        _animated(tmp_path, "LINEAR", [0, 0], [[0, 0, 0], [1, 0, 0]])
    with pytest.raises(LoadError, match=r"samplers\[0\]\.output: CUBICSPLINE needs 3 x 2 = 6"):
        _animated(tmp_path, "CUBICSPLINE", [0, 1], [[0, 0, 0], [1, 0, 0]], name="x.gltf")


# ---------------------------------------------------------- Khronos sample models
KHRONOS = "gltf-khronos"


def _khronos(ref_assets, name):
    return load(ref_assets / KHRONOS / name / f"{name}.gltf")


def test_khronos_triangles(ref_assets):
    # Triangle and TriangleWithoutIndices: one triangle (0,0,0) (1,0,0) (0,1,0)
    for name in ("Triangle", "TriangleWithoutIndices"):
        model = _khronos(ref_assets, name)
        np.testing.assert_allclose(world_points(model), [[0, 0, 0], [1, 0, 0], [0, 1, 0]])
        mesh = geometries(model)[0]
        assert mesh.faces.tolist() == [[0, 1, 2]]
        scene = Scene()
        scene.add(model)
        cam = scene.add(OrthographicCamera(height=2, position=(0.5, 0.5, 2)))
        img = Renderer(scene, cam, (40, 40), backend="numpy").render().color
        # pixel (row 25, col 15) is (0.275, 0.225): inside; (10, 30) is (1.025, 0.975): out
        assert img[25, 15, :3].sum() > 0 and img[10, 30, :3].sum() == 0


def test_khronos_box_is_red_behind_its_parent_matrix(ref_assets):
    model = _khronos(ref_assets, "Box")
    mesh = geometries(model)[0]
    assert (mesh.vertex_count, mesh.face_count) == (24, 12)
    np.testing.assert_allclose(mesh.colors_float[:, :3], [[0.9063, 0, 0]] * 24, atol=1 / 255)
    scene = Scene()
    scene.add(model)
    cam = scene.add(PerspectiveCamera(fov_y=40, position=(0, 0, 3)))
    px = Renderer(scene, cam, (40, 40), backend="numpy").render().color[20, 20]
    # red; no metallicFactor means metallic 1, roughness 1: a red metal (F0 = base =
    # 0.8 linear, no diffuse). Facing the headlight (N = V = L = H, E = 0.7) Appendix B
    # gives D = 1 / pi, Vis = 1 / 4, F = F0, so pi f E N.L = 0.7 F0 / 4, plus the
    # ambient 0.15 (c_diff + F0) = 0.15 F0 (engine.render.pbr)
    lin = 0.8 * (0.7 / 4 + 0.15)
    want = 1.055 * lin ** (1 / 2.4) - 0.055
    assert abs(int(px[0]) - round(want * 255)) <= 1 and px[1] == px[2] == 0
    assert (mesh.material.shading, mesh.material.metallic) == ("pbr", 1.0)


def test_khronos_box_textured(ref_assets):
    model = _khronos(ref_assets, "BoxTextured")
    mesh = geometries(model)[0]
    tex = mesh.material.texture
    assert tex is not None and tex.size == (256, 256)
    s = tex.sampler
    assert (s.wrap_s, s.wrap_t, s.filter) == ("repeat", "repeat", "linear")
    assert mesh.uvs.max() == pytest.approx(6.0)  # UVs up to 6 (INDEX.md), repeated
    # the texture is drawn with the mipmaps its minFilter asks for: no "without mipmaps"
    assert s.min_filter == "nearest_mipmap_linear"  # BoxTextured's minFilter 9986
    assert not any("mipmap" in w for w in model.warnings)


def test_khronos_box_vertex_colors_equal_the_positions(ref_assets):
    # README: the vertex at (0,0,0) is black, (1,0,0) red, (1,1,0) yellow ... COLOR_0 is
    # linear, so the sRGB-encoded engine colour of channel c is encode(position c)
    from engine.scene.colorspace import linear_to_srgb

    mesh = geometries(_khronos(ref_assets, "BoxVertexColors"))[0]
    pos = mesh.positions.astype(np.float64) + mesh.origin
    np.testing.assert_allclose(mesh.colors_float[:, :3], linear_to_srgb(pos), atol=1 / 255)
    corners = {tuple(p): tuple(c) for p, c in zip(np.rint(pos).astype(int),
                                                    mesh.colors[:, :3].tolist())}
    assert corners[(0, 0, 0)] == (0, 0, 0) and corners[(1, 0, 0)] == (255, 0, 0)
    assert corners[(1, 1, 0)] == (255, 255, 0) and corners[(1, 1, 1)] == (255, 255, 255)


def test_khronos_simple_meshes_share_one_mesh(ref_assets):
    model = _khronos(ref_assets, "SimpleMeshes")
    a, b = (n for n in model.traverse() if n.geometry is not None)
    assert a.geometry is b.geometry
    np.testing.assert_allclose(b.world_position - a.world_position, [1, 0, 0])


def test_khronos_mesh_primitive_modes(ref_assets):
    model = _khronos(ref_assets, "MeshPrimitiveModes")
    by_mode = [n.geometry for n in model.children]
    assert [type(g).__name__ for g in by_mode] == ["PointCloud", "Lines", "Lines", "Lines",
                                                   "Mesh", "Mesh", "Mesh"]
    assert by_mode[0].vertex_count == 7
    assert by_mode[1].segments.tolist() == [[0, k] for k in range(1, 7)]
    assert by_mode[2].segments.tolist() == [[k, k + 1] for k in range(6)] + [[6, 0]]
    assert by_mode[3].segments.tolist() == [[k, k + 1] for k in range(6)]
    assert by_mode[4].faces.tolist() == [[0, k, k % 6 + 1] for k in range(1, 7)]
    assert by_mode[5].faces.tolist() == [[2, 3, 1], [3, 4, 1], [1, 4, 6], [4, 5, 6]]
    assert by_mode[6].faces.tolist() == [[k, k % 6 + 1, 0] for k in range(1, 7)]
    for mesh in by_mode[4:]:  # every triangle faces +Z (counter-clockwise seen from +Z)
        p = mesh.positions.astype(np.float64)
        f = mesh.faces
        assert (np.cross(p[f[:, 1]] - p[f[:, 0]], p[f[:, 2]] - p[f[:, 0]])[:, 2] > 0).all()
    # rendered from +Z: every node draws pixels where its translation puts it
    scene = Scene()
    scene.add(model)
    cam = scene.add(OrthographicCamera(height=8, position=(0, 0, 5)))
    img = Renderer(scene, cam, (80, 80), backend="numpy").render().color
    drawn = img[..., :3].sum(axis=-1) > 0
    for node in model.children:
        x, y = node.world_position[:2]
        col, row = int(40 + x * 10), int(40 - y * 10)
        assert drawn[row - 10:row + 11, col - 10:col + 11].sum() >= 7, node.name


def test_khronos_cameras(ref_assets):
    model = _khronos(ref_assets, "Cameras")
    persp, ortho = model.cameras
    assert persp.fov_y == pytest.approx(math.degrees(0.7))
    assert (persp.near, persp.far) == (0.01, 100.0)
    assert ortho.height == 2.0 and ortho.far == 100.0
    np.testing.assert_allclose(persp.world_position, [0.5, 0.5, 3])
    np.testing.assert_allclose(ortho.world_position, [0.5, 0.5, 3])
    # through the perspective camera: the quad's centre (0.5, 0.5, 0) tilted by the node
    # rotation (-45 deg about X) projects to where the view matrix puts it
    scene = Scene()
    scene.add(model)
    size = 100
    img = Renderer(scene, persp, (size, size), backend="numpy").render().color
    mesh_node = model.children[0]
    c = mesh_node.world_matrix @ [0.5, 0.5, 0, 1]
    clip = persp.projection_matrix @ persp.view_matrix @ c
    col = (clip[0] / clip[3] + 1) / 2 * size
    row = (1 - clip[1] / clip[3]) / 2 * size
    assert img[int(row), int(col), :3].sum() > 0
    assert img[2, 2, :3].sum() == 0


def test_khronos_animated_triangle(ref_assets):
    model = _khronos(ref_assets, "AnimatedTriangle")
    clip = model.clips[0]
    node = model.children[0]
    assert clip.duration == 1.0
    # 5 keys 0..1 s, quarter turns about Z; halfway between keys 0 and 1: 45 degrees
    for t, degrees in ((0.0, 0), (0.125, 45), (0.25, 90), (0.625, 225), (1.0, 360)):
        clip.apply(t)
        a = math.radians(degrees)
        np.testing.assert_allclose(quat_to_matrix(node.rotation)[:2, :2],
                                   [[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]],
                                   atol=2e-3)


def test_khronos_box_animated_channels_stay_in_sync(ref_assets):
    from engine.animation.clips import ClipMotion

    model = _khronos(ref_assets, "BoxAnimated")
    clip = model.clips[0]
    assert clip.duration == pytest.approx(3.708329916)
    lift = model.find("node 0")  # translation channel
    inner = model.find("node 2")  # rotation channel, 1.25-2.5 s
    motion = ClipMotion(clip, loop=True)

    def pose(t):
        motion.apply(None, t)
        return lift.position[1], abs(quat_to_matrix(inner.rotation)[1, 1])

    # rises to 2.52 by 1.25 s without turning; flips (180 deg about X) while up; sinks back
    assert pose(0.625) == pytest.approx((1.26, 1.0), abs=1e-6)
    assert pose(1.875)[0] == pytest.approx(2.52)
    assert pose(1.875)[1] == pytest.approx(0.0, abs=1e-6)  # 90 deg: cos = 0
    motion.apply(None, 2.5)
    np.testing.assert_allclose(quat_to_matrix(inner.rotation),
                               [[1, 0, 0], [0, -1, 0], [0, 0, -1]], atol=1e-6)
    # the next loop starts unturned: the rotation channel does not run ahead
    assert pose(clip.duration + 0.625) == pytest.approx((1.26, 1.0), abs=1e-6)


def test_every_khronos_model_renders_something(ref_assets):
    for folder in sorted((ref_assets / KHRONOS).iterdir()):
        if not folder.is_dir():
            continue
        model = _khronos(ref_assets, folder.name)
        scene = Scene()
        scene.add(model)
        cam = scene.add(PerspectiveCamera(fov_y=50))
        cam.frame(scene.bounds())
        img = Renderer(scene, cam, (64, 48), backend="numpy").render().color
        assert (img[..., :3].sum(axis=-1) > 0).sum() > 20, folder.name



def test_skin_with_two_sets_of_byte_and_short_influences_and_animated_weights(tmp_path):
    # a strip of 3 vertex pairs skinned by 2 joints: JOINTS_0 unsigned byte with
    # normalized unsigned byte WEIGHTS_0, JOINTS_1 unsigned short with normalized unsigned
    # short WEIGHTS_1; the middle pair's weights (128/255, then 32768/65535) do not sum
    # to 1 and are normalised; joint 1 (a child at x = 1) is turned 90 degrees about z
    from gltf_files import UBYTE, USHORT

    g = Gltf()
    pos = [[0, -0.1, 0], [0, 0.1, 0], [1, -0.1, 0], [1, 0.1, 0], [2, -0.1, 0], [2, 0.1, 0]]
    j0 = g.accessor([[0, 0, 0, 0]] * 4 + [[1, 0, 0, 0]] * 2, UBYTE)
    w0 = g.accessor([[255, 0, 0, 0]] * 2 + [[128, 0, 0, 0]] * 2 + [[255, 0, 0, 0]] * 2,
                    UBYTE, normalized=True)
    j1 = g.accessor([[0, 0, 0, 0]] * 2 + [[1, 0, 0, 0]] * 2 + [[0, 0, 0, 0]] * 2, USHORT)
    w1 = g.accessor([[0, 0, 0, 0]] * 2 + [[32768, 0, 0, 0]] * 2 + [[0, 0, 0, 0]] * 2,
                    USHORT, normalized=True)
    idx = g.accessor([0, 2, 3, 0, 3, 1, 2, 4, 5, 2, 5, 3], USHORT)
    g.mesh({"POSITION": g.accessor(pos), "JOINTS_0": j0, "WEIGHTS_0": w0,
            "JOINTS_1": j1, "WEIGHTS_1": w1}, indices=idx, skin=0, translation=[7, 7, 7])
    s = math.sqrt(0.5)
    bone0 = g.node()
    bone1 = g.node(root=False, translation=[1, 0, 0], rotation=[0, 0, s, s])
    g.doc["nodes"][bone0]["children"] = [bone1]
    ibm = np.tile(np.eye(4), (2, 1, 1))
    ibm[1, 0, 3] = -1
    g.doc["skins"] = [{"joints": [bone0, bone1],
                       "inverseBindMatrices": g.accessor(
                           ibm.transpose(0, 2, 1).reshape(2, 16), type_="MAT4")}]
    model = load(g.write_gltf(tmp_path / "skin.gltf"))
    node = next(n for n in model.traverse() if n.geometry is not None)
    assert node.geometry.joints.shape == (6, 8)
    a = (128 / 255) / (128 / 255 + 32768 / 65535)  # joint 0's share of the middle pair
    got, _ = posed_vertices(node)
    # joint 1 maps (x, y) to (1 - y, x - 1); the middle pair blends a * p + (1 - a) * that
    bent = np.array([[1 - p[1], p[0] - 1, 0] for p in pos])
    want = np.array(pos, float)
    want[2:4] = a * want[2:4] + (1 - a) * bent[2:4]
    want[4:] = bent[4:]
    np.testing.assert_allclose(got, want, atol=1e-6)


def test_weights_channels_with_every_interpolation(tmp_path):
    g = Gltf()
    pos = g.accessor([[0, 0, 0], [1, 0, 0], [0, 1, 0]])
    up = g.accessor([[0, 0, 0], [0, 0, 0], [0, 1, 0]])
    side = g.accessor([[0, 0, 0], [1, 0, 0], [0, 0, 0]])
    g.doc["meshes"] = [{"primitives": [{"attributes": {"POSITION": pos},
                                        "targets": [{"POSITION": up}, {"POSITION": side}]}]}]
    g.node(mesh=0)
    times = g.accessor(np.array([[0.0], [2.0]]))
    lin = g.accessor(np.array([[0.0], [0.0], [1.0], [0.5]]))          # 2 keys x 2 targets
    cub = g.accessor(np.array([[0.0]] * 2 + [[0.0], [1.0]] + [[0.0]] * 2  # key 0: a, v, b
                              + [[0.0]] * 2 + [[1.0], [0.0]] + [[0.0]] * 2))
    g.doc["animations"] = [
        {"samplers": [{"input": times, "output": lin, "interpolation": interp}],
         "channels": [{"sampler": 0, "target": {"node": 0, "path": "weights"}}]}
        for interp in ("LINEAR", "STEP")] + [
        {"samplers": [{"input": times, "output": cub, "interpolation": "CUBICSPLINE"}],
         "channels": [{"sampler": 0, "target": {"node": 0, "path": "weights"}}]}]
    model = load(g.write_gltf(tmp_path / "w.gltf"))
    node = next(n for n in model.traverse() if n.geometry is not None)
    linear, step, cubic = model.clips
    assert linear.duration == step.duration == cubic.duration == 2.0
    linear.apply(1.0)
    np.testing.assert_allclose(node.morph_weights, [0.5, 0.25])
    np.testing.assert_allclose(posed_vertices(node)[0][2], [0, 1.5, 0])
    np.testing.assert_allclose(posed_vertices(node)[0][1], [1.25, 0, 0])
    step.apply(1.0)
    np.testing.assert_allclose(node.morph_weights, [0.0, 0.0])
    step.apply(2.0)
    np.testing.assert_allclose(node.morph_weights, [1.0, 0.5])
    # zero tangents: w(u) = 3u^2 - 2u^3 from (0, 1) to (1, 0), u = t / 2
    cubic.apply(0.5)
    u = 0.25
    h = 3 * u * u - 2 * u ** 3
    np.testing.assert_allclose(node.morph_weights, [h, 1 - h])
