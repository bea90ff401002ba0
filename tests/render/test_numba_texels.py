"""The Numba sampler's texel arithmetic (engine.render.backends.numba_texels) and its
power-of-two wrap (numba_shading._axis_linear), against plain definitions."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest

from engine.render.backends import numba_shading as ns
from engine.render.backends import numba_texels as nt
from engine.scene.sampling import _axis as reference


@numba.njit(cache=False)
def _log2s(xs):
    out = np.empty_like(xs)
    for i in range(xs.size):
        out[i] = nt.log2(xs[i])
    return out


def test_log2_within_its_bound():
    rng = np.random.default_rng(3)
    powers = 2.0 ** np.arange(-1022, 1024, dtype=np.float64)
    xs = np.concatenate([np.exp(rng.uniform(-705, 705, 200_000)), rng.uniform(0.5, 2, 100_000),
                         powers, np.nextafter(powers, 0), np.nextafter(powers, np.inf),
                         powers * math.sqrt(2), np.nextafter(powers * math.sqrt(2), 0)])
    got = _log2s(xs)
    # log2 to 1e-15 with math.log2 (correctly rounded to within an ulp: |log2| <= 1024)
    want = np.array([math.log2(x) for x in xs])
    assert np.max(np.abs(got - want)) < 1.1e-9
    # powers of two exactly: an integer level of detail stays one
    assert np.array_equal(_log2s(powers), np.arange(-1022, 1024, dtype=np.float64))


def test_log2_of_the_special_values():
    xs = np.array([0.0, 5e-324, 2.0**-1030, math.inf, math.nan, -1.0, -0.0])
    got = _log2s(xs)
    assert got[0] == -math.inf and got[6] == -math.inf
    assert got[1] == -1074.0 and got[2] == -1030.0  # subnormals through math.log2
    assert got[3] == math.inf
    assert math.isnan(got[4]) and math.isnan(got[5])


@numba.njit(cache=False, fastmath={"contract"})
def _blend_scalar(texels, a, b, c, d, w00, w01, w10, w11):
    """The scalar sum blend4 replaces, per channel, contracted by LLVM."""
    out = np.empty(4, np.float32)
    for ch in range(4):
        out[ch] = (texels[a, ch] * w00 + texels[b, ch] * w01 + texels[c, ch] * w10
                   + texels[d, ch] * w11)
    return out


@numba.njit(cache=False)
def _blend_vector(texels, a, b, c, d, w00, w01, w10, w11):
    out = np.empty(4, np.float32)
    out[0], out[1], out[2], out[3] = nt.blend4(texels, a, b, c, d, w00, w01, w10, w11)
    return out


def test_blend4_is_the_scalar_sum():
    rng = np.random.default_rng(8)
    texels = rng.uniform(0, 1, (97, 4)).astype(np.float32)
    for _ in range(2000):
        a, b, c, d = (int(i) for i in rng.integers(0, 97, 4))
        fx, fy = rng.uniform(0, 1, 2)
        w = [np.float32(x) for x in ((1 - fx) * (1 - fy), fx * (1 - fy), (1 - fx) * fy, fx * fy)]
        got = _blend_vector(texels, a, b, c, d, *w)
        # the same floats as the scalar form (module docstring: its contraction order)
        np.testing.assert_array_equal(got, _blend_scalar(texels, a, b, c, d, *w))
        exact = (texels[[a, b, c, d]].astype(np.float64)
                 * np.array(w, np.float64)[:, None]).sum(0)
        np.testing.assert_allclose(got, exact, rtol=3e-7, atol=1e-7)


@pytest.mark.parametrize("mode", ["repeat", "mirror"])
@pytest.mark.parametrize("n", [1, 2, 4, 8, 64, 1024])
def test_power_of_two_wrap_is_gls(mode, n):
    # the mask path (numba_shading._axis_linear) against the float reference of
    # engine.scene.sampling, which follows OpenGL 4.6 section 8.14.2: texel boundaries,
    # negative coordinates, far from [0, 1] and past the 2**40 clamp
    rng = np.random.default_rng(n)
    u = np.concatenate([rng.uniform(-9, 9, 3000), np.arange(-5 * n, 5 * n + 1) / n,
                        np.arange(-5 * n, 5 * n + 1) / n + 0.5 / n,
                        [1e9 + 0.3, -1e9 - 0.7, 1e15, -1e15, 3e12 / n]])
    code = {"repeat": 0, "mirror": 2}[mode]
    rp = 1.0 / (2 * n if mode == "mirror" else n)
    want = reference(u, n, mode, True)
    got = np.array([ns._axis_linear(x, n, code, rp) for x in u])
    np.testing.assert_array_equal(got[:, 0], want[0])
    np.testing.assert_array_equal(got[:, 1], want[1])
    np.testing.assert_array_equal(got[:, 2], want[2])
