"""Frustum: a real-time software rendering engine for Python.

Scene graph -> batched vertex arrays -> one fused projection kernel (CuPy RawKernel on
the GPU, Numba or NumPy on the CPU) -> the engine's software rasterizer, or pyglet +
moderngl for display. See README.md for conventions (frames, units, matrix layout).
"""

from .animation import CameraPath, CameraScript, Keyframe
from .backends import get_projector
from .batch import VertexBatch
from .camera import Camera, OrthographicCamera, PerspectiveCamera
from .controllers import FlyController, OrbitController
from .geometry import Mesh, PointCloud
from .io import load
from .raster import Frame, rasterize_points
from .renderer import Renderer
from .scene import Node, Scene

__version__ = "0.1.0"

__all__ = [
    "Camera",
    "CameraPath",
    "CameraScript",
    "FlyController",
    "Frame",
    "Keyframe",
    "Mesh",
    "Node",
    "OrbitController",
    "OrthographicCamera",
    "PerspectiveCamera",
    "PointCloud",
    "Renderer",
    "Scene",
    "VertexBatch",
    "get_projector",
    "load",
    "rasterize_points",
]
