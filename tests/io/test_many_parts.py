"""Files with many parts load in time proportional to their size (issue 24 item 12).

Scaling is checked by counting work, never by timing: the number of Python function
calls ``cProfile`` counts for a file and for one with k times the parts (deterministic
for a given input) must grow at most k times, with 10 % slack. A per-part linear search
(what trimesh's name uniquifying did for every part of an OBJ without a material
library) makes that ratio grow with the size instead."""

from __future__ import annotations

import cProfile
import pstats

import numpy as np
import pytest

from engine.io import load


def _calls(path) -> int:
    """Python function calls ``load(path)`` makes (cProfile's count)."""
    profile = cProfile.Profile()
    profile.enable()
    try:
        load(path)
    finally:
        profile.disable()
    return pstats.Stats(profile).total_calls


def _proportional(make, small: int, k: int = 4):
    """Calls for ``make(k * small)`` over calls for ``make(small)`` are <= 1.1 k."""
    ratio = _calls(make(k * small)) / _calls(make(small))
    assert ratio <= 1.1 * k, f"{k}x the parts cost {ratio:.2f}x the work"


# ---------------------------------------------------------------------------- OBJ
def _groups_obj(path, n):
    """The issue's input: one triangle per group, each group its own material, and no
    material library (3 shared vertices, then `g gN / usemtl mN / f 1 2 3`)."""
    lines = ["v 0 0 0\nv 1 0 0\nv 0 1 0\n"]
    lines += [f"g g{i}\nusemtl m{i}\nf 1 2 3\n" for i in range(n)]
    path.write_text("".join(lines))
    return path


def test_obj_parts_are_named_after_their_materials(tmp_path):
    model = load(_groups_obj(tmp_path / "g.obj", 300))
    assert sorted(c.name for c in model.children) == sorted(f"m{i}" for i in range(300))
    for child in model.children:
        np.testing.assert_array_equal(child.geometry.faces, [[0, 1, 2]])
        # each part keeps the three shared vertices (recentred on their midpoint)
        np.testing.assert_allclose(child.geometry.positions + child.geometry.origin,
                                   [[0, 0, 0], [1, 0, 0], [0, 1, 0]])


def test_obj_names_need_no_uniquifying(tmp_path, monkeypatch):
    """The mechanism: no part name is taken when it is asked for, so no search runs."""
    import trimesh.exchange.obj as tobj
    import trimesh.util as tutil

    taken = []
    original = tutil.unique_name

    def counting(start, contains, counts=None):
        if start in contains:
            taken.append(start)
        return original(start, contains, counts)

    monkeypatch.setattr(tutil, "unique_name", counting)
    monkeypatch.setattr(tobj.util, "unique_name", counting)
    assert len(load(_groups_obj(tmp_path / "g.obj", 200)).children) == 200
    assert taken == []


def test_obj_with_many_groups_loads_in_proportional_work(tmp_path):
    _proportional(lambda n: _groups_obj(tmp_path / f"g{n}.obj", n), 500)


@pytest.mark.parametrize("n", [1, 2])
def test_obj_with_one_material_is_one_node(tmp_path, n):
    """One part is the root itself; two are its children (the materials' names)."""
    model = load(_groups_obj(tmp_path / "g.obj", n))
    if n == 1:
        assert model.children == () and model.geometry.faces.tolist() == [[0, 1, 2]]
    else:
        assert sorted(c.name for c in model.children) == ["m0", "m1"]


# ---------------------------------------------------------------------------- XYZ
def _xyz(path, n, fmt="{:.5f} {:.5f} {:.5f}", head=""):
    rng = np.random.default_rng(1)
    pts = rng.uniform(-1, 1, (n, 3))
    path.write_text(head + "\n".join(fmt.format(*p) for p in pts) + "\n")
    return path, pts


def test_xyz_memory_is_a_small_multiple_of_the_points(tmp_path):
    """Peak memory (tracemalloc: every Python and NumPy allocation) while loading
    200,000 points is under 6x their float64 coordinates (measured 85 bytes a point,
    3.5x; reading line by line kept ~550 bytes a point)."""
    import tracemalloc

    path, pts = _xyz(tmp_path / "p.xyz", 200_000)
    load(path)  # imports and caches outside the measurement
    tracemalloc.start()
    try:
        model = load(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 6 * pts.nbytes, f"{peak / len(pts):.0f} bytes a point"
    np.testing.assert_allclose(model.geometry.positions + model.geometry.origin, pts,
                               atol=1e-5)


@pytest.mark.parametrize("head,fmt", [
    ("", "{:.5f} {:.5f} {:.5f}"),
    ("# x y z\n", "{:.5f},{:.5f},{:.5f}"),
    ("x;y;z\n", "{:.5f}; {:.5f}; {:.5f}"),
    ("5000\n", "{:.5f}\t{:.5f}\t{:.5f}"),   # a PTS count line
])
def test_xyz_fast_and_line_by_line_readers_agree(tmp_path, monkeypatch, head, fmt):
    import engine.io.pointclouds as pc

    path, pts = _xyz(tmp_path / "p.xyz", 5000, fmt, head)
    assert pc._fast_table(path) is not None  # a regular file takes the fast path
    fast = load(path).geometry
    monkeypatch.setattr(pc, "_fast_table", lambda p: None)
    slow = load(path).geometry
    np.testing.assert_array_equal(fast.positions, slow.positions)
    np.testing.assert_array_equal(fast.origin, slow.origin)
    np.testing.assert_allclose(fast.positions + fast.origin, pts, atol=1e-5)


def test_xyz_fault_past_the_header_bytes_names_its_line(tmp_path):
    """A bad value far into the file (past the bytes read for the header) is still
    reported with its line: the regular reader gives up and the line reader names it."""
    import engine.io.pointclouds as pc

    n = pc._HEAD_BYTES // 20 + 1000
    lines = [f"{i}.0 1.0 2.0" for i in range(n)]
    lines[n - 7] = "1.0 oops 2.0"
    path = tmp_path / "bad.xyz"
    path.write_text("\n".join(lines) + "\n")
    from engine.errors import LoadError

    with pytest.raises(LoadError) as e:
        load(path)
    assert str(e.value) == f"{path}: line {n - 6}: 'oops' is not a number"


def _own_vertices_obj(path, n, uv=True):
    """n parts, each its own material and its own three vertices (with UVs, normals and
    vertex colours), after a material library: the case trimesh's reader costs P x V."""
    lines = ["mtllib lib.mtl\n"]
    for i in range(n):
        lines.append(f"v {i} 0 0 1 0 0\nv {i + 1} 0 0 0 1 0\nv {i} 1 {i % 7} 0 0 1\n"
                     f"vn 0 0 1\nvt {i % 5 / 5} 0\nvt 1 0\nvt 0 1\nusemtl m{i % (n // 2 + 1)}\n")
        k = 3 * i
        lines.append(f"f {k + 1}/{k + 1}/{i + 1} {k + 2}/{k + 2}/{i + 1} {k + 3}/{k + 3}/{i + 1}\n"
                     if uv else f"f {k + 1} {k + 2} {k + 3}\n")
    path.write_text("".join(lines))
    (path.parent / "lib.mtl").write_text("".join(f"newmtl m{i}\nKd 0.5 {i % 3 / 3} 1\n"
                                                 for i in range(n // 2 + 1)))
    return path


def _triangles(geometry):
    """The mesh's triangles as a sorted array of their corners' (position, colour, uv,
    normal) rows: independent of vertex and face order."""
    g = geometry
    cols = [g.positions + g.origin, g.colors.astype(float)]
    cols += [g.uvs] if g.uvs is not None else []
    cols += [g.normals] if g.normals is not None else []
    rows = np.concatenate(cols, axis=1)[g.faces].reshape(len(g.faces), -1)
    rows = np.round(rows, 5)
    return rows[np.lexsort(rows.T[::-1])]


@pytest.mark.parametrize("uv", [True, False])
def test_obj_split_by_material_reads_what_the_whole_file_gives(tmp_path, monkeypatch, uv):
    """Parsed one material at a time (fixups.split_obj_by_material), an OBJ gives the
    same parts, with the same triangles, colours, UVs and normals, as parsed whole."""
    from engine.io import loaders

    path = _own_vertices_obj(tmp_path / "m.obj", 40, uv)
    whole = {c.name: c.geometry for c in load(path).children}
    monkeypatch.setattr(loaders, "_SPLIT_WORK", 0)
    split = {c.name: c.geometry for c in load(path).children}
    assert sorted(split) == sorted(whole) == sorted(f"m{i}" for i in range(21))
    for name, g in whole.items():
        np.testing.assert_array_equal(_triangles(split[name]), _triangles(g))


def test_obj_parts_with_their_own_vertices_cost_their_own_size(tmp_path, monkeypatch):
    """trimesh's reader masks every vertex of the text it is given once per material:
    the parts x vertices it is handed stay proportional to the file (the whole file at
    once made it 2,000 parts x 6,000 vertices)."""
    import trimesh.exchange.obj as tobj

    work = []
    original = tobj.load_obj

    def counting(file_obj, *args, **kwargs):
        text = file_obj.getvalue()
        work.append(max(text.count("usemtl"), 1) * text.count("\nv "))
        return original(file_obj, *args, **kwargs)

    monkeypatch.setattr(tobj, "load_obj", counting)
    from engine.io import loaders

    monkeypatch.setattr(loaders, "_SPLIT_WORK", 10**6)  # the rule, at a test's size
    model = load(_own_vertices_obj(tmp_path / "m.obj", 2000))
    assert len(model.children) == 1001
    assert sum(work) <= 3 * 6000
