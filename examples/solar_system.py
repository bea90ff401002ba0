"""Solar system: moons orbit planets orbit a star, a scene-graph hierarchy.

Each body hangs under an orbit pivot node that turns about +Y; a moon's pivot is a
child of its planet, so the moon's world matrix is star . pivot . planet . pivot . moon
and it follows its planet with no extra code. Planets also spin about their own tilted
axis (children of the planet inherit the orbit but not the spin).
"""

import numpy as np

from engine import Node, PerspectiveCamera, PointCloud, Scene
from engine.cli.examples import example_parser, run_example
from engine.game.app import App
from engine.scene.procedural import sphere_points
from engine.scene.transforms import quat_from_axis_angle, quat_multiply

# name, orbit radius, orbit period (s), body radius, colour, moons [(radius, period, size)]
PLANETS = [
    ("mercury", 2.2, 4.0, 0.18, (0.75, 0.7, 0.65), []),
    ("venus", 3.2, 6.5, 0.3, (1.0, 0.8, 0.45), []),
    ("earth", 4.5, 10.0, 0.32, (0.3, 0.55, 1.0), [(0.7, 1.6, 0.09)]),
    ("mars", 5.8, 14.0, 0.24, (1.0, 0.4, 0.25), [(0.45, 1.1, 0.05), (0.65, 2.0, 0.05)]),
    ("jupiter", 8.0, 24.0, 0.7, (0.95, 0.75, 0.55),
     [(1.1, 1.5, 0.08), (1.35, 2.4, 0.07), (1.65, 3.6, 0.1), (1.95, 5.0, 0.09)]),
]


def body(name, radius, color, rng, n=None):
    n = n or int(400 + 5000 * radius ** 2)
    pts = sphere_points(n, radius, seed=int(rng.integers(1 << 31)))
    shade = rng.uniform(0.65, 1.0, (n, 1)) * np.asarray(color)
    return Node(name, geometry=PointCloud(pts, np.clip(shade, 0, 1), point_size=2))


def orbit_ring(radius, n=720):
    a = np.linspace(0, 2 * np.pi, n, endpoint=False)
    pts = np.stack([radius * np.cos(a), np.zeros(n), radius * np.sin(a)], axis=1)
    return PointCloud(pts, np.full((n, 3), 0.25), point_size=1)  # a hairline path


class SolarSystem(App):
    def __init__(self, size, seed, backend):
        scene = Scene("solar system", background=(0.0, 0.0, 0.03))
        camera = PerspectiveCamera(fov_y=45, position=(0, 9, 17), near=0.3, far=100)
        camera.look_at((0, 0, 0))
        super().__init__(scene, camera, size, seed=seed, backend=backend, title="solar_system")
        self.star = scene.add(body("sun", 1.1, (1.0, 0.85, 0.3), self.rng, n=12000))
        self.pivots = []  # (pivot node, period, starting angle)
        self.spinners = []  # (node, tilt quaternion, spin period)
        for name, r, period, size_, color, moons in PLANETS:
            pivot = self.star.add(Node(f"{name}-orbit"))
            self.pivots.append((pivot, period, self.rng.uniform(0, 2 * np.pi)))
            self.star.add(Node(f"{name}-path", geometry=orbit_ring(r)))
            carrier = pivot.add(Node(f"{name}-carrier", position=(r, 0, 0)))
            planet = carrier.add(body(name, size_, color, self.rng))
            tilt = quat_from_axis_angle((0, 0, 1), np.radians(self.rng.uniform(5, 30)))
            self.spinners.append((planet, tilt, period / 6))
            for i, (mr, mp, ms) in enumerate(moons):
                mpivot = carrier.add(Node(f"{name}-moon{i}-orbit"))
                self.pivots.append((mpivot, mp, self.rng.uniform(0, 2 * np.pi)))
                mpivot.add(body(f"{name}-moon{i}", ms, (0.85, 0.85, 0.85), self.rng, n=150)
                           ).position = (mr, 0, 0)
        self.hud["title"] = "Solar system: a scene-graph hierarchy"

    def on_update(self, dt):
        t = self.time
        for pivot, period, phase in self.pivots:
            pivot.rotation = quat_from_axis_angle((0, 1, 0), phase + 2 * np.pi * t / period)
        for planet, tilt, period in self.spinners:
            planet.rotation = quat_multiply(tilt, quat_from_axis_angle((0, 1, 0),
                                                                       2 * np.pi * t / period))
        self.hud["time"] = f"{t * 36.5:6.1f} days"


args = example_parser(__doc__, frames=120).parse_args()
raise SystemExit(run_example(SolarSystem(args.size, args.seed, args.backend), args))
