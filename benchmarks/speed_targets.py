"""Issue 19's speed targets in one run: every target, met or not, as one table.

    .venv/bin/python benchmarks/speed_targets.py [--frame 1280x720] [--out DIR]
    .venv/bin/python benchmarks/speed_targets.py --tables-only

Runs, one after the other in this one invocation, the benchmarks that hold the targets
(each in its own process, each comparing against its reference side by side):

    triangles.py      game scene, Duck, full-screen textured quad, bunny (Numba against
                      Mesa llvmpipe drawing the same triangles)
    frame_costs.py    1.1 M and 4 M triangles against llvmpipe, peak RSS per triangle, the
                      slowdown beside a busy competitor, 10^6 and 10^4 points frames
    vertex_stage.py   the vertex stage against a plain prange loop of its arithmetic
    display.py        OBJ load, a new process's first pixel, GL mode, the window frame

writes their JSON and ``speed-targets.json`` (the table's rows, the date, the machine
and its load before the run) into ``--out`` (default benchmarks/results/speed-targets/),
and replaces
the table between the ``<!-- speed:targets -->`` markers of docs/performance.md and
README.md. ``--tables-only`` rewrites the tables from the saved ``speed-targets.json``
without measuring. Compare ratios, never absolute times from other runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from engine.bench.report import replace_between_markers

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "speed-targets"
PAGES = (ROOT / "docs" / "performance.md", ROOT / "README.md")
MARKER = "speed:targets"
# the runs, by the name of the JSON file each writes
RUNS = {
    "triangles": ["triangles.py"],
    "frame_costs": ["frame_costs.py"],
    "vertex_stage": ["vertex_stage.py"],
    "display": ["display.py"],
}


def _filled(res, scene):
    row = next((r for r in res["triangles"]["filled"] if r["scene"] == scene), None)
    return None if row is None else (row["numba_ms"], row["llvmpipe_ms"], "ms")


def _bunny(res):
    row = next(r for r in res["triangles"]["rows"] if r["scene"] == "bunny")
    return row["numba_ms"], row["llvmpipe_ms"], "ms"


def _big(res, scene):
    row = next(r for r in res["frame_costs"]["big"] if r["scene"] == scene)
    return row["numba_ms"], row["llvmpipe_ms"], "ms"


def _points(res):
    p = res["frame_costs"]["points"]["1e6"]
    return p["frame_ms"], p["naive_projection_ms"], "ms"


def _rss(res):
    r = res["frame_costs"]["rss"]
    return r["rss_increase_bytes"] / 2**20, r["mesh_bytes"] / 2**20, "MiB"


def _busy(res):
    b = res["frame_costs"]["busy"]
    return b["numba_slowdown"], b["llvmpipe_slowdown"], "x slower"


def _display(res, row, engine, reference, scale=1.0, unit="ms"):
    d = res["display"]["rows"][row]
    return d[engine] * scale, d[reference] * scale, unit


# (what, the reference, engine/reference figures from the results, target ratio, where
# docs/performance.md explains it)
TARGETS = [
    ("game scene: textured height field + 300 spheres", "llvmpipe, same triangles",
     lambda r: _filled(r, "game"), 1.0, "the-resolve-what-a-pixel-costs"),
    ("Duck.glb, textured", "llvmpipe, same triangles",
     lambda r: _filled(r, "Duck"), 1.0, "the-resolve-what-a-pixel-costs"),
    ("full-screen lit, bilinear-textured quad", "llvmpipe, same quad",
     lambda r: _filled(r, "quad"), 1.0, "the-resolve-what-a-pixel-costs"),
    ("Stanford bunny, 69k lit triangles", "llvmpipe", _bunny, 0.7, "surfaces"),
    ("1.1 M lit triangles", "llvmpipe, no culling", lambda r: _big(r, "1M tris"), 1.0,
     "triangle-setup-culling-threads-and-points"),
    ("4 M-triangle height field", "llvmpipe, no culling",
     lambda r: _big(r, "4M height field"), 1.0, "triangle-setup-culling-threads-and-points"),
    ("vertex stage, 10^6 lit vertices", "plain prange loop, same arithmetic",
     lambda r: (r["vertex_stage"]["inline"]["stage_ms"], r["vertex_stage"]["inline"]["inline_ms"],
                "ms"), 1.5, "vertex-stage-skinning-and-morph-targets"),
    ("10^6 points, whole frame", "naive NumPy projection alone", _points, 1.0,
     "triangle-setup-culling-threads-and-points"),
    ("10^4 points: the frame's fixed cost", "the budget",
     lambda r: (r["frame_costs"]["points"]["fixed_ms"], 1.0, "ms"), 1.0,
     "triangle-setup-culling-threads-and-points"),
    ("peak RSS increase, 4 M triangles", "the mesh data (float32 + int32)", _rss, 4.0,
     "triangle-setup-culling-threads-and-points"),
    ("slowdown beside one busy process (bunny)", "llvmpipe's slowdown", _busy, 1.3,
     "triangle-setup-culling-threads-and-points"),
    ("`frustum render bunny.obj`, new process to first pixel", "trimesh load + raw moderngl",
     lambda r: _display(r, "first_pixel", "engine_s", "raw_s", 1e3), 1.0,
     "first-use-gl-mode-and-the-window"),
    ("bunny OBJ load", "`trimesh.load`",
     lambda r: _display(r, "obj_load", "engine_load_ms", "trimesh_load_ms"), 1.0,
     "first-use-gl-mode-and-the-window"),
    ("GL mode frame (`raster=\"gl\"`)", "raw moderngl, same mesh",
     lambda r: _display(r, "gl_mode", "engine_gl_ms", "raw_moderngl_ms"), 1.3,
     "first-use-gl-mode-and-the-window"),
    ("`frustum view` frame", "the offscreen frame",
     lambda r: _display(r, "window", "window_ms", "offscreen_ms"), 1.15,
     "first-use-gl-mode-and-the-window"),
]


def target_rows(results: dict) -> list[dict]:
    """One row per TARGETS entry: figures, ratio, target, met (None where the run lacks
    the figure, e.g. an asset that is not there)."""
    rows = []
    for what, reference, figures, target, section in TARGETS:
        try:
            got = figures(results)
        except (KeyError, StopIteration, TypeError):
            got = None
        if got is None or got[1] in (None, 0):
            rows.append({"what": what, "reference": reference, "target": target,
                         "section": section, "engine": None, "ref": None, "unit": None,
                         "ratio": None, "met": None})
            continue
        engine, ref, unit = got
        ratio = engine / ref
        rows.append({"what": what, "reference": reference, "target": target,
                     "section": section, "engine": engine, "ref": ref, "unit": unit,
                     "ratio": ratio, "met": ratio <= target})
    return rows


def _figure(value, unit):
    if value is None:
        return "-"
    if unit == "x slower":
        return f"{value:.2f}x slower"
    return f"{value:.1f} {unit}" if value < 100 else f"{value:,.0f} {unit}"


def table(summary: dict, link_prefix: str) -> str:
    """The Markdown table of ``summary`` (speed-targets.json); ``link_prefix`` goes
    before each row's section anchor (``""`` on docs/performance.md itself)."""
    met = sum(bool(r["met"]) for r in summary["rows"])
    head = (f"Issue 19's targets, {summary['date']}, {summary['machine']} (1-minute load "
            f"{summary['load_before']:.1f} before the run; `benchmarks/speed_targets.py`, "
            f"results in `benchmarks/results/speed-targets/`): {met} of "
            f"{len(summary['rows'])} met.")
    lines = [head, "",
             "| workload, 1280x720 | engine (Numba) | reference, same run | ratio | target | |",
             "|---|---:|---:|---:|---:|---|"]
    for r in summary["rows"]:
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}x"
        met = "not run" if r["met"] is None else ("met" if r["met"] else
                                                  f"[not met]({link_prefix}#{r['section']})")
        lines.append(f"| {r['what']} | {_figure(r['engine'], r['unit'])} | {r['reference']}: "
                     f"{_figure(r['ref'], r['unit'])} | {ratio} | <= {r['target']:g}x | {met} |")
    return "\n".join(lines)


def write_tables(summary: dict, pages=PAGES) -> None:
    for page in pages:
        prefix = "" if page.name == "performance.md" else "docs/performance.md"
        page.write_text(replace_between_markers(page.read_text(), MARKER,
                                                table(summary, prefix)))
        print(f"updated {page}")


def measure(frame: str, out: Path) -> dict:
    """Run every benchmark of RUNS into ``out``; their JSON by name, and the summary."""
    out.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()[0]
    started = time.time()
    results = {}
    for name, script in RUNS.items():
        path = out / f"{name}.json"
        cmd = [sys.executable, str(HERE / script[0]), *script[1:], "--json", str(path)]
        if name != "vertex_stage":
            cmd += ["--frame", frame]
        print(f"== {' '.join(cmd[1:])}", flush=True)
        subprocess.run(cmd, check=True, cwd=ROOT)
        results[name] = json.loads(path.read_text())
    cpu = platform.processor() or platform.machine()
    summary = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started)),
               "machine": f"{os.cpu_count()} CPUs ({cpu}), no GPU" if not _has_gpu()
               else f"{os.cpu_count()} CPUs ({cpu})",
               "load_before": load, "minutes": (time.time() - started) / 60,
               "rows": target_rows(results)}
    (out / "speed-targets.json").write_text(json.dumps(summary, indent=1))
    return summary


def _has_gpu() -> bool:
    from engine.render.backends.cupy_backend import cupy_unavailable_reason

    return cupy_unavailable_reason() is None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frame", default="1280x720")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--tables-only", action="store_true",
                    help="rewrite the tables from OUT/speed-targets.json without measuring")
    args = ap.parse_args(argv)
    if args.tables_only:
        summary = json.loads((args.out / "speed-targets.json").read_text())
    else:
        summary = measure(args.frame, args.out)
    print(table(summary, ""))
    write_tables(summary)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
