"""One lifecycle for every output the engine writes: a still image, an MP4, a GIF, a
folder of PNG frames, the files of ``frustum render-many``.

1. Checked before any work (``engine.io.video.open_writer``, ``check_output_name``): an
   empty name (an unset ``$OUT``), an image suffix Pillow cannot write and read back, a
   folder that cannot be written are refused with ``OutputError`` before a frame is
   rendered, and nothing is written or deleted.
2. Temporary name, then rename (``PartialFile``): every file is written as
   ``NAME.partial.SUFFIX`` beside its final name, flushed to disk, and renamed over the
   final name (``os.replace``, atomic within one file system) only once complete. An
   earlier good file at the output is never overwritten in place: on a full disk, an
   encoder error, a crash or a kill it is left as it was.
3. One session (``Output``): a context manager around a writer that installs the
   SIGINT/SIGTERM handlers, reports progress, and at the end either closes the writer
   (all frames written, or stopped by a signal: the frames so far are kept in a
   finalised file) or aborts it (any other error: nothing new is left under the
   output's name). Its ``result`` is a ``RenderResult``.

Signals, while a session is open in the main thread: SIGINT (Ctrl-C) and SIGTERM stop
at once, wherever the loop is waiting (a frame being rendered, a Dask result being
awaited), except inside ``Output.write``: a frame being handed to the writer is
finished first and the stop follows right after it, so an encoder never gets half a
frame. While the writer is finalised a signal is only noted. (A second signal during a
write stops at once.) In other threads no handler is installed; a KeyboardInterrupt
raised in the loop is handled like a signal.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import OutputError
from ..progress import Progress

__all__ = ["Output", "PartialFile", "RenderResult", "check_output_name", "partial_name"]


def check_output_name(out) -> str:
    """``out`` as a string; OutputError for an empty or blank name (an unset shell
    variable: ``--out "$OUT"``), which would otherwise mean the current folder."""
    s = os.fspath(out) if isinstance(out, os.PathLike) else out
    if not isinstance(s, str):
        raise TypeError(f"an output must be a path (str or os.PathLike), got "
                        f"{type(out).__name__}")
    if not s.strip():
        raise OutputError(f"{s!r}: the output name is empty (an unset variable?); give a "
                          f"file or folder name")
    return s


def partial_name(path) -> Path:
    """'tour.mp4' -> 'tour.partial.mp4': the temporary name beside the output (the
    suffix stays last, so encoders that go by it pick the right format)."""
    path = Path(path)
    return path.with_name(f"{path.stem}.partial{path.suffix}")


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


class PartialFile:
    """The file ``path`` written under ``partial_name(path)`` and renamed into place.

    ``tmp`` is the temporary path to write (open it, or hand it to an encoder);
    ``commit()`` flushes it to disk and renames it over ``path``; ``discard()`` removes
    it and leaves ``path`` as it was. As a context manager it yields ``tmp``, commits
    on a normal exit and discards on an error.
    """

    def __init__(self, path):
        self.path = Path(path)
        self.tmp = partial_name(self.path)

    def commit(self):
        """fsync the temporary file and rename it over ``path``. Raises OutputError
        (the temporary file is removed, ``path`` left as it was)."""
        try:
            fd = os.open(self.tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(self.tmp, self.path)
        except OSError as exc:
            self.discard()
            raise OutputError(f"{self.path}: cannot write: {_why(exc)}") from exc

    def discard(self):
        try:
            self.tmp.unlink()
        except FileNotFoundError:
            pass

    def __enter__(self) -> Path:
        return self.tmp

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.commit()
        else:
            self.discard()


@dataclass
class RenderResult:
    """What a render session did.

    frames: frames (or files) written; requested: how many were asked for;
    interrupted: stopped by Ctrl-C, SIGTERM or a KeyboardInterrupt; elapsed: wall
    seconds; path: the output; stop_signal: the signal number that stopped it
    (signal.SIGINT / SIGTERM), None when not stopped by a signal.
    """

    frames: int
    requested: int
    interrupted: bool
    elapsed: float
    path: object
    stop_signal: int | None = None

    def _repr_mimebundle_(self, include=None, exclude=None):
        """In Jupyter the written clip shows inline (an MP4 as an HTML5 video, a GIF as
        an animated image, a frames folder as its first frame); see engine.io.embed."""
        from .embed import media_mimebundle

        try:
            return media_mimebundle(self.path)
        except FileNotFoundError:
            return {"text/plain": repr(self)}


class _Signals:
    """SIGINT/SIGTERM handlers of a session (main thread only): raise KeyboardInterrupt
    at once, or, while ``defer`` > 0, note the signal for ``Output.write`` to act on."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self):
        self.signum = None
        self.defer = 0
        self.pending = False
        self._old = {}

    def install(self):
        if threading.current_thread() is threading.main_thread():
            for s in self.SIGNALS:
                self._old[s] = signal.signal(s, self._handle)

    def _handle(self, signum, frame):
        first = self.signum is None
        if first:
            self.signum = signum
        if self.defer and (first or not self.pending):
            self.pending = True
            return
        raise KeyboardInterrupt

    def restore(self):
        for s, old in self._old.items():
            # None: the previous handler was not set from Python; use Python's default.
            if old is None:
                old = signal.default_int_handler if s == signal.SIGINT else signal.SIG_DFL
            signal.signal(s, old)
        self._old = {}


class Output:
    """The session around one writer (see the module docstring).

    Args:
        writer: has ``write(...)``, ``close()``, ``abort()``, ``frames`` (written so
            far) and ``path`` (a FrameWriter, or render-many's folder of files).
        total: frames (or files) to write, for the progress report and the result.
        progress: a Progress, or None for no report.

    Use::

        with Output(writer, n, progress) as out:
            for k in range(n):
                out.write(render(k))
        out.result   # RenderResult

    Leaving the block normally or by KeyboardInterrupt (a signal) closes the writer:
    the KeyboardInterrupt is not re-raised, ``result.interrupted`` says so. Any other
    error aborts the writer and propagates; so do errors from closing it
    (OutputError).
    """

    def __init__(self, writer, total: int, progress: Progress | None = None):
        self.writer = writer
        self.total = int(total)
        self.progress = progress
        self.result: RenderResult | None = None
        self._signals = _Signals()
        self._t0 = None

    def __enter__(self):
        self._t0 = time.perf_counter()
        self._signals.install()
        return self

    def write(self, *args):
        """``writer.write(*args)`` (never cut by a signal), then the progress report;
        raises KeyboardInterrupt after the write when a signal came during it."""
        sig = self._signals
        sig.defer += 1
        try:
            self.writer.write(*args)
        finally:
            sig.defer -= 1
        if self.progress is not None:
            self.progress.update(self.writer.frames)
        if sig.pending and not sig.defer:
            sig.pending = False
            raise KeyboardInterrupt

    def __exit__(self, exc_type, exc, tb):
        sig = self._signals
        interrupted = exc_type is not None and issubclass(exc_type, KeyboardInterrupt)
        try:
            if self.progress is not None:
                self.progress.finish()
            if exc_type is None or interrupted:
                sig.defer += 1  # a signal while the writer finalises is only noted
                self.writer.close()
            else:
                self.writer.abort()
        finally:
            sig.restore()
        self.result = RenderResult(self.writer.frames, self.total, interrupted,
                                   time.perf_counter() - self._t0,
                                   getattr(self.writer, "path", None),
                                   sig.signum if interrupted else None)
        return interrupted
