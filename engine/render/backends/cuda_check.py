"""GPU preflight: prove the CUDA path works here before anything is measured.

    python -m engine.render.backends.cuda_check      (exit 0: usable, 3: not, with why)

Prints the Python, CuPy and NVRTC versions, CuPy's configuration, the driver/runtime
versions and the device; compiles every CUDA source of the engine through the runtime
path (CuPy RawModule with the engine's NVRTC options); launches every kernel once on a
tiny input; and checks the results against the CPU backends (the projection bit for bit
against the host build's order of operations via Numba or NumPy's visibility, the
rasterizer's image exactly). The first failure stops the check with a one-line reason:
a GPU run then stops instead of reporting CPU figures as GPU ones.
"""

from __future__ import annotations

import contextlib
import io
import platform
import sys
import time

import numpy as np

__all__ = ["KERNELS", "CheckFailed", "run_check"]

# Every kernel of every CUDA source the engine loads.
KERNELS = {
    "transform.cu": ("project_points",),
    "raster.cu": ("clear_keys", "splat_points", "splat_sprites", "resolve_keys"),
    "timing.cu": ("spin_wait",),
    "surface_vertices.cu": ("surface_vertices",),
    "triangles.cu": ("classify_triangles", "clip_triangles", "raster_triangles"),
    "resolve.cu": ("resolve_surfaces",),
}


class CheckFailed(RuntimeError):
    """The GPU path is not usable; the message says which step failed and why."""


def _step(what: str, fn):
    try:
        return fn()
    except CheckFailed:
        raise
    except Exception as exc:
        raise CheckFailed(f"{what}: {type(exc).__name__}: {exc}") from exc


def _environment(log) -> dict:
    from .cuda_source import nvrtc_version
    from .cupy_backend import cupy_unavailable_reason

    info = {"python": platform.python_version()}
    log(f"python {info['python']} ({sys.executable})")
    reason = cupy_unavailable_reason()
    if reason:
        raise CheckFailed(f"CuPy cannot use a GPU here: {reason}")
    import cupy

    info["cupy"] = cupy.__version__
    info["nvrtc"] = ".".join(map(str, _step("NVRTC", nvrtc_version)))
    rt = cupy.cuda.runtime
    info["driver"] = rt.driverGetVersion()
    info["runtime"] = rt.runtimeGetVersion()
    dev = cupy.cuda.Device()
    props = rt.getDeviceProperties(dev.id)
    name = props["name"]
    info["device"] = name.decode() if isinstance(name, bytes) else str(name)
    info["compute_capability"] = f"{props['major']}.{props['minor']}"
    info["memory_gib"] = round(props["totalGlobalMem"] / 2**30, 1)
    log(f"cupy {info['cupy']}, NVRTC {info['nvrtc']}, driver CUDA {info['driver']}, "
        f"runtime CUDA {info['runtime']}")
    log(f"device {dev.id}: {info['device']}, compute capability {info['compute_capability']}, "
        f"{info['memory_gib']} GiB")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        _step("cupy.show_config", cupy.show_config)
    log("cupy.show_config():\n" + buf.getvalue().rstrip())
    return info


def _compile(log) -> dict:
    from .cupy_backend import get_function

    seconds = {}
    for source, names in KERNELS.items():
        t0 = time.perf_counter()
        for name in names:
            _step(f"compiling/loading {name} from shaders/{source}",
                  lambda s=source, k=name: get_function(s, k))
        seconds[source] = time.perf_counter() - t0
        log(f"compiled {source}: {', '.join(names)} ({seconds[source]:.2f} s, "
            "compile or kernel-cache load)")
    return seconds


def _launch(log):
    import cupy

    from ..points import rasterize_points
    from . import get_projector
    from .cupy_backend import CupyProjector
    from .cupy_raster import CudaRasterizer

    # project_points: in front, behind, NaN, outside, and an object id out of range.
    pos = np.array([[0, 0, -3], [0.5, -0.25, -2], [0, 0, 3], [np.nan, 0, -2], [9, 0, -1],
                    [0, 0, -2]], np.float32)
    oid = np.array([0, 1, 0, 0, 0, 5], np.uint32)
    model = np.stack([np.eye(4), np.eye(4)]).astype(np.float32)
    model[1, :3, 3] = (0.25, 0.0, 0.0)
    from ...scene.camera import PerspectiveCamera

    vp = PerspectiveCamera(fov_y=60.0, aspect=4 / 3).view_projection_matrix.astype(np.float32)
    out = _step("launching project_points", lambda: CupyProjector().project(
        cupy.asarray(pos), cupy.asarray(oid), cupy.asarray(model), vp, (64, 48)))
    cupy.cuda.get_current_stream().synchronize()
    xy, depth, vis = out.screen_xy.get(), out.depth.get(), out.visible.get()
    try:
        ref = get_projector("numba").project(pos, oid, model, vp, (64, 48))
        exact = True
    except Exception:  # noqa: BLE001 - without Numba, compare with NumPy within rounding
        ref = get_projector("numpy").project(pos, oid, model, vp, (64, 48))
        exact = False
    if vis.tolist() != ref.visible.tolist() or vis.tolist() != [True, True, False, False,
                                                                  False, False]:
        raise CheckFailed(f"project_points visibility {vis.tolist()} differs from the CPU "
                          f"backend's {ref.visible.tolist()}")
    if exact and not (np.array_equal(xy.view(np.uint32), ref.screen_xy.view(np.uint32))
                      and np.array_equal(depth.view(np.uint32), ref.depth.view(np.uint32))):
        raise CheckFailed("project_points is not bit-identical to the Numba backend "
                          f"(screen {xy.tolist()} vs {ref.screen_xy.tolist()}): is -fmad=false "
                          "in effect?")
    if not np.allclose(xy, ref.screen_xy, rtol=1e-5, atol=1e-3):
        raise CheckFailed(f"project_points screen positions {xy.tolist()} differ from "
                          f"{ref.screen_xy.tolist()}")
    log(f"launched project_points: matches the CPU backend {'bit for bit' if exact else ''}")

    rng = np.random.default_rng(1)
    n, size = 200, (37, 23)
    pxy = rng.uniform(-2, 39, (n, 2)).astype(np.float32)
    pz = rng.uniform(0, 1, n).astype(np.float32)
    pvis = rng.random(n) < 0.9
    pcol = rng.integers(0, 256, (n, 4), dtype=np.uint8)
    psize = rng.uniform(0.5, 4.5, n).astype(np.float32)
    r = _step("creating the CUDA rasterizer", CudaRasterizer)
    frame = _step("launching clear_keys/splat_points/resolve_keys", lambda: r.readback(
        r.rasterize(cupy.asarray(pxy), cupy.asarray(pz), cupy.asarray(pvis),
                    cupy.asarray(pcol), size, cupy.asarray(psize), sizes_revision=1)))
    ref = rasterize_points(pxy, pz, pvis, pcol, size, psize)
    if not (np.array_equal(frame.color, ref.color) and np.array_equal(frame.depth, ref.depth)):
        bad = int(np.count_nonzero(np.any(frame.color != ref.color, axis=-1)))
        raise CheckFailed(f"the CUDA rasterizer's image differs from NumPy's in {bad} pixels")
    log("launched clear_keys, splat_points, resolve_keys: image and depth equal NumPy's")

    _surfaces(log)

    from .cupy_backend import spin_kernel

    def spin():
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        spin_kernel()(100_000)
        end.record()
        end.synchronize()
        return cupy.cuda.get_elapsed_time(start, end)

    ms = _step("launching spin_wait", spin)
    if ms < 0.05:
        raise CheckFailed(f"spin_wait returned after {ms:.3f} ms instead of >= 0.1 ms")
    log(f"launched spin_wait: {ms:.3f} ms for 0.1 ms asked")
    _step("synchronising the device", lambda: cupy.cuda.Device().synchronize())


def _surfaces(log):
    """One lit, textured frame on the GPU path against the NumPy reference: a quad, a
    triangle crossing the near plane (clipped on the host) and a point in front."""
    from ...scene.camera import PerspectiveCamera
    from ...scene.geometry import Mesh, PointCloud
    from ...scene.graph import Node, Scene
    from ...scene.material import Material, Sampler, Texture
    from ..renderer import Renderer

    scene = Scene(background=(0.1, 0.1, 0.2))
    cam = scene.add(PerspectiveCamera(fov_y=70.0, aspect=4 / 3, near=0.1, far=20.0))
    tex = Texture(np.arange(48, dtype=np.uint8).reshape(2, 6, 4) * 5, Sampler(filter="nearest"))
    quad = np.array([[-1, -1, -3], [1, -1, -3], [1, 1, -3], [-1, 1, -3]], np.float32)
    scene.add(Node("quad", geometry=Mesh(quad, [[0, 1, 2], [0, 2, 3]],
                                         uvs=[[0, 1], [1, 1], [1, 0], [0, 0]],
                                         material=Material(texture=tex, specular=0.3))))
    tri = np.array([[-2, -1, -2], [2, -1, -2], [0.3, -0.5, 1]], np.float32)
    scene.add(Node("cut", geometry=Mesh(tri, [[0, 1, 2]], material=Material(
        (0.9, 0.4, 0.1), double_sided=True))))
    scene.add(Node("pt", geometry=PointCloud(np.array([[0.2, 0.1, -2]], np.float32),
                                             point_size=3)))
    got = _step("launching surface_vertices/classify_triangles/raster_triangles/"
                "resolve_surfaces", lambda: Renderer(scene, cam, (48, 36),
                                                     backend="cupy").render())
    ref = Renderer(scene, cam, (48, 36), backend="numpy").render()
    if not np.array_equal(got.depth, ref.depth):
        bad = int(np.count_nonzero(got.depth != ref.depth))
        raise CheckFailed(f"the CUDA surfaces' depth keys differ from NumPy's in {bad} pixels")
    diff = int(np.abs(got.color.astype(int) - ref.color.astype(int)).max())
    if diff > 1:
        raise CheckFailed(f"the CUDA surfaces' colours differ from NumPy's by {diff}/255")
    log("launched surface_vertices, classify_triangles, raster_triangles, resolve_surfaces: "
        "depth equal to NumPy's, colours within 1/255")


def run_check(log=print) -> dict:
    """Run every step; returns the environment facts. Raises CheckFailed at the first
    failure (the message names the step and the reason)."""
    info = _environment(log)
    info["load_s"] = _compile(log)
    _launch(log)
    return info


def main() -> int:
    try:
        run_check()
    except CheckFailed as exc:
        print(f"GPU CHECK FAILED: {exc}", flush=True)
        return 3
    print("GPU CHECK OK", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
