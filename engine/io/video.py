"""Writing frames: MP4 (H.264 by the ffmpeg that imageio-ffmpeg bundles), an animated
GIF (encoded frame by frame with Pillow), a folder of numbered PNG files, or one still
image (``ImageWriter``). ``open_writer`` picks the writer for an output name; the
lifecycle every writer follows (checked first, temporary name and rename, one session
for signals and progress) is described in ``engine.io.output``.

Guarantees of every writer:

- The output folder is created and a file is test-created in it when the writer is
  made, so an output that cannot be written (a missing or read-only folder, a file where
  a folder should be) raises ``OutputError`` before any frame is rendered.
- Every file (MP4, GIF, a still image, each PNG frame) is written to
  ``NAME.partial.SUFFIX`` beside the output and renamed over it only once finalised
  (``engine.io.output.PartialFile``): an earlier file at the output is never
  half-replaced, and when encoding fails (ffmpeg exits with an error or writes nothing,
  the disk is full) the earlier file is left as it was and ``OutputError`` says why.
  A ``.partial`` file left by a killed process is overwritten by the next render to the
  same output (frames folders: stale ``frame_NNNNNN.partial.png`` files are removed).
- Memory does not grow with the frame count: MP4 frames are piped to ffmpeg and GIF
  frames are quantised and appended to the file one at a time.
- ``close`` after some frames (an interrupted render) leaves a playable file with those
  frames; a writer closed with no frames, or ``abort``-ed, leaves nothing new behind.
- fps must suit the format: 0.001..1000 for MP4, 0.002..50 for GIF (delays are whole
  1/100 s up to 655.35 s, and viewers slow down delays under 2/100 s), up to 1000 for
  PNG frames. Out of range: ``OutputError`` naming the range.

Sizes: H.264 in yuv420p (the pixel format every player accepts) needs an even width
and height. Odd sizes are rejected with an error that says so, and ``pad=True`` instead
pads one row/column by repeating the edge pixels (the frame content is never rescaled).
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import tempfile
from fractions import Fraction
from pathlib import Path

import numpy as np

from ..errors import OutputError
from .image import check_image_name, composite, save_image
from .output import PartialFile, check_output_name

__all__ = [
    "MAX_FPS",
    "VIDEO_SUFFIXES",
    "FrameWriter",
    "GifWriter",
    "ImageWriter",
    "Mp4Writer",
    "PngSequenceWriter",
    "open_frame_writer",
    "open_writer",
    "output_kind",
]

VIDEO_SUFFIXES = (".mp4", ".gif")
FRAME_PATTERN = "frame_{:06d}.png"
_FRAME_RE = re.compile(r"frame_\d{6}(\.partial)?\.png")
MAX_FPS = 1000.0
_FFMPEG_PREFIX = re.compile(r"^\[[^\]]*\]\s*")


def _is_only_a_suffix(name: str) -> bool:
    """'.png', '.MP4': a name that is nothing but a known image/video suffix."""
    from PIL import Image

    if not name.startswith(".") or "." in name[1:]:
        return False
    known = set(VIDEO_SUFFIXES) | set(Image.registered_extensions())
    return name.lower() in known


def output_kind(out) -> str | None:
    """"mp4", "gif" or "frames" (a folder: trailing slash, an existing folder, or a
    name without suffix) for an animation output; None for anything else (an image).

    Raises OutputError for an empty name (``--out "$OUT"`` with OUT unset would
    otherwise mean the current folder) and for a name that is only a suffix (``.png``,
    ``out/.mp4``): such a name is almost certainly a forgotten file name, not a hidden
    folder.
    """
    s = check_output_name(out)
    p = Path(s)
    if s.endswith(("/", os.sep)):
        return "frames"
    if _is_only_a_suffix(p.name):
        raise OutputError(f"{out}: the file name is only the suffix {p.name!r}; give a "
                          f"name such as render{p.name.lower()}")
    if p.is_dir() or (not p.suffix and p.name):
        return "frames"
    return {".mp4": "mp4", ".gif": "gif"}.get(p.suffix.lower())


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _make_folder(folder: Path, out) -> list[Path]:
    """Create ``folder`` and its missing parents for the output ``out``.

    Returns the folders created, outermost first (so they can be removed again when
    nothing is written). Raises OutputError naming a file that is in the way or the
    folder that cannot be created.
    """
    missing = []
    p = folder
    try:
        while not p.exists() and not p.is_symlink() and p.parent != p:
            missing.append(p)
            p = p.parent
        if p.exists() and not p.is_dir():
            raise OutputError(f"{out}: {p} is a file, not a folder")
        for d in reversed(missing):
            d.mkdir()
    except OSError as exc:
        raise OutputError(f"{out}: cannot create the folder "
                          f"{exc.filename or folder}: {_why(exc)}") from exc
    return missing[::-1]


def _remove_folders(created: list[Path]):
    """Remove the folders ``_make_folder`` created if they are still empty."""
    for d in reversed(created):
        try:
            d.rmdir()
        except OSError:
            return


def _unlink(path: Path):
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def _create_file(path: Path, out, created: list[Path]):
    """Open ``path`` for writing (binary); on failure remove ``created`` folders and
    raise OutputError naming the folder."""
    try:
        return open(path, "wb")
    except OSError as exc:
        _remove_folders(created)
        raise OutputError(f"{out}: cannot create a file in {path.parent}: {_why(exc)}") from exc


class FrameWriter:
    """Base writer: ``write(color)`` frames of one size, then ``close()`` (or ``abort()``).

    Attributes:
        path: the output file or folder.
        size: (width, height) pixels of every frame.
        fps: frames per second.
        frames: number of frames written so far.

    Raises OutputError for an fps outside ``fps_range`` (inclusive; subclasses narrow
    it to what their format stores) and for an output that cannot be written. As a
    context manager it is closed on a normal exit or KeyboardInterrupt (frames kept)
    and aborted on any other error.
    """

    fps_range = (0.0, MAX_FPS)
    fps_why = "fps must be > 0 and at most 1000"

    def __init__(self, path, size, fps: float):
        self.path = Path(path)
        self.size = (int(size[0]), int(size[1]))
        self.fps = float(fps)
        lo, hi = self.fps_range
        if not (math.isfinite(self.fps) and self.fps > 0 and lo <= self.fps <= hi):
            raise OutputError(f"{self.path}: {self.fps_why}, got {fps!r}")
        self.frames = 0
        self.closed = False

    def _check(self, color) -> np.ndarray:
        a = np.asarray(color)
        w, h = self.size
        if a.dtype != np.uint8 or a.ndim != 3 or a.shape[:2] != (h, w) or a.shape[2] not in (3, 4):
            raise ValueError(f"{self.path}: frame must be ({h}, {w}, 3|4) uint8, got "
                             f"{a.shape} {a.dtype}")
        return a

    def write(self, color: np.ndarray):
        """Append one (H, W, 3|4) uint8 frame (row 0 = top). MP4 and GIF have no alpha:
        their frames are composited over ``engine.io.image.MATTE`` (``composite``).

        On an error the writer is aborted (see ``abort``) and the error re-raised
        (OutputError when the output could not be written).
        """
        if self.closed:
            raise ValueError(f"{self.path}: writer is closed")
        a = self._check(color)
        try:
            self._write(a)
        except Exception:
            self.abort()
            raise
        self.frames += 1

    def close(self):
        """Finalise the output (idempotent): a file with every frame written, in place
        of any earlier one. With no frames written nothing is left behind. Raises
        OutputError when finalising fails (the earlier file is then kept)."""
        if not self.closed:
            self.closed = True
            try:
                self._finish()
            except BaseException:
                self._discard()
                raise

    def abort(self):
        """Stop without finalising (idempotent): temporary files are removed and an
        earlier file at the output is left as it was. PNG frames already renamed into
        place stay."""
        if not self.closed:
            self.closed = True
            self._discard()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        if exc_type is None or issubclass(exc_type, KeyboardInterrupt):
            self.close()
        else:
            self.abort()

    def _write(self, a):
        raise NotImplementedError

    def _finish(self):
        raise NotImplementedError

    def _discard(self):
        raise NotImplementedError


class Mp4Writer(FrameWriter):
    """H.264 MP4 (yuv420p) by imageio-ffmpeg's ffmpeg, written to ``NAME.partial.mp4``
    and renamed over ``path`` when ffmpeg has finished successfully.

    Args:
        pad: pad an odd width/height by one edge row/column (else OutputError).
        crf: H.264 constant rate factor, 0 (lossless) .. 51 (worst); 10 is visually
            lossless for rendered points.

    ffmpeg's messages are captured: a failure raises OutputError with ffmpeg's first
    error line.
    """

    fps_range = (0.001, MAX_FPS)
    fps_why = "MP4 fps must be between 0.001 and 1000"

    def __init__(self, path, size, fps, pad=False, crf=10):
        super().__init__(path, size, fps)
        w, h = self.size
        self.pad = (w % 2, h % 2) if pad else (0, 0)
        if (w % 2 or h % 2) and not pad:
            raise OutputError(
                f"{self.path}: MP4 (H.264, yuv420p) needs an even width and height, got "
                f"{w}x{h}; choose an even --size or pass --pad to add one edge row/column "
                f"(frames are never rescaled)")
        if not 0 <= int(crf) <= 51:
            raise ValueError(f"crf must be in 0..51, got {crf}")
        self.crf = int(crf)
        self._proc = None
        self._log = None
        self._created = _make_folder(self.path.parent, self.path)
        self._out = PartialFile(self.path)
        self._tmp = self._out.tmp
        _create_file(self._tmp, self.path, self._created).close()

    def _start(self):
        from imageio_ffmpeg import get_ffmpeg_exe

        w, h = self.size[0] + self.pad[0], self.size[1] + self.pad[1]
        # The rate as a fraction, so 29.97 is 2997/100 and not rounded by ffmpeg.
        rate = Fraction(self.fps).limit_denominator(1_000_000)
        cmd = [get_ffmpeg_exe(), "-y", "-nostdin", "-v", "error",
               "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{w}x{h}", "-r", str(rate),
               "-i", "-", "-an", "-c:v", "libx264", "-pix_fmt", "yuv420p",
               "-crf", str(self.crf), "-f", "mp4", str(self._tmp)]
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - lives until close/abort
        # Own session: a Ctrl-C / SIGTERM sent to our process group must not kill
        # ffmpeg; the writer finishes it so the frames so far are kept.
        self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                      stderr=self._log, start_new_session=True)

    def _ffmpeg_error(self, what: str) -> OutputError:
        """OutputError with ffmpeg's first error line (ffmpeg has exited)."""
        self._log.seek(0)
        lines = [_FFMPEG_PREFIX.sub("", ln).strip()
                 for ln in self._log.read().decode("utf-8", "replace").splitlines()]
        detail = next((ln for ln in lines if ln), f"exit status {self._proc.returncode}")
        return OutputError(f"{self.path}: {what}: ffmpeg: {detail}")

    def _write(self, a):
        rgb = composite(a)
        if any(self.pad):
            rgb = np.pad(rgb, ((0, self.pad[1]), (0, self.pad[0]), (0, 0)), mode="edge")
        if self._proc is None:
            self._start()
        try:
            self._proc.stdin.write(np.ascontiguousarray(rgb).tobytes())
        except OSError:  # BrokenPipeError: ffmpeg has stopped
            self._proc.wait()
            raise self._ffmpeg_error("encoding failed") from None

    def _finish(self):
        if self._proc is None:  # no frame: nothing to keep
            self._discard()
            return
        try:
            self._proc.stdin.close()
        except OSError:
            pass  # ffmpeg already gone; its exit status tells why
        if self._proc.wait() != 0:
            raise self._ffmpeg_error("encoding failed")
        if not self._tmp.is_file() or self._tmp.stat().st_size == 0:
            raise self._ffmpeg_error("ffmpeg wrote nothing")
        self._out.commit()
        self._log.close()

    def _discard(self):
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
            try:
                self._proc.stdin.close()
            except OSError:
                pass
            self._proc.wait()
        if self._log is not None:
            self._log.close()
        self._out.discard()
        _remove_folders(self._created)


class GifWriter(FrameWriter):
    """Looping animated GIF, streamed: each frame is quantised to its own 256-colour
    palette (Pillow, median cut) and appended to ``NAME.partial.gif`` at once; ``close``
    writes the trailer and renames the file over ``path``.

    GIF delays are whole 1/100 s: frame k lasts round(100 (k + 1) / fps) -
    round(100 k / fps) hundredths, so the total length matches frames / fps (30 fps:
    3, 4, 3, 3, 4, ... hundredths). Every frame is stored (identical frames are not
    merged).
    """

    fps_range = (0.002, 50.0)
    fps_why = ("GIF stores frame delays in whole 1/100 s (at most 655.35 s) and viewers "
               "slow down delays under 2/100 s, so GIF fps must be between 0.002 and 50 "
               "(use .mp4 or a frames folder for other rates)")

    def __init__(self, path, size, fps):
        super().__init__(path, size, fps)
        if max(self.size) > 65535:
            raise OutputError(f"{self.path}: GIF sizes are at most 65535x65535, got "
                              f"{self.size[0]}x{self.size[1]}")
        self._ticks = 0  # hundredths of a second written so far
        self._created = _make_folder(self.path.parent, self.path)
        self._out = PartialFile(self.path)
        self._file = _create_file(self._out.tmp, self.path, self._created)

    def _write(self, a):
        from PIL import GifImagePlugin, Image

        # GIF's one transparent palette entry is not used: frames are composited
        im = Image.fromarray(np.ascontiguousarray(composite(a)), "RGB").convert(
            "P", palette=Image.Palette.ADAPTIVE)
        parts = []
        if self.frames == 0:
            header, _ = GifImagePlugin.getheader(im, info={"loop": 0})
            parts += header
        end = round(100 * (self.frames + 1) / self.fps)
        # Pillow takes the delay in ms and stores ms // 10.
        parts += GifImagePlugin.getdata(im, duration=10 * (end - self._ticks),
                                        include_color_table=True)
        try:
            self._file.write(b"".join(parts))  # one write: a frame is all in or not
            self._file.flush()
        except OSError as exc:
            raise OutputError(f"{self.path}: cannot write: {_why(exc)}") from exc
        self._ticks = end

    def _finish(self):
        if self.frames == 0:
            self._discard()
            return
        try:
            self._file.write(b";")  # GIF trailer
            self._file.close()
        except OSError as exc:
            raise OutputError(f"{self.path}: cannot write: {_why(exc)}") from exc
        self._out.commit()

    def _discard(self):
        self._file.close()
        self._out.discard()
        _remove_folders(self._created)


class PngSequenceWriter(FrameWriter):
    """``frame_000000.png``, ``frame_000001.png``, ... in the folder ``path``.

    Frames left in the folder by an earlier render (same name pattern, including
    ``.partial.png`` leftovers of a killed render) are removed when the first frame is
    written, so the folder always holds exactly one render. Each file is written under
    a temporary ``.partial.png`` name and renamed, so an interrupted render never leaves
    a truncated PNG; closing removes a partial file of its own.
    """

    def __init__(self, path, size, fps):
        super().__init__(path, size, fps)
        if self.path.exists() and not self.path.is_dir():
            raise OutputError(f"{self.path}: is a file, not a folder for PNG frames")
        self._created = _make_folder(self.path, self.path)
        probe = self._partial(0)
        _create_file(probe, self.path, self._created).close()
        _unlink(probe)

    def _partial(self, k: int) -> Path:
        return PartialFile(self.path / FRAME_PATTERN.format(k)).tmp

    def _write(self, a):
        try:
            if self.frames == 0:
                for old in self.path.iterdir():
                    if _FRAME_RE.fullmatch(old.name):
                        old.unlink()
            save_image(self.path / FRAME_PATTERN.format(self.frames), a)  # via tmp
        except OSError as exc:
            raise OutputError(f"{self.path}: cannot write frame {self.frames}: "
                              f"{_why(exc)}") from exc

    def _finish(self):
        self._discard()

    def _discard(self):
        _unlink(self._partial(self.frames))
        if self.frames == 0:
            _remove_folders(self._created)


class ImageWriter(FrameWriter):
    """One still image (any suffix of ``engine.io.image.image_suffixes()``): the first
    (and only) frame is saved by ``save_image``, through ``NAME.partial.SUFFIX`` and a
    rename, so an earlier image at ``path`` is replaced whole or not at all. The suffix
    and the folder are checked when the writer is made, before anything is rendered.
    """

    fps_range = (0.0, math.inf)
    fps_why = "fps must be > 0"

    def __init__(self, path, size, fps: float = 1.0):
        super().__init__(path, size, fps)
        check_image_name(self.path)
        self._created = _make_folder(self.path.parent, self.path)
        probe = PartialFile(self.path).tmp
        _create_file(probe, self.path, self._created).close()
        _unlink(probe)

    def _write(self, a):
        if self.frames:
            raise ValueError(f"{self.path}: an image holds one frame")
        try:
            save_image(self.path, a)
        except OSError as exc:
            raise OutputError(f"{self.path}: cannot write: {_why(exc)}") from exc

    def _finish(self):
        self._discard()

    def _discard(self):
        if self.frames == 0:
            _remove_folders(self._created)


def open_writer(out, size, fps: float = 1.0, pad: bool = False) -> FrameWriter:
    """The writer for any output ``out``: an animation by ``output_kind`` (MP4, GIF, a
    PNG frames folder; see ``open_frame_writer``), else a still image (``ImageWriter``).
    Everything about the output is checked here, before any frame is rendered: raises
    OutputError for an empty name, an image suffix that cannot be written (naming the
    ones that can), a folder that cannot be written, an fps or size the format cannot
    store."""
    if output_kind(out) is None:
        return ImageWriter(out, size, fps)
    return open_frame_writer(out, size, fps, pad=pad)


def open_frame_writer(out, size, fps: float, pad: bool = False) -> FrameWriter:
    """The writer for ``out`` by its kind (see ``output_kind``): MP4, GIF or PNG folder.

    Raises OutputError for an output that is not an animation kind, one that cannot be
    written, an fps the format cannot store, or an MP4 size the codec cannot take
    without ``pad``.
    """
    kind = output_kind(out)
    if kind == "mp4":
        return Mp4Writer(out, size, fps, pad=pad)
    if kind == "gif":
        return GifWriter(out, size, fps)
    if kind == "frames":
        return PngSequenceWriter(out, size, fps)
    raise OutputError(f"{out}: animation output must be .mp4, .gif or a folder for PNG frames")
