"""The complete game in docs/games.md runs as written, with the public API alone."""

import re

import numpy as np
import pytest
from conftest import ROOT

from engine.controls.input import InputScript


def load_docs_game():
    text = (ROOT / "docs" / "games.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.DOTALL).group(1)
    assert "engine." in code and "_" + "TABLE" not in code
    for line in code.splitlines():  # public modules only: nothing private is imported
        if line.startswith(("import ", "from ")):
            assert not re.search(r"\b_\w", line), line
    namespace = {"__name__": "docs_game"}
    exec(compile(code, "docs/games.md", "exec"), namespace)  # noqa: S102 - our own docs
    return namespace["Orbs"]


def test_the_docs_game_plays_headless():
    orbs_cls = load_docs_game()
    game = orbs_cls(size=(160, 90), orbs=300, backend="numpy", seed=1)
    game.orbs.positions[0] = (0.5, 0.0, 0.0)  # one orb right on the ship
    game.velocity[0] = 0
    game.script = InputScript([(3, "down", "right"), (30, "up", "right")])
    frame = game.run_headless(30)
    assert game.score >= 1 and game.orbs.count <= 299
    # held right for updates 3..29: 27 updates of 1/120 s at 20 units/s
    assert game.ship.world_position[0] == pytest.approx(27 / 120 * 20)
    assert "Score" in game.hud["score"]
    assert frame.color.shape == (90, 160, 4) and frame.color[..., :3].max() > 0
    x0 = game.ship.world_position.copy()
    game.script = InputScript([(game.updates + 1, "move", (150.0, 45.0)),
                               (game.updates + 2, "tap", "mouse_left")])
    game.run_headless(60)
    assert game.ship.world_position[0] > x0[0] + 1  # flew towards the click on the right
    assert np.isfinite(game.ship.world_position).all()
