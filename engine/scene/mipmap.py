"""Mip chains: the successively halved images a minified texture is read from.

Level k of a W x H texture is ``max(1, W >> k)`` x ``max(1, H >> k)`` texels (OpenGL 4.6
core spec, section 8.14.3, equation 8.7), down to 1 x 1, so there are
``floor(log2(max(W, H))) + 1`` levels. Each level is the box filter of the one above it,
computed in linear light (on ``Texture.linear``: a black/white checker averages to linear
0.5, sRGB 188, not to sRGB 128): texel i of a level of n texels along an axis averages the
source span ``[i r, (i + 1) r)``, r = (source size) / n, weighting each source texel by
its overlap with the span. For even sizes that is the 2 x 2 mean; for odd ones (r up to
3) the spans straddle texels, so no source texel is dropped and every level keeps the
image's mean exactly.
"""

from __future__ import annotations

import numpy as np

__all__ = ["level_sizes", "mip_chain"]


def level_sizes(width: int, height: int) -> list[tuple[int, int]]:
    """(width, height) of each mip level of a ``width`` x ``height`` texture, level 0
    first, down to 1 x 1."""
    out = [(int(width), int(height))]
    while out[-1] != (1, 1):
        w, h = out[-1]
        out.append((max(1, w // 2), max(1, h // 2)))
    return out


def _taps(n: int, m: int):
    """Box-filter taps from n source texels to m: (index (4, m) int64, weight (4, m)
    float64); each output texel reads at most 4 sources (its span is r = n / m <= 3
    texels long, r == 1 when the axis is already one texel)."""
    r = n / m
    start = np.arange(m) * r
    end = start + r
    idx = np.floor(start).astype(np.int64)[None, :] + np.arange(4)[:, None]
    w = np.clip(np.minimum(end, idx + 1) - np.maximum(start, idx), 0.0, None) / r
    return np.minimum(idx, n - 1), w


def mip_chain(level0: np.ndarray) -> list[np.ndarray]:
    """Mip levels of ``level0`` ((H, W, C) float32, linear light): a list of read-only
    (h_k, w_k, C) float32 arrays, ``level0`` itself first (see the module docstring)."""
    levels = [level0]
    h, w = level0.shape[:2]
    for nw, nh in level_sizes(w, h)[1:]:
        src = levels[-1].astype(np.float64)
        sh, sw = src.shape[:2]
        iy, wy = _taps(sh, nh)
        ix, wx = _taps(sw, nw)
        rows = sum(src[iy[k]] * wy[k][:, None, None] for k in range(4))   # (nh, sw, C)
        out = sum(rows[:, ix[k]] * wx[k][None, :, None] for k in range(4))  # (nh, nw, C)
        out = np.ascontiguousarray(out, np.float32)
        out.flags.writeable = False
        levels.append(out)
    return levels
