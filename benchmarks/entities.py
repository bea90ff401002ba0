"""Entity churn: does spawning and despawning objects at runtime keep the frame time steady?

    .venv/bin/python benchmarks/entities.py [--vertices 100000] [--rate 1000] [--fps 60]
                                            [--seconds 3] [--backend auto] [--frame 640x360]

A static scene of ``--vertices`` points (one big cloud), plus small 16-point objects that
fly across it. Each simulated frame (1/fps s of simulated time) runs the App's update
and renders one frame (projection + software rasterization). Three runs, same seed:

    steady      the same number of small objects alive, none spawned or removed
    churn       ``rate`` spawns and ``rate`` despawns per simulated second through
                App.spawn / App.despawn (slot + vertex-range free lists, no repack)
    repack      the same churn through plain scene.add / Node.remove, which makes the
                batch repack everything on the next frame (the path without entities)

For each run it prints the per-frame milliseconds (min / median / p90 / p99 / max) and
how many full repacks the batch did. Frame times are wall-clock on the host (the CPU
backends and the software rasterizer are synchronous; with the cupy backend the
rasterizer's readback synchronises each frame). Compare runs within one invocation only:
the machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from engine import Node, PerspectiveCamera, PointCloud, Scene
from engine.game.app import App
from engine.render.renderer import parse_size

SMALL = 16  # vertices per spawned object


class Churn(App):
    def __init__(self, mode, vertices, rate, fps, size, backend, seed=0):
        scene = Scene("entities", background=(0, 0, 0))
        camera = PerspectiveCamera(fov_y=60, position=(0, 0, 12), near=0.5, far=50)
        super().__init__(scene, camera, size, update_hz=fps, seed=seed, backend=backend)
        pts = self.rng.uniform(-5, 5, (vertices, 3))
        scene.add(Node("static", geometry=PointCloud(pts, (pts + 5) / 10)))
        self.mode, self.rate = mode, rate
        self.life = 1.0  # s: with rate spawns/s about `rate` objects are alive
        self.alive: list[tuple[Node, float, np.ndarray]] = []
        self.budget = 0.0
        # A few shared geometries, as a game shares its bullet/debris shapes: the batch
        # copies each spawned node's points into its own vertex range anyway.
        self.shapes = [PointCloud(self.rng.uniform(-0.1, 0.1, (SMALL, 3)),
                                  np.tile((1.0, 0.9, 0.2), (SMALL, 1)), point_size=2)
                       for _ in range(8)]
        self.spawned = self.despawned = 0
        # Start at the steady state so every run draws the same number of objects.
        for i in range(rate):
            self._add(born=-self.life * i / rate)

    def _add(self, born):
        node = Node("e", position=self.rng.uniform(-5, 5, 3), geometry=self.shapes[len(self.alive) % 8])
        velocity = self.rng.normal(0, 1, 3)
        if self.mode == "churn":
            self.spawn(node)
        else:
            self.scene.add(node)
        self.alive.append((node, born, velocity))

    def _remove(self, node):
        if self.mode == "churn":
            self.despawn(node)
        else:
            node.parent.remove(node)

    def on_update(self, dt):
        for node, _, v in self.alive:
            node.position = node.position + v * dt
        if self.mode == "steady":
            return
        keep = []
        for item in self.alive:
            if self.time - item[1] >= self.life:
                self._remove(item[0])
                self.despawned += 1
            else:
                keep.append(item)
        self.alive = keep
        self.budget += self.rate * dt
        while self.budget >= 1.0:
            self._add(born=self.time)
            self.spawned += 1
            self.budget -= 1.0


def run(mode, args, size):
    app = Churn(mode, args.vertices, args.rate, args.fps, size, args.backend)
    frame_dt = 1.0 / args.fps
    for _ in range(5):  # warm-up: JIT, buffer growth, first-touch
        app.advance(frame_dt)
        app.renderer.render()
    repacks0 = app.renderer.batch.repacks
    times = []
    for _ in range(int(args.seconds * args.fps)):
        t0 = time.perf_counter()
        app.advance(frame_dt)
        app.renderer.render()
        times.append((time.perf_counter() - t0) * 1000)
    return app, np.array(times), app.renderer.batch.repacks - repacks0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--vertices", type=int, default=100_000)
    p.add_argument("--rate", type=int, default=1000, help="spawns (and despawns) per second")
    p.add_argument("--fps", type=float, default=60.0, help="simulated frames per second")
    p.add_argument("--seconds", type=float, default=3.0, help="simulated seconds per run")
    p.add_argument("--backend", default="auto", help="projection backend (default: auto)")
    p.add_argument("--frame", default="640x360", help="frame size WIDTHxHEIGHT")
    args = p.parse_args(argv)
    size = parse_size(args.frame)
    print(f"{args.vertices:,} static vertices + ~{args.rate:,} objects of {SMALL} points, "
          f"{args.rate:,}/s spawned and despawned, {args.fps:g} frames per simulated s, "
          f"{args.frame}, backend {args.backend}")
    print(f"{'run':8} {'frames':>6} {'spawn':>6} {'despawn':>7} {'repacks':>7} "
          f"{'min':>7} {'median':>7} {'p90':>7} {'p99':>7} {'max':>7}   ms/frame")
    medians = {}
    for mode in ("steady", "churn", "repack"):
        app, t, repacks = run(mode, args, size)
        q = np.percentile(t, [0, 50, 90, 99, 100])
        medians[mode] = q[1]
        print(f"{mode:8} {len(t):6d} {app.spawned:6d} {app.despawned:7d} {repacks:7d} "
              + " ".join(f"{v:7.2f}" for v in q))
    print(f"median frame time: churn / steady = {medians['churn'] / medians['steady']:.2f}, "
          f"repack / steady = {medians['repack'] / medians['steady']:.2f}")


if __name__ == "__main__":
    main()
