"""benchmarks/speed_targets.py: every issue-19 target becomes one row with the right
ratio and verdict, and the committed README and performance page hold exactly the
table it writes from the committed run (benchmarks/results/speed-targets/speed-targets.json)."""

import json
import sys

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import speed_targets


def _results():
    """Figures in the shapes the four benchmarks write, with ratios chosen here."""
    return {
        "triangles": {
            "filled": [{"scene": "game", "numba_ms": 30.0, "llvmpipe_ms": 20.0},
                       {"scene": "Duck", "numba_ms": 9.0, "llvmpipe_ms": 10.0}],
            "rows": [{"scene": "bunny", "numba_ms": 7.0, "llvmpipe_ms": 10.0}]},
        "frame_costs": {
            "big": [{"scene": "1M tris", "numba_ms": 50.0, "llvmpipe_ms": 100.0},
                    {"scene": "4M height field", "numba_ms": 300.0, "llvmpipe_ms": 200.0}],
            "points": {"1e6": {"frame_ms": 12.0, "naive_projection_ms": 10.0},
                       "fixed_ms": 0.5},
            "rss": {"rss_increase_bytes": 5 * 2**20, "mesh_bytes": 2 * 2**20},
            "busy": {"numba_slowdown": 1.2, "llvmpipe_slowdown": 1.0}},
        "vertex_stage": {"inline": {"stage_ms": 15.0, "inline_ms": 10.0}},
        "display": {"rows": {"first_pixel": {"engine_s": 1.0, "raw_s": 2.0},
                             "obj_load": {"engine_load_ms": 3.0, "trimesh_load_ms": 2.0},
                             "gl_mode": {"engine_gl_ms": 13.0, "raw_moderngl_ms": 10.0},
                             "window": {"window_ms": 11.0, "offscreen_ms": 10.0}}},
    }


def test_every_target_gets_its_ratio_and_verdict():
    rows = {r["what"]: r for r in speed_targets.target_rows(_results())}
    assert len(rows) == len(speed_targets.TARGETS)
    want = {  # ratio, target, met
        "game scene: textured height field + 300 spheres": (1.5, 1.0, False),
        "Duck.glb, textured": (0.9, 1.0, True),
        "Stanford bunny, 69k lit triangles": (0.7, 0.7, True),
        "1.1 M lit triangles": (0.5, 1.0, True),
        "4 M-triangle height field": (1.5, 1.0, False),
        "vertex stage, 10^6 lit vertices": (1.5, 1.5, True),
        "10^6 points, whole frame": (1.2, 1.0, False),
        "10^4 points: the frame's fixed cost": (0.5, 1.0, True),
        "peak RSS increase, 4 M triangles": (2.5, 4.0, True),
        "slowdown beside one busy process (bunny)": (1.2, 1.3, True),
        "`frustum render bunny.obj`, new process to first pixel": (0.5, 1.0, True),
        "bunny OBJ load": (1.5, 1.0, False),
        "GL mode frame (`raster=\"gl\"`)": (1.3, 1.3, True),
        "`frustum view` frame": (1.1, 1.15, True),
    }
    for what, (ratio, target, met) in want.items():
        row = rows[what]
        assert row["ratio"] == pytest.approx(ratio) and row["target"] == target, what
        assert row["met"] is met, what
    # the quad is missing from these results: a row that says so, not a crash
    quad = rows["full-screen lit, bilinear-textured quad"]
    assert quad["ratio"] is None and quad["met"] is None
    summary = {"date": "d", "machine": "m", "load_before": 0.0,
               "rows": list(rows.values())}
    text = speed_targets.table(summary, "docs/performance.md")
    assert "10 of 15 met" in text  # the ten True rows above
    assert "| not run |" in text
    assert "[not met](docs/performance.md#the-resolve-what-a-pixel-costs)" in text


def test_committed_pages_hold_the_committed_run(tmp_path):
    summary = json.loads((ROOT / "benchmarks/results/speed-targets/speed-targets.json").read_text())
    assert len(summary["rows"]) == len(speed_targets.TARGETS)
    for page in speed_targets.PAGES:
        copy = tmp_path / page.name
        text = page.read_text()
        copy.write_text(text)
        speed_targets.write_tables(summary, [copy])
        assert copy.read_text() == text, f"{page.name}: the table is not the committed run's"
