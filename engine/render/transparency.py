"""Order-independent transparency: glTF alphaMode BLEND drawn with "over" compositing.

A frame whose assembly has BLEND materials (``Material.blend``) is drawn in two parts on
every backend::

    opaque   the usual raster and resolve, without the BLEND triangles: Frame.depth
             and Renderer.visibility (so picking) are the opaque surfaces' alone
    layers   a second raster of the BLEND triangles only, at the pixel centres, into a
             per-pixel k-buffer: the LAYERS nearest fragments in front of the opaque
             depth, kept sorted by their 64-bit key (float32 depth bits << 32 | id, the
             opaque raster's key: ties go to the lower id), and per pixel the number of
             fragments that did not fit (``overflow``)
    shade    each layer's key buffer shaded by the backend's own resolve (the same code
             as opaque pixels: lights, textures, tone map), which writes a BLEND pixel's
             base alpha (texture x factor x vertex colour, rounded to 8 bits) as its alpha
    compose  per pixel, back to front over the opaque colour, in linear light (the
             8-bit sRGB colours decoded, as an SRGB8_ALPHA8 framebuffer blends):
             ``C = a c + (1 - a) C``, ``A = a + (1 - a) A`` on premultiplied colour C and
             alpha A, then C / A encoded to sRGB with alpha A (straight alpha)

Exact for up to LAYERS = 4 overlapping transparent fragments per pixel, whatever the draw
order (the k nearest keys are a set: the raster's order does not change them). Beyond
that, the merge: the ``m`` farther fragments are not shaded; the farthest kept layer
stands for them as well, its alpha ``a`` becoming ``1 - (1 - a) ** (1 + m)`` (as if they
were copies of it), so a stack of one material keeps its exact coverage. Over an empty
pixel of a transparent background (alpha 0) a layer gives the standard straight alpha
``1 - prod(1 - a_i)``; OPAQUE and MASK pixels keep alpha 1.

Rules worth knowing: a transparent fragment is kept where its window depth is less than
Frame.depth (the opaque depth; under MSAA the pixel's nearest sample), and everywhere
where Frame.depth is 1.0 (nothing opaque); transparent fragments never write depth.
Under MSAA the layers are one sample per pixel (the centre) composited over the
multisampled opaque colour. Points and lines are drawn opaque. A BLEND material's
``alpha_cutoff`` is ignored (glTF: the cutoff belongs to MASK). GL
(engine.render.gl.peeling) peels the layers by depth alone (k passes against the
previous layer's depth texture), so coplanar transparent fragments there keep one.

Fog (engine.render.atmosphere) applies to each layer by its own depth before the
compositing, on every backend (GL: its fog pass on each peeled layer).
"""

from __future__ import annotations

import numpy as np

from ..arrays import to_host
from ..scene.colorspace import linear_to_srgb, srgb_to_linear, to_unorm8
from .frame import EMPTY_KEY, Frame
from .triangles import covered_pixels

__all__ = ["LAYERS", "blended_pieces", "composite_layers", "draw_transparent",
           "has_blended", "opaque_bound", "raster_layers"]

LAYERS = 4
_SHIFT = np.uint64(32)
# 8-bit sRGB -> linear light (the decode of a resolved colour byte)
_DECODE = srgb_to_linear(np.arange(256) / 255.0)


def has_blended(prims) -> bool:
    """Whether the assembly draws triangles of a BLEND material."""
    return len(prims.triangles) > 0 and any(m.blend for m in prims.materials)


def blended_pieces(prims, piece_tri) -> np.ndarray | None:
    """(M,) bool: the setup pieces (``piece_tri``, their triangles) of BLEND materials,
    or None when the assembly has none."""
    blend = np.array([m.blend for m in prims.materials], bool)
    if not blend.any():
        return None
    return blend[prims.tri_material[to_host(piece_tri)]]


def opaque_bound(depth) -> np.ndarray:
    """(P,) uint64 per-pixel key bound of the transparent fragments from the opaque
    window depth (``Frame.depth``, (H, W) float32): ``depth bits << 32`` (a fragment's key
    is below it exactly when its depth is less), EMPTY_KEY where depth is 1.0 or more
    (nothing opaque: every fragment is kept)."""
    d = np.ascontiguousarray(depth, np.float32).reshape(-1)
    bound = d.view(np.uint32).astype(np.uint64) << _SHIFT
    bound[d >= 1.0] = EMPTY_KEY
    return bound


def raster_layers(layers, overflow, setup, size, id_base: int, pieces, bound):
    """The k-buffer raster (NumPy reference): every covered pixel of ``pieces`` of the
    TriangleSetup ``setup`` whose key ((float32 depth bits << 32) | (id_base + t), as
    engine.render.triangles.raster_triangles) is below ``bound`` (``opaque_bound``).

    Args:
        layers: (P, L) uint64, filled with EMPTY_KEY by the caller; written in place:
            per pixel the L smallest keys, ascending (nearest first), EMPTY_KEY after
            the pixel's last fragment (a pixel's list in one cache line).
        overflow: (P,) int32 zeros; written in place: the fragments beyond the L kept.
        pieces: (K,) int64 piece indices (the BLEND ones).
    """
    w, _ = size
    n_layers = layers.shape[1]
    pix, key = [], []
    for m, px, py, depth in covered_pixels(setup, size, pieces):
        k = (depth.view(np.uint32).astype(np.uint64) << _SHIFT) | (
            setup.piece_tri[m].astype(np.uint64) + np.uint64(id_base))
        p = py * w + px
        front = k < bound[p]
        pix.append(p[front])
        key.append(k[front])
    if not pix:
        return layers, overflow
    pix, key = np.concatenate(pix), np.concatenate(key)
    order = np.lexsort((key, pix))
    pix, key = pix[order], key[order]
    first = np.ones(pix.size, bool)
    first[1:] = pix[1:] != pix[:-1]
    start = np.flatnonzero(first)
    rank = np.arange(pix.size) - np.repeat(start, np.diff(np.r_[start, pix.size]))
    kept = rank < n_layers
    layers[pix[kept], rank[kept]] = key[kept]
    np.add.at(overflow, pix[~kept], 1)
    return layers, overflow


def composite_layers(color, layer_rgba, present, overflow) -> np.ndarray:
    """Back-to-front "over" of resolved layers on the opaque colour, in linear light.

    Args:
        color: (P, 4) uint8 RGBA of the opaque frame (straight alpha).
        layer_rgba: (L, P, 4) uint8 the layers' resolved RGBA, nearest first (alpha: the
            base alpha, engine.render.shading).
        present: (L, P) bool, where each layer has a fragment (a pixel's layers are the
            first ones).
        overflow: (P,) int fragments beyond the L layers (the module's merge rule: the
            farthest kept layer's alpha ``a`` becomes ``1 - (1 - a) ** (1 + m)``).

    Returns:
        (P, 4) uint8: ``color`` with the layers composited where a pixel has any (the
        other pixels keep their bytes).
    """
    out = np.array(color, np.uint8)
    touched = np.flatnonzero(present[0])
    if not touched.size:
        return out
    base = out[touched]
    alpha = base[:, 3] / 255.0
    rgb = _DECODE[base[:, :3]] * alpha[:, None]  # premultiplied
    count = present[:, touched].sum(axis=0)  # layers per pixel: the last is the farthest
    extra = np.asarray(overflow)[touched]
    for i in range(len(layer_rgba) - 1, -1, -1):
        px = layer_rgba[i, touched]
        a = np.where(present[i, touched], px[:, 3] / 255.0, 0.0)  # no layer: no change
        last = count == i + 1
        a[last] = 1.0 - (1.0 - a[last]) ** (1 + extra[last])
        rgb *= (1.0 - a)[:, None]
        rgb += a[:, None] * _DECODE[px[:, :3]]
        alpha += a * (1.0 - alpha)
    seen = alpha > 0
    # straight alpha; where nothing covers (all alpha 0), the opaque pass's colour stays
    rgb[seen] /= alpha[seen, None]
    rgb[~seen] = _DECODE[base[~seen, :3]]
    out[touched, :3] = to_unorm8(linear_to_srgb(rgb))
    out[touched, 3] = to_unorm8(alpha)
    return out


def draw_transparent(stages, inputs, view, frame: Frame, layers: int = LAYERS) -> Frame:
    """The BLEND triangles of ``inputs`` composited over the opaque host ``frame`` (with
    its depth) on ``stages`` (a software or CUDA Backend whose last ``rasterize`` was the
    frame's pixel-centre raster): the module docstring's steps. Returns a new host Frame
    (the same depth)."""
    w, h = view.size
    device, overflow = stages.raster_layers(inputs, view, opaque_bound(frame.depth), layers)
    keys = np.asarray(to_host(device)).reshape(w * h, layers).T  # (L, P): a layer a row
    present = keys != EMPTY_KEY
    rgba = np.zeros((layers, w * h, 4), np.uint8)
    xp = getattr(stages, "xp", np)
    for i in range(layers):
        if present[i].any():
            # each layer's keys as one contiguous buffer where the backend keeps them
            layer = xp.ascontiguousarray(device.reshape(w * h, layers)[:, i])
            layer = stages.resolve(layer, inputs, view)
            layer = stages.read(layer, depth=True, host=True, copy=True)
            if view.scene.fog is not None or view.scene.sky is not None:
                # fogged by the layer's own depth, by the stage that fogs the opaque
                # frame (engine.render.atmosphere; fog keeps the layer's alpha)
                stages.atmosphere(layer, view)
            rgba[i] = np.asarray(to_host(layer.color)).reshape(-1, 4)
    # the backend's compiled twin where it has one (engine.render.backends.numba_layers)
    composite = getattr(stages, "composite_layers", composite_layers)
    color = composite(np.asarray(to_host(frame.color)).reshape(-1, 4), rgba, present,
                      np.asarray(to_host(overflow)))
    return Frame(color.reshape(h, w, 4), frame.depth)
