"""Asteroids: a playable game on the engine's public API, with 10,000 lit rocks.

Fly a ship through a field of 10,000 lit, flat-shaded low-poly rocks that all drift and
spin every frame, and shoot them. Big rocks split in two when hit; clear the field for
the next wave; three lives, then game over. The camera follows the ship over a field
larger than the screen (everything wraps around its edges).

Keys: A/D or Left/Right turn, W or Up thrusts, Space or the left mouse button fires,
moving the mouse aims the ship at the cursor, P pauses, R or Enter restarts.

Engine features it uses: App (fixed 120 Hz updates, hooks, seeded rng), input actions,
one ``Instances`` node for every rock (the game moves them with array operations: no
Python loop over rocks, and spawning or breaking rocks never repacks the batch), entities
(bullets and the exhaust flame are spawned and despawned at runtime), lights and flat
shading, sphere collisions (``overlap_pairs``), ``screen_ray`` for mouse aiming, the HUD
with a label that follows the ship, and sound effects (silent where there is no audio
device). Headless runs use an autopilot (aim at the nearest rock, fire) unless
--no-autopilot.
"""

from __future__ import annotations

import math
import tempfile
import wave
from itertools import pairwise
from pathlib import Path

import numpy as np

from engine import (
    AmbientLight,
    DirectionalLight,
    Instances,
    Material,
    Mesh,
    Node,
    PerspectiveCamera,
    PointCloud,
    Scene,
)
from engine.cli.examples import example_parser, run_example
from engine.controls.input import key, mouse
from engine.game import App
from engine.game.collision import overlap_pairs
from engine.scene.procedural import icosphere

CAMERA_DISTANCE = 32.0
TURN_RATE = math.radians(240)  # rad/s
THRUST = 14.0  # units/s^2
DRAG = 0.6  # 1/s
BULLET_SPEED = 30.0
BULLET_LIFE = 0.9  # s
FIRE_INTERVAL = 0.15  # s
SHIP_RADIUS = 0.7
BULLET_RADIUS = 0.15
RADII = {3: 1.4, 2: 0.85, 1: 0.5}
POINTS = {3: 20, 2: 50, 1: 100}
INVULNERABLE = 2.0  # s after a respawn
ROCKS = 10_000
DENSITY = 0.06  # rocks per square world unit: sets the field's size for a wave


def ship_geometry():
    """Points along the outline of an arrowhead pointing +Y (local frame)."""
    corners = np.array([[0, 1.0, 0], [0.6, -0.7, 0], [0, -0.35, 0], [-0.6, -0.7, 0], [0, 1.0, 0]])
    pts = np.concatenate([np.linspace(a, b, 40) for a, b in pairwise(corners)])
    return PointCloud(pts, colors=(0.6, 1.0, 0.9), point_size=2)


def flame_geometry(rng):
    pts = np.stack([rng.normal(0, 0.08, 60), rng.uniform(-1.3, -0.45, 60), np.zeros(60)], axis=1)
    return PointCloud(pts, colors=(1.0, 0.55, 0.1), point_size=2)


def bullet_geometry():
    pts = np.array([[0, 0, 0], [0.08, 0, 0], [-0.08, 0, 0], [0, 0.08, 0], [0, -0.08, 0]])
    return PointCloud(pts, colors=(1.0, 1.0, 0.4), point_size=2)


def rock_mesh(rng):
    """A lumpy icosahedron of radius about 1: 12 vertices, 20 flat-shaded faces."""
    p, f = icosphere(0, 1.0)
    p = p * rng.uniform(0.8, 1.1, (len(p), 1))
    return Mesh(p, f, colors=(0.66, 0.6, 0.52), material=Material(shading="flat"))


def blip_sound(folder: Path) -> Path:
    """A short generated 'hit' sound (a decaying 330 Hz tone) as a WAV file."""
    path = folder / "hit.wav"
    rate = 22050
    t = np.arange(int(rate * 0.12)) / rate
    wave_ = np.sin(2 * np.pi * 330 * t) * np.exp(-t * 30) * 12000
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(wave_.astype("<i2").tobytes())
    return path


class Body:
    """A moving entity drawn by its own node: velocity (world units/s) and extra state."""

    def __init__(self, node, velocity, **state):
        self.node = node
        self.velocity = np.asarray(velocity, np.float64)
        self.__dict__.update(state)


class Asteroids(App):
    """The game. ``asteroid_count`` sets the first wave (0 for a scripted empty field)."""

    def __init__(self, size=(960, 540), seed=0, backend=None, asteroid_count=ROCKS,
                 autopilot=False):
        scene = Scene("asteroids", background=(0.0, 0.0, 0.04))
        camera = PerspectiveCamera(fov_y=50, position=(0, 0, CAMERA_DISTANCE), near=1, far=100)
        super().__init__(scene, camera, size, seed=seed, backend=backend, title="asteroids")
        self.view_h = CAMERA_DISTANCE * math.tan(math.radians(25))
        self.view_w = self.view_h * size[0] / size[1]
        # The field holds a wave at DENSITY, and is never smaller than the view.
        side = math.sqrt(max(int(asteroid_count), 1) / DENSITY)
        self.half = np.array([max(side * 0.5 * size[0] / size[1], self.view_w + 2),
                              max(side * 0.5, self.view_h + 2)])
        self.first_wave = int(asteroid_count)
        self.autopilot = autopilot
        self.input.bind("left", key.A, key.LEFT).bind("right", key.D, key.RIGHT)
        self.input.bind("thrust", key.W, key.UP).bind("fire", key.SPACE)
        self.input.bind_mouse("fire", mouse.LEFT)
        self.input.bind("restart", key.R, key.ENTER).bind("pause", key.P)
        sun = scene.add(DirectionalLight("sun", intensity=0.9, position=(-1, 2, 3)))
        sun.look_at((0, 0, 0))
        scene.add(AmbientLight("sky", color=(0.55, 0.6, 0.8), intensity=0.25))
        self.rocks = scene.add(Instances(rock_mesh(self.rng), name="rocks"))
        self._rock_state(0)
        self._aim: np.ndarray | None = None
        self.bullets: list[Body] = []
        self.ship: Body | None = None
        self.flame: Node | None = None
        self._sounds = tempfile.TemporaryDirectory(prefix="frustum-asteroids-")
        self.hit_sound = blip_sound(Path(self._sounds.name))
        self.stars_node = scene.add(Node("stars", geometry=self._starfield()))
        self.new_game()

    # --- setup -----------------------------------------------------------------------
    def _starfield(self):
        n = 4000
        pts = np.stack([self.rng.uniform(-1, 1, n) * (self.half[0] + self.view_w),
                        self.rng.uniform(-1, 1, n) * (self.half[1] + self.view_h),
                        self.rng.uniform(-40, -15, n)], axis=1)
        # pin-point stars: 1 px (a cloud this small would get 5 px discs by default)
        return PointCloud(pts, np.tile(self.rng.uniform(0.3, 0.8, (n, 1)), (1, 3)),
                          point_size=1)

    def _rock_state(self, k):
        """Per-rock game arrays, as long as the rocks' instance arrays."""
        old = getattr(self, "rock_velocity", np.zeros((0, 2)))
        n = len(old)
        grow = {"rock_velocity": np.zeros((k, 2)), "rock_level": np.zeros(k, np.int64),
                "rock_axis": np.tile([0.0, 0.0, 1.0], (k, 1)), "rock_spin": np.zeros(k),
                "rock_angle": np.zeros(k)}
        for name, arr in grow.items():
            if n:
                arr[:n] = getattr(self, name)[:n]
            setattr(self, name, arr)

    @property
    def asteroid_count(self) -> int:
        return self.rocks.count

    def new_game(self):
        """Clear every entity and start again: score 0, three lives, the first wave."""
        for body in self.bullets:
            self.despawn(body.node)
        self.bullets = []
        self.rocks.active[:] = False
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
                         safe=INVULNERABLE, position=np.zeros(2))
        self.hud.label("ship", "READY", node, offset=(0, -28))

    def _next_wave(self, count):
        self.wave += 1
        if count <= 0:
            return
        p = self.rng.uniform(-1, 1, (count, 2)) * self.half
        near = np.hypot(*(p - self._ship_xy()).T) < 8.0  # keep the ship's surroundings clear
        p[near] += np.sign(p[near] + 1e-9) * 8.0
        ang = self.rng.uniform(0, 2 * np.pi, count)
        v = self.rng.uniform(1.0, 3.5, (count, 1)) * np.stack([np.cos(ang), np.sin(ang)], 1)
        self.add_asteroids(np.full(count, 3), p, v)

    def add_asteroids(self, levels, positions, velocities) -> np.ndarray:
        """Spawn rocks of ``levels`` (3 big, 2, 1 small) at world (x, y) ``positions``
        with ``velocities``, all at once. Returns their instance indices."""
        levels = np.asarray(levels, np.int64)
        m = len(levels)
        radius = np.array([RADII[int(lv)] for lv in levels])
        scales = radius[:, None] * self.rng.uniform(0.8, 1.2, (m, 3))
        shade = self.rng.uniform(0.75, 1.0, (m, 1)) * np.array([[1.0, 0.95, 0.9, 1.0]])
        shade[:, 3] = 1.0
        pos3 = np.column_stack([np.asarray(positions, np.float64).reshape(m, 2), np.zeros(m)])
        idx = self.rocks.spawn_many(pos3, scales=scales, colors=shade)
        if len(self.rock_velocity) < self.rocks.capacity:
            self._rock_state(self.rocks.capacity)
        axis = self.rng.normal(size=(m, 3))
        self.rock_axis[idx] = axis / np.linalg.norm(axis, axis=1, keepdims=True)
        self.rock_velocity[idx] = np.asarray(velocities, np.float64).reshape(m, 2)
        self.rock_level[idx] = levels
        self.rock_spin[idx] = self.rng.uniform(-2, 2, m)
        self.rock_angle[idx] = self.rng.uniform(0, 2 * np.pi, m)
        return idx

    def add_asteroid(self, level, position, velocity) -> int:
        """Spawn one rock of ``level`` at world (x, y); returns its instance index."""
        return int(self.add_asteroids([level], [position], [velocity])[0])

    # --- input -------------------------------------------------------------------------
    def on_mouse(self, x, y):
        self._aim = self.screen_to_plane(x, y)

    def screen_to_plane(self, x, y) -> np.ndarray | None:
        """World (x, y) on the play plane z = 0 under frame pixel (x, y), or None."""
        ray = self.screen_ray(x, y)
        if abs(ray.direction[2]) < 1e-12:
            return None
        return ray.at(-ray.origin[2] / ray.direction[2])[:2]

    # --- simulation --------------------------------------------------------------------
    def on_update(self, dt):
        if self.input.pressed("pause"):
            self.toggle_pause()
        if self.input.pressed("restart") and self.game_over:
            self.new_game()
        if not self.game_over:
            self._fly_ship(dt)
        self._move_bullets(dt)
        self._move_rocks(dt)
        self._collide()
        if not self.rocks.count and not self.game_over:
            self._next_wave(self.first_wave + self.wave)
        x, y = self._ship_xy()
        self.camera.position = (x, y, CAMERA_DISTANCE)
        self.hud["score"] = f"Score {self.score}"
        self.hud["lives"] = f"Lives {self.lives}   Wave {self.wave}"
        self.hud["entities"] = f"{self.rocks.count:,} rocks, {len(self.bullets)} bullets"

    def _fly_ship(self, dt):
        ship = self.ship
        turn = self.input.held("left") - self.input.held("right")
        if self.autopilot and self.rocks.count:
            self._aim = self._nearest_rock()
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
        ship.position = self._wrap(ship.position + ship.velocity * dt)
        ship.node.position = (*ship.position, 0.0)
        ship.node.rotation = (0.0, 0.0, math.degrees(ship.heading))  # Euler degrees
        ship.cooldown = max(0.0, ship.cooldown - dt)
        ship.safe = max(0.0, ship.safe - dt)
        if ship.safe == 0.0:
            self.hud.remove_label("ship")
        fire = self.input.pressed("fire") or self.input.held("fire") or (
            self.autopilot and self.rocks.count)
        if fire and ship.cooldown == 0.0:
            self._fire(forward)

    def _nearest_rock(self):
        live = np.flatnonzero(self.rocks.active)
        d = self.rocks.positions[live, :2] - self._ship_xy()
        return self.rocks.positions[live[np.argmin(np.einsum("ij,ij->i", d, d))], :2].copy()

    def _ship_xy(self):
        return self.ship.position if self.ship is not None else np.zeros(2)

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
        h = self.half
        return (p + h) % (2 * h) - h

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

    def _move_rocks(self, dt):
        """Every rock drifts and spins: a few array operations for all of them."""
        k = self.rocks.capacity
        pos = self.rocks.positions
        pos[:, :2] = self._wrap(pos[:, :2] + self.rock_velocity[:k] * dt)
        angle = self.rock_angle[:k]
        angle += self.rock_spin[:k] * dt
        half = 0.5 * angle
        self.rocks.rotations[:, :3] = self.rock_axis[:k] * np.sin(half)[:, None]
        self.rocks.rotations[:, 3] = np.cos(half)

    def _collide(self):
        live = np.flatnonzero(self.rocks.active)
        if not len(live):
            return
        centres = self.rocks.positions[live]
        radii = np.array([RADII[3], RADII[2], RADII[1]])[3 - self.rock_level[live]] * 1.1
        hit: set[int] = set()
        if self.bullets:
            pos = np.array([b.node.world_position for b in self.bullets])
            pairs = overlap_pairs(pos, np.full(len(pos), BULLET_RADIUS), centres, radii)
            spent = []
            for i, j in zip(*np.nonzero(pairs)):
                if i in spent or live[j] in hit:
                    continue
                spent.append(i)
                hit.add(int(live[j]))
            for i in sorted(spent, reverse=True):
                self.despawn(self.bullets.pop(i).node)
        if not self.game_over and self.ship.safe == 0.0:
            ship_c = self.ship.node.world_position
            touching = overlap_pairs(ship_c, [SHIP_RADIUS], centres, radii)[0]
            if touching.any():
                hit.update(int(live[j]) for j in np.flatnonzero(touching))
                self._lose_life()
        for i in sorted(hit):
            self._break(i)

    def _break(self, i):
        level = int(self.rock_level[i])
        self.score += POINTS[level]
        self.play(self.hit_sound, volume=0.4)
        self.rocks.despawn(i)
        if level > 1:
            v = self.rock_velocity[i]
            side = np.array([-v[1], v[0]]) / (np.hypot(*v) + 1e-9)
            kick = self.rng.uniform(1.5, 3.0, (2, 1)) * np.array([[-1.0], [1.0]])
            pos = np.tile(self.rocks.positions[i, :2], (2, 1))
            self.add_asteroids([level - 1] * 2, pos, v + kick * side)

    def _lose_life(self):
        self.lives -= 1
        self._set_flame(False)
        self.despawn(self.ship.node)
        if self.lives <= 0:
            self.game_over = True
            self.hud.banner = "GAME OVER - press R to restart"
            self.hud.remove_label("ship")
            return
        position = self.ship.position
        self._spawn_ship()
        self.ship.position = position.copy()
        self.ship.node.position = (*position, 0.0)


def main(argv=None) -> int:
    parser = example_parser(__doc__, frames=240)
    parser.add_argument("--asteroids", type=int, default=ROCKS,
                        help="rocks in the first wave (default: %(default)s)")
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
