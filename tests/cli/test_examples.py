"""Examples are tests: every script in examples/ runs headless (and in a window) for a few
frames and produces a non-empty picture; a subset matches reference images; the game is
driven by scripted input.

Reference images live in examples/screenshots/reference/ (software rasterizer, NumPy
backend). Regenerate them after an intended visual change with

    FRUSTUM_UPDATE_SCREENSHOTS=1 .venv/bin/pytest tests/cli/test_examples.py

On a mismatch the test writes out/test-diffs/<name>-diff.png (differing pixels in red over
the dimmed new frame) next to <name>-actual.png.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest
from conftest import ROOT

from engine.controls.input import InputScript

EXAMPLES = ROOT / "examples"
REFERENCE_DIR = EXAMPLES / "screenshots" / "reference"
DIFF_DIR = ROOT / "out" / "test-diffs"
UPDATE = os.environ.get("FRUSTUM_UPDATE_SCREENSHOTS", "") not in ("", "0")
SIZE = "192x108"
# Tools in examples/ that are not examples themselves.
NOT_EXAMPLES = {"make_gallery"}
# Arguments that keep each example's test run small; every example must be listed.
SMOKE_ARGS = {
    "hello_points": ["--frames", "1"],
    "galaxy": ["--frames", "4", "--particles", "20000"],
    "model_viewer": ["--frames", "6"],
    "solar_system": ["--frames", "30"],
    "terrain_flythrough": ["--frames", "20", "--grid", "120"],
    "asteroids": ["--frames", "12"],  # 10,000 lit rocks: the NumPy path takes ~1 s a frame
    "camera_tour": ["--frames", "3"],
    "coin_game": ["--frames", "20", "--coins", "60"],
    "glass_garden": ["--frames", "3"],
}
VIDEO_OUTPUT = {"camera_tour"}  # writes MP4 headless
REFERENCED = ["hello_points", "galaxy", "solar_system", "terrain_flythrough", "asteroids",
              "glass_garden"]
# A pixel differs when a channel is off by more than PIXEL_TOL; an image matches when at
# most MAX_DIFF_FRACTION of its pixels differ (allows last-bit float differences).
PIXEL_TOL = 40
MAX_DIFF_FRACTION = 0.005


def example_names():
    return sorted(p.stem for p in EXAMPLES.glob("*.py") if p.stem not in NOT_EXAMPLES)


def run_example(name, tmp_path, *extra, window=False, timeout=120):
    suffix = ".mp4" if name in VIDEO_OUTPUT else ".png"
    out = tmp_path / f"{name}{suffix}"
    args = [sys.executable, str(EXAMPLES / f"{name}.py"), "--size", SIZE, "--out", str(out),
            *SMOKE_ARGS[name], *extra]
    env = dict(os.environ, ENGINE_BACKEND="numpy")
    if window:
        env["PYGLET_HEADLESS"] = "1"
    else:
        args.append("--headless")
        env.pop("PYGLET_HEADLESS", None)
    proc = subprocess.run(args, check=False, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, f"{name} failed:\n{proc.stdout}\n{proc.stderr}"
    return out


def read_first_frame(path: Path) -> np.ndarray:
    if path.suffix == ".mp4":
        return np.asarray(next(iter(iio.imiter(path))))
    return iio.imread(path)


def assert_not_empty(img: np.ndarray, name: str):
    """More than 1 % of the pixels differ from the most common (background) colour."""
    rgb = img[..., :3].reshape(-1, 3)
    values, counts = np.unique(rgb, axis=0, return_counts=True)
    background = values[np.argmax(counts)]
    drawn = np.any(np.abs(rgb.astype(int) - background) > 8, axis=1).mean()
    assert drawn > 0.01, f"{name}: only {drawn:.2%} of the pixels show anything"


def test_every_example_is_covered():
    assert example_names() == sorted(SMOKE_ARGS), (
        "add new examples to SMOKE_ARGS in tests/cli/test_examples.py (and remove deleted ones)")


@pytest.mark.timeout(180)
@pytest.mark.parametrize("name", example_names())
def test_example_runs_headless(name, tmp_path):
    img = read_first_frame(run_example(name, tmp_path))
    assert img.shape[:2] == (108, 192)
    assert_not_empty(img, name)
    if name in REFERENCED:
        compare_with_reference(name, img[..., :3])


@pytest.mark.timeout(180)
@pytest.mark.parametrize("name", example_names())
def test_example_runs_in_a_window(name, tmp_path):
    out = run_example(name, tmp_path, "--frames", "2", window=True)
    if name not in VIDEO_OUTPUT:  # App examples save the window's last frame
        img = iio.imread(out)
        assert img.shape[:2] == (108, 192)
        assert_not_empty(img, f"{name} (window)")


def compare_with_reference(name: str, img: np.ndarray):
    ref_path = REFERENCE_DIR / f"{name}.png"
    if UPDATE or not ref_path.exists():
        if not UPDATE:
            pytest.fail(f"no reference image {ref_path}; create it with "
                        f"FRUSTUM_UPDATE_SCREENSHOTS=1")
        REFERENCE_DIR.mkdir(parents=True, exist_ok=True)
        iio.imwrite(ref_path, img)
        return
    ref = iio.imread(ref_path)[..., :3]
    assert ref.shape == img.shape, f"{name}: size {img.shape} != reference {ref.shape}"
    bad = np.any(np.abs(ref.astype(int) - img.astype(int)) > PIXEL_TOL, axis=2)
    if bad.mean() > MAX_DIFF_FRACTION:
        DIFF_DIR.mkdir(parents=True, exist_ok=True)
        diff = (img * 0.35).astype(np.uint8)
        diff[bad] = (255, 0, 0)
        iio.imwrite(DIFF_DIR / f"{name}-diff.png", diff)
        iio.imwrite(DIFF_DIR / f"{name}-actual.png", img)
        pytest.fail(f"{name}: {bad.mean():.2%} of the pixels differ from {ref_path} "
                    f"(limit {MAX_DIFF_FRACTION:.1%}); see {DIFF_DIR / (name + '-diff.png')}")


# --- the game, driven by scripted input -----------------------------------------------
def load_asteroids():
    spec = importlib.util.spec_from_file_location("asteroids_example", EXAMPLES / "asteroids.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_firing_at_an_asteroid_scores_and_removes_it():
    game = load_asteroids().Asteroids(size=(192, 108), seed=3, backend="numpy",
                                      asteroid_count=0)
    rock = game.add_asteroid(1, (0.0, 9.0), (0.0, 0.0))  # straight ahead of the ship
    other = game.add_asteroid(3, (-20.0, -10.0), (0.0, 0.0))  # another one, off to the side
    assert game.score == 0 and game.rocks.active[rock] and game.asteroid_count == 2
    game.run_headless(5)
    batch = game.renderer.batch
    assert game.rocks in batch.ranges and batch.copies(game.rocks) >= 2  # one node, instances
    game.script = InputScript([(game.updates + 2, "tap", "space")])
    game.run_headless(40)  # 2/3 s: the bullet covers 9 units in 0.3 s
    assert game.score == 100
    assert not game.rocks.active[rock] and game.rocks.active[other]
    assert game.asteroid_count == 1
    assert not batch.model[batch.slots_of(game.rocks)[rock]].any()  # not drawn any more
    assert batch.repacks == 1  # bullets, the hit and the removal never repacked
    assert game.bullets == []  # the bullet was spent on the hit


def test_big_rocks_split_in_two_smaller_ones():
    game = load_asteroids().Asteroids(size=(192, 108), seed=6, backend="numpy",
                                      asteroid_count=0)
    rock = game.add_asteroid(3, (0.0, 9.0), (0.0, 1.0))
    game._break(rock)
    assert game.score == 20 and game.asteroid_count == 2
    live = np.flatnonzero(game.rocks.active)
    assert game.rock_level[live].tolist() == [2, 2]
    np.testing.assert_allclose(game.rocks.positions[live, :2], [[0, 9], [0, 9]])
    assert np.all(game.rocks.scales[live] < 0.85 * 1.2 + 1e-9)


def test_ship_crash_game_over_and_restart():
    game = load_asteroids().Asteroids(size=(192, 108), seed=4, backend="numpy",
                                      asteroid_count=0)
    game.lives = 1
    game.ship.safe = 0.0
    game.add_asteroid(2, (0.0, 0.0), (0.0, 0.0))  # on top of the ship
    game.run_headless(2)
    assert game.game_over and game.lives == 0 and game.hud.banner.startswith("GAME OVER")
    assert game.ship.node.parent is None
    game.script = InputScript([(game.updates + 1, "tap", "r")])
    game.run_headless(2)
    assert not game.game_over and game.lives == 3 and game.score == 0
    assert game.ship.node.parent is game.scene and game.hud.banner is None


def test_mouse_aims_the_ship_and_left_button_fires():
    game = load_asteroids().Asteroids(size=(192, 108), seed=5, backend="numpy",
                                      asteroid_count=0)
    game.add_asteroid(3, (-20.0, -10.0), (0.0, 0.0))
    game.run_headless(1)
    # Cursor at the right edge, vertically centred: aim along +X (heading -90 degrees).
    start = game.updates + 1
    game.script = InputScript([(start, "move", (191.0, 54.0)), (start + 1, "tap", "mouse_left")])
    game.run_headless(2)
    assert game.ship.heading == pytest.approx(-np.pi / 2, abs=0.02)
    assert len(game.bullets) == 1 and game.bullets[0].velocity[0] > 25


def test_ten_thousand_rocks_move_every_frame_without_a_python_loop_per_rock():
    game = load_asteroids().Asteroids(size=(192, 108), seed=7, backend="numba")
    assert game.asteroid_count == 10_000 and game.rocks.capacity == 10_000
    game.run_headless(1)
    before = game.rocks.positions.copy()
    game.run_headless(2)
    moved = np.any(game.rocks.positions != before, axis=1)
    assert moved[game.rocks.active].all()  # every live rock moved
    batch = game.renderer.batch
    assert batch.repacks == 1 and len(game.renderer._prims.triangles) >= 10_000 * 20


def test_cli_lists_and_runs_examples(tmp_path, capsys, monkeypatch):
    from engine.cli import main

    monkeypatch.setenv("ENGINE_BACKEND", "numpy")
    assert main(["example"]) == 0
    assert capsys.readouterr().out.split() == example_names()
    out = tmp_path / "hello.png"
    assert main(["example", "hello_points", "--headless", "--size", "64x48",
                 "--out", str(out)]) == 0
    assert_not_empty(iio.imread(out), "hello_points via the CLI")
    assert main(["example", "no_such_example"]) == 2
    assert "unknown example 'no_such_example'" in capsys.readouterr().err


# --- the coin game ------------------------------------------------------------------------
def load_coin_game():
    spec = importlib.util.spec_from_file_location("coin_game_example", EXAMPLES / "coin_game.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_coin_game_autopilot_collects_and_crates_block():
    module = load_coin_game()
    game = module.CoinGame((192, 108), seed=1, backend="numpy", coins=40, autopilot=True)
    game.run_headless(240)  # 4 s at 6 units/s
    assert game.score >= 1 and game.coins.count == 40 - game.score
    assert f"Coins {game.score}" in game.hud["score"]
    # walk into a crate: the capsule stops at its face (radius 0.5 from it)
    crate = next(n for n in game.obstacles if n.name.startswith("crate"))
    crate.rotation = (0, 0, 0)
    p = game.player.world_position
    ground = module.height_at(game.ground, p[0] + 3, p[2])
    crate.position = (p[0] + 3.0, ground + 0.5, p[2])
    game.autopilot, game.target = False, None
    game.script = InputScript([(game.updates + 1, "down", "d")])
    game.run_headless(120)
    face = crate.world_position[0] - 1.0
    assert game.player.world_position[0] == pytest.approx(face - module.RADIUS, abs=1e-6)


def test_coin_game_terrain_from_a_heightmap_and_a_bad_one(tmp_path):
    from PIL import Image

    grey = (np.indices((33, 33)).sum(axis=0) * 4).astype(np.uint8)  # a ramp, 0..255
    Image.fromarray(grey, "L").save(tmp_path / "ramp.png")
    module = load_coin_game()
    game = module.CoinGame((96, 54), backend="numpy", coins=5, rocks=0,
                           heightmap=tmp_path / "ramp.png")
    # pixel (i, j) sits at x = -40 + j * 80 / 32, z = -40 + i * 80 / 32, height 6 * v / 255
    i, j = 8, 20
    assert module.height_at(game.ground, -40 + j * 2.5, -40 + i * 2.5) == \
        pytest.approx(6.0 * grey[i, j] / 255, abs=1e-5)
    (tmp_path / "bad.png").write_text("no image")
    proc = subprocess.run([sys.executable, str(EXAMPLES / "coin_game.py"), "--headless",
                           "--heightmap", str(tmp_path / "bad.png")], check=False, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "bad.png" in proc.stderr and "Traceback" not in proc.stderr
