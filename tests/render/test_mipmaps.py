"""Mipmaps and the min filters: the chain's box filter, a checker floor at a grazing angle
turning to its linear-light mean, the chosen level against the analytic texel footprint,
and each glTF min filter at one pixel against a value computed here."""

from __future__ import annotations

import numpy as np
import pytest
from mip_floor import checker, floor_scene, floor_uv, footprint_lod

from engine import Renderer
from engine.scene.colorspace import linear_to_srgb, srgb_to_linear
from engine.scene.material import MIN_FILTERS, Sampler
from engine.scene.mipmap import level_sizes, mip_chain

pytestmark = pytest.mark.timeout(300)
SIZE = (160, 120)


def test_chain_sizes_and_box_filter():
    rng = np.random.default_rng(1)
    a = rng.uniform(0, 1, (6, 8, 4)).astype(np.float32)
    levels = mip_chain(a)
    assert [lv.shape[:2] for lv in levels] == [(6, 8), (3, 4), (1, 2), (1, 1)]
    assert level_sizes(8, 6) == [(8, 6), (4, 3), (2, 1), (1, 1)]
    np.testing.assert_allclose(levels[1][1, 2], a[2:4, 4:6].mean((0, 1)), rtol=1e-6)
    # 3 rows -> 1: the three rows weigh the same (a span of 3 texels), 4 columns -> 2
    np.testing.assert_allclose(levels[2][0, 1], levels[1][:, 2:4].mean((0, 1)), rtol=1e-6)
    # 5 -> 2: spans [0, 2.5) and [2.5, 5), the middle texel split in halves
    b = np.arange(5, dtype=np.float32).reshape(1, 5, 1)
    np.testing.assert_allclose(mip_chain(b)[1][0, :, 0], [(0 + 1 + 1) / 2.5, (1 + 3 + 4) / 2.5])
    for lv in levels:
        np.testing.assert_allclose(lv.mean((0, 1)), a.mean((0, 1)), rtol=1e-5)


def test_default_filters():
    assert Sampler().min_filter == "linear_mipmap_linear"  # code and OBJ textures: trilinear
    assert Sampler(filter="nearest").min_filter == "nearest"
    with pytest.raises(ValueError, match="min_filter must be one of"):
        Sampler(min_filter="bilinear")


def _render(image, min_filter, backend, filter="linear"):
    scene, cam = floor_scene(image, min_filter, filter, SIZE)
    return Renderer(scene, cam, SIZE, backend=backend).render().color


def _lod_grid(tw, th):
    ys, xs = np.mgrid[SIZE[1] // 2 + 2:SIZE[1], 0:SIZE[0]]
    return ys, xs, footprint_lod(xs, ys, SIZE, tw, th)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_checker_floor_turns_grey(backend):
    ys, xs, lod = _lod_grid(64, 64)
    img = _render(checker(), "linear_mipmap_linear", backend)
    # beyond one texel per pixel plus a margin for the blend with level 0: level 1 and
    # up of a 1-texel black/white checker are all linear 0.5, sRGB 188 (linear_to_srgb)
    want = round(float(linear_to_srgb(0.5)) * 255)
    assert want == 188
    far = lod >= 1.05
    assert far.sum() > 1000
    got = img[ys[far], xs[far], 0].astype(int)
    assert np.abs(got - want).max() <= 1
    # between 0 and 1 the pixels blend level 0 in: their linear mean is still 0.5
    mid = (lod > 0) & (lod < 1)
    mean = srgb_to_linear(img[ys[mid], xs[mid], 0] / 255.0).mean()
    assert abs(mean - 0.5) < 0.02
    # without mipmaps the same pixels are moire: black and white pixels
    plain = _render(checker(), "linear", backend)[ys[far], xs[far], 0].astype(int)
    assert plain.std() > 30 and got.std() < 1


def _levels(image):
    return [linear_to_srgb(np.asarray(lv, np.float64)[..., :3])
            for lv in mip_chain(srgb_to_linear(image / 255.0).astype(np.float32))]


def _nearest(level, uv):
    h, w = level.shape[:2]
    i = np.floor(uv[..., 0] * w).astype(int) % w
    j = np.floor(uv[..., 1] * h).astype(int) % h
    return level[j, i]


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_chosen_level_follows_the_footprint(backend):
    rng = np.random.default_rng(5)
    image = rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)
    img = _render(image, "nearest_mipmap_nearest", backend).astype(int)
    levels = [np.rint(lv * 255).astype(int) for lv in _levels(image)]
    ys, xs, lod = _lod_grid(64, 64)
    sel = (lod > 0.6) & (lod < 5.4)
    ys, xs, lod = ys[sel][::7], xs[sel][::7], lod[sel][::7]
    uv = floor_uv(xs + 0.5, ys + 0.5, SIZE)
    checked = 0
    for k in range(len(ys)):
        pixel = img[ys[k], xs[k], :3]
        match = [d for d, lv in enumerate(levels)
                 if np.abs(_nearest(lv, uv[k]) - pixel).max() <= 1]
        # a texel edge within reach of float rounding would make the reading ambiguous
        edge = any(np.min(np.abs(uv[k] * s - np.rint(uv[k] * s))) < 1e-3
                   for s in (64 >> d for d in range(7)))
        if len(match) != 1 or edge:
            continue
        checked += 1
        assert abs(match[0] - lod[k]) <= 0.5 + 1e-6, (ys[k], xs[k], match, lod[k])
    assert checked > 100


def _bilinear(level, uv):
    h, w = level.shape[:2]
    x, y = uv[0] * w - 0.5, uv[1] * h - 0.5
    i, j = int(np.floor(x)), int(np.floor(y))
    fx, fy = x - i, y - j
    t = lambda a, b: level[b % h, a % w]
    return ((t(i, j) * (1 - fx) + t(i + 1, j) * fx) * (1 - fy)
            + (t(i, j + 1) * (1 - fx) + t(i + 1, j + 1) * fx) * fy)


def _expected(image, min_filter, uv, lam):
    """GL's min filter (OpenGL 4.6 section 8.14) at uv and level of detail lam > 0.5 on
    the linear-light chain, as sRGB 8-bit."""
    levels = mip_chain(srgb_to_linear(image / 255.0).astype(np.float32))
    levels = [np.asarray(lv, np.float64)[..., :3] for lv in levels]
    read = _bilinear if min_filter.startswith("linear") else _nearest
    q = len(levels) - 1
    if "mipmap" not in min_filter:
        lin = read(levels[0], uv)
    elif min_filter.endswith("nearest"):
        lin = read(levels[min(int(np.ceil(lam + 0.5)) - 1, q)], uv)
    else:
        d = int(np.floor(lam))
        f = lam - d
        lin = read(levels[d], uv) * (1 - f) + read(levels[d + 1], uv) * f
    return np.rint(linear_to_srgb(lin) * 255).astype(int)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_each_min_filter_at_a_pixel(backend):
    rng = np.random.default_rng(9)
    image = rng.integers(0, 256, (32, 32, 3), dtype=np.uint8)
    ys, xs, lod = _lod_grid(32, 32)
    # a pixel at a level of detail away from the selection thresholds (x.0, x.5)
    k = np.argmin(np.abs(lod - 1.3) + (np.abs(xs - SIZE[0] / 2 - 7) > 0.5))
    py, px, lam = int(ys.flat[k]), int(xs.flat[k]), float(lod.flat[k])
    assert abs(lam - 1.3) < 0.1
    uv = floor_uv(px + 0.5, py + 0.5, SIZE)
    for min_filter in MIN_FILTERS:
        got = _render(image, min_filter, backend)[py, px, :3].astype(int)
        want = _expected(image, min_filter, uv, lam)
        assert np.abs(got - want).max() <= 2, (min_filter, got, want)


def test_lit_specular_floor_matches_the_reference():
    """The Numba resolve's level of detail beside its lighting (the view vector's
    per-pixel values must not disturb the run's uv slopes): lit, specular, trilinear."""
    scene, cam = floor_scene(checker(), "linear_mipmap_linear", size=SIZE, shading="lit",
                             specular=0.5)
    want = Renderer(scene, cam, SIZE, backend="numpy").render().color.astype(int)
    got = Renderer(scene, cam, SIZE, backend="numba").render().color.astype(int)
    assert np.abs(got - want).max() <= 1
