"""Point-cloud formats: LAS/LAZ, PCD, XYZ/PTS/TXT. Files come from the libraries' own
writers (laspy, pypcd4) and, so that a misread the writer would mirror is caught, from
the formats' specifications byte by byte with known values."""

from __future__ import annotations

import logging
import math
import struct

import laspy
import numpy as np
import pypcd4
import pytest

from engine.cli import main
from engine.errors import LoadError
from engine.io import load
from engine.io.pointclouds import CLASS_COLORS, class_colors, intensity_colors


def _world(model):
    g = model.geometry
    p = g.positions.astype(np.float64) + g.origin
    m = model.world_matrix
    return p @ m[:3, :3].T + m[:3, 3]


def _error(path, *words) -> str:
    with pytest.raises(LoadError) as e:
        load(path)
    msg = str(e.value)
    assert "\n" not in msg and str(path) in msg
    for w in words:
        assert w in msg, msg
    return msg


# ------------------------------------------------------------------------ LAS/LAZ
XYZ = np.array([[596_650.01, 243_650.02, 10.5], [596_651.5, 243_649.0, 12.25],
                [596_649.0, 243_652.75, 9.0]])
RGB16 = np.array([[65535, 0, 0], [0, 65535, 0], [257 * 10, 257 * 20, 257 * 30]])


def _laspy_file(path, point_format=3, rgb=RGB16, classes=(2, 6, 9)):
    header = laspy.LasHeader(point_format=point_format, version="1.2")
    header.scales = [0.01, 0.01, 0.01]
    header.offsets = [596_000.0, 243_000.0, 0.0]
    las = laspy.LasData(header)
    las.x, las.y, las.z = XYZ[:, 0], XYZ[:, 1], XYZ[:, 2]
    las.intensity = np.array([100, 200, 300], np.uint16)
    las.classification = np.array(classes, np.uint8)
    if rgb is not None:
        las.red, las.green, las.blue = rgb[:, 0], rgb[:, 1], rgb[:, 2]
    las.write(str(path))
    return path


@pytest.mark.parametrize("suffix", [".las", ".laz"])
def test_las_and_laz_from_laspy(tmp_path, suffix):
    model = load(_laspy_file(tmp_path / f"p{suffix}"), up="y")
    g = model.geometry
    np.testing.assert_allclose(g.positions + g.origin, XYZ, atol=1e-6)  # scale 0.01
    assert g.origin.dtype == np.float64 and abs(g.origin[0] - 596_650.25) < 1e-9
    assert g.colors[:, :3].tolist() == [[255, 0, 0], [0, 255, 0], [10, 20, 30]]
    assert g.attributes["intensity"].tolist() == [100, 200, 300]
    assert g.attributes["classification"].tolist() == [2, 6, 9]


def test_las_is_z_up_by_default(tmp_path):
    path = _laspy_file(tmp_path / "p.las")
    # the engine is +Y up: (x, y, z) -> (x, z, -y)
    np.testing.assert_allclose(_world(load(path)), XYZ[:, [0, 2, 1]] * [1, 1, -1], atol=1e-6)
    np.testing.assert_allclose(_world(load(path, up="y")), XYZ, atol=1e-6)


def test_las_colour_by_classification_then_intensity(tmp_path):
    g = load(_laspy_file(tmp_path / "c.las", point_format=1, rgb=None)).geometry
    assert g.colors[:, :3].tolist() == [list(CLASS_COLORS[c]) for c in (2, 6, 9)]
    g = load(_laspy_file(tmp_path / "i.las", point_format=1, rgb=None,
                         classes=(1, 1, 0))).geometry
    # unclassified (classes 0/1 only): intensity 100, 200, 300 over its 1st-99th percentiles
    lo, hi = np.percentile([100, 200, 300], [1, 99])
    np.testing.assert_array_equal(g.colors[:, 0], np.rint(np.clip(
        (np.array([100, 200, 300]) - lo) / (hi - lo), 0, 1) * 255))
    assert g.colors[0, 0] == 0 and g.colors[2, 0] == 255


def _las_bytes(points, fmt=2, scale=(0.01, 0.01, 0.01), offset=(1000.0, 2000.0, 0.0),
               count=None):
    """LAS 1.2 written from the specification: a 227-byte header and point records of
    format 0 (20 bytes) or 2 (26 bytes, with RGB)."""
    size = {0: 20, 2: 26}[fmt]
    n = len(points) if count is None else count
    head = bytearray(227)
    head[0:4] = b"LASF"
    head[24:26] = bytes([1, 2])                               # version 1.2
    head[26:58] = b"frustum test".ljust(32, b"\0")            # system identifier
    struct.pack_into("<HIIBHI", head, 94, 227, 227, 0, fmt, size, n)
    struct.pack_into("<3d3d", head, 131, *scale, *offset)
    body = b""
    for p in points:
        body += struct.pack("<iiiHBBbBH", *p[:9])
        if fmt == 2:
            body += struct.pack("<HHH", *p[9:12])
    return bytes(head) + body


# X, Y, Z (scaled ints), intensity, return bits, class, scan angle, user, source, R, G, B
LAS_POINTS = [(12345, -500, 250, 7, 0b00001001, 2, -5, 0, 1, 65535, 32768, 0),
              (0, 0, 0, 65535, 0b00001001, 6, 0, 0, 1, 0, 0, 65535)]


def test_las_written_byte_by_byte(tmp_path):
    f = tmp_path / "spec.las"
    f.write_bytes(_las_bytes(LAS_POINTS))
    g = load(f, up="y").geometry
    # X = 12345 * 0.01 + 1000 = 1123.45, Y = -500 * 0.01 + 2000 = 1995, Z = 2.5
    np.testing.assert_allclose(g.positions + g.origin, [[1123.45, 1995.0, 2.5],
                                                        [1000.0, 2000.0, 0.0]], atol=1e-6)
    assert g.colors[:, :3].tolist() == [[255, 128, 0], [0, 0, 255]]  # 32768 / 257 = 127.5
    assert g.attributes["intensity"].tolist() == [7, 65535]
    assert g.attributes["classification"].tolist() == [2, 6]
    assert g.attributes["return_number"].tolist() == [1, 1]
    # the same records compressed by lazrs read back to the same values
    laz = tmp_path / "spec.laz"
    laspy.read(str(f)).write(str(laz))
    g2 = load(laz, up="y").geometry
    np.testing.assert_allclose(g2.positions + g2.origin, g.positions + g.origin, atol=1e-9)
    assert g2.colors.tolist() == g.colors.tolist()


def test_las_8_bit_colours_in_16_bit_fields(tmp_path):
    pts = [p[:9] + (200, 100, 50) for p in LAS_POINTS]
    f = tmp_path / "c8.las"
    f.write_bytes(_las_bytes(pts))
    assert load(f).geometry.colors[:, :3].tolist() == [[200, 100, 50]] * 2


@pytest.mark.parametrize("mutate,words", [
    (lambda b: b[:-10], [("truncated LAS: the header declares 2 points x 26 bytes from byte "
                         "227 = 279 bytes, but the file has 269 (10 missing)")]),
    (lambda b: b[:107] + struct.pack("<I", 4_000_000_000) + b[111:],
     ["truncated LAS: the header declares 4,000,000,000 points"]),
    (lambda b: b"LASX" + b[4:], ["not a LAS file (it does not start with 'LASF')"]),
    (lambda b: b[:100], ["truncated LAS header: 100 bytes"]),
    (lambda b: b[:131] + struct.pack("<d", 0.0) + b[139:],
     ["LAS header scale factors [0.0, 0.01, 0.01] must be finite and non-zero"]),
])
def test_bad_las_files(tmp_path, mutate, words):
    f = tmp_path / "bad.las"
    f.write_bytes(mutate(_las_bytes(LAS_POINTS)))
    _error(f, *words)


def test_laz_with_a_count_beyond_its_chunks_allocates_nothing(tmp_path):
    f = _laspy_file(tmp_path / "p.laz")
    data = bytearray(f.read_bytes())
    struct.pack_into("<I", data, 107, 4_000_000_000)
    f.write_bytes(bytes(data))
    _error(f, "corrupt LAZ: the header declares 4,000,000,000 points but the chunk table "
              "lists 1 chunks of at most 50,000 points")
    struct.pack_into("<I", data, 107, 40_000)  # plausible, but the data holds 3
    f.write_bytes(bytes(data))
    _error(f, "the LAS point data ends or breaks after 0 of the 40,000 points")


def test_palettes():
    assert class_colors([2, 200])[0, :3].tolist() == [166, 118, 64]
    assert class_colors([200]).tolist() == class_colors([200]).tolist()  # fixed per code
    assert intensity_colors([5, 5, 5]) is None


# ------------------------------------------------------------------------------ PCD
PTS = np.array([[0.5, -1.25, 3.0], [1.0, 2.0, -0.5], [np.nan, np.nan, np.nan]], np.float32)
RGB = np.array([[255, 0, 0], [10, 200, 30], [0, 0, 0]])


@pytest.mark.parametrize("encoding", ["binary", "binary_compressed"])
def test_pcd_from_pypcd4(tmp_path, encoding):
    pc = pypcd4.PointCloud.from_xyzrgb_points(
        np.column_stack([PTS, pypcd4.PointCloud.encode_rgb(RGB)]))
    f = tmp_path / f"{encoding}.pcd"
    pc.save(f, encoding=pypcd4.Encoding(encoding))
    g = load(f).geometry
    np.testing.assert_allclose(g.positions[:2] + g.origin, PTS[:2], atol=1e-6)
    assert np.isnan(g.positions[2]).all()  # PCL's invalid point stays invisible
    assert g.colors[:2, :3].tolist() == RGB[:2].tolist()


def test_pcd_ascii_from_pypcd4_with_intensity(tmp_path):
    pc = pypcd4.PointCloud.from_xyzi_points(np.column_stack([PTS[:2], [10.0, 20.0]]))
    f = tmp_path / "a.pcd"
    pc.save(f, encoding=pypcd4.Encoding.ASCII)
    g = load(f).geometry
    np.testing.assert_allclose(g.positions + g.origin, PTS[:2], atol=1e-6)
    assert g.attributes["intensity"].tolist() == [10.0, 20.0]
    assert g.colors[:, 0].tolist() == [0, 255]


def _pcd_header(fields, size, type_, count, n, data):
    return (f"# .PCD v0.7 - Point Cloud Data file format\nVERSION 0.7\nFIELDS {fields}\n"
            f"SIZE {size}\nTYPE {type_}\nCOUNT {count}\nWIDTH {n}\nHEIGHT 1\n"
            f"VIEWPOINT 0 0 0 1 0 0 0\nPOINTS {n}\nDATA {data}\n").encode()


def test_pcd_and_ply_normals_light_the_points(tmp_path, ref_assets):
    """PCL's normal_x/y/z columns and PLY's nx/ny/nz become PointCloud.normals (they
    light the points, engine.render.sprites); a zero normal leaves them attributes."""
    f = tmp_path / "n.pcd"
    f.write_bytes(_pcd_header("x y z normal_x normal_y normal_z", "4 4 4 4 4 4",
                              "F F F F F F", "1 1 1 1 1 1", 2, "ascii")
                  + b"0 0 0 0 0 2\n1 0 0 0.5 0.5 0\n")
    g = load(f).geometry
    assert g.normals.tolist() == [[0, 0, 2], [0.5, 0.5, 0]]
    assert "normal_x" not in g.attributes
    f.write_bytes(_pcd_header("x y z normal_x normal_y normal_z", "4 4 4 4 4 4",
                              "F F F F F F", "1 1 1 1 1 1", 2, "ascii")
                  + b"0 0 0 0 0 0\n1 0 0 0.5 0.5 0\n")
    g = load(f).geometry
    assert g.normals is None and g.attributes["normal_z"].tolist() == [0, 0]
    ply = load(ref_assets / "pointclouds/points.ply").geometry  # rgb, then nx ny nz
    assert ply.normals.tolist() == [[0, 1, 0], [0, 0, 1], [1, 0, 0], [1, 1, 0]]


def _lzf_literals(data: bytes) -> bytes:
    """LZF (liblzf) stream of literal runs only: a control byte c < 32 is followed by
    c + 1 literal bytes."""
    out = bytearray()
    for i in range(0, len(data), 32):
        part = data[i:i + 32]
        out.append(len(part) - 1)
        out += part
    return bytes(out)


def test_pcd_written_byte_by_byte(tmp_path):
    packed = [(255 << 16) | (128 << 8) | 1, (0 << 16) | (0 << 8) | 255]
    # ascii: PCL writes a packed float colour as its uint32 value in decimal
    f = tmp_path / "a.pcd"
    f.write_bytes(_pcd_header("x y z rgb", "4 4 4 4", "F F F F", "1 1 1 1", 2, "ascii")
                  + f"1.5 2 -3 {packed[0]}\n0 0 0 {packed[1]}\n".encode())
    g = load(f).geometry
    np.testing.assert_allclose(g.positions + g.origin, [[1.5, 2, -3], [0, 0, 0]])
    assert g.colors[:, :3].tolist() == [[255, 128, 1], [0, 0, 255]]
    # binary: records of x y z (float32) and rgb (the uint32 bits stored as a float32)
    rec = b"".join(struct.pack("<3fI", *p, c) for p, c in zip([(1.5, 2, -3), (0, 0, 0)],
                                                              packed))
    f = tmp_path / "b.pcd"
    f.write_bytes(_pcd_header("x y z rgb", "4 4 4 4", "F F F U", "1 1 1 1", 2, "binary")
                  + rec)
    g = load(f).geometry
    assert g.colors[:, :3].tolist() == [[255, 128, 1], [0, 0, 255]]
    # binary_compressed: sizes, then the LZF of the columns (all x, all y, all z, all rgb)
    cols = (struct.pack("<2f", 1.5, 0) + struct.pack("<2f", 2, 0) + struct.pack("<2f", -3, 0)
            + struct.pack("<2I", *packed))
    comp = _lzf_literals(cols)
    f = tmp_path / "c.pcd"
    f.write_bytes(_pcd_header("x y z rgb", "4 4 4 4", "F F F U", "1 1 1 1", 2,
                              "binary_compressed") + struct.pack("<II", len(comp), len(cols))
                  + comp)
    g = load(f).geometry
    np.testing.assert_allclose(g.positions + g.origin, [[1.5, 2, -3], [0, 0, 0]])
    assert g.colors[:, :3].tolist() == [[255, 128, 1], [0, 0, 255]]


def test_pcd_fields_with_count_and_other_types(tmp_path):
    rec = b"".join(struct.pack("<dddHbb", x, 1.0, 2.0, i, 7, -7) for x, i in ((1.0, 10),
                                                                              (2.0, 20)))
    f = tmp_path / "t.pcd"
    f.write_bytes(_pcd_header("x y z intensity pair", "8 8 8 2 1", "F F F U I",
                              "1 1 1 1 2", 2, "binary") + rec)
    g = load(f).geometry
    np.testing.assert_allclose(g.positions + g.origin, [[1, 1, 2], [2, 1, 2]])
    assert g.attributes["pair"].tolist() == [[7, -7], [7, -7]]
    assert g.attributes["intensity"].tolist() == [10, 20]


@pytest.mark.parametrize("content,words", [
    (_pcd_header("x y z", "4 4 4", "F F F", "1 1 1", 3, "binary") + b"\0" * 20,
     ["truncated PCD: 3 points x 12 bytes = 36 bytes of data declared, 20 present"]),
    (_pcd_header("x y z", "4 4 4", "F F F", "1 1 1", 10**12, "binary"),
     ["truncated PCD: 1,000,000,000,000 points x 12 bytes"]),
    (_pcd_header("x y", "4 4", "F F", "1 1", 1, "binary") + b"\0" * 8,
     ["PCD file has no 'z' field"]),
    (_pcd_header("x y z", "4 4", "F F F", "1 1 1", 1, "binary"),
     ["PCD header line 4: SIZE has 2 values for 3 FIELDS"]),
    (_pcd_header("x y z", "3 4 4", "F F F", "1 1 1", 1, "binary"),
     ["field 'x' has TYPE F SIZE 3, which PCD does not define"]),
    (_pcd_header("x y z", "4 4 4", "F F F", "1 1 1", 2, "ascii") + b"1 2 3\n4 5\n",
     ["line 13 has 2 values, expected 3"]),
    (_pcd_header("x y z", "4 4 4", "F F F", "1 1 1", 2, "ascii") + b"1 2 3\n4 5 x\n",
     ["line 13: 'x' is not a number"]),
    (_pcd_header("x y z", "4 4 4", "F F F", "1 1 1", 3, "ascii") + b"1 2 3\n",
     ["truncated PCD: POINTS declares 3 lines of data, the file has 1"]),
    (_pcd_header("x y z", "4 4 4", "F F F", "1 1 1", 1, "binary_compressed")
     + struct.pack("<II", 5, 12_000_000) + b"\0" * 5,
     ["decompresses to 12,000,000 bytes, but 1 points x 12 bytes = 12"]),
    (_pcd_header("x y z", "4 4 4", "F F F", "1 1 1", 10**6, "binary_compressed")
     + struct.pack("<II", 5, 12_000_000) + b"\0" * 5,
     ["5 compressed bytes cannot hold 12,000,000 bytes"]),
    (_pcd_header("x y z", "4 4 4", "F F F", "1 1 1", 1, "binary_compressed")
     + struct.pack("<II", 4, 12) + b"\x1f\0\0\0",
     ["corrupt PCD: the compressed block"]),
    (b"VERSION 0.7\nFIELDS x y z\nWIDTH 1\n", ["PCD header has no DATA line"]),
    (b"VERSION 0.7\nFIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nWIDTH 2\nPOINTS 3\nDATA ascii\n",
     ["POINTS 3 is not WIDTH x HEIGHT = 2 x 1"]),
    (b"\x89PNG\r\n\x1a\nrest", ["PCD header line 1 is not ASCII text (not a PCD file?)"]),
])
def test_bad_pcd_files(tmp_path, content, words):
    f = tmp_path / "bad.pcd"
    f.write_bytes(content)
    _error(f, *words)


# ------------------------------------------------------------------ XYZ/PTS/TXT
@pytest.mark.parametrize("name,text,xyz,rgb", [
    ("a.xyz", "0 0 0\n1 2 3\n", [[0, 0, 0], [1, 2, 3]], None),
    ("b.xyz", "0 0 0 255 128 0\n1 2 3 0 0 255\n", [[0, 0, 0], [1, 2, 3]],
     [[255, 128, 0], [0, 0, 255]]),
    ("c.txt", "0,0,0,1.0,0.5,0\n1,2,3,0,0,1\n", [[0, 0, 0], [1, 2, 3]],
     [[255, 128, 0], [0, 0, 255]]),                                  # 0-1 colours, commas
    ("d.pts", "2\n0 0 0 -100 255 128 0\n1 2 3 50 0 0 255\n", [[0, 0, 0], [1, 2, 3]],
     [[255, 128, 0], [0, 0, 255]]),                                  # Leica PTS
    ("e.txt", "//X,Y,Z,R,G,B,Nx,Ny,Nz\n0,0,0,255,128,0,0,0,1\n1,2,3,0,0,255,0,0,1\n",
     [[0, 0, 0], [1, 2, 3]], [[255, 128, 0], [0, 0, 255]]),          # CloudCompare
    ("f.xyz", "x y z red green blue\n0 0 0 65535 32896 0\n1 2 3 0 0 65535\n",
     [[0, 0, 0], [1, 2, 3]], [[255, 128, 0], [0, 0, 255]]),          # 16-bit colours
    ("g.xyz", "# scan\n\n0 0 0\n\n1 2 3\n", [[0, 0, 0], [1, 2, 3]], None),
])
def test_text_point_clouds(tmp_path, name, text, xyz, rgb):
    f = tmp_path / name
    f.write_text(text)
    g = load(f).geometry
    np.testing.assert_allclose(g.positions + g.origin, xyz)
    if rgb is None:
        assert g.colors is None
    else:
        assert g.colors[:, :3].tolist() == rgb


def test_pts_intensity_and_blocks(tmp_path):
    f = tmp_path / "s.pts"
    f.write_text("2\n0 0 0 -2048\n1 0 0 2047\n1\n2 0 0 0\n")
    g = load(f).geometry
    assert g.vertex_count == 3
    assert g.attributes["intensity"].tolist() == [-2048, 2047, 0]
    f.write_text("3\n0 0 0 1\n1 0 0 1\n")
    _error(f, "line 1 declares 3 points but 2 follow")


@pytest.mark.parametrize("text,words", [
    ("0 0 0\n1 2\n", ["line 2 has 2 values, expected 3"]),
    ("0 0 0\n1 2 zz\n", ["line 2: 'zz' is not a number"]),
    ("1 2\n3 4\n", ["line 1 has 2 values; a point needs x y z"]),
    ("# nothing\n", ["the file contains no vertices"]),
    ("0 0 0 300 0 70000\n", ["line 1: colour values must be 0-1, 0-255 or 0-65535"]),
    ("a b c\n1 2 3\n", ["the header names no 'x' column"]),
])
def test_bad_text_point_clouds(tmp_path, text, words):
    f = tmp_path / "bad.xyz"
    f.write_text(text)
    _error(f, *words)


def test_up_z_rotates_into_y_up(tmp_path):
    f = tmp_path / "u.xyz"
    f.write_text("0 0 1\n1 0 0\n0 1 0\n")
    np.testing.assert_allclose(_world(load(f, up="z")), [[0, 1, 0], [1, 0, 0], [0, 0, -1]],
                               atol=1e-12)
    np.testing.assert_allclose(_world(load(f)), [[0, 0, 1], [1, 0, 0], [0, 1, 0]])
    with pytest.raises(ValueError, match="up must be 'y', 'z' or None, got 'x'"):
        load(f, up="x")


# ----------------------------------------------------------------------------- CLI
@pytest.mark.parametrize("name", ["p.las", "p.laz", "p.pcd", "p.xyz"])
def test_point_clouds_render_from_the_cli(tmp_path, capsys, name):
    f = tmp_path / name
    if f.suffix in (".las", ".laz"):
        _laspy_file(f)
    elif f.suffix == ".pcd":
        pypcd4.PointCloud.from_xyz_points(PTS[:2]).save(f)
    else:
        f.write_text("0 0 0\n1 2 3\n")
    out = tmp_path / "x.png"
    for up in ([], ["--up", "z"], ["--up", "y"]):
        rc = main(["render", str(f), "--out", str(out), "--size", "64x48", "--backend",
                   "numpy", *up])
        assert rc == 0
    assert f"{3 if f.suffix in ('.las', '.laz') else 2} vertices" in capsys.readouterr().out


def test_cli_up_changes_the_view(tmp_path):
    from PIL import Image

    f = tmp_path / "wall.xyz"  # a vertical wall in a Z-up file: x 0..1, z 0..1
    f.write_text("".join(f"{x / 20} 0 {z / 20}\n" for x in range(21) for z in range(21)))
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    common = ["--size", "64x64", "--backend", "numpy", "--camera", "0,0"]
    assert main(["render", str(f), "--out", str(a), *common]) == 0
    assert main(["render", str(f), "--out", str(b), "--up", "z", *common]) == 0
    # seen from the front (+Z): as-is the wall is edge-on (a line); Z-up it faces the camera
    drawn = [int((np.asarray(Image.open(p))[..., :3] > 40).any(-1).sum()) for p in (a, b)]
    assert drawn[1] > 4 * drawn[0]
    assert math.isfinite(drawn[0])


def test_point_cloud_logs_nothing_when_all_is_drawn(tmp_path, caplog):
    f = tmp_path / "n.xyz"
    f.write_text("0 0 0 1 2\n")
    with caplog.at_level(logging.WARNING, logger="engine"):
        model = load(f)
    assert model.warnings == [(f"{f}: not drawn: columns 4 to 5 (not understood without a "
                              "header line)")]
