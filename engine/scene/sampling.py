"""Texture sampling on the CPU with glTF 2.0 / GL sampler rules: the renderer samples
per pixel with it, the loaders at vertex UVs (for the points mode).

Addressing (texture of W x H texels, u across, v down from the top row)::

    nearest  texel i = wrap(floor(u * W))
    linear   texel centres at (i + 0.5) / W: x = u * W - 0.5, i0 = floor(x), f = x - i0,
             result = lerp(texel wrap(i0), texel wrap(i0 + 1), f), the same along v

Wrap modes (glTF REPEAT = GL REPEAT, CLAMP_TO_EDGE, MIRRORED_REPEAT; OpenGL 4.6 core
spec, section 8.14.2) give GL's texel indices::

    repeat  i mod W
    clamp   min(max(i, 0), W - 1)
    mirror  m = i mod 2W; m if m < W else 2W - 1 - m

so u = 1.25 and u = -0.75 read the texel of u = 0.25 under "repeat". They are computed
once per sample and axis, branch-free, with no integer modulo: repeat and mirror take the
first index modulo the period (W, 2W) by one float floor division, the second index is
the next one wrapped by a select, and mirror reflects both by a select; clamp is two
clamps.

Filtering happens in linear light: ``Texture.linear`` holds the texels decoded from sRGB
once (float32, alpha / 255), as GL does for SRGB8_ALPHA8 textures. No mipmaps.
"""

from __future__ import annotations

import numpy as np

from .material import Texture

__all__ = ["sample"]


def _axis(u, n: int, mode: str, linear: bool):
    """Texel indices along one axis of size n for coordinates u (float array): (i0, i1,
    f), the weight f on i1 (nearest: i1 = i0, f = 0)."""
    x = u * n
    # bounded before the float -> int conversion: repeat and mirror keep exact float
    # integers (|x| <= 2**40), clamp needs no more than one texel beyond each edge
    x = np.clip(x, -1.0, n + 1.0) if mode == "clamp" else np.clip(x, -2.0**40, 2.0**40)
    if linear:
        x = x - 0.5
    x0 = np.floor(x)
    f = x - x0 if linear else np.zeros_like(x)
    if mode == "clamp":
        i0, i1 = np.clip(x0, 0, n - 1), np.clip(x0 + 1, 0, n - 1)
    else:
        p = n if mode == "repeat" else 2 * n  # the period in texels
        m = x0 - p * np.floor(x0 / p)
        m = np.where(m < 0, m + p, np.where(m >= p, m - p, m))  # a rounded quotient
        m1 = np.where(m + 1 >= p, 0, m + 1)
        if mode == "mirror":
            m, m1 = np.where(m < n, m, p - 1 - m), np.where(m1 < n, m1, p - 1 - m1)
        i0, i1 = m, m1
    if not linear:
        i1 = i0
    return i0.astype(np.int64), i1.astype(np.int64), f


def sample(texture: Texture, uv, linear: bool = True):
    """Sample ``texture`` at ``uv`` ((M, 2) float, (0, 0) = top-left of the image).

    Returns (M, 4) float64 RGBA: RGB linear when ``linear`` (filtered from
    ``Texture.linear``), else the sRGB-encoded values (/ 255, filtered as they are);
    alpha in [0, 1]. Non-finite UVs read as (0, 0).
    """
    uv = np.asarray(uv, np.float64)
    uv = np.where(np.isfinite(uv), uv, 0.0)
    texels = texture.linear if linear else texture.image / 255.0
    w, h = texture.size
    s = texture.sampler
    linear_filter = s.filter == "linear"
    i0, i1, fx = _axis(uv[:, 0], w, s.wrap_s, linear_filter)
    j0, j1, fy = _axis(uv[:, 1], h, s.wrap_t, linear_filter)
    fx, fy = fx[:, None], fy[:, None]
    t = lambda j, i: texels[j, i].astype(np.float64)
    top = t(j0, i0) * (1 - fx) + t(j0, i1) * fx
    bottom = t(j1, i0) * (1 - fx) + t(j1, i1) * fx
    return top * (1 - fy) + bottom * fy
