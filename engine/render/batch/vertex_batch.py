"""VertexBatch: the scene's visible geometry packed into contiguous arrays, kept in step
with the scene graph by ``sync`` (the package docstring describes the layout)."""

from __future__ import annotations

import numpy as np

from ...scene.camera import Camera
from ...scene.geometry import changed_since, data_epoch
from ...scene.graph import Node, appearance_epoch, transform_epoch
from ...scene.instances import Instances
from . import rebase
from .instances import InstanceSnapshot
from .models import ModelMatrices, compiled_kernels
from .ranges import RangeAllocator
from .slots import SlotTable
from .storage import VertexArrays, grown, to_module
from .tints import node_colors, recolor_instances, recolor_nodes
from .updates import data_revisions, rewrite_geometry

MIN_VERTEX_GROWTH = 1024
EDIT_LOG = 16  # geometry updates remembered for edited_ranges
MIN_NODE_GROWTH = 64


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
        origin: (3,) float64 precision origin (``engine.render.batch.rebase``).
        repacks: number of full repacks so far; spawns / despawns: incremental changes;
            growths: capacity reallocations (vertex arrays or model slots); uploads:
            model uploads; data_updates: geometry data rewritten in place
            (``engine.render.batch.updates``: ``Geometry.update`` of the same size).
        vertex_revision: bumped whenever positions, colors, object_id or point sizes
            change, so presenters holding copies (GL buffers) know to refresh them.
        layout_revision: bumped when the vertex layout changes (positions, object ids,
            ranges; not colours): what the primitive assembly depends on.
        transforms: "numba" or "numpy": which path updates the matrices each frame (the
            constructor's ``transforms``: "auto" takes Numba when installed; both give
            the same matrices to the bit, ``engine.render.batch.models``).

    Raises:
        ValueError: an unknown ``transforms``, or "numba" without Numba installed.
    """

    def __init__(self, root: Node, xp=np, transforms: str = "auto"):
        if transforms not in ("auto", "numba", "numpy"):
            raise ValueError(f"transforms must be 'auto', 'numba' or 'numpy', got {transforms!r}")
        kernels = compiled_kernels() if transforms != "numpy" else None
        if transforms == "numba" and kernels is None:
            raise ValueError("transforms='numba' needs Numba, which is not installed")
        self._kernels = kernels
        self.transforms = "numba" if kernels is not None else "numpy"
        self.root = root
        self.xp = xp
        self._packed_rev = None
        self._epoch = None
        self._appearance = appearance_epoch()
        self.origin = np.zeros(3)
        self.repacks = self.uploads = self.spawns = self.despawns = self.growths = 0
        self.data_updates = 0
        self._data_epoch = data_epoch()
        self._edit_log: list = []  # (vertex revision before, after, ranges) per update
        self.vertex_revision = 0
        self.layout_revision = 0
        self._synced_revision = -1
        self._models: ModelMatrices | None = None  # built by each repack
        self._reset(0, 0)

    def _reset(self, vertex_capacity: int, slot_capacity: int):
        self._verts = VertexArrays(self.xp, vertex_capacity, slot_capacity)
        self._slots = SlotTable(self.xp, slot_capacity)
        self._alloc = RangeAllocator()
        self.ranges: dict[Node, tuple[int, int]] = {}
        self._slot_of: dict[Node, int] = {}
        self._inst: dict[Node, InstanceSnapshot] = {}
        self._color_revs: dict[Node, int] = {}
        self._data_revs: dict[Node, tuple] = {}  # node -> its geometry's data revisions drawn
        self._nodes_of: dict = {}  # geometry -> the drawn nodes using it
        self._runs = np.zeros((0, 3), np.int64)
        self._runs_stale = False

    # --- read-only views -------------------------------------------------------------
    @property
    def model(self):
        """(K + 1, 4, 4) float32 model matrices on the batch's array module; the last
        row is the all-zero *null slot*."""
        return self._slots.model

    @property
    def model_host(self) -> np.ndarray:
        """(K + 1, 4, 4) float32 host copy of ``model`` (kept in step by ``sync``): the
        host side of a frame reads it instead of copying the device array back."""
        return self._slots.host

    @property
    def world_matrices(self):
        """The ``engine.scene.world.WorldMatrices`` of the batch's visible subtree, as
        of the last ``sync`` (rebuilt by each repack): joints of skins read it."""
        if self._models is None:
            self._models = ModelMatrices(self.root, 16, self._kernels)
        return self._models.worlds

    @property
    def slot_nodes(self) -> list:
        return self._slots.nodes

    @property
    def null_slot(self) -> int:
        """Index of the all-zero model row that free vertices point at."""
        return self._slots.capacity

    @property
    def positions(self):
        """(N, 3) float32 vertex positions, each in its object's local frame."""
        return self._verts.pos[: self._alloc.used]

    @property
    def colors(self):
        """(N, 4) uint8 RGBA vertex colours (``engine.render.batch.tints``)."""
        return self._verts.col[: self._alloc.used]

    @property
    def object_id(self):
        """(N,) uint32 model slot of each vertex."""
        return self._verts.oid[: self._alloc.used]

    @property
    def point_size(self):
        """float when every live geometry has the same point size, else (N,) float32 per
        vertex on the batch's array module. The per-vertex array is built (uploaded, on
        the GPU) once per ``vertex_revision`` and the same array is returned until the
        revision changes: pass ``vertex_revision`` as the rasterizer's
        ``sizes_revision`` so it converts the sizes once too."""
        return self._verts.point_size(self._alloc.used, self.vertex_revision)

    @property
    def vertex_count(self) -> int:
        """Vertices the projector processes (live vertices plus free holes)."""
        return self._alloc.used

    @property
    def live_vertex_count(self) -> int:
        return self._alloc.used - self._alloc.hole_total

    @property
    def object_count(self) -> int:
        """Model slots in use: one per ordinary node, one per instance of Instances nodes
        (active or not)."""
        return len(self._slot_of) + sum(len(b.slots) for b in self._inst.values())

    @property
    def nodes(self) -> list[Node]:
        """Live nodes in slot order (an Instances node once)."""
        return list(dict.fromkeys(n for n in self._slots.nodes if n is not None))

    def copies(self, node: Node) -> int:
        """How many copies of ``node``'s geometry its range holds: the instance capacity
        for an Instances node, 1 otherwise. Raises KeyError for a node not in the batch."""
        if node in self._inst:
            return len(self._inst[node].slots)
        if node in self._slot_of:
            return 1
        raise KeyError(f"{node.name!r} is not drawn by this batch")

    @property
    def mirrored(self) -> np.ndarray:
        """(K,) bool host array: True for the model slots whose matrix has a negative
        3x3 determinant (an odd number of negative scales: a mirror image), whose
        triangles' winding the primitive assembly reverses (glTF 2.0, 3.7.4). Free,
        inactive and zero-scale slots are False. Read after ``sync``."""
        return self._slots.mirrored

    @property
    def mirror_revision(self) -> int:
        """Bumped when a slot's ``mirrored`` flag changes (a node's world transform
        turning into or out of a mirror image): the primitive assembly depends on it."""
        return self._slots.mirror_revision

    def slots_of(self, node: Node) -> np.ndarray:
        """(copies,) int64 model slots of ``node`` (instance i uses ``slots_of(node)[i]``)."""
        if node in self._inst:
            return self._inst[node].slots.copy()
        return np.array([self._slot_of[node]], np.int64)

    def node_for_vertex(self, index: int) -> Node | None:
        """The node owning packed vertex ``index`` (None for a free vertex)."""
        k = int(self._verts.oid[index])
        return self._slots.nodes[k] if k < self._slots.capacity else None

    def instance_for_vertex(self, index: int) -> int | None:
        """The instance index of packed vertex ``index`` when it belongs to an Instances
        node, else None."""
        k = int(self._verts.oid[index])
        if k >= self._slots.capacity or self._slots.instance[k] < 0:
            return None
        return int(self._slots.instance[k])

    @property
    def runs(self) -> np.ndarray:
        """(R, 3) int64 (start, stop, k) rows covering [0, N) in order; free holes use the
        null slot; one row per instance. Rebuilt lazily, once per frame at most, after
        spawns/despawns."""
        if self._runs_stale:
            single = [(s, e, self._slot_of[n]) for n, (s, e) in self.ranges.items()
                      if n in self._slot_of]
            single += [(s, e, self.null_slot) for s, e in self._alloc.holes]
            parts = [np.array(single, np.int64).reshape(-1, 3)] if single else []
            for node, b in self._inst.items():
                n = node.geometry.vertex_count
                starts = self.ranges[node][0] + n * np.arange(len(b.slots), dtype=np.int64)
                parts.append(np.stack([starts, starts + n, b.slots], axis=1))
            rows = np.concatenate(parts) if parts else np.zeros((0, 3), np.int64)
            self._runs = rows[np.argsort(rows[:, 0], kind="stable")]
            self._runs_stale = False
        return self._runs

    def view_projection(self, camera: Camera) -> np.ndarray:
        """(4, 4) float32 world-relative-to-origin -> clip matrix for ``camera``,
        composed in float64: ``P @ V @ T(origin)``."""
        return rebase.view_projection(camera, self.origin)

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
        if self._data_epoch != data_epoch():
            changed = changed_since(self._data_epoch)
            self._data_epoch = data_epoch()
            self._sync_data(changed)
        if self._appearance != appearance_epoch():
            if recolor_nodes(self._color_revs, self.ranges, self._verts.col, self._inst,
                             self.xp):
                self.vertex_revision += 1
            self._appearance = appearance_epoch()
        for node, b in self._inst.items():
            if (b.color_rev != node._color_rev or not np.array_equal(b.colors, node.colors)) \
                    and recolor_instances(node, b, self.ranges[node][0], self._verts.col,
                                          self.xp):
                self.vertex_revision += 1
        changed = self.vertex_revision != self._synced_revision
        self._synced_revision = self.vertex_revision
        moved = None if camera is None else rebase.rebased_origin(camera, self.origin)
        if moved is not None:
            self.origin = moved
        if (moved is not None or self._epoch != transform_epoch() or self._slots.dirty.any()
                or self._inst):
            self._update_models(moved is not None)
        return changed

    def _sync_data(self, geometries):
        """Geometry data changed somewhere (``Geometry.update``; ``geometries``: which,
        or None when unknown): rewrite the changed fields of the nodes drawing them in
        place, or repack when a vertex count changed. Costs O(nodes drawing those
        geometries), not O(nodes)."""
        nodes = None
        if geometries is not None:
            nodes = list(dict.fromkeys(n for g in geometries for n in self._nodes_of.get(g, ())
                                       if n in self._data_revs))
        result = rewrite_geometry(self._data_revs, self.ranges, self._verts, self.xp,
                                  self.copies, nodes)
        if result is None:  # a vertex count changed: the ranges no longer fit
            self._pack(self._drawable())
            return
        changed, ranges = result
        if changed:
            self.data_updates += 1
            self.vertex_revision += 1
            self._edit_log.append((self.vertex_revision - 1, self.vertex_revision, ranges))
            del self._edit_log[:-EDIT_LOG]
            if "index" in changed:
                self.layout_revision += 1

    def edited_ranges(self, since: int) -> list | None:
        """The (start, stop) vertex ranges that geometry updates rewrote since vertex
        revision ``since``, when those updates are all that changed the vertex data
        since then (the last ``EDIT_LOG`` of them); None when anything else did (a
        repack, spawn, recolour) or ``since`` is older: copies of the vertex data (host
        attributes, device buffers) then refresh everything. [] when nothing changed."""
        out, rev = [], self.vertex_revision
        for before, after, ranges in reversed(self._edit_log):
            if rev == since:
                break
            if after != rev:
                return None
            out.extend(ranges)
            rev = before
        return out if rev == since else None

    def _update_models(self, everything: bool):
        self._models.update(self._slots, self._inst, self.origin, everything)
        if self._slots.upload():
            self.uploads += 1
        self._epoch = transform_epoch()

    def _drawable(self) -> list[Node]:
        return [n for n in self.root.traverse(visible_only=True) if self._is_drawable(n)]

    @staticmethod
    def _is_drawable(n: Node) -> bool:
        return (n.geometry is not None and n.geometry.vertex_count > 0
                and (not isinstance(n, Instances) or n.capacity > 0))

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
            self._forget(node)
        parent.add(node)
        if not clean:
            return node
        if self._shown(parent):
            self._models.worlds.extend(node.traverse(visible_only=True))
            for n in node.traverse(visible_only=True):
                if self._is_drawable(n):
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
        if clean:
            self._forget(node)
            self._commit_incremental()
        return node

    def _forget(self, top: Node):
        for n in top.traverse():
            if n in self.ranges:
                self._despawn(n)
            self._models.worlds.discard(n)

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
        if self._alloc.hole_total > max(self._alloc.used // 2, MIN_VERTEX_GROWTH):
            self._pack(self._drawable())  # compaction: amortised over the frees before it
        else:
            if self._models.worlds.dead > max(MIN_NODE_GROWTH, len(self._models.worlds) // 2):
                self._rebuild_worlds()
            self._runs_stale = True
            self.vertex_revision += 1
            self.layout_revision += 1
        self._packed_rev = self.root.structure_revision

    def _rebuild_worlds(self):
        """Fresh world matrices from the scene graph (compacts the dead entries)."""
        worlds = self._models.worlds
        self._models = ModelMatrices(self.root, len(worlds) - worlds.dead, self._kernels)
        slots = self._slots
        for k, node in enumerate(slots.nodes):
            if node is not None:
                slots.entry[k] = self._models.worlds.index(node)
                slots.dirty[k] = True

    def _spawn(self, node: Node):
        xp, g = self.xp, node.geometry
        copies = node.capacity if isinstance(node, Instances) else 1
        n = g.vertex_count
        slots, old_null = self._slots.alloc(copies)
        if old_null is not None:
            self._verts.repoint(old_null, self._slots.capacity)
            self.growths += 1
        s = self._alloc.alloc(n * copies)
        e = s + n * copies
        v = self._verts
        if e > v.capacity:
            v.grow(grown(v.capacity, e, MIN_VERTEX_GROWTH), s, self._slots.capacity)
            self.growths += 1
        pos = to_module(g.positions, xp)
        v.pos[s:e] = xp.tile(pos, (copies, 1)) if copies != 1 else pos
        v.col[s:e] = node_colors(node, xp)
        v.oid[s:e] = xp.asarray(np.repeat(slots.astype(np.uint32), n))
        v.size[s:e] = g.point_size
        v.add_size(g.point_size, +1)
        self.ranges[node] = (s, e)
        self._bind(node, slots)
        self.spawns += 1

    def _despawn(self, node: Node):
        s, e = self.ranges.pop(node)
        b = self._inst.pop(node, None)
        slots = b.slots if b is not None else np.array([self._slot_of.pop(node)], np.int64)
        self._color_revs.pop(node, None)
        self._data_revs.pop(node, None)
        users = self._nodes_of.get(node.geometry, [])
        if node in users:
            users.remove(node)
            if not users:
                del self._nodes_of[node.geometry]
        self._verts.oid[s:e] = self._slots.capacity
        self._verts.add_size(self._slots.geometry[slots[0]].point_size, -1)
        self._alloc.free(s, e)
        self._slots.release(slots)
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

    def _bind(self, node: Node, slots: np.ndarray):
        instanced = isinstance(node, Instances)
        self._slots.bind(slots, node, self._models.worlds.index(node), instanced)
        self._color_revs[node] = node._color_rev
        self._data_revs[node] = data_revisions(node.geometry)
        self._nodes_of.setdefault(node.geometry, []).append(node)
        if instanced:
            self._inst[node] = InstanceSnapshot(node, slots)
        else:
            self._slot_of[node] = int(slots[0])

    # --- packing -----------------------------------------------------------------------
    def _pack(self, nodes: list[Node]):
        """Every drawable node afresh in traversal order: no holes, a new origin."""
        xp = self.xp
        self.origin = rebase.scene_centre(self.root)
        copies = [n.capacity if isinstance(n, Instances) else 1 for n in nodes]
        k = int(sum(copies))
        geos = [n.geometry for n in nodes]
        counts = np.array([g.vertex_count * c for g, c in zip(geos, copies)], np.int64)
        n_total = int(counts.sum())
        self._reset(0, k)
        self._models = ModelMatrices(self.root, len(nodes) + 16, self._kernels)
        if nodes:
            pos = xp.ascontiguousarray(xp.concatenate([
                xp.tile(to_module(g.positions, xp), (c, 1)) if c != 1
                else to_module(g.positions, xp) for g, c in zip(geos, copies)]))
            col = xp.ascontiguousarray(xp.concatenate([node_colors(n, xp) for n in nodes]))
            per_slot = np.repeat(np.array([g.vertex_count for g in geos], np.int64), copies)
            oid = xp.asarray(np.repeat(np.arange(k, dtype=np.uint32), per_slot))
            sizes = np.array([g.point_size for g in geos], np.float32)
            self._verts.fill(pos, col, oid, np.repeat(sizes, counts))
            for s in sizes.tolist():
                self._verts.add_size(s, +1)
            slots, _ = self._slots.alloc(k)
            start = 0
            for node, c, cp in zip(nodes, counts.tolist(), copies):
                self._bind(node, slots[:cp])
                slots = slots[cp:]
                self.ranges[node] = (start, start + c)
                start += c
            self._alloc.used = n_total
        self._runs_stale = True
        self.repacks += 1
        self.vertex_revision += 1
        self.layout_revision += 1
