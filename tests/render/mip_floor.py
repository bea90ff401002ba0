"""A textured floor receding to the horizon, for the mipmap tests and benchmark: the
camera at height ``HEIGHT`` above the plane y = 0, looking down -Z with no pitch, so a
pixel's ray and its floor point have a closed form (``floor_uv``) independent of the
renderer's barycentrics."""

from __future__ import annotations

import numpy as np

from engine import Mesh, Node, PerspectiveCamera, Scene
from engine.scene.material import Material, Sampler, Texture

HEIGHT = 1.0
FOV_Y = 50.0
UV_SCALE = 0.25   # texture repeats per world unit
NEAR_Z, FAR_Z = 0.5, 400.0
HALF_WIDTH = 400.0


def checker(n=64):
    """(n, n, 3) uint8 black/white checkerboard of 1-texel squares."""
    i = np.add.outer(np.arange(n), np.arange(n)) % 2
    return np.repeat((i * 255).astype(np.uint8)[:, :, None], 3, axis=2)


def floor_scene(image, min_filter="linear_mipmap_linear", filter="linear", size=(160, 120),
                shading="unlit", specular=0.0):
    """(scene, camera) of the floor textured with ``image`` under the given filters."""
    w, h = size
    scene = Scene(background=(0.2, 0.3, 0.8))
    x, z0, z1 = HALF_WIDTH, -NEAR_Z, -FAR_Z
    pos = np.array([[-x, 0, z0], [x, 0, z0], [x, 0, z1], [-x, 0, z1]], np.float32)
    uv = (np.stack([pos[:, 0], -pos[:, 2]], 1) * UV_SCALE).astype(np.float32)
    tex = Texture(image, Sampler("repeat", "repeat", filter, min_filter))
    scene.add(Node("floor", geometry=Mesh(pos, [[0, 1, 2], [0, 2, 3]], uvs=uv,
                                          material=Material(shading=shading, texture=tex,
                                                            specular=specular))))
    cam = scene.add(PerspectiveCamera(fov_y=FOV_Y, aspect=w / h, near=0.1, far=1000.0,
                                      position=(0.0, HEIGHT, 0.0)))
    return scene, cam


def floor_uv(px, py, size):
    """(..., 2) texture coordinates of the floor point seen through screen point (px, py)
    (pixel units, x right, y down; a pixel centre is i + 0.5): the ray from the camera
    through the point meets y = 0 at t = HEIGHT / -dir_y."""
    w, h = size
    t = np.tan(np.radians(FOV_Y) / 2)
    dx = (2 * np.asarray(px, np.float64) / w - 1) * t * w / h
    dy = (1 - 2 * np.asarray(py, np.float64) / h) * t
    s = HEIGHT / -dy
    return np.stack([dx * s * UV_SCALE, s * UV_SCALE], -1)


def footprint_lod(px, py, size, tw, th, eps=1e-3):
    """log2 of the texel footprint of pixel (px, py) (integer indices): the larger length,
    in texels of a tw x th texture, of the uv change per pixel step along x and along y
    (central differences of ``floor_uv`` at the pixel centre, step ``eps`` px)."""
    cx, cy = np.asarray(px) + 0.5, np.asarray(py) + 0.5
    dx = (floor_uv(cx + eps, cy, size) - floor_uv(cx - eps, cy, size)) / (2 * eps)
    dy = (floor_uv(cx, cy + eps, size) - floor_uv(cx, cy - eps, size)) / (2 * eps)
    scale = np.array([tw, th])
    return np.log2(np.maximum(np.linalg.norm(dx * scale, axis=-1),
                              np.linalg.norm(dy * scale, axis=-1)))
