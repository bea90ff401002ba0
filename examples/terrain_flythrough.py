"""Terrain fly-through: a procedural height field drawn as a solid mesh lit by a low sun,
flown over along a scripted, keyframed camera path (engine.animation.CameraPath,
centripetal Catmull-Rom through the keys, looking at moving targets)."""

import numpy as np

from engine import Mesh, Node, PerspectiveCamera, Scene
from engine.animation.camera_path import CameraPath
from engine.cli.examples import example_parser, run_example
from engine.game.app import App
from engine.scene.light import AmbientLight, DirectionalLight

SIZE = 80.0  # world units across


def height_field(n, rng):
    """(n*n, 3) points on y = h(x, z): a sum of randomly oriented ridged sine octaves."""
    x, z = np.meshgrid(np.linspace(-SIZE / 2, SIZE / 2, n), np.linspace(-SIZE / 2, SIZE / 2, n))
    h = np.zeros_like(x)
    amp, freq = 6.0, 0.06
    for _ in range(6):
        ang = rng.uniform(0, np.pi)
        d = x * np.cos(ang) + z * np.sin(ang)
        h += amp * (1 - np.abs(np.sin(freq * d + rng.uniform(0, 2 * np.pi))))
        amp, freq = amp * 0.5, freq * 2.1
    h -= h.mean()
    h = np.maximum(h, -1.5)  # a flat lake level
    return np.stack([x.ravel(), h.ravel(), z.ravel()], axis=1)


def grid_faces(n):
    """(2 (n-1)^2, 3) triangles of an n x n vertex grid (row-major, x along a row, z down
    the rows), counter-clockwise seen from above (+Y), so the ground faces up."""
    i, j = np.meshgrid(np.arange(n - 1), np.arange(n - 1), indexing="ij")
    v = (i * n + j).ravel()
    return np.concatenate([np.stack([v, v + n, v + 1], axis=1),
                           np.stack([v + n, v + n + 1, v + 1], axis=1)])


def terrain_colors(p):
    y = p[:, 1]
    t = np.clip((y + 1.5) / 9.0, 0, 1)[:, None]
    water, grass, rock, snow = (np.array(c) for c in
                                ((0.15, 0.35, 0.8), (0.2, 0.6, 0.25), (0.5, 0.42, 0.35), (1, 1, 1)))
    c = np.where(t < 0.45, grass * (1 - t / 0.45) + rock * (t / 0.45),
                 rock * (1 - (t - 0.45) / 0.55) + snow * ((t - 0.45) / 0.55))
    c[y <= -1.5] = water
    return np.clip(c, 0, 1)


def flight_path(duration):
    """A loop around the valley: positions above the ground, targets ahead."""
    path = CameraPath(interpolation="catmull_rom")
    keys = [(-30, 16, 30), (0, 14, 22), (24, 17, 8), (20, 18, -22), (-8, 15, -28),
            (-28, 17, -4), (-30, 16, 30)]
    for i, p in enumerate(keys):
        nxt = np.array(keys[(i + 1) % (len(keys) - 1)])
        target = np.array(p) * 0.2 + nxt * 0.8
        target[1] = -2.0
        path.add(duration * i / (len(keys) - 1), p, target=target)
    return path


class Flythrough(App):
    def __init__(self, grid, size, seed, backend, duration=20.0):
        scene = Scene("terrain", background=(0.55, 0.7, 0.9))
        camera = PerspectiveCamera(fov_y=60, near=0.2, far=200)
        super().__init__(scene, camera, size, seed=seed, backend=backend,
                         title="terrain_flythrough")
        pts = height_field(grid, self.rng)
        scene.add(Node("terrain", geometry=Mesh(pts, grid_faces(grid), terrain_colors(pts))))
        # a low sun from the south-west, and sky light so valleys in shadow stay readable
        scene.add(DirectionalLight("sun", intensity=0.85, color=(1.0, 0.95, 0.85),
                                   position=(0, 0, 0))).look_at((1.0, -0.6, -0.8))
        scene.add(AmbientLight("sky", intensity=0.25, color=(0.75, 0.85, 1.0)))
        self.path = flight_path(duration)
        self.duration = duration
        self.path.apply(camera, 0.0)
        self.hud["triangles"] = f"{2 * (grid - 1) ** 2:,} terrain triangles"

    def on_update(self, dt):
        t = self.time % self.duration
        self.path.apply(self.camera, t)
        self.hud["time"] = f"path t = {t:5.2f} / {self.duration:.0f} s"


parser = example_parser(__doc__, frames=240)
parser.add_argument("--grid", type=int, default=400, help="height samples per side")
args = parser.parse_args()
if args.grid < 2:
    parser.error(f"--grid must be >= 2, got {args.grid}")
raise SystemExit(run_example(Flythrough(args.grid, args.size, args.seed, args.backend), args))
