"""Game-scale entities: thousands of objects moved every frame, and spawn/despawn churn.

    .venv/bin/python benchmarks/entities.py [transforms] [--counts 1000,10000] [--points 100]
                                            [--frames 30] [--frame 1280x720] [--backend numba]
    .venv/bin/python benchmarks/entities.py rocks [--rocks 10000] [--frames 20] [--frame 960x540]
    .venv/bin/python benchmarks/entities.py churn [--vertices 100000] [--rate 1000] [--fps 60]
                                            [--seconds 3] [--backend auto] [--frame 640x360]

transforms: K objects of ``--points`` points each, every object given a new position and
rotation every frame, drawn as points, through

    (a) setters     ``node.position = p; node.rotation = q`` per node, then a frame
    (b) instances   one ``Instances`` node: ``inst.positions[:] = P; inst.rotations[:] = Q``
    (b') set_transforms  ``set_transforms(nodes, positions=P, rotations=Q)`` on K nodes
    (c) baseline    the (K, 4, 4) model matrices built by NumPy (``trs_matrices``) and fed
                    straight to the engine's projection kernel and rasterizer
    (peer) panda3d  where Panda3D is installed (not a dependency): the same nodes moved with
                    ``setPosHpr`` and drawn by its headless GL (llvmpipe on a CPU machine),
                    frame read back (benchmarks/peer_panda3d.py, in its own process)

in one run, frames alternating between the paths so machine load hits them alike. Per
frame it reports the Python transform work (setters or array writes plus the batch's
matrix update; for (c) building the matrices), the projection and the raster, each the
median over ``--frames`` frames, and the ratios to (c). Targets of issue 12: (b) within
1.2x of (c) at K = 10,000, (a) within 1.5x of (c) at K = 1,000.

rocks: the asteroids workload: ``--rocks`` lit, flat-shaded low-poly rocks (icosahedra,
12 vertices and 20 triangles each) in one Instances node, all moving and spinning every
frame, full frames (``Renderer.render``: projection, triangle setup, raster, shading).
Reports the transform work's share of the frame (target: under 20 %).

churn: the earlier benchmark: a static cloud plus small objects spawned and despawned
at ``--rate`` per simulated second through App.spawn/despawn ("churn"), none ("steady"),
or plain scene.add/remove that repacks ("repack").

Timings are wall-clock on the host (the CPU backends and the software rasterizer are
synchronous). Compare figures within one invocation only: the machines are shared.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from engine import (
    Instances,
    Material,
    Mesh,
    Node,
    PerspectiveCamera,
    PointCloud,
    Renderer,
    Scene,
    set_transforms,
)
from engine.game.app import App
from engine.render.renderer import parse_size
from engine.scene.procedural import icosphere
from engine.scene.transforms import trs_matrices

SMALL = 16  # vertices per spawned object (churn)


# --- transforms ------------------------------------------------------------------------------
def _raster(renderer, projection):
    """The rasterizer call ``Renderer.render`` makes for a points-only frame."""
    args = (projection.screen_xy, projection.depth, projection.visible, renderer.batch.colors,
            renderer.size, renderer.effective_point_size(), renderer.scene.background)
    if renderer.projector.name == "numba":
        from engine.render.backends.numba_raster import rasterize_points_numba

        return rasterize_points_numba(*args)
    from engine.render.points import rasterize_points

    return rasterize_points(*args)


class Workload:
    """K objects of n points and the per-frame poses they all get."""

    def __init__(self, k, n, size, backend, seed=0):
        rng = np.random.default_rng(seed)
        self.k, self.size = k, size
        # 1 px points on every path: the default size follows each cloud's point count,
        # which differs between the paths that merge objects and those that do not
        self.geometry = PointCloud(rng.uniform(-0.3, 0.3, (n, 3)), colors="white",
                                   point_size=1)
        side = max(1.0, (k ** (1 / 3)) * 1.2)
        self.base = rng.uniform(-side, side, (k, 3))
        self.axis = rng.normal(size=(k, 3))
        self.axis /= np.linalg.norm(self.axis, axis=1, keepdims=True)
        self.camera = PerspectiveCamera(fov_y=60, position=(0, 0, 3.2 * side), near=0.1,
                                        far=10 * side)
        self.backend = backend

    def pose(self, frame):
        """(positions (K, 3), unit quaternions (K, 4)) for ``frame``."""
        t = 0.05 * frame
        p = self.base + 0.3 * np.sin(t + self.base[:, ::-1])
        half = 0.5 * (t + np.arange(self.k) * 0.01)
        q = np.concatenate([self.axis * np.sin(half)[:, None], np.cos(half)[:, None]], axis=1)
        return p, q

    def nodes_scene(self):
        scene = Scene()
        nodes = [scene.add(Node(f"o{i}", position=self.base[i], geometry=self.geometry))
                 for i in range(self.k)]
        return scene, nodes

    def renderer(self, scene):
        r = Renderer(scene, self.camera, self.size, backend=self.backend)
        r.render()  # pack, compile, warm buffers
        return r


class SettersPath:
    name = "(a) setters"

    def __init__(self, w):
        scene, self.nodes = w.nodes_scene()
        self.w, self.r = w, w.renderer(scene)

    def transform(self, p, q):
        for node, pi, qi in zip(self.nodes, p, q):
            node.position = pi
            node.rotation = qi
        self.r.batch.sync(self.r.camera)

    def draw(self):
        t0 = time.perf_counter()
        proj = self.r.project()
        t1 = time.perf_counter()
        frame = _raster(self.r, proj)
        return t1 - t0, time.perf_counter() - t1, frame


class SetTransformsPath(SettersPath):
    name = "(b') set_transforms"

    def transform(self, p, q):
        set_transforms(self.nodes, positions=p, rotations=q)
        self.r.batch.sync(self.r.camera)


class InstancesPath(SettersPath):
    name = "(b) instances"

    def __init__(self, w):
        scene = Scene()
        self.inst = scene.add(Instances(w.geometry, positions=w.base))
        self.w, self.r = w, w.renderer(scene)

    def transform(self, p, q):
        self.inst.positions[:] = p
        self.inst.rotations[:] = q
        self.r.batch.sync(self.r.camera)


class BaselinePath:
    """(K, 4, 4) matrices built by NumPy, fed to the engine's kernel and rasterizer."""

    name = "(c) baseline"

    def __init__(self, w):
        scene = Scene()
        scene.add(Node("probe", geometry=w.geometry))  # only to get the same projector
        self.r = w.renderer(scene)
        n = w.geometry.vertex_count
        self.positions = np.ascontiguousarray(np.tile(w.geometry.positions, (w.k, 1)))
        self.object_id = np.repeat(np.arange(w.k, dtype=np.uint32), n)
        self.colors = np.ascontiguousarray(np.tile(w.geometry.colors, (w.k, 1)))
        self.runs = np.stack([np.arange(w.k) * n, np.arange(1, w.k + 1) * n,
                              np.arange(w.k)], axis=1).astype(np.int64)
        self.ones = np.ones((w.k, 3))
        self.w, self.model = w, None

    def transform(self, p, q):
        self.model = trs_matrices(p, q, self.ones).astype(np.float32)

    def draw(self):
        w, r = self.w, self.r
        w.camera.set_viewport(*w.size)
        vp = w.camera.view_projection_matrix.astype(np.float32)
        t0 = time.perf_counter()
        proj = r.projector.project(self.positions, self.object_id, self.model, vp, w.size,
                                   runs=self.runs)
        t1 = time.perf_counter()
        args = (proj.screen_xy, proj.depth, proj.visible, self.colors, w.size, 1.0,
                (0, 0, 0, 1))
        if r.projector.name == "numba":
            from engine.render.backends.numba_raster import rasterize_points_numba

            frame = rasterize_points_numba(*args)
        else:
            from engine.render.points import rasterize_points

            frame = rasterize_points(*args)
        return t1 - t0, time.perf_counter() - t1, frame


def run_transforms(args):
    size = parse_size(args.frame)
    counts = [int(float(c)) for c in args.counts.split(",")]
    print(f"{args.points} points per object, every object moved and turned every frame, "
          f"{args.frame}, backend {args.backend}, median of {args.frames} frames (ms)")
    print(f"{'K':>6} {'path':22} {'transform':>9} {'project':>8} {'raster':>7} "
          f"{'frame':>7} {'vs (c)':>7}")
    results = {}
    for k in counts:
        w = Workload(k, args.points, size, args.backend)
        paths = [SettersPath(w), InstancesPath(w), SetTransformsPath(w), BaselinePath(w)]
        times = {p.name: ([], [], []) for p in paths}
        frames = {}
        for f in range(args.frames + 2):
            p, q = w.pose(f)
            for path in paths:
                t0 = time.perf_counter()
                path.transform(p, q)
                t1 = time.perf_counter()
                proj_s, raster_s, frame = path.draw()
                if f >= 2:  # warm-up frames left out
                    for lst, v in zip(times[path.name], (t1 - t0, proj_s, raster_s)):
                        lst.append(v * 1000)
                frames[path.name] = frame
        ref = frames["(c) baseline"].color
        for name, frame in frames.items():  # every path drew the same picture (the engine
            # composes camera-relative matrices, so float32 rounding moves a few splats by
            # a pixel against the baseline's world matrices)
            off = np.mean(np.any(frame.color != ref, axis=2))
            assert off < 0.02, f"{name} differs from the baseline on {off:.2%} of pixels"
        base = sum(statistics.median(v) for v in times["(c) baseline"])
        for path in paths:
            med = [statistics.median(v) for v in times[path.name]]
            total = sum(med)
            results[(k, path.name)] = total / base
            print(f"{k:6d} {path.name:22} {med[0]:9.2f} {med[1]:8.2f} {med[2]:7.2f} "
                  f"{total:7.2f} {total / base:6.2f}x")
        peer = _panda3d(k, args)
        if peer is not None:
            results[(k, "panda3d")] = peer["frame_ms"] / base
            print(f"{k:6d} {'(peer) panda3d':22} {peer['transform_ms']:9.2f} "
                  f"{'GL: ' + format(peer['render_ms'], '.2f'):>16} "
                  f"{peer['frame_ms']:7.2f} {peer['frame_ms'] / base:6.2f}x   "
                  f"({peer['renderer'].split(' (')[0]}, incl. readback)")
    if (1000, "(a) setters") in results:
        print(f"target (a) <= 1.5x (c) at K=1,000: {results[(1000, '(a) setters')]:.2f}x")
    if (10000, "(b) instances") in results:
        st = results[(10000, SetTransformsPath.name)]
        print(f"target (b) <= 1.2x (c) at K=10,000: instances "
              f"{results[(10000, InstancesPath.name)]:.2f}x, set_transforms {st:.2f}x")
    return results


def _panda3d(k, args):
    """The same workload in Panda3D (benchmarks/peer_panda3d.py, its own process), or
    None when Panda3D is not installed or cannot open a headless GL context."""
    import importlib.util
    import json
    import subprocess
    import sys
    from pathlib import Path

    if importlib.util.find_spec("panda3d") is None:
        return None
    script = Path(__file__).with_name("peer_panda3d.py")
    r = subprocess.run([sys.executable, str(script), str(k), "--points", str(args.points),
                        "--frames", str(args.frames), "--frame", args.frame],
                       capture_output=True, text=True, timeout=900, check=False)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if r.returncode != 0 or not lines:
        print(f"(panda3d did not run: {(r.stderr or r.stdout).strip().splitlines()[-1:]})")
        return None
    return json.loads(lines[-1])


# --- rocks (the asteroids workload) --------------------------------------------------------------
def run_rocks(args):
    size = parse_size(args.frame)
    rng = np.random.default_rng(0)
    k = args.rocks
    p, f = icosphere(0, 1.0)
    p = p * rng.uniform(0.75, 1.15, (len(p), 1))
    rock = Mesh(p, f, colors=(0.62, 0.58, 0.52), material=Material(shading="flat"))
    scene = Scene(background=(0, 0, 0.04))
    half = np.array([60.0, 34.0])
    pos = np.column_stack([rng.uniform(-1, 1, (k, 2)) * half, rng.uniform(-6, 0, k)])
    vel = np.column_stack([rng.normal(0, 2, (k, 2)), np.zeros(k)])
    axis = rng.normal(size=(k, 3))
    axis /= np.linalg.norm(axis, axis=1, keepdims=True)
    spin = rng.uniform(-2, 2, k)
    scales = rng.uniform(0.25, 0.8, k)
    inst = scene.add(Instances(rock, positions=pos, scales=scales))
    cam = PerspectiveCamera(fov_y=50, position=(0, 0, 80), near=1, far=200)
    r = Renderer(scene, cam, size, backend=args.backend)
    r.render()
    transform, frame_ms = [], []
    dt = 1 / 60
    for i in range(args.frames + 2):
        t0 = time.perf_counter()
        pos += vel * dt
        pos[:, :2] = (pos[:, :2] + half) % (2 * half) - half
        angle = spin * (i * dt)
        inst.positions[:] = pos
        inst.rotations[:] = np.column_stack([axis * np.sin(angle / 2)[:, None],
                                             np.cos(angle / 2)])
        r.batch.sync(cam)
        t1 = time.perf_counter()
        r.render()
        t2 = time.perf_counter()
        if i >= 2:
            transform.append((t1 - t0) * 1000)
            frame_ms.append((t2 - t0) * 1000)
    tr, fr = statistics.median(transform), statistics.median(frame_ms)
    print(f"{k:,} lit low-poly rocks ({k * 12:,} vertices, {k * 20:,} triangles), all moving, "
          f"{args.frame}, backend {r.projector.name}, median of {args.frames} frames")
    print(f"transform work {tr:.2f} ms of a {fr:.2f} ms frame: {100 * tr / fr:.1f} % "
          f"(target under 20 %); the rest is projection, triangles, raster and shading")
    return tr / fr


# --- churn (spawn / despawn) ---------------------------------------------------------------------
class Churn(App):
    def __init__(self, mode, vertices, rate, fps, size, backend, seed=0):
        scene = Scene("entities", background=(0, 0, 0))
        camera = PerspectiveCamera(fov_y=60, position=(0, 0, 12), near=0.5, far=50)
        super().__init__(scene, camera, size, update_hz=fps, seed=seed, backend=backend)
        pts = self.rng.uniform(-5, 5, (vertices, 3))
        scene.add(Node("static", geometry=PointCloud(pts, (pts + 5) / 10, point_size=1)))
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
        node = Node("e", position=self.rng.uniform(-5, 5, 3),
                    geometry=self.shapes[len(self.alive) % 8])
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
            node.position += v * dt
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


def _churn_run(mode, args, size):
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


def run_churn(args):
    size = parse_size(args.frame)
    print(f"{args.vertices:,} static vertices + ~{args.rate:,} objects of {SMALL} points, "
          f"{args.rate:,}/s spawned and despawned, {args.fps:g} frames per simulated s, "
          f"{args.frame}, backend {args.backend}")
    print(f"{'run':8} {'frames':>6} {'spawn':>6} {'despawn':>7} {'repacks':>7} "
          f"{'min':>7} {'median':>7} {'p90':>7} {'p99':>7} {'max':>7}   ms/frame")
    medians = {}
    for mode in ("steady", "churn", "repack"):
        app, t, repacks = _churn_run(mode, args, size)
        q = np.percentile(t, [0, 50, 90, 99, 100])
        medians[mode] = q[1]
        print(f"{mode:8} {len(t):6d} {app.spawned:6d} {app.despawned:7d} {repacks:7d} "
              + " ".join(f"{v:7.2f}" for v in q))
    print(f"median frame time: churn / steady = {medians['churn'] / medians['steady']:.2f}, "
          f"repack / steady = {medians['repack'] / medians['steady']:.2f}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="bench")
    t = sub.add_parser("transforms", help="(a) setters, (b) instances, (c) NumPy baseline")
    t.add_argument("--counts", default="1000,10000", help="object counts K, comma-separated")
    t.add_argument("--points", type=int, default=100, help="points per object")
    t.add_argument("--frames", type=int, default=30, help="measured frames per path")
    t.add_argument("--frame", default="1280x720", help="frame size WIDTHxHEIGHT")
    t.add_argument("--backend", default="numba", help="projection backend")
    r = sub.add_parser("rocks", help="the asteroids workload: lit low-poly rocks")
    r.add_argument("--rocks", type=int, default=10_000)
    r.add_argument("--frames", type=int, default=20)
    r.add_argument("--frame", default="960x540")
    r.add_argument("--backend", default="numba")
    c = sub.add_parser("churn", help="spawn/despawn at runtime")
    c.add_argument("--vertices", type=int, default=100_000)
    c.add_argument("--rate", type=int, default=1000, help="spawns (and despawns) per second")
    c.add_argument("--fps", type=float, default=60.0, help="simulated frames per second")
    c.add_argument("--seconds", type=float, default=3.0, help="simulated seconds per run")
    c.add_argument("--backend", default="auto", help="projection backend (default: auto)")
    c.add_argument("--frame", default="640x360", help="frame size WIDTHxHEIGHT")
    import sys

    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] not in ("transforms", "rocks", "churn", "-h", "--help"):
        argv = ["transforms", *argv]
    args = p.parse_args(argv)
    {"transforms": run_transforms, "rocks": run_rocks, "churn": run_churn}[args.bench](args)


if __name__ == "__main__":
    main()
