"""Primitive assembly: the scene's triangles and lines as one packed index buffer.

Indices are global: each node's faces are offset by the start of its vertex range in the
``VertexBatch`` (an Instances node's faces once per instance, offset by the instance's
copy of the geometry), so one array covers the whole scene and the rasterizers never
look at nodes. The faces of a node (or instance) whose world transform is a mirror image
(negative determinant, ``VertexBatch.mirrored``) have their winding reversed (corners 1
and 2 swapped): a mirror reverses it (glTF 2.0, section 3.7.4), so reversing it back
here makes back-face culling and two-sided lighting follow it on every backend, which
all take counter-clockwise as front. The assembly is rebuilt only when the batch's
vertex layout or the scene's structure change (spawn/despawn, a repack, an Instances
node growing, a draw mode or visibility change, a slot turning into or out of a mirror
image, a material's field assigned), never per frame: moving or recolouring objects and hiding instances keep it. The arrays::

    triangles     (T, 3) int64 vertex indices into the batch arrays
    tri_material  (T,) int32 index into ``materials``
    lines         (L, 2) int64 vertex indices (mesh edges once, for wireframe; Lines)
    line_rgba     (L, 4) uint8 the owner node's ``line_color`` where ``line_set``
    line_set      (L,) bool: the line has an explicit colour
    line_tint     (L, 4) float32 material colour of a mesh edge (ones for Lines)
    line_edge     (L,) bool: the line is a mesh edge (the contrast default applies)
    line_on_face  (L,) bool: a mesh edge drawn over its own faces ("solid+wireframe")
    occluders     (O, 3) int64 faces of "wireframe" meshes with hidden-line removal:
                  depth only, never shaded
    point_mask    (N,) bool: vertices drawn as points (point clouds, "points" mode)
    surface_mask  (N,) bool: vertices of nodes drawn as triangles or lines (the only ones
                  the surface vertex stage transforms)
    meshes        [(geometry, start, stop, copies)]: the meshes drawn as surfaces, for
                  the vertex attributes (engine.render.attributes.pack_attributes)
    tri_cast      (T,) bool: the triangle's node casts shadows (``Node.cast_shadow``)
    tri_receive   (T,) bool: the triangle's node receives them (``Node.receive_shadow``)
"""

from __future__ import annotations

import numpy as np

from ..arrays import to_host
from ..scene.material import Material, material_epoch, textures_read

__all__ = ["Primitives", "contents"]


def _check_uv_sets(node, mesh):
    """Raise ValueError where the material of ``node``'s mesh samples a texture on the
    second UV set (``Material.tex_coords`` 1) and the mesh has no ``uvs1``: it would
    read zeros (the glTF loader leaves such a texture out and says so)."""
    if getattr(mesh, "uvs1", None) is not None or mesh.material is None:
        return
    for role, _ in textures_read(mesh.material):
        if mesh.material.tex_coords.get(role, 0) == 1:
            raise ValueError(f"node {node.name!r}: its material's {role!r} texture reads "
                             "uvs1 (tex_coords) but its mesh has no uvs1")


class Primitives:
    """Built by ``Primitives.of(batch, scene)``; see the module docstring for the arrays."""

    def __init__(self, n: int):
        self.triangles = np.zeros((0, 3), np.int64)
        self.tri_material = np.zeros(0, np.int32)
        self.lines = np.zeros((0, 2), np.int64)
        self.line_rgba = np.zeros((0, 4), np.uint8)
        self.line_set = np.zeros(0, bool)
        self.line_tint = np.zeros((0, 4), np.float32)
        self.line_edge = np.zeros(0, bool)
        self.line_on_face = np.zeros(0, bool)
        self.occluders = np.zeros((0, 3), np.int64)
        self.materials: list[Material] = []
        self.point_mask = np.zeros(n, bool)
        self.surface_mask = np.zeros(n, bool)  # vertices of nodes drawn as surfaces
        self.meshes: list = []
        self.key = None
        self.derived: dict = {}  # per-assembly arrays derived by a backend (e.g. packed materials)
        self.tri_cast = np.zeros(0, bool)
        self.tri_receive = np.zeros(0, bool)

    @property
    def has_surfaces(self) -> bool:
        return len(self.triangles) > 0 or len(self.lines) > 0

    @classmethod
    def of(cls, batch, scene, cached: Primitives | None = None) -> Primitives:
        """The assembly for the batch's current contents (``cached`` when still valid)."""
        key = (id(batch), batch.layout_revision, batch.repacks, scene.structure_revision,
               batch.vertex_count, batch.mirror_revision, material_epoch())
        if cached is not None and cached.key == key:
            return cached
        n = batch.vertex_count
        out = cls(n)
        tris, mats, lines, occluders = [], [], [], []
        shadow_flags = []  # per triangle group: (count, cast, receive)
        line_info = []  # per line group: (count, rgba or None, tint, mesh edge, on faces)
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
                    line_info.append((len(seg), node.line_color, (1.0,) * 4, False, False))
                continue
            faces = to_host(g.faces).astype(np.int64) + start
            flip = batch.mirrored[batch.slots_of(node)]  # (copies,) mirror images
            if copies > 1:  # an Instances node: its geometry once per instance
                nv = g.vertex_count
                faces = faces[None] + (nv * np.arange(copies))[:, None, None]
                faces[flip] = faces[flip][:, :, [0, 2, 1]]
                faces = faces.reshape(-1, 3)
            elif flip[0]:
                faces = faces[:, [0, 2, 1]]
            out.meshes.append((g, start, stop, copies))
            if "solid" in mode and len(faces):
                _check_uv_sets(node, g)
                m = index_of.setdefault(id(g.material), len(out.materials))
                if m == len(out.materials):
                    out.materials.append(g.material)
                tris.append(faces)
                mats.append(np.full(len(faces), m, np.int32))
                shadow_flags.append((len(faces), node.cast_shadow, node.receive_shadow))
            if "wireframe" in mode and len(faces):
                e = np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]])
                lines.append(np.unique(np.sort(e, axis=1), axis=0))
                line_info.append((len(lines[-1]), node.line_color, g.material.color, True,
                                  mode == "solid+wireframe"))
                if mode == "wireframe" and node.hidden_line_removal:
                    occluders.append(faces)
        if tris:
            out.triangles = np.concatenate(tris)
            out.tri_material = np.concatenate(mats)
            count, cast, receive = zip(*shadow_flags)
            out.tri_cast = np.repeat(np.array(cast, bool), count)
            out.tri_receive = np.repeat(np.array(receive, bool), count)
        if lines:
            out.lines = np.concatenate(lines)
            count, rgba, tint, edge, on_face = zip(*line_info)
            out.line_set = np.repeat([c is not None for c in rgba], count)
            out.line_rgba = np.repeat(np.array(
                [np.round(np.asarray(c if c is not None else (0,) * 4) * 255) for c in rgba],
                np.uint8), count, axis=0)
            out.line_tint = np.repeat(np.array(tint, np.float32), count, axis=0)
            out.line_edge = np.repeat(edge, count)
            out.line_on_face = np.repeat(on_face, count)
        if occluders:
            out.occluders = np.concatenate(occluders)
        out.key = key
        return out


def contents(prims: Primitives | None, vertex_count: int) -> str:
    """What a frame draws, for window captions: the triangles, lines and points of the
    assembly that are drawn ("69,451 triangles", "3,564 points", "18,000 triangles,
    4,200 points"), or "N vertices" before the first frame (``prims`` None)."""
    if prims is None:
        return f"{vertex_count:,} vertices"
    parts = []
    for count, what in ((len(prims.triangles), "triangle"), (len(prims.lines), "line"),
                        (int(np.count_nonzero(prims.point_mask)), "point")):
        if count:
            parts.append(f"{count:,} {what}{'' if count == 1 else 's'}")
    return ", ".join(parts) or "nothing"
