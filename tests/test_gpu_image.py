"""The GPU runbook works on the GPU machine's image as it is, checked on every commit
without a GPU.

The GPU machine has no package index: it runs whatever its image holds
(tests/gpu_image/packages.txt). These tests run the runbook's GPU test selection, the
benchmark's GPU code paths (with the stand-in device) and the runbook itself in Python
processes where every third-party distribution not on that list is unimportable and
invisible (tests/gpu_image/sitecustomize.py), and require clean collection and exit 0
(the runbook: a fast, explained stop at the preflight, since there is no GPU here). A
dependency that a later change adds outside the image's list fails here first.

Also the runbook driver's own logic (step timeouts, the archive and the summary, the
exit status) with stand-in steps.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tarfile

import pytest
from conftest import ROOT

IMAGE = ROOT / "tests" / "gpu_image"

pytestmark = pytest.mark.timeout(300)


def _driver():
    spec = importlib.util.spec_from_file_location("gpu_run", ROOT / "benchmarks" / "gpu_run.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def image_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "FRUSTUM_")) and k != "PYTHONPATH"}
    env.update(PYTHONPATH=os.pathsep.join([str(IMAGE), str(ROOT)]),
               FRUSTUM_IMAGE_PACKAGES=str(IMAGE / "packages.txt"),
               FRUSTUM_IMAGE_ROOT=str(ROOT), PYTHONDONTWRITEBYTECODE="1", **extra)
    return env


def run_on_image(args, timeout=240, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=image_env(**env),
                          capture_output=True, text=True, timeout=timeout, check=False)


def test_the_stand_in_image_hides_what_the_image_lacks():
    code = ("import importlib.util, importlib.metadata as m, sys\n"
            "hidden = [n for n in ('trimesh', 'pyglet', 'moderngl', 'imageio_ffmpeg') "
            "if importlib.util.find_spec(n) is not None]\n"
            "assert not hidden, hidden\n"
            "try:\n    import trimesh\nexcept ModuleNotFoundError as e:\n    print('blocked', e)\n"
            "import numpy, engine, engine.render.backends.cupy_backend, engine.bench.paths\n"
            "names = {d.metadata['Name'].lower() for d in m.distributions()}\n"
            "assert 'trimesh' not in names and 'numpy' in names\n"
            "print('ok')\n")
    r = run_on_image(["-c", code], timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "blocked No module named 'trimesh'" in r.stdout and r.stdout.endswith("ok\n")


def test_gpu_selection_collects_cleanly_and_passes_on_the_image(tmp_path):
    """The runbook's pytest step under the image's package set, with the image's
    collection rule (FRUSTUM_GPU_RUN=image) but no GPU required: GPU tests skip with
    their reason here; on the GPU machine the runbook sets FRUSTUM_GPU_RUN=1 and a skip
    fails."""
    args = [a for a in _driver().GPU_TEST_ARGS if a != "-q"]
    r = run_on_image(["-m", "pytest", *args, f"--junitxml={tmp_path / 'junit.xml'}"],
                     FRUSTUM_GPU_RUN="image")
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    assert "error" not in out.lower().split("short test summary")[-1].replace(
        "test_compile_error_is_reported", ""), out[-4000:]
    assert "ERROR collecting" not in out
    assert " passed" in out  # the NVRTC tests run here
    for line in out.splitlines():  # every skip says why
        if line.startswith("SKIPPED"):
            assert "needs a CUDA GPU" in line or "is not on the GPU image" in line, line


def test_gpu_run_skip_rules_on_the_image(tmp_path):
    """With FRUSTUM_GPU_RUN=1 (as on the GPU machine) test modules that need trimesh or
    pyglet skip at collection, and a GPU test that cannot run fails instead of skipping."""
    r = run_on_image(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
                      "tests/io/test_io.py", "tests/game/test_app.py",
                      "tests/render/test_gpu_support.py::test_spin_kernel_waits_on_the_device"],
                     FRUSTUM_GPU_RUN="1")
    out = r.stdout + r.stderr
    assert r.returncode == 1, out[-4000:]
    assert "trimesh is not on the GPU image (GPU run)" in out
    assert "pyglet is not on the GPU image (GPU run)" in out
    assert "1 error" in out and "GPU run, but needs a CUDA GPU" in out  # fails at setup


def test_bench_gpu_code_paths_run_on_the_image():
    r = run_on_image(["-m", "pytest", "-q", "-p", "no:cacheprovider",
                      "tests/bench/test_bench.py::test_gpu_branches_run_with_a_stand_in_device",
                      "tests/render/test_gpu_support.py::test_preflight_passes_on_the_stand_in_device"])
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    code = ("import json, sys; sys.path.insert(0, 'benchmarks'); "
            "import gpu_run; print(json.dumps(gpu_run.bench_paths()))")
    paths = run_on_image(["-c", code],
                         timeout=120)
    assert paths.returncode == 0, paths.stderr
    names = json.loads(paths.stdout)
    assert {"engine_cupy", "naive_cupy", "torch_cuda", "engine_numba"} <= set(names)


def test_runbook_on_the_image_without_a_gpu_stops_at_the_preflight(tmp_path):
    out = tmp_path / "out"
    r = subprocess.run(["bash", str(ROOT / "benchmarks" / "gpu_run.sh"), str(out)], cwd=ROOT,
                       env=image_env(GPU_RUN_BUDGET="120", PYTHON=sys.executable),
                       capture_output=True, text=True,
                       timeout=200, check=False)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "GPU CHECK FAILED: CuPy cannot use a GPU here" in r.stdout
    assert sorted(p.name for p in out.iterdir()) == ["gpu-run.tar.gz", "gpu-summary.txt"]
    with tarfile.open(out / "gpu-run.tar.gz") as tar:
        names = tar.getnames()
    assert "gpu-run/preflight.log" in names and "gpu-run/gpu-summary.txt" in names


def test_driver_keeps_everything_times_steps_out_and_reports(tmp_path):
    gpu_run = _driver()
    py = sys.executable
    steps = [
        {"name": "preflight", "fatal": True, "timeout": 30, "cmd": [py, "-c", "print('GPU CHECK OK')"]},
        {"name": "tests", "timeout": 30,
         "cmd": [py, "-c", ("print('FAILED tests/x.py::t - boom'); print('1 failed, 2 passed')"
                 "; raise SystemExit(1)")]},
        {"name": "slow", "timeout": 2, "cmd": [py, "-c", ("import time; print('start'); "
                                                          "time.sleep(60)")]},
        {"name": "bench", "timeout": 30, "cmd": [py, "-c", (
            "import json, pathlib, sys; pathlib.Path(sys.argv[1]).write_text(json.dumps("
            "{'complete': False, 'copy_bandwidth': {'device': {'bytes_per_s': 4e12}}, "
            "'results': [{'path': 'engine_cupy', 'n': 10**8, 'median_s': 0.002, "
            "'device_time_s': 0.0015, 'device_bandwidth_fraction': 0.5, 'host_call_s': 2e-5}],"
            " 'failures': [{'path': 'torch_cuda', 'n': 10**8, 'error': 'OOM'}]}))"),
            "WORK/bench-gpu.json"]},
    ]
    lines = []
    # the bench stand-in writes into the driver's work folder: find it through the log
    real_run_step = gpu_run.run_step

    def run_step(step, work, deadline, log):
        step = {**step, "cmd": [str(work / "bench-gpu.json") if c == "WORK/bench-gpu.json"
                                else c for c in step["cmd"]]}
        return real_run_step(step, work, deadline, log)

    gpu_run.run_step = run_step
    status = gpu_run.run(tmp_path / "out", budget_s=60, step_list=steps, log=lines.append)
    assert status == 1
    summary = (tmp_path / "out" / "gpu-summary.txt").read_text()
    assert "tests      failed" in summary and "FAILED tests/x.py::t - boom" in summary
    assert "slow       timed out" in summary
    assert "bench      passed" in summary and "INCOMPLETE" in summary
    assert "engine_cupy" in summary and "(50% of copy bw)" in summary
    assert "FAILED torch_cuda" in summary
    with tarfile.open(tmp_path / "out" / "gpu-run.tar.gz") as tar:
        names = set(tar.getnames())
        steps_json = tar.extractfile("gpu-run/steps.json").read()
    assert {"gpu-run/tests.log", "gpu-run/slow.log", "gpu-run/bench-gpu.json",
            "gpu-run/steps.json"} <= names
    records = {r["name"]: r for r in json.loads(steps_json)}
    assert records["slow"]["seconds"] < 10 and records["slow"]["status"] == "timed out"
    # a failed preflight stops the run with status 3
    lines.clear()
    fatal = [{"name": "preflight", "fatal": True, "timeout": 30,
              "cmd": [py, "-c", "print('GPU CHECK FAILED: no'); raise SystemExit(3)"]},
             {"name": "tests", "timeout": 30, "cmd": [py, "-c", "print('never')"]}]
    assert gpu_run.run(tmp_path / "out2", budget_s=60, step_list=fatal, log=lines.append) == 3
    assert "never" not in "\n".join(lines)
