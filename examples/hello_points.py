"""Hello points: random points in a box, a fixed camera, one picture. NumPy arrays in,
pixels out."""

import numpy as np

from engine import Node, PerspectiveCamera, PointCloud, Scene
from engine.cli.examples import example_parser, run_example
from engine.game.app import App

args = example_parser(__doc__, frames=1).parse_args()
pts = np.random.default_rng(args.seed).uniform(-1, 1, (50_000, 3))
scene = Scene(background=(0.02, 0.02, 0.05))
scene.add(Node("box", geometry=PointCloud(pts, colors=(pts + 1) / 2, point_size=2)))
camera = PerspectiveCamera(fov_y=50, position=(2.4, 1.8, 3.2)).look_at((0, 0, 0))
app = App(scene, camera, args.size, backend=args.backend, title="hello_points")
raise SystemExit(run_example(app, args))
