"""View-frustum culling of whole objects before the vertex stage.

Each vertex run of the batch (``VertexBatch.runs``: vertices [start, stop) drawn with
model slot k; one run per node, one per instance) gets the axis-aligned bounding box of
its positions in the object's local frame, computed once per vertex revision. Per frame
the 8 corners of every box go to clip space with ``view_projection @ model[k]`` (one
vectorised product for all runs) and a run is culled when all 8 corners are outside
one of the planes ``x >= -w``, ``x <= w``, ``y >= -w``, ``y <= w``, ``z >= -w``,
``z <= w`` or ``w >= W_EPSILON``. The test is exact in homogeneous clip space (before
the divide): a plane's inequality is linear in (x, y, z, w) and the box's image is the
convex hull of its corners' images, so a culled run has no point inside the frustum
(Assarsson & Moeller, "Optimized view frustum culling algorithms for bounding boxes",
JGT 5(1), 2000, test the same plane/box condition). Runs of the null slot (free holes,
inactive instances: an all-zero matrix) have w = 0 everywhere and are culled.

Whoever skips a culled run's vertices keeps the frame right by marking them as the null
slot's are: all-zero ``clip`` rows (w = 0: dropped by every triangle and line setup and
by GL) and ``visible`` = False for points.
"""

from __future__ import annotations

import numpy as np

from .backends.base import W_EPSILON

__all__ = ["FrustumCuller", "mark_culled", "run_bounds", "visible_runs"]

# corner c of a box takes hi on axis a where bit a of c is set
_CORNER_BITS = ((np.arange(8)[:, None] >> np.arange(3)) & 1).astype(bool)


def run_bounds(positions, runs) -> np.ndarray:
    """(R, 2, 3) float64 local-frame [lo, hi] corners of the positions of each run.

    Args:
        positions: (N, 3) host positions, each object's local frame.
        runs: (R, 3) int64 (start, stop, k) rows, in order, not overlapping.

    Empty runs get lo = +inf, hi = -inf (``visible_runs`` culls them). Non-finite positions
    make their run's box non-finite, and such a run is never culled.
    """
    runs = np.asarray(runs, np.int64)
    out = np.empty((len(runs), 2, 3))
    out[:, 0], out[:, 1] = np.inf, -np.inf
    full = np.flatnonzero(runs[:, 1] > runs[:, 0])
    if len(full):
        p = np.asarray(positions)
        starts = runs[full, 0]
        with np.errstate(invalid="ignore"):
            out[full, 0] = np.minimum.reduceat(p, starts, axis=0)[:len(full)]
            out[full, 1] = np.maximum.reduceat(p, starts, axis=0)[:len(full)]
        # reduceat reduces each run up to the next start: the batch's runs tile [0, N),
        # and a gap (vertices of no run) would only enlarge the box before it
    return out


def visible_runs(bounds, runs, model, view_projection) -> np.ndarray:
    """(R,) bool: False where run j's box is entirely outside the view frustum.

    Args:
        bounds: (R, 2, 3) ``run_bounds``.
        runs: (R, 3) int64 (start, stop, k) rows; k indexes ``model``.
        model: (K, 4, 4) model matrices (local -> batch frame); k >= K is invisible.
        view_projection: (4, 4) batch frame -> clip space.
    """
    runs = np.asarray(runs, np.int64)
    model = np.asarray(model, np.float64)
    k = runs[:, 2]
    ok = (k >= 0) & (k < len(model)) & (runs[:, 1] > runs[:, 0])  # empty: nothing to draw
    mvp = np.asarray(view_projection, np.float64) @ model[np.where(ok, k, 0)]  # (R, 4, 4)
    corners = np.where(_CORNER_BITS[None], bounds[:, 1:2], bounds[:, 0:1])  # (R, 8, 3)
    with np.errstate(invalid="ignore", over="ignore"):
        c = corners @ mvp[:, :3, :3].transpose(0, 2, 1) + mvp[:, None, :3, 3]
        w = corners @ mvp[:, 3, :3][:, :, None] + mvp[:, None, 3, 3:4]  # (R, 8, 1)
        w = w[..., 0]
        outside = ((c[..., 0] < -w).all(1) | (c[..., 0] > w).all(1)
                   | (c[..., 1] < -w).all(1) | (c[..., 1] > w).all(1)
                   | (c[..., 2] < -w).all(1) | (c[..., 2] > w).all(1)
                   | (w < W_EPSILON).all(1))
    # NaN makes every comparison false: such a run stays visible (its vertices decide)
    return ok & ~outside


def mark_culled(clip, visible, runs):
    """Mark the vertices of ``runs`` ((C, 3) int64, the culled ones) as not drawn, in
    place: ``clip`` (N, 4) rows become 0 (or None), ``visible`` (N,) bool False (or
    None). NumPy; ``engine.render.backends.numba_kernels.mark_culled`` is the compiled
    twin."""
    runs = np.asarray(runs, np.int64)
    lens = runs[:, 1] - runs[:, 0]
    if not len(runs) or not lens.sum():
        return
    idx = np.repeat(runs[:, 0] - np.cumsum(lens) + lens, lens) + np.arange(lens.sum())
    if clip is not None:
        clip[idx] = 0.0
    if visible is not None:
        visible[idx] = False


class FrustumCuller:
    """The per-run boxes of one batch, kept while its vertices are unchanged, and the
    per-frame test."""

    def __init__(self):
        self._key = None
        self._runs = None
        self._bounds = None

    def visible(self, batch, positions, view_projection) -> np.ndarray:
        """(R,) bool over ``batch.runs``: the runs that can be inside the frustum.

        ``positions``: () -> the batch's (N, 3) host positions, called only when the
        boxes are (re)computed (a device batch is not copied every frame).
        """
        runs = batch.runs
        key = (batch.vertex_revision, batch.vertex_count)
        if (self._key != key or self._runs is None or self._runs.shape != runs.shape
                or not np.array_equal(self._runs, runs)):
            self._bounds = run_bounds(positions(), runs)
            self._key, self._runs = key, runs.copy()
        return visible_runs(self._bounds, runs, batch.model_host, view_projection)
