"""The GPU backend: every stage as CUDA kernels launched through CuPy, the data on the
device from the batch to the resolved frame::

    vertex stage   project_points (transform.cu) when vertices are drawn as points;
                   surface_vertices (surface_vertices.cu) for surfaces
    rasterize      points only: clear_keys, splat_points (splat_sprites for discs and
                   world sizes; cupy_raster.CudaRasterizer, its buffers reused); with surfaces: cupy_surfaces.CudaSurfaces (points,
                   classify_triangles, raster_triangles / raster_masked_triangles); the
                   lights' shadow maps first, through the same kernels (shadow_depth)
    resolve        resolve_keys, or resolve_surfaces
    BLEND layers   raster_layer_triangles (cupy_surfaces.CudaSurfaces.raster_layers), then
                   resolve_surfaces per layer (engine.render.transparency)
    read           points only: the device frame itself (``host=False``, e.g. for CUDA-GL
                   interop) or a copy through reused pinned buffers; surfaces: host

Frames with lines (wireframes, Lines geometry) need a line raster this backend lacks:
they run on the host fallback (Numba, or NumPy without Numba), which reads the device
batch (``Backend.for_frame``).
"""

from __future__ import annotations

import numpy as np

from ..frame import Frame
from .stages import LIGHTING, Backend

__all__ = ["CudaBackend"]


class CudaBackend(Backend):
    """The stages on a CUDA device (see the module docstring). Raises
    engine.errors.BackendUnavailable when CuPy, a device or NVRTC is missing."""

    name = "cupy"
    features = frozenset({"points", "triangles"}) | LIGHTING

    def __init__(self):
        super().__init__()
        from .cupy_backend import CupyProjector

        self.projector = CupyProjector()  # raises first, saying what is missing
        self.xp = self.projector.xp
        self._surfaces = None

    def make_fallback(self) -> Backend:
        from .numba_backend import numba_available
        from .software import NumbaBackend, NumpyBackend

        return NumbaBackend() if numba_available() else NumpyBackend()

    @property
    def surfaces(self):
        """The CudaSurfaces stages (made on the first frame with surfaces)."""
        if self._surfaces is None:
            from .cupy_surfaces import CudaSurfaces

            self._surfaces = CudaSurfaces()
        return self._surfaces

    def surface_vertices(self, batch, prims, view, attributes, with_shading, points,
                         deform=None):
        self.surfaces.upload(prims, batch.colors, attributes, deform, self.attribute_changes)
        return self.surfaces.vertex_stage(batch, view.view_projection,
                                          view.size if points else None)

    def shadow_depth(self, batch, prims, shadow_map, slot, deform):
        """One light's depth pass on the device (cupy_surfaces.CudaSurfaces.shadow_depth),
        the casters posed by the frame's ``deform``: (S, S) float32 device array."""
        view = self.light_view(batch, shadow_map)
        clip, vary, _ = self.surface_vertices(batch, prims, view, self.attributes(batch, prims),
                                              True, False, deform)
        return self.surfaces.shadow_depth(prims, clip, vary, shadow_map.size)

    def rasterize(self, inputs, view):
        if inputs.prims.has_surfaces:
            return self.surfaces.rasterize(inputs, view)
        from .cupy_raster import default_rasterizer

        p = inputs.projection
        if inputs.sprites is not None:  # discs, world sizes (engine.render.sprites)
            sp = inputs.sprites
            keys, _ = default_rasterizer().splat_sprites(p.screen_xy, p.depth, p.visible,
                                                         inputs.colors, view.size,
                                                         sp.diameter, sp.round)
            return keys
        keys, _ = default_rasterizer().splat(p.screen_xy, p.depth, p.visible, inputs.colors,
                                             view.size, view.point_size,
                                             sizes_revision=view.vertex_revision)
        return keys

    def raster_layers(self, inputs, view, bound, layers):
        """The transparency pass's k-buffer (engine.render.transparency) on the device."""
        return self.surfaces.raster_layers(inputs, view, bound, layers)

    def resolve(self, keys, inputs, view) -> Frame:
        if inputs.prims.has_surfaces:
            return self.surfaces.resolve(keys, inputs, view)
        from .cupy_raster import default_rasterizer

        colors = self.xp.ascontiguousarray(inputs.colors if inputs.point_rgba is None
                                           else inputs.point_rgba, np.uint8)
        return default_rasterizer().resolve(keys, colors, view.size, view.background)

    def atmosphere(self, frame, view):
        """Fog and sky: CuPy for a frame kept on the device (the base stage), the
        compiled host pass (engine.render.backends.numba_atmosphere) for the host frames
        the surface resolve writes and ``read`` copies out."""
        if hasattr(frame.color, "get"):
            return super().atmosphere(frame, view)
        from .numba_atmosphere import apply_atmosphere_numba

        apply_atmosphere_numba(frame.color, frame.depth, view.scene, view.camera)

    def read(self, frame, depth: bool = True, host: bool = True, copy: bool = True):
        """Device frames (points only): as they are with ``host=False``, else copied into
        the rasterizer's pinned buffers (and out of them unless ``copy`` is False)."""
        if not hasattr(frame.color, "get"):  # surfaces: resolved into host arrays
            return super().read(frame, depth)
        if not host:
            return frame if depth else Frame(frame.color, None)
        from .cupy_raster import default_rasterizer

        frame = default_rasterizer().readback(frame, depth=depth)
        if copy:
            frame = Frame(frame.color.copy(), None if frame.depth is None
                          else frame.depth.copy())
        return frame

