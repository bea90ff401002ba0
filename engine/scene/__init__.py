"""What is drawn and from where: nodes and the scene graph, geometry, cameras, the
transform math (TRS, quaternions, projection matrices) and procedural shapes.

Imports: nothing of the engine outside ``engine.scene`` but the small helpers
(``engine.errors``, ``engine.arrays``); never a render, GL or GPU module.
"""

from .camera import Camera, OrthographicCamera, PerspectiveCamera
from .clips import Clip, TransformTrack
from .geometry import Geometry, Lines, Mesh, PointCloud
from .graph import Node, Scene
from .model import Model

__all__ = ["Camera", "Clip", "Geometry", "Lines", "Mesh", "Model", "Node", "OrthographicCamera",
           "PerspectiveCamera", "PointCloud", "Scene", "TransformTrack"]
