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

Scenes where surfaces fill the screen (issue 19's targets), each against llvmpipe drawing
the same textured, lit triangles of the same scene graph (``llvmpipe_scene``: every mesh
and instance set, the same lights, sRGB textures filtered as the engine filters them,
back faces culled exactly where the engine culls them, i.e. for single-sided materials;
the frame read back to the host, as the engine's frame is):

    game        a 96 x 96-cell textured height field (rolling hills, an 128 x 128 grass
                texture repeated 8 times) and 300 instanced lit spheres, one directional
                light and a sky ambient, seen by a low follow camera: about two thirds of
                the pixels covered (printed)
    Duck        ../shared/ref-assets/gltf/Duck.glb (4,212 textured triangles), framed as
                ``frustum render`` frames it
    quad        one full-screen lit quad with a 256 x 256 texture under the default
                sampler (bilinear, trilinear where minified: the quad is, by a hair,
                level of detail 0.04 at 1280 x 720)

and, for the engine, the stage breakdown of each (vertex stage, raster, resolve: wall
and CPU ms) and the resolve's CPU cost per covered pixel on one thread on full-screen
quads (unlit, lit, lit + specular, lit + texture (the default sampler, trilinear here),
unlit + texture, lit + bilinear texture (min filter "linear": level 0 only), "pbr" +
texture), and what a run costs: the same quad (lit + texture, "pbr" + texture) cut into
vertical strips of two triangles, so that a row's pixels come in runs of a chosen length
(``strip_quad_scene``) with the same texels and shading, one thread: CPU ns per covered
pixel against the mean run length, and from it each run's cost over a pixel of a long
run (the Duck's runs average 6.9 pixels, the game scene's 11.9).

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
DUCK = ROOT.parent / "shared" / "ref-assets" / "gltf" / "Duck.glb"


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


def set_mesh_uniforms(prog, node, camera):
    """The Lambert program's model-view-projection (the node's world matrix with its
    geometry's float64 origin composed in) and the headlight direction (the camera's +z
    axis, towards the viewer)."""
    model = node.world_matrix @ np.eye(4)
    model[:3, 3] += model[:3, :3] @ node.geometry.origin
    mvp = camera.projection_matrix @ camera.view_matrix @ model
    prog["u_mvp"].write(mvp.T.astype(np.float32).tobytes())
    prog["u_light"].value = tuple(float(c) for c in camera.world_matrix[:3, 2])


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
    set_mesh_uniforms(prog, node, camera)
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



# ------------------------------------------------------------ scenes that fill the screen
def _hills(n=97):
    """(n, n) heights of gentle hills (the steepest slope about 16 degrees)."""
    t = np.linspace(0, 4 * np.pi, n)
    return 1.6 * np.sin(t)[None, :] * np.cos(0.6 * t)[:, None] + 0.6 * np.sin(2.3 * t)[:, None]


def _grass(size=128):
    """(size, size, 3) uint8 grass-and-dirt checker texture."""
    cells = np.indices((size, size)).sum(axis=0) // 16 % 2
    g = 90 + 50 * cells + np.random.default_rng(7).integers(0, 25, (size, size))
    return np.stack([g // 2, g, g // 4], axis=-1).astype(np.uint8)


def _height(heights, field, x, z):
    """Bilinear height of the field at world (x, z) (engine.scene.procedural.heightfield
    places heights[i, j] at x = -field/2 + j field/(n-1), z likewise by rows)."""
    n = heights.shape[0] - 1
    fx, fz = (x / field + 0.5) * n, (z / field + 0.5) * n
    j, i = min(int(fx), n - 1), min(int(fz), n - 1)
    a, b = fx - j, fz - i
    return float((heights[i, j] * (1 - a) + heights[i, j + 1] * a) * (1 - b)
                 + (heights[i + 1, j] * (1 - a) + heights[i + 1, j + 1] * a) * b)


def game_scene(size):
    """The game scene: textured height field (96 x 96 cells, 80 units across) and 300
    instanced spheres on it, a low follow camera behind a player at the field's centre."""
    from engine import AmbientLight, DirectionalLight, Instances, Material, Texture
    from engine.scene.procedural import heightfield, uv_sphere

    scene = Scene(background="lightskyblue")
    scene.add(DirectionalLight(intensity=0.9, position=(2, 5, 3))).look_at((0, 0, 0))
    scene.add(AmbientLight("sky", color=(0.7, 0.8, 1.0), intensity=0.35))
    field = 80.0
    hills = _hills()
    ground = heightfield(hills, size=(field, field), material=Material(texture=Texture(
        _grass())))
    ground = Mesh(ground.positions + ground.origin, ground.faces, normals=ground.normals,
                  uvs=ground.uvs * 8, material=ground.material)  # the grass 8 times across
    scene.add(Node("ground", geometry=ground))
    rng = np.random.default_rng(0)
    xz = rng.uniform(-field / 2 + 2, field / 2 - 2, (300, 2))
    y = np.array([_height(hills, field, x, z) for x, z in xz]) + 0.6
    scene.add(Instances(uv_sphere(0.6, 24, 12), name="balls",
                        positions=np.column_stack([xz[:, 0], y, xz[:, 1]]),
                        colors=rng.uniform(0.3, 1.0, (300, 3))))
    eye_y = _height(hills, field, 0.0, 9.0) + 3.0
    camera = scene.add(PerspectiveCamera(fov_y=60, aspect=size[0] / size[1], near=0.1,
                                         far=200, position=(0.0, eye_y, 9.0)))
    camera.look_at((0.0, _height(hills, field, 0.0, 0.0), 0.0))  # about 67% covered
    return scene, camera


def duck_scene(size):
    """Duck.glb framed as ``frustum render`` frames it, or None without the asset."""
    if not DUCK.is_file():
        return None
    from engine.io.sources import load_source

    return load_source(str(DUCK), size[0] / size[1])


def quad_scene(size, texture=True, sampler=None, **material):
    """One lit quad filling the frame (uv 0..4 across), a 256 x 256 texture under
    ``sampler`` (default: bilinear, trilinear between mip levels where minified: at
    1280 x 720 the quad's level of detail is 0.04, just minified)."""
    from engine import Material, Texture

    scene = Scene(background=(0, 0, 0))
    a = size[0] / size[1]
    pos = np.array([[-a, -1, 0], [a, -1, 0], [a, 1, 0], [-a, 1, 0]], np.float32) * 1.2
    uv = np.array([[0, 4], [4, 4], [4, 0], [0, 0]], np.float32)
    tex = Texture(np.random.default_rng(0).integers(0, 256, (256, 256, 4), np.uint8),
                  sampler) if texture else None
    scene.add(Node("quad", geometry=Mesh(pos, [[0, 1, 2], [0, 2, 3]], uvs=uv,
                                         material=Material(texture=tex, **material))))
    camera = scene.add(PerspectiveCamera(fov_y=60, aspect=a, position=(0, 0, 1.5)))
    camera.look_at((0, 0, 0))
    return scene, camera


_SCENE_VERT = """#version 330 core
uniform mat4 u_view_proj;
uniform mat4 u_model;
uniform bool u_instanced;
in vec3 in_pos;
in vec3 in_normal;
in vec2 in_uv;
in vec4 in_color;
in mat4 in_instance;
in vec4 in_tint;
out vec3 v_normal;
out vec2 v_uv;
out vec4 v_color;
void main() {
    mat4 m = u_instanced ? u_model * in_instance : u_model;
    gl_Position = u_view_proj * m * vec4(in_pos, 1.0);
    v_normal = mat3(m) * in_normal;
    v_uv = in_uv;
    vec4 c = in_color * (u_instanced ? in_tint : vec4(1.0));
    v_color = vec4(mix(c.rgb / 12.92, pow((c.rgb + 0.055) / 1.055, vec3(2.4)),
                       step(0.04045, c.rgb)), c.a);
}
"""
_SCENE_FRAG = """#version 330 core
uniform sampler2D u_texture;
uniform bool u_textured;
uniform bool u_double_sided;
uniform vec4 u_color;
uniform vec3 u_ambient;
uniform int u_n_lights;
uniform vec3 u_to_light[4];
uniform vec3 u_radiance[4];
in vec3 v_normal;
in vec2 v_uv;
in vec4 v_color;
out vec4 f_color;
void main() {
    vec4 base = u_color * v_color;
    if (u_textured) base *= texture(u_texture, v_uv);
    vec3 n = normalize(v_normal);
    if (u_double_sided && !gl_FrontFacing) n = -n;
    vec3 light = u_ambient;
    for (int i = 0; i < u_n_lights; ++i) light += u_radiance[i] * max(dot(n, u_to_light[i]), 0.0);
    vec3 l = clamp(base.rgb * light, 0.0, 1.0);
    f_color = vec4(mix(l * 12.92, 1.055 * pow(l, vec3(1.0 / 2.4)) - 0.055, step(0.0031308, l)),
                   base.a);
}
"""


def llvmpipe_scene(scene, camera, size):
    """A callable drawing every mesh and instance set of ``scene`` with raw moderngl
    (static buffers; per draw: its model matrix, material and texture), lit by the
    engine's lights (ambient + Lambert, engine.render.shading.scene_lights), back faces
    culled for single-sided materials as the engine culls them, the frame read back to
    the host; and a release function. (None, None) without an EGL context."""
    import moderngl

    from engine import Instances
    from engine.render.gl import GLUnavailable, create_egl_context
    from engine.render.shading import scene_lights
    from engine.scene.colorspace import srgb_to_linear
    from engine.scene.transforms import trs_matrices

    try:
        ctx = create_egl_context()
    except GLUnavailable:
        return None, None
    camera.set_viewport(*size)
    prog = ctx.program(vertex_shader=_SCENE_VERT, fragment_shader=_SCENE_FRAG)
    ambient, directional, _ = scene_lights(scene, camera, np.zeros(3))
    prog["u_ambient"].value = tuple(float(a) for a in ambient)
    prog["u_n_lights"].value = len(directional)
    pad = [(0.0, 0.0, 0.0)] * (4 - len(directional))
    prog["u_to_light"].write(np.array([d for d, _ in directional] + pad, np.float32))
    prog["u_radiance"].write(np.array([e for _, e in directional] + pad, np.float32))
    vp = camera.projection_matrix @ camera.view_matrix
    prog["u_view_proj"].write(vp.T.astype(np.float32).tobytes())
    owned, draws, textures = [prog], [], {}
    for node in scene.traverse(visible_only=True):
        g = getattr(node, "geometry", None)
        if not isinstance(g, Mesh):
            continue
        n = len(g.positions)
        uv = g.uvs if g.uvs is not None else np.zeros((n, 2))
        col = g.colors if g.colors is not None and g.material.vertex_colors else \
            np.full((n, 4), 255, np.uint8)
        bufs = [ctx.buffer(np.ascontiguousarray(a, dt)) for a, dt in (
            (g.positions, np.float32), (g.vertex_normals(), np.float32), (uv, np.float32),
            (col, np.uint8))]
        content = [(bufs[0], "3f", "in_pos"), (bufs[1], "3f", "in_normal"),
                   (bufs[2], "2f", "in_uv"), (bufs[3], "4f1", "in_color")]
        count = None
        if isinstance(node, Instances):
            on = node.active
            local = trs_matrices(node.positions[on], node.rotations[on], node.scales[on])
            inst = ctx.buffer(np.ascontiguousarray(local.transpose(0, 2, 1), np.float32))
            tint = ctx.buffer(np.ascontiguousarray(node.colors[on], np.float32))
            bufs += [inst, tint]
            content += [(inst, "16f/i", "in_instance"), (tint, "4f/i", "in_tint")]
            count = int(on.sum())
        ibo = ctx.buffer(np.ascontiguousarray(g.faces, np.uint32))
        vao = ctx.vertex_array(prog, content, ibo)
        owned += [*bufs, ibo, vao]
        model = node.world_matrix.copy()
        model[:3, 3] += model[:3, :3] @ g.origin
        m = g.material
        tex = None
        if m.texture is not None:
            tex = textures.get(id(m.texture))
            if tex is None:
                t = m.texture
                tex = ctx.texture(t.size, 4, t.image.tobytes(), internal_format=0x8C43)
                f = moderngl.LINEAR if t.sampler.filter == "linear" else moderngl.NEAREST
                tex.filter = (f, f)
                tex.repeat_x = t.sampler.wrap_s != "clamp"
                tex.repeat_y = t.sampler.wrap_t != "clamp"
                textures[id(m.texture)] = tex
                owned.append(tex)
        color = (*srgb_to_linear(np.asarray(m.color[:3])), m.color[3])
        draws.append((vao, model.T.astype(np.float32).tobytes(), tex, m.double_sided,
                      tuple(float(c) for c in color), count))
    fbo = ctx.framebuffer(color_attachments=[ctx.renderbuffer(size)],
                          depth_attachment=ctx.depth_renderbuffer(size))
    owned.append(fbo)
    bg = scene.background
    ctx.enable(moderngl.DEPTH_TEST)

    def frame():
        fbo.use()
        fbo.clear(*bg[:3], 1.0, depth=1.0)
        for vao, model, tex, double, color, count in draws:
            prog["u_model"].write(model)
            prog["u_instanced"].value = count is not None
            prog["u_textured"].value = tex is not None
            prog["u_double_sided"].value = double
            prog["u_color"].value = color
            if tex is not None:
                tex.use(0)
                prog["u_texture"].value = 0
            if double:
                ctx.disable(moderngl.CULL_FACE)
            else:
                ctx.enable(moderngl.CULL_FACE)
            vao.render(instances=count if count is not None else -1)
        return np.frombuffer(fbo.read(components=4), np.uint8)

    def release():
        for obj in reversed(owned):
            obj.release()
        ctx.release()

    return frame, release


class StageTimes:
    """Times the backend's stage calls (vertex_stage, rasterize, resolve) of a Renderer:
    the Backend contract's public methods, wrapped on the instance. Wall time, and the
    process's CPU time (all threads together: what the stage costs the machine, less
    sensitive to other processes than the wall time)."""

    STAGES = ("vertex_stage", "rasterize", "resolve")

    def __init__(self, renderer):
        self.times = {k: [] for k in self.STAGES}
        self.cpu = {k: [] for k in self.STAGES}
        backend = renderer.backend
        for name in self.STAGES:
            setattr(backend, name, self._timed(name, getattr(backend, name)))

    def _timed(self, name, fn):
        def call(*args, **kw):
            t0, c0 = time.perf_counter(), time.process_time()
            out = fn(*args, **kw)
            self.times[name].append((time.perf_counter() - t0) * 1000)
            self.cpu[name].append((time.process_time() - c0) * 1000)
            return out
        return call

    def medians(self, cpu=False):
        """{stage: median ms} of the wall (or CPU) times."""
        times = self.cpu if cpu else self.times
        return {k: statistics.median(v) for k, v in times.items() if v}


def filled_rows(size, repeats=7):
    """game, Duck and quad: the Numba frame against llvmpipe's same frame, interleaved
    frame by frame so both see the same machine load; with the engine's stage times."""
    rows = []
    for name, build in (("game", game_scene), ("Duck", duck_scene), ("quad", quad_scene)):
        made = build(size)
        if made is None:
            print(f"{name:<12} skipped: the asset is not there", flush=True)
            continue
        scene, camera = made
        r = Renderer(scene, camera, size, backend="numba")
        first = r.render()
        covered = float((first.depth < 1).mean())
        stages = StageTimes(r)
        gl, release = llvmpipe_scene(scene, camera, size)
        engine_ms, gl_ms = [], []
        if gl:
            gl()
        for _ in range(repeats):
            t0 = time.perf_counter()
            r.render()
            t1 = time.perf_counter()
            if gl:
                gl()
            t2 = time.perf_counter()
            engine_ms.append((t1 - t0) * 1000)
            gl_ms.append((t2 - t1) * 1000)
        if release:
            release()
        row = {"scene": name, "covered": covered, "numba_ms": statistics.median(engine_ms),
               "llvmpipe_ms": statistics.median(gl_ms) if gl else None,
               "stages_ms": stages.medians(), "stages_cpu_ms": stages.medians(cpu=True)}
        row["ratio"] = row["numba_ms"] / row["llvmpipe_ms"] if gl else None
        st = " ".join(f"{k} {v:.1f} ({row['stages_cpu_ms'][k]:.1f} CPU)"
                      for k, v in row["stages_ms"].items())
        ratio = f" ({row['ratio']:.2f}x llvmpipe {row['llvmpipe_ms']:.1f} ms)" if gl else ""
        print(f"{name:<12} {covered:.0%} of pixels covered: numba {row['numba_ms']:.1f} ms"
              f"{ratio}; stages ms: {st}", flush=True)
        rows.append(row)
    return rows


def resolve_costs(size, repeats=9):
    """The Numba resolve stage alone on full-screen quads, on one thread: CPU ns per
    covered pixel, median of ``repeats`` frames (one thread: what a pixel costs, without
    the thread pool's waits that a busy machine adds)."""
    from engine.render.backends.threads import set_threads, thread_count
    from engine.scene.material import Sampler

    threads = thread_count()
    set_threads(1)
    cases = {"unlit": {"texture": False, "shading": "unlit"}, "lit": {"texture": False},
             "lit+specular": {"texture": False, "specular": 0.5},
             "lit+texture": {}, "unlit+texture": {"shading": "unlit"},
             "lit+bilinear": {"sampler": Sampler(min_filter="linear")},
             "pbr+texture": {"shading": "pbr"}}
    out = {}
    for name, kw in cases.items():
        scene, camera = quad_scene(size, **kw)
        r = Renderer(scene, camera, size, backend="numba")
        covered = int((r.render().depth < 1).sum())
        stages = StageTimes(r)
        for _ in range(repeats):
            r.render()
        out[name] = stages.medians(cpu=True)["resolve"] * 1e6 / covered
    set_threads(threads)
    print("resolve      CPU ns per covered pixel, full-screen quad, one thread: "
          + ", ".join(f"{k} {v:.1f}" for k, v in out.items()), flush=True)
    return out


def strip_quad_scene(size, strips, **material):
    """``quad_scene``'s quad (lit, the 256 x 256 texture, uv 0..4 across) as ``strips``
    vertical strips of two triangles each: the same planes, so the same texels and
    shading per pixel, in runs of about width / (2 strips) pixels along a row."""
    from engine import Material, Texture

    scene = Scene(background=(0, 0, 0))
    a = size[0] / size[1]
    x = np.repeat(np.linspace(-a, a, strips + 1), 2) * 1.2
    y = np.tile([-1.2, 1.2], strips + 1)
    pos = np.column_stack([x, y, np.zeros_like(x)]).astype(np.float32)
    u = np.repeat(np.linspace(0.0, 4.0, strips + 1), 2)
    uv = np.column_stack([u, np.tile([4.0, 0.0], strips + 1)]).astype(np.float32)
    b = 2 * np.arange(strips)[:, None]
    faces = np.concatenate([b + [0, 2, 3], b + [0, 3, 1]])
    tex = Texture(np.random.default_rng(0).integers(0, 256, (256, 256, 4), np.uint8))
    scene.add(Node("quad", geometry=Mesh(pos, faces, uvs=uv,
                                         material=Material(texture=tex, **material))))
    camera = scene.add(PerspectiveCamera(fov_y=60, aspect=a, position=(0, 0, 1.5)))
    camera.look_at((0, 0, 0))
    return scene, camera


def run_costs(size, repeats=9, strips=(1, 80, 160, 320)):
    """The Numba resolve on one thread over ``strip_quad_scene`` quads: {material:
    [(mean run length in pixels, CPU ns per covered pixel, ns per run over the one-strip
    quad's pixel)]}, medians of ``repeats`` frames. A run is a row's stretch of pixels of
    one triangle (counted from the frame's keys); what a run costs beyond its pixels is
    (cost per pixel - the one-strip cost per pixel) x the run length."""
    from engine.render.backends.threads import set_threads, thread_count

    threads = thread_count()
    set_threads(1)
    out = {}
    for name, kw in (("lit+texture", {}), ("pbr+texture", {"shading": "pbr"})):
        rows = []
        for n in strips:
            scene, camera = strip_quad_scene(size, n, **kw)
            r = Renderer(scene, camera, size, backend="numba")
            backend = r.backend
            resolve, keys = backend.resolve, []

            def keep(k, *args, _resolve=resolve, _keys=keys, **kwargs):
                _keys[:] = [k]
                return _resolve(k, *args, **kwargs)

            backend.resolve = keep
            r.render()
            ids = np.asarray(keys[0]).reshape(size[1], size[0])
            covered = ids != np.uint64(0xFFFFFFFFFFFFFFFF)
            ids = ids & np.uint64(0xFFFFFFFF)
            starts = int(covered[:, 0].sum() + (covered[:, 1:] & ~(
                covered[:, :-1] & (ids[:, 1:] == ids[:, :-1]))).sum())
            backend.resolve = resolve
            stages = StageTimes(r)
            for _ in range(repeats):
                r.render()
            ns = stages.medians(cpu=True)["resolve"] * 1e6 / covered.sum()
            run = covered.sum() / starts
            rows.append((float(run), float(ns), float((ns - rows[0][1]) * run) if rows else 0.0))
        out[name] = rows
    set_threads(threads)
    for name, rows in out.items():
        print(f"{'runs':<12} {name}, CPU ns per covered pixel (ns per run over a long run's "
              "pixels) against pixels per run, one thread: "
              + ", ".join(f"{run:.1f} px {ns:.1f} ({extra:.0f})" for run, ns, extra in rows),
              flush=True)
    return out


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
    p.add_argument("--filled", action="store_true",
                   help="only the scenes that fill the screen and the resolve costs")
    p.add_argument("--json", type=Path, default=None, help="also write the rows as JSON")
    args = p.parse_args(argv)
    filled = filled_rows(args.frame)
    costs = resolve_costs(args.frame)
    per_run = run_costs(args.frame)
    rows = points = first = None
    if not args.filled:
        rows = run(args.frame, args.quick)
        points = None if args.quick else points_row(args.frame)
        first = first_frame_row(args.frame)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"frame": list(args.frame), "rows": rows,
                                         "points": points, "first_frame": first,
                                         "filled": filled, "resolve_ns_per_px": costs,
                                         "resolve_runs": per_run},
                                        indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
