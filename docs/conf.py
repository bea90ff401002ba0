"""Sphinx configuration: the guides (Markdown, through myst-parser) and the API reference
(autodoc + napoleon, from the Google-style docstrings in engine/).

Build: .venv/bin/sphinx-build -W --keep-going -b html docs out/docs
(tests/docs/test_docs_build.py runs the same build with warnings as errors).
"""

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

project = "Frustum"
author = "Frustum contributors"
copyright = "Frustum contributors"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]

# Google-style docstrings ("Args:", "Returns:", "Raises:").
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
napoleon_use_ivar = True

autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "description"
autodoc_typehints_format = "short"
# The optional accelerators are imported at module level by their backends; where one is
# not installed (an install without the gpu extra, or without Numba) autodoc mocks it.
autodoc_mock_imports = [m for m in ("cupy", "numba") if importlib.util.find_spec(m) is None]

myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

html_theme = "alabaster"
html_title = "Frustum"
