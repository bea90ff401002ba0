"""Loads CUDA sources from ``shaders/`` with local ``#include "x.cuh"`` lines expanded,
and the NVRTC options every build of them uses.

Expanding in Python (instead of passing ``-I``) makes the text CuPy compiles and caches
the complete source: CuPy's kernel cache is keyed on the source string, so an edited
header could otherwise leave a stale kernel in the cache. Tests compile this exact text
with NVRTC using ``NVRTC_OPTIONS`` plus ``CUPY_ADDED_OPTIONS`` (what CuPy's RawModule
adds), i.e. the options of the runtime build.

Floating point: ``-fmad=false`` stops NVRTC from contracting ``a * b + c`` into one fused
multiply-add, so the kernels round every product and sum like the host-compiled headers
and the Numba backend do; projected positions, depths and visibility then match those
backends bit for bit (the transform is memory-bound, so the separate multiply and add
cost nothing measurable). CuPy also compiles with ``-ftz=true`` (denormals flushed to
zero); that can only change results for values below 1.2e-38, far under the clip test's
``w > 1e-7``, so the projection outputs are unaffected.
"""

from __future__ import annotations

import re
from importlib.resources import files
from pathlib import Path

# The sources install as the package engine.shaders (pyproject.toml), so an installed
# wheel finds them as well as a source checkout does.
SHADER_DIR = Path(str(files("engine.shaders")))

# Options shared by the runtime (CuPy RawModule) and the NVRTC test. -fmad=false: no
# multiply-add is fused, so the kernels round like the CPU backends (projections and
# triangle keys are bit-identical; the kernels are memory-bound, so FMA buys nothing).
NVRTC_OPTIONS = ("-std=c++17", "-fmad=false")
# What CuPy's RawModule appends to every NVRTC compile (besides -arch).
CUPY_ADDED_OPTIONS = ("-ftz=true",)
# Every CUDA source the engine compiles at run time.
CUDA_SOURCES = ("transform.cu", "raster.cu", "timing.cu", "surface_vertices.cu",
                "triangles.cu", "resolve.cu")

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$', re.MULTILINE)


def load_cuda_source(name: str) -> str:
    """Full source of ``shaders/<name>`` with quoted includes inlined once each.

    Raises FileNotFoundError naming the missing file.
    """
    seen: set[str] = set()

    def expand(fname: str) -> str:
        path = SHADER_DIR / fname
        if not path.is_file():
            raise FileNotFoundError(f"CUDA source not found: {path}")
        text = path.read_text()

        def repl(m: re.Match) -> str:
            inc = m.group(1)
            if inc in seen:
                return f"// {inc} already included"
            seen.add(inc)
            return f"// begin {inc}\n{expand(inc)}\n// end {inc}"

        return _INCLUDE.sub(repl, text)

    return expand(name)


def nvrtc_compile(name: str, arch: str = "compute_90", options=None) -> tuple[str, float]:
    """Compile ``shaders/<name>`` to PTX with NVRTC as the runtime does; no GPU needed.

    NVRTC is reached through CuPy when it is installed (the runtime's own path), else
    through cuda-python's ``cuda.bindings.nvrtc``: the development extra installs that
    binding and NVRTC without the GPU runtime, so machines without a CUDA driver still
    compile every kernel.

    Args:
        name: a file of ``CUDA_SOURCES``.
        arch: the virtual architecture (``compute_90``: Hopper).
        options: NVRTC options (default ``NVRTC_OPTIONS + CUPY_ADDED_OPTIONS``).

    Returns:
        (PTX text, seconds the NVRTC compile took: the cost of a kernel-cache miss).

    Raises:
        ImportError: neither CuPy nor cuda-python (``cuda.bindings``) is installed.
        RuntimeError: the compile failed; the message holds NVRTC's log.
    """
    opts = [*(NVRTC_OPTIONS + CUPY_ADDED_OPTIONS if options is None else options),
            f"-arch={arch}"]
    return nvrtc_compile_source(load_cuda_source(name), name, opts)


def nvrtc_compile_source(source: str, name: str, opts: list[str]) -> tuple[str, float]:
    """``nvrtc_compile`` of a source text with the full option list (``-arch`` included).
    Raises ImportError without CuPy and cuda-python, RuntimeError with NVRTC's log when
    the compile fails."""
    import time

    try:
        from cupy.cuda import nvrtc
    except ImportError:
        nvrtc = None
    t0 = time.perf_counter()
    if nvrtc is None:
        ptx = _compile_with_cuda_bindings(source, name, opts)
    else:
        prog = nvrtc.createProgram(source, name, [], [])
        try:
            try:
                nvrtc.compileProgram(prog, opts)
            except nvrtc.NVRTCError as exc:
                raise RuntimeError(f"NVRTC cannot compile shaders/{name}: {exc}\n"
                                   f"{nvrtc.getProgramLog(prog)}") from exc
            ptx = nvrtc.getPTX(prog)
        finally:
            nvrtc.destroyProgram(prog)
    seconds = time.perf_counter() - t0
    return (ptx.decode() if isinstance(ptx, bytes) else ptx).rstrip("\x00"), seconds


def _compile_with_cuda_bindings(source: str, name: str, opts: list[str]) -> bytes:
    """PTX of ``source`` through ``cuda.bindings.nvrtc`` (calls return (status, ...))."""
    try:
        from cuda.bindings import nvrtc
    except ImportError as exc:
        raise ImportError(f"compiling CUDA sources needs NVRTC through CuPy or cuda-python: "
                          f"pip install -e '.[dev]' ({exc})") from None
    ok = nvrtc.nvrtcResult.NVRTC_SUCCESS

    def check(result, what):
        status, *rest = result if isinstance(result, tuple) else (result,)
        if status != ok:
            raise RuntimeError(f"NVRTC {what} failed for shaders/{name}: {status!r}")
        return rest[0] if len(rest) == 1 else rest

    prog = check(nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], []),
                 "createProgram")
    try:
        args = [o.encode() for o in opts]
        status = nvrtc.nvrtcCompileProgram(prog, len(args), args)[0]
        if status != ok:
            size = check(nvrtc.nvrtcGetProgramLogSize(prog), "getProgramLogSize")
            log = b" " * size
            nvrtc.nvrtcGetProgramLog(prog, log)
            raise RuntimeError(f"NVRTC cannot compile shaders/{name}: {status!r}\n"
                               f"{log.decode(errors='replace').rstrip(chr(0))}")
        size = check(nvrtc.nvrtcGetPTXSize(prog), "getPTXSize")
        ptx = b" " * size
        check(nvrtc.nvrtcGetPTX(prog, ptx), "getPTX")
        return ptx
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def nvrtc_version() -> tuple[int, int]:
    """(major, minor) of the NVRTC that CuPy loads. Raises ImportError without CuPy and
    the NVRTC error when the library is missing."""
    from cupy.cuda import nvrtc

    return tuple(nvrtc.getVersion())
