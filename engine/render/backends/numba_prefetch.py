"""A cache prefetch hint for Numba kernels: ``prefetch(array, index)``.

Why: a lookup whose address is known before it is needed (the shadow-map taps of a
pixel a little ahead on the row, numba_shading) can start its cache miss early, while
the current pixel is shaded, instead of stalling when it is read. The out-of-order core
cannot do this by itself when each pixel's work is longer than its reorder window.

``prefetch`` compiles to LLVM's ``llvm.prefetch`` intrinsic (read, high temporal
locality, data cache; https://llvm.org/docs/LangRef.html#llvm-prefetch-intrinsic): a
hint with no effect on any value, which does not fault even on a bad address (the
callers keep their indices inside the array all the same).
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["prefetch"]


@intrinsic
def prefetch(typingctx, array, index):
    """prefetch(array, index): hint the cache to fetch the line of ``array[index]`` (a
    1-d array, an integer index, no wraparound); returns nothing. Numba code only."""
    if not (isinstance(array, types.Array) and array.ndim == 1
            and isinstance(index, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        index = context.cast(builder, args[1], signature.args[1], types.intp)
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [index],
                                       wraparound=False)
        i8p = builder.bitcast(ptr, ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p.type, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
        # (address, read = 0, locality 3 = keep in every cache level, data cache = 1)
        builder.call(fn, [i8p, i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.void(array, index), codegen
