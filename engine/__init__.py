"""Frustum: a real-time software rendering engine for Python.

Scene graph -> batched vertex arrays -> one fused projection kernel (CuPy RawKernel on
the GPU, Numba or NumPy on the CPU) -> the engine's software rasterizer, or pyglet +
moderngl for display. See docs/conventions.md for conventions (frames, units, matrix
layout).
"""

from .animation.camera_path import CameraPath, CameraScript, Keyframe

# engine.render_video: one function, in this process or (client=/scheduler=/workers=)
# with the frames spread over Dask; it imports Dask only when a cluster is asked for.
from .distributed.video import render_video
from .io import load
from .render.backends import get_projector
from .render.batch import VertexBatch
from .render.frame import Frame
from .render.points import rasterize_points
from .render.renderer import Renderer
from .scene.atmosphere import Fog, Sky
from .scene.camera import Camera, OrthographicCamera, PerspectiveCamera
from .scene.geometry import Lines, Mesh, PointCloud
from .scene.graph import Node, Scene, get_transforms, set_transforms
from .scene.instances import Instances
from .scene.light import AmbientLight, DirectionalLight, PointLight, SpotLight
from .scene.material import Material, Texture
from .scene.model import Model
from .scene.transforms import (
    euler_from_quat,
    quat_from_axis_angle,
    quat_from_euler,
    quat_multiply,
    quat_to_matrix,
    slerp,
)

__version__ = "0.1.0"

# The controllers need pyglet (its key and mouse constants), so they load on first use:
# ``import engine`` then works where pyglet is absent (servers, the GPU machine's image).
# The notebook helpers load on first use too (the widget needs jupyter_rfb).
_LAZY = {"FlyController": ".controls.controllers", "OrbitController": ".controls.controllers",
         "RenderWidget": ".notebook", "show": ".notebook"}


def __getattr__(name: str):
    if name in _LAZY:
        from importlib import import_module

        value = getattr(import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'engine' has no attribute {name!r}")

__all__ = [
    "AmbientLight",
    "Camera",
    "CameraPath",
    "CameraScript",
    "DirectionalLight",
    "FlyController",
    "Fog",
    "Frame",
    "Instances",
    "Keyframe",
    "Lines",
    "Material",
    "Mesh",
    "Model",
    "Node",
    "OrbitController",
    "OrthographicCamera",
    "PerspectiveCamera",
    "PointCloud",
    "PointLight",
    "RenderWidget",
    "Renderer",
    "Scene",
    "Sky",
    "SpotLight",
    "Texture",
    "VertexBatch",
    "euler_from_quat",
    "get_projector",
    "get_transforms",
    "load",
    "quat_from_axis_angle",
    "quat_from_euler",
    "quat_multiply",
    "quat_to_matrix",
    "rasterize_points",
    "render_video",
    "set_transforms",
    "show",
    "slerp",
]
