"""Loaders never trace back: seeded mutations of the reference assets and of generated
files of every other format (truncation, byte flips, header fields, huge counts, deep
nesting, spliced data, odd JSON values, broken companion files) must each load cleanly
or raise a one-line ``LoadError`` naming the file -- no other exception, no hang, no
allocation beyond the memory limit (a worker process under RLIMIT_AS, mutations.py).

CI runs a fixed sample (20 mutations of every reference file up to 200 kB and of the
generated files, seed 0): 900 loads in about 5 s here. A longer run:
``FRUSTUM_MUTATIONS=200 FRUSTUM_MUTATION_SEED=7 pytest tests/io/test_mutations.py``
(200 per file, every reference file), or ``python tests/io/mutations.py --help``.
"""

from __future__ import annotations

import os

import pytest
from mutations import generated_files, make_cases, reference_files, run_cases

PER_FILE = int(os.environ.get("FRUSTUM_MUTATIONS", "20"))
SEED = int(os.environ.get("FRUSTUM_MUTATION_SEED", "0"))
LONG = "FRUSTUM_MUTATIONS" in os.environ


@pytest.mark.timeout(0 if LONG else 600)
def test_mutated_files_load_or_raise_one_clean_load_error(ref_assets, tmp_path):
    files = reference_files(None if LONG else 200_000) + generated_files(tmp_path / "gen")
    assert len(files) >= 40
    cases = run_cases(make_cases(files, PER_FILE, SEED, tmp_path / "cases"))
    assert len(cases) == PER_FILE * len(files)
    assert all("outcome" in c for c in cases)
    failures = [f"{c['kind']} of {c['source']} (seed {c['seed']}): {c['detail']}"
                for c in cases if c["outcome"] == "FAIL"]
    assert not failures, f"{len(failures)} of {len(cases)} loads failed:\n" + \
        "\n".join(failures[:20])
    # the sample exercises both outcomes
    assert sum(c["outcome"] == "error" for c in cases) > len(cases) // 4
    assert sum(c["outcome"] == "ok" for c in cases) > len(cases) // 20


def test_the_worker_reports_other_exceptions_hangs_and_memory(tmp_path, monkeypatch):
    # the harness itself: a loader that raises something else, hangs or allocates past
    # the limit is reported as a failure, and the worker goes on with the next file
    import mutations

    files = []
    for name in ("raise.obj", "hang.obj", "memory.obj", "fine.obj"):
        f = tmp_path / name
        f.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")
        files.append({"path": str(f), "source": name, "kind": "test", "seed": []})
    hook = tmp_path / "sitecustomize.py"
    hook.write_text(
        "import time, numpy as np\n"
        "import engine.io.loaders as L\n"
        "real = L.load\n"
        "def load(path, *a, **k):\n"
        "    if str(path).endswith('raise.obj'): raise ZeroDivisionError('boom')\n"
        "    if str(path).endswith('hang.obj'): time.sleep(60)\n"
        "    if str(path).endswith('memory.obj'): np.ones(1 << 33, np.uint8)\n"
        "    return real(path, *a, **k)\n"
        "import engine.io\n"
        "engine.io.load = load\n")
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}{os.pathsep}{mutations.ROOT}")
    monkeypatch.setattr(mutations, "_worker_env", lambda env: dict(
        env, PYTHONPATH=f"{tmp_path}{os.pathsep}{mutations.ROOT}"))
    out = run_cases(files, timeout=2.0)
    got = {os.path.basename(c["path"]): (c["outcome"], c["detail"]) for c in out}
    assert got["raise.obj"][0] == "FAIL" and "ZeroDivisionError: boom" in got["raise.obj"][1]
    assert got["hang.obj"] == ("FAIL", "no answer within 2 s (hang)")
    assert got["memory.obj"][0] == "FAIL" and "MemoryError" in got["memory.obj"][1]
    assert got["fine.obj"][0] == "ok"
