"""Line rasterization (wireframes, axes, paths) into the shared key buffer.

Each segment of the (L, 2) index buffer is clipped in clip space against the same planes
as triangles (engine.render.triangles: near, far, w >= W_EPSILON, guard band) by the
parametric (Liang-Barsky) method, divided, and stepped one pixel per column (x-major) or
row (y-major): at each pixel centre along the major axis the minor coordinate is
interpolated and floored, so a line of length n pixels along its major axis lights n
pixels, with no gaps and no doubled pixels.

The colour along a line follows OpenGL 4.6 core profile, section 14.5.1: for a fragment
centre ``p_r`` of a segment from ``p_a`` to ``p_b`` (window coordinates of the clipped
ends), ``t = ((p_r - p_a) . (p_b - p_a)) / |p_b - p_a|^2`` (clamped to [0, 1]) and, with
the clip w of the ends, ``f = ((1 - t) f_a / w_a + t f_b / w_b) / ((1 - t) / w_a + t /
w_b)`` (perspective-correct). Lines are drawn unlit, and like the unlit surfaces
(engine.render.shading) they interpolate in linear light: the 8-bit colours of their two
ends (``line_colors``) are decoded from sRGB, interpolated and encoded again, as the
surfaces' vertex colours are (and as GL does with decoded vertex colours). So a
red-to-blue line starting at a pixel centre is (255, 0, 0) at its first pixel and mostly
blue at its last, and its middle is (188, 0, 188), not the encoded mean (128, 0, 128).

Depth is the window depth interpolated linearly along the major axis, at the point of
the segment under the fragment's major-axis pixel centre, minus ``LINE_DEPTH_BIAS`` so
that a wireframe drawn over its own surface ("solid+wireframe") wins the depth test (GL
would use glPolygonOffset). That is section 14.5.1's ``z = (1 - t) z_a + t z_b`` with
``p_r`` moved along the minor axis onto the segment (at most half a pixel), and it is
what Mesa's llvmpipe computes (measured: within 2e-7 of it, against 1e-4 for the
projected ``t``), so lines over faces win and lose the same pixels as in GL.

Hidden-line removal (``Node.hidden_line_removal``) draws the faces of a wireframe mesh
first as depth-only *occluders* (their pixels resolve to the background), pushed back by
``occluder_clip``'s slope-scaled offset, the software twin of ``glPolygonOffset(factor,
units)`` (OpenGL 4.6 core profile, section 14.6.5): ``offset = factor * m + units``,
``m = max(|dz/dx|, |dz/dy|)`` the face's window-depth slope per pixel. An edge pixel's
centre lies at most half a pixel across the edge from the line, where a face sharing the
edge can be nearer by at most ``0.5 m``; with factor 1 no visible edge is hidden by its
own faces, while faces in front of an edge (a full pixel and more away) still hide it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..scene.colorspace import linear_to_srgb, srgb_to_linear, to_unorm8
from .materials import FRAME_ALPHA
from .triangles import _PLANES

__all__ = ["LINE_DEPTH_BIAS", "MIN_LINE_CONTRAST", "OCCLUDER_OFFSET", "LineFragments",
           "fragment_colors", "line_colors", "occluder_clip", "raster_lines"]

LINE_DEPTH_BIAS = 2e-5
# (factor, units) of the occluders' offset, in window depth per pixel of slope and in
# window depth; offsets are capped at OCCLUDER_MAX_OFFSET for faces seen edge-on.
OCCLUDER_OFFSET = (1.0, 1e-6)
OCCLUDER_MAX_OFFSET = 1e-2
# WCAG 2.1 success criterion 1.4.11 (non-text contrast): 3:1 against adjacent colours.
MIN_LINE_CONTRAST = 3.0


def clip_segments(a, b):
    """Liang-Barsky against _PLANES: (L, 4) endpoints -> (t0, t1) parameters (L,) of the
    visible part of a + t (b - a); empty where t0 > t1."""
    da = a @ _PLANES[:, :4].T + _PLANES[:, 4]
    db = b @ _PLANES[:, :4].T + _PLANES[:, 4]
    t0 = np.zeros(len(a))
    t1 = np.ones(len(a))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = da / (da - db)
    entering = (da < 0) & (db >= 0)
    leaving = (da >= 0) & (db < 0)
    outside = (da < 0) & (db < 0)
    t0 = np.max(np.where(entering, t, 0.0), axis=1, initial=0.0)
    t1 = np.min(np.where(leaving, t, 1.0), axis=1, initial=1.0)
    t1 = np.where(np.any(outside, axis=1), -1.0, t1)
    return t0, t1


class LineFragments(NamedTuple):
    """The line fragments that won their pixel's depth test (``raster_lines``).

    Attributes:
        pixel: (F,) int64 pixel index ``y * width + x`` (each pixel at most once).
        segment: (F,) int64 row of the segment in the (L, 2) index buffer.
        s: (F,) float64 the fragment's place on the whole segment, 0 at its first vertex
            and 1 at its second: the section 14.5.1 weight of the clipped ends, mapped
            back through the clip parameters (clip space is linear in the attributes).
    """

    pixel: np.ndarray
    segment: np.ndarray
    s: np.ndarray


def raster_lines(keys, clip, lines, size, id_base: int) -> LineFragments:
    """Write the pixels of every segment into ``keys`` ((H * W,) uint64, in place).

    Args:
        clip: (N, 4) float64 clip-space vertices; lines: (L, 2) int64 vertex indices.
        size: (width, height); id_base: key id of segment 0 (segment i is id_base + i).

    Returns the LineFragments that hold their pixel after this raster (lines are drawn
    last, so these are the frame's line pixels); ``fragment_colors`` colours them.
    """
    w, h = size
    lines = np.asarray(lines, np.int64)
    a, b = clip[lines[:, 0]], clip[lines[:, 1]]
    ok = np.all(np.isfinite(a), axis=1) & np.all(np.isfinite(b), axis=1)
    t0, t1 = clip_segments(np.where(ok[:, None], a, 0), np.where(ok[:, None], b, 0))
    ok &= t0 <= t1
    pa = a + t0[:, None] * (b - a)
    pb = a + t1[:, None] * (b - a)
    sel = np.flatnonzero(ok)
    pa, pb, t0, t1 = pa[sel], pb[sel], t0[sel], t1[sel]
    xa = (pa[:, 0] / pa[:, 3] + 1.0) * (0.5 * w)
    ya = (1.0 - pa[:, 1] / pa[:, 3]) * (0.5 * h)
    xb = (pb[:, 0] / pb[:, 3] + 1.0) * (0.5 * w)
    yb = (1.0 - pb[:, 1] / pb[:, 3]) * (0.5 * h)
    za = pa[:, 2] / pa[:, 3] * 0.5 + 0.5
    zb = pb[:, 2] / pb[:, 3] * 0.5 + 0.5
    x_major = np.abs(xb - xa) >= np.abs(yb - ya)
    # along the major axis u (x or y), pixel centres c + 0.5 in [min(u), max(u))
    ua, ub = np.where(x_major, xa, ya), np.where(x_major, xb, yb)
    va, vb = np.where(x_major, ya, xa), np.where(x_major, yb, xb)
    lo, hi = np.minimum(ua, ub), np.maximum(ua, ub)
    limit = np.where(x_major, w, h)
    first = np.maximum(np.ceil(lo - 0.5), 0).astype(np.int64)
    last = np.minimum(np.ceil(hi - 0.5) - 1, limit - 1).astype(np.int64)
    count = np.maximum(last - first + 1, 0)
    seg = np.repeat(np.arange(sel.size), count)
    u = np.repeat(first, count) + (np.arange(seg.size) - np.repeat(np.cumsum(count) - count, count))
    du = (ub - ua)[seg]
    f = np.where(du != 0, (u + 0.5 - ua[seg]) / np.where(du != 0, du, 1.0), 0.0)
    v = np.floor(va[seg] + f * (vb - va)[seg]).astype(np.int64)
    px = np.where(x_major[seg], u, v)
    py = np.where(x_major[seg], v, u)
    inside = (px >= 0) & (px < w) & (py >= 0) & (py < h)
    depth = np.clip(za[seg] + f * (zb - za)[seg] - LINE_DEPTH_BIAS, 0.0, 1.0).astype(np.float32)
    k = (depth.view(np.uint32).astype(np.uint64) << np.uint64(32)) | (
        sel[seg].astype(np.uint64) + np.uint64(id_base))
    pix = (py * w + px)[inside]
    k = k[inside]
    np.minimum.at(keys, pix, k)
    # the winners only (one fragment per pixel: keys hold distinct ids per segment)
    won = np.flatnonzero(inside)[keys[pix] == k]
    seg, px, py = seg[won], px[won], py[won]
    # the colour's section 14.5.1 t: the fragment centre projected on the segment
    dx, dy = (xb - xa)[seg], (yb - ya)[seg]
    d2 = dx * dx + dy * dy
    t = np.where(d2 > 0, ((px + 0.5 - xa[seg]) * dx + (py + 0.5 - ya[seg]) * dy)
                 / np.where(d2 > 0, d2, 1.0), 0.0).clip(0.0, 1.0)
    # perspective-correct weight of the clipped far end, then the place on the segment
    qa, qb = (1.0 - t) / pa[seg, 3], t / pb[seg, 3]
    tb = qb / (qa + qb)
    s = t0[seg] + tb * (t1 - t0)[seg]
    return LineFragments(py * w + px, sel[seg], s)


def fragment_colors(ends, fragments: LineFragments) -> np.ndarray:
    """(F, 4) uint8 colour of each fragment: its segment's end colours ``ends`` (L, 2, 4)
    uint8 (``line_colors``) interpolated at ``fragments.s`` (section 14.5.1) in linear
    light, encoded to sRGB and rounded; alpha is interpolated as it is."""
    c = ends[fragments.segment] / 255.0
    c[..., :3] = srgb_to_linear(c[..., :3])
    s = fragments.s[:, None]
    out = c[:, 0] + s * (c[:, 1] - c[:, 0])
    out[:, :3] = linear_to_srgb(out[:, :3])
    return to_unorm8(out)


def relative_luminance(rgb) -> np.ndarray:
    """(..., 3) sRGB-encoded values in [0, 1] -> (...,) relative luminance in [0, 1]
    (WCAG 2.1: 0.2126 R + 0.7152 G + 0.0722 B of the linearised channels)."""
    lin = srgb_to_linear(rgb)
    return lin @ np.array([0.2126, 0.7152, 0.0722])


def contrast_ratio(l1, l2) -> np.ndarray:
    """WCAG 2.1 contrast ratio (lighter + 0.05) / (darker + 0.05) of two luminances, in
    [1, 21]."""
    hi, lo = np.maximum(l1, l2), np.minimum(l1, l2)
    return (hi + 0.05) / (lo + 0.05)


def line_colors(colors, prims, background) -> np.ndarray:
    """(L, 2, 4) uint8 colours of the two ends of each line of ``prims`` (an
    ``engine.render.primitives.Primitives``), drawn unlit and interpolated between its
    ends (see the module docstring):

    - a line whose node has a ``line_color``: that colour at both ends;
    - otherwise each end's vertex colour (``colors`` (N, 4) uint8, the batch's) times,
      for a mesh edge, its material colour (the mesh's base colour); a wireframe edge
      whose mean colour has a contrast ratio below ``MIN_LINE_CONTRAST`` with
      ``background`` (RGB(A) floats in [0, 1]) is drawn black or white instead,
      whichever contrasts more (so a white mesh's wireframe on a white background is
      black);
    - an edge drawn over its own faces ("solid+wireframe") would have the faces' base
      colour, so it is drawn black or white, whichever contrasts more with that colour.

    Alpha is ``FRAME_ALPHA``: lines are drawn opaque, like surfaces
    (engine.render.materials).
    """
    c = colors[prims.lines].astype(np.uint16)
    tint = prims.line_tint[:, None]
    rgba = np.rint(c * tint).clip(0, 255).astype(np.uint8)
    edge = prims.line_edge & ~prims.line_set
    if edge.any():
        mean = np.rint((c[:, 0] + c[:, 1] + 1) // 2 * prims.line_tint).clip(0, 255)
        lum = relative_luminance(mean[:, :3] / 255.0)
        on_face = edge & prims.line_on_face
        # what the line is seen against: the background, or its own faces
        against = np.where(on_face, lum,
                           relative_luminance(np.asarray(background, np.float64)[:3]))
        low = edge & (on_face | (contrast_ratio(lum, against) < MIN_LINE_CONTRAST))
        # black (luminance 0) or white (1), whichever contrasts more
        white = contrast_ratio(1.0, against) > contrast_ratio(0.0, against)
        rgba[low, :, :3] = np.where(white[low], 255, 0)[:, None, None]
    rgba[prims.line_set] = prims.line_rgba[prims.line_set][:, None]
    rgba[..., 3] = FRAME_ALPHA
    return rgba


def occluder_clip(clip, occluders, size) -> np.ndarray:
    """(3 O, 4) float64 clip-space corners of the occluder faces ((O, 3) vertex indices
    into ``clip`` (N, 4)), face i at rows 3i..3i+2, with window depth pushed back by
    ``factor * m + units`` (``OCCLUDER_OFFSET``; see the module docstring; capped at
    ``OCCLUDER_MAX_OFFSET``). ``size``: (width, height) pixels. A face with a corner at
    w <= 0 (crossing the eye plane) gets ``units`` only. The offset is applied as
    ``z += 2 offset w``, which moves the window depth ``z / w / 2 + 1 / 2`` by ``offset``
    for every point of the face (clip space is linear, so it stays a plane)."""
    w, h = size
    v = np.asarray(clip, np.float64)[np.asarray(occluders, np.int64)]  # (O, 3, 4)
    factor, units = OCCLUDER_OFFSET
    cw = v[..., 3]
    ok = np.all(cw > 0, axis=1)
    safe = np.where(cw > 0, cw, 1.0)
    win = np.stack([(v[..., 0] / safe + 1) * 0.5 * w, (1 - v[..., 1] / safe) * 0.5 * h,
                    v[..., 2] / safe * 0.5 + 0.5], axis=-1)
    n = np.cross(win[:, 1] - win[:, 0], win[:, 2] - win[:, 0])
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = np.maximum(np.abs(n[:, 0]), np.abs(n[:, 1])) / np.abs(n[:, 2])
    slope = np.where(ok & ~np.isnan(slope), slope, 0.0)  # edge-on (inf): the cap
    offset = np.minimum(factor * slope + units, OCCLUDER_MAX_OFFSET)
    out = v.copy()
    out[..., 2] += 2.0 * offset[:, None] * cw
    return out.reshape(-1, 4)
