"""Texel arithmetic for the Numba resolve's sampler that Numba's own code generation does
not give: one RGBA blend in a 4-wide vector, and a log2 from the float's bits.

- ``blend4``: the bilinear blend of four RGBA float32 texels as one <4 x float> multiply
  and three fused multiply-adds (an LLVM intrinsic). Numba compiles with LLVM's SLP
  vectorizer off (``NUMBA_SLP_VECTORIZE`` defaults to 0), so the same blend written per
  channel is 16 scalar loads and 16 scalar multiply-adds. The operations are those LLVM
  contracts the scalar ``a w00 + b w01 + c w10 + d w11`` into (``fma(a, w00, b w01)``,
  then one fused multiply-add for c and one for d), so the results are the same floats.
- ``log2``: log2 of a float64 from its exponent and a series for the mantissa, where
  libm's ``log2`` cost about 6 ns of a trilinear pixel's 30 (measured). With x = m 2^e,
  m in [sqrt(2)/2, sqrt(2)), s = (m - 1) / (m + 1) (abs(s) <= 0.1716), log2 x = e +
  (2 / ln 2) atanh(s) = e + (2 / ln 2) (s + s^3 / 3 + ... + s^9 / 9) (Abramowitz and
  Stegun 4.1.27); the first omitted term, (2 / ln 2) s^11 / 11, is below 1.0e-9, and
  the measured error over 2 x 10^6 values from 2^-1000 to 2^1000 is 1.0e-9. Exact at
  powers of two (s = 0), so a level of detail that is an integer stays one. Zero,
  subnormal, infinite and nan inputs go to ``math.log2``.
"""

from __future__ import annotations

import math

import numba
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["blend4", "log2"]

_F4 = ir.VectorType(ir.FloatType(), 4)
_I32 = ir.IntType(32)


@intrinsic
def _bits(typingctx, x):
    """The IEEE 754 bits of float64 x as an int64 (a bit cast, no conversion)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.int64(types.float64), codegen


@intrinsic
def _from_bits(typingctx, b):
    """The float64 whose IEEE 754 bits are int64 b."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.int64), codegen


_SQRT2 = math.sqrt(2.0)
_K = 2.0 / math.log(2.0)
_SMALLEST_NORMAL = 2.0**-1022


@numba.njit(inline="always")
def log2(x):
    """log2 of float64 x within 1.1e-9 (the module docstring); -inf at 0, nan below."""
    if not (x >= _SMALLEST_NORMAL and x < math.inf):
        return math.log2(x) if x > 0 else (-math.inf if x == 0 else math.nan)
    b = _bits(x)
    e = (b >> 52) - 1023
    m = _from_bits((b & 0x000FFFFFFFFFFFFF) | 0x3FF0000000000000)  # in [1, 2)
    if m > _SQRT2:
        m *= 0.5
        e += 1
    s = (m - 1.0) / (m + 1.0)
    s2 = s * s
    series = 1.0 + s2 * (1.0 / 3.0 + s2 * (1.0 / 5.0 + s2 * (1.0 / 7.0 + s2 * (1.0 / 9.0))))
    return e + _K * s * series


@intrinsic
def blend4(typingctx, texels, a, b, c, d, w00, w01, w10, w11):
    """``texels[a] w00 + texels[b] w01 + texels[c] w10 + texels[d] w11`` for rows a, b, c, d
    (int64) of texels ((N, 4) float32, C-contiguous) and float32 weights: the (r, g, b, a)
    tuple of float32, computed in one 4-wide vector (the module docstring). No bounds
    check: the caller's indices are in range (the sampler's wrapped indices)."""
    if not (isinstance(texels, types.Array) and texels.ndim == 2 and texels.layout == "C"
            and texels.dtype == types.float32):
        return None
    sig = types.UniTuple(types.float32, 4)(texels, a, b, c, d, w00, w01, w10, w11)

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        fma = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(_F4, [_F4, _F4, _F4]), "llvm.fma.v4f32")

        def row(i, ty):
            i = context.cast(builder, i, ty, types.int64)
            ptr = builder.gep(data, [builder.mul(i, ir.Constant(i.type, 4))])
            return builder.load(builder.bitcast(ptr, _F4.as_pointer()), align=4)

        def splat(w, ty):
            w = context.cast(builder, w, ty, types.float32)
            v = builder.insert_element(ir.Constant(_F4, None), w, ir.Constant(_I32, 0))
            return builder.shuffle_vector(v, ir.Constant(_F4, None),
                                          ir.Constant(ir.VectorType(_I32, 4), [0, 0, 0, 0]))

        ts, ws = signature.args[1:5], signature.args[5:9]
        t = [row(args[1 + k], ts[k]) for k in range(4)]
        w = [splat(args[5 + k], ws[k]) for k in range(4)]
        # LLVM's contraction of the scalar sum: fma(a, w00, b w01), then c and d
        acc = builder.call(fma, [t[0], w[0], builder.fmul(t[1], w[1])])
        for k in (2, 3):
            acc = builder.call(fma, [t[k], w[k], acc])
        out = cgutils.get_null_value(context.get_value_type(signature.return_type))
        for k in range(4):
            out = builder.insert_value(out, builder.extract_element(acc, ir.Constant(_I32, k)),
                                       k)
        return out
    return sig, codegen
