"""The frame a renderer produces, and the key buffer every rasterizer writes into.

Every rasterizer (points now; lines and triangles share it) keeps per pixel the minimum
64-bit key ``(float32 window-depth bits << 32) | primitive index``; ``EMPTY_KEY`` marks a
pixel nothing covered. A resolve pass turns the key buffer into a ``Frame``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..arrays import to_host

__all__ = ["EMPTY_KEY", "Frame", "background_rgba", "cleared_keys", "fill_empty", "new_keys"]

EMPTY_KEY = np.uint64(0xFFFFFFFFFFFFFFFF)


class Frame(NamedTuple):
    """A rendered frame on the host.

    Attributes:
        color: (H, W, 4) uint8 RGBA, row 0 is the top row.
        depth: (H, W) float32 window depth in [0, 1]; 1.0 where nothing was drawn. None
            when the caller asked for no depth (``Renderer.render(depth=False)``).

    ``Renderer.render(host=False)`` on the cupy backend gives CuPy arrays of the same
    shapes (device frames, e.g. for CUDA-GL interop).
    """

    color: np.ndarray
    depth: np.ndarray

    def _repr_png_(self) -> bytes:
        """The colour as PNG bytes: Jupyter/IPython shows a Frame inline (RGBA, row 0
        at the top, one image pixel per frame pixel). Device (CuPy) frames are copied to
        the host first."""
        import io

        from PIL import Image

        color = to_host(self.color)
        buf = io.BytesIO()
        Image.fromarray(np.ascontiguousarray(color, dtype=np.uint8)).save(buf, "PNG")
        return buf.getvalue()


def background_rgba(background) -> np.ndarray:
    """RGB or RGBA floats in [0, 1] -> (4,) uint8 RGBA (alpha 255 when RGB), rounded."""
    bg = np.rint(np.clip(np.asarray(background, np.float64), 0.0, 1.0) * 255).astype(np.uint8)
    if bg.shape not in ((3,), (4,)):
        raise ValueError(f"background must be RGB or RGBA, got shape {bg.shape}")
    return np.concatenate([bg, np.array([255], np.uint8)]) if bg.size == 3 else bg


def new_keys(size) -> np.ndarray:
    """(H * W,) uint64 key buffer for ``size`` = (width, height), every pixel empty."""
    w, h = size
    return fill_empty(np.empty(w * h, np.uint64))


def fill_empty(keys: np.ndarray) -> np.ndarray:
    """``keys`` (a C-contiguous uint64 array of any shape) set to ``EMPTY_KEY`` in place,
    and returned. EMPTY_KEY is all ones, so this is a byte fill: libc's memset, which
    for large buffers skips reading the old lines, took half the time of NumPy's
    8-byte fill on a 1280x720 buffer (0.056 against 0.11 ms, measured side by side).

    Raises ValueError (NumPy's) when the last axis of ``keys`` is not contiguous; the
    dtype is not checked (the key buffers are all uint64)."""
    keys.view(np.uint8).fill(0xFF)
    return keys


def cleared_keys(keys, size) -> np.ndarray:
    """A (W * H,) uint64 key buffer of empty keys: ``keys`` refilled when it has that
    size (no fresh 8-bytes-per-pixel allocation per frame), else a new one."""
    w, h = size
    if keys is None or keys.shape != (w * h,):
        return new_keys(size)
    return fill_empty(keys)
