"""Drives the viewer aids in a real pyglet window for tests/display/test_aids.py, in its
own process (an X11 window and an EGL standalone context must not share a process).

    python tests/display/aids_probe.py OUT_DIR RASTER

Opens a Viewer on a white cube in front of a white background and reads the window's
pixels back after each step: nothing, G (grid), B (box), X (gizmo), G again (grid off),
and a click on the cube. Writes OUT_DIR/shots.npz (one (H, W, 4) array per step) and
OUT_DIR/result.json (the camera, the caption after the click, the pick).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

SIZE = (200, 150)


def aids_scene():
    """(scene, camera): a unit cube at the origin seen from above a corner."""
    import trimesh

    from engine import Mesh, Node, PerspectiveCamera, Scene

    box = trimesh.creation.box((1.0, 1.0, 1.0))
    scene = Scene("aids", background="white")
    scene.add(Node("cube", geometry=Mesh(box.vertices, box.faces)))
    cam = scene.add(PerspectiveCamera(fov_y=40)).frame(scene.bounds(), azimuth=30, elevation=25)
    return scene, cam


def main(out_dir: str, raster: str) -> int:
    import logging

    import pyglet.window

    logging.basicConfig(level=logging.INFO, format="%(message)s")  # the help line

    from engine import Renderer
    from engine.display import Viewer

    out = Path(out_dir)
    scene, camera = aids_scene()
    renderer = Renderer(scene, camera, SIZE, backend="numba")
    viewer = Viewer(renderer, raster=raster, visible=False)
    key, mouse = pyglet.window.key, pyglet.window.mouse
    w = viewer.window
    shots = {}

    def shot(name, *symbols):
        for s in symbols:
            w.dispatch_event("on_key_press", s, 0)
        w.dispatch_events()
        viewer.draw()
        shots[name] = viewer.read_pixels()
        viewer.window.flip()

    shot("plain")
    shot("grid", key.G)
    shot("grid_box", key.B)
    shot("grid_box_axes", key.X)
    shot("box_axes", key.G)
    # a click on the cube's centre: press and release at one point (window points,
    # bottom-left origin; no HiDPI here, so frame pixels too)
    camera.set_viewport(*SIZE)
    xy, _, _ = camera.project((0.0, 0.0, 0.0))
    px, py = float(xy[0, 0]), float(SIZE[1] - xy[0, 1])
    w.dispatch_event("on_mouse_press", px, py, mouse.LEFT, 0)
    w.dispatch_event("on_mouse_release", px, py, mouse.LEFT, 0)
    w.dispatch_events()
    pick = viewer.aids.last_pick
    result = {
        "raster": viewer.raster,
        "caption": viewer.caption_text(),
        "pick": None if pick is None else {"node": pick.node.name, "kind": pick.kind,
                                           "world": list(map(float, pick.world)),
                                           "screen_xy": list(map(float, pick.screen_xy))},
        "state": [viewer.aids.grid, viewer.aids.bbox, viewer.aids.axes],
    }
    viewer.close()
    np.savez(out / "shots.npz", **shots)
    (out / "result.json").write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
