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

from ..errors import EngineError
from ..render.backends import BACKENDS
from ..render.msaa import IMAGE_MSAA, SAMPLE_COUNTS
from ..render.renderer import RASTER_MODES
from ..scene.exposure import TONE_MAPS
from ..scene.framing import VIEW_AZIMUTH, VIEW_ELEVATION  # noqa: F401 - engine.cli.files
from ..scene.geometry import POINT_SHAPES, SIZE_UNITS
from ..scene.graph import DRAW_MODES
from ..scene.light import DirectionalLight, Light, PointLight, SpotLight
from ..scene.material import SHADINGS
from .args import (
    ArgumentParser,
    FileCamera,
    _camera_spec,
    _debug_option,
    _positive,
    _sizes,
    background_arg,
    color_arg,
    count_arg,
    environment_arg,
    exposure_arg,
    factor_arg,
    fog_arg,
    folder_arg,
    indices_arg,
    non_negative_seconds_arg,
    out_arg,
    seconds_arg,
    size_arg,
    sky_arg,
)

log = logging.getLogger("engine")


def load_source(source: str, aspect: float = 1.0, up: str | None = None, root=None):
    """(scene, camera) for 'demo' or a 3D file, framed: ``engine.io.sources.load_source``
    (shared with ``engine.show`` and the Dask workers; imported on use, so the command
    line starts without trimesh)."""
    from ..io.sources import load_source as load

    return load(source, aspect, up, root)


def load_sources(sources, aspect: float = 1.0, up: str | None = None, root=None):
    """(scene, camera) showing every source together: ``engine.io.sources.load_sources``."""
    from ..io.sources import load_sources as load

    return load(sources, aspect, up, root)


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
    r.add_argument("--out", "-o", default="frustum.png", type=out_arg,
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
    _msaa_option(r, IMAGE_MSAA)
    r.add_argument("--raster", choices=RASTER_MODES, default="software",
                   help="how points are drawn: 'software' = the engine's z-buffered "
                        "rasterizer, no GL needed (default); 'gl' = GL_POINTS on an "
                        "offscreen EGL context")
    _add_dask_options(r, "render the video's frames")
    r.set_defaults(func=cmd_render)

    m = sub.add_parser(
        "render-many", parents=[common],
        help="render one image (or turntable clip) per 3D file, optionally on Dask workers",
        description="Render every 3D file matched by PATTERN (quote it: 'models/**/*.glb'; "
                    "** crosses folders) into --out: one image per file, or with "
                    "--turntable a clip. Outputs keep the path below the pattern's fixed "
                    "folder. A file that fails is reported with its error and the others "
                    "go on (exit status 1 when any failed); OUT/index.json lists every "
                    "input, its output and status. A second run skips outputs that exist "
                    "and are complete.")
    m.add_argument("patterns", nargs="+", metavar="PATTERN",
                   help="glob pattern(s) or file name(s) of .obj, .ply, .gltf, .glb, .stl")
    m.add_argument("--out", "-o", required=True, metavar="DIR", type=out_arg,
                   help="output folder")
    m.add_argument("--size", type=size_arg, default=(512, 512),
                   help="WIDTHxHEIGHT pixels (default: 512x512)")
    m.add_argument("--turntable", type=_positive, default=None, metavar="SECONDS",
                   help="a turntable clip of this many seconds per file instead of an image")
    m.add_argument("--fps", type=_positive, default=30.0,
                   help="turntable frames per second (default: %(default)s)")
    m.add_argument("--format", choices=["png", "jpg", "mp4", "gif"], default=None,
                   help="output format (default: png, or mp4 with --turntable)")
    m.add_argument("--camera", type=_view_spec, default=None, metavar="AZ,EL[,DIST]",
                   help="view direction in degrees (and distance) instead of the default "
                        "framing")
    _point_options(m)
    m.add_argument("--backend", choices=BACKENDS, default=None,
                   help="projection backend (default: $ENGINE_BACKEND or auto)")
    _msaa_option(m, IMAGE_MSAA)
    m.add_argument("--draw", choices=DRAW_MODES, default=None, help="how meshes are drawn")
    m.add_argument("--shading", choices=SHADINGS, default=None, help="mesh shading")
    m.add_argument("--background", type=background_arg, default=None, metavar="COLOR",
                   help="background colour: a CSS name or #rrggbb, or R,G,B floats; or "
                        "'transparent': PNG pixels with nothing drawn get alpha 0 (JPEG, "
                        "MP4 and GIF show them black)")
    _add_exposure_options(m)
    m.add_argument("--environment", type=environment_arg, default=None,
                   metavar="COLOR|FILE|none",
                   help="image-based lighting for every file: an equirectangular image or "
                        "a uniform colour (as frustum render)")
    _add_root_option(m)
    m.add_argument("--force", action="store_true",
                   help="render every file again, even where a complete output exists")
    _add_dask_options(m, "render the files")
    m.set_defaults(func=cmd_render_many)

    v = sub.add_parser(
        "view", parents=[common], help="show scenes or 3D files in a window (a PNG when there is no display)",
        description="Show FILE(s) ('demo' or 3D files, drawn together) in a window at the "
                    "display's refresh rate. Keys: Esc quits, F12 saves a screenshot PNG in "
                    "the current folder; the camera follows --controller; with --camera "
                    "PATH.json|toml the path plays (Space stops/starts it); K records a "
                    "keyframe and P saves them to --record; G, B and X toggle the ground "
                    "grid, the bounding box and the orientation axes, and a click shows "
                    "the node and world position under the cursor in the title. The "
                    "title shows the point count, FPS and these keys. Without "
                    "a display the scene is drawn offscreen (GL, else the software "
                    "rasterizer) into --out and the path is printed.")
    v.add_argument("files", nargs="+", metavar="FILE",
                   help="'demo' or a 3D file (formats: see docs/assets.md)")
    _add_scene_options(v)
    _msaa_option(v, 1)
    v.add_argument("--raster", choices=("auto", *RASTER_MODES), default="auto",
                   help="'gl' = GL_POINTS from the projected buffer; 'software' = the "
                        "engine's rasterizer shown as a texture; 'auto' (default) = gl on a "
                        "GPU driver, software on a CPU one (Mesa llvmpipe)")
    v.add_argument("--out", "-o", default="frustum-view.png", type=out_arg,
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

    w = sub.add_parser(
        "warmup", parents=[common], help="compile the CPU (Numba) kernels once, so the "
                                         "first picture does not wait for them",
        description="Render one small frame of each kernel path on the Numba backend so "
                    "its kernels are compiled into Numba's on-disk cache (tens of seconds, "
                    "once per install; scripts/setup.sh runs it). Later processes load "
                    "them in a few hundred ms.")
    w.set_defaults(func=cmd_warmup)

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


def cmd_warmup(args) -> int:
    from ..render.warmup import warm_up

    def step(what):
        print(f"frustum: compiling the CPU kernels: {what}", file=sys.stderr, flush=True)

    seconds = warm_up(step)
    print(f"kernels ready ({seconds:.1f} s; cached for later processes)")
    return 0


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


def _add_dask_options(p: argparse.ArgumentParser, what: str):
    g = p.add_mutually_exclusive_group()
    g.add_argument("--workers", type=count_arg, default=None, metavar="N",
                   help=f"{what} on a Dask LocalCluster of N worker processes on this "
                        f"machine (127.0.0.1, no dashboard); at most one per CPU core "
                        f"this process may use (a larger N is capped, with a warning)")
    g.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help=f"{what} on the workers of a running Dask scheduler, e.g. "
                        f"tcp://HOST:8786 (workers must reach the input files at the same "
                        f"paths; see docs/distributed.md)")
    p.add_argument("--connect-timeout", type=seconds_arg, default=20.0, metavar="SECONDS",
                   help="how long to wait for --scheduler and for its first worker "
                        "(default: %(default)s)")
    p.add_argument("--numba-threads", type=count_arg, default=None, metavar="N",
                   help="Numba threads per Dask worker thread (default: 1, so workers do "
                        "not oversubscribe the cores; without --workers/--scheduler, "
                        "Numba's own default)")


def _view_spec(text: str):
    """argparse type: AZ,EL[,DIST] only (no path files)."""
    from pathlib import Path as _Path

    spec = _camera_spec(text)
    if isinstance(spec, _Path):
        raise argparse.ArgumentTypeError(f"--camera must be AZ,EL[,DIST], got {text!r}")
    return spec


def _msaa_option(p: argparse.ArgumentParser, default: int):
    """--msaa S: samples per pixel (engine.render.msaa), ``default`` for this command."""
    p.add_argument("--msaa", type=int, choices=SAMPLE_COUNTS, default=default, metavar="S",
                   help="anti-aliasing samples per pixel: 1 (none), 2, 4 or 8 (default: "
                        "%(default)s; images and videos 4, windows 1, where each sample "
                        "costs about one more raster per frame)")


def _point_options(p: argparse.ArgumentParser):
    """--point-size, --point-shape, --point-units (engine.render.sprites)."""
    p.add_argument("--point-size", type=_positive, default=None, metavar="N",
                   help="point diameter in --point-units (default: per geometry; point "
                        "clouds from files: 5 px under 10,000 points, 3 under 100,000, 2 "
                        "under 1,000,000, else 1)")
    p.add_argument("--point-shape", choices=POINT_SHAPES, default=None,
                   help="'round' (discs, the default of point clouds) or 'square'")
    p.add_argument("--point-units", choices=SIZE_UNITS, default=None,
                   help="what --point-size measures: 'px' (screen pixels, the default) or "
                        "'world' (world units: points shrink with distance)")


def _add_exposure_options(p: argparse.ArgumentParser):
    p.add_argument("--exposure", type=exposure_arg, default=None, metavar="X",
                   help="linear factor > 0 on surface radiance before the tone map "
                        "(default 1); for lights in physical units (glTF "
                        "KHR_lights_punctual)")
    p.add_argument("--tone-map", choices=TONE_MAPS, default=None,
                   help="'none' (clamp, the default) or 'pbr-neutral' (Khronos PBR "
                        "Neutral: bright colours compressed, not clipped)")
    p.add_argument("--shadows", action="store_true",
                   help="shadow maps for every directional and spot light of the scene "
                        "(each light's shadow_map_size, default 1024 texels square); the "
                        "default headlight of a scene without lights casts none")


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
    _add_root_option(p)
    p.add_argument("--animation", type=indices_arg, default=None, metavar="N[,M...]",
                   help="play the file's animation N (0-based): in the window, and in a "
                        "video --out (whose length defaults to the animation's); N,M,... "
                        "plays them one after another, each cross-fading into the next "
                        "(the last one loops in the window)")
    p.add_argument("--animation-speed", type=factor_arg, default=1.0, metavar="X",
                   help="animation seconds per second of playback (default 1; 2 = twice "
                        "as fast)")
    p.add_argument("--crossfade", type=non_negative_seconds_arg, default=0.5,
                   metavar="SECONDS",
                   help="with --animation N,M: seconds of playback over which each "
                        "animation blends into the next, at the end of the one before "
                        "(default 0.5; 0 cuts)")
    _point_options(p)
    p.add_argument("--backend", choices=BACKENDS, default=None,
                   help="projection backend (default: $ENGINE_BACKEND or auto)")
    p.add_argument("--draw", choices=DRAW_MODES, default=None,
                   help="how meshes are drawn (default: solid; point clouds are always "
                        "points)")
    p.add_argument("--shading", choices=SHADINGS, default=None,
                   help="mesh shading: 'lit' (Lambert + Blinn-Phong, smooth normals, the "
                        "scene's lights or a headlight), 'flat' (lit per triangle), 'pbr' "
                        "(the glTF metallic-roughness BRDF) or 'unlit' (default: each "
                        "material's own: pbr for glTF, lit for other files)")
    _add_exposure_options(p)
    p.add_argument("--background", type=background_arg, default=None, metavar="COLOR",
                   help="background colour: a CSS name or #rrggbb, or R,G,B floats in "
                        "[0, 1]; or 'transparent': image pixels with nothing drawn get "
                        "alpha 0 in PNG (JPEG, MP4 and GIF show them black)")
    p.add_argument("--fog", type=fog_arg, default=None, metavar="MODE:...",
                   help="distance fog: linear:START:END[:COLOR], exp:DENSITY[:COLOR] or "
                        "exp2:DENSITY[:COLOR] (world units; default colour: the sky's, or "
                        "the background)")
    p.add_argument("--sky", type=sky_arg, default=None, metavar="HORIZON,ZENITH[,GROUND]",
                   help="a vertical sky gradient behind the scene instead of the "
                        "background: HORIZON,ZENITH[,GROUND] colours; or 'environment': "
                        "the --environment image (or colour) behind the scene")
    p.add_argument("--environment", type=environment_arg, default=None,
                   metavar="COLOR|FILE|none",
                   help="image-based lighting: an equirectangular image (.png, .jpg, "
                        ".hdr) or a uniform colour lighting every "
                        "surface from all directions; a scene with an environment and no "
                        "lights gets no headlight (default: none)")
    p.add_argument("--line-color", type=color_arg, default=None, metavar="COLOR",
                   help="colour of wireframe and other lines (default: the mesh's colour, "
                        "or black/white where that would not stand out from the background)")
    p.add_argument("--hidden-lines", action="store_true",
                   help="draw meshes as wireframes without the edges behind their own "
                        "faces (hidden-line removal; implies --draw wireframe)")
    p.add_argument("--grid", action="store_true",
                   help="draw a ground grid under the scene (window key G)")
    p.add_argument("--bbox", action="store_true",
                   help="draw the scene's bounding box (window key B)")
    p.add_argument("--axes", action="store_true",
                   help="draw the orientation axes (X red, Y green, Z blue) in the "
                        "bottom-left corner (window key X)")


_AID_FLAGS = ("line_color", "hidden_lines", "grid", "bbox", "axes")


def _aids(args, renderer):
    """--grid, --bbox and --axes on ``renderer`` (engine.display.aids); call it after the
    camera and any turntable are placed, as the grid and box join the scene's bounds."""
    from ..display.aids import ViewerAids

    return ViewerAids(renderer, grid=args.grid, bbox=args.bbox, axes=args.axes)


def _add_root_option(p: argparse.ArgumentParser):
    p.add_argument("--root", type=folder_arg, default=None, metavar="DIR",
                   help="the folder a file's textures, material libraries and buffers may "
                        "be read from: a folder containing the file (default: the file's "
                        "own folder and its subfolders)")


def _contents(renderer) -> str:
    """'N vertices' plus the triangle count when the scene has triangles."""
    text = f"{renderer.batch.vertex_count} vertices"
    prims = renderer.primitives
    if prims is not None and len(prims.triangles):
        text += f", {len(prims.triangles)} triangles"
    return text


def _scene_contents(scene) -> str:
    """``_contents`` counted from the scene itself (visible nodes; triangles of meshes
    drawn solid), for renders whose frames other processes drew."""
    nodes = [nd for nd in scene.traverse(visible_only=True) if nd.geometry is not None]
    text = f"{sum(nd.geometry.vertex_count for nd in nodes)} vertices"
    tris = sum(len(nd.geometry.faces) for nd in nodes
               if nd.draw_mode in ("solid", "solid+wireframe"))
    return text + (f", {tris} triangles" if tris else "")


def _staged(args, scene, camera, **renderer_kwargs):
    """The loaded scene made ready the way --look, the file options and --camera say:
    (camera, animation clips or None, camera path or None, Renderer)."""
    from ..render.renderer import Renderer

    _apply_look(args, scene)
    camera, clips = _file_options(args, scene, camera)
    path = _place_camera(args, scene, camera)
    renderer = Renderer(scene, camera, args.size, backend=args.backend, msaa=args.msaa,
                        **renderer_kwargs)
    return camera, clips, path, renderer


def _apply_look(args, scene):
    """--draw, --shading, --background, --exposure and --tone-map applied to a freshly
    loaded scene."""
    from ..io.sources import apply_look

    draw, hidden = args.draw, getattr(args, "hidden_lines", False)
    if hidden and draw is None:
        draw = "wireframe"
    elif hidden and draw != "wireframe":
        raise EngineError(f"--hidden-lines hides edges of a wireframe, not of --draw {draw}: "
                          f"use --draw wireframe (or leave --draw out)")
    apply_look(scene, draw, args.shading, args.background,
               line_color=getattr(args, "line_color", None), hidden_lines=hidden,
               exposure=args.exposure, tone_map=args.tone_map, point_size=args.point_size,
               point_shape=args.point_shape, point_units=args.point_units, shadows=args.shadows)
    if getattr(args, "fog", None) is not None:
        scene.fog = args.fog
    if getattr(args, "environment", None) is not None:
        scene.environment = args.environment
    if getattr(args, "sky", None) is not None:
        if isinstance(args.sky, str) and scene.environment is None:
            raise EngineError("--sky environment shows the scene's environment: give one "
                              "with --environment COLOR|FILE")
        scene.sky = args.sky
    if args.shadows and not any(isinstance(n, (DirectionalLight, SpotLight))
                                for n in scene.traverse()):
        named = getattr(args, "source", None) or ", ".join(map(str, args.files))
        print(f"frustum: --shadows: {named} has no directional or spot light "
              f"({_unshadowed_lighting(scene)} casts no shadows)", file=sys.stderr)


def _file_options(args, scene, camera):
    """(camera, clips): --camera gltf:N and --animation N[,M...] (engine.cli.files)."""
    from .files import file_camera, file_clips

    camera = file_camera(args, scene, camera)
    return camera, file_clips(args, scene, camera)


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
    """A still image (or, for a video --out, ``_render_animation``). The image output
    is opened first (``engine.io.video.open_writer``: name, suffix and folder checked
    before anything is loaded or rendered) and written through the output session of
    ``engine.io.output``: an earlier image is replaced whole or not at all."""
    import signal

    from ..io.output import Output
    from ..io.video import open_writer, output_kind

    animated = output_kind(args.out) is not None
    if not animated and (args.workers is not None or args.scheduler is not None):
        raise EngineError(f"{args.out}: --workers/--scheduler render the frames of a video "
                          f"output (.mp4, .gif or a folder); for one image per file use "
                          f"'frustum render-many'")
    if not animated and (args.duration is not None or args.frames is not None):
        raise EngineError(f"{args.out}: --duration/--frames need a video output "
                          f"(.mp4, .gif or a folder)")
    if (args.workers is not None or args.scheduler is not None) and any(
            getattr(args, a) for a in _AID_FLAGS):
        raise EngineError("--line-color, --hidden-lines, --grid, --bbox and --axes are not "
                          "sent to Dask workers yet: render without --workers/--scheduler")
    if args.scheduler is not None:  # a bad address fails before anything is loaded
        from ..distributed.cluster import check_address

        check_address(args.scheduler)
    writer = None if animated else open_writer(args.out, args.size)
    renderer = None
    try:
        t_load = time.perf_counter()
        preload = _preload_kernels(args)
        scene, camera = load_source(args.source, args.size[0] / args.size[1], up=args.up,
                                    root=args.root)
        t_setup = time.perf_counter()
        if preload is not None:
            preload.join()
        camera, clips, path, renderer = _staged(args, scene, camera, raster=args.raster)
        if animated:
            return _render_animation(args, scene, camera, renderer, path, clips)
        _aids(args, renderer)
        with Output(writer, 1) as out:
            t_frame = time.perf_counter()
            frame = renderer.render(depth=False)  # only the colour is written
            t_done = time.perf_counter()
            out.write(frame.color)
    finally:
        if renderer is not None:
            renderer.close()
        if writer is not None:
            writer.abort()  # no-op once closed: a failed load leaves no new folder
    result = out.result
    if result.interrupted:
        how = "stopped by SIGTERM" if result.stop_signal == signal.SIGTERM else "interrupted"
        print(f"frustum: {how}; nothing written to {Path(args.out).resolve()}",
              file=sys.stderr)
        return 128 + (result.stop_signal or signal.SIGINT)
    age = process_seconds()
    total = "" if age is None else f", {age:.2f} s since the process started"
    print(f"wrote {Path(args.out).resolve()} ({args.size[0]}x{args.size[1]}, "
          f"{_contents(renderer)}, backend {renderer.projector.name}, "
          f"raster {renderer.raster}; load {(t_setup - t_load) * 1000:.0f} ms, "
          f"renderer set-up {(t_frame - t_setup) * 1000:.0f} ms, "
          f"frame {(t_done - t_frame) * 1000:.0f} ms{total})")
    return 0


def _unshadowed_lighting(scene) -> str:
    """What lights a scene without a directional or spot light (engine.render.shading.
    scene_lights' fallback rule), for the --shadows warning."""
    lights = [n for n in scene.traverse() if isinstance(n, Light)]
    if any(isinstance(n, PointLight) for n in lights):
        return "a point light"
    if lights:
        return "ambient light"
    if scene.environment is not None:
        return "the environment"
    return "the default headlight"


def _preload_kernels(args):
    """The thread loading the Numba kernels of the frame's msaa and shadows while the
    file loads (``engine.render.warmup.preload``), or None where the frame will not run on Numba
    (another --backend or $ENGINE_BACKEND, or GL raster)."""
    import os

    backend = (args.backend or os.environ.get("ENGINE_BACKEND") or "auto").strip().lower()
    if backend not in ("auto", "numba") or args.raster != "software":
        return None
    if backend == "auto":
        from ..render.backends.cupy_backend import cupy_unavailable_reason

        if cupy_unavailable_reason() is None:
            return None  # auto may pick the GPU
    from ..render.warmup import preload

    return preload(args.msaa, args.shadows)


def process_seconds() -> float | None:
    """Wall-clock seconds since this process was created (interpreter start-up and
    imports included), from Linux's ``/proc/self/stat`` (field 22, ``starttime``, in
    clock ticks after boot; proc(5)) against ``CLOCK_BOOTTIME``, the clock it counts on;
    None where that file does not exist. Resolution: one clock tick (10 ms)."""
    import os

    try:
        with open("/proc/self/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()  # after the command name
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22; fields[0] is 3
        return time.clock_gettime(time.CLOCK_BOOTTIME) - started
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def _render_animation(args, scene, camera, renderer, path, clips=None) -> int:
    """--out video/frames: follow the camera path (or a turntable; a still camera when
    an --animation plays: its clips in sequence, ``engine.cli.files.file_playback``) at
    t = k / fps.

    Exit status: 0 when every frame is written, 130 after Ctrl-C and 143 after SIGTERM
    (the frames so far are kept), 2 (EngineError) for a frame count over MAX_FRAMES or
    an output that cannot be written.
    """
    import signal

    from ..animation.offline import MAX_FRAMES, check_frame_count, frame_count, render_motion
    from ..animation.shots import turntable
    from ..io.video import open_frame_writer
    from ..progress import Progress

    duration = args.duration or (6.0 if path is None else path.duration)
    clip = None
    if clips is not None:
        from .files import file_playback

        clip = file_playback(args, clips, loop=False)  # the last clip holds its end
        if not args.duration:
            duration = max(clip.duration, 0.0 if path is None else path.duration)
    if args.frames is not None:
        try:
            n = check_frame_count(args.frames)
        except EngineError as exc:
            raise EngineError(f"--frames {args.frames}: {exc}") from None
    else:
        if not duration > 0:
            what = (f"--animation {','.join(map(str, args.animation))}: the animation"
                    + ("s last" if len(args.animation) > 1 else " lasts")
                    if clip is not None else f"{args.camera}: the path lasts")
            raise EngineError(f"{what} 0 s; give --duration or --frames")
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
        path = turntable(camera, bounds, duration)
    _aids(args, renderer)
    job = None
    if args.workers is not None or args.scheduler is not None:
        from ..distributed.job import RenderJob, SceneSource

        # Checked before the output is opened: workers load the same file.
        # Workers load the same file; with an animation clip (it moves nodes) or a
        # file's own camera the loaded scene is sent instead (RenderJob.create).
        job = RenderJob.create(
            SceneSource.from_file(args.source, args.draw, args.shading, args.background,
                                  up=args.up, root=args.root, exposure=args.exposure,
                                  tone_map=args.tone_map, point_size=args.point_size,
                                  point_shape=args.point_shape,
                                  point_units=args.point_units,
                                  shadows=args.shadows),
            camera, path, args.fps, n, args.size, backend=args.backend, raster=args.raster,
            numba_threads=args.numba_threads or 1, msaa=args.msaa)
    writer = open_frame_writer(args.out, args.size, args.fps, pad=args.pad)
    progress = Progress(n)
    if job is None:
        result = render_motion(renderer, path, args.fps, n, writer, progress)
    else:
        from ..distributed import dask_client, render_job

        try:
            with dask_client(scheduler=args.scheduler, workers=args.workers,
                             numba_threads=args.numba_threads or 1,
                             connect_timeout=args.connect_timeout) as client:
                workers = sum(client.nthreads().values())
                result = render_job(job, writer, client, progress)
        finally:
            writer.abort()  # no-op once closed: a cluster that fails leaves nothing
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
    # The workers rendered: this process's renderer never assembled the scene.
    contents = _contents(renderer) if job is None else _scene_contents(scene)
    where = "" if job is None else f" on {workers} Dask worker threads"
    summary = (f"{result.frames} frames, {size}, {args.fps:g} fps, "
               f"{contents}, backend {renderer.projector.name}, "
               f"{result.frames / max(result.elapsed, 1e-9):.1f} frames/s{where}")
    if result.interrupted:
        print(f"frustum: {how} after {result.frames} of {n} frames; kept {out} "
              f"({summary})", file=sys.stderr)
        return status
    print(f"wrote {out} ({summary})")
    return 0


def cmd_render_many(args) -> int:
    """Exit status 0 when every file was written or skipped, 1 when some failed, 130
    after Ctrl-C and 143 after SIGTERM (the finished outputs stay; a rerun resumes)."""
    from ..distributed.many import ManySpec, render_many

    fmt = args.format or ("mp4" if args.turntable else "png")
    if args.turntable and fmt in ("png", "jpg"):
        raise EngineError(f"--turntable makes a clip per file: --format mp4 or gif, not {fmt}")
    if not args.turntable and fmt in ("mp4", "gif"):
        raise EngineError(f"--format {fmt} needs --turntable SECONDS")
    background = None if args.background is None else tuple(args.background)
    spec = ManySpec(size=tuple(args.size), format=fmt, turntable=args.turntable,
                    fps=args.fps, camera=args.camera, backend=args.backend,
                    point_size=args.point_size, point_shape=args.point_shape,
                    point_units=args.point_units, draw=args.draw, shading=args.shading,
                    background=background, numba_threads=args.numba_threads,
                    root=args.root, msaa=args.msaa, exposure=args.exposure,
                    tone_map=args.tone_map, environment=args.environment, shadows=args.shadows)
    res = render_many(args.patterns, args.out, spec, scheduler=args.scheduler,
                      workers=args.workers, force=args.force,
                      connect_timeout=args.connect_timeout)
    for it in res.failed:
        why = it.error if it.error.startswith(it.source) else f"{it.source}: {it.error}"
        print(f"frustum: failed: {why}", file=sys.stderr)
    summary = (f"{res.count('written')} written, {res.count('skipped')} skipped (complete), "
               f"{res.count('failed')} failed of {len(res.items)} files in "
               f"{res.elapsed:.1f} s; index {res.index}")
    if res.interrupted:
        import signal

        how = "stopped by SIGTERM" if res.stop_signal == signal.SIGTERM else "interrupted"
        print(f"frustum: {how}: {summary}; run again to resume", file=sys.stderr)
        return 128 + (res.stop_signal or signal.SIGINT)
    print(summary)
    return 1 if res.failed else 0


def cmd_view(args) -> int:
    from ..display import present

    if args.frames is not None and args.frames < 1:
        raise EngineError(f"--frames must be >= 1, got {args.frames}")
    from ..io.image import check_image_name
    from ..io.output import check_output_name

    try:  # the image written without a display: checked before any window or render
        check_image_name(check_output_name(args.out))
    except EngineError as exc:
        raise EngineError(f"--out {exc}") from None
    if args.record is not None:
        from ..animation.pathfile import is_path_file

        if not is_path_file(args.record):
            raise EngineError(f"--record {args.record}: camera path files end in .json or .toml")
    scene, camera = load_sources(args.files, args.size[0] / args.size[1], up=args.up,
                                 root=args.root)
    camera, clips, playback, renderer = _staged(args, scene, camera)
    controls = _window_controls(args, scene, camera, renderer, playback)
    if clips is not None:
        from .files import file_playback

        player = file_playback(args, clips, loop=True)  # the last clip loops
        player.inner = controls
        controls = player
    aids = _aids(args, renderer)
    try:
        path = present(renderer, raster=args.raster, out=args.out, max_frames=args.frames,
                       controller=controls, aids=aids)
        drawn = _contents(renderer)  # as `frustum render` says it: vertices, triangles
    finally:
        renderer.close()
    if path is not None:
        print(f"wrote {path.resolve()} ({renderer.size[0]}x{renderer.size[1]}, {drawn}, "
              f"raster {renderer.raster})")
    return 0


def _window_controls(args, scene, camera, renderer, playback):
    """WindowControls for ``frustum view``: the --controller, --camera path playback and
    --record keys (see engine.display.controls)."""
    import numpy as np

    from ..controls.controllers import FlyController, OrbitController
    from ..display.controls import WindowControls
    from ..scene.framing import view_target

    controller = None
    if args.controller == "fly":
        controller = FlyController(camera, speed=_fly_speed(scene))
    elif args.controller == "orbit":
        bounds = scene.bounds()
        target = (np.zeros(3) if bounds is None
                  else 0.5 * (np.asarray(bounds[0]) + np.asarray(bounds[1])))
        if playback is None:
            # the point ahead of the framed camera (engine.scene.framing.view_target), so
            # the first drag does not snap the view
            controller = OrbitController(camera, target=view_target(camera, bounds))
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
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); returns the exit status.

    Called as the program (``argv`` None), it ends with ``gc.freeze()``: the
    interpreter's shutdown then skips its full garbage collections over every object
    the process made (Numba's and trimesh's included), which took 0.5-1.5 s after the
    image was written (measured with gdb in ``Py_FinalizeEx``; docs/performance.md).
    """
    try:
        return _main(argv)
    finally:
        if argv is None:
            import gc

            gc.freeze()


def _main(argv) -> int:
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
    except MemoryError as exc:  # e.g. a large --size with --msaa: name what to lower
        if args.debug:
            raise
        print(f"frustum: error: out of memory ({exc or 'an allocation failed'}): a smaller "
              f"--size or --msaa needs less", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("frustum: interrupted", file=sys.stderr)
        return 130
