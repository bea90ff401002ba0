"""Picking for games: ``App.pick`` answers with ``pick_point``. The code lives in the
render layer (``engine.render.picking``), where the window's click picking uses it too;
this module keeps the game layer's import path.
"""

from ..render.picking import Pick, pick_pixel, pick_point

__all__ = ["Pick", "pick_pixel", "pick_point"]
