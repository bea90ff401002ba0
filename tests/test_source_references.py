"""What the sources say about other sources must be true: twin implementations are tied
together only by comments naming each other ("must stay identical to engine/...py"), so
a comment naming a file that moved leaves a twin without its anchor. Every repository
path and every dotted ``engine.`` name in a comment, docstring or doc must exist, and no
function has statements after its return."""

from __future__ import annotations

import ast
import importlib
import itertools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TEXT_SUFFIXES = {".py", ".cu", ".cuh", ".vert", ".frag", ".md", ".sh", ".cpp", ".h", ".toml",
                 ".ipynb"}
SCANNED = ("engine", "shaders", "tests", "benchmarks", "examples", "scripts", "docs", ".ci")
PATH = re.compile(r"(?<![\w/.])((?:engine|shaders|tests|benchmarks|examples|scripts|docs|"
                  r"assets)/[\w/.-]*\w\.(?:py|cuh|cu|vert|frag|md|sh|json|ipynb|cpp|h))(?!\w)")
# a dotted engine name; one followed by "{" is an f-string prefix, not a name
DOTTED = re.compile(r"(?<![\w.])(engine(?:\.[A-Za-z_]\w*)+)(?![\w{])")

# Named on purpose although they do not exist, each with the reason.
NOT_FILES = {
    "examples/NAME.py": "placeholder in a usage line",
    "examples/x.py": "placeholder in a docstring",
    "tests/x.py": "a made-up test id in a test's fake pytest output",
    "benchmarks/distributed.py": "the name the benchmark must not have, and why",
    "benchmarks/results/bench-gpu.json": "written by a GPU run (benchmarks/gpu_run.sh)",
}


def _texts():
    files = [ROOT / "README.md", ROOT / "pyproject.toml"]
    for d in SCANNED:
        files += [p for p in (ROOT / d).rglob("*") if p.is_file()
                  and (p.suffix in TEXT_SUFFIXES or p.parent.name == ".ci")
                  and "__pycache__" not in p.parts
                  and p != Path(__file__).resolve()]  # its examples are stale on purpose
    return [(p, p.read_text(errors="ignore")) for p in files]


def _resolves(name: str) -> bool:
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_every_path_named_in_the_sources_exists():
    missing = sorted({f"{p.relative_to(ROOT)}: {m}" for p, text in _texts()
                      for m in PATH.findall(text)
                      if not (ROOT / m).exists() and m not in NOT_FILES})
    assert not missing, "\n".join(missing)
    for name in NOT_FILES:  # the exceptions stay exceptions
        assert not (ROOT / name).exists(), f"{name} exists now: drop it from NOT_FILES"


def test_every_dotted_engine_name_resolves():
    # tests/ name made-up modules on purpose (the layering test's bad imports)
    missing = sorted({f"{p.relative_to(ROOT)}: {m}" for p, text in _texts()
                      if "tests" not in p.relative_to(ROOT).parts[:1]
                      for m in DOTTED.findall(text) if not _resolves(m.rstrip("."))})
    assert not missing, "\n".join(missing)


def _unreachable(tree):
    """(line, first unreachable statement) after a return/raise/break/continue."""
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if not isinstance(stmts, list):
                continue
            for a, b in itertools.pairwise(stmts):
                if isinstance(a, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
                    yield b.lineno


def test_no_code_after_a_return():
    found = [f"{p.relative_to(ROOT)}:{line}" for p in sorted(ROOT.glob("engine/**/*.py"))
             for line in _unreachable(ast.parse(p.read_text()))]
    assert not found, "unreachable statements at " + ", ".join(found)


@pytest.mark.parametrize("text, found", [
    ("// Same math as engine/raster.py", ["engine/raster.py"]),
    ("(see shaders/raster.cuh) and ./engine/x.py", ["shaders/raster.cuh"]),
])
def test_the_path_pattern_finds_what_a_comment_names(text, found):
    assert PATH.findall(text) == found


def test_the_checks_catch_a_stale_name_and_dead_code():
    assert not _resolves("engine.raster.splat_origin")
    assert _resolves("engine.render.points.splat_origin")
    assert DOTTED.findall('f"engine._pyglet_{name}" and engine.scene.Mesh.') == [
        "engine.scene.Mesh"]
    dead = ast.parse("def f():\n    return 1\n    x = 2\n")
    assert list(_unreachable(dead)) == [3]
