"""From the scene to pixels: the batch (every object packed into one array), the
renderer, the rasterizers and the key buffer they share, and the projection backends.

Imports: ``engine.scene`` and the helpers; ``engine.display`` only lazily, for the GL
raster mode. Never ``engine.game``, ``engine.animation``, ``engine.controls`` or the CLI.
"""

from .batch import VertexBatch
from .frame import Frame, background_rgba
from .points import rasterize_points
from .renderer import Renderer

__all__ = ["Frame", "Renderer", "VertexBatch", "background_rgba", "rasterize_points"]
