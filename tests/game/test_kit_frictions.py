"""The small frictions of the game kit: the slow-motion warning and HUD note, the HUD
font through App, TrueType fonts, world-size labels, and engine.animation.clips."""

import logging
import math
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT
from PIL import ImageFont

from engine.errors import LoadError
from engine.game import App
from engine.game.hud import Hud
from engine.scene import PerspectiveCamera


def test_a_slow_frame_warns_once_and_the_hud_says_slow_motion(caplog):
    """The issue's numbers: 120 Hz, at most 8 updates a frame, 3 fps (1/3 s frames): each
    frame needs 40 updates, runs 8, so the game runs at 8/40 = 0.2x real time."""
    app = App(size=(64, 48), backend="numpy", update_hz=120, show_fps=True)
    with caplog.at_level(logging.WARNING, logger="engine"):
        for _ in range(40):
            assert app.advance(1 / 3) == 8
    warnings = [r for r in caplog.records if "max_updates_per_frame" in r.message]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING
    assert "0.20x" in warnings[0].message
    assert app.game_speed == pytest.approx(0.2)
    assert app.time == pytest.approx(40 * 8 / 120)  # 2.67 s of game time in 13.3 s
    assert app.dropped_time == pytest.approx(40 * 32 / 120)
    app.render_frame()
    assert "slow motion 0.20x" in app.hud["fps"]
    app.advance(1 / 60)  # a frame that keeps up: full speed, and the note goes
    app.render_frame()
    assert app.game_speed == 1.0 and "slow" not in app.hud["fps"]


def test_hud_font_size_and_font_file_through_app(tmp_path):
    # Pillow's built-in font is a TrueType file held in memory: written out, it is a real
    # .ttf, so the file route must draw exactly what the built-in route draws.
    data = ImageFont.load_default(size=12).path
    data.seek(0)
    ttf = tmp_path / "builtin.ttf"
    ttf.write_bytes(data.read())
    frames = {}
    for name, kw in {"default": {}, "file": {"hud_font": ttf}, "big": {"hud_font_size": 28}}.items():
        app = App(size=(160, 60), backend="numpy", **kw)
        app.hud["msg"] = "Coins 12"
        frames[name] = app.render_frame().color[..., :3].max(axis=2) > 128
    np.testing.assert_array_equal(frames["file"], frames["default"])
    rows = {k: np.flatnonzero(v.any(axis=1)) for k, v in frames.items()}
    tall = {k: r[-1] - r[0] + 1 for k, r in rows.items()}
    assert tall["big"] == pytest.approx(tall["default"] * 2, rel=0.2)  # 28 px vs 14 px text
    with pytest.raises(LoadError, match="missing.ttf"):
        App(size=(32, 32), backend="numpy", hud_font=tmp_path / "missing.ttf")
    (tmp_path / "bad.ttf").write_text("not a font")
    with pytest.raises(LoadError, match="bad.ttf"):
        Hud(font=tmp_path / "bad.ttf")


def test_world_size_labels_shrink_with_distance():
    """A label world_size units tall at view depth z is world_size * f / z pixels, with
    f = (H / 2) / tan(fov_y / 2); capital letters fill a fixed share of the font size, so
    the ink heights of labels at depths 5 and 10 are in the ratio 2."""
    h = 240
    cam = PerspectiveCamera(fov_y=60, aspect=1.0, position=(0, 0, 0))
    heights = {}
    for depth in (5.0, 10.0):
        hud = Hud()
        hud.label("name", "HELLO", (0, 0, -depth), offset=(0, 0), world_size=1.0)
        img = hud.overlay((h, h), cam)
        ink = np.flatnonzero((img[..., 3] > 128).any(axis=1))
        heights[depth] = ink[-1] - ink[0] + 1
    focal = (h / 2) / math.tan(math.radians(30))
    assert heights[5.0] == pytest.approx(2 * heights[10.0], abs=2)
    assert heights[5.0] < round(focal / 5) <= 2 * heights[5.0]  # ink < font size
    with pytest.raises(ValueError, match="world_size"):
        Hud().label("x", "x", (0, 0, 0), world_size=0)


def test_animation_clips_is_an_attribute_after_import_engine():
    code = "import engine; print(engine.animation.clips.play_in.__name__)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, check=False,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "play_in"
