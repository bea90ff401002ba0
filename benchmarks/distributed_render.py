"""Offline rendering spread over Dask workers against the single-process render, in one
run, on this machine.

    .venv/bin/python benchmarks/distributed_render.py [--frames N] [--size 1280x720]
                                                      [--workers 1,2,4] [--json PATH]

The job: a 1280x720 fly-around (a camera path circling the model, swooping in close
and out again, looking at it) of the Stanford bunny (../shared/ref-assets/classic/
stanford-bunny.obj, 69,451 lit triangles; the project's generated torus-knot mesh when
the assets are not there), Numba backend, frame k at t = k / fps.

Rows (frames per second over ``--frames`` frames, after a warm-up that compiles the
Numba kernels and loads the model in every process; all clusters are started first and
the runs are interleaved, ``--repeats`` times, reporting the best and the median):

    in-process, 1 Numba thread       Renderer.render() in a loop (the baseline)
    in-process, Numba default        the same with Numba's default threads (all cores)
    Dask N x 1 thread                engine.distributed.render_job on a LocalCluster of N
                                     worker processes with 1 thread and 1 Numba thread
                                     each (127.0.0.1, no dashboard), frames returned to
                                     this process in order
    ... + MP4                        the same with the frames encoded to H.264 here
                                     (the encoder shares the cores with the workers)
    plain N processes                N plain processes (no Dask) splitting the frames and
                                     sending nothing back: what the cores give right now,
                                     the ceiling for N workers on a shared machine

and the scheduling overhead per frame: the same machinery on a frame that costs nothing
to render (an empty 16x16 scene), i.e. what one frame costs the client and scheduler
(submit, run, send back, order), from which the figures are projected to a cluster of
many machines: W workers give about min(W / render_s, 1 / client_s) frames/s, where
render_s is one frame on one core and client_s is this process's serial cost per frame
(overhead + receiving the pixels + encoding).

The machine is shared and noisy: compare ratios within one run.

(Not named benchmarks/distributed.py: tests and tools put benchmarks/ on sys.path, and a
module named ``distributed`` there hides the Dask package from every import in that
process.)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BUNNY = ROOT.parent / "shared" / "ref-assets" / "classic" / "stanford-bunny.obj"


class NullWriter:
    """A FrameWriter that keeps nothing (frames delivered in order, then dropped)."""

    def __init__(self, size, fps=30.0):
        self.size, self.fps, self.frames, self.path = tuple(size), fps, 0, None

    def write(self, color):
        self.frames += 1

    def close(self):
        pass

    def abort(self):
        pass


def reference_model(tmp: Path) -> Path:
    if BUNNY.is_file():
        return BUNNY
    sys.path.insert(0, str(ROOT / "assets"))
    import make_assets

    return make_assets.main(tmp)[0]


def fly_path(model: str, size, fps: float, frames: int):
    """(camera, path): a fly-around that swoops in close and back out while circling
    the model and looking at it (centripetal Catmull-Rom through 9 keys)."""
    from engine.animation.camera_path import CameraPath
    from engine.animation.offline import fit_clip_to_path
    from engine.io.sources import load_source

    scene, camera = load_source(model, size[0] / size[1])
    b = scene.bounds()
    center, radius = 0.5 * (b[0] + b[1]), 0.5 * float(np.linalg.norm(b[1] - b[0]))
    path = CameraPath(interpolation="catmull_rom")
    duration = frames / fps
    for i, a in enumerate(np.linspace(0, 2 * np.pi, 9)):
        r = radius * (2.4 - 1.0 * np.sin(a) ** 2)  # closest at a quarter and three quarters
        pos = center + np.array([r * np.sin(a), radius * (0.5 + 0.4 * np.sin(2 * a)),
                                 r * np.cos(a)])
        path.add(duration * i / 8, pos, target=center + [0, 0.1 * radius * np.sin(a), 0])
    fit_clip_to_path(camera, b, path)
    return camera, path


def in_process(job, threads: int | None) -> float:
    """Frames per second of job's frames rendered in this process."""
    import numba

    from engine.distributed.job import _set_numba_threads

    renderer, _ = job.build()
    _set_numba_threads(threads or numba.config.NUMBA_NUM_THREADS)
    job.motion.apply(renderer.camera, 0.0)
    renderer.render(depth=False)  # warm-up (JIT)
    t0 = time.perf_counter()
    for k in range(job.frames):
        job.motion.apply(renderer.camera, job.time(k))
        renderer.render(depth=False)
    return job.frames / (time.perf_counter() - t0)


def _plain_worker(job, i, n, ready, start, done):
    """One plain process of the reference: frames i, i+n, ... of ``job``."""
    from engine.distributed.job import render_frame

    render_frame(job, 0)  # warm-up: JIT, model, renderer
    ready.put(i)
    start.wait()
    for k in range(i, job.frames, n):
        render_frame(job, k)
    done.put(i)


def plain_processes_fps(job, n: int) -> float:
    """Frames per second of ``n`` plain processes (no Dask, nothing sent back) splitting
    the job's frames: what this machine's cores give right now, the ceiling for ``n``
    workers."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    ready, done, start = ctx.Queue(), ctx.Queue(), ctx.Event()
    procs = [ctx.Process(target=_plain_worker, args=(job, i, n, ready, start, done))
             for i in range(n)]
    for p in procs:
        p.start()
    try:
        for _ in range(n):
            ready.get(timeout=300)
        t0 = time.perf_counter()
        start.set()
        for _ in range(n):
            done.get(timeout=600)
        return job.frames / (time.perf_counter() - t0)
    finally:
        for p in procs:
            p.join(30)


def warm(client, job):
    """Compile the kernels and build the job's renderer in every worker's task thread
    (not timed): one frame-0 task pinned to each worker."""
    from engine.distributed.job import render_frame

    futures = [client.submit(render_frame, job, 0, workers=[addr], allow_other_workers=False,
                             pure=False) for addr in client.scheduler_info()["workers"]]
    client.gather(futures)


CLIENT_CPU = {}  # run name -> this process's CPU seconds per frame (client + scheduler)


def dask_fps(client, job, out: Path | None = None, name: str | None = None) -> float:
    from engine.distributed import render_job
    from engine.io.video import open_frame_writer

    writer = NullWriter(job.size, job.fps) if out is None else open_frame_writer(
        out, job.size, job.fps)
    t0, c0 = time.perf_counter(), time.process_time()
    result = render_job(job, writer, client)
    assert result.frames == job.frames
    if name:
        CLIENT_CPU[name] = (time.process_time() - c0) / job.frames
    return job.frames / (time.perf_counter() - t0)


def encode_s(job, frames) -> float:
    """Seconds per frame to encode ``frames`` to MP4 in this process."""
    import tempfile

    from engine.io.video import open_frame_writer

    with tempfile.TemporaryDirectory() as tmp:
        writer = open_frame_writer(Path(tmp) / "e.mp4", job.size, job.fps)
        t0 = time.perf_counter()
        for k in range(job.frames):
            writer.write(frames[k % len(frames)])
        writer.close()
        return (time.perf_counter() - t0) / job.frames


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--frames", type=int, default=60)
    p.add_argument("--size", default="1280x720")
    p.add_argument("--fps", type=float, default=30.0)
    p.add_argument("--workers", default="1,2,4")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--json", default=str(ROOT / "benchmarks" / "results" / "distributed.json"))
    args = p.parse_args(argv)

    import tempfile

    from distributed import Client

    from engine import Node, PerspectiveCamera, Scene
    from engine.distributed import RenderJob, local_cluster
    from engine.render.renderer import parse_size

    size = parse_size(args.size)
    tmp = Path(tempfile.mkdtemp(prefix="frustum-bench-"))
    model = str(reference_model(tmp))
    camera, path = fly_path(model, size, args.fps, args.frames)
    job = RenderJob.create(model, camera, path, args.fps, args.frames, size, backend="numba")
    load0 = os.getloadavg()
    print(f"job: {Path(model).name}, {args.frames} frames at {size[0]}x{size[1]}, "
          f"{os.cpu_count()} cores, load average {load0[0]:.1f}", flush=True)

    empty = Scene("empty")
    empty.add(Node("nothing"))
    tiny = RenderJob.create(empty, PerspectiveCamera(position=(0, 0, 5)), path, args.fps,
                            max(200, args.frames), (16, 16), backend="numba")
    counts = [int(w) for w in args.workers.split(",")]
    runs: dict[str, list] = {}
    overhead = {}
    with contextlib.ExitStack() as stack:
        clients = {}
        for n in counts:  # every cluster up and warm before anything is timed
            cluster = stack.enter_context(local_cluster(n))
            client = stack.enter_context(Client(cluster, set_as_default=False))
            client.wait_for_workers(n, timeout=120)
            warm(client, job)
            warm(client, tiny)
            clients[n] = client
        renderer, _ = job.build()
        sample = []
        for k in range(4):
            job.motion.apply(renderer.camera, job.time(k))
            sample.append(renderer.render(depth=False).color)
        enc = encode_s(job, sample)
        # Interleaved repeats: the machine is shared, so each figure is the best of
        # --repeats runs taken in turn (the least disturbed), the median beside it.
        for rep in range(args.repeats):
            runs.setdefault("in-process, 1 Numba thread", []).append(in_process(job, 1))
            runs.setdefault("in-process, Numba default threads", []).append(
                in_process(job, None))
            for n in counts[:2]:
                runs.setdefault(f"plain {n} processes (no Dask, reference)", []).append(
                    plain_processes_fps(job, n))
            for n, client in clients.items():
                runs.setdefault(f"Dask {n} x 1 thread", []).append(
                    dask_fps(client, job, name=f"{n}"))
                runs.setdefault(f"Dask {n} x 1 thread + MP4", []).append(
                    dask_fps(client, job, tmp / f"w{n}.mp4", f"{n} + MP4"))
                overhead[n] = min(overhead.get(n, 1e9), 1.0 / dask_fps(client, tiny))
            print(f"repeat {rep + 1}: " + ", ".join(f"{k} {v[-1]:.1f}" for k, v in runs.items()),
                  flush=True)
    rows = {k: max(v) for k, v in runs.items()}
    medians = {k: statistics.median(v) for k, v in runs.items()}

    base = rows["in-process, 1 Numba thread"]
    render_s = 1.0 / base
    one = rows.get("Dask 1 x 1 thread")
    two = rows.get("Dask 2 x 1 thread")
    ratio = two / one if one and two else None
    p1 = rows.get("plain 1 processes (no Dask, reference)")
    p2 = rows.get("plain 2 processes (no Dask, reference)")
    machine = p2 / p1 if p1 and p2 else None
    # This process's serial work per frame: scheduling, receiving and ordering the pixels
    # (measured as its CPU time in the runs without encoding), plus encoding.
    recv = min(v for k, v in CLIENT_CPU.items() if "MP4" not in k)
    client_s = recv + enc
    projection = {w: min(w / render_s, 1.0 / client_s) for w in (8, 32, 128, 512)}
    projection_frames = {w: min(w / render_s, 1.0 / recv) for w in (8, 32, 128, 512)}
    report = {"model": Path(model).name, "frames": args.frames, "size": list(size),
              "cores": os.cpu_count(), "repeats": args.repeats, "fps": rows,
              "fps_median": medians, "fps_runs": runs, "ratio_2w_over_1w": ratio,
              "ratio_2_over_1_plain_processes": machine,
              "ratio_2w_over_1w_median": (medians["Dask 2 x 1 thread"]
                                          / medians["Dask 1 x 1 thread"]
                                          if one and two else None),
              "overhead_ms_per_frame": {str(k): v * 1000 for k, v in overhead.items()},
              "dask_1w_vs_in_process_ms_per_frame": (1 / one - 1 / base) * 1000 if one else None,
              "encode_ms_per_frame": enc * 1000, "render_ms_per_frame_1_core": render_s * 1000,
              "client_cpu_ms_per_frame": {k: v * 1000 for k, v in CLIENT_CPU.items()},
              "load_average": {"start": load0, "end": os.getloadavg()},
              "projected_fps_mp4": {str(k): v for k, v in projection.items()},
              "projected_fps_frames_only": {str(k): v for k, v in projection_frames.items()}}
    print()
    print(f"| run | frames/s (best of {args.repeats}) | median |\n|---|---:|---:|")
    for name, fps in rows.items():
        print(f"| {name} | {fps:.2f} | {medians[name]:.2f} |")
    print()
    if ratio:
        print(f"2 workers / 1 worker: {ratio:.2f}x (target >= 1.7x on 2 cores); "
              f"2 plain processes / 1 on this machine now: {machine:.2f}x")
    print("scheduling overhead per frame (empty 16x16 frames): "
          + ", ".join(f"{k} w: {v * 1000:.1f} ms" for k, v in overhead.items()))
    if one:
        print(f"Dask 1 worker vs in-process, per frame: "
              f"{report['dask_1w_vs_in_process_ms_per_frame']:+.1f} ms")
    print(f"MP4 encode here: {enc * 1000:.1f} ms/frame; one frame on one core: "
          f"{render_s * 1000:.1f} ms; this process's CPU per frame (scheduler, receiving, "
          f"ordering): {recv * 1000:.1f} ms")
    print(f"load average (1 min) at start/end: {load0[0]:.1f} / {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores")
    print("projected on many machines (W single-thread workers, this client), MP4: "
          + ", ".join(f"W={w}: {v:.0f} fps" for w, v in projection.items())
          + f" (client-bound above W = {render_s / client_s:.1f}); frames received but not "
          "encoded: " + ", ".join(f"W={w}: {v:.0f} fps" for w, v in projection_frames.items())
          + f" (client-bound above W = {render_s / recv:.1f})")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
