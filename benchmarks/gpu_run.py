"""The GPU runbook: one command, one archive, one summary, in under 240 s.

    benchmarks/gpu_run.sh OUT_DIR        (or: python3 benchmarks/gpu_run.py OUT_DIR)

Runs on the GPU machine's image as it is (Python, CuPy, NVRTC, Numba, torch, pytest
preinstalled; no package index; trimesh, pyglet and moderngl absent), from a copy of the
repository (nothing from ../shared: every scene and mesh is generated here):

    1 preflight  engine.render.backends.cuda_check: versions, cupy.show_config(), device;
                 every CUDA source compiled, every kernel launched once and checked
                 against the CPU. A failure stops the run (exit 3) with its reason.
    2 tests      pytest -m "gpu or nvrtc" with FRUSTUM_GPU_RUN=1: a skipped GPU test
                 fails; modules needing packages the image lacks skip at collection.
    3 compare    benchmarks/gpu_compare.py: 10^7 vertices, 16 objects, bit-identical to Numba
    4 bench      frustum bench on the GPU paths (and their CPU references) at 10^3, 10^6,
                 10^8: device time, launch overhead, bandwidth fractions, NVRTC compile
                 time; JSON rewritten after every size. New GPU paths (names with cupy,
                 cuda or torch) are included automatically.
    5 frames     whole frames through the Renderer (cupy host/device frame, numba) at
                 10^3 and 10^6, the CUDA rasterizer's points/s, the measured crossover.
    6 surfaces   benchmarks/surfaces_gpu.py: a 10M-triangle mesh at 3840x2160 on the CUDA
                 surface kernels (ms per frame, triangles/s) beside Numba at 640x360.

Every step runs in its own process with a timeout cut to what is left of the budget
(--budget, default 230 s), its output shown and logged. After every step the archive
OUT_DIR/gpu-run.tar.gz (logs, junit XML, JSON, Markdown) and OUT_DIR/gpu-summary.txt
are rewritten, so a run stopped from outside keeps what it did. Exit status: 0 when every
step passed, 3 when the preflight failed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARCHIVE = "gpu-run.tar.gz"
SUMMARY = "gpu-summary.txt"
# The GPU test selection (also run by tests/test_gpu_image.py under the image's
# package set on every commit).
GPU_TEST_ARGS = ("-q", "-p", "no:cacheprovider", "-m", "gpu or nvrtc", "-rfEs", "tests")
BENCH_SIZES = "1e3,1e6,1e8"
CPU_REFERENCE_PATHS = ("naive_numpy", "engine_numba", "many_engine_numba")


def bench_paths() -> list[str]:
    """The benchmark paths of a GPU run: every GPU path plus the CPU references."""
    sys.path.insert(0, str(ROOT))
    from engine.bench import paths as P

    names = [*P.PATHS, *P.MANY_PATHS]
    gpu = [n for n in names if any(k in n for k in ("cupy", "cuda", "torch"))]
    return [*gpu, *(n for n in CPU_REFERENCE_PATHS if n in names)]


def steps(py: str, work: Path) -> list[dict]:
    return [
        {"name": "preflight", "timeout": 60, "fatal": True,
         "cmd": [py, "-m", "engine.render.backends.cuda_check"]},
        {"name": "tests", "timeout": 110, "env": {"FRUSTUM_GPU_RUN": "1"},
         "cmd": [py, "-m", "pytest", *GPU_TEST_ARGS,
                 f"--junitxml={work / 'gpu-tests.xml'}"]},
        {"name": "compare", "timeout": 45,
         "cmd": [py, str(ROOT / "benchmarks" / "gpu_compare.py"), "--n", "1e7",
                 "--out", str(work)]},
        {"name": "bench", "timeout": 90,
         "cmd": [py, "-m", "engine", "bench", "--quick", "--sizes", BENCH_SIZES,
                 "--paths", ",".join(bench_paths()), "--out", str(work), "--budget", "45"]},
        {"name": "frames", "timeout": 45,
         "cmd": [py, str(Path(__file__).resolve()), "--frames", str(work / "frames.json")]},
        {"name": "surfaces", "timeout": 40,
         "cmd": [py, str(ROOT / "benchmarks" / "surfaces_gpu.py"), "--triangles", "1e7",
                 "--size", "3840x2160", "--json", str(work / "surfaces.json")]},
    ]


def run_step(step: dict, work: Path, deadline: float, log) -> dict:
    """Run one step with its timeout cut to the budget left; returns its record."""
    left = deadline - time.monotonic()
    timeout = max(1.0, min(step["timeout"], left))
    rec = {"name": step["name"], "cmd": " ".join(step["cmd"]), "timeout_s": round(timeout, 1)}
    if left < 5:
        rec.update(status="not run", reason="time budget used up", seconds=0.0)
        log(f"== {step['name']}: not run (time budget used up)")
        return rec
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT),
                                                       os.environ.get("PYTHONPATH")])),
           **step.get("env", {})}
    log(f"== {step['name']} (timeout {timeout:.0f} s): {rec['cmd']}")
    logfile = work / f"{step['name']}.log"
    t0 = time.monotonic()
    tail: list[str] = []
    with open(logfile, "w") as out:
        proc = subprocess.Popen(step["cmd"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, bufsize=1,
                                start_new_session=True)
        timed_out = threading.Event()

        def kill():
            timed_out.set()
            try:
                os.killpg(proc.pid, 9)  # the step and everything it started
            except ProcessLookupError:
                pass

        watchdog = threading.Timer(timeout, kill)
        watchdog.start()
        try:
            for line in proc.stdout:  # ends when the step exits or is killed
                out.write(line)
                tail = (tail + [line.rstrip()])[-40:]
                log("   " + line.rstrip())
            proc.wait()
        finally:
            watchdog.cancel()
        timed_out = timed_out.is_set()
    rec["seconds"] = round(time.monotonic() - t0, 1)
    rec["returncode"] = proc.returncode
    rec["status"] = "timed out" if timed_out else ("passed" if proc.returncode == 0 else "failed")
    rec["tail"] = tail[-12:]
    log(f"== {step['name']}: {rec['status']} in {rec['seconds']} s")
    return rec


def summarise(records: list[dict], work: Path, started: float) -> str:
    lines = [(f"frustum GPU run, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
              f"{time.monotonic() - started:.0f} s")]
    pre = next((r for r in records if r["name"] == "preflight"), None)
    if pre is not None:
        pre_log = (work / "preflight.log")
        text = pre_log.read_text() if pre_log.exists() else ""
        for line in text.splitlines():
            if line.startswith(("device ", "cupy ", "GPU CHECK", "python ")):
                lines.append("  " + line)
    lines.append("")
    for r in records:
        lines.append(f"{r['name']:<10} {r['status']:<10} {r.get('seconds', 0):>6} s")
        if r["status"] not in ("passed", "not run"):
            lines += [f"    {t}" for t in r.get("tail", [])[-6:]]
    tests = work / "tests.log"
    if tests.exists():
        summary = [ln for ln in tests.read_text().splitlines()
                   if ln.startswith(("FAILED", "ERROR", "SKIPPED")) or " passed" in ln
                   or " failed" in ln]
        if summary:
            lines += ["", "GPU tests:"] + [f"  {ln}" for ln in summary[-30:]]
    compare = work / "gpu-compare.log"
    for path in (work / "compare.log", compare):
        if path.exists():
            lines += [f"  {ln}" for ln in path.read_text().splitlines()
                      if ln.startswith("gpu_compare:")]
            break
    bench_json = work / "bench-gpu.json"
    if bench_json.exists():
        try:
            lines += ["", *bench_lines(json.loads(bench_json.read_text()))]
        except (ValueError, KeyError, TypeError) as exc:
            lines.append(f"bench-gpu.json unreadable: {exc}")
    frames = work / "frames.json"
    if frames.exists():
        try:
            lines += ["", *frame_lines(json.loads(frames.read_text()))]
        except (ValueError, KeyError, TypeError) as exc:
            lines.append(f"frames.json unreadable: {exc}")
    surfaces_log = work / "surfaces.log"
    if surfaces_log.exists():
        lines += ["", "Surfaces (CUDA kernels):"] + [
            f"  {ln}" for ln in surfaces_log.read_text().splitlines()
            if "triangles at" in ln or "same mesh" in ln]
    return "\n".join(lines) + "\n"


def bench_lines(data: dict) -> list[str]:
    bw = (data.get("copy_bandwidth") or {}).get("device") or {}
    out = [(f"Benchmark ({'complete' if data.get('complete') else 'INCOMPLETE'}); device "
            f"copy bandwidth {bw.get('bytes_per_s', 0) / 1e9:.0f} GB/s (read+write)")]
    for r in data.get("results", []) + data.get("many_objects", {}).get("results", []):
        dev = r.get("device_time_s")
        frac = r.get("device_bandwidth_fraction")
        out.append(f"  {r['path']:<24} N={r['n']:>11,} wall {r['median_s'] * 1e3:9.3f} ms"
                   + (f"  device {dev * 1e3:9.3f} ms" if dev is not None else "")
                   + (f" ({frac:.0%} of copy bw)" if frac else "")
                   + (f"  launch {r['host_call_s'] * 1e6:7.1f} us"
                      if r.get("host_call_s") is not None else ""))
    if data.get("compile_s"):
        out.append("  NVRTC compile, no cache: " + ", ".join(
            f"{k} {v:.2f} s" for k, v in data["compile_s"].items()))
    for name, t in (data.get("targets") or {}).items():
        out.append(f"  target {name}: {'met' if t.get('met') else 'NOT met'} "
                   + json.dumps({k: v for k, v in t.items() if k != 'met'}, default=str))
    for f in data.get("failures") or []:
        out.append(f"  FAILED {f['path']} N={f['n']}: {f['error']}")
    for s in data.get("skipped") or []:
        out.append(f"  skipped {s['path']}: {s['reason']}")
    return out


def frame_lines(data: dict) -> list[str]:
    out = ["Whole frames (Renderer, 640x480, median of synchronised frames):"]
    for r in data.get("frames", []):
        out.append(f"  {r['mode']:<22} N={r['n']:>9,} {r['seconds'] * 1e3:9.3f} ms")
    for r in data.get("raster", []):
        out.append(f"  CUDA rasterizer N={r['points']:>11,} at {r['pixels']:,} px: "
                   f"{r['ms_median']:.3f} ms, {r['points_per_s'] / 1e9:.2f} G points/s")
    if "crossover" in data:
        out.append(f"  measured Numba/CuPy crossover: {data['crossover']:,} vertices")
    for e in data.get("errors", []):
        out.append(f"  FAILED {e}")
    return out


def write_outputs(out_dir: Path, work: Path, records: list[dict], started: float):
    """The archive (every file of ``work``) and the summary, each replaced atomically."""
    summary = summarise(records, work, started)
    (work / SUMMARY).write_text(summary)
    (work / "steps.json").write_text(json.dumps(records, indent=1) + "\n")
    tmp = out_dir / f".{ARCHIVE}.tmp"
    with tarfile.open(tmp, "w:gz") as tar:
        for path in sorted(work.iterdir()):
            if path.is_file():
                tar.add(path, arcname=f"gpu-run/{path.name}")
    tmp.replace(out_dir / ARCHIVE)
    tmp = out_dir / f".{SUMMARY}.tmp"
    tmp.write_text(summary)
    tmp.replace(out_dir / SUMMARY)
    return summary


def run(out_dir: Path, budget_s: float = 230.0, py: str = sys.executable, step_list=None,
        log=print) -> int:
    """Run the steps; returns the exit status (see the module docstring)."""
    started = time.monotonic()
    deadline = started + budget_s
    out_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="frustum-gpu-run-"))
    records: list[dict] = []
    status = 0
    for step in (steps(py, work) if step_list is None else step_list):
        rec = run_step(step, work, deadline, log)
        records.append(rec)
        write_outputs(out_dir, work, records, started)
        if rec["status"] != "passed":
            if step.get("fatal"):
                log(f"== stopping: {step['name']} {rec['status']}; nothing after it would "
                    "measure the GPU")
                status = 3
                break
            status = 1
    summary = write_outputs(out_dir, work, records, started)
    shutil.rmtree(work, ignore_errors=True)  # everything is in the archive
    log("")
    log(summary)
    log(f"== wrote {out_dir / ARCHIVE} and {out_dir / SUMMARY}")
    return status


# --- step 5: whole frames and the rasterizer, run in its own process --------------------

def measure_frames(path: Path) -> int:
    import statistics

    import numpy as np

    sys.path.insert(0, str(ROOT))
    from engine import Node, PerspectiveCamera, PointCloud, Renderer, Scene
    from engine.render.backends.crossover import crossover, measure_crossover
    from engine.render.backends.cupy_raster import benchmark_rasterize

    data: dict = {"frames": [], "raster": [], "errors": []}

    def save():
        path.write_text(json.dumps(data, indent=1) + "\n")

    def scene_of(n):
        rng = np.random.default_rng(0)
        scene = Scene("points")
        scene.add(Node("cloud", geometry=PointCloud(rng.uniform(-1, 1, (n, 3)).astype(
            np.float32), rng.integers(0, 256, (n, 4), dtype=np.uint8))))
        return scene, scene.add(PerspectiveCamera(fov_y=60.0, position=(0.3, 0.2, 4.0)))

    modes = {"cupy, host frame": ("cupy", {"copy": False, "depth": False}),
             "cupy, device frame": ("cupy", {"host": False}),
             "numba": ("numba", {"depth": False})}
    for n in (10**3, 10**6):
        scene, cam = scene_of(n)
        for mode, (backend, kwargs) in modes.items():
            try:
                r = Renderer(scene, cam, (640, 480), backend=backend)
                for _ in range(3):
                    r.render(**kwargs)
                samples = []
                for _ in range(30 if n <= 10**3 else 10):
                    t0 = time.perf_counter()
                    r.render(**kwargs)
                    if not kwargs.get("host", True):
                        import cupy

                        cupy.cuda.get_current_stream().synchronize()
                    samples.append(time.perf_counter() - t0)
                data["frames"].append({"mode": mode, "n": n,
                                       "seconds": statistics.median(samples)})
            except Exception as exc:  # noqa: BLE001 - record and go on
                data["errors"].append(f"frame {mode} N={n}: {type(exc).__name__}: {exc}")
            save()
    rng = np.random.default_rng(1)
    for n in (10**6, 10**7):
        try:
            xy = np.stack([rng.uniform(0, 1280, n), rng.uniform(0, 720, n)], 1).astype(
                np.float32)
            res = benchmark_rasterize(xy, rng.uniform(0, 1, n).astype(np.float32),
                                      rng.random(n) < 0.9,
                                      rng.integers(0, 256, (n, 4), dtype=np.uint8), (1280, 720))
            res["points_per_s"] = n / (res["ms_median"] / 1e3)
            data["raster"].append(res)
        except Exception as exc:  # noqa: BLE001
            data["errors"].append(f"raster N={n}: {type(exc).__name__}: {exc}")
        save()
    try:
        os.environ.pop("FRUSTUM_CROSSOVER", None)
        value, times = measure_crossover()
        data["crossover"], data["crossover_frame_s"] = value, times
        crossover(lambda: (value, times))  # cache it for this machine
    except Exception as exc:  # noqa: BLE001
        data["errors"].append(f"crossover: {type(exc).__name__}: {exc}")
    save()
    for line in frame_lines(data):
        print(line)
    return 1 if data["errors"] else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", help="folder for gpu-run.tar.gz and gpu-summary.txt")
    ap.add_argument("--budget", type=float, default=230.0, help="seconds for the whole run")
    ap.add_argument("--frames", metavar="JSON", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.frames:
        return measure_frames(Path(args.frames))
    if not args.out:
        ap.error("OUT_DIR is required")
    return run(Path(args.out), args.budget)


if __name__ == "__main__":
    sys.exit(main())
