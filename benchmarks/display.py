"""What a user sees first, against raw references measured in the same run:

    .venv/bin/python benchmarks/display.py [--frame 1280x720] [--json PATH] [--only NAME,...]

    obj load     ``engine.io.load`` of the bunny against ``trimesh.load`` (its reader)
                 in one process, imports done, interleaved, medians; with the share of
                 ``engine.io.fixups.normalize_obj`` (the checks and repairs before trimesh
                 parses the text).
    first pixel  a new process running ``frustum render bunny.obj --out x.png`` (after
                 ``frustum warmup``) against a new process that loads the same file with
                 ``trimesh.load``, draws it with raw moderngl on an EGL context (Lambert
                 shader, no culling), reads the frame back and writes the same PNG with
                 Pillow. Both are timed as whole processes from the outside (start-up,
                 imports, GL context, file load, frame, PNG); medians of 3 runs each,
                 interleaved. Beside them, the floor of any Numba path: a new process
                 that imports Numba and calls one trivial kernel from Numba's disk cache
                 (no engine): Numba's import and the typing context its first dispatch
                 builds, which every Numba frame of a new process pays first.
    gl mode      ``Renderer(raster="gl").render(depth=False)`` of the bunny against raw
                 moderngl drawing the same mesh (static buffers, Lambert, no culling:
                 the engine draws the open bunny's back faces) and reading the colour
                 back; both in one EGL process, interleaved, medians. Also, in the same
                 run, the GL mode without the sRGB encoding of its output (which the raw
                 Lambert reference does not do: the share of the gap that encoding is)
                 and as it was before (the general program, depth read back).
    window       ``frustum view``'s frame (one iteration of ``Viewer.run``: pyglet's clock
                 and events, the software frame and its way into the window: on
                 llvmpipe under Xvfb a copy through X shared memory,
                 ``engine.display.xshm``) against the offscreen frame
                 (``Renderer.render(depth=False)``) of the same renderer; also, in turn
                 a second window drawing its frames as GL's textured quad and swapping
                 buffers (``present="gl"``, vsync off: how every window did before)
                 against the offscreen frame again; one process, each pair interleaved,
                 medians; needs ``xvfb-run``.

The bunny is ../shared/ref-assets/classic/stanford-bunny.obj (69,451 triangles). Ratios
are what compares across runs; absolute times on shared machines do not.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BUNNY = ROOT.parent / "shared" / "ref-assets" / "classic" / "stanford-bunny.obj"

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
    float d = abs(dot(normalize(v_normal), u_light));
    f_color = vec4(vec3(0.15 + 0.7 * d), 1.0);
}
"""

# the raw reference of "first pixel", as a user would write it (no engine import)
_RAW_FIRST = r"""
import sys
import numpy as np, trimesh, moderngl
from PIL import Image
W, H = SIZE
m = trimesh.load(sys.argv[1])
v = np.asarray(m.vertices, np.float32); f = np.asarray(m.faces)
# area-weighted vertex normals in NumPy (trimesh's own are a Python loop without SciPy)
fn = np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]])
n = np.zeros_like(v); np.add.at(n, f.reshape(-1), np.repeat(fn, 3, axis=0))
n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-30)
ctx = moderngl.create_standalone_context(require=330, backend="egl")
prog = ctx.program(vertex_shader=VERT, fragment_shader=FRAG)
vao = ctx.vertex_array(prog, [(ctx.buffer(v), "3f", "in_pos"), (ctx.buffer(n), "3f", "in_normal")],
                       ctx.buffer(f.astype(np.uint32)))
fbo = ctx.framebuffer(color_attachments=[ctx.renderbuffer((W, H))],
                      depth_attachment=ctx.depth_renderbuffer((W, H)))
lo, hi = v.min(0), v.max(0); c = (lo + hi) / 2; r = float(np.linalg.norm(hi - lo)) / 2
eye = c + np.array([0.6, 0.4, 0.7]) / np.linalg.norm([0.6, 0.4, 0.7]) * 2.8 * r
fw = c - eye; fw /= np.linalg.norm(fw); s = np.cross(fw, [0, 1, 0]); s /= np.linalg.norm(s)
u = np.cross(s, fw)
view = np.eye(4); view[0, :3], view[1, :3], view[2, :3] = s, u, -fw
view[:3, 3] = -view[:3, :3] @ eye
t = 1 / np.tan(np.radians(25)); near, far = 0.1 * r, 10 * r
proj = np.array([[t * H / W, 0, 0, 0], [0, t, 0, 0],
                 [0, 0, (far + near) / (near - far), 2 * far * near / (near - far)], [0, 0, -1, 0]])
prog["u_mvp"].write((proj @ view).T.astype(np.float32).tobytes())
prog["u_light"].value = tuple(-fw)
fbo.use(); ctx.enable(moderngl.DEPTH_TEST); fbo.clear(0.04, 0.05, 0.08, 1.0)
vao.render()
img = np.frombuffer(fbo.read(components=4), np.uint8).reshape(H, W, 4)[::-1]
Image.fromarray(img).save(sys.argv[2])
"""


# the floor of a new process's first Numba frame: Numba imported, one cached kernel run
_NUMBA_FLOOR = """import numba


@numba.njit(cache=True)
def one(x):
    return x + 1
"""


def _median_wall(cmd, runs=3, **kw):
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, **kw)
        out.append(time.perf_counter() - t0)
    return out


def first_pixel_row(size, tmp: Path, runs=3):
    """New process to a written image: ``frustum render`` against trimesh + raw moderngl,
    and beside them the floor of any Numba path (a new process importing Numba and
    calling one kernel from its disk cache: ``_NUMBA_FLOOR``).

    All run without ``PYTHONDONTWRITEBYTECODE`` (set on the build machines): as in a
    user's shell, the first run caches each module's bytecode. With it set, every run
    compiled the engine's own modules from source (about 0.2 s; the reference's
    libraries come with their bytecode from pip)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "engine", "warmup"], check=True,
                   capture_output=True, cwd=ROOT, env=env)
    raw = (_RAW_FIRST.replace("SIZE", repr(tuple(size))).replace("VERT", repr(_VERT))
           .replace("FRAG", repr(_FRAG)))
    engine_cmd = [sys.executable, "-m", "engine", "render", str(BUNNY), "--out",
                  str(tmp / "frustum-render.png"), "--size", f"{size[0]}x{size[1]}"]
    raw_cmd = [sys.executable, "-c", raw, str(BUNNY), str(tmp / "raw.png")]
    (tmp / "numba_floor.py").write_text(_NUMBA_FLOOR)
    floor_cmd = [sys.executable, "-c", "import numba_floor; numba_floor.one(1)"]
    engine_s, raw_s, floor_s = [], [], []
    subprocess.run(engine_cmd, check=True, capture_output=True, cwd=ROOT, env=env)  # caches
    subprocess.run(raw_cmd, check=True, capture_output=True, cwd=ROOT, env=env)
    subprocess.run(floor_cmd, check=True, capture_output=True, cwd=tmp, env=env)
    for _ in range(runs):  # interleaved: all see the same machine load
        engine_s += _median_wall(engine_cmd, 1, cwd=ROOT, env=env)
        raw_s += _median_wall(raw_cmd, 1, cwd=ROOT, env=env)
        floor_s += _median_wall(floor_cmd, 1, cwd=tmp, env=env)
    line = subprocess.run(engine_cmd, check=True, capture_output=True, text=True,
                          cwd=ROOT, env=env).stdout.strip()
    row = {"engine_s": statistics.median(engine_s), "raw_s": statistics.median(raw_s),
           "numba_floor_s": statistics.median(floor_s), "engine_line": line}
    row["ratio"] = row["engine_s"] / row["raw_s"]
    row["numba_floor_ratio"] = row["numba_floor_s"] / row["raw_s"]
    print(f"first pixel  frustum render {row['engine_s']:.2f} s vs trimesh + raw moderngl "
          f"{row['raw_s']:.2f} s, whole new processes writing the PNG: {row['ratio']:.2f}x; "
          f"Numba's own start-up (import, one cached kernel): {row['numba_floor_s']:.2f} s, "
          f"{row['numba_floor_ratio']:.2f}x the reference", flush=True)
    print(f"             the CLI's own line: {line}", flush=True)
    return row


def obj_load_row():
    """``engine.io.load`` of the bunny against ``trimesh.load`` of it, in this process
    (imports done), interleaved, medians; and normalize_obj's share."""
    import trimesh

    from engine.io import fixups, load

    text = fixups.decode_text(BUNNY.read_bytes())
    engine_ms, trimesh_ms = _interleaved(lambda: load(BUNNY), lambda: trimesh.load(str(BUNNY)),
                                         repeats=7)
    check_ms, _ = _interleaved(lambda: fixups.normalize_obj(text), lambda: None, repeats=7)
    row = {"engine_load_ms": engine_ms, "trimesh_load_ms": trimesh_ms,
           "normalize_obj_ms": check_ms, "ratio": engine_ms / trimesh_ms}
    print(f"obj load     engine.io.load {engine_ms:.0f} ms (normalize_obj {check_ms:.0f} ms) vs "
          f"trimesh.load {trimesh_ms:.0f} ms: {row['ratio']:.2f}x", flush=True)
    return row


def _bunny_renderer(size, raster):
    from engine import Renderer
    from engine.io.sources import load_source

    scene, camera = load_source(str(BUNNY), size[0] / size[1])
    return Renderer(scene, camera, size, backend="numba", raster=raster)


def _raw_gl(renderer):
    """A callable drawing the renderer's mesh with raw moderngl on its own EGL context
    (made current for each frame, as the engine's is) and reading the colour back."""
    import moderngl

    from engine.render.gl import create_egl_context

    ctx = create_egl_context()
    node = next(n for n in renderer.scene.traverse() if getattr(n, "geometry", None) is not None)
    g = node.geometry
    prog = ctx.program(vertex_shader=_VERT, fragment_shader=_FRAG)
    vao = ctx.vertex_array(prog, [
        (ctx.buffer(np.ascontiguousarray(g.positions, np.float32)), "3f", "in_pos"),
        (ctx.buffer(np.ascontiguousarray(g.vertex_normals(), np.float32)), "3f", "in_normal")],
        ctx.buffer(np.ascontiguousarray(g.faces, np.uint32)))
    w, h = renderer.size
    fbo = ctx.framebuffer(color_attachments=[ctx.renderbuffer((w, h))],
                          depth_attachment=ctx.depth_renderbuffer((w, h)))
    cam = renderer.camera
    model = node.world_matrix.copy()
    model[:3, 3] += model[:3, :3] @ g.origin
    prog["u_mvp"].write((cam.projection_matrix @ cam.view_matrix @ model).T
                        .astype(np.float32).tobytes())
    prog["u_light"].value = tuple(float(c) for c in cam.world_matrix[:3, 2])

    def frame():
        with ctx:
            fbo.use()
            ctx.enable(moderngl.DEPTH_TEST)
            fbo.clear(0.04, 0.05, 0.08, 1.0, depth=1.0)
            vao.render()
            return np.frombuffer(fbo.read(components=4, alignment=1), np.uint8)

    return frame


def _interleaved(a, b, repeats=9):
    a(), b()  # warm-up
    ta, tb = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        a()
        t1 = time.perf_counter()
        b()
        tb.append((time.perf_counter() - t1) * 1000)
        ta.append((t1 - t0) * 1000)
    return statistics.median(ta), statistics.median(tb)


_SRGB_ENCODE = "return mix(l * 12.92, 1.055 * pow(l, vec3(1.0 / 2.4)) - 0.055, step(0.0031308, l));"


def _unencoded_renderer(size):
    """A GL-mode bunny renderer whose programs write linear values (surface.frag's
    srgb_encode only clamps): compiled by its first frame with that source."""
    from engine.render.gl import surfaces

    r = _bunny_renderer(size, "gl")
    real = surfaces.load_glsl

    def linear_output(name, *args, **kwargs):
        text = real(name, *args, **kwargs)
        if name == "surface.frag":
            assert _SRGB_ENCODE in text, "surface.frag's srgb_encode changed"
            text = text.replace(_SRGB_ENCODE, "return l;")
        return text

    surfaces.load_glsl = linear_output
    try:
        r.render(depth=False)
    finally:
        surfaces.load_glsl = real
    return r


def gl_mode_row(size):
    """GL mode against raw moderngl; also, in the same run, the GL mode without the sRGB
    encoding of its output, and as it was before its programs were specialised and its
    depth readback made optional: the general program (``variant_defines`` giving no
    defines) and ``render()`` with depth."""
    from engine.render.gl import surfaces

    r = _bunny_renderer(size, "gl")
    raw = _raw_gl(r)
    linear = _unencoded_renderer(size)
    general = _bunny_renderer(size, "gl")
    specialise = surfaces.variant_defines

    def general_frame():
        surfaces.variant_defines = lambda *a, **k: ()
        try:
            general.render()
        finally:
            surfaces.variant_defines = specialise

    engine_ms, raw_ms, linear_ms, general_ms = _round_robin(
        [lambda: r.render(depth=False), raw, lambda: linear.render(depth=False),
         general_frame], repeats=21)
    for renderer in (r, linear, general):
        renderer.close()
    row = {"engine_gl_ms": engine_ms, "raw_moderngl_ms": raw_ms, "ratio": engine_ms / raw_ms,
           "no_srgb_ms": linear_ms, "no_srgb_ratio": linear_ms / raw_ms,
           "general_depth_ms": general_ms, "general_ratio": general_ms / raw_ms}
    print(f"gl mode      Renderer(raster='gl') {engine_ms:.1f} ms vs raw moderngl + readback "
          f"{raw_ms:.1f} ms: {row['ratio']:.2f}x (without the sRGB encoding: {linear_ms:.1f} "
          f"ms, {row['no_srgb_ratio']:.2f}x; general program + depth readback: "
          f"{general_ms:.1f} ms, {row['general_ratio']:.2f}x)", flush=True)
    return row


def _round_robin(fns, repeats):
    """Median ms of each callable, called in turn ``repeats`` times after a warm-up (so
    all see the same machine load)."""
    for fn in fns:
        fn()
    times = [[] for _ in fns]
    for _ in range(repeats):
        for fn, out in zip(fns, times):
            t0 = time.perf_counter()
            fn()
            out.append((time.perf_counter() - t0) * 1000)
    return [statistics.median(t) for t in times]


_WINDOW = r"""
import json, statistics, sys, time
sys.path.insert(0, HERE)
from display import _bunny_renderer, _interleaved
from engine.display.window import Viewer
r = _bunny_renderer(SIZE, "software")
v = Viewer(r, raster="software", vsync=False, aids=False)
gl_r = _bunny_renderer(SIZE, "software")
gl_v = Viewer(gl_r, raster="software", vsync=False, aids=False, present="gl")
import pyglet
def loop_iteration(viewer):  # what Viewer.run does per frame
    pyglet.clock.tick()
    viewer.window.switch_to()
    viewer.window.dispatch_events()
    viewer.step(0.0)
# in two interleaved pairs: the X server copies a GL window's swapped frame after the
# swap returns, and that work would be billed to whatever ran next
offscreen_ms, window_ms = _interleaved(lambda: r.render(depth=False),
                                       lambda: loop_iteration(v), 31)
gl_offscreen_ms, gl_window_ms = _interleaved(lambda: r.render(depth=False),
                                             lambda: loop_iteration(gl_v), 31)
print(json.dumps({"offscreen_ms": offscreen_ms, "window_ms": window_ms,
                  "presented_by": v.presented_by, "gl_offscreen_ms": gl_offscreen_ms,
                  "gl_window_ms": gl_window_ms}))
v.close()
gl_v.close()
"""


def window_row(size):
    xvfb = shutil.which("xvfb-run")
    if xvfb is None:
        print("window       skipped: xvfb-run is not installed", flush=True)
        return None
    code = _WINDOW.replace("HERE", repr(str(Path(__file__).resolve().parent))).replace(
        "SIZE", repr(tuple(size)))
    out = subprocess.run([xvfb, "-a", "-s", f"-screen 0 {size[0]}x{size[1]}x24",
                          sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, cwd=ROOT).stdout
    row = json.loads(out.strip().splitlines()[-1])
    row["ratio"] = row["window_ms"] / row["offscreen_ms"]
    row["gl_ratio"] = row["gl_window_ms"] / row["gl_offscreen_ms"]
    print(f"window       frustum view frame {row['window_ms']:.1f} ms ({row['presented_by']}) vs "
          f"the offscreen frame {row['offscreen_ms']:.1f} ms (Xvfb): {row['ratio']:.2f}x "
          f"(GL's quad and swap instead: {row['gl_window_ms']:.1f} vs "
          f"{row['gl_offscreen_ms']:.1f} ms, {row['gl_ratio']:.2f}x)",
          flush=True)
    return row


def main(argv=None):
    import tempfile

    from engine.render.renderer import parse_size

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--frame", default="1280x720")
    p.add_argument("--json", default=None, help="write the rows here")
    p.add_argument("--only", default="load,first,gl,window",
                   help="comma-separated sections: load, first, gl, window")
    args = p.parse_args(argv)
    size = parse_size(args.frame)
    only = set(args.only.split(","))
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        if "load" in only:
            rows["obj_load"] = obj_load_row()
        if "first" in only:
            rows["first_pixel"] = first_pixel_row(size, Path(tmp))
        if "gl" in only:
            rows["gl_mode"] = gl_mode_row(size)
        if "window" in only:
            rows["window"] = window_row(size)
    if args.json:
        import os

        meta = {"frame": list(size), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "load_average_1min": os.getloadavg()[0], "cpus": os.cpu_count()}
        Path(args.json).write_text(json.dumps({**meta, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
