"""benchmarks/entities.py runs (small sizes): every path draws the same picture and the
ratios to the NumPy-matrices baseline are printed; rocks and churn run too."""

import re
import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "benchmarks" / "entities.py"


def run(*args):
    r = subprocess.run([sys.executable, str(SCRIPT), *args], cwd=ROOT, capture_output=True,
                       text=True, timeout=600, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_transforms_benchmark_prints_every_path_and_its_ratio():
    out = run("transforms", "--counts", "60", "--points", "20", "--frames", "2",
              "--frame", "96x64")
    for name in ("(a) setters", "(b) instances", "(b') set_transforms", "(c) baseline"):
        line = next(ln for ln in out.splitlines() if name in ln)
        assert re.search(r"\d+\.\d\dx$", line.strip()), line
    assert re.search(r"\(c\) baseline .* 1\.00x", out)


def test_rocks_and_churn_benchmarks_run():
    out = run("rocks", "--rocks", "200", "--frames", "2", "--frame", "96x64")
    assert "transform work" in out and "%" in out
    out = run("churn", "--vertices", "2000", "--rate", "30", "--seconds", "0.2",
              "--frame", "96x64", "--backend", "numpy")
    assert "churn / steady" in out
