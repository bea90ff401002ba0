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
once (float32, alpha / 255), as GL does for SRGB8_ALPHA8 textures; a data map (metal,
roughness, occlusion, normals) is filtered from its stored values (``Texture.stored``),
as GL does for a plain RGBA8 texture.

Mipmaps (OpenGL 4.6 core spec, section 8.14): given the screen derivatives of (u, v) at a
pixel, the level of detail is ::

    rho    = max(sqrt((du/dx W)^2 + (dv/dx H)^2), sqrt((du/dy W)^2 + (dv/dy H)^2))
    lambda = log2(rho)                          (eq. 8.6, 8.9: texels per pixel step)

``lambda <= c`` magnifies (the sampler's ``filter`` on level 0), with c = 0.5 for a
linear ``filter`` and a "nearest_mipmap_*" ``min_filter``, else 0; above it the
``min_filter`` reads the chain (engine.scene.mipmap), q = the last level::

    nearest, linear          level 0
    *_mipmap_nearest         level d = 0 if lambda <= 0.5 else min(ceil(lambda + 0.5) - 1, q)
    *_mipmap_linear          levels floor(lambda) and the next, blended by frac(lambda);
                             level q alone where lambda >= q

each level filtered (nearest or bilinear, as above, on its own size) by the first word.
"""

from __future__ import annotations

import numpy as np

from .material import MIN_FILTERS, Texture

__all__ = ["level_of_detail", "sample"]


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


def level_of_detail(dudx, dvdx, dudy, dvdy, width: int, height: int):
    """lambda (float64 array) from the screen derivatives of u and v (per pixel step,
    arrays of one shape) for a ``width`` x ``height`` level 0 (see the module docstring);
    -inf where u and v do not change, nan where a derivative is not finite (both
    read as magnification)."""
    ax = np.hypot(np.asarray(dudx, np.float64) * width, np.asarray(dvdx, np.float64) * height)
    ay = np.hypot(np.asarray(dudy, np.float64) * width, np.asarray(dvdy, np.float64) * height)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log2(np.maximum(ax, ay))


def _read(texels, uv, s, linear_filter: bool):
    """Filter the (h, w, 4) level ``texels`` at ``uv`` (M, 2) under sampler ``s``'s wrap
    modes: (M, 4) float64."""
    h, w = texels.shape[:2]
    i0, i1, fx = _axis(uv[:, 0], w, s.wrap_s, linear_filter)
    j0, j1, fy = _axis(uv[:, 1], h, s.wrap_t, linear_filter)
    fx, fy = fx[:, None], fy[:, None]
    t = lambda j, i: texels[j, i].astype(np.float64)
    top = t(j0, i0) * (1 - fx) + t(j0, i1) * fx
    bottom = t(j1, i0) * (1 - fx) + t(j1, i1) * fx
    return top * (1 - fy) + bottom * fy


def sample(texture: Texture, uv, linear: bool = True, lod=None):
    """Sample ``texture`` at ``uv`` ((M, 2) float, (0, 0) = top-left of the image).

    Returns (M, 4) float64 RGBA: RGB linear when ``linear`` (filtered from
    ``Texture.linear`` and its mip chain ``Texture.mipmaps``), else the stored values
    (/ 255, never decoded: a data map's, filtered as they are; with ``lod`` from
    ``Texture.stored`` and its chain ``Texture.stored_mipmaps``, without it from the
    image, the same values in float64); alpha in [0, 1]. Non-finite UVs read as
    (0, 0). ``lod``: None (magnification everywhere: the sampler's ``filter`` on level
    0) or (M,) lambda (``level_of_detail``), which picks the filter and levels per
    sample.
    """
    uv = np.asarray(uv, np.float64)
    uv = np.where(np.isfinite(uv), uv, 0.0)
    s = texture.sampler
    if lod is None:
        texels = texture.linear if linear else texture.image / 255.0
        return _read(texels, uv, s, s.filter == "linear")
    level0 = texture.linear if linear else texture.stored
    lam = np.asarray(lod, np.float64)
    code = MIN_FILTERS.index(s.min_filter)
    c = 0.5 if s.filter == "linear" and code in (2, 4) else 0.0
    out = np.empty((len(uv), 4))
    mag = ~(lam > c)  # nan reads as magnification
    if mag.any():
        out[mag] = _read(level0, uv[mag], s, s.filter == "linear")
    mini = np.flatnonzero(~mag)
    if not mini.size:
        return out
    within = code % 2 == 1
    if code < 2:
        out[mini] = _read(level0, uv[mini], s, within)
        return out
    levels = texture.mipmaps if linear else texture.stored_mipmaps
    q = len(levels) - 1
    lm = lam[mini]
    if code < 4:
        d = np.where(lm <= 0.5, 0.0, np.minimum(np.ceil(lm + 0.5) - 1.0, q)).astype(np.int64)
        f = np.zeros(len(mini))
    else:
        top = np.minimum(lm, q)
        d = np.floor(top).astype(np.int64)
        f = top - d
    res = np.zeros((len(mini), 4))
    for k in np.unique(d):
        sel = np.flatnonzero(d == k)
        a = _read(levels[k], uv[mini[sel]], s, within)
        blend = sel[f[sel] > 0]  # only where the next level has weight (never past q)
        if blend.size:
            b = _read(levels[k + 1], uv[mini[blend]], s, within)
            fb = f[blend][:, None]
            a[np.searchsorted(sel, blend)] = (a[np.searchsorted(sel, blend)] * (1 - fb)
                                              + b * fb)
        res[sel] = a
    out[mini] = res
    return out
