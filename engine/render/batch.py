"""VertexBatch: every visible node's geometry packed into contiguous arrays.

Layout (N vertices, K object slots, on the projector's array module, NumPy or CuPy)::
    positions  (N, 3) float32, each object's local frame
    colors     (N, 4) uint8 RGBA
    object_id  (N,)   uint32, the object's slot k into ``model``
    model      (K + 1, 4, 4) float32 model matrices; the last row is the *null slot*
    runs       (R, 3) int64 host array of (start, stop, k): vertices [start, stop) use slot k

Any structure change made directly on the scene graph (add/remove, reparent, hide/show,
geometry replaced) repacks the whole batch on the next ``sync``: the nodes in traversal
order, with a re-centred precision origin. Entities use ``spawn`` / ``despawn`` instead,
which change the batch in place without a repack:

- ``spawn(node, parent)`` gives each drawable node of the subtree a free model slot and
  a free vertex range (first fit in a sorted, merged free list; appended at the end
  otherwise); only its own vertices are written;
- ``despawn(node)`` gives both back: the slot's model row becomes all zeros and the
  vertex range is re-pointed to the *null slot*, whose matrix is all zeros too. A zero
  model matrix gives clip w = 0, which the projection contract (``engine.render.backends.base``:
  w <= 1e-7 is not visible) culls on every backend, so free vertices are never drawn and
  never produce NaN; a free range at the end shrinks N instead;
- capacity grows geometrically (x1.5, at least 1,024 vertices / 64 slots), so the copy
  on growth is amortised O(1) per spawned vertex; when free holes exceed half of the
  packed range the batch compacts itself with one repack (amortised over the frees).

Per frame only the model matrices whose world matrix changed are recomputed and the
contiguous row range covering them is uploaded.

Precision: model matrices are ``T(-origin) @ world @ T(geometry.origin)`` composed in
float64 and then cast; ``view_projection(camera)`` folds ``T(origin)`` back in, in
float64. ``origin`` starts at the centre of the scene's bounds (each full repack) and
moves to the camera whenever the camera is more than ``REBASE_NEAR_FACTOR`` near-plane
distances away from it (camera-relative rendering). A float32 translation t carries an
error of about ``|t| * 2**-24``, so an object at distance d >= near from the camera is off by
at most ~(d + 1000 near) * 6e-8 / d radians: a few hundredths of a pixel. Points 0.01
apart at x = 596,650 therefore stay 0.01 apart in view space.
"""

from __future__ import annotations

import bisect
from collections import Counter

import numpy as np

from ..scene.camera import Camera
from ..scene.graph import Node, transform_epoch
from ..scene.transforms import translation_matrix

DEFAULT_COLOR = np.array([255, 255, 255, 255], np.uint8)
MIN_VERTEX_GROWTH = 1024
MIN_SLOT_GROWTH = 64
REBASE_NEAR_FACTOR = 1000.0


def _to_module(a, xp):
    """Move ``a`` to the array module ``xp`` (no-op when it is already there)."""
    is_device = hasattr(a, "__cuda_array_interface__")
    if xp is np:
        return a.get() if is_device else a
    return a if is_device else xp.asarray(a)


def _grown(capacity: int, needed: int, minimum: int) -> int:
    return max(needed, capacity + capacity // 2, minimum)


class VertexBatch:
    """Packs ``root``'s visible geometry for the projector whose array module is ``xp``.

    Callers only read the attributes below.

    Attributes:
        slot_nodes: list of length K; ``slot_nodes[k]`` is the node in model slot k, or
            None for a free slot. ``object_id`` values index this list (the null slot K
            has no node).
        ranges: dict node -> (start, stop) vertex range of a live node.
        repacks: number of full repacks so far; spawns / despawns: incremental changes;
            growths: capacity reallocations (vertex arrays or model slots).
        vertex_revision: bumped whenever positions, colors, object_id or point sizes
            change, so presenters holding copies (GL buffers) know to refresh them.
    """

    def __init__(self, root: Node, xp=np):
        self.root = root
        self.xp = xp
        self._packed_rev = None
        self._epoch = None
        self.origin = np.zeros(3)
        self.repacks = 0
        self.uploads = 0
        self.spawns = 0
        self.despawns = 0
        self.growths = 0
        self.vertex_revision = 0
        self._synced_revision = -1
        self._size_device = None  # (vertex_revision, per-vertex sizes on xp)
        self._reset(0, 0)

    # --- storage ---------------------------------------------------------------------
    def _reset(self, vertex_capacity: int, slot_capacity: int):
        xp = self.xp
        self._vcap, self._kcap = vertex_capacity, slot_capacity
        self._used = 0
        self._pos = xp.zeros((vertex_capacity, 3), np.float32)
        self._col = xp.zeros((vertex_capacity, 4), np.uint8)
        self._oid = xp.full(vertex_capacity, slot_capacity, np.uint32)
        self._size = np.ones(vertex_capacity, np.float32)  # host: per-vertex point size
        self._model_host = np.zeros((slot_capacity + 1, 4, 4), np.float32)
        self.model = xp.asarray(self._model_host)
        self.slot_nodes: list[Node | None] = [None] * slot_capacity
        self._slot_geo: list[object] = [None] * slot_capacity
        self._free_slots = list(range(slot_capacity - 1, -1, -1))  # pop() gives lowest
        self._stamps = np.full(slot_capacity, -1, np.int64)
        self.ranges: dict[Node, tuple[int, int]] = {}
        self._slot_of: dict[Node, int] = {}
        self._holes: list[tuple[int, int]] = []  # sorted, disjoint, merged (start, stop)
        self._hole_total = 0
        self._sizes_in_use: Counter = Counter()
        self._dirty_rows: set[int] = set()
        self._runs = np.zeros((0, 3), np.int64)
        self._runs_stale = False

    @property
    def model_host(self) -> np.ndarray:
        """(K + 1, 4, 4) float32 host copy of ``model`` (kept in step by ``sync``): the
        host side of a frame reads it instead of copying the device array back."""
        return self._model_host

    @property
    def null_slot(self) -> int:
        """Index of the all-zero model row that free vertices point at."""
        return self._kcap

    @property
    def positions(self):
        return self._pos[: self._used]

    @property
    def colors(self):
        return self._col[: self._used]

    @property
    def object_id(self):
        return self._oid[: self._used]

    @property
    def point_size(self):
        """float when every live geometry has the same point size, else (N,) float32 per
        vertex on the batch's array module. The per-vertex array is built (uploaded, on
        the GPU) once per ``vertex_revision`` and the same array is returned until the
        revision changes: pass ``vertex_revision`` as the rasterizer's
        ``sizes_revision`` so it converts the sizes once too."""
        if len(self._sizes_in_use) <= 1:
            return float(next(iter(self._sizes_in_use), 1.0))
        cached = self._size_device
        if cached is None or cached[0] != self.vertex_revision:
            sizes = self._size[: self._used]
            cached = self._size_device = (self.vertex_revision,
                                          sizes if self.xp is np else self.xp.asarray(sizes))
        return cached[1]

    @property
    def vertex_count(self) -> int:
        """Vertices the projector processes (live vertices plus free holes)."""
        return self._used

    @property
    def live_vertex_count(self) -> int:
        return self._used - self._hole_total

    @property
    def object_count(self) -> int:
        return len(self._slot_of)

    @property
    def nodes(self) -> list[Node]:
        """Live nodes in slot order."""
        return [n for n in self.slot_nodes if n is not None]

    def node_for_vertex(self, index: int) -> Node | None:
        """The node owning packed vertex ``index`` (None for a free vertex)."""
        k = int(self._oid[index])
        return self.slot_nodes[k] if k < self._kcap else None

    # --- synchronisation -------------------------------------------------------------
    def sync(self, camera: Camera | None = None) -> bool:
        """Bring device arrays up to date with the scene.

        Repacks when the scene's structure changed other than through ``spawn`` /
        ``despawn``; with ``camera``, moves the precision origin to the camera when it is
        far from it (all model matrices are then recomputed once); then uploads the model
        matrices that changed.

        Returns True when vertex data changed since the previous sync (repack, spawn or
        despawn): copies of ``positions``/``colors``/``object_id`` a presenter keeps (GL
        buffers) are then stale.
        """
        if self._packed_rev != self.root.structure_revision:
            self._pack(self._drawable())
            self._packed_rev = self.root.structure_revision
        changed = self.vertex_revision != self._synced_revision
        self._synced_revision = self.vertex_revision
        if camera is not None:
            eye = camera.world_position
            if np.linalg.norm(eye - self.origin) > REBASE_NEAR_FACTOR * camera.near:
                self.origin = eye
                self._stamps[:] = -1
                self._epoch = None
        if changed or self._dirty_rows or self._epoch != transform_epoch():
            self._update_models()
            self._epoch = transform_epoch()
        return changed

    def repack(self):
        """Pack every visible node afresh in traversal order (no holes, new origin)."""
        self._pack(self._drawable())
        self._packed_rev = self.root.structure_revision
        self._update_models()
        self._epoch = transform_epoch()

    def _drawable(self) -> list[Node]:
        return [n for n in self.root.traverse(visible_only=True)
                if n.geometry is not None and n.geometry.vertex_count > 0]

    # --- entities: incremental structure changes ---------------------------------------
    def spawn(self, node: Node, parent: Node | None = None) -> Node:
        """Attach ``node`` under ``parent`` (default: the root) and give every drawable
        node of its subtree a model slot and a vertex range, without a repack.

        Cost: O(vertices of the subtree) plus amortised growth. When other structure
        changes are pending since the last sync, the next sync repacks as usual (which
        includes ``node``). Returns ``node``. Raises ValueError when ``parent`` is not in
        this batch's tree, TypeError/ValueError from ``Node.add``.
        """
        parent = self.root if parent is None else parent
        if not self._in_tree(parent):
            raise ValueError(f"spawn: parent {parent.name!r} is not under {self.root.name!r}")
        clean = self._packed_rev == self.root.structure_revision and self.repacks > 0
        if clean:
            # Re-spawning (reparenting) a node that is already drawn: free its old slots
            # and ranges first, or they would stay drawn at the old pose and leak.
            for n in node.traverse():
                if n in self._slot_of:
                    self._despawn(n)
        parent.add(node)
        if not clean:
            return node
        if self._shown(parent):
            for n in node.traverse(visible_only=True):
                if n.geometry is not None and n.geometry.vertex_count > 0:
                    self._spawn(n)
        self._commit_incremental()
        return node

    def despawn(self, node: Node) -> Node:
        """Detach ``node`` from its parent and free the slots and vertex ranges of its
        subtree, without a repack (freed vertices point at the all-zero null slot).

        Returns ``node``. Raises ValueError when ``node`` is not under this batch's root.
        """
        if node is self.root or node.parent is None or not self._in_tree(node):
            raise ValueError(f"despawn: {node.name!r} is not a spawned node under "
                             f"{self.root.name!r}")
        clean = self._packed_rev == self.root.structure_revision and self.repacks > 0
        node.parent.remove(node)
        if not clean:
            return node
        for n in node.traverse():
            if n in self._slot_of:
                self._despawn(n)
        self._commit_incremental()
        return node

    def _in_tree(self, node: Node) -> bool:
        while node is not None:
            if node is self.root:
                return True
            node = node.parent
        return False

    def _shown(self, node: Node) -> bool:
        """True when ``node`` and all its ancestors are visible (as traverse sees it)."""
        while node is not None:
            if not node.visible:
                return False
            node = node.parent
        return True

    def _commit_incremental(self):
        if self._hole_total > max(self._used // 2, MIN_VERTEX_GROWTH):
            self._pack(self._drawable())  # compaction: amortised over the frees before it
        else:
            self._runs_stale = True
            self.vertex_revision += 1
        self._packed_rev = self.root.structure_revision

    def _pack(self, nodes: list[Node]):
        xp = self.xp
        bounds = self.root.bounds() if hasattr(self.root, "bounds") else None
        self.origin = np.zeros(3) if bounds is None else (bounds[0] + bounds[1]) * 0.5
        k = len(nodes)
        counts = np.array([n.geometry.vertex_count for n in nodes], np.int64)
        n_total = int(counts.sum()) if k else 0
        self._reset(n_total, k)
        if k:
            starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
            geos = [n.geometry for n in nodes]
            self._pos = xp.ascontiguousarray(
                xp.concatenate([_to_module(g.positions, xp) for g in geos]))
            self._col = xp.ascontiguousarray(xp.concatenate([
                _to_module(g.colors, xp) if g.colors is not None
                else xp.broadcast_to(xp.asarray(DEFAULT_COLOR), (g.vertex_count, 4))
                for g in geos]))
            self._oid = xp.asarray(np.repeat(np.arange(k, dtype=np.uint32), counts))
            sizes = np.array([g.point_size for g in geos], np.float32)
            self._size = np.repeat(sizes, counts)
            self._sizes_in_use = Counter(sizes.tolist())
            self._free_slots = []
            for slot, (node, s, c) in enumerate(zip(nodes, starts, counts)):
                self.slot_nodes[slot] = node
                self._slot_geo[slot] = node.geometry
                self._slot_of[node] = slot
                self.ranges[node] = (int(s), int(s + c))
            self._used = n_total
        self._runs_stale = True
        self.repacks += 1
        self.vertex_revision += 1

    # --- incremental spawn / despawn ---------------------------------------------------
    def _alloc_range(self, n: int) -> int:
        for i, (s, e) in enumerate(self._holes):
            if e - s >= n:
                if e - s == n:
                    del self._holes[i]
                else:
                    self._holes[i] = (s + n, e)
                self._hole_total -= n
                return s
        start = self._used
        if start + n > self._vcap:
            self._grow_vertices(_grown(self._vcap, start + n, MIN_VERTEX_GROWTH))
        self._used = start + n
        return start

    def _free_range(self, start: int, stop: int):
        self._hole_total += stop - start
        holes = self._holes
        i = bisect.bisect_left(holes, (start, stop))
        holes.insert(i, (start, stop))
        if i + 1 < len(holes) and holes[i][1] == holes[i + 1][0]:
            holes[i] = (start, holes.pop(i + 1)[1])
        if i > 0 and holes[i - 1][1] == holes[i][0]:
            holes[i - 1] = (holes[i - 1][0], holes.pop(i)[1])
        # A hole at the end shrinks the packed range instead (fewer vertices projected).
        if holes and holes[-1][1] == self._used:
            s, e = holes.pop()
            self._hole_total -= e - s
            self._used = s

    def _grow_vertices(self, cap: int):
        xp, n = self.xp, self._used
        pos = xp.zeros((cap, 3), np.float32)
        col = xp.zeros((cap, 4), np.uint8)
        oid = xp.full(cap, self._kcap, np.uint32)
        size = np.ones(cap, np.float32)
        pos[:n], col[:n], oid[:n], size[:n] = self._pos[:n], self._col[:n], self._oid[:n], \
            self._size[:n]
        self._pos, self._col, self._oid, self._size, self._vcap = pos, col, oid, size, cap
        self.growths += 1

    def _alloc_slot(self) -> int:
        if not self._free_slots:
            old_null, cap = self._kcap, _grown(self._kcap, self._kcap + 1, MIN_SLOT_GROWTH)
            host = np.zeros((cap + 1, 4, 4), np.float32)
            host[:old_null] = self._model_host[:old_null]
            self._model_host = host
            self.model = self.xp.asarray(host)
            # The null slot moves to the new last row: re-point free vertices to it.
            oid = self._oid
            oid[oid == old_null] = cap
            self.slot_nodes += [None] * (cap - old_null)
            self._slot_geo += [None] * (cap - old_null)
            self._stamps = np.concatenate([self._stamps, np.full(cap - old_null, -1, np.int64)])
            self._free_slots = list(range(cap - 1, old_null - 1, -1))
            self._kcap = cap
            self.growths += 1
        return self._free_slots.pop()

    def _spawn(self, node: Node):
        xp, g = self.xp, node.geometry
        n = g.vertex_count
        k = self._alloc_slot()
        s = self._alloc_range(n)
        self._pos[s:s + n] = _to_module(g.positions, xp)
        if g.colors is not None:
            self._col[s:s + n] = _to_module(g.colors, xp)
        else:
            self._col[s:s + n] = xp.asarray(DEFAULT_COLOR)
        self._oid[s:s + n] = k
        self._size[s:s + n] = g.point_size
        self._sizes_in_use[float(np.float32(g.point_size))] += 1
        self.slot_nodes[k], self._slot_geo[k] = node, g
        self._slot_of[node] = k
        self.ranges[node] = (s, s + n)
        self._stamps[k] = -1
        self._dirty_rows.add(k)
        self.spawns += 1

    def _despawn(self, node: Node):
        k = self._slot_of.pop(node)
        s, e = self.ranges.pop(node)
        self._oid[s:e] = self._kcap
        size = float(np.float32(self._slot_geo[k].point_size))
        self._sizes_in_use[size] -= 1
        if self._sizes_in_use[size] <= 0:
            del self._sizes_in_use[size]
        self._free_range(s, e)
        self.slot_nodes[k] = self._slot_geo[k] = None
        self._model_host[k] = 0.0
        self._stamps[k] = -1
        self._dirty_rows.add(k)
        self._free_slots.append(k)
        self.despawns += 1

    @property
    def runs(self) -> np.ndarray:
        """(R, 3) int64 (start, stop, k) rows covering [0, N) in order; free holes use the
        null slot. Rebuilt lazily, once per frame at most, after spawns/despawns."""
        if self._runs_stale:
            rows = [(s, e, self._slot_of[n]) for n, (s, e) in self.ranges.items()]
            rows += [(s, e, self._kcap) for s, e in self._holes]
            rows.sort()
            self._runs = np.array(rows, np.int64).reshape(-1, 3)
            self._runs_stale = False
        return self._runs

    # --- per-frame model matrices ------------------------------------------------------
    def _update_models(self):
        origin = self.origin[:, None]
        changed = self._dirty_rows
        for node, k in self._slot_of.items():
            world = node.world_matrix
            if node.world_stamp != self._stamps[k]:
                g = self._slot_geo[k]
                # T(-origin) @ world @ T(g.origin) without building the translation
                # matrices: this loop runs for every moved object every frame.
                m = world.copy()
                if g.origin.any():
                    m[:, 3] += m[:, :3] @ g.origin
                m[:3] -= origin * m[3]
                self._model_host[k] = m
                self._stamps[k] = node.world_stamp
                changed.add(k)
        if not changed:
            return
        lo, hi = min(changed), max(changed) + 1
        if self.xp is np:
            self.model = self._model_host
        else:
            self.model[lo:hi].set(self._model_host[lo:hi])
        self._dirty_rows = set()
        self.uploads += 1

    def view_projection(self, camera: Camera) -> np.ndarray:
        """(4, 4) float32 world-relative-to-origin -> clip matrix for ``camera``,
        composed in float64: ``P @ V @ T(origin)``."""
        return (camera.view_projection_matrix @ translation_matrix(self.origin)).astype(np.float32)
