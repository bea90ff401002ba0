"""GLSL sources from ``shaders/`` with optional ``#define`` lines.

GLSL requires ``#version`` to be the first statement, so defines are inserted right
after that line rather than prepended.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

# The sources install as the package engine.shaders (pyproject.toml), so an installed
# wheel finds them as well as a source checkout does.
SHADER_DIR = Path(str(files("engine.shaders")))


def load_glsl(name: str, defines: tuple[str, ...] = ()) -> str:
    """Text of ``shaders/<name>`` with ``#define D`` for each D in ``defines``.

    Raises FileNotFoundError naming the missing file, ValueError when the source does
    not start with a ``#version`` line.
    """
    path = SHADER_DIR / name
    if not path.is_file():
        raise FileNotFoundError(f"GLSL source not found: {path}")
    first, _, rest = path.read_text().partition("\n")
    if not first.startswith("#version"):
        raise ValueError(f"{path}: the first line must be #version")
    return "\n".join([first, *(f"#define {d}" for d in defines), rest])
