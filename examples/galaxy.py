"""Galaxy: 10^6 particles on logarithmic spiral arms, rotating.

The disc is split into a few concentric rings, each a node that turns about +Y at its
own angular speed (inner rings faster, a flat-ish rotation curve omega ~ 1/r), so the
animation is a handful of model-matrix uploads and still one projection launch per
frame: the particles never leave the device.
"""

import numpy as np

from engine import Node, PerspectiveCamera, PointCloud, Scene
from engine.cli.examples import example_parser, run_example
from engine.game.app import App
from engine.scene.transforms import quat_from_axis_angle

RINGS = 8
R_MAX = 10.0


def spiral_galaxy(n, rng, arms=4, pitch_deg=14.0):
    """(n, 3) positions and (n, 3) colours: a bulge plus arms r = a * exp(b * theta)."""
    n_bulge = n // 6
    n_arm = n - n_bulge
    # Bulge: a squashed Gaussian ball, warm white.
    bulge = rng.normal(0, 0.9, (n_bulge, 3)) * (1.0, 0.45, 1.0)
    # Arms: radius with an exponential disc profile, angle along the log spiral of each
    # arm plus scatter that grows outwards.
    r = 0.6 + rng.exponential(3.0, n_arm) % (R_MAX - 0.6)
    b = 1.0 / np.tan(np.radians(90.0 - pitch_deg))
    arm = rng.integers(0, arms, n_arm)
    theta = np.log(r / 0.6) / b + arm * (2 * np.pi / arms)
    theta += rng.normal(0, 0.12 + 0.015 * r, n_arm)
    disc = np.stack([r * np.cos(theta), rng.normal(0, 0.12, n_arm), r * np.sin(theta)], axis=1)
    pos = np.concatenate([bulge, disc])
    rad = np.linalg.norm(pos[:, [0, 2]], axis=1)
    t = np.clip(rad / R_MAX, 0, 1)[:, None]
    # Old yellow stars in the middle, young blue ones outside, a few pink HII regions.
    warm, cool = np.array([1.0, 0.85, 0.6]), np.array([0.55, 0.7, 1.0])
    col = warm * (1 - t) + cool * t
    pink = rng.random(len(pos)) < 0.02
    col[pink] = (1.0, 0.45, 0.7)
    col *= rng.uniform(0.55, 1.0, (len(pos), 1))
    return pos, np.clip(col, 0, 1)


class Galaxy(App):
    def __init__(self, particles, size, seed, backend):
        scene = Scene("galaxy", background=(0.0, 0.0, 0.02))
        camera = PerspectiveCamera(fov_y=45, position=(0, 15, 13), near=0.5, far=100)
        camera.look_at((0, -1.0, 0))
        super().__init__(scene, camera, size, seed=seed, backend=backend, title="galaxy")
        pos, col = spiral_galaxy(particles, self.rng)
        rad = np.linalg.norm(pos[:, [0, 2]], axis=1)
        edges = np.linspace(0, R_MAX, RINGS + 1)
        edges[-1] = np.inf
        self.rings = []
        for i in range(RINGS):
            sel = (rad >= edges[i]) & (rad < edges[i + 1])
            ring = Node(f"ring{i}", geometry=PointCloud(pos[sel].astype(np.float32), col[sel],
                                                       point_size=1))
            # Angular speed in rad/s for the ring's mid radius: omega = v / r, v ~ const.
            r_mid = max(0.5 * (edges[i] + min(edges[i + 1], R_MAX + 2)), 1.0)
            ring.omega = 0.9 / r_mid
            scene.add(ring)
            self.rings.append(ring)
        self.hud["count"] = f"{particles:,} particles in {RINGS} rotating rings"

    def on_update(self, dt):
        for ring in self.rings:
            ring.rotation = quat_from_axis_angle((0, 1, 0), ring.omega * self.time)
        self.hud["time"] = f"t = {self.time:5.2f} s"


parser = example_parser(__doc__, frames=60)
parser.add_argument("--particles", type=int, default=1_000_000,
                    help="number of particles (default 10^6)")
args = parser.parse_args()
if args.particles < 1:
    parser.error(f"--particles must be >= 1, got {args.particles}")
raise SystemExit(run_example(Galaxy(args.particles, args.size, args.seed, args.backend), args))
