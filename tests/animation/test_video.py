"""Offline rendering of camera motions to MP4, GIF and PNG frames, headless."""

from __future__ import annotations

import io
import itertools
import json

import imageio.v2 as iio
import numpy as np
import pytest
from PIL import Image

from engine import Node, PerspectiveCamera, PointCloud, Renderer, Scene
from engine.animation.camera_path import CameraScript
from engine.animation.offline import MAX_FRAMES, frame_count, render_motion
from engine.animation.pathfile import save_path
from engine.animation.shots import orbit
from engine.cli import main
from engine.errors import EngineError, OutputError
from engine.io.video import GifWriter, Mp4Writer, open_frame_writer, output_kind
from engine.progress import Progress
from engine.scene.procedural import torus_knot

SIZE = (64, 48)


def small_scene():
    scene = Scene(background=(0.1, 0.1, 0.2))
    pts, colors = torus_knot(3000, seed=1)
    scene.add(Node("knot", geometry=PointCloud(pts, colors, point_size=2)))
    cam = scene.add(PerspectiveCamera(fov_y=50, position=(0, 1, 3))).look_at((0, 0, 0))
    return scene, cam


def render(out, frames=6, fps=12.0, size=SIZE, on_frame=None, pad=False, motion=None):
    scene, cam = small_scene()
    r = Renderer(scene, cam, size=size, backend="numpy")
    motion = motion or orbit((0, 0, 0), 3.0, 20, turns=1, duration=frames / fps)
    writer = open_frame_writer(out, size, fps, pad=pad)
    return render_motion(r, motion, fps, frames, writer, on_frame=on_frame)


def mp4_frames(path):
    reader = iio.get_reader(path, format="FFMPEG")
    try:
        frames = [f for f in reader]  # iterating stops at the real end (nframes is inf)
        return frames, reader.get_meta_data()
    finally:
        reader.close()


def test_output_kinds(tmp_path):
    assert output_kind("a.mp4") == "mp4" and output_kind("a.GIF") == "gif"
    assert output_kind("frames/") == "frames" and output_kind(tmp_path) == "frames"
    assert output_kind("shots") == "frames"
    assert output_kind("a.png") is None


def test_mp4_has_every_frame(tmp_path):
    out = tmp_path / "tour.mp4"
    result = render(out, frames=7)
    assert result.frames == 7 and not result.interrupted
    frames, meta = mp4_frames(out)
    assert len(frames) == 7
    assert frames[0].shape == (48, 64, 3)
    assert meta["fps"] == pytest.approx(12.0)
    # the orbit moves: consecutive frames differ
    assert np.abs(frames[0].astype(int) - frames[3].astype(int)).mean() > 1.0


def test_gif_has_every_frame(tmp_path):
    out = tmp_path / "tour.gif"
    render(out, frames=5, fps=10.0)
    with Image.open(out) as im:
        assert im.n_frames == 5 and im.size == SIZE
        assert im.info["duration"] == 100 and im.info["loop"] == 0


def test_frames_are_byte_identical_across_renders(tmp_path):
    render(tmp_path / "a", frames=4)
    render(tmp_path / "b", frames=4)
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == [f"frame_{k:06d}.png" for k in range(4)]
    for n in names:
        assert (tmp_path / "a" / n).read_bytes() == (tmp_path / "b" / n).read_bytes()
    # and the frames really differ from each other (the camera moved)
    assert (tmp_path / "a" / names[0]).read_bytes() != (tmp_path / "a" / names[2]).read_bytes()


def test_frames_are_rendered_at_k_over_fps():
    seen = []
    scene, cam = small_scene()
    r = Renderer(scene, cam, size=SIZE, backend="numpy")

    class ListWriter:
        size, path, frames = SIZE, "mem", 0

        def write(self, c):
            self.frames += 1

        def close(self):
            pass

        abort = close

    render_motion(r, CameraScript(lambda c, t: seen.append(t)), 24.0, 5, ListWriter())
    assert seen == [0.0, 1 / 24, 2 / 24, 3 / 24, 4 / 24]
    assert frame_count(2.0, 30) == 60 and frame_count(0.01, 30) == 1


def interrupt_at(k_stop):
    def on_frame(k, frame):
        if k == k_stop:
            raise KeyboardInterrupt
    return on_frame


def test_interrupted_mp4_keeps_a_playable_file(tmp_path):
    out = tmp_path / "cut.mp4"
    result = render(out, frames=10, on_frame=interrupt_at(3))
    assert result.interrupted and result.frames == 4 and result.requested == 10
    frames, _ = mp4_frames(out)
    assert len(frames) == 4


def test_interrupted_frames_are_kept(tmp_path):
    result = render(tmp_path / "f", frames=10, on_frame=interrupt_at(2))
    assert result.interrupted
    assert sorted(p.name for p in (tmp_path / "f").iterdir()) == [
        "frame_000000.png", "frame_000001.png", "frame_000002.png"]


def test_interrupt_before_any_frame_leaves_no_file(tmp_path):
    out = tmp_path / "none.mp4"

    def stop(camera, t):
        raise KeyboardInterrupt

    result = render(out, frames=5, motion=CameraScript(stop))
    assert result.interrupted and result.frames == 0
    assert not out.exists()


def test_odd_sizes_are_rejected_or_padded_never_rescaled(tmp_path):
    out = tmp_path / "odd.mp4"
    with pytest.raises(EngineError, match=r"needs an even width and height, got 63x48"):
        render(out, size=(63, 48))
    assert not out.exists()
    render(out, frames=3, size=(63, 47), pad=True)
    frames, _ = mp4_frames(out)
    assert len(frames) == 3 and frames[0].shape == (48, 64, 3)


def test_rerender_into_a_frames_folder_replaces_old_frames(tmp_path):
    render(tmp_path / "f", frames=5)
    (tmp_path / "f" / "notes.txt").write_text("keep me")
    render(tmp_path / "f", frames=2)
    assert sorted(p.name for p in (tmp_path / "f").iterdir()) == [
        "frame_000000.png", "frame_000001.png", "notes.txt"]


def test_progress_plain_lines_and_terminal_bar():
    clock = iter(np.arange(0.0, 100.0, 0.5)).__next__
    buf = io.StringIO()
    p = Progress(4, stream=buf, tty=False, clock=clock)
    for k in range(1, 5):
        p.update(k)
    p.finish()
    lines = buf.getvalue().splitlines()
    assert len(lines) == 4 and "\r" not in buf.getvalue()
    assert lines[0].startswith("render: 1/4 frames (25%)") and "fps" in lines[0]
    assert "ETA" in lines[0] and lines[-1].startswith("render: 4/4 frames (100%)")
    buf = io.StringIO()
    p = Progress(4, stream=buf, tty=True, clock=clock)
    for k in range(1, 5):
        p.update(k)
    p.finish()
    text = buf.getvalue()
    assert text.startswith("\r[") and text.endswith("\n") and "4/4 frames" in text


def test_cli_renders_a_path_file_to_frames_and_mp4(tmp_path, capsys):
    path = orbit((0, 1, 0), 6.0, 25, turns=0.5, duration=2.0)
    pf = save_path(path, tmp_path / "tour.json")
    args = ["render", "demo", "--camera", str(pf), "--fps", "2", "--size", "64x48",
            "--backend", "numpy", "--point-size", "1"]
    assert main(args + ["--out", str(tmp_path / "frames") + "/"]) == 0
    assert len(list((tmp_path / "frames").iterdir())) == 4  # 2 s at 2 fps
    out = capsys.readouterr()
    assert "4 frames" in out.out and "render: 4/4 frames (100%)" in out.err
    assert main(args + ["--frames", "3", "--out", str(tmp_path / "t.mp4")]) == 0
    assert len(mp4_frames(tmp_path / "t.mp4")[0]) == 3


def test_cli_reports_a_bad_path_file(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("[[keyframes]]\ntime = 0\nposition = [1, 2]\ntarget = [0, 0, 0]\n")
    code = main(["render", "demo", "--camera", str(bad), "--out", str(tmp_path / "x.mp4")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip() == (f"frustum: error: {bad}: keyframe 0: position: must have 3 "
                           f"numbers, got 2")
    assert not (tmp_path / "x.mp4").exists()
    code = main(["render", "demo", "--size", "65x48", "--frames", "2",
                 "--out", str(tmp_path / "odd.mp4")])
    assert code == 2 and "--pad" in capsys.readouterr().err
    assert not (tmp_path / "odd.mp4").exists()


def test_path_file_json_is_what_the_cli_reads(tmp_path):
    data = {"keyframes": [{"time": 0, "position": [0, 1, 4], "target": [0, 0, 0]},
                          {"time": 1, "position": [4, 1, 0], "target": [0, 0, 0]}]}
    pf = tmp_path / "p.json"
    pf.write_text(json.dumps(data))
    assert main(["render", "demo", "--camera", str(pf), "--size", "32x24", "--backend",
                 "numpy", "--out", str(tmp_path / "still.png")]) == 0
    assert Image.open(tmp_path / "still.png").size == (32, 24)


@pytest.mark.timeout(120)
def test_camera_tour_example_writes_an_mp4_of_the_bunny(tmp_path, ref_assets):
    import subprocess
    import sys
    from pathlib import Path

    example = Path(__file__).resolve().parents[2] / "examples" / "camera_tour.py"
    out = tmp_path / "tour.mp4"
    proc = subprocess.run(
        [sys.executable, str(example), "--model",
         str(ref_assets / "classic" / "stanford-bunny.obj"), "--headless", "--frames", "5",
         "--size", "64x48", "--backend", "numpy", "--out", str(out)],
        capture_output=True, text=True, timeout=100, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    frames, _ = mp4_frames(out)
    assert len(frames) == 5 and frames[0].shape == (48, 64, 3)
    # the bunny is in view: many pixels differ from the background
    bg = frames[0][0, 0].astype(int)
    assert (np.abs(frames[0].astype(int) - bg).sum(axis=2) > 30).mean() > 0.02
    from engine.animation.pathfile import load_path

    assert load_path(tmp_path / "tour-path.json").duration == 8.0


@pytest.mark.timeout(120)
def test_ctrl_c_on_the_cli_keeps_a_finalised_mp4(tmp_path):
    """A real SIGINT to `frustum render`: exit 130, and the MP4 holds every frame that
    was reported done before the signal (the render stops between frames)."""
    import signal
    import subprocess
    import sys

    out = tmp_path / "cut.mp4"
    proc = subprocess.Popen(
        [sys.executable, "-m", "engine", "render", "demo", "--size", "64x48", "--frames",
         "400", "--backend", "numpy", "--point-size", "1", "--out", str(out)],
        stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    done = 0
    for line in proc.stderr:  # plain progress lines (not a terminal)
        if line.startswith("render: "):
            done = int(line.split()[1].split("/")[0])
            proc.send_signal(signal.SIGINT)
            break
    rest = proc.stderr.read()
    assert proc.wait(timeout=60) == 130
    assert done >= 1 and "interrupted after" in rest and "kept" in rest
    kept = int(rest.split("interrupted after ")[1].split()[0])
    frames, _ = mp4_frames(out)
    assert len(frames) == kept and done <= kept < 400


# --- outputs that cannot be written, fps and frame-count limits, signals -------------


def run_cli(tmp_path, *args):
    """`frustum render demo ...` in a subprocess (sees interpreter-exit noise too)."""
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "engine", "render", "demo", "--size", "64x48", "--backend",
         "numpy", "--point-size", "1", *args], cwd=tmp_path, capture_output=True,
        text=True, timeout=100, check=False)


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("frustum: error: ")
    return lines[0]


def fake_ffmpeg(tmp_path, monkeypatch, script: str):
    exe = tmp_path / "fake-ffmpeg"
    exe.write_text("#!/bin/sh\ncat > /dev/null\n" + script)
    exe.chmod(0o755)
    import imageio_ffmpeg

    monkeypatch.setattr(imageio_ffmpeg, "get_ffmpeg_exe", lambda: str(exe))


def test_ffmpeg_failure_raises_and_keeps_the_earlier_file(tmp_path, monkeypatch):
    out = tmp_path / "keep.mp4"
    out.write_bytes(b"an earlier video")
    fake_ffmpeg(tmp_path, monkeypatch,
                "echo '[out#0/mp4 @ 0x5] Error opening output x: Disk quota exceeded' >&2\n"
                "exit 1\n")
    with pytest.raises(OutputError, match=r"keep\.mp4: encoding failed: ffmpeg: Error "
                                          r"opening output x: Disk quota exceeded$"):
        render(out, frames=3)
    assert out.read_bytes() == b"an earlier video"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fake-ffmpeg", "keep.mp4"]
    # ffmpeg exits 0 but leaves an empty file: still an error, never "wrote"
    fake_ffmpeg(tmp_path, monkeypatch, "exit 0\n")
    with pytest.raises(OutputError, match="ffmpeg wrote nothing"):
        render(out, frames=2)
    assert out.read_bytes() == b"an earlier video"
    assert not (tmp_path / "keep.partial.mp4").exists()


def test_mp4_replaces_an_earlier_file_only_when_finished(tmp_path):
    out = tmp_path / "keep.mp4"
    out.write_bytes(b"an earlier video")
    seen = []

    def look(k, frame):  # during the render the earlier file is untouched
        seen.append(out.read_bytes())

    render(out, frames=3, on_frame=look)
    assert seen == [b"an earlier video"] * 3
    assert len(mp4_frames(out)[0]) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.mp4"]


def test_render_error_aborts_and_keeps_the_earlier_file(tmp_path):
    for name in ("keep.mp4", "keep.gif"):
        out = tmp_path / name
        out.write_bytes(b"earlier")

        def fail(k, frame):
            if k == 1:
                raise RuntimeError("renderer broke")

        with pytest.raises(RuntimeError, match="renderer broke"):
            render(out, frames=4, on_frame=fail)
        assert out.read_bytes() == b"earlier"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.gif", "keep.mp4"]


def test_cli_unwritable_outputs_are_one_clean_line(tmp_path):
    (tmp_path / "afile").write_text("not a folder")
    for out in ("afile/x.png", "afile/x.mp4", "afile/x.gif", "afile/sub/"):
        proc = run_cli(tmp_path, "--out", out, *(() if out.endswith(".png") else
                                                 ("--frames", "2")))
        assert proc.returncode == 2 and "wrote" not in proc.stdout
        assert one_error_line(proc.stderr) == (
            f"frustum: error: --out {out.rstrip('/')}: afile is a file, not a folder")
    proc = run_cli(tmp_path, "--out", "afile", "--frames", "2")
    assert proc.returncode == 2
    assert one_error_line(proc.stderr) == (
        "frustum: error: --out afile: is a file, not a folder for PNG frames")
    for out in ("/proc/x.png", "/proc/x.mp4", "/proc/x.gif"):
        proc = run_cli(tmp_path, "--out", out, *(() if out.endswith(".png") else
                                                 ("--frames", "2")))
        assert proc.returncode == 2 and proc.stdout == ""
        assert one_error_line(proc.stderr).startswith(
            f"frustum: error: --out {out}: cannot create a file in /proc: ")
    assert (tmp_path / "afile").read_text() == "not a folder"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_fps_the_format_cannot_store_is_refused_and_the_old_file_kept(tmp_path, capsys):
    base = ["render", "demo", "--size", "64x48", "--backend", "numpy", "--frames", "3"]
    for name, fps in [("keep.gif", "1e-9"), ("keep.gif", "0.001"), ("keep.gif", "60"),
                      ("keep.mp4", "1e-9"), ("keep.mp4", "5000"), ("f/", "2000")]:
        target = tmp_path / name
        if name != "f/":
            target.write_bytes(b"earlier")
        assert main(base + ["--fps", fps, "--out", str(target)]) == 2
        err = capsys.readouterr().err
        assert one_error_line(err).startswith(f"frustum: error: --out {target}")
        limits = {"keep.gif": "between 0.002 and 50", "keep.mp4": "between 0.001 and 1000",
                  "f/": "at most 1000"}[name]
        assert limits in err and f"got {float(fps)!r}" in err
        if name != "f/":
            assert target.read_bytes() == b"earlier"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.gif", "keep.mp4"]


def test_gif_fps_limits_are_stored_exactly(tmp_path):
    """The extremes GIF accepts: 50 fps = 2/100 s per frame, 0.002 fps = 500 s."""
    for fps, delay_ms in [(50.0, 20), (0.002, 500_000)]:
        out = tmp_path / f"{fps}.gif"
        render(out, frames=3, fps=fps)
        with Image.open(out) as im:
            delays = []
            for k in range(im.n_frames):
                im.seek(k)
                delays.append(im.info["duration"])
        assert delays == [delay_ms] * 3


def test_gif_delays_keep_the_real_rate(tmp_path):
    """30 fps cannot be stored in whole 1/100 s: the delays alternate so that frame k
    starts at round(100 k / 30) hundredths, and the GIF lasts frames / fps."""
    out = tmp_path / "t.gif"
    render(out, frames=7, fps=30.0)
    with Image.open(out) as im:
        delays = []
        for k in range(im.n_frames):
            im.seek(k)
            delays.append(im.info["duration"] // 10)
    starts = np.cumsum([0] + delays)
    assert list(starts) == [round(100 * k / 30) for k in range(8)]
    assert min(delays) == 3 and max(delays) == 4


def test_gif_is_streamed_to_disk_frame_by_frame(tmp_path):
    """Memory does not grow with the frame count: each frame is encoded and written to
    the .partial file at once (the old writer kept every frame until close), and the
    decoded GIF shows the rendered frames."""
    scene, cam = small_scene()
    r = Renderer(scene, cam, size=SIZE, backend="numpy")
    out = tmp_path / "s.gif"
    writer = GifWriter(out, SIZE, 10.0)
    partial = tmp_path / "s.partial.gif"
    sizes, rendered = [], []
    for k in range(4):
        cam.position = (3 * np.sin(k), 1.0, 3 * np.cos(k))
        cam.look_at((0, 0, 0))
        rendered.append(r.render().color[..., :3].astype(int))
        writer.write(rendered[-1].astype(np.uint8))
        sizes.append(partial.stat().st_size)
    assert not out.exists()
    assert all(b > a + 100 for a, b in itertools.pairwise(sizes))  # every frame on disk
    writer.close()
    assert not partial.exists()
    with Image.open(out) as im:
        assert im.n_frames == 4
        for k in range(4):
            im.seek(k)
            got = np.asarray(im.convert("RGB")).astype(int)
            err = np.abs(got - rendered[k]).mean()
            others = min(np.abs(got - rendered[j]).mean() for j in range(4) if j != k)
            assert err < 2.0 and err < others  # the right frame, 256-colour quantised


def test_huge_path_duration_is_refused_naming_the_file(tmp_path, capsys):
    pf = tmp_path / "long.json"
    pf.write_text(json.dumps({"keyframes": [
        {"time": 0, "position": [0, 1, 4], "target": [0, 0, 0]},
        {"time": 1e308, "position": [4, 1, 0], "target": [0, 0, 0]}]}))
    out = tmp_path / "long.mp4"
    assert main(["render", "demo", "--camera", str(pf), "--size", "64x48", "--out",
                 str(out)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith(f"frustum: error: {pf}: the path's 1e+308 s at --fps 30 ")
    assert "limit of 1,000,000" in line and not out.exists()
    with pytest.raises(EngineError, match="over the limit of 1,000,000 frames"):
        frame_count(1e308, 30)
    assert frame_count(MAX_FRAMES / 30, 30) == MAX_FRAMES
    with pytest.raises(EngineError):
        frame_count(MAX_FRAMES / 30 + 1, 30)


def test_absurd_frame_counts_are_refused(tmp_path, capsys):
    base = ["render", "demo", "--size", "64x48", "--backend", "numpy"]
    limit = "needs more frames than the limit of 1,000,000"
    cases = [(["--fps", "1e9"], f"the 6 s turntable at --fps 1e+09 {limit}"),
             (["--duration", "1e9"], f"--duration 1e+09 s at --fps 30 {limit}"),
             (["--frames", "1000001"],
              "--frames 1000001: 1,000,001 frames is outside the limit of 1 to 1,000,000")]
    for extra, message in cases:
        assert main(base + extra + ["--out", str(tmp_path / "a.mp4")]) == 2
        assert one_error_line(capsys.readouterr().err).startswith(
            f"frustum: error: {message}")
    assert list(tmp_path.iterdir()) == []


def test_a_name_that_is_only_a_suffix_is_refused(tmp_path, monkeypatch, capsys):
    for name in (".png", ".MP4", "out/.gif", ".jpg"):
        with pytest.raises(OutputError, match="only the suffix"):
            output_kind(name)
    assert output_kind(".png/") == "frames"  # an explicit folder is one
    assert output_kind(".frames") == "frames"  # a hidden folder, not a known suffix
    monkeypatch.chdir(tmp_path)
    assert main(["render", "demo", "--size", "64x48", "--backend", "numpy",
                 "--out", ".png"]) == 2
    assert one_error_line(capsys.readouterr().err) == (
        "frustum: error: --out .png: the file name is only the suffix '.png'; give a "
        "name such as render.png")
    assert list(tmp_path.iterdir()) == []


def test_stale_partial_frames_are_cleaned_up(tmp_path):
    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "frame_000582.partial.png").write_bytes(b"")  # left by a killed render
    (folder / "frame_000583.png").write_bytes(b"old")
    (folder / "notes.txt").write_text("keep me")
    render(folder, frames=2)
    assert sorted(p.name for p in folder.iterdir()) == [
        "frame_000000.png", "frame_000001.png", "notes.txt"]


def test_writer_closed_without_frames_leaves_no_new_folder(tmp_path):
    for out in (tmp_path / "a" / "b.mp4", tmp_path / "c" / "d.gif", tmp_path / "e" / "f"):
        open_frame_writer(out, SIZE, 10.0).close()
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(OutputError, match="needs an even width"):
        Mp4Writer(tmp_path / "odd.mp4", (63, 48), 10.0)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.timeout(120)
def test_sigterm_stops_like_ctrl_c_and_keeps_a_finalised_gif(tmp_path):
    """A real SIGTERM to `frustum render`: stop between frames, finalise the GIF with
    the frames done (exit 143); before, the process died and wrote nothing."""
    import signal
    import subprocess
    import sys

    out = tmp_path / "cut.gif"
    proc = subprocess.Popen(
        [sys.executable, "-m", "engine", "render", "demo", "--size", "64x48", "--frames",
         "400", "--fps", "20", "--backend", "numpy", "--point-size", "1", "--out",
         str(out)], stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    done = 0
    for line in proc.stderr:
        if line.startswith("render: "):
            done = int(line.split()[1].split("/")[0])
            proc.send_signal(signal.SIGTERM)
            break
    rest = proc.stderr.read()
    assert proc.wait(timeout=60) == 128 + signal.SIGTERM
    assert "stopped by SIGTERM after" in rest and "kept" in rest
    kept = int(rest.split("stopped by SIGTERM after ")[1].split()[0])
    with Image.open(out) as im:
        assert im.n_frames == kept and done <= kept < 400
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cut.gif"]


def test_writer_as_context_manager_keeps_on_interrupt_and_aborts_on_error(tmp_path):
    frame = np.full((SIZE[1], SIZE[0], 3), 200, np.uint8)
    for exc, kept in [(KeyboardInterrupt, True), (RuntimeError, False)]:
        out = tmp_path / f"{exc.__name__}.gif"
        with pytest.raises(exc), GifWriter(out, SIZE, 10.0) as writer:
            writer.write(frame)
            writer.write(frame)
            raise exc
        assert out.exists() == kept
        if kept:
            with Image.open(out) as im:
                assert im.n_frames == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["KeyboardInterrupt.gif"]
