"""CUDA-GL interop on a real GPU: the cupy backend's projected points reach GL's buffers
device to device, and the image equals the Numba backend's GL image.

Needs a CUDA device, moderngl and an EGL driver on that device. The GPU machine's image
has no moderngl: a GPU run skips this module at collection unless the wheels are carried
(docs/gpu.md, "Optional: the GL interop test"). Without a GPU it skips like every GPU test.
"""

from __future__ import annotations

import moderngl  # noqa: F401 - the module needs it; on the GPU image it skips here
import numpy as np
import pytest

from engine import Node, PerspectiveCamera, PointCloud, Renderer, Scene

pytestmark = [pytest.mark.gpu, pytest.mark.timeout(120)]


def _scene():
    rng = np.random.default_rng(3)
    scene = Scene("interop")
    for i, size in enumerate((1.0, 2.0)):
        scene.add(Node(f"c{i}", geometry=PointCloud(
            rng.uniform(-1, 1, (5000, 3)).astype(np.float32),
            rng.integers(0, 256, (5000, 4), dtype=np.uint8), point_size=size)))
    return scene, scene.add(PerspectiveCamera(fov_y=60.0, position=(0.2, 0.1, 4.0)))


def test_gl_mode_on_cupy_uses_interop_and_matches_numba():
    from engine.render.gl import GLUnavailable

    scene, cam = _scene()
    try:
        gpu = Renderer(scene, cam, (160, 120), backend="cupy", raster="gl")
        first = gpu.render()
    except GLUnavailable as exc:
        pytest.skip(f"no EGL context on this machine: {exc}")
    cpu = Renderer(scene, cam, (160, 120), backend="numba", raster="gl")
    try:
        painter = gpu.gl.painter
        assert painter.interop is not None, painter._interop.unavailable
        copies = painter.interop.copies
        frame = gpu.render()
        assert painter.interop.copies == copies + 3  # xy, depth, visible; colours once
        np.testing.assert_array_equal(frame.color, first.color)
        np.testing.assert_array_equal(frame.color, cpu.render().color)
    finally:
        gpu.close()
        cpu.close()
