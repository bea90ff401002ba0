"""Running a window probe script (tests/display/*_probe.py) in a real window: headless
pyglet on EGL, or an X window under Xvfb (24-bit screen: with a 16-bit one an 8-bit GL
config hangs in window mapping)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import IN_CI

ROOT = Path(__file__).resolve().parents[2]


def run_probe(probe: Path, tmp_path: Path, raster: str, xvfb: bool, timeout: float):
    """The finished probe process (``probe TMP_PATH RASTER``, exit status 0 asserted), with
    this checkout first on the import path. Without xvfb-run: a failure in CI, a skip
    elsewhere."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    if xvfb:
        xvfb_run = shutil.which("xvfb-run")
        if xvfb_run is None:
            if IN_CI:
                pytest.fail("xvfb-run is missing (scripts/setup.sh installs xvfb)")
            pytest.skip("xvfb-run is not installed")
        env.pop("PYGLET_HEADLESS", None)
        cmd = [xvfb_run, "-a", "-s", "-screen 0 640x480x24", sys.executable, str(probe)]
    else:
        env["PYGLET_HEADLESS"] = "1"
        cmd = [sys.executable, str(probe)]
    proc = subprocess.run([*cmd, str(tmp_path), raster], check=False, env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc
