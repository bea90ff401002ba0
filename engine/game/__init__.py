"""The base for game prototypes: the fixed-timestep App loop, HUD, picking, exact ray
casts (``collision``, through the BVH of ``bvh``), colliders and the ``move_and_slide``
character controller (``colliders``).

Imports: anything of the engine but the CLI. Only ``engine.cli`` imports this package.
"""

from .app import App
from .colliders import (
    AABBCollider,
    BoxCollider,
    CapsuleCollider,
    MeshCollider,
    SphereCollider,
    move_and_slide,
    overlap,
)
from .collision import RayHit, height_at, ray_cast

__all__ = ["AABBCollider", "App", "BoxCollider", "CapsuleCollider", "MeshCollider", "RayHit",
           "SphereCollider", "height_at", "move_and_slide", "overlap", "ray_cast"]
