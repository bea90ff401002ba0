"""Command line: ``frustum`` (also ``python -m engine``).

Errors in the user's input (a bad file, a bad argument) print one line naming the
problem and exit with status 2; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

from .errors import EngineError

log = logging.getLogger("engine")


def _camera_spec(text: str) -> tuple[float, float, float | None]:
    """'az,el[,dist]' in degrees/world units -> (azimuth, elevation, distance or None)."""
    parts = text.split(",")
    try:
        vals = [float(p) for p in parts]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--camera must be AZ,EL[,DIST] numbers, got {text!r}")
    if len(vals) not in (2, 3) or any(v != v for v in vals):
        raise argparse.ArgumentTypeError(f"--camera must be AZ,EL[,DIST], got {text!r}")
    if len(vals) == 3 and vals[2] <= 0:
        raise argparse.ArgumentTypeError(f"--camera distance must be > 0, got {vals[2]}")
    return vals[0], vals[1], vals[2] if len(vals) == 3 else None


def _size(text: str):
    from .renderer import parse_size

    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc))


def _positive(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}")
    if not v > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text!r}")
    return v


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="frustum",
        description="Frustum: render scenes and 3D files (points) with a GPU or CPU backend.",
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks and debug logs")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    r = sub.add_parser("render", help="render a scene or 3D file to an image, headless",
                       description="Render SOURCE ('demo' or a 3D file) to an image file.")
    r.add_argument("source", nargs="?", default="demo",
                   help="'demo' (built-in procedural scene) or a 3D file (default: demo)")
    r.add_argument("--out", "-o", default="frustum.png", help="output image (.png/.jpg)")
    _add_scene_options(r)
    r.add_argument("--raster", choices=["software", "gl"], default="software",
                   help="how points are drawn: 'software' = the engine's z-buffered "
                        "rasterizer, no GL needed (default); 'gl' = GL_POINTS on an "
                        "offscreen EGL context")
    r.set_defaults(func=cmd_render)

    v = sub.add_parser(
        "view", help="show scenes or 3D files in a window (a PNG when there is no display)",
        description="Show FILE(s) ('demo' or 3D files, drawn together) in a window at the "
                    "display's refresh rate. Keys: Esc quits, F12 saves a screenshot PNG in "
                    "the current folder; the title shows the point count and FPS. Without "
                    "a display the scene is drawn offscreen (GL, else the software "
                    "rasterizer) into --out and the path is printed.")
    v.add_argument("files", nargs="+", metavar="FILE", help="'demo' or a 3D file")
    _add_scene_options(v)
    v.add_argument("--raster", choices=["auto", "gl", "software"], default="auto",
                   help="'gl' = GL_POINTS from the projected buffer; 'software' = the "
                        "engine's rasterizer shown as a texture; 'auto' (default) = gl on a "
                        "GPU driver, software on a CPU one (Mesa llvmpipe)")
    v.add_argument("--out", "-o", default="frustum-view.png",
                   help="image written when no window can be opened (default: %(default)s)")
    v.add_argument("--frames", type=int, default=None, metavar="N",
                   help="close the window after N frames (default: run until Esc)")
    v.set_defaults(func=cmd_view)
    return p


def _add_scene_options(p: argparse.ArgumentParser):
    p.add_argument("--size", type=_size, default=(1280, 720), help="WIDTHxHEIGHT pixels")
    p.add_argument("--camera", type=_camera_spec, default=None, metavar="AZ,EL[,DIST]",
                   help="orbit camera: azimuth and elevation in degrees, distance in world "
                        "units (default: auto-framed)")
    p.add_argument("--point-size", type=_positive, default=None, metavar="N",
                   help="splat size in pixels (default: per geometry)")
    p.add_argument("--backend", choices=["auto", "cupy", "numba", "numpy"], default=None,
                   help="projection backend (default: $ENGINE_BACKEND or auto)")


def load_source(source: str):
    """(scene, camera) for 'demo' or a 3D file path."""
    from .procedural import demo_scene

    if source == "demo":
        return demo_scene()
    raise EngineError(f"{source}: loading 3D files is not available yet")


def cmd_render(args) -> int:
    from .io.image import save_image
    from .renderer import Renderer

    scene, camera = load_source(args.source)
    if args.camera is not None:
        az, el, dist = args.camera
        camera.frame(scene.bounds(), azimuth=az, elevation=el, distance=dist)
    renderer = Renderer(scene, camera, args.size, backend=args.backend,
                        point_size=args.point_size, raster=args.raster)
    t0 = time.perf_counter()
    try:
        frame = renderer.render()
    finally:
        renderer.close()
    dt = time.perf_counter() - t0
    out = save_image(args.out, frame.color)
    print(f"wrote {out.resolve()} ({args.size[0]}x{args.size[1]}, "
          f"{renderer.batch.vertex_count} points, backend {renderer.projector.name}, "
          f"raster {renderer.raster}, {dt * 1000:.0f} ms)")
    return 0


def load_sources(sources):
    """(scene, camera) showing every source together; one source is ``load_source``'s.

    Several sources are moved under one new scene (background of the first, cameras
    dropped) and a new camera is framed on the union of their bounds. Raises
    EngineError when there is nothing to show.
    """
    from .camera import Camera, PerspectiveCamera
    from .scene import Scene

    if len(sources) == 1:
        return load_source(sources[0])
    scene = None
    for source in sources:
        part, _ = load_source(source)
        if scene is None:
            scene = Scene("view", background=part.background)
        for child in part.children:
            if not isinstance(child, Camera):
                scene.add(child)
    bounds = scene.bounds()
    if bounds is None:
        raise EngineError(f"nothing to show in {', '.join(sources)}: no finite points")
    camera = scene.add(PerspectiveCamera(fov_y=50.0, name="camera"))
    camera.frame(bounds)
    return scene, camera


def cmd_view(args) -> int:
    from .display import present
    from .renderer import Renderer

    if args.frames is not None and args.frames < 1:
        raise EngineError(f"--frames must be >= 1, got {args.frames}")
    scene, camera = load_sources(args.files)
    if args.camera is not None:
        az, el, dist = args.camera
        camera.frame(scene.bounds(), azimuth=az, elevation=el, distance=dist)
    renderer = Renderer(scene, camera, args.size, backend=args.backend,
                        point_size=args.point_size)
    try:
        path = present(renderer, raster=args.raster, out=args.out, max_frames=args.frames)
    finally:
        renderer.close()
    if path is not None:
        print(f"wrote {path.resolve()} ({renderer.size[0]}x{renderer.size[1]}, "
              f"{renderer.batch.vertex_count} points, raster {renderer.raster})")
    return 0


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.INFO,
                        format="frustum: %(message)s", stream=sys.stderr)
    try:
        return int(args.func(args) or 0)
    except (EngineError, ValueError, OSError) as exc:
        if args.debug:
            raise
        print(f"frustum: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("frustum: interrupted", file=sys.stderr)
        return 130
