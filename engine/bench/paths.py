"""The projection paths compared by ``frustum bench``, each as a ready-to-time Case.

Every path projects the same vertices seen by the same camera (float32 data)::

    naive_numpy     the function people write first (from issue 6):
                    ``data = (v - shift).T; data = R @ data; data[:2] *= f / abs(data[2:3])``
    naive_numba     the same function under Numba ``@njit`` (serial, as people write it)
    naive_cupy      the same NumPy function called on CuPy arrays (one launch per op)
    torch_cuda      the same math in PyTorch on the GPU
    engine_numpy    the engine's NumPy backend       } full contract: clip test,
    engine_numba    the engine's Numba backend       } viewport pixels, depth,
    engine_cupy     the engine's RawKernel, data resident on the device    } visibility
    engine_cupy_transfer  the RawKernel with per-frame upload of positions and download
                    of the outputs (what you pay when the data lives on the host)
    gl_transform    the same projection in a GLSL vertex shader, captured with transform
                    feedback (moderngl, standalone EGL context)
    e2e_software    a whole engine frame: Renderer.project + software rasterizer (1280x720)
    e2e_gl          a whole engine frame: Renderer.project + GL_POINTS draw (offscreen EGL)

A factory raises ``Skip`` with the reason when its library or device is missing.
``bytes_per_vertex`` counts the essential traffic (inputs read + outputs written once),
not temporaries, so the bandwidth fraction of a multi-pass path is generous to it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..render.backends.kernel_cache import cached
from .timing import cupy_sync, gl_sync, no_sync

VIEWPORT = (1280, 720)
FOV_Y = 60.0
# positions (12 B) in; screen xy (8) + depth (4) + visible (1) out
ENGINE_BYTES = 25
# the RawKernel also reads the per-vertex object id (4 B)
ENGINE_CUDA_BYTES = 29
NAIVE_BYTES = 24  # (N, 3) float32 in, (N, 3) float32 out
GL_BYTES = 28  # vec3 in, vec4 (x, y, depth, visible) captured


class Skip(Exception):
    """This path cannot run here; the message says why."""


@dataclass
class Case:
    """One timed path at one size. ``fn`` does one frame's work; ``sync`` waits for it.

    ``device`` is "cpu", "gpu" (CUDA: also timed with CUDA events) or "gl" (also timed
    with a GL time query on ``gl_ctx``); ``calls_per_frame`` counts Python-level kernel
    calls (launches on the GPU) per frame.
    """

    path: str
    label: str
    device: str
    fn: Callable[[], object]
    sync: Callable[[], None] = no_sync
    bytes_per_vertex: float | None = None
    note: str = ""
    gl_ctx: object = None
    calls_per_frame: int | None = None
    release: Callable[[], None] = field(default=lambda: None)
    check: Callable[[], dict] | None = None  # agreement with the engine's NumPy backend


@dataclass
class Workload:
    """N random vertices in [-1, 1]^3 and a camera 4 units away, in both forms the paths
    take: (shift, R, f) for the naive function, (model, view_proj, runs) for the engine."""

    n: int
    positions: np.ndarray  # (N, 3) float32, world frame
    shift: np.ndarray  # (3,) float32, camera position
    rotation: np.ndarray  # (3, 3) float32, world -> view rotation
    focal: np.float32  # 1 / tan(fov_y / 2)
    model: np.ndarray  # (1, 4, 4) float32 identity
    view_proj: np.ndarray  # (4, 4) float32
    object_id: np.ndarray  # (N,) uint32 zeros
    runs: np.ndarray  # (1, 3) int64
    camera: object = None


def make_camera():
    from ..scene.camera import PerspectiveCamera

    cam = PerspectiveCamera(fov_y=FOV_Y, aspect=VIEWPORT[0] / VIEWPORT[1], near=0.1, far=100.0,
                            position=(0.6, 0.8, 4.0))
    cam.look_at((0.0, 0.0, 0.0))
    return cam


def make_workload(n: int, seed: int = 0) -> Workload:
    rng = np.random.default_rng(seed)
    pos = rng.random((n, 3), dtype=np.float32)
    pos *= 2
    pos -= 1
    cam = make_camera()
    view = cam.view_matrix
    return Workload(
        n=n, positions=pos,
        shift=np.asarray(cam.world_matrix[:3, 3], np.float32),
        rotation=np.ascontiguousarray(view[:3, :3], np.float32),
        focal=np.float32(1.0 / np.tan(np.radians(FOV_Y) / 2)),
        model=np.eye(4, dtype=np.float32)[None],
        view_proj=cam.view_projection_matrix.astype(np.float32),
        object_id=np.zeros(n, np.uint32),
        runs=np.array([[0, n, 0]], np.int64),
        camera=cam,
    )


def naive_project(v, shift, R, f):
    """The vertex projection people write first; works on NumPy and CuPy arrays alike.

    v (N, 3) world positions, shift (3,) camera position, R (3, 3) world->view rotation,
    f focal length in NDC units. Returns (N, 3): x, y divided by ``|z|``, z in view units.
    """
    data = (v - shift).T
    data = R @ data
    data[:2] *= f / abs(data[2:3])
    return data.T


def naive_project_loops(v, shift, R, f):
    """``naive_project`` with the 3x3 matmul written out: Numba's ``@`` needs SciPy."""
    n = v.shape[0]
    out = np.empty((n, 3), np.float32)
    for i in range(n):
        x = v[i, 0] - shift[0]
        y = v[i, 1] - shift[1]
        z = v[i, 2] - shift[2]
        a = R[0, 0] * x + R[0, 1] * y + R[0, 2] * z
        b = R[1, 0] * x + R[1, 1] * y + R[1, 2] * z
        c = R[2, 0] * x + R[2, 1] * y + R[2, 2] * z
        s = f / abs(c)
        out[i, 0] = a * s
        out[i, 1] = b * s
        out[i, 2] = c
    return out


def _require_cuda():
    from ..render.backends.cupy_backend import cupy_unavailable_reason

    reason = cupy_unavailable_reason()
    if reason:
        raise Skip(reason)
    import cupy

    return cupy


# --- factories: (workload) -> Case ------------------------------------------------------

def naive_numpy(w: Workload) -> Case:
    return Case("naive_numpy", "naive NumPy function", "cpu",
                lambda: naive_project(w.positions, w.shift, w.rotation, w.focal),
                bytes_per_vertex=NAIVE_BYTES, calls_per_frame=1)


_numba_naive = {}


def naive_numba(w: Workload) -> Case:
    try:
        import numba
    except ImportError as exc:
        raise Skip(f"Numba is not installed ({exc})") from None
    if "fn" not in _numba_naive and importlib.util.find_spec("scipy") is None:
        _numba_naive["fn"] = numba.njit(cache=cached())(naive_project_loops)
        _numba_naive["note"] = ("Numba compiles @ only with SciPy (not installed): timed the "
                                "same math with the 3x3 matmul written as a loop")
    if "fn" not in _numba_naive:
        literal = numba.njit(cache=cached())(naive_project)
        try:
            literal(w.positions[:4], w.shift, w.rotation, w.focal)
            _numba_naive["fn"], _numba_naive["note"] = literal, "@njit of the literal function"
        except Exception as exc:  # noqa: BLE001 - Numba raises typing/lowering errors of many classes
            reason = str(exc).strip().splitlines()[-1][:80]
            _numba_naive["fn"] = numba.njit(cache=cached())(naive_project_loops)
            _numba_naive["note"] = (f"@njit of the literal function failed ({reason}); "
                                    "timed the same math with the matmul written as a loop")
    fn = _numba_naive["fn"]
    return Case("naive_numba", "naive function, Numba @njit", "cpu",
                lambda: fn(w.positions, w.shift, w.rotation, w.focal),
                bytes_per_vertex=NAIVE_BYTES, note=_numba_naive["note"], calls_per_frame=1)


def naive_cupy(w: Workload) -> Case:
    cp = _require_cuda()
    v, shift, R = cp.asarray(w.positions), cp.asarray(w.shift), cp.asarray(w.rotation)
    f = float(w.focal)  # a Python scalar stays a kernel argument (float32 math, NEP 50)
    return Case("naive_cupy", "naive NumPy function on CuPy arrays", "gpu",
                lambda: naive_project(v, shift, R, f), sync=cupy_sync(),
                bytes_per_vertex=NAIVE_BYTES, calls_per_frame=5,
                note="one launch per array operation")


def torch_cuda(w: Workload) -> Case:
    try:
        import torch
    except ImportError as exc:
        raise Skip(f"PyTorch is not installed ({exc})") from None
    if not torch.cuda.is_available():
        raise Skip("PyTorch has no CUDA device")
    dev = torch.device("cuda")
    v = torch.as_tensor(w.positions, device=dev)
    shift = torch.as_tensor(w.shift, device=dev)
    R = torch.as_tensor(w.rotation, device=dev)
    f = float(w.focal)

    def fn():
        data = (v - shift).T
        data = R @ data
        data[:2] *= f / data[2:3].abs()
        return data.T

    return Case("torch_cuda", "same math in PyTorch (CUDA)", "gpu", fn,
                sync=torch.cuda.synchronize, bytes_per_vertex=NAIVE_BYTES, calls_per_frame=5)


def _engine(w: Workload, backend: str, label: str) -> Case:
    from ..render.backends import get_projector

    try:
        p = get_projector(backend)
    except (RuntimeError, ImportError) as exc:
        raise Skip(str(exc)) from None
    return Case(f"engine_{backend}", label, "cpu",
                lambda: p.project(w.positions, w.object_id, w.model, w.view_proj, VIEWPORT,
                                  runs=w.runs),
                bytes_per_vertex=ENGINE_BYTES, calls_per_frame=1)


def engine_numpy(w: Workload) -> Case:
    return _engine(w, "numpy", "engine NumPy backend")


def engine_numba(w: Workload) -> Case:
    return _engine(w, "numba", "engine Numba backend")


def engine_cupy(w: Workload) -> Case:
    cp = _require_cuda()
    from ..render.backends import get_projector

    p = get_projector("cupy")
    pos, oid, model = cp.asarray(w.positions), cp.asarray(w.object_id), cp.asarray(w.model)
    return Case("engine_cupy", "engine RawKernel, device-resident", "gpu",
                lambda: p.project(pos, oid, model, w.view_proj, VIEWPORT),
                sync=cupy_sync(), bytes_per_vertex=ENGINE_CUDA_BYTES, calls_per_frame=1,
                note="view-projection (64 B) uploaded every frame, as a moving camera does")


def engine_cupy_transfer(w: Workload) -> Case:
    cp = _require_cuda()
    from ..render.backends import get_projector

    p = get_projector("cupy")

    def fn():
        out = p.project(cp.asarray(w.positions), cp.asarray(w.object_id), w.model,
                        w.view_proj, VIEWPORT)
        return cp.asnumpy(out.screen_xy), cp.asnumpy(out.depth), cp.asnumpy(out.visible)

    return Case("engine_cupy_transfer", "engine RawKernel, host data (upload + download)",
                "gpu", fn, sync=cupy_sync(), bytes_per_vertex=ENGINE_CUDA_BYTES,
                calls_per_frame=1, note="bytes/vertex counts device traffic; PCIe dominates")


GL_TRANSFORM_VS = """
#version 330
in vec3 in_pos;
uniform mat4 view_proj;
uniform vec2 viewport;
out vec4 out_v;  // screen x, screen y (pixels, y down), depth, visible (1 or 0)
void main() {
    vec4 c = view_proj * vec4(in_pos, 1.0);
    bool ok = c.w > 1e-7 && abs(c.x) <= c.w && abs(c.y) <= c.w && abs(c.z) <= c.w;
    float inv = ok ? 1.0 / c.w : 0.0;
    out_v = ok ? vec4((c.x * inv * 0.5 + 0.5) * viewport.x, (0.5 - c.y * inv * 0.5) * viewport.y,
                      c.z * inv * 0.5 + 0.5, 1.0)
               : vec4(0.0, 0.0, 1.0, 0.0);
}
"""

_gl = {}


def gl_context():
    """One standalone EGL context per process (about 0.6 s to create on llvmpipe)."""
    if "ctx" not in _gl:
        try:
            from ..render.gl import create_egl_context
        except ImportError as exc:
            raise Skip(f"engine.render.gl is not importable ({exc})") from None
        try:
            _gl["ctx"] = create_egl_context()
        except Exception as exc:  # noqa: BLE001 - GLUnavailable, or moderngl missing
            raise Skip(str(exc)) from None
    return _gl["ctx"]


def gl_transform(w: Workload) -> Case:
    ctx = gl_context()
    import moderngl

    prog = ctx.program(vertex_shader=GL_TRANSFORM_VS, varyings=["out_v"])
    prog["view_proj"].write(np.ascontiguousarray(w.view_proj.T, np.float32).tobytes())
    prog["viewport"].value = tuple(float(v) for v in VIEWPORT)
    vbo = ctx.buffer(w.positions.tobytes())
    out = ctx.buffer(reserve=w.n * 16)
    vao = ctx.vertex_array(prog, [(vbo, "3f", "in_pos")])
    # Mesa rejects draws (transform feedback included) with no framebuffer bound
    # (GL_INVALID_FRAMEBUFFER_OPERATION); a standalone context has none by default.
    fbo = ctx.simple_framebuffer((1, 1))

    def release():
        for obj in (vao, out, vbo, prog, fbo):
            obj.release()

    def fn():
        fbo.use()
        vao.transform(out, mode=moderngl.POINTS, vertices=w.n)

    def check():
        got = np.frombuffer(out.read(), np.float32).reshape(w.n, 4)
        return agreement(w, got[:, :2], got[:, 2], got[:, 3] > 0.5)

    return Case("gl_transform", "GLSL vertex shader, transform feedback", "gl", fn,
                sync=gl_sync(ctx), bytes_per_vertex=GL_BYTES, gl_ctx=ctx, calls_per_frame=1,
                note=ctx.info["GL_RENDERER"], release=release, check=check)


def agreement(w: Workload, screen_xy, depth, visible) -> dict:
    """How far another path's output is from the engine's NumPy backend: the fraction of
    vertices whose visibility differs (only vertices on the clip boundary may differ by
    rounding) and the largest screen (pixels) and depth differences where both agree."""
    from ..render.backends import get_projector

    ref = get_projector("numpy").project(w.positions, w.object_id, w.model, w.view_proj,
                                         VIEWPORT, runs=w.runs)
    vis = np.asarray(visible, bool)
    both = vis & ref.visible
    dxy = float(np.max(np.abs(screen_xy[both] - ref.screen_xy[both]), initial=0.0))
    dz = float(np.max(np.abs(depth[both] - ref.depth[both]), initial=0.0))
    return {"visibility_mismatch_fraction": float(np.mean(vis != ref.visible)),
            "max_screen_diff_px": dxy, "max_depth_diff": dz,
            "visible_fraction": float(np.mean(ref.visible))}


def _points_scene(w: Workload):
    from ..scene.geometry import PointCloud
    from ..scene.graph import Node, Scene

    scene = Scene()
    colors = np.empty((w.n, 4), np.uint8)
    colors[:, :3] = ((w.positions * 0.5 + 0.5) * 255).astype(np.uint8)
    colors[:, 3] = 255
    scene.add(Node("points", geometry=PointCloud(w.positions, colors=colors)))
    cam = make_camera()
    scene.add(cam)
    return scene, cam


def e2e_software(w: Workload) -> Case:
    from ..render.renderer import Renderer

    scene, cam = _points_scene(w)
    r = Renderer(scene, cam, VIEWPORT, point_size=1.0)
    return Case("e2e_software", f"engine frame: project ({r.projector.name}) + software raster",
                "cpu", r.render, calls_per_frame=1, note="1280x720, 1-pixel points")


def e2e_gl(w: Workload) -> Case:
    ctx = gl_context()
    from ..render.gl import PointPainter
    from ..render.renderer import Renderer

    scene, cam = _points_scene(w)
    r = Renderer(scene, cam, VIEWPORT, point_size=1.0)
    painter = PointPainter(ctx)
    fbo = ctx.framebuffer(color_attachments=[ctx.renderbuffer(VIEWPORT, components=4)],
                          depth_attachment=ctx.depth_renderbuffer(VIEWPORT))

    def fn():
        p = r.project()
        fbo.use()
        fbo.clear(0.0, 0.0, 0.0, 1.0, depth=1.0)
        painter.draw(p.screen_xy, p.depth, p.visible, r.batch.colors, VIEWPORT, 1.0)

    def release():
        painter.release()
        fbo.release()

    return Case("e2e_gl", f"engine frame: project ({r.projector.name}) + GL_POINTS draw", "gl",
                fn, sync=gl_sync(ctx), gl_ctx=ctx, calls_per_frame=1,
                note=f"1280x720 offscreen, {ctx.info['GL_RENDERER']}", release=release)


PATHS = {
    "naive_numpy": naive_numpy,
    "naive_numba": naive_numba,
    "naive_cupy": naive_cupy,
    "torch_cuda": torch_cuda,
    "engine_numpy": engine_numpy,
    "engine_numba": engine_numba,
    "engine_cupy": engine_cupy,
    "engine_cupy_transfer": engine_cupy_transfer,
    "gl_transform": gl_transform,
    "e2e_software": e2e_software,
    "e2e_gl": e2e_gl,
}


@dataclass
class ManyObjects:
    """K objects of M vertices each (local frames), placed by K model matrices."""

    k: int
    m: int
    local: np.ndarray  # (K*M, 3) float32, each object's local frame
    model: np.ndarray  # (K, 4, 4) float32 local -> world
    object_id: np.ndarray  # (K*M,) uint32
    runs: np.ndarray  # (K, 3) int64
    view_proj: np.ndarray
    shift: np.ndarray
    rotation: np.ndarray
    focal: np.float32


def make_many_objects(k: int = 1000, m: int = 1000, seed: int = 1) -> ManyObjects:
    rng = np.random.default_rng(seed)
    local = (rng.random((k * m, 3), dtype=np.float32) - 0.5) * 0.1
    model = np.repeat(np.eye(4, dtype=np.float32)[None], k, axis=0)
    model[:, :3, 3] = rng.uniform(-1, 1, (k, 3))
    angle = rng.uniform(0, 2 * np.pi, k)
    model[:, 0, 0] = model[:, 2, 2] = np.cos(angle)
    model[:, 0, 2] = np.sin(angle)
    model[:, 2, 0] = -np.sin(angle)
    w = make_workload(1)
    return ManyObjects(k, m, local, model, np.repeat(np.arange(k, dtype=np.uint32), m),
                       np.stack([np.arange(k) * m, np.arange(1, k + 1) * m, np.arange(k)], 1),
                       w.view_proj, w.shift, w.rotation, w.focal)


def many_per_object_numpy(s: ManyObjects) -> Case:
    blocks = [s.local[i * s.m:(i + 1) * s.m] for i in range(s.k)]

    def fn():
        for i, b in enumerate(blocks):
            mat = s.model[i]
            naive_project(b @ mat[:3, :3].T + mat[:3, 3], s.shift, s.rotation, s.focal)

    return Case("many_per_object_numpy", "naive NumPy, one call per object", "cpu", fn,
                bytes_per_vertex=NAIVE_BYTES, calls_per_frame=s.k)


def _many_engine(s: ManyObjects, backend: str) -> Case:
    from ..render.backends import get_projector

    try:
        p = get_projector(backend)
    except (RuntimeError, ImportError) as exc:
        raise Skip(str(exc)) from None
    return Case(f"many_engine_{backend}", f"engine {backend} backend, one call for all objects",
                "cpu", lambda: p.project(s.local, s.object_id, s.model, s.view_proj, VIEWPORT,
                                         runs=s.runs),
                bytes_per_vertex=ENGINE_BYTES, calls_per_frame=1)


def many_engine_numpy(s: ManyObjects) -> Case:
    return _many_engine(s, "numpy")


def many_engine_numba(s: ManyObjects) -> Case:
    return _many_engine(s, "numba")


def many_per_object_cupy(s: ManyObjects) -> Case:
    cp = _require_cuda()
    blocks = [cp.asarray(s.local[i * s.m:(i + 1) * s.m]) for i in range(s.k)]
    rot = [cp.asarray(np.ascontiguousarray(s.model[i, :3, :3].T)) for i in range(s.k)]
    trans = [cp.asarray(s.model[i, :3, 3]) for i in range(s.k)]
    shift, R = cp.asarray(s.shift), cp.asarray(s.rotation)
    f = float(s.focal)

    def fn():
        for b, r, t in zip(blocks, rot, trans):
            naive_project(b @ r + t, shift, R, f)

    return Case("many_per_object_cupy", "naive NumPy on CuPy, one call per object", "gpu", fn,
                sync=cupy_sync(), bytes_per_vertex=NAIVE_BYTES, calls_per_frame=7 * s.k,
                note="about 7 launches per object")


def many_engine_cupy(s: ManyObjects) -> Case:
    cp = _require_cuda()
    from ..render.backends import get_projector

    p = get_projector("cupy")
    pos, oid, model = cp.asarray(s.local), cp.asarray(s.object_id), cp.asarray(s.model)
    return Case("many_engine_cupy", "engine RawKernel, one launch for all objects", "gpu",
                lambda: p.project(pos, oid, model, s.view_proj, VIEWPORT), sync=cupy_sync(),
                bytes_per_vertex=ENGINE_CUDA_BYTES, calls_per_frame=1)


def many_scene_moving(s: ManyObjects) -> Case:
    """The real engine frame for the scene: every node moves, then Renderer.project()
    (world matrices, model upload, one projection call)."""
    from ..render.renderer import Renderer
    from ..scene.geometry import PointCloud
    from ..scene.graph import Node, Scene

    scene = Scene()
    nodes = []
    for i in range(s.k):
        node = Node(f"obj{i}", geometry=PointCloud(s.local[i * s.m:(i + 1) * s.m]),
                    position=tuple(float(v) for v in s.model[i, :3, 3]))
        scene.add(node)
        nodes.append(node)
    cam = make_camera()
    scene.add(cam)
    r = Renderer(scene, cam, VIEWPORT)
    base = np.array([n.position for n in nodes])
    tick = [0]

    def fn():
        tick[0] += 1
        dy = 0.01 * (tick[0] % 2)
        for node, p in zip(nodes, base):
            node.position = (p[0], p[1] + dy, p[2])
        return r.project()

    return Case("many_scene_moving", f"Renderer.project ({r.projector.name}), all nodes moved",
                "gpu" if r.projector.name == "cupy" else "cpu", fn,
                sync=cupy_sync() if r.projector.name == "cupy" else no_sync,
                calls_per_frame=1, note="includes K node updates and world matrices in Python")


MANY_PATHS = {
    "many_per_object_numpy": many_per_object_numpy,
    "many_engine_numpy": many_engine_numpy,
    "many_engine_numba": many_engine_numba,
    "many_per_object_cupy": many_per_object_cupy,
    "many_engine_cupy": many_engine_cupy,
    "many_scene_moving": many_scene_moving,
}
