"""Texture sampling on the CPU with glTF 2.0 / GL sampler rules: the renderer samples
per pixel with it, the loaders at vertex UVs (for the points mode).

Addressing (texture of W x H texels, u across, v down from the top row)::

    nearest  texel i = wrap(floor(u * W))
    linear   texel centres at (i + 0.5) / W: x = u * W - 0.5, i0 = floor(x), f = x - i0,
             result = lerp(texel wrap(i0), texel wrap(i0 + 1), f), the same along v

Wrap modes act on texel indices exactly as GL's do on the coordinate (glTF REPEAT = GL
REPEAT, CLAMP_TO_EDGE, MIRRORED_REPEAT; OpenGL 4.6 core spec, section 8.14.2)::

    repeat  i mod W
    clamp   min(max(i, 0), W - 1)
    mirror  m = i mod 2W; m if m < W else 2W - 1 - m

so u = 1.25 and u = -0.75 read the same texel as u = 0.25 under "repeat".

Filtering happens on the decoded (linear) values of sRGB textures, as GL does for
SRGB8_ALPHA8 textures; alpha is linear. No mipmaps.
"""

from __future__ import annotations

import numpy as np

from .colorspace import srgb_to_linear
from .material import Texture

__all__ = ["sample", "wrap_index"]


def wrap_index(i, n: int, mode: str):
    """Integer texel indices (any int array) -> indices in [0, n) for ``mode``."""
    i = np.asarray(i, np.int64)
    if mode == "repeat":
        return np.mod(i, n)
    if mode == "clamp":
        return np.clip(i, 0, n - 1)
    m = np.mod(i, 2 * n)
    return np.where(m < n, m, 2 * n - 1 - m)


# uint8 -> float64 tables: 8-bit value / 255, and its sRGB decode (RGB) or as-is (alpha)
_UNORM = np.arange(256) / 255.0
_DECODE = srgb_to_linear(_UNORM)


def _texels(texture: Texture, rows, cols, linear: bool):
    """(M, 4) float64 texels at integer (rows, cols): RGB decoded when ``linear``."""
    t = texture.image[rows, cols]
    out = _UNORM[t]
    if linear:
        out[:, :3] = _DECODE[t[:, :3]]
    return out


def sample(texture: Texture, uv, linear: bool = True):
    """Sample ``texture`` at ``uv`` ((M, 2) float, (0, 0) = top-left of the image).

    Returns (M, 4) float64 RGBA: RGB linear when ``linear`` (else the sRGB-encoded
    values, filtered as they are), alpha in [0, 1]. Non-finite UVs read texel (0, 0).
    """
    uv = np.asarray(uv, np.float64)
    uv = np.where(np.isfinite(uv), uv, 0.0)
    # keep the float -> int conversion defined for absurd coordinates (repeat is exact
    # for |u| < 2**31 texels; beyond that the texel is arbitrary but finite)
    uv = np.clip(uv, -2.0**31 / max(texture.size), 2.0**31 / max(texture.size))
    w, h = texture.size
    s = texture.sampler
    x, y = uv[:, 0] * w, uv[:, 1] * h
    if s.filter == "nearest":
        return _texels(texture, wrap_index(np.floor(y), h, s.wrap_t),
                       wrap_index(np.floor(x), w, s.wrap_s), linear)
    x, y = x - 0.5, y - 0.5
    x0, y0 = np.floor(x), np.floor(y)
    fx, fy = (x - x0)[:, None], (y - y0)[:, None]
    i0, i1 = wrap_index(x0, w, s.wrap_s), wrap_index(x0 + 1, w, s.wrap_s)
    j0, j1 = wrap_index(y0, h, s.wrap_t), wrap_index(y0 + 1, h, s.wrap_t)
    top = _texels(texture, j0, i0, linear) * (1 - fx) + _texels(texture, j0, i1, linear) * fx
    bottom = _texels(texture, j1, i0, linear) * (1 - fx) + _texels(texture, j1, i1, linear) * fx
    return top * (1 - fy) + bottom * fy
