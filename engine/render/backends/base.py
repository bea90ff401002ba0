"""The projection contract shared by every backend, and its argument checks.

Contract (identical for all backends):

    in:  positions  (N, 3) float32, object-local frame relative to the batch origin
         object_id  (N,)   uint32, index into ``model``
         model      (K, 4, 4) float32 model matrices (row-major, column vectors)
         view_proj  (4, 4) float32 world -> clip matrix
         viewport   (width, height) in pixels, both > 0
    out: screen_xy  (N, 2) float32 pixels, origin top-left, y down
         depth      (N,)   float32 window depth in [0, 1] (NDC z * 0.5 + 0.5)
         visible    (N,)   bool

A vertex is not visible when clip w <= 1e-7 (at or behind the eye), it lies outside the
clip volume (-w <= x, y, z <= w), any input is non-finite, or its object_id is >= K. Not-visible vertices get
screen (0, 0) and depth 1, so no output ever holds NaN or inf.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

W_EPSILON = np.float32(1e-7)  # keep equal to FR_W_EPSILON in shaders/transform.cuh


class Projection(NamedTuple):
    """Projector output; arrays live where the backend computes (NumPy or CuPy)."""

    screen_xy: object  # (N, 2) float32
    depth: object  # (N,) float32
    visible: object  # (N,) bool


def check_viewport(viewport) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in viewport)
    except (TypeError, ValueError):
        raise ValueError(f"viewport must be (width, height) in pixels, got {viewport!r}") from None
    if w <= 0 or h <= 0:
        raise ValueError(f"viewport must be positive, got {w}x{h}")
    return w, h


def prepare_inputs(xp, positions, object_id, model, view_proj):
    """Check shapes and convert to the contract's dtypes and C-contiguous layout.

    A strided view (``verts[:, :3]`` of an (N, 4) array) is copied to a contiguous array
    first, because kernels index ``positions[3 * i + c]``. Raises ValueError/TypeError
    naming the argument on a wrong shape or a non-numeric dtype.
    """
    positions = xp.asarray(positions)
    if positions.ndim != 2 or positions.shape[1] != 3:
        raise ValueError(f"positions must have shape (N, 3), got {tuple(positions.shape)}")
    n = positions.shape[0]
    object_id = xp.asarray(object_id)
    if object_id.shape != (n,):
        raise ValueError(f"object_id must have shape ({n},), got {tuple(object_id.shape)}")
    if object_id.dtype.kind not in "ui":
        raise TypeError(f"object_id must be integers, got dtype {object_id.dtype}")
    model = xp.asarray(model)
    if model.ndim == 2:
        model = model[None]
    if model.ndim != 3 or model.shape[1:] != (4, 4) or model.shape[0] < 1:
        raise ValueError(f"model must have shape (K, 4, 4) with K >= 1, got {tuple(model.shape)}")
    view_proj = xp.asarray(view_proj)
    if view_proj.shape != (4, 4):
        raise ValueError(f"view_proj must have shape (4, 4), got {tuple(view_proj.shape)}")
    return (
        xp.ascontiguousarray(positions, dtype=xp.float32),
        xp.ascontiguousarray(object_id, dtype=xp.uint32),
        xp.ascontiguousarray(model, dtype=xp.float32),
        xp.ascontiguousarray(view_proj, dtype=xp.float32),
    )


class OutputBuffers:
    """Output arrays reused across frames; grown (never shrunk) when N increases."""

    def __init__(self, xp):
        self.xp = xp
        self._cap = -1
        self._xy = self._depth = self._vis = None

    def get(self, n: int) -> Projection:
        if n > self._cap:
            # Geometric growth: spawning a few vertices per frame does not reallocate
            # every frame.
            cap = max(n, 1, self._cap + self._cap // 2)
            self._xy = self.xp.empty((cap, 2), self.xp.float32)
            self._depth = self.xp.empty(cap, self.xp.float32)
            self._vis = self.xp.empty(cap, self.xp.bool_)
            self._cap = cap
        return Projection(self._xy[:n], self._depth[:n], self._vis[:n])


def window_coordinates(clip, size, out: Projection) -> Projection:
    """Points from float64 clip space (N, 4) to ``out`` (a Projection of float32 screen xy
    (N, 2), depth (N,), bool visible (N,)): the projection contract above, evaluated in
    double from the surface vertex stage's clip coordinates (so a frame with points and
    surfaces needs one pass over its vertices). The Numba and CUDA vertex stages do the
    same operations in the same order."""
    x, y, z, w = clip[:, 0], clip[:, 1], clip[:, 2], clip[:, 3]
    width, height = size
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        ok = ((w > np.float64(W_EPSILON)) & (w < np.inf) & (np.abs(x) <= w) & (np.abs(y) <= w)
              & (np.abs(z) <= w))
        inv = 1.0 / np.where(ok, w, 1.0)
        out.screen_xy[:, 0] = np.where(ok, (x * inv * 0.5 + 0.5) * width, 0.0)
        out.screen_xy[:, 1] = np.where(ok, (0.5 - y * inv * 0.5) * height, 0.0)
        out.depth[:] = np.where(ok, z * inv * 0.5 + 0.5, 1.0)
    out.visible[:] = ok
    return out
