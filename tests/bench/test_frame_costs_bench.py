"""benchmarks/frame_costs.py runs (the fast sections, a small frame): every figure it
reports is written to the JSON, and an unknown section is a one-line error."""

import json
import sys

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import frame_costs


def test_clip_and_points_sections_write_their_figures(tmp_path, capsys):
    out = tmp_path / "costs.json"
    assert frame_costs.main(["clip", "points", "--frame", "96x64", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["frame"] == [96, 64] and set(data["load_before"]) == {"clip", "points"}
    clip = data["clip"]
    assert clip["clipped"] == frame_costs.CLIPPED and clip["reference_clipped"] > 0
    for key in ("setup_ms", "setup_clipped_ms", "us_per_clipped", "reference_us_per_clipped"):
        assert isinstance(clip[key], float)
    pts = data["points"]
    for n in ("1e6", "1e4"):
        assert pts[n]["frame_ms"] > 0 and pts[n]["naive_projection_ms"] > 0
        assert pts[n]["ratio"] == pytest.approx(pts[n]["frame_ms"] / pts[n]["naive_projection_ms"])
    printed = capsys.readouterr().out
    assert "per clipped triangle" in printed and "fixed cost" in printed


def test_unknown_section_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        frame_costs.main(["nope"])
    assert exc.value.code == 2
    assert "unknown section 'nope'" in capsys.readouterr().err
