"""Faults on a real LocalCluster (127.0.0.1, no dashboard): a worker process killed
mid-render loses no frame and duplicates none, the output equals the serial render byte
for byte, and no partial file is ever left under the final name; a frame that kills
every worker it runs on fails the render cleanly (nothing left at the output)."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import cloudpickle
import dask
import pytest
from distributed import Client

from engine.animation.shots import orbit
from engine.distributed import RenderJob, local_cluster, render_job
from engine.errors import EngineError
from engine.io.sources import load_source
from engine.io.video import open_frame_writer

pytestmark = pytest.mark.timeout(240)

SIZE = (320, 180)
FRAMES = 48
FPS = 12.0


def demo_job(**kw):
    scene, camera = load_source("demo", SIZE[0] / SIZE[1])
    bounds = scene.bounds()
    center = 0.5 * (bounds[0] + bounds[1])
    path = orbit(center, 6.0, 25, duration=FRAMES / FPS)
    return RenderJob.create("demo", camera, path, FPS, FRAMES, SIZE, backend="numba", **kw)


def serial_bytes(job, out):
    renderer, motion = job.build()
    writer = open_frame_writer(out, SIZE, FPS)
    for k in range(job.frames):
        motion.apply(renderer.camera, job.time(k))
        writer.write(renderer.render().color)
    writer.close()
    return out.read_bytes()


def test_a_worker_killed_mid_render_loses_and_duplicates_nothing(tmp_path):
    job = demo_job()
    expected = serial_bytes(job, tmp_path / "serial.mp4")
    out = tmp_path / "dist.mp4"
    written, killed, listing = [], {}, []

    with local_cluster(2) as cluster, Client(cluster, set_as_default=False) as client:
        client.wait_for_workers(2, timeout=60)
        pids = client.run(os.getpid)

        def killer():
            # Once a few frames are written, kill a worker while it is rendering a frame
            # (it may also hold finished frames not fetched yet: lost with it, recomputed).
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and len(written) < FRAMES:
                if len(written) >= 6:
                    busy = {w: keys for w, keys in client.processing().items() if keys}
                    if busy:
                        victim = max(busy, key=lambda w: len(busy[w]))
                        killed["worker"], killed["keys"] = victim, list(busy[victim])
                        killed["at"] = len(written)
                        os.kill(pids[victim], signal.SIGKILL)
                        return
                time.sleep(0.002)

        def on_frame(k, color):
            written.append(k)
            listing.append(sorted(p.name for p in tmp_path.iterdir()))

        thread = threading.Thread(target=killer, daemon=True)
        t0 = time.perf_counter()
        writer = open_frame_writer(out, SIZE, FPS)
        thread.start()
        result = render_job(job, writer, client, window=10, on_frame=on_frame)
        elapsed = time.perf_counter() - t0
        thread.join(5)
        after = client.run(os.getpid)

    assert killed and killed["keys"], "the killed worker was running frames"
    assert pids[killed["worker"]] not in after.values()  # it really died (the nanny restarted it)
    assert result.frames == FRAMES and not result.interrupted
    assert written == list(range(FRAMES))  # every frame once, in order
    assert out.read_bytes() == expected  # complete and identical to the serial render
    # While rendering, only the .partial file existed beside the serial one.
    assert all(names == ["dist.partial.mp4", "serial.mp4"] for names in listing)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dist.mp4", "serial.mp4"]
    assert killed["at"] < FRAMES - 4  # mid-job, not at the end
    print(f"fault test: killed {killed['worker']} after {killed['at']} frames while it "
          f"rendered {killed['keys']}; {FRAMES} frames in {elapsed:.1f} s")


class DiesOnFrame:
    """A camera path whose frame ``k`` kills the worker process that renders it."""

    def __init__(self, path, k, fps):
        self.path, self.t = path, k / fps

    def apply(self, camera, t):
        if t == self.t:
            os._exit(1)
        return self.path.apply(camera, t)


def test_a_frame_that_keeps_killing_workers_fails_cleanly(tmp_path):
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    base = demo_job()
    job = RenderJob(base.scene, base.camera, DiesOnFrame(base.motion, 5, FPS), FPS, 12, SIZE,
                    backend="numpy")
    out = tmp_path / "clip.mp4"
    out.write_bytes(b"an earlier clip")
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}), \
            local_cluster(2) as cluster, Client(cluster, set_as_default=False) as client:
        client.wait_for_workers(2, timeout=60)
        writer = open_frame_writer(out, SIZE, FPS)
        # the frames that kill (4-5) or ones that shared a dying worker with them
        with pytest.raises(EngineError, match=r"frames \d+-\d+: the workers running them died"):
            render_job(job, writer, client, chunk=2, window=4)
    assert out.read_bytes() == b"an earlier clip"  # the earlier file is untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clip.mp4"]


def test_a_task_whose_spool_is_removed_mid_run_returns_pixels(tmp_path, monkeypatch):
    # the client removes the spool folder when the job ends (Ctrl-C included) while a
    # worker may still run a task: its later frames come back as pixels, not as a
    # failed task whose traceback the worker logs over the client's last line
    import numpy as np

    from engine.distributed import job as job_module

    spool = tmp_path / "spool"
    spool.mkdir()
    job = demo_job()
    real = job_module.render_frame

    def removes_spool_after_first(j, k):
        out = real(j, k)
        if k == 1:
            for p in spool.iterdir():
                p.unlink()
            spool.rmdir()
        return out

    monkeypatch.setattr(job_module, "render_frame", removes_spool_after_first)
    start, items = job_module.render_frames(job, 0, 3, spool=str(spool))
    assert start == 0 and isinstance(items[0], str)  # written while the spool was there
    for k, item in zip((1, 2), items[1:]):
        assert isinstance(item, np.ndarray)
        np.testing.assert_array_equal(item, real(job, k)[1])
