"""Command line: ``frustum`` (also ``python -m engine``).

Errors in the user's input (a bad file, a bad argument) print one line naming the
problem and exit with status 2; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
import time
from pathlib import Path

from ..errors import EngineError
from ..scene.graph import DRAW_MODES
from ..scene.material import SHADINGS
from .args import (
    ArgumentParser,
    FileCamera,
    _camera_spec,
    _debug_option,
    _positive,
    _sizes,
    color_arg,
    count_arg,
    index_arg,
    size_arg,
)

log = logging.getLogger("engine")


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog="frustum",
        description="Frustum: render scenes and 3D files (points) with a GPU or CPU backend.",
    )
    _debug_option(p, False)
    # --debug is accepted after the subcommand too; SUPPRESS keeps the top-level value
    # when it is not given there.
    common = argparse.ArgumentParser(add_help=False)
    _debug_option(common, argparse.SUPPRESS)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    r = sub.add_parser(
        "render", parents=[common], help="render a scene or 3D file to an image or a video, headless",
        description="Render SOURCE ('demo' or a 3D file) to an image file, or - when --out "
                    "is .mp4, .gif or a folder - to a video/PNG frames along a camera path "
                    "(--camera path.json|.toml; without one, a turntable orbit). Frame k is "
                    "rendered at t = k / fps; Ctrl-C stops and keeps the frames so far.")
    r.add_argument("source", nargs="?", default="demo",
                   help="'demo' (built-in procedural scene) or a 3D file: .obj, .ply, .gltf, "
                        ".glb, .stl, .las, .laz, .pcd, .xyz, .pts or .txt (default: demo)")
    r.add_argument("--out", "-o", default="frustum.png",
                   help="output: image (.png/.jpg), video (.mp4/.gif) or a folder for "
                        "numbered PNG frames (a name ending in '/' or without suffix)")
    _add_scene_options(r)
    r.add_argument("--fps", type=_positive, default=30.0,
                   help="frames per second of a video: MP4 0.001-1000, GIF 0.002-50, PNG "
                        "frames up to 1000 (default: %(default)s)")
    r.add_argument("--duration", type=_positive, default=None, metavar="S",
                   help="video length in seconds (default: the path's, or 6 for a turntable)")
    r.add_argument("--frames", type=count_arg, default=None, metavar="N",
                   help="number of video frames, at most 1,000,000 (instead of --duration)")
    r.add_argument("--pad", action="store_true",
                   help="MP4 with an odd width/height: pad one edge row/column instead of "
                        "refusing (frames are never rescaled)")
    r.add_argument("--raster", choices=["software", "gl"], default="software",
                   help="how points are drawn: 'software' = the engine's z-buffered "
                        "rasterizer, no GL needed (default); 'gl' = GL_POINTS on an "
                        "offscreen EGL context")
    r.set_defaults(func=cmd_render)

    v = sub.add_parser(
        "view", parents=[common], help="show scenes or 3D files in a window (a PNG when there is no display)",
        description="Show FILE(s) ('demo' or 3D files, drawn together) in a window at the "
                    "display's refresh rate. Keys: Esc quits, F12 saves a screenshot PNG in "
                    "the current folder; the camera follows --controller; with --camera "
                    "PATH.json|toml the path plays (Space stops/starts it); K records a "
                    "keyframe and P saves them to --record. The title shows the point "
                    "count and FPS. Without "
                    "a display the scene is drawn offscreen (GL, else the software "
                    "rasterizer) into --out and the path is printed.")
    v.add_argument("files", nargs="+", metavar="FILE",
                   help="'demo' or a 3D file (formats: see docs/assets.md)")
    _add_scene_options(v)
    v.add_argument("--raster", choices=["auto", "gl", "software"], default="auto",
                   help="'gl' = GL_POINTS from the projected buffer; 'software' = the "
                        "engine's rasterizer shown as a texture; 'auto' (default) = gl on a "
                        "GPU driver, software on a CPU one (Mesa llvmpipe)")
    v.add_argument("--out", "-o", default="frustum-view.png",
                   help="image written when no window can be opened (default: %(default)s)")
    v.add_argument("--frames", type=count_arg, default=None, metavar="N",
                   help="close the window after N frames (default: run until Esc)")
    v.add_argument("--controller", choices=["orbit", "fly", "none"], default="orbit",
                   help="mouse/keyboard camera control: 'orbit' (left drag turns around the "
                        "scene, right drag pans, scroll zooms, arrows turn) or 'fly' (WASD "
                        "move, Q/E down/up, Shift faster, drag looks, scroll sets speed); "
                        "default: %(default)s")
    v.add_argument("--record", default=None, metavar="PATH.json|toml",
                   help="in the window, K adds the current view as a keyframe and P saves "
                        "the keyframes to this camera path file; Space plays them back")
    v.set_defaults(func=cmd_view)

    b = sub.add_parser(
        "bench", parents=[common], help="measure every projection path side by side (synchronised timings)",
        description="Time the naive NumPy function, Numba, NumPy-on-CuPy, torch, the engine "
                    "backends, a GLSL transform and whole frames at several N, with the copy "
                    "bandwidth measured in the same run; print a table and write "
                    "bench-<cpu|gpu>.json/.md to --out.")
    b.add_argument("--quick", action="store_true",
                   help="N = 1e3, 1e5, 1e6 with few repeats (under a minute on 2 cores)")
    b.add_argument("--out", default="benchmarks/results", metavar="DIR",
                   help="folder for the JSON and Markdown results (default: %(default)s)")
    b.add_argument("--sizes", type=_sizes, default=None, metavar="N[,N...]",
                   help="vertex counts, e.g. 1e3,1e6 (default: 1e3..1e7, 1e8 with a GPU)")
    b.add_argument("--budget", type=_positive, default=None, metavar="SECONDS",
                   help="leave out larger sizes once this much time has passed (results so "
                        "far are still written)")
    b.add_argument("--paths", default=None, metavar="NAME[,NAME...]",
                   help="only these paths (names as in the JSON, e.g. engine_cupy,naive_cupy)")
    b.add_argument("--no-many", action="store_true",
                   help="leave out the many-objects scene")
    b.add_argument("--demo", action="store_true",
                   help="only show the timing trap: unsynchronised vs synchronised GPU/GL work")
    b.set_defaults(func=cmd_bench)

    e = sub.add_parser(
        "example", parents=[common], help="run an example scene or game from examples/ (list them without NAME)",
        description="Run examples/NAME.py with ARGS, e.g. 'frustum example asteroids' (a "
                    "window) or 'frustum example galaxy --headless --frames 60 --out "
                    "galaxy.png'. Every example takes --headless, --frames N, --out PATH, "
                    "--size WxH, --seed, --backend; NAME --help shows its own options.")
    e.add_argument("name", nargs="?", default=None, help="example name (omit to list them)")
    e.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the example")
    e.set_defaults(func=cmd_example)
    return p


def cmd_example(args) -> int:
    from .examples import list_examples, run_example_script

    if args.name is None:
        print("\n".join(list_examples()))
        return 0
    return run_example_script(args.name, args.args)


def cmd_bench(args) -> int:
    from ..bench import run_benchmarks, run_sync_demo

    if args.demo:
        run_sync_demo(args.sizes[-1] if args.sizes else 10**7)
        return 0
    paths = [p.strip() for p in args.paths.split(",") if p.strip()] if args.paths else None
    kwargs = {"many_objects": None} if args.no_many else {}
    res = run_benchmarks(sizes=args.sizes, quick=args.quick, out_dir=args.out,
                         budget_s=args.budget, paths=paths, **kwargs)
    from ..bench.report import render_markdown

    print()
    print(render_markdown(res), end="")
    return 0


def _add_scene_options(p: argparse.ArgumentParser):
    p.add_argument("--size", type=size_arg, default=(1280, 720), help="WIDTHxHEIGHT pixels")
    p.add_argument("--camera", type=_camera_spec, default=None,
                   metavar="AZ,EL[,DIST]|PATH|gltf:N",
                   help="orbit camera: azimuth and elevation in degrees, distance in world "
                        "units (default: auto-framed); or a camera path file (.json/.toml, "
                        "see README) to follow; or gltf:N, the file's own camera N")
    p.add_argument("--up", choices=["y", "z"], default=None,
                   help="the file's up axis: 'z' turns Z-up data (LAS, most scans) into the "
                        "engine's +Y up (default: the format's own: z for LAS/LAZ, else y)")
    p.add_argument("--animation", type=index_arg, default=None, metavar="N",
                   help="play the file's animation N (0-based): in the window, and in a "
                        "video --out (whose length defaults to the animation's)")
    p.add_argument("--point-size", type=_positive, default=None, metavar="N",
                   help="splat size in pixels (default: per geometry)")
    p.add_argument("--backend", choices=["auto", "cupy", "numba", "numpy"], default=None,
                   help="projection backend (default: $ENGINE_BACKEND or auto)")
    p.add_argument("--draw", choices=DRAW_MODES, default=None,
                   help="how meshes are drawn (default: solid; point clouds are always "
                        "points)")
    p.add_argument("--shading", choices=SHADINGS, default=None,
                   help="mesh shading: 'lit' (smooth normals, the scene's lights or a "
                        "headlight), 'flat' (lit per triangle) or 'unlit' (default: each "
                        "material's own, lit for files)")
    p.add_argument("--background", type=color_arg, default=None, metavar="COLOR",
                   help="background colour: a CSS name or #rrggbb, or R,G,B floats in [0, 1]")


def _contents(renderer) -> str:
    """'N vertices' plus the triangle count when the scene has triangles."""
    text = f"{renderer.batch.vertex_count} vertices"
    prims = renderer.primitives
    if prims is not None and len(prims.triangles):
        text += f", {len(prims.triangles)} triangles"
    return text


def _apply_look(args, scene):
    """--draw, --shading and --background applied to a freshly loaded scene."""
    if args.background is not None:
        scene.background = args.background
    for node in scene.traverse():
        if node.geometry is None:
            continue
        if args.draw is not None:
            node.draw = args.draw
        if args.shading is not None and hasattr(node.geometry, "material"):
            node.geometry.material.shading = args.shading


VIEW_AZIMUTH, VIEW_ELEVATION = 35.0, 25.0  # default framing direction, degrees


def load_source(source: str, aspect: float = 1.0, up: str | None = None):
    """(scene, camera) for 'demo' or a 3D file path.

    A file is loaded with ``engine.io.load`` under a new Scene, and a perspective camera
    with ``aspect`` (output width / height) is framed on the bounding box of its finite
    points (NaN/inf vertices are ignored), so the whole model fits the narrower side.
    Raises LoadError (an EngineError) for a file that cannot be read or has no finite
    point.
    """
    from ..scene.procedural import demo_scene

    if source == "demo":
        return demo_scene(aspect=aspect)
    from ..errors import LoadError
    from ..io import load
    from ..scene.camera import PerspectiveCamera
    from ..scene.graph import Scene

    scene = Scene(Path(source).name, background=(0.04, 0.05, 0.08))
    scene.add(load(source, up=up))
    bounds = scene.bounds()
    if bounds is None:
        raise LoadError(f"{source}: no vertex has finite coordinates, nothing to show")
    camera = scene.add(PerspectiveCamera(fov_y=50.0, aspect=aspect, name="camera"))
    camera.frame(bounds, azimuth=VIEW_AZIMUTH, elevation=VIEW_ELEVATION)
    return scene, camera


def _file_options(args, scene, camera):
    """(camera, clip): --camera gltf:N and --animation N (engine.cli.files)."""
    from .files import file_camera, file_clip

    camera = file_camera(args, scene, camera)
    return camera, file_clip(args, scene, camera)


def _place_camera(args, scene, camera):
    """Apply --camera: an AZ,EL[,DIST] orbit position, or the path's pose at t = 0.
    Returns the loaded CameraPath, or None."""
    if args.camera is None or isinstance(args.camera, FileCamera):
        return None
    if isinstance(args.camera, Path):
        from ..animation.offline import fit_clip_to_path
        from ..animation.pathfile import load_path

        path = load_path(args.camera)
        bounds = scene.bounds()
        if bounds is not None:
            fit_clip_to_path(camera, bounds, path)
        path.apply(camera, 0.0)
        return path
    az, el, dist = args.camera
    camera.frame(scene.bounds(), azimuth=az, elevation=el, distance=dist)
    return None


def cmd_render(args) -> int:
    from ..errors import OutputError

    try:
        return _cmd_render(args)
    except OutputError as exc:  # its message starts with the output path
        raise OutputError(f"--out {exc}") from exc


def _cmd_render(args) -> int:
    from ..errors import OutputError
    from ..io.image import save_image
    from ..io.video import output_kind, prepare_output_file
    from ..render.renderer import Renderer

    animated = output_kind(args.out) is not None
    if not animated and (args.duration is not None or args.frames is not None):
        raise EngineError(f"{args.out}: --duration/--frames need a video output "
                          f"(.mp4, .gif or a folder)")
    if not animated:
        prepare_output_file(args.out)  # fail before rendering, not after
    scene, camera = load_source(args.source, args.size[0] / args.size[1], up=args.up)
    _apply_look(args, scene)
    camera, clip = _file_options(args, scene, camera)
    path = _place_camera(args, scene, camera)
    renderer = Renderer(scene, camera, args.size, backend=args.backend,
                        point_size=args.point_size, raster=args.raster)
    if animated:
        try:
            return _render_animation(args, scene, camera, renderer, path, clip)
        finally:
            renderer.close()
    t0 = time.perf_counter()
    try:
        frame = renderer.render()
    finally:
        renderer.close()
    dt = time.perf_counter() - t0
    try:
        out = save_image(args.out, frame.color)
    except OSError as exc:
        raise OutputError(f"{args.out}: cannot write: {exc.strerror or exc}") from exc
    print(f"wrote {out.resolve()} ({args.size[0]}x{args.size[1]}, "
          f"{_contents(renderer)}, backend {renderer.projector.name}, "
          f"raster {renderer.raster}, {dt * 1000:.0f} ms)")
    return 0


def _render_animation(args, scene, camera, renderer, path, clip=None) -> int:
    """--out video/frames: follow the camera path (or a turntable; a still camera when
    an --animation plays) at t = k / fps.

    Exit status: 0 when every frame is written, 130 after Ctrl-C and 143 after SIGTERM
    (the frames so far are kept), 2 (EngineError) for a frame count over MAX_FRAMES or
    an output that cannot be written.
    """
    import signal

    import numpy as np

    from ..animation.offline import MAX_FRAMES, check_frame_count, frame_count, render_motion
    from ..animation.shots import orbit
    from ..io.video import open_frame_writer
    from ..progress import Progress

    duration = args.duration or (6.0 if path is None else path.duration)
    if clip is not None and not args.duration:
        duration = max(clip.duration, 0.0 if path is None else path.duration)
    if args.frames is not None:
        try:
            n = check_frame_count(args.frames)
        except EngineError as exc:
            raise EngineError(f"--frames {args.frames}: {exc}") from None
    else:
        if not duration > 0:
            what = (f"--animation {args.animation}: the animation" if clip is not None
                    else f"{args.camera}: the path")
            raise EngineError(f"{what} lasts 0 s; give --duration or --frames")
        try:
            n = frame_count(duration, args.fps)
        except EngineError as exc:
            what = (f"--duration {duration:g} s" if args.duration else
                    f"the {duration:g} s turntable" if path is None else
                    f"{args.camera}: the path's {duration:g} s")
            raise EngineError(f"{what} at --fps {args.fps:g} needs more frames than the "
                              f"limit of {MAX_FRAMES:,}; give --frames N, a lower --fps "
                              f"or a shorter --duration") from exc
    if clip is not None:
        from ..animation.clips import ClipMotion

        path = ClipMotion(clip, path)  # a still camera unless a path is given
    if path is None:
        # Turntable: one turn around the scene from the --camera (or framed) position.
        bounds = scene.bounds()
        if bounds is None:
            raise EngineError(f"{args.source}: nothing to render (no finite points)")
        center = 0.5 * (np.asarray(bounds[0]) + np.asarray(bounds[1]))
        offset = camera.world_matrix[:3, 3] - center
        radius = float(np.linalg.norm(offset))
        elevation = math.degrees(math.asin(max(-1.0, min(1.0, offset[1] / radius))))
        azimuth = math.degrees(math.atan2(offset[0], offset[2]))
        path = orbit(center, radius, elevation, turns=1, duration=duration,
                     start_azimuth=azimuth)
    writer = open_frame_writer(args.out, args.size, args.fps, pad=args.pad)
    progress = Progress(n)
    result = render_motion(renderer, path, args.fps, n, writer, progress)
    out = Path(args.out).resolve()
    status = 128 + (result.stop_signal or signal.SIGINT)
    how = "stopped by SIGTERM" if result.stop_signal == signal.SIGTERM else "interrupted"
    if result.frames == 0:
        print(f"frustum: {how} before the first frame; nothing written to {out}",
              file=sys.stderr)
        return status
    padded = getattr(writer, "pad", (0, 0))
    size = f"{args.size[0]}x{args.size[1]}" + (
        f" padded to {args.size[0] + padded[0]}x{args.size[1] + padded[1]}" if any(padded) else "")
    summary = (f"{result.frames} frames, {size}, {args.fps:g} fps, "
               f"{_contents(renderer)}, backend {renderer.projector.name}, "
               f"{result.frames / max(result.elapsed, 1e-9):.1f} frames/s")
    if result.interrupted:
        print(f"frustum: {how} after {result.frames} of {n} frames; kept {out} "
              f"({summary})", file=sys.stderr)
        return status
    print(f"wrote {out} ({summary})")
    return 0


def load_sources(sources, aspect: float = 1.0, up: str | None = None):
    """(scene, camera) showing every source together; one source is ``load_source``'s.

    Several sources are moved under one new scene (background of the first, cameras
    dropped) and a new camera is framed on the union of their bounds. Raises
    EngineError when there is nothing to show.
    """
    from ..scene.camera import Camera, PerspectiveCamera
    from ..scene.graph import Scene

    if len(sources) == 1:
        return load_source(sources[0], aspect, up)
    scene = None
    for source in sources:
        part, _ = load_source(source, aspect, up)
        if scene is None:
            scene = Scene("view", background=part.background)
        for child in part.children:
            if not isinstance(child, Camera):
                scene.add(child)
    bounds = scene.bounds()
    if bounds is None:
        raise EngineError(f"nothing to show in {', '.join(sources)}: no finite points")
    camera = scene.add(PerspectiveCamera(fov_y=50.0, aspect=aspect, name="camera"))
    camera.frame(bounds, azimuth=VIEW_AZIMUTH, elevation=VIEW_ELEVATION)
    return scene, camera


def cmd_view(args) -> int:
    from ..display import present
    from ..render.renderer import Renderer

    if args.frames is not None and args.frames < 1:
        raise EngineError(f"--frames must be >= 1, got {args.frames}")
    if args.record is not None:
        from ..animation.pathfile import is_path_file

        if not is_path_file(args.record):
            raise EngineError(f"--record {args.record}: camera path files end in .json or .toml")
    scene, camera = load_sources(args.files, args.size[0] / args.size[1], up=args.up)
    _apply_look(args, scene)
    camera, clip = _file_options(args, scene, camera)
    playback = _place_camera(args, scene, camera)
    renderer = Renderer(scene, camera, args.size, backend=args.backend,
                        point_size=args.point_size)
    controls = _window_controls(args, scene, camera, renderer, playback)
    if clip is not None:
        from ..animation.clips import ClipPlayer

        controls = ClipPlayer(clip, controls)
    try:
        path = present(renderer, raster=args.raster, out=args.out, max_frames=args.frames,
                       controller=controls)
    finally:
        renderer.close()
    if path is not None:
        print(f"wrote {path.resolve()} ({renderer.size[0]}x{renderer.size[1]}, "
              f"{renderer.batch.vertex_count} points, raster {renderer.raster})")
    return 0


def _window_controls(args, scene, camera, renderer, playback):
    """WindowControls for ``frustum view``: the --controller, --camera path playback and
    --record keys (see engine.display.controls)."""
    import numpy as np

    from ..controls.controllers import FlyController, OrbitController
    from ..display.controls import WindowControls

    controller = None
    if args.controller == "fly":
        controller = FlyController(camera, speed=_fly_speed(scene))
    elif args.controller == "orbit":
        bounds = scene.bounds()
        target = (np.zeros(3) if bounds is None
                  else 0.5 * (np.asarray(bounds[0]) + np.asarray(bounds[1])))
        if playback is None:
            controller = OrbitController(camera, target=target)
        else:
            # The path's first pose may not look at the scene centre: orbit the point
            # straight ahead at the same distance instead of snapping the view.
            pos = camera.world_matrix[:3, 3]
            dist = max(float(np.linalg.norm(target - pos)), 1e-6)
            controller = OrbitController(camera, target=pos + camera.forward * dist)
    return WindowControls(controller, renderer, playback=playback, record_to=args.record)


def _fly_speed(scene) -> float:
    """Fly speed: a quarter of the scene's diagonal per second."""
    import numpy as np

    bounds = scene.bounds()
    if bounds is None:
        return 1.0
    return max(0.25 * float(np.linalg.norm(np.asarray(bounds[1]) - np.asarray(bounds[0]))), 1e-3)


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
