"""Camera tour: a scripted camera move around a real model, rendered to an MP4 headless.

The tour is a CameraPath built in Python: it starts wide and high, spirals down and in
around the model (centripetal Catmull-Rom through the keys, ease-in-out on the last
segment), and the field of view narrows from 50 to 35 degrees (monotone, so it never
overshoots). The path is also saved as a path file that ``frustum render --camera``
and ``frustum view --camera`` accept.

    python examples/camera_tour.py --headless --frames 90 --out out/camera_tour.mp4
    python examples/camera_tour.py                 # plays the tour in a window

Default model: ../shared/ref-assets/classic/stanford-bunny.obj; without it, the engine's
procedural torus knot. ``--model FILE`` takes any file ``engine.io.load`` reads.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine import Node, PerspectiveCamera, PointCloud, Renderer, Scene
from engine.animation.camera_path import CameraPath
from engine.animation.offline import fit_clip_to_path, frame_count, render_motion
from engine.animation.pathfile import save_path
from engine.errors import EngineError
from engine.io.video import open_frame_writer
from engine.progress import Progress
from engine.render.renderer import parse_size

BUNNY = ROOT.parent / "shared" / "ref-assets" / "classic" / "stanford-bunny.obj"


def build_scene(model):
    """Scene with the model (or a procedural knot when ``model`` is None)."""
    scene = Scene("camera_tour", background=(0.04, 0.05, 0.08))
    if model is None:
        from engine.scene.procedural import torus_knot

        pts, colors = torus_knot(40000)
        scene.add(Node("knot", geometry=PointCloud(pts, colors, point_size=2)))
    else:
        from engine.io import load

        scene.add(load(model, point_size=2))
    if scene.bounds() is None:
        raise EngineError(f"{model}: nothing to show (no finite points)")
    return scene


def tour_path(bounds, duration: float) -> CameraPath:
    """A descending spiral around the box ``bounds``: 1.25 turns in ``duration`` s."""
    lo, hi = np.asarray(bounds[0]), np.asarray(bounds[1])
    center = 0.5 * (lo + hi)
    size = float(np.linalg.norm(hi - lo))
    path = CameraPath(interpolation="catmull_rom")
    n = 6
    for i in range(n):
        s = i / (n - 1)
        az = math.radians(30 + 450 * s)
        el = math.radians(40 - 30 * s)
        r = size * (1.7 - 0.6 * s)
        eye = center + r * np.array([math.cos(el) * math.sin(az), math.sin(el),
                                     math.cos(el) * math.cos(az)])
        # drift the aim up a little while closing in: towards the head, not the middle
        target = center + np.array([0.0, 0.05 * size * s, 0.0])
        path.add(duration * s, eye, target=target, fov=50 - 15 * s,
                 easing="ease-in-out" if i == n - 2 else None)
    return path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default=None,
                   help=f"3D file to tour (default: {BUNNY.name} if present, else a knot)")
    p.add_argument("--headless", action="store_true", help="render to --out, no window")
    p.add_argument("--frames", type=int, default=None,
                   help="frames to render (default: the whole tour at --fps)")
    p.add_argument("--fps", type=float, default=30.0)
    p.add_argument("--duration", type=float, default=8.0, help="tour length, seconds")
    p.add_argument("--size", default="640x480", help="WIDTHxHEIGHT (even for MP4)")
    p.add_argument("--out", default=str(ROOT / "out" / "camera_tour.mp4"),
                   help="video (.mp4/.gif) or a folder for PNG frames")
    p.add_argument("--backend", default=None, help="projection backend (default: auto)")
    args = p.parse_args(argv)
    try:
        model = args.model or (BUNNY if BUNNY.exists() else None)
        if model is None:
            print(f"camera_tour: {BUNNY} not found; touring a procedural torus knot")
        scene = build_scene(model)
        camera = scene.add(PerspectiveCamera(fov_y=50))
        path = tour_path(scene.bounds(), args.duration)
        fit_clip_to_path(camera, scene.bounds(), path)
        path.apply(camera, 0.0)
        out = Path(args.out)
        path_file = save_path(path, out.with_name(out.stem + "-path.json"))
        size = parse_size(args.size)
        renderer = Renderer(scene, camera, size, backend=args.backend)
        if not args.headless:
            from engine.controls.controllers import OrbitController
            from engine.display import present
            from engine.display.controls import WindowControls

            center = 0.5 * (scene.bounds()[0] + scene.bounds()[1])
            controls = WindowControls(OrbitController(camera, target=center), renderer,
                                      playback=path)
            shown = present(renderer, out=out.with_suffix(".png"), controller=controls,
                            max_frames=args.frames)
            print(f"path file: {path_file}" + (f"; no window, wrote {shown}" if shown else ""))
            return 0
        n = args.frames or frame_count(path.duration, args.fps)
        writer = open_frame_writer(out, size, args.fps)
        result = render_motion(renderer, path, args.fps, n, writer, Progress(n))
    except (EngineError, ValueError, OSError) as exc:
        print(f"camera_tour: error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {result.path} ({result.frames} frames at {args.fps:g} fps, "
          f"{renderer.batch.vertex_count:,} points, backend {renderer.projector.name}); "
          f"path file {path_file}")
    return 130 if result.interrupted else 0


if __name__ == "__main__":
    raise SystemExit(main())
