"""Saving frames as image files (Pillow).

Which suffixes can be written is not a list kept here: ``image_formats()`` asks the
installed Pillow, once per process, by writing a small RGBA test image in every format
it registers a suffix and a save handler for and reading it back. A format is kept when
the image comes back decodable at the same size (as RGBA, or as RGB when the format has
no alpha, e.g. JPEG). So ``.psd``, ``.pcd``, ``.xpm`` (read-only in Pillow), ``.eps``
(needs Ghostscript), ``.blp`` (palette images only) and ``.ico`` (at most 256 px) are
refused before anything is rendered, and a Pillow with more plugins offers more.

Alpha: formats with alpha (PNG, WebP, TIFF...) get the frame's RGBA as is, straight (not
premultiplied) alpha; so a scene with a transparent background (``Scene(background=
"transparent")``, ``--background transparent``) gives empty pixels alpha 0 and drawn ones
255. Formats without alpha (JPEG, BMP; MP4 and GIF in engine.io.video) get the frame
composited over ``MATTE`` (black, the colour of "transparent"): ``composite``.
"""

from __future__ import annotations

import functools
import io
import warnings
from pathlib import Path

import numpy as np

from ..errors import OutputError

__all__ = ["MATTE", "check_image_name", "composite", "image_formats", "image_suffixes",
           "save_image"]

# the opaque colour behind the frame in outputs without alpha: 8-bit sRGB-encoded RGB
MATTE = (0, 0, 0)

# The test image: wider than 256 px (ICO and cursor formats shrink larger images) and
# not a multiple of 4 or 8 (block-based formats that pad or crop).
_PROBE_SIZE = (259, 3)


def _round_trips(fmt: str, mode: str) -> bool:
    from PIL import Image

    w, h = _PROBE_SIZE
    a = np.zeros((h, w, 4), np.uint8)
    a[..., 0] = np.arange(w, dtype=np.uint8)[None, :]
    a[..., 3] = 255
    buf = io.BytesIO()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # e.g. a deprecated format: not offered
            Image.fromarray(a, "RGBA").convert(mode).save(buf, format=fmt)
            buf.seek(0)
            with Image.open(buf) as im:
                im.load()
                return im.size == (w, h)
    except Exception:  # noqa: BLE001 - any failure means: not writable here
        return False


@functools.cache
def _mode(fmt: str) -> str | None:
    """"RGBA" or "RGB", the mode the Pillow format ``fmt`` writes and reads back, or None
    when it does neither (probed once per format and process)."""
    from PIL import Image

    if fmt not in Image.SAVE or fmt == "GIF":  # .gif is an animation output
        return None
    return next((m for m in ("RGBA", "RGB") if _round_trips(fmt, m)), None)


def _registered() -> dict[str, str]:
    from PIL import Image

    Image.init()
    return Image.registered_extensions()


def image_formats() -> dict[str, tuple[str, str]]:
    """{suffix: (Pillow format, mode)} for every image suffix this Pillow can write and
    read back (see the module docstring); mode is "RGBA", or "RGB" for formats
    without alpha. Suffixes are lower case with the dot ('.png')."""
    return {ext: (fmt, _mode(fmt)) for ext, fmt in sorted(_registered().items())
            if _mode(fmt) is not None}


def image_suffixes() -> tuple[str, ...]:
    """The suffixes ``save_image`` writes (sorted), e.g. ('.bmp', ..., '.png', ...)."""
    return tuple(sorted(image_formats()))


def check_image_name(path) -> tuple[str, str]:
    """(Pillow format, mode) for the image output ``path``; OutputError naming the
    suffixes that work when this Pillow cannot write its suffix. Only that suffix's
    format is probed unless the error needs the whole list."""
    ext = Path(path).suffix.lower()
    fmt = _registered().get(ext)
    if fmt is not None and _mode(fmt) is not None:
        return fmt, _mode(fmt)
    what = f"{ext!r} images" if ext else "an image without a suffix"
    raise OutputError(f"{path}: cannot write {what}; image suffixes that work here: "
                      f"{', '.join(image_suffixes())} (videos: .mp4, .gif, or a folder "
                      f"for PNG frames)")


def composite(color: np.ndarray, matte=MATTE) -> np.ndarray:
    """(H, W, 3) uint8: an (H, W, 4) uint8 straight-alpha image composited over the
    opaque ``matte`` (3 ints in 0-255), ``rgb a + matte (1 - a)`` with ``a = alpha / 255``
    rounded to the nearest integer (Porter and Duff's "over", SIGGRAPH 1984, with an
    opaque destination), in the encoded 8-bit values as image viewers composite. An
    (H, W, 3) image, or one whose alpha is 255 everywhere, is returned as its RGB."""
    a = np.asarray(color)
    if a.shape[-1] == 3 or bool((a[..., 3] == 255).all()):
        return a[..., :3]
    alpha = a[..., 3:].astype(np.uint32)
    m = np.asarray(matte, np.uint32)
    out = (a[..., :3] * alpha + m * (255 - alpha) + 127) // 255
    return out.astype(np.uint8)


def save_image(path, color: np.ndarray) -> Path:
    """Write an (H, W, 4) or (H, W, 3) uint8 image (row 0 = top) to ``path``.

    The format follows the suffix (one of ``image_suffixes()``); parent folders are
    created. Formats without alpha (JPEG) get the image composited over ``MATTE``
    (``composite``); the others its RGBA as is. The image is written to
    ``NAME.partial.SUFFIX`` and renamed over ``path`` when complete
    (``engine.io.output.PartialFile``), so an earlier file at ``path`` is never left
    half-overwritten. Returns the path. Raises ValueError for a wrong shape/dtype,
    OutputError for a suffix that cannot be written, OSError when the file cannot be
    written (the earlier file is then left as it was).
    """
    from PIL import Image

    from .output import PartialFile, check_output_name

    path = Path(check_output_name(path))
    a = np.asarray(color)
    if a.dtype != np.uint8 or a.ndim != 3 or a.shape[2] not in (3, 4):
        raise ValueError(f"image must be (H, W, 3|4) uint8, got {a.shape} {a.dtype}")
    fmt, mode = check_image_name(path)
    if mode == "RGB":
        a = composite(a)
    img = Image.fromarray(np.ascontiguousarray(a), "RGBA" if a.shape[2] == 4 else "RGB")
    path.parent.mkdir(parents=True, exist_ok=True)
    out = PartialFile(path)
    try:
        img.save(out.tmp, format=fmt)
    except BaseException:
        out.discard()
        raise
    try:
        out.commit()
    except OutputError as exc:  # keep the documented OSError for callers
        raise OSError(str(exc)) from exc.__cause__
    return path
