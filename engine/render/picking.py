"""Picking: what is under a cursor, with its node and world position.

Two questions, one ``Pick`` answer:

- ``pick_point``: the projected *vertex* nearest to the cursor, from the projector's
  output, so it costs one pass over arrays that already exist (on the device when the
  projector runs there; only the winner travels to the host). For point clouds and
  game entities (``engine.game.App.pick``).
- ``pick_pixel``: what is *drawn* at the cursor (a point splat, a triangle, a line), from
  a software frame's visibility buffer (``Renderer.visibility``): the nearest drawn pixel
  within a radius, its primitive's node, and the world position on the surface there
  (the pixel centre unprojected at its depth with ``Camera.unproject``). The window's
  click (``engine.display.Viewer``) uses it.

Frames: the cursor and ``screen_xy`` are screen pixels of the rendered frame (the
framebuffer: ``App.size``, not window points on a HiDPI display), origin top-left, y
down. A point of an ``Instances`` node reports its instance index.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..arrays import to_host
from ..scene.graph import Node
from .frame import EMPTY_KEY

__all__ = ["Pick", "pick_pixel", "pick_point"]


class Pick(NamedTuple):
    """A picked point.

    index: packed vertex index in the batch.
    node: the scene node that owns it.
    screen_xy: (2,) float pixel position of the point.
    distance_px: distance from the cursor in pixels.
    depth: window depth in [0, 1].
    world: (3,) float64 world position of the point.
    instance: the instance index when ``node`` is an ``engine.Instances``, else None.
    kind: "point" (a vertex), "triangle" (a face) or "line".
    """

    index: int
    node: Node
    screen_xy: np.ndarray
    distance_px: float
    depth: float
    world: np.ndarray
    instance: int | None = None
    kind: str = "point"


def pick_point(projection, batch, x: float, y: float, radius: float = 8.0) -> Pick | None:
    """The visible point nearest to the cursor (x, y) within ``radius`` pixels, or None.

    Among points at the same pixel distance the nearest to the camera (smallest depth)
    wins. ``projection`` is the ``Projection`` the projector returned for ``batch`` this
    frame (screen_xy (N, 2), depth (N,), visible (N,)). Raises ValueError for a negative
    or non-finite radius.
    """
    radius = _radius(radius)
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
    node, instance, world = _vertex_world(batch, index)
    if node is None:
        return None
    return Pick(index, node, np.asarray(to_host(xy[index]), np.float64), float(np.sqrt(best)),
                float(to_host(projection.depth[index])), world, instance)


def pick_pixel(renderer, x: float, y: float, radius: float = 8.0) -> Pick | None:
    """What ``renderer`` draws at screen pixel (x, y), or at the nearest drawn pixel
    within ``radius`` pixels (ties: the smallest depth), or None when nothing is drawn
    there. Renders one software frame (whatever ``renderer.raster`` is) and reads its
    visibility buffer (``Renderer.visibility``), so it costs about one frame.

    Returns a ``Pick``: ``index`` a vertex of the primitive (the point itself, a
    triangle's or line's first vertex), ``kind`` "point", "triangle" or "line" (the
    faces of a hidden-line mesh are not drawn, so only its edges can be picked),
    ``screen_xy`` the drawn pixel's centre, ``depth`` its window depth, ``world`` the
    vertex's world position for a point, else the pixel centre unprojected at its depth
    (a point on the surface or line). Raises ValueError for a negative or non-finite
    radius.
    """
    radius = _radius(radius)
    raster = renderer.raster
    renderer.raster = "software"  # GL keeps no key buffer: this frame is the software one
    try:
        renderer.render(depth=False)
    finally:
        renderer.raster = raster
    w, h = renderer.size
    keys = renderer.visibility()
    r = int(np.ceil(radius))
    cx, cy = int(np.floor(x)), int(np.floor(y))
    x0, x1 = max(cx - r, 0), min(cx + r + 1, w)
    y0, y1 = max(cy - r, 0), min(cy + r + 1, h)
    if x0 >= x1 or y0 >= y1:
        return None
    win = keys[y0:y1, x0:x1]
    px, py = np.meshgrid(np.arange(x0, x1) + 0.5, np.arange(y0, y1) + 0.5)
    d2 = (px - x) ** 2 + (py - y) ** 2
    d2 = np.where((win != EMPTY_KEY) & (d2 <= radius * radius + 0.5), d2, np.inf)
    best = d2.min()
    if not np.isfinite(best):
        return None
    # among the nearest pixels the smallest key: the smallest depth
    tied = np.where(d2 == best, win, EMPTY_KEY)
    j, i = np.unravel_index(int(tied.argmin()), tied.shape)
    key = int(tied[j, i])
    depth = float(np.uint32(key >> 32).view(np.float32))
    sx, sy = float(px[j, i]), float(py[j, i])
    kind, index = _primitive(renderer, key & 0xFFFFFFFF)
    node, instance, world = _vertex_world(renderer.batch, index)
    if node is None:
        return None
    if kind != "point":
        world = renderer.camera.unproject(sx, sy, depth, renderer.size)
    return Pick(index, node, np.array([sx, sy]), float(np.sqrt(best)), depth,
                np.asarray(world, np.float64), instance, kind)


def _radius(radius) -> float:
    radius = float(radius)
    if not (radius >= 0 and np.isfinite(radius)):
        raise ValueError(f"pick radius must be a finite number of pixels >= 0, got {radius}")
    return radius


def _primitive(renderer, pid: int) -> tuple[str, int]:
    """(kind, first vertex) of visibility-buffer id ``pid`` (``Renderer.visibility``)."""
    prims = renderer.primitives
    n = renderer.batch.vertex_count
    n_tri = len(prims.triangles)
    if pid < n:
        return "point", pid
    if pid < n + n_tri:
        return "triangle", int(prims.triangles[pid - n, 0])
    return "line", int(prims.lines[pid - n - n_tri, 0])


def _vertex_world(batch, index: int):
    """(node, instance or None, (3,) float64 world position) of packed vertex ``index``;
    (None, None, None) for a vertex no node owns."""
    node = batch.node_for_vertex(index)
    if node is None:
        return None, None, None
    instance = batch.instance_for_vertex(index)
    local = np.asarray(to_host(batch.positions[index]), np.float64) + node.geometry.origin
    matrix = node.world_matrix if instance is None else node.world_matrices([instance])[0]
    return node, instance, (matrix @ np.append(local, 1.0))[:3]
