"""Outputs and workflows that broke under adversarial use (issue 24, items 1, 2, 6, 7, 8):
render-many keeps one output per input and re-renders truncated outputs; Ctrl-C with
--workers stops with one line and exit 130; --workers is capped to the cores; a Dask
scheduler that cannot be used is one line and exit 2."""

from __future__ import annotations

import io
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import imageio
import numpy as np
import pytest
from dist_support import write_mesh
from PIL import Image

from engine.distributed.cluster import capped_workers, dask_client, max_local_workers
from engine.distributed.many import ManySpec, is_complete, plan, render_item
from engine.errors import EngineError

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(300)


def cli(*args):
    return [sys.executable, "-m", "engine", *map(str, args)]


def run_cli(*args, timeout=180):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(cli(*args), capture_output=True, text=True, timeout=timeout,
                          check=False, env=env)


def messages(stderr: str) -> list[str]:
    """stderr without the progress lines."""
    return [ln for ln in stderr.splitlines()
            if ln.strip() and not ln.startswith(("render:", "render-many:"))]


# --- 1. one output per input ------------------------------------------------------------

def test_same_file_names_in_two_patterns_keep_their_folders(tmp_path, monkeypatch):
    write_mesh(tmp_path / "A" / "a.obj", seed=1)
    write_mesh(tmp_path / "B" / "a.obj", seed=2)
    out = tmp_path / "out"
    monkeypatch.chdir(tmp_path)  # the patterns as a user types them, relative
    for args in (["A/*.obj", "B/*.obj"], ["A/a.obj", "B/a.obj"]):
        items = plan(args, out)
        assert [(os.path.relpath(it.source, tmp_path), os.path.relpath(it.output, out))
                for it in items] == [("A/a.obj", "A/a.png"), ("B/a.obj", "B/a.png")]
    r = run_cli("render-many", tmp_path / "A" / "*.obj", tmp_path / "B" / "a.obj", "--out", out,
                "--size", "48x32")
    assert r.returncode == 0, r.stderr
    assert "2 written, 0 skipped (complete), 0 failed of 2 files" in r.stdout
    index = json.loads((out / "index.json").read_text())
    assert sorted(e["output"] for e in index["items"]) == ["A/a.png", "B/a.png"]
    spec = ManySpec(size=(48, 32))
    for folder in ("A", "B"):  # each output is its own input's image
        alone = render_item(spec, str(tmp_path / folder / "a.obj"))
        assert (out / folder / "a.png").read_bytes() == alone["data"]
    assert (out / "A" / "a.png").read_bytes() != (out / "B" / "a.png").read_bytes()


def test_symlinked_folders_under_one_double_star_keep_their_link_names(tmp_path):
    write_mesh(tmp_path / "elsewhere" / "p" / "a.obj", seed=1)
    write_mesh(tmp_path / "elsewhere" / "q" / "a.obj", seed=2)
    models = tmp_path / "models"
    models.mkdir()
    (models / "x").symlink_to(tmp_path / "elsewhere" / "p", target_is_directory=True)
    (models / "y").symlink_to(tmp_path / "elsewhere" / "q", target_is_directory=True)
    (models / "again").symlink_to(tmp_path / "elsewhere" / "p", target_is_directory=True)
    items = plan([str(models / "**" / "*.obj")], tmp_path / "out")
    outs = sorted(os.path.relpath(it.output, tmp_path / "out") for it in items)
    # p/a.obj is reached twice (again/, x/): one input, one output
    assert len(items) == 2 and len(outs) == len(set(outs))
    assert outs in (["again/a.png", "y/a.png"], ["x/a.png", "y/a.png"])
    assert {os.path.realpath(it.source) for it in items} == {
        str((tmp_path / "elsewhere" / d / "a.obj").resolve()) for d in "pq"}


def test_a_stem_name_that_equals_another_inputs_full_name_is_still_unique(tmp_path):
    for name in ("a.obj", "a.glb", "a.obj.ply"):
        (tmp_path / "m" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "m" / name).write_bytes(b"x")
    items = plan([str(tmp_path / "m" / "*")], tmp_path / "out")
    got = {Path(it.source).name: Path(it.output).name for it in items}
    assert got == {"a.obj": "a.obj.png", "a.glb": "a.glb.png", "a.obj.ply": "a.obj.ply.png"}


# --- 7. a truncated output is rendered again ----------------------------------------------

def test_truncated_jpeg_and_png_are_not_complete_and_a_rerun_redoes_them(tmp_path):
    rng = np.random.default_rng(0)
    a = rng.integers(0, 256, (60, 80, 3), np.uint8)
    for fmt, ext in (("JPEG", "jpg"), ("PNG", "png")):
        buf = io.BytesIO()
        Image.fromarray(a).save(buf, fmt)
        data = buf.getvalue()
        whole = tmp_path / f"whole.{ext}"
        whole.write_bytes(data)
        assert is_complete(whole)
        for cut in (len(data) // 2, len(data) - 100, len(data) - 1):
            part = tmp_path / f"cut{cut}.{ext}"
            part.write_bytes(data[:cut])
            assert not is_complete(part), (fmt, cut)

    write_mesh(tmp_path / "m" / "a.ply", seed=1)
    out = tmp_path / "out"
    for fmt in ("jpg", "png"):
        r = run_cli("render-many", tmp_path / "m" / "a.ply", "--out", out, "--size", "64x48",
                    "--format", fmt)
        assert r.returncode == 0 and "1 written, 0 skipped" in r.stdout, r.stderr
        good = (out / f"a.{fmt}").read_bytes()
        (out / f"a.{fmt}").write_bytes(good[: len(good) - 2])  # cut short by a crash
        r = run_cli("render-many", tmp_path / "m" / "a.ply", "--out", out, "--size", "64x48",
                    "--format", fmt)
        assert r.returncode == 0 and "1 written, 0 skipped" in r.stdout, (fmt, r.stdout)
        assert (out / f"a.{fmt}").read_bytes() == good
        r = run_cli("render-many", tmp_path / "m" / "a.ply", "--out", out, "--size", "64x48",
                    "--format", fmt)
        assert "0 written, 1 skipped" in r.stdout, r.stdout


# --- 2. Ctrl-C with --workers -------------------------------------------------------------

def start(*args):
    """The CLI in a session of its own (so SIGINT can go to its whole process group, as a
    terminal's Ctrl-C does) and a thread collecting its stderr."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.Popen(cli(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, env=env)
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(p.stderr), daemon=True)
    reader.start()
    return p, lines, reader


def ctrl_c_when(p, lines, reader, word, limit=120):
    deadline = time.monotonic() + limit
    while not any(word in ln for ln in lines) and p.poll() is None:
        assert time.monotonic() < deadline, f"no {word!r} within {limit} s: {lines}"
        time.sleep(0.05)
    assert p.poll() is None, f"finished before the Ctrl-C: {lines}"
    os.killpg(p.pid, signal.SIGINT)
    try:
        rc = p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        raise AssertionError(f"still running 60 s after Ctrl-C: {lines}") from None
    reader.join(10)
    return rc, "".join(lines), p.stdout.read()


def test_ctrl_c_stops_a_dask_video_render_and_keeps_the_frames_so_far(tmp_path):
    out = tmp_path / "x.mp4"
    p, lines, reader = start("render", "demo", "--out", out, "--frames", "2000", "--size",
                             "640x480", "--workers", "2")
    rc, err, _stdout = ctrl_c_when(p, lines, reader, "render: 1/2000")
    assert rc == 130, err
    assert "Traceback" not in err and "Exception" not in err, err
    said = messages(err)
    assert len(said) == 1 and said[0].startswith("frustum: interrupted after "), err
    kept = int(said[0].split("interrupted after ")[1].split(" of ")[0])
    assert 1 <= kept < 2000
    with imageio.get_reader(out, "ffmpeg") as reader:  # the frames so far, playable
        assert sum(1 for _ in reader) == kept
    assert not (tmp_path / "x.partial.mp4").exists()


def test_ctrl_c_stops_render_many_on_dask_in_one_line_and_a_rerun_resumes(tmp_path):
    for k in range(40):
        write_mesh(tmp_path / "m" / f"t{k:02d}.ply", seed=k, sections=48)
    out = tmp_path / "out"
    p, lines, reader = start("render-many", tmp_path / "m" / "*.ply", "--out", out, "--size",
                             "640x480", "--workers", "2")
    rc, err, _stdout = ctrl_c_when(p, lines, reader, "render-many: 1/40")
    assert rc == 130, err
    assert "Traceback" not in err and "Exception" not in err, err
    said = messages(err)
    assert len(said) == 1 and said[0].startswith("frustum: interrupted: "), err
    index = json.loads((out / "index.json").read_text())
    written = {e["output"] for e in index["items"] if e["status"] == "written"}
    on_disk = {p.name for p in out.glob("*.png")}
    assert written == on_disk and 1 <= len(written) < 40  # every output listed is whole
    assert all(is_complete(out / name) for name in on_disk)
    r = run_cli("render-many", tmp_path / "m" / "*.ply", "--out", out, "--size", "640x480",
                timeout=600)
    assert r.returncode == 0, r.stderr
    assert f"{40 - len(written)} written, {len(written)} skipped (complete)" in r.stdout


# --- 6. --workers has an upper bound ------------------------------------------------------

def test_workers_are_capped_to_the_usable_cores_with_a_warning(tmp_path, caplog):
    cores = len(os.sched_getaffinity(0))
    assert max_local_workers() == cores
    with caplog.at_level(logging.WARNING, logger="engine"):
        assert capped_workers(1000) == cores
    assert f"1000 workers are more than the {cores} CPU cores" in caplog.text
    assert capped_workers(1) == 1
    with pytest.raises(EngineError):
        capped_workers(0)
    r = run_cli("render", "demo", "--out", tmp_path / "a.gif", "--frames", "2", "--size",
                "32x24", "--workers", "1000")
    assert r.returncode == 0, r.stderr
    assert f"1000 workers are more than the {cores} CPU cores" in r.stderr
    assert f"on {cores} Dask worker threads" in r.stdout


# --- 8. a scheduler that cannot be used: one line, exit 2 ---------------------------------

class _Hello(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"a dashboard")

    def log_message(self, *args):
        pass


@pytest.fixture
def http_port():
    """A tiny HTTP server on 127.0.0.1 (what a dashboard port looks like to a client)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()


@pytest.fixture
def bad_request_port():
    """A server that answers any bytes with an HTTP 400, as a dashboard's web server
    does to Dask's handshake."""
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen()

    def serve():
        while True:
            try:
                c, _ = ls.accept()
            except OSError:
                return
            c.recv(65536)
            c.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            c.close()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield ls.getsockname()[1]
    finally:
        ls.close()


def one_line_exit_2(r, *words):
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr
    for w in words:
        assert w in lines[0], lines[0]


def test_scheduler_errors_are_one_line_and_exit_2(tmp_path, http_port, bad_request_port):
    out = tmp_path / "a.mp4"
    r = run_cli("render", "demo", "--out", out, "--frames", "2", "--scheduler",
                f"tcp://127.0.0.1:{http_port}", "--connect-timeout", "2")
    one_line_exit_2(r, f"tcp://127.0.0.1:{http_port}", "8787", "no Dask handshake within 2 s")
    r = run_cli("render", "demo", "--out", out, "--frames", "2", "--scheduler",
                f"127.0.0.1:{bad_request_port}")
    one_line_exit_2(r, f"127.0.0.1:{bad_request_port}", "not Dask's protocol", "8787")
    write_mesh(tmp_path / "m.obj")
    r = run_cli("render-many", tmp_path / "m.obj", "--out", tmp_path / "o", "--scheduler",
                f"tcp://127.0.0.1:{bad_request_port}")
    one_line_exit_2(r, "not Dask's protocol")
    r = run_cli("render", "demo", "--out", out, "--frames", "2", "--scheduler",
                "tcp://127.0.0.1:1", "--connect-timeout", "1")  # nothing listens there
    one_line_exit_2(r, "cannot connect to the Dask scheduler tcp://127.0.0.1:1: ")
    assert "handshake" not in r.stderr
    for cmd in (["render", "demo", "--out", out, "--frames", "2"],
                ["render-many", tmp_path / "m.obj", "--out", tmp_path / "o"]):
        r = run_cli(*cmd, "--scheduler", "not a url")
        one_line_exit_2(r, "'not a url'", "tcp://HOST:PORT")
        assert not (tmp_path / "o").exists()  # refused before the output folder is made
        for t in ("inf", "nan", "-1"):
            r = run_cli(*cmd, "--scheduler", "tcp://127.0.0.1:1", "--connect-timeout", t)
            one_line_exit_2(r, "--connect-timeout")
    assert not out.exists() and not (tmp_path / "a.partial.mp4").exists()
    for t in (float("inf"), float("nan"), 0, "infs"):
        with pytest.raises(EngineError, match="finite number of seconds"), \
                dask_client(scheduler="tcp://127.0.0.1:1", connect_timeout=t):
            pass


def _sigint_handler():
    return signal.getsignal(signal.SIGINT) == signal.SIG_IGN


def test_embedded_workers_ignore_sigint_also_after_dask_restarts_them():
    from distributed import Client

    from engine.distributed import local_cluster

    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    cluster = local_cluster(1)
    try:
        with Client(cluster, set_as_default=False) as client:
            client.wait_for_workers(1, timeout=60)
            assert list(client.run(_sigint_handler).values()) == [True]
            # a restarted worker is spawned while this process has its normal handler:
            # the preload hook (dask_setup) ignores SIGINT there again
            client.restart(timeout=60)
            client.wait_for_workers(1, timeout=60)
            assert list(client.run(_sigint_handler).values()) == [True]
    finally:
        cluster.close()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_shutdown_noise_of_an_interrupted_local_cluster_is_dropped(caplog):
    # under load an interrupted render's own cluster shutdown logged a worker's
    # "failed during get data" traceback and the nanny's kill warning: both dropped,
    # every other record of those loggers kept
    from engine.distributed import cluster

    def record(name, level, msg, args=()):
        return logging.LogRecord(name, level, __file__, 1, msg, args, None)

    assert not cluster._peer_gone_filter(record(
        "distributed.worker", logging.ERROR, "failed during get data with %s -> %s",
        ("tcp://127.0.0.1:1", "tcp://127.0.0.1:2")))
    assert cluster._peer_gone_filter(record("distributed.worker", logging.ERROR,
                                            "Compute Failed"))
    nanny = logging.getLogger("distributed.nanny")
    with caplog.at_level(logging.WARNING, logger="distributed.nanny"):
        with cluster._nanny_kills_quiet():
            nanny.warning("Worker process still alive after 4.0 seconds, killing")
            nanny.warning("Restarting worker")
        nanny.warning("Worker process still alive after 4.0 seconds, killing")
    said = [r.getMessage() for r in caplog.records if r.name == "distributed.nanny"]
    assert said == ["Restarting worker",
                    "Worker process still alive after 4.0 seconds, killing"]
