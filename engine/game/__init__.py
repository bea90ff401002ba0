"""The base for game prototypes: the fixed-timestep App loop, HUD, picking, exact ray
casts (``collision``, through the BVH of ``bvh``), colliders and the ``move_and_slide``
character controller (``colliders``).

Imports: anything of the engine but the CLI. Only ``engine.cli`` imports this package.
"""

from .app import App

# The ray-cast and collider modules (engine.game.collision, .bvh, .colliders) are imported
# by name: they compile Numba kernels, which a game without them should not wait for.
__all__ = ["App"]
