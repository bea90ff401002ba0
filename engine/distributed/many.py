"""Render a collection: one image (or turntable clip) per 3D file, in this process or on
Dask workers (``frustum render-many``).

Inputs are glob patterns (``models/**/*.glb``; ``**`` crosses folders, symlinked
folders included) or plain file names; only files with a suffix ``engine.io.load``
reads are taken, each file once (one reached twice through links is one input).

One output per input, by this rule: the root is the deepest folder that holds the fixed
folders of every pattern (the part before the first wildcard; a plain name's folder),
and each output keeps the input's path below the root, as the pattern names it (links
are not resolved): ``models/**/*.glb`` gives ``models/cars/a.glb`` -> ``OUT/cars/a.png``;
``'A/*.obj' 'B/*.obj'`` gives ``OUT/A/a.png`` and ``OUT/B/a.png``. Inputs that would
still share an output name (``a.glb`` and ``a.obj`` in one folder) keep their suffix
instead (``a.glb.png``, ``a.obj.png``).

Every output goes through the output lifecycle of ``engine.io.output``: written to
``NAME.partial.SUFFIX`` beside it and renamed into place only when complete, so an
output under its final name is always whole; Ctrl-C or SIGTERM stops at once (an output
being put in place is finished first). A second run skips each output that already
exists and is complete, so an interrupted run is resumed by running it again: an image
counts as complete only when all of it decodes (a JPEG or PNG cut short is rendered
again), a GIF when every frame decodes, an MP4 when its boxes end at the end of the
file and include the index ('moov'). Pass ``force`` to render everything again.

A file that fails (cannot be read, has nothing to draw, crashes its worker) is reported
with a one-line error and the others go on. ``OUT/index.json`` lists every input with
its output, status (written, skipped, failed), error, size in bytes and seconds; it is
rewritten as the run goes (at most every 2 s) and at the end.

On Dask, workers read the input files from the same paths (absolute paths are sent):
put them on a shared or replicated folder. Outputs come back to this process, which
alone writes under OUT.
"""

from __future__ import annotations

import contextlib
import glob
import io
import json
import logging
import os
import struct
import tempfile
import time
import uuid
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from ..errors import EngineError, OutputError
from ..io.output import Output, PartialFile, check_output_name
from ..progress import Progress
from ..render.msaa import IMAGE_MSAA
from .cluster import (
    DEFAULT_CONNECT_TIMEOUT,
    check_address,
    check_timeout,
    dask_client,
    require_dask,
)

__all__ = [
    "CLIP_FORMATS",
    "IMAGE_FORMATS",
    "Item",
    "ManyResult",
    "ManySpec",
    "plan",
    "render_item",
    "render_many",
]

log = logging.getLogger("engine")

IMAGE_FORMATS = ("png", "jpg")
CLIP_FORMATS = ("mp4", "gif")
INDEX_NAME = "index.json"
_MAGIC = set("*?[")


@dataclass(frozen=True)
class ManySpec:
    """How every file is rendered (plain data, sent to the workers once).

    size: (width, height). format: png/jpg (a still) or mp4/gif (a turntable).
    turntable: seconds of one turn (clips only); fps: clip frame rate. camera:
    (azimuth, elevation, distance or None) or None for the default framing.
    backend, point_size, point_shape, point_units, draw, shading, background, exposure,
    tone_map, shadows: as ``frustum render`` (the point options set every geometry's,
    through ``engine.io.sources.apply_look``). environment: an engine.scene.Environment
    lighting every file, or None. msaa: samples per pixel (engine.render.msaa), 4: anti-aliased images and
    clips.
    numba_threads: Numba threads per task; None: 1 on Dask workers (so they do not
    oversubscribe the cores), Numba's own default in this process. root: the folder
    every file's references may be read from (``engine.io.load``), or None.
    """

    size: tuple = (512, 512)
    format: str = "png"
    turntable: float | None = None
    fps: float = 30.0
    camera: tuple | None = None
    backend: str | None = None
    point_size: float | None = None
    point_shape: str | None = None
    point_units: str | None = None
    draw: str | None = None
    shading: str | None = None
    background: tuple | None = None
    numba_threads: int | None = None
    root: str | None = None
    msaa: int = IMAGE_MSAA
    exposure: float | None = None
    tone_map: str | None = None
    environment: object = None
    shadows: bool = False

    @property
    def clip(self) -> bool:
        return self.format in CLIP_FORMATS


@dataclass
class Item:
    """One input: ``source`` (absolute path), ``output`` (absolute path) and what
    became of it (``status`` written/skipped/failed, ``error``, ``bytes``, ``seconds``)."""

    source: str
    output: str
    status: str = "pending"
    error: str | None = None
    bytes: int | None = None
    seconds: float | None = None
    frames: int | None = None


@dataclass
class ManyResult:
    """What ``render_many`` did: ``items`` (each Item with its status), ``index`` (the
    path of OUT/index.json), ``elapsed`` seconds, ``interrupted`` and ``stop_signal``
    (the signal that stopped it, or None)."""

    items: list = field(default_factory=list)
    index: Path | None = None
    elapsed: float = 0.0
    interrupted: bool = False
    stop_signal: int | None = None

    def count(self, status: str) -> int:
        return sum(1 for it in self.items if it.status == status)

    @property
    def failed(self) -> list:
        return [it for it in self.items if it.status == "failed"]


def _fixed_folder(pattern: str) -> Path:
    """The leading folders of a glob pattern without wildcards ('.' when none)."""
    parts = Path(pattern).parts
    fixed = []
    for part in parts[:-1]:
        if _MAGIC & set(part):
            break
        fixed.append(part)
    return Path(*fixed) if fixed else Path(".")


def plan(patterns, out_dir, fmt: str = "png") -> list[Item]:
    """The inputs matched by ``patterns`` (sorted, each file once) and their outputs in
    ``out_dir`` with suffix ``fmt``, one per input (see the module docstring for the
    rule). Raises EngineError when nothing matches or a plain file name does not
    exist."""
    from ..io.loaders import SUPPORTED_SUFFIXES

    if isinstance(patterns, (str, os.PathLike)):
        patterns = [patterns]
    out_dir = Path(out_dir).resolve()
    found: dict[Path, Path] = {}  # resolved file -> absolute path as named (unresolved)
    bases = []
    ignored = 0
    for pattern in patterns:
        pattern = os.path.expanduser(str(pattern))
        if _MAGIC & set(pattern):
            base = _fixed_folder(pattern)
            names = glob.glob(pattern, recursive=True)
        else:
            base = Path(pattern).parent
            names = [pattern] if Path(pattern).exists() else []
            if not names:
                raise EngineError(f"{pattern}: no such file")
        bases.append(os.path.abspath(base))
        for name in sorted(names):
            p = Path(name)
            if not p.is_file():
                continue
            if p.suffix.lower() not in SUPPORTED_SUFFIXES:
                ignored += 1
                continue
            found.setdefault(p.resolve(), Path(os.path.abspath(p)))
    if not found:
        what = ", ".join(map(str, patterns))
        extra = f" ({ignored} other files ignored)" if ignored else ""
        raise EngineError(f"no 3D file ({', '.join(sorted(SUPPORTED_SUFFIXES))}) matches "
                          f"{what}{extra}")
    root = Path(os.path.commonpath(bases))
    rel = {src: named.relative_to(root) for src, named in found.items()}
    outputs = {src: out_dir / r.parent / f"{r.stem}.{fmt}" for src, r in rel.items()}
    while True:  # a shared name keeps the input's suffix; repeat until all differ
        users: dict[Path, list] = {}
        for src, out in outputs.items():
            users.setdefault(out, []).append(src)
        shared = [src for srcs in users.values() if len(srcs) > 1 for src in srcs]
        full = [src for src in shared if outputs[src].name != f"{rel[src].name}.{fmt}"]
        if not full:
            break
        for src in full:
            outputs[src] = out_dir / rel[src].parent / f"{rel[src].name}.{fmt}"
    return [Item(str(src), str(outputs[src])) for src in sorted(found)]


def _mp4_complete(path: Path) -> bool:
    """Top-level MP4 boxes cover the file exactly and include 'moov' (the index an
    encoder writes last)."""
    size = path.stat().st_size
    seen = set()
    with open(path, "rb") as f:
        pos = 0
        while pos < size:
            f.seek(pos)
            head = f.read(16)
            if len(head) < 8:
                return False
            n, kind = struct.unpack(">I4s", head[:8])
            if n == 1 and len(head) == 16:
                n = struct.unpack(">Q", head[8:16])[0]
            elif n == 0:
                n = size - pos
            if n < 8:
                return False
            seen.add(kind)
            pos += n
    return pos == size and b"moov" in seen and b"ftyp" in seen


# What the last bytes of a whole file are: PNG's IEND chunk (PNG spec, section 11.2.5,
# with its CRC), JPEG's EOI marker (ITU T.81, B.2.1), the GIF trailer (GIF89a, 27).
_TRAILERS = {".png": b"\x00\x00\x00\x00IEND\xaeB`\x82", ".jpg": b"\xff\xd9",
             ".gif": b"\x3b"}


def is_complete(path) -> bool:
    """Whether ``path`` holds a whole output: an image that ends with its format's
    trailer and whose every pixel decodes (every frame of a GIF; Pillow's ``verify``
    checks PNG chunk checksums but nothing of a JPEG, and a decoder forgives a file cut
    in its last bytes), or an MP4 whose boxes end at the end of the file with 'moov'."""
    p = Path(path)
    try:
        if not p.is_file() or p.stat().st_size == 0:
            return False
        if p.suffix.lower() == ".mp4":
            return _mp4_complete(p)
        trailer = _TRAILERS.get(p.suffix.lower())
        if trailer is not None:
            with open(p, "rb") as f:
                f.seek(max(0, p.stat().st_size - len(trailer)))
                if f.read() != trailer:
                    return False
        from PIL import Image

        with Image.open(p) as im:
            im.verify()
        with Image.open(p) as im:  # verify() leaves the image unusable: open again
            for k in range(getattr(im, "n_frames", 1)):
                im.seek(k)
                im.load()
        return True
    except (OSError, ValueError, SyntaxError, struct.error, EOFError):
        return False


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    msg = text[0] if text else ""
    if isinstance(exc, EngineError):
        return msg or type(exc).__name__
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def _encode_image(color, fmt: str) -> bytes:
    import numpy as np
    from PIL import Image

    img = Image.fromarray(np.ascontiguousarray(color))
    if fmt == "jpg":
        img = img.convert("RGB")
    buf = io.BytesIO()
    img.save(buf, "JPEG" if fmt == "jpg" else "PNG", **({"quality": 92} if fmt == "jpg" else {}))
    return buf.getvalue()


def render_item(spec: ManySpec, source: str) -> dict:
    """Render one file as ``spec`` says: {"ok", "data" (the encoded output), "error"
    (one line), "seconds", "frames"}. Never raises for a bad file (only for Ctrl-C)."""
    from ..animation.offline import frame_count, render_motion
    from ..animation.shots import turntable
    from ..io.sources import apply_look, load_source
    from ..io.video import open_frame_writer
    from ..render.renderer import Renderer
    from .job import _set_numba_threads

    t0 = time.perf_counter()
    w, h = spec.size
    try:
        scene, camera = load_source(source, w / h, root=spec.root)
        apply_look(scene, spec.draw, spec.shading, spec.background, exposure=spec.exposure,
                   tone_map=spec.tone_map, point_size=spec.point_size,
                   point_shape=spec.point_shape, point_units=spec.point_units,
                   shadows=spec.shadows)
        if spec.environment is not None:
            scene.environment = spec.environment
        if spec.camera is not None:
            az, el, dist = spec.camera
            camera.frame(scene.bounds(), azimuth=az, elevation=el, distance=dist)
        renderer = Renderer(scene, camera, spec.size, backend=spec.backend, msaa=spec.msaa)
        try:
            _set_numba_threads(spec.numba_threads)
            if not spec.clip:
                data = _encode_image(renderer.render(depth=False).color, spec.format)
                frames = 1
            else:
                path = turntable(camera, scene.bounds(), spec.turntable)
                n = frame_count(spec.turntable, spec.fps)
                with tempfile.TemporaryDirectory(prefix="frustum-many-") as tmp:
                    clip = Path(tmp) / f"clip.{spec.format}"
                    writer = open_frame_writer(clip, spec.size, spec.fps, pad=True)
                    result = render_motion(renderer, path, spec.fps, n, writer)
                    if result.interrupted:
                        raise KeyboardInterrupt
                    data = clip.read_bytes()
                frames = n
        finally:
            renderer.close()
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # noqa: BLE001 - a broken file is reported, not raised
        return {"ok": False, "data": None, "error": _one_line(exc),
                "seconds": time.perf_counter() - t0, "frames": None}
    return {"ok": True, "data": data, "error": None, "seconds": time.perf_counter() - t0,
            "frames": frames}


def _write_file(path: Path, data: bytes):
    """``data`` to ``path`` through the output lifecycle (``engine.io.output.
    PartialFile``: a temporary name beside it, renamed over it when complete)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with PartialFile(path) as tmp:
        tmp.write_bytes(data)


class _FileProgress(Progress):
    def line(self) -> str:
        r = self.rate()
        from ..progress import format_duration

        eta = (self.total - self.done) / r if r > 0 else float("inf")
        return (f"{self.label}: {self.done}/{self.total} files "
                f"({100.0 * self.done / self.total:.0f}%), {r:.2f} files/s, "
                f"ETA {format_duration(eta)}")


class _Index:
    """OUT/index.json, rewritten atomically at most every ``interval`` seconds."""

    def __init__(self, out_dir: Path, items, spec: ManySpec, interval=2.0):
        self.path = out_dir / INDEX_NAME
        self.items, self.spec, self.interval = items, spec, interval
        self._last = -1e9

    def write(self, force=False):
        now = time.monotonic()
        if not force and now - self._last < self.interval:
            return
        self._last = now
        root = self.path.parent
        entries = []
        for it in self.items:
            e = asdict(it)
            e["output"] = os.path.relpath(it.output, root)
            entries.append(e)
        doc = {"format": 1, "spec": asdict(self.spec),
               "summary": {s: sum(1 for it in self.items if it.status == s)
                           for s in ("written", "skipped", "failed", "pending")},
               "items": entries}
        _write_file(self.path, (json.dumps(doc, indent=1) + "\n").encode())


def render_many(patterns, out_dir, spec: ManySpec | None = None, *, client=None,
                scheduler=None, workers=None, threads_per_worker=1, force=False,
                progress: bool = True, window: int | None = None,
                connect_timeout: float = DEFAULT_CONNECT_TIMEOUT) -> ManyResult:
    """Render every 3D file matched by ``patterns`` into ``out_dir`` (see the module
    docstring), on Dask when ``client``, ``scheduler`` or ``workers`` is given.

    Returns a ManyResult (``items`` with each status, ``index`` path). Ctrl-C or
    SIGTERM stops at once (``interrupted``, ``stop_signal``): outputs finished so far
    stay, the index says which, and a rerun resumes. Raises EngineError when nothing
    matches, OutputError when the output folder cannot be used (an empty name
    included).
    """
    spec = spec or ManySpec()
    if spec.format not in IMAGE_FORMATS + CLIP_FORMATS:
        raise EngineError(f"format must be one of {', '.join(IMAGE_FORMATS + CLIP_FORMATS)}, "
                          f"got {spec.format!r}")
    if spec.clip and not spec.turntable:
        raise EngineError(f"a {spec.format} per file is a turntable: give its seconds")
    if scheduler is not None:  # a bad address fails before the folder is made
        check_address(scheduler)
    check_timeout(connect_timeout)
    out = Path(check_output_name(out_dir))
    if out.exists() and not out.is_dir():
        raise OutputError(f"{out}: is a file, not a folder")
    t0 = time.perf_counter()
    items = plan(patterns, out, spec.format)
    todo = []
    for it in items:
        if not force and is_complete(it.output):
            it.status = "skipped"
            it.bytes = Path(it.output).stat().st_size
        else:
            todo.append(it)
    on_dask = bool(todo) and any(v is not None for v in (client, scheduler, workers))
    if on_dask and spec.numba_threads is None:
        spec = replace(spec, numba_threads=1)
    with contextlib.ExitStack() as stack:
        # Connected first: a cluster that cannot be used leaves no folder behind.
        c = stack.enter_context(dask_client(client, scheduler, workers, threads_per_worker,
                                            spec.numba_threads, connect_timeout)
                                ) if on_dask else None
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"{out}: cannot create the folder: {exc.strerror or exc}"
                              ) from exc
        index = _Index(out.resolve(), items, spec)
        bar = (_FileProgress(max(1, len(todo)), label="render-many")
               if progress and todo else None)
        result = ManyResult(items, index.path)
        index.write(force=True)
        try:
            with Output(_Files(index), len(todo), bar) as session:
                if c is not None:
                    _run_on_dask(c, spec, todo, session.write, window)
                else:
                    for it in todo:
                        session.write(it, render_item(spec, it.source))
        finally:
            result.elapsed = time.perf_counter() - t0
    result.interrupted = session.result.interrupted
    result.stop_signal = session.result.stop_signal
    return result


class _Files:
    """render-many's writer in the output session (``engine.io.output.Output``):
    ``write(item, result)`` puts one file in place (or records why it failed) and
    updates the index; ``close``/``abort`` write the index a last time (the outputs
    put in place stay either way)."""

    def __init__(self, index: _Index):
        self.index = index
        self.path = index.path.parent
        self.frames = 0  # files done (written or failed)

    def write(self, it: Item, r: dict):
        it.seconds = round(float(r["seconds"]), 3)
        if r["ok"]:
            try:
                _write_file(Path(it.output), r["data"])
            except (OSError, OutputError) as exc:
                why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
                it.status, it.error = "failed", f"cannot write {it.output}: {why}"
            else:
                it.status, it.bytes, it.frames = "written", len(r["data"]), r["frames"]
        else:
            it.status, it.error = "failed", r["error"]
        self.frames += 1
        self.index.write()

    def close(self):
        self.index.write(force=True)

    abort = close


def _run_on_dask(client, spec, todo, finish, window=None):
    distributed = require_dask()
    from .cluster import check_workers, share

    threads = check_workers(client)
    window = max(1, int(window)) if window else max(4, 2 * threads)
    token = uuid.uuid4().hex[:12]
    spec_future = share(client, spec, f"frustum-spec-{token}")
    done = distributed.as_completed(loop=client.loop)
    futures = {}
    nxt = 0

    def submit():
        nonlocal nxt
        it = todo[nxt]
        f = client.submit(render_item, spec_future, it.source, pure=False,
                          key=f"frustum-item-{token}-{nxt:07d}")
        futures[f.key] = (f, it)
        done.add(f)
        nxt += 1

    try:
        while nxt < len(todo) and len(futures) < window:
            submit()
        for fut in done:
            _, it = futures.pop(fut.key)
            try:
                r = fut.result()
            except Exception as exc:  # noqa: BLE001 - a worker lost on this file
                kind = type(exc).__name__
                why = ("its worker died each time it was tried (KilledWorker)"
                       if kind == "KilledWorker" else _one_line(exc))
                r = {"ok": False, "data": None, "error": why, "seconds": 0.0,
                     "frames": None}
            fut.release()
            finish(it, r)
            while nxt < len(todo) and len(futures) < window:
                submit()
    finally:
        if futures:
            client.cancel([f for f, _ in futures.values()])
        spec_future.release()
