"""CPU projector JIT-compiled by Numba: one fused, multi-threaded pass over the vertices.

Optional accelerator (``pip install frustum[fast]``): the NumPy backend makes several
passes over (N, 4) temporaries, while this loop reads 16 bytes and writes 13 bytes per
vertex once, which is what the memory-bound transform needs. The arithmetic is the same
float32 sequence as ``shaders/transform.cuh``.
"""

from __future__ import annotations

import numpy as np

from .base import W_EPSILON, OutputBuffers, Projection, check_viewport, prepare_inputs

_kernel = None


def _build_kernel():
    import numba

    eps = W_EPSILON

    @numba.njit(parallel=True, cache=True, fastmath=False, boundscheck=False)
    def project(pos, oid, model, vp, vw, vh, xy, depth, visible):
        n = pos.shape[0]
        k = model.shape[0]
        half = np.float32(0.5)
        for i in numba.prange(n):
            obj = oid[i]
            if obj >= k:
                xy[i, 0] = 0.0
                xy[i, 1] = 0.0
                depth[i] = 1.0
                visible[i] = False
                continue
            m = model[obj]
            px, py, pz = pos[i, 0], pos[i, 1], pos[i, 2]
            wx = m[0, 0] * px + m[0, 1] * py + m[0, 2] * pz + m[0, 3]
            wy = m[1, 0] * px + m[1, 1] * py + m[1, 2] * pz + m[1, 3]
            wz = m[2, 0] * px + m[2, 1] * py + m[2, 2] * pz + m[2, 3]
            ww = m[3, 0] * px + m[3, 1] * py + m[3, 2] * pz + m[3, 3]
            cx = vp[0, 0] * wx + vp[0, 1] * wy + vp[0, 2] * wz + vp[0, 3] * ww
            cy = vp[1, 0] * wx + vp[1, 1] * wy + vp[1, 2] * wz + vp[1, 3] * ww
            cz = vp[2, 0] * wx + vp[2, 1] * wy + vp[2, 2] * wz + vp[2, 3] * ww
            cw = vp[3, 0] * wx + vp[3, 1] * wy + vp[3, 2] * wz + vp[3, 3] * ww
            ok = (cw > eps) and (cw < np.inf) and abs(cx) <= cw and abs(cy) <= cw and abs(cz) <= cw
            if ok:
                inv = np.float32(1.0) / cw
                xy[i, 0] = (cx * inv * half + half) * vw
                xy[i, 1] = (half - cy * inv * half) * vh
                depth[i] = cz * inv * half + half
            else:
                xy[i, 0] = 0.0
                xy[i, 1] = 0.0
                depth[i] = 1.0
            visible[i] = ok

    return project


def numba_available() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


class NumbaProjector:
    """Fused CPU projector (Numba). See ``engine.backends.base`` for the contract.

    Raises RuntimeError when Numba is not installed.
    """

    name = "numba"
    xp = np

    def __init__(self):
        global _kernel
        if not numba_available():
            raise RuntimeError("the numba backend needs Numba: pip install 'frustum[fast]'")
        if _kernel is None:
            _kernel = _build_kernel()
        self._out = OutputBuffers(np)

    def project(self, positions, object_id, model, view_proj, viewport, runs=None) -> Projection:
        """Project N vertices; returns views of reused buffers. ``runs`` is ignored."""
        pos, oid, mdl, vp = prepare_inputs(np, positions, object_id, model, view_proj)
        vw, vh = check_viewport(viewport)
        out = self._out.get(pos.shape[0])
        _kernel(pos, oid, mdl, vp, np.float32(vw), np.float32(vh),
                out.screen_xy, out.depth, out.visible)
        return out
