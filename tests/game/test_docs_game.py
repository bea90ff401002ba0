"""The complete game in docs/games.md runs as written, with the public API alone: it
walks on the height field, collects coins by touch and by click, stops at rocks and
restarts."""

import math
import re

import numpy as np
import pytest
from conftest import ROOT

from engine.controls.input import InputScript
from engine.game.collision import height_at


def load_docs_game():
    text = (ROOT / "docs" / "games.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.DOTALL).group(1)
    assert "engine." in code and "_" + "TABLE" not in code
    for line in code.splitlines():  # public modules only: nothing private is imported
        if line.startswith(("import ", "from ")):
            assert not re.search(r"\b_\w", line), line
    namespace = {"__name__": "docs_game"}
    exec(compile(code, "docs/games.md", "exec"), namespace)  # noqa: S102 - our own docs
    return namespace["Coins"]


def feet_gap(game):
    """Height of the capsule's bottom point above the ground under its centre."""
    p = game.player.world_position
    return p[1] - 0.9 - height_at(game.ground, p[0], p[2])


def test_the_docs_game_plays_headless():
    game = load_docs_game()(size=(160, 90), coins=300, backend="numpy", seed=1)
    assert game.coins.count == 300 and len(game.rocks) == 12
    game.run_headless(30)  # lands and stands on the ground
    x0 = game.player.world_position.copy()
    ahead = x0 + (2.0, 0, 0)
    # only coin 0 near the path, so exactly one is touched
    near = np.linalg.norm((game.coins.positions - x0)[:, [0, 2]] - (1.5, 0), axis=1) < 4
    game.coins.despawn(np.flatnonzero(near))
    game.coins.active[0] = True
    before = game.coins.count
    game.coins.positions[0] = (ahead[0], height_at(game.ground, ahead[0], ahead[2]) + 1,
                               ahead[2])
    game.script = InputScript([(game.updates + 1, "down", "d"), (game.updates + 61, "up", "d")])
    gaps = []
    for _ in range(30):
        game.run_headless(2)
        gaps.append(feet_gap(game))
    # held D for 60 updates of 1/120 s at 6 units/s: 3 units along +x, no rock in the way
    assert game.player.world_position[0] - x0[0] == pytest.approx(3.0, abs=1e-6)
    # on the ground all along (see test_colliders for the bound): h = 1.5 sin(t_x)
    # cos(0.7 t_z), t = 4 pi x / 80, so |grad h| <= 1.5 (4 pi / 80) sqrt(1 + 0.7^2)
    slope = math.atan(1.5 * (4 * np.pi / 80) * math.sqrt(1 + 0.7 ** 2))
    assert min(gaps) >= -1e-3 and max(gaps) <= 0.5 * (1 / math.cos(slope) - 1) + 1e-3
    assert game.score == 1 and not game.coins.active[0]  # walked through coin 0
    assert game.coins.count == before - 1
    # click the coin nearest to the camera in view: the ray through its centre hits it
    live = np.flatnonzero(game.coins.active)
    centres = game.coins.world_matrices(live)[:, :3, 3]
    _, _, visible = game.camera.project(centres, game.size)
    dist = np.linalg.norm(centres - game.camera.world_position, axis=1)
    k = live[np.flatnonzero(visible)[np.argmin(dist[visible])]]
    x, y = game.camera.project(centres[live == k], game.size)[0][0]
    game.script = InputScript([(game.updates + 1, "move", (float(x), float(y))),
                               (game.updates + 2, "tap", "mouse_left")])
    game.run_headless(4)
    assert game.score == 2 and not game.coins.active[k]
    assert "Coins 2" in game.hud["score"]


def test_a_rock_blocks_the_player_and_r_restarts():
    game = load_docs_game()(size=(160, 90), coins=20, backend="numpy", seed=2)
    game.run_headless(30)
    p = game.player.world_position
    rock = game.rocks[0]
    rock.position = (p[0] + 4.0, height_at(game.ground, p[0] + 4.0, p[2]), p[2])
    radius = rock.scale[0]  # SphereCollider(1.0) scaled by the rock's scale
    game.script = InputScript([(game.updates + 1, "down", "right")])
    game.run_headless(120)  # 2 s at 6 units/s would be 12 units
    centre = rock.world_position
    q = game.player.world_position
    # the capsule's axis stays radius + 0.5 from the rock's centre (it slides around it)
    a, b = q - (0, 0.4, 0), q + (0, 0.4, 0)
    t = np.clip((centre - a) @ (b - a) / ((b - a) @ (b - a)), 0, 1)
    assert np.linalg.norm(a + t * (b - a) - centre) >= radius + 0.5 - 1e-6
    game.script = InputScript([(game.updates + 1, "up", "right")])
    game.run_headless(2)
    game.collect([3, 4])
    game.script = InputScript([(game.updates + 1, "tap", "r")])
    game.run_headless(2)
    assert game.score == 0 and game.coins.count == 20
    assert np.isfinite(game.player.world_position).all()
