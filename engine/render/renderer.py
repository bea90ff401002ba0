"""Renderer: one frame = sync the batch, one projection launch, rasterize.

    scene graph -> VertexBatch (packed once) -> projector (one launch) -> rasterizer

The viewport is the output size in pixels; the camera's aspect follows it every frame.
"""

from __future__ import annotations

import numpy as np

from ..scene.camera import Camera
from ..scene.graph import Scene
from .backends import Projection, get_projector
from .batch import VertexBatch
from .frame import Frame
from .points import rasterize_points

__all__ = ["RASTER_MODES", "Renderer", "parse_size"]

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


class Renderer:
    """Renders ``scene`` as seen by ``camera`` into ``size`` = (width, height) pixels.

    Args:
        backend: projector name ("auto", "cupy", "numba", "numpy"); see engine.render.backends.
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
        self.projector = get_projector(backend)
        self.batch = VertexBatch(scene, self.projector.xp)
        self.point_size = point_size
        self.raster = raster
        self._gl = None

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
        self.camera.set_viewport(*self.size)
        b = self.batch
        return self.projector.project(b.positions, b.object_id, b.model,
                                      b.view_projection(self.camera), self.size, runs=b.runs)

    def effective_point_size(self):
        return self.batch.point_size if self.point_size is None else self.point_size

    def render(self) -> Frame:
        """Project and rasterize; returns Frame(color, depth) on the host.

        With raster "software", the CuPy projector's output is rasterized on the GPU
        (shaders/raster.cu), so points never leave the device, and the Numba projector's
        by the Numba rasterizer. The rasterizers give bit-identical images for the same
        projected points; projections differ between backends by float rounding only.
        With raster "gl" the points are drawn as GL_POINTS offscreen."""
        p = self.project()
        if self.raster == "gl":
            return self.gl.render(p.screen_xy, p.depth, p.visible, self.batch.colors,
                                  self.size, self.effective_point_size(),
                                  self.scene.background,
                                  colors_revision=self.batch.vertex_revision)
        raster = rasterize_points
        if self.projector.name == "cupy":
            from .backends import cupy_raster

            raster = cupy_raster.rasterize_points_cuda
        elif self.projector.name == "numba":
            from .backends import numba_raster

            raster = numba_raster.rasterize_points_numba
        return raster(p.screen_xy, p.depth, p.visible, self.batch.colors, self.size,
                      self.effective_point_size(), self.scene.background)
