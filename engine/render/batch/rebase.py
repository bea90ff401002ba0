"""Camera-relative rebasing: the batch's precision origin and the model matrices
composed against it.

Model matrices are ``T(-origin) @ world @ T(geometry.origin)`` composed in float64 and
then cast to float32; ``view_projection(camera, origin)`` folds ``T(origin)`` back in, in
float64. ``origin`` starts at the centre of the scene's bounds (each full repack) and
moves to the camera whenever the camera is more than ``REBASE_NEAR_FACTOR`` near-plane
distances away from it. A float32 translation t carries an error of about
``|t| * 2**-24``, so an object at distance d >= near from the camera is off by at most
~(d + 1000 near) * 6e-8 / d radians: a few hundredths of a pixel. Points 0.01 apart at
x = 596,650 therefore stay 0.01 apart in view space.
"""

from __future__ import annotations

import numpy as np

from ...scene.camera import Camera
from ...scene.transforms import translation_matrix

REBASE_NEAR_FACTOR = 1000.0


def scene_centre(root) -> np.ndarray:
    """(3,) float64 centre of ``root``'s bounds (the origin after a repack); zeros for
    a root without bounds."""
    bounds = root.bounds() if hasattr(root, "bounds") else None
    return np.zeros(3) if bounds is None else (bounds[0] + bounds[1]) * 0.5


def rebased_origin(camera: Camera, origin: np.ndarray) -> np.ndarray | None:
    """The camera's world position when it is farther than ``REBASE_NEAR_FACTOR *
    camera.near`` from ``origin`` (every model matrix must then be recomposed), else
    None."""
    eye = camera.world_position
    if np.linalg.norm(eye - origin) > REBASE_NEAR_FACTOR * camera.near:
        return np.array(eye)
    return None


def model_matrices(world: np.ndarray, geometry_origin: np.ndarray, origin: np.ndarray,
                   out: np.ndarray | None = None) -> np.ndarray:
    """(K, 4, 4) float64 ``T(-origin) @ world @ T(geometry_origin)`` for (K, 4, 4)
    affine world matrices and (K, 3) geometry origins (world units), into ``out`` (a
    new array without it; ``out`` may be ``world`` itself).

    The translation is ``((w_i0 g0 + w_i1 g1) + w_i2 g2) + w_i3 - origin_i`` in this
    order, which ``engine.render.backends.numba_world`` writes the same way (the same
    bits on both paths)."""
    g = geometry_origin
    t = world[:, :3, 0] * g[:, 0:1]
    t += world[:, :3, 1] * g[:, 1:2]
    t += world[:, :3, 2] * g[:, 2:3]
    t += world[:, :3, 3]
    t -= origin
    m = world.copy() if out is None else out
    if m is not world:
        m[...] = world
    m[:, :3, 3] = t
    return m


def view_projection(camera: Camera, origin: np.ndarray) -> np.ndarray:
    """(4, 4) float32 world-relative-to-``origin`` -> clip matrix of ``camera``,
    composed in float64: ``P @ V @ T(origin)``."""
    return (camera.view_projection_matrix @ translation_matrix(origin)).astype(np.float32)
