"""Offline rendering of a camera motion with the frames spread over Dask workers.

``render_job(job, writer, client)`` submits one task per run of a few consecutive frames
(``chunk_size``; at most ``window`` frames in flight or waiting, so memory stays
bounded), takes the frames back as tasks finish, in any order, and writes them to the
``FrameWriter`` strictly in order 0, 1, 2, ... Only this process writes the output, so:

- each frame is written exactly once: a task that Dask runs again (its worker died
  before the frame came back) recomputes the same pixels, and a second copy of a frame
  that was already written is never written;
- the output file is the same, byte for byte, as the single-process render of the same
  job (``frustum render`` without --workers): the same frames reach the same encoder in
  the same order;
- the writers' rule holds: MP4/GIF go to ``NAME.partial.SUFFIX`` and are renamed into
  place only when complete (PNG frames are renamed one by one), and a render that fails
  leaves nothing new under the final name.

A worker lost mid-job (killed, out of memory, its machine gone) costs only the frames it
held: Dask's scheduler runs them again elsewhere (up to ``distributed.scheduler.
allowed-failures`` times per frame, 3 by default; past that the render fails with an
EngineError naming the frame). An error in the rendering itself (a bad file on a worker)
fails the render at once with that error.

Ctrl-C or SIGTERM stops like the single-process render: outstanding tasks are cancelled
and the frames written so far are kept in a finalised file.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile

from ..errors import EngineError
from ..io.output import Output, RenderResult
from ..progress import Progress
from ..render.msaa import IMAGE_MSAA
from .cluster import check_workers, dask_client, require_dask, share
from .job import RenderJob, render_frames, take_frame

__all__ = ["render_job", "render_video"]

log = logging.getLogger("engine")


def _task_error(exc: BaseException, k0: int, k1: int) -> BaseException:
    """An exception from the task of frames k0..k1-1, as the user should see it."""
    k = f"frame {k0}" if k1 - k0 == 1 else f"frames {k0}-{k1 - 1}"
    name = type(exc).__name__
    if name == "KilledWorker":
        return EngineError(f"{k}: the workers running them died repeatedly (Dask "
                           f"gives up after distributed.scheduler.allowed-failures tries); "
                           f"check the workers' memory and logs")
    if name in ("FutureCancelledError", "CancelledError"):
        return EngineError(f"{k}: Dask cancelled their task ({exc}); was the cluster "
                           f"restarted or the client closed?")
    if isinstance(exc, (ModuleNotFoundError, ImportError)) and "engine" in str(exc):
        return EngineError(f"{k}: a worker cannot import the engine ({exc}); "
                           f"install frustum[distributed] on every worker")
    return exc


MAX_CHUNK = 8  # frames per task at most
CHUNK_BYTES = 64 << 20  # and at most this many bytes of frames per task


def chunk_size(job: RenderJob, threads: int, channels: int = 4) -> int:
    """Frames per task: enough to amortise Dask's per-task cost (a millisecond or more
    per task, measured by benchmarks/distributed_render.py), few enough that every
    worker thread gets at least 4 tasks and a task's frames stay under CHUNK_BYTES."""
    w, h = job.size
    by_bytes = max(1, CHUNK_BYTES // (w * h * channels))
    return max(1, min(MAX_CHUNK, by_bytes, job.frames // (4 * max(1, threads))))


def local_spool(client) -> str | None:
    """A new temporary folder (in /dev/shm when there is one) if every worker of
    ``client`` sees it, i.e. runs on this machine (or shares the folder); else None
    (the folder is removed)."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    folder = tempfile.mkdtemp(prefix="frustum-spool-", dir=base)
    try:
        seen = client.run(os.path.isdir, folder)
    except Exception:  # noqa: BLE001 - any doubt: send frames through Dask
        seen = {}
    if seen and all(seen.values()):
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    return None


def render_job(job: RenderJob, writer, client, progress: Progress | None = None,
               window: int | None = None, on_frame=None, chunk: int | None = None,
               spool="auto", rgba: bool | None = None) -> RenderResult:
    """Render every frame of ``job`` on ``client``'s workers into ``writer`` (opened for
    ``job.size`` and ``job.fps``), in order, and close it. Returns a RenderResult.

    chunk: consecutive frames per task (default ``chunk_size``). window: frames
    submitted and not yet written, at most (default: 3 tasks per worker thread, at least
    4 tasks). on_frame(k, color): called after frame k is written. rgba: whether frames
    travel with alpha (default: not for video writers, which drop it; yes for frame
    folders). spool: how frames come
    back: "auto" (default) through a temporary folder when every worker sees it (the
    workers run on this machine; see ``render_frames``), else through Dask; None:
    always through Dask; a path: that folder (shared by the workers and this process).
    The writer goes through the output session of ``engine.io.output`` (signals,
    progress, close or abort), as in the single-process render. Errors abort the writer
    (nothing new is left at the output) and propagate.
    """
    distributed = require_dask()
    if tuple(writer.size) != tuple(job.size):
        writer.abort()
        raise ValueError(f"job size {job.size} differs from writer size {writer.size}")
    n = job.frames
    alpha = (not str(getattr(writer, "path", "")).lower().endswith((".mp4", ".gif"))
             if rgba is None else bool(rgba))
    futures = {}
    job_future = None
    spool_dir = None
    with Output(writer, n, progress) as out:
        try:
            threads = check_workers(client)
            chunk = max(1, int(chunk)) if chunk else chunk_size(job, threads, 4 if alpha else 3)
            window = max(chunk, int(window)) if window else chunk * max(4, 3 * threads)
            if spool == "auto":
                spool_dir = local_spool(client)
            elif spool:
                spool_dir = str(spool)
            job_future = share(client, job, f"frustum-job-{job.token}")
            done = distributed.as_completed(loop=client.loop, with_results=True,
                                            raise_errors=False)
            pending, spans = {}, {}
            submitted = written = 0

            def submit():
                nonlocal submitted
                k0, k1 = submitted, min(n, submitted + chunk)
                f = client.submit(render_frames, job_future, k0, k1, alpha, spool_dir,
                                  pure=False, key=f"frustum-frames-{job.token}-{k0:07d}")
                futures[f.key] = f
                spans[f.key] = (k0, k1)
                done.add(f)
                submitted = k1

            while submitted < n and submitted - written < window:
                submit()
            for fut, result in done:
                if fut.status != "finished":  # erred or cancelled: raise its exception
                    try:
                        fut.result()
                    except KeyboardInterrupt:
                        raise
                    except BaseException as exc:
                        err = _task_error(exc, *spans[fut.key])
                        if err is exc:
                            raise
                        raise err from None
                    raise EngineError(f"frames {spans[fut.key]}: Dask reports the task as "
                                      f"{fut.status}")
                futures.pop(fut.key, None)
                fut.release()
                got, colors = result
                for k, item in enumerate(colors, start=got):
                    color = take_frame(item)  # (a spool file is read and removed)
                    if k >= written and k not in pending:  # never a second copy
                        pending[k] = color
                while written in pending:
                    color = pending.pop(written)
                    out.write(color)
                    if on_frame is not None:
                        on_frame(written, color)
                    written += 1
                while submitted < n and submitted - written < window:
                    submit()
                if written == n:
                    break
        finally:
            if futures:
                client.cancel(list(futures.values()))
            if job_future is not None:
                job_future.release()
            if spool_dir is not None and spool == "auto":
                shutil.rmtree(spool_dir, ignore_errors=True)  # files of lost attempts too
    return out.result


def render_video(scene, camera=None, out=None, motion=None, *, fps: float = 30.0,
                 duration: float | None = None, frames: int | None = None,
                 size=(1280, 720), backend: str | None = None, raster: str = "software",
                 point_size: float | None = None, pad: bool = False,
                 progress: bool = False, on_frame=None, client=None,
                 scheduler: str | None = None, workers: int | None = None,
                 threads_per_worker: int = 1, numba_threads: int | None = 1,
                 draw=None, shading=None, background=None, msaa: int = IMAGE_MSAA) -> RenderResult:
    """``engine.render_video``: render ``scene`` seen by ``camera`` along ``motion`` into
    the video ``out``, in this process, or with its frames spread over Dask workers when
    ``client``, ``scheduler`` or ``workers`` is given; both write the same file, byte for
    byte. One function: the arguments are checked once (``engine.animation.video.
    plan_video``) and the frames go through one output session (``engine.io.output``).

        engine.render_video(scene, camera, "orbit.mp4", duration=6)           # turntable
        engine.render_video(scene, camera, "tour.gif", motion="tour.json")    # a path file
        engine.render_video(scene, camera, "spin.mp4", motion=spin, frames=120)
        engine.render_video(scene, camera, "orbit.mp4", workers=2)            # on Dask

    Frame k is rendered at t = k / fps seconds exactly, so two renders of the same scene
    and motion give the same frames.

    Args:
        scene: an ``engine.Scene``, or a 3D file path or 'demo' (loaded and framed like
            ``frustum render`` frames it; on Dask every worker loads the same path, so
            it must be reachable there: docs/distributed.md).
        camera: the camera (None with a file: the framed one). The motion moves it; on
            Dask the workers move copies and the camera is left at the last frame's
            pose, as in this process.
        out: ".mp4" (H.264), ".gif", or a folder for numbered PNG frames (a name ending
            in "/" or without a suffix).
        motion: a ``CameraPath``, a ``CameraScript``, a path file (.json/.toml) or a
            function ``fn(camera, t)`` (it may animate nodes too); None: a turntable
            around the scene from where the camera stands.
        fps: frames per second (MP4 0.001-1000, GIF 0.002-50).
        duration: seconds of video (default: the motion's, 6 s for a turntable or a
            function). ``frames`` instead gives the frame count (1..1,000,000).
        size: (width, height) in pixels (an MP4 needs even sizes unless ``pad``).
        backend, raster, point_size: as ``engine.Renderer``.
        msaa: samples per pixel (1, 2, 4, 8; engine.render.msaa): 4 by default, an
            offline video is anti-aliased.
        pad: MP4 with an odd size: repeat one edge row/column instead of refusing.
        progress: print a progress line to stderr.
        on_frame: called as ``on_frame(k, frame)`` after frame k is written.
        client: a ``distributed.Client``; scheduler: the address of a running scheduler
            (tcp://HOST:8786); workers: a LocalCluster of this many processes on
            127.0.0.1, closed at the end (at most the usable CPU cores: see
            ``engine.distributed.cluster.max_local_workers``). At most one of the three.
        threads_per_worker: threads of each embedded worker (default 1).
        numba_threads: Numba threads per worker thread (default 1; None: Numba's own).
        draw, shading, background: as --draw/--shading/--background, for a file.

    On Dask the motion must depend on t alone: a ``CameraPath``, a path file, the
    default turntable, or an animation clip (``ClipMotion``; the scene travels with
    it); a ``CameraScript`` or a plain function runs in order and is refused
    (EngineError).

    Returns:
        ``engine.io.output.RenderResult`` (frames written, interrupted, path...).
        Ctrl-C stops at once and keeps a playable file with the frames so far.

    Raises:
        OutputError: ``out`` is an image name, empty or cannot be written, an fps the
            format cannot store. EngineError: a frame count outside 1..1,000,000, a path
            file that does not load, a Dask cluster that cannot be reached.
            ValueError/TypeError: bad arguments, naming them.
    """
    from ..animation.offline import render_motion
    from ..animation.video import plan_video
    from ..io.video import open_frame_writer
    from ..render.frame import Frame
    from ..render.renderer import Renderer, check_size
    from ..scene.graph import Scene

    if out is None:
        raise TypeError("render_video needs an output: render_video(scene, camera, out, ...)")
    source = None
    if not isinstance(scene, Scene):
        from ..io.sources import apply_look, load_source

        source = scene
        check_size(size)
        scene, framed = load_source(source, size[0] / size[1])
        apply_look(scene, draw, shading, background)
        camera = framed if camera is None else camera
    elif draw is not None or shading is not None or background is not None:
        raise EngineError("draw=/shading=/background= apply to a file; set them on the "
                          "Scene's nodes")
    plan = plan_video(scene, camera, out, motion, fps=fps, duration=duration,
                      frames=frames, size=size)
    n, size, fps = plan.frames, plan.size, plan.fps
    report = Progress(n) if progress else None
    if not any(v is not None for v in (client, scheduler, workers)):
        renderer = Renderer(scene, camera, size, backend=backend, point_size=point_size,
                            raster=raster, msaa=msaa)
        try:
            writer = open_frame_writer(out, size, fps, pad=pad)
            return render_motion(renderer, plan.motion, fps, n, writer, report, on_frame)
        finally:
            renderer.close()
    if source is not None:  # workers load the file (or get the scene: RenderJob.create)
        from .job import SceneSource

        source = SceneSource.from_file(source, draw, shading, background)
    job = RenderJob.create(scene if source is None else source, camera, plan.motion, fps, n,
                           size, backend=backend,
                           point_size=point_size, raster=raster, numba_threads=numba_threads,
                           msaa=msaa)
    writer = open_frame_writer(out, size, fps, pad=pad)
    hook = None if on_frame is None else (lambda k, color: on_frame(k, Frame(color, None)))
    try:
        with dask_client(client, scheduler, workers, threads_per_worker,
                         numba_threads) as c:
            result = render_job(job, writer, c, report, on_frame=hook,
                                rgba=on_frame is not None or None)
    finally:
        writer.abort()  # no-op once closed: a cluster that fails leaves nothing behind
    if result.frames:
        plan.motion.apply(camera, job.time(result.frames - 1))  # where the serial render ends
    return result
