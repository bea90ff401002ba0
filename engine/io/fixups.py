"""Repairs and checks for OBJ, PLY and STL files, applied before (PLY colours: after)
trimesh reads them (glTF is read by engine.io.gltf, from the specification).

trimesh (5.2) reads these formats well, but measured against real exporters and broken
files it gets a few cases wrong or fails with messages that do not say what is wrong;
this module fixes them in our layer instead of forking the reader:

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
  - Face references are checked, with the line number: trimesh reads index 0 as -1
    (the last vertex) and fails on out-of-range ones with a bare NumPy IndexError.
    ``v`` lines need 3 numbers.

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
  - Colours outside 0-255 (integer properties) or 0-1 (float) are rejected: trimesh
    wraps integers modulo 256 and clips floats.

STL: when the size of a binary file does not match its triangle count, trimesh retries
it as ASCII text and asks for an optional charset package; we compare the sizes
ourselves. ASCII STL missing ``endsolid`` (a truncated file) loads as empty in trimesh;
we check the facet structure.

"""

from __future__ import annotations

import re
import struct
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import LoadError

__all__ = [
    "PlyElement",
    "PlyHeader",
    "PlyProperty",
    "check_ascii_stl",
    "check_ply_body",
    "check_ply_colors",
    "decode_text",
    "fan_binary_ply_faces",
    "normalize_obj",
    "normalize_obj_parsed",
    "read_ply_header",
    "split_obj_by_material",
    "stl_is_binary",
    "tristrip_faces",
]


# ------------------------------------------------------------------------------ OBJ
def decode_text(data: bytes) -> str:
    """Bytes of a text file -> str: UTF-8 (a BOM is dropped), else Latin-1."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


_REF_KINDS = ("vertex", "texture coordinate", "normal")


def _defined(n: int) -> str:
    return f"{n} {'is' if n == 1 else 'are'} defined"


def _join_continuations(text: str) -> str:
    """Join lines ending in a backslash with the next one; a blank line is added after
    each joined line so every later line keeps its number for error messages."""
    if "\\\n" not in text:
        return text
    out, pending, joined = [], "", 0
    for line in text.split("\n"):
        if line.endswith("\\"):
            pending += line[:-1] + " "
            joined += 1
            continue
        out.append(pending + line)
        out.extend([""] * joined)
        pending, joined = "", 0
    return "\n".join(out)


_INTEGER = re.compile(r"[-+]?[0-9]+")
_NUMBER = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
                     r"|[-+]?(?:nan|inf|infinity)", re.IGNORECASE | re.ASCII)
# (ASCII: Unicode case folding let "ınf", a dotless i, pass as "inf", which float()
# then refused)


def _int(token: str) -> int:
    """An integer in ASCII digits (Python's int() also takes '1_000', other scripts'
    digits and surrounding spaces, which the reader does not)."""
    if not _INTEGER.fullmatch(token):
        raise ValueError(token)
    return int(token)


def _face_refs(no: int, tokens: list[str], counts: list[int], forward: list):
    """Check the references of face line ``no`` against the ``counts`` of v/vt/vn read
    so far; returns the tokens with negative parts made absolute (1-based).

    Positive references beyond the count so far are legal forward references (trimesh
    and other readers allow them): they are appended to ``forward`` as
    (line, kind index, reference) and checked against the final counts by the caller.
    Raises ValueError naming the line for a non-integer, a 0, a negative reference
    reaching before the first element, or a face with fewer than 3 vertices.
    """
    if len(tokens) < 4:
        raise ValueError(f"line {no}: a face needs at least 3 vertices, this one has "
                         f"{len(tokens) - 1}")
    try:  # the common case: plain positive indices of vertices already defined
        plain = list(map(_int, tokens[1:]))
        if min(plain) > 0 and max(plain) <= counts[0]:
            return tokens[1:]
    except ValueError:  # v/vt/vn parts, or not a number: checked below
        pass
    out = []
    for token in tokens[1:]:
        parts = token.split("/")
        if len(parts) > 3 or not parts[0]:
            raise ValueError(f"line {no}: {_shown(token, 30)} is not a face vertex reference "
                             "(v, v/vt, v//vn or v/vt/vn)")
        for k, p in enumerate(parts):
            if not p and k:  # v//vn has no texture coordinate
                continue
            try:
                ref = _int(p)
            except ValueError:
                raise ValueError(f"line {no}: {_shown(token, 30)} is not a face vertex reference "
                                 "(indices are integers)") from None
            if ref == 0:
                raise ValueError(f"line {no}: face references {_REF_KINDS[k]} 0, but OBJ "
                                 "indices start at 1")
            if ref < 0:
                if -ref > counts[k]:
                    raise ValueError(f"line {no}: face references {_REF_KINDS[k]} {ref} but "
                                     f"only {_defined(counts[k])} before it")
                parts[k] = str(ref + counts[k] + 1)
            elif ref > counts[k]:
                forward.append((no, k, ref))
        out.append("/".join(parts))
    return out


# least numbers on a coordinate line, and what the message says when it has fewer
_COORD_LINES = {"v": (3, "a vertex needs 3 numbers"),
                "vt": (1, "a texture coordinate needs 1 to 3 numbers"),
                "vn": (3, "a normal needs 3 numbers")}
_SEPARATORS = re.compile(r"[ \t]+")


def _coordinates(line: str) -> list[float]:
    """The numbers after the keyword of a v/vt/vn line, split on spaces and tabs only
    (as trimesh's reader splits them; other characters make a token that is not a
    number). An empty list when any token is not a number."""
    tokens = [t for t in _SEPARATORS.split(line.strip(" \t")) if t][1:]
    if not all(_NUMBER.fullmatch(t) for t in tokens):
        return []
    return [float(t) for t in tokens]


def _shown(line: str, n: int = 60) -> str:
    text = line.strip()
    return repr(text if len(text) <= n else text[:n] + "...")


def split_obj_by_material(text: str) -> list[tuple[str | None, str]]:
    """Normalised OBJ text (``normalize_obj``: every reference absolute) -> one OBJ text
    per material, in order of first use: (material name or None for faces before any
    ``usemtl``, text holding the ``v``/``vt``/``vn`` lines its faces use, renumbered from
    1, then its ``f`` lines).

    Why: trimesh's OBJ reader builds each material's part with masks over *all* the
    file's vertices, so P parts with V vertices in all cost P x V (10^5 parts of their
    own three vertices: about a minute); each small text costs only its own size.
    Lines other than ``v``, ``vt``, ``vn``, ``usemtl`` and ``f`` carry nothing the
    parts need (``g``/``o`` do not split parts; ``l``/``p`` are not drawn).
    """
    coords: dict[str, list[str]] = {"v": [], "vt": [], "vn": []}
    faces: dict[str | None, list[list[str]]] = {}
    current = None
    for line in text.split("\n"):
        tokens = [t for t in _SEPARATORS.split(line.strip(" \t")) if t]
        if not tokens:
            continue
        key = tokens[0]
        if key in coords:
            coords[key].append(line)
        elif key == "usemtl":
            current = line.strip(" \t")[6:].strip() or None
        elif key == "f":
            faces.setdefault(current, []).append(tokens[1:])
    out = []
    kinds = ("v", "vt", "vn")
    for material, rows in faces.items():
        local: list[dict[int, int]] = [{}, {}, {}]
        lines = []
        for refs in rows:
            new = []
            for ref in refs:
                parts = ref.split("/")
                for k, part in enumerate(parts[:3]):
                    if part:
                        parts[k] = str(local[k].setdefault(int(part), len(local[k]) + 1))
                new.append("/".join(parts))
            lines.append("f " + " ".join(new))
        head = [coords[kinds[k]][i - 1] for k in range(3) for i in local[k]]
        use = [] if material is None else [f"usemtl {material}"]
        out.append((material, "\n".join(head + use + lines) + "\n"))
    return out


def _backtracking(pattern: str) -> str:
    """``pattern`` with its possessive quantifiers (``++ *+ ?+ }+``) and atomic groups
    (``(?>``) in their plain forms: what Python before 3.11 can compile. For this
    module's patterns only (none holds a literal ``+`` after a quantifier character)."""
    return re.sub(r"(?<=[+*?}])\+", "", pattern).replace("(?>", "(?:")


def _compile(pattern: str) -> re.Pattern:
    """re.compile of a pattern with possessive quantifiers, on Python 3.10 too."""
    return re.compile(pattern if sys.version_info >= (3, 11) else _backtracking(pattern))


# The fast proof behind normalize_obj: a file whose every v/vt/vn/f line matches one of
# these and whose face references stay within the final counts is left unchanged by the
# line pass, which raises nothing for it. Anything these do not match (negative, zero or
# signed references, w or 0-255 colours, mixed widths, stray characters) goes to the
# line pass. They run on the text with a newline put in front: a line start is then the
# literal "\n", which the regex engine finds by a fast search (a MULTILINE "^" is tried
# at every character, twice as slow), followed by optional spaces and tabs (as the line
# pass splits).
# (The quantifiers are possessive and the number atomic: a token's characters never
# belong to the separator after it, so giving nothing back changes no match, and the
# engine keeps no backtracking state per character: 20 % faster on the bunny's v lines.
# "infinity" comes before "inf" for that reason. test_obj_fast_path checks that _N
# accepts exactly the tokens _NUMBER does. Python 3.10 has neither form: _compile gives
# it the backtracking twins, which the same test checks match alike.)


_N = (r"(?>[-+]?+(?:[0-9]++\.?+[0-9]*+|\.[0-9]++)(?:[eE][-+]?+[0-9]++)?+"
      r"|[-+]?+(?ai:nan|infinity|inf))")
_SP = "[ \t]++"
_END = "[ \t]*+$"
# the first token of every line that does not start with "v " or "f " (those are
# counted with str.count): a few lines of a mesh file instead of all of them
_OTHER_FIRST_TOKEN = _compile(r"\n(?![vf] )[ \t]*+([^ \t\n]*+)")
_PLAIN = {
    ("v", 3): _compile(rf"(?m)\n[ \t]*+v{_SP}{_N}{_SP}{_N}{_SP}{_N}{_END}"),
    ("v", 6): _compile(rf"(?m)\n[ \t]*+v{_SP}{_N}{_SP}{_N}{_SP}{_N}"
                       rf"{_SP}({_N}){_SP}({_N}){_SP}({_N}){_END}"),
    ("vt", 2): _compile(rf"(?m)\n[ \t]*+vt{_SP}{_N}{_SP}{_N}{_END}"),
    ("vt", 3): _compile(rf"(?m)\n[ \t]*+vt{_SP}{_N}{_SP}{_N}{_SP}{_N}{_END}"),
    ("vn", 3): _compile(rf"(?m)\n[ \t]*+vn{_SP}{_N}{_SP}{_N}{_SP}{_N}{_END}"),
}
_INDEX = "[1-9][0-9]{0,17}+"  # at most 18 digits: every one fits an int64
_REF = f"{_INDEX}(?:/(?:{_INDEX})?(?:/{_INDEX})?)?"
_PLAIN_FACE = _compile(rf"(?m)\n[ \t]*+f((?:{_SP}{_REF}){{3,}}){_END}")
# the lines of _PLAIN_FACE that are triangles of vertex references only, the same capture:
# tried first when the first face line is one (most files are only those), it takes half
# the time of the general one
_PLAIN_TRIANGLE = _compile(rf"(?m)\n[ \t]*+f({_SP}{_INDEX}{_SP}{_INDEX}{_SP}{_INDEX}){_END}")
_FACE_LINE = re.compile(r"\n[ \t]*f[ \t][^\n]*")
_LP_MINUS = re.compile(r"\n[ \t]*[lp][ \t][^\n]*-")  # rewritten by the line pass


def _obj_is_plain(text: str) -> bool:
    """True when ``normalize_obj``'s line pass would return ``text`` unchanged without
    raising (``_plain_obj``). False means "not proven", not "bad"."""
    return _plain_obj(text)[0]


def _plain_obj(text: str) -> tuple[bool, tuple[np.ndarray, np.ndarray] | None]:
    """(proven, triangles) for LF OBJ text with continuations joined.

    ``proven``: every coordinate line is plain (``v`` all of 3 numbers, or all of 6 with
    colours in 0-1; ``vt`` all of 2 or all of 3; ``vn`` of 3), every face line has 3 or
    more positive references (``v``, ``v/vt``, ``v//vn``, ``v/vt/vn``) each within the
    file's count of its kind, and no ``l``/``p`` line has a negative reference: the line
    pass would change nothing and raise nothing.

    ``triangles``: for a proven file of ``v x y z`` and ``f a b c`` lines only (no
    texture coordinates, normals, colours, n-gons or ``usemtl``), the arrays trimesh's
    ``load_obj`` would build from it, parsed from the matches the proof made: (V, 3)
    float64 vertices that faces reference, in file order, and (F, 3) int64 faces
    indexing them; else None.
    """
    text = "\n" + text
    keys = Counter(_OTHER_FIRST_TOKEN.findall(text))
    keys["v"] += text.count("\nv ")
    keys["f"] += text.count("\nf ")
    if any(key[:1] == "f" and key != "f" for key in keys):
        return False, None  # e.g. 'fo': an error of the line pass
    if ("l" in keys or "p" in keys) and _LP_MINUS.search(text):
        return False, None
    counts = {key: keys.get(key, 0) for key in ("v", "vt", "vn", "f")}
    xyz = _PLAIN["v", 3].findall(text) if counts["v"] else []
    if counts["v"] and counts["v"] != len(xyz):
        xyz = []
        colours = _PLAIN["v", 6].findall(text)
        if len(colours) != counts["v"]:
            return False, None
        with np.errstate(invalid="ignore"):
            if (np.array(colours, dtype=np.float64) > 1.0).any():
                return False, None  # 0-255 colours: rescaled by the line pass
    if counts["vt"] and all(counts["vt"] != len(_PLAIN["vt", w].findall(text)) for w in (2, 3)):
        return False, None
    if counts["vn"] and counts["vn"] != len(_PLAIN["vn", 3].findall(text)):
        return False, None
    first = _FACE_LINE.search(text) if counts["f"] else None
    faces = _PLAIN_TRIANGLE.findall(text) if first and _PLAIN_TRIANGLE.match(first[0]) else []
    if len(faces) != counts["f"]:
        faces = _PLAIN_FACE.findall(text)
    if len(faces) != counts["f"]:
        return False, None
    if not faces:
        return True, None
    refs = " ".join(faces)
    if "/" not in refs:  # v only: one integer parse of every reference
        index = np.fromstring(refs, dtype=np.int64, sep=" ")
        if int(index.max()) > counts["v"]:
            return False, None
        return True, _triangles(xyz, index, counts, "usemtl" in keys)
    parts = np.array(re.findall(r"([0-9]+)/?([0-9]*)/?([0-9]*)", refs))
    for k, key in enumerate(("v", "vt", "vn")):
        column = parts[:, k]
        column = column[column != ""]
        if column.size and int(column.astype(np.int64).max()) > counts[key]:
            return False, None
    return True, None


def _triangles(xyz: list[str], index: np.ndarray, counts: dict, materials: bool):
    """The (vertices, faces) of ``_plain_obj`` from its ``v`` line matches and the
    1-based face references, or None when the file is not triangles of ``v x y z``
    only. Unreferenced vertices are dropped and the rest keep their order, as trimesh's
    ``load_obj`` does (a mask over the vertices, then renumbered faces)."""
    if (materials or counts["vt"] or counts["vn"] or len(xyz) != counts["v"]
            or index.size != 3 * counts["f"]):
        return None
    # the matches are "\nv x y z" with optional spaces and tabs: no number holds a 'v'
    vertices = np.fromstring(" ".join(xyz).replace("v", " "), dtype=np.float64, sep=" ")
    if vertices.size != 3 * counts["v"]:
        return None
    faces = index.reshape(-1, 3) - 1
    used = np.zeros(counts["v"], bool)
    used[faces] = True
    renumber = np.cumsum(used) - 1
    return vertices.reshape(-1, 3)[used], renumber[faces]


def normalize_obj(text: str) -> str:
    """OBJ text -> equivalent OBJ text that trimesh reads correctly (see module doc),
    after checking every face (``f``) line.

    Line endings become LF and backslash line continuations are joined. Face references
    must be integers, not 0, and name a ``v``/``vt``/``vn`` line of the file (a negative
    one: of the lines before it); a face needs 3 vertices. ``l`` and ``p`` lines only
    get negative references made absolute (trimesh does not load them).

    A file that needs no change (``_obj_is_plain``: the common case, e.g. every
    exporter's triangle mesh) is proven so by whole-text regular expressions and one
    NumPy range check, without a Python loop over its lines; any other file takes the
    line-by-line pass that rewrites it and names the first bad line.

    Raises ValueError starting with ``line N:`` (1-based line of the file) for a bad face
    reference or a non-numeric coordinate or colour on a ``v`` line that needs rewriting.
    """
    return normalize_obj_parsed(text)[0]


def normalize_obj_parsed(text: str) -> tuple[str, tuple[np.ndarray, np.ndarray] | None]:
    """``normalize_obj(text)`` and, for a file of plain triangles of ``v x y z`` only
    (``_plain_obj``), its (vertices, faces) as trimesh's reader would give them, parsed
    by the same pass that proved the file needs no change; else None."""
    text = _join_continuations(text.replace("\r\n", "\n").replace("\r", "\n"))
    proven, triangles = _plain_obj(text)
    return (text, triangles) if proven else (_normalize_lines(text), None)


def _normalize_lines(text: str) -> str:
    """``normalize_obj``'s line-by-line pass over LF text with continuations joined."""
    out = text.split("\n")
    counts = [0, 0, 0]  # v, vt, vn lines so far
    forward: list = []
    rgb_lines = []  # (index in out, tokens) of `v x y z r g b` lines
    max_rgb = 0.0
    widths: dict = {"v": {}, "vt": {}, "vn": {}}  # numbers per line -> line indices
    changed = False
    for i, line in enumerate(out):
        # split as the reader does: on spaces and tabs (Python's split() would also
        # split on other characters that the reader keeps inside a token)
        tokens = [t for t in _SEPARATORS.split(line.strip(" \t")) if t]
        key = tokens[0] if tokens else ""
        try:
            if key in _COORD_LINES:  # trimesh reports a non-number without saying where
                least, what = _COORD_LINES[key]
                n = len(_coordinates(line))
                if n < least:
                    raise ValueError(f"line {i + 1}: {what}: {_shown(line)}")
                widths[key].setdefault(3 if (key == "v" and n == 4) else n, []).append(i)
            if key == "v":
                counts[0] += 1
                if len(tokens) == 5:
                    out[i] = _vertex_over_w(tokens)
                    changed = True
                elif len(tokens) == 7:
                    rgb_lines.append((i, tokens))
                    max_rgb = max(max_rgb, *(float(t) for t in tokens[4:7]))
            elif key == "vt":
                counts[1] += 1
            elif key == "vn":
                counts[2] += 1
            elif key[:1] == "f" and key != "f":  # the reader takes any line starting
                raise ValueError(f"line {i + 1}: {_shown(key, 20)} is not an OBJ statement "
                                 "(a face line starts with 'f ')")  # with 'f' as a face
            elif key == "f":
                refs = _face_refs(i + 1, tokens, counts, forward)
                if refs != tokens[1:]:
                    out[i] = "f " + " ".join(refs)
                    changed = True
            elif key in ("l", "p") and "-" in line:
                out[i] = key + " " + " ".join(_absolute_ref(t, counts) for t in tokens[1:])
                changed = True
        except ValueError as exc:
            if str(exc).startswith("line "):
                raise
            raise ValueError(f"line {i + 1}: {exc}") from None
    for no, k, ref in forward:
        if ref > counts[k]:
            raise ValueError(f"line {no}: face references {_REF_KINDS[k]} {ref} but only "
                             f"{_defined(counts[k])}")
    # the reader needs one width per kind of coordinate line: lines that differ are cut
    # to what is drawn (x y z; u v with v = 0 when absent; nx ny nz)
    keep = {"v": ((3,), (6,)), "vt": ((2,), (3,)), "vn": ((3,),)}
    for key, by_width in widths.items():
        if tuple(sorted(by_width)) in keep[key] or not by_width:
            continue
        if key == "v":
            rgb_lines = []
        want = {"v": 3, "vt": 2, "vn": 3}[key]
        for lines in by_width.values():
            for i in lines:
                nums = _coordinates(out[i])[:want]
                nums += [0.0] * (want - len(nums))
                out[i] = key + " " + " ".join(repr(x) for x in nums)
        changed = True
    # colours are 0-1 by convention; any value > 1 means the exporter wrote 0-255
    if max_rgb > 1.0 and rgb_lines:
        for i, tokens in rgb_lines:
            r, g, b = (float(t) / 255.0 for t in tokens[4:7])
            out[i] = " ".join(tokens[:4]) + f" {r!r} {g!r} {b!r}"
        changed = True
    return "\n".join(out) if changed else text


def _absolute_ref(token: str, counts) -> str:
    """'v/vt/vn' reference with negative parts -> absolute 1-based parts."""
    parts = token.split("/")
    for i, p in enumerate(parts[:3]):
        if p.startswith("-"):
            try:
                parts[i] = str(int(p) + counts[i] + 1)
            except ValueError:  # not a number: lines and points are not drawn anyway
                pass
    return "/".join(parts)


def _vertex_over_w(tokens: list[str]) -> str:
    x, y, z, w = (float(t) for t in tokens[1:5])
    if w == 0.0:
        return "v nan nan nan"
    return f"v {x / w!r} {y / w!r} {z / w!r}"


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
    if not head.startswith(b"ply"):
        raise LoadError(f"{path}: not a PLY file (it does not start with 'ply')")
    m = re.search(rb"(?m)^end_header[ \t]*\r?\n", head)
    if m is None:
        raise LoadError(f"{path}: PLY header has no 'end_header' line (truncated header?)")
    # lines end at LF only (str.splitlines would also end them at \x85, \x1c, ...)
    lines = [ln.rstrip("\r") for ln in decode_text(head[: m.start()]).split("\n")][:-1]
    fmt = None
    elements: list[PlyElement] = []
    for no, line in enumerate(lines, start=1):
        tok = line.split()
        if not tok or tok[0] in ("ply", "comment", "obj_info"):
            continue
        bad = LoadError(f"{path}: PLY header line {no} is malformed: {_shown(line)}")
        if tok[0] == "format":
            if len(tok) != 3 or tok[1] not in ("ascii", "binary_little_endian",
                                              "binary_big_endian"):
                raise bad
            fmt = tok[1]
        elif tok[0] == "element":
            if len(tok) != 3 or not _INTEGER.fullmatch(tok[2]) or tok[2][0] in "+-":
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
    vertex = next((el for el in elements if el.name == "vertex"), None)
    if vertex is None:
        listed = ", ".join(_shown(el.name, 20)[1:-1] for el in elements[:8])
        raise LoadError(f"{path}: the PLY file has no 'vertex' element (it has: "
                        f"{listed or 'none'})")
    else:
        names = [p.name for p in vertex.properties]
        for axis in "xyz":
            if axis not in names:
                listed = ", ".join(_shown(n, 20)[1:-1] for n in names[:8])
                raise LoadError(f"{path}: the PLY 'vertex' element has no {axis!r} property "
                                f"(it has: {listed or 'none'})")
    face = next((el for el in elements if el.name == "face"), None)
    if face is not None and face.count:
        lists = [p for p in face.properties if p.is_list]
        named = [p for p in lists if p.name in ("vertex_indices", "vertex_index")]
        if not named:
            listed = ", ".join(_shown(p.name, 20)[1:-1] for p in face.properties[:8])
            raise LoadError(f"{path}: the PLY 'face' element has no 'vertex_indices' list "
                            f"property (it has: {listed or 'none'})")
    return PlyHeader(fmt, elements, m.end(), len(lines) + 1)


def _describe(el: PlyElement) -> str:
    return ", ".join(("list " if p.is_list else "") + p.name for p in el.properties)


_PLY_SPACE = re.compile(r"[ \t\r\f\v]+")


def _check_ascii(path: Path, header: PlyHeader, body: bytes):
    """Every ASCII element line: the token count the header declares, numbers only, and
    face vertex indices inside the vertex element. Lines are split on LF only, tokens
    on spaces and tabs (as the reader does)."""
    rows = decode_text(body).split("\n")
    if rows and not rows[-1].strip():
        rows.pop()  # after the final newline
    counts = {el.name: el.count for el in header.elements}
    pos = 0
    for el in header.elements:
        chunk = rows[pos: pos + el.count]
        if len(chunk) < el.count:
            raise LoadError(f"{path}: truncated ASCII PLY: the header declares {el.count:,} "
                            f"'{el.name}' lines but the file ends after {len(chunk):,}")
        scalar_only = not any(p.is_list for p in el.properties)
        want = len(el.properties)
        faces = (el.name == "face" and el.properties and el.properties[0].is_list
                 and el.properties[0].name in ("vertex_indices", "vertex_index"))
        n_vertices = counts.get("vertex", 0)
        tokens_of = []
        for i, row in enumerate(chunk):
            tok = _PLY_SPACE.split(row.strip()) if row.strip() else []
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
            line_no = header.header_lines + pos + i + 1
            if not got_ok:
                what = f"{expected} values" if expected >= 0 else "a different layout"
                raise LoadError(
                    f"{path}: line {line_no}: '{el.name}' {i} has {len(tok)} values but "
                    f"the header declares {what} ({_describe(el)})")
            if faces:
                for t in tok[1:1 + int(tok[0])]:
                    try:
                        v = int(t)
                    except ValueError:
                        break  # reported as "not a number" below
                    if not 0 <= v < n_vertices:
                        raise LoadError(f"{path}: line {line_no}: 'face' {i} refers to vertex "
                                        f"{v:,}, but the file has {n_vertices:,} vertices")
            tokens_of.append(tok)
        _check_numbers(path, tokens_of, header.header_lines + pos + 1, el.name)
        pos += el.count


def _check_numbers(path: Path, rows: list, first_line: int, name: str):
    """Every token of ``rows`` (token lists of consecutive lines from ``first_line``)
    is a number; LoadError naming the first line with one that is not."""
    flat = [t for tok in rows for t in tok]
    try:
        np.array(flat, dtype=np.float64)
        return
    except (ValueError, OverflowError):
        pass
    for k, tok in enumerate(rows):
        for t in tok:
            try:
                float(t)
            except ValueError:
                shown = t if len(t) <= 30 else t[:30] + "..."
                raise LoadError(f"{path}: line {first_line + k}: '{name}' {k} has {shown!r}, "
                                "which is not a number") from None


def _check_binary(path: Path, header: PlyHeader, body_size: int):
    if any(p.is_list for el in header.elements for p in el.properties):
        # record sizes depend on the data: check the least each element can take (its
        # scalars and list counts, with empty lists) before anything is read
        need = 0
        for el in header.elements:
            least = sum(np.dtype(p.count_dtype if p.is_list else p.dtype).itemsize
                        for p in el.properties)
            need += el.count * least
            if need > body_size:
                raise LoadError(
                    f"{path}: truncated binary PLY: the header declares {el.count:,} "
                    f"'{el.name}' records of at least {least} B each, but only "
                    f"{body_size:,} bytes follow the header (at least {need:,} needed)")
        return  # trimesh and fan_binary_ply_faces check the exact total
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


_COLOR_PROPERTIES = ("red", "green", "blue", "alpha")  # the names trimesh reads


def check_ply_colors(path: Path, elements: dict):
    """Check the colour values of a parsed PLY: ``elements`` is trimesh's raw parse
    (``metadata["_ply_raw"]``: element name -> {"data": arrays by property name}).

    Rule: integer colour properties (uchar, and wider types some exporters write) hold
    0-255; float ones hold 0-1. trimesh would wrap other integers modulo 256 and clip
    floats, so such a file is rejected rather than drawn in wrong colours.

    Raises LoadError naming the file, the element index, the property and the value.
    """
    for name in ("vertex", "face"):
        data = elements.get(name, {}).get("data")
        if data is None:
            continue
        names = data.dtype.names if hasattr(data, "dtype") else tuple(data)
        for prop in _COLOR_PROPERTIES:
            if not names or prop not in names:
                continue
            values = np.asarray(data[prop]).reshape(-1)
            if values.dtype.kind == "f":
                hi, rule = 1, "float colours hold 0-1"
                with np.errstate(invalid="ignore"):
                    bad = ~((values >= 0) & (values <= 1))
            else:
                hi, rule = 255, "integer colours hold 0-255"
                bad = (values < 0) | (values > 255)
            if bad.any():
                i, k = int(np.argmax(bad)), int(bad.sum())
                raise LoadError(f"{path}: PLY colour out of range: '{name}' {i:,} has {prop} = "
                                f"{values[i]} ({k:,} value{'s' * (k != 1)} outside 0-{hi}; "
                                f"{rule})")


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


# ------------------------------------------------------------------------------ STL
_STL_HEADER = 84  # 80-byte comment + uint32 triangle count
_STL_TRIANGLE = 50  # normal + 3 corners (12 float32) + uint16 attribute byte count


def stl_is_binary(path: Path, data: bytes) -> bool:
    """Decide whether the STL file ``path`` with bytes ``data`` is binary or ASCII.

    Binary STL (3D Systems' StereoLithography Interface Specification, 1989) is an
    80-byte header, a little-endian uint32 triangle count N and N records of 50 bytes,
    so its size is exactly 84 + 50 N. Text that starts with ``solid`` and contains no
    NUL byte is ASCII STL (binary headers may start with ``solid`` too, but the count
    and float data almost always contain a 0 byte).

    Raises LoadError naming the file when it is neither: the size the header declares
    is compared with the real size (truncated binary STL, or not an STL file).
    """
    n = len(data)
    count = struct.unpack_from("<I", data, 80)[0] if n >= _STL_HEADER else None
    need = _STL_HEADER + _STL_TRIANGLE * count if count is not None else None
    if need == n:
        return True
    if data.lstrip()[:5].lower() == b"solid" and b"\0" not in data:
        return False
    if count is None:
        raise LoadError(f"{path}: not an STL file: {n} bytes is shorter than a binary STL "
                        f"header ({_STL_HEADER} bytes) and the text does not start with "
                        "'solid'")
    declared = (f"its header declares {count:,} triangles = {need:,} bytes "
                f"({_STL_HEADER} + {_STL_TRIANGLE} x {count:,}) but the file has {n:,} bytes")
    if n < need:
        raise LoadError(f"{path}: truncated binary STL, or not an STL file: {declared} "
                        f"({need - n:,} missing)")
    raise LoadError(f"{path}: corrupt binary STL, or not an STL file: {declared} "
                    f"({n - need:,} too many)")


def check_ascii_stl(path: Path, text: str):
    """Check the structure of ASCII STL ``text``: ``facet`` ... ``endfacet`` blocks of
    exactly three ``vertex x y z`` lines, and an ``endsolid`` line at the end. trimesh
    reads only text between ``solid`` and ``endsolid``, so a truncated file would load
    as empty.

    Raises LoadError naming the file and the line.
    """
    facet_line, corners, ended = 0, 0, False
    for no, line in enumerate(text.splitlines(), start=1):
        tok = line.split()
        key = tok[0].lower() if tok else ""
        if key == "facet":
            if facet_line:
                raise LoadError(f"{path}: line {no}: 'facet' before the facet started at line "
                                f"{facet_line} has ended")
            facet_line, corners, ended = no, 0, False
        elif key == "vertex":
            try:
                ok = len(tok) == 4 and len([float(t) for t in tok[1:]]) == 3
            except ValueError:
                ok = False
            if not ok:
                raise LoadError(f"{path}: line {no}: a vertex needs 3 numbers: {_shown(line)}")
            corners += 1
        elif key == "endfacet":
            if corners != 3:
                raise LoadError(f"{path}: line {no}: the facet has {corners} vertices, "
                                "STL facets have 3")
            facet_line = 0
        elif key == "endsolid":
            ended = True
    if facet_line:
        raise LoadError(f"{path}: truncated ASCII STL: the file ends inside the facet started "
                        f"at line {facet_line}")
    if not ended:
        raise LoadError(f"{path}: truncated ASCII STL: no 'endsolid' line at the end")
