"""A render job as plain data that a Dask worker turns into frames.

A ``RenderJob`` holds what the single-process offline render (``frustum render``,
``engine.animation.offline.render_motion``) takes: the scene, the camera's starting
state, the motion, fps, the frame count, the size and the render options. It never
holds a ``Renderer``, a vertex batch, GL objects or device arrays: each worker builds
its own renderer from the job once (per worker thread) and keeps it for every frame of
that job it is given.

How workers get the scene (``SceneSource``):

- ``SceneSource.from_file(path)``: each worker loads the same file (or 'demo') with
  ``engine.io.sources.load_source``, exactly as the client does. The path is made
  absolute on the client, so every worker must see the file, and any files it refers to
  (glTF buffers, textures, OBJ materials), at that same path: a shared or replicated
  folder. Only the path travels.
- ``SceneSource.from_scene(scene, camera)``: a scene built in Python is pickled once on
  the client (NumPy arrays and plain Python; CuPy arrays are copied to the host, and a
  GL, window or renderer object in it is refused) and the bytes are sent to each worker
  once per job.

Frame k is rendered at t = k / fps from the motion's ``apply(camera, t)``, which must
depend on t alone (a ``CameraPath`` does; a ``CameraScript`` runs in order and is
refused), so any worker can render any frame, in any order, and gets the pixels the
single-process render gets.
"""

from __future__ import annotations

import io
import math
import os
import pickle
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..animation.camera_path import CameraScript
from ..arrays import to_host
from ..errors import EngineError
from ..io.image import composite
from ..render.msaa import IMAGE_MSAA
from ..render.renderer import Renderer, check_size

__all__ = ["RenderJob", "SceneSource", "camera_state", "render_frame", "render_frames",
           "take_frame", "worker_renderer"]


class _ScenePickler(pickle.Pickler):
    """Pickles a scene's plain data: CuPy arrays go to the host; live GL, window and
    renderer objects are refused (they cannot travel and must not)."""

    _REFUSED_MODULES = ("moderngl", "_moderngl", "pyglet", "glcontext")
    _REFUSED_TYPES = ("Renderer", "VertexBatch", "OffscreenGL", "Viewer")

    def reducer_override(self, obj):
        t = type(obj)
        mod = t.__module__ or ""
        if mod.startswith("cupy") and hasattr(obj, "get"):
            return to_host(obj).__reduce_ex__(5)
        if mod.split(".")[0] in self._REFUSED_MODULES or (
                mod.startswith("engine.") and t.__name__ in self._REFUSED_TYPES):
            raise EngineError(f"the scene holds a {mod}.{t.__name__}, which cannot be sent "
                              f"to Dask workers; give the scene without GL, window or "
                              f"renderer objects (or a file path)")
        return NotImplemented


@dataclass(frozen=True)
class SceneSource:
    """How a worker gets the scene: ``file`` ('demo' or an absolute 3D file path) with
    the --draw/--shading/--background/--exposure/--tone-map/--shadows look, or ``data`` (a pickled ``(scene, camera)``).
    Build one with ``from_file`` or ``from_scene``."""

    file: str | None = None
    data: bytes | None = None
    draw: str | None = None
    shading: str | None = None
    background: tuple | None = None
    up: str | None = None
    root: str | None = None
    exposure: float | None = None
    tone_map: str | None = None
    point_size: float | None = None
    point_shape: str | None = None
    point_units: str | None = None
    shadows: bool = False

    @classmethod
    def from_file(cls, source, draw=None, shading=None, background=None,
                  up: str | None = None, root=None, exposure=None,
                  tone_map=None, point_size=None, point_shape=None,
                  point_units=None, shadows=False) -> SceneSource:
        """A 3D file (or 'demo') every worker loads from the same path (``up``: its up
        axis, ``root``: the folder its references may be read from, as
        ``engine.io.load`` takes them); see the module docstring for what must be
        reachable."""
        s = str(source)
        if s != "demo":
            s = str(Path(s).expanduser().resolve())
        if root is not None:
            root = str(Path(root).expanduser().resolve())
        bg = None if background is None else tuple(float(v) for v in np.ravel(background))
        return cls(file=s, draw=draw, shading=shading, background=bg, up=up, root=root,
                   exposure=exposure, tone_map=tone_map, point_size=point_size,
                   point_shape=point_shape, point_units=point_units, shadows=bool(shadows))

    @classmethod
    def from_scene(cls, scene, camera, motion=None) -> SceneSource:
        """A scene built in Python, pickled once (plain arrays; see ``_ScenePickler``)
        with its camera, and with ``motion`` when the motion moves nodes of the scene
        (an animation clip): pickled together, the motion moves the workers' copy."""
        buf = io.BytesIO()
        _ScenePickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump((scene, camera, motion))
        return cls(data=buf.getvalue())

    def build(self, aspect: float):
        """(scene, camera, motion or None) on this process: loaded from the file, or
        unpickled (with the motion it was pickled with)."""
        if self.data is not None:
            return pickle.loads(self.data)
        from ..io.sources import apply_look, load_source

        scene, camera = load_source(self.file, aspect, self.up, self.root)
        apply_look(scene, self.draw, self.shading, self.background,
                   exposure=self.exposure, tone_map=self.tone_map, point_size=self.point_size,
                   point_shape=self.point_shape, point_units=self.point_units,
                   shadows=self.shadows)
        return scene, camera, None

    def describe(self) -> str:
        return self.file if self.file is not None else f"a scene ({len(self.data):,} bytes)"


def camera_state(camera) -> dict:
    """The camera's starting state as plain numbers: kind, local position, rotation and
    scale, near/far, and fov_y (perspective) or height (orthographic)."""
    from ..scene.camera import OrthographicCamera, PerspectiveCamera

    state = {"position": tuple(map(float, camera.position)),
             "rotation": tuple(map(float, camera.rotation)),
             "scale": tuple(map(float, camera.scale)),
             "near": float(camera.near), "far": float(camera.far)}
    if isinstance(camera, PerspectiveCamera):
        state.update(kind="perspective", fov_y=float(camera.fov_y))
    elif isinstance(camera, OrthographicCamera):
        state.update(kind="orthographic", height=float(camera.height))
    else:
        raise EngineError(f"cannot send a {type(camera).__name__} to workers: use a "
                          f"PerspectiveCamera or OrthographicCamera")
    return state


def _restore_camera(camera, state: dict):
    camera.position = state["position"]
    camera.rotation = state["rotation"]
    camera.scale = state["scale"]
    camera.set_clip(state["near"], state["far"])
    if state["kind"] == "perspective":
        camera.fov_y = state["fov_y"]
    else:
        camera.height = state["height"]


def _check_motion(motion):
    if isinstance(motion, CameraScript):
        raise EngineError("a CameraScript runs frame after frame in order, so it cannot be "
                          "split over workers; give a CameraPath (e.g. record it, or build "
                          "it with engine.animation.shots)")
    if not callable(getattr(motion, "apply", None)):
        raise EngineError(f"the motion must have apply(camera, t), got "
                          f"{type(motion).__name__}")
    try:
        pickle.dumps(motion)
    except Exception as exc:  # noqa: BLE001 - any pickling failure means the same
        raise EngineError(f"the motion ({type(motion).__name__}) cannot be sent to "
                          f"workers: {exc}") from None


@dataclass(frozen=True)
class RenderJob:
    """Everything a worker needs to render frame k of a clip (plain, picklable data).

    scene: a SceneSource. camera: ``camera_state(camera)`` at the start (the motion
    moves it every frame; near/far and fov stay unless the motion sets them). motion:
    an object with ``apply(camera, t)`` depending on t only (a CameraPath). fps,
    frames: frame k is at t = k / fps, k < frames. size: (width, height) pixels.
    backend, point_size, raster, msaa: as ``Renderer`` takes them. numba_threads: Numba
    threads per worker thread (None: Numba's default); 1 by default, so N workers x 1
    thread use N cores and nothing more. token: names the job (Dask keys, worker caches).
    """

    scene: SceneSource
    camera: dict
    motion: object
    fps: float
    frames: int
    size: tuple
    backend: str | None = None
    point_size: float | None = None
    raster: str = "software"
    numba_threads: int | None = 1
    msaa: int = IMAGE_MSAA  # a video's default, as render_video's (engine.render.msaa)
    token: str = field(default_factory=lambda: uuid.uuid4().hex[:16])

    def __post_init__(self):
        _check_motion(self.motion)
        fps = float(self.fps)
        if not (fps > 0 and math.isfinite(fps)):
            raise EngineError(f"fps must be positive and finite, got {self.fps!r}")
        from ..animation.offline import check_frame_count

        object.__setattr__(self, "frames", check_frame_count(self.frames))
        object.__setattr__(self, "fps", fps)
        object.__setattr__(self, "size", check_size(self.size))
        if self.numba_threads is not None and int(self.numba_threads) < 1:
            raise EngineError(f"numba_threads must be >= 1, got {self.numba_threads}")

    @classmethod
    def create(cls, scene, camera, motion, fps, frames, size, **options) -> RenderJob:
        """A job from a SceneSource, a file path or 'demo' (loaded by every worker), or
        a Scene object (pickled once, with the motion), and the starting ``camera``.

        A motion that moves nodes of the scene (``engine.animation.clips.ClipMotion``)
        needs the Scene object: with a file the workers' nodes would not be the ones it
        moves (EngineError)."""
        from ..scene.graph import Scene

        _check_motion(motion)  # before it is pickled with a scene
        if isinstance(scene, Scene):
            scene = SceneSource.from_scene(scene, camera, motion)
        elif not isinstance(scene, SceneSource):
            scene = SceneSource.from_file(scene)
        if scene.data is None and (_moves_nodes(motion) or _nested(camera)):
            # Workers loading the file would not have these nodes (an animation clip's)
            # or this camera's parents (a file's own camera): send the loaded scene.
            root = camera
            while root.parent is not None:
                root = root.parent
            if not isinstance(root, Scene):
                raise EngineError("the motion animates nodes of a scene loaded in this "
                                  "process: give the Scene object, not the file")
            scene = SceneSource.from_scene(root, camera, motion)
        return cls(scene, camera_state(camera), motion, fps, frames, tuple(size), **options)

    def build(self):
        """(renderer, motion): a new Renderer of this job's scene with the camera at
        its starting state, and the motion to pose it with (the one pickled with the
        scene, which moves that scene's nodes, else ``self.motion``)."""
        w, h = self.size
        scene, camera, motion = self.scene.build(w / h)
        if self.scene.data is None:  # a pickled camera travels as it was
            _restore_camera(camera, self.camera)
        renderer = Renderer(scene, camera, self.size, backend=self.backend,
                            point_size=self.point_size, raster=self.raster, msaa=self.msaa)
        return renderer, (self.motion if motion is None else motion)

    def time(self, k: int) -> float:
        return int(k) / self.fps


_local = threading.local()


def _set_numba_threads(n: int | None):
    """Numba threads for the calling thread (Numba's setting is per thread), capped at
    the size of its pool; nothing when Numba is not in use."""
    import sys

    if n is None or "numba" not in sys.modules:
        return
    import numba

    numba.set_num_threads(max(1, min(int(n), numba.config.NUMBA_NUM_THREADS)))


def _nested(camera) -> bool:
    """Whether the camera hangs below a transformed node (its local pose is not its
    world pose, and a worker's framed camera would not have those parents)."""
    parent = camera.parent
    return parent is not None and not np.array_equal(parent.world_matrix, np.eye(4))


def _moves_nodes(motion) -> bool:
    """Whether ``motion`` holds scene nodes other than cameras (e.g. a clip's tracks)."""
    from ..scene.camera import Camera
    from ..scene.graph import Node

    class Finder(pickle.Pickler):
        found = False

        def persistent_id(self, obj):
            if isinstance(obj, Node) and not isinstance(obj, Camera):
                Finder.found = True
                return "node"
            return None

    try:
        Finder(io.BytesIO(), protocol=pickle.HIGHEST_PROTOCOL).dump(motion)
    except Exception:  # noqa: BLE001 - unpicklable motions are refused elsewhere
        return False
    return Finder.found


def worker_renderer(job: RenderJob):
    """This thread's (Renderer, motion) for ``job``, built on first use and kept for
    the job's later frames (a new job replaces it, and the old renderer is closed)."""
    cached = getattr(_local, "job", None)
    if cached is not None and cached[0] == job.token:
        return cached[1]
    if cached is not None:
        cached[1][0].close()
        _local.job = None
    built = job.build()
    _local.job = (job.token, built)
    return built


def render_frame(job: RenderJob, k: int) -> tuple[int, np.ndarray]:
    """(k, colour (H, W, 4) uint8) of frame ``k`` of ``job``: the task a worker runs."""
    if not 0 <= int(k) < job.frames:
        raise IndexError(f"frame {k} is outside 0..{job.frames - 1}")
    renderer, motion = worker_renderer(job)
    _set_numba_threads(job.numba_threads)
    motion.apply(renderer.camera, job.time(k))
    frame = renderer.render(depth=False)
    return int(k), np.ascontiguousarray(frame.color)


def render_frames(job: RenderJob, start: int, stop: int, alpha: bool = True,
                  spool: str | None = None):
    """(start, [frames start..stop-1]): the task a worker runs for a run of consecutive
    frames; each an RGBA (H, W, 4) uint8 array, or RGB (H, W, 3) without ``alpha``.

    spool: a folder the client reads too (the same machine, or a shared mount). When
    this worker sees it, each frame is written there as a .npy file (under a temporary
    name, renamed when complete, so a file under its final name is whole) and its path
    is returned instead of the pixels: on one machine that is cheaper than sending
    megabytes through Dask's TCP comm. A worker that does not see the folder returns
    the pixels. Every attempt writes new, uniquely named files; the client reads the
    ones of the result it takes and removes the folder at the end."""
    if not 0 <= int(start) < int(stop) <= job.frames:
        raise IndexError(f"frames {start}..{stop - 1} are outside 0..{job.frames - 1}")
    folder = spool if spool and os.path.isdir(spool) else None
    out = []
    for k in range(int(start), int(stop)):
        color = render_frame(job, k)[1]
        if not alpha:  # an output without alpha: composited as the writer would
            color = np.ascontiguousarray(composite(color))
        if folder is None:
            out.append(color)
            continue
        name = os.path.join(folder, f"{job.token}-{k:07d}-{uuid.uuid4().hex[:12]}")
        try:
            with open(name + ".part", "wb") as f:
                np.save(f, color, allow_pickle=False)
            os.replace(name + ".part", name + ".npy")
        except FileNotFoundError:
            # the client removed the spool while this task ran (the job ended, e.g. on
            # Ctrl-C): the rest as pixels, which nobody takes, instead of a failed task
            # whose traceback the worker logs over the client's closing line
            folder = None
            out.append(color)
            continue
        out.append(name + ".npy")
    return int(start), out


def take_frame(item) -> np.ndarray:
    """A frame from ``render_frames``' result: the array, or the spool file mapped
    (read-only, no copy; the mapping outlives the name) and removed."""
    if isinstance(item, str):
        try:
            return np.load(item, mmap_mode="r", allow_pickle=False)
        finally:
            os.unlink(item)
    return item
