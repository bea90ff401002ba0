"""The exact CUDA sources the engine loads compile through NVRTC (no GPU needed)."""

import pytest

from engine.render.backends.cuda_source import NVRTC_OPTIONS, load_cuda_source

CUDA_SOURCES = ["transform.cu", "raster.cu", "surface_vertices.cu", "triangles.cu", "resolve.cu"]


def nvrtc_compile(source: str, name: str) -> str:
    from cupy.cuda import nvrtc

    prog = nvrtc.createProgram(source, name, [], [])
    try:
        nvrtc.compileProgram(prog, [*NVRTC_OPTIONS, "-arch=compute_90"])
    except nvrtc.NVRTCError as exc:
        pytest.fail(f"{name} does not compile: {exc}\n{nvrtc.getProgramLog(prog)}")
    ptx = nvrtc.getPTX(prog)
    return ptx.decode() if isinstance(ptx, bytes) else ptx


@pytest.mark.parametrize("name", CUDA_SOURCES)
def test_cuda_source_compiles_with_nvrtc(name):
    ptx = nvrtc_compile(load_cuda_source(name), name)
    assert ".entry" in ptx


def test_transform_kernel_signature_in_ptx():
    ptx = nvrtc_compile(load_cuda_source("transform.cu"), "transform.cu")
    assert ".visible .entry project_points(" in ptx
    # 11 parameters: 4 input pointers, K, viewport w/h, n (64-bit), 3 output pointers
    header = ptx[ptx.index(".entry project_points("):ptx.index(")", ptx.index(".entry project_points("))]
    assert header.count(".param") == 11
    assert ".param .u64 project_points_param_7" in header  # long long n


def test_raster_kernels_in_ptx():
    """clear / splat / resolve exist with 64-bit counts, and splatting is one 64-bit atomicMin."""
    ptx = nvrtc_compile(load_cuda_source("raster.cu"), "raster.cu")
    for entry in ("clear_keys", "splat_points", "resolve_keys"):
        assert f".visible .entry {entry}(" in ptx
    start = ptx.index(".entry splat_points(")
    header = ptx[start:ptx.index(")", start)]
    # screen_xy, depth, visible, sizes, size_stride, n, width, height, keys
    assert header.count(".param") == 9
    assert ".param .u64 splat_points_param_5" in header  # long long n
    assert "atom.global.min.u64" in ptx


def test_surface_kernels_in_ptx():
    """Every surface kernel exists; triangles are one 64-bit atomicMin per covered pixel,
    in double precision with no fused multiply-add (so keys match the CPU's)."""
    for name, entries in (("surface_vertices.cu", ["surface_vertices"]),
                          ("triangles.cu", ["classify_triangles", "raster_triangles"]),
                          ("resolve.cu", ["resolve_surfaces"])):
        ptx = nvrtc_compile(load_cuda_source(name), name)
        for entry in entries:
            assert f".visible .entry {entry}(" in ptx
        if name == "triangles.cu":
            assert "atom.global.min.u64" in ptx
            assert "fma.rn.f64" not in ptx


def test_compile_error_is_reported():
    from cupy.cuda import nvrtc

    prog = nvrtc.createProgram('extern "C" __global__ void k() { undefined_fn(); }', "bad.cu", [], [])
    with pytest.raises(nvrtc.NVRTCError):
        nvrtc.compileProgram(prog, ["-arch=compute_90"])
    assert "undefined_fn" in nvrtc.getProgramLog(prog)
