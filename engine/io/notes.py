"""What a loader could not draw or had to leave out, gathered into one warning line per
file (logged on the "engine" logger and kept on ``Model.warnings``)."""

from __future__ import annotations

import logging

__all__ = ["Notes"]

log = logging.getLogger("engine")

_MAX_NAMES = 4


class Notes:
    """``add(what, which)``: a feature the file uses that the renderer does not draw
    (grouped by ``what``, e.g. "alpha blending", with the parts using it);
    ``without(what, which)``: a part that is drawn, but without a feature it asks for
    (e.g. "texture transform", with the part and what is drawn instead); ``left_out(text)``: something of the file that was dropped (a texture that
    cannot be found, a primitive without positions); ``line()``: the one summary line or
    None."""

    def __init__(self, path):
        self.path = path
        self._features: dict[str, list[str]] = {}
        self._without: dict[str, list[str]] = {}
        self._dropped: list[str] = []

    def add(self, what: str, which: str | None = None):
        names = self._features.setdefault(what, [])
        if which is not None and which not in names:
            names.append(which)

    def without(self, what: str, which: str):
        names = self._without.setdefault(what, [])
        if which not in names:
            names.append(which)

    def left_out(self, text: str):
        if text not in self._dropped:
            self._dropped.append(text)

    def __bool__(self) -> bool:
        return bool(self._features or self._without or self._dropped)

    def line(self) -> str | None:
        parts = []
        if self._features:
            items = []
            for what, names in self._features.items():
                if names:
                    shown = ", ".join(names[:_MAX_NAMES])
                    more = len(names) - _MAX_NAMES
                    items.append(f"{what} ({shown}{f' and {more} more' if more > 0 else ''})")
                else:
                    items.append(what)
            parts.append("not drawn: " + "; ".join(items))
        for what, names in self._without.items():
            more = len(names) - _MAX_NAMES
            parts.append(f"drawn without {what}: " + ", ".join(names[:_MAX_NAMES])
                         + (f" and {more} more" if more > 0 else ""))
        if self._dropped:
            shown = "; ".join(self._dropped[:_MAX_NAMES])
            more = len(self._dropped) - _MAX_NAMES
            parts.append("left out: " + shown + (f" and {more} more" if more > 0 else ""))
        return f"{self.path}: " + " | ".join(parts) if parts else None

    def emit(self, model=None):
        """Log the line once (warning) and keep it on ``model.warnings``."""
        text = self.line()
        if text is None:
            return
        log.warning("%s", text)
        if model is not None:
            model.warnings.append(text)
