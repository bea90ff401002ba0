"""First use: ``frustum warmup`` (kernels compiled ahead of the first picture, with a
progress line), the render line's wall-time figures, and the kernel preload that
overlaps the file load."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import numpy as np
from PIL import Image

from engine.cli import commands
from engine.cli.commands import main, process_seconds

LINE = re.compile(r"load (\d+) ms, renderer set-up (\d+) ms, frame (\d+) ms, "
                  r"([0-9.]+) s since the process started\)")


def test_warmup_reports_each_step_and_leaves_the_kernels_ready(capsys):
    assert main(["warmup"]) == 0
    out, err = capsys.readouterr()
    steps = re.findall(r"frustum: compiling the CPU kernels: (.*) \((\d)/(\d)\)", err)
    assert [s[0] for s in steps] == ["surfaces", "lines and points"]
    assert [s[1:] for s in steps] == [("1", "2"), ("2", "2")]
    assert re.fullmatch(r"kernels ready \([0-9.]+ s; cached for later processes\)\n", out)


def test_render_line_says_what_each_time_is(tmp_path, capsys):
    out = tmp_path / "demo.png"
    t0 = time.perf_counter()
    assert main(["render", "demo", "--out", str(out), "--size", "96x64",
                 "--backend", "numba"]) == 0
    wall_ms = (time.perf_counter() - t0) * 1000
    m = LINE.search(capsys.readouterr().out)
    assert m, "the render line names load, set-up, frame and the process's age"
    load, setup, frame = (int(x) for x in m.groups()[:3])
    # the three parts happen inside this call, one after the other
    assert load + setup + frame <= wall_ms + 3
    # the process (this pytest run) began before this call
    assert float(m.group(4)) * 1000 >= wall_ms - 10


def test_process_seconds_counts_from_the_process_start():
    code = ("import time; time.sleep(0.3); from engine.cli.commands import process_seconds; "
            "print(process_seconds())")
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout
    outside = time.perf_counter() - t0
    inside = float(out)
    assert 0.3 <= inside <= outside + 0.02  # one clock tick of /proc's resolution
    assert process_seconds() > inside  # this process is older


def test_preload_is_only_for_numba_frames():
    class Args:
        backend, raster, msaa, shadows = "numpy", "software", 4, False

    assert commands._preload_kernels(Args) is None
    Args.backend, Args.raster = "numba", "gl"
    assert commands._preload_kernels(Args) is None
    Args.raster = "software"
    thread = commands._preload_kernels(Args)
    thread.join(timeout=120)
    assert not thread.is_alive()


def test_preload_loads_the_kernels_of_the_frame_asked_for():
    # a new process: this one's kernels are loaded by other tests
    code = ("from engine.render.warmup import preload\n"
            "preload(1, True).join()\n"
            "from engine.render.backends import numba_layers, numba_shading, numba_shadow\n"
            "print(*(bool(k.overloads) for k in (numba_shading._resolve, numba_shadow._raster,"
            " numba_layers._raster)))\n")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout.split()
    assert out == ["True", "True", "False"]  # resolve, shadow pass; no transparency


def test_preloaded_render_draws_the_same_image(tmp_path, monkeypatch):
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    args = ["--size", "120x90", "--backend", "numba"]
    assert main(["render", "demo", "--out", str(a), *args]) == 0
    monkeypatch.setattr(commands, "_preload_kernels", lambda args: None)
    assert main(["render", "demo", "--out", str(b), *args]) == 0
    ia, ib = np.asarray(Image.open(a)), np.asarray(Image.open(b))
    assert len(np.unique(ia.reshape(-1, ia.shape[-1]), axis=0)) > 50  # a real picture
    np.testing.assert_array_equal(ia, ib)
