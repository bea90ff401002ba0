"""Numba's on-disk kernel cache, made safe for kernels that bake in other modules' values.

Numba keys a cached kernel on its own source file only (its modification time and size).
A kernel that reads a module-level constant of another module, such as the vertex
stage's attribute layout (engine.render.attributes) compiled in as a tuple, keeps the
old value when only that other module changes, and then writes past the arrays it is
given (heap corruption; seen after an update of the layout). ``cached()`` registers, once,
cache locators that add a fingerprint of every ``engine/**/*.py`` file (relative path,
modification time in ns, size) to the source stamp of the engine's own kernels: any
change to the package's sources invalidates its cached kernels, which then compile again
on first use (``frustum warmup`` does it ahead). Functions outside the package keep
Numba's own locators.

The cache stays where Numba puts it: ``$NUMBA_CACHE_DIR`` when set, else the
``__pycache__`` beside the source, else Numba's user-wide cache directory.

Usage: ``@numba.njit(cache=cached())``.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

__all__ = ["cached", "source_fingerprint"]

_PACKAGE = Path(__file__).resolve().parents[2]  # engine/


@lru_cache(maxsize=1)
def source_fingerprint() -> str:
    """Hex digest of (relative path, st_mtime_ns, st_size) of every ``.py`` file of the
    package, computed once per process (stat calls only: about 1 ms)."""
    h = hashlib.sha1()
    for path in sorted(_PACKAGE.rglob("*.py")):
        st = path.stat()
        h.update(f"{path.relative_to(_PACKAGE)}:{st.st_mtime_ns}:{st.st_size}\n".encode())
    return h.hexdigest()


def _in_package(py_file: str) -> bool:
    try:
        Path(py_file).resolve().relative_to(_PACKAGE)
    except (OSError, ValueError):
        return False
    return True


def _engine_locator(base):
    """A subclass of Numba locator ``base`` that serves only the package's functions and
    stamps them with the package fingerprint as well as their own file's stamp."""

    class Locator(base):
        def get_source_stamp(self):
            return (super().get_source_stamp(), source_fingerprint())

        @classmethod
        def from_function(cls, py_func, py_file):
            if not _in_package(py_file):
                return None
            return super().from_function(py_func, py_file)

    Locator.__name__ = Locator.__qualname__ = f"Engine{base.__name__}"
    return Locator


@lru_cache(maxsize=1)
def cached() -> bool:
    """Register the package's cache locators in front of Numba's (once) and return True,
    the value for ``numba.njit(cache=...)``."""
    from numba.core import caching

    ours = [_engine_locator(b) for b in (caching.UserProvidedCacheLocator,
                                         caching.InTreeCacheLocator,
                                         caching.UserWideCacheLocator)]
    caching.CacheImpl._locator_classes[:0] = ours
    return True
