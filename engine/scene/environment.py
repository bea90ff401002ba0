"""The light arriving from every direction at infinity: image-based lighting's environment.

An ``Environment`` is a radiance map over the sphere of world directions, in linear light:
either one uniform colour, or an equirectangular (latitude-longitude) image. A world
direction ``d = (x, y, z)`` (unit, right-handed, +Y up, the default camera looking down
-Z) reads the image at::

    u = 0.5 + atan2(x, -z) / (2 pi)      (0 at the left edge, 1 at the right)
    v = acos(y) / pi                     (0 at the top row: straight up; 1: straight down)

so the image's centre is seen looking down -Z, its 3/4 column looking along +X, its top
row straight up (the layout of the usual panorama files). Pixels are radiance (linear
RGB, the engine's light unit: a white Lambert surface under a uniform environment of
radiance 1 has radiance 1); an 8-bit file (PNG, JPEG) is sRGB-decoded, a Radiance .hdr
file is linear already. ``intensity`` multiplies every value.

The renderer prefilters an environment once (engine.render.ibl) for the PBR and Blinn-Phong
ambient term, and shows it behind the scene when ``Scene.sky`` is ``"environment"``
(engine.scene.atmosphere): one environment, one loader.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from .color import as_rgba
from .colorspace import srgb_to_linear
from .pixels import pixels

__all__ = ["HDR_READER", "Environment"]

# the maintained reader behind Radiance .hdr files (OpenCV's imread: RGBE, linear floats)
HDR_READER = "opencv-python-headless"
_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")


def _intensity(value) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"environment intensity must be a number, got {value!r}") from None
    if not (math.isfinite(v) and v >= 0.0):
        raise ValueError(f"environment intensity must be finite and >= 0, got {value!r}")
    return v


class Environment:
    """Distant light from every direction (see the module docstring).

    ``Environment(color)``: a uniform environment of one colour (sRGB: a CSS name,
    "#rrggbb" or 3-4 floats in [0, 1]; alpha ignored), e.g. ``Environment("white")``.
    ``Environment.from_file(path)``: an equirectangular image.
    ``Environment.from_array(radiance)``: an equirectangular (H, W, 3) array of linear
    radiance.

    Attributes:
        radiance: (H, W, 3) float32 linear radiance times ``intensity``, read-only; (1, 1, 3)
            for a uniform environment.
        uniform: True for a one-colour environment.
        intensity: the factor applied (float >= 0).
        source: the file it came from, or None.

    Raises:
        ValueError: naming the argument, for a bad colour or intensity.
    """

    def __init__(self, color="white", intensity: float = 1.0):
        rgb = srgb_to_linear(as_rgba(color, "environment color")[:3])
        self._init(np.asarray(rgb, np.float32).reshape(1, 1, 3), intensity, True, None)

    def _init(self, radiance, intensity, uniform, source):
        self.intensity = _intensity(intensity)
        with np.errstate(over="ignore"):
            r = np.ascontiguousarray(np.asarray(radiance, np.float64) * self.intensity,
                                     np.float32)
        if not np.isfinite(r).all():  # beyond float32: it would draw as inf or NaN
            raise ValueError(f"environment radiance x intensity {intensity!r} overflows "
                             f"float32 (at most {np.finfo(np.float32).max:.3g})")
        r.flags.writeable = False  # prefiltered once (engine.render.ibl): kept unchanged
        self.radiance, self.uniform, self.source = r, uniform, source

    @classmethod
    def from_array(cls, radiance, intensity: float = 1.0, source=None) -> Environment:
        """An equirectangular environment from (H, W, 3) linear radiance (H, W >= 1,
        finite, >= 0). Raises ValueError naming what is wrong (``source`` names the
        file, when it came from one)."""
        what = f"environment image {source}" if source else "environment radiance"
        a = np.asarray(radiance, np.float64)
        if a.ndim != 3 or a.shape[2] != 3 or a.shape[0] < 1 or a.shape[1] < 1:
            raise ValueError(f"{what} must be an (H, W, 3) array, got shape {a.shape}")
        if not np.isfinite(a).all() or (a < 0).any():
            raise ValueError(f"{what}: radiance must be finite and >= 0")
        env = cls.__new__(cls)
        env._init(a, intensity, False, source)
        return env

    @classmethod
    def from_file(cls, path, intensity: float = 1.0) -> Environment:
        """An equirectangular environment image: PNG or JPEG (8-bit sRGB, decoded to
        linear; an alpha channel is ignored) through Pillow, or Radiance .hdr (linear)
        through OpenCV (``HDR_READER``, an optional dependency).

        Raises:
            FileNotFoundError: the file does not exist.
            ValueError: naming the file, for a directory, an unknown suffix, an
                unreadable or empty image, a missing .hdr reader, or a bad intensity.
        """
        p = Path(path)
        if p.is_dir():
            raise ValueError(f"environment image {p}: a directory, not a file")
        if not p.is_file():
            raise FileNotFoundError(f"environment image {p}: no such file")
        suffix = p.suffix.lower()
        if suffix == ".hdr":
            return cls.from_array(_read_hdr(p), intensity, source=p)
        if suffix not in _IMAGE_SUFFIXES:
            raise ValueError(f"environment image {p}: unknown type {suffix or '(none)'!r} "
                             f"(use .png, .jpg or .hdr)")
        from PIL import Image, UnidentifiedImageError

        try:
            with Image.open(p) as im:
                im.load()
                rgb = pixels(im, "RGB").astype(np.float64) / 255.0
        except (UnidentifiedImageError, OSError, SyntaxError) as e:
            raise ValueError(f"environment image {p}: not a readable image ({e})") from None
        return cls.from_array(srgb_to_linear(rgb), intensity, source=p)

    def __repr__(self):
        if self.uniform:
            return f"Environment(radiance={tuple(float(c) for c in self.radiance[0, 0])})"
        h, w, _ = self.radiance.shape
        return f"Environment({self.source or 'array'}, {w}x{h}, intensity={self.intensity})"


def _read_hdr(path: Path) -> np.ndarray:
    """(H, W, 3) float linear RGB of a Radiance .hdr file through OpenCV."""
    try:
        import cv2
    except ImportError:
        raise ValueError(f"environment image {path}: reading Radiance .hdr needs "
                         f"{HDR_READER} (pip install {HDR_READER}), which is not "
                         f"installed") from None
    from cv2.utils import logging as cv_log

    quiet = cv_log.getLogLevel()  # OpenCV logs a bad file to stderr; the error says it
    cv_log.setLogLevel(cv_log.LOG_LEVEL_SILENT)
    try:
        bgr = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    finally:
        cv_log.setLogLevel(quiet)
    if bgr is None or bgr.ndim != 3 or bgr.shape[2] < 3:
        raise ValueError(f"environment image {path}: not a readable Radiance .hdr image")
    return np.ascontiguousarray(bgr[:, :, 2::-1], np.float64)
