"""Viewer aids a newcomer expects from a 3D viewer (pyvista, Open3D): a ground grid, a
bounding box, an orientation gizmo, and clicking to see what is under the cursor.

``ViewerAids`` switches them on a ``Renderer``, so they work the same in a window
(``engine.display.Viewer`` binds the keys below) and in scripts or offline renders
(``aids.show_grid(True)`` then ``renderer.render()``)::

    G       ground grid under the scene (``engine.scene.helpers.ground_grid``)
    B       bounding box of the scene (``engine.scene.helpers.box_helper``)
    X       orientation gizmo in the bottom-left corner (``engine.render.gizmo``)
    click   the node and world position under the cursor (``pick_pixel`` of
            ``engine.render.picking``), shown in the window title and logged

The grid and the box are line nodes added to the renderer's scene (named
``AID_NODE_NAMES``), sized from the scene's bounds without the aids themselves, when
they are switched on (switch off and on again after the scene grows).
"""

from __future__ import annotations

import logging

from ..render.gizmo import OrientationAxes
from ..render.picking import Pick, pick_pixel
from ..scene.helpers import box_helper, ground_grid

__all__ = ["AID_KEYS", "AID_NODE_NAMES", "HELP_LINE", "ViewerAids", "describe_pick"]

log = logging.getLogger("engine")

AID_KEYS = {"g": "grid", "b": "bbox", "x": "axes"}
AID_NODE_NAMES = {"grid": "frustum:grid", "bbox": "frustum:bbox"}
HELP_LINE = "G grid, B box, X axes, click picks, F12 screenshot, Esc quits"


def describe_pick(pick: Pick | None) -> str:
    """One line for a pick: 'NODE (KIND) at (x, y, z)', or 'nothing under the cursor'."""
    if pick is None:
        return "nothing under the cursor"
    where = ", ".join(f"{v:.4g}" for v in pick.world)
    inst = "" if pick.instance is None else f" instance {pick.instance}"
    return f"{pick.node.name}{inst} ({pick.kind}) at ({where})"


class ViewerAids:
    """The grid, box and gizmo of ``renderer`` (an ``engine.Renderer``), all off at first.

    Attributes:
        grid, bbox, axes: whether each is shown.
        gizmo: the ``OrientationAxes`` put in ``renderer.overlays`` while ``axes`` is on.
        last_pick: the latest ``pick``'s result (None before, or when nothing was hit).
        picks: how many picks were made.
    """

    def __init__(self, renderer, grid: bool = False, bbox: bool = False, axes: bool = False):
        self.renderer = renderer
        self.gizmo = OrientationAxes()
        self.grid = self.bbox = self.axes = False
        self._nodes: dict[str, object] = {}
        self.last_pick: Pick | None = None
        self.picks = 0
        self.show_grid(grid)
        self.show_bbox(bbox)
        self.show_axes(axes)

    def _scene_bounds(self):
        """The scene's bounds without the aid nodes."""
        scene = self.renderer.scene
        shown = [n for n in self._nodes.values() if n.visible]
        for n in shown:
            n.visible = False
        try:
            return scene.bounds()
        finally:
            for n in shown:
                n.visible = True

    def _set_node(self, what: str, on: bool, make):
        old = self._nodes.pop(what, None)
        if old is not None:
            self.renderer.scene.remove(old)
        if on:
            bounds = self._scene_bounds()
            if bounds is None:
                log.warning("no %s: the scene has no finite points", what)
                return False
            node = make(bounds, name=AID_NODE_NAMES[what])
            self._nodes[what] = self.renderer.scene.add(node)
        return on

    def show_grid(self, on: bool = True) -> bool:
        """Show or hide the ground grid (rebuilt from the current bounds). Returns the
        new state (False when the scene has nothing to size it by)."""
        self.grid = self._set_node("grid", bool(on), ground_grid)
        return self.grid

    def show_bbox(self, on: bool = True) -> bool:
        """Show or hide the scene's bounding box (rebuilt from the current bounds)."""
        self.bbox = self._set_node("bbox", bool(on), box_helper)
        return self.bbox

    def show_axes(self, on: bool = True) -> bool:
        """Show or hide the orientation gizmo (an overlay of the renderer)."""
        overlays = self.renderer.overlays
        if self.gizmo in overlays:
            overlays.remove(self.gizmo)
        if on:
            overlays.append(self.gizmo)
        self.axes = bool(on)
        return self.axes

    def toggle(self, what: str) -> bool:
        """Flip "grid", "bbox" or "axes"; returns the new state. Raises ValueError for
        another name."""
        shows = {"grid": self.show_grid, "bbox": self.show_bbox, "axes": self.show_axes}
        if what not in shows:
            raise ValueError(f"aid must be one of {', '.join(shows)}, got {what!r}")
        state = shows[what](not getattr(self, what))
        log.info("%s %s", what, "on" if state else "off")
        return state

    def pick(self, x: float, y: float, radius: float = 8.0) -> Pick | None:
        """What is drawn at frame pixel (x, y) (top-left origin, y down), within
        ``radius`` pixels: ``pick_pixel`` on the renderer; kept in ``last_pick`` and
        logged. The aids themselves can be picked too (their node names say so)."""
        self.last_pick = pick_pixel(self.renderer, x, y, radius)
        self.picks += 1
        log.info("picked %s", describe_pick(self.last_pick))
        return self.last_pick
