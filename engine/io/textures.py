"""Texture images for loaders: decoding with a size limit, colour-space conversion and
sampling at vertex UVs (the colours a textured mesh shows when drawn as points).

Sampling follows the same rules as the renderer's per-pixel sampling
(engine.render.sampling, which this layer may not import; tests compare the two):
texel i = wrap(floor(u * W)) for "nearest"; for "linear" texel centres at
(i + 0.5) / W and a bilinear blend of the sRGB-decoded texels, encoded again; wrap
modes repeat / clamp / mirror act on the texel index exactly as GL's do on the
coordinate, so u = 1.25 and u = -0.75 read the texel of u = 0.25 under "repeat".
(0, 0) is the top-left of the image.

sRGB transfer functions: IEC 61966-2-1 (the same piecewise curve as
engine.render.colorspace).
"""

from __future__ import annotations

import io

import numpy as np

from ..scene.material import Texture

__all__ = ["MAX_TEXELS", "decode_image", "linear_to_srgb", "sample_texture", "srgb_to_linear",
           "to_rgba8"]

#: Largest image decoded, in texels (8192 x 8192): 256 MiB as RGBA.
MAX_TEXELS = 8192 * 8192


def srgb_to_linear(c):
    c = np.clip(np.asarray(c, np.float64), 0.0, 1.0)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def linear_to_srgb(lin):
    lin = np.clip(np.asarray(lin, np.float64), 0.0, 1.0)
    return np.where(lin <= 0.0031308, lin * 12.92, 1.055 * lin ** (1 / 2.4) - 0.055)


def to_rgba8(c) -> np.ndarray:
    """Floats in [0, 1] -> uint8 (round half to even of c * 255)."""
    return np.rint(np.clip(np.nan_to_num(np.asarray(c, np.float64)), 0.0, 1.0)
                   * 255.0).astype(np.uint8)


def decode_image(data: bytes) -> np.ndarray:
    """Encoded image bytes (PNG, JPEG, WebP, BMP, TGA, ... whatever Pillow reads) ->
    (H, W, 4) uint8 RGBA, row 0 at the top.

    Raises ValueError saying why: not an image Pillow knows, more than MAX_TEXELS
    texels (checked from the header, before decoding), or corrupt data.
    """
    from PIL import Image, UnidentifiedImageError

    try:
        img = Image.open(io.BytesIO(data))
    except UnidentifiedImageError:
        raise ValueError("not an image format Pillow can read") from None
    except Image.DecompressionBombError as exc:
        raise ValueError(str(exc)) from None
    w, h = img.size
    if w < 1 or h < 1 or w * h > MAX_TEXELS:
        raise ValueError(f"{w}x{h} texels is outside the limit of 1 to {MAX_TEXELS:,} texels")
    try:
        img.load()
        rgba = np.asarray(img.convert("RGBA"))
    except (OSError, ValueError, SyntaxError, EOFError, Image.DecompressionBombError) as exc:
        raise ValueError(f"corrupt image data ({' '.join(str(exc).split()) or type(exc).__name__})"
                         ) from None
    return np.ascontiguousarray(rgba)


def _wrap(i, n: int, mode: str):
    i = np.asarray(i, np.int64)
    if mode == "repeat":
        return np.mod(i, n)
    if mode == "clamp":
        return np.clip(i, 0, n - 1)
    m = np.mod(i, 2 * n)
    return np.where(m < n, m, 2 * n - 1 - m)


def sample_texture(texture: Texture, uv) -> np.ndarray:
    """(M, 4) float64 sRGB-encoded RGBA of ``texture`` at ``uv`` ((M, 2); module doc).
    Non-finite UVs read texel (0, 0)."""
    uv = np.asarray(uv, np.float64).reshape(-1, 2)
    uv = np.where(np.isfinite(uv), uv, 0.0)
    w, h = texture.size
    uv = np.clip(uv, -2.0**31 / max(w, h), 2.0**31 / max(w, h))
    s = texture.sampler
    img = texture.image
    x, y = uv[:, 0] * w, uv[:, 1] * h
    if s.filter == "nearest":
        t = img[_wrap(np.floor(y), h, s.wrap_t), _wrap(np.floor(x), w, s.wrap_s)]
        return t.astype(np.float64) / 255.0
    x, y = x - 0.5, y - 0.5
    x0, y0 = np.floor(x), np.floor(y)
    fx, fy = (x - x0)[:, None], (y - y0)[:, None]
    i0, i1 = _wrap(x0, w, s.wrap_s), _wrap(x0 + 1, w, s.wrap_s)
    j0, j1 = _wrap(y0, h, s.wrap_t), _wrap(y0 + 1, h, s.wrap_t)

    def texels(r, c):
        t = img[r, c].astype(np.float64) / 255.0
        t[:, :3] = srgb_to_linear(t[:, :3])
        return t

    top = texels(j0, i0) * (1 - fx) + texels(j0, i1) * fx
    bottom = texels(j1, i0) * (1 - fx) + texels(j1, i1) * fx
    out = top * (1 - fy) + bottom * fy
    out[:, :3] = linear_to_srgb(out[:, :3])
    return out
