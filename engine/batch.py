"""VertexBatch: every visible node's geometry packed into contiguous arrays, once.

Layout (N vertices, K objects, on the projector's array module, NumPy or CuPy):
    positions  (N, 3) float32, each object's local frame
    colors     (N, 4) uint8 RGBA
    object_id  (N,)   uint32, the object's index k into ``model``
    model      (K, 4, 4) float32 model matrices
    runs       (K, 3) int64 host array of (start, stop, k): object k owns [start, stop)

The batch repacks only when the scene's structure changes (node added, removed,
reparented, hidden or shown; geometry replaced). Per frame it recomputes only the model
matrices whose world matrix changed and uploads the contiguous range covering them.

Precision: model matrices are ``T(-origin) @ world @ T(geometry.origin)`` composed in
float64 and then cast, where ``origin`` is the centre of the scene's bounds at pack
time; ``view_projection(camera)`` folds ``T(origin)`` back in, in float64. float32
device data therefore only ever holds coordinates relative to the scene, so points
0.01 apart at x = 596,650 stay 0.01 apart in view space.
"""

from __future__ import annotations

import numpy as np

from .camera import Camera
from .scene import Node, transform_epoch
from .transforms import translation_matrix

DEFAULT_COLOR = np.array([255, 255, 255, 255], np.uint8)


def _to_module(a, xp):
    """Move ``a`` to the array module ``xp`` (no-op when it is already there)."""
    is_device = hasattr(a, "__cuda_array_interface__")
    if xp is np:
        return a.get() if is_device else a
    return a if is_device else xp.asarray(a)


class VertexBatch:
    """Packs ``root``'s visible geometry for the projector whose array module is ``xp``."""

    def __init__(self, root: Node, xp=np):
        self.root = root
        self.xp = xp
        self._packed_rev = None
        self._epoch = None
        self.nodes: list[Node] = []
        self.origin = np.zeros(3)
        self.positions = xp.zeros((0, 3), np.float32)
        self.colors = xp.zeros((0, 4), np.uint8)
        self.object_id = xp.zeros(0, np.uint32)
        self.point_size: float | object = 1.0
        self.runs = np.zeros((0, 3), np.int64)
        self._model_host = np.zeros((1, 4, 4), np.float32)
        self.model = xp.asarray(self._model_host)
        self._stamps = np.zeros(0, np.int64)
        self.repacks = 0
        self.uploads = 0

    @property
    def vertex_count(self) -> int:
        return int(self.positions.shape[0])

    @property
    def object_count(self) -> int:
        return len(self.nodes)

    def sync(self) -> bool:
        """Bring device arrays up to date with the scene. Returns True when repacked."""
        repacked = False
        if self._packed_rev != self.root.structure_revision:
            self._pack()
            repacked = True
        if repacked or self._epoch != transform_epoch():
            self._update_models()
            self._epoch = transform_epoch()
        return repacked

    def _pack(self):
        xp = self.xp
        self.nodes = [
            n for n in self.root.traverse(visible_only=True)
            if n.geometry is not None and n.geometry.vertex_count > 0
        ]
        bounds = self.root.bounds() if hasattr(self.root, "bounds") else None
        self.origin = np.zeros(3) if bounds is None else (bounds[0] + bounds[1]) * 0.5
        k = len(self.nodes)
        counts = np.array([n.geometry.vertex_count for n in self.nodes], np.int64)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]) if k else np.zeros(0, np.int64)
        self.runs = np.stack([starts, starts + counts, np.arange(k)], axis=1) if k else \
            np.zeros((0, 3), np.int64)
        if k:
            geos = [n.geometry for n in self.nodes]
            self.positions = xp.ascontiguousarray(
                xp.concatenate([_to_module(g.positions, xp) for g in geos]))
            self.colors = xp.ascontiguousarray(xp.concatenate([
                _to_module(g.colors, xp) if g.colors is not None
                else xp.broadcast_to(xp.asarray(DEFAULT_COLOR), (g.vertex_count, 4))
                for g in geos]))
            self.object_id = xp.asarray(np.repeat(np.arange(k, dtype=np.uint32), counts))
            sizes = np.array([g.point_size for g in geos], np.float32)
            self.point_size = (float(sizes[0]) if np.all(sizes == sizes[0])
                               else xp.asarray(np.repeat(sizes, counts)))
        else:
            self.positions = xp.zeros((0, 3), np.float32)
            self.colors = xp.zeros((0, 4), np.uint8)
            self.object_id = xp.zeros(0, np.uint32)
            self.point_size = 1.0
        self._model_host = np.zeros((max(k, 1), 4, 4), np.float32)
        self._model_host[:] = np.eye(4, dtype=np.float32)
        self.model = xp.asarray(self._model_host)
        self._stamps = np.full(k, -1, np.int64)
        self._packed_rev = self.root.structure_revision
        self.repacks += 1

    def _update_models(self):
        to_origin = translation_matrix(-self.origin)
        changed = []
        for k, node in enumerate(self.nodes):
            world = node.world_matrix
            if node.world_stamp != self._stamps[k]:
                g = node.geometry
                m = to_origin @ world @ translation_matrix(g.origin)
                self._model_host[k] = m
                self._stamps[k] = node.world_stamp
                changed.append(k)
        if not changed:
            return
        lo, hi = min(changed), max(changed) + 1
        if self.xp is np:
            self.model = self._model_host
        else:
            self.model[lo:hi].set(self._model_host[lo:hi])
        self.uploads += 1

    def view_projection(self, camera: Camera) -> np.ndarray:
        """(4, 4) float32 world-relative-to-origin -> clip matrix for ``camera``,
        composed in float64: ``P @ V @ T(origin)``."""
        return (camera.view_projection_matrix @ translation_matrix(self.origin)).astype(np.float32)
