"""Software point rasterizer: projected points -> RGBA image and depth buffer, no GL.

Each visible point covers a square splat of ``point_size`` x ``point_size`` pixels: the
pixels whose centres lie in the square of that side centred on the point (as GL_POINTS
does), clipped at the image border. The nearest point wins each pixel. Ties (equal
depth) go to the lowest point index, so results are deterministic and identical across
implementations: every covered pixel takes the minimum of the 64-bit key
``(float32 depth bits << 32) | point index``; depths are in [0, 1], and non-negative
IEEE-754 floats order like their bit patterns as unsigned integers.

The CUDA implementation (``shaders/raster.cu``) uses the same key with one 64-bit
``atomicMin`` per covered pixel; this NumPy version uses ``np.minimum.at``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["Frame", "rasterize_points", "EMPTY_KEY"]

EMPTY_KEY = np.uint64(0xFFFFFFFFFFFFFFFF)
MAX_POINT_SIZE = 255  # the point size range GL (llvmpipe) reports here; splats are capped


class Frame(NamedTuple):
    """A rendered frame on the host.

    color: (H, W, 4) uint8 RGBA, row 0 is the top row.
    depth: (H, W) float32 window depth in [0, 1]; 1.0 where nothing was drawn.
    """

    color: np.ndarray
    depth: np.ndarray


def _to_host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


def splat_origin(coord, size):
    """First pixel index covered by a splat of ``size`` pixels centred at ``coord``.

    Pixel i (centre i + 0.5) is covered when sx - size/2 <= i + 0.5 < sx + size/2.
    """
    return np.floor(coord - 0.5 * size + 0.5).astype(np.int64)


def _sizes(point_size, n):
    ps = point_size if np.ndim(point_size) else np.full(n, point_size)
    ps = np.asarray(_to_host(ps), np.float64)
    if ps.shape != (n,):
        raise ValueError(f"point_size must be a scalar or have shape ({n},), got {ps.shape}")
    if not np.all(np.isfinite(ps)) or np.any(ps <= 0):
        raise ValueError("point_size must be positive and finite")
    return np.clip(np.rint(ps), 1, MAX_POINT_SIZE).astype(np.int64)


def resolve_keys(keys: np.ndarray, colors: np.ndarray, background) -> Frame:
    """(H, W) uint64 key buffer -> Frame: colour of the winning point, its depth."""
    covered = keys != EMPTY_KEY
    bg = np.rint(np.asarray(background, np.float64) * 255).astype(np.uint8)
    bg = np.append(bg, 255)[:4] if bg.size == 3 else bg
    color = np.empty(keys.shape + (4,), np.uint8)
    color[...] = bg
    idx = (keys[covered] & np.uint64(0xFFFFFFFF)).astype(np.int64)
    color[covered] = colors[idx]
    depth = np.ones(keys.shape, np.float32)
    depth[covered] = (keys[covered] >> np.uint64(32)).astype(np.uint32).view(np.float32)
    return Frame(color, depth)


def rasterize_points(screen_xy, depth, visible, colors, size, point_size=1.0,
                     background=(0.0, 0.0, 0.0, 1.0)) -> Frame:
    """Z-buffered square splats on the CPU (NumPy).

    Args:
        screen_xy: (N, 2) float32 pixel coordinates, origin top-left, y down.
        depth: (N,) float32 window depth in [0, 1] (smaller is nearer).
        visible: (N,) bool; invisible points are skipped.
        colors: (N, 4) uint8 RGBA.
        size: (width, height) of the image in pixels.
        point_size: splat side in pixels, scalar or (N,), rounded to an integer in [1, 255].
        background: RGB or RGBA floats in [0, 1] for uncovered pixels.

    Returns:
        Frame(color (H, W, 4) uint8, depth (H, W) float32). Inputs on the device are copied
        to the host (use the CUDA rasterizer to stay on the device).

    Raises:
        ValueError: mismatched shapes, more than 2**32 points, bad sizes.
    """
    w, h = (int(v) for v in size)
    if w <= 0 or h <= 0:
        raise ValueError(f"image size must be positive, got {w}x{h}")
    xy = np.asarray(_to_host(screen_xy), np.float32)
    z = np.asarray(_to_host(depth), np.float32)
    vis = np.asarray(_to_host(visible), bool)
    col = np.asarray(_to_host(colors), np.uint8)
    n = xy.shape[0]
    if xy.shape != (n, 2) or z.shape != (n,) or vis.shape != (n,) or col.shape != (n, 4):
        raise ValueError(
            f"shape mismatch: screen_xy {xy.shape}, depth {z.shape}, visible {vis.shape}, "
            f"colors {col.shape}; expected (N, 2), (N,), (N,), (N, 4)")
    if n >= 2**32:
        raise ValueError("at most 2**32 - 1 points per frame (the key holds a 32-bit index)")
    sizes = _sizes(point_size, n)
    keys = np.full(h * w, EMPTY_KEY, np.uint64)
    idx = np.flatnonzero(vis)
    if idx.size:
        dbits = z[idx].view(np.uint32).astype(np.uint64) << np.uint64(32)
        pkeys = dbits | idx.astype(np.uint64)
        s_all = sizes[idx]
        for s in np.unique(s_all):
            sel = s_all == s
            x0 = splat_origin(xy[idx[sel], 0].astype(np.float64), s)
            y0 = splat_origin(xy[idx[sel], 1].astype(np.float64), s)
            k = pkeys[sel]
            if s == 1:
                xs, ys, ks = x0, y0, k
            else:
                off = np.arange(s)
                shape = (x0.size, s, s)  # point, row offset, column offset
                xs = np.broadcast_to(x0[:, None, None] + off[None, None, :], shape).ravel()
                ys = np.broadcast_to(y0[:, None, None] + off[None, :, None], shape).ravel()
                ks = np.repeat(k, s * s)
            inside = (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
            np.minimum.at(keys, ys[inside] * w + xs[inside], ks[inside])
    return resolve_keys(keys.reshape(h, w), col, background)
