"""The benchmark harness runs, writes well-formed results, and its timers synchronise.

No timing thresholds: benchmarks are measurements, read by people, not asserted."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.bench import measure, measure_cuda_events, measure_gl_query, render_markdown
from engine.bench import paths as P
from engine.bench.runner import check_out_dir, machine_info, run_benchmarks
from engine.bench.timing import measure_device_time, unsynchronised_call_s
from engine.cli import main
from engine.errors import EngineError


class Recorder:
    """A fake device queue and clock: work is 'queued' by fn and only 'done' after sync."""

    def __init__(self):
        self.events = []
        self.t = 0.0
        self.pending = 0

    def fn(self):
        self.events.append("fn")
        self.pending += 1

    def sync(self):
        self.events.append("sync")
        self.t += 0.25 * self.pending  # queued work finishes during the wait
        self.pending = 0

    def clock(self):
        self.events.append("clock")
        return self.t


def test_measure_syncs_before_every_clock_read():
    r = Recorder()
    m = measure(r.fn, sync=r.sync, clock=r.clock, repeats=4, warmup=1)
    ev = r.events
    # Every clock read directly follows a sync, and every fn is followed by a sync
    # before the next clock read.
    for i, e in enumerate(ev):
        if e == "clock":
            assert ev[i - 1] == "sync"
    timed = [i for i, e in enumerate(ev) if e == "clock"]
    for start, stop in zip(timed[::2], timed[1::2]):
        assert ev[start + 1:stop] == ["fn", "sync"]
    assert m.repeats == 4
    # Each timed call took the 0.25 s its queued work needed, which only a synchronised
    # timer sees (the warm-up call was drained by the sync before the next clock read).
    assert m.median_s == pytest.approx(0.25)
    assert m.first_call_s == pytest.approx(0.25)


def test_unsynchronised_timer_misses_queued_work():
    r = Recorder()
    assert unsynchronised_call_s(r.fn, r.sync, repeats=3, clock=r.clock) == 0.0
    assert r.pending == 0  # drained between calls


def test_measure_stops_at_max_time_after_min_repeats():
    r = Recorder()
    m = measure(r.fn, sync=r.sync, clock=r.clock, repeats=1000, min_repeats=3, max_time_s=1.0)
    assert m.repeats == 4  # 4 x 0.25 s reaches max_time_s


class FakeEvent:
    def __init__(self, log):
        self.log = log

    def record(self):
        self.log.append("record")

    def synchronize(self):
        self.log.append("event_sync")


def test_cuda_event_timer_synchronises_end_event_before_reading():
    log = []

    def elapsed(start, end):
        log.append("elapsed")
        assert log[-2] == "event_sync"
        return 2.0  # ms

    m = measure_cuda_events(lambda: log.append("fn"), repeats=3,
                            event_factory=lambda: FakeEvent(log), elapsed_ms=elapsed)
    assert m.median_s == pytest.approx(2e-3)
    assert log[:5] == ["record", "fn", "record", "event_sync", "elapsed"]


class FakeQuery:
    def __init__(self, ctx):
        self.ctx = ctx

    def __enter__(self):
        self.ctx.log.append("begin")

    def __exit__(self, *exc):
        self.ctx.log.append("end")

    @property
    def elapsed(self):
        assert self.ctx.log[-1] == "finish"
        self.ctx.log.append("read")
        return 3_000_000  # ns


class FakeGL:
    def __init__(self):
        self.log = []

    def query(self, time=False):
        assert time
        return FakeQuery(self)

    def finish(self):
        self.log.append("finish")


def test_gl_query_timer_finishes_before_reading():
    ctx = FakeGL()
    m = measure_gl_query(ctx, lambda: ctx.log.append("fn"), repeats=2)
    assert m.median_s == pytest.approx(3e-3)
    assert ctx.log[:5] == ["begin", "fn", "end", "finish", "read"]


def test_naive_function_matches_engine_projection():
    """The naive function and the engine see the same camera: NDC x, y agree."""
    w = P.make_workload(500)
    naive = P.naive_project(w.positions, w.shift, w.rotation, w.focal)
    from engine.render.backends import get_projector

    out = get_projector("numpy").project(w.positions, w.object_id, w.model, w.view_proj,
                                         P.VIEWPORT, runs=w.runs)
    aspect = P.VIEWPORT[0] / P.VIEWPORT[1]
    ndc_x = (out.screen_xy[:, 0] / P.VIEWPORT[0]) * 2 - 1
    ndc_y = 1 - (out.screen_xy[:, 1] / P.VIEWPORT[1]) * 2
    assert out.visible.all()
    np.testing.assert_allclose(ndc_x, naive[:, 0] / aspect, atol=1e-4)
    np.testing.assert_allclose(ndc_y, naive[:, 1], atol=1e-4)
    loops = P.naive_project_loops(w.positions, w.shift, w.rotation, w.focal)
    np.testing.assert_allclose(loops, naive, rtol=1e-5, atol=1e-6)


@pytest.mark.timeout(120)
def test_run_benchmarks_tiny_writes_wellformed_json(tmp_path):
    res = run_benchmarks(sizes=[1000, 3000], quick=True, out_dir=tmp_path,
                         many_objects=(10, 50), log=lambda *a: None)
    kind = "gpu" if res["machine"]["gpu"] else "cpu"
    data = json.loads((tmp_path / f"bench-{kind}.json").read_text())
    assert data["copy_bandwidth"]["host"]["bytes_per_s"] > 0
    paths = {(r["path"], r["n"]) for r in data["results"]}
    for p in ("naive_numpy", "naive_numba", "engine_numpy", "engine_numba", "gl_transform",
              "e2e_software", "e2e_gl"):
        assert (p, 1000) in paths and (p, 3000) in paths, p
    for r in data["results"] + data["many_objects"]["results"]:
        assert r["min_s"] <= r["q1_s"] <= r["median_s"] <= r["q3_s"] <= r["max_s"]
        assert r["vertices_per_s"] == pytest.approx(r["n"] / r["median_s"])
        assert r["repeats"] >= 3 and r["first_call_s"] > 0
        if r["bytes_per_vertex"]:
            assert r["bandwidth_fraction"] > 0
    gl = [r for r in data["results"] if r["path"] == "gl_transform"]
    assert all(r["agreement"]["visibility_mismatch_fraction"] == 0 for r in gl)
    assert all(r["agreement"]["max_screen_diff_px"] < 0.01 for r in gl)
    many = {r["path"]: r for r in data["many_objects"]["results"]}
    assert many["many_per_object_numpy"]["calls_per_frame"] == 10
    assert many["many_engine_numba"]["calls_per_frame"] == 1
    assert "engine_numba_per_frame_vs_naive_at_1e3" in data["targets"]
    if kind == "cpu":
        assert {s["path"] for s in data["skipped"]} >= {"naive_cupy", "engine_cupy"}
        assert data["crossover"]["engine_cupy"] is None
    md = (tmp_path / f"bench-{kind}.md").read_text()
    assert md == render_markdown(data)
    assert "| naive NumPy function | 10^3 |" in md and "Targets" in md
    from engine.bench.report import render_summary

    summary = render_summary(data)
    assert "| path | N = 10^3 | N = 3,000 |" in summary
    assert summary.count("\n| ") == 1 + len({r["label"] for r in data["results"]})


@pytest.mark.timeout(120)
def test_cli_bench_demo_and_bad_sizes(capsys):
    assert main(["bench", "--demo", "--sizes", "2000"]) == 0
    out = capsys.readouterr().out
    assert "sync demo gl_transform N=2,000: timer without sync" in out  # GL is always here
    with pytest.raises(SystemExit) as exc:
        main(["bench", "--sizes", "1e3,abc"])
    assert exc.value.code == 2
    assert "--sizes" in capsys.readouterr().err


def test_bench_checks_the_output_folder_before_measuring(tmp_path, monkeypatch, capsys):
    """Regression: ``bench --out /proc/bb`` ran the whole benchmark, then failed to write
    and lost the results. Now the folder is checked first: nothing is measured."""
    from engine.bench import runner

    def started(*args, **kwargs):
        raise AssertionError("the benchmark started before --out was checked")

    monkeypatch.setattr(runner, "host_copy_bandwidth", started)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(EngineError, match=r"\(--out\) .*a-file/sub: cannot write there"):
        run_benchmarks(sizes=[1000], quick=True, out_dir=blocker / "sub", log=lambda *a: None)
    kind = "gpu" if machine_info()["gpu"] else "cpu"
    taken = tmp_path / "taken"
    (taken / f"bench-{kind}.json").mkdir(parents=True)  # the result's name is a folder
    with pytest.raises(EngineError, match=f"bench-{kind}.json exists and is not a writable"):
        run_benchmarks(sizes=[1000], quick=True, out_dir=taken, log=lambda *a: None)
    # the CLI reports it as one line, exit status 2
    assert main(["bench", "--quick", "--out", str(blocker / "sub")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("frustum: error: benchmark output folder (--out)")
    assert str(blocker / "sub") in err and err.count("\n") == 1
    # a missing nested folder is created, and the probe file leaves nothing behind
    fresh = tmp_path / "new" / "deeper"
    assert check_out_dir(fresh) == fresh and fresh.is_dir() and not any(fresh.iterdir())


def test_performance_page_tables_are_replaced_between_markers(tmp_path):
    """benchmarks/readme_table.py writes the tables into docs/performance.md, between
    markers; the committed page matches what it generates from the committed results."""
    import importlib.util

    from engine.bench.report import replace_between_markers

    text = "a\n<!-- bench:cpu -->\nold\n<!-- /bench:cpu -->\nb\n"
    assert replace_between_markers(text, "bench:cpu", "new table") == (
        "a\n<!-- bench:cpu -->\nnew table\n<!-- /bench:cpu -->\nb\n")
    with pytest.raises(ValueError, match="bench:gpu"):
        replace_between_markers(text, "bench:gpu", "x")
    from conftest import ROOT

    page = (ROOT / "docs" / "performance.md").read_text()
    for name in ("bench:cpu", "bench:gpu"):
        assert f"<!-- {name} -->" in page and f"<!-- /{name} -->" in page
    spec = importlib.util.spec_from_file_location("readme_table",
                                                  ROOT / "benchmarks" / "readme_table.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.PAGE == ROOT / "docs" / "performance.md"
    copy = tmp_path / "performance.md"
    copy.write_text(page.replace("| engine Numba backend |", "| stale row |"))
    assert script.main(["--page", str(copy)]) == 0
    assert copy.read_text() == page  # regenerated from benchmarks/results/*.json
    # without a GPU result file the GPU section says so
    assert script.updated(page, json.loads((ROOT / "benchmarks/results/bench-cpu.json")
                                           .read_text()), None).count(script.NO_GPU) == 1


class FakeCupy:
    """Just enough of CuPy, backed by NumPy, to drive the GPU branches of the harness
    (timing with events, device bandwidth, targets, crossover) on a machine without a
    GPU. Kernel results are not what this checks: tests/render/test_projection.py does that."""

    asarray = staticmethod(np.asarray)
    asnumpy = staticmethod(np.asarray)


@pytest.mark.timeout(120)
def test_gpu_branches_run_with_a_stand_in_device(tmp_path, monkeypatch):
    from functools import partial

    from engine.bench import runner
    from engine.bench.timing import no_sync
    from engine.render import backends

    real_get = backends.get_projector
    monkeypatch.setattr(backends, "get_projector",
                        lambda name=None: real_get("numpy" if name == "cupy" else name))
    monkeypatch.setattr(P, "_require_cuda", lambda: FakeCupy)
    monkeypatch.setattr(P, "cupy_sync", lambda: no_sync)
    monkeypatch.setattr(runner, "_gpu_name", lambda: "Stand-in GPU")
    host_bw = runner.host_copy_bandwidth(1 << 20, max_time_s=0.1)
    monkeypatch.setattr(runner, "device_copy_bandwidth", lambda: host_bw)
    log = []
    monkeypatch.setattr(runner, "measure_device_time", partial(
        measure_device_time, spin=lambda ns: log.append("spin"),
        event_factory=lambda: FakeEvent(log), elapsed_ms=lambda a, b: 1.0))
    res = run_benchmarks(sizes=[1000, 4000], quick=True, out_dir=tmp_path,
                         many_objects=(8, 50), log=lambda *a: None)
    data = json.loads((tmp_path / "bench-gpu.json").read_text())
    assert data["machine"]["gpu"] == "Stand-in GPU" and res["machine"]["gpu"] == "Stand-in GPU"
    assert data["complete"] is True and data["failures"] == []
    gpu = [r for r in data["results"] if r["device"] == "gpu"]
    # torch_cuda joins where PyTorch has a CUDA device (the GPU machine has one)
    assert {"naive_cupy", "engine_cupy", "engine_cupy_transfer"} <= {r["path"] for r in gpu}
    assert {r["path"] for r in gpu} <= {"naive_cupy", "engine_cupy", "engine_cupy_transfer",
                                        "torch_cuda"}
    for r in gpu:
        if r["path"] != "torch_cuda":
            assert r["device_time_s"] == pytest.approx(1e-3)  # from the (fake) CUDA events
        assert r["host_call_s"] >= 0 and r["bandwidth_ref"] == "device"
        assert r["device_time_method"].startswith("events")
    assert "event_sync" in log
    t = data["targets"]
    assert {"engine_cupy_bandwidth_fraction", "engine_cupy_host_overhead_at_1e3",
            "many_engine_cupy_calls_per_frame"} <= set(t)
    assert set(data["crossover"]) == {"engine_cupy_transfer", "engine_cupy", "note"}
    assert {d["path"] for d in data["sync_demo"]} >= {"engine_cupy", "naive_cupy"}
    assert "Stand-in GPU" in (tmp_path / "bench-gpu.md").read_text()


def test_crossover_is_the_smallest_n_from_which_the_gpu_always_wins():
    from engine.bench.report import crossover

    def rec(path, n, t):
        return {"path": path, "n": n, "median_s": t, "device": "gpu" if "cupy" in path else "cpu"}

    cpu = {10**3: 1e-5, 10**4: 1e-4, 10**5: 1e-3, 10**6: 1e-2}
    gpu = {10**3: 5e-5, 10**4: 5e-5, 10**5: 2e-3, 10**6: 1e-3}  # wins at 1e4, loses at 1e5
    results = [rec("engine_numba", n, t) for n, t in cpu.items()]
    results += [rec("engine_numpy", n, 10 * t) for n, t in cpu.items()]
    results += [rec("engine_cupy", n, t) for n, t in gpu.items()]
    results += [rec("engine_cupy_transfer", n, 1.0) for n in gpu]
    c = crossover(results)
    assert c["engine_cupy"] == 10**6
    assert c["engine_cupy_transfer"] is None


def test_device_time_queues_the_call_behind_a_spin_kernel():
    """Events are recorded after the spin, around the call; a call the host takes longer
    to queue than the spin lasts is timed again with a longer spin."""
    log, t = [], [0.0]
    host_s = [0.0003, 0.0003, 0.0001, 0.0001, 0.0001, 0.0001]  # first two: slow to queue

    def fn():
        log.append("fn")
        t[0] += host_s.pop(0) if host_s else 0.0001

    dt = measure_device_time(fn, repeats=3, warmup=0, spin=lambda ns: log.append(f"spin {ns}"),
                             event_factory=lambda: FakeEvent(log),
                             elapsed_ms=lambda a, b: 0.5, clock=lambda: t[0], spin_ns=400_000)
    assert log[:4] == ["spin 400000", "record", "fn", "record"]
    assert "spin 800000" in log and "spin 1600000" not in log
    assert dt.measurement.median_s == pytest.approx(5e-4) and dt.spin_ns == 800_000
    assert dt.method == "events after a spin kernel (device execution only)"


def test_device_time_of_a_call_that_waits_for_the_device_says_so():
    t = [0.0]

    def blocking():
        t[0] += 1.0  # never returns before the spin (or anything) has finished

    dt = measure_device_time(blocking, repeats=2, warmup=0, spin=lambda ns: None,
                             event_factory=lambda: FakeEvent([]), elapsed_ms=lambda a, b: 2.0,
                             clock=lambda: t[0], max_spin_ns=1_000_000)
    assert "host time included" in dt.method and dt.measurement.median_s == pytest.approx(2e-3)


@pytest.mark.timeout(120)
def test_a_failing_path_is_recorded_and_the_rest_still_runs(tmp_path, monkeypatch):
    from engine.bench import runner

    def broken(w):
        raise ZeroDivisionError("kernel exploded")

    writes = []
    real_write = runner.write_results
    monkeypatch.setattr(runner, "write_results", lambda res, *a, **k: (
        writes.append(res["complete"]), real_write(res, *a, **k))[1])
    monkeypatch.setitem(P.PATHS, "naive_numba", broken)
    res = run_benchmarks(sizes=[1000, 2000], quick=True, out_dir=tmp_path, many_objects=None,
                         sync_demo=False, paths=["naive_numpy", "naive_numba"],
                         log=lambda *a: None)
    assert [f["path"] for f in res["failures"]] == ["naive_numba", "naive_numba"]
    assert "ZeroDivisionError: kernel exploded" in res["failures"][0]["error"]
    assert {(r["path"], r["n"]) for r in res["results"]} == {("naive_numpy", 1000),
                                                             ("naive_numpy", 2000)}
    assert writes == [False, False, True]  # after each size, then the final one
    kind = "gpu" if res["machine"]["gpu"] else "cpu"
    assert "FAILED naive_numba at N=10^3" in (tmp_path / f"bench-{kind}.md").read_text()
    with pytest.raises(EngineError, match="unknown benchmark path"):
        run_benchmarks(sizes=[1000], quick=True, paths=["warp_drive"], log=lambda *a: None)
