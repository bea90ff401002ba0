"""Point rasterization speed: the engine's software rasterizer against GL_POINTS, in one run.

    .venv/bin/python benchmarks/raster.py [--sizes 1e5,1e6,1e7] [--frame 1280x720]

For each point count N (random 1-pixel points spread over the frame, 90% visible):

    numpy ms     engine.render.points.rasterize_points (z-buffer by np.minimum.at)
    cuda ms      shaders/raster.cu via CuPy, CUDA-event timed device time (GPU only)
    gl ms        moderngl GL_POINTS on an offscreen EGL context: VBO upload + draw,
                 synchronised with ctx.finish() (no readback)
    gl/numpy     ratio of the two, measured in the same run

then one full frame at each N through the Renderer: projection (the auto backend) +
software rasterization + show (upload the image to a texture and draw the full-screen
quad, as the window does, synchronised with ctx.finish()), against the 50 ms target.

Times are medians of a few repeats after one warm-up; compare ratios, not absolute
times from other runs (shared, noisy machines).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from engine import Node, PerspectiveCamera, PointCloud, Renderer, Scene
from engine.display import ImageBlit
from engine.render.gl import OffscreenGL
from engine.render.points import rasterize_points
from engine.render.renderer import parse_size

TARGET_MS = 50.0


def timed(fn, repeats, *args):
    """Median wall time of ``fn(*args)`` in ms (synchronous callables only)."""
    fn(*args)  # warm-up: JIT, buffer allocation, first-touch
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(*args)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def repeats_for(n):
    return 5 if n <= 100_000 else 3 if n <= 1_000_000 else 1


def cuda_ms(xy, depth, vis, colors, size):
    """Median CUDA rasterizer time in ms, or None without a usable GPU."""
    from engine.render.backends.cupy_backend import cupy_unavailable_reason

    if cupy_unavailable_reason() is not None:
        return None
    from engine.render.backends.cupy_raster import benchmark_rasterize

    return benchmark_rasterize(xy, depth, vis, colors, size, 1.0, repeats=10)["ms_median"]


def gl_points_frame(gl, fbo, xy, depth, vis, colors, frame):
    """Clear, upload + draw GL_POINTS, wait for the GPU (or llvmpipe) to finish."""
    fbo.use()
    fbo.clear(0.0, 0.0, 0.0, 1.0, depth=1.0)
    gl.painter.draw(xy, depth, vis, colors, frame, 1.0)
    gl.ctx.finish()


def show_image(ctx, blit, fbo, color):
    """What the window does with a software frame: texture upload + full-screen quad."""
    fbo.use()
    blit.draw(color)
    ctx.finish()


def raster_table(sizes, frame, gl):
    ctx = gl.ctx
    print(f"Rasterizing N one-pixel points into {frame[0]}x{frame[1]} "
          f"(GL: {gl.renderer_name})")
    print(f"{'N':>10} {'numpy ms':>10} {'cuda ms':>9} {'gl ms':>9} {'gl/numpy':>9}")
    rng = np.random.default_rng(0)
    fbo = ctx.framebuffer(color_attachments=[ctx.renderbuffer(frame, components=4)],
                          depth_attachment=ctx.depth_renderbuffer(frame))
    for n in sizes:
        xy = (rng.random((n, 2), np.float32) * np.array(frame, np.float32))
        depth = rng.random(n, np.float32)
        vis = rng.random(n, np.float32) < 0.9
        colors = rng.integers(0, 256, (n, 4), dtype=np.uint8)
        reps = repeats_for(n)
        t_np = timed(rasterize_points, reps, xy, depth, vis, colors, frame)
        t_gl = timed(gl_points_frame, reps, gl, fbo, xy, depth, vis, colors, frame)
        t_cuda = cuda_ms(xy, depth, vis, colors, frame)
        cuda = f"{t_cuda:9.2f}" if t_cuda is not None else f"{'-':>9}"
        print(f"{n:>10,} {t_np:10.1f} {cuda} {t_gl:9.1f} {t_gl / t_np:8.1f}x", flush=True)
    fbo.release()


def frame_table(sizes, frame, gl):
    ctx = gl.ctx
    blit = ImageBlit(ctx)
    fbo = ctx.framebuffer(color_attachments=[ctx.renderbuffer(frame, components=4)])
    rng = np.random.default_rng(1)
    print(f"\nFull frame: transform + software rasterize + show ({frame[0]}x{frame[1]}, "
          f"target {TARGET_MS:.0f} ms)")
    print(f"{'N':>10} {'backend':>8} {'project':>9} {'raster':>9} {'show':>9} {'total':>9}  target")
    for n in sizes:
        scene = Scene()
        pts = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
        scene.add(Node("cloud", geometry=PointCloud(pts, (pts + 1) / 2)))
        camera = scene.add(PerspectiveCamera(fov_y=60, position=(0.0, 0.0, 3.0)))
        r = Renderer(scene, camera, frame)
        reps = repeats_for(n)
        p = r.project()
        t_proj = timed(r.project, reps)
        out = rasterize_points(p.screen_xy, p.depth, p.visible, r.batch.colors, frame)
        t_ras = timed(rasterize_points, reps, p.screen_xy, p.depth, p.visible,
                      r.batch.colors, frame)
        t_show = timed(show_image, reps, ctx, blit, fbo, out.color)
        total = t_proj + t_ras + t_show
        verdict = "ok" if total <= TARGET_MS else "over"
        print(f"{n:>10,} {r.projector.name:>8} {t_proj:9.1f} {t_ras:9.1f} {t_show:9.1f} "
              f"{total:9.1f}  {verdict}", flush=True)
    blit.release()
    fbo.release()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1e5,1e6,1e7",
                    help="comma-separated point counts (default: %(default)s)")
    ap.add_argument("--frame", type=parse_size, default=(1280, 720), help="WIDTHxHEIGHT")
    args = ap.parse_args(argv)
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    gl = OffscreenGL()
    try:
        raster_table(sizes, args.frame, gl)
        frame_table([n for n in sizes if n <= 1_000_000], args.frame, gl)
    finally:
        gl.release()


if __name__ == "__main__":
    main()
