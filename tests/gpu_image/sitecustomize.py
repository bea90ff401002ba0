"""Makes this Python look like the GPU machine's image: every third-party distribution
that is not in ``packages.txt`` becomes unimportable and invisible.

Loaded by Python at start-up (``site`` imports ``sitecustomize``) when this folder is on
PYTHONPATH, so every process of a test run, subprocesses included, sees the same
package set. Set by tests/test_gpu_image.py:

    FRUSTUM_IMAGE_PACKAGES   path of the allowed-distribution list (packages.txt)
    FRUSTUM_IMAGE_ROOT       the checkout: modules under it (engine, tests) stay importable

What is hidden: for each path-based finder on ``sys.meta_path`` (the standard path
finder and editable-install finders), a top-level module provided by a distribution
outside the list is reported as not found (``import x`` raises ModuleNotFoundError,
``importlib.util.find_spec`` returns None), and ``importlib.metadata`` lists no such
distribution (so pytest loads no plugin the image lacks). The standard library, the
checkout and the project's own distribution (``frustum``) are always allowed; so are
modules in the standard library's folders that ``sys.stdlib_module_names`` does not name
(``_sysconfigdata_*``).
"""

from __future__ import annotations

import importlib.machinery
import importlib.metadata
import os
import re
import sys
import sysconfig

_LIST = os.environ.get("FRUSTUM_IMAGE_PACKAGES")
_ROOT = os.path.realpath(os.environ.get("FRUSTUM_IMAGE_ROOT", os.getcwd()))
_STDLIB = tuple({os.path.realpath(sysconfig.get_path(k)) + os.sep
                 for k in ("stdlib", "platstdlib")})


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _allowed_names() -> set[str]:
    with open(_LIST, encoding="utf-8") as f:
        names = {_norm(line.strip()) for line in f if line.strip() and not line.startswith("#")}
    return names | {"frustum"}


class _HidingFinder:
    """Wraps a meta-path finder; hides modules and distributions not on the image."""

    def __init__(self, inner, policy):
        self._inner = inner
        self._policy = policy

    def find_spec(self, fullname, path=None, target=None):
        if path is None and not self._policy.module_allowed(fullname.partition(".")[0]):
            return None
        finder = getattr(self._inner, "find_spec", None)
        return finder(fullname, path, target) if finder else None

    def find_distributions(self, *args, **kwargs):
        finder = getattr(self._inner, "find_distributions", None)
        if finder is None:
            return iter(())
        return (d for d in finder(*args, **kwargs)
                if self._policy.distribution_allowed(d.metadata["Name"] or ""))

    def invalidate_caches(self):
        if hasattr(self._inner, "invalidate_caches"):
            self._inner.invalidate_caches()

    def __getattr__(self, name):
        return getattr(self._inner, name)


class _Policy:
    def __init__(self, allowed: set[str]):
        self.allowed = allowed
        # top-level module -> distributions, read before any hiding is in place
        self.providers = importlib.metadata.packages_distributions()
        self.decided: dict[str, bool] = {}
        self.hidden: set[str] = set()

    def distribution_allowed(self, name: str) -> bool:
        return _norm(name) in self.allowed

    def module_allowed(self, top: str) -> bool:
        ok = self.decided.get(top)
        if ok is None:
            ok = self._decide(top)
            self.decided[top] = ok
            if not ok:
                self.hidden.add(top)
        return ok

    def _decide(self, top: str) -> bool:
        if top in sys.stdlib_module_names or top in sys.builtin_module_names:
            return True
        dists = self.providers.get(top)
        if dists:
            return any(self.distribution_allowed(d) for d in dists)
        # No distribution provides it: the checkout's own modules (engine, conftest,
        # test helpers) are allowed; anything else installed outside a distribution is not.
        spec = importlib.machinery.PathFinder.find_spec(top)
        if spec is None:
            return True  # not found anyway: let the import fail as usual
        where = spec.origin or next(iter(spec.submodule_search_locations or []), "")
        where = os.path.realpath(where) if where else ""
        return where.startswith((_ROOT + os.sep, *_STDLIB))


def _install():
    policy = _Policy(_allowed_names())
    keep = (importlib.machinery.BuiltinImporter, importlib.machinery.FrozenImporter)
    sys.meta_path[:] = [f if f in keep or isinstance(f, _HidingFinder) else _HidingFinder(f, policy)
                        for f in sys.meta_path]
    # Modules already imported during start-up (.pth files) stay; report them.
    sys.frustum_image_policy = policy


if _LIST:
    _install()
