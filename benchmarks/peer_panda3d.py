"""The transforms workload of benchmarks/entities.py in Panda3D, for a side-by-side figure.

    .venv/bin/python benchmarks/peer_panda3d.py K [--points 100] [--frames 20] [--frame 1280x720]

K nodes sharing one GeomNode of ``--points`` points, every node given a new position and
rotation (``setPosHpr``) every frame, rendered offscreen by Panda3D's headless GL
(``p3headlessgl``: EGL, Mesa llvmpipe on the CPU machines) and read back to host memory
(``getScreenshot``), as the engine's frames end as host images. Prints one JSON line:
{"k": K, "transform_ms": median, "render_ms": median, "frame_ms": median, "drawn_pixels":
pixels that are not background in the last frame, "renderer": GL}.
Run by entities.py in a subprocess when Panda3D is installed (it is not a dependency:
``pip install panda3d``); Panda3D's window layer and pyglet's must not share a process.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("k", type=int)
    p.add_argument("--points", type=int, default=100)
    p.add_argument("--frames", type=int, default=20)
    p.add_argument("--frame", default="1280x720")
    args = p.parse_args(argv)
    w, h = (int(v) for v in args.frame.lower().split("x"))
    from panda3d.core import loadPrcFileData

    loadPrcFileData("", f"window-type offscreen\nload-display p3headlessgl\n"
                        f"audio-library-name null\nwin-size {w} {h}\nsync-video false\n"
                        f"notify-level-device fatal\n")
    from direct.showbase.ShowBase import ShowBase
    from panda3d.core import (
        Geom,
        GeomNode,
        GeomPoints,
        GeomVertexData,
        GeomVertexFormat,
        GeomVertexWriter,
    )

    base = ShowBase()
    base.setBackgroundColor(0, 0, 0, 1)
    base.disableMouse()  # else the default trackball moves the camera every frame
    rng = np.random.default_rng(0)
    vdata = GeomVertexData("pts", GeomVertexFormat.getV3(), Geom.UHStatic)
    vdata.setNumRows(args.points)
    writer = GeomVertexWriter(vdata, "vertex")
    for q in rng.uniform(-0.3, 0.3, (args.points, 3)):
        writer.addData3(*q)
    prim = GeomPoints(Geom.UHStatic)
    prim.addConsecutiveVertices(0, args.points)
    geom = Geom(vdata)
    geom.addPrimitive(prim)
    gnode = GeomNode("cloud")
    gnode.addGeom(geom)
    k = args.k
    side = max(1.0, k ** (1 / 3) * 1.2)
    nodes = []
    for i in range(k):  # one transform node per object, all sharing the points
        holder = base.render.attachNewNode(f"o{i}")
        holder.attachNewNode(gnode)  # (a node can have many parents, not one twice)
        nodes.append(holder)
    import math

    vfov = 60.0  # the engine workload's camera: 60 degrees vertical at this aspect
    base.camLens.setFov(math.degrees(2 * math.atan(math.tan(math.radians(vfov / 2)) * w / h)),
                        vfov)
    base.camLens.setNearFar(0.1, 10 * side)
    base.cam.setPos(0, -3.2 * side, 0)
    base.cam.lookAt(0, 0, 0)
    base.graphicsEngine.renderFrame()
    base.win.getScreenshot()
    base_pos = rng.uniform(-side, side, (k, 3))
    transform, render = [], []
    for f in range(args.frames + 2):
        t0 = time.perf_counter()
        t = 0.05 * f
        pos = (base_pos + 0.3 * np.sin(t + base_pos[:, ::-1])).tolist()
        hpr = (np.arange(k) * 0.57 + t * 50).tolist()
        for node, (x, y, z), a in zip(nodes, pos, hpr):
            node.setPosHpr(x, y, z, a, a * 0.5, 0.0)
        t1 = time.perf_counter()
        base.graphicsEngine.renderFrame()
        base.win.getScreenshot()  # the frame on the host, as the engine's
        t2 = time.perf_counter()
        if f >= 2:
            transform.append((t1 - t0) * 1000)
            render.append((t2 - t1) * 1000)
    tr, rd = statistics.median(transform), statistics.median(render)
    shot = base.win.getScreenshot()
    pixels = np.frombuffer(bytes(shot.getRamImage()), np.uint8)  # BGRA rows
    drawn = int(np.count_nonzero(pixels.reshape(-1, 4)[:, :3].max(axis=1) > 0))
    print(json.dumps({"k": k, "transform_ms": tr, "render_ms": rd, "frame_ms": tr + rd,
                      "drawn_pixels": drawn, "renderer": base.win.getGsg().getDriverRenderer()}))


if __name__ == "__main__":
    main()
