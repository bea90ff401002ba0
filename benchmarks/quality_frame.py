"""The "quality" frame: PBR + one shadowed directional light + 4x MSAA, the engine against
Mesa llvmpipe doing the same in GLSL, side by side in one run.

    .venv/bin/python benchmarks/quality_frame.py [--frame 1280x720] [--repeats 7]
                                                 [--map 2048] [--numpy] [--json PATH]

The scene (benchmarks/reference_scenes.py ``bunny_scene``): the Stanford bunny (69,451
triangles) standing on a plane, both ``shading="pbr"``, one directional light with a
``--map`` square shadow map, an ambient light, framed on the bunny. Paths, each a whole
frame read back to the host:

    numba       ``Renderer(backend="numba", msaa=4).render(depth=False)``: the shadow
                pass (the engine's own raster from the light), vertex stage, 4-sample
                raster, PBR resolve with the 3 x 3 PCF lookup, the linear-light mix;
                the map drawn every frame (``reuse_shadow_maps`` off), as the GL
                reference draws its own: the target's row
    numba, map reused
                the same Renderer reusing the still scene's map
                (engine.render.shadows.MapCache): for comparison only
    numpy       the same on the NumPy reference (``--numpy``: slow)
    gl reference
                benchmarks/gl_reference.py ``ReferenceRenderer(msaa=4)``: raw moderngl
                on an EGL context (Mesa llvmpipe on machines without a GPU; the
                renderer's name is printed and written), the meshes in
                static buffers, a depth-texture shadow pass, the glTF BRDF with 3 x 3
                PCF in GLSL into a 4-sample RGBA16F renderbuffer, resolved, sRGB-encoded
                and read back

Issue 22's target: the engine's frame <= 1x llvmpipe's (the "gl reference" row there). Medians of ``--repeats`` frames
after a warm-up, the paths interleaved in every repeat so load on a shared machine hits
them alike; compare the ratio, not absolute times from other runs. The two pictures
agree to the figures docs/surfaces.md states (tests/bench/test_gl_reference.py).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gl_reference import ReferenceRenderer
from reference_scenes import bunny_scene

from engine import Renderer
from engine.render.renderer import parse_size


def _frame(renderer, reuse):
    """One frame, its shadow map drawn (``reuse`` False) or the last one reused."""
    renderer.backend.reuse_shadow_maps = reuse
    return renderer.render(depth=False)


def run(size, repeats, map_size, numpy=False):
    scene, camera, _ = bunny_scene(size, map_size)
    paths, renderers = {}, []
    for backend in ("numba", "numpy") if numpy else ("numba",):
        r = Renderer(scene, camera, size, backend=backend, msaa=4)
        renderers.append((backend, r))
        paths[backend] = lambda r=r: _frame(r, reuse=False)
    paths["numba, map reused"] = lambda r=renderers[0][1]: _frame(r, reuse=True)
    ref = ReferenceRenderer(scene, camera, size, msaa=4)
    paths["gl reference"] = ref.render
    for fn in paths.values():
        fn()  # warm-up: JIT compilation, buffers, shader compilation
    for backend, r in renderers:
        assert r.drawn_by == backend, f"drawn by {r.drawn_by}, not {backend}"
    times = {name: [] for name in paths}
    for _ in range(repeats):
        for name, fn in paths.items():
            t0 = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - t0) * 1000)
    renderer_name = ref.renderer_name
    ref.release()
    ms = {name: statistics.median(t) for name, t in times.items()}
    print(f"quality frame: bunny on a plane, {size[0]}x{size[1]}, PBR, one directional "
          f"light with a {map_size}^2 shadow map, 4x MSAA; median of {repeats}; the GL "
          f"reference on {ref.renderer_name}")
    for name, t in ms.items():
        print(f"{name:18s} {t:8.1f} ms")
    ratios = {f"{b} / gl reference": ms[b] / ms["gl reference"] for b in ms
              if b != "gl reference"}
    for name, q in ratios.items():
        print(f"{name:32s} {q:5.2f}x" + ("" if "reused" in name else "   (target <= 1x)"))
    return {"size": list(size), "map": map_size, "repeats": repeats,
            "gl_renderer": renderer_name, "median_ms": ms, "ratios": ratios}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--frame", type=parse_size, default=(1280, 720))
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--map", type=int, default=2048, help="shadow map side in texels")
    p.add_argument("--numpy", action="store_true", help="also time the NumPy reference")
    p.add_argument("--json", default=None, metavar="PATH")
    args = p.parse_args(argv)
    if args.repeats < 1:
        p.error(f"--repeats must be >= 1, got {args.repeats}")
    from engine.scene.light import DirectionalLight

    try:  # the light's own check of the map size, as a usage error
        DirectionalLight(shadow_map_size=args.map)
    except ValueError as exc:
        p.error(f"--map: {exc}")
    result = run(args.frame, args.repeats, args.map, args.numpy)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
