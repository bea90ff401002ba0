"""Asteroids: a small playable game on the engine's public API.

Fly a ship through a field of point-cloud asteroids and shoot them. Big asteroids split
in two when hit; clear the field for the next wave; three lives, then game over.

Keys: A/D or Left/Right turn, W or Up thrusts, Space or the left mouse button fires,
moving the mouse aims the ship at the cursor, P pauses, R or Enter restarts.

Engine features it uses: App (fixed 120 Hz updates, hooks, seeded rng), input actions,
entities (every bullet, fragment and exhaust flame is spawned and despawned at runtime
without repacking the batch), bounding-sphere collisions, and the HUD. Headless runs
use an autopilot (aim at the nearest asteroid, fire) unless --no-autopilot.
"""

from __future__ import annotations

import math
from itertools import pairwise

import numpy as np

from engine import Node, PerspectiveCamera, PointCloud, Scene
from engine.cli.examples import example_parser, run_example
from engine.controls.input import key, mouse
from engine.game.app import App
from engine.game.collision import bounding_sphere, overlap_pairs
from engine.scene.procedural import sphere_points
from engine.scene.transforms import quat_from_axis_angle, quat_multiply

CAMERA_DISTANCE = 32.0
TURN_RATE = math.radians(240)  # rad/s
THRUST = 14.0  # units/s^2
DRAG = 0.6  # 1/s
BULLET_SPEED = 30.0
BULLET_LIFE = 0.9  # s
FIRE_INTERVAL = 0.15  # s
SHIP_RADIUS = 0.7
BULLET_RADIUS = 0.15
RADII = {3: 2.4, 2: 1.4, 1: 0.8}
POINTS = {3: 20, 2: 50, 1: 100}
INVULNERABLE = 2.0  # s after a respawn


def ship_geometry():
    """Points along the outline of an arrowhead pointing +Y (local frame)."""
    corners = np.array([[0, 1.0, 0], [0.6, -0.7, 0], [0, -0.35, 0], [-0.6, -0.7, 0], [0, 1.0, 0]])
    pts = np.concatenate([np.linspace(a, b, 40) for a, b in pairwise(corners)])
    return PointCloud(pts, np.tile((0.6, 1.0, 0.9), (len(pts), 1)), point_size=2)


def flame_geometry(rng):
    pts = np.stack([rng.normal(0, 0.08, 60), rng.uniform(-1.3, -0.45, 60), np.zeros(60)], axis=1)
    return PointCloud(pts, np.tile((1.0, 0.55, 0.1), (60, 1)), point_size=2)


def bullet_geometry():
    pts = np.array([[0, 0, 0], [0.08, 0, 0], [-0.08, 0, 0], [0, 0.08, 0], [0, -0.08, 0]])
    return PointCloud(pts, np.tile((1.0, 1.0, 0.4), (5, 1)), point_size=2)


def rock_geometry(level, rng):
    """A lumpy point-cloud rock of radius about RADII[level]."""
    n = 250 * level * level
    dirs = sphere_points(n, 1.0, seed=int(rng.integers(1 << 31)))
    lumps = rng.normal(size=(4, 3))
    bump = sum(0.12 * np.sin(dirs @ v * 3 + rng.uniform(0, 6)) for v in lumps)
    pts = dirs * (RADII[level] * (0.85 + bump))[:, None]
    grey = rng.uniform(0.45, 0.85, (n, 1)) * np.array([1.0, 0.92, 0.8])
    return PointCloud(pts, np.clip(grey, 0, 1), point_size=2)


class Body:
    """A moving entity: its node plus velocity (world units/s) and extra state."""

    def __init__(self, node, velocity, **state):
        self.node = node
        self.velocity = np.asarray(velocity, np.float64)
        self.__dict__.update(state)


class Asteroids(App):
    """The game. ``asteroid_count`` sets the first wave (0 for a scripted empty field)."""

    def __init__(self, size=(960, 540), seed=0, backend=None, asteroid_count=4,
                 autopilot=False):
        scene = Scene("asteroids", background=(0.0, 0.0, 0.04))
        camera = PerspectiveCamera(fov_y=50, position=(0, 0, CAMERA_DISTANCE), near=1, far=100)
        super().__init__(scene, camera, size, seed=seed, backend=backend, title="asteroids")
        aspect = size[0] / size[1]
        self.half_h = CAMERA_DISTANCE * math.tan(math.radians(25))
        self.half_w = self.half_h * aspect
        self.first_wave = int(asteroid_count)
        self.autopilot = autopilot
        self.input.bind("left", key.A, key.LEFT).bind("right", key.D, key.RIGHT)
        self.input.bind("thrust", key.W, key.UP).bind("fire", key.SPACE)
        self.input.bind_mouse("fire", mouse.LEFT)
        self.input.bind("restart", key.R, key.ENTER).bind("pause", key.P)
        self._aim: np.ndarray | None = None
        self.bullets: list[Body] = []
        self.asteroids: list[Body] = []
        self.ship: Body | None = None
        self.flame: Node | None = None
        self.stars_node = scene.add(Node("stars", geometry=self._starfield()))
        self.new_game()

    # --- setup -----------------------------------------------------------------------
    def _starfield(self):
        n = 600
        pts = np.stack([self.rng.uniform(-1.6, 1.6, n) * self.half_w,
                        self.rng.uniform(-1.6, 1.6, n) * self.half_h,
                        self.rng.uniform(-40, -15, n)], axis=1)
        return PointCloud(pts, np.tile(self.rng.uniform(0.3, 0.8, (n, 1)), (1, 3)))

    def new_game(self):
        """Clear every entity and start again: score 0, three lives, the first wave."""
        for body in self.bullets + self.asteroids:
            self.despawn(body.node)
        self.bullets, self.asteroids = [], []
        if self.ship is not None and self.ship.node.parent is not None:
            self.despawn(self.ship.node)
        self.ship, self.flame = None, None
        self.score, self.lives, self.wave = 0, 3, 0
        self.game_over = False
        self.hud.banner = None
        self._spawn_ship()
        self._next_wave(self.first_wave)

    def _spawn_ship(self):
        node = Node("ship", geometry=ship_geometry())
        self.ship = Body(self.spawn(node), (0, 0), heading=0.0, cooldown=0.0,
                         safe=INVULNERABLE)
        self._place(self.ship)

    def _next_wave(self, count):
        self.wave += 1
        for _ in range(count):
            while True:
                p = self.rng.uniform(-1, 1, 2) * (self.half_w, self.half_h)
                if np.hypot(*p) > 8.0:
                    break
            ang = self.rng.uniform(0, 2 * np.pi)
            v = self.rng.uniform(1.0, 3.5) * np.array([math.cos(ang), math.sin(ang)])
            self.add_asteroid(3, p, v)

    def add_asteroid(self, level, position, velocity) -> Node:
        """Spawn an asteroid of ``level`` (3 big, 2, 1 small) at world (x, y)."""
        node = Node(f"asteroid{level}", geometry=rock_geometry(level, self.rng))
        axis = self.rng.normal(size=3)
        body = Body(self.spawn(node), velocity, level=level, axis=axis / np.linalg.norm(axis),
                    spin=self.rng.uniform(-2, 2), position=np.asarray(position, np.float64))
        node.position = (*body.position, 0.0)
        self.asteroids.append(body)
        return node

    # --- input -------------------------------------------------------------------------
    def on_mouse(self, x, y):
        self._aim = self.screen_to_plane(x, y)

    def screen_to_plane(self, x, y) -> np.ndarray | None:
        """World (x, y) on the play plane z = 0 under screen pixel (x, y), or None."""
        w, h = self.size
        ndc = np.array([2 * x / w - 1, 1 - 2 * y / h])
        inv = np.linalg.inv(self.camera.view_projection_matrix)
        a = inv @ np.array([*ndc, -1.0, 1.0])
        b = inv @ np.array([*ndc, 1.0, 1.0])
        a, b = a[:3] / a[3], b[:3] / b[3]
        if abs(b[2] - a[2]) < 1e-12:
            return None
        t = -a[2] / (b[2] - a[2])
        return (a + t * (b - a))[:2]

    # --- simulation --------------------------------------------------------------------
    def on_update(self, dt):
        if self.input.pressed("pause"):
            self.toggle_pause()
        if self.input.pressed("restart") and self.game_over:
            self.new_game()
        if not self.game_over:
            self._fly_ship(dt)
        self._move_bullets(dt)
        self._move_asteroids(dt)
        self._collide()
        if not self.asteroids and not self.game_over:
            self._next_wave(self.first_wave + self.wave)
        self.hud["score"] = f"Score {self.score}"
        self.hud["lives"] = f"Lives {self.lives}   Wave {self.wave}"
        self.hud["entities"] = (f"{len(self.asteroids)} asteroids, {len(self.bullets)} bullets, "
                                f"{self.renderer.batch.object_count} objects")

    def _fly_ship(self, dt):
        ship = self.ship
        turn = self.input.held("left") - self.input.held("right")
        if self.autopilot and self.asteroids:
            target = min(self.asteroids, key=lambda a: np.hypot(*(a.position - self._ship_xy())))
            self._aim = target.position
        if turn:
            ship.heading += turn * TURN_RATE * dt
            self._aim = None
        elif self._aim is not None:
            d = self._aim - self._ship_xy()
            if np.hypot(*d) > 1e-6:
                ship.heading = math.atan2(-d[0], d[1])
        forward = np.array([-math.sin(ship.heading), math.cos(ship.heading)])
        thrusting = self.input.held("thrust")
        if thrusting:
            ship.velocity += forward * THRUST * dt
        ship.velocity *= math.exp(-DRAG * dt)
        self._set_flame(thrusting)
        ship.position = self._wrap(self._ship_xy() + ship.velocity * dt)
        ship.node.position = (*ship.position, 0.0)
        ship.node.rotation = quat_from_axis_angle((0, 0, 1), ship.heading)
        ship.cooldown = max(0.0, ship.cooldown - dt)
        ship.safe = max(0.0, ship.safe - dt)
        fire = self.input.pressed("fire") or self.input.held("fire") or (
            self.autopilot and self.asteroids)
        if fire and ship.cooldown == 0.0:
            self._fire(forward)

    def _ship_xy(self):
        return getattr(self.ship, "position", np.zeros(2))

    def _set_flame(self, on):
        if on and self.flame is None:
            self.flame = self.spawn(Node("flame", geometry=flame_geometry(self.rng)),
                                    parent=self.ship.node)
        elif not on and self.flame is not None:
            self.despawn(self.flame)
            self.flame = None

    def _fire(self, forward):
        ship = self.ship
        start = self._ship_xy() + forward * 1.0
        node = self.spawn(Node("bullet", position=(*start, 0.0), geometry=bullet_geometry()))
        self.bullets.append(Body(node, ship.velocity + forward * BULLET_SPEED,
                                 life=BULLET_LIFE, position=start))
        ship.cooldown = FIRE_INTERVAL

    def _wrap(self, p):
        w, h = self.half_w + 1.5, self.half_h + 1.5
        return np.array([(p[0] + w) % (2 * w) - w, (p[1] + h) % (2 * h) - h])

    def _move_bullets(self, dt):
        alive = []
        for b in self.bullets:
            b.life -= dt
            if b.life <= 0:
                self.despawn(b.node)
                continue
            b.position = self._wrap(b.position + b.velocity * dt)
            b.node.position = (*b.position, 0.0)
            alive.append(b)
        self.bullets = alive

    def _move_asteroids(self, dt):
        for a in self.asteroids:
            a.position = self._wrap(a.position + a.velocity * dt)
            a.node.position = (*a.position, 0.0)
            a.node.rotation = quat_multiply(quat_from_axis_angle(a.axis, a.spin * dt),
                                            a.node.rotation)

    def _collide(self):
        if not self.asteroids:
            return
        spheres = [bounding_sphere(a.node) for a in self.asteroids]
        centres = np.array([c for c, _ in spheres])
        radii = np.array([r for _, r in spheres])
        hit_rocks: set[int] = set()
        if self.bullets:
            pos = np.array([b.node.world_position for b in self.bullets])
            hits = overlap_pairs(pos, np.full(len(pos), BULLET_RADIUS), centres, radii)
            spent = []
            for i, j in zip(*np.nonzero(hits)):
                if i in spent or j in hit_rocks:
                    continue
                spent.append(i)
                hit_rocks.add(int(j))
            for i in sorted(spent, reverse=True):
                self.despawn(self.bullets.pop(i).node)
        if not self.game_over and self.ship.safe == 0.0:
            ship_c = self.ship.node.world_position
            touching = overlap_pairs(ship_c, [SHIP_RADIUS], centres, radii)[0]
            if touching.any():
                hit_rocks.update(int(j) for j in np.flatnonzero(touching))
                self._lose_life()
        for j in sorted(hit_rocks, reverse=True):
            self._break(self.asteroids.pop(j))

    def _break(self, rock):
        self.score += POINTS[rock.level]
        self.despawn(rock.node)
        if rock.level > 1:
            for sign in (-1, 1):
                v = rock.velocity + sign * self.rng.uniform(1.5, 3.0) * np.array(
                    [-rock.velocity[1], rock.velocity[0]]) / (np.hypot(*rock.velocity) + 1e-9)
                self.add_asteroid(rock.level - 1, rock.position, v)

    def _lose_life(self):
        self.lives -= 1
        self._set_flame(False)
        self.despawn(self.ship.node)
        if self.lives <= 0:
            self.game_over = True
            self.hud.banner = "GAME OVER - press R to restart"
            return
        self._spawn_ship()

    def _place(self, ship):
        ship.position = np.zeros(2)
        ship.node.position = (0.0, 0.0, 0.0)


def main(argv=None) -> int:
    parser = example_parser(__doc__, frames=240)
    parser.add_argument("--asteroids", type=int, default=4, help="asteroids in the first wave")
    parser.add_argument("--no-autopilot", action="store_true",
                        help="headless runs without the autopilot (ship idles)")
    args = parser.parse_args(argv)
    if args.asteroids < 0:
        parser.error(f"--asteroids must be >= 0, got {args.asteroids}")
    game = Asteroids(args.size, args.seed, args.backend, args.asteroids,
                     autopilot=args.headless and not args.no_autopilot)
    return run_example(game, args)


if __name__ == "__main__":
    raise SystemExit(main())
