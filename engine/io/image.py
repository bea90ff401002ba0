"""Saving frames as image files (Pillow)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["save_image"]


def save_image(path, color: np.ndarray) -> Path:
    """Write an (H, W, 4) or (H, W, 3) uint8 image (row 0 = top) to ``path``.

    The format follows the suffix (.png, .jpg, ...); parent folders are created. Alpha is
    dropped for formats without it (JPEG). Returns the path. Raises ValueError for a
    wrong shape/dtype or an unknown suffix, OSError when the file cannot be written.
    """
    from PIL import Image

    path = Path(path)
    a = np.asarray(color)
    if a.dtype != np.uint8 or a.ndim != 3 or a.shape[2] not in (3, 4):
        raise ValueError(f"image must be (H, W, 3|4) uint8, got {a.shape} {a.dtype}")
    ext = path.suffix.lower()
    if ext not in Image.registered_extensions():
        raise ValueError(f"{path}: unknown image format {ext!r} (use .png or .jpg)")
    img = Image.fromarray(np.ascontiguousarray(a), "RGBA" if a.shape[2] == 4 else "RGB")
    if ext in (".jpg", ".jpeg") and img.mode == "RGBA":
        img = img.convert("RGB")
    path.parent.mkdir(parents=True, exist_ok=True)
    img.save(path)
    return path
