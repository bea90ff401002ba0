"""Primitive assembly: the scene's triangles and lines as one packed index buffer.

Indices are global: each node's faces are offset by the start of its vertex range in the
``VertexBatch`` (an Instances node's faces once per instance, offset by the instance's
copy of the geometry), so one array covers the whole scene and the rasterizers never
look at nodes. The assembly is rebuilt only when the batch's vertex layout or the
scene's structure change (spawn/despawn, a repack, an Instances node growing, a draw
mode or visibility change), never per frame: moving or recolouring objects and
hiding instances keep it. The arrays::

    triangles     (T, 3) int64 vertex indices into the batch arrays
    tri_material  (T,) int32 index into ``materials``
    lines         (L, 2) int64 vertex indices (mesh edges once, for wireframe; Lines)
    point_mask    (N,) bool: vertices drawn as points (point clouds, "points" mode)
    surface_mask  (N,) bool: vertices of nodes drawn as triangles or lines (the only ones
                  the surface vertex stage transforms)
    meshes        [(geometry, start, stop, copies)]: the meshes drawn as surfaces, for
                  the vertex attributes (engine.render.attributes.pack_attributes)
"""

from __future__ import annotations

import numpy as np

from ..arrays import to_host
from ..scene.material import Material

__all__ = ["Primitives"]


class Primitives:
    """Built by ``Primitives.of(batch, scene)``; see the module docstring for the arrays."""

    def __init__(self, n: int):
        self.triangles = np.zeros((0, 3), np.int64)
        self.tri_material = np.zeros(0, np.int32)
        self.lines = np.zeros((0, 2), np.int64)
        self.materials: list[Material] = []
        self.point_mask = np.zeros(n, bool)
        self.surface_mask = np.zeros(n, bool)  # vertices of nodes drawn as surfaces
        self.meshes: list = []
        self.key = None
        self.derived: dict = {}  # per-assembly arrays derived by a backend (e.g. packed materials)

    @property
    def has_surfaces(self) -> bool:
        return len(self.triangles) > 0 or len(self.lines) > 0

    @classmethod
    def of(cls, batch, scene, cached: Primitives | None = None) -> Primitives:
        """The assembly for the batch's current contents (``cached`` when still valid)."""
        key = (id(batch), batch.layout_revision, batch.repacks, scene.structure_revision,
               batch.vertex_count)
        if cached is not None and cached.key == key:
            return cached
        n = batch.vertex_count
        out = cls(n)
        tris, mats, lines = [], [], []
        index_of: dict[int, int] = {}
        for node, (start, stop) in batch.ranges.items():
            g = node.geometry
            mode = node.draw_mode
            if mode is None:
                continue
            if mode == "points":
                out.point_mask[start:stop] = True
                continue
            out.surface_mask[start:stop] = True
            copies = batch.copies(node)
            if hasattr(g, "segments"):  # Lines: their segments (once per instance)
                seg = to_host(g.segments).astype(np.int64) + start
                if copies > 1:
                    shift = g.vertex_count * np.arange(copies)
                    seg = (seg[None] + shift[:, None, None]).reshape(-1, 2)
                if len(seg):
                    lines.append(seg)
                continue
            faces = to_host(g.faces).astype(np.int64) + start
            if copies > 1:  # an Instances node: its geometry once per instance
                nv = g.vertex_count
                faces = (faces[None] + (nv * np.arange(copies))[:, None, None]).reshape(-1, 3)
            out.meshes.append((g, start, stop, copies))
            if "solid" in mode and len(faces):
                m = index_of.setdefault(id(g.material), len(out.materials))
                if m == len(out.materials):
                    out.materials.append(g.material)
                tris.append(faces)
                mats.append(np.full(len(faces), m, np.int32))
            if "wireframe" in mode and len(faces):
                e = np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]])
                lines.append(np.unique(np.sort(e, axis=1), axis=0))
        if tris:
            out.triangles = np.concatenate(tris)
            out.tri_material = np.concatenate(mats)
        if lines:
            out.lines = np.concatenate(lines)
        out.key = key
        return out
