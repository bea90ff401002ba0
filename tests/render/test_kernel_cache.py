"""engine.render.backends.kernel_cache: a cached kernel that bakes in another module's constant compiles
again when only that module changes (Numba alone keys the cache on the kernel's own
file, and the stale kernel then indexed arrays with the old attribute layout)."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numba

from engine.render.backends import kernel_cache

ROOT = Path(__file__).resolve().parents[2]

# a kernel reading a constant of another module, cached the engine's way (argv[2]
# "engine") or Numba's own way; the package root is pointed at a temporary folder
RUN = textwrap.dedent("""
    import sys
    from pathlib import Path
    import engine.render.backends.kernel_cache as kc
    root = Path(sys.argv[1])
    kc._PACKAGE = (root / "pkg").resolve()
    sys.path[:0] = [str(root / "pkg"), str(root / "other")]
    import kern, plain
    print(kern.engine_way() if sys.argv[2] == "engine" else plain.numba_way())
""")
# inside the (pretend) package: the engine's locators
KERN = textwrap.dedent("""
    import numba
    from consts import N
    from engine.render.backends.kernel_cache import cached

    @numba.njit(cache=cached())
    def engine_way():
        return N
""")
# outside it: Numba's own locators, even with the engine's registered
PLAIN = textwrap.dedent("""
    import numba
    from consts import N

    @numba.njit(cache=True)
    def numba_way():
        return N
""")


def _run(folder: Path, way: str) -> int:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", RUN, str(folder), way], env=env,
                         capture_output=True, text=True, timeout=300, check=True)
    return int(out.stdout.split()[-1])


def test_a_changed_constant_in_another_module_recompiles_the_kernel(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "other").mkdir()
    (tmp_path / "pkg" / "kern.py").write_text(KERN)
    (tmp_path / "other" / "plain.py").write_text(PLAIN)
    consts = tmp_path / "pkg" / "consts.py"
    consts.write_text("N = 3\n")
    assert _run(tmp_path, "engine") == 3 and _run(tmp_path, "numba") == 3  # both cached
    consts.write_text("N = 4\n")
    st = consts.stat()
    os.utime(consts, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert _run(tmp_path, "engine") == 4
    # Numba's own cache still returns the stale value: the mechanism the module fixes
    assert _run(tmp_path, "numba") == 3


def test_engine_kernels_are_stamped_with_the_package_fingerprint():
    from engine.render.backends import numba_vertex

    kernel = numba_vertex._vertices_parallel
    assert isinstance(kernel, numba.core.registry.CPUDispatcher)
    locator = kernel._cache._impl.locator
    assert type(locator).__name__.startswith("Engine")
    assert locator.get_source_stamp()[1] == kernel_cache.source_fingerprint()
    assert len(kernel_cache.source_fingerprint()) == 40
