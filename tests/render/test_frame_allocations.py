"""Frames that allocate nothing: a points-only frame on the Numba backend with
``render(copy=False)`` resolves into arrays the backend keeps, and no stage allocates
per point or per pixel (measured with tracemalloc, which sees NumPy's allocations)."""

import tracemalloc

import numpy as np
import pytest

from engine import Node, PerspectiveCamera, PointCloud, Renderer, Scene

SIZE = (320, 240)  # 76,800 pixels: one byte per pixel is above the allowance below
POINTS = 200_000
ALLOWANCE = 50_000  # bytes: Python objects of a frame, far below any per-point array


def _renderer(backend):
    scene = Scene(background=(0.1, 0.1, 0.2))
    pts = np.random.default_rng(0).uniform(-1, 1, (POINTS, 3)).astype(np.float32)
    scene.add(Node("cloud", geometry=PointCloud(pts, colors=(pts + 1) / 2)))
    cam = scene.add(PerspectiveCamera(fov_y=60, aspect=SIZE[0] / SIZE[1], position=(2, 1.5, 3)))
    cam.look_at((0, 0, 0))
    return Renderer(scene, cam, SIZE, backend=backend)


def _peak_bytes(fn):
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_numba_points_frame_without_copy_allocates_nothing():
    r = _renderer("numba")
    owned = r.render()  # warm: kernels, reused buffers
    first = r.render(copy=False)
    np.testing.assert_array_equal(first.color, owned.color)
    np.testing.assert_array_equal(first.depth, owned.depth)
    assert (owned.depth < 1).sum() > 10_000  # points drawn
    assert _peak_bytes(lambda: r.render(copy=False)) < ALLOWANCE
    again = r.render(copy=False)
    assert again.color.ctypes.data == first.color.ctypes.data  # the same arrays, rewritten
    # a frame the caller owns is a new array each time, never the kept one
    mine = r.render()
    assert mine.color.ctypes.data != first.color.ctypes.data
    assert _peak_bytes(r.render) >= mine.color.nbytes  # the owned frame is the allocation


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_copy_false_frames_equal_owned_frames(backend):
    r = _renderer(backend)
    a = r.render()
    b = r.render(copy=False)
    np.testing.assert_array_equal(a.color, b.color)
    np.testing.assert_array_equal(a.depth, b.depth)
