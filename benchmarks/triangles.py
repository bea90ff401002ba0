"""Filled, lit triangles: the engine's rasterizers against Mesa llvmpipe, in one run.

    .venv/bin/python benchmarks/triangles.py [--frame 1280x720] [--quick] [--json PATH]

Scenes (all lit by the default headlight, auto-framed as ``frustum render`` frames them):

    bunny       the Stanford bunny (../shared/ref-assets/classic/stanford-bunny.obj,
                69,451 triangles), or an icosphere of similar size when the assets are
                not there
    1M tris     the same mesh subdivided twice (x16 triangles, about 1.1 M)
    points+mesh 10^6 coloured points (2 px) around the bunny, drawn with it (the
                llvmpipe column draws the mesh only: a reference for the mesh's share)

Paths, each timed as whole frames (vertex stage + raster + resolve to a host image):

    numpy       the NumPy reference rasterizer (Renderer backend "numpy")
    numba       the Numba path (Renderer backend "numba"), the CPU default
    cuda        the CuPy backend where a GPU is present (frames still resolve on the host)
    llvmpipe    raw moderngl on an EGL context (Mesa llvmpipe on these machines): the mesh
                in static buffers, the vertex transform and Lambert shading in GLSL,
                ``vao.render(); ctx.finish()`` per frame, no readback: the CPU reference
                for a software triangle rasterizer (DESIGN.md)

Two more rows, each against its own reference in the same run:

    points      a whole frame of 10^6 coloured points at the frame size (projection +
                splat + resolve, the Numba path) against the naive NumPy projection
                alone of the same points (engine.bench.paths.naive_project)
    first frame a new process (after one run has filled Numba's on-disk cache) loads the
                bunny and renders two frames: the first frame's time against a warm
                frame plus the file load

Times are medians of a few frames after a warm-up; ratios are against the reference in
the same run. Compare ratios, not absolute times from other runs (shared, noisy machines).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
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


def points_row(size, n=1_000_000):
    """Whole Numba frames of n coloured points against the naive NumPy projection."""
    from engine.bench.paths import make_workload, naive_project

    w = make_workload(n)
    scene = Scene(background=(0.05, 0.05, 0.1))
    pts = np.random.default_rng(0).uniform(-1, 1, (n, 3)).astype(np.float32)
    scene.add(Node("cloud", geometry=PointCloud(pts, colors=(pts + 1) / 2)))
    camera = scene.add(PerspectiveCamera(fov_y=60, aspect=size[0] / size[1],
                                         position=(2.5, 2.0, 3.5)))
    camera.look_at((0, 0, 0))
    r = Renderer(scene, camera, size, backend="numba")
    frame_ms, naive_ms = [], []
    r.render()
    naive_project(w.positions, w.shift, w.rotation, w.focal)
    for _ in range(7):  # interleaved, so both see the same machine load
        t0 = time.perf_counter()
        r.render()
        t1 = time.perf_counter()
        naive_project(w.positions, w.shift, w.rotation, w.focal)
        t2 = time.perf_counter()
        frame_ms.append((t1 - t0) * 1000)
        naive_ms.append((t2 - t1) * 1000)
    row = {"points": n, "frame_ms": statistics.median(frame_ms),
           "naive_projection_ms": statistics.median(naive_ms)}
    row["ratio"] = row["frame_ms"] / row["naive_projection_ms"]
    print(f"points       {n:,} coloured points: whole frame {row['frame_ms']:.1f} ms vs naive "
          f"NumPy projection alone {row['naive_projection_ms']:.1f} ms ({row['ratio']:.2f}x)",
          flush=True)
    return row


_FIRST = """
import time
t0 = time.perf_counter()
import numpy as np
from benchmarks_triangles import base_mesh, make_scene
from engine import Renderer
v, f = base_mesh()
scene, camera = make_scene(v, f, SIZE)
t1 = time.perf_counter()
r = Renderer(scene, camera, SIZE, backend="numba")
t2 = time.perf_counter(); r.render(); t3 = time.perf_counter(); r.render(); t4 = time.perf_counter()
print(t1 - t0, t3 - t2, t4 - t3)
"""


def first_frame_row(size):
    """First frame in a fresh process (Numba's disk cache already filled) against a warm
    frame plus the file load, measured in that process."""
    here = str(Path(__file__).resolve().parent)
    code = _FIRST.replace("SIZE", repr(tuple(size))).replace(
        "from benchmarks_triangles", f"import sys; sys.path.insert(0, {here!r})\nfrom triangles")
    for _ in range(2):  # the first run fills the cache if this machine never ran it
        out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                             text=True, cwd=ROOT).stdout.split()
    load_s, first_s, warm_s = (float(x) for x in out)
    row = {"load_s": load_s, "first_frame_s": first_s, "warm_frame_s": warm_s,
           "ratio": first_s / (1.5 * warm_s + load_s)}
    print(f"first frame  {first_s * 1000:.0f} ms in a new process; warm {warm_s * 1000:.0f} ms, "
          f"file load {load_s * 1000:.0f} ms: {row['ratio']:.2f}x the budget "
          f"(1.5 warm frames + the load)", flush=True)
    return row


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
    points = None if args.quick else points_row(args.frame)
    first = first_frame_row(args.frame)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"frame": list(args.frame), "rows": rows,
                                         "points": points, "first_frame": first}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
