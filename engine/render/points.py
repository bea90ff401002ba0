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

import math

import numpy as np

from ..arrays import to_host
from .frame import EMPTY_KEY, Frame, background_rgba, new_keys

__all__ = ["MAX_POINT_SIZE", "check_points", "rasterize_points", "resolve_keys", "splat_keys",
           "splat_origin", "splat_sizes"]

MAX_POINT_SIZE = 255  # the point size range GL (llvmpipe) reports here; splats are capped
SPLAT_CHUNK_PIXELS = 1 << 22  # pixel entries expanded at once (~100 MB of temporaries)


def splat_origin(coord, size):
    """First pixel index covered by a splat of ``size`` pixels centred at ``coord``.

    Pixel i (centre i + 0.5) is covered when sx - size/2 < i + 0.5 <= sx + size/2.
    """
    return np.floor(coord - 0.5 * size + 0.5).astype(np.int64)


def splat_sizes(point_size, n: int, xp=np):
    """Splat sides in pixels: ``point_size`` rounded half-to-even to an integer in [1, 255].

    Args:
        point_size: a scalar, or an (n,) NumPy/CuPy array of per-point sizes in pixels.
        n: the number of points.
        xp: the array module (numpy or cupy) the result lives in.

    Returns:
        uint8 array of shape (1,) for a scalar (one size for every point) or (n,).

    Raises:
        ValueError: a wrong shape, or a size that is not positive and finite.
    """
    if np.ndim(point_size) == 0:  # checked in Python: a dozen NumPy calls cost 20 us a frame
        v = float(point_size)
        if not (math.isfinite(v) and v > 0):
            raise ValueError("point_size must be positive and finite")
        # round() is half-to-even, as np.rint
        return xp.asarray(np.array([min(max(round(v), 1), MAX_POINT_SIZE)], np.uint8))
    ps = xp.asarray(point_size).astype(np.float64)
    if ps.shape != (n,):
        raise ValueError(f"point_size must be a scalar or have shape ({n},), got {ps.shape}")
    if not bool(xp.all(xp.isfinite(ps))) or bool(xp.any(ps <= 0)):
        raise ValueError("point_size must be positive and finite")
    return xp.clip(xp.rint(ps), 1, MAX_POINT_SIZE).astype(np.uint8)


def resolve_keys(keys: np.ndarray, colors: np.ndarray, background) -> Frame:
    """(H, W) uint64 key buffer -> Frame: colour of the winning point, its depth.

    One gather through a palette of the points' RGBA words with the background appended
    as entry N: an empty key's low word (0xFFFFFFFF) is clamped to N.
    """
    n = colors.shape[0]
    palette = np.empty(n + 1, np.uint32)
    palette[:n] = np.ascontiguousarray(colors).view(np.uint32).reshape(-1)
    palette[n] = background_rgba(background).view(np.uint32)[0]
    low = np.minimum(keys & np.uint64(0xFFFFFFFF), np.uint64(n)).astype(np.intp)
    color = palette[low].view(np.uint8).reshape(keys.shape + (4,))
    depth = (keys >> np.uint64(32)).astype(np.uint32).view(np.float32)
    depth[keys == EMPTY_KEY] = 1.0
    return Frame(color, depth)


def check_points(screen_xy, depth, visible, colors, size, xp=np):
    """The rasterizer inputs as C-contiguous arrays of the array module ``xp`` with checked
    shapes and dtypes: (xy (N, 2) float32, depth (N,) float32, visible (N,) bool,
    colors (N, 4) uint8, (width, height)). With ``xp=np`` device arrays are copied to the
    host; with CuPy, host arrays are uploaded. Raises ValueError naming what is wrong."""
    if size is None or isinstance(size, (str, bytes)) or np.ndim(size) != 1 or len(size) != 2:
        raise ValueError(f"size must be (width, height) in pixels, got {size!r}")
    for name, a in (("screen_xy", screen_xy), ("depth", depth), ("visible", visible),
                    ("colors", colors)):
        if a is None:
            raise ValueError(f"{name} must be an array, got None")
    w, h = (int(v) for v in size)
    if w <= 0 or h <= 0:
        raise ValueError(f"image size must be positive, got {w}x{h}")

    def conv(a, dtype):
        a = to_host(a) if xp is np else xp.asarray(a)
        return xp.ascontiguousarray(a, dtype=dtype)

    xy, z = conv(screen_xy, np.float32), conv(depth, np.float32)
    vis, col = conv(visible, np.bool_), conv(colors, np.uint8)
    n = xy.shape[0] if xy.ndim else -1
    if xy.shape != (n, 2) or z.shape != (n,) or vis.shape != (n,) or col.shape != (n, 4):
        raise ValueError(
            f"shape mismatch: screen_xy {xy.shape}, depth {z.shape}, visible {vis.shape}, "
            f"colors {col.shape}; expected (N, 2), (N,), (N,), (N, 4)")
    if n >= 2**32:
        raise ValueError("at most 2**32 - 1 points per frame (the key holds a 32-bit index)")
    return xy, z, vis, col, (w, h)


def _splat_min(keys, x0, y0, k, s, w, h):
    """keys[pixel] = min(keys[pixel], k) over the s x s splats at (x0, y0), clipped."""
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
    xy, z, vis, col, (w, h) = check_points(screen_xy, depth, visible, colors, size)
    keys = new_keys((w, h))
    splat_keys(keys, xy, z, vis, point_size, (w, h))
    return resolve_keys(keys.reshape(h, w), col, background)


def splat_keys(keys, xy, z, vis, point_size, size):
    """Write the splats of the visible points into ``keys`` ((H * W,) uint64, in place).

    Arguments as checked by ``check_points``; point i's key is
    ``(float32 depth bits << 32) | i``."""
    w, h = size
    n = xy.shape[0]
    sizes = np.broadcast_to(splat_sizes(to_host(point_size), n).astype(np.int64), (n,))
    idx = np.flatnonzero(vis)
    if idx.size:
        dbits = z[idx].view(np.uint32).astype(np.uint64) << np.uint64(32)
        pkeys = dbits | idx.astype(np.uint64)
        s_all = sizes[idx]
        cx = xy[idx, 0].astype(np.float64)
        cy = xy[idx, 1].astype(np.float64)
        for s in np.unique(s_all):
            # A centre at or beyond one splat side outside the image covers no pixel; dropping
            # those first (NaN fails every comparison) keeps the cast to int64 defined.
            sel = np.flatnonzero((s_all == s) & (cx > -s) & (cx < w + s) & (cy > -s) & (cy < h + s))
            # Each point expands to s*s pixel entries: chunk so memory stays bounded.
            step = max(1, SPLAT_CHUNK_PIXELS // int(s * s))
            for c in range(0, sel.size, step):
                part = sel[c:c + step]
                _splat_min(keys, splat_origin(cx[part], s), splat_origin(cy[part], s),
                           pkeys[part], int(s), w, h)
    return keys
