"""Texture images for loaders: decoding with a size limit, colour-space conversion and
sampling at vertex UVs (the colours a textured mesh shows when drawn as points).

Sampling follows the same rules as the renderer's per-pixel sampling
(engine.scene.sampling, which this layer may not import; tests compare the two):
texel i = wrap(floor(u * W)) for "nearest"; for "linear" texel centres at
(i + 0.5) / W and a bilinear blend of the sRGB-decoded texels, encoded again; wrap
modes repeat / clamp / mirror act on the texel index exactly as GL's do on the
coordinate, so u = 1.25 and u = -0.75 read the texel of u = 0.25 under "repeat".
(0, 0) is the top-left of the image.

sRGB transfer functions: engine.scene.colorspace (IEC 61966-2-1).
"""

from __future__ import annotations

import io

import numpy as np

from ..scene.colorspace import linear_to_srgb
from ..scene.material import Texture
from ..scene.pixels import pixels
from ..scene.sampling import sample

__all__ = ["MAX_TEXELS", "decode_image", "sample_texture",
           "to_rgba8"]

#: Largest image decoded, in texels (8192 x 8192): 256 MiB as RGBA.
MAX_TEXELS = 8192 * 8192


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
        rgba = pixels(img, "RGBA")
    except (OSError, ValueError, SyntaxError, EOFError, Image.DecompressionBombError) as exc:
        raise ValueError(f"corrupt image data ({' '.join(str(exc).split()) or type(exc).__name__})"
                         ) from None
    return np.ascontiguousarray(rgba)


def sample_texture(texture: Texture, uv) -> np.ndarray:
    """(M, 4) float64 sRGB-encoded RGBA of ``texture`` at ``uv`` ((M, 2); module doc).
    Non-finite UVs read texel (0, 0)."""
    uv = np.asarray(uv, np.float64).reshape(-1, 2)
    if texture.sampler.filter == "nearest":
        return sample(texture, uv, linear=False)
    out = sample(texture, uv, linear=True)  # filtered in linear space, then encoded
    out[:, :3] = linear_to_srgb(out[:, :3])
    return out
