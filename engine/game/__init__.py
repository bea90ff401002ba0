"""The base for game prototypes: the fixed-timestep App loop, HUD, picking, collision.

Imports: anything of the engine but the CLI. Only ``engine.cli`` imports this package.
"""

from .app import App

__all__ = ["App"]
