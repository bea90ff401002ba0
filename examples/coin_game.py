"""Coin game: walk over a textured height field and collect 300 spinning coins.

Walk with WASD or the arrow keys, or click the ground to walk there; click a coin (or
touch it) to collect it; rocks and crates block the way; Space jumps; R restarts. A
follow camera keeps the player in view; the HUD shows the score and a label over the
player; every coin plays a sound (silent where there is no audio device).

Engine features it uses, all public API: ``heightfield`` / ``heightfield_from_image``
terrain with a texture, ``cylinder``, ``capsule``, ``uv_sphere`` and ``box`` primitives,
one ``Instances`` node for the coins, exact ``ray_cast`` for clicks, ``height_at`` to
place things on the ground, colliders (capsule, sphere, oriented box, static mesh) with
``move_and_slide`` for the character, the HUD with a world-size label, and sounds.
Headless runs use an autopilot that walks to the nearest coin, unless --no-autopilot.
"""

from __future__ import annotations

import sys
import tempfile
import wave
from pathlib import Path

import numpy as np

from engine import (
    AmbientLight,
    DirectionalLight,
    Instances,
    Material,
    Node,
    PerspectiveCamera,
    Scene,
    Texture,
)
from engine.cli.examples import example_parser, run_example
from engine.controls.input import key, mouse
from engine.errors import EngineError
from engine.game import App
from engine.game.colliders import (
    BoxCollider,
    CapsuleCollider,
    MeshCollider,
    SphereCollider,
    move_and_slide,
)
from engine.game.collision import height_at, overlap_pairs, ray_cast
from engine.scene.procedural import (
    box,
    capsule,
    cylinder,
    heightfield,
    heightfield_from_image,
    uv_sphere,
)

FIELD = 80.0  # world units across
SPEED = 6.0  # units/s
JUMP = 5.0  # units/s up
GRAVITY = 9.81
RADIUS, HEIGHT = 0.5, 1.8  # the player's capsule
REACH = 30.0  # how far a click can collect a coin


def ding(folder: Path) -> Path:
    """A short generated 'coin' sound (two rising tones) as a WAV file."""
    rate = 22050
    t = np.arange(int(rate * 0.15)) / rate
    tone = np.where(t < 0.05, np.sin(2 * np.pi * 988 * t), np.sin(2 * np.pi * 1319 * t))
    path = folder / "coin.wav"
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes((tone * np.exp(-t * 18) * 9000).astype("<i2").tobytes())
    return path


def rolling_hills(n=97):
    """(n, n) heights of gentle hills (the steepest slope about 16 degrees)."""
    t = np.linspace(0, 4 * np.pi, n)
    return 1.6 * np.sin(t)[None, :] * np.cos(0.6 * t)[:, None] + 0.6 * np.sin(2.3 * t)[:, None]


def grass(size=128):
    """An RGB grass-and-dirt checker texture, (size, size, 3) uint8."""
    cells = np.indices((size, size)).sum(axis=0) // 16 % 2
    rng = np.random.default_rng(7)
    g = 90 + 50 * cells + rng.integers(0, 25, (size, size))
    return np.stack([g // 2, g, g // 4], axis=-1).astype(np.uint8)


class CoinGame(App):
    """The game; ``heightmap`` is an optional greyscale image path for the terrain."""

    def __init__(self, size=(960, 540), seed=0, backend=None, coins=300, rocks=16,
                 heightmap=None, autopilot=False):
        scene = Scene("coins", background="lightskyblue")
        super().__init__(scene, PerspectiveCamera(fov_y=60), size, seed=seed, backend=backend,
                         title="coin_game")
        scene.add(DirectionalLight(intensity=0.9, position=(2, 5, 3))).look_at((0, 0, 0))
        scene.add(AmbientLight("sky", color=(0.7, 0.8, 1.0), intensity=0.35))
        texture = Material(texture=Texture(grass()))
        terrain = heightfield(rolling_hills(), size=(FIELD, FIELD), material=texture) \
            if heightmap is None else \
            heightfield_from_image(heightmap, size=(FIELD, FIELD), height=6.0, material=texture)
        self.ground = scene.add(Node("ground", geometry=terrain))
        self.player = scene.add(Node("player", geometry=capsule(RADIUS, HEIGHT, colors="tomato")))
        self.body = CapsuleCollider(RADIUS, HEIGHT, node=self.player)
        self.world = [MeshCollider(self.ground)]
        self.obstacles = []
        rock, crate = uv_sphere(1.0, 20, 10, colors="slategray"), box((2, 2, 2), colors="peru")
        for i in range(rocks):
            angle, dist = self.rng.uniform(0, 2 * np.pi), self.rng.uniform(8, FIELD / 2 - 4)
            x, z = dist * np.cos(angle), dist * np.sin(angle)
            y = height_at(self.ground, x, z)
            if i % 2:  # a crate, turned and half buried
                node = scene.add(Node(f"crate{i}", geometry=crate, position=(x, y + 0.5, z),
                                      rotation=(0, self.rng.uniform(0, 90), 0)))
                self.world.append(BoxCollider((2, 2, 2), node=node))
            else:
                node = scene.add(Node(f"rock{i}", geometry=rock, position=(x, y, z),
                                      scale=self.rng.uniform(1.0, 2.2)))
                self.world.append(SphereCollider(1.0, node=node))
            self.obstacles.append(node)
        xz = self.rng.uniform(-FIELD / 2 + 2, FIELD / 2 - 2, (coins, 2))
        y = np.array([height_at(self.ground, x, z) for x, z in xz]) + 1.0
        self.coins = scene.add(Instances(cylinder(0.5, 0.1, segments=24), name="coins",
                                         positions=np.column_stack([xz[:, 0], y, xz[:, 1]]),
                                         colors="gold"))
        self.autopilot = autopilot
        self._sounds = tempfile.TemporaryDirectory(prefix="frustum-coins-")
        self.coin_sound = ding(Path(self._sounds.name))
        self.input.bind("left", key.A, key.LEFT).bind("right", key.D, key.RIGHT)
        self.input.bind("forward", key.W, key.UP).bind("back", key.S, key.DOWN)
        self.input.bind("jump", key.SPACE).bind("restart", key.R, key.ENTER)
        self.input.bind_mouse("click", mouse.LEFT)
        self.restart()

    def restart(self):
        """Everything back to the start: the player at the centre, every coin out."""
        self.player.position = (0.0, height_at(self.ground, 0, 0) + HEIGHT / 2 + 0.5, 0.0)
        self.velocity = np.zeros(3)
        self.target = None
        self.score = 0
        self.coins.active[:] = True
        self.hud.banner = None
        self.hud.label("you", "YOU", self.player, offset=(0, -40), world_size=0.5)

    def collect(self, indices):
        indices = np.atleast_1d(indices)
        self.coins.despawn(indices)
        self.score += len(indices)
        self.play(self.coin_sound, volume=0.5)

    def _steer(self):
        """The horizontal unit direction to walk in this update (zero to stand)."""
        held = self.input.held
        move = np.array([held("right") - held("left"), 0.0, held("back") - held("forward")])
        if move.any():
            self.target = None
        else:
            if self.autopilot and self.target is None and self.coins.count:
                live = np.flatnonzero(self.coins.active)
                d = np.linalg.norm(self.coins.positions[live] - self.player.world_position, axis=1)
                self.target = self.coins.positions[live[np.argmin(d)]].copy()
            if self.target is not None:
                move = (self.target - self.player.world_position) * (1, 0, 1)
                if np.linalg.norm(move) < 0.3:
                    move, self.target = np.zeros(3), None
        n = np.linalg.norm(move)
        return move / n if n > 0 else move

    def on_update(self, dt):
        if self.input.pressed("restart"):
            self.restart()
        if self.input.pressed("click"):  # a coin under the cursor, else walk to the ground
            hit = ray_cast(*self.screen_ray(), [self.coins, self.ground, *self.obstacles])
            if hit is not None and hit.node is self.coins and hit.distance < REACH:
                self.collect(hit.instance)
            elif hit is not None and hit.node is self.ground:
                self.target = hit.point
        move = self._steer()
        self.velocity[[0, 2]] = SPEED * move[[0, 2]]
        if self.input.pressed("jump") and self.body.on_floor:
            self.velocity[1] = JUMP
        self.velocity[1] -= GRAVITY * dt
        result = move_and_slide(self.body, self.velocity, dt, self.world, snap=0.5)
        self.velocity = result.velocity
        if self.player.world_position[1] < -50:  # fell off the edge of the world
            self.restart()
        spin = np.full(self.coins.capacity, 120.0 * self.time)
        self.coins.rotations = np.column_stack([np.full_like(spin, 90.0), spin, 0 * spin])
        live = np.flatnonzero(self.coins.active)
        touch = overlap_pairs(self.player.world_position, [RADIUS + 0.5],
                              self.coins.positions[live], np.full(len(live), 0.5))[0]
        if touch.any():
            self.collect(live[touch])
        p = self.player.world_position
        self.camera.position = p + (0.0, 7.0, 11.0)
        self.camera.look_at(p)
        self.hud["score"] = f"Coins {self.score}   left {self.coins.count}"
        if self.coins.count == 0 and self.hud.banner is None:
            self.hud.banner = "ALL COINS!  R restarts"


def main(argv=None) -> int:
    parser = example_parser(__doc__, frames=240)
    parser.add_argument("--coins", type=int, default=300, help="coins (default: %(default)s)")
    parser.add_argument("--heightmap", default=None,
                        help="a greyscale image for the terrain (white = 6 units high)")
    parser.add_argument("--no-autopilot", action="store_true",
                        help="headless runs without the autopilot (the player stands)")
    args = parser.parse_args(argv)
    if args.coins < 0:
        parser.error(f"--coins must be >= 0, got {args.coins}")
    try:
        game = CoinGame(args.size, args.seed, args.backend, args.coins, heightmap=args.heightmap,
                        autopilot=args.headless and not args.no_autopilot)
    except EngineError as exc:  # e.g. a --heightmap that is not an image
        print(f"coin_game: error: {exc}", file=sys.stderr)
        return 2
    return run_example(game, args)


if __name__ == "__main__":
    raise SystemExit(main())
