"""The orientation gizmo: the world's X, Y and Z axes as the camera sees them, drawn in
a corner of the frame (VTK's orientation marker, pyvista's ``add_axes``).

It is a second, tiny scene rendered by the same renderer code (lines through the line
rasterizer): ``engine.scene.helpers.axes_helper`` seen by an orthographic camera that
has the main camera's rotation and looks at the axes' origin from a fixed distance, so
the triad turns with the view but keeps its size. The result is copied over the
frame's corner where a line was drawn (the frame's own pixels elsewhere), on the host or
on the device, whichever holds the frame.
"""

from __future__ import annotations

import numpy as np

from ..scene.camera import OrthographicCamera
from ..scene.graph import Scene
from ..scene.helpers import axes_helper
from ..scene.transforms import matrix_to_quat

__all__ = ["CORNERS", "OrientationAxes"]

CORNERS = ("bottom-left", "bottom-right", "top-left", "top-right")


class OrientationAxes:
    """A corner axes triad: X red, Y green, Z blue (``engine.scene.helpers.AXIS_COLORS``).

    Args:
        size: the largest side of the square it is drawn in, pixels; the side is also at
            most a quarter of the frame's smaller side (and at least 16 pixels, as far
            as the frame allows), so a small frame keeps most of its picture.
        corner: one of ``CORNERS``.
        margin: gap to the frame's edges, pixels.

    ``renderer.overlays.append(OrientationAxes())`` draws it on every frame of that
    renderer (offline renders, videos, the window). Raises ValueError for a size < 8,
    a negative margin or an unknown corner.
    """

    def __init__(self, size: int = 96, corner: str = "bottom-left", margin: int = 8):
        if corner not in CORNERS:
            raise ValueError(f"corner must be one of {', '.join(CORNERS)}, got {corner!r}")
        if int(size) != size or size < 8:
            raise ValueError(f"gizmo size must be a whole number of pixels >= 8, got {size!r}")
        if int(margin) != margin or margin < 0:
            raise ValueError(f"gizmo margin must be a whole number of pixels >= 0, got {margin!r}")
        self.size, self.corner, self.margin = int(size), corner, int(margin)
        self.scene = Scene("gizmo")
        self.scene.add(axes_helper(1.0))
        # the axes reach 1 from the origin in any direction: a 2.4-high view holds them
        self.camera = self.scene.add(OrthographicCamera(height=2.4, near=0.1, far=10.0))
        self._renderer = None

    def rect(self, frame_size) -> tuple[int, int, int, int]:
        """(x0, y0, side, side): the square in frame pixels (top-left origin, y down)."""
        w, h = frame_size
        side = min(self.size, max(min(w, h) // 4, 16))
        side = max(1, min(side, w - 2 * self.margin, h - 2 * self.margin, w, h))
        x0 = self.margin if "left" in self.corner else w - self.margin - side
        y0 = self.margin if "top" in self.corner else h - self.margin - side
        return max(x0, 0), max(y0, 0), side, side

    def image(self, camera, side: int) -> np.ndarray:
        """(side, side, 4) uint8 RGBA of the triad seen with ``camera``'s rotation:
        alpha 255 on the axes' pixels, 0 elsewhere."""
        from .renderer import Renderer

        rot = np.asarray(camera.world_matrix, np.float64)[:3, :3]
        rot = rot / np.linalg.norm(rot, axis=0)  # a scaled camera keeps its directions
        self.camera.rotation = matrix_to_quat(rot)
        self.camera.position = rot[:, 2] * 3.0  # camera +Z points away from the view
        if self._renderer is None:
            self._renderer = Renderer(self.scene, self.camera, (side, side), backend="numpy")
        elif self._renderer.size != (side, side):
            self._renderer.resize(side, side)
        frame = self._renderer.render()
        out = frame.color.copy()
        out[..., 3] = np.where(frame.depth < 1.0, 255, 0)
        return out

    def draw(self, color, camera):
        """Copy the triad into ``color`` ((H, W, 4) uint8, NumPy or CuPy, in place) for
        ``camera``; returns ``color``."""
        h, w = int(color.shape[0]), int(color.shape[1])
        x0, y0, side, _ = self.rect((w, h))
        img = self.image(camera, side)
        xp = np
        if hasattr(color, "get"):  # a device frame: the small image goes to the device
            import cupy as xp

            img = xp.asarray(img)
        region = color[y0:y0 + side, x0:x0 + side]
        region[...] = xp.where(img[..., 3:4] > 0, img, region)
        return color
