"""Window input for the engine's camera controllers, path recording and path playback.

``WindowControls`` is the ``controller`` object a ``Viewer`` forwards pyglet events to
(see engine.display.window). It names pyglet key symbols and mouse buttons as the whole
engine does (engine.controls.input: "w", "lshift", "up", "mouse_left"...), passes them
to the toolkit-free controllers (engine.controls.controllers) and adds keys:

    K       add the current camera as a keyframe to the recorded path
    P       save the recorded path to ``record_to`` (.json or .toml)
    Space   start/stop playing the path (``playback``, else the recorded one)

While a path plays, the camera follows it at the accumulated frame time (looping) and
the controller is idle; stopping hands the camera back to the controller where it is.
Recorded keyframes are ``record_interval`` seconds apart (not wall-clock time), so a
saved path replays at a steady pace whatever the pauses between key presses.
"""

from __future__ import annotations

import logging
from pathlib import Path

from ..animation.camera_path import CameraPath
from ..controls.input import input_name, mouse, mouse_name

__all__ = ["WindowControls", "button_name", "key_name"]

log = logging.getLogger("engine")


def key_name(symbol: int) -> str | None:
    """pyglet key symbol -> its engine.controls.input name ("w", "lshift", "up",
    "plus", ...), or None for a symbol pyglet has no name for."""
    try:
        return input_name(symbol)
    except ValueError:
        return None


def button_name(buttons: int) -> str | None:
    """pyglet mouse button bit mask -> "mouse_left", "mouse_middle" or "mouse_right"
    (in that order of precedence), or None when none of the three is pressed."""
    for button in (mouse.LEFT, mouse.MIDDLE, mouse.RIGHT):
        if buttons & button:
            return mouse_name(button)
    return None


class WindowControls:
    """Routes window events to ``controller`` and handles recording/playback keys.

    Args:
        controller: an OrbitController or FlyController (or None: no manual control).
        renderer: the window's Renderer; its size is passed to the controller so pixel
            drags map to the right distances after a resize.
        playback: a motion (``CameraPath``/``CameraScript``) to play, starting at once.
        record_to: where P saves the recorded path (None: P only logs a warning).
        record_interval: seconds between recorded keyframes.
        loop: restart the playback at the end of the path.

    Attributes:
        recorded: the CameraPath built with K.
        playing: whether the playback is running; ``time``: its clock, seconds.
    """

    def __init__(self, controller=None, renderer=None, playback=None, record_to=None,
                 record_interval: float = 2.0, loop: bool = True):
        self.controller = controller
        self.renderer = renderer
        self.playback = playback
        self.record_to = None if record_to is None else Path(record_to)
        self.record_interval = float(record_interval)
        self.loop = loop
        self.recorded = CameraPath()
        self.playing = playback is not None
        self.time = 0.0

    @property
    def camera(self):
        if self.controller is not None:
            return self.controller.camera
        return None if self.renderer is None else self.renderer.camera

    # --- pyglet events (names and arguments as the Viewer forwards them) ---------------
    def on_key_press(self, symbol, modifiers):
        name = key_name(symbol)
        if name is None:
            return True
        if name == "k":
            self.record_keyframe()
        elif name == "p":
            self.save_recording()
        elif name == "space":
            self.toggle_playback()
        elif self.controller is not None:
            self.controller.key_down(name)
        return True

    def on_key_release(self, symbol, modifiers):
        name = key_name(symbol)
        if self.controller is not None and name is not None:
            self.controller.key_up(name)
        return True

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
        button = button_name(buttons)
        if self.controller is not None and not self.playing and button is not None:
            self.controller.mouse_drag(dx, dy, button)
        return True

    def on_deactivate(self):
        """The window lost focus: it will not see the held keys' releases, so the
        controller lets go of them (the camera stops instead of drifting on)."""
        if self.controller is not None:
            self.controller.held.clear()
        return True

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y):
        if self.controller is not None and not self.playing:
            self.controller.scroll(scroll_y)
        return True

    def tick(self, dt: float):
        """Advance the playback by ``dt`` seconds, or let the controller apply held keys."""
        if self.controller is not None and self.renderer is not None:
            self.controller.viewport = tuple(self.renderer.size)
        if self.playing:
            motion = self.playback if self.playback is not None else self.recorded
            duration = getattr(motion, "duration", None)
            self.time += dt
            if duration:
                if self.loop:
                    self.time %= duration
                elif self.time >= duration:
                    self.time = duration
            if motion.apply(self.camera, self.time) is False:
                self.toggle_playback()  # a generator script has ended
        elif self.controller is not None:
            self.controller.tick(dt)

    # --- actions -------------------------------------------------------------------
    def record_keyframe(self):
        """Append the camera's pose (and fov) to ``recorded``."""
        key = self.recorded.add_camera(self.camera, interval=self.record_interval)
        log.info("keyframe %d at t=%g s", len(self.recorded) - 1, key.time)
        return key

    def save_recording(self) -> Path | None:
        """Write ``recorded`` to ``record_to``; returns the path (None if not saved)."""
        if self.record_to is None:
            log.warning("no path file to save to (start with --record FILE)")
            return None
        if not len(self.recorded):
            log.warning("no keyframes recorded yet (press K to add the current view)")
            return None
        from ..animation.pathfile import save_path

        path = save_path(self.recorded, self.record_to)
        log.info("saved %d keyframes to %s", len(self.recorded), path)
        return path

    def toggle_playback(self):
        """Start or stop playing; stopping resynchronises the controller."""
        if self.playing:
            self.playing = False
            if self.controller is not None:
                self.controller.sync()
        elif self.playback is not None or len(self.recorded) > 1:
            self.playing, self.time = True, 0.0
            if self.playback is None:
                log.info("playing the recorded path (%g s)", self.recorded.duration)
