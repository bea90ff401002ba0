"""The code blocks of README.md and docs/*.md, and how tests/docs runs them as written.

Every ```python and ```bash block runs in a fresh temporary working directory: python
blocks with the checkout's virtual environment's Python (the docs say to run snippets
with ``.venv/bin/python``), bash blocks with ``bash -e -o pipefail`` and the PATH of a new
shell: the virtual environment is *not* on it, so a block must call ``.venv/bin/frustum``
as a user without an activated environment must. The working directory mirrors
the top level of the checkout with symlinks (``scripts/``, ``examples/``, ``assets/``,
``benchmarks/``, ``.venv``, ``pyproject.toml``, ...; not ``out/`` or ``.git``), so a
command written for the checkout root (``scripts/run.sh``, ``python examples/x.py``)
runs as written and what it writes lands in the temporary directory. No display is
passed on (``DISPLAY``, ``WAYLAND_DISPLAY`` and ``PYGLET_HEADLESS`` are removed), so a
block that would open a window fails fast instead of waiting.

Markers are HTML comments on the lines directly before a block's opening fence; they are
visible in the Markdown source and invisible when it is rendered:

    <!-- doc-test: skip (REASON) -->          not run; for blocks that open a window and
                                              wait, run the test suite, install packages,
                                              run for minutes or rewrite the checkout
    <!-- doc-test: samples -->                 the sample models are in the working
                                              directory first: exactly what the README's
                                              SAMPLE_COMMAND writes (model.glb,
                                              model.obj with its .mtl and .png, scan.ply),
                                              made by running that command
    <!-- doc-test: files NAME=FIXTURE ... -->  copy fixture FIXTURE (a block marked
                                              ``fixture``, which the reader sees) into
                                              the working directory as NAME first
    <!-- doc-test: env NAME=VALUE ... -->      extra environment variables for the block
    <!-- doc-test: replace "OLD" "NEW" -->     run the block with OLD replaced by NEW (e.g.
                                              a window's run() limited to a few frames)
    <!-- doc-test: fixture NAME -->            this block's text (any language) is the
                                              fixture NAME, e.g. a path file

Markers may make a block smaller or faster (``replace``) but never give it a file a
reader following the docs does not have: the sample models come from the README's own
command, fixtures from blocks the reader sees.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUN_LANGUAGES = ("python", "bash")
MARKER = re.compile(r"^<!--\s*doc-test:\s*(?P<body>.*?)\s*-->\s*$")
FENCE = re.compile(r"^```(?P<info>[^`]*)$")
#: The README's command that writes the sample models the docs use (run as written
#: from the checkout root; test_doc_blocks checks the README shows it).
SAMPLE_COMMAND = ".venv/bin/python assets/make_assets.py model.glb model.obj scan.ply"
# Left out of the mirrored checkout: outputs, caches, version control.
NOT_MIRRORED = {".git", "out", "build", ".pytest_cache", ".ruff_cache", ".hypothesis",
                "__pycache__"}


def doc_files() -> list[Path]:
    """README.md and every Markdown page directly in docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@dataclass
class Block:
    path: Path
    line: int  # 1-based line of the opening fence
    language: str
    code: str
    skip: str | None = None
    files: dict[str, str] = field(default_factory=dict)
    samples: bool = False
    env: dict[str, str] = field(default_factory=dict)
    replace: list[tuple[str, str]] = field(default_factory=list)
    fixture: str | None = None

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    @property
    def runs(self) -> bool:
        return self.language in RUN_LANGUAGES and self.skip is None

    def source(self) -> str:
        """The code as it is run: the block with its ``replace`` markers applied."""
        code = self.code
        for old, new in self.replace:
            code = code.replace(old, new)
        return code


def _pairs(words: list[str], where: str) -> dict[str, str]:
    out = {}
    for w in words:
        name, sep, value = w.partition("=")
        if not sep or not name or not value:
            raise ValueError(f"{where}: expected NAME=VALUE, got {w!r}")
        out[name] = value
    return out


def _apply_marker(block: Block, body: str, where: str):
    keyword, _, rest = body.partition(" ")
    rest = rest.strip()
    if keyword == "skip":
        reason = rest[1:-1].strip() if rest.startswith("(") and rest.endswith(")") else ""
        if not reason:
            raise ValueError(f"{where}: skip needs a reason in parentheses: skip (why)")
        block.skip = reason
    elif keyword == "samples":
        if rest:
            raise ValueError(f"{where}: samples takes no arguments")
        block.samples = True
    elif keyword == "files":
        block.files.update(_pairs(rest.split(), where))
    elif keyword == "env":
        block.env.update(_pairs(rest.split(), where))
    elif keyword == "replace":
        words = shlex.split(rest)
        if len(words) != 2:
            raise ValueError(f'{where}: replace takes two quoted strings: replace "OLD" "NEW"')
        block.replace.append((words[0], words[1]))
    elif keyword == "fixture":
        if not rest or len(rest.split()) != 1:
            raise ValueError(f"{where}: fixture takes one file name")
        block.fixture = rest
    else:
        raise ValueError(f"{where}: unknown doc-test marker {keyword!r}")


def parse(path: Path) -> tuple[list[Block], list[str]]:
    """The fenced code blocks of ``path`` with their markers, and the problems found
    (unknown or malformed markers, markers not directly before a block, unclosed fences,
    ``replace`` strings the block does not contain)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks, problems, pending = [], [], []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = MARKER.match(line)
        if m:
            pending.append((i + 1, m.group("body")))
            i += 1
            continue
        f = FENCE.match(line)
        if f is None:
            if pending:
                problems.append(f"{path.name}:{pending[0][0]}: doc-test marker not directly "
                                f"before a code block")
                pending = []
            i += 1
            continue
        language = f.group("info").strip().split(" ")[0] if f.group("info").strip() else ""
        end = i + 1
        while end < len(lines) and lines[end] != "```":
            end += 1
        if end == len(lines):
            problems.append(f"{path.name}:{i + 1}: code block is never closed")
            break
        block = Block(path, i + 1, language, "\n".join(lines[i + 1:end]) + "\n")
        for lineno, body in pending:
            try:
                _apply_marker(block, body, f"{path.name}:{lineno}")
            except ValueError as exc:
                problems.append(str(exc))
        for old, _ in block.replace:
            if old not in block.code:
                problems.append(f"{block.id}: replace: {old!r} is not in the block")
        pending = []
        blocks.append(block)
        i = end + 1
    if pending:
        problems.append(f"{path.name}:{pending[0][0]}: doc-test marker not directly before "
                        f"a code block")
    return blocks, problems


def all_blocks() -> tuple[list[Block], list[str]]:
    blocks, problems = [], []
    for path in doc_files():
        b, p = parse(path)
        blocks += b
        problems += p
    return blocks, problems


def venv_bin() -> Path:
    """The ``bin/`` of the checkout's virtual environment (else this interpreter's)."""
    venv = ROOT / ".venv" / "bin"
    return venv if (venv / "python").exists() else Path(sys.executable).parent


def make_fixtures(folder: Path, blocks: list[Block]) -> dict[str, Path]:
    """Write every block marked ``fixture`` into ``folder``; returns name -> path."""
    folder.mkdir(parents=True, exist_ok=True)
    for block in blocks:
        if block.fixture:
            (folder / block.fixture).write_text(block.code, encoding="utf-8")
    return {p.name: p for p in folder.iterdir()}


def make_samples(folder: Path) -> list[Path]:
    """Run ``SAMPLE_COMMAND`` as written in ``folder`` (the checkout mirrored into it, as
    for a block); returns the files it wrote."""
    folder.mkdir(parents=True, exist_ok=True)
    mirror_checkout(folder)
    before = set(folder.iterdir())
    subprocess.run(shlex.split(SAMPLE_COMMAND), cwd=folder, check=True, capture_output=True,
                   text=True, timeout=120, env=block_env(Block(folder, 0, "bash", "")))
    written = sorted(set(folder.iterdir()) - before)
    assert written, f"{SAMPLE_COMMAND!r} wrote nothing"
    return written


def mirror_checkout(workdir: Path):
    """Symlink the checkout's top-level entries into ``workdir`` (see the module doc)."""
    for entry in ROOT.iterdir():
        if entry.name in NOT_MIRRORED or entry.name.endswith(".egg-info"):
            continue
        (workdir / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())


def setup_stamp_problem() -> str | None:
    """Why ``scripts/setup.sh`` would reinstall .venv now (None when it would not): it
    reinstalls when pyproject.toml changed since the last setup."""
    stamp = ROOT / ".venv" / ".frustum-installed"
    if not stamp.is_file():
        return f"{stamp} is missing: run scripts/setup.sh first"
    want = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if stamp.read_text().split()[0] != want:
        return "pyproject.toml changed since the last scripts/setup.sh: run it first"
    return None


def block_env(block: Block) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "PYGLET_HEADLESS")}
    # a new shell's PATH: without this checkout's virtual environment (see the module doc)
    env["PATH"] = os.pathsep.join(
        d for d in env.get("PATH", "").split(os.pathsep)
        if d and Path(d).resolve() != venv_bin().resolve())
    env.pop("VIRTUAL_ENV", None)
    stamp = ROOT / ".venv" / ".frustum-installed"
    if stamp.is_file() and len(stamp.read_text().split()) > 1:
        # scripts/setup.sh compares its extras with the stamp: keep them equal, so it
        # does not reinstall from the temporary directory
        env["FRUSTUM_EXTRAS"] = stamp.read_text().split()[1]
    env.update(block.env)
    return env


def run_block(block: Block, tmp: Path, fixtures: dict[str, Path], samples=(),
              timeout: float = 120):
    """Run ``block`` in ``tmp/work`` (with ``samples``, the files ``make_samples`` wrote,
    when it is marked so); returns the CompletedProcess."""
    work = tmp / "work"
    work.mkdir()
    mirror_checkout(work)
    if block.samples:
        for sample in samples:
            shutil.copyfile(sample, work / sample.name)
    for name, fixture in block.files.items():
        shutil.copyfile(fixtures[fixture], work / name)
    if block.language == "python":
        script = tmp / "doc_block.py"
        cmd = [str(venv_bin() / "python"), str(script)]
    else:
        script = tmp / "doc_block.sh"
        cmd = ["bash", "-e", "-o", "pipefail", str(script)]
    script.write_text(block.source(), encoding="utf-8")
    return subprocess.run(cmd, cwd=work, env=block_env(block), capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False)
