"""The atmosphere stage (engine.render.atmosphere: the scene's fog and sky) compiled by
Numba for host frames: one pass over the pixels, rows across the threads.

The formulas are the NumPy stage's (engine.render.atmosphere, engine.scene.atmosphere;
``Scene.sky = "environment"`` samples the environment's radiance along each ray, then
exposure and tone map as the resolve's ``_display``),
evaluated per pixel in float64 with no whole-frame temporaries (the NumPy stage makes
about a dozen (H, W, 3) arrays: 154 ms for a 1280x720 frame of mostly sky, against 18 ms
for this pass on one thread, same run). The sky's pixels read their encoded colour from
a table by elevation (``_SKY_STEPS``); drawn pixels are fogged exactly. sRGB decode is the exact 256-entry table, the encode the resolve's
4097-entry table (engine.render.backends.numba_shading: within 1 of the exact curve in
about 2 of 100,000 values), so frames match the NumPy stage's within 1.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ...scene.colorspace import linear_to_srgb, srgb_to_linear
from ..atmosphere import atmosphere_parameters, sky_colors
from ..tonemap import TONE_MAPS
from .kernel_cache import cached
from .numba_ibl import _equirect
from .numba_shading import _ENCODE, _display, _encode

__all__ = ["apply_atmosphere_numba"]

_DECODE = srgb_to_linear(np.arange(256) / 255.0)
_NO_FOG = -1
# the sky's table: its linear colour changes by at most |zenith - horizon| <= 1 over 90
# degrees, so reading the nearest of 8193 elevations (a step of 180/8192 degrees) moves
# it by at most 1/8192: 0.4 of an 8-bit step at the encode's steepest slope
# (12.92 x 255 / 8192)
_SKY_STEPS = 8192
_SKY_ELEVATIONS = np.linspace(-90.0, 90.0, _SKY_STEPS + 1)


@numba.njit(inline="always")
def _fog_factor(mode, a, b, d):
    """f(d) of engine.scene.atmosphere.Fog: mode 0 linear (start a, end b), 1 exp and 2
    exp2 (density a)."""
    if mode == 0:
        f = (b - d) / (b - a)
    elif mode == 1:
        f = math.exp(-a * d)
    else:
        f = math.exp(-(a * d) * (a * d))
    return min(max(f, 0.0), 1.0)


@numba.njit(inline="always")
def _sky_elevation(inv, rot, ortho, bx, by, bz, bw):
    """The pixel ray's elevation over 90 degrees, in [-1, 1] (engine.scene.atmosphere)."""
    if ortho:
        rx, ry, rz = 0.0, 0.0, -1.0
    else:  # towards the near plane's point through the pixel centre (w's sign kept; the far
        # plane's w, 1 / far, underflows for far / near of about 1e10)
        fw = 1.0 if bw - inv[3, 2] > 0.0 else -1.0
        rx, ry, rz = (bx - inv[0, 2]) * fw, (by - inv[1, 2]) * fw, (bz - inv[2, 2]) * fw
    wx = rot[0, 0] * rx + rot[0, 1] * ry + rot[0, 2] * rz
    wy = rot[1, 0] * rx + rot[1, 1] * ry + rot[1, 2] * rz
    wz = rot[2, 0] * rx + rot[2, 1] * ry + rot[2, 2] * rz
    s = min(max(wy / math.sqrt(wx * wx + wy * wy + wz * wz), -1.0), 1.0)
    return math.asin(s) * (2.0 / math.pi)


@numba.njit(inline="always")
def _sky_ray(inv, rot, ortho, bx, by, bz, bw):
    """The pixel ray's unit world direction (as _sky_elevation)."""
    if ortho:
        rx, ry, rz = 0.0, 0.0, -1.0
    else:
        fw = 1.0 if bw - inv[3, 2] > 0.0 else -1.0
        rx, ry, rz = (bx - inv[0, 2]) * fw, (by - inv[1, 2]) * fw, (bz - inv[2, 2]) * fw
    wx = rot[0, 0] * rx + rot[0, 1] * ry + rot[0, 2] * rz
    wy = rot[1, 0] * rx + rot[1, 1] * ry + rot[1, 2] * rz
    wz = rot[2, 0] * rx + rot[2, 1] * ry + rot[2, 2] * rz
    k = 1.0 / math.sqrt(wx * wx + wy * wy + wz * wz)
    return wx * k, wy * k, wz * k


# compiled on its own, not inlined at its two call sites (the texel reads and the tone
# map twice over slowed the stage's cold compile)
@numba.njit(cache=cached(), boundscheck=False)
def _environment_sky(env, env_h, inv, rot, ortho, bx, by, bz, bw, exposure, tone):
    """Scene.sky = "environment": the radiance along the pixel's ray, displayed
    (engine.render.atmosphere.environment_sky)."""
    dx, dy, dz = _sky_ray(inv, rot, ortho, bx, by, bz, bw)
    r, g, b = _equirect(env, 0, env.shape[0] // env_h, env_h, dx, dy, dz)
    return _display(r, g, b, exposure, tone)


@numba.njit(parallel=True, cache=cached(), boundscheck=False)
def _atmosphere(rgba, depth, inv, rot, ortho, mode, a, b, fog_rgb, fog_to_sky, sky_rgb,
                sky_bytes, decode, encode, env, env_h, exposure, tone):
    h, w = depth.shape
    has_env = env_h > 0
    has_sky = sky_rgb.shape[0] != 0 or has_env
    top = sky_bytes.shape[0] - 1
    for y in numba.prange(h):
        yn = 1.0 - 2.0 * (y + 0.5) / h
        for x in range(w):
            z = depth[y, x]
            empty = z >= 1.0
            if empty and not has_sky:
                continue  # no sky: the background's bytes stay
            if not empty and mode == _NO_FOG:
                continue  # a sky without fog leaves the drawn pixels as they are
            xn = 2.0 * (x + 0.5) / w - 1.0
            # P^-1 (xn, yn, zn, 1), column by column
            bx = xn * inv[0, 0] + yn * inv[0, 1] + inv[0, 3]
            by = xn * inv[1, 0] + yn * inv[1, 1] + inv[1, 3]
            bz = xn * inv[2, 0] + yn * inv[2, 1] + inv[2, 3]
            bw = xn * inv[3, 0] + yn * inv[3, 1] + inv[3, 3]
            if empty and has_env:  # the environment behind the scene
                er, eg, eb = _environment_sky(env, env_h, inv, rot, ortho, bx, by, bz, bw,
                                              exposure, tone)
                rgba[y, x, 0] = _encode(er, encode)
                rgba[y, x, 1] = _encode(eg, encode)
                rgba[y, x, 2] = _encode(eb, encode)
                rgba[y, x, 3] = 255
                continue
            if empty:  # the sky, from its table of encoded colours
                e = _sky_elevation(inv, rot, ortho, bx, by, bz, bw)
                i = np.int64((e + 1.0) * 0.5 * top + 0.5)
                rgba[y, x, 0] = sky_bytes[i, 0]
                rgba[y, x, 1] = sky_bytes[i, 1]
                rgba[y, x, 2] = sky_bytes[i, 2]
                rgba[y, x, 3] = 255
                continue
            zn = 2.0 * z - 1.0
            pw = bw + zn * inv[3, 2]
            vx = (bx + zn * inv[0, 2]) / pw
            vy = (by + zn * inv[1, 2]) / pw
            vz = (bz + zn * inv[2, 2]) / pw
            d = -vz if ortho else math.sqrt(vx * vx + vy * vy + vz * vz)
            f = _fog_factor(mode, a, b, d)
            if fog_to_sky and has_env:
                fr, fg, fb = _environment_sky(env, env_h, inv, rot, ortho, bx, by, bz, bw,
                                              exposure, tone)
            elif fog_to_sky:  # the sky's colour in the pixel's direction, exactly
                e = _sky_elevation(inv, rot, ortho, bx, by, bz, bw)
                row = 1 if e >= 0.0 else 2  # zenith above the horizon, ground below
                t = abs(e)
                fr = sky_rgb[0, 0] + t * (sky_rgb[row, 0] - sky_rgb[0, 0])
                fg = sky_rgb[0, 1] + t * (sky_rgb[row, 1] - sky_rgb[0, 1])
                fb = sky_rgb[0, 2] + t * (sky_rgb[row, 2] - sky_rgb[0, 2])
            else:
                fr, fg, fb = fog_rgb[0], fog_rgb[1], fog_rgb[2]
            rgba[y, x, 0] = _encode(f * decode[rgba[y, x, 0]] + (1.0 - f) * fr, encode)
            rgba[y, x, 1] = _encode(f * decode[rgba[y, x, 1]] + (1.0 - f) * fg, encode)
            rgba[y, x, 2] = _encode(f * decode[rgba[y, x, 2]] + (1.0 - f) * fb, encode)


def apply_atmosphere_numba(color, depth, scene, camera) -> None:
    """engine.render.atmosphere.apply_atmosphere for host NumPy frames, compiled: the
    same arguments, the same result within 1 per channel; ``color`` (H, W, 4) uint8 is
    written in place."""
    par = atmosphere_parameters(scene, camera)
    if par is None:
        return
    env, env_h = np.zeros((1, 3), np.float32), 0
    if par.environment is not None:  # the environment behind the scene
        env, env_h = par.environment.reshape(-1, 3), par.environment.shape[0]
    sky_bytes = np.zeros((1, 3), np.uint8)
    if len(par.sky):  # the sky's encoded colour at _SKY_STEPS + 1 elevations
        sky_bytes = np.rint(linear_to_srgb(sky_colors(scene.sky, _SKY_ELEVATIONS)) * 255.0
                            ).astype(np.uint8)
    _atmosphere(color, np.ascontiguousarray(depth), par.inverse_projection,
                par.camera_rotation, par.orthographic, par.fog_mode, par.fog[0], par.fog[1],
                par.fog_color, par.fog_to_sky, par.sky, sky_bytes, _DECODE, _ENCODE, env, env_h,
                par.exposure, TONE_MAPS.index(par.tone_map))
