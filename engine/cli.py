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
    r.add_argument("--size", type=_size, default=(1280, 720), help="WIDTHxHEIGHT pixels")
    r.add_argument("--camera", type=_camera_spec, default=None, metavar="AZ,EL[,DIST]",
                   help="orbit camera: azimuth and elevation in degrees, distance in world "
                        "units (default: auto-framed)")
    r.add_argument("--point-size", type=_positive, default=None, metavar="N",
                   help="splat size in pixels (default: per geometry)")
    r.add_argument("--backend", choices=["auto", "cupy", "numba", "numpy"], default=None,
                   help="projection backend (default: $ENGINE_BACKEND or auto)")
    r.set_defaults(func=cmd_render)
    return p


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
                        point_size=args.point_size)
    t0 = time.perf_counter()
    frame = renderer.render()
    dt = time.perf_counter() - t0
    out = save_image(args.out, frame.color)
    print(f"wrote {out.resolve()} ({args.size[0]}x{args.size[1]}, "
          f"{renderer.batch.vertex_count} points, backend {renderer.projector.name}, "
          f"{dt * 1000:.0f} ms)")
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
