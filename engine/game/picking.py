"""Picking: the projected point (and its node) nearest to a cursor, from the projector's
output, so it costs one pass over arrays that already exist (on the device when the
projector runs there; only the winner travels to the host).

Frames: the cursor and ``screen_xy`` are screen pixels of the rendered frame (the
framebuffer: ``App.size``, not window points on a HiDPI display), origin top-left, y
down. A point of an ``Instances`` node reports its instance index.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..arrays import to_host
from ..scene.graph import Node

__all__ = ["Pick", "pick_point"]


class Pick(NamedTuple):
    """A picked point.

    index: packed vertex index in the batch.
    node: the scene node that owns it.
    screen_xy: (2,) float pixel position of the point.
    distance_px: distance from the cursor in pixels.
    depth: window depth in [0, 1].
    world: (3,) float64 world position of the point.
    instance: the instance index when ``node`` is an ``engine.Instances``, else None.
    """

    index: int
    node: Node
    screen_xy: np.ndarray
    distance_px: float
    depth: float
    world: np.ndarray
    instance: int | None = None


def pick_point(projection, batch, x: float, y: float, radius: float = 8.0) -> Pick | None:
    """The visible point nearest to the cursor (x, y) within ``radius`` pixels, or None.

    Among points at the same pixel distance the nearest to the camera (smallest depth)
    wins. ``projection`` is the ``Projection`` the projector returned for ``batch`` this
    frame (screen_xy (N, 2), depth (N,), visible (N,)). Raises ValueError for a negative
    or non-finite radius.
    """
    radius = float(radius)
    if not (radius >= 0 and np.isfinite(radius)):
        raise ValueError(f"pick radius must be a finite number of pixels >= 0, got {radius}")
    xy, vis = projection.screen_xy, projection.visible
    n = xy.shape[0]
    if n == 0:
        return None
    xp = batch.xp
    d2 = (xy[:, 0] - np.float32(x)) ** 2 + (xy[:, 1] - np.float32(y)) ** 2
    d2 = xp.where(vis, d2, xp.float32(np.inf))
    best = float(d2.min())
    if not best <= radius * radius:
        return None
    # Ties in distance go to the smallest depth.
    tied = xp.where(d2 == xp.float32(best), projection.depth, xp.float32(np.inf))
    index = int(tied.argmin())
    node = batch.node_for_vertex(index)
    if node is None:
        return None
    instance = batch.instance_for_vertex(index)
    local = np.asarray(to_host(batch.positions[index]), np.float64) + node.geometry.origin
    matrix = node.world_matrix if instance is None else node.world_matrices([instance])[0]
    world = (matrix @ np.append(local, 1.0))[:3]
    return Pick(index, node, np.asarray(to_host(xy[index]), np.float64), float(np.sqrt(best)),
                float(to_host(projection.depth[index])), world, instance)
