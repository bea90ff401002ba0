"""Scenes for the shadow tests (test_shadows.py, the parity matrix): a unit box standing
on a plane, seen straight down by an orthographic camera, so that a pixel's centre is a
known point of the plane y = 0.

Camera: height ``VIEW`` world units over the image's rows, square pixels; image right is
world +x, image down is world +z (pitch -90 degrees: the camera's up is world -z).
Pixel (px, py) of a W x H image has its centre at x = (px + 0.5 - W / 2) * VIEW / H,
z = (py + 0.5 - H / 2) * VIEW / H.
"""

from __future__ import annotations

import numpy as np

from engine import Mesh, Node, OrthographicCamera, Scene
from engine.scene.light import AmbientLight, DirectionalLight, SpotLight
from engine.scene.material import Material
from engine.scene.procedural import box

VIEW = 8.0
PLANE_HALF = 3.0
AMBIENT = 0.2
PLANE_COLOR = 0.8  # sRGB grey


def plane(material=None):
    pos = np.array([[-PLANE_HALF, 0, -PLANE_HALF], [PLANE_HALF, 0, -PLANE_HALF],
                    [PLANE_HALF, 0, PLANE_HALF], [-PLANE_HALF, 0, PLANE_HALF]], np.float32)
    # counter-clockwise seen from above (+y): its front faces the camera and the light
    return Mesh(pos, [[0, 2, 1], [0, 3, 2]], normals=np.tile([0.0, 1.0, 0.0], (4, 1)),
                material=material or Material(color=(PLANE_COLOR,) * 3, specular=0.0))


def top_camera(scene, size):
    w, h = size
    cam = OrthographicCamera(height=VIEW, aspect=w / h, near=0.1, far=50)
    cam.position = (0.0, 10.0, 0.0)
    cam.rotation = (-90.0, 0.0, 0.0)
    return scene.add(cam)


def pixel_centres(size):
    """(x (W,), z (H,)) world coordinates of the pixel centres on the plane."""
    w, h = size
    px = VIEW / h
    return (np.arange(w) + 0.5 - w / 2) * px, (np.arange(h) + 0.5 - h / 2) * px


def box_on_plane(size, map_size=1024, plane_material=None, box_material=None,
                 elevation=45.0):
    """(scene, camera, light): the unit box on x, z in [-0.5, 0.5], y in [0, 1], a
    directional light of intensity 1 travelling towards -x and down at ``elevation``
    degrees, with shadows, and an ambient light of AMBIENT."""
    scene = Scene(background=(0, 0, 0))
    scene.add(Node("plane", geometry=plane(plane_material)))
    scene.add(Node("box", geometry=box(material=box_material or Material(
        color=(0.8, 0.3, 0.2), specular=0.0)), position=(0, 0.5, 0)))
    e = np.radians(elevation)
    light = scene.add(DirectionalLight(intensity=1.0, shadows=True, shadow_map_size=map_size))
    light.position = (np.cos(e), np.sin(e), 0.0)
    light.look_at((0.0, 0.0, 0.0))
    scene.add(AmbientLight(intensity=AMBIENT))
    return scene, top_camera(scene, size), light


def spot_over_box(size, map_size=512, plane_material=None):
    """(scene, camera, light): the same box and plane under a spot light at (2, 3, 0)
    aimed at the origin (outer cone 60 degrees), with shadows, and the ambient light."""
    scene = Scene(background=(0, 0, 0))
    scene.add(Node("plane", geometry=plane(plane_material)))
    scene.add(Node("box", geometry=box(material=Material(color=(0.8, 0.3, 0.2),
                                                         specular=0.0)),
                   position=(0, 0.5, 0)))
    light = scene.add(SpotLight(intensity=12.0, inner_cone_angle=0.9,
                                outer_cone_angle=np.radians(60), shadows=True,
                                shadow_map_size=map_size, position=(2.0, 3.0, 0.0)))
    light.look_at((0.0, 0.0, 0.0))
    scene.add(AmbientLight(intensity=AMBIENT))
    return scene, top_camera(scene, size), light
