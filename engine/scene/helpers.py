"""Viewer aids as line geometry: a ground grid, coordinate axes and a bounding box.

Each function returns a ``Node`` holding a ``Lines`` geometry in the world frame (the
node's own transform is the identity), drawn by the renderer's line pipeline like any
other lines, in offline renders and in the window alike (``frustum render --grid
--axes --bbox``, and the window's G / X / B keys). Add it with ``scene.add(node)``; a
helper node is part of ``scene.bounds()`` once added, so compute bounds (and frame the
camera) before adding it.

The default colours have a contrast ratio of at least 3:1 (WCAG 2.1 non-text contrast)
against both a black and a white background, so the aids stay visible on either:
grid grey ``GRID_COLOR``, box ``BOX_COLOR`` and the axes ``AXIS_COLORS`` (X red, Y green,
Z blue, the usual convention of 3D tools).
"""

from __future__ import annotations

import math

import numpy as np

from .color import as_rgba
from .geometry import Lines
from .graph import Node

__all__ = ["AXIS_COLORS", "BOX_COLOR", "GRID_COLOR", "axes_helper", "box_helper",
           "grid_helper", "ground_grid", "nice_step"]

GRID_COLOR = (0.5, 0.5, 0.5, 1.0)
BOX_COLOR = (0.85, 0.2, 0.6, 1.0)
AXIS_COLORS = ((1.0, 0.0, 0.0, 1.0), (0.0, 0.6, 0.0, 1.0), (0.2, 0.4, 1.0, 1.0))


def _bounds(bounds, name: str) -> np.ndarray:
    b = np.asarray(bounds, np.float64) if bounds is not None else None
    if b is None or b.shape != (2, 3) or not np.all(np.isfinite(b)) or np.any(b[1] < b[0]):
        raise ValueError(f"{name}: bounds must be a finite (2, 3) [min, max] array with "
                         f"min <= max, got {bounds!r}")
    return b


def _positive(value, name: str) -> float:
    v = float(value)
    if not (v > 0 and math.isfinite(v)):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return v


def _colors(color, n: int, name: str) -> np.ndarray:
    return np.tile(np.asarray(as_rgba(color, name), np.float32), (n, 1))


def grid_helper(size: float = 10.0, divisions: int = 10, center=(0.0, 0.0, 0.0),
                color=GRID_COLOR, name: str = "grid") -> Node:
    """A square grid on the horizontal XZ plane (the ground, +Y up): ``divisions + 1``
    lines along X and as many along Z, ``size`` world units wide, centred on ``center``
    (its y is the plane's height).

    Raises ValueError for a size that is not a finite number > 0 or divisions not a whole
    number in [1, 10000].
    """
    size = _positive(size, "grid size")
    if int(divisions) != divisions or not 1 <= divisions <= 10000:
        raise ValueError(f"grid divisions must be a whole number in [1, 10000], got {divisions!r}")
    divisions = int(divisions)
    c = np.asarray(center, np.float64).reshape(3)
    t = np.linspace(-0.5 * size, 0.5 * size, divisions + 1)
    k = divisions + 1
    ends = np.empty((2 * k, 2, 3))
    ends[:k, :, 0] = t[:, None]                                   # lines along Z, x = t
    ends[:k, 0, 2], ends[:k, 1, 2] = -0.5 * size, 0.5 * size
    ends[k:, :, 2] = t[:, None]                                   # lines along X, z = t
    ends[k:, 0, 0], ends[k:, 1, 0] = -0.5 * size, 0.5 * size
    ends[..., 1] = 0.0
    positions = (ends.reshape(-1, 3) + c).astype(np.float32)
    segments = np.arange(len(positions)).reshape(-1, 2)
    return Node(name, geometry=Lines(positions, segments,
                                     colors=_colors(color, len(positions), "grid color")))


def nice_step(span: float, target: int = 10) -> float:
    """The 1, 2 or 5 x 10^k spacing nearest above ``span / target`` (grid and ruler
    spacing). Raises ValueError for a span that is not a finite number > 0."""
    raw = _positive(span, "span") / target
    exp = math.floor(math.log10(raw))
    for m in (1.0, 2.0, 5.0, 10.0):
        if m * 10.0 ** exp >= raw * (1 - 1e-12):
            return m * 10.0 ** exp
    return 10.0 ** (exp + 1)


def ground_grid(bounds, color=GRID_COLOR, name: str = "grid") -> Node:
    """A ``grid_helper`` under a scene: on the plane y = ``bounds`` min y, centred on the
    bounds' XZ centre snapped to the grid spacing, covering the XZ footprint with a
    margin, with a 1, 2 or 5 x 10^k spacing (``nice_step``) giving about ten cells across
    the larger of the footprint's sides (a flat or point-sized scene gets a grid as wide
    as its height, or one unit). Raises ValueError for bounds that are not a finite
    (2, 3) [min, max] array."""
    b = _bounds(bounds, "ground_grid")
    extent = b[1] - b[0]
    span = max(extent[0], extent[2]) or extent[1] or 1.0
    step = nice_step(span)
    half = math.ceil((0.5 * span) / step - 1e-9) + 1  # cells from the centre, one spare
    centre = np.round(0.5 * (b[0] + b[1]) / step) * step
    centre[1] = b[0, 1]
    return grid_helper(2 * half * step, 2 * half, centre, color, name)


def axes_helper(length: float = 1.0, origin=(0.0, 0.0, 0.0), colors=AXIS_COLORS,
                name: str = "axes") -> Node:
    """Three segments from ``origin`` along +X, +Y and +Z of the world frame, ``length``
    world units long, coloured ``colors`` (X, Y, Z). Raises ValueError for a length that
    is not a finite number > 0 or not three colours."""
    length = _positive(length, "axes length")
    if len(colors) != 3:
        raise ValueError(f"axes colors must be three colours (X, Y, Z), got {colors!r}")
    o = np.asarray(origin, np.float64).reshape(3)
    positions = np.repeat(o[None], 6, axis=0)
    positions[1::2] += np.eye(3) * length
    rgba = np.repeat([as_rgba(c, "axes colors") for c in colors], 2, axis=0)
    return Node(name, geometry=Lines(positions.astype(np.float32), [[0, 1], [2, 3], [4, 5]],
                                     colors=rgba.astype(np.float32)))


def box_helper(bounds, color=BOX_COLOR, name: str = "bbox") -> Node:
    """The 12 edges of an axis-aligned box ``bounds`` ((2, 3) [min, max], world frame),
    e.g. ``scene.bounds()``. Raises ValueError for bounds that are not a finite (2, 3)
    array with min <= max."""
    b = _bounds(bounds, "box_helper")
    corners = np.array([[b[i, 0], b[j, 1], b[k, 2]] for i in (0, 1) for j in (0, 1)
                        for k in (0, 1)], np.float32)  # corner index = 4 i + 2 j + k
    edges = [(a, a | bit) for a in range(8) for bit in (1, 2, 4) if not a & bit]
    return Node(name, geometry=Lines(corners, edges, colors=_colors(color, 8, "box color")))
