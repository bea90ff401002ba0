"""Multisample anti-aliasing cost: the bunny at 1280x720 with 4 samples against 1, and
against Mesa llvmpipe drawing it into a 4x multisampled renderbuffer, in one run.

    .venv/bin/python benchmarks/msaa.py [--frame 1280x720] [--repeats 5] [--json PATH]

Rows (whole frames: vertex stage, raster(s), resolve, to a host image):

    numpy / numba   ``Renderer(backend=..., msaa=4).render()`` against ``msaa=1`` of the
                    same renderer set-up (issue 21's target: <= 2x)
    llvmpipe 4x     raw moderngl (benchmarks/triangles.py's shaders): the mesh in static
                    buffers, drawn into a 4-sample colour + depth renderbuffer, resolved
                    by ``ctx.copy_framebuffer`` into a single-sample one and read back
                    to the host (issue 21's target: the engine's 4x frame <= 1x this)
    engine gl 4x    ``Renderer(raster="gl", msaa=4)`` for reference

Medians of ``--repeats`` frames after a warm-up, interleaved per repeat so a busy
machine slows every path alike; compare the ratios, not absolute times from other runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from triangles import _FRAG, _VERT, base_mesh, make_scene, set_mesh_uniforms

from engine import Renderer
from engine.render.renderer import parse_size


def llvmpipe_msaa(scene, camera, size, samples=4):
    """A callable drawing the mesh with raw moderngl into a ``samples`` renderbuffer,
    resolving and reading it back, and a release function; (None, None) without EGL."""
    import moderngl

    from engine.render.gl import GLUnavailable, create_egl_context

    try:
        ctx = create_egl_context()
    except GLUnavailable:
        return None, None
    g = scene.find("mesh").geometry
    node = scene.find("mesh")
    prog = ctx.program(vertex_shader=_VERT, fragment_shader=_FRAG)
    vbo = ctx.buffer(np.ascontiguousarray(g.positions, np.float32))
    nbo = ctx.buffer(np.ascontiguousarray(g.vertex_normals(), np.float32))
    ibo = ctx.buffer(np.ascontiguousarray(g.faces, np.uint32))
    vao = ctx.vertex_array(prog, [(vbo, "3f", "in_pos"), (nbo, "3f", "in_normal")], ibo)
    ms = ctx.framebuffer(color_attachments=[ctx.renderbuffer(size, samples=samples)],
                         depth_attachment=ctx.depth_renderbuffer(size, samples=samples))
    single = ctx.framebuffer(color_attachments=[ctx.renderbuffer(size)])
    set_mesh_uniforms(prog, node, camera)
    ctx.enable(moderngl.DEPTH_TEST | moderngl.CULL_FACE)

    def frame():
        with ctx:  # the engine's GL renderer makes its own context current
            ms.use()
            ms.clear(0.04, 0.05, 0.08, 1.0, depth=1.0)
            vao.render()
            ctx.copy_framebuffer(single, ms)
            return single.read(components=4)

    def release():
        for obj in (vao, vbo, nbo, ibo, ms, single, prog):
            obj.release()
        ctx.release()

    return frame, release


def run(size, repeats):
    vertices, faces = base_mesh()
    scene, camera = make_scene(vertices, faces, size)
    paths = {}
    for backend in ("numba", "numpy"):
        for s in (1, 4):
            r = Renderer(scene, camera, size, backend=backend, msaa=s)
            paths[f"{backend} msaa {s}"] = (lambda r=r: r.render(depth=False))
    gl_r = Renderer(scene, camera, size, backend="numba", raster="gl", msaa=4)
    paths["engine gl msaa 4"] = lambda: gl_r.render(depth=False)
    gl, release = llvmpipe_msaa(scene, camera, size)
    if gl is not None:
        paths["llvmpipe 4x"] = gl
    for fn in paths.values():
        fn()  # warm-up: JIT compilation, buffers
    times = {name: [] for name in paths}
    for _ in range(repeats):
        for name, fn in paths.items():
            t0 = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - t0) * 1000)
    if release is not None:
        release()
    gl_r.close()
    ms = {name: statistics.median(t) for name, t in times.items()}
    for name, t in ms.items():
        print(f"{name:18s} {t:8.1f} ms")
    ratios = {f"{b} msaa 4 / msaa 1": ms[f"{b} msaa 4"] / ms[f"{b} msaa 1"]
              for b in ("numba", "numpy")}
    if "llvmpipe 4x" in ms:
        ratios["numba msaa 4 / llvmpipe 4x"] = ms["numba msaa 4"] / ms["llvmpipe 4x"]
    for name, q in ratios.items():
        print(f"{name:30s} {q:5.2f}x")
    return {"size": list(size), "triangles": len(faces), "median_ms": ms,
            "ratios": ratios}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--frame", type=parse_size, default=(1280, 720))
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--json", default=None, metavar="PATH")
    args = p.parse_args(argv)
    result = run(args.frame, args.repeats)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
