"""Run in a subprocess by test_controllers.py (a window needs its own process):
drives engine controllers through a real pyglet window (headless EGL) with synthetic
events, records keyframes with K, saves them with P, plays them back with Space, and
writes what happened to OUT_DIR/controls.json."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np


def main(out_dir: str) -> int:
    import pyglet.window

    from engine import Node, PerspectiveCamera, PointCloud, Renderer, Scene
    from engine.animation.pathfile import load_path
    from engine.controls.controllers import FlyController, OrbitController
    from engine.display import Viewer
    from engine.display.controls import WindowControls
    from engine.scene.procedural import sphere_points

    out = Path(out_dir)
    key, mouse = pyglet.window.key, pyglet.window.mouse
    scene = Scene()
    pts = sphere_points(2000, seed=3)
    scene.add(Node("ball", geometry=PointCloud(pts, (pts + 1) / 2, point_size=2)))
    camera = scene.add(PerspectiveCamera(fov_y=45, position=(0, 0, 5)))
    renderer = Renderer(scene, camera, (96, 64), backend="numpy")
    orbit = OrbitController(camera)
    controls = WindowControls(orbit, renderer, record_to=out / "rec.toml", record_interval=1.5)
    viewer = Viewer(renderer, raster="software", controller=controls, visible=False)
    w = viewer.window
    r = {}

    def step(dt):
        w.dispatch_events()
        viewer.step(dt)

    w.dispatch_event("on_key_press", key.K, 0)  # key 0 at the start pose
    w.dispatch_event("on_key_press", key.LEFT, 0)
    step(0.5)  # 45 degrees at 90 deg/s
    w.dispatch_event("on_key_release", key.LEFT, 0)
    step(0.5)
    r["azimuth_after_arrow"] = orbit.azimuth
    w.dispatch_event("on_mouse_drag", 0, 0, 0, -100, mouse.LEFT, 0)  # drag down: camera up
    w.dispatch_event("on_mouse_scroll", 0, 0, 0, 2)
    step(0.0)
    r["elevation_after_drag"] = orbit.elevation
    r["distance_after_scroll"] = orbit.distance
    w.dispatch_event("on_key_press", key.K, 0)  # key 1
    w.dispatch_event("on_key_press", key.P, 0)  # save
    step(0.0)
    r["recorded_times"] = [k.time for k in load_path(out / "rec.toml").keyframes]
    r["recorded_pos1"] = load_path(out / "rec.toml").keyframes[1].position.tolist()
    r["camera_pos"] = camera.position.tolist()
    w.dispatch_event("on_key_press", key.SPACE, 0)  # play the recording
    step(0.0)
    r["playing"] = controls.playing
    step(0.75)  # half-way between the two keys
    expected = controls.recorded.pose(0.75).position
    r["playback_error"] = float(np.abs(camera.position - expected).max())
    w.dispatch_event("on_key_press", key.SPACE, 0)  # stop: control returns to the orbit
    step(0.0)
    r["distance_after_stop"] = orbit.distance
    r["playing_after_stop"] = controls.playing

    fly = FlyController(camera, speed=2.0)
    viewer.controller = WindowControls(fly, renderer)
    start = camera.position.copy()
    fwd = camera.forward.copy()
    w.dispatch_event("on_key_press", key.W, 0)
    w.dispatch_event("on_key_press", key.LSHIFT, 0)
    step(0.25)  # 2 units/s * 4 (shift) * 0.25 s = 2 units forward
    r["fly_moved"] = float(np.dot(camera.position - start, fwd))
    viewer.close()
    (out / "controls.json").write_text(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
