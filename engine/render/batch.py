"""VertexBatch: every visible node's geometry packed into contiguous arrays.

Layout (N vertices, K object slots, on the projector's array module, NumPy or CuPy)::

    positions  (N, 3) float32, each object's local frame
    colors     (N, 4) uint8 RGBA (geometry colours times the node's ``color`` tint and,
               for instances, the instance's colour)
    object_id  (N,)   uint32, the object's slot k into ``model``
    model      (K + 1, 4, 4) float32 model matrices; the last row is the *null slot*
    runs       (R, 3) int64 host array of (start, stop, k): vertices [start, stop) use slot k

An ordinary node with geometry takes one slot and one vertex range. An
``engine.scene.Instances`` node takes one slot per instance and one range holding its
geometry once per instance (instance i at ``start + i * n``), so the projection stays
one launch over every vertex; inactive instances get an all-zero model matrix (clip
w = 0), which every backend culls.

Any structure change made directly on the scene graph (add/remove, reparent, hide/show,
geometry replaced) repacks the whole batch on the next ``sync``: the nodes in traversal
order, with a re-centred precision origin. Entities use ``spawn`` / ``despawn`` instead,
which change the batch in place without a repack:

- ``spawn(node, parent)`` gives each drawable node of the subtree free model slots and
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
  An Instances node that grows past its capacity is re-laid out the same way (its old
  range freed, a new one allocated), never by a repack.

Per frame (``sync``) the model matrices are recomputed with array operations only, never
a Python loop over objects: the batch keeps the visible hierarchy as flat arrays (table
row, parent index, level per node), gathers the revision stamps of every node's local
transform from the scene graph's transform table in one read, computes the local
matrices of the changed ones at once, then the world matrices level by level
(``world = parent_world @ local`` for each level's changed nodes in one batched matmul),
and the model matrices of the slots whose world changed. Instances nodes compare their
arrays with what was drawn last. The contiguous row range covering the changed slots is
uploaded in one copy.

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

from ..arrays import to_host
from ..scene.camera import Camera
from ..scene.graph import _TABLE, Node, appearance_epoch, transform_epoch
from ..scene.instances import Instances
from ..scene.transforms import translation_matrix, trs_matrices

DEFAULT_COLOR = np.array([255, 255, 255, 255], np.uint8)
MIN_VERTEX_GROWTH = 1024
MIN_SLOT_GROWTH = 64
MIN_NODE_GROWTH = 64
REBASE_NEAR_FACTOR = 1000.0


def _to_module(a, xp):
    """Move ``a`` to the array module ``xp`` (no-op when it is already there)."""
    is_device = hasattr(a, "__cuda_array_interface__")
    if xp is np:
        return to_host(a)
    return a if is_device else xp.asarray(a)


_KERNELS: list = []


def transform_kernels():
    """The Numba transform kernels (``engine.render.backends.numba_transforms``), or
    None when Numba is not installed (the batch then uses its NumPy path)."""
    if not _KERNELS:
        try:
            from .backends import numba_transforms
        except ImportError:
            numba_transforms = None
        _KERNELS.append(numba_transforms)
    return _KERNELS[0]


def _grown(capacity: int, needed: int, minimum: int) -> int:
    return max(needed, capacity + capacity // 2, minimum)


class _Instanced:
    """What the batch drew for one Instances node: its slots and the arrays' values."""

    __slots__ = ("active", "color_rev", "colors", "layout_rev", "slots", "trs")

    def __init__(self, node: Instances, slots: np.ndarray):
        self.slots = slots
        k = len(slots)
        self.trs = np.full((k, 10), np.nan)  # NaN never equals: first sync computes all
        self.active = np.zeros(k, bool)
        self.colors = node.colors.copy()
        self.layout_rev = node._layout_rev
        self.color_rev = node._color_rev


class VertexBatch:
    """Packs ``root``'s visible geometry for the projector whose array module is ``xp``.

    Callers only read the attributes below.

    Attributes:
        slot_nodes: list of length K; ``slot_nodes[k]`` is the node in model slot k, or
            None for a free slot (every slot of an Instances node names that node; see
            ``instance_for_vertex``). ``object_id`` values index this list (the null
            slot K has no node).
        ranges: dict node -> (start, stop) vertex range of a live node (all of an
            Instances node's copies: ``copies(node)`` of its geometry).
        repacks: number of full repacks so far; spawns / despawns: incremental changes;
            growths: capacity reallocations (vertex arrays or model slots).
        vertex_revision: bumped whenever positions, colors, object_id or point sizes
            change, so presenters holding copies (GL buffers) know to refresh them.
        layout_revision: bumped when the vertex layout changes (positions, object ids,
            ranges; not colours): what the primitive assembly depends on.
        transforms: "numba" or "numpy": which implementation updates the matrices each
            frame (the constructor's ``transforms``: "auto" takes Numba when installed;
            both give the same matrices to rounding).
    """

    def __init__(self, root: Node, xp=np, transforms: str = "auto"):
        if transforms not in ("auto", "numba", "numpy"):
            raise ValueError(f"transforms must be 'auto', 'numba' or 'numpy', got {transforms!r}")
        self.root = root
        self.xp = xp
        kernels = transform_kernels() if transforms != "numpy" else None
        if transforms == "numba" and kernels is None:
            raise ValueError("transforms='numba' needs Numba, which is not installed")
        self._kernels = kernels
        self.transforms = "numba" if kernels is not None else "numpy"
        self._packed_rev = None
        self._epoch = None
        self._appearance = appearance_epoch()
        self.origin = np.zeros(3)
        self.repacks = 0
        self.uploads = 0
        self.spawns = 0
        self.despawns = 0
        self.growths = 0
        self.vertex_revision = 0
        self.layout_revision = 0
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
        self._slot_h = np.full(slot_capacity, -1, np.int64)  # hierarchy index of the node
        self._slot_inst = np.full(slot_capacity, -1, np.int64)  # instance index, or -1
        self._slot_go = np.zeros((slot_capacity, 3))  # geometry origin (float64)
        self._slot_dirty = np.zeros(slot_capacity, bool)  # recompute even if nothing moved
        self._free_slots = list(range(slot_capacity - 1, -1, -1))  # pop() gives lowest
        self.ranges: dict[Node, tuple[int, int]] = {}
        self._slot_of: dict[Node, int] = {}
        self._inst: dict[Node, _Instanced] = {}
        self._color_revs: dict[Node, int] = {}
        self._holes: list[tuple[int, int]] = []  # sorted, disjoint, merged (start, stop)
        self._hole_total = 0
        self._sizes_in_use: Counter = Counter()
        self._upload = [slot_capacity + 1, -1]  # model rows [lo, hi] changed, not uploaded
        self._runs = np.zeros((0, 3), np.int64)
        self._runs_stale = False
        self._h_reset(0)

    # --- the flattened hierarchy -----------------------------------------------------
    def _h_reset(self, capacity: int):
        capacity = max(capacity, 1)
        self._h_nodes: list[Node | None] = []
        self._h_index: dict[Node, int] = {}
        self._h_rows = np.zeros(capacity, np.int64)
        self._h_parent = np.full(capacity, -1, np.int64)
        self._h_level = np.zeros(capacity, np.int64)
        self._h_seen = np.full(capacity, -1, np.int64)
        self._h_alive = np.zeros(capacity, bool)
        self._h_local = np.zeros((capacity, 4, 4))
        self._h_world = np.zeros((capacity, 4, 4))
        self._h_dead = 0
        self._levels: list[np.ndarray] | None = None

    def _h_add(self, node: Node) -> int:
        """Append ``node`` (its parent must be in the hierarchy unless it is the root)."""
        i = len(self._h_nodes)
        if i == len(self._h_rows):
            cap = _grown(i, i + 1, MIN_NODE_GROWTH)
            for name in ("_h_rows", "_h_parent", "_h_level", "_h_seen", "_h_alive",
                         "_h_local", "_h_world"):
                old = getattr(self, name)
                new = np.zeros((cap,) + old.shape[1:], old.dtype)
                new[:i] = old[:i]
                setattr(self, name, new)
        parent = -1 if node is self.root else self._h_index[node.parent]
        self._h_nodes.append(node)
        self._h_index[node] = i
        self._h_rows[i] = node._row
        self._h_parent[i] = parent
        self._h_level[i] = 0 if parent < 0 else self._h_level[parent] + 1
        self._h_seen[i] = -1  # compute its local matrix on the next sync
        self._h_alive[i] = True
        self._levels = None
        return i

    def _h_kill(self, node: Node):
        i = self._h_index.pop(node, None)
        if i is not None:
            self._h_alive[i] = False
            self._h_nodes[i] = None
            self._h_dead += 1
            self._levels = None

    def _h_rebuild(self):
        """The hierarchy afresh from the scene graph (compaction of dead entries)."""
        self._h_reset(len(self._h_index) + 1)
        self._h_add_subtree(self.root)
        for k, node in enumerate(self.slot_nodes):
            if node is not None:
                self._slot_h[k] = self._h_index[node]
                self._slot_dirty[k] = True

    def _h_add_subtree(self, top: Node):
        for node in top.traverse(visible_only=True):
            self._h_add(node)

    def _level_groups(self) -> list[np.ndarray]:
        """Indices of the live non-root entries grouped by depth, shallowest first."""
        if self._levels is None:
            m = len(self._h_nodes)
            alive = np.flatnonzero(self._h_alive[:m])
            lv = self._h_level[alive]
            order = np.argsort(lv, kind="stable")
            alive, lv = alive[order], lv[order]
            cuts = np.flatnonzero(np.diff(lv)) + 1
            self._levels = [g for g in np.split(alive, cuts)
                            if len(g) and self._h_level[g[0]] > 0]
        return self._levels

    # --- read-only views -------------------------------------------------------------
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
        """Model slots in use: one per ordinary node, one per instance of Instances nodes
        (active or not)."""
        return len(self._slot_of) + sum(len(b.slots) for b in self._inst.values())

    @property
    def nodes(self) -> list[Node]:
        """Live nodes in slot order (an Instances node once)."""
        seen, out = set(), []
        for n in self.slot_nodes:
            if n is not None and n not in seen:
                seen.add(n)
                out.append(n)
        return out

    def copies(self, node: Node) -> int:
        """How many copies of ``node``'s geometry its range holds: the instance capacity
        for an Instances node, 1 otherwise. Raises KeyError for a node not in the batch."""
        if node in self._inst:
            return len(self._inst[node].slots)
        if node in self._slot_of:
            return 1
        raise KeyError(f"{node.name!r} is not drawn by this batch")

    def slots_of(self, node: Node) -> np.ndarray:
        """(copies,) int64 model slots of ``node`` (instance i uses ``slots_of(node)[i]``)."""
        if node in self._inst:
            return self._inst[node].slots.copy()
        return np.array([self._slot_of[node]], np.int64)

    def node_for_vertex(self, index: int) -> Node | None:
        """The node owning packed vertex ``index`` (None for a free vertex)."""
        k = int(self._oid[index])
        return self.slot_nodes[k] if k < self._kcap else None

    def instance_for_vertex(self, index: int) -> int | None:
        """The instance index of packed vertex ``index`` when it belongs to an Instances
        node, else None."""
        k = int(self._oid[index])
        if k >= self._kcap or self._slot_inst[k] < 0:
            return None
        return int(self._slot_inst[k])

    # --- synchronisation -------------------------------------------------------------
    def sync(self, camera: Camera | None = None) -> bool:
        """Bring device arrays up to date with the scene.

        Repacks when the scene's structure changed other than through ``spawn`` /
        ``despawn``; re-lays out Instances nodes that grew; with ``camera``, moves the
        precision origin to the camera when it is far from it (all model matrices are
        then recomputed once); then recomputes and uploads the model matrices that
        changed, and rewrites the vertex colours of nodes whose ``color`` changed.

        Returns True when vertex data changed since the previous sync (repack, spawn or
        despawn, colours): copies of ``positions``/``colors``/``object_id`` a presenter
        keeps (GL buffers) are then stale.

        Raises ValueError naming the node and instance when an Instances node holds a
        non-finite value or a zero quaternion.
        """
        if self._packed_rev != self.root.structure_revision:
            self._pack(self._drawable())
            self._packed_rev = self.root.structure_revision
        for node, b in list(self._inst.items()):
            if b.layout_rev != node._layout_rev:
                self._relayout(node)
        if self._appearance != appearance_epoch():
            self._update_colors()
            self._appearance = appearance_epoch()
        for node, b in self._inst.items():
            if b.color_rev != node._color_rev or not np.array_equal(b.colors, node.colors):
                self._update_instance_colors(node, b)
        changed = self.vertex_revision != self._synced_revision
        self._synced_revision = self.vertex_revision
        rebase = False
        if camera is not None:
            eye = camera.world_position
            if np.linalg.norm(eye - self.origin) > REBASE_NEAR_FACTOR * camera.near:
                self.origin = np.array(eye)
                rebase = True
        if rebase or self._epoch != transform_epoch() or self._slot_dirty.any() or self._inst:
            self._update_models(rebase)
            self._epoch = transform_epoch()
        return changed

    def _drawable(self) -> list[Node]:
        return [n for n in self.root.traverse(visible_only=True)
                if n.geometry is not None and n.geometry.vertex_count > 0
                and (not isinstance(n, Instances) or n.capacity > 0)]

    # --- entities: incremental structure changes ---------------------------------------
    def spawn(self, node: Node, parent: Node | None = None) -> Node:
        """Attach ``node`` under ``parent`` (default: the root) and give every drawable
        node of its subtree model slots and a vertex range, without a repack.

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
                if n in self.ranges:
                    self._despawn(n)
                self._h_kill(n)
        parent.add(node)
        if not clean:
            return node
        if self._shown(parent):
            self._h_add_subtree(node)
            for n in node.traverse(visible_only=True):
                if n.geometry is not None and n.geometry.vertex_count > 0 and (
                        not isinstance(n, Instances) or n.capacity > 0):
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
            if n in self.ranges:
                self._despawn(n)
            self._h_kill(n)
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
            if self._h_dead > max(MIN_NODE_GROWTH, len(self._h_nodes) // 2):
                self._h_rebuild()
            self._runs_stale = True
            self.vertex_revision += 1
            self.layout_revision += 1
        self._packed_rev = self.root.structure_revision

    # --- packing -----------------------------------------------------------------------
    def _base_colors(self, g):
        xp = self.xp
        if g.colors is not None:
            return _to_module(g.colors, xp)
        return xp.broadcast_to(xp.asarray(DEFAULT_COLOR), (g.vertex_count, 4))

    def _node_colors(self, node: Node, instances=None):
        """(copies * n, 4) uint8 vertex colours of ``node`` (of ``instances`` only, for
        an Instances node): geometry colours x node tint x instance colours."""
        xp = self.xp
        base = self._base_colors(node.geometry)
        tint = node.color
        if isinstance(node, Instances):
            c = node.colors if instances is None else node.colors[instances]
            c = c.astype(np.float64)
            if tint is not None:
                c = c * np.asarray(tint)
            if np.all(c == 1.0):
                return xp.tile(base, (len(c), 1))
            out = xp.rint(base[None].astype(np.float32) * xp.asarray(c, np.float32)[:, None])
            return xp.clip(out, 0, 255).astype(np.uint8).reshape(-1, 4)
        if tint is None:
            return base
        out = xp.rint(base.astype(np.float32) * xp.asarray(tint, np.float32))
        return xp.clip(out, 0, 255).astype(np.uint8)

    def _pack(self, nodes: list[Node]):
        xp = self.xp
        bounds = self.root.bounds() if hasattr(self.root, "bounds") else None
        self.origin = np.zeros(3) if bounds is None else (bounds[0] + bounds[1]) * 0.5
        copies = [n.capacity if isinstance(n, Instances) else 1 for n in nodes]
        k = int(sum(copies))
        counts = np.array([n.geometry.vertex_count * c for n, c in zip(nodes, copies)], np.int64)
        n_total = int(counts.sum()) if len(nodes) else 0
        self._reset(n_total, k)
        self._h_reset(len(nodes) + 16)
        self._h_add_subtree(self.root)
        if nodes:
            starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
            geos = [n.geometry for n in nodes]
            self._pos = xp.ascontiguousarray(xp.concatenate([
                xp.tile(_to_module(g.positions, xp), (c, 1)) if c != 1
                else _to_module(g.positions, xp) for g, c in zip(geos, copies)]))
            self._col = xp.ascontiguousarray(xp.concatenate(
                [self._node_colors(n) for n in nodes]))
            per_slot = np.repeat(np.array([g.vertex_count for g in geos], np.int64),
                                 np.array(copies, np.int64))
            self._oid = xp.asarray(np.repeat(np.arange(k, dtype=np.uint32), per_slot))
            sizes = np.array([g.point_size for g in geos], np.float32)
            self._size = np.repeat(sizes, counts)
            self._sizes_in_use = Counter(sizes.tolist())
            self._free_slots = []
            slot = 0
            for node, s, c, cp in zip(nodes, starts, counts, copies):
                slots = np.arange(slot, slot + cp, dtype=np.int64)
                self._bind_slots(node, slots)
                self.ranges[node] = (int(s), int(s + c))
                slot += cp
            self._used = n_total
        self._runs_stale = True
        self.repacks += 1
        self.vertex_revision += 1
        self.layout_revision += 1

    def _bind_slots(self, node: Node, slots: np.ndarray):
        g = node.geometry
        for k in slots.tolist():
            self.slot_nodes[k] = node
            self._slot_geo[k] = g
        self._slot_h[slots] = self._h_index[node]
        self._slot_go[slots] = g.origin
        self._slot_dirty[slots] = True
        self._color_revs[node] = node._color_rev
        if isinstance(node, Instances):
            self._slot_inst[slots] = np.arange(len(slots))
            self._inst[node] = _Instanced(node, slots)
        else:
            self._slot_inst[slots] = -1
            self._slot_of[node] = int(slots[0])

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

    def _alloc_slots(self, count: int) -> np.ndarray:
        """``count`` free slots (the lowest first), growing the model array if needed."""
        if len(self._free_slots) < count:
            old_null = self._kcap
            cap = _grown(old_null, old_null + count - len(self._free_slots), MIN_SLOT_GROWTH)
            host = np.zeros((cap + 1, 4, 4), np.float32)
            host[:old_null] = self._model_host[:old_null]
            self._model_host = host
            self.model = self.xp.asarray(host)
            # The null slot moves to the new last row: re-point free vertices to it.
            oid = self._oid
            oid[oid == old_null] = cap
            extra = cap - old_null
            self.slot_nodes += [None] * extra
            self._slot_geo += [None] * extra
            self._slot_h = np.concatenate([self._slot_h, np.full(extra, -1, np.int64)])
            self._slot_inst = np.concatenate([self._slot_inst, np.full(extra, -1, np.int64)])
            self._slot_go = np.concatenate([self._slot_go, np.zeros((extra, 3))])
            self._slot_dirty = np.concatenate([self._slot_dirty, np.zeros(extra, bool)])
            self._free_slots = list(range(cap - 1, old_null - 1, -1)) + self._free_slots
            self._kcap = cap
            self._upload = [0, cap]
            self.growths += 1
        if count == 1:
            return np.array([self._free_slots.pop()], np.int64)
        taken = self._free_slots[-count:][::-1]
        del self._free_slots[-count:]
        return np.array(taken, np.int64)

    def _spawn(self, node: Node):
        xp, g = self.xp, node.geometry
        copies = node.capacity if isinstance(node, Instances) else 1
        n = g.vertex_count
        slots = self._alloc_slots(copies)
        s = self._alloc_range(n * copies)
        e = s + n * copies
        pos = _to_module(g.positions, xp)
        self._pos[s:e] = xp.tile(pos, (copies, 1)) if copies != 1 else pos
        self._col[s:e] = self._node_colors(node)
        self._oid[s:e] = xp.asarray(np.repeat(slots.astype(np.uint32), n))
        self._size[s:e] = g.point_size
        self._sizes_in_use[float(np.float32(g.point_size))] += 1
        self.ranges[node] = (s, e)
        self._bind_slots(node, slots)
        self.spawns += 1

    def _despawn(self, node: Node):
        s, e = self.ranges.pop(node)
        b = self._inst.pop(node, None)
        slots = b.slots if b is not None else np.array([self._slot_of.pop(node)], np.int64)
        self._color_revs.pop(node, None)
        self._oid[s:e] = self._kcap
        size = float(np.float32(self._slot_geo[slots[0]].point_size))
        self._sizes_in_use[size] -= 1
        if self._sizes_in_use[size] <= 0:
            del self._sizes_in_use[size]
        self._free_range(s, e)
        for k in slots.tolist():
            self.slot_nodes[k] = self._slot_geo[k] = None
        self._slot_h[slots] = -1
        self._slot_inst[slots] = -1
        self._model_host[slots] = 0.0
        self._slot_dirty[slots] = False
        self._mark_upload(int(slots.min()), int(slots.max()))
        self._free_slots.extend(sorted(slots.tolist(), reverse=True))
        self.despawns += 1

    def _relayout(self, node: Instances):
        """An Instances node's capacity changed: move it to a range of the new size."""
        self._despawn(node)
        self.despawns -= 1
        self._spawn(node)
        self.spawns -= 1
        self._runs_stale = True
        self.vertex_revision += 1
        self.layout_revision += 1

    @property
    def runs(self) -> np.ndarray:
        """(R, 3) int64 (start, stop, k) rows covering [0, N) in order; free holes use the
        null slot; one row per instance. Rebuilt lazily, once per frame at most, after
        spawns/despawns."""
        if self._runs_stale:
            parts = []
            single = [(s, e, self._slot_of[n]) for n, (s, e) in self.ranges.items()
                      if n in self._slot_of]
            single += [(s, e, self._kcap) for s, e in self._holes]
            if single:
                parts.append(np.array(single, np.int64).reshape(-1, 3))
            for node, b in self._inst.items():
                s, _ = self.ranges[node]
                n = node.geometry.vertex_count
                starts = s + n * np.arange(len(b.slots), dtype=np.int64)
                parts.append(np.stack([starts, starts + n, b.slots], axis=1))
            rows = np.concatenate(parts) if parts else np.zeros((0, 3), np.int64)
            self._runs = rows[np.argsort(rows[:, 0], kind="stable")]
            self._runs_stale = False
        return self._runs

    # --- colours -----------------------------------------------------------------------
    def _update_colors(self):
        """Rewrite the vertex colours of nodes whose ``color`` changed."""
        for node, rev in list(self._color_revs.items()):
            if node._color_rev != rev:
                s, e = self.ranges[node]
                self._col[s:e] = self._node_colors(node)
                self._color_revs[node] = node._color_rev
                if node in self._inst:
                    b = self._inst[node]
                    b.colors[...] = node.colors
                    b.color_rev = node._color_rev
                self.vertex_revision += 1

    def _update_instance_colors(self, node: Instances, b: _Instanced):
        if b.color_rev != node._color_rev:
            idx = np.arange(len(b.slots))
        else:
            idx = np.flatnonzero(np.any(b.colors != node.colors, axis=1))
        if len(idx) == 0:
            return
        n = node.geometry.vertex_count
        s, _ = self.ranges[node]
        cols = self._node_colors(node, idx).reshape(len(idx), n, 4)
        if len(idx) == len(b.slots):
            self._col[s:s + n * len(idx)] = cols.reshape(-1, 4)
        else:
            for j, i in enumerate(idx.tolist()):
                self._col[s + i * n:s + (i + 1) * n] = cols[j]
        b.colors[idx] = node.colors[idx]
        b.color_rev = node._color_rev
        self.vertex_revision += 1

    # --- per-frame model matrices ------------------------------------------------------
    def _mark_upload(self, lo: int, hi: int):
        self._upload[0] = min(self._upload[0], lo)
        self._upload[1] = max(self._upload[1], hi)

    def _update_models(self, rebase: bool = False):
        if self._kernels is not None:
            self._update_models_numba(rebase)
        else:
            self._update_models_numpy(rebase)
        self._slot_dirty[:] = False
        lo, hi = self._upload
        if hi < lo:
            return
        if self.xp is np:
            self.model = self._model_host
        else:
            self.model[lo:hi + 1].set(self._model_host[lo:hi + 1])
        self._upload = [self._kcap + 1, -1]
        self.uploads += 1

    def _root_world(self, wch: np.ndarray):
        root_world = self.root.world_matrix
        if not np.array_equal(root_world, self._h_world[0]):
            self._h_world[0] = root_world
            wch[0] = True

    def _update_models_numba(self, rebase: bool):
        k = self._kernels
        m = len(self._h_nodes)
        wch = np.zeros(max(m, 1), bool)
        if m:
            self._root_world(wch)
            k.update_hierarchy(m, self._h_rows, self._h_parent, self._h_seen, self._h_alive,
                               _TABLE.trs, _TABLE.rev, self._h_local, self._h_world, wch)
        lo, hi = k.write_models(self._slot_h, self._slot_inst, self._slot_dirty, wch,
                                self._h_world, self._slot_go, self.origin, bool(rebase),
                                self._model_host)
        if hi >= lo:
            self._mark_upload(int(lo), int(hi))
        for node, b in self._inst.items():
            everything = bool(rebase or wch[self._h_index[node]] or self._slot_dirty[b.slots[0]])
            lo, hi, bad = k.write_instances(node.positions, node.rotations, node.scales,
                                            node.active, b.trs, b.active, b.slots,
                                            self._h_world[self._h_index[node]],
                                            node.geometry.origin, self.origin, everything,
                                            self._model_host)
            if hi >= lo:
                self._mark_upload(int(lo), int(hi))
            if bad >= 0:
                node.check_values([int(bad)])  # raises, naming the instance and value
                raise AssertionError("unreachable")  # pragma: no cover

    def _update_models_numpy(self, rebase: bool):
        m = len(self._h_nodes)
        wch = np.zeros(m, bool)
        if m:
            rows = self._h_rows[:m]
            rev = _TABLE.rev[rows]
            changed = (rev != self._h_seen[:m]) & self._h_alive[:m]
            changed[0] = False  # the root's world comes from the scene graph below
            idx = np.flatnonzero(changed)
            if len(idx):
                self._h_seen[idx] = rev[idx]
                t = _TABLE.trs[rows[idx]]
                self._h_local[idx] = trs_matrices(t[:, 0:3], t[:, 3:7], t[:, 7:10])
                wch[idx] = True
            self._root_world(wch)
            if wch.any():
                world, parent, local = self._h_world, self._h_parent, self._h_local
                for group in self._level_groups():
                    w = wch[group] | wch[parent[group]]
                    if not w.any():
                        continue
                    wch[group] = w
                    sel = group[w]
                    world[sel] = np.matmul(world[parent[sel]], local[sel])
        kc = self._kcap
        live = self._slot_h[:kc] >= 0
        ordinary = live & (self._slot_inst[:kc] < 0)
        if rebase:
            todo = np.flatnonzero(ordinary)
        else:
            todo = np.flatnonzero(ordinary & (wch[np.maximum(self._slot_h[:kc], 0)]
                                              | self._slot_dirty[:kc]))
        if len(todo):
            self._write_models(todo, self._h_world[self._slot_h[todo]])
        for node, b in self._inst.items():
            self._update_instances(node, b, rebase or bool(wch[self._h_index[node]])
                                   or bool(self._slot_dirty[b.slots[0]]))

    def _write_models(self, slots: np.ndarray, world: np.ndarray):
        """model[slots] = T(-origin) @ world @ T(geometry origin), composed in float64."""
        m = world.copy()
        go = self._slot_go[slots]
        if go.any():
            m[:, :, 3] += np.einsum("kij,kj->ki", m[:, :, :3], go)
        m[:, :3, :] -= self.origin[None, :, None] * m[:, 3:4, :]
        self._model_host[slots] = m
        self._mark_upload(int(slots.min()), int(slots.max()))

    def _update_instances(self, node: Instances, b: _Instanced, everything: bool):
        """Model matrices of the instances whose arrays changed (all when the node's
        world matrix changed); inactive instances get the all-zero matrix."""
        k = len(b.slots)
        trs = np.empty((k, 10))
        trs[:, 0:3], trs[:, 3:7], trs[:, 7:10] = node.positions, node.rotations, node.scales
        act = node.active
        if everything:
            idx = np.arange(k)
        else:
            diff = np.any(trs != b.trs, axis=1) | (act != b.active)
            idx = np.flatnonzero(diff)
        if len(idx) == 0:
            return
        on = idx[act[idx]]
        off = idx[~act[idx]]
        if len(on):
            node.check_values(on)
            local = trs_matrices(trs[on, 0:3], node.unit_rotations(on), trs[on, 7:10])
            world = np.matmul(self._h_world[self._h_index[node]], local)
            self._write_models(b.slots[on], world)
        if len(off):
            slots = b.slots[off]
            self._model_host[slots] = 0.0
            self._mark_upload(int(slots.min()), int(slots.max()))
        b.trs[idx] = trs[idx]
        b.active[idx] = act[idx]

    def view_projection(self, camera: Camera) -> np.ndarray:
        """(4, 4) float32 world-relative-to-origin -> clip matrix for ``camera``,
        composed in float64: ``P @ V @ T(origin)``."""
        return (camera.view_projection_matrix @ translation_matrix(self.origin)).astype(np.float32)
