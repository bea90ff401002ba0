"""GPU support code that runs without a GPU: the CUDA-major choice behind install hints,
the measured Numba/CuPy crossover behind ``auto``, interop argument checks, and the
GPU tests that run only where a device is (marked gpu)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from conftest import ROOT

from engine.render.backends import crossover as X
from engine.render.backends import cuda_env


def test_cupy_wheel_major_and_hints_follow_one_cuda_major():
    assert cuda_env.cupy_wheel_major(["numpy", "cupy-cuda13x"]) == 13
    assert cuda_env.cupy_wheel_major(["CuPy_CUDA12x", "pip"]) == 12
    assert cuda_env.cupy_wheel_major(["numpy"]) is None
    with pytest.raises(RuntimeError, match="two CuPy wheels"):
        cuda_env.cupy_wheel_major(["cupy-cuda12x", "cupy-cuda13x"])
    assert cuda_env.install_hint(13) == "pip install 'frustum[gpu-cuda13]'"
    assert cuda_env.install_hint(12) == "pip install 'frustum[gpu]'"
    unknown = cuda_env.install_hint(0)  # no CuPy wheel, no driver: both are named
    assert "gpu-cuda13" in unknown and "'frustum[gpu]'" in unknown
    assert cuda_env.nvrtc_hint(13) == "pip install 'nvidia-cuda-nvrtc==13.0.*'"
    assert cuda_env.nvrtc_hint(12) == "pip install 'nvidia-cuda-nvrtc-cu12'"


def test_extras_in_pyproject_name_one_major_each():
    from conftest import ROOT

    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    for major, extra in cuda_env.EXTRAS.items():
        reqs = " ".join(extras[extra])
        assert re.findall(r"cupy-cuda(\d+)x", reqs) == [str(major)], extra
        assert cuda_env.NVRTC_PACKAGES[major] in extras[extra]
        assert "cuda-bindings" in reqs
    # one extra per major, no second name for the same packages
    gpu_extras = {name for name, reqs in extras.items() if "cupy" in " ".join(reqs)}
    assert gpu_extras == set(cuda_env.EXTRAS.values()) == {"gpu", "gpu-cuda13"}


def test_installed_cupy_matches_the_hints():
    """This environment (set up by scripts/setup.sh) holds one CuPy wheel where a CUDA
    driver is present, and the hint for its NVRTC names the package of the same major;
    without a driver it holds none (the GPU runtime is installed only with a driver)."""
    major = cuda_env.cupy_wheel_major()
    if major is None:
        assert cuda_env.driver_cuda_version() is None
        assert cuda_env.cuda_major() is None
        return
    assert major in cuda_env.EXTRAS
    assert cuda_env.cuda_major() == major


def test_the_dev_extra_compiles_kernels_without_the_gpu_runtime():
    """dev / dev-cuda12 hold NVRTC and its Python binding of one major, never CuPy, so
    CI compiles every kernel without downloading the GPU runtime; numba is a plain
    dependency, and no extra is empty."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = meta["optional-dependencies"]
    assert any(d.startswith("numba") for d in meta["dependencies"])
    assert all(extras.values()), [name for name, reqs in extras.items() if not reqs]
    for name, major in (("dev", 13), ("dev-cuda12", 12)):
        reqs = " ".join(extras[name])
        assert "cupy" not in reqs and "cuda-bindings" in reqs, name
        assert cuda_env.NVRTC_PACKAGES[major] in extras[name], name


def test_crossover_is_the_smallest_size_from_which_the_gpu_keeps_winning():
    times = {"numba": {10**3: 1e-4, 10**4: 5e-4, 10**5: 5e-3, 10**6: 5e-2},
             "cupy": {10**3: 3e-4, 10**4: 4e-4, 10**5: 6e-3, 10**6: 2e-3}}
    cross, got = X.measure_crossover(frame_seconds=lambda b, n: times[b][n])
    assert cross == 10**6 and got == times  # wins at 1e4 but loses at 1e5
    never = X.measure_crossover(frame_seconds=lambda b, n: 1.0 if b == "cupy" else 0.5)[0]
    assert never == 2 * 10**6


def test_crossover_is_cached_per_machine(tmp_path, monkeypatch):
    monkeypatch.setenv("FRUSTUM_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("FRUSTUM_CROSSOVER", raising=False)
    monkeypatch.setattr(X, "_memo", {})
    calls = []

    def measure():
        calls.append(1)
        return 30_000, {"numba": {1000: 1e-4}, "cupy": {1000: 2e-4}}

    assert X.crossover(measure, key="gpu A") == 30_000
    data = json.loads((tmp_path / "backend-crossover.json").read_text())
    assert data["key"] == "gpu A" and data["crossover"] == 30_000
    monkeypatch.setattr(X, "_memo", {})
    assert X.crossover(measure, key="gpu A") == 30_000 and len(calls) == 1  # from the file
    assert X.crossover(lambda: (5, {"numba": {}, "cupy": {}}), key="gpu B") == 5  # new key
    monkeypatch.setenv("FRUSTUM_CROSSOVER", "1e5")
    assert X.crossover(measure, key="gpu C") == 100_000
    monkeypatch.setenv("FRUSTUM_CROSSOVER", "many")
    with pytest.raises(ValueError, match="FRUSTUM_CROSSOVER"):
        X.crossover(measure, key="gpu C")


def test_auto_uses_numba_below_the_crossover_and_cupy_from_it(monkeypatch):
    from engine.render import backends

    class FakeCudaBackend:
        name = "cupy"

    real_make = backends._make
    monkeypatch.setattr(backends, "_make", lambda name: FakeCudaBackend()
                        if name == "cupy" else real_make(name))
    monkeypatch.setenv("FRUSTUM_CROSSOVER", "50000")
    monkeypatch.delenv("ENGINE_BACKEND", raising=False)
    assert backends.get_backend("auto", vertex_count=1000).name == "numba"
    assert backends.get_backend("auto", vertex_count=50_000).name == "cupy"
    assert backends.get_backend("auto").name == "cupy"  # size unknown
    assert backends.get_backend("cupy", vertex_count=10).name == "cupy"  # asked for


def test_interop_needs_contiguous_device_arrays():
    from engine.render.gl.interop import device_pointer, is_device_array

    class Dev:
        dtype = np.dtype(np.float32)

        def __init__(self, shape, strides):
            self.__cuda_array_interface__ = {"shape": shape, "strides": strides,
                                             "data": (4096, False), "typestr": "<f4"}

    assert not is_device_array(np.zeros(3))
    assert device_pointer(Dev((5, 2), None)) == 4096
    assert device_pointer(Dev((5, 2), (8, 4))) == 4096  # C-contiguous, strides stated
    with pytest.raises(ValueError, match="C-contiguous"):
        device_pointer(Dev((5, 2), (16, 4)))


def test_preflight_passes_on_the_stand_in_device(monkeypatch, native_dir):
    import stand_in_device

    from engine.render.backends import cuda_check

    device = stand_in_device.install(monkeypatch, native_dir)
    monkeypatch.setattr("engine.render.backends.cuda_source.nvrtc_version", lambda: (13, 0))
    lines = []
    info = cuda_check.run_check(log=lines.append)
    assert info["device"] == "Stand-in GPU" and info["nvrtc"] == "13.0"
    text = "\n".join(lines)
    assert "cupy.show_config()" in text and "bit for bit" in text
    launched = set(device.kernels)
    assert launched == {k for names in cuda_check.KERNELS.values() for k in names}


def test_preflight_stops_at_the_first_failure_naming_it(monkeypatch, native_dir, capsys):
    import stand_in_device

    from engine.render.backends import cuda_check

    stand_in_device.install(monkeypatch, native_dir)
    monkeypatch.setattr("engine.render.backends.cuda_source.nvrtc_version", lambda: (13, 0))
    real = stand_in_device.Kernels._project_points

    def off_by_one_ulp(self, kernel, grid, block, *args):
        real(self, kernel, grid, block, *args)
        xy = args[8]
        xy.view(np.uint32)[...] += 1  # what a fused multiply-add would do to some vertices

    monkeypatch.setattr(stand_in_device.Kernels, "_project_points", off_by_one_ulp)
    assert cuda_check.main() == 3
    out = capsys.readouterr().out
    assert "GPU CHECK FAILED: project_points is not bit-identical" in out
    assert "launched clear_keys" not in out  # stopped before the rasterizer


def test_preflight_without_a_device_says_why(capsys):
    from engine.render.backends import cuda_check
    from engine.render.backends.cupy_backend import cupy_unavailable_reason

    if cupy_unavailable_reason() is None:
        pytest.skip("a GPU is available here")
    assert cuda_check.main() == 3
    assert "GPU CHECK FAILED: CuPy cannot use a GPU here" in capsys.readouterr().out


# --- on a device ----------------------------------------------------------------------

@pytest.mark.gpu
def test_cupy_projection_is_bit_identical_to_numba():
    """-fmad=false: the CUDA kernel rounds every product and sum like the Numba kernel
    and the host-compiled header, so visibility, screen positions and depth keys match
    exactly (clip-boundary vertices included)."""
    import cupy

    from engine.render.backends import get_projector
    from engine.scene.transforms import perspective_matrix, translation_matrix

    rng = np.random.default_rng(5)
    n, k = 300_000, 6
    pos = rng.uniform(-4, 4, (n, 3)).astype(np.float32)
    oid = np.sort(rng.integers(0, k, n)).astype(np.uint32)
    model = np.stack([translation_matrix(rng.uniform(-1, 1, 3)) for _ in range(k)]).astype(
        np.float32)
    model[:, :3, :3] = np.linalg.qr(rng.normal(size=(k, 3, 3)))[0]
    vp = (perspective_matrix(75, 4 / 3, 0.1, 60) @ translation_matrix((0.3, 0.1, -3))).astype(
        np.float32)
    ref = get_projector("numba").project(pos, oid, model, vp, (400, 300))
    out = get_projector("cupy").project(cupy.asarray(pos), cupy.asarray(oid),
                                        cupy.asarray(model), vp, (400, 300))
    np.testing.assert_array_equal(out.visible.get(), ref.visible)
    np.testing.assert_array_equal(out.screen_xy.get().view(np.uint32),
                                  ref.screen_xy.view(np.uint32))
    np.testing.assert_array_equal(out.depth.get().view(np.uint32), ref.depth.view(np.uint32))


@pytest.mark.gpu
def test_cupy_renderer_frame_is_bit_identical_to_numba_and_reuses_pinned_buffers():
    from engine.render.renderer import Renderer
    from engine.scene import procedural

    scene, camera = procedural.demo_scene()
    gpu = Renderer(scene, camera, size=(160, 90), backend="cupy")
    cpu = Renderer(scene, camera, size=(160, 90), backend="numba")
    a, b = gpu.render(), cpu.render()
    np.testing.assert_array_equal(a.color, b.color)
    np.testing.assert_array_equal(a.depth.view(np.uint32), b.depth.view(np.uint32))
    f1 = gpu.render(copy=False, depth=False)
    f2 = gpu.render(copy=False, depth=False)
    assert f2.depth is None and np.shares_memory(f1.color, f2.color)
    np.testing.assert_array_equal(f2.color, b.color)
    dev = gpu.render(host=False)
    np.testing.assert_array_equal(dev.color.get(), b.color)


@pytest.mark.gpu
def test_spin_kernel_waits_on_the_device():
    import cupy

    from engine.bench.timing import spin_kernel

    spin = spin_kernel()
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    spin(2_000_000)  # 2 ms
    end.record()
    end.synchronize()
    assert cupy.cuda.get_elapsed_time(start, end) >= 1.9
