"""Offscreen GL: projected points drawn as GL_POINTS into a framebuffer on a headless
EGL context (no display needed; Mesa llvmpipe on machines without a GPU), read back
into an ``engine.render.Frame``.

GL's framebuffer rows run bottom-up and the image's row 0 is the top, so the readback
is flipped. It is read with a pack alignment of 1 so widths that are not a multiple of
4 (e.g. 101) come back without row padding.
"""

from __future__ import annotations

import weakref

import numpy as np

from ...arrays import to_host
from ...errors import EngineError
from ..frame import Frame, background_rgba
from ..transparency import LAYERS, has_blended
from .points import PointPainter
from .surfaces import SurfacePainter

__all__ = ["GLUnavailable", "OffscreenGL", "create_egl_context", "draw_frame"]


class GLUnavailable(EngineError):
    """No usable OpenGL 3.3 context (missing libEGL/Mesa, no driver). The message says why."""


def create_egl_context():
    """A standalone moderngl context on EGL (works with no display).

    Raises GLUnavailable with the underlying reason.
    """
    try:
        import moderngl

        return moderngl.create_standalone_context(require=330, backend="egl")
    except Exception as exc:  # moderngl/glcontext raise bare Exceptions for missing libraries
        raise GLUnavailable(f"cannot create an EGL OpenGL 3.3 context: {exc}") from exc


class OffscreenGL:
    """GL_POINTS rendering into an RGBA8 + depth framebuffer on a standalone EGL context.

    The context (about 0.6 s to create with llvmpipe) and the framebuffer are kept
    between frames; each drawing or reading call makes the context current for its
    duration (every Renderer with raster "gl" has its own, and GL calls go to whichever
    is current); the framebuffer is reallocated only when the size changes.
    ``release()`` frees them; an OffscreenGL dropped without it frees them when it is
    garbage-collected (a ``weakref.finalize``), so a context (about 5-10 MB with
    llvmpipe) never outlives its owner.

    Raises GLUnavailable when no context can be created.
    """

    def __init__(self, ctx=None):
        self.ctx = ctx if ctx is not None else create_egl_context()
        self.painter = PointPainter(self.ctx)
        self._surfaces = None
        self._fbo = None
        self._size = None
        self._ms = None  # the MultisampleTarget of msaa frames (engine.render.gl.multisample)
        self._peeler = None  # the DepthPeeler of frames with BLEND triangles
        self._peeled = False  # the last frame drew transparency layers
        self._atmosphere = None  # the AtmospherePass of fog/sky frames (gl.atmosphere)
        self._readback = np.zeros((0, 0, 4), np.uint8)  # GL's bottom-up rows, kept
        # the finalizer holds this object's attribute dict, never the object itself
        self._release = weakref.finalize(self, _release_gl, self.__dict__)

    @property
    def renderer_name(self) -> str:
        """The GL_RENDERER string (e.g. 'llvmpipe (LLVM 15.0.6, 256 bits)')."""
        return self.ctx.info["GL_RENDERER"]

    def _framebuffer(self, size):
        if self._size != size:
            if self._fbo is not None:
                for att in (*self._fbo.color_attachments, self._fbo.depth_attachment):
                    att.release()
                self._fbo.release()
            self._fbo = self.ctx.framebuffer(
                color_attachments=[self.ctx.renderbuffer(size, components=4)],
                depth_attachment=self.ctx.depth_texture(size))
            self._size = size
        return self._fbo

    def render(self, screen_xy, depth, visible, colors, size, point_size=1.0,
               background=(0.0, 0.0, 0.0, 1.0), colors_revision=None) -> Frame:
        """Draw the points and read the frame back; same arguments as
        ``engine.render.points.rasterize_points`` (``colors_revision``: see PointPainter.draw).

        Returns:
            Frame(color (H, W, 4) uint8 row 0 = top, depth (H, W) float32 in [0, 1], 1.0
            where nothing was drawn; depth has the depth buffer's 24-bit precision).

        Raises:
            ValueError: mismatched shapes, a bad size or point size.
        """
        w, h = (int(v) for v in size)
        if w <= 0 or h <= 0:
            raise ValueError(f"image size must be positive, got {w}x{h}")
        with self.ctx:  # GL calls go to the current context: make it this one
            fbo = self._framebuffer((w, h))
            fbo.use()
            # Clear with the byte-exact background so GL stores the same bytes as the software path.
            bg = background_rgba(background)
            fbo.clear(*(bg / 255.0), depth=1.0)
            self.painter.draw(screen_xy, depth, visible, colors, (w, h), point_size,
                              colors_revision=colors_revision)
            color = np.frombuffer(fbo.read(components=4, alignment=1), np.uint8).reshape(h, w, 4)
            zbuf = np.frombuffer(fbo.depth_attachment.read(alignment=1), np.float32).reshape(h, w)
            return Frame(np.ascontiguousarray(color[::-1]), np.ascontiguousarray(zbuf[::-1]))

    def draw_frame(self, inputs, size, point_size=1.0, background=(0.0, 0.0, 0.0, 1.0),
                   colors_revision=None, samples: int = 1, atmosphere=None,
                   read: bool = False):
        """Clear the framebuffer of ``size`` and draw one frame of vertex-stage output
        (``FrameInputs``: surfaces and points) into it.
        With ``samples`` > 1 the frame is drawn multisampled and resolved into it
        (engine.render.gl.multisample). With ``atmosphere`` (the frame's
        engine.render.atmosphere.AtmosphereParameters) the fog and sky are applied by
        a full-screen pass (engine.render.gl.atmosphere).

        Returns None, or with ``read`` the colour Frame (C-contiguous (H, W, 4) uint8,
        row 0 at the top, the BLEND layers composited over it; depth None: ``read_depth``
        reads it) read while the context is still current: releasing the context between
        the draw and the read (as two calls did) flushed llvmpipe's deferred draw and cost
        the bunny's 1280x720 frame about 4 ms (docs/performance.md, "GL mode")."""
        w, h = (int(v) for v in size)
        with self.ctx:
            fbo = self._framebuffer((w, h))
            fogged = None if atmosphere is None else self._atmosphere_pass((w, h))
            scene_fbo = fbo if fogged is None else fogged.fbo
            ms = self._multisample((w, h), samples) if samples > 1 else None
            draw_into = scene_fbo if ms is None else ms.fbo
            draw_into.use()
            draw_into.clear(*(background_rgba(background) / 255.0), depth=1.0)
            draw_frame(self.ctx, inputs, (w, h), point_size, self.painter, self._surface_painter,
                       colors_revision)
            if ms is not None:  # resolved, each sample fogged by its own depth
                ms.resolve_into(fbo, None if fogged is None else (fogged, atmosphere))
            elif fogged is not None:
                fogged.apply_into(fbo, atmosphere)
            self._peeled = has_blended(inputs.prims)
            if self._peeled:  # BLEND triangles: the transparency passes
                self._peeler_for((w, h)).peel(
                    self._surface_painter, inputs, fbo.depth_attachment,
                    None if fogged is None else (fogged, atmosphere))
            return self._read_color(fbo, w, h) if read else None

    def _atmosphere_pass(self, size):
        """The AtmospherePass of ``size``, kept between frames."""
        ap = self._atmosphere
        if ap is None or ap.size != size:
            from .atmosphere import AtmospherePass

            if ap is not None:
                ap.release()
            ap = self._atmosphere = AtmospherePass(self.ctx, size)
        return ap

    def _peeler_for(self, size):
        """The DepthPeeler of ``size`` (engine.render.gl.peeling), kept between frames."""
        if self._peeler is None or self._peeler.size != size:
            from .peeling import DepthPeeler

            if self._peeler is not None:
                self._peeler.release()
            self._peeler = DepthPeeler(self.ctx, size, LAYERS)
        return self._peeler

    def _multisample(self, size, samples):
        """The MultisampleTarget of ``size`` and ``samples``, kept between frames."""
        ms = self._ms
        if ms is None or (ms.size, ms.samples) != (size, samples):
            from .multisample import MultisampleTarget

            if ms is not None:
                ms.release()
            ms = self._ms = MultisampleTarget(self.ctx, size, samples)
        return ms

    def _read_color(self, fbo, w, h) -> Frame:
        """The colour of ``fbo`` (current context), row 0 at the top, the BLEND layers
        composited over it when the last frame drew them; depth None."""
        # read into an array kept between frames, then flipped into the caller's: a fresh
        # buffer for GL's rows as well made the flip cost about 3 ms of the bunny's
        # 1280x720 frame (page faults; 0.1 ms in a warm buffer)
        if self._readback.shape != (h, w, 4):
            self._readback = np.empty((h, w, 4), np.uint8)
        fbo.read_into(self._readback, components=4, alignment=1)
        color = np.empty((h, w, 4), np.uint8)
        np.copyto(color, self._readback[::-1])
        if self._peeled:  # the BLEND layers over it (engine.render.transparency)
            color = self._peeler.composite(color)
        return Frame(color, None)

    def read_depth(self, size) -> np.ndarray:
        """(H, W) float32 window depth of the framebuffer drawn by ``draw_frame``, row 0
        at the top."""
        w, h = (int(v) for v in size)
        with self.ctx:
            att = self._framebuffer((w, h)).depth_attachment
            zbuf = np.frombuffer(att.read(alignment=1), np.float32).reshape(h, w)
            return np.ascontiguousarray(zbuf[::-1])

    @property
    def _surface_painter(self):
        if self._surfaces is None:
            self._surfaces = SurfacePainter(self.ctx)
        return self._surfaces

    def release(self):
        """Free the framebuffer, the painters' GL objects and the context (once; later
        calls do nothing)."""
        self._release()


def _release_gl(state: dict):
    """Free what an OffscreenGL holds (its attribute dict ``state``): the painters' GL
    objects and CUDA-GL registrations and the framebuffer, with its context made current
    (a finalizer may run while another context is current), then the context."""
    ctx = state["ctx"]
    with ctx:
        state["painter"].release()
        if state["_surfaces"] is not None:
            state["_surfaces"].release()
        for target in (state["_ms"], state["_atmosphere"], state["_peeler"]):
            if target is not None:
                target.release()
        fbo = state["_fbo"]
        if fbo is not None:
            for att in (*fbo.color_attachments, fbo.depth_attachment):
                att.release()
            fbo.release()
    state["_fbo"] = state["_surfaces"] = None
    ctx.release()


def draw_frame(ctx, inputs, viewport, point_size, points: PointPainter, surfaces, colors_revision=None):
    """Draw ``inputs`` (``Renderer.frame_inputs()``) into the bound, cleared framebuffer:
    the surfaces (``surfaces``: a SurfacePainter, created by the caller when needed), then
    the points drawn as points, all depth-tested against one depth buffer."""
    if inputs.prims.has_surfaces:
        surfaces.draw(inputs, viewport)
    p = inputs.projection
    if p is not None:
        visible = p.visible
        if inputs.prims.has_surfaces:  # vertices of solid/wireframe meshes are not points
            visible = to_host(visible) & inputs.prims.point_mask
        colors = inputs.colors if inputs.point_rgba is None else inputs.point_rgba
        if inputs.point_rgba is not None:
            colors_revision = None  # lit colours change with the lights and the camera
        if inputs.sprites is not None:  # discs, world sizes (engine.render.sprites)
            points.draw_sprites(p.screen_xy, p.depth, visible, colors, viewport,
                                inputs.sprites)
        else:
            points.draw(p.screen_xy, p.depth, visible, colors, viewport, point_size,
                        colors_revision=colors_revision)
