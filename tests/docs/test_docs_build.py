"""The documentation (docs/: Markdown guides through myst-parser, the API reference through
autodoc + napoleon) builds with Sphinx, warnings as errors, and the API reference covers
every module of engine/."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from conftest import ROOT


def sphinx_build() -> list[str]:
    script = Path(sys.executable).parent / "sphinx-build"
    return [str(script)] if script.exists() else [sys.executable, "-m", "sphinx"]


def test_docs_build_with_warnings_as_errors(tmp_path):
    out = tmp_path / "html"
    r = subprocess.run([*sphinx_build(), "-W", "--keep-going", "-b", "html", "-q",
                        str(ROOT / "docs"), str(out)],
                       capture_output=True, text=True, timeout=600, check=False)
    assert r.returncode == 0, f"sphinx-build failed:\n{r.stdout[-4000:]}\n{r.stderr[-6000:]}"
    for page in ["index", "cli", "loading", "camera", "video", "apps", "backends",
                 "performance", "display", "conventions", "api/index", "api/scene"]:
        assert (out / f"{page}.html").is_file(), page
    scene = (out / "api" / "scene.html").read_text(encoding="utf-8")
    assert 'id="engine.scene.graph.Node"' in scene  # autodoc really documented it


def test_every_engine_module_is_in_the_api_reference():
    documented = set()
    for page in (ROOT / "docs" / "api").glob("*.rst"):
        documented |= set(re.findall(r"^\.\. automodule:: (\S+)", page.read_text(),
                                     re.MULTILINE))
    modules = set()
    for path in (ROOT / "engine").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__main__":
            continue
        modules.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    assert sorted(modules - documented) == [], "add these modules to docs/api/*.rst"
    assert sorted(documented - modules) == []
