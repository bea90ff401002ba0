"""Glass garden: the image-quality and lighting features in one turntable scene.

Metal and plastic balls (the glTF metallic-roughness BRDF) on a mipmapped checker
floor, three tinted glass panes (alphaMode BLEND: blended in linear light in any order),
a low sun casting shadow maps, exponential fog fading into a sky gradient, and the
camera circling slowly. Images are anti-aliased (4 samples per pixel) unless
``--msaa 1``.
"""

import numpy as np

from engine import AmbientLight, DirectionalLight, Fog, Mesh, Node, PerspectiveCamera, Scene, Sky
from engine.cli.examples import example_parser, run_example
from engine.game.app import App
from engine.scene.material import Material, Sampler, Texture
from engine.scene.procedural import icosphere, plane

SKY = Sky(horizon="#d9e3ec", zenith="#4f7fb8", ground="#8a8f80")


def checker_floor(size=24.0, squares=48):
    """A size x size floor of light and dark squares, trilinear-filtered."""
    i = np.add.outer(np.arange(squares), np.arange(squares)) % 2
    image = np.where(i[..., None] == 1, [205, 200, 185], [70, 78, 72]).astype(np.uint8)
    texture = Texture(np.kron(image, np.ones((4, 4, 1), np.uint8)),
                      Sampler(filter="linear", min_filter="linear_mipmap_linear"))
    return plane((size, size), material=Material(shading="pbr", texture=texture,
                                                 roughness=0.8, metallic=0.0))


def ball(color, metallic, roughness, radius=0.5):
    v, f = icosphere(3, radius)
    material = Material(shading="pbr", color=color, metallic=metallic, roughness=roughness)
    return Mesh(v.astype(np.float32), f, normals=v / radius, material=material)


def pane(color, width=1.6, height=1.2):
    """A double-sided, half-transparent sheet standing on the floor, facing +Z."""
    w, h = width / 2, height
    pos = np.array([[-w, 0, 0], [w, 0, 0], [w, h, 0], [-w, h, 0]], np.float32)
    return Mesh(pos, [[0, 1, 2], [0, 2, 3]], normals=np.tile([0.0, 0.0, 1.0], (4, 1)),
                material=Material(shading="pbr", color=color, roughness=0.1, blend=True,
                                  double_sided=True))


class GlassGarden(App):
    def __init__(self, size, seed, backend, msaa):
        scene = Scene("glass garden", background=SKY.horizon,
                      fog=Fog("exp", density=0.035), sky=SKY)
        camera = PerspectiveCamera(fov_y=45, position=(0.0, 2.2, 7.0), near=0.1, far=80)
        super().__init__(scene, camera, size, seed=seed, backend=backend, msaa=msaa,
                         title="glass_garden")
        scene.add(Node("floor", geometry=checker_floor()))
        for k, (color, metal, rough) in enumerate([((0.95, 0.75, 0.35), 1.0, 0.25),
                                                   ((0.8, 0.1, 0.1), 0.0, 0.4),
                                                   ((0.85, 0.85, 0.9), 1.0, 0.5),
                                                   ((0.1, 0.4, 0.8), 0.0, 0.2)]):
            angle = k * np.pi / 2
            scene.add(Node(f"ball{k}", geometry=ball(color, metal, rough),
                           position=(1.6 * np.cos(angle), 0.5, 1.6 * np.sin(angle))))
        for k, color in enumerate([(1.0, 0.3, 0.3, 0.45), (0.3, 1.0, 0.4, 0.45),
                                   (0.3, 0.5, 1.0, 0.45)]):
            node = scene.add(Node(f"pane{k}", geometry=pane(color)))
            node.position = (0.9 * (k - 1), 0.0, 0.4 * (1 - k))
            node.rotation = (0.0, 25.0 * (k - 1), 0.0)
        sun = scene.add(DirectionalLight(intensity=1.5, shadows=True, shadow_map_size=1024,
                                         position=(-3.0, 5.0, -4.0)))
        sun.look_at((0.0, 0.0, 0.0))
        scene.add(AmbientLight(intensity=0.2))
        self.hud["title"] = "PBR, glass, shadows, fog and sky"

    def on_update(self, dt):
        a = 0.15 * self.time + 0.3
        self.camera.position = (7.0 * np.sin(a), 2.2, 7.0 * np.cos(a))
        self.camera.look_at((0.0, 0.6, 0.0))


p = example_parser(__doc__, frames=60)
p.add_argument("--msaa", type=int, choices=(1, 2, 4, 8), default=4,
               help="samples per pixel (default 4: anti-aliased)")
args = p.parse_args()
raise SystemExit(run_example(GlassGarden(args.size, args.seed, args.backend, args.msaa), args))
