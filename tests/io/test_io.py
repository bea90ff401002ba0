"""engine.io.load: loader edge cases on small files written here, every reference asset
loaded and rendered with the counts its README states, and clear errors for bad files."""

from __future__ import annotations

import base64
import json
import os
import struct
from pathlib import Path

import numpy as np
import pytest
import trimesh

from engine import Mesh, PerspectiveCamera, PointCloud, Renderer
from engine.arrays import to_host
from engine.cli.commands import load_source
from engine.errors import LoadError
from engine.io import SUPPORTED_SUFFIXES, load
from engine.io.fixups import tristrip_faces
from engine.render.frame import background_rgba
from engine.scene.deform import posed_vertices
from engine.scene.geometry import Lines
from engine.scene.transforms import decompose_trs


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _world_points(node):
    """(N, 3) float64 world positions of every geometry under ``node``."""
    out = []
    for n in node.traverse():
        g = n.geometry
        if g is not None:
            p = g.positions.astype(np.float64) + g.origin
            with np.errstate(invalid="ignore"):  # NaN vertices stay NaN
                out.append(p @ n.world_matrix[:3, :3].T + n.world_matrix[:3, 3])
    return np.concatenate(out)


# ------------------------------------------------------------------------ OBJ edge cases
def test_obj_negative_indices_resolve_against_the_count_at_that_line(tmp_path):
    # trimesh alone resolves both faces against the final count: [0,1,2] twice.
    f = _write(tmp_path / "neg.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf -3 -2 -1\n"
                                     "v 0 0 5\nv 1 0 5\nv 0 1 5\nf -3 -2 -1\n")
    g = load(f).geometry
    assert isinstance(g, Mesh)
    assert g.faces.tolist() == [[0, 1, 2], [3, 4, 5]]
    np.testing.assert_allclose(g.positions[g.faces[1]] + g.origin,
                               [[0, 0, 5], [1, 0, 5], [0, 1, 5]], atol=1e-6)


def test_obj_negative_indices_with_uvs_and_normals(tmp_path):
    f = _write(tmp_path / "negvt.obj",
               "v 0 0 0\nv 2 0 0\nv 0 2 0\nvt 0 0\nvt 1 0\nvt 0 1\nvn 0 0 1\n"
               "f -3/-3/-1 -2/-2/-1 -1/-1/-1\n")
    g = load(f).geometry
    corners = g.positions[g.faces[0]] + g.origin
    np.testing.assert_allclose(corners, [[0, 0, 0], [2, 0, 0], [0, 2, 0]], atol=1e-6)
    # each corner keeps its own UV (vt 0 0, 1 0, 0 1 with OBJ's v up, so in the engine's
    # top-left-origin convention v -> 1 - v) and the given normal
    np.testing.assert_allclose(g.uvs[g.faces[0]], [[0, 1], [1, 1], [0, 0]])
    np.testing.assert_allclose(g.normals, np.tile([0, 0, 1], (3, 1)))


def test_obj_vertex_colours_float_and_0_255(tmp_path):
    f = _write(tmp_path / "c.obj", "v 0 0 0 1 0.5 0\nv 1 0 0 0 1 0\nv 0 1 0 0 0 1\nf 1 2 3\n")
    g = load(f).geometry
    assert g.vertex_count == 3  # six numbers are one vertex with a colour, not two
    np.testing.assert_allclose(g.colors_float[:, :3], [[1, 0.50196, 0], [0, 1, 0], [0, 0, 1]],
                               atol=1e-5)
    # 0-255 colours (trimesh alone clips 128 -> 255)
    f = _write(tmp_path / "c255.obj", "v 0 0 0 255 128 0\nv 1 0 0 0 255 0\nv 0 1 0 0 0 255\n"
                                      "f 1 2 3\n")
    np.testing.assert_allclose(load(f).geometry.colors_float[0], [1.0, 0.50196, 0.0, 1.0],
                               atol=1e-5)


def test_obj_homogeneous_w_divides(tmp_path):
    f = _write(tmp_path / "w.obj", "v 2 4 6 2\nv 1 0 0 1\nv 0 3 0 0.5\nf 1 2 3\n")
    g = load(f).geometry
    assert g.vertex_count == 3
    np.testing.assert_allclose(g.positions + g.origin, [[1, 2, 3], [1, 0, 0], [0, 6, 0]],
                               atol=1e-6)


def test_non_finite_vertices_and_their_triangles_are_noted(tmp_path):
    # vertex 3 is nan: triangle 1 uses it and cannot be drawn, triangle 2 is drawn
    f = _write(tmp_path / "nan.obj", "v 0 0 0\nv 1 0 0\nv nan 1 0\nv 0 1 0\nf 1 2 3\nf 1 2 4\n")
    model = load(f)
    assert model.warnings == [(f"{f}: left out: 1 non-finite vertex (3) and the 1 triangle "
                              "(1) using it")]
    assert model.geometry.faces.tolist() == [[0, 1, 2], [0, 1, 3]]
    # an OBJ point at infinity (w = 0) is such a vertex too; a quad is two triangles
    f = _write(tmp_path / "w0.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0 0\nv 0 1 0\nv 2 2 0\n"
                                    "f 1 2 3 4\nf 1 2 5\n")
    assert load(f).warnings == [(f"{f}: left out: 1 non-finite vertex (3) and the 2 "
                                "triangles (1, 2) using it")]
    # PLY alike (five nan vertices: four named), and a finite file says nothing
    head = "ply\nformat ascii 1.0\nelement vertex 8\nproperty float x\nproperty float y\n" \
           "property float z\nelement face 1\nproperty list uchar int vertex_indices\n" \
           "end_header\n"
    f = _write(tmp_path / "nan.ply", head + "0 0 0\n1 0 0\n0 1 0\n" + "nan 0 0\n" * 5
               + "3 0 1 2\n")
    assert load(f).warnings == [(f"{f}: left out: 5 non-finite vertices (4, 5, 6, 7 and 1 "
                                "more) and no triangle uses them")]
    f = _write(tmp_path / "ok.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")
    assert load(f).warnings == []


def test_obj_polygon_becomes_a_triangle_fan(tmp_path):
    f = _write(tmp_path / "pent.obj",
               "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0.5 1.5 0\nv 0 1 0\nf 1 2 3 4 5\n")
    assert load(f).geometry.faces.tolist() == [[0, 1, 2], [0, 2, 3], [0, 3, 4]]


def test_obj_without_faces_is_a_point_cloud(tmp_path):
    f = _write(tmp_path / "pts.obj", "v 0 0 0\nv 1 2 3\nv -1 0 4\n")
    g = load(f).geometry
    assert isinstance(g, PointCloud)
    np.testing.assert_allclose(g.positions + g.origin, [[0, 0, 0], [1, 2, 3], [-1, 0, 4]])


def test_obj_latin1_text_loads(tmp_path):
    f = tmp_path / "latin.obj"
    f.write_bytes("# caf\xe9 export\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n".encode("latin-1"))
    assert load(f).geometry.face_count == 1


# ------------------------------------------------------------------------ PLY edge cases
_PLY_VERTS = [(0, 0, 0, 255, 128, 0), (1, 0, 0, 0, 255, 0), (0, 1, 0, 0, 0, 255),
              (1, 1, 0, 10, 20, 30)]
_PLY_FACES = [(0, 1, 2), (1, 3, 2)]


def _ply(path: Path, fmt: str, face_decl: str) -> Path:
    head = (f"ply\nformat {fmt} 1.0\nelement vertex 4\nproperty float x\nproperty float y\n"
            "property float z\nproperty uchar red\nproperty uchar green\nproperty uchar blue\n"
            f"element face 2\nproperty {face_decl}\nend_header\n")
    if fmt == "ascii":
        body = "".join(" ".join(map(str, v)) + "\n" for v in _PLY_VERTS)
        body += "".join("3 " + " ".join(map(str, f)) + "\n" for f in _PLY_FACES)
        path.write_text(head + body)
    else:
        idx = "I" if face_decl.split()[2] in ("uint", "uint32") else "i"
        body = b"".join(struct.pack("<3f3B", *v) for v in _PLY_VERTS)
        body += b"".join(struct.pack("<B3" + idx, 3, *f) for f in _PLY_FACES)
        path.write_bytes(head.encode() + body)
    return path


@pytest.mark.parametrize("fmt", ["ascii", "binary_little_endian"])
@pytest.mark.parametrize("decl", ["list uchar uint vertex_indices", "list uint8 int32 vertex_index"])
def test_ply_face_list_declarations_and_uchar_colours(tmp_path, fmt, decl):
    g = load(_ply(tmp_path / "m.ply", fmt, decl)).geometry
    assert isinstance(g, Mesh)
    assert g.faces.tolist() == [list(f) for f in _PLY_FACES]
    np.testing.assert_allclose(g.positions + g.origin, np.array(_PLY_VERTS)[:, :3], atol=1e-6)
    # uchar colours map to [0, 1] by /255
    np.testing.assert_allclose(g.colors_float[0], [1.0, 0.50196, 0.0, 1.0], atol=1e-5)
    np.testing.assert_allclose(g.colors_float[:, :3], np.array(_PLY_VERTS)[:, 3:] / 255.0,
                               atol=1e-6)


def test_binary_ply_with_mixed_polygons_and_face_colours(tmp_path):
    # trimesh alone reads every face list with the first one's length: "unexpected length"
    head = ("ply\nformat binary_little_endian 1.0\nelement vertex 6\nproperty float x\n"
            "property float y\nproperty float z\nelement face 3\nproperty uchar flags\n"
            "property list uchar int vertex_indices\nproperty uchar red\nproperty uchar green\n"
            "property uchar blue\nend_header\n")
    verts = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0), (2, 0, 0), (2, 1, 0)]
    body = b"".join(struct.pack("<3f", *v) for v in verts)
    body += struct.pack("<BB3i3B", 7, 3, 0, 1, 2, 255, 0, 0)
    body += struct.pack("<BB4i3B", 7, 4, 1, 4, 5, 3, 0, 255, 0)
    body += struct.pack("<BB5i3B", 7, 5, 0, 1, 4, 5, 2, 0, 0, 255)
    f = tmp_path / "mixed.ply"
    f.write_bytes(head.encode() + body)
    g = load(f).geometry
    corners = np.rint(g.positions + g.origin).astype(int)[g.faces]
    expected = [[0, 1, 2], [1, 4, 5], [1, 5, 3], [0, 1, 4], [0, 4, 5], [0, 5, 2]]
    assert corners.tolist() == [[list(verts[i]) for i in f] for f in expected]
    # each triangle keeps its polygon's colour on all three corners (vertices shared by
    # faces of different colours are split): red triangle, green quad, blue pentagon
    rgb = [[255, 0, 0]] + [[0, 255, 0]] * 2 + [[0, 0, 255]] * 3
    assert g.colors[g.faces][:, :, :3].tolist() == [[c] * 3 for c in rgb]
    # the same file cut inside the last face record
    cut = tmp_path / "cut.ply"
    cut.write_bytes(head.encode() + body[:-5])
    with pytest.raises(LoadError, match="truncated binary PLY: the data ends inside 'face' 2"):
        load(cut)


def _face_coloured_cube(path: Path, quads: bool) -> Path:
    """A closed unit cube (corners at +-1) as an ASCII PLY with one colour per face: +Z
    and its opposite red, +X and the others blue; quads or two triangles per face."""
    verts = [(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]
    polys = []
    for axis in range(3):
        for sign in (1, -1):
            u, v = [a for a in range(3) if a != axis]
            ring = []
            for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
                p = [0, 0, 0]
                p[axis], p[u], p[v] = sign, a, b
                ring.append(verts.index(tuple(p)))
            e1 = np.subtract(verts[ring[1]], verts[ring[0]])
            e2 = np.subtract(verts[ring[2]], verts[ring[0]])
            if np.cross(e1, e2)[axis] * sign < 0:  # counter-clockwise seen from outside
                ring = ring[::-1]
            colour = (255, 0, 0) if axis == 2 else (0, 0, 255)
            faces = [ring] if quads else [ring[:3], [ring[0], ring[2], ring[3]]]
            polys += [(f, colour) for f in faces]
    text = ("ply\nformat ascii 1.0\nelement vertex 8\nproperty float x\nproperty float y\n"
            f"property float z\nelement face {len(polys)}\n"
            "property list uchar int vertex_indices\nproperty uchar red\n"
            "property uchar green\nproperty uchar blue\nend_header\n")
    text += "".join(f"{x} {y} {z}\n" for x, y, z in verts)
    text += "".join(f"{len(f)} {' '.join(map(str, f))} {r} {g} {b}\n" for f, (r, g, b) in polys)
    return _write(path, text)


@pytest.mark.parametrize("quads", [False, True])
def test_ply_face_colours_stay_per_face(tmp_path, quads):
    from engine import Scene

    model = load(_face_coloured_cube(tmp_path / "cube.ply", quads))
    g = model.geometry
    assert len(g.faces) == 12
    # every corner of a triangle carries its face's colour: faces on the Z axis red
    normal_axis = np.argmax(np.abs(np.cross(*np.diff(g.positions[g.faces], axis=1)
                                            .transpose(1, 0, 2))), axis=1)
    want = np.where((normal_axis == 2)[:, None], [255, 0, 0, 255], [0, 0, 255, 255])
    assert (g.colors[g.faces] == want[:, None, :]).all()
    assert not g.material.double_sided  # still one closed surface
    scene = Scene()
    scene.add(model)
    camera = scene.add(PerspectiveCamera(fov_y=60, position=(0, 0, 5)))
    renderer = Renderer(scene, camera, size=(64, 64), backend="numpy")
    # head-on, the default headlight lights a face's centre to 237 (the issue's value;
    # blended through shared vertices it was (190, 0, 86))
    assert renderer.render().color[32, 32].tolist() == [237, 0, 0, 255]
    camera.position = (5, 0, 0)
    camera.look_at((0, 0, 0))
    frame = renderer.render().color
    assert frame[32, 32].tolist() == [0, 0, 237, 255]
    covered = frame[..., 2] > 0
    assert covered.sum() > 500 and (frame[covered][:, 0] == 0).all()  # no red blended in


def test_ply_without_faces_is_a_recentred_point_cloud(tmp_path):
    f = _write(tmp_path / "pc.ply",
               "ply\nformat ascii 1.0\nelement vertex 2\nproperty double x\nproperty double y\n"
               "property double z\nproperty uchar red\nproperty uchar green\nproperty uchar blue\n"
               "end_header\n596650.00 243650 10 255 128 0\n596650.01 243650 10 0 0 0\n")
    g = load(f).geometry
    assert isinstance(g, PointCloud)
    np.testing.assert_allclose(g.origin, [596650.005, 243650.0, 10.0])
    assert g.positions[1, 0] - g.positions[0, 0] == pytest.approx(0.01, abs=1e-6)
    np.testing.assert_allclose(g.colors_float[0], [1.0, 0.50196, 0.0, 1.0], atol=1e-5)


def test_ply_tristrips_become_triangles(tmp_path):
    assert tristrip_faces([0, 1, 2, 3, 4, -1, 5, 6, 7, -1, 8, 9]).tolist() == \
        [[0, 1, 2], [2, 1, 3], [2, 3, 4], [5, 6, 7]]
    f = _write(tmp_path / "ts.ply",
               "ply\nformat ascii 1.0\nelement vertex 5\nproperty float x\nproperty float y\n"
               "property float z\nelement tristrips 1\nproperty list int int vertex_indices\n"
               "end_header\n0 0 0\n1 0 0\n0 1 0\n1 1 0\n2 2 0\n7 0 1 2 3 -1 2 4\n")
    g = load(f).geometry
    assert isinstance(g, Mesh)
    assert g.faces.tolist() == [[0, 1, 2], [2, 1, 3]]


def test_stl_ascii_and_binary(tmp_path):
    tri = [(0, 0, 0), (1, 0, 0), (0, 1, 0)]
    f = _write(tmp_path / "t.stl", "solid t\nfacet normal 0 0 1\nouter loop\n"
               + "".join(f"vertex {x} {y} {z}\n" for x, y, z in tri)
               + "endloop\nendfacet\nendsolid t\n")
    g = load(f).geometry
    assert g.face_count == 1
    np.testing.assert_allclose(g.positions[g.faces[0]] + g.origin, tri, atol=1e-6)
    # binary: two triangles sharing an edge -> 4 merged vertices
    tris = [tri, [(1, 0, 0), (1, 1, 0), (0, 1, 0)]]
    body = b"".join(struct.pack("<12fH", 0, 0, 1, *np.ravel(t), 0) for t in tris)
    b = tmp_path / "b.stl"
    b.write_bytes(b"\0" * 80 + struct.pack("<I", 2) + body)
    g = load(b).geometry
    assert (g.vertex_count, g.face_count) == (4, 2)


def test_nan_and_inf_vertices_do_not_break_framing(tmp_path):
    f = _write(tmp_path / "nan.obj", "v 0 0 0\nv 2 0 0\nv 0 1 0\nv nan 0 0\nv 1e400 5 5\n"
                                     "v 2 1 4\nf 1 2 3\nf 4 5 6\n")
    scene, camera = load_source(str(f))
    np.testing.assert_allclose(scene.bounds(), [[0, 0, 0], [2, 1, 4]])
    # the camera is framed on the finite box (engine.scene.framing): its 8 corners,
    # projected (the camera's aspect is 1), span 85 % of the image, centred
    corners = np.array([[x, y, z] for x in (0, 2) for y in (0, 1) for z in (0, 4)], float)
    clip = np.c_[corners, np.ones(8)] @ np.asarray(camera.view_projection_matrix, float).T
    ndc = clip[:, :2] / clip[:, 3:]
    assert camera.aspect == 1.0
    assert np.ptp(ndc, axis=0).max() / 2 == pytest.approx(0.85, abs=0.005)
    np.testing.assert_allclose(ndc.max(axis=0) + ndc.min(axis=0), 0, atol=0.01)
    r = Renderer(scene, camera, (160, 120), backend="numpy")
    p = r.project()
    vis = to_host(p.visible)
    finite = np.all(np.isfinite(_world_points(scene)), axis=1)
    assert vis[finite].all() and not vis[~finite].any()
    assert np.isfinite(to_host(p.screen_xy)).all()
    frame = r.render()
    assert (frame.color != background_rgba(scene.background)).any(axis=-1).sum() >= 4


# ------------------------------------------------------------------------------- errors
def _assert_one_line_error(exc_info, path: Path, *words):
    msg = str(exc_info.value)
    assert "\n" not in msg
    assert str(path) in msg
    for w in words:
        assert w in msg, msg


def test_missing_file(tmp_path):
    with pytest.raises(LoadError) as e:
        load(tmp_path / "nope.obj")
    _assert_one_line_error(e, tmp_path / "nope.obj", "no such file")


def test_unknown_format(tmp_path):
    f = _write(tmp_path / "scan.e57", "0 0 0\n")
    with pytest.raises(LoadError) as e:
        load(f)
    _assert_one_line_error(e, f, "unknown 3D file format", ".e57", ".ply", ".las", ".pcd")


@pytest.mark.parametrize("name,content,words", [
    ("text.ply", b"hello\n", ["not a PLY file"]),
    ("nohead.ply", b"ply\nformat ascii 1.0\nelement vertex 1\n", ["end_header"]),
    ("badtype.ply", b"ply\nformat ascii 1.0\nelement vertex 1\nproperty flot x\nend_header\n0\n",
     ["line 4", "unknown type 'flot'"]),
    ("short.ply", (b"ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\n"
                   b"property float y\nproperty float z\nend_header\n0 0 0\n1 1 1\n"),
     ["truncated", "3 'vertex'"]),
    ("tokens.ply", (b"ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\n"
                    b"property float y\nproperty float z\nelement face 1\n"
                    b"property list uchar int vertex_indices\nend_header\n"
                    b"0 0 0\n1 0 0\n0 1 0\n3 0 1 2 7 7\n"),
     ["line 13", "'face' 0 has 6 values", "declares 4"]),
    ("trunc.ply", b"ply\nformat binary_little_endian 1.0\nelement vertex 2\nproperty float x\n"
                  b"property float y\nproperty float z\nend_header\n" + b"\0" * 20,
     ["truncated binary PLY", "24 bytes", "only 20", "4 missing"]),
    ("bad.obj", b"v 0 0 0\nv 1 x 0\nv 0 1 0 2\nf 1 2 3\n", ["cannot read OBJ file: line 2: a vertex needs 3 numbers"]),
    # issue 11: "element vertex 4000000000" used to say "format number 2 ... is not
    # recognized"; the count is checked against the file before anything is read
    ("huge.ply", (b"ply\nformat ascii 1.0\nelement vertex 4000000000\nproperty float x\n"
                 b"property float y\nproperty float z\nend_header\n0 0 0\n"),
     [("truncated ASCII PLY: the header declares 4,000,000,000 'vertex' lines but the file "
      "ends after 1")]),
    ("huge_binary.ply", b"ply\nformat binary_little_endian 1.0\nelement vertex 4000000000\n"
                        b"property float x\nproperty float y\nproperty float z\n"
                        b"element face 1\nproperty list uchar int vertex_indices\nend_header\n"
                        + b"\0" * 49,
     [("truncated binary PLY: the header declares 4,000,000,000 'vertex' records of at least "
      "12 B each, but only 49 bytes follow the header (at least 48,000,000,000 needed)")]),
    ("noindices.ply", (b"ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\n"
                      b"property float y\nproperty float z\nelement face 1\n"
                      b"property list uchar int vertex_indexes\nend_header\n"
                      b"0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n"),
     [("the PLY 'face' element has no 'vertex_indices' list property (it has: "
      "vertex_indexes)")]),
    ("badface.ply", (b"ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\n"
                    b"property float y\nproperty float z\nelement face 1\n"
                    b"property list uchar int vertex_indices\nend_header\n"
                    b"0 0 0\n1 0 0\n0 1 0\n3 0 1 7\n"),
     ["line 13: 'face' 0 refers to vertex 7, but the file has 3 vertices"]),
    ("nan.ply", (b"ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\n"
                b"property float y\nproperty float z\nend_header\n0 0 zero\n"),
     ["line 8: 'vertex' 0 has 'zero', which is not a number"]),
    ("vt.obj", b"v 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 x\nf 1/1 2/1 3/1\n",
     ["line 4: a texture coordinate needs 1 to 3 numbers: 'vt 0 x'"]),
    ("fface.obj", b"v 0 0 0\nv 1 0 0\nv 0 1 0\nfoo 1 2 3\n",
     ["line 4: 'foo' is not an OBJ statement"]),
    ("bad.glb", b"glTF\x02\0\0\0garbage", ["truncated GLB", "1,651,663,207 bytes",
                                               "the file has 15 bytes"]),
    ("bad.gltf", json.dumps({  # a valid document whose buffer file is missing
        "asset": {"version": "2.0"},
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3"}],
        "bufferViews": [{"buffer": 0, "byteLength": 36}],
        "buffers": [{"uri": "missing.bin", "byteLength": 36}]}).encode(),
     ["buffers[0].uri: the file 'missing.bin' it names is missing"]),
])
def test_bad_files_raise_one_clear_line(tmp_path, name, content, words):
    f = tmp_path / name
    f.write_bytes(content)
    with pytest.raises(LoadError) as e:
        load(f)
    _assert_one_line_error(e, f, *words)


# Defects from testing: every bad file says what is wrong with it, in one line.
def _load_error(path: Path, *words) -> str:
    with pytest.raises(LoadError) as e:
        load(path)
    _assert_one_line_error(e, path, *words)
    return str(e.value)


@pytest.mark.parametrize("suffix", sorted(SUPPORTED_SUFFIXES))
def test_empty_file_of_every_format_says_empty(tmp_path, suffix):
    f = tmp_path / f"empty{suffix}"
    f.write_bytes(b"")
    assert _load_error(f) == f"{f}: the file is empty (0 bytes)"


@pytest.mark.parametrize("name,content", [
    ("comments.obj", b"# nothing\n"),
    ("zero.ply", (b"ply\nformat ascii 1.0\nelement vertex 0\nproperty float x\n"
                 b"property float y\nproperty float z\nend_header\n")),
    ("nofacets.stl", b"solid x\nendsolid x\n"),
    ("nomesh.gltf", b'{"asset": {"version": "2.0"}}'),
])
def test_non_empty_file_without_vertices(tmp_path, name, content):
    f = tmp_path / name
    f.write_bytes(content)
    assert _load_error(f) == f"{f}: the file contains no vertices"


def _triangle_gltf(buffer: dict) -> dict:
    """A glTF document with one triangle (0,0,0) (1,0,0) (0,1,0) in buffer 0."""
    return {"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
            "nodes": [{"mesh": 0}],
            "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
            "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3,
                           "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 0]}],
            "bufferViews": [{"buffer": 0, "byteLength": 36}],
            "buffers": [dict(buffer, byteLength=36)]}


_TRIANGLE = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32)


def _glb(doc: dict, binary: bytes) -> bytes:
    js = json.dumps(doc).encode()
    js += b" " * (-len(js) % 4)  # chunks are 4-byte aligned (spaces pad JSON)
    chunks = struct.pack("<I4s", len(js), b"JSON") + js
    chunks += struct.pack("<I4s", len(binary), b"BIN\0") + binary
    return struct.pack("<4sII", b"glTF", 2, 12 + len(chunks)) + chunks


@pytest.mark.parametrize("content,words", [
    # the tester's truncated file: it used to say "a file it refers to is missing"
    (b'{"asset":', ["not valid JSON: the text ends at line 1, column 10", "truncated file?"]),
    (b'{\n  "asset": {"version": "2.0"},\n  "nodes": [,]\n}\n',
     ["not valid JSON at line 3, column 13: expecting value"]),
    (b"hello\n", ["not valid JSON at line 1, column 1: expecting value"]),
    (b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", ["not a glTF file: not UTF-8 text (byte 0 is 0x89)"]),
    (b'{"meshes": []}', ["not a glTF file: no 'asset' object"]),
    (b"[1, 2]", ["not a glTF file: no 'asset' object"]),
    (b'{"asset": {"version": "1.0"}}', ["glTF version '1.0' is not supported"]),
    (_glb(_triangle_gltf({}), _TRIANGLE.tobytes()), ["GLB) data in a .gltf file",
                                                     "rename it to .glb"]),
])
def test_bad_gltf_says_what_is_wrong(tmp_path, content, words):
    f = tmp_path / "b.gltf"
    f.write_bytes(content)
    msg = _load_error(f, *words)
    assert "missing" not in msg and "model.gltf" not in msg


def test_gltf_with_byte_order_mark_loads(tmp_path):
    # readers may ignore a BOM (glTF 2.0 "JSON Encoding"); trimesh alone rejects it
    uri = "data:application/octet-stream;base64," + \
        base64.b64encode(_TRIANGLE.tobytes()).decode()
    f = tmp_path / "bom.gltf"
    f.write_bytes(b"\xef\xbb\xbf" + json.dumps(_triangle_gltf({"uri": uri})).encode())
    np.testing.assert_allclose(_world_points(load(f)), _TRIANGLE)


def test_glb_container_is_checked(tmp_path):
    good = _glb(_triangle_gltf({}), _TRIANGLE.tobytes())
    f = tmp_path / "t.glb"
    f.write_bytes(good)
    np.testing.assert_allclose(_world_points(load(f)), _TRIANGLE)
    f.write_bytes(good[:-10])
    _load_error(f, f"truncated GLB: the header declares {len(good):,} bytes but the file "
                   f"has {len(good) - 10:,} bytes (10 missing)")
    f.write_bytes(good + b"\0" * 8)
    _load_error(f, f"corrupt GLB: the file has {len(good) + 8:,} bytes, 8 more")
    # the BIN chunk's length field claims 36 + 64 bytes; the header length still matches
    bin_at = len(good) - 36 - 8
    f.write_bytes(good[:bin_at] + struct.pack("<I", 100) + good[bin_at + 4:])
    _load_error(f, "truncated GLB: chunk 1 (BIN) declares 100 bytes but only 36 follow")
    f.write_bytes(b'{"asset": {"version": "2.0"}}')
    _load_error(f, "not a GLB file: it does not start with 'glTF' (it is JSON text")
    f.write_bytes(good[:12] + good[12:20] + b'{"asset":' + b" " * (len(good) - 29))
    _load_error(f, "not valid JSON in the JSON chunk")


def _binary_stl(triangles, header: bytes = b"\0" * 80) -> bytes:
    body = b"".join(struct.pack("<12fH", 0, 0, 1, *np.ravel(t), 0) for t in triangles)
    return header + struct.pack("<I", len(triangles)) + body


def test_binary_stl_size_is_checked(tmp_path):
    f = tmp_path / "s.stl"
    # the tester's file: 1000 triangles declared, one record present
    f.write_bytes(b"\0" * 80 + struct.pack("<I", 1000) + b"\0" * 50)
    assert _load_error(f) == (
        f"{f}: truncated binary STL, or not an STL file: its header declares 1,000 "
        "triangles = 50,084 bytes (84 + 50 x 1,000) but the file has 134 bytes "
        "(49,950 missing)")
    # 5 kB of random bytes (it used to ask for the optional package charset_normalizer)
    data = np.random.default_rng(7).integers(0, 256, 5000, dtype=np.uint8).tobytes()
    f.write_bytes(data)
    count = struct.unpack_from("<I", data, 80)[0]
    msg = _load_error(f, "truncated binary STL, or not an STL file",
                      f"declares {count:,} triangles = {84 + 50 * count:,} bytes",
                      "the file has 5,000 bytes")
    assert "charset_normalizer" not in msg
    f.write_bytes(_binary_stl([_TRIANGLE]) + b"\0" * 7)
    _load_error(f, "corrupt binary STL", "declares 1 triangles = 134 bytes", "(7 too many)")
    f.write_bytes(b"\x01\x02\x03")
    _load_error(f, "not an STL file: 3 bytes is shorter than a binary STL header (84 bytes)")
    # a binary header may start with "solid": the exact size still makes it binary
    f.write_bytes(_binary_stl([_TRIANGLE], b"solid exported".ljust(80, b" ")))
    assert load(f).geometry.face_count == 1


@pytest.mark.parametrize("text,words", [
    ("solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\n",
     ["truncated ASCII STL: the file ends inside the facet started at line 2"]),
    (("solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\n"
     "vertex 0 1 0\nendloop\nendfacet\n"), ["truncated ASCII STL: no 'endsolid' line"]),
    ("solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 x 0\n",
     ["line 5: a vertex needs 3 numbers: 'vertex 1 x 0'"]),
    (("solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nendloop\n"
     "endfacet\nendsolid t\n"), ["line 7: the facet has 2 vertices, STL facets have 3"]),
])
def test_ascii_stl_structure_is_checked(tmp_path, text, words):
    f = _write(tmp_path / "a.stl", text)
    _load_error(f, *words)


def test_ascii_stl_in_latin1_loads(tmp_path):
    f = tmp_path / "latin.stl"
    f.write_bytes(("solid caf\xe9\nfacet normal 0 0 1\nouter loop\n"
                   + "".join(f"vertex {x} {y} {z}\n" for x, y, z in _TRIANGLE)
                   + "endloop\nendfacet\nendsolid caf\xe9\n").encode("latin-1"))
    np.testing.assert_allclose(_world_points(load(f)), _TRIANGLE)


_OBJ_TRIANGLE = "v 0 0 0\nv 1 0 0\nv 0 1 0\n"


@pytest.mark.parametrize("text,message", [
    # index 0 used to load silently as a 2-point mesh (trimesh read it as -1)
    (_OBJ_TRIANGLE + "f 0 1 2\n", ("line 4: face references vertex 0, but OBJ indices "
                                  "start at 1")),
    (_OBJ_TRIANGLE + "f 1 2 99\n", "line 4: face references vertex 99 but only 3 are defined"),
    (_OBJ_TRIANGLE + "f 1 2 -99\n", ("line 4: face references vertex -99 but only 3 are "
                                    "defined before it")),
    (_OBJ_TRIANGLE + "f 1 2 3\nf -1 -2 -4\n", ("line 5: face references vertex -4 but only "
                                              "3 are defined before it")),
    (_OBJ_TRIANGLE + "vt 0 0\nf 1/1 2/9 3/1\n", ("line 5: face references texture "
                                                 "coordinate 9 but only 1 is defined")),
    (_OBJ_TRIANGLE + "vn 0 0 1\nf 1//1 2//1 3//0\n", ("line 5: face references normal 0, "
                                                     "but OBJ indices start at 1")),
    (_OBJ_TRIANGLE + "f 1 2\n", "line 4: a face needs at least 3 vertices, this one has 2"),
    (_OBJ_TRIANGLE + "f 1 2 x\n", "line 4: 'x' is not a face vertex reference"),
    (_OBJ_TRIANGLE + "f 1 2 1.5\n", "line 4: '1.5' is not a face vertex reference"),
    # a joined continuation line does not shift later line numbers
    ("v 0 0 0\nv 1 \\\n0 0\nv 0 1 0\nf 1 2 7\n", ("line 5: face references vertex 7 but "
                                                  "only 3 are defined")),
    ("v 0 0 0\nv 1 0 0\nv 0 1 0 x 0\nf 1 2 3\n", ("line 3: a vertex needs 3 numbers: "
                                               "'v 0 1 0 x 0'")),
    ("v 0 0 0\nv 1 0\nv 0 1 0\nf 1 2 3\n", "line 2: a vertex needs 3 numbers: 'v 1 0'"),
])
def test_obj_face_references_are_checked(tmp_path, text, message):
    f = _write(tmp_path / "bad.obj", text)
    assert _load_error(f).startswith(f"{f}: cannot read OBJ file: {message}")


def test_obj_forward_references_still_load(tmp_path):
    # vertices defined after the face that uses them (trimesh and others accept this)
    f = _write(tmp_path / "fwd.obj", "f 1 2 3\n" + _OBJ_TRIANGLE)
    g = load(f).geometry
    np.testing.assert_allclose(g.positions[g.faces[0]] + g.origin, _TRIANGLE)


def test_point_size_is_checked_before_the_file(tmp_path):
    f = _write(tmp_path / "t.obj", _OBJ_TRIANGLE + "f 1 2 3\n")
    for bad in (0, -1.0, float("nan"), float("inf"), "big"):
        with pytest.raises(ValueError, match=r"^point_size must be a finite number of "
                                             r"pixels > 0, got ") as e:
            load(f, point_size=bad)
        assert not isinstance(e.value, LoadError)
    # even before the path is looked at
    with pytest.raises(ValueError, match="point_size"):
        load(tmp_path / "missing.glb", point_size=0)
    assert load(f, point_size=3).geometry.point_size == 3.0


def _colour_ply(path: Path, typ: str, colours, fmt: str = "ascii") -> Path:
    head = (f"ply\nformat {fmt} 1.0\nelement vertex {len(colours)}\nproperty float x\n"
            f"property float y\nproperty float z\nproperty {typ} red\nproperty {typ} green\n"
            f"property {typ} blue\nend_header\n").encode()
    rows = [(float(i), 0.0, 0.0, *c) for i, c in enumerate(colours)]
    if fmt == "ascii":
        body = "".join(" ".join(map(str, r)) + "\n" for r in rows).encode()
    else:
        code = {"float": "f", "int": "i", "short": "h"}[typ]
        body = b"".join(struct.pack(f"<3f3{code}", *r) for r in rows)
    path.write_bytes(head + body)
    return path


@pytest.mark.parametrize("fmt", ["ascii", "binary_little_endian"])
def test_ply_colour_range_rule(tmp_path, fmt):
    # in range: float 0-1 and integer 0-255 (any integer type) both map to uchar
    g = load(_colour_ply(tmp_path / "f.ply", "float", [(0.5, 0, 1), (1, 0.25, 0)], fmt)).geometry
    assert g.colors[:, :3].tolist() == [[128, 0, 255], [255, 64, 0]]
    g = load(_colour_ply(tmp_path / "i.ply", "int", [(200, 0, 255), (5, 1, 2)], fmt)).geometry
    assert g.colors[:, :3].tolist() == [[200, 0, 255], [5, 1, 2]]
    # out of range: rejected (trimesh alone clipped 2.0 and wrapped 300 to 44, -5 to 251)
    f = _colour_ply(tmp_path / "f2.ply", "float", [(0.5, 0, 1), (0.5, 2.0, 0)], fmt)
    assert _load_error(f) == (f"{f}: PLY colour out of range: 'vertex' 1 has green = 2.0 "
                              "(1 value outside 0-1; float colours hold 0-1)")
    f = _colour_ply(tmp_path / "nan.ply", "float", [(0.5, 0, 1), (float("nan"), 0, 0)], fmt)
    _load_error(f, "'vertex' 1 has red = nan")
    f = _colour_ply(tmp_path / "i2.ply", "int", [(300, 0, 0), (-5, 0, 0)], fmt)
    assert _load_error(f) == (f"{f}: PLY colour out of range: 'vertex' 0 has red = 300 "
                              "(2 values outside 0-255; integer colours hold 0-255)")
    f = _colour_ply(tmp_path / "s.ply", "short", [(0, 0, 0), (0, 0, -1)], fmt)
    _load_error(f, "'vertex' 1 has blue = -1")


def test_ply_face_colour_range(tmp_path):
    f = _write(tmp_path / "fc.ply",
               "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
               "property float z\nelement face 1\nproperty list uchar int vertex_indices\n"
               "property int red\nproperty int green\nproperty int blue\nend_header\n"
               "0 0 0\n1 0 0\n0 1 0\n3 0 1 2 256 0 0\n")
    _load_error(f, "'face' 0 has red = 256", "integer colours hold 0-255")


@pytest.mark.timeout(30)
def test_directory_and_fifo_are_not_files(tmp_path):
    d = tmp_path / "dir.obj"
    d.mkdir()
    assert _load_error(d) == f"{d}: not a file"
    fifo = tmp_path / "pipe.ply"
    os.mkfifo(fifo)  # opening it would block until a writer comes: it must not be opened
    assert _load_error(fifo) == f"{fifo}: not a file"


def test_obj_with_only_nan_vertices_loads_as_invisible_points(tmp_path):
    f = _write(tmp_path / "nan.obj", "v nan nan nan\nv nan 0 0\n")
    g = load(f).geometry
    assert isinstance(g, PointCloud) and g.vertex_count == 2
    assert not np.isfinite(g.positions).all(axis=1).any()


# --------------------------------------------------------------------- reference assets
# Every model under ../shared/ref-assets (outside broken/ and licenses/) with what its
# README states: v = vertices as loaded, u = distinct positions (= the file's `v` count
# where the loader splits vertices at UV/normal seams), f = triangles, c = distinct
# colours, kind = geometry class.
ASSETS = {
    "classic/armadillo.obj": {"v": 14_587, "f": 29_170},
    "classic/stanford-bunny.obj": {"f": 69_451},  # v checked against the file below
    "classic/suzanne.obj": {"v": 507, "f": 468 * 2 + 32},
    "classic/teapot.obj": {"v": 3_644, "f": 6_320},
    "gltf/Box.gltf": {"v": 24, "f": 36 // 3, "c": 1},
    "gltf/BoxTextured/BoxTextured.gltf": {"v": 24, "f": 12, "c": 1},
    "gltf/BoxTextured.glb": {"v": 24, "f": 12, "c": 1},
    "gltf/Duck.glb": {"v": 2_399, "f": 4_212},
    "gltf/Mesh_PrimitiveMode_04/Mesh_PrimitiveMode_04.gltf": {"v": 4, "f": 2},
    "gltf/monkey.glb": {"v": 1_966, "f": 2_904 // 3},
    # gltf-khronos/: counts from each model's README and accessors (INDEX.md)
    "gltf-khronos/AnimatedTriangle/AnimatedTriangle.gltf": {"v": 3, "f": 1},
    "gltf-khronos/Box/Box.gltf": {"v": 24, "f": 12, "c": 1},
    # two meshes: 96 + 224 vertices, 186 / 3 + 576 / 3 triangles
    "gltf-khronos/BoxAnimated/BoxAnimated.gltf": {"v": 96 + 224, "f": 62 + 192},
    "gltf-khronos/BoxTextured/BoxTextured.gltf": {"v": 24, "f": 12},
    # COLOR_0 equals the unit-cube corner position: 8 distinct colours
    "gltf-khronos/BoxVertexColors/BoxVertexColors.gltf": {"v": 24, "f": 12, "c": 8},
    "gltf-khronos/Cameras/Cameras.gltf": {"v": 4, "f": 2},
    # points, lines and triangles; every mode's structure is checked in the test below
    "gltf-khronos/MeshPrimitiveModes/MeshPrimitiveModes.gltf": {"kind": (Mesh, PointCloud,
                                                                         Lines)},
    # a skinned cylinder (2 joints), bent by its animation; at t = 0 (and in the file's
    # own pose) test_skinned_and_morphed_models_draw_bind_pose_and_default_weights checks
    # the bind pose, test_rigged_simple_follows_its_joints the animated pose
    "gltf-khronos/RiggedSimple/RiggedSimple.gltf": {"v": 160, "f": 188, "c": 1},
    # one mesh instanced by two nodes
    "gltf-khronos/SimpleMeshes/SimpleMeshes.gltf": {"v": 6, "f": 2},
    # one triangle with two POSITION targets: at the mesh's default weights [0.5, 0.5]
    # without animation (checked in the same test), animated by its weights channel
    # (test_simple_morph_follows_its_weights_channel)
    "gltf-khronos/SimpleMorph/SimpleMorph.gltf": {"v": 3, "f": 1, "c": 1},
    "gltf-khronos/Triangle/Triangle.gltf": {"v": 3, "f": 1},
    "gltf-khronos/TriangleWithoutIndices/TriangleWithoutIndices.gltf": {"v": 3, "f": 1},
    "obj-awkward/beetle.obj": {"u": 1_148, "f": 2_053},
    "obj-awkward/box.obj": {"u": 8, "f": 6 * 2},
    "obj-awkward/concave_polygon.obj": {"v": 64, "f": 66 - 2},
    "obj-awkward/cube_with_vertexcolors.obj": {"u": 8, "f": 12, "c": 8},
    "obj-awkward/groups.obj": {"v": 1_156, "f": 2_308},
    "obj-awkward/negative_indices.obj": {"u": 8, "f": 6 * 2},
    "obj-awkward/obj_issue_226.obj": {"v": 8, "f": 12},
    "obj-awkward/quadknot.obj": {"u": 1_440, "f": 1_440 * 2, "c": 1},
    "obj-awkward/rabbit.obj": {"u": 644},
    "obj-awkward/regr01.obj": {"f": 2_710},
    "obj-awkward/testmixed.obj": {"v": 8, "f": 6 * 2},
    "obj-awkward/wallhole.obj": {"v": 92, "f": 9 * 4 + 2 * 6 + 2 * 9},
    "ply/airplane.ply": {"v": 1_335, "f": 2_452},
    "ply/ankylosaurus_mesh.ply": {"v": 34_820, "f": 69_636, "c": 18_698},
    "ply/bunny.ply": {"v": 8_171, "f": 16_301},
    "ply/cycloidal.ply": {"v": 21_384, "f": 43_368, "c": 1},
    # 373,830 strip entries with 35,048 -1 markers ending 35,048 strips: a strip of n
    # indices gives n - 2 triangles
    "ply/igea.ply": {"v": 134_345, "f": 373_830 - 35_048 - 2 * 35_048},
    "ply/suzanne.ply": {"v": 1_966, "f": 968},
    "pointclouds/b9_training.ply": {"v": 22_300, "c": 4, "kind": PointCloud},
    "pointclouds/ball.ply": {"v": 31_374, "kind": PointCloud},
    "pointclouds/points.ply": {"v": 4, "kind": PointCloud},
    "textured/bunny10k-textured/bunny10k_textured.obj": {"u": 5_051, "f": 9_999},
    "textured/fuze/fuze.obj": {"u": 502, "f": 1_000},
    "textured/fuze/fuze.ply": {"u": 502, "f": 1_000},
    "textured/spot/spot_quadrangulated.obj": {"u": 2_930, "f": 2_928 * 2},
    "textured/spot/spot_triangulated.obj": {"u": 2_930, "f": 5_856},
    "textured/table-cube/table.obj": {"u": 8, "f": 12},
}
COMPANIONS = {".mtl", ".png", ".bin", ".txt", ".jpg", ".md"}


def test_every_reference_model_is_listed(ref_assets):
    found = set()
    for p in ref_assets.rglob("*"):
        rel = p.relative_to(ref_assets)
        if not p.is_file() or rel.parts[0] in ("broken", "licenses"):
            continue
        if p.stem.upper() == "README":  # documentation, whatever its suffix
            continue
        if p.suffix.lower() in SUPPORTED_SUFFIXES:
            found.add(rel.as_posix())
        else:  # anything else must be a known companion, not an unread model format
            assert p.suffix.lower() in COMPANIONS or p.name in ("SHA256SUMS", "LICENSE"), rel
    assert found == set(ASSETS)


@pytest.mark.parametrize("rel", sorted(ASSETS))
def test_reference_model_loads_with_readme_counts_and_renders(ref_assets, rel):
    exp = ASSETS[rel]
    root = load(ref_assets / rel)
    geoms = [n.geometry for n in root.traverse() if n.geometry is not None]
    assert all(isinstance(g, exp.get("kind", Mesh)) for g in geoms)
    if "v" in exp:
        assert sum(g.vertex_count for g in geoms) == exp["v"]
    if "u" in exp:
        assert len(np.unique(np.round(_world_points(root), 6), axis=0)) == exp["u"]
    if "f" in exp:
        assert sum(g.face_count for g in geoms) == exp["f"]
    if "c" in exp:
        colors = np.concatenate([g.colors for g in geoms])
        assert len(np.unique(colors, axis=0)) == exp["c"]
    # through the CLI's loader: auto-framed, every finite point in view, pixels drawn
    scene, camera = load_source(str(ref_assets / rel))
    r = Renderer(scene, camera, (160, 120), backend="numpy")
    vis = to_host(r.project().visible)
    assert vis.all()
    frame = r.render()
    drawn = (frame.color != background_rgba(scene.background)).any(axis=-1)
    assert drawn.sum() >= min(20, sum(g.vertex_count for g in geoms))


def _gltf_accessor(doc, index):
    """Decode a float VEC3 accessor of an embedded glTF by hand (base64 buffers, stride)."""
    acc = doc["accessors"][index]
    view = doc["bufferViews"][acc["bufferView"]]
    uri = doc["buffers"][view["buffer"]]["uri"]
    data = base64.b64decode(uri.split(",", 1)[1])
    assert acc["componentType"] == 5126 and acc["type"] == "VEC3"
    stride = view.get("byteStride", 12)
    start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
    return np.array([struct.unpack_from("<3f", data, start + i * stride)
                     for i in range(acc["count"])], dtype=np.float64)


def _posed_points(node):
    """(N, 3) float64 world positions of every geometry under ``node`` as drawn: the
    posed vertices (engine.scene.deform.posed_vertices) of each."""
    return np.concatenate([posed_vertices(n)[0] for n in node.traverse()
                           if n.geometry is not None])


def _set_world(node, world):
    """Give ``node`` the world matrix ``world`` (through its parent's)."""
    local = world if node.parent is None else np.linalg.inv(node.parent.world_matrix) @ world
    trs = decompose_trs(local)
    node.position, node.rotation, node.scale = trs["position"], trs["rotation"], trs["scale"]


def test_skinned_and_morphed_models_draw_bind_pose_and_default_weights(ref_assets):
    # SimpleMorph: glTF 2.0 3.7.2.2, position = base + sum(weight_i * target_i), with the
    # mesh's default weights [0.5, 0.5] while no animation drives them
    path = ref_assets / "gltf-khronos/SimpleMorph/SimpleMorph.gltf"
    doc = json.loads(path.read_text())
    prim = doc["meshes"][0]["primitives"][0]
    weights = doc["meshes"][0]["weights"]
    want = _gltf_accessor(doc, prim["attributes"]["POSITION"])
    for w, target in zip(weights, prim["targets"]):
        want += w * _gltf_accessor(doc, target["POSITION"])
    # the tutorial: both targets lift the top vertex, half each
    assert want.tolist() == [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.5, 1.5, 0.0]]
    np.testing.assert_allclose(_posed_points(load(path)), want, atol=1e-6)
    # RiggedSimple: the bind pose is the POSITION accessor itself (every joint at its
    # inverse bind matrix), and 3.7.3.3 says the skinned mesh node's own transform is
    # ignored, so world positions are the raw accessor values
    path = ref_assets / "gltf-khronos/RiggedSimple/RiggedSimple.gltf"
    doc = json.loads(path.read_text())
    prim = doc["meshes"][0]["primitives"][0]
    want = _gltf_accessor(doc, prim["attributes"]["POSITION"])
    model = load(path)
    # the joints at their bind pose: each joint's world matrix = inverse(its IBM)
    skin = next(n.skin for n in model.traverse() if n.skin is not None)
    for joint, ibm in zip(skin.joints, skin.inverse_bind_matrices):
        _set_world(joint, np.linalg.inv(ibm))
    got = _posed_points(model)
    assert got.shape == want.shape == (160, 3)
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_mesh_primitive_modes_keep_one_geometry_per_mode(ref_assets):
    # README: one node per primitive mode 0-6 (POINTS ... TRIANGLE_FAN) on one hexagon
    root = load(ref_assets / "gltf-khronos/MeshPrimitiveModes/MeshPrimitiveModes.gltf")
    geoms = [n.geometry for n in root.traverse() if n.geometry is not None]
    assert len(geoms) == 7


def test_stanford_bunny_keeps_every_referenced_vertex(ref_assets):
    path = ref_assets / "classic/stanford-bunny.obj"
    lines = path.read_text().splitlines()
    idx = np.array([int(t) for ln in lines if ln.startswith("f ") for t in ln.split()[1:]])
    g = load(path).geometry
    # 35,947 `v` lines, of which these are used by faces; trimesh drops the rest
    assert sum(ln.startswith("v ") for ln in lines) == 35_947
    assert g.vertex_count == len(np.unique(idx)) < 35_947


def test_gltf_hierarchy_and_transforms_are_kept(ref_assets):
    path = ref_assets / "gltf/Duck.glb"
    root = load(path)
    tscene = trimesh.load(str(path))
    mesh_nodes = [n for n in root.traverse() if n.geometry is not None]
    assert len(mesh_nodes) == 1
    node = mesh_nodes[0]
    # root 'matrix' scales by 0.01 above the mesh node (README), the camera node is kept
    assert node.parent.parent is root
    np.testing.assert_allclose(node.parent.scale, [0.01] * 3)
    # the file's 3 nodes (trimesh's graph adds its own 'world' root), the model root
    # and the camera, which is now an engine camera under the node that holds it
    assert len(list(root.traverse())) == len(tscene.graph.nodes) + 1
    assert len(root.cameras) == 1 and isinstance(root.cameras[0], PerspectiveCamera)
    mesh_name = next(k for k, v in tscene.graph.transforms.edge_data.items()
                     if v.get("geometry"))[1]
    world, _ = tscene.graph.get(mesh_name)
    np.testing.assert_allclose(node.world_matrix, world, atol=1e-12)
    # the texture is sampled at the UVs: the duck is yellow (R, G >> B) and its bill orange
    c = node.geometry.colors_float
    assert np.median(c[:, 0]) > 0.8 and np.median(c[:, 2]) < 0.3


def test_gltf_parent_matrix_and_base_colour(ref_assets):
    root = load(ref_assets / "gltf/Box.gltf")
    node = next(n for n in root.traverse() if n.geometry is not None)
    # Z-up -> Y-up parent matrix: local +Z of the mesh ends up at world +Y... rows from file
    np.testing.assert_allclose(node.parent.local_matrix[:3, :3],
                               [[1, 0, 0], [0, 0, 1], [0, -1, 0]], atol=1e-12)
    # baseColorFactor (0.8, 0, 0, 1) is linear (glTF 2.0, 3.9.2); engine colours are
    # sRGB-encoded: 0.8 linear = 1.055 * 0.8 ** (1 / 2.4) - 0.055 = 0.9063 encoded
    np.testing.assert_allclose(node.geometry.colors_float[0], [0.9063, 0, 0, 1], atol=1 / 255)


def _ply_dtype(header_lines):
    types = {"double": "<f8", "float": "<f4", "uchar": "u1", "int": "<i4"}
    return np.dtype([(ln.split()[2], types[ln.split()[1]]) for ln in header_lines
                     if ln.startswith("property")])


def test_b9_georeferenced_points_keep_values_colours_and_precision(ref_assets, tmp_path):
    path = ref_assets / "pointclouds/b9_training.ply"
    raw = path.read_bytes()
    end = raw.index(b"end_header\n") + len(b"end_header\n")
    header = raw[:end].decode().splitlines()
    dtype = _ply_dtype(header)
    rec = np.frombuffer(raw[end:], dtype=dtype)  # independent decode of the body
    assert len(rec) == 22_300
    g = load(path).geometry
    xyz = np.stack([rec["x"], rec["y"], rec["z"]], axis=1)
    # recentred on the box midpoint; float32 offsets keep ~micrometre precision
    np.testing.assert_allclose(g.origin, (xyz.min(0) + xyz.max(0)) / 2)
    np.testing.assert_allclose(g.positions + g.origin, xyz, atol=1e-4, rtol=0)
    rgb = np.stack([rec["red"], rec["green"], rec["blue"]], axis=1)
    np.testing.assert_allclose(g.colors_float[:, :3], rgb / 255.0, atol=1e-6)

    # the same file with two extra points 0.01 m apart near x = 596,650
    a = rec[0].copy()
    a["x"], a["y"] = 596_650.000, 243_650.0
    b = a.copy()
    b["x"] = 596_650.010
    extra = np.array([a, b], dtype=dtype)
    text = raw[:end].decode().replace("element vertex 22300", "element vertex 22302")
    f = tmp_path / "b9_plus.ply"
    f.write_bytes(text.encode() + raw[end:] + extra.tobytes())
    scene, camera = load_source(str(f))
    camera.position = (596_650.005, 243_650.0, float(a["z"]) + 0.2)
    camera.look_at((596_650.005, 243_650.0, float(a["z"])))
    camera.set_clip(0.01, 1000.0)
    camera.fov_y = 10.0
    r = Renderer(scene, camera, (1000, 1000), backend="numpy")
    p = r.project()
    xy = to_host(p.screen_xy)[-2:]
    assert to_host(p.visible)[-2:].all()
    px_per_m = 1000 / (2 * 0.2 * np.tan(np.radians(5)))
    assert (xy[1, 0] - xy[0, 0]) / px_per_m == pytest.approx(0.01, abs=0.001)


def test_broken_reference_files_raise_clear_errors(ref_assets):
    pond = ref_assets / "broken/pond.0.ply"
    with pytest.raises(LoadError) as e:
        load(pond)
    # 70,051 records x 31 B declared; 69 bytes were lost (README)
    _assert_one_line_error(e, pond, "truncated binary PLY", "70,051 'vertex' x 31 B",
                           "2,171,581", "69 missing")
    fuze = ref_assets / "broken/fuze_ascii.ply"
    with pytest.raises(LoadError) as e:
        load(fuze)
    # 15 tokens declared per face line (3 + 1, 6 + 1, 4 colours), 21 present
    _assert_one_line_error(e, fuze, "'face' 0 has 21 values", "declares 15 values")


def test_missing_optional_package_is_named():
    from engine.io.loaders import _one_line

    msg = _one_line(ModuleNotFoundError("No module named 'scipy'"))
    assert "optional package 'scipy'" in msg and "pip install scipy" in msg


@pytest.mark.parametrize("position_hash", [None, lambda bits: np.zeros(len(bits), np.uint64)])
def test_same_positions_names_the_first_vertex_at_each_position(position_hash):
    # the hash sort, and (a hash shared by every vertex) the lexicographic sort it falls
    # back to: -0.0 is 0.0, a NaN matches nothing, the first index of a position leads
    from engine.io.loaders import _same_positions

    v = np.array([[1, 2, 3], [0, 0, 0], [1, 2, 3], [-0.0, 0, -0.0], [np.nan, 0, 0],
                  [1, 2, 3.0000001], [0, 0, 0]])
    got = _same_positions(v, position_hash)
    np.testing.assert_array_equal(got, [0, 1, 0, 1, 4, 5, 1])
    # two NaN rows of the same bits share a hash: the lexicographic sort, the same rule
    twice = np.concatenate([v, [[np.nan, 0, 0]]])
    np.testing.assert_array_equal(_same_positions(twice, position_hash),
                                  [0, 1, 0, 1, 4, 5, 1, 7])


def test_back_faces_are_culled_only_on_closed_meshes(tmp_path, ref_assets):
    from engine.io.loaders import is_closed

    box = trimesh.creation.box()
    assert is_closed(box.faces, box.vertices)
    assert not is_closed(box.faces[:-1], box.vertices)  # one triangle missing: a hole
    flipped = box.faces.copy()
    flipped[0] = flipped[0, ::-1]  # one triangle wound the other way
    assert not is_closed(flipped, box.vertices)
    box.export(tmp_path / "box.obj")
    assert load(tmp_path / "box.obj").geometry.material.double_sided is False
    quad = _write(tmp_path / "quad.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\n")
    assert load(quad).geometry.material.double_sided is True
    # files split vertices along UV/normal seams: closedness is by position
    box_node = next(n for n in load(ref_assets / "gltf/Box.gltf").traverse() if n.geometry)
    assert box_node.geometry.vertex_count == 24 and not box_node.geometry.material.double_sided
    bunny = load(ref_assets / "classic/stanford-bunny.obj").geometry  # open at the base
    assert bunny.material.double_sided
