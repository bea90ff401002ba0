"""Shows ``probe_scene()`` with raster "software" in a visible X11 window (under Xvfb) and
reads back what the X server holds for the window, for tests/display/test_window.py.

    python tests/display/xshm_probe.py OUT_DIR PRESENT

PRESENT is the Viewer's ``present`` mode ("auto": X shared memory on llvmpipe; "gl": the
textured quad and a buffer swap). Draws two frames, then reads the window's pixels with
``XGetImage`` (the server's copy, not the engine's) and writes ``shown.png`` (RGB) and
``result.json`` (``presented_by``, the window's depth and the frame size).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import sys
from pathlib import Path

import numpy as np
from window_probe import SIZE, probe_scene

_ZPIXMAP = 2


def window_pixels(window, size):
    """(H, W, 3) uint8 RGB of pyglet X11 ``window``'s GL view as the X server holds it
    (a TrueColor visual with red in the high byte of 32-bit pixels, as Xvfb's)."""
    from pyglet.libs.x11 import xlib

    w, h = size
    image = xlib.XGetImage(window._x_display, window._view, 0, 0, w, h, 0xFFFFFFFF, _ZPIXMAP)
    if not image:
        raise RuntimeError("XGetImage failed")
    try:
        im = image.contents
        assert im.bits_per_pixel == 32 and im.red_mask == 0xFF0000, (im.bits_per_pixel,
                                                                      hex(im.red_mask))
        # the data field's address (a c_char_p field would copy the bytes up to a zero)
        data = ctypes.c_void_p.from_address(ctypes.addressof(im) + xlib.XImage.data.offset).value
        rows = np.ctypeslib.as_array((ctypes.c_uint8 * (h * im.bytes_per_line)).from_address(data))
        bgrx = rows.reshape(h, im.bytes_per_line)[:, :4 * w].reshape(h, w, 4)
        return np.ascontiguousarray(bgrx[..., 2::-1])
    finally:  # XDestroyImage is a macro in Xlib.h, a function in libX11
        ctypes.CDLL(ctypes.util.find_library("X11")).XDestroyImage(image)


def main(out_dir: str, present: str) -> int:
    from PIL import Image

    from engine import Renderer
    from engine.display import Viewer

    out = Path(out_dir)
    scene, camera = probe_scene()
    renderer = Renderer(scene, camera, SIZE, backend="numpy")
    viewer = Viewer(renderer, raster="software", visible=True, aids=False, present=present)
    try:
        for _ in range(2):
            viewer.window.dispatch_events()
            viewer.step(0.0)
        shown = window_pixels(viewer.window, SIZE)
        result = {"presented_by": viewer.presented_by, "frames": viewer.frames,
                  "read_pixels": viewer.read_pixels()[..., :3].tolist() == shown.tolist()}
    finally:
        viewer.close()
    Image.fromarray(shown).save(out / "shown.png")
    (out / "result.json").write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
