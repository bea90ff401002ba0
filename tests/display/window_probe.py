"""Drives a real pyglet window for tests/display/test_window.py, in its own process (an X11
window and an EGL standalone context must not share a process).

    python tests/display/window_probe.py OUT_DIR RASTER

Opens a Viewer on ``probe_scene()``, runs frames with a recording controller and a
per-frame callback, presses F12, resizes, presses Esc, and writes into OUT_DIR:
``frame.png`` (screenshot of frame 2, before any resize) and ``result.json``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np

SIZE = (161, 120)  # odd width on purpose: exercises alignment-1 reads


def probe_scene(tone_mapped: bool = False, fogged: bool = False, blend: bool = False):
    """(scene, camera): 3000 random coloured points of sizes 1-4 around a lit, partly
    textured mesh (a surface and points in one depth buffer), in front of a camera;
    ``tone_mapped``: exposure 1.5 and the PBR Neutral tone map, which GLSL does not draw;
    ``fogged``: linear fog into a sky gradient (engine.render.gl.atmosphere in GL);
    ``blend``: two overlapping BLEND quads (red and green at alpha 0.5, unlit) in front
    of the ball (the transparency layers)."""
    import trimesh

    from engine import Mesh, Node, PerspectiveCamera, PointCloud, Scene
    from engine.scene.material import Material, Sampler, Texture

    rng = np.random.default_rng(7)
    scene = Scene("probe", background=(0.1, 0.2, 0.3))
    for i, size in enumerate((1, 2, 3, 4)):
        pts = rng.uniform(-1, 1, (750, 3))
        cols = rng.integers(0, 256, (750, 3), dtype=np.uint8)
        scene.add(Node(f"cloud{i}", geometry=PointCloud(pts, cols, point_size=size)))
    ico = trimesh.creation.icosphere(subdivisions=3, radius=0.6)
    v = np.asarray(ico.vertices)
    uv = np.stack([np.arctan2(v[:, 2], v[:, 0]) / (2 * np.pi) + 0.5, v[:, 1] / 1.2 + 0.5], axis=1)
    checker = (np.indices((4, 4)).sum(axis=0) % 2 * 200 + 40).astype(np.uint8)
    tex = Texture(np.dstack([checker, checker // 2, 255 - checker]), Sampler(filter="nearest"))
    scene.add(Node("ball", geometry=Mesh(v.astype(np.float32), ico.faces, uvs=uv, material=Material(
        color=(1.0, 0.9, 0.8), texture=tex, specular=0.4))))
    camera = scene.add(PerspectiveCamera(fov_y=60, position=(0.3, 0.4, 3.0)))
    camera.look_at((0, 0, 0))
    if tone_mapped:
        scene.exposure, scene.tone_map = 1.5, "pbr-neutral"
    if fogged:
        from engine import Fog, Sky

        scene.fog = Fog("linear", start=2.0, end=4.5)
        scene.sky = Sky("#ffa040", "#2040c0", ground="#204020")
    if blend:
        for name, color, x, z in (("red", (1, 0, 0, 0.5), -0.15, 1.0),
                                  ("green", (0, 1, 0, 0.5), 0.15, 1.3)):
            q = np.array([[-0.4, -0.4, 0], [0.4, -0.4, 0], [0.4, 0.4, 0], [-0.4, 0.4, 0]])
            q = (q + [x, 0, z]).astype(np.float32)
            scene.add(Node(name, geometry=Mesh(q, [[0, 1, 2], [0, 2, 3]], material=Material(
                color=color, shading="unlit", blend=True, double_sided=True))))
    return scene, camera


class RecordingController:
    """Counts what the window forwards to it."""

    def __init__(self):
        self.ticks = 0
        self.dt_total = 0.0
        self.events: dict[str, int] = {}

    def tick(self, dt):
        self.ticks += 1
        self.dt_total += dt

    def _count(self, name):
        self.events[name] = self.events.get(name, 0) + 1

    def on_key_press(self, symbol, modifiers):
        self._count("on_key_press")

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
        self._count("on_mouse_drag")

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y):
        self._count("on_mouse_scroll")

    def on_deactivate(self):
        self._count("on_deactivate")


def main(out_dir: str, raster: str) -> int:
    import pyglet.window

    from engine import Renderer
    from engine.display import Viewer

    out = Path(out_dir)
    # "gl+tonemap": the tone-mapped scene; "gl+fog" fogged; "gl+blend" with BLEND quads
    raster, _, variant = raster.partition("+")
    scene, camera = probe_scene(tone_mapped=variant == "tonemap", fogged=variant == "fog",
                                blend=variant == "blend")
    # PROBE_MSAA: samples per pixel (the test's msaa cases)
    renderer = Renderer(scene, camera, SIZE, backend="numpy",
                        msaa=int(os.environ.get("PROBE_MSAA", "1")))
    controller = RecordingController()
    callbacks = []
    viewer = Viewer(renderer, raster=raster, controller=controller,
                    on_frame=lambda v, dt: callbacks.append(v.frames),
                    visible=False, screenshot_dir=out)
    key, mouse = pyglet.window.key, pyglet.window.mouse
    viewer.request_screenshot(out / "frame.png")
    viewer.run(max_frames=2)  # run() closes the window at the end; reopen below
    first = {"frames": viewer.frames, "viewport": list(viewer.viewport[:2]),
             "gl_renderer": viewer.gl_renderer, "raster": viewer.raster,
             "presented_by": viewer.presented_by}

    viewer = Viewer(renderer, raster=raster, controller=controller,
                    visible=False, screenshot_dir=out)
    w = viewer.window
    w.dispatch_event("on_key_press", key.A, 0)
    w.dispatch_event("on_mouse_drag", 10, 10, 3, -2, mouse.LEFT, 0)
    w.dispatch_event("on_mouse_scroll", 10, 10, 0, 1)
    w.dispatch_event("on_deactivate")  # focus lost: the controller releases its keys
    w.dispatch_event("on_key_press", key.F12, 0)  # handled by the window, not forwarded
    w.dispatch_events()  # events dispatched from outside the loop are queued until here
    viewer.step(1 / 60)
    f12 = viewer.last_screenshot
    w.set_size(200, 100)
    w.dispatch_events()
    resized = {"viewport": list(viewer.viewport), "renderer_size": list(renderer.size)}
    viewer.step(1 / 60)
    resized["camera_aspect"] = camera.aspect
    resized["pixels_shape"] = list(viewer.read_pixels().shape)
    w.dispatch_event("on_key_press", key.ESCAPE, 0)
    w.dispatch_events()
    closed_by_esc = viewer.closed
    frames_after_esc = viewer.run()  # returns at once: Esc already asked to close
    result = {
        "first": first,
        "ticks": controller.ticks,
        "events": controller.events,
        "callbacks": callbacks,
        "f12": str(f12) if f12 else None,
        "resized": resized,
        "closed_by_esc": closed_by_esc,
        "frames_after_esc": frames_after_esc,
    }
    (out / "result.json").write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
