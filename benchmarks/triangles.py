"""Filled, lit triangles: the engine's rasterizers against Mesa llvmpipe, in one run.

    .venv/bin/python benchmarks/triangles.py [--frame 1280x720] [--quick] [--json PATH]

Scenes (all lit by the default headlight, auto-framed as ``frustum render`` frames them):

    bunny       the Stanford bunny (../shared/ref-assets/classic/stanford-bunny.obj,
                69,451 triangles), or an icosphere of similar size when the assets are
                not there
    1M tris     the same mesh subdivided twice (x16 triangles, about 1.1 M)
    points+mesh 10^6 coloured points (2 px) around the bunny, drawn with it

Paths, each timed as whole frames (vertex stage + raster + resolve to a host image):

    numpy       the NumPy reference rasterizer (Renderer backend "numpy")
    numba       the Numba path (Renderer backend "numba"), the CPU default
    cuda        the CuPy backend where a GPU is present (frames still resolve on the host)
    llvmpipe    raw moderngl on an EGL context (Mesa llvmpipe on these machines): the mesh
                in static buffers, the vertex transform and Lambert shading in GLSL,
                ``vao.render(); ctx.finish()`` per frame, no readback: the CPU reference
                for a software triangle rasterizer (DESIGN.md)

Times are medians of a few frames after a warm-up; ratios are against llvmpipe in the
same run. Compare ratios, not absolute times from other runs (shared, noisy machines).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

from engine import Mesh, Node, PerspectiveCamera, PointCloud, Renderer, Scene
from engine.render.renderer import parse_size

ROOT = Path(__file__).resolve().parents[1]
BUNNY = ROOT.parent / "shared" / "ref-assets" / "classic" / "stanford-bunny.obj"


def timed_ms(fn, repeats):
    fn()  # warm-up: JIT compilation, buffer allocation
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def base_mesh():
    import trimesh

    if BUNNY.is_file():
        m = trimesh.load(str(BUNNY), process=False)
    else:
        m = trimesh.creation.icosphere(subdivisions=6)  # 81,920 triangles
    return np.asarray(m.vertices, np.float64), np.asarray(m.faces, np.int64)


def subdivided(vertices, faces, times):
    import trimesh

    for _ in range(times):
        vertices, faces = trimesh.remesh.subdivide(vertices, faces)
    return vertices, faces


def make_scene(vertices, faces, size, points=0):
    scene = Scene(background=(0.04, 0.05, 0.08))
    mesh = Node("mesh", geometry=Mesh(vertices, faces))
    scene.add(mesh)
    lo, hi = vertices.min(axis=0), vertices.max(axis=0)
    if points:
        rng = np.random.default_rng(0)
        centre, radius = (lo + hi) / 2, np.linalg.norm(hi - lo) / 2
        p = centre + rng.normal(0, radius * 0.6, (points, 3))
        scene.add(Node("cloud", geometry=PointCloud(p, colors=rng.uniform(0, 1, (points, 3)),
                                                    point_size=2)))
    camera = scene.add(PerspectiveCamera(fov_y=50, aspect=size[0] / size[1]))
    camera.frame(np.stack([lo, hi]), azimuth=35, elevation=25)
    return scene, camera


_VERT = """#version 330 core
uniform mat4 u_mvp;
in vec3 in_pos;
in vec3 in_normal;
out vec3 v_normal;
void main() { gl_Position = u_mvp * vec4(in_pos, 1.0); v_normal = in_normal; }
"""
_FRAG = """#version 330 core
uniform vec3 u_light;
in vec3 v_normal;
out vec4 f_color;
void main() {
    float d = max(dot(normalize(v_normal), u_light), 0.0);
    f_color = vec4(vec3(0.15 + 0.7 * d), 1.0);
}
"""


def llvmpipe_frame(scene, camera, size):
    """A callable drawing the scene's mesh with raw moderngl (static buffers), and a
    release function; None when no EGL context can be made."""
    import moderngl

    from engine.render.gl import GLUnavailable, create_egl_context

    try:
        ctx = create_egl_context()
    except GLUnavailable:
        return None, None
    node = scene.find("mesh")
    g = node.geometry
    prog = ctx.program(vertex_shader=_VERT, fragment_shader=_FRAG)
    vbo = ctx.buffer(np.ascontiguousarray(g.positions, np.float32))
    nbo = ctx.buffer(np.ascontiguousarray(g.vertex_normals(), np.float32))
    ibo = ctx.buffer(np.ascontiguousarray(g.faces, np.uint32))
    vao = ctx.vertex_array(prog, [(vbo, "3f", "in_pos"), (nbo, "3f", "in_normal")], ibo)
    fbo = ctx.framebuffer(color_attachments=[ctx.renderbuffer(size)],
                          depth_attachment=ctx.depth_renderbuffer(size))
    model = node.world_matrix @ np.eye(4)
    model[:3, 3] += model[:3, :3] @ g.origin
    mvp = camera.projection_matrix @ camera.view_matrix @ model
    prog["u_mvp"].write(mvp.T.astype(np.float32).tobytes())
    prog["u_light"].value = tuple(float(c) for c in camera.world_matrix[:3, 2])
    ctx.enable(moderngl.DEPTH_TEST | moderngl.CULL_FACE)

    def frame():
        fbo.use()
        fbo.clear(0.04, 0.05, 0.08, 1.0, depth=1.0)
        vao.render()
        ctx.finish()

    def release():
        for obj in (vao, vbo, nbo, ibo, fbo, prog):
            obj.release()
        ctx.release()

    return frame, release


def cuda_available():
    from engine.render.backends.cupy_backend import cupy_unavailable_reason

    return cupy_unavailable_reason() is None


def run(size, quick):
    vertices, faces = base_mesh()
    scenes = [("bunny", vertices, faces, 0)]
    if not quick:
        v2, f2 = subdivided(vertices, faces, 2)
        scenes += [("1M tris", v2, f2, 0), ("points+mesh", vertices, faces, 1_000_000)]
    paths = ["numpy", "numba"] + (["cupy"] if cuda_available() else [])
    rows = []
    for name, v, f, points in scenes:
        scene, camera = make_scene(v, f, size, points)
        row = {"scene": name, "triangles": len(f), "points": points}
        repeats = 3 if len(f) > 500_000 or points else 5
        for backend in paths:
            if backend == "numpy" and len(f) > 500_000:
                row["numpy_ms"] = None  # minutes per frame: skipped at this size
                continue
            r = Renderer(scene, camera, size, backend=backend)
            row[f"{backend}_ms"] = timed_ms(r.render, 1 if backend == "numpy" else repeats)
        frame, release = llvmpipe_frame(scene, camera, size)
        row["llvmpipe_ms"] = timed_ms(frame, repeats) if frame else None
        if release:
            release()
        rows.append(row)
        print(_line(row, paths), flush=True)
    return rows


def _line(row, paths):
    ref = row.get("llvmpipe_ms")
    parts = [f"{row['scene']:<12} {row['triangles']:>9,} tris"]
    for p in paths + ["llvmpipe"]:
        ms = row.get(f"{p}_ms")
        if ms is None:
            parts.append(f"{p} -")
            continue
        ratio = f" ({ms / ref:.2f}x llvmpipe)" if ref and p != "llvmpipe" else ""
        parts.append(f"{p} {ms:.1f} ms, {row['triangles'] / ms / 1e3:.1f} M tris/s{ratio}")
    return " | ".join(parts)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--frame", type=parse_size, default=(1280, 720), help="WIDTHxHEIGHT")
    p.add_argument("--quick", action="store_true", help="the bunny only")
    p.add_argument("--json", type=Path, default=None, help="also write the rows as JSON")
    args = p.parse_args(argv)
    rows = run(args.frame, args.quick)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"frame": list(args.frame), "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
