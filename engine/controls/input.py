"""Input mapping: named actions bound to keys and mouse buttons, latched per update.

Events (from the window, or injected by a script or test) are queued as they arrive;
``InputMap.update()`` runs at the start of every fixed-timestep update and latches them,
so within one update:

- ``pressed(action)``: one of its inputs went down since the previous update,
- ``released(action)``: one of its inputs went up since the previous update,
- ``held(action)``: at least one of its inputs is down now.

A tap shorter than one update (down and up between two updates) reads as pressed and
released in the same update, and not held, so it is never lost.

Inputs are named by lower-case strings, the one vocabulary of the whole engine (the
camera controllers, the window, the App and the notebook widget use it too): keys as
pyglet names them ("space", "a", "left" and "right" for the arrow keys, "enter",
"lshift", "rshift", "plus", "equal", "num_1"...), mouse buttons as "mouse_left",
"mouse_middle", "mouse_right". pyglet constants are accepted as well: ``key.SPACE`` (an
int) for keys, ``bind_mouse(action, mouse.LEFT)`` for buttons. The short button names
"left", "middle" and "right" that ``bind_mouse``, ``mouse_down`` and the controllers'
``mouse_drag`` took before still work in this release with a ``DeprecationWarning``
(``mouse_name``); the next release drops them. ``engine.controls.input.key`` and
``engine.controls.input.mouse`` are pyglet's own constant modules, loaded without opening a
display (importing ``pyglet.window`` needs one), so scripts and tests use the same
constants as a window.

The cursor is kept in frame pixels (the pixels of the rendered frame, i.e. the
framebuffer, which on a HiDPI display is the window size in points times the pixel
ratio) with the origin at the top-left and y down (the engine's screen frame); the
window converts points to pixels and reports pyglet's bottom-left y with the height, and
``mouse_move`` flips it.
"""

from __future__ import annotations

import importlib.util
import warnings
from collections.abc import Iterable
from pathlib import Path

__all__ = ["InputMap", "InputScript", "input_name", "key", "mouse", "mouse_name"]


def _load_pyglet_module(name: str):
    # pyglet.window/__init__ creates a shadow GL window on import; the constant modules
    # themselves only need the pyglet package, so load them by file.
    import pyglet

    path = Path(pyglet.__file__).parent / "window" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"engine._pyglet_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


key = _load_pyglet_module("key")
mouse = _load_pyglet_module("mouse")

_KEY_NAMES = {v.lower() for v in key._key_names.values()}
_MOUSE_NAMES = {mouse.LEFT: "mouse_left", mouse.MIDDLE: "mouse_middle",
                mouse.RIGHT: "mouse_right", mouse.MOUSE4: "mouse_4", mouse.MOUSE5: "mouse_5"}
# The former short button names (the controllers' vocabulary until 0.1), kept one release.
_DEPRECATED_BUTTONS = {"left": "mouse_left", "middle": "mouse_middle", "right": "mouse_right"}


def input_name(value) -> str:
    """Canonical name of a key or mouse input: a pyglet key code (int) or a name.

    Raises ValueError for an unknown name or code.
    """
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(f"an input is a pyglet key code or a name, got {value!r}")
    if isinstance(value, int):
        name = key.symbol_string(value).lower()
        if name not in _KEY_NAMES:
            raise ValueError(f"unknown key code {value}")
        return name
    name = value.strip().lower()
    if name in _KEY_NAMES or name in _MOUSE_NAMES.values():
        return name
    raise ValueError(f"unknown input {value!r}: use a pyglet key name ('space', 'a', "
                     f"'left'...) or one of {sorted(_MOUSE_NAMES.values())}")


def mouse_name(button) -> str:
    """'mouse_left', 'mouse_middle', 'mouse_right', 'mouse_4' or 'mouse_5' for a pyglet
    mouse button constant (one bit, e.g. ``mouse.LEFT``) or such a name.

    The deprecated short names 'left', 'middle' and 'right' give the same name with a
    ``DeprecationWarning``. Raises ValueError for anything else (a key name included).
    """
    if isinstance(button, str):
        name = button.strip().lower()
        if name in _DEPRECATED_BUTTONS:
            warnings.warn(f"mouse button {button!r} is deprecated: use "
                          f"{_DEPRECATED_BUTTONS[name]!r} (engine.controls.input names)",
                          DeprecationWarning, stacklevel=3)
            return _DEPRECATED_BUTTONS[name]
        if name in _MOUSE_NAMES.values():
            return name
        raise ValueError(f"unknown mouse button {button!r}: use one of "
                         f"{sorted(_MOUSE_NAMES.values())} or a pyglet mouse constant")
    try:
        return _MOUSE_NAMES[int(button)]
    except (KeyError, ValueError, TypeError):
        raise ValueError(f"unknown mouse button {button!r}") from None


class InputMap:
    """Named actions over keys and mouse buttons; see the module docstring.

    Attributes:
        cursor: (x, y) cursor position in frame pixels (top-left origin, y down).
        wheel: scroll steps accumulated since the previous update (latched by update).
    """

    def __init__(self):
        self._bindings: dict[str, set[str]] = {}
        self._down: set[str] = set()
        self._queue: list[tuple[str, bool]] = []
        self._pressed: set[str] = set()
        self._released: set[str] = set()
        self.cursor = (0.0, 0.0)
        self._wheel_pending = 0.0
        self.wheel = 0.0
        self.updates = 0

    # --- bindings ----------------------------------------------------------------------
    def bind(self, action: str, *inputs) -> InputMap:
        """Bind ``action`` to keys (pyglet codes or names) and/or mouse names; adds to
        existing bindings. Returns self. Raises ValueError for unknown inputs."""
        if not inputs:
            raise ValueError(f"bind({action!r}): give at least one key or mouse button")
        self._bindings.setdefault(str(action), set()).update(input_name(i) for i in inputs)
        return self

    def bind_mouse(self, action: str, *buttons) -> InputMap:
        """Bind ``action`` to mouse buttons (pyglet constants or names such as
        'mouse_left'); adds to existing bindings. Returns self. Raises ValueError for
        an unknown button."""
        names = set()
        for b in buttons:  # a loop, not a generator: a deprecation warning names the caller
            names.add(mouse_name(b))
        self._bindings.setdefault(str(action), set()).update(names)
        return self

    def unbind(self, action: str):
        """Remove every input bound to ``action`` (to rebind it from scratch); nothing
        happens when none is. Querying the action afterwards raises KeyError."""
        self._bindings.pop(action, None)

    def bindings(self, action: str) -> frozenset[str]:
        """The canonical input names bound to ``action`` (empty when none), e.g. to
        show the controls or save a remapping."""
        return frozenset(self._bindings.get(action, ()))

    # --- events (window or script) -------------------------------------------------------
    def key_down(self, k):
        """A key (pyglet code or name) went down."""
        self._queue.append((input_name(k), True))

    def key_up(self, k):
        self._queue.append((input_name(k), False))

    def mouse_down(self, button):
        """A mouse button (pyglet constant or name) went down."""
        self._queue.append((mouse_name(button), True))

    def mouse_up(self, button):
        self._queue.append((mouse_name(button), False))

    def mouse_move(self, x: float, y: float, height: float | None = None):
        """Cursor at (x, y) pixels; with ``height``, y is pyglet's bottom-up coordinate
        and is flipped to the engine's top-down screen frame."""
        self.cursor = (float(x), float(y) if height is None else float(height) - float(y))

    def scroll(self, steps: float):
        self._wheel_pending += float(steps)

    # --- per update ---------------------------------------------------------------------
    def update(self):
        """Latch the queued events for this update (called by the App once per update)."""
        self._pressed, self._released = set(), set()
        for name, down in self._queue:
            if down and name not in self._down:
                self._down.add(name)
                self._pressed.add(name)
            elif not down and name in self._down:
                self._down.discard(name)
                self._released.add(name)
        self._queue.clear()
        self.wheel, self._wheel_pending = self._wheel_pending, 0.0
        self.updates += 1

    def _inputs(self, action: str) -> set[str]:
        try:
            return self._bindings[action]
        except KeyError:
            raise KeyError(f"no input is bound to action {action!r}") from None

    def pressed(self, action: str) -> bool:
        return not self._inputs(action).isdisjoint(self._pressed)

    def released(self, action: str) -> bool:
        return not self._inputs(action).isdisjoint(self._released)

    def held(self, action: str) -> bool:
        return not self._inputs(action).isdisjoint(self._down)

    def is_down(self, k) -> bool:
        """Whether one raw input (key code or name) is down now."""
        return input_name(k) in self._down

    def release_all(self) -> list[str]:
        """Queue up events for every key and button held, or queued to go down: the
        window lost focus and will not see their releases (the App's window calls this
        on deactivation), so nothing stays held and the next ``update`` reports them
        released. Returns their names, sorted."""
        down = set(self._down)
        for name, is_down in self._queue:
            (down.add if is_down else down.discard)(name)
        released = sorted(down)
        self._queue.extend((name, False) for name in released)
        return released


class InputScript:
    """Scripted input: events fed to an InputMap at given update indices.

    ``events`` is an iterable of ``(update, kind, value)`` where ``kind`` is "down",
    "up", "tap" (down now, up one update later), "move" (value = (x, y) top-left
    pixels) or "scroll" (value = steps). The App calls ``feed(input, update_index)``
    before latching each update, so a headless run replays exactly.
    """

    KINDS = ("down", "up", "tap", "move", "scroll")

    def __init__(self, events: Iterable = ()):
        self._events: list[tuple[int, str, object]] = []
        for ev in events:
            self.add(*ev)

    def add(self, update: int, kind: str, value=None) -> InputScript:
        if kind not in self.KINDS:
            raise ValueError(f"script event kind must be one of {self.KINDS}, got {kind!r}")
        if int(update) < 0:
            raise ValueError(f"script update index must be >= 0, got {update}")
        if kind in ("down", "up", "tap"):
            input_name(value)  # fails early, naming the bad input
        if kind == "tap":
            self._events += [(int(update), "down", value), (int(update) + 1, "up", value)]
        else:
            self._events.append((int(update), kind, value))
        self._events.sort(key=lambda e: e[0])
        return self

    def feed(self, target: InputMap, update: int):
        """Queue every event scheduled for ``update`` into ``target``."""
        for when, kind, value in self._events:
            if when != update:
                continue
            is_mouse = isinstance(value, str) and value.startswith("mouse_")
            if kind == "down":
                (target.mouse_down if is_mouse else target.key_down)(value)
            elif kind == "up":
                (target.mouse_up if is_mouse else target.key_up)(value)
            elif kind == "move":
                target.mouse_move(*value)
            elif kind == "scroll":
                target.scroll(value)
