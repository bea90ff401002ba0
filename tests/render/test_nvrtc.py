"""The exact CUDA sources the engine loads compile through NVRTC (no GPU needed), with
the options of the runtime build (``NVRTC_OPTIONS`` plus what CuPy adds)."""

import re

import pytest

from engine.render.backends.cuda_source import (
    CUDA_SOURCES,
    CUPY_ADDED_OPTIONS,
    NVRTC_OPTIONS,
    load_cuda_source,
    nvrtc_compile,
)

pytestmark = pytest.mark.nvrtc


def ptx_of(name: str) -> str:
    try:
        return nvrtc_compile(name)[0]
    except RuntimeError as exc:
        pytest.fail(str(exc))


def entry_params(ptx: str, entry: str) -> str:
    start = ptx.index(f".entry {entry}(")
    return ptx[start:ptx.index(")", start)]


@pytest.mark.parametrize("name", CUDA_SOURCES)
def test_cuda_source_compiles_with_nvrtc(name):
    ptx = ptx_of(name)
    assert ".entry" in ptx


def test_every_shader_file_is_listed():
    from engine.render.backends.cuda_source import SHADER_DIR

    assert sorted(p.name for p in SHADER_DIR.glob("*.cu")) == sorted(CUDA_SOURCES)


def test_transform_kernel_signature_in_ptx():
    ptx = ptx_of("transform.cu")
    assert ".visible .entry project_points(" in ptx
    # 11 parameters: 3 input pointers, the view-projection by value, K, viewport w/h,
    # n (64-bit), 3 output pointers
    header = entry_params(ptx, "project_points")
    assert header.count(".param") == 11
    assert ".param .align 4 .b8 project_points_param_3[64]" in header  # FrMat4 by value
    assert ".param .u64 project_points_param_7" in header  # long long n


def test_no_fused_multiply_add_so_results_match_the_cpu_backends():
    """-fmad=false: every product and sum rounded on its own, as on the host and in Numba."""
    assert "-fmad=false" in NVRTC_OPTIONS
    for name in ("transform.cu", "raster.cu"):
        ptx = ptx_of(name)
        assert not re.search(r"\bfma\.", ptx), name
    assert "mul.rn" in ptx_of("transform.cu")
    # Without the option NVRTC does contract (so the assertion above means something).
    contracted = nvrtc_compile("transform.cu", options=("-std=c++17", *CUPY_ADDED_OPTIONS))[0]
    assert re.search(r"\bfma\.rn", contracted)


def test_raster_kernels_in_ptx():
    """clear / splat / resolve exist with 64-bit counts, and splatting is one 64-bit atomicMin."""
    ptx = ptx_of("raster.cu")
    for entry in ("clear_keys", "splat_points", "splat_sprites", "resolve_keys"):
        assert f".visible .entry {entry}(" in ptx
    header = entry_params(ptx, "splat_points")
    # screen_xy, depth, visible, sizes, size_stride, n, width, height, keys
    assert header.count(".param") == 9
    assert ".param .u64 splat_points_param_5" in header  # long long n
    assert "atom.global.min.u64" in ptx


def test_surface_kernels_in_ptx():
    """Every surface kernel exists; the vertex stage and triangles have no fused
    multiply-add (clip coordinates and keys match the CPU's bit for bit; the resolve's
    pow() comes from libdevice, which fuses inside, and colours only need to agree within
    1/255); a covered pixel is one 64-bit atomicMin."""
    for name, entries in (("surface_vertices.cu", ["surface_vertices"]),
                          ("triangles.cu", ["classify_triangles", "clip_triangles",
                                            "raster_triangles", "raster_masked_triangles"]),
                          ("resolve.cu", ["resolve_surfaces"])):
        ptx = ptx_of(name)
        for entry in entries:
            assert f".visible .entry {entry}(" in ptx
        if name != "resolve.cu":
            assert not re.search(r"\bfma\.", ptx), name
        if name == "triangles.cu":
            assert "atom.global.min.u64" in ptx


def test_spin_kernel_reads_the_global_timer():
    ptx = ptx_of("timing.cu")
    assert ".visible .entry spin_wait(" in ptx and "%globaltimer" in ptx


def test_compile_error_is_reported():
    """Through CuPy's NVRTC where the GPU runtime is installed, cuda-python's otherwise:
    a compile error raises with NVRTC's log, naming what is undefined."""
    from engine.render.backends.cuda_source import nvrtc_compile_source

    with pytest.raises(RuntimeError, match="undefined_fn"):
        nvrtc_compile_source('extern "C" __global__ void k() { undefined_fn(); }', "bad.cu",
                             ["-arch=compute_90"])


def test_loaded_source_has_no_unexpanded_includes():
    for name in CUDA_SOURCES:
        assert '#include "' not in load_cuda_source(name)
