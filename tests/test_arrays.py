"""engine.arrays.to_host: the one way host data is taken from NumPy or CuPy arrays, and
no module beside it brings arrays to the host its own way."""

import re

import numpy as np
from conftest import ROOT

from engine.arrays import to_host


class _DeviceLike:
    """Stands for a CuPy array: its data reaches the host only through ``get()``."""

    def __init__(self, data):
        self._data = np.asarray(data)

    def get(self):
        return self._data.copy()


def test_numpy_arrays_come_back_as_they_are():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert to_host(a) is a  # no copy for host data


def test_sequences_become_arrays():
    out = to_host([[1, 2], [3, 4]])
    assert isinstance(out, np.ndarray) and out.shape == (2, 2)
    np.testing.assert_array_equal(out, [[1, 2], [3, 4]])


def test_device_arrays_are_copied_through_get():
    data = np.array([[0.5, -1.0, 2.0]], np.float32)
    out = to_host(_DeviceLike(data))
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    np.testing.assert_array_equal(out, data)


# A private copy of to_host: a module function of that name, or the expression it is made
# of. (A stand-in device array's own ``_host`` method is its storage, not a copy.)
_REIMPLEMENTATION = re.compile(r"^def _?(to_)?host\b|\.get\(\) if hasattr\(")


def test_no_module_reimplements_to_host():
    found = []
    sources = [p for top in ("engine", "tests", "benchmarks", "examples")
               for p in (ROOT / top).rglob("*.py")]
    for path in sorted(sources):
        if path in (ROOT / "engine" / "arrays.py", ROOT / "tests" / "test_arrays.py"):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _REIMPLEMENTATION.search(line):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not found, "use engine.arrays.to_host instead:\n" + "\n".join(found)
