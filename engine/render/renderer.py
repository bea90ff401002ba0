"""Renderer: one frame = sync the batch, then the backend's stages in a fixed order.

    scene graph -> VertexBatch (packed once) -> Primitives (assembled when the layout
        changes) -> vertex stage (one pass over every vertex) -> rasterize (one 64-bit key
        buffer: depth | primitive id) -> resolve (shade each pixel once) -> read

The stages belong to a backend (engine.render.backends: NumPy, Numba, CUDA; GL for
``raster="gl"``); the Renderer never asks which one it holds. The viewport is the output
size in pixels; the camera's aspect follows it every frame.
"""

from __future__ import annotations

import logging

import numpy as np

from ..arrays import to_host
from ..scene.camera import Camera
from ..scene.graph import Scene
from .backends import Projection, get_backend
from .backends.stages import FrameInputs, FrameView
from .batch import VertexBatch
from .frame import Frame
from .msaa import check_msaa, render_multisampled
from .primitives import Primitives
from .transparency import draw_transparent, has_blended

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
        backend: "auto", "cupy", "numba" or "numpy" (engine.render.backends): the
            implementation of every stage. "auto" chooses once, here, from the scene's
            vertex count: Numba below this machine's measured CPU/GPU crossover, CuPy from
            it on (when a GPU works).
        point_size: point diameter in pixels overriding each geometry's own size (and
            its ``size_units``: every point is then this many pixels), or None.
        raster: who rasterizes and shades: "software" (the backend itself: NumPy, Numba or
            CUDA; no GL needed) or "gl" (OpenGL on an offscreen EGL context draws the
            backend's vertex-stage output, engine.render.gl.GLStages).
        msaa: samples per pixel, 1, 2, 4 or 8 (engine.render.msaa): 1 (the default) is
            one sample at each pixel centre, as fast as ever, for real-time loops; more
            anti-alias every edge (triangles, lines, points) at about one raster per
            sample. With raster "gl" it is GL multisampling of the framebuffer. Images
            and videos (``frustum render``, ``render_video``, ``engine.show``) default
            to 4.

    Attributes:
        overlays: objects drawn over each rendered frame by ``render``, in order, with
            ``overlay.draw(color, camera)`` (e.g. ``engine.render.gizmo.OrientationAxes``).
            A window drawing with raster "gl" (``engine.display.Viewer``) shows those
            that also have ``rect(size)`` and ``image(camera, side)``, as the gizmo has,
            and warns once about the others.
        batch: the VertexBatch (device arrays of the packed scene).
        backend: the Backend (engine.render.backends.stages).
        drawn_by: the name of the stages that drew the last frame: the backend's, its
            fallback's for a frame needing a feature it lacks ("numba" for lines
            on cupy), or "gl"; None before the first frame.
        projector: the backend's projector (the vertex projection alone).
        gl: the OffscreenGL presenter, created on first use by ``render()`` with
            raster "gl" (raises engine.render.gl.GLUnavailable when no context can be made).

    ``close()`` (or ``with Renderer(...) as r:``) frees the GL context at once; a
    Renderer dropped without it frees it when garbage-collected.
    """

    def __init__(self, scene: Scene, camera: Camera, size=(640, 480), backend=None,
                 point_size: float | None = None, raster: str = "software", msaa: int = 1):
        if not isinstance(scene, Scene):
            raise TypeError(f"scene must be an engine.Scene, got {type(scene).__name__}")
        if not isinstance(camera, Camera):
            raise TypeError(f"camera must be an engine.Camera, got {type(camera).__name__}")
        self.scene = scene
        self.camera = camera
        self.size = check_size(size)
        self.backend = get_backend(backend, vertex_count=_drawable_vertices(scene))
        self.batch = VertexBatch(scene, self.backend.xp, transforms=self.backend.transforms)
        self.point_size = point_size
        self.raster = raster
        self.msaa = msaa
        self.overlays: list = []
        self._gl = None
        self._gl_stages = None
        self._prims = None
        self._visibility = None  # (key buffer, size) of the last frame (host or device)
        self.drawn_by = None

    @property
    def projector(self):
        """The backend's projector (``project(positions, object_id, model, view_proj,
        viewport)``)."""
        return self.backend.projector

    @projector.setter
    def projector(self, projector):
        self.backend.projector = projector

    @property
    def raster(self) -> str:
        return self._raster

    @raster.setter
    def raster(self, value: str):
        if value not in RASTER_MODES:
            raise ValueError(f"raster must be one of {', '.join(RASTER_MODES)}, got {value!r}")
        self._raster = value

    @property
    def msaa(self) -> int:
        """Samples per pixel (engine.render.msaa.SAMPLE_COUNTS); settable between frames."""
        return self._msaa

    @msaa.setter
    def msaa(self, value: int):
        self._msaa = check_msaa(value)

    @property
    def gl(self):
        if self._gl is None:
            from .gl import OffscreenGL

            self._gl = OffscreenGL()
        return self._gl

    def close(self):
        """Release the offscreen GL context, if one was created (dropping the Renderer
        releases it too, when it is garbage-collected). The Renderer stays usable: the
        next GL frame makes a new context."""
        if self._gl is not None:
            self._gl.release()
            self._gl = self._gl_stages = None

    def __enter__(self):
        """``with Renderer(...) as r:`` closes ``r`` (its GL context) at the end."""
        return self

    def __exit__(self, *exc):
        self.close()

    def resize(self, width: int, height: int):
        """New viewport in pixels; the camera aspect follows on the next frame."""
        self.size = check_size((width, height))

    def project(self) -> Projection:
        """Project every vertex of the scene (one launch). Arrays stay on the backend."""
        self.batch.sync(self.camera)
        self.camera.set_viewport(*self.size)
        b = self.batch
        return self.projector.project(b.positions, b.object_id, b.model,
                                      b.view_projection(self.camera), self.size, runs=b.runs)

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

    def _view(self, reuse_output: bool = False) -> FrameView:
        """This frame's view (camera viewport set to the output size)."""
        self.camera.set_viewport(*self.size)
        return FrameView(self.scene, self.camera, self.size,
                         self.batch.view_projection(self.camera), self.effective_point_size(),
                         self.scene.background, self.batch.vertex_revision, reuse_output,
                         self.point_size is not None)

    def _stages(self, prims):
        """The stages that draw this frame: GL's for raster "gl", else the backend's (or
        its fallback for a feature it lacks, engine.render.backends.stages.Backend)."""
        if self.raster == "gl":
            if self._gl_stages is None:
                from .gl import GLStages

                self._gl_stages = GLStages(self.backend, self.gl)
            self._gl_stages.samples = self.msaa
            return self._gl_stages
        return self.backend.for_frame(prims, self.scene)

    def visibility(self) -> np.ndarray | None:
        """The visibility keys of the last software frame: (H, W) uint64, a host copy.

        Each pixel holds the minimum key ``(float32 window-depth bits << 32) | id``
        (engine.render.frame): ids [0, N) are the batch's vertices drawn as points, then
        the frame's triangles (``primitives.triangles`` order), then its lines;
        ``EMPTY_KEY`` where nothing was drawn. With ``msaa`` > 1 these are sample 0's
        keys (engine.render.msaa). The same frame gives bit-identical keys on
        every software backend. None before the first frame and after a frame drawn
        with raster "gl" (GL keeps no key buffer)."""
        if self._visibility is None:
            return None
        keys, (w, h) = self._visibility
        return np.array(to_host(keys)[: w * h]).reshape(h, w)

    def effective_point_size(self):
        return self.batch.point_size if self.point_size is None else self.point_size

    def render(self, *, depth: bool = True, host: bool = True, copy: bool = True) -> Frame:
        """One frame: Frame(color (H, W, 4) uint8, depth (H, W) float32), the scene's fog
        and sky applied to it (engine.render.atmosphere), then each of ``overlays``
        drawn into its colour (the depth stays the scene's).

        Points, triangles and lines share one key buffer and one resolve on every
        backend: the backend's stages run in order (engine.render.backends.stages), so
        NumPy, Numba and CUDA give the same keys bit for bit and colours within 1/255;
        with raster "gl" OpenGL draws the backend's vertex-stage output (on the cupy
        backend by CUDA-GL interop where it works).

        Args:
            depth: also return the depth buffer; False gives ``depth=None`` and, on the
                cupy backend, skips its copy to the host.
            host: False returns the frame where the backend rendered it: CuPy arrays
                (views of the rasterizer's device buffers, overwritten by the next frame)
                on the cupy backend for points-only frames with raster "software", e.g.
                to show it through CUDA-GL interop; host arrays otherwise.
            copy: False lets the cupy backend return views of pinned host buffers, and
                the Numba backend points-only frames in arrays it keeps, that the next
                ``render`` overwrites (no allocation per frame): for loops that consume
                each frame at once. True (default) returns arrays the caller owns.
        """
        prims = self._assembly()  # the one batch sync of the frame
        view = self._view(reuse_output=not copy)
        stages = self._stages(prims)
        self.drawn_by = stages.name
        inputs = stages.vertex_stage(self.batch, prims, view)
        atmosphere = self.scene.fog is not None or self.scene.sky is not None
        # BLEND triangles: a second pass over the opaque frame (GL peels its own layers)
        blend = self.raster != "gl" and has_blended(prims)
        multisampled = self.msaa > 1 and self.raster != "gl"
        if multisampled:
            # S rasters at the sample positions, each primitive shaded once per pixel
            frame, keys = render_multisampled(stages, inputs, view, self.msaa)
            self._visibility = (keys, self.size)
        else:
            keys = stages.rasterize(inputs, view)
            frame = stages.resolve(keys, inputs, view)
            self._visibility = None if keys is None else (keys, self.size)
            # fog and sky need the depth (engine.render.atmosphere), asked for or not,
            # and so do the BLEND layers (engine.render.transparency)
            frame = stages.read(frame, depth=depth or blend or (
                atmosphere and stages.atmosphere_reads_depth), host=host, copy=copy)
        if atmosphere and not multisampled:  # (the multisampled layers have it already)
            stages.atmosphere(frame, view)
        if blend:  # each layer fogged by its own depth there
            frame = draw_transparent(stages, inputs, view, frame)
        if not depth and frame.depth is not None:
            frame = Frame(frame.color, None)
        for overlay in self.overlays:
            overlay.draw(frame.color, self.camera)
        return frame

    def frame_inputs(self) -> FrameInputs:
        """Sync the batch and run the backend's vertex stage for one frame: what the
        rasterizers and the GL painters draw (``FrameInputs``; device arrays on the cupy
        backend)."""
        prims = self._assembly()
        return self.backend.vertex_stage(self.batch, prims, self._view())
