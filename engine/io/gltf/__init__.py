"""glTF 2.0 (.gltf and .glb) -> engine scene graph, implemented from the Khronos
specification: ``document`` (JSON/GLB container, buffers, URIs, checked getters with
JSON paths), ``accessors`` (every accessor feature, NumPy), ``materials`` (PBR -> the
engine's material, textures, samplers, KHR_texture_transform), ``build`` (nodes,
meshes, the seven primitive modes, cameras, morph targets, skins, animations).
"""

from .build import SUPPORTED_EXTENSIONS, load_gltf

__all__ = ["SUPPORTED_EXTENSIONS", "load_gltf"]
