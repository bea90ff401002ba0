"""The Numba resolve's per-run texture sampler (numba_shading._texture_run) against the
per-pixel sampler it replaces, and the magnification bound it decides with.

A run's planes here are random perspective rows: q = qx x + qr > 0 over the row, u and v
numerators affine in x, their y slopes random; the texture a random 64 x 32 image with its
mip chain, under every min filter, both magnification filters and the three wrap modes."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest

from engine import Material, Texture
from engine.render.backends import numba_shading as ns
from engine.render.materials import pack_materials
from engine.scene.material import MIN_FILTERS, WRAP_MODES, Sampler

pytestmark = pytest.mark.timeout(600)
WIDTH = 200
X_SCALE, X_OFFSET, Y_SCALE = 2.0 / WIDTH, 1.0 / WIDTH - 1.0, 2.0 / 120
UO = 4  # the uv columns' offset in the plane row (any: the planes are written there)


@numba.njit(cache=False)
def _per_pixel(plane, uo, px, n, qy, uy, vy, tw, th, texels, info, periods, k):
    """The pixel loop's own sampling, pixel by pixel (u, v, lambda, _sample)."""
    out = np.zeros((n, 4), np.float32)
    for j in range(n):
        xn = (px + j) * X_SCALE + X_OFFSET
        q = plane[0] * xn + plane[1]
        inv = 1.0 / q if q != 0 else 1.0
        u, v = ns._at(plane, uo, xn, inv), ns._at(plane, uo + 1, xn, inv)
        lam = ns._lod(plane, uo, xn, inv, ns._lod_x(plane, uo, tw * X_SCALE, th * X_SCALE),
                      qy, uy, vy, tw * Y_SCALE, th * Y_SCALE)
        out[j, 0], out[j, 1], out[j, 2], out[j, 3] = ns._sample(texels, info, periods, k, u,
                                                                 v, lam)
    return out


@numba.njit(cache=False)
def _lods(plane, uo, px, n, qy, uy, vy, tw, th):
    out = np.zeros(n)
    for j in range(n):
        xn = (px + j) * X_SCALE + X_OFFSET
        q = plane[0] * xn + plane[1]
        inv = 1.0 / q if q != 0 else 1.0
        out[j] = ns._lod(plane, uo, xn, inv, ns._lod_x(plane, uo, tw * X_SCALE, th * X_SCALE),
                         qy, uy, vy, tw * Y_SCALE, th * Y_SCALE)
    return out


@numba.njit(cache=False)
def _bound(plane, uo, px, n, qy, uy, vy, tw, th, c):
    return ns._magnified(plane, uo, px * X_SCALE + X_OFFSET, (px + n - 1) * X_SCALE + X_OFFSET,
                         qy, uy, vy, tw * X_SCALE, th * X_SCALE, tw * Y_SCALE, th * Y_SCALE, c)


def _row(rng, texels_per_pixel):
    """(plane, qy, uy, vy): a perspective row whose footprint is about
    ``texels_per_pixel`` texels of a 64-texel-wide texture."""
    plane = np.zeros(ns._PLANE * (UO + 3))
    qx = rng.uniform(-0.4, 0.4)
    qr = 1.0 + abs(qx) + rng.uniform(0.0, 1.0)  # q > 0 for x in [-1, 1]
    s = texels_per_pixel / 64 / X_SCALE  # du/dx in uv per NDC unit, near q = 1
    plane[0], plane[1] = qx, qr
    k = ns._PLANE * (UO + 1)
    plane[k], plane[k + 1] = s * rng.uniform(0.5, 1.0), rng.uniform(-3, 3)
    plane[k + 2], plane[k + 3] = s * rng.uniform(-0.5, 0.5), rng.uniform(-3, 3)
    qy, uy, vy = rng.uniform(-0.3, 0.3), s * rng.uniform(-0.5, 0.5), s * rng.uniform(0.2, 1.0)
    return plane, qy, uy, vy


def _texture(min_filter, mag, wrap, shape=(32, 64), wrap_t=None):
    """The random texture of ``shape`` (rows, columns) under these filters, wrapped by
    ``wrap`` along u and ``wrap_t`` (default: the next mode) along v."""
    img = np.random.default_rng(5).integers(0, 256, (*shape, 4), np.uint8)
    if wrap_t is None:
        wrap_t = WRAP_MODES[(WRAP_MODES.index(wrap) + 1) % len(WRAP_MODES)]
    tex = Texture(img, Sampler(wrap, wrap_t, mag, min_filter))
    _, texels, info = pack_materials([Material(texture=tex)])
    size = info[:, 1:3].astype(np.float64)
    periods = np.ascontiguousarray(1.0 / np.where(info[:, 3:5] == 2, 2.0 * size, size))
    return texels, info, periods


# power-of-two sizes (wrapped by a mask, numba_shading._axis_linear) and others, whose
# chain mixes both (48 x 20, 24 x 10, 12 x 5, 6 x 2, 3 x 1, 1 x 1)
@pytest.mark.parametrize("shape", [(32, 64), (20, 48)])
@pytest.mark.parametrize("min_filter", MIN_FILTERS)
@pytest.mark.parametrize("mag", ["linear", "nearest"])
def test_run_samples_are_the_pixel_samplers(min_filter, mag, shape):
    rng = np.random.default_rng(MIN_FILTERS.index(min_filter))
    tw, th = float(shape[1]), float(shape[0])
    # each mode along u with the next along v, and repeat and mirror on both axes (the
    # power-of-two chain's own trilinear loop, numba_shading._trilinear_pow2)
    for wrap, wrap_t in [(w, None) for w in WRAP_MODES] + [("repeat", "repeat"),
                                                           ("mirror", "mirror")]:
        texels, info, periods = _texture(min_filter, mag, wrap, shape, wrap_t)
        for footprint in (0.3, 0.9, 1.4, 3.0, 20.0):  # magnified to deep in the chain
            plane, qy, uy, vy = _row(rng, footprint)
            px, n = 30, 70
            keys = np.full(WIDTH, np.uint64(7))
            keys[px + n:] = np.uint64(8)  # another triangle ends the run
            out = np.zeros((ns.RUN_PIXELS, 4))
            got = []
            x = px
            while x < px + n:  # RUN_PIXELS at a time, as the resolve calls it
                m = ns._texture_run(keys, x, x, min(ns.RUN_PIXELS, WIDTH - x), X_SCALE,
                                    X_OFFSET, Y_SCALE, plane, UO, qy, uy, vy, tw, th,
                                    texels, info, periods, 0, out)
                assert 1 <= m <= ns.RUN_PIXELS
                got.append(out[:m].copy())
                x += m
            assert x == px + n  # stopped at the other triangle's first pixel
            want = _per_pixel(plane, UO, px, n, qy, uy, vy, tw, th, texels, info,
                              periods, 0)
            np.testing.assert_array_equal(np.concatenate(got), want.astype(np.float64),
                                          err_msg=f"{wrap}, {wrap_t} footprint {footprint}")


def test_level_of_detail_is_the_uv_footprint():
    # lambda = log2 of the longer uv step per pixel, in texels (OpenGL 4.6 eq. 8.6, 8.9),
    # against central differences of u = N_u / q, v = N_v / q over the row's planes (x
    # in NDC, the y slopes moving the planes by dy)
    rng = np.random.default_rng(4)
    k = ns._PLANE * (UO + 1)
    for footprint in (0.3, 0.9, 1.4, 3.0, 20.0, 300.0):
        plane, qy, uy, vy = _row(rng, footprint)
        px, n = 17, 150
        got = _lods(plane, UO, px, n, qy, uy, vy, 48.0, 20.0)
        x = (px + np.arange(n)) * X_SCALE + X_OFFSET

        def uv(x, dy, plane=plane, qy=qy, uy=uy, vy=vy):
            q = plane[0] * x + plane[1] + qy * dy
            return ((plane[k] * x + plane[k + 1] + uy * dy) / q,
                    (plane[k + 2] * x + plane[k + 3] + vy * dy) / q)

        h = 1e-4
        (u1, v1), (u0, v0) = uv(x + h * X_SCALE, 0.0), uv(x - h * X_SCALE, 0.0)
        along_x = np.hypot((u1 - u0) / (2 * h) * 48, (v1 - v0) / (2 * h) * 20)
        (u1, v1), (u0, v0) = uv(x, h * Y_SCALE), uv(x, -h * Y_SCALE)
        along_y = np.hypot((u1 - u0) / (2 * h) * 48, (v1 - v0) / (2 * h) * 20)
        want = np.log2(np.maximum(along_x, along_y))
        np.testing.assert_allclose(got, want, atol=1e-6, err_msg=f"footprint {footprint}")
        assert abs(np.median(got) - math.log2(footprint)) < 2.5  # about the asked footprint


def test_magnified_bound_holds_and_decides():
    rng = np.random.default_rng(11)
    said = {True: 0, False: 0}
    for trial in range(3000):
        plane, qy, uy, vy = _row(rng, rng.choice([0.2, 0.6, 0.9, 1.1, 1.6, 4.0]))
        px = int(rng.integers(0, WIDTH - 2))
        n = int(rng.integers(1, min(ns.RUN_PIXELS, WIDTH - px) + 1))
        c = 0.5 if trial % 2 else 0.0
        lam = _lods(plane, UO, px, n, qy, uy, vy, 64.0, 32.0)
        magnified = bool(_bound(plane, UO, px, n, qy, uy, vy, 64.0, 32.0, c))
        said[magnified] += 1
        if magnified:
            assert np.all(lam <= c), (trial, lam.max(), c)
        if np.all(lam < c + math.log2(0.99) / 2 - 0.02) and n < 8:
            # well inside the switch point over a short stretch: the bound says so too
            assert magnified, (trial, lam.max(), c)
    assert said[True] > 300 and said[False] > 300, said
    # a sign change of q inside the stretch (no bound) and a non-finite plane
    plane, qy, uy, vy = _row(rng, 0.2)
    plane[0], plane[1] = 1.0, 0.0
    assert not _bound(plane, UO, 10, 50, qy, uy, vy, 64.0, 32.0, 0.0)
    plane[1] = math.nan
    assert not _bound(plane, UO, 10, 5, qy, uy, vy, 64.0, 32.0, 0.0)
