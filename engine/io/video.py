"""Writing frame sequences: MP4 (H.264 through imageio's bundled ffmpeg), animated GIF
(imageio's Pillow plugin) or a folder of numbered PNG files.

Every writer opens its output lazily at the first frame and, when closed, finalises it
(ffmpeg writes the MP4 index, Pillow writes the GIF), so a render that is interrupted
still leaves a playable file with the frames written so far; a writer closed with no
frames leaves no file behind (never a 0-byte file).

Sizes: H.264 in yuv420p (the pixel format every player accepts) needs an even width
and height. imageio would otherwise *rescale* frames to a multiple of its
``macro_block_size`` (16); here ``macro_block_size=1`` turns that off, odd sizes are
rejected with an error that says so, and ``pad=True`` instead pads one row/column by
repeating the edge pixels (the frame content is never rescaled).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

from ..errors import EngineError
from .image import save_image

__all__ = [
    "VIDEO_SUFFIXES",
    "FrameWriter",
    "GifWriter",
    "Mp4Writer",
    "PngSequenceWriter",
    "open_frame_writer",
    "output_kind",
]

VIDEO_SUFFIXES = (".mp4", ".gif")
FRAME_PATTERN = "frame_{:06d}.png"
_FRAME_RE = re.compile(r"frame_\d{6}\.png")


def output_kind(out) -> str | None:
    """"mp4", "gif" or "frames" (a folder: trailing slash, an existing folder, or a
    name without suffix) for an animation output; None for anything else (an image)."""
    s = str(out)
    p = Path(s)
    if s.endswith(("/", os.sep)) or p.is_dir() or (not p.suffix and p.name):
        return "frames"
    suffix = p.suffix.lower()
    return {".mp4": "mp4", ".gif": "gif"}.get(suffix)


class FrameWriter:
    """Base writer: ``write(color)`` frames of one size, then ``close()``.

    Attributes:
        path: the output file or folder.
        size: (width, height) pixels of every frame.
        fps: frames per second.
        frames: number of frames written so far.
    """

    def __init__(self, path, size, fps: float):
        self.path = Path(path)
        self.size = (int(size[0]), int(size[1]))
        self.fps = float(fps)
        if not (self.fps > 0 and np.isfinite(self.fps)):
            raise EngineError(f"fps must be positive, got {fps!r}")
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
        """Append one (H, W, 3|4) uint8 frame (row 0 = top); alpha is dropped for video."""
        if self.closed:
            raise ValueError(f"{self.path}: writer is closed")
        self._write(self._check(color))
        self.frames += 1

    def close(self):
        """Finalise the output (idempotent); with no frames written, nothing is left."""
        if not self.closed:
            self.closed = True
            self._close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _write(self, a):
        raise NotImplementedError

    def _close(self):
        raise NotImplementedError

    def _remove_if_empty(self):
        if self.path.is_file() and (self.frames == 0 or self.path.stat().st_size == 0):
            self.path.unlink()


class Mp4Writer(FrameWriter):
    """H.264 MP4 (yuv420p) via imageio-ffmpeg. Odd sizes: EngineError unless ``pad``."""

    def __init__(self, path, size, fps, pad=False, quality=8):
        super().__init__(path, size, fps)
        w, h = self.size
        self.pad = (w % 2, h % 2) if pad else (0, 0)
        if (w % 2 or h % 2) and not pad:
            raise EngineError(
                f"{self.path}: MP4 (H.264, yuv420p) needs an even width and height, got "
                f"{w}x{h}; choose an even --size or pass --pad to add one edge row/column "
                f"(frames are never rescaled)")
        self.quality = quality
        self._writer = None

    def _write(self, a):
        import imageio.v2 as iio

        rgb = a[..., :3]
        if any(self.pad):
            rgb = np.pad(rgb, ((0, self.pad[1]), (0, self.pad[0]), (0, 0)), mode="edge")
        if self._writer is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # macro_block_size=1: imageio must not rescale; sizes are checked above.
            self._writer = iio.get_writer(
                self.path, format="FFMPEG", fps=self.fps, codec="libx264",
                pixelformat="yuv420p", macro_block_size=1, quality=self.quality,
                ffmpeg_log_level="error")
        self._writer.append_data(np.ascontiguousarray(rgb))

    def _close(self):
        try:
            if self._writer is not None:
                self._writer.close()
        finally:
            self._remove_if_empty()


class GifWriter(FrameWriter):
    """Looping animated GIF via imageio's Pillow plugin. GIF stores frame delays in
    1/100 s, so the delay is 1000/fps ms rounded by Pillow to 10 ms steps; Pillow also
    merges identical consecutive frames (adding up their delays)."""

    def __init__(self, path, size, fps):
        super().__init__(path, size, fps)
        self._file = None

    def _write(self, a):
        import imageio.v3 as iio

        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = iio.imopen(self.path, "w", plugin="pillow")
        self._file.write(np.ascontiguousarray(a[..., :3]), duration=1000.0 / self.fps, loop=0)

    def _close(self):
        try:
            if self._file is not None:
                self._file.close()
        finally:
            self._remove_if_empty()


class PngSequenceWriter(FrameWriter):
    """``frame_000000.png``, ``frame_000001.png``, ... in the folder ``path``.

    Frames left in the folder by an earlier render (same name pattern) are removed when
    the first frame is written, so the folder always holds exactly one render. Each
    file is written under a temporary name and renamed, so an interrupted render never
    leaves a truncated PNG.
    """

    def _write(self, a):
        if self.frames == 0:
            self.path.mkdir(parents=True, exist_ok=True)
            for old in self.path.iterdir():
                if _FRAME_RE.fullmatch(old.name):
                    old.unlink()
        final = self.path / FRAME_PATTERN.format(self.frames)
        tmp = final.with_name(final.stem + ".partial.png")
        save_image(tmp, a)
        os.replace(tmp, final)

    def _close(self):
        pass


def open_frame_writer(out, size, fps: float, pad: bool = False) -> FrameWriter:
    """The writer for ``out`` by its kind (see ``output_kind``): MP4, GIF or PNG folder.

    Raises EngineError for an output that is not an animation kind, or an MP4 size the
    codec cannot take without ``pad``.
    """
    kind = output_kind(out)
    if kind == "mp4":
        return Mp4Writer(out, size, fps, pad=pad)
    if kind == "gif":
        return GifWriter(out, size, fps)
    if kind == "frames":
        return PngSequenceWriter(out, size, fps)
    raise EngineError(f"{out}: animation output must be .mp4, .gif or a folder for PNG frames")
