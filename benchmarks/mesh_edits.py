"""Mesh edits: what a deforming mesh costs per frame, measured side by side in one run.

    .venv/bin/python benchmarks/mesh_edits.py [--static 160000] [--blob 40000]
                                              [--frames 15] [--frame 640x360]
                                              [--backend numba]

A scene holds a static mesh of at least ``--static`` vertices and a smaller "blob" mesh
of at least ``--blob`` vertices that wobbles every frame (icospheres: 10 * 4^s + 2
vertices, s at most 7, so 163,842 at most). Per frame (median of
``--frames``, frames alternating between the paths so machine load hits them alike):

    (a) still     nothing changes: the frame alone
    (b) update    ``blob.update(positions=...)``: the same vertex count, rewritten in
                  place in the batch (no repack; only the blob's rows of the attributes
                  are packed again)
    (c) replace   ``node.geometry = Mesh(...)`` with the same wobbled positions: the
                  workaround before ``update`` existed, a repack of the whole scene
                  every frame

and the ratios (b)/(a) and (c)/(b). The frames of (b) and (c) are compared: the repack
of (c) re-centres the precision origin, which may move a few edge pixels. Timings are wall-clock on the host; compare figures within one run only.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import Mesh, Node, PerspectiveCamera, Renderer, Scene
from engine.scene.procedural import icosphere


def _sphere(vertices: int):
    """An icosphere with at least ``vertices`` vertices (10 * 4^s + 2), s <= 7."""
    s = 0
    while 10 * 4 ** s + 2 < vertices and s < 7:
        s += 1
    return icosphere(s)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--static", type=int, default=160_000)
    ap.add_argument("--blob", type=int, default=40_000)
    ap.add_argument("--frames", type=int, default=15)
    ap.add_argument("--frame", default="640x360")
    ap.add_argument("--backend", default="numba")
    args = ap.parse_args(argv)
    size = tuple(int(v) for v in args.frame.split("x"))

    sv, sf = _sphere(args.static)
    bv, bf = _sphere(args.blob)
    scene = Scene()
    scene.add(Node("static", geometry=Mesh(sv * 2.0 + (-2.5, 0, 0), sf, colors="steelblue")))
    blob_node = scene.add(Node("blob", position=(2.0, 0, 0),
                               geometry=Mesh(bv, bf, colors="orange")))
    camera = scene.add(PerspectiveCamera(fov_y=50, aspect=size[0] / size[1],
                                         position=(0, 0, 9)))
    renderer = Renderer(scene, camera, size, backend=args.backend)
    rest = bv.astype(np.float32)

    def wobbled(k):
        return rest * (1 + 0.1 * np.sin(5 * rest[:, 1] + k))[:, None]

    def still(k):
        return renderer.render()

    def update(k):
        blob_node.geometry.update(positions=wobbled(k))
        return renderer.render()

    def replace(k):
        blob_node.geometry = Mesh(wobbled(k), bf, colors="orange")
        return renderer.render()

    paths = {"still": still, "update": update, "replace": replace}
    times = {name: [] for name in paths}
    for k in range(2):  # warm-up: compiles, first packs
        for fn in paths.values():
            fn(k)
    worst = 0.0  # largest fraction of pixels where (b) and (c) differ
    for k in range(args.frames):
        frames = {}
        for name, fn in paths.items():
            t0 = time.perf_counter()
            frames[name] = fn(k).color
            times[name].append(time.perf_counter() - t0)
        differ = np.any(frames["update"] != frames["replace"], axis=-1).mean()
        worst = max(worst, differ)
    med = {name: statistics.median(v) * 1000 for name, v in times.items()}
    nv = sum(n.geometry.vertex_count for n in (scene.find("static"), blob_node))
    print(f"mesh edits: {nv:,} vertices ({blob_node.geometry.vertex_count:,} in the blob), "
          f"{size[0]}x{size[1]}, backend {renderer.projector.name}, "
          f"median of {args.frames} frames")
    for name in paths:
        print(f"  ({'abc'[list(paths).index(name)]}) {name:8s} {med[name]:8.1f} ms/frame")
    print(f"  (b) and (c) differ on at most {worst:.3%} of the pixels (a repack moves "
          f"the precision origin)")
    print(f"  update / still   {med['update'] / med['still']:.2f}x")
    print(f"  replace / update {med['replace'] / med['update']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
