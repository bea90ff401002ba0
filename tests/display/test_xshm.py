"""engine.display.xshm without a window: the channel swap and the refusals; the window
path itself is tests/display/test_window.py's (a visible X11 window under Xvfb, read back
from the X server)."""

from __future__ import annotations

import numpy as np

from engine.display.xshm import SharedImagePresenter, rgba_to_bgra


def test_rgba_to_bgra_swaps_red_and_blue_only():
    rng = np.random.default_rng(3)
    rgba = rng.integers(0, 256, (7, 5, 4), dtype=np.uint8)
    src = rgba.reshape(-1).view(np.uint32)
    out = np.zeros_like(src)
    scratch = (np.empty_like(src), np.empty_like(src))
    rgba_to_bgra(src, out, scratch)
    bgra = out.view(np.uint8).reshape(7, 5, 4)
    np.testing.assert_array_equal(bgra, rgba[..., [2, 1, 0, 3]])
    again = np.zeros_like(src)
    rgba_to_bgra(out, again, scratch)  # the same swap undoes itself (read())
    np.testing.assert_array_equal(again.view(np.uint8).reshape(7, 5, 4), rgba)


def test_open_refuses_a_window_that_is_not_x11():
    class HeadlessWindow:  # what pyglet's EGL (headless) windows look like here: no X view
        pass

    presenter, why = SharedImagePresenter.open(HeadlessWindow())
    assert presenter is None and why == "not an X11 window"
