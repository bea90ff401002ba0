"""PBR shading against Blinn-Phong, side by side in one run.

    .venv/bin/python benchmarks/pbr.py [--frame 1280x720] [--backend numba] [--frames 7]

Two scenes, each drawn with its materials as the glTF BRDF (``shading="pbr"``, metallic
0.5, roughness 0.5) and as Lambert + Blinn-Phong (``"lit"``, specular 0.5, shininess 32),
under one directional light and an ambient light:

    bunny   the Stanford bunny (../shared/ref-assets/classic/stanford-bunny.obj), or an
            icosphere of similar size when the assets are not there, auto-framed
    quad    one full-screen quad with a bilinear-filtered 256 x 256 texture

Times are medians of whole frames (vertex stage + raster + resolve to a host image) after
a warm-up; the ratio PBR / Blinn-Phong is what to compare (the issue's target is <= 1.3).
Then the quad's PBR frame with a 256 x 256 normal map (tangents generated,
engine.scene.tangents) against the same frame without it: the cost of the tangent frame
and one more texture sample per pixel. Last the quad's PBR frame with a
metallic-roughness and an occlusion map (random texels, default trilinear sampler), 256 x
256 (magnified: every pixel reads level 0) and 2048 x 2048 (minified: about 1.7 levels
down, two levels blended per map), against the same frame without maps: the cost of the
maps' level of detail and of their mip levels.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine import (
    AmbientLight,
    DirectionalLight,
    Material,
    Mesh,
    Node,
    PerspectiveCamera,
    Renderer,
    Scene,
    Texture,
)

BUNNY = ROOT.parent / "shared" / "ref-assets" / "classic" / "stanford-bunny.obj"


def _bunny_mesh():
    if BUNNY.exists():
        import trimesh

        m = trimesh.load(BUNNY, force="mesh", process=False)
        return np.asarray(m.vertices, np.float32), np.asarray(m.faces), None
    from engine.scene.procedural import icosphere

    v, f = icosphere(6)
    return v.astype(np.float32), f, None


def _quad_mesh():
    pos = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], np.float32)
    return pos, np.array([[0, 1, 2], [0, 2, 3]]), np.array(
        [[0, 1], [1, 1], [1, 0], [0, 0]], np.float32)


def _normal_map():
    """A 256 x 256 map of random tangent-space normals within about 20 degrees of +Z."""
    rng = np.random.default_rng(1)
    n = rng.normal(0, 0.35, (256, 256, 3))
    n[..., 2] = 1.0
    n /= np.linalg.norm(n, axis=-1, keepdims=True)
    rgb = np.rint((n + 1) / 2 * 255)
    return Texture(np.concatenate([rgb, np.full((256, 256, 1), 255)], -1).astype(np.uint8))


def _data_maps(n):
    """``Material.maps`` with an n x n metallic-roughness and occlusion map of random
    texels."""
    rng = np.random.default_rng(2)
    return {role: Texture(rng.integers(0, 256, (n, n, 4), np.uint8))
            for role in ("metallic_roughness", "occlusion")}


def _scene(kind, shading, size, normal_map=False, data_maps=0):
    pos, faces, uvs = _bunny_mesh() if kind == "bunny" else _quad_mesh()
    tex = None
    if kind == "quad":
        tex = Texture(np.random.default_rng(0).integers(0, 256, (256, 256, 4), np.uint8))
    maps = {"normal": _normal_map()} if normal_map else None
    if data_maps:
        maps = _data_maps(data_maps)
    mat = (Material(color=(0.8, 0.6, 0.4), shading="pbr", metallic=0.5, roughness=0.5,
                    texture=tex, maps=maps) if shading == "pbr" else
           Material(color=(0.8, 0.6, 0.4), specular=0.5, shininess=32, texture=tex))
    scene = Scene()
    scene.add(Node(kind, geometry=Mesh(pos, faces, uvs=uvs, material=mat)))
    scene.add(DirectionalLight(intensity=1.5, rotation=(-30, 40, 0)))
    scene.add(AmbientLight(intensity=0.1))
    w, h = size
    cam = scene.add(PerspectiveCamera(fov_y=50, aspect=w / h))
    if kind == "quad":  # the quad fills the frame: half-height 1 at the right distance
        cam.position = (0, 0, 1.0 / np.tan(np.radians(25)) * 0.9)
        scene.children[0].scale = (w / h, 1.0, 1.0)
    else:
        cam.frame(scene.bounds())
    return scene, cam


def _time(scene, cam, size, backend, frames):
    r = Renderer(scene, cam, size, backend=backend)
    for _ in range(2):
        r.render()
    times = []
    for _ in range(frames):
        t0 = time.perf_counter()
        r.render()
        times.append(time.perf_counter() - t0)
    assert r.drawn_by == backend, f"drawn by {r.drawn_by}, not {backend}"
    return statistics.median(times) * 1000.0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--frame", default="1280x720")
    p.add_argument("--backend", default="numba")
    p.add_argument("--frames", type=int, default=7)
    a = p.parse_args()
    size = tuple(int(x) for x in a.frame.split("x"))
    print(f"{a.backend} backend, {size[0]}x{size[1]}, median of {a.frames} frames")
    print(f"{'scene':8} {'Blinn-Phong ms':>15} {'PBR ms':>8} {'PBR / BP':>9}")
    for kind in ("bunny", "quad"):
        # interleaved, so load changes on a shared machine hit both alike
        bp, pbr = [], []
        for _ in range(3):
            bp.append(_time(*_scene(kind, "lit", size), size, a.backend, a.frames))
            pbr.append(_time(*_scene(kind, "pbr", size), size, a.backend, a.frames))
        b, q = statistics.median(bp), statistics.median(pbr)
        print(f"{kind:8} {b:15.1f} {q:8.1f} {q / b:9.2f}")
    b, q = _against_plain_quad(size, a, normal_map=True)
    print(f"{'scene':8} {'PBR ms':>15} {'+normal map ms':>15} {'ratio':>6}")
    print(f"{'quad':8} {b:15.1f} {q:15.1f} {q / b:6.2f}")
    print(f"{'maps':12} {'PBR ms':>8} {'+MR+occlusion ms':>17} {'ratio':>6}")
    for n in (256, 2048):
        b, q = _against_plain_quad(size, a, data_maps=n)
        print(f"{f'{n} x {n}':12} {b:8.1f} {q:17.1f} {q / b:6.2f}")


def _against_plain_quad(size, a, **variant):
    """(plain, variant) medians of three interleaved timings: the PBR quad, and the same
    quad with ``variant`` (``_scene``'s keywords)."""
    plain, varied = [], []
    for _ in range(3):
        plain.append(_time(*_scene("quad", "pbr", size), size, a.backend, a.frames))
        varied.append(_time(*_scene("quad", "pbr", size, **variant), size, a.backend,
                            a.frames))
    return statistics.median(plain), statistics.median(varied)


if __name__ == "__main__":
    main()
