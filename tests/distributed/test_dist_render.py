"""Distributed offline rendering on a Dask LocalCluster (127.0.0.1, no dashboard): the
same clip, byte for byte, as the single-process render, from the CLI (--workers,
--scheduler) and from Python (client=), with a file or a pickled scene; the job holds
plain data only; bad input is one line and exit status 2."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from dist_support import dask_client, dask_cluster, mesh_file  # noqa: F401 - fixtures

from engine import Node, PerspectiveCamera, PointCloud, Renderer, Scene
from engine.animation.camera_path import CameraScript
from engine.animation.shots import orbit
from engine.distributed import RenderJob, SceneSource, render_frame, render_video
from engine.distributed.job import worker_renderer
from engine.errors import EngineError
from engine.io.sources import load_source
from engine.scene.procedural import torus_knot

pytestmark = pytest.mark.timeout(240)

SIZE = (96, 64)


def run_cli(*args, timeout=180):
    return subprocess.run([sys.executable, "-m", "engine", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, check=False)


def points_scene():
    scene = Scene(background=(0.1, 0.1, 0.2))
    pts, colors = torus_knot(4000, seed=3)
    scene.add(Node("knot", geometry=PointCloud(pts, colors, point_size=2)))
    cam = scene.add(PerspectiveCamera(fov_y=50, position=(0, 1, 3))).look_at((0, 0, 0))
    return scene, cam


def test_the_job_is_plain_data_and_renders_what_the_renderer_renders(mesh_file):  # noqa: F811
    scene, camera = load_source(str(mesh_file), SIZE[0] / SIZE[1])
    path = orbit((0, 0, 0), 4.0, 20, duration=1.0)
    job = RenderJob.create(str(mesh_file), camera, path, fps=8, frames=8, size=SIZE,
                           backend="numpy")
    blob = pickle.dumps(job)
    assert len(blob) < 20_000  # a path, the camera state and the motion: no arrays of the mesh
    assert b"Renderer" not in blob and b"VertexBatch" not in blob
    assert job.scene.file == str(mesh_file.resolve())
    # Frames out of order on a fresh "worker" equal the in-order frames of one renderer.
    assert job.msaa == 4  # a video job's default samples per pixel, as render_video's
    ref = Renderer(scene, camera, SIZE, backend="numpy", msaa=job.msaa)
    expected = []
    for k in range(8):
        path.apply(camera, k / 8)
        expected.append(ref.render().color)
    clone = pickle.loads(blob)
    for k in (5, 0, 7, 3):
        got_k, color = render_frame(clone, k)
        assert got_k == k and color.shape == (SIZE[1], SIZE[0], 4)
        np.testing.assert_array_equal(color, expected[k])
    assert worker_renderer(clone) is worker_renderer(clone)  # one renderer per job and thread
    with pytest.raises(IndexError):
        render_frame(clone, 8)


def test_a_scene_object_travels_pickled_without_device_or_gl_objects():
    scene, camera = points_scene()
    renderer = Renderer(scene, camera, SIZE, backend="numpy")
    renderer.render()  # the scene has been drawn: its batch must not come along
    source = SceneSource.from_scene(scene, camera)
    s2, c2, _ = pickle.loads(source.data)
    assert c2.parent is s2 and isinstance(s2, Scene)
    np.testing.assert_array_equal(s2.find("knot").geometry.positions,
                                  scene.find("knot").geometry.positions)

    bad = Scene()
    bad.add(Node("n"))
    bad.find("n").renderer = renderer
    with pytest.raises(EngineError, match="Renderer"):
        SceneSource.from_scene(bad, camera)


def test_motions_that_cannot_be_split_are_refused():
    _, camera = points_scene()
    script = CameraScript(lambda cam, t: None, duration=1.0)
    with pytest.raises(EngineError, match="CameraScript"):
        RenderJob.create("demo", camera, script, 10, 5, SIZE)
    with pytest.raises(EngineError, match="apply"):
        RenderJob.create("demo", camera, object(), 10, 5, SIZE)
    with pytest.raises(EngineError, match="frames"):
        RenderJob.create("demo", camera, orbit(), 10, 0, SIZE)


def test_python_api_with_a_client_matches_the_serial_file(tmp_path, dask_client,  # noqa: F811
                                                          monkeypatch):
    scene, camera = points_scene()
    path = orbit((0, 0, 0), 3.0, 20, duration=1.5)
    kw = {"fps": 8, "size": SIZE, "backend": "numba"}
    serial = render_video(scene, camera, tmp_path / "serial.mp4", path, **kw)
    seen = []
    dist = render_video(scene, camera, tmp_path / "dist.mp4", path, client=dask_client, **kw)
    assert serial.frames == dist.frames == 12 and not dist.interrupted
    assert (tmp_path / "serial.mp4").read_bytes() == (tmp_path / "dist.mp4").read_bytes()
    render_video(scene, camera, tmp_path / "serial.gif", path, **kw)
    render_video(scene, camera, tmp_path / "dist.gif", path, client=dask_client, **kw)
    assert (tmp_path / "serial.gif").read_bytes() == (tmp_path / "dist.gif").read_bytes()
    render_video(scene, camera, tmp_path / "serial/", path, **kw)
    render_video(scene, camera, tmp_path / "dist/", path, client=dask_client, **kw)
    for name in sorted(os.listdir(tmp_path / "serial")):  # RGBA PNG frames
        assert (tmp_path / "serial" / name).read_bytes() == (tmp_path / "dist" / name).read_bytes()
    assert len(os.listdir(tmp_path / "dist")) == 12
    # GIF and PNG frames too; on_frame sees every frame once, in order.
    from engine.distributed import render_job
    from engine.io.video import open_frame_writer

    job = RenderJob.create(scene, camera, path, 8, 12, SIZE, backend="numba")
    writer = open_frame_writer(tmp_path / "frames/", SIZE, 8)
    render_job(job, writer, dask_client, window=3, on_frame=lambda k, c: seen.append(k))
    assert seen == list(range(12))
    names = sorted(p.name for p in (tmp_path / "frames").iterdir())
    assert names == [f"frame_{k:06d}.png" for k in range(12)]
    # Frames come back through a spool folder on one machine, or through Dask: the same.
    import glob
    import tempfile

    spools = {"/dev/shm", tempfile.gettempdir()}
    before = {p for d in spools for p in glob.glob(os.path.join(d, "frustum-spool-*"))}
    for spool, name in ((None, "comm.mp4"), ("auto", "spool.mp4"),
                        (str(tmp_path / "mine"), "mine.mp4")):
        os.makedirs(tmp_path / "mine", exist_ok=True)
        render_job(job, open_frame_writer(tmp_path / name, SIZE, 8), dask_client, spool=spool)
    ref = tmp_path / "ref.mp4"
    render_video(scene, camera, ref, path, frames=12, **kw)
    for name in ("comm.mp4", "spool.mp4", "mine.mp4"):
        assert (tmp_path / name).read_bytes() == ref.read_bytes(), name
    assert os.listdir(tmp_path / "mine") == []  # every frame file read and removed
    from engine.distributed.video import local_spool

    seen = local_spool(dask_client)  # the workers run here: they see a local folder
    assert seen is not None and os.path.isdir(seen)
    os.rmdir(seen)
    from engine.distributed import video

    taken, real = [], video.take_frame
    monkeypatch.setattr(video, "take_frame", lambda item: taken.append(item) or real(item))
    render_job(job, open_frame_writer(tmp_path / "again.mp4", SIZE, 8), dask_client)
    assert len(taken) == 12 and all(isinstance(t, str) and t.endswith(".npy") for t in taken)
    after = {p for d in spools for p in glob.glob(os.path.join(d, "frustum-spool-*"))}
    assert after == before  # the temporary spool folders are gone


def test_cli_workers_and_scheduler_give_the_serial_bytes(tmp_path, mesh_file, dask_cluster):  # noqa: F811
    common = [mesh_file, "--size", "96x64", "--frames", "10", "--fps", "10", "--backend",
              "numba"]
    serial = run_cli("render", *common, "--out", tmp_path / "serial.mp4")
    assert serial.returncode == 0, serial.stderr
    workers = run_cli("render", *common, "--out", tmp_path / "workers.mp4", "--workers", "2")
    assert workers.returncode == 0, workers.stderr
    assert "on 2 Dask worker threads" in workers.stdout
    sched = run_cli("render", *common, "--out", tmp_path / "sched.mp4", "--scheduler",
                    dask_cluster.scheduler_address)
    assert sched.returncode == 0, sched.stderr
    data = (tmp_path / "serial.mp4").read_bytes()
    assert (tmp_path / "workers.mp4").read_bytes() == data
    assert (tmp_path / "sched.mp4").read_bytes() == data
    assert "Traceback" not in workers.stderr + sched.stderr
    assert sorted(os.listdir(tmp_path)) == ["sched.mp4", "serial.mp4", "workers.mp4"]


def test_cli_bad_dask_options_exit_2_with_one_line(tmp_path):
    cases = [
        (["render", "--out", tmp_path / "a.png", "--workers", "2"], "render-many"),
        (["render", "--out", tmp_path / "a.mp4", "--workers", "0"], "--workers"),
        (["render", "--out", tmp_path / "a.mp4", "--workers", "2", "--scheduler",
          "tcp://127.0.0.1:1"], "not allowed with"),
        (["render", "--out", tmp_path / "a.mp4", "--frames", "2", "--scheduler",
          "tcp://127.0.0.1:9", "--connect-timeout", "3"], "cannot connect to the Dask scheduler"),
        (["render", "--out", tmp_path / "a.mp4", "--frames", "2", "--scheduler",
          "nonsense://x"], "bad Dask scheduler address"),
    ]
    for args, words in cases:
        r = run_cli(*args, timeout=120)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert words in r.stderr, (args, r.stderr)
        assert "Traceback" not in r.stderr
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1, (args, r.stderr)
    assert list(tmp_path.iterdir()) == []


def test_slow_worker_defaults_are_named_in_a_warning(caplog):
    """Workers started with Dask's defaults (as `dask worker` starts them) run the
    statistical profiler and MALLOC_TRIM_THRESHOLD_; the embedded cluster does not."""
    import logging

    from distributed import Client, LocalCluster

    from engine.distributed.cluster import _slow_settings, check_worker_config

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, scheduler_kwargs={
                          "dashboard_address": "127.0.0.1:0"}) as cluster, \
            Client(cluster, set_as_default=False) as client:
        found = client.run(_slow_settings)
        assert any("profiler" in s for v in found.values() for s in v)
        with caplog.at_level(logging.WARNING, logger="engine"):
            check_worker_config(client)
    assert "2x slower" in caplog.text and "MALLOC_TRIM_THRESHOLD_=65536" in caplog.text


def test_the_embedded_cluster_has_no_slow_defaults(dask_client):  # noqa: F811
    from engine.distributed.cluster import _slow_settings

    assert all(v == [] for v in dask_client.run(_slow_settings).values())


def test_a_file_with_a_given_camera(tmp_path, mesh_file, dask_client):  # noqa: F811
    cam = PerspectiveCamera(fov_y=30, position=(0, 0, 6))
    cam2 = PerspectiveCamera(fov_y=30, position=(0, 0, 6))
    kw = {"frames": 3, "fps": 6, "size": SIZE, "backend": "numba"}
    render_video(str(mesh_file), cam, tmp_path / "serial.gif", **kw)
    render_video(str(mesh_file), cam2, tmp_path / "dist.gif", client=dask_client, **kw)
    render_video(str(mesh_file), None, tmp_path / "framed.gif", **kw)
    data = (tmp_path / "serial.gif").read_bytes()
    assert (tmp_path / "dist.gif").read_bytes() == data
    assert (tmp_path / "framed.gif").read_bytes() != data  # the camera was used
    # both leave the camera where the motion's last frame puts it
    np.testing.assert_allclose(cam2.world_matrix, cam.world_matrix, atol=1e-12)
    assert not np.allclose(cam.world_matrix[:3, 3], (0, 0, 6))


def test_an_animated_file_renders_the_same_on_workers(ref_assets, tmp_path, dask_cluster):  # noqa: F811
    """--animation moves nodes of the scene loaded here, and --camera gltf:N would be a
    camera below them: the loaded scene travels with the job, so the workers' frames
    animate exactly like the serial ones."""
    src = ref_assets / "gltf-khronos/BoxAnimated/BoxAnimated.gltf"
    common = [src, "--animation", "0", "--fps", "4", "--size", "64x48", "--backend", "numba"]
    serial = run_cli("render", *common, "--out", tmp_path / "serial/")
    assert serial.returncode == 0, serial.stderr
    dist = run_cli("render", *common, "--out", tmp_path / "dist/", "--scheduler",
                   dask_cluster.scheduler_address)
    assert dist.returncode == 0, dist.stderr
    names = sorted(os.listdir(tmp_path / "serial"))
    assert len(names) == round(3.708329916 * 4) and names == sorted(os.listdir(tmp_path / "dist"))
    for name in names:
        assert (tmp_path / "serial" / name).read_bytes() == (tmp_path / "dist" / name).read_bytes()
    assert (tmp_path / "serial" / names[0]).read_bytes() != (tmp_path / "serial" / names[6]).read_bytes()


def test_engine_render_video_takes_the_dask_arguments(tmp_path, dask_client):  # noqa: F811
    import engine

    scene, camera = points_scene()
    seen = []
    res = engine.render_video(scene, camera, tmp_path / "a.gif", fps=6, frames=4, size=SIZE,
                              backend="numba", client=dask_client,
                              on_frame=lambda k, f: seen.append((k, f.color.shape)))
    assert res.frames == 4 and seen == [(k, (SIZE[1], SIZE[0], 4)) for k in range(4)]
    with pytest.raises(EngineError, match="CameraScript"):
        engine.render_video(scene, camera, tmp_path / "b.gif", lambda cam, t: None, frames=2,
                            client=dask_client)
    assert not (tmp_path / "b.gif").exists()
