"""Renderer: one frame = sync the batch, one projection launch, rasterize, resolve.

    scene graph -> VertexBatch (packed once) -> projector (one launch)
        -> points: splats | triangles: cull, clip, fill (engine.render.triangles)
        -> one 64-bit key buffer (depth | primitive id) -> resolve: shade each pixel once

The viewport is the output size in pixels; the camera's aspect follows it every frame.
"""

from __future__ import annotations

import logging
from typing import NamedTuple

import numpy as np

from ..arrays import to_host
from ..scene.camera import Camera, OrthographicCamera
from ..scene.graph import Scene
from .backends import Projection, get_projector
from .batch import VertexBatch
from .frame import Frame, cleared_keys
from .lines import line_colors, raster_lines
from .points import check_points, rasterize_points, splat_keys
from .primitives import Primitives
from .shading import SurfaceShader, color_tables, resolve, scene_lights
from .surface_vertices import surface_vertices
from .triangles import raster_triangles, setup_triangles

log = logging.getLogger("engine")

__all__ = ["RASTER_MODES", "FrameInputs", "Renderer", "parse_size"]

RASTER_MODES = ("software", "gl")


MAX_SIZE = 16384  # the largest GL framebuffer side commonly supported


def parse_size(text: str) -> tuple[int, int]:
    """'1280x720' -> (1280, 720). Raises ValueError with the expected form."""
    try:
        w, h = (int(v) for v in str(text).lower().split("x"))
    except ValueError:
        raise ValueError(f"size must look like WIDTHxHEIGHT (e.g. 1280x720), got {text!r}") from None
    return check_size((w, h))


def check_size(size) -> tuple[int, int]:
    """(width, height) as two whole numbers in [1, 16384] -> (int, int).

    Raises ValueError for a string, a wrong length, fractions or out-of-range values.
    """
    if isinstance(size, (str, bytes)) or np.ndim(size) != 1 or len(size) != 2:
        raise ValueError(f"size must be (width, height) in pixels, got {size!r}")
    if not all(float(v).is_integer() for v in size):
        raise ValueError(f"size must be whole pixels, got {tuple(size)!r}")
    w, h = int(size[0]), int(size[1])
    if not (0 < w <= MAX_SIZE and 0 < h <= MAX_SIZE):
        raise ValueError(f"size must be between 1x1 and {MAX_SIZE}x{MAX_SIZE}, got {w}x{h}")
    return w, h


def _drawable_vertices(scene: Scene) -> int:
    """Vertices a batch of ``scene`` would hold (visible nodes with geometry)."""
    return sum(n.geometry.vertex_count for n in scene.traverse(visible_only=True)
               if n.geometry is not None)


class Renderer:
    """Renders ``scene`` as seen by ``camera`` into ``size`` = (width, height) pixels.

    Args:
        backend: projector name ("auto", "cupy", "numba", "numpy"); see engine.render.backends.
            "auto" chooses once, here, from the scene's vertex count: Numba below this
            machine's measured CPU/GPU crossover, CuPy from it on (when a GPU works).
        point_size: splat size in pixels overriding each geometry's own, or None.
        raster: how ``render()`` draws the projected points: "software" (the engine's
            z-buffered rasterizer; NumPy, or CUDA on the cupy backend; no GL needed) or
            "gl" (GL_POINTS on an offscreen EGL context, see engine.render.gl.OffscreenGL).

    Attributes:
        batch: the VertexBatch (device arrays of the packed scene).
        projector: the backend instance.
        gl: the OffscreenGL presenter, created on first use by ``render()`` with
            raster "gl" (raises engine.render.gl.GLUnavailable when no context can be made).
    """

    def __init__(self, scene: Scene, camera: Camera, size=(640, 480), backend=None,
                 point_size: float | None = None, raster: str = "software"):
        if not isinstance(scene, Scene):
            raise TypeError(f"scene must be an engine.Scene, got {type(scene).__name__}")
        if not isinstance(camera, Camera):
            raise TypeError(f"camera must be an engine.Camera, got {type(camera).__name__}")
        self.scene = scene
        self.camera = camera
        self.size = check_size(size)
        self.projector = get_projector(backend, vertex_count=_drawable_vertices(scene))
        self.batch = VertexBatch(scene, self.projector.xp)
        self.point_size = point_size
        self.raster = raster
        self._gl = None
        self._prims = None
        self._cuda_surfaces = None
        self._keys = None  # the host key buffer, reused from frame to frame
        self._visibility = None  # (key buffer, size) of the last frame (host or device)

    @property
    def raster(self) -> str:
        return self._raster

    @raster.setter
    def raster(self, value: str):
        if value not in RASTER_MODES:
            raise ValueError(f"raster must be one of {', '.join(RASTER_MODES)}, got {value!r}")
        self._raster = value

    @property
    def gl(self):
        if self._gl is None:
            from .gl import OffscreenGL

            self._gl = OffscreenGL()
        return self._gl

    def close(self):
        """Release the offscreen GL context, if one was created."""
        if self._gl is not None:
            self._gl.release()
            self._gl = None

    def resize(self, width: int, height: int):
        """New viewport in pixels; the camera aspect follows on the next frame."""
        self.size = check_size((width, height))

    def project(self) -> Projection:
        """Project every vertex of the scene (one launch). Arrays stay on the backend."""
        self.batch.sync(self.camera)
        return self._project_synced()

    def _project_synced(self) -> Projection:
        """``project`` for a batch already synced this frame."""
        self.camera.set_viewport(*self.size)
        b = self.batch
        return self.projector.project(b.positions, b.object_id, b.model,
                                      b.view_projection(self.camera), self.size, runs=b.runs)

    def _colors_on_host(self) -> np.ndarray:
        """(N, 4) uint8 host copy of the batch's colours, copied again only when its
        vertex revision changes (colours are static between repacks)."""
        b = self.batch
        key = (b.vertex_revision, b.vertex_count)
        if getattr(self, "_host_colors_key", None) != key:
            self._host_colors = np.ascontiguousarray(to_host(b.colors))
            self._host_colors_key = key
        return self._host_colors

    def _color_tables(self):
        """(encoded, linear) (N, 4) float64 vertex colour tables for shading, made again
        only when the vertex revision changes (engine.render.shading.color_tables)."""
        key = (self.batch.vertex_revision, self.batch.vertex_count)
        if getattr(self, "_color_tables_key", None) != key:
            self._color_tables_cache = color_tables(self._colors_on_host())
            self._color_tables_key = key
        return self._color_tables_cache

    def _cuda(self):
        """The CUDA surfaces path (engine.render.backends.cupy_surfaces), made once."""
        if self._cuda_surfaces is None:
            from .backends.cupy_surfaces import CudaSurfaces

            self._cuda_surfaces = CudaSurfaces()
        return self._cuda_surfaces

    @property
    def primitives(self) -> Primitives | None:
        """The primitive assembly of the last frame (triangles, lines, materials), or
        None before the first frame."""
        return self._prims

    def _assembly(self) -> Primitives:
        """Sync the batch; the primitive assembly of its current contents (cached)."""
        self.batch.sync(self.camera)
        self._prims = Primitives.of(self.batch, self.scene, self._prims)
        return self._prims

    def visibility(self) -> np.ndarray | None:
        """The visibility keys of the last software frame: (H, W) uint64, a host copy.

        Each pixel holds the minimum key ``(float32 window-depth bits << 32) | id``
        (engine.render.frame): ids [0, N) are the batch's vertices drawn as points, then
        the frame's triangles (``primitives.triangles`` order), then its lines;
        ``EMPTY_KEY`` where nothing was drawn. The same frame gives bit-identical keys on
        every software backend. None before the first frame and after a frame drawn
        with raster "gl" (GL keeps no key buffer)."""
        if self._visibility is None:
            return None
        keys, (w, h) = self._visibility
        return np.array(to_host(keys)[: w * h]).reshape(h, w)

    def effective_point_size(self):
        return self.batch.point_size if self.point_size is None else self.point_size

    def render(self, *, depth: bool = True, host: bool = True, copy: bool = True) -> Frame:
        """Project and rasterize; returns Frame(color (H, W, 4) uint8, depth (H, W) float32).

        Points only: with raster "software" the CuPy projector's output is rasterized on
        the GPU (shaders/raster.cu), so points never leave the device, and the Numba
        projector's by the Numba rasterizer; the rasterizers give bit-identical images
        for the same projected points, and the cupy and numba projections are
        bit-identical too (the CUDA build does not fuse multiply-adds). With surfaces
        (meshes drawn solid or as wireframes), points, triangles and lines share one key
        buffer and one resolve (engine.render.triangles, engine.render.shading): on the
        Numba path when the backend is numba, on the GPU (engine.render.backends.
        cupy_surfaces) when it is cupy and the frame has no lines, else the NumPy
        reference. With raster "gl" the frame is drawn by OpenGL offscreen
        (engine.render.gl; on the cupy backend the projected points reach GL by CUDA-GL
        interop where it works).

        Args:
            depth: also return the depth buffer; False gives ``depth=None`` and, on the
                cupy backend, skips its copy to the host.
            host: False returns the frame where the backend rendered it: CuPy arrays
                (views of the rasterizer's device buffers, overwritten by the next frame)
                on the cupy backend for points-only frames with raster "software", e.g.
                to show it through CUDA-GL interop; host arrays otherwise.
            copy: False lets the cupy backend return views of pinned host buffers that
                the next ``render`` overwrites (no allocation per frame): for loops that
                consume each frame at once. True (default) returns arrays the caller owns.
        """
        prims = self._assembly()  # the one batch sync of the frame
        device = self.projector.name == "cupy" and prims.has_surfaces
        cuda = device and self.raster != "gl" and not len(prims.lines)
        inputs = self.frame_inputs(vertex_stage=not (cuda or (device and self.raster == "gl")),
                                   prims=prims)
        if cuda:
            frame = self._cuda().render(inputs, self.batch,
                                        self.batch.view_projection(self.camera), self.size,
                                        self.effective_point_size(), self.scene.background)
            self._visibility = (self._cuda().keys, self.size)
            return frame if depth else Frame(frame.color, None)
        if device and self.raster == "gl":
            # the vertex stage on the device; GL gets its buffers by CUDA-GL interop
            cuda_surfaces = self._cuda()
            cuda_surfaces.upload(inputs.prims, inputs.colors)
            clip, world, normals = cuda_surfaces.vertex_stage(
                self.batch, self.batch.view_projection(self.camera))
            shader = inputs.shader
            if shader is not None:
                shader.world, shader.normals = world, normals
            inputs = inputs._replace(clip=clip)
        if self.raster == "gl":
            self._visibility = None  # GL keeps no key buffer
            frame = self.gl.render_frame(inputs, self.size, self.effective_point_size(),
                                         self.scene.background,
                                         colors_revision=self.batch.vertex_revision)
            return frame if depth else Frame(frame.color, None)
        if inputs.prims.has_surfaces:
            frame = self._render_surfaces(inputs)
            return frame if depth else Frame(frame.color, None)
        p = inputs.projection
        args = (p.screen_xy, p.depth, p.visible, self.batch.colors, self.size,
                self.effective_point_size(), self.scene.background)
        if self.projector.name == "cupy":
            from .backends.cupy_raster import default_rasterizer

            raster = default_rasterizer()
            frame = raster.rasterize(*args, sizes_revision=self.batch.vertex_revision)
            self._visibility = (raster.keys, self.size)
            if not host:
                return frame if depth else Frame(frame.color, None)
            frame = raster.readback(frame, depth=depth)
            if copy:
                frame = Frame(frame.color.copy(), None if frame.depth is None
                              else frame.depth.copy())
            return frame
        raster = rasterize_points
        if self.projector.name == "numba":
            from .backends.numba_raster import rasterize_points_numba as raster
        self._keys = cleared_keys(self._keys, self.size)
        frame = raster(*args, keys=self._keys)
        self._visibility = (self._keys, self.size)
        return frame if depth else Frame(frame.color, None)

    def frame_inputs(self, vertex_stage: bool = True, prims: Primitives | None = None
                     ) -> FrameInputs:
        """Sync the batch and run the vertex stage for one frame: what the software
        rasterizers and the GL painters draw (see ``FrameInputs``). Without
        ``vertex_stage`` the surface vertex stage is left to the caller (the CUDA path
        runs it on the device): ``clip`` and the shader's positions and normals are None.
        ``prims``: this frame's assembly when the caller has already synced the batch."""
        b = self.batch
        prims = self._assembly() if prims is None else prims
        projection = None
        if prims.point_mask.any() or not prims.has_surfaces:
            projection = self._project_synced()
        else:
            self.camera.set_viewport(*self.size)
        if not prims.has_surfaces:
            return FrameInputs(prims, b.colors, projection, None, None, None)
        col = self._colors_on_host()
        clip = world = normals = None
        if vertex_stage:
            stage = surface_vertices
            if self.projector.name == "numba":
                from .backends.numba_vertex import surface_vertices_numba as stage
            runs = b.runs  # only the objects drawn as surfaces: a point cloud beside a
            runs = runs[prims.surface_mask[runs[:, 0]]] if len(runs) else runs  # mesh costs nothing
            clip, world, normals = stage(to_host(b.positions), to_host(b.object_id),
                                         to_host(b.model), b.view_projection(self.camera),
                                         prims.normals, runs,
                                         with_shading=len(prims.triangles) > 0)
        shader = None
        if len(prims.triangles):
            cam = self.camera.world_matrix
            ortho = None
            if isinstance(self.camera, OrthographicCamera):
                ortho = cam[:3, 2] / np.linalg.norm(cam[:3, 2])
            shader = SurfaceShader(prims, None, col, world, normals, cam[:3, 3] - b.origin,
                                   scene_lights(self.scene, self.camera, b.origin),
                                   self.size, ortho, tables=self._color_tables())
        line_rgba = line_colors(col, prims.lines) if len(prims.lines) else None
        return FrameInputs(prims, b.colors, projection, clip, shader, line_rgba)

    def _render_surfaces(self, inputs: FrameInputs) -> Frame:
        """Points, triangles and lines into one key buffer, then one resolve (host)."""
        b, prims, shader = self.batch, inputs.prims, inputs.shader
        size = self.size
        col = self._colors_on_host()
        keys = self._keys = cleared_keys(self._keys, size)
        self._visibility = (keys, size)
        numba = self.projector.name == "numba"
        if inputs.projection is not None:
            p = inputs.projection
            xy, z, vis, col, size = check_points(p.screen_xy, p.depth, p.visible, b.colors,
                                                 self.size)
            point_size = self.effective_point_size()
            if numba:
                from .backends.numba_raster import splat_into

                splat_into(keys, xy, z, vis & prims.point_mask, point_size, size)
            else:
                splat_keys(keys, xy, z, vis & prims.point_mask, point_size, size)
        n, n_tri = b.vertex_count, len(prims.triangles)
        if n_tri:
            double = np.array([m.double_sided for m in prims.materials], bool)
            classify = None
            if numba:
                from .backends.numba_triangles import classify_triangles_numba as classify
            setup = shader.setup = setup_triangles(inputs.clip, prims.triangles,
                                                   ~double[prims.tri_material], size, classify)
            masked = np.array([m.alpha_cutoff is not None for m in prims.materials], bool)
            piece_masked = masked[prims.tri_material[setup.piece_tri]] if masked.any() else None
            opaque = None if piece_masked is None else np.flatnonzero(~piece_masked)
            if numba:
                from .backends.numba_triangles import raster_triangles_numba

                raster_triangles_numba(keys, setup, size, n, opaque)
            else:
                raster_triangles(keys, setup, size, n, opaque)
            if piece_masked is not None and piece_masked.any():
                raster_triangles(keys, setup, size, n, np.flatnonzero(piece_masked),
                                 keep=shader.alpha_keep)
        if len(prims.lines):
            raster_lines(keys, inputs.clip, prims.lines, size, n + n_tri)
        if numba:
            from .backends.numba_shading import resolve_numba

            return resolve_numba(keys, size, n, col, self.scene.background, shader, n_tri,
                                 inputs.line_rgba)
        return resolve(keys, size, n, col, self.scene.background, shader, n_tri,
                       inputs.line_rgba)


class FrameInputs(NamedTuple):
    """One frame's output of the vertex stage, for the software and the GL rasterizers.

    Attributes:
        prims: the Primitives assembly (triangles, lines, point mask, materials).
        colors: (N, 4) uint8 RGBA vertex colours (the batch's, on its array module).
        projection: the projector's Projection (points), or None when no vertex is drawn
            as a point.
        clip: (N, 4) float64 clip-space vertices, or None without surfaces.
        shader: the SurfaceShader context (batch-frame positions and normals, lights,
            eye), or None without triangles; its ``setup`` is filled by the software path.
        line_rgba: (L, 4) uint8 line colours, or None without lines.
    """

    prims: Primitives
    colors: object
    projection: Projection | None
    clip: np.ndarray | None
    shader: SurfaceShader | None
    line_rgba: np.ndarray | None
