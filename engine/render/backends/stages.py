"""The stage contract every backend implements, and what flows between the stages.

A frame (one pass: the camera's view) is a fixed sequence; ``Renderer.render`` calls it
on whichever backend it holds and never asks which one that is::

    stages = backend.for_frame(prims)          # this backend, or its documented fallback
    inputs = stages.vertex_stage(batch, prims, view)   # ONE pass over every vertex:
                                                # points projected, surfaces to clip space
                                                # (first, per light with shadows, a depth
                                                # pass of its own: shadow_maps)
    keys   = stages.rasterize(inputs, view)    # visibility: (depth | primitive id) keys
    frame  = stages.resolve(keys, inputs, view)  # shade each visible pixel once
    frame  = stages.read(frame, depth, host, copy)  # where the caller wants the frame
    stages.atmosphere(frame, view)             # the scene's fog and sky, when it has them

A frame with BLEND triangles then runs engine.render.transparency's pass on the same
stages: ``stages.raster_layers(inputs, view, bound, layers)`` (the k-buffer of those
triangles, from the setup of the pixel-centre ``rasterize``) and ``resolve`` once per
layer; GL peels its own layers inside ``rasterize`` (engine.render.gl.peeling).

Backends: ``software.NumpyBackend`` (the reference: NumPy in every stage),
``software.NumbaBackend`` (the CPU fast path), ``cuda_backend.CudaBackend`` (the GPU) and
``engine.render.gl.GLStages`` (OpenGL rasterizes and shades the vertex stage's output of
a compute backend; ``raster="gl"``). Each declares the ``features`` it draws; a frame that
needs another one runs on ``fallback()``, decided here in ``for_frame`` and logged once,
never silently different (tests/render/test_parity.py renders every feature on every
backend).
"""

from __future__ import annotations

import logging
from typing import NamedTuple

import numpy as np

from ...arrays import to_host
from ...scene.camera import OrthographicCamera
from ..atmosphere import apply_atmosphere
from ..attributes import pack_attributes
from ..deform import deform_tables
from ..ibl import scene_environment
from ..lines import line_colors
from ..shading import SurfaceShader, punctual_lights, scene_lights
from ..shadows import (
    NO_SHADOWS,
    MapCache,
    SceneBox,
    ShadowSet,
    plan_shadows,
    shadowed_lights,
)
from ..sprites import lit_point_colors, point_style, sprites_for_frame

__all__ = ["FEATURES", "LIGHTING", "Backend", "FrameInputs", "FrameView", "frame_features"]

log = logging.getLogger("engine")

# what a frame can need: vertices drawn as points, filled triangles, line segments; the
# glTF metallic-roughness shading ("pbr"), spot or ranged lights ("punctual_lights") and a
# scene exposure or tone map other than 1 / "none" ("tone_mapping"), image-based lighting
# ("environment"), lights with shadow maps ("shadows", engine.render.shadows): LIGHTING,
# which every resolve draws (NumPy, Numba, CUDA and GL)
LIGHTING = frozenset({"pbr", "punctual_lights", "tone_mapping", "environment", "shadows"})
FEATURES = frozenset({"points", "triangles", "lines"}) | LIGHTING


class FrameView(NamedTuple):
    """One pass's view of the scene: what the stages need besides the batch.

    Attributes:
        scene: the Scene (lights, background).
        camera: the Camera (its viewport already set to ``size``).
        size: (width, height) in pixels.
        view_projection: (4, 4) float64 batch frame -> clip space
            (``VertexBatch.view_projection``).
        point_size: splat side in pixels, a number or (N,) per vertex.
        background: RGB or RGBA floats in [0, 1].
        vertex_revision: the batch's vertex revision: per-vertex colours and point sizes
            are unchanged while it is (devices keep their copies).
        reuse_output: the caller takes frames that the next frame may overwrite
            (``Renderer.render(copy=False)``): a backend may resolve into arrays it keeps.
        point_size_override: ``point_size`` is the Renderer's, in pixels for every
            point (geometries' ``size_units`` do not apply).
    """

    scene: object
    camera: object
    size: tuple
    view_projection: np.ndarray
    point_size: object
    background: object
    vertex_revision: int
    reuse_output: bool = False
    point_size_override: bool = False


class FrameInputs(NamedTuple):
    """The vertex stage's output for one frame: what the rasterizers and GL draw.

    Attributes:
        prims: the Primitives assembly (triangles, lines, point mask, materials).
        colors: (N, 4) uint8 RGBA vertex colours (the batch's, on its array module).
        projection: the projector's Projection (points), or None when no vertex is drawn
            as a point.
        clip: (N, 4) float64 clip-space vertices (host, or device on the CUDA backend),
            or None without surfaces.
        shader: the SurfaceShader context (the (N, V) varyings, lights, eye), or None
            without triangles; its ``setup`` is filled by the rasterizer.
        line_rgba: (L, 2, 4) uint8 colours of each line's two ends (lines.line_colors),
            or None without lines.
        host_colors: (N, 4) uint8 host copy of ``colors`` (kept between frames while the
            vertex revision stays), or None without surfaces.
        sprites: the frame's engine.render.sprites.Sprites (round or world-sized points),
            or None when every point is a pixel-sized square.
        point_rgba: (N, 4) uint8 colours the points are drawn in this frame (lit by their
            normals, engine.render.sprites), on the backend's array module, or None:
            ``colors``.
    """

    prims: object
    colors: object
    projection: object
    clip: object
    shader: SurfaceShader | None
    line_rgba: np.ndarray | None
    host_colors: np.ndarray | None
    sprites: object = None
    point_rgba: object = None


def frame_features(prims, scene=None) -> frozenset:
    """The FEATURES a frame of this assembly (and ``scene``'s lights and tone map, when
    given) needs."""
    need = set()
    if any(m.shading == "pbr" for m in prims.materials):
        need.add("pbr")
    if scene is not None:
        if scene.exposure != 1.0 or scene.tone_map != "none":
            need.add("tone_mapping")
        if punctual_lights(scene, np.zeros(3)):
            need.add("punctual_lights")
        if scene.environment is not None and len(prims.triangles):
            need.add("environment")
        if len(prims.triangles) and shadowed_lights(scene):
            need.add("shadows")
    if prims.point_mask.any() or not prims.has_surfaces:
        need.add("points")
    if len(prims.triangles):
        need.add("triangles")
    if len(prims.lines):
        need.add("lines")
    return frozenset(need)


class Backend:
    """Base of the backends: the generic part of the vertex stage and the fallback rule.

    Subclasses set ``name``, ``xp`` (the array module of the batch), ``projector`` and
    ``features``, and implement ``project_points``, ``surface_vertices``, ``rasterize``,
    ``raster_layers`` (BLEND triangles), ``resolve`` and ``read`` (see the module
    docstring for the order). One instance
    serves one Renderer: it keeps that renderer's per-assembly host tables and buffers.
    """

    name = "backend"
    features = FEATURES
    # who composes the batch's world and model matrices (VertexBatch ``transforms``):
    # the NumPy reference composes them in NumPy too
    transforms = "auto"
    # a shadow map whose inputs are all unchanged since the frame that drew it is reused
    # (engine.render.shadows.MapCache); False draws every map every frame
    reuse_shadow_maps = True

    def __init__(self):
        self._host_colors_key = self._attributes_key = None
        self._deform = None
        # (version, ranges or None): the rows of ``attributes`` the last change rewrote
        # (None: all of them), for device copies (engine.render.backends.cupy_surfaces)
        self.attribute_changes = (0, None)
        self._fallback = None
        self._fallback_logged = False
        self._point_style = None  # engine.render.sprites.PointStyle of the last frame
        self._scene_box = SceneBox()  # the shadow maps' fit (engine.render.shadows)
        self._map_cache = MapCache()  # each map slot's last depth and its inputs

    # --- the fallback rule: the one place a missing feature is decided ---------------
    def make_fallback(self) -> Backend:
        """The backend that draws the frames this one cannot (override where needed)."""
        raise NotImplementedError(f"the {self.name} backend draws every feature")

    def for_frame(self, prims, scene=None) -> Backend:
        """This backend, or its fallback (or the fallback's own, in turn) when the frame
        needs a feature it lacks."""
        missing = frame_features(prims, scene) - self.features
        if not missing:
            return self
        if self._fallback is None:
            self._fallback = self.make_fallback()
        if not self._fallback_logged:
            self._fallback_logged = True
            log.info("the %s backend draws no %s: such frames run on the %s backend",
                     self.name, ", ".join(sorted(missing)), self._fallback.name)
        return self._fallback.for_frame(prims, scene)

    # --- vertex stage ----------------------------------------------------------------
    def vertex_stage(self, batch, prims, view: FrameView) -> FrameInputs:
        """Every vertex of the frame once: the points' projection (when any vertex is
        drawn as a point) and the surfaces' clip-space positions and varyings
        (engine.render.attributes); the shading context. Returns FrameInputs."""
        if not prims.has_surfaces:
            return self.point_sprites(batch, view, FrameInputs(
                prims, batch.colors, self.project_points(batch, view), None, None, None, None))
        with_shading = len(prims.triangles) > 0
        # the frame's joint matrices and morph weights, updated once for all its passes
        deform = self.deformation(batch, prims)
        # the lights' depth passes first: they reuse the vertex stage's buffers
        shadows = (self.shadow_maps(batch, prims, view, deform) if with_shading
                   else NO_SHADOWS)
        # one pass over the vertices: clip space, varyings, and the points' projection
        # when some vertices are drawn as points
        clip, varyings, projection = self.surface_vertices(
            batch, prims, view, self.attributes(batch, prims), with_shading,
            points=bool(prims.point_mask.any()), deform=deform)
        col = self.host_colors(batch)
        shader = None
        if with_shading:
            cam = view.camera.world_matrix
            ortho = None
            if isinstance(view.camera, OrthographicCamera):
                ortho = cam[:3, 2] / np.linalg.norm(cam[:3, 2])
            shader = SurfaceShader(prims, None, varyings, cam[:3, 3] - batch.origin,
                                   scene_lights(view.scene, view.camera, batch.origin),
                                   view.size, ortho, punctual_lights(view.scene, batch.origin),
                                   view.scene.exposure, view.scene.tone_map,
                                   scene_environment(view.scene), shadows)
        line_rgba = line_colors(col, prims, view.background) if len(prims.lines) else None
        return self.point_sprites(batch, view, FrameInputs(prims, batch.colors, projection,
                                                           clip, shader, line_rgba, col))

    def point_sprites(self, batch, view: FrameView, inputs: FrameInputs) -> FrameInputs:
        """``inputs`` with the frame's point sprites and the colours of points lit by
        their normals (engine.render.sprites; None where not needed)."""
        if inputs.projection is None:
            return inputs
        style = self._point_style = point_style(batch, inputs.prims, self._point_style)
        sprites = sprites_for_frame(style, view, inputs.projection, self.xp)
        rgba = None
        if style.lit is not None:
            cam = view.camera.world_matrix
            ortho = None
            if isinstance(view.camera, OrthographicCamera):
                ortho = cam[:3, 2] / np.linalg.norm(cam[:3, 2])
            rgba = lit_point_colors(style, batch, self.host_colors(batch),
                                    cam[:3, 3] - batch.origin,
                                    scene_lights(view.scene, view.camera, batch.origin),
                                    punctual_lights(view.scene, batch.origin), ortho,
                                    view.scene.exposure, view.scene.tone_map)
            rgba = rgba if self.xp is np else self.xp.asarray(rgba)
        if sprites is None and rgba is None:
            return inputs
        return inputs._replace(sprites=sprites, point_rgba=rgba)

    def shadow_maps(self, batch, prims, view, deform) -> ShadowSet:
        """The frame's shadow maps (engine.render.shadows): for each light with
        ``shadows``, its fitted view through this backend's own vertex stage and raster
        (``shadow_depth``), depth only; a map whose inputs are unchanged since it was
        drawn is reused (``reuse_shadow_maps``). ``deform``: the frame's
        ``deformation`` (updated by the caller, once a frame; None only when no drawn
        mesh is deformed), required so that no caller draws or reuses a map of deformed
        casters in their rest pose. NO_SHADOWS when no light has them."""
        if not shadowed_lights(view.scene):
            return NO_SHADOWS
        plan = plan_shadows(view.scene, batch, prims, view.view_projection,
                            self._scene_box(batch, prims))
        maps = []
        for k, m in enumerate(plan):
            # recorded with reuse off too: a later frame with it on reuses a valid map
            inputs = MapCache.inputs(batch, prims, m, deform)
            depth = self._map_cache.get(k, inputs) if self.reuse_shadow_maps else None
            if depth is None:
                depth = self.shadow_depth(batch, prims, m, k, deform)
                self._map_cache.put(k, inputs, depth)
            maps.append(m._replace(depth=depth))
        return ShadowSet(tuple(maps), prims.tri_receive)

    def shadow_depth(self, batch, prims, shadow_map, slot: int, deform) -> np.ndarray:
        """(S, S) float32 window depth of the casters seen from ``shadow_map``'s view
        (engine.render.shadows.depth_of_keys), the frame's map number ``slot`` (a
        backend may keep each slot's array from frame to frame), the casters posed by
        ``deform`` (the frame's ``deformation``, already updated, or None); each compute
        backend implements it."""
        raise NotImplementedError(f"the {self.name} backend renders no shadow maps")

    def light_view(self, batch, shadow_map) -> FrameView:
        """The FrameView of a shadow pass: the light's view-projection, the map's size."""
        s = shadow_map.size
        return FrameView(None, None, (s, s), shadow_map.view_projection, 1.0, None,
                         batch.vertex_revision)

    def deformation(self, batch, prims):
        """The frame's engine.render.deform.DeformTables (skins and morph targets, built
        once per assembly, joint matrices and weights updated by every call: once a
        frame, in ``vertex_stage``, for all its passes), or None when no drawn mesh is
        deformed."""
        self._deform = deform_tables(batch, prims, self._deform)
        return self._deform if self._deform.nodes else None

    def project_points(self, batch, view: FrameView):
        """The projector's Projection of every batch vertex (one launch)."""
        return self.projector.project(batch.positions, batch.object_id, batch.model,
                                      view.view_projection, view.size, runs=batch.runs)

    def host_colors(self, batch) -> np.ndarray:
        """(N, 4) uint8 host copy of the batch's colours, copied again only when its
        vertex revision changes (colours are static between repacks), and then only
        the ranges geometry updates rewrote when that is all that changed
        (``VertexBatch.edited_ranges``)."""
        key = (batch.vertex_revision, batch.vertex_count)
        old = self._host_colors_key
        if old != key:
            ranges = (batch.edited_ranges(old[0]) if old is not None and old[1] == key[1]
                      else None)
            if ranges is None:
                self._host_colors = np.ascontiguousarray(to_host(batch.colors))
            else:
                for s, e in ranges:
                    self._host_colors[s:e] = to_host(batch.colors[s:e])
            self._host_colors_key = key
        return self._host_colors

    def attributes(self, batch, prims) -> np.ndarray:
        """(N, A) float64 host vertex attributes of the frame's meshes
        (engine.render.attributes.pack_attributes), packed again only when the assembly
        or the vertex revision changes; after geometry updates alone
        (``VertexBatch.edited_ranges``) only the updated meshes' rows are packed again,
        in place, and ``attribute_changes`` names them."""
        key = (prims.key, id(prims), batch.vertex_revision, batch.vertex_count)
        old = self._attributes_key
        if old != key:
            ranges = (batch.edited_ranges(old[2]) if old is not None and old[:2] == key[:2]
                      and old[3] == key[3] else None)
            colors = self.host_colors(batch)
            version = self.attribute_changes[0] + 1
            if ranges is None:
                self._attributes = pack_attributes(prims.meshes, colors)
                self.attribute_changes = (version, None)
            else:
                rows = [r for r in prims.meshes
                        if any(s < r[2] and r[1] < e for s, e in ranges)]
                for g, start, stop, copies in rows:
                    self._attributes[start:stop] = pack_attributes(
                        [(g, 0, stop - start, copies)], colors[start:stop])
                self.attribute_changes = (version, [(r[1], r[2]) for r in rows])
            self._attributes_key = key
        return self._attributes

    # the atmosphere stage reads the frame's depth (``read`` must return it)
    atmosphere_reads_depth = True

    def atmosphere(self, frame, view: FrameView) -> None:
        """Apply the scene's fog and sky to the read frame (colour and depth, on the
        host or, for a frame kept on a device, there), in place: this base is the NumPy
        (or CuPy) stage engine.render.atmosphere.apply_atmosphere, the reference."""
        apply_atmosphere(frame.color, frame.depth, view.scene, view.camera)

    def read(self, frame, depth: bool = True, host: bool = True, copy: bool = True):
        """The resolved frame as the caller asked: host arrays (this base: the frame is
        on the host already), without depth when ``depth`` is False."""
        return frame if depth else type(frame)(frame.color, None)
