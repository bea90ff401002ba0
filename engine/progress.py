"""Progress reporting for long renders: a one-line bar on a terminal, plain lines
otherwise (logs, CI, pipes).

Wall-clock time is used only to report speed and the estimated time left; it never
affects what is rendered.
"""

from __future__ import annotations

import math
import sys
import time

__all__ = ["Progress", "format_duration"]


def format_duration(seconds: float) -> str:
    """'m:ss' (or 'h:mm:ss') for a number of seconds; '?' when unknown."""
    if not math.isfinite(seconds):
        return "?"
    s = round(seconds)
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Progress:
    """Reports ``done``/``total`` frames with the rate (frames/s) and the ETA.

    Args:
        total: number of frames to render (> 0).
        stream: where to write (default sys.stderr).
        tty: redraw one line in place (True) or print plain lines (False); default:
            whether ``stream`` is a terminal.
        label: prefix of every line.

    Plain mode prints a line about every 10 % (and at the end); terminal mode redraws
    at most 10 times a second.
    """

    def __init__(self, total: int, stream=None, tty: bool | None = None, label="render",
                 clock=time.perf_counter):
        self.total = max(1, int(total))
        self.stream = sys.stderr if stream is None else stream
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)()) if tty is None else tty
        self.label = label
        self._clock = clock
        self._start = clock()
        self._last_draw = -1.0
        self._next_line = 0
        self.done = 0

    def rate(self) -> float:
        """Frames per second so far (0 before the first frame)."""
        dt = self._clock() - self._start
        return self.done / dt if dt > 0 else 0.0

    def line(self) -> str:
        r = self.rate()
        eta = (self.total - self.done) / r if r > 0 else float("inf")
        pct = 100.0 * self.done / self.total
        return (f"{self.label}: {self.done}/{self.total} frames ({pct:.0f}%), "
                f"{r:.1f} fps, ETA {format_duration(eta)}")

    def update(self, done: int):
        """Record that ``done`` frames are finished and report if due."""
        self.done = int(done)
        final = self.done >= self.total
        if self.tty:
            now = self._clock()
            if final or now - self._last_draw >= 0.1:
                self._last_draw = now
                width = 24
                fill = int(width * self.done / self.total)
                bar = "#" * fill + "." * (width - fill)
                self.stream.write(f"\r[{bar}] {self.line()}  ")
                self.stream.flush()
        elif final or self.done >= self._next_line:
            self._next_line = self.done + max(1, self.total // 10)
            self.stream.write(self.line() + "\n")
            self.stream.flush()

    def finish(self):
        """End the progress output (newline after a terminal bar)."""
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
