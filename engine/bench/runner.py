"""Runs every path at every size in one process and collects the figures.

Sizes: N = 10^3 (many frames: per-frame overhead) up to 10^7 on the CPU and 10^8 for
the GPU paths (``--quick``: 10^3, 10^5, 10^6 with fewer repeats, under a minute on a
2-core machine). Host-only paths stop at ``CPU_MAX_N`` and GL/end-to-end paths at their
own caps, so a full run stays within minutes on the GPU machine too.
"""

from __future__ import annotations

import gc
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import traceback
from datetime import datetime, timezone
from pathlib import Path

from ..errors import EngineError
from . import paths as P
from .bandwidth import device_copy_bandwidth, host_copy_bandwidth
from .report import analyse, render_markdown
from .timing import measure, measure_device_time, measure_gl_query, unsynchronised_call_s

FULL_SIZES = (10**3, 10**4, 10**5, 10**6, 10**7)
GPU_EXTRA_SIZES = (10**8,)
QUICK_SIZES = (10**3, 10**5, 10**6)
CPU_MAX_N = 10**7
# Per-path size caps: GL and whole frames run on llvmpipe/the CPU rasterizer here; the
# transfer path moves ~2.5 GB per frame at 10^8 over PCIe and only matters near the
# crossover, far below that.
PATH_MAX_N = {"gl_transform": 10**7, "e2e_gl": 10**6, "e2e_software": 10**6,
              "engine_cupy_transfer": 10**7}
SMALL_N = 10**3  # "many frames": per-frame overhead


def _gpu_name() -> str | None:
    from ..render.backends.cupy_backend import cupy_unavailable_reason

    if cupy_unavailable_reason():
        return None
    import cupy

    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    name = props["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def _versions() -> dict:
    out = {"python": platform.python_version()}
    for mod in ("numpy", "numba", "cupy", "torch", "moderngl"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001 - absent or broken installs are reported as missing
            out[mod] = None
    return out


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _git_commit() -> str | None:
    try:
        r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                           check=False, text=True, timeout=5, cwd=Path(__file__).resolve().parent)
        return r.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def machine_info() -> dict:
    import os

    return {"host": platform.node(), "cpu": _cpu_model(), "cores": os.cpu_count(),
            "os": platform.platform(), "gpu": _gpu_name(), "versions": _versions(),
            "commit": _git_commit()}


def _settings(quick: bool, n: int) -> dict:
    if n <= SMALL_N:
        return {"repeats": 1000 if quick else 10_000, "max_time_s": 0.4 if quick else 2.0}
    return {"repeats": 5 if quick else 20, "min_repeats": 3, "max_time_s": 0.4 if quick else 3.0}


def time_case(case: P.Case, n: int, quick: bool, bandwidth: dict) -> dict:
    """Measure one case; returns its JSON record."""
    m = measure(case.fn, sync=case.sync, **_settings(quick, n))
    rec = {"path": case.path, "label": case.label, "device": case.device, "n": n,
           **m.to_dict(), "vertices_per_s": n / m.median_s,
           "bytes_per_vertex": case.bytes_per_vertex, "bandwidth_fraction": None,
           "calls_per_frame": case.calls_per_frame, "note": case.note}
    bw_key = "device" if case.device == "gpu" or (
        case.device == "gl" and "llvmpipe" not in case.note and bandwidth.get("device")) else "host"
    bw = bandwidth.get(bw_key)
    if case.bytes_per_vertex and bw:
        rec["bandwidth_fraction"] = case.bytes_per_vertex * n / m.median_s / bw["bytes_per_s"]
        rec["bandwidth_ref"] = bw_key
    reps = 5 if quick or n >= 10**7 else 20
    if case.device == "gpu":
        dt = measure_device_time(case.fn, repeats=reps)
        rec["device_time_s"] = dt.measurement.median_s
        rec["device_time_method"] = dt.method
        bw = bandwidth.get("device")
        if case.bytes_per_vertex and bw and rec["device_time_s"] > 0:
            rec["device_bandwidth_fraction"] = (case.bytes_per_vertex * n / rec["device_time_s"]
                                                / bw["bytes_per_s"])
        # The host's cost of one call, not waiting for the device: launch overhead.
        rec["host_call_s"] = unsynchronised_call_s(case.fn, case.sync, repeats=reps)
    elif case.device == "gl" and case.gl_ctx is not None:
        rec["device_time_s"] = measure_gl_query(case.gl_ctx, case.fn, repeats=min(reps, 5)).median_s
    if case.check is not None:
        rec["agreement"] = case.check()
    return rec


def _failure(name: str, n: int, exc: BaseException) -> dict:
    tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
    return {"path": name, "n": n, "error": f"{type(exc).__name__}: {exc}".strip()[:500],
            "traceback": "".join(tb[-6:])[-2000:]}


def _run_case(factory, workload, n, quick, bandwidth, results, skipped, log, failures=None,
              name=None):
    """Time one path at one size. A ``Skip`` is noted once per path; any other exception
    is recorded in ``failures`` (path, n, error, traceback tail) and the run goes on."""
    name = name or factory.__name__
    try:
        case = factory(workload)
    except P.Skip as exc:
        if name not in skipped:
            skipped[name] = str(exc)
            log(f"  skip {name}: {exc}")
        return
    except Exception as exc:
        if failures is None:
            raise
        failures.append(_failure(name, n, exc))
        log(f"  FAILED {name} N={n:,}: {type(exc).__name__}: {exc}")
        return
    try:
        rec = time_case(case, n, quick, bandwidth)
    except Exception as exc:
        if failures is None:
            raise
        failures.append(_failure(case.path, n, exc))
        log(f"  FAILED {case.path} N={n:,}: {type(exc).__name__}: {exc}")
        return
    finally:
        try:
            case.release()
        except Exception as exc:  # noqa: BLE001 - as above
            log(f"  releasing {case.path}: {type(exc).__name__}: {exc}")
    results.append(rec)
    log(f"  {rec['path']:<22} N={n:>9,}  {rec['median_s'] * 1e3:10.3f} ms  "
        f"{rec['vertices_per_s'] / 1e6:9.1f} Mvert/s"
        + (f"  {rec['bandwidth_fraction']:.0%} of copy bw" if rec["bandwidth_fraction"] else ""))


def _cap(path: str, n: int) -> bool:
    """True when ``path`` runs at size ``n``."""
    if path in PATH_MAX_N:
        return n <= PATH_MAX_N[path]
    if path in ("naive_cupy", "torch_cuda", "engine_cupy", "engine_cupy_transfer"):
        return True  # without a GPU their factories raise Skip with the reason
    return n <= CPU_MAX_N


def run_benchmarks(sizes=None, quick: bool = False, out_dir=None, log=print,
                   paths=None, many_objects=(1000, 1000), sync_demo: bool = True,
                   budget_s: float | None = None) -> dict:
    """Measure every available path at every size; write JSON + Markdown to ``out_dir``.

    Args:
        sizes: vertex counts (default FULL_SIZES, + 10^8 with a GPU; QUICK_SIZES if quick).
        paths: names from ``paths.PATHS``/``paths.MANY_PATHS`` to run (default all).
        many_objects: (K objects, M vertices each) for the one-launch-per-frame case, or
            None to leave it out.
        out_dir: folder for ``bench-<cpu|gpu>.json`` and ``.md`` (None: write nothing).
            It is created and checked for writing before anything is measured, so a
            bad folder fails at once (EngineError naming it) instead of after the run.
        budget_s: once this many seconds have passed, larger sizes are left out (listed
            under ``skipped``) and the results so far are written; the many-objects case
            and the sync demo still run.

    A path that raises anything but ``Skip`` is recorded under ``failures`` (path, n,
    error, traceback tail) and the run goes on. With ``out_dir`` the JSON and Markdown
    are rewritten after every size (``"complete": false`` until the end), so a run
    killed by an outer timeout keeps what it measured.

    Returns the results dict (see ``engine.bench.report`` for its layout).
    """
    t_start = time.perf_counter()
    info = machine_info()
    gpu = info["gpu"] is not None
    if out_dir is not None:
        check_out_dir(out_dir, _result_paths(out_dir, "bench", info))
    if sizes is None:
        sizes = QUICK_SIZES if quick else FULL_SIZES + (GPU_EXTRA_SIZES if gpu else ())
    selected = set(paths) if paths else None
    if selected:
        unknown = selected - set(P.PATHS) - set(P.MANY_PATHS)
        if unknown:
            raise EngineError(f"unknown benchmark path(s) {', '.join(sorted(unknown))}; "
                              f"choose from {', '.join([*P.PATHS, *P.MANY_PATHS])}")
    log(f"frustum bench: {info['cpu']} ({info['cores']} cores), GPU: {info['gpu'] or 'none'}")
    bandwidth = {"host": host_copy_bandwidth(64 << 20 if quick else 256 << 20,
                                             max_time_s=0.3 if quick else 1.0),
                 "device": device_copy_bandwidth() if gpu else None}
    log(f"  host copy bandwidth {bandwidth['host']['bytes_per_s'] / 1e9:.1f} GB/s (read+write)"
        + (f", device {bandwidth['device']['bytes_per_s'] / 1e9:.0f} GB/s" if gpu else ""))
    results: list[dict] = []
    skipped: dict[str, str] = {}
    failures: list[dict] = []
    compile_s = compile_times(log)
    many: list[dict] = []
    demo: list[dict] = []

    def snapshot(complete: bool) -> dict:
        res = {
            "schema": 1,
            "created_utc": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "quick": quick, "machine": info, "sizes": sorted(sizes),
            "copy_bandwidth": bandwidth, "results": results,
            "many_objects": {"objects": many_objects and many_objects[0],
                             "vertices_per_object": many_objects and many_objects[1],
                             "results": many},
            "skipped": [{"path": k, "reason": v} for k, v in skipped.items()],
            "failures": failures, "compile_s": compile_s, "sync_demo": demo,
            "command": " ".join(sys.argv), "complete": complete,
        }
        res.update(analyse(res))
        res["elapsed_s"] = time.perf_counter() - t_start
        return res

    for n in sorted(sizes):
        if budget_s is not None and time.perf_counter() - t_start > budget_s:
            skipped[f"N={n}"] = f"time budget of {budget_s:.0f} s used up"
            log(f"  skip N={n:,}: time budget of {budget_s:.0f} s used up")
            continue
        factories = [(name, f) for name, f in P.PATHS.items()
                      if (selected is None or name in selected) and _cap(name, n)]
        if not factories:
            continue
        w = P.make_workload(n)
        for name, factory in factories:
            _run_case(factory, w, n, quick, bandwidth, results, skipped, log, failures, name)
        del w
        gc.collect()
        if out_dir is not None:
            write_results(snapshot(False), out_dir, lambda *a: None)
    if many_objects:
        k, m = many_objects
        s = P.make_many_objects(k, m)
        log(f"  many objects: {k} x {m} vertices")
        for name, factory in P.MANY_PATHS.items():
            if selected is None or name in selected:
                _run_case(factory, s, k * m, quick, bandwidth, many, skipped, log, failures,
                          name)
        del s
        gc.collect()
    if sync_demo:
        try:
            demo.extend(run_sync_demo(10**6 if quick else 10**7, log=log))
        except Exception as exc:  # noqa: BLE001 - keep the measurements above
            failures.append(_failure("sync_demo", 10**6 if quick else 10**7, exc))
            log(f"  FAILED sync demo: {type(exc).__name__}: {exc}")
    res = snapshot(True)
    if out_dir is not None:
        write_results(res, out_dir, log)
    return res


def compile_times(log=print) -> dict:
    """Seconds NVRTC takes to compile each engine CUDA source from scratch (what a
    kernel-cache miss costs: no cache is consulted), or {} without CuPy/NVRTC."""
    from ..render.backends.cuda_source import CUDA_SOURCES, nvrtc_compile

    out = {}
    for name in CUDA_SOURCES:
        try:
            out[name] = nvrtc_compile(name)[1]
        except ImportError as exc:
            log(f"  compile times not measured: {exc}")
            return {}
        except Exception as exc:  # noqa: BLE001 - NVRTC missing or failing: say so, go on
            log(f"  compile time of {name} not measured: {type(exc).__name__}: {exc}")
            return out
    log("  NVRTC compile (no cache): " + ", ".join(f"{k} {v:.2f} s" for k, v in out.items()))
    return out


def _result_paths(out_dir, prefix: str, machine: dict) -> tuple[Path, Path]:
    kind = "gpu" if machine["gpu"] else "cpu"
    out = Path(out_dir)
    return out / f"{prefix}-{kind}.json", out / f"{prefix}-{kind}.md"


def check_out_dir(out_dir, files=()) -> Path:
    """Create ``out_dir`` (with parents) and check that files can be written in it, by
    creating and removing a temporary file there; each of ``files`` that already exists
    must be a writable regular file (it will be replaced). Returns the folder.

    Raises EngineError naming the folder (the CLI's ``--out``) and the reason.
    """
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".frustum-bench-", suffix=".tmp"):
            pass
    except OSError as exc:
        raise EngineError(f"benchmark output folder (--out) {out}: cannot write there "
                          f"({exc.strerror or exc})") from None
    for f in files:
        f = Path(f)
        if f.exists() and not (f.is_file() and os.access(f, os.W_OK)):
            raise EngineError(f"benchmark output folder (--out) {out}: {f.name} exists and "
                              "is not a writable file")
    return out


def write_results(res: dict, out_dir, log=print, prefix: str = "bench") -> tuple[Path, Path]:
    """``<prefix>-<cpu|gpu>.json`` and ``.md`` in ``out_dir`` (created). Raises
    EngineError naming the file when it cannot be written."""
    jpath, mpath = _result_paths(out_dir, prefix, res["machine"])
    check_out_dir(out_dir)
    try:
        # Written beside and renamed over: a reader (or a kill) never sees half a file.
        for path, text in ((jpath, json.dumps(res, indent=1, default=float) + "\n"),
                           (mpath, render_markdown(res))):
            tmp = path.with_name(f".{path.name}.tmp")
            tmp.write_text(text)
            tmp.replace(path)
    except OSError as exc:
        raise EngineError(f"cannot write benchmark results (--out): {exc}") from None
    log(f"wrote {jpath} and {mpath}")
    return jpath, mpath


def run_sync_demo(n: int = 10**7, log=print) -> list[dict]:
    """The timing trap, shown: the same GPU (CUDA) and GL work timed without and with
    synchronisation. Returns one record per available device."""
    out = []
    w = P.make_workload(n)
    for factory in (P.engine_cupy, P.naive_cupy, P.gl_transform):
        try:
            case = factory(w)
        except P.Skip as exc:
            log(f"  sync demo: {factory.__name__} skipped: {exc}")
            continue
        try:
            unsynced = unsynchronised_call_s(case.fn, case.sync, repeats=5)
            synced = measure(case.fn, sync=case.sync, repeats=5, max_time_s=2.0).median_s
        finally:
            case.release()
        out.append({"path": case.path, "n": n, "unsynchronised_s": unsynced,
                    "synchronised_s": synced})
        log(f"  sync demo {case.path} N={n:,}: timer without sync {unsynced * 1e3:.3f} ms, "
            f"with sync {synced * 1e3:.3f} ms ({synced / unsynced:.1f}x)")
    return out
