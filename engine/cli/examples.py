"""The examples runner behind ``frustum example`` and the command line every example shares.

``example_parser`` / ``run_example`` give each script in ``examples/`` the same options
(--headless, --frames, --out, --size, --seed, --backend, --raster, --shadows) and
one-line errors;
``list_examples`` / ``run_example_script`` find and run those scripts by name.
"""

from __future__ import annotations

import argparse
import time

from ..render.backends import BACKENDS
from ..render.renderer import RASTER_MODES
from .args import ArgumentParser, count_arg, out_arg, size_arg

__all__ = ["example_parser", "examples_folder", "list_examples", "run_example",
           "run_example_script"]


# --- example scripts -----------------------------------------------------------------------
def example_parser(description: str, size=(960, 540), frames: int = 120) -> argparse.ArgumentParser:
    """The command line every example shares: --headless, --frames N, --out PATH,
    --size WxH, --seed, --backend, --raster, --shadows."""
    p = ArgumentParser(description=description)
    p.add_argument("--headless", action="store_true",
                   help="no window: run FRAMES frames with simulated time, write --out")
    p.add_argument("--frames", type=count_arg, default=None,
                   help=f"frames to run (headless default {frames}; window: until Esc)")
    p.add_argument("--out", default=None, type=out_arg,
                   help="PNG of the last frame, or (headless) a pattern with {frame} for "
                        "every frame, e.g. out/f{frame:04d}.png")
    p.add_argument("--size", type=size_arg, default=size, help="WIDTHxHEIGHT pixels")
    p.add_argument("--seed", type=int, default=0, help="random seed (reproducible runs)")
    p.add_argument("--backend", choices=BACKENDS, default=None,
                   help="projection backend (default: $ENGINE_BACKEND or auto)")
    p.add_argument("--raster", choices=("auto", *RASTER_MODES), default="auto",
                   help="window drawing path (see engine.display.Viewer)")
    p.add_argument("--shadows", action="store_true",
                   help="shadow maps for the scene's directional and spot lights "
                        "(engine.scene.light.enable_shadows)")
    p.set_defaults(default_frames=frames)
    return p


def run_example(app, args) -> int:
    """Run ``app`` (an ``engine.game.App``) as the parsed example arguments say; returns the exit status.

    Headless: ``args.frames`` (or the parser's default) frames, the last written to
    ``args.out`` (default ``<title>.png``). Window: until closed or ``args.frames``;
    with ``args.out`` the window's last frame is saved there. ``args.shadows``: every
    directional and spot light of ``app.scene`` renders shadow maps.
    User errors (engine.errors.EngineError, ValueError, OSError) print one line and
    return 2.
    """
    import sys

    from ..errors import EngineError
    from ..scene.light import enable_shadows

    if getattr(args, "shadows", False):
        enable_shadows(app.scene)
    try:
        if args.headless:
            frames = args.frames or args.default_frames
            out = args.out or f"{app.title}.png"
            t0 = time.perf_counter()
            app.run_headless(frames, out=out)
            dt = time.perf_counter() - t0
            print(f"wrote {out} ({frames} frames, "
                  f"{app.size[0]}x{app.size[1]}, {app.renderer.batch.vertex_count:,} vertices, "
                  f"{frames / dt:.1f} frames/s)")
        else:
            app.run(frames=args.frames, raster=args.raster, screenshot=args.out)
    except (EngineError, ValueError, OSError) as exc:
        print(f"{app.title}: error: {exc}", file=sys.stderr)
        return 2
    return 0


# --- the examples/ folder (the `frustum example` command) -------------------------------
def examples_folder():
    """The examples/ folder of the source checkout next to the engine package.

    Raises engine.errors.EngineError when it is not there (an installed wheel has none).
    """
    from pathlib import Path

    from ..errors import EngineError

    folder = Path(__file__).resolve().parents[2] / "examples"
    if not folder.is_dir():
        raise EngineError(f"no examples folder at {folder}: the examples ship with the "
                          f"source checkout, not the installed package")
    return folder


def list_examples() -> list[str]:
    """Names of the runnable examples (``examples/*.py``, tools excluded)."""
    return sorted(p.stem for p in examples_folder().glob("*.py") if p.stem != "make_gallery")


def run_example_script(name: str, argv: list[str]) -> int:
    """Run examples/<name>.py as ``__main__`` with ``argv``; returns its exit status.

    Raises engine.errors.EngineError for an unknown name (listing the known ones).
    """
    import runpy
    import sys

    from ..errors import EngineError

    names = list_examples()
    if name not in names:
        raise EngineError(f"unknown example {name!r}; choose one of {', '.join(names)}")
    path = examples_folder() / f"{name}.py"
    saved = sys.argv
    sys.argv = [str(path), *argv]
    try:
        runpy.run_path(str(path), run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    finally:
        sys.argv = saved
    return 0
