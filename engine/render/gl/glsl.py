"""GLSL sources from ``shaders/`` with optional ``#define`` lines and generated blocks.

GLSL requires ``#version`` to be the first statement, so defines are inserted right
after that line rather than prepended. A line ``#pragma frustum NAME`` (a pragma GL
ignores) is replaced by the text ``blocks[NAME]``: declarations generated from the
engine's own definitions, e.g. the material record's std140 block.
"""

from __future__ import annotations

import re
from importlib.resources import files
from pathlib import Path

# The sources install as the package engine.shaders (pyproject.toml), so an installed
# wheel finds them as well as a source checkout does.
SHADER_DIR = Path(str(files("engine.shaders")))


def load_glsl(name: str, defines: tuple[str, ...] = (), blocks: dict | None = None) -> str:
    """Text of ``shaders/<name>`` with ``#define D`` for each D in ``defines`` and each
    ``#pragma frustum NAME`` line replaced by ``blocks[NAME]``.

    Raises FileNotFoundError naming the missing file, ValueError when the source does
    not start with a ``#version`` line or names a block that ``blocks`` lacks.
    """
    path = SHADER_DIR / name
    if not path.is_file():
        raise FileNotFoundError(f"GLSL source not found: {path}")
    first, _, rest = path.read_text().partition("\n")
    if not first.startswith("#version"):
        raise ValueError(f"{path}: the first line must be #version")
    blocks = blocks or {}

    def block(m: re.Match) -> str:
        if m.group(1) not in blocks:
            raise ValueError(f"{path}: no text for #pragma frustum {m.group(1)}")
        return blocks[m.group(1)]

    rest = re.sub(r"^#pragma frustum (\w+)$", block, rest, flags=re.MULTILINE)
    return "\n".join([first, *(f"#define {d}" for d in defines), rest])
