"""Shared fixtures: every backend available here and the third-party reference assets
(the CUDA kernels' host builds are in cuda_emulation.py)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
REF_ASSETS = ROOT.parent / "shared" / "ref-assets"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _cupy_reason():
    from engine.render.backends.cupy_backend import cupy_unavailable_reason

    return cupy_unavailable_reason()


def backend_params():
    """numpy and numba always (both are installed by the test command); cupy with a GPU."""
    reason = _cupy_reason()
    return [
        pytest.param("numpy", id="numpy"),
        pytest.param("numba", id="numba"),
        pytest.param("cupy", id="cupy", marks=pytest.mark.skipif(
            reason is not None, reason=f"needs a CUDA GPU: {reason}")),
    ]


@pytest.fixture(params=backend_params())
def projector(request):
    from engine.render.backends import get_projector

    return get_projector(request.param)


def to_host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


@pytest.fixture(scope="session")
def ref_assets():
    """Path to ../shared/ref-assets; skips only outside CI when the folder is absent."""
    if not REF_ASSETS.is_dir():
        if IN_CI:
            pytest.fail(f"reference assets missing in CI: {REF_ASSETS}")
        pytest.skip(f"reference assets not present at {REF_ASSETS}")
    return REF_ASSETS
