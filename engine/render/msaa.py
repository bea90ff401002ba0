"""Multisample anti-aliasing of the visibility buffer: S samples per pixel, each primitive
of a pixel shaded once, weighted by the samples it covers.

A frame with ``msaa=S`` (S in ``SAMPLE_COUNTS``) runs the backend's own stages
(engine.render.backends.stages) as follows::

    inputs = vertex_stage(...)                      once, as at S = 1
    keys   = sample_keys(...)                       (S, P): each sample's keys, the
                                                    exact S = 1 raster with the pixel
                                                    grid moved onto that sample
                                                    position (SAMPLE_POSITIONS)
    first, mixed, layers, counts = mixed_layers(keys)
                                                    per pixel its layer 0; the mixed
                                                    pixels (more than one primitive,
                                                    the background counting as one)
                                                    with their distinct primitives and
                                                    sample counts
    colour = resolve(first)                         the whole frame, as at S = 1
    for k = 1 .. K - 1:                             at the mixed pixels only: one key
        colour_k = resolve(layer k)                 buffer, the background elsewhere
    alpha  = sum_k count_k / S * alpha_k                     straight (not premultiplied)
    colour = sum_k count_k / S * alpha_k * decode(colour_k) / alpha
                                                    in linear light, then encoded

How the keys are made (``sample_keys``): the Numba backend sets the triangles up once
and walks each piece at every sample position (``raster_samples``,
engine.render.backends.numba_triangles.raster_samples_numba: the snapped vertices moved
by the sample's sub-pixel offset, the depth from the moved clip vertices), splats the
points and draws the lines once per sample with their positions moved, and rasterizes a
frame with lines once more at the pixel centres (the line fragments the resolve
colours). Elsewhere (the NumPy reference, CUDA, and on Numba frames with alpha-tested
pieces or hidden-line occluders) ``moved_sample_keys`` runs the backend's whole raster
once per sample position with the clip vertices mapped by ``x' = x - 2 dx / W * w``,
``y' = y + 2 dy / H * w`` (screen y runs down; depth and w unchanged), then once at the
pixel centres for the shading setup. Both give the same keys bit for bit (but where
``raster_samples_numba`` says), so each sample is the exact S = 1 raster at that sample
position: the top-left fill rule covers each sample exactly once across a shared edge,
and points and lines take part like triangles.

Every primitive is shaded at the pixel centre (as GL without centroid sampling) from
the centre's setup; a pixel whose samples all hold one primitive keeps the S = 1 colour
byte for byte. The colours weighted are the 8-bit sRGB values the resolve writes,
decoded to linear light (engine.scene.colorspace), so a mixed pixel is within half a
level of the exact linear-light mix. The extra layers cost the shading of their mixed
pixels (and one pass over a mostly empty key buffer each), not K whole frames of work.

Depth (``Frame.depth``) is each pixel's nearest sample; ``Renderer.visibility`` (and so
picking, engine.render.picking) is sample 0's key buffer: the standard patterns put no
sample at the pixel centre.

Sample positions: Direct3D 11 ``D3D11_STANDARD_MULTISAMPLE_PATTERN`` (the Vulkan
"standard sample locations", VkPhysicalDeviceLimits::standardSampleLocations), offsets
from the pixel centre in 1/16 pixel, x right, y down.
"""

from __future__ import annotations

import numpy as np

from ..arrays import to_host
from ..scene.colorspace import linear_to_srgb, srgb_to_linear, to_unorm8
from .frame import EMPTY_KEY, Frame

__all__ = ["IMAGE_MSAA", "SAMPLE_COUNTS", "SAMPLE_POSITIONS", "check_msaa", "finish_mix",
           "mix_layer", "mixed_layers", "moved_sample_keys", "nearest_depth",
           "render_multisampled", "sample_keys", "sample_layers", "sample_offsets",
           "shifted_inputs"]

SAMPLE_POSITIONS = {
    1: ((0, 0),),
    2: ((4, 4), (-4, -4)),
    4: ((-2, -6), (6, -2), (-6, 2), (2, 6)),
    8: ((1, -3), (-1, 3), (5, 1), (-3, -5), (-5, 5), (-7, -1), (3, 7), (7, -7)),
}
SAMPLE_COUNTS = tuple(SAMPLE_POSITIONS)
# samples per pixel of images and videos by default (frustum render, render-many,
# engine.show, render_video); windows, App and Renderer default to 1
IMAGE_MSAA = 4
_LOW = np.uint64(0xFFFFFFFF)
_SHIFT = np.uint64(32)
# 8-bit sRGB -> linear light, the decode of a resolved colour byte
_DECODE = srgb_to_linear(np.arange(256) / 255.0)


def check_msaa(msaa, name: str = "msaa") -> int:
    """``msaa`` as an int in SAMPLE_COUNTS; ValueError naming ``name`` otherwise."""
    if isinstance(msaa, bool) or not isinstance(msaa, (int, np.integer)) \
            or int(msaa) not in SAMPLE_POSITIONS:
        raise ValueError(f"{name} must be one of {', '.join(map(str, SAMPLE_COUNTS))} "
                         f"(samples per pixel), got {msaa!r}")
    return int(msaa)


def sample_offsets(samples: int) -> np.ndarray:
    """(S, 2) float64 sample offsets from the pixel centre in pixels (x right, y down)."""
    return np.asarray(SAMPLE_POSITIONS[check_msaa(samples)], np.float64) / 16.0


def shifted_inputs(inputs, dx: float, dy: float, size):
    """``inputs`` (FrameInputs) with the pixel grid moved by (dx, dy) pixels: the clip
    vertices mapped by ``x' = x - 2 dx / W * w``, ``y' = y + 2 dy / H * w`` and the
    points' screen positions by (-dx, -dy), on the arrays' own module (NumPy or CuPy)."""
    w, h = size
    clip = inputs.clip
    if clip is not None:
        clip = clip.copy()
        # a non-finite vertex stays non-finite (inf - inf is NaN): the setup drops it
        with np.errstate(invalid="ignore"):
            clip[:, 0] -= (2.0 * dx / w) * clip[:, 3]
            clip[:, 1] += (2.0 * dy / h) * clip[:, 3]
    p = inputs.projection
    if p is not None:
        xy = p.screen_xy.copy()
        xy[:, 0] -= np.float32(dx)
        xy[:, 1] -= np.float32(dy)
        p = p._replace(screen_xy=xy)
    return inputs._replace(clip=clip, projection=p)


def sample_layers(keys: np.ndarray):
    """(S, P) uint64 per-sample keys -> (layers (K, P) uint64, counts (K, P) int64).

    Layer k holds each pixel's k-th distinct primitive (by id; ``EMPTY_KEY``, the
    background, counts as one) with the depth of its nearest sample, and ``counts`` the
    samples it covers (0 where a pixel has fewer than k + 1 distinct ones). K is the
    largest number of distinct ids in any pixel. A pixel whose samples agree is layer 0
    alone with count S."""
    s, p = keys.shape
    ids = keys & _LOW
    uniform = (ids == ids[0]).all(axis=0)
    layers = [keys.min(axis=0)]
    counts = [np.where(uniform, s, 0)]
    edge = np.flatnonzero(~uniform)
    if edge.size:
        # (id << 32 | depth) sorted per pixel: runs of one id, its nearest sample first
        k = keys[:, edge]
        swapped = np.sort((k << _SHIFT) | (k >> _SHIFT), axis=0)
        sid = swapped >> _SHIFT
        first = np.ones_like(sid, bool)
        first[1:] = sid[1:] != sid[:-1]
        run = np.cumsum(first, axis=0) - 1  # (S, E) layer of each sample
        n_layers = int(run[-1].max()) + 1
        lay = np.full((n_layers, edge.size), EMPTY_KEY, np.uint64)
        cnt = np.zeros((n_layers, edge.size), np.int64)
        cols = np.broadcast_to(np.arange(edge.size), run.shape)
        np.add.at(cnt, (run, cols), 1)
        r, c = np.nonzero(first)
        lay[run[r, c], c] = (swapped[r, c] << _SHIFT) | (swapped[r, c] >> _SHIFT)
        layers[0][edge] = lay[0]
        counts[0][edge] = cnt[0]
        for j in range(1, n_layers):
            layer = np.full(p, EMPTY_KEY, np.uint64)
            count = np.zeros(p, np.int64)
            layer[edge], count[edge] = lay[j], cnt[j]
            layers.append(layer)
            counts.append(count)
    return np.stack(layers), np.stack(counts)


def moved_sample_keys(stages, inputs, view, samples: int) -> np.ndarray:
    """(S, W * H) uint64 host keys: the backend's whole raster (``stages.rasterize``) of
    ``inputs`` once per sample position, the pixel grid moved onto it
    (``shifted_inputs``). The reference's way; it leaves the last sample's triangle
    setup in ``inputs.shader``."""
    w, h = view.size
    out = np.empty((samples, w * h), np.uint64)
    for s, (dx, dy) in enumerate(sample_offsets(samples)):
        keys = stages.rasterize(shifted_inputs(inputs, dx, dy, view.size), view)
        out[s] = to_host(keys)[: w * h]  # a copy: backends reuse their key buffer
    return out


def _one_pass_keys(stages, inputs, view, samples: int):
    """The backend's one-pass per-sample raster (``stages.raster_samples``: one setup,
    the edge functions evaluated at every sample, engine.render.backends.software), or
    None where it has none or the frame needs the moved rasters."""
    one_pass = getattr(stages, "raster_samples", None)
    return None if one_pass is None else one_pass(inputs, view, samples)


def sample_keys(stages, inputs, view, samples: int) -> np.ndarray:
    """(S, W * H) uint64 host keys of the ``samples`` sample positions: the backend's
    one-pass per-sample raster where it has one (``stages.raster_samples``), else
    ``moved_sample_keys``. The array may be the backend's, reused by its next frame."""
    keys = _one_pass_keys(stages, inputs, view, samples)
    return moved_sample_keys(stages, inputs, view, samples) if keys is None else keys


def mixed_layers(keys: np.ndarray):
    """(S, P) uint64 per-sample keys -> (first (P,) uint64, mixed (E,) int64, layers
    (K, E) uint64, counts (K, E) int64): ``sample_layers``' layer 0 of every pixel, the
    E pixels whose samples hold more than one primitive (the mixed pixels), and their
    K layers and sample counts (layer 0 included)."""
    layers, counts = sample_layers(keys)
    mixed = np.flatnonzero(counts[0] != keys.shape[0])
    return layers[0], mixed, layers[:, mixed], counts[:, mixed]


def mix_layer(acc: np.ndarray, color: np.ndarray, mixed, counts, samples: int):
    """Add one layer's colours at the mixed pixels to ``acc`` ((E, 7) float64, zeros
    at first: the linear-light RGB weighted by coverage and alpha, the RGB weighted by
    coverage alone, the coverage-weighted alpha). ``color``: (P, 4) uint8 resolved
    colours; ``counts``: (E,) the layer's samples at each mixed pixel."""
    wgt = counts / samples
    px = color[mixed]
    a = px[:, 3] / 255.0
    lin = _DECODE[px[:, :3]]
    acc[:, :3] += (wgt * a)[:, None] * lin
    acc[:, 3:6] += wgt[:, None] * lin
    acc[:, 6] += wgt * a


def finish_mix(acc: np.ndarray, color: np.ndarray, mixed):
    """``color[mixed]`` ((P, 4) uint8, in place) <- the mix in ``acc`` (``mix_layer``):
    straight alpha, the colour the alpha-weighted mix (a transparent background adds
    coverage, not its colour), the plain mix where every sample is transparent;
    encoded to 8-bit sRGB."""
    rgb, alpha = acc[:, :3].copy(), acc[:, 6]
    seen = alpha > 0
    rgb[seen] /= alpha[seen, None]
    rgb[~seen] = acc[~seen, 3:6]
    color[mixed, :3] = to_unorm8(linear_to_srgb(rgb))
    color[mixed, 3] = to_unorm8(alpha)


def nearest_depth(first: np.ndarray, mixed, layers) -> np.ndarray:
    """(P,) float32 window depth of each pixel's nearest sample from ``mixed_layers``'
    output (each layer keeps its primitive's nearest sample: layer 0's where the samples
    agree, the least layer key where they do not); 1.0 where every sample is empty."""
    nearest = first.copy()
    if len(mixed):
        nearest[mixed] = layers.min(axis=0)
    depth = (nearest >> _SHIFT).astype(np.uint32).view(np.float32)
    depth[nearest == EMPTY_KEY] = 1.0
    return depth


def _resolved_color(stages, keys, inputs, view, copy) -> np.ndarray:
    """(P, 4) uint8 host colour of one layer resolved by the backend's own stages (a
    copy where ``copy``: backends may reuse their frame)."""
    frame = stages.resolve(keys, inputs, view)
    frame = stages.read(frame, depth=False, host=True, copy=copy)
    color = to_host(frame.color)
    return (np.array(color, np.uint8) if copy else np.asarray(color, np.uint8)).reshape(-1, 4)


def _layer_color(stages, layer, xp_keys, inputs, view, copy=True) -> np.ndarray:
    """(P, 4) uint8 colour of one layer: resolved, then the scene's fog and sky applied
    with the layer's own depth (the backend's atmosphere stage), so an edge pixel's
    samples are each fogged by their own surface and its empty samples show the sky."""
    color = _resolved_color(stages, xp_keys(layer), inputs, view, copy)
    scene = view.scene
    if scene.fog is not None or scene.sky is not None:
        w, h = view.size
        if not copy:  # the atmosphere writes into it
            color = color.copy()
        depth = (layer >> _SHIFT).astype(np.uint32).view(np.float32)
        depth = np.where(layer == EMPTY_KEY, np.float32(1.0), depth)
        stages.atmosphere(Frame(color.reshape(h, w, 4), depth.reshape(h, w)), view)
    return color


def _empty_keys(n: int) -> np.ndarray:
    """(n,) uint64 EMPTY_KEY (the backends' twin reuses one array)."""
    return np.full(n, EMPTY_KEY, np.uint64)


def render_multisampled(stages, inputs, view, samples: int):
    """One frame of ``inputs`` with ``samples`` per pixel on ``stages`` (a software or
    CUDA Backend) -> (Frame, sample 0's (W * H,) host key buffer).

    See the module docstring for the steps and the rules; the frame is on the host.
    The backend's compiled twins of this module's steps are used where it has them
    (``raster_samples``, ``mixed_layers``, ``mix_layer``, ``finish_mix``,
    ``nearest_depth``, ``empty_keys``: engine.render.backends.numba_msaa on the Numba
    backend)."""
    w, h = view.size
    keys = _one_pass_keys(stages, inputs, view, samples)
    if keys is None:
        keys = moved_sample_keys(stages, inputs, view, samples)
        stages.rasterize(inputs, view)  # the pixel centres: the shading setup, line fragments
    twin = lambda name, fn: getattr(stages, name, fn)
    first, mixed, layers, counts = twin("mixed_layers", mixed_layers)(keys)
    xp = getattr(stages, "xp", np)
    xp_keys = (lambda a: a) if xp is np else (lambda a: xp.asarray(a))
    color = _layer_color(stages, first, xp_keys, inputs, view)
    if mixed.size:
        acc = np.zeros((mixed.size, 7))
        add = twin("mix_layer", mix_layer)
        add(acc, color, mixed, counts[0], samples)
        # layer k > 0 is the background but at the mixed pixels: one key buffer whose
        # mixed pixels are overwritten by each layer in turn
        layer = twin("empty_keys", _empty_keys)(w * h)
        for k in range(1, len(layers)):
            layer[mixed] = layers[k]
            add(acc, _layer_color(stages, layer, xp_keys, inputs, view, copy=False), mixed,
                counts[k], samples)
        twin("finish_mix", finish_mix)(acc, color, mixed)
    depth = twin("nearest_depth", nearest_depth)(first, mixed, layers)
    return Frame(color.reshape(h, w, 4), depth.reshape(h, w)), keys[0]
