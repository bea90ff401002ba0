"""Image-based lighting against the uniform ambient term, side by side in one run.

    .venv/bin/python benchmarks/ibl.py [--frame 1280x720] [--backend numba] [--frames 7]

The PBR scenes of benchmarks/pbr.py (the bunny, or an icosphere without the assets; a
full-screen textured quad), metallic 0.5, roughness 0.5, one directional light, each
drawn twice at the same commit:

    ambient       AmbientLight(0.1): today's uniform ambient term, A (c_diff + F0)
    environment   Scene(environment=...) of a 256 x 128 equirectangular image instead:
                  SH irradiance + the specular chain + the split-sum table per pixel
                  (engine.render.ibl), prefiltered once before the timing

Times are medians of whole frames (vertex stage + raster + resolve to a host image)
after a warm-up; the ratio environment / ambient is what to compare.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from pbr import _scene, _time

from engine import AmbientLight, Environment
from engine.render.ibl import prefilter


def _environment():
    h, w = 128, 256
    theta = (np.arange(h) + 0.5) / h * np.pi
    phi = ((np.arange(w) + 0.5) / w - 0.5) * 2 * np.pi
    sky = np.clip(np.cos(theta), 0, 1)[:, None, None] * [1.0, 0.9, 0.8]
    img = sky + 0.3 * (1 + np.sin(3 * phi))[None, :, None] * [0.2, 0.3, 0.5]
    env = Environment.from_array(img)
    prefilter(env)  # once per environment, outside the frames timed
    return env


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--frame", default="1280x720")
    p.add_argument("--backend", default="numba")
    p.add_argument("--frames", type=int, default=7)
    a = p.parse_args()
    size = tuple(int(x) for x in a.frame.split("x"))
    env = _environment()
    print(f"{a.backend} backend, {size[0]}x{size[1]}, median of {a.frames} frames")
    print(f"{'scene':8} {'ambient ms':>11} {'environment ms':>15} {'env / ambient':>14}")
    for kind in ("bunny", "quad"):
        plain, lit = [], []
        for _ in range(3):  # interleaved, so load changes on a shared machine hit both alike
            scene, cam = _scene(kind, "pbr", size)
            plain.append(_time(scene, cam, size, a.backend, a.frames))
            for node in [n for n in scene.children if isinstance(n, AmbientLight)]:
                scene.remove(node)
            scene.environment = env
            lit.append(_time(scene, cam, size, a.backend, a.frames))
        b, q = statistics.median(plain), statistics.median(lit)
        print(f"{kind:8} {b:11.1f} {q:15.1f} {q / b:14.2f}")


if __name__ == "__main__":
    main()
