"""Loads CUDA sources from ``shaders/`` with local ``#include "x.cuh"`` lines expanded.

Expanding in Python (instead of passing ``-I``) makes the text CuPy compiles and caches
the complete source: CuPy's kernel cache is keyed on the source string, so an edited
header could otherwise leave a stale kernel in the cache. Tests compile this exact text
with NVRTC using ``NVRTC_OPTIONS``.
"""

from __future__ import annotations

import re
from importlib.resources import files
from pathlib import Path

# The sources install as the package engine.shaders (pyproject.toml), so an installed
# wheel finds them as well as a source checkout does.
SHADER_DIR = Path(str(files("engine.shaders")))

# Options shared by the runtime (CuPy RawModule) and the NVRTC test. -fmad=false: no
# multiply-add is fused, so the kernels round like the CPU backends (the triangle keys
# are bit-identical; the projection is memory-bound, so FMA would buy nothing).
NVRTC_OPTIONS = ("-std=c++17", "-fmad=false")

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$', re.MULTILINE)


def load_cuda_source(name: str) -> str:
    """Full source of ``shaders/<name>`` with quoted includes inlined once each.

    Raises FileNotFoundError naming the missing file.
    """
    seen: set[str] = set()

    def expand(fname: str) -> str:
        path = SHADER_DIR / fname
        if not path.is_file():
            raise FileNotFoundError(f"CUDA source not found: {path}")
        text = path.read_text()

        def repl(m: re.Match) -> str:
            inc = m.group(1)
            if inc in seen:
                return f"// {inc} already included"
            seen.add(inc)
            return f"// begin {inc}\n{expand(inc)}\n// end {inc}"

        return _INCLUDE.sub(repl, text)

    return expand(name)
