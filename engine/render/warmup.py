"""Compiling the CPU kernels once, ahead of the first picture (``frustum warmup``, run by
``scripts/setup.sh``).

The Numba backend's kernels are compiled on their first call and kept in Numba's on-disk
cache (``cache=True``; the folder is ``NUMBA_CACHE_DIR`` or ``__pycache__`` beside each
module), so only the first process after an install pays for it: about 1-2 minutes on a
2-core machine, which would otherwise land inside a user's first ``frustum render``.
``warm_up`` renders one small frame of each scene in ``SCENES`` on the Numba backend,
which calls every surface, line and point kernel the default frame uses with the types a
real frame passes; later processes load them from the cache (a few hundred ms).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import numpy as np

from ..scene.atmosphere import Fog, Sky
from ..scene.camera import PerspectiveCamera
from ..scene.geometry import Lines, Mesh, PointCloud
from ..scene.graph import Node, Scene
from ..scene.light import DirectionalLight
from ..scene.material import Material, Texture
from ..scene.procedural import box, icosphere
from .msaa import IMAGE_MSAA

__all__ = ["SCENES", "WARM_MSAA", "preload", "warm_up"]

log = logging.getLogger("engine")


def _surfaces() -> Scene:
    """Lit (with normals and specular), flat, unlit, textured and vertex-coloured
    triangles, each material once: the resolve's every shading branch; a BLEND sheet over
    them (engine.render.transparency); under a light with shadows, so the shadow pass's
    kernels are compiled too."""
    scene = Scene("warm-up surfaces")
    ball, faces = icosphere(1)
    checker = np.kron(np.indices((4, 4)).sum(axis=0) % 2, np.ones((4, 4)))[..., None]
    image = (np.concatenate([checker.repeat(3, axis=2), np.ones_like(checker)], axis=2)
             * 255).astype(np.uint8)
    scene.add(Node("lit", position=(-1.5, 0, 0), geometry=Mesh(
        ball, faces, normals=ball, material=Material(specular=0.5))))
    scene.add(Node("flat", position=(0, 0, 0), geometry=Mesh(
        ball, faces, colors=np.abs(ball), material=Material(shading="flat"))))
    scene.add(Node("unlit", position=(1.5, 0, 0), geometry=Mesh(
        ball, faces, material=Material(shading="unlit"))))
    scene.add(Node("textured", position=(0, 1.5, 0), geometry=box(
        material=Material(texture=Texture(image)))))
    scene.add(Node("bare", position=(0, -1.5, 0), geometry=Mesh(ball, faces)))  # no normals
    # a BLEND sheet in front: the transparency pass's k-buffer and compositing kernels
    sheet = np.array([[-2, -2, 1.2], [2, -2, 1.2], [2, 2, 1.2], [-2, 2, 1.2]], np.float32)
    scene.add(Node("glass", geometry=Mesh(sheet, [[0, 1, 2], [0, 2, 3]], material=Material(
        color=(0.6, 0.8, 1.0, 0.3), shading="unlit", blend=True, double_sided=True))))
    sun = scene.add(DirectionalLight(shadows=True, shadow_map_size=64, position=(1, 2, 3)))
    sun.look_at((0, 0, 0))
    return scene


def _lines_and_points() -> Scene:
    """Points of two sizes and lines, under fog and a sky (the atmosphere pass), and an
    opaque quad under a shadowed light: the shadow pass of opaque casters
    (engine.render.backends.numba_shadow.draw_casters; the surfaces scene's BLEND sheet
    makes its casters alpha-tested, another path)."""
    scene = Scene("warm-up lines and points", fog=Fog("exp2", density=0.2), sky=Sky())
    ground = np.array([[-1, -1.2, -1], [1, -1.2, -1], [1, -1.2, 1], [-1, -1.2, 1]], np.float32)
    scene.add(Node("ground", geometry=Mesh(ground, [[0, 2, 1], [0, 3, 2]])))
    sun = scene.add(DirectionalLight(shadows=True, shadow_map_size=64, position=(1, 2, 3)))
    sun.look_at((0, 0, 0))
    rng = np.random.default_rng(0)
    pts = rng.uniform(-1, 1, (2000, 3)).astype(np.float32)
    scene.add(Node("points", geometry=PointCloud(pts, colors=(pts + 1) / 2, point_size=2)))
    scene.add(Node("splats", geometry=PointCloud(pts[:500] * 0.5, point_size=1)))
    corners = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], np.float32)
    scene.add(Node("lines", geometry=Lines(corners, [[0, 1], [1, 2], [2, 3], [3, 0]])))
    return scene


#: samples per pixel each scene is drawn with: windows' 1 and images' default 4, whose
#: multisample layers have their own kernel (engine.render.backends.numba_msaa)
WARM_MSAA = (1, IMAGE_MSAA)

#: (name shown in the progress line, scene builder)
SCENES: tuple[tuple[str, Callable[[], Scene]], ...] = (
    ("surfaces", _surfaces),
    ("lines and points", _lines_and_points),
)


def warm_up(progress: Callable[[str], None] | None = None, size=(160, 120)) -> float:
    """Render one frame of every scene in ``SCENES`` with the Numba backend at ``size``
    (width, height px), so its kernels are compiled and stored in Numba's disk cache.

    ``progress`` is called with one line per step ("surfaces (1/2)", ...). Returns the
    wall-clock seconds taken: tens on a first run, well under one once cached.

    Raises:
        engine.errors.BackendUnavailable (from ``get_backend``): Numba is not usable here.
    """
    from .renderer import Renderer

    start = time.perf_counter()
    for k, (name, build) in enumerate(SCENES, start=1):
        if progress is not None:
            progress(f"{name} ({k}/{len(SCENES)})")
        scene = build()
        camera = scene.add(PerspectiveCamera(fov_y=50, aspect=size[0] / size[1]))
        camera.frame(scene.bounds(), azimuth=30, elevation=20)
        for msaa in WARM_MSAA:
            renderer = Renderer(scene, camera, size, backend="numba", msaa=msaa)
            try:
                renderer.render()
            finally:
                renderer.close()
    return time.perf_counter() - start


def _preload_scene(shadows: bool) -> Scene:
    """What most first frames draw: one lit mesh with normals (a loaded OBJ, PLY or glTF
    file), under a shadowed light when ``shadows``."""
    scene = Scene("kernel preload")
    ball, faces = icosphere(1)
    scene.add(Node("lit", geometry=Mesh(ball, faces, normals=ball,
                                        material=Material(specular=0.5))))
    if shadows:
        sun = scene.add(DirectionalLight(shadows=True, shadow_map_size=64, position=(1, 2, 3)))
        sun.look_at((0, 0, 0))
    return scene


def preload(msaa: int = IMAGE_MSAA, shadows: bool = False) -> threading.Thread:
    """Start loading the kernels of a lit frame with ``msaa`` samples per pixel (and of
    its shadow pass when ``shadows``) from Numba's disk cache in a daemon thread and
    return it (join it before rendering on this process's own Renderer).

    Why: a new process's first frame loads each cached kernel on its first call (about
    0.3-0.5 s in all on 2 cores), after the file load. Most of that loading is LLVM
    linking through llvmlite's ctypes calls, which run without the GIL, so it overlaps
    the imports and file parsing of the main thread (``frustum render`` starts it before
    loading the file). Only those kernels: every material shares the one resolve
    kernel, and the transparency pass's kernels load in the frame that needs them. A
    preload of the whole warm-up scene made a plain mesh's frame wait for five kernels
    it never calls (the shadow and transparency passes'). Any failure (no Numba, an
    empty cache: then it compiles) stays in the thread: the main thread's own frame then
    does the work as before.
    """
    def run():
        try:
            scene = _preload_scene(shadows)
            camera = scene.add(PerspectiveCamera(fov_y=50, aspect=4 / 3))
            camera.frame(scene.bounds())
            from .renderer import Renderer

            renderer = Renderer(scene, camera, (32, 24), backend="numba", msaa=msaa)
            try:
                renderer.render(depth=False)
            finally:
                renderer.close()
        except Exception as exc:  # noqa: BLE001 - only a head start; the frame redoes it
            log.debug("kernel preload: %s: %s", type(exc).__name__, exc)

    thread = threading.Thread(target=run, name="frustum-kernel-preload", daemon=True)
    thread.start()
    return thread
