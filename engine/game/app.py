"""Application layer: a fixed-timestep game/scene loop around a Renderer.

``App`` owns the scene, the camera, an optional camera controller, the renderer, the
input map, the HUD and a seeded random generator, and runs::

    frame:  advance(frame_dt)        simulated time += frame_dt * time_scale
              while accumulator >= fixed_dt:   (at most max_updates_per_frame)
                  input.update(); controller.tick(fixed_dt); on_update(fixed_dt)
            render_frame()           project + rasterize, on_draw(frame), HUD

Simulation runs at a fixed rate (``update_hz``, default 120 Hz) whatever the frame
rate, so a run is reproducible: the simulated time after N updates is exactly
``N / update_hz`` (computed as a product, not a running sum). ``alpha`` is the fraction
of an update left in the accumulator after a frame, for hooks that interpolate.
Pausing stops updates (frames still render); ``time_scale`` scales how much simulated
time each frame adds (0.5 = slow motion; the update step itself stays fixed).

Falling behind: a frame runs at most ``max_updates_per_frame`` updates; the rest of its
time is dropped (``dropped_time``) so a slow machine does not spiral into ever longer
frames. The cost is slow motion: at 120 Hz with the default 8, any frame longer than
1/15 s loses time, and a 3 fps window runs the game at 8 / 40 = 0.2x real time. The
first time that happens the ``engine`` logger says so once (WARNING, naming
``max_updates_per_frame``), ``game_speed`` gives the fraction of the last frame's time
that was simulated, and the HUD's FPS line shows it (``FPS 3.0  slow motion 0.20x``).
Raise ``max_updates_per_frame`` (or lower ``update_hz``) when updates are cheap and
real-time speed matters more than frame rate; keep it low when updates are expensive.

Hooks (override in a subclass, or assign on the instance)::

    on_start()                     once, before the first update
    on_update(dt)                  every fixed update, dt = 1 / update_hz seconds
    on_draw(frame)                 after the scene is rasterized, before the HUD; frame is
                                   the host ``Frame`` (None for a GL-rasterized window)
    on_key(name, down)             a key or mouse button went down/up (names as in
                                   engine.controls.input)
    on_mouse(x, y)                 the cursor moved (frame pixels, top-left origin)

Targets::

    run_headless(frames, ...)      as fast as possible with simulated time, no display;
                                   optional PNG per frame or of the last frame
    run(frames=None)               a pyglet window (engine.display.Viewer); events reach
                                   the input map, the hooks and the controller

Entities: ``spawn(node)`` / ``despawn(node)`` go through ``VertexBatch.spawn/despawn``,
so adding and removing objects at runtime never repacks the whole scene. For thousands of
similar objects use one ``engine.Instances`` node and edit its arrays.

Pointer coordinates: every cursor position the App hands out or takes (``on_mouse``,
``input.cursor``, ``pick``, ``screen_ray``, ``mouse_move``) is in *frame pixels*: pixels
of the rendered frame (``app.size``, the framebuffer), origin top-left, y down, the frame
the renderer, picking and the HUD use. On a HiDPI window (pixel ratio 2: 400x300
points, 800x600 pixels) the window's point coordinates are converted on arrival.
"""

from __future__ import annotations

import logging
import math
import time

import numpy as np

from ..controls.input import InputMap, InputScript, input_name, mouse, mouse_name
from ..render.frame import Frame
from ..render.renderer import Renderer
from ..scene.camera import Camera, PerspectiveCamera
from ..scene.graph import Node, Scene
from .hud import Hud
from .picking import Pick, pick_point
from .sound import Sounds

__all__ = ["App"]

log = logging.getLogger("engine")

# Accumulator slack: a frame of exactly k updates must run k updates despite rounding
# (1/60 s is not exact in binary).
_ACC_EPSILON = 1e-9


class App:
    """A scene, a camera and a fixed-timestep loop; see the module docstring.

    Args:
        scene: the scene (default: an empty ``Scene``).
        camera: the camera (default: a 60 degree perspective camera at (0, 0, 5)).
        size: (width, height) of the frame in pixels.
        controller: optional camera controller (``engine.controls.controllers``) receiving input
            events and ``tick(dt)`` once per fixed update.
        update_hz: fixed simulation rate in Hz (> 0).
        seed: seed of ``self.rng`` (``numpy.random.Generator``); the same seed and the
            same inputs give the same headless run.
        backend, point_size: passed to ``Renderer``. msaa: samples per pixel (1, 2, 4, 8;
            engine.render.msaa), 1 by default: each sample costs about one raster, and a
            real-time loop keeps its frame rate.
        max_updates_per_frame: cap on catch-up updates after a long frame (the rest of
            the accumulated time is dropped instead of spiralling).
        show_fps: show the measured frame rate on the HUD (default: in a window only,
            so headless frames stay reproducible).
        title: window caption.
        hud_font_size: text height of the HUD in pixels (default 14).
        hud_font: a TrueType/OpenType font file for the HUD (default: Pillow's built-in
            font); see ``Hud``.

    Attributes:
        scene: the ``Scene`` being drawn; add nodes with ``spawn`` at runtime.
        camera: the ``Camera`` (move it in ``on_update``, or give a ``controller``).
        renderer: the ``Renderer`` (``renderer.size``, ``renderer.batch``...).
        controller: the camera controller, or None.
        input: the ``InputMap``: ``input.bind("jump", key.SPACE)``, then
            ``input.pressed("jump")`` / ``held`` / ``released`` in ``on_update``;
            ``input.cursor`` is the cursor in frame pixels.
        hud: the ``Hud``: ``hud["score"] = "Score 3"``, ``hud.banner``,
            ``hud.label(key, text, node)``.
        sounds: the ``Sounds`` player behind ``play``.
        rng: ``numpy.random.Generator`` seeded with ``seed`` (use it for reproducible runs).
        seed: that seed.
        update_hz, fixed_dt: the simulation rate and its step in seconds.
        time: simulated seconds so far (updates * fixed_dt); updates, frames: counters.
        paused, time_scale: pause/slow motion (``pause()``, ``resume()``).
        alpha: fraction of an update left over after the last frame (interpolation).
        dropped_time: simulated seconds dropped so far because a frame needed more than
            ``max_updates_per_frame`` updates.
        game_speed: simulated / elapsed time of the last ``advance`` (1.0 unless time
            was dropped; 0.2 when only a fifth was simulated).
        fps: measured frames per second (windowed runs).
        script: an ``InputScript`` replayed by headless runs, or None.

    Raises:
        ValueError: a non-positive ``update_hz`` or ``max_updates_per_frame``, a
            ``hud_font_size`` below 4.
        engine.errors.LoadError: a ``hud_font`` file that is missing or not a font.
    """

    def __init__(self, scene: Scene | None = None, camera: Camera | None = None,
                 size=(640, 480), *, controller=None, update_hz: float = 120.0, seed: int = 0,
                 backend: str | None = None, point_size: float | None = None,
                 max_updates_per_frame: int = 8, show_fps: bool | None = None,
                 title: str = "frustum", hud_font_size: int = 14, hud_font=None,
                 msaa: int = 1):
        update_hz = float(update_hz)
        if not (update_hz > 0 and math.isfinite(update_hz)):
            raise ValueError(f"update_hz must be a positive number, got {update_hz}")
        if int(max_updates_per_frame) < 1:
            raise ValueError(f"max_updates_per_frame must be >= 1, got {max_updates_per_frame}")
        self.scene = scene if scene is not None else Scene()
        if camera is None:
            camera = PerspectiveCamera(fov_y=60.0, position=(0.0, 0.0, 5.0))
        self.camera = camera
        self.controller = controller
        self.renderer = Renderer(self.scene, camera, size, backend=backend,
                                 point_size=point_size, msaa=msaa)
        self.input = InputMap()
        self.hud = Hud(font_size=hud_font_size, font=hud_font)
        self.sounds = Sounds()
        self.seed = int(seed)
        self.rng = np.random.default_rng(self.seed)
        self.update_hz = update_hz
        self.fixed_dt = 1.0 / update_hz
        self.max_updates_per_frame = int(max_updates_per_frame)
        self.show_fps = show_fps
        self.title = title
        self.paused = False
        self._time_scale = 1.0
        self.updates = 0
        self.frames = 0
        self.alpha = 0.0
        self.dropped_time = 0.0
        self.game_speed = 1.0
        self._warned_behind = False
        self.script: InputScript | None = None
        self.fps = 0.0
        self._acc = 0.0
        self._started = False
        self._fps_t0 = None
        self._fps_frames = 0

    # --- hooks (override) ----------------------------------------------------------------
    def on_start(self):
        """Called once before the first update."""

    def on_update(self, dt: float):
        """Called every fixed update with dt = 1 / update_hz seconds."""

    def on_draw(self, frame: Frame | None):
        """Called after the scene is rasterized, before the HUD (frame is on the host, or
        None in a GL-rasterized window)."""

    def on_key(self, name: str, down: bool):
        """A key or mouse button (engine.controls.input name) went down (True) or up (False)."""

    def on_mouse(self, x: float, y: float):
        """The cursor moved to (x, y) frame pixels (top-left origin, y down)."""

    # --- time ----------------------------------------------------------------------------
    @property
    def time(self) -> float:
        """Simulated seconds: updates * fixed_dt."""
        return self.updates * self.fixed_dt

    @property
    def time_scale(self) -> float:
        return self._time_scale

    @time_scale.setter
    def time_scale(self, value: float):
        value = float(value)
        if not (value >= 0 and math.isfinite(value)):
            raise ValueError(f"time_scale must be a finite number >= 0, got {value}")
        self._time_scale = value

    def pause(self):
        self.paused = True

    def resume(self):
        self.paused = False

    def toggle_pause(self) -> bool:
        self.paused = not self.paused
        return self.paused

    def start(self):
        """Run ``on_start`` (once); called by the first ``advance``."""
        if not self._started:
            self._started = True
            self.on_start()

    def advance(self, frame_dt: float) -> int:
        """Add ``frame_dt`` seconds (times ``time_scale``) of simulated time and run the
        fixed updates it covers. Returns the number of updates run. Raises ValueError for
        a negative or non-finite ``frame_dt``."""
        frame_dt = float(frame_dt)
        if not (frame_dt >= 0 and math.isfinite(frame_dt)):
            raise ValueError(f"frame_dt must be a finite number of seconds >= 0, got {frame_dt}")
        self.start()
        if self.paused:
            return 0
        self._acc += frame_dt * self._time_scale
        n, dropped = 0, 0.0
        while self._acc + _ACC_EPSILON >= self.fixed_dt:
            if n == self.max_updates_per_frame:
                dropped = self._acc
                self.dropped_time += dropped
                self._acc = 0.0
                break
            self._acc -= self.fixed_dt
            self.step()
            n += 1
        self._acc = max(self._acc, 0.0)
        self.alpha = self._acc / self.fixed_dt
        run = n * self.fixed_dt
        self.game_speed = run / (run + dropped) if dropped > 0 else 1.0
        if dropped > 0 and not self._warned_behind:
            self._warned_behind = True
            log.warning(
                "the game is running in slow motion: a %.3f s frame needed %d updates at "
                "%g Hz but max_updates_per_frame is %d, so %.3f s of game time was dropped "
                "(%.2fx real time). Raise max_updates_per_frame or lower update_hz if the "
                "updates are cheap; this is logged once", frame_dt, n + round(dropped /
                self.fixed_dt), self.update_hz, self.max_updates_per_frame, dropped,
                self.game_speed)
        return n

    def step(self):
        """Exactly one fixed update (input latch, controller tick, ``on_update``)."""
        if self.script is not None:
            self.script.feed(self, self.updates)
        self.input.update()
        dt = self.fixed_dt
        if self.controller is not None and hasattr(self.controller, "resize"):
            self.controller.resize(*self.renderer.size)  # pan speed follows the viewport
        if self.controller is not None and hasattr(self.controller, "tick"):
            self.controller.tick(dt)
        self.on_update(dt)
        self.updates += 1

    # --- input events (window, script, tests) ------------------------------------------
    def key_down(self, k):
        """A key (pyglet code or name) went down: input map, ``on_key``, controller."""
        name = input_name(k)
        self.input.key_down(name)
        self.on_key(name, True)
        if self.controller is not None and hasattr(self.controller, "key_down"):
            self.controller.key_down(name)

    def key_up(self, k):
        name = input_name(k)
        self.input.key_up(name)
        self.on_key(name, False)
        if self.controller is not None and hasattr(self.controller, "key_up"):
            self.controller.key_up(name)

    def mouse_down(self, button):
        name = mouse_name(button)
        self.input.mouse_down(name)
        self.on_key(name, True)

    def mouse_up(self, button):
        name = mouse_name(button)
        self.input.mouse_up(name)
        self.on_key(name, False)

    def release_all(self):
        """Every held key and button goes up (the window lost focus, so it will not see
        their releases): the input map reports them released at the next update,
        ``on_key(name, False)`` runs for each, and the controller lets go of its keys."""
        for name in self.input.release_all():
            self.on_key(name, False)
        if self.controller is not None and hasattr(self.controller, "held"):
            self.controller.held.clear()

    def mouse_move(self, x: float, y: float, height: float | None = None):
        """Cursor position in frame pixels (top-left origin; pass ``height`` for a
        bottom-left y, as pyglet reports it). A window converts its point coordinates to
        frame pixels before calling this."""
        self.input.mouse_move(x, y, height)
        self.on_mouse(*self.input.cursor)

    def scroll(self, steps: float):
        self.input.scroll(steps)
        if self.controller is not None and hasattr(self.controller, "scroll"):
            self.controller.scroll(steps)

    # --- entities, picking ---------------------------------------------------------------
    def spawn(self, node: Node, parent: Node | None = None) -> Node:
        """Add ``node`` (under ``parent``, default the scene) without a batch repack."""
        return self.renderer.batch.spawn(node, parent)

    def despawn(self, node: Node) -> Node:
        """Remove ``node`` and its subtree without a batch repack."""
        return self.renderer.batch.despawn(node)

    def pick(self, x: float | None = None, y: float | None = None,
             radius: float = 8.0) -> Pick | None:
        """The point (and node, and instance of an Instances node) nearest to frame pixel
        (x, y) within ``radius`` pixels, from a projection of the current state;
        defaults to the cursor position."""
        cx, cy = self.input.cursor
        projection = self.renderer.project()
        return pick_point(projection, self.renderer.batch, cx if x is None else x,
                          cy if y is None else y, radius)

    def screen_ray(self, x: float | None = None, y: float | None = None):
        """The world ``Ray`` (origin, unit direction) through frame pixel (x, y), default
        the cursor: ``engine.game.collision.ray_cast(*app.screen_ray(), nodes)`` finds
        what is under the mouse, ``ray.at(t)`` a point along it."""
        cx, cy = self.input.cursor
        return self.camera.screen_ray(cx if x is None else x, cy if y is None else y,
                                      self.renderer.size)

    def play(self, sound, volume: float = 1.0) -> bool:
        """Play a sound effect file (WAV; see ``engine.game.sound``). Returns False where
        there is no audio device (logged once), True when it plays. Raises
        engine.errors.LoadError for a missing or undecodable file."""
        return self.sounds.play(sound, volume)

    # --- frames --------------------------------------------------------------------------
    @property
    def size(self) -> tuple[int, int]:
        return self.renderer.size

    def _count_fps(self):
        now = time.perf_counter()
        if self._fps_t0 is None:
            self._fps_t0 = now
        self._fps_frames += 1
        if now - self._fps_t0 >= 0.5:
            self.fps = self._fps_frames / (now - self._fps_t0)
            self._fps_t0, self._fps_frames = now, 0

    def _hud_fps(self, default: bool):
        if self.show_fps if self.show_fps is not None else default:
            text = f"FPS {self.fps:5.1f}" if self.fps else "FPS --"
            if self.game_speed < 1.0:  # dropping update time: say the game is slowed
                text += f"  slow motion {self.game_speed:.2f}x"
            self.hud["fps"] = text

    def render_frame(self) -> Frame:
        """Rasterize the scene (software path), run ``on_draw`` and draw the HUD.
        Returns the host Frame; also counts the frame."""
        frame = self.renderer.render()
        self.on_draw(frame)
        self._count_fps()
        self._hud_fps(default=False)
        self.hud.draw(frame.color, self.camera)
        self.frames += 1
        return frame

    def run_headless(self, frames: int, frame_dt: float = 1.0 / 60.0, out=None) -> Frame:
        """Run ``frames`` frames of ``frame_dt`` simulated seconds each, as fast as
        possible, and return the last Frame.

        ``out``: None; a PNG path written with the last frame; a pattern containing
        ``{frame}`` (e.g. ``"out/f{frame:04d}.png"``) written for every frame; or a
        ``.mp4`` / ``.gif`` video of every frame at 1 / ``frame_dt`` frames per second
        (the gameplay as simulated, whatever the machine's speed).
        Raises ValueError for frames < 1, OutputError for an output that cannot be
        written.
        """
        from ..io.image import check_image_name, save_image
        from ..io.video import VIDEO_SUFFIXES, open_frame_writer

        frames = int(frames)
        if frames < 1:
            raise ValueError(f"frames must be >= 1, got {frames}")
        per_frame = out is not None and "{frame" in str(out)
        video = None
        if out is not None and not per_frame and str(out).lower().endswith(VIDEO_SUFFIXES):
            video = open_frame_writer(out, self.size, 1.0 / float(frame_dt))
        elif out is not None:  # an image suffix that cannot be written: before frame 0
            check_image_name(str(out).format(frame=0) if per_frame else out)
        frame = None
        try:
            for i in range(frames):
                self.advance(frame_dt)
                frame = self.render_frame()
                if per_frame:
                    save_image(str(out).format(frame=i), frame.color)
                elif video is not None:
                    video.write(frame.color)
        except BaseException:
            if video is not None:
                video.abort()
            raise
        if video is not None:
            video.close()
        elif out is not None and not per_frame:
            save_image(out, frame.color)
        return frame

    def run(self, frames: int | None = None, raster: str = "auto", vsync: bool = True,
            visible: bool = True, screenshot=None) -> int:
        """Open a window and run until it is closed (Esc) or ``frames`` frames were shown.

        ``screenshot``: a PNG path that receives the window's last frame (read back from
        the window's framebuffer; needs ``frames``). Returns the number of frames shown.
        Raises engine.errors.EngineError when no window can be opened here (the reason,
        e.g. no display), ValueError for a screenshot without ``frames``.
        """
        from ..display.present import window_unavailable_reason
        from ..errors import EngineError

        if screenshot is not None and frames is None:
            raise ValueError("a window screenshot needs a frame count (--frames)")
        reason = window_unavailable_reason()
        if reason is not None:
            raise EngineError(
                f"cannot open a window: {reason}. Render without one with "
                f"app.run_headless(frames, out='frame.png'); or set PYGLET_HEADLESS=1 for "
                f"an offscreen EGL window; or run under a virtual display: "
                f"xvfb-run -a -s '-screen 0 1280x720x24' python your_game.py "
                f"(example scripts also take --headless)")
        viewer = _make_viewer(self, raster=raster, vsync=vsync, visible=visible)
        if screenshot is not None:
            def shoot_last(v, dt):
                if v.frames == frames - 1:
                    v.request_screenshot(screenshot)
            viewer.frame_callbacks.append(shoot_last)
        return viewer.run(frames)


class _WindowEvents:
    """Translates the Viewer's events into App calls. The Viewer already gives frame
    pixels with pyglet's bottom-left origin (``Viewer.to_frame_pixels``); y is flipped
    here against the framebuffer height."""

    def __init__(self, app: App, viewer):
        self.app, self.viewer = app, viewer

    def _move(self, x, y):
        self.app.mouse_move(x, y, self.viewer.viewport.height)

    def on_key_press(self, symbol, modifiers):
        if _known_key(symbol):
            self.app.key_down(symbol)

    def on_key_release(self, symbol, modifiers):
        if _known_key(symbol):
            self.app.key_up(symbol)

    def on_mouse_press(self, x, y, button, modifiers):
        self._move(x, y)
        self.app.mouse_down(button)

    def on_mouse_release(self, x, y, button, modifiers):
        self._move(x, y)
        self.app.mouse_up(button)

    def on_mouse_motion(self, x, y, dx, dy):
        self._move(x, y)

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
        self._move(x, y)
        ctl = self.app.controller
        if ctl is not None and hasattr(ctl, "mouse_drag"):
            for button in (mouse.LEFT, mouse.MIDDLE, mouse.RIGHT):
                if buttons & button:
                    ctl.mouse_drag(dx, dy, mouse_name(button))

    def on_deactivate(self):
        self.app.release_all()

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y):
        self.app.scroll(scroll_y)

    def tick(self, dt):
        self.app.advance(dt)


def _known_key(symbol) -> bool:
    try:
        input_name(symbol)
    except ValueError:
        return False
    return True


def _make_viewer(app: App, raster: str, vsync: bool, visible: bool):
    import moderngl

    from ..display.blit import ImageBlit
    from ..display.window import Viewer

    class AppViewer(Viewer):
        """Viewer drawing the App's frame: HUD on the software image, or alpha-blended
        over GL points."""

        def draw(self):
            w, h = self.viewport.width, self.viewport.height
            self.ctx.screen.use()
            self.ctx.viewport = (0, 0, w, h)
            if self.raster == "software":
                self._app_blit.draw(app.render_frame().color)
                return
            super().draw()
            app.on_draw(None)
            app._count_fps()
            app._hud_fps(default=True)
            app.frames += 1
            self.ctx.enable(moderngl.BLEND)
            self.ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
            self._app_blit.draw(app.hud.overlay((w, h), app.camera))
            self.ctx.disable(moderngl.BLEND)

        def close(self):
            if self.window is not None:
                self.window.switch_to()
                self._app_blit.release()
            super().close()

    if app.show_fps is None:
        app.show_fps = True
    # no viewer aids: a game's keys and clicks are its own (App.pick picks)
    viewer = AppViewer(app.renderer, raster=raster, caption=app.title, vsync=vsync,
                       visible=visible, aids=False)
    viewer._app_blit = ImageBlit(viewer.ctx)
    viewer.controller = _WindowEvents(app, viewer)
    return viewer
