"""From the scene to pixels: the batch (every object packed into one array), the
renderer, the backends that implement every stage (engine.render.backends), the
rasterizers' math and the key buffer they share, and GL as a rasterize/resolve stage
(engine.render.gl, imported lazily).

Imports: ``engine.scene`` and the helpers. Never ``engine.display``, ``engine.game``,
``engine.animation``, ``engine.controls`` or the CLI.
"""

from .batch import VertexBatch
from .frame import Frame, background_rgba
from .points import rasterize_points
from .renderer import Renderer

__all__ = ["Frame", "Renderer", "VertexBatch", "background_rgba", "rasterize_points"]
