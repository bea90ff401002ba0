"""benchmarks/surfaces_gpu.py (the runbook's surfaces step) runs here on the Numba path,
with its generated mesh of the asked size."""

import json
import sys

import numpy as np
from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

import surfaces_gpu


def test_uv_sphere_is_a_closed_unit_sphere_of_the_asked_size():
    pos, faces, normals = surfaces_gpu.uv_sphere(20_000)
    assert 18_000 <= len(faces) <= 20_000
    np.testing.assert_allclose(np.linalg.norm(pos, axis=1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(pos, normals)
    # outward, counter-clockwise faces (seen from outside), except the degenerate pole ones
    p = pos.astype(np.float64)
    n = np.cross(p[faces[:, 1]] - p[faces[:, 0]], p[faces[:, 2]] - p[faces[:, 0]])
    big = np.linalg.norm(n, axis=1) > 1e-9
    assert (np.einsum("ij,ij->i", n[big], p[faces[big, 0]]) > 0).all()


def test_runs_on_the_numba_path_and_writes_json(tmp_path, capsys):
    out = tmp_path / "s.json"
    assert surfaces_gpu.main(["--backend", "numba", "--triangles", "5e3", "--size", "96x64",
                              "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["size"] == [96, 64] and 4_000 < data["triangles"] <= 5_000
    assert data["numba_ms"] > 0 and data["numba_triangles_per_s"] > 0
    assert "triangles at 96x64" in capsys.readouterr().out
