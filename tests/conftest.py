"""Shared fixtures: every backend available here and the third-party reference assets
(the CUDA kernels' host builds are in cuda_emulation.py); and the rules for GPU tests.

GPU tests carry ``@pytest.mark.gpu`` (the cupy parameters of the backend fixtures
included). Without a usable CUDA device they skip, each with the reason. On a GPU run
(``FRUSTUM_GPU_RUN=1``, set by benchmarks/gpu_run.sh) they must run: a GPU test that
skips there is reported as a failure, and test modules that cannot be imported because
a package of ``GPU_IMAGE_ABSENT`` is missing (the GPU machine's image lacks them) are
skipped at collection with that reason instead of failing it. ``FRUSTUM_GPU_RUN=image``
applies only that collection rule (tests/test_gpu_image.py: the GPU selection under the
image's package set on a machine without a GPU). Normal runs are unchanged: GL, window
and loader tests never skip.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REF_ASSETS = ROOT.parent / "shared" / "ref-assets"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
_GPU_RUN_MODE = os.environ.get("FRUSTUM_GPU_RUN", "").lower()
GPU_RUN = _GPU_RUN_MODE in ("1", "true", "yes")  # a GPU must be there: skips fail
IMAGE_RULES = GPU_RUN or _GPU_RUN_MODE == "image"  # modules the image cannot import skip
# Top-level modules the GPU machine's image does not have (tests/gpu_image/packages.txt).
GPU_IMAGE_ABSENT = frozenset({"trimesh", "pyglet", "moderngl", "_moderngl", "glcontext",
                              "imageio_ffmpeg", "laspy", "lazrs", "lzf", "pypcd4",
                              # the notebook and distributed extras and their test tools
                              "dask", "distributed", "jupyter_rfb", "ipywidgets", "IPython",
                              "nbformat", "nbclient", "selenium"})


@functools.cache
def _cupy_reason():
    from engine.render.backends.cupy_backend import cupy_unavailable_reason

    return cupy_unavailable_reason()


def gpu_skip_reason() -> str | None:
    """Why GPU tests cannot run here (None when a CUDA device is usable)."""
    reason = _cupy_reason()
    return None if reason is None else f"needs a CUDA GPU: {reason}"


def backend_params():
    """numpy and numba always (both are installed by the test command); cupy marked gpu."""
    return [
        pytest.param("numpy", id="numpy"),
        pytest.param("numba", id="numba"),
        pytest.param("cupy", id="cupy", marks=pytest.mark.gpu),
    ]


def pytest_runtest_setup(item):
    if item.get_closest_marker("gpu") is not None:
        reason = gpu_skip_reason()
        if reason is not None:
            if GPU_RUN:
                pytest.fail(f"GPU run, but {reason}", pytrace=False)
            pytest.skip(reason)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if GPU_RUN and report.skipped and item.get_closest_marker("gpu") is not None \
            and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"a GPU test skipped on a GPU run: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if not (IMAGE_RULES and report.failed and isinstance(collector, pytest.Module)):
        return
    m = re.search(r"No module named '([\w.]+)'", str(report.longrepr))
    if m and m.group(1).partition(".")[0] in GPU_IMAGE_ABSENT:
        report.outcome = "skipped"
        report.longrepr = (str(collector.path), 0,
                           f"Skipped: {m.group(1)} is not on the GPU image (GPU run)")


@pytest.fixture(params=backend_params())
def projector(request):
    from engine.render.backends import get_projector

    return get_projector(request.param)


@pytest.fixture(scope="session")
def native_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("native")


@pytest.fixture(scope="session")
def ref_assets():
    """Path to ../shared/ref-assets; skips only outside CI when the folder is absent."""
    if not REF_ASSETS.is_dir():
        if IN_CI:
            pytest.fail(f"reference assets missing in CI: {REF_ASSETS}")
        pytest.skip(f"reference assets not present at {REF_ASSETS}")
    return REF_ASSETS
