"""Writes the README gallery: one PNG per example in examples/screenshots/, each rendered
headless by the example itself (software rasterizer, fixed seed, simulated time).

    .venv/bin/python examples/make_gallery.py [--size 480x270] [--only NAME ...]

The backend is $ENGINE_BACKEND, else numpy (the same pixels on every machine; no JIT
start-up per example).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "screenshots"
# Frames (at 60 simulated frames/s) and extra arguments that make a good picture.
SHOTS = {
    "hello_points": ["--frames", "1"],
    "galaxy": ["--frames", "10"],
    "model_viewer": ["--frames", "40"],
    "solar_system": ["--frames", "150"],
    "terrain_flythrough": ["--frames", "150"],
    "asteroids": ["--frames", "300"],
    "camera_tour": ["--frames", "60"],
    "coin_game": ["--frames", "240"],
    "glass_garden": ["--frames", "30"],
}
VIDEO = {"camera_tour"}  # writes frames into a folder; the last one is kept


def shoot(name: str, size: str, env) -> Path:
    target = OUT / f"{name}.png"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / ("frames/" if name in VIDEO else "shot.png")
        cmd = [sys.executable, str(HERE / f"{name}.py"), "--headless", "--size", size,
               "--out", str(out), *SHOTS[name]]
        subprocess.run(cmd, check=True, env=env, cwd=HERE.parent)
        src = max(Path(tmp, "frames").glob("*.png")) if name in VIDEO else out
        target.write_bytes(src.read_bytes())
    return target


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", default="480x270", help="WIDTHxHEIGHT of each picture")
    p.add_argument("--only", nargs="*", default=None, choices=sorted(SHOTS),
                   help="only these examples")
    args = p.parse_args(argv)
    env = dict(os.environ)
    env.setdefault("ENGINE_BACKEND", "numpy")
    env.pop("PYGLET_HEADLESS", None)
    OUT.mkdir(parents=True, exist_ok=True)
    for name in args.only or sorted(SHOTS):
        print(f"gallery: wrote {shoot(name, args.size, env)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
