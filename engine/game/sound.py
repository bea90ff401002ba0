"""Sound effects through pyglet's media module: ``app.play("hit.wav")``.

Sounds are decoded once (``pyglet.media.load(..., streaming=False)``) and cached by
path, so playing the same effect every frame costs only starting a player. Where there
is no audio device (servers, CI, headless runs: pyglet falls back to its silent driver)
``play`` does nothing and the ``engine`` logger warns once (WARNING, so it shows
without any logging set up); a missing or unreadable
file is still an error, so a typo is caught on a machine without speakers too.

pyglet's media module imports its GL module, which opens a hidden "shadow" window; with
no display that import fails, so there (and only there) the shadow window is switched off
first.
"""

from __future__ import annotations

import logging
from pathlib import Path

from ..errors import LoadError

__all__ = ["Sounds"]

log = logging.getLogger("engine")


class Sounds:
    """Loads and plays short sound effects (WAV always; MP3/OGG where pyglet has a
    decoder, e.g. FFmpeg). One instance per App (``app.sounds``)."""

    def __init__(self):
        self._cache: dict[str, object] = {}
        self._media = None
        self._silent_reason: str | None = None
        self._warned = False
        self.muted = False
        self.played = 0  # sounds started on a real device
        self.skipped = 0  # play() calls made silent (no device, or muted)

    def _pyglet_media(self):
        if self._media is None and self._silent_reason is None:
            try:
                import sys

                import pyglet

                from ..display.present import window_unavailable_reason

                if "pyglet.gl" not in sys.modules and window_unavailable_reason() is not None:
                    pyglet.options["shadow_window"] = False
                from pyglet import media

                driver = media.get_audio_driver()
            except Exception as exc:  # noqa: BLE001 - pyglet raises many kinds here
                self._silent_reason = f"pyglet's media module is unavailable ({exc})"
                return None
            name = type(driver).__name__ if driver is not None else "none"
            if driver is None or "silent" in name.lower():
                self._silent_reason = "no audio device (pyglet found no audio driver)"
                return None
            self._media = media
        return self._media

    def load(self, path) -> object | None:
        """Decode ``path`` into a cached static source (None where sound is silent).

        Raises LoadError naming the file when it does not exist or cannot be decoded."""
        p = Path(path)
        key = str(p.resolve())
        if key in self._cache:
            return self._cache[key]
        if not p.is_file():
            raise LoadError(f"{p}: no such sound file")
        media = self._pyglet_media()
        if media is None:
            self._cache[key] = None
            return None
        try:
            source = media.load(str(p), streaming=False)
        except Exception as exc:  # noqa: BLE001 - decoder errors have many types
            raise LoadError(f"{p}: cannot decode sound: {exc}") from None
        self._cache[key] = source
        return source

    def play(self, path, volume: float = 1.0) -> bool:
        """Start playing the sound at ``path`` (overlapping earlier ones). Returns True
        when it plays on a device, False when sound is silent here or muted (logged once).

        Raises LoadError for a missing or undecodable file, ValueError for a volume
        outside [0, 1]."""
        volume = float(volume)
        if not 0.0 <= volume <= 1.0:
            raise ValueError(f"volume must be in [0, 1], got {volume}")
        source = self.load(path)
        if source is None or self.muted:
            self.skipped += 1
            if source is None and not self._warned:
                self._warned = True
                log.warning("sounds are silent: %s (logged once)", self._silent_reason)
            return False
        player = source.play()
        player.volume = volume
        self.played += 1
        return True
