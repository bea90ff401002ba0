"""What is drawn and from where: nodes and the scene graph, geometry, cameras, the
transform math (TRS, quaternions, projection matrices) and procedural shapes.

World matrices: ``compose_world`` is the one composition of local TRS into world matrices
(``Node.world_matrix``, ``Instances.world_matrices`` and renderers use it); a renderer
keeps a subtree's world matrices current with ``WorldMatrices``, reading no private state.

Imports: nothing of the engine outside ``engine.scene`` but the small helpers
(``engine.errors``, ``engine.arrays``); never a render, GL or GPU module.
"""

from .atmosphere import Fog, Sky
from .camera import Camera, OrthographicCamera, PerspectiveCamera
from .clips import Clip, TransformTrack
from .geometry import Geometry, Lines, Mesh, PointCloud
from .graph import Node, Scene
from .instances import Instances
from .light import AmbientLight, DirectionalLight, Light, PointLight, SpotLight
from .material import Material, Sampler, Texture
from .model import Model
from .world import WorldMatrices, compose_world

__all__ = ["AmbientLight", "Camera", "Clip", "DirectionalLight", "Fog", "Geometry",
           "Instances", "Light", "Lines", "Material", "Mesh", "Model", "Node",
           "OrthographicCamera", "PerspectiveCamera", "PointCloud", "PointLight", "Sampler",
           "Scene", "Sky", "SpotLight", "Texture", "TransformTrack", "WorldMatrices",
           "compose_world"]
