"""The window path for real (pyglet windows on headless EGL and under Xvfb), the HiDPI
viewport, and the window -> offscreen GL -> software fallback.

Window runs happen in a subprocess (tests/display/window_probe.py): an X11 window must not share
a process with the EGL standalone context the reference render uses. Xvfb and Mesa EGL
are installed by scripts/setup.sh; these tests do not skip in CI.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from probe_run import run_probe
from window_probe import SIZE, probe_scene

from engine import Renderer
from engine.display import present, viewport_size, window_unavailable_reason
from engine.display.window import Viewer, is_software_gl
from engine.render.gl import GLUnavailable

PROBE = Path(__file__).with_name("window_probe.py")
XSHM_PROBE = Path(__file__).with_name("xshm_probe.py")


# --- HiDPI viewport ----------------------------------------------------------------------
def test_hidpi_viewport_is_framebuffer_size():
    vp = viewport_size((800, 600), 2.0)
    assert (vp.width, vp.height) == (1600, 1200)
    assert vp.aspect == pytest.approx(4 / 3)
    assert viewport_size((800, 600), 1.0)[:2] == (800, 600)
    assert viewport_size((801, 333), 1.5)[:2] == (1202, 500)  # rounded to whole pixels
    assert viewport_size((0, 0), 2.0)[:2] == (1, 1)  # minimised window
    with pytest.raises(ValueError, match="pixel ratio"):
        viewport_size((800, 600), 0.0)


def test_cpu_gl_renderers_are_recognised():
    assert is_software_gl("llvmpipe (LLVM 15.0.6, 256 bits)")
    assert not is_software_gl("NVIDIA H200/PCIe/SSE2")


# --- real windows --------------------------------------------------------------------
def _run_probe(tmp_path, raster, xvfb):
    run_probe(PROBE, tmp_path, raster, xvfb, timeout=90)
    return json.loads((tmp_path / "result.json").read_text())


def _reference(raster, msaa=1):
    scene, camera = probe_scene()
    renderer = Renderer(scene, camera, SIZE, backend="numpy", raster=raster, msaa=msaa)
    try:
        return renderer.render().color
    finally:
        renderer.close()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("xvfb", [False, True], ids=["headless-egl", "xvfb"])
@pytest.mark.parametrize(("raster", "msaa"), [("gl", 1), ("software", 1), ("gl", 4),
                                             ("software", 4)])
def test_window_screenshot_matches_offscreen_render(tmp_path, raster, msaa, xvfb,
                                                    monkeypatch):
    monkeypatch.setenv("PROBE_MSAA", str(msaa))
    result = _run_probe(tmp_path, raster, xvfb)
    assert result["first"]["raster"] == raster
    assert result["first"]["frames"] == 2
    # llvmpipe: software frames in an X11 window go through X shared memory (the
    # screenshot is then the bytes put into the window); headless EGL windows draw them
    # with GL, as GL raster does everywhere
    assert result["first"]["presented_by"] == ("x11-shm" if xvfb and raster == "software"
                                               else "gl")
    assert result["first"]["viewport"] == list(SIZE)

    shot = np.asarray(Image.open(tmp_path / "frame.png").convert("RGBA"))
    ref = _reference(raster, msaa)
    assert shot.shape == ref.shape == (SIZE[1], SIZE[0], 4)
    # Same Mesa driver, same inputs: the window shows exactly the offscreen frame.
    np.testing.assert_array_equal(shot, ref)
    assert len(np.unique(ref.reshape(-1, 4), axis=0)) > 100  # many coloured points
    ball = np.abs(ref[SIZE[1] // 2 - 5: SIZE[1] // 2 + 5, SIZE[0] // 2 - 5: SIZE[0] // 2 + 5, :3]
                  .astype(int) - (26, 51, 77)).sum(axis=-1) > 30  # not the background
    assert ball.all()  # the lit ball fills the middle (points in front of it may too)

    # Controller hooks: tick once per frame, forwarded events, per-frame callback.
    assert result["ticks"] == 4
    assert result["events"] == {"on_key_press": 1, "on_mouse_drag": 1, "on_mouse_scroll": 1,
                                "on_deactivate": 1}
    assert result["callbacks"] == [0, 1]
    # F12 wrote a screenshot of the next frame; Esc closed the window.
    f12 = np.asarray(Image.open(result["f12"]).convert("RGBA"))
    np.testing.assert_array_equal(f12, ref)
    assert result["closed_by_esc"] and result["frames_after_esc"] == 2
    if xvfb:  # a real X11 resize: viewport, renderer size and camera aspect follow
        assert result["resized"]["viewport"] == [200, 100, 2.0]
        assert result["resized"]["renderer_size"] == [200, 100]
        assert result["resized"]["camera_aspect"] == pytest.approx(2.0)
        assert result["resized"]["pixels_shape"] == [100, 200, 4]


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("present", "by"), [("auto", "x11-shm"), ("gl", "gl")])
def test_x11_window_shows_the_software_frame(tmp_path, present, by):
    # what the X server holds for a visible window (read back by XGetImage, not from the
    # engine) is the software frame, whether it came through X shared memory or GL's
    # textured quad and buffer swap
    run_probe(XSHM_PROBE, tmp_path, present, True, timeout=90)
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["presented_by"] == by and result["frames"] == 2
    assert result["read_pixels"]  # the screenshot path reads the same bytes
    shown = np.asarray(Image.open(tmp_path / "shown.png").convert("RGB"))
    np.testing.assert_array_equal(shown, _reference("software")[..., :3])


def test_present_mode_is_checked():
    scene, camera = probe_scene()
    with pytest.raises(ValueError, match="present must be one of"):
        Viewer(Renderer(scene, camera, SIZE), present="x11")


@pytest.mark.timeout(120)
def test_gl_window_draws_the_tone_map_as_offscreen_gl(tmp_path):
    # exposure and PBR Neutral in surface.frag: the window shows what offscreen GL draws,
    # and that is the NumPy resolve's frame within GL's float32 rounding
    result = _run_probe(tmp_path, "gl+tonemap", False)
    assert result["first"]["raster"] == "gl" and result["first"]["frames"] == 2
    shot = np.asarray(Image.open(tmp_path / "frame.png").convert("RGBA"))
    scene, camera = probe_scene(tone_mapped=True)
    with Renderer(scene, camera, SIZE, backend="numpy", raster="gl") as r:
        gl = r.render().color
        assert r.drawn_by == "gl"
    np.testing.assert_array_equal(shot, gl)
    scene, camera = probe_scene(tone_mapped=True)
    with Renderer(scene, camera, SIZE, backend="numpy") as r:
        ref = r.render().color
    ball = (slice(SIZE[1] // 2 - 5, SIZE[1] // 2 + 5), slice(SIZE[0] // 2 - 5, SIZE[0] // 2 + 5))
    assert np.abs(gl[ball].astype(int) - ref[ball]).max() <= 2
    plain = _reference("software")
    assert (np.abs(ref.astype(int) - plain).max(axis=-1) > 3).sum() > 500  # it tone-maps


@pytest.mark.timeout(120)
def test_gl_window_draws_fog_and_sky_as_offscreen_gl(tmp_path):
    # the GL fog pass (engine.render.gl.atmosphere) in a window: the screenshot equals
    # offscreen GL's frame, which is the NumPy reference's within GL's float rounding
    result = _run_probe(tmp_path, "gl+fog", False)
    assert result["first"]["raster"] == "gl" and result["first"]["frames"] == 2
    shot = np.asarray(Image.open(tmp_path / "frame.png").convert("RGBA"))
    scene, camera = probe_scene(fogged=True)
    with Renderer(scene, camera, SIZE, backend="numpy", raster="gl") as r:
        gl_frame = r.render()
    gl = gl_frame.color
    np.testing.assert_array_equal(shot, gl)
    scene, camera = probe_scene(fogged=True)
    with Renderer(scene, camera, SIZE, backend="numpy") as r:
        ref = r.render()
    both_sky = (ref.depth >= 1) & (gl_frame.depth >= 1)  # GL's points cover their own pixels
    assert both_sky.mean() > 0.3
    assert np.abs(gl[..., :3].astype(int) - ref.color[..., :3])[both_sky].max() <= 2
    plain = _reference("software")
    sky = ref.depth >= 1
    assert (np.abs(gl.astype(int) - plain).max(axis=-1)[sky] > 20).mean() > 0.9  # a sky
    fogged = (ref.depth < 1) & (np.abs(ref.color.astype(int) - plain).max(axis=-1) > 10)
    assert fogged.sum() > 200  # and fog on the drawn pixels


@pytest.mark.timeout(120)
@pytest.mark.parametrize("msaa", [1, 4])
def test_gl_window_draws_blend_layers_as_offscreen_gl(tmp_path, monkeypatch, msaa):
    # BLEND quads: the window peels and composites them as offscreen GL does (the same
    # bytes), and the overlap is red then green over the ball's colour, as NumPy draws it
    monkeypatch.setenv("PROBE_MSAA", str(msaa))
    result = _run_probe(tmp_path, "gl+blend", False)
    assert result["first"]["raster"] == "gl" and result["first"]["frames"] == 2
    shot = np.asarray(Image.open(tmp_path / "frame.png").convert("RGBA"))
    scene, camera = probe_scene(blend=True)
    with Renderer(scene, camera, SIZE, backend="numpy", raster="gl", msaa=msaa) as r:
        gl = r.render().color
    np.testing.assert_array_equal(shot, gl)
    scene, camera = probe_scene(blend=True)
    ref = Renderer(scene, camera, SIZE, backend="numpy", msaa=msaa).render().color
    centre = (slice(SIZE[1] // 2 - 3, SIZE[1] // 2 + 3), slice(SIZE[0] // 2 - 3, SIZE[0] // 2 + 3))
    if msaa == 1:  # (GL's 4 samples sit elsewhere: edges of points behind differ)
        assert np.abs(gl[centre].astype(int) - ref[centre]).max() <= 2
    scene, camera = probe_scene()
    plain = Renderer(scene, camera, SIZE, backend="numpy", msaa=msaa).render().color
    # the quads change the middle: green over red over whatever is behind
    for frame in (ref, gl):
        assert (np.abs(frame[centre].astype(int) - plain[centre]).max(axis=-1) > 20).all()
        assert (frame[centre][..., 1] > frame[centre][..., 0]).all()


# --- automatic fallback --------------------------------------------------------------
def _no_display(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("PYGLET_HEADLESS", raising=False)
    if "pyglet" in sys.modules:
        monkeypatch.setitem(sys.modules["pyglet"].options, "headless", False)


def _engine_lines(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "engine"]


@pytest.mark.timeout(60)
def test_no_display_falls_back_to_offscreen_gl_with_one_line(monkeypatch, caplog, tmp_path):
    _no_display(monkeypatch)
    assert window_unavailable_reason() == "no display: $DISPLAY is not set"
    scene, camera = probe_scene()
    renderer = Renderer(scene, camera, SIZE, backend="numpy")
    caplog.set_level(logging.INFO, logger="engine")
    try:
        path = present(renderer, out=tmp_path / "view.png")
    finally:
        renderer.close()
    assert path == tmp_path / "view.png" and renderer.raster == "gl"
    lines = _engine_lines(caplog)
    assert len(lines) == 1 and "$DISPLAY is not set" in lines[0]
    np.testing.assert_array_equal(np.asarray(Image.open(path).convert("RGBA")), _reference("gl"))


@pytest.mark.timeout(60)
def test_no_display_and_no_gl_falls_back_to_software(monkeypatch, caplog, tmp_path):
    _no_display(monkeypatch)

    def no_egl():
        raise GLUnavailable("cannot create an EGL OpenGL 3.3 context: simulated")

    monkeypatch.setattr("engine.render.gl.offscreen.create_egl_context", no_egl)
    scene, camera = probe_scene()
    renderer = Renderer(scene, camera, SIZE, backend="numpy")
    caplog.set_level(logging.INFO, logger="engine")
    path = present(renderer, out=tmp_path / "view.png")
    assert renderer.raster == "software"
    lines = _engine_lines(caplog)
    assert len(lines) == 2
    assert "$DISPLAY is not set" in lines[0]
    assert "offscreen GL is unavailable" in lines[1] and "simulated" in lines[1]
    np.testing.assert_array_equal(np.asarray(Image.open(path).convert("RGBA")),
                                  _reference("software"))


@pytest.mark.timeout(60)
def test_broken_window_falls_back_with_the_reason(monkeypatch, caplog, tmp_path):
    monkeypatch.setenv("PYGLET_HEADLESS", "1")  # a display seems available...

    class BrokenViewer:  # ...but opening the window fails, as with a bad GL config
        def __init__(self, *args, **kwargs):
            raise RuntimeError("no GL 3.3 config")

    monkeypatch.setattr("engine.display.window.Viewer", BrokenViewer)
    scene, camera = probe_scene()
    renderer = Renderer(scene, camera, SIZE, backend="numpy")
    caplog.set_level(logging.INFO, logger="engine")
    path = present(renderer, raster="software", out=tmp_path / "view.png")
    lines = _engine_lines(caplog)
    assert len(lines) == 1
    assert "cannot open a window: RuntimeError: no GL 3.3 config" in lines[0]
    assert path.is_file()


@pytest.mark.timeout(60)
def test_cli_view_without_display_writes_png(monkeypatch, tmp_path, capsys):
    from engine.cli import main

    _no_display(monkeypatch)
    out = tmp_path / "seen.png"
    assert main(["view", "demo", "--backend", "numpy", "--size", "96x64",
                 "--raster", "software", "--out", str(out)]) == 0
    assert str(out.resolve()) in capsys.readouterr().out
    img = np.asarray(Image.open(out))
    assert img.shape == (64, 96, 4) and len(np.unique(img.reshape(-1, 4), axis=0)) > 10


@pytest.mark.timeout(60)
def test_cli_view_without_display_counts_triangles(monkeypatch, tmp_path, capsys):
    # a triangle mesh is reported as `frustum render` reports it, not as "4 points"
    from engine.cli import main

    _no_display(monkeypatch)
    src = tmp_path / "quad.obj"
    src.write_text("v -1 -1 0\nv 1 -1 0\nv 1 1 0\nv -1 1 0\nf 1 2 3\nf 1 3 4\n")
    out = tmp_path / "seen.png"
    assert main(["view", str(src), "--backend", "numpy", "--size", "32x24",
                 "--raster", "software", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert f"wrote {out.resolve()} (32x24, 4 vertices, 2 triangles, raster software)" in said


def test_cli_view_rejects_bad_frames(capsys):
    from engine.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["view", "demo", "--frames", "0"])
    assert exc.value.code == 2
    assert "argument --frames: must be >= 1" in capsys.readouterr().err
