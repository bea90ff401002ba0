"""normalize_obj's fast proof (``_obj_is_plain``) against its line pass: whenever the
proof says a file needs no change, the line pass must return it unchanged and raise
nothing; the reference files a user loads most take the fast path."""

from __future__ import annotations

import random

import numpy as np
import pytest

from engine.io import fixups

BASE = """# a cube corner with every kind of line
mtllib box.mtl
o part
v 0 0 0
v 1.0 0 0
v 0 1e0 0
v 0 0 .5
vt 0 0
vt 1 0
vt 0 1
vn 0 0 1
vn 0 1 0
usemtl red
f 1 2 3
f 1/1 2/2 3/3
f 1//1 2//2 4//2
f 1/1/1 2/2/2 3/3/1 4/1/2
l 1 2
p 3
"""

#: characters a mutation writes: each one a way a line can stop being plain
ALPHABET = list("-+0123456789/ \t\n.eEfvlpnax#") + ["\f", "nan", "inf", "  ", "-1", "999"]


def _agree(text: str) -> bool:
    """The proof's answer for ``text``, after checking it against the line pass."""
    if not fixups._obj_is_plain(text):
        return False
    assert fixups._normalize_lines(text) == text, repr(text)  # must not raise either
    return True


def test_plain_text_is_proven_and_left_unchanged():
    assert _agree(BASE)
    assert fixups.normalize_obj(BASE) == BASE


@pytest.mark.parametrize("text", [
    "v 0 0 0\nv 1 0 0\nv 0 1 0\nf -3 -2 -1\n",            # negative: rewritten
    "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n",               # 0: an error
    "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n",               # out of range: an error
    "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1/1 2/1 3/1\n",          # no vt: an error
    "v 0 0 0 2\nv 1 0 0 1\nv 0 1 0 1\nf 1 2 3\n",          # w: divided
    "v 0 0 0 255 0 0\nv 1 0 0 0 9 0\nv 0 1 0 0 0 1\nf 1 2 3\n",  # 0-255 colours
    "v 0 0 0\nv 1 0 0 0.5 0.5 0.5\nv 0 1 0\nf 1 2 3\n",    # mixed widths: cut
    "v 0 0 0\nv 1 0 0\nv 0 1 0\nfo 1 2 3\n",               # not a statement
    "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2\n",                  # two vertices
    "v 0 0 0\nv 1 0 0\nv 0 1 0\nl -1 -2\n",                # l with a negative reference
    "v 0 0 0\nv 1 0 x\nv 0 1 0\nf 1 2 3\n",                # not a number
    "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 99999999999999999999\n",  # past int64
    "vt 0\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n",          # a 1-number vt
    "v 0 0 0\nv 1 0 \u0131nf\nv 0 1 0\nf 1 2 3\n",          # a dotless i: not "inf"
])
def test_files_the_line_pass_changes_or_rejects_are_not_proven(text):
    assert not fixups._obj_is_plain(text)


def test_the_proofs_number_accepts_exactly_the_line_pass_numbers():
    # _N is _NUMBER's possessive twin (no backtracking): the same tokens, whole
    import re

    rng = random.Random(7)
    tokens = ["0", "1.", ".5", "-.5e-3", "+1E+9", "1e", "e1", ".", "-", "1.2.3", "nan", "NaN",
              "\u0131nf", "\u0130NF", "na\u0274",
              "inf", "-Infinity", "infinit", "infinityx", "0x1", "1e5.5", "++1", "1..2"]
    for _ in range(4000):
        tokens.append("".join(rng.choice("0123456789.eE+-nafity") for _ in range(rng.randint(1, 7))))
    number = re.compile(fixups._N)
    for t in tokens:
        assert bool(number.fullmatch(t)) == bool(fixups._NUMBER.fullmatch(t)), t


def test_the_backtracking_twins_for_python_3_10_match_alike(ref_assets):
    # Python 3.10 compiles the proof's patterns without possessive quantifiers and
    # atomic groups (fixups._compile): the same matches on the reference mesh, the
    # base file and its mutations
    import re

    rng = random.Random(5)
    texts = ["\n" + fixups.decode_text((ref_assets / "classic/teapot.obj").read_bytes()),
             "\n" + BASE]
    for _ in range(300):
        i = rng.randrange(len(BASE))
        texts.append("\n" + BASE[:i] + rng.choice(ALPHABET) + BASE[i + rng.randint(0, 2):])
    patterns = [*fixups._PLAIN.values(), fixups._PLAIN_FACE, fixups._PLAIN_TRIANGLE,
                fixups._OTHER_FIRST_TOKEN]
    for pattern in patterns:
        twin = re.compile(fixups._backtracking(pattern.pattern))
        assert twin.pattern != pattern.pattern  # there was something to take out
        for text in texts:
            assert twin.findall(text) == pattern.findall(text)


@pytest.mark.parametrize("text", [BASE, "v 0 0 0\n v 1 0 0\nv\t0 1 0\nf 1 2 3\n\tf 1 2 3\n",
                                  "\n\nv 1 2 3\nvv 1\nf  1 2 3\n# f 1 2 3\n"])
def test_line_kinds_are_counted_as_the_line_pass_splits_them(text):
    # str.count for "v " and "f " lines and a regex for the rest: each line's first
    # token, split on spaces and tabs as _normalize_lines does
    from collections import Counter

    want = Counter((fixups._SEPARATORS.split(line.strip(" \t")) + [""])[0]
                   for line in ("\n" + text).split("\n")[1:])
    got = Counter(fixups._OTHER_FIRST_TOKEN.findall("\n" + text))
    got["v"] += ("\n" + text).count("\nv ")
    got["f"] += ("\n" + text).count("\nf ")
    assert +got == +want


def test_vertex_colours_in_0_1_are_plain():
    text = "v 0 0 0 1 0 0\nv 1 0 0 0 1 0\nv 0 1 0 0 0 nan\nf 1 2 3\n"
    assert _agree(text)


def test_seeded_mutations_never_prove_a_file_the_line_pass_changes():
    rng = random.Random(19)
    proven = 0
    for _ in range(3000):
        text = BASE
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(text))
            cut = rng.randint(0, 2)
            text = text[:i] + rng.choice(ALPHABET) + text[i + cut:]
        proven += _agree(text)
    assert 0 < proven < 3000  # both answers were exercised


@pytest.mark.parametrize("name", ["classic/stanford-bunny.obj", "classic/armadillo.obj",
                                  "textured/spot/spot_triangulated.obj",
                                  "obj-awkward/regr01.obj"])
def test_reference_meshes_take_the_fast_path(ref_assets, name):
    text = fixups.decode_text((ref_assets / name).read_bytes())
    assert _agree(fixups._join_continuations(text.replace("\r\n", "\n").replace("\r", "\n")))


def _trimesh_arrays(text):
    import io

    from trimesh.exchange.obj import load_obj

    parts = list(load_obj(io.StringIO(text))["geometry"].values())
    assert len(parts) == 1
    return np.asarray(parts[0]["vertices"]), np.asarray(parts[0]["faces"])


@pytest.mark.parametrize("name", ["classic/stanford-bunny.obj", "classic/armadillo.obj",
                                  "classic/teapot.obj"])
def test_plain_triangles_are_the_arrays_trimesh_reads(ref_assets, name):
    text = fixups.decode_text((ref_assets / name).read_bytes())
    same, triangles = fixups.normalize_obj_parsed(text)
    assert triangles is not None  # the fast path: no trimesh parse
    vertices, faces = triangles
    want_v, want_f = _trimesh_arrays(same)
    np.testing.assert_array_equal(vertices, want_v)
    np.testing.assert_array_equal(faces, want_f)


def test_plain_triangles_drop_unreferenced_vertices_in_order():
    text = "v 0 0 0\nv 9 9 9\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 4\nf 5 4 3\n"
    vertices, faces = fixups.normalize_obj_parsed(text)[1]
    np.testing.assert_array_equal(vertices, [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
    np.testing.assert_array_equal(faces, [[0, 1, 2], [3, 2, 1]])
    want_v, want_f = _trimesh_arrays(text)
    np.testing.assert_array_equal(vertices, want_v)
    np.testing.assert_array_equal(faces, want_f)
    # lines indented by spaces and tabs are the same lines (trimesh's own reader fails
    # on an indented `v` line with an IndexError; the line pass reads it as a vertex)
    indented = text.replace("\nv 0 1 0", "\n  v\t0 1 0").replace("\nf 5", "\n\tf 5")
    got = fixups.normalize_obj_parsed(indented)[1]
    np.testing.assert_array_equal(got[0], vertices)
    np.testing.assert_array_equal(got[1], faces)


@pytest.mark.parametrize("text", [
    "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 4 3\n",                 # a quad
    "v 0 0 0\nv 1 0 0\nv 0 1 0\nvn 0 0 1\nf 1//1 2//1 3//1\n",         # normals
    "v 0 0 0 1 0 0\nv 1 0 0 0 1 0\nv 0 1 0 0 0 1\nf 1 2 3\n",          # colours
    "v 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl red\nf 1 2 3\n",                # a material
    "v 0 0 0\nv 1 0 0\nv 0 1 0\n",                                     # no faces
])
def test_other_files_are_left_to_trimesh(text):
    assert fixups.normalize_obj_parsed(text) == (text, None)


@pytest.mark.parametrize("text, triangles", [
    ("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\nf 2 4 3\n", True),    # plain triangles
    ("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\nf 1 2 4 3\n", False),  # then a quad
    ("v 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nf 1 2 3\nf 1/1 2/1 3/1\n", False),  # then a uv
    ("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 4 3\nf 1 2 3\n", False),  # a quad first
])
def test_faces_after_a_plain_first_triangle_are_still_checked(text, triangles):
    # the triangle-only match is tried first when the first face line is one; any other
    # face line sends the proof to the general match
    proven, parsed = fixups._plain_obj(text)
    assert proven and _agree(text) and (parsed is not None) == triangles
    bad = text.replace("f 1 2 3\n", "f 1 2 9\n")  # out of range, wherever it stands
    assert not fixups._plain_obj(bad)[0]
