"""One shadowed directional light against the same frame without shadows, in one run.

    .venv/bin/python benchmarks/shadows.py [--frame 1280x720] [--backend numba]
                                           [--frames 9] [--map 2048]

Two scenes, each under one directional light (and an ambient light), whose ``shadows``
is switched off and on between frames taken in turn, so machine load hits them alike:

    bunny   the Stanford bunny (../shared/ref-assets/classic/stanford-bunny.obj, or an
            icosphere of similar size when the assets are not there) standing on a
            plane, auto-framed: the issue's case (target: <= 1.5x with a 2048^2 map)
    game    the coin game of examples/coin_game.py (terrain, 300 coins, rocks and
            crates, the player) after its first frame, its sun shadowed

Times are medians of whole frames (the shadow pass, vertex stage, raster and resolve to
a host image) after a warm-up; the ratio shadows / none is what to compare. Two shadowed
columns, both from the same Renderer: "drawn" draws the map every frame
(``reuse_shadow_maps`` off: what a moving camera, light or caster costs, and what the
target is judged on), "reused" reuses the still scene's map (engine.render.shadows.
MapCache: static shadow caching).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples"))

from engine import (
    AmbientLight,
    DirectionalLight,
    Material,
    Mesh,
    Node,
    PerspectiveCamera,
    Renderer,
    Scene,
)

BUNNY = ROOT.parent / "shared" / "ref-assets" / "classic" / "stanford-bunny.obj"


def _bunny_scene(size, map_size):
    if BUNNY.exists():
        import trimesh

        m = trimesh.load(BUNNY, force="mesh", process=False)
        pos, faces = np.asarray(m.vertices, np.float32), np.asarray(m.faces)
    else:
        from engine.scene.procedural import icosphere

        pos, faces = icosphere(6, radius=0.08)
        pos = pos.astype(np.float32) + [0, 0.08, 0]
    scene = Scene()
    scene.add(Node("bunny", geometry=Mesh(pos, faces, material=Material(
        color=(0.8, 0.6, 0.4), specular=0.3))))
    lo, hi = scene.bounds()
    c, r = (lo + hi) / 2, float(np.max(hi - lo))
    plane = np.array([[-1, 0, -1], [1, 0, -1], [1, 0, 1], [-1, 0, 1]], np.float32) * 1.5 * r
    plane += [c[0], lo[1], c[2]]
    scene.add(Node("plane", geometry=Mesh(plane, [[0, 2, 1], [0, 3, 2]])))
    sun = scene.add(DirectionalLight(intensity=1.2, shadow_map_size=map_size,
                                     position=c + [r, 1.5 * r, 0.6 * r]))
    sun.look_at(c)
    scene.add(AmbientLight(intensity=0.2))
    w, h = size
    cam = scene.add(PerspectiveCamera(fov_y=50, aspect=w / h))
    cam.frame(scene.bounds(), azimuth=30, elevation=25)
    return scene, cam, sun


def _game_scene(size, map_size):
    from coin_game import CoinGame

    app = CoinGame(size=size)
    app.run_headless(1)
    sun = next(n for n in app.scene.traverse() if isinstance(n, DirectionalLight))
    sun.shadow_map_size = map_size
    return app.scene, app.camera, sun


def _measure(scene, cam, sun, size, backend, frames):
    """(median ms without shadows, with the map drawn every frame, with it reused), the
    three frames taken in turn by one Renderer."""
    r = Renderer(scene, cam, size, backend=backend)
    runs = ((False, False), (True, False), (True, True))  # (shadows, reuse the map)
    times = [[] for _ in runs]
    for k in range(frames + 2):
        for (on, reuse), t in zip(runs, times):
            sun.shadows = on
            r.backend.reuse_shadow_maps = reuse
            t0 = time.perf_counter()
            r.render()
            if k >= 2:  # two warm-up frames of each
                t.append(time.perf_counter() - t0)
            assert r.drawn_by == backend, f"drawn by {r.drawn_by}, not {backend}"
    return tuple(statistics.median(t) * 1e3 for t in times)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--frame", default="1280x720")
    p.add_argument("--backend", default="numba")
    p.add_argument("--frames", type=int, default=9)
    p.add_argument("--map", type=int, default=2048, help="shadow map side in texels")
    a = p.parse_args()
    size = tuple(int(x) for x in a.frame.split("x"))
    print(f"{a.backend} backend, {size[0]}x{size[1]}, {a.map}^2 shadow map, median of "
          f"{a.frames} frames each")
    print(f"{'scene':8} {'no shadows ms':>14} {'drawn ms':>9} {'ratio':>6} "
          f"{'reused ms':>10} {'ratio':>6}")
    for name, build in (("bunny", _bunny_scene), ("game", _game_scene)):
        off, on, kept = _measure(*build(size, a.map), size, a.backend, a.frames)
        print(f"{name:8} {off:14.1f} {on:9.1f} {on / off:6.2f} {kept:10.1f} {kept / off:6.2f}")


if __name__ == "__main__":
    main()
