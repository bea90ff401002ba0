"""A bounding-volume hierarchy (BVH) over a triangle mesh, for exact ray casts and
shape queries against its triangles (Numba kernels, float64, the mesh's local frame).

Build: top-down over the triangles' axis-aligned bounding boxes, splitting each node at
the midpoint of its triangles' centroid bounds along their widest axis (a partition in
place; when every centroid falls on one side the node is split at the middle of its
range instead), down to ``LEAF_SIZE`` triangles per leaf. Nodes are stored so that both
children of a node follow it (``left``, ``left + 1``), which lets ``refit`` recompute
the boxes bottom-up in one reverse pass: when the vertex positions change but not the
faces (a posed, skinned or deformed mesh) the tree is refit in O(N) instead of rebuilt.

Rays: ``intersect`` walks the tree front to back with a stack, testing the ray against
boxes by the slab method (Kay and Kajiya, "Ray Tracing Complex Scenes", SIGGRAPH 1986)
and against triangles with the Moeller-Trumbore algorithm (T. Moeller, B. Trumbore,
"Fast, Minimum Storage Ray/Triangle Intersection", Journal of Graphics Tools 2(1),
1997): with e1 = v1 - v0, e2 = v2 - v0, p = d x e2, det = e1 . p, s = o - v0,
u = (s . p) / det, q = s x e1, v = (d . q) / det, t = (e2 . q) / det; a hit when
u >= 0, v >= 0, u + v <= 1 (each within ``BARY_EPS``, so a ray through a shared edge or
vertex is not lost to rounding) and t in [0, t_max]. Both sides of a triangle are hit.

``mesh_bvh(geometry)`` builds the BVH of a ``Mesh`` once and keeps it on the geometry,
keyed on ``geometry.revision``: a later revision refits it (same faces) or rebuilds it
(new faces). Skinned meshes will pass their posed positions the same way.
"""

from __future__ import annotations

import numba
import numpy as np

from ..arrays import to_host
from ..render.backends.kernel_cache import cached

__all__ = ["BVH", "LEAF_SIZE", "mesh_bvh"]

LEAF_SIZE = 4
BARY_EPS = 1e-9  # barycentric slack: rays through shared edges hit one of the faces


@numba.njit(cache=cached())
def _grown(a, cap, fill=0):
    """``a`` copied into a new array of ``cap`` rows, the new rows set to ``fill``."""
    out = np.full((cap,) + a.shape[1:], fill, a.dtype)
    out[: a.shape[0]] = a
    return out


@numba.njit(cache=cached())
def _build(lo, hi, centre, leaf_size):
    """Node arrays of the BVH of M triangle boxes (lo, hi (M, 3)) with centroids
    ``centre``: (node_lo (K, 3), node_hi (K, 3), left (K,) int64 first child or -1 for a
    leaf, start (K,), count (K,) the leaf's range of ``order``, order (M,) int64, depth:
    the number of levels)."""
    m = lo.shape[0]
    # A typical tree has about 2 M / leaf_size nodes; uneven splits can make up to
    # 2 M - 1, so the arrays grow (doubling) when they fill up.
    cap = max(1, 2 * ((m + leaf_size - 1) // leaf_size) + 1) * 2
    node_lo = np.empty((cap, 3))
    node_hi = np.empty((cap, 3))
    left = np.full(cap, -1, np.int64)
    start = np.zeros(cap, np.int64)
    count = np.zeros(cap, np.int64)
    order = np.arange(m)
    level = np.zeros(cap, np.int64)
    stack = np.empty(cap, np.int64)
    nodes, depth = 1, 1
    start[0], count[0] = 0, m
    sp = 0
    stack[sp] = 0
    sp += 1
    while sp > 0:
        sp -= 1
        k = stack[sp]
        s, n = start[k], count[k]
        # box of the node and bounds of its centroids
        blo = np.full(3, np.inf)
        bhi = np.full(3, -np.inf)
        clo = np.full(3, np.inf)
        chi = np.full(3, -np.inf)
        for i in range(s, s + n):
            t = order[i]
            for a in range(3):
                blo[a] = min(blo[a], lo[t, a])
                bhi[a] = max(bhi[a], hi[t, a])
                clo[a] = min(clo[a], centre[t, a])
                chi[a] = max(chi[a], centre[t, a])
        node_lo[k] = blo
        node_hi[k] = bhi
        depth = max(depth, level[k] + 1)
        if n <= leaf_size:
            continue
        axis = 0
        for a in range(1, 3):
            if chi[a] - clo[a] > chi[axis] - clo[axis]:
                axis = a
        mid = 0.5 * (clo[axis] + chi[axis])
        i, j = s, s + n - 1
        while i <= j:  # partition: centroids below mid first
            if centre[order[i], axis] < mid:
                i += 1
            else:
                order[i], order[j] = order[j], order[i]
                j -= 1
        split = i - s
        if split == 0 or split == n:
            split = n // 2
        if nodes + 2 > cap:
            cap *= 2
            node_lo = _grown(node_lo, cap)
            node_hi = _grown(node_hi, cap)
            left = _grown(left, cap, -1)
            start = _grown(start, cap)
            count = _grown(count, cap)
            level = _grown(level, cap)
            stack = _grown(stack, cap)
        left[k] = nodes
        start[nodes], count[nodes] = s, split
        start[nodes + 1], count[nodes + 1] = s + split, n - split
        level[nodes] = level[nodes + 1] = level[k] + 1
        stack[sp] = nodes
        stack[sp + 1] = nodes + 1
        sp += 2
        nodes += 2
    return node_lo[:nodes].copy(), node_hi[:nodes].copy(), left[:nodes].copy(), \
        start[:nodes].copy(), count[:nodes].copy(), order, depth


@numba.njit(cache=cached())
def _refit(node_lo, node_hi, left, start, count, order, lo, hi):
    """Recompute every node box from new triangle boxes, children before parents."""
    for k in range(len(left) - 1, -1, -1):
        c = left[k]
        if c < 0:
            for a in range(3):
                node_lo[k, a] = np.inf
                node_hi[k, a] = -np.inf
            for i in range(start[k], start[k] + count[k]):
                t = order[i]
                for a in range(3):
                    node_lo[k, a] = min(node_lo[k, a], lo[t, a])
                    node_hi[k, a] = max(node_hi[k, a], hi[t, a])
        else:
            for a in range(3):
                node_lo[k, a] = min(node_lo[c, a], node_lo[c + 1, a])
                node_hi[k, a] = max(node_hi[c, a], node_hi[c + 1, a])


@numba.njit(cache=cached(), inline="always")
def _slab(o, inv, dzero, lo, hi, tmax):
    """Entry distance of the ray into box [lo, hi] if it enters within [0, tmax], else
    inf. ``dzero[a]``: the direction's component a is zero (then the origin must lie in
    the slab)."""
    t0, t1 = 0.0, tmax
    for a in range(3):
        if dzero[a]:
            if o[a] < lo[a] or o[a] > hi[a]:
                return np.inf
            continue
        ta = (lo[a] - o[a]) * inv[a]
        tb = (hi[a] - o[a]) * inv[a]
        if ta > tb:
            ta, tb = tb, ta
        t0 = max(t0, ta)
        t1 = min(t1, tb)
        if t0 > t1:
            return np.inf
    return t0


@numba.njit(cache=cached(), inline="always")
def _moller_trumbore(o, d, v0, e1, e2, tmax):
    """(t, u, v) of the ray o + t d and the triangle (v0, v0 + e1, v0 + e2), t = inf for
    no hit in [0, tmax] (Moeller and Trumbore 1997; see the module docstring)."""
    px = d[1] * e2[2] - d[2] * e2[1]
    py = d[2] * e2[0] - d[0] * e2[2]
    pz = d[0] * e2[1] - d[1] * e2[0]
    det = e1[0] * px + e1[1] * py + e1[2] * pz
    if det == 0.0:
        return np.inf, 0.0, 0.0
    inv = 1.0 / det
    sx, sy, sz = o[0] - v0[0], o[1] - v0[1], o[2] - v0[2]
    u = (sx * px + sy * py + sz * pz) * inv
    if u < -BARY_EPS or u > 1.0 + BARY_EPS:
        return np.inf, 0.0, 0.0
    qx = sy * e1[2] - sz * e1[1]
    qy = sz * e1[0] - sx * e1[2]
    qz = sx * e1[1] - sy * e1[0]
    v = (d[0] * qx + d[1] * qy + d[2] * qz) * inv
    if v < -BARY_EPS or u + v > 1.0 + BARY_EPS:
        return np.inf, 0.0, 0.0
    t = (e2[0] * qx + e2[1] * qy + e2[2] * qz) * inv
    if t < 0.0 or t > tmax:
        return np.inf, 0.0, 0.0
    return t, u, v


@numba.njit(cache=cached())
def _intersect(origins, directions, tmax, node_lo, node_hi, left, start, count, order,
               v0, e1, e2, depth, out_t, out_tri):
    """Nearest hit of each ray: out_t (R,) distance in units of |direction| (inf for a
    miss), out_tri (R,) triangle index (-1 for a miss). A stack of depth + 1 entries
    suffices: each level leaves at most one sibling on it."""
    stack = np.empty(depth + 1, np.int64)
    inv = np.empty(3)
    dzero = np.zeros(3, np.bool_)
    for r in range(origins.shape[0]):
        o = origins[r]
        d = directions[r]
        for a in range(3):
            dzero[a] = d[a] == 0.0
            inv[a] = 0.0 if dzero[a] else 1.0 / d[a]
        best, best_tri = tmax[r], -1
        sp = 0
        if _slab(o, inv, dzero, node_lo[0], node_hi[0], best) < np.inf:
            stack[0] = 0
            sp = 1
        while sp > 0:
            sp -= 1
            k = stack[sp]
            c = left[k]
            if c < 0:
                for i in range(start[k], start[k] + count[k]):
                    t, _, _ = _moller_trumbore(o, d, v0[i], e1[i], e2[i], best)
                    if t < best:
                        best, best_tri = t, order[i]
                continue
            ta = _slab(o, inv, dzero, node_lo[c], node_hi[c], best)
            tb = _slab(o, inv, dzero, node_lo[c + 1], node_hi[c + 1], best)
            # push the far child first so the near one is visited first
            if ta <= tb:
                if tb < np.inf:
                    stack[sp] = c + 1
                    sp += 1
                if ta < np.inf:
                    stack[sp] = c
                    sp += 1
            else:
                if ta < np.inf:
                    stack[sp] = c
                    sp += 1
                stack[sp] = c + 1
                sp += 1
        out_t[r] = best if best_tri >= 0 else np.inf
        out_tri[r] = best_tri


@numba.njit(cache=cached())
def _query_box(lo, hi, node_lo, node_hi, left, start, count, order, depth, tri_lo, tri_hi,
               out):
    """Indices of the triangles whose boxes overlap [lo, hi] into ``out``; returns their
    number (may exceed len(out): then only the first len(out) are written)."""
    stack = np.empty(depth + 1, np.int64)
    stack[0] = 0
    sp, n = 1, 0
    while sp > 0:
        sp -= 1
        k = stack[sp]
        inside = True
        for a in range(3):
            if node_lo[k, a] > hi[a] or node_hi[k, a] < lo[a]:
                inside = False
        if not inside:
            continue
        c = left[k]
        if c < 0:
            for i in range(start[k], start[k] + count[k]):
                overlap = True
                for a in range(3):
                    if tri_lo[i, a] > hi[a] or tri_hi[i, a] < lo[a]:
                        overlap = False
                if overlap:
                    if n < out.shape[0]:
                        out[n] = order[i]
                    n += 1
        else:
            stack[sp] = c
            stack[sp + 1] = c + 1
            sp += 2
    return n


class BVH:
    """The BVH of a triangle mesh in its local frame.

    Args:
        positions: (N, 3) float vertex positions (local frame; converted to float64).
        faces: (M, 3) integer vertex indices.

    Attributes:
        positions (N, 3) float64, faces (M, 3) int64: the triangles it was built from.
        valid: (M,) bool, the triangles in the tree: those whose three vertices are
            finite (a triangle with a NaN or infinite vertex cannot be hit).
        node_count: number of nodes (about 2 M / LEAF_SIZE).
    """

    def __init__(self, positions, faces):
        self.faces = np.ascontiguousarray(np.asarray(faces, np.int64).reshape(-1, 3))
        self.positions = np.ascontiguousarray(np.asarray(positions, np.float64).reshape(-1, 3))
        self.valid = np.all(np.isfinite(self.positions), axis=1)[self.faces].all(axis=1)
        lo, hi = self._tri_boxes()
        used = np.flatnonzero(self.valid)
        ulo, uhi = np.ascontiguousarray(lo[used]), np.ascontiguousarray(hi[used])
        (self._lo, self._hi, self._left, self._start, self._count,
         order, self._depth) = _build(ulo, uhi, 0.5 * (ulo + uhi), LEAF_SIZE)
        self._order = used[order]  # leaf slots -> indices into ``faces``
        self._edges()

    @property
    def node_count(self) -> int:
        return len(self._left)

    def _tri_boxes(self):
        tri = self.positions[self.faces]
        return np.ascontiguousarray(tri.min(axis=1)), np.ascontiguousarray(tri.max(axis=1))

    def _edges(self):
        # Triangles in leaf order, so a leaf reads consecutive memory.
        tri = self.positions[self.faces[self._order]]
        self._v0 = np.ascontiguousarray(tri[:, 0])
        self._e1 = np.ascontiguousarray(tri[:, 1] - tri[:, 0])
        self._e2 = np.ascontiguousarray(tri[:, 2] - tri[:, 0])
        self._tri_lo = np.ascontiguousarray(tri.min(axis=1))
        self._tri_hi = np.ascontiguousarray(tri.max(axis=1))

    def refit(self, positions) -> None:
        """New vertex positions (N, 3), same faces: recompute the boxes bottom-up, O(N).
        Raises ValueError when the set of finite triangles changes (then build anew)."""
        p = np.ascontiguousarray(np.asarray(positions, np.float64).reshape(-1, 3))
        valid = np.all(np.isfinite(p), axis=1)[self.faces].all(axis=1)
        if p.shape != self.positions.shape or not np.array_equal(valid, self.valid):
            raise ValueError("refit needs the same vertices and finite triangles; build a "
                             "new BVH")
        self.positions = p
        lo, hi = self._tri_boxes()
        _refit(self._lo, self._hi, self._left, self._start, self._count, self._order, lo, hi)
        self._edges()

    def intersect(self, origins, directions, t_max=np.inf):
        """Nearest hits of R rays ``origins + t directions`` (both (R, 3) or (3,),
        local frame): (t (R,) float64, triangle (R,) int64). t is in units of the
        direction's length (the world distance for a unit world direction carried into
        the local frame by the inverse model matrix); a miss is t = inf, triangle -1.
        ``t_max`` (scalar or (R,)) bounds the search."""
        o = np.ascontiguousarray(np.atleast_2d(np.asarray(origins, np.float64)))
        d = np.ascontiguousarray(np.atleast_2d(np.asarray(directions, np.float64)))
        o, d = np.broadcast_arrays(o, d)
        o, d = np.ascontiguousarray(o), np.ascontiguousarray(d)
        tmax = np.ascontiguousarray(np.broadcast_to(np.asarray(t_max, np.float64), len(o)))
        t = np.empty(len(o))
        tri = np.empty(len(o), np.int64)
        if len(self._order) == 0:
            t[:], tri[:] = np.inf, -1
            return t, tri
        _intersect(o, d, tmax, self._lo, self._hi, self._left, self._start, self._count,
                   self._order, self._v0, self._e1, self._e2, self._depth, t, tri)
        return t, tri

    def query_box(self, lo, hi) -> np.ndarray:
        """(K,) int64 indices of the triangles whose bounding boxes overlap the box
        [lo, hi] ((3,) each, local frame): the candidates for a shape test."""
        lo = np.asarray(lo, np.float64)
        hi = np.asarray(hi, np.float64)
        if len(self._order) == 0:
            return np.zeros(0, np.int64)
        out = np.empty(256, np.int64)
        args = (self._lo, self._hi, self._left, self._start, self._count, self._order,
                self._depth, self._tri_lo, self._tri_hi)
        n = _query_box(lo, hi, *args, out)
        if n > len(out):
            out = np.empty(n, np.int64)
            _query_box(lo, hi, *args, out)
        return out[:n]

    def face_normals(self, triangles) -> np.ndarray:
        """(K, 3) float64 unit front-face normals (counter-clockwise) of ``triangles``."""
        tri = self.positions[self.faces[np.asarray(triangles, np.int64)]]
        n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
        return n / np.linalg.norm(n, axis=1, keepdims=True)


def mesh_bvh(geometry) -> BVH:
    """The BVH of a ``Mesh`` geometry's triangles in its local frame (positions +
    ``geometry.origin``), built on first use and kept on the geometry; when
    ``geometry.revision`` has changed since, it is refit (same faces array, vertex
    count and finite triangles) or rebuilt."""
    cached = getattr(geometry, "_bvh", None)
    if cached is not None and cached[0] == geometry.revision:
        return cached[1]
    positions = to_host(geometry.positions).astype(np.float64) + geometry.origin
    bvh = None
    if cached is not None and cached[2] is geometry.faces:
        try:
            cached[1].refit(positions)
            bvh = cached[1]
        except ValueError:  # other vertices or finite triangles: build anew
            bvh = None
    if bvh is None:
        bvh = BVH(positions, to_host(geometry.faces))
    # object.__setattr__: the cache is not vertex data, so it must not bump the revision
    object.__setattr__(geometry, "_bvh", (geometry.revision, bvh, geometry.faces))
    return bvh
