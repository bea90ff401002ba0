"""Repairs and checks for OBJ and PLY files, applied before trimesh reads them.

trimesh (5.2) reads these formats well, but measured against real exporters it gets a
few cases wrong; this module fixes them in our layer instead of forking the reader:

OBJ (Wavefront OBJ spec, Appendix B1 of the Wavefront Advanced Visualizer manual):
  - A negative index ``-k`` means "the k-th most recent vertex *at that line*".
    trimesh resolves it against the final vertex count, so two ``f -3 -2 -1`` after
    two groups of three ``v`` both become face (0, 1, 2). We rewrite negative indices
    of ``f``/``l``/``p`` lines as absolute ones, counting ``v``/``vt``/``vn`` as we go.
  - ``v x y z w`` is a homogeneous point; trimesh drops ``w``. We write (x/w, y/w, z/w).
    ``w = 0`` (a point at infinity) cannot be drawn and becomes a NaN (invisible) vertex.
  - ``v x y z r g b`` colours are floats in [0, 1] by convention, but some exporters
    write 0-255; trimesh then clips them all to 255. When any colour in the file is > 1
    the whole file is taken as 0-255 and divided by 255.
  - Text that is not UTF-8 (e.g. Latin-1 from 3ds Max) makes trimesh need an optional
    charset detector; we decode it ourselves (UTF-8, else Latin-1, which never fails).

PLY (Greg Turk's PLY format description, 1994):
  - The header is parsed and checked here so a malformed file gets an error that says
    what is wrong: a truncated binary body (the header declares more bytes than
    follow), and ASCII lines whose token count differs from what the header declares
    (trimesh ignores extra tokens and loads such files silently wrong).
  - ``tristrips`` elements (triangle strips with -1 restart markers, as in Cyberware
    scans) are ignored by trimesh; ``tristrip_faces`` turns them into triangles.
  - In binary PLY trimesh assumes every face list has the length of the first one, so
    triangles mixed with quads or n-gons fail as "unexpected length";
    ``fan_binary_ply_faces`` rewrites such a file with every polygon split into a fan.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import LoadError

__all__ = [
    "PlyElement",
    "PlyHeader",
    "PlyProperty",
    "check_ply_body",
    "decode_text",
    "fan_binary_ply_faces",
    "normalize_obj",
    "read_ply_header",
    "tristrip_faces",
]


# ------------------------------------------------------------------------------ OBJ
def decode_text(data: bytes) -> str:
    """Bytes of a text file -> str: UTF-8 (a BOM is dropped), else Latin-1."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


_NEG_INDEX = re.compile(r"^[ \t]*[fpl][ \t][^\n]*[ \t/]-\d", re.MULTILINE)
_V_WITH_W = re.compile(r"^[ \t]*v(?:[ \t]+\S+){4}[ \t]*$", re.MULTILINE)
_V_WITH_RGB = re.compile(r"^[ \t]*v(?:[ \t]+\S+){3}[ \t]+(\S+)[ \t]+(\S+)[ \t]+(\S+)[ \t]*$", re.MULTILINE)


def _absolute_ref(token: str, counts: tuple[int, int, int]) -> str:
    """'v/vt/vn' reference with negative parts -> absolute 1-based parts."""
    parts = token.split("/")
    for i, p in enumerate(parts[:3]):
        if p.startswith("-"):
            parts[i] = str(int(p) + counts[i] + 1)
    return "/".join(parts)


def _vertex_over_w(tokens: list[str]) -> str:
    x, y, z, w = (float(t) for t in tokens[1:5])
    if w == 0.0:
        return "v nan nan nan"
    return f"v {x / w!r} {y / w!r} {z / w!r}"


def normalize_obj(text: str) -> str:
    """OBJ text -> equivalent OBJ text that trimesh reads correctly (see module doc).

    Line endings become LF and backslash line continuations are joined. Text needing no
    repair is returned without a per-line pass. Raises ValueError for a non-numeric
    coordinate or index on a line that needs rewriting.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\\\n", " ")
    fix_neg = _NEG_INDEX.search(text) is not None
    fix_w = _V_WITH_W.search(text) is not None
    rgb = _V_WITH_RGB.findall(text)
    scale_rgb = bool(rgb) and float(np.max(np.asarray(rgb, dtype=np.float64))) > 1.0
    if not (fix_neg or fix_w or scale_rgb):
        return text
    out = []
    nv = nvt = nvn = 0
    for line in text.split("\n"):
        tokens = line.split()
        key = tokens[0] if tokens else ""
        if key == "v":
            nv += 1
            if len(tokens) == 5:
                line = _vertex_over_w(tokens)
            elif len(tokens) == 7 and scale_rgb:
                r, g, b = (float(t) / 255.0 for t in tokens[4:7])
                line = " ".join(tokens[:4]) + f" {r!r} {g!r} {b!r}"
        elif key == "vt":
            nvt += 1
        elif key == "vn":
            nvn += 1
        elif fix_neg and key in ("f", "l", "p"):
            line = key + " " + " ".join(_absolute_ref(t, (nv, nvt, nvn)) for t in tokens[1:])
        out.append(line)
    return "\n".join(out)


# ------------------------------------------------------------------------------ PLY
# PLY scalar types (the 1994 names and the sized aliases real exporters write).
_PLY_TYPES = {
    "char": "i1", "uchar": "u1", "short": "i2", "ushort": "u2", "int": "i4",
    "uint": "u4", "float": "f4", "double": "f8", "int8": "i1", "uint8": "u1",
    "int16": "i2", "uint16": "u2", "int32": "i4", "uint32": "u4", "int64": "i8",
    "uint64": "u8", "float16": "f2", "float32": "f4", "float64": "f8",
}
_MAX_HEADER = 1 << 20


@dataclass
class PlyProperty:
    """One property: ``dtype`` is a NumPy type code; lists also have ``count_dtype``."""

    name: str
    dtype: str
    count_dtype: str | None = None

    @property
    def is_list(self) -> bool:
        return self.count_dtype is not None


@dataclass
class PlyElement:
    name: str
    count: int
    properties: list[PlyProperty] = field(default_factory=list)


@dataclass
class PlyHeader:
    """Parsed PLY header. ``data_offset`` is the byte where the body starts and
    ``header_lines`` the number of text lines before it."""

    format: str
    elements: list[PlyElement]
    data_offset: int
    header_lines: int


def read_ply_header(path: Path) -> PlyHeader:
    """Parse and check the header of the PLY file at ``path``.

    Raises LoadError naming the file when the magic line, the format line, an element
    or property line is wrong, or when no ``end_header`` appears in the first 1 MiB.
    """
    with open(path, "rb") as fh:
        head = fh.read(_MAX_HEADER)
    if not head:
        raise LoadError(f"{path}: the file is empty")
    if not head.startswith(b"ply"):
        raise LoadError(f"{path}: not a PLY file (it does not start with 'ply')")
    m = re.search(rb"(?m)^end_header[ \t]*\r?\n", head)
    if m is None:
        raise LoadError(f"{path}: PLY header has no 'end_header' line (truncated header?)")
    lines = decode_text(head[: m.start()]).splitlines()
    fmt = None
    elements: list[PlyElement] = []
    for no, line in enumerate(lines, start=1):
        tok = line.split()
        if not tok or tok[0] in ("ply", "comment", "obj_info"):
            continue
        bad = LoadError(f"{path}: PLY header line {no} is malformed: {line.strip()!r}")
        if tok[0] == "format":
            if len(tok) != 3 or tok[1] not in ("ascii", "binary_little_endian",
                                              "binary_big_endian"):
                raise bad
            fmt = tok[1]
        elif tok[0] == "element":
            if len(tok) != 3 or not tok[2].isdigit():
                raise bad
            elements.append(PlyElement(tok[1], int(tok[2])))
        elif tok[0] == "property":
            if not elements:
                raise LoadError(f"{path}: PLY header line {no}: property before any element")
            if len(tok) == 5 and tok[1] == "list":
                types, name = tok[2:4], tok[4]
            elif len(tok) == 3:
                types, name = tok[1:2], tok[2]
            else:
                raise bad
            unknown = [t for t in types if t not in _PLY_TYPES]
            if unknown:
                raise LoadError(f"{path}: PLY header line {no}: unknown type {unknown[0]!r}")
            if len(types) == 2:
                prop = PlyProperty(name, _PLY_TYPES[types[1]], _PLY_TYPES[types[0]])
            else:
                prop = PlyProperty(name, _PLY_TYPES[types[0]])
            elements[-1].properties.append(prop)
        else:
            raise bad
    if fmt is None:
        raise LoadError(f"{path}: PLY header has no 'format' line")
    return PlyHeader(fmt, elements, m.end(), len(lines) + 1)


def _describe(el: PlyElement) -> str:
    return ", ".join(("list " if p.is_list else "") + p.name for p in el.properties)


def _check_ascii(path: Path, header: PlyHeader, body: bytes):
    rows = decode_text(body).splitlines()
    pos = 0
    for el in header.elements:
        chunk = rows[pos: pos + el.count]
        if len(chunk) < el.count:
            raise LoadError(f"{path}: truncated ASCII PLY: the header declares {el.count:,} "
                            f"'{el.name}' lines but the file ends after {len(chunk):,}")
        scalar_only = not any(p.is_list for p in el.properties)
        want = len(el.properties)
        for i, row in enumerate(chunk):
            tok = row.split()
            if scalar_only:
                got_ok = len(tok) == want
                expected = want
            else:
                expected = 0
                try:
                    for p in el.properties:
                        expected += 1 + int(tok[expected]) if p.is_list else 1
                except (IndexError, ValueError):
                    expected = -1
                got_ok = expected == len(tok)
            if not got_ok:
                line_no = header.header_lines + pos + i + 1
                what = f"{expected} values" if expected >= 0 else "a different layout"
                raise LoadError(
                    f"{path}: line {line_no}: '{el.name}' {i} has {len(tok)} values but "
                    f"the header declares {what} ({_describe(el)})")
        pos += el.count


def _check_binary(path: Path, header: PlyHeader, body_size: int):
    if any(p.is_list for el in header.elements for p in el.properties):
        return  # record sizes depend on the data; trimesh checks the total itself
    need = 0
    for el in header.elements:
        need += el.count * int(sum(np.dtype(p.dtype).itemsize for p in el.properties))
    if body_size < need:
        parts = "; ".join(
            f"{el.count:,} '{el.name}' x {sum(np.dtype(p.dtype).itemsize for p in el.properties)} B"
            for el in header.elements)
        raise LoadError(f"{path}: truncated binary PLY: the header declares {need:,} bytes of "
                        f"data ({parts}) but only {body_size:,} follow the header "
                        f"({need - body_size:,} missing)")
    if body_size > need:
        raise LoadError(f"{path}: corrupt binary PLY: {body_size - need:,} bytes more data "
                        f"than the header declares ({need:,})")


def check_ply_body(path: Path, header: PlyHeader):
    """Check that the body of ``path`` matches ``header``: for ASCII every line has the
    declared number of tokens; for binary without lists the size is exact.

    Raises LoadError naming the file, the line (ASCII) and what is wrong.
    """
    with open(path, "rb") as fh:
        fh.seek(header.data_offset)
        if header.format == "ascii":
            _check_ascii(path, header, fh.read())
        else:
            _check_binary(path, header, path.stat().st_size - header.data_offset)


_STRUCT = {"i1": "b", "u1": "B", "i2": "h", "u2": "H", "i4": "i", "u4": "I", "i8": "q",
           "u8": "Q", "f2": "e", "f4": "f", "f8": "d"}


def _record_size(el: PlyElement) -> int:
    return int(sum(np.dtype(p.dtype).itemsize for p in el.properties))


def fan_binary_ply_faces(path: Path, header: PlyHeader) -> bytes | None:
    """A binary PLY whose ``face`` index lists vary in length -> the bytes of the same
    PLY with each n-gon written as n - 2 triangles (0, i, i+1), the face's other
    (scalar) properties copied to each triangle.

    Returns None when the file has another layout (lists outside the face element, or
    several lists per face), which is left to the reader's own error. Raises LoadError
    when the data ends inside a record or a face has fewer than 3 indices.
    """
    names = [el.name for el in header.elements]
    if "face" not in names:
        return None
    fi = names.index("face")
    face = header.elements[fi]
    lists = [i for i, p in enumerate(face.properties) if p.is_list]
    others = [el for el in header.elements if el is not face]
    if len(lists) != 1 or any(p.is_list for el in others for p in el.properties):
        return None
    e = "<" if header.format == "binary_little_endian" else ">"
    li = lists[0]
    lp = face.properties[li]
    pre = sum(np.dtype(p.dtype).itemsize for p in face.properties[:li])
    post = sum(np.dtype(p.dtype).itemsize for p in face.properties[li + 1:])
    count = struct.Struct(e + _STRUCT[lp.count_dtype])
    item = np.dtype(e + lp.dtype)
    with open(path, "rb") as fh:
        raw = fh.read()
    data = memoryview(raw)[header.data_offset:]
    start = sum(el.count * _record_size(el) for el in header.elements[:fi])
    off, out, tris = start, bytearray(), 0
    three = count.pack(3)
    for i in range(face.count):
        if off + pre + count.size > len(data):
            raise LoadError(f"{path}: truncated binary PLY: the data ends inside 'face' "
                            f"{i:,} of {face.count:,}")
        n = count.unpack_from(data, off + pre)[0]
        body = off + pre + count.size
        end = body + n * item.itemsize
        if end + post > len(data):
            raise LoadError(f"{path}: truncated binary PLY: the data ends inside 'face' "
                            f"{i:,} of {face.count:,}")
        if n < 3:
            raise LoadError(f"{path}: 'face' {i:,} has {n} vertex indices (need at least 3)")
        idx = np.frombuffer(data[body:end], dtype=item)
        head, tail = data[off:off + pre], data[end:end + post]
        fan = np.stack([np.repeat(idx[:1], n - 2), idx[1:-1], idx[2:]], axis=1)
        for tri in fan:
            out += head
            out += three
            out += tri.tobytes()
            out += tail
        tris += n - 2
        off = end + post
    head_bytes = re.sub(rb"(?m)^element face \d+", b"element face %d" % tris,
                        raw[:header.data_offset], count=1)
    return head_bytes + data[:start].tobytes() + bytes(out) + data[off:].tobytes()


def tristrip_faces(strips) -> np.ndarray:
    """Triangle strips -> (M, 3) int64 triangles.

    ``strips`` is a 1-D integer array of vertex indices in which -1 ends a strip (the
    PLY ``tristrips`` convention). Triangle k of a strip is (s[k], s[k+1], s[k+2]) with
    the first two swapped for odd k so all keep the strip's winding (OpenGL
    GL_TRIANGLE_STRIP rule); triangles with a repeated vertex (degenerate joins) are
    dropped.
    """
    s = np.asarray(strips, dtype=np.int64).reshape(-1)
    if s.size < 3:
        return np.zeros((0, 3), dtype=np.int64)
    idx = np.arange(s.size)
    # index where the strip containing each entry starts (one after the last -1)
    start = np.maximum.accumulate(np.where(s < 0, idx + 1, 0))
    t = np.stack([s[:-2], s[1:-1], s[2:]], axis=1)
    odd = (idx[:-2] - start[:-2]) % 2 == 1
    t[odd, 0], t[odd, 1] = t[odd, 1].copy(), t[odd, 0].copy()
    keep = np.all(t >= 0, axis=1) & (t[:, 0] != t[:, 1]) & (t[:, 1] != t[:, 2]) \
        & (t[:, 0] != t[:, 2])
    return t[keep]
