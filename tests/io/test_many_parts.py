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
