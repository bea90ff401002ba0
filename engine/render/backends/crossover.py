"""The scene size from which the GPU renders a frame faster than Numba on this machine.

A CuPy frame has a fixed host cost (Python, launches, the readback's synchronisation:
tens of microseconds) that a small scene never earns back, so ``auto`` picks Numba below
the crossover and CuPy from it on. The crossover is measured once per machine and cached
in ``$FRUSTUM_CACHE_DIR`` (default ``$XDG_CACHE_HOME/frustum``, else
``~/.cache/frustum``) as ``backend-crossover.json``, keyed by the GPU, the CPU and the
CuPy/Numba versions; a changed key measures again. ``FRUSTUM_CROSSOVER=N`` (vertices)
overrides the measurement.

Measurement: for N in ``SIZES`` a random point scene is projected and rasterized into a
``VIEWPORT`` image with the host frame read back, on each backend (median of a few
synchronised frames after a warm-up); the crossover is the smallest N from which CuPy
wins at that and every larger measured N (``2 * max(SIZES)`` when it never wins).
It takes about a second and runs only when ``auto`` has a GPU to choose.
"""

from __future__ import annotations

import json
import logging
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np

__all__ = ["SIZES", "cache_path", "crossover", "machine_key", "measure_crossover"]

SIZES = (10**3, 10**4, 10**5, 10**6)
VIEWPORT = (640, 480)
log = logging.getLogger("engine")
_memo: dict[str, int] = {}


def cache_path() -> Path:
    """Where the measured crossover is kept (see the module docstring)."""
    base = os.environ.get("FRUSTUM_CACHE_DIR")
    if not base:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = str(Path(xdg) / "frustum") if xdg else str(Path.home() / ".cache" / "frustum")
    return Path(base) / "backend-crossover.json"


def machine_key() -> str:
    """GPU name + CPU + library versions: a cached crossover is valid for this key only."""
    import cupy
    import numba

    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    name = props["name"]
    name = name.decode() if isinstance(name, bytes) else str(name)
    return (f"{name}|{platform.processor() or platform.machine()}|{os.cpu_count()} cpus|"
            f"cupy {cupy.__version__}|numba {numba.__version__}")


def _frame_seconds(backend: str, n: int, repeats: int = 5) -> float:
    """Median wall time of one projected + rasterized frame with the image on the host."""
    from ...scene.camera import PerspectiveCamera
    from . import get_projector

    rng = np.random.default_rng(0)
    pos = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    col = rng.integers(0, 256, (n, 4), dtype=np.uint8)
    cam = PerspectiveCamera(fov_y=60.0, aspect=VIEWPORT[0] / VIEWPORT[1], position=(0, 0, 4))
    vp = cam.view_projection_matrix.astype(np.float32)
    proj = get_projector(backend)
    xp = proj.xp
    pos_d, oid_d, col_d = xp.asarray(pos), xp.zeros(n, np.uint32), xp.asarray(col)
    model = xp.asarray(np.eye(4, dtype=np.float32)[None])
    runs = np.array([[0, n, 0]], np.int64)
    if backend == "cupy":
        from .cupy_raster import default_rasterizer

        raster = default_rasterizer()

        def frame():
            p = proj.project(pos_d, oid_d, model, vp, VIEWPORT)
            raster.readback(raster.rasterize(p.screen_xy, p.depth, p.visible, col_d, VIEWPORT),
                            depth=False)
    else:
        from .numba_raster import rasterize_points_numba

        def frame():
            p = proj.project(pos_d, oid_d, model, vp, VIEWPORT, runs=runs)
            rasterize_points_numba(p.screen_xy, p.depth, p.visible, col_d, VIEWPORT)

    frame()  # warm-up: compilation, buffers
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        frame()  # both end with the frame on the host: synchronised
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def measure_crossover(sizes=SIZES, frame_seconds=_frame_seconds) -> tuple[int, dict]:
    """(crossover N, {"numba": {N: s}, "cupy": {N: s}}) measured now (see the module
    docstring). ``frame_seconds(backend, n)`` is injectable for tests."""
    times = {b: {int(n): frame_seconds(b, int(n)) for n in sizes} for b in ("numba", "cupy")}
    cross = 2 * int(max(sizes))
    for n in sorted(int(n) for n in sizes)[::-1]:
        if times["cupy"][n] >= times["numba"][n]:
            break
        cross = n
    return cross, times


def crossover(measure=measure_crossover, key=None) -> int:
    """The crossover in vertices for this machine: ``FRUSTUM_CROSSOVER``, else the cached
    value for ``machine_key()``, else measured now and cached. A cache that cannot be
    written is logged and the measured value still used.

    Raises ValueError for a ``FRUSTUM_CROSSOVER`` that is not a non-negative integer.
    """
    return cached_measurement("FRUSTUM_CROSSOVER", cache_path(),
                              machine_key if key is None else key, "crossover", measure,
                              _memo, "the Numba/CuPy crossover", {"viewport": list(VIEWPORT)})


def cached_measurement(env_var: str, path: Path, key, field: str, measure, memo: dict,
                       what: str, extra: dict | None = None) -> int:
    """A size in vertices measured once per machine: ``env_var`` when set (a count >= 0),
    else ``memo[key]`` (``key``: a string, or a function making it, called only past the
    variable), else the value cached as ``field`` in the JSON file ``path`` for
    ``key``, else ``measure()`` -> (value, {name: {n: seconds}}) now, written to ``path``
    (a cache that cannot be written is logged and the value still used).

    Raises ValueError naming ``env_var`` for a value that is not a count >= 0.
    """
    env = os.environ.get(env_var)
    if env:
        try:
            value = int(float(env))
        except ValueError:
            value = -1
        if value < 0:
            raise ValueError(f"{env_var} must be a vertex count >= 0, got {env!r}")
        return value
    key = key() if callable(key) else key
    if key in memo:
        return memo[key]
    try:
        cached = json.loads(path.read_text())
        if cached.get("key") == key and int(cached[field]) >= 0:
            memo[key] = int(cached[field])
            return memo[key]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    value, times = measure()
    record = {"key": key, field: int(value), **(extra or {}),
              "seconds": {k: {str(n): t for n, t in v.items()} for k, v in times.items()},
              "measured_utc": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(record, indent=1) + "\n")
        tmp.replace(path)
    except OSError as exc:
        log.info("cannot cache %s in %s: %s", what, path, exc)
    log.info("measured %s: %d vertices (cached in %s)", what, value, path)
    memo[key] = int(value)
    return memo[key]
