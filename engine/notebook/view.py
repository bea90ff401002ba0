"""The interactive view behind the notebook widget, free of any toolkit: input events in
(the dictionaries jupyter_rfb sends), frames out (the software renderer's, or the CUDA
path's on a GPU machine: whatever ``engine.Renderer`` picks for ``backend``).

Units: the browser reports pointer positions and the view's size in CSS ("logical")
pixels together with the device pixel ratio. The view renders at the framebuffer size,
logical size x pixel ratio (rounded), so a HiDPI screen gets a sharp image, and every
pointer coordinate it hands out or takes (``pointer``, the deltas given to the
controller) is in framebuffer pixels, origin at the top-left, y down: the renderer's
screen frame, as in the engine's window. The controllers get drag deltas with +y up, as
they document.

Input (jupyter_rfb event types)::

    resize                  new logical size and pixel ratio -> framebuffer size
    pointer_down/_move/_up  left drag orbits (fly: looks), right or middle drag pans
    wheel                   zoom (fly: speed); 100 wheel pixels (a notch) = one step
    key_down/key_up         held keys: arrows and +/- (orbit), WASD QE Shift (fly);
                            named as everywhere in the engine (engine.controls.input)
    double_click            back to the starting view
    close                   releases the renderer
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..controls.input import input_name

__all__ = ["BUTTONS", "InteractiveView", "controller_key"]

# jupyter_rfb button numbers -> engine.controls.input button names
BUTTONS = {1: "mouse_left", 2: "mouse_right", 3: "mouse_middle"}
# Browser KeyboardEvent.key values (lower-cased) whose engine.controls.input name differs.
# pyglet names the physical key, the browser the character: "+" and "=" (one key, with
# and without Shift) are both "equal", "_" and "-" both "minus", so a key pressed
# before Shift and released after it is still released. The browser does not say which
# Shift/Ctrl/Alt/Meta, so the left one stands for both.
_KEYS = {"arrowup": "up", "arrowdown": "down", "arrowleft": "left", "arrowright": "right",
         "shift": "lshift", "control": "lctrl", "alt": "lalt", "meta": "lmeta",
         " ": "space", "+": "equal", "=": "equal", "-": "minus", "_": "minus",
         **{str(d): f"_{d}" for d in range(10)}}
WHEEL_STEP = 100.0  # browser wheel pixels per scroll step (one notch in Chromium/Firefox)
MAX_DT = 0.1  # seconds of held-key motion per frame at most (a stalled browser)


def controller_key(key: str) -> str | None:
    """Browser key name ('ArrowUp', 'Shift', 'w', '+') -> its engine.controls.input name
    ('up', 'lshift', 'w', 'equal'), or None for a key the engine has no name for ('Dead',
    'Unidentified', a non-Latin letter): the view ignores those."""
    k = str(key).lower()
    try:
        return input_name(_KEYS.get(k, k))
    except ValueError:
        return None


class InteractiveView:
    """Renders ``source`` for an interactive widget and turns input events into camera
    moves.

    Args:
        source: what ``engine.show`` takes (a Scene, Node, geometry, 3D file or 'demo').
        size: (width, height) logical (CSS) pixels.
        pixel_ratio: framebuffer pixels per logical pixel (the browser's
            devicePixelRatio; a resize event updates it).
        controller: "orbit" (around the scene centre) or "fly".
        camera, backend, point_size, draw, shading, background: as ``engine.show``.
        msaa: samples per pixel (engine.render.msaa), 1 by default: the widget redraws
            on every drag, where each sample would cost about one raster.

    Attributes: renderer, camera, controller, scene; ``pointer`` (last pointer position,
    framebuffer pixels) and ``frames`` (frames produced); ``player``: the
    ``engine.animation.clips.ClipPlayer`` that ``play`` started, or None.
    """

    def __init__(self, source, size=(640, 400), pixel_ratio: float = 1.0,
                 controller: str = "orbit", camera=None, backend=None, point_size=None,
                 draw=None, shading=None, background=None, msaa: int = 1):
        from ..controls.controllers import FlyController, OrbitController
        from ..errors import EngineError
        from ..render.renderer import Renderer, check_size
        from .display import to_scene

        self.logical_size = check_size(size)
        self.pixel_ratio = self._ratio(pixel_ratio)
        w, h = self._scaled()
        self.scene, self.camera = to_scene(source, w / h, camera, background)
        if draw is not None or shading is not None:
            from ..io.sources import apply_look

            apply_look(self.scene, draw, shading)
        self.renderer = Renderer(self.scene, self.camera, (w, h), backend=backend,
                                 point_size=point_size, msaa=msaa)
        bounds = self.scene.bounds()
        if controller == "orbit":
            from ..scene.framing import view_target

            # the point ahead of the framed camera, so the first drag keeps the view
            self.controller = OrbitController(self.camera,
                                              target=view_target(self.camera, bounds))
        elif controller == "fly":
            diag = (1.0 if bounds is None
                    else float(np.linalg.norm(np.asarray(bounds[1]) - np.asarray(bounds[0]))))
            self.controller = FlyController(self.camera, speed=max(0.25 * diag, 1e-3))
        else:
            raise EngineError(f"controller must be 'orbit' or 'fly', got {controller!r}")
        self.controller.resize(w, h)
        self._home = (self.camera.position.copy(), self.camera.rotation.copy(),
                      getattr(self.controller, "target", None))
        self.pointer: tuple[float, float] | None = None
        self._button: str | None = None
        self._last_time: float | None = None
        self.player = None
        self.frames = 0
        self.closed = False

    @staticmethod
    def _ratio(value) -> float:
        r = float(value)
        if not (r > 0 and math.isfinite(r)):
            raise ValueError(f"pixel ratio must be positive and finite, got {value!r}")
        return r

    def _scaled(self) -> tuple[int, int]:
        w, h = self.logical_size
        return max(1, round(w * self.pixel_ratio)), max(1, round(h * self.pixel_ratio))

    @property
    def size(self) -> tuple[int, int]:
        """Framebuffer size in pixels (the frames' size): logical size x pixel ratio,
        or the browser's own framebuffer size when its resize event gives it."""
        return self.renderer.size

    @property
    def animating(self) -> bool:
        """Whether held keys move the camera or a clip plays, so frames should keep
        coming."""
        return bool(self.controller.held) or bool(self.player is not None
                                                  and self.player.playing)

    def play(self, clip, loop: bool = True, speed: float = 1.0):
        """Play ``clip`` (an ``engine.scene.clips.Clip``, e.g. ``model.clips[0]``) on
        the frames' clock from now: ``ClipPlayer.play`` on ``player`` (made on first
        use), so a second ``play`` cuts and ``player.crossfade(clip, seconds)`` blends.
        Returns the player."""
        from ..animation.clips import ClipPlayer

        if self.player is None:
            self.player = ClipPlayer()
        self.player.play(clip, loop=loop, speed=speed)
        self._last_time = None  # the clock starts at the next frame
        return self.player

    def to_framebuffer(self, x: float, y: float) -> tuple[float, float]:
        """Logical (CSS) pixel position -> framebuffer pixels (top-left origin, y down)."""
        return float(x) * self.pixel_ratio, float(y) * self.pixel_ratio

    def handle_event(self, event: dict) -> bool:
        """Apply one jupyter_rfb event (``type`` or the older ``event_type`` key).
        Returns whether the view changed (a new frame should be drawn)."""
        kind = event.get("type", event.get("event_type"))
        if self.closed or kind is None:
            return False
        handler = getattr(self, f"_on_{kind}", None)
        return bool(handler(event)) if handler is not None else False

    def _on_resize(self, e) -> bool:
        ratio = e.get("ratio", e.get("pixel_ratio", self.pixel_ratio))
        self.pixel_ratio = self._ratio(ratio)
        w, h = float(e["width"]), float(e["height"])
        self.logical_size = (max(1, round(w)), max(1, round(h)))
        if "pwidth" in e and "pheight" in e:  # the browser's exact framebuffer size
            pw, ph = max(1, int(e["pwidth"])), max(1, int(e["pheight"]))
        else:
            pw, ph = self._scaled()
        self.renderer.resize(pw, ph)
        self.controller.resize(pw, ph)
        return True

    def _on_pointer_down(self, e) -> bool:
        self.pointer = self.to_framebuffer(e["x"], e["y"])
        self._button = BUTTONS.get(int(e.get("button", 1)))
        return False

    def _drag_to(self, e) -> bool:
        """Move the pointer to the event's position; while a button is down, drag the
        controller by the difference (framebuffer pixels, +y up)."""
        x, y = self.to_framebuffer(e["x"], e["y"])
        last, self.pointer = self.pointer, (x, y)
        if self._button is None or last is None:
            return False
        dx, dy = x - last[0], -(y - last[1])  # controllers take +y up
        if not (dx or dy):
            return False
        self.controller.mouse_drag(dx, dy, self._button)
        return True

    def _on_pointer_move(self, e) -> bool:
        return self._drag_to(e)

    def _on_pointer_up(self, e) -> bool:
        # The browser may merge the last moves into the release: apply its position.
        moved = self._drag_to(e)
        self._button = None
        return moved

    def _on_wheel(self, e) -> bool:
        dy = float(e.get("dy", 0.0))
        if not dy:
            return False
        self.controller.scroll(-dy / WHEEL_STEP)
        return True

    def _on_key_down(self, e) -> bool:
        name = controller_key(e.get("key", ""))
        if name is None:
            return False
        self.controller.key_down(name)
        self._last_time = None  # motion starts now, not at the previous frame
        return self.animating

    def _on_key_up(self, e) -> bool:
        name = controller_key(e.get("key", ""))
        if name is not None:
            self.controller.key_up(name)
        return False

    def _on_double_click(self, e) -> bool:
        self.reset()
        return True

    def _on_close(self, e) -> bool:
        self.close()
        return False

    def reset(self):
        """Back to the starting view."""
        position, rotation, target = self._home
        self.camera.position = position
        self.camera.rotation = rotation
        if target is not None:
            self.controller.target = target.copy()
        self.controller.sync()

    def frame(self, now: float | None = None) -> np.ndarray:
        """Advance held-key motion to ``now`` (seconds; default the clock) and render:
        (H, W, 4) uint8 at the framebuffer size."""
        now = time.perf_counter() if now is None else float(now)
        if self._last_time is not None and self.controller.held:
            self.controller.tick(min(MAX_DT, max(0.0, now - self._last_time)))
        if self._last_time is not None and self.player is not None:
            # clips follow the real clock (a slow frame shows a later pose, not a
            # slower clip)
            self.player.tick(max(0.0, now - self._last_time))
        self._last_time = now
        color = self.renderer.render(depth=False).color
        self.frames += 1
        return np.ascontiguousarray(color)

    def close(self):
        if not self.closed:
            self.closed = True
            self.renderer.close()
