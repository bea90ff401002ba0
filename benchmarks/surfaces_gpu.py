"""Surface-rasterizer targets on a GPU: small triangles per second, and a 10M-triangle
mesh at 3840x2160, timed as whole frames on the cupy backend (device work synchronised,
the finished frame copied to the host), beside the Numba path on the same scene at a
smaller size for reference.

    python benchmarks/surfaces_gpu.py [--triangles 1e7] [--size 3840x2160] [--json PATH]
                                      [--backend cupy]

Meshes are generated here with NumPy (a UV sphere tessellated to the asked triangle
count), so the script needs nothing beyond the engine, NumPy and CuPy: it runs on the
GPU machine's image as it is (benchmarks/gpu_run.py runs it). Targets (issue 10):
>= 1 G small triangles/s, and the 10M-triangle frame at 3840x2160 in <= 10 ms.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import Mesh, Node, PerspectiveCamera, Renderer, Scene
from engine.render.renderer import parse_size


def uv_sphere(triangles: int):
    """A unit UV sphere with about ``triangles`` triangles: (positions (N, 3) float32,
    faces (M, 3) int64, normals (N, 3) float32)."""
    rings = max(4, int(np.sqrt(triangles / 4)))
    segments = 2 * rings
    theta = np.linspace(0, np.pi, rings + 1)
    phi = np.linspace(0, 2 * np.pi, segments + 1)
    t, p = np.meshgrid(theta, phi, indexing="ij")
    pos = np.stack([np.sin(t) * np.cos(p), np.cos(t), np.sin(t) * np.sin(p)], -1).reshape(-1, 3)
    i, j = np.meshgrid(np.arange(rings), np.arange(segments), indexing="ij")
    cols = segments + 1
    a, b = i * cols + j, (i + 1) * cols + j
    faces = np.concatenate([np.stack([a, a + 1, b], -1).reshape(-1, 3),
                            np.stack([b, a + 1, b + 1], -1).reshape(-1, 3)])
    return pos.astype(np.float32), faces.astype(np.int64), pos.astype(np.float32)


def frame_ms(backend, scene, camera, size, repeats):
    r = Renderer(scene, camera, size, backend=backend)
    r.render()  # compile, upload, allocate
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        r.render()  # returns a host frame: the device work is finished
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--triangles", type=float, default=1e7)
    p.add_argument("--size", type=parse_size, default=(3840, 2160))
    p.add_argument("--backend", default="cupy")
    p.add_argument("--reference-size", type=parse_size, default=(640, 360),
                   help="frame size of the Numba reference run")
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    pos, faces, normals = uv_sphere(int(args.triangles))
    scene = Scene(background=(0.0, 0.0, 0.0))
    scene.add(Node("sphere", geometry=Mesh(pos, faces, normals=normals)))
    camera = scene.add(PerspectiveCamera(fov_y=50, aspect=args.size[0] / args.size[1],
                                         position=(0, 0, 2.6)))
    rows = {"triangles": len(faces), "size": list(args.size)}
    ms = frame_ms(args.backend, scene, camera, args.size, 5)
    rows[f"{args.backend}_ms"] = ms
    rows[f"{args.backend}_triangles_per_s"] = len(faces) / ms * 1e3
    print(f"{args.backend}: {len(faces):,} triangles at {args.size[0]}x{args.size[1]}: "
          f"{ms:.2f} ms per frame, {len(faces) / ms / 1e6:.2f} G triangles/s "
          f"(targets: <= 10 ms, >= 1 G/s)", flush=True)
    if args.backend != "numba":
        camera.aspect = args.reference_size[0] / args.reference_size[1]
        ref = frame_ms("numba", scene, camera, args.reference_size, 2)
        rows["numba_ms_reference_size"] = ref
        rows["reference_size"] = list(args.reference_size)
        print(f"numba: the same mesh at {args.reference_size[0]}x{args.reference_size[1]}: "
              f"{ref:.1f} ms per frame", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
