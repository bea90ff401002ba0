"""Interactive window: a pyglet window with a moderngl context showing a Renderer's scene.

Per frame (``Viewer.step``): ``controller.tick(dt)``, the per-frame callbacks, one
projection, then either GL_POINTS from the projected buffer (raster "gl") or the
software-rasterized image drawn as a full-screen textured quad (raster "software"), then
a buffer swap. With ``vsync`` the swap waits for the display, so frames come at the
display's refresh rate. A software frame in an X11 window on a CPU GL driver (Mesa
llvmpipe) is instead copied into the window through X shared memory
(``engine.display.xshm``; ``present="auto"``): llvmpipe's quad cost 4-5 ms of a 1280x720
frame, the shared copy about 1 ms; no buffer swap then, and no vsync.

Input stays out of the engine's controllers: the window forwards pyglet's events
unchanged to an optional ``controller`` object, calling only the methods it has:

    on_key_press(symbol, modifiers)          on_key_release(symbol, modifiers)
    on_mouse_press(x, y, button, modifiers)  on_mouse_release(x, y, button, modifiers)
    on_mouse_drag(x, y, dx, dy, buttons, modifiers)
    on_mouse_motion(x, y, dx, dy)            on_mouse_scroll(x, y, scroll_x, scroll_y)
    on_deactivate()                          (the window lost focus: release held keys)
    tick(dt)                                 (once per frame, dt in seconds)

Pointer coordinates (x, y, dx, dy) are *frame pixels*: pixels of the framebuffer the
renderer draws (``renderer.size``), with pyglet's origin at the bottom-left, y up. pyglet
reports window *points*, which differ from pixels by the pixel ratio on HiDPI displays
(400x300 points at ratio 2 is an 800x600 framebuffer); the Viewer scales them once, here,
so controllers, picking and the HUD all work in the renderer's pixels.
``symbol``/``button`` are ``pyglet.window.key`` / ``pyglet.window.mouse`` constants.
Esc (close) and F12 (screenshot) are handled by the window and not forwarded.

Keys: Esc quits; F12 saves a PNG screenshot of the next frame into ``screenshot_dir``.
With ``aids`` (the default), G, B and X toggle the ground grid, the bounding box and the
orientation gizmo, and a left click (press and release without moving) picks what is
under the cursor (``engine.display.aids``); these keys are not forwarded either.
The caption shows what is drawn (triangles, lines, points), frames per second, the
raster mode, the last pick and the help line (``aids.HELP_LINE``).

Headless use (tests, servers): set ``PYGLET_HEADLESS=1`` (pyglet then opens EGL
windows), or run under Xvfb with a 24-bit screen. Do not create an EGL standalone
context (``OffscreenGL``) in the same process as an X11 window: the EGL context stays
current and the window reads back empty; headless pyglet windows mix fine with it.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np

from ..io.image import save_image
from ..render.gl import PointPainter
from ..render.transparency import has_blended
from .aids import AID_KEYS, HELP_LINE, ViewerAids, describe_pick
from .blit import ImageBlit
from .viewport import Viewport, viewport_size
from .xshm import SharedImagePresenter

__all__ = ["CONTROLLER_EVENTS", "PRESENT_MODES", "Viewer", "is_software_gl"]

log = logging.getLogger("engine")

CONTROLLER_EVENTS = ("on_key_press", "on_key_release", "on_mouse_press", "on_mouse_release",
                     "on_mouse_drag", "on_mouse_motion", "on_mouse_scroll", "on_deactivate")
# Leading arguments of pointer events that are coordinates: (x, y) or (x, y, dx, dy).
_POINTER_ARGS = {"on_mouse_press": 2, "on_mouse_release": 2, "on_mouse_motion": 4,
                 "on_mouse_drag": 4, "on_mouse_scroll": 2}

# GL_RENDERER substrings of CPU implementations, on which the engine's own rasterizer is
# faster than GL_POINTS (see README, "Seeing it").
_CPU_GL_RENDERERS = ("llvmpipe", "softpipe", "swrast", "swiftshader", "software rasterizer")

CAPTION_INTERVAL_S = 0.5

# How software frames reach the window: "auto" (X shared memory where GL is a CPU driver
# and the window an X11 one with MIT-SHM, else GL) or "gl" (always the textured quad).
PRESENT_MODES = ("auto", "gl")


def is_software_gl(renderer_name: str) -> bool:
    """True when GL_RENDERER names a CPU implementation (Mesa llvmpipe, SwiftShader...)."""
    name = renderer_name.lower()
    return any(s in name for s in _CPU_GL_RENDERERS)


def _gl_config(pyglet):
    # 8 bits per channel explicitly: headless pyglet otherwise picks a 16-bit config,
    # and screenshots would not match the offscreen render.
    return pyglet.gl.Config(red_size=8, green_size=8, blue_size=8, alpha_size=8,
                            depth_size=24, double_buffer=True, major_version=3,
                            minor_version=3, forward_compatible=True)


class Viewer:
    """A window showing ``renderer``'s scene until closed.

    Args:
        renderer: an ``engine.Renderer``; its size becomes the window size (in points),
            then follows the framebuffer size (HiDPI) and every resize.
        raster: "gl" (GL_POINTS from the projected buffer), "software" (the engine's
            rasterizer, shown as a texture) or "auto": "gl" on a hardware GL driver,
            "software" on a CPU one (llvmpipe), where it is the faster path. The choice
            is written to ``renderer.raster`` as well.
        controller: optional object receiving input events and ``tick(dt)``; see the
            module docstring. May be replaced any time via ``viewer.controller``.
        on_frame: optional callable ``on_frame(viewer, dt)`` run every frame before
            drawing (animate nodes, move the camera); more via ``frame_callbacks``.
        caption: window title prefix.
        vsync: wait for the display's refresh on each swap.
        visible: show the window (False for tests/recording).
        screenshot_dir: where F12 screenshots go.
        aids: bind the viewer-aid keys and click picking (``engine.display.aids``); a
            ``ViewerAids`` to use (e.g. with the grid already on), True for a new one
            with all off, False for none (the keys then reach the controller).
        present: how raster "software" frames reach the window (``PRESENT_MODES``):
            "auto" copies them through X shared memory (``engine.display.xshm``) when
            GL is a CPU driver and the window is an X11 one with MIT-SHM (frames then
            come as fast as they render: ``vsync`` has no effect), else draws them as
            a textured quad; "gl" always draws the quad.

    Attributes:
        aids: the ``ViewerAids``, or None.
        presented_by: "x11-shm" or "gl", how frames reach the window.

    Raises:
        Whatever pyglet raises when no window can be opened (no display, no GL 3.3
        config); ``engine.display.present`` turns that into a logged fallback.
        ValueError for an unknown raster or present mode.
    """

    def __init__(self, renderer, raster="auto", controller=None, on_frame=None,
                 caption="frustum", vsync=True, visible=True, screenshot_dir=".",
                 resizable=True, aids=True, present="auto"):
        if raster not in ("auto", "gl", "software"):
            raise ValueError(f"raster must be 'auto', 'gl' or 'software', got {raster!r}")
        if present not in PRESENT_MODES:
            raise ValueError(f"present must be one of {PRESENT_MODES}, got {present!r}")
        import moderngl
        import pyglet
        import pyglet.window  # opens the display; raises when there is none
        from _moderngl import DefaultLoader

        self._pyglet = pyglet
        self.renderer = renderer
        self.controller = controller
        self.frame_callbacks = [on_frame] if on_frame is not None else []
        self.caption = caption
        self.screenshot_dir = Path(screenshot_dir)
        self.aids = (aids if isinstance(aids, ViewerAids)
                     else ViewerAids(renderer) if aids else None)
        self._press_at = None  # frame pixels of a left press that may become a click
        w, h = renderer.size
        self.window = pyglet.window.Window(w, h, caption=caption, resizable=resizable,
                                           vsync=vsync, visible=visible,
                                           config=_gl_config(pyglet))
        try:
            # A fresh loader per window: plain create_context() returns the process's
            # first context (possibly an EGL standalone one), and a second window's
            # context fails through the X11 path under headless pyglet.
            self.ctx = moderngl.create_context(require=330, context=DefaultLoader())
            self.gl_renderer = self.ctx.info["GL_RENDERER"]
            if raster == "auto":
                raster = "software" if is_software_gl(self.gl_renderer) else "gl"
                log.debug("window raster: %s (GL renderer %s)", raster, self.gl_renderer)
            self.raster = raster
            renderer.raster = raster
            self._points = PointPainter(self.ctx) if raster == "gl" else None
            self._surfaces = None  # the SurfacePainter, made when a frame has surfaces
            self._multisample = None  # GL raster with renderer.msaa > 1 (gl.multisample)
            self._peeler = None  # GL raster frames with BLEND triangles (gl.peeling)
            self._atmosphere = None  # GL raster with fog or a sky (gl.atmosphere)
            self._shared = None  # the SharedImagePresenter of software frames, or None
            if raster == "software" and present == "auto" and is_software_gl(self.gl_renderer):
                self._shared, why = SharedImagePresenter.open(self.window)
                if self._shared is None:
                    log.debug("software frames drawn by GL, not X shared memory: %s", why)
            self.presented_by = "gl" if self._shared is None else "x11-shm"
            self._blit = (ImageBlit(self.ctx) if raster == "software" and self._shared is None
                          else None)
            self._overlay_blit = None  # made when a GL-raster frame has an overlay
            self._skipped_overlays: set[int] = set()  # warned about once
        except Exception:
            self.window.close()
            raise
        self.viewport = self._update_viewport()
        self.frames = 0
        self.fps = 0.0
        self.closed = False
        self.last_screenshot: Path | None = None
        self._screenshot_to: Path | None = None
        self._fps_frames = 0
        self._fps_t0 = time.perf_counter()
        self._last_t = None
        handlers = {name: self._forwarder(name) for name in CONTROLLER_EVENTS}
        handlers.update(on_key_press=self._on_key_press, on_resize=self._on_resize,
                        on_close=self._on_close)
        if self.aids is not None:
            handlers.update(on_mouse_press=self._on_mouse_press,
                            on_mouse_release=self._on_mouse_release)
            log.info("keys: %s", HELP_LINE)
        self.window.push_handlers(**handlers)
        self._set_caption()

    # --- events --------------------------------------------------------------------
    def _forwarder(self, name):
        count = _POINTER_ARGS.get(name, 0)

        def forward(*args):
            handler = getattr(self.controller, name, None)
            if handler is None:
                return None
            if count:
                args = self.to_frame_pixels(*args[:count]) + tuple(args[count:])
            return handler(*args)
        return forward

    def to_frame_pixels(self, *coords) -> tuple[float, ...]:
        """Window points (x, y[, dx, dy]) -> frame pixels (bottom-left origin kept)."""
        pw, ph = self.window.get_size()
        sx = self.viewport.width / max(pw, 1)
        sy = self.viewport.height / max(ph, 1)
        return tuple(float(c) * (sx if i % 2 == 0 else sy) for i, c in enumerate(coords))

    def _on_key_press(self, symbol, modifiers):
        key = self._pyglet.window.key
        if symbol == key.ESCAPE:
            self.closed = True
            return True
        if symbol == key.F12:
            self.request_screenshot()
            return True
        if self.aids is not None and not modifiers & (key.MOD_CTRL | key.MOD_ALT):
            aid = AID_KEYS.get(key.symbol_string(symbol).lower())
            if aid is not None:
                self.aids.toggle(aid)
                return True
        return self._forwarder("on_key_press")(symbol, modifiers)

    # A press and release of the left button less than this far apart (frame pixels) is
    # a click (a pick); farther is a drag (the controller's).
    CLICK_SLOP_PX = 3.0

    def _on_mouse_press(self, x, y, button, modifiers):
        if button == self._pyglet.window.mouse.LEFT:
            self._press_at = self.to_frame_pixels(x, y)
        return self._forwarder("on_mouse_press")(x, y, button, modifiers)

    def _on_mouse_release(self, x, y, button, modifiers):
        press, self._press_at = self._press_at, None
        if button == self._pyglet.window.mouse.LEFT and press is not None:
            fx, fy = self.to_frame_pixels(x, y)
            if np.hypot(fx - press[0], fy - press[1]) < self.CLICK_SLOP_PX:
                self.click(fx, fy)
        return self._forwarder("on_mouse_release")(x, y, button, modifiers)

    def click(self, x: float, y: float):
        """Pick at frame pixel (x, y), bottom-left origin as pointer events give it; the
        result goes to the caption and the log (``aids.pick``). Returns the Pick or None."""
        pick = self.aids.pick(x, self.viewport.height - y)
        self._set_caption()
        return pick

    def _on_resize(self, width, height):
        self.viewport = self._update_viewport((width, height))
        # pyglet's default handler sets the GL viewport and its own projection; ours is
        # set every frame, so that work is skipped.
        return True

    def _on_close(self):
        self.closed = True
        return True

    def _update_viewport(self, window_size=None) -> Viewport:
        size = window_size if window_size is not None else self.window.get_size()
        vp = viewport_size(size, self.window.get_pixel_ratio())
        self.renderer.resize(vp.width, vp.height)
        return vp

    # --- frames --------------------------------------------------------------------
    def request_screenshot(self, path=None) -> Path:
        """Save the next drawn frame as a PNG at ``path`` (default: a time-stamped name in
        ``screenshot_dir``). Returns the path it will be written to."""
        if path is None:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            path = self.screenshot_dir / f"frustum-{stamp}-{self.frames:06d}.png"
        self._screenshot_to = Path(path)
        return self._screenshot_to

    def read_pixels(self) -> np.ndarray:
        """The back buffer as (H, W, 4) uint8 RGBA, row 0 = top. Valid after ``draw()``
        and before the swap (``step`` saves requested screenshots at that point). With
        ``presented_by`` "x11-shm": the bytes last put into the window."""
        if self._shared is not None:
            return self._shared.read()
        w, h = self.viewport.width, self.viewport.height
        data = self.ctx.screen.read(viewport=(0, 0, w, h), components=4, alignment=1)
        # Reading the default framebuffer leaves GL_INVALID_OPERATION pending with some
        # drivers (seen with pyglet + Mesa); reading ctx.error clears it so it is not
        # blamed on the next call.
        _ = self.ctx.error
        return np.ascontiguousarray(np.frombuffer(data, np.uint8).reshape(h, w, 4)[::-1])

    def draw(self):
        """Project the scene and draw it into the back buffer."""
        r = self.renderer
        w, h = self.viewport.width, self.viewport.height
        self.ctx.screen.use()
        self.ctx.viewport = (0, 0, w, h)
        if self.raster == "gl":
            from ..render.atmosphere import atmosphere_parameters
            from ..render.frame import background_rgba
            from ..render.gl import SurfacePainter, draw_frame

            inputs = r.frame_inputs()
            if inputs.prims.has_surfaces and self._surfaces is None:
                self._surfaces = SurfacePainter(self.ctx)
            ms = self._multisample_target((w, h), r.msaa)
            fog = atmosphere_parameters(r.scene, r.camera)
            # with fog or a sky the frame is drawn into textures, then the fog pass
            # draws it into the back buffer (engine.render.gl.atmosphere); with BLEND
            # triangles into a target whose depth can be sampled, the transparency
            # layers peeled against it (engine.render.gl.peeling)
            peeler = self._peeler_for((w, h)) if has_blended(inputs.prims) else None
            final = self.ctx.screen if peeler is None else peeler.opaque_target()
            fogged = None if fog is None else self._atmosphere_target((w, h))
            scene_fbo = final if fogged is None else fogged.fbo
            (scene_fbo if ms is None else ms.fbo).use()
            self.ctx.clear(*(background_rgba(r.scene.background) / 255.0), depth=1.0)
            draw_frame(self.ctx, inputs, (w, h), r.effective_point_size(), self._points,
                       self._surfaces, colors_revision=r.batch.vertex_revision)
            if ms is not None:  # drawn multisampled, resolved (each sample fogged)
                ms.resolve_into(final, None if fogged is None else (fogged, fog))
            elif fogged is not None:
                fogged.apply_into(final, fog)
            self.ctx.viewport = (0, 0, w, h)
            if peeler is not None:  # composited on the host, shown as a software frame
                peeler.peel(self._surfaces, inputs, final.depth_attachment,
                            None if fogged is None else (fogged, fog))
                color = peeler.composite(peeler.read_opaque())
                self.ctx.screen.use()
                self.ctx.viewport = (0, 0, w, h)
                if self._blit is None:
                    self._blit = ImageBlit(self.ctx)
                self._blit.draw(color)
            self._draw_overlays()
        elif self._shared is not None:  # host memory into the window, no GL
            self._shared.draw(r.render(depth=False).color)
        else:
            # host=False: on the cupy backend the frame stays on the device and reaches
            # the texture by CUDA-GL interop; depth is not needed to show it.
            self._blit.draw(r.render(depth=False, host=False).color)

    def _peeler_for(self, size):
        """The window's DepthPeeler of ``size`` (kept while the size stays)."""
        from ..render.gl.peeling import DepthPeeler
        from ..render.transparency import LAYERS

        if self._peeler is not None and self._peeler.size != tuple(size):
            self._peeler.release()
            self._peeler = None
        if self._peeler is None:
            self._peeler = DepthPeeler(self.ctx, size, LAYERS)
        return self._peeler

    def _multisample_target(self, size, samples):
        """The window's MultisampleTarget for GL raster with ``samples`` > 1 (kept while
        the size and count stay), or None for one sample."""
        ms = self._multisample
        if ms is not None and (ms.size, ms.samples) != (tuple(size), samples):
            ms.release()
            ms = self._multisample = None
        if samples > 1 and ms is None:
            from ..render.gl.multisample import MultisampleTarget

            ms = self._multisample = MultisampleTarget(self.ctx, size, samples)
        return ms

    def _atmosphere_target(self, size):
        """The window's AtmospherePass for GL raster frames with fog or a sky (kept
        while the size stays)."""
        ap = self._atmosphere
        if ap is not None and ap.size != tuple(size):
            ap.release()
            ap = self._atmosphere = None
        if ap is None:
            from ..render.gl.atmosphere import AtmospherePass

            ap = self._atmosphere = AtmospherePass(self.ctx, size)
        return ap

    def _draw_overlays(self):
        """GL raster: the renderer's overlays that give an image and a rect (the
        orientation gizmo), alpha-blended into their corner; ``render`` draws them in the
        software path."""
        import moderngl

        r, h = self.renderer, self.viewport.height
        for overlay in r.overlays:
            if not (hasattr(overlay, "rect") and hasattr(overlay, "image")):
                if id(overlay) not in self._skipped_overlays:
                    self._skipped_overlays.add(id(overlay))
                    log.warning("%s draws into images only: not shown with raster 'gl' "
                                "(use raster 'software')", type(overlay).__name__)
                continue
            x0, y0, side, _ = overlay.rect(r.size)
            if self._overlay_blit is None:
                self._overlay_blit = ImageBlit(self.ctx)
            self.ctx.viewport = (x0, h - y0 - side, side, side)  # GL: bottom-left origin
            self.ctx.enable(moderngl.BLEND)
            self.ctx.blend_func = moderngl.DEFAULT_BLENDING
            try:
                self._overlay_blit.draw(overlay.image(r.camera, side))
            finally:
                self.ctx.disable(moderngl.BLEND)
        self.ctx.viewport = (0, 0, self.viewport.width, h)

    def step(self, dt: float):
        """One frame: controller tick, callbacks, draw, pending screenshot, swap (none
        when X shared memory put the frame into the window: the GL back buffer was not
        drawn, and swapping it in would cover the frame)."""
        if self.controller is not None and hasattr(self.controller, "tick"):
            self.controller.tick(dt)
        for callback in self.frame_callbacks:
            callback(self, dt)
        self.draw()
        if self._screenshot_to is not None:
            path, self._screenshot_to = self._screenshot_to, None
            self.last_screenshot = save_image(path, self.read_pixels())
            log.info("saved screenshot %s", path)
        if self._shared is None:
            self.window.flip()
        self.frames += 1
        self._count_fps()

    def _count_fps(self):
        self._fps_frames += 1
        now = time.perf_counter()
        if now - self._fps_t0 >= CAPTION_INTERVAL_S:
            self.fps = self._fps_frames / (now - self._fps_t0)
            self._fps_frames, self._fps_t0 = 0, now
            self._set_caption()

    def caption_text(self) -> str:
        """The window title: prefix, what is drawn (``engine.render.primitives.contents``:
        triangles for meshes, points for point clouds), frames per second, raster mode,
        then the last pick and the help line when the aids are on."""
        from ..render.primitives import contents

        what = contents(self.renderer.primitives, self.renderer.batch.vertex_count)
        text = f"{self.caption} - {what} - {self.fps:.1f} fps - {self.raster}"
        if self.aids is not None:
            if self.aids.last_pick is not None or self.aids.picks:
                text += f" - {describe_pick(self.aids.last_pick)}"
            text += f" - {HELP_LINE}"
        return text

    def _set_caption(self):
        self.window.set_caption(self.caption_text())

    def run(self, max_frames: int | None = None) -> int:
        """Show frames until Esc, the close button, or ``max_frames``; then close.
        Returns the number of frames drawn."""
        try:
            while not self.closed and (max_frames is None or self.frames < max_frames):
                self._pyglet.clock.tick()  # runs anything scheduled with pyglet.clock
                self.window.switch_to()
                self.window.dispatch_events()
                if self.closed:
                    break
                now = time.perf_counter()
                dt = 0.0 if self._last_t is None else now - self._last_t
                self._last_t = now
                self.step(dt)
        finally:
            self.close()
        return self.frames

    def close(self):
        """Release GL objects and close the window (idempotent)."""
        self.closed = True
        if self.window is None:
            return
        self.window.switch_to()
        for obj in (self._points, self._surfaces, self._blit, self._overlay_blit, self._shared,
                    getattr(self, "_multisample", None), getattr(self, "_atmosphere", None),
                    getattr(self, "_peeler", None)):
            if obj is not None:
                obj.release()
        self.window.close()
        self.window = None
