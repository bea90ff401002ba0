"""Benchmark results: target checks, the CPU/GPU crossover, and Markdown tables.

Results dict (also the JSON file): ``machine`` (host, cpu, cores, gpu, versions,
commit), ``created_utc``, ``copy_bandwidth`` {host, device}, ``results`` and
``many_objects.results`` (records with path, n, median_s, q1_s, q3_s, min_s, max_s,
repeats, first_call_s, vertices_per_s, bytes_per_vertex, bandwidth_fraction, and for
GPU/GL paths device_time_s; for GPU paths also device_time_method, host_call_s (the
host's launch overhead per call, not waiting for the device) and
device_bandwidth_fraction (from device time)), ``skipped``, ``failures`` (path, n,
error, traceback tail of paths that raised), ``compile_s`` (NVRTC seconds per CUDA
source with no cache), ``complete`` (False while a run is still going), ``sync_demo``,
``targets``, ``crossover``.
"""

from __future__ import annotations

CPU_ENGINE = ("engine_numba", "engine_numpy")


def _by(results: list[dict]) -> dict[tuple[str, int], dict]:
    return {(r["path"], r["n"]): r for r in results}


def _ratio(a, b):
    return a / b if a and b else None


def crossover(results: list[dict]) -> dict:
    """Smallest measured N from which a GPU path beats the best engine CPU backend at
    that N and at every larger measured N; None when it never does or there is no GPU."""
    idx = _by(results)
    out = {}
    for gpu_path in ("engine_cupy_transfer", "engine_cupy"):
        ns = sorted(n for (p, n) in idx if p == gpu_path)
        wins = []
        for n in ns:
            cpu = [idx[(p, n)]["median_s"] for p in CPU_ENGINE if (p, n) in idx]
            wins.append((n, bool(cpu) and idx[(gpu_path, n)]["median_s"] < min(cpu)))
        cross = None
        for n, win in reversed(wins):
            if not win:
                break
            cross = n
        out[gpu_path] = cross
    has_gpu = any(r["device"] == "gpu" for r in results)
    out["note"] = ("N from which the GPU path (with per-frame transfers / device-resident) "
                   "beats the best engine CPU backend" if has_gpu else
                   "no GPU in this run: crossover not measured")
    return out


def analyse(res: dict) -> dict:
    """Targets from issues 2 and 6, read off this run (ratios within one run)."""
    idx = _by(res["results"])
    many = _by(res["many_objects"]["results"])
    t = {}
    big, small = 10**6, 10**3
    for p in CPU_ENGINE:
        if (p, big) in idx and ("naive_numpy", big) in idx:
            r = _ratio(idx[("naive_numpy", big)]["median_s"], idx[(p, big)]["median_s"])
            t[f"{p}_vs_naive_at_1e6"] = {"speedup": r, "target": 4.0, "met": r >= 4.0}
        if (p, small) in idx and ("naive_numpy", small) in idx:
            r = _ratio(idx[("naive_numpy", small)]["median_s"], idx[(p, small)]["median_s"])
            t[f"{p}_per_frame_vs_naive_at_1e3"] = {"speedup": r, "target": 1.0, "met": r >= 1.0}
    top = max((n for (p, n) in idx if p == "engine_cupy"), default=None)
    if top:
        rec = idx[("engine_cupy", top)]
        f = rec.get("device_bandwidth_fraction") or rec["bandwidth_fraction"]
        t["engine_cupy_bandwidth_fraction"] = {"n": top, "fraction": f, "target": 0.8,
                                               "met": f is not None and f >= 0.8}
        for other, goal in (("naive_cupy", 5.0), ("torch_cuda", 1.0)):
            ns = [n for (p, n) in idx if p == other and n >= big and ("engine_cupy", n) in idx]
            if ns:
                worst = min(_ratio(idx[(other, n)]["median_s"], idx[("engine_cupy", n)]["median_s"])
                            for n in ns)
                t[f"engine_cupy_vs_{other}_at_ge_1e6"] = {"min_speedup": worst, "target": goal,
                                                         "met": worst >= goal if goal > 1 else
                                                         worst > 1.0}
    if ("engine_cupy", small) in idx:
        h = idx[("engine_cupy", small)].get("host_call_s")
        t["engine_cupy_host_overhead_at_1e3"] = {"seconds": h, "target": 30e-6,
                                                 "met": h is not None and h <= 30e-6}
    for p in ("many_engine_cupy", "many_engine_numba", "many_engine_numpy"):
        if p in {q for (q, _) in many}:
            rec = next(r for r in res["many_objects"]["results"] if r["path"] == p)
            t[f"{p}_calls_per_frame"] = {"calls": rec["calls_per_frame"], "target": 1,
                                         "met": rec["calls_per_frame"] == 1}
    return {"targets": t, "crossover": crossover(res["results"])}


def _t(seconds) -> str:
    if seconds is None:
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def _n(n: int) -> str:
    exp = len(str(n)) - 1
    return f"10^{exp}" if n == 10**exp else f"{n:,}"


def _rows(records: list[dict]) -> list[str]:
    lines = [("| path | N | per frame (median) | spread (q1-q3) | Mvertices/s | B/vertex "
              "| % of copy bw | first call | device time (kernels) | launch (host) "
              "| calls/frame |"),
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in records:
        bw = r.get("bandwidth_fraction")
        dbw = r.get("device_bandwidth_fraction")
        dev = _t(r.get("device_time_s"))
        if r.get("device_time_s") is not None and dbw:
            dev += f" ({dbw:.0%} bw)"
        if "synchronises" in (r.get("device_time_method") or ""):
            dev += " *"
        lines.append(
            f"| {r['label']} | {_n(r['n'])} | {_t(r['median_s'])} | "
            f"{_t(r['q1_s'])}-{_t(r['q3_s'])} | {r['vertices_per_s'] / 1e6:,.1f} | "
            f"{r.get('bytes_per_vertex') or '-'} | {f'{bw:.0%}' if bw else '-'} | "
            f"{_t(r['first_call_s'])} | {dev} | {_t(r.get('host_call_s'))} | "
            f"{r.get('calls_per_frame') or '-'} |")
    return lines


def render_markdown(res: dict) -> str:
    """The results as Markdown: machine line, main table (by path, then N), many-objects
    table, targets, crossover, sync demo, skipped paths."""
    m = res["machine"]
    bw = res["copy_bandwidth"]
    head = (f"Measured {res['created_utc']} on {m['cpu']} ({m['cores']} cores)"
            f"{', GPU ' + m['gpu'] if m['gpu'] else ', no GPU'}"
            f"{', commit ' + m['commit'] if m.get('commit') else ''}"
            f"{' (quick run)' if res.get('quick') else ''}. Copy bandwidth (read+write): host "
            f"{bw['host']['bytes_per_s'] / 1e9:.1f} GB/s"
            f"{', device %.0f GB/s' % (bw['device']['bytes_per_s'] / 1e9) if bw.get('device') else ''}"
            ". Shared machines are noisy: compare ratios within one run.")
    order = {}
    for r in res["results"]:
        order.setdefault(r["path"], len(order))
    recs = sorted(res["results"], key=lambda r: (order[r["path"]], r["n"]))
    out = [head, "", *_rows(recs), ""]
    out += [("First call: compile or kernel-cache load, allocation. Device time: CUDA events "
             "around the kernels only (a spin kernel hides the host's launch work; * marks a "
             "call that synchronises, timed with events around the whole call). Launch: host "
             "time of one call without waiting for the device."), ""]
    if res.get("compile_s"):
        out += ["NVRTC compile with no cache (a kernel-cache miss): " + ", ".join(
            f"{k} {_t(v)}" for k, v in res["compile_s"].items()) + ".", ""]
    many = res["many_objects"]
    if many["results"]:
        out += [(f"Scene of {many['objects']:,} objects x {many['vertices_per_object']:,} "
                 "vertices (one launch per frame vs one per object):"), "",
                *_rows(many["results"]), ""]
    if res.get("targets"):
        out.append("Targets (ratios from this run):")
        out.append("")
        for name, t in res["targets"].items():
            vals = ", ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}"
                             for k, v in t.items() if k != "met")
            out.append(f"- {name}: {vals} -> {'met' if t['met'] else 'NOT met'}")
        out.append("")
    c = res.get("crossover") or {}
    if c:
        out.append(f"Crossover: {c.get('note')}; with transfers: "
                   f"{_n(c['engine_cupy_transfer']) if c.get('engine_cupy_transfer') else '-'}, "
                   f"device-resident: {_n(c['engine_cupy']) if c.get('engine_cupy') else '-'}.")
        out.append("")
    for d in res.get("sync_demo") or []:
        out.append(f"Sync demo, {d['path']} at N={_n(d['n'])}: a timer without synchronisation "
                   f"reads {_t(d['unsynchronised_s'])}; synchronised: {_t(d['synchronised_s'])}.")
    if res.get("sync_demo"):
        out.append("")
    for s in res.get("skipped") or []:
        out.append(f"Skipped {s['path']}: {s['reason']}")
    for f in res.get("failures") or []:
        out.append(f"FAILED {f['path']} at N={_n(f['n'])}: {f['error']}")
    if res.get("complete") is False:
        out.append("Incomplete: the run was still going when this was written.")
    return "\n".join(out).rstrip() + "\n"


def render_summary(res: dict) -> str:
    """A compact table for docs/performance.md: one row per path, one column per N, each cell
    the median time per frame and millions of vertices per second; then the targets."""
    m = res["machine"]
    ns = sorted({r["n"] for r in res["results"]})
    cells: dict[str, dict[int, dict]] = {}
    for r in res["results"]:
        cells.setdefault(r["label"], {})[r["n"]] = r
    lines = [f"{res['created_utc']}, {m['cpu']} ({m['cores']} cores)"
             f"{', ' + m['gpu'] if m['gpu'] else ', no GPU'}"
             f"{', commit ' + m['commit'] if m.get('commit') else ''}"
             f"{', quick run' if res.get('quick') else ''}; host copy bandwidth "
             f"{res['copy_bandwidth']['host']['bytes_per_s'] / 1e9:.1f} GB/s"
             + (f", device {res['copy_bandwidth']['device']['bytes_per_s'] / 1e9:.0f} GB/s"
                if res["copy_bandwidth"].get("device") else "")
             + ". Cells: time per frame (million vertices/s).", "",
             "| path | " + " | ".join(f"N = {_n(n)}" for n in ns) + " |",
             "|---|" + "---:|" * len(ns)]
    for label, row in cells.items():
        vals = [f"{_t(row[n]['median_s'])} ({row[n]['vertices_per_s'] / 1e6:,.0f})"
                if n in row else "-" for n in ns]
        lines.append(f"| {label} | " + " | ".join(vals) + " |")
    many = res["many_objects"]["results"]
    if many:
        lines += ["", f"{res['many_objects']['objects']:,} objects x "
                  f"{res['many_objects']['vertices_per_object']:,} vertices: "
                  + "; ".join(f"{r['label']} {_t(r['median_s'])} ({r['calls_per_frame']} "
                              f"call{'s' if r['calls_per_frame'] != 1 else ''}/frame)"
                              for r in many) + "."]
    if res.get("targets"):
        lines += ["", "Targets: " + "; ".join(
            f"{name} {'met' if t['met'] else 'NOT met'}"
            + (f" ({t['speedup']:.2f}x)" if t.get("speedup") else "")
            for name, t in res["targets"].items()) + "."]
    return "\n".join(lines) + "\n"


def replace_between_markers(text: str, name: str, content: str) -> str:
    """``text`` with the part between ``<!-- name -->`` and ``<!-- /name -->`` replaced.
    Raises ValueError when the markers are missing."""
    start, end = f"<!-- {name} -->", f"<!-- /{name} -->"
    i, j = text.find(start), text.find(end)
    if i < 0 or j < i:
        raise ValueError(f"markers {start} ... {end} not found")
    return text[:i + len(start)] + "\n" + content.rstrip() + "\n" + text[j:]
