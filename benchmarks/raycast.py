"""Ray casts against a big mesh: the engine's BVH (engine.game.bvh, Numba) against
trimesh's ray intersector and a brute-force NumPy loop, side by side in one run.

    .venv/bin/python benchmarks/raycast.py [--triangles 1000000] [--rays 10000] [--json PATH]

Meshes (about ``--triangles`` triangles each):

    terrain   a ``heightfield`` of random hills (rows x cols grid, two triangles a cell)
    sphere    a ``uv_sphere`` with noise on its radius (long thin triangles near the poles)

Rays: ``--rays`` rays from points above / around the mesh towards random points near its
surface (most hit, some miss), nearest hit only.

Rows, each timed in this process after a warm-up (Numba compiled, caches on disk):

    engine build   ``BVH(positions, faces)``: the tree over every triangle
    engine rays    ``BVH.intersect`` of all rays (distance and triangle of the nearest hit)
    trimesh build  the acceleration structure trimesh's ``mesh.ray`` builds on first use
                   (an Embree scene with embreex, else an R-tree with rtree)
    trimesh rays   ``mesh.ray.intersects_id(..., multiple_hits=False)`` on the same rays
    numpy rays     Moeller-Trumbore over every triangle per ray (NumPy, vectorised over
                   triangles) for a sample of rays, scaled to all rays: the cost without an
                   acceleration structure

trimesh's ray module needs ``rtree`` (or ``embreex`` for its Embree path); neither is a
dependency of this project. Where neither is importable the trimesh rows say so instead
of a time. Hits are compared: the engine's distances must equal the reference's where
both hit (relative 1e-6), and the hit/miss sets must agree on all but rays that graze an
edge.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import platform
import time
from pathlib import Path

import numpy as np

from engine.game.bvh import BVH
from engine.scene.procedural import heightfield, uv_sphere


def terrain(triangles: int, rng):
    n = int(math.sqrt(triangles / 2)) + 1
    x = np.linspace(0, 8 * np.pi, n)
    h = np.sin(x)[None, :] * np.cos(0.7 * x)[:, None] * 3 + rng.normal(0, 0.05, (n, n))
    mesh = heightfield(h, size=(100.0, 100.0))
    return mesh.positions.astype(np.float64) + mesh.origin, mesh.faces


def sphere(triangles: int, rng):
    rings = int(math.sqrt(triangles / 4))
    mesh = uv_sphere(10.0, 2 * rings, rings)
    p = mesh.positions.astype(np.float64) + mesh.origin
    p *= (1 + rng.normal(0, 0.002, len(p)))[:, None]
    return p, mesh.faces


def make_rays(kind, rays: int, rng):
    """Unit rays: terrain, from 30 units up towards random points of the field (a few
    beyond its edge); sphere, from a shell of radius 40 towards points near the centre."""
    if kind == "terrain":
        origin = np.column_stack([rng.uniform(-50, 50, rays), np.full(rays, 30.0),
                                  rng.uniform(-50, 50, rays)])
        target = np.column_stack([rng.uniform(-55, 55, rays), np.zeros(rays),
                                  rng.uniform(-55, 55, rays)])
    else:
        d = rng.normal(size=(rays, 3))
        origin = 40 * d / np.linalg.norm(d, axis=1, keepdims=True)
        target = rng.normal(0, 6, (rays, 3))
    direction = target - origin
    return origin, direction / np.linalg.norm(direction, axis=1, keepdims=True)


def brute_force(o, d, v0, e1, e2):
    """Nearest hit distance (inf for a miss) of the ray o + t d over every triangle
    (v0, edges e1, e2), Moeller-Trumbore in NumPy: the reference of the benchmark and of
    tests/game/test_raycast.py."""
    p = np.cross(d, e2)
    det = np.einsum("ij,ij->i", e1, p)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = o - v0
        u = np.einsum("ij,ij->i", s, p) / det
        q = np.cross(s, e1)
        v = q @ d / det
        t = np.einsum("ij,ij->i", e2, q) / det
    ok = (u >= 0) & (v >= 0) & (u + v <= 1) & (t >= 0)
    return t[ok].min() if ok.any() else np.inf


def first_query(cls, mesh, o, d):
    """The intersector with its acceleration structure built (by a first one-ray query)."""
    intersector = cls(mesh)
    intersector.intersects_id(o[:1], d[:1], multiple_hits=False)
    return intersector


def timed(fn, repeat=1):
    best = math.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def trimesh_backends() -> dict:
    """trimesh's ray intersectors importable here: name -> (class, rays to time)."""
    out = {}
    if importlib.util.find_spec("embreex") is not None:
        from trimesh.ray.ray_pyembree import RayMeshIntersector

        out["trimesh embree"] = (RayMeshIntersector, None)
    if importlib.util.find_spec("rtree") is not None:
        from trimesh.ray.ray_triangle import RayMeshIntersector

        out["trimesh rtree"] = (RayMeshIntersector, 100)  # slow: a sample, scaled
    return out


def run_mesh(kind, triangles, rays, rng, sample):
    p, faces = (terrain if kind == "terrain" else sphere)(triangles, rng)
    o, d = make_rays(kind, rays, rng)
    row = {"mesh": kind, "triangles": len(faces), "rays": rays}
    row["engine_build_s"], bvh = timed(lambda: BVH(p, faces))
    row["engine_rays_s"], (t, _tri) = timed(lambda: bvh.intersect(o, d), repeat=3)
    row["engine_hits"] = int(np.isfinite(t).sum())
    tri_v = p[faces]
    v0, e1, e2 = tri_v[:, 0], tri_v[:, 1] - tri_v[:, 0], tri_v[:, 2] - tri_v[:, 0]
    pick = rng.choice(rays, sample, replace=False)
    t0 = time.perf_counter()
    ref = np.array([brute_force(o[i], d[i], v0, e1, e2) for i in pick])
    row["numpy_rays_s"] = (time.perf_counter() - t0) * rays / sample
    both = np.isfinite(ref) & np.isfinite(t[pick])
    row["numpy_agree"] = bool(np.allclose(t[pick][both], ref[both], rtol=1e-6)
                              and np.sum(np.isfinite(ref) != np.isfinite(t[pick])) <= 1)
    row["peers"] = {}
    for name, (cls, sample_rays) in trimesh_backends().items():
        import trimesh

        mesh = trimesh.Trimesh(p, faces, process=False)
        peer = {}
        peer["build_s"], intersector = timed(lambda cls=cls, mesh=mesh: first_query(cls, mesh, o, d))
        k = rays if sample_rays is None else min(sample_rays, rays)
        peer["rays_s"], (_tri, index_ray, locations) = timed(
            lambda intersector=intersector, k=k: intersector.intersects_id(
                o[:k], d[:k], multiple_hits=False, return_locations=True))
        peer["rays_s"] *= rays / k
        peer["estimated"] = k < rays
        dist = np.full(k, np.inf)
        dist[index_ray] = np.einsum("ij,ij->i", locations - o[index_ray], d[index_ray])
        both = np.isfinite(dist) & np.isfinite(t[:k])
        peer["hits"], peer["rays_compared"] = int(np.isfinite(dist).sum()), k
        peer["engine_hits"] = int(np.isfinite(t[:k]).sum())
        peer["largest_rel_difference"] = float(np.max(np.abs(dist[both] - t[:k][both])
                                                      / t[:k][both]))
        row["peers"][name] = peer
    return row


def versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("numpy", "numba", "trimesh", "embreex", "rtree"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def long(s):
    return f"{s:.0f} s" if s >= 10 else ms(s)


def ms(s):
    return f"{s * 1e3:.0f} ms" if s >= 0.1 else f"{s * 1e3:.1f} ms"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--triangles", type=int, default=1_000_000)
    ap.add_argument("--rays", type=int, default=10_000)
    ap.add_argument("--sample", type=int, default=20, help="rays for the NumPy reference")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    # warm-up: compile (or load from Numba's disk cache) the kernels on a small mesh
    p, f = terrain(2000, rng)
    BVH(p, f).intersect(*make_rays("terrain", 10, rng))
    rows = [run_mesh(kind, args.triangles, args.rays, rng, args.sample)
            for kind in ("terrain", "sphere")]
    print(f"ray casts, {args.rays:,} rays, nearest hit; {platform.processor() or platform.machine()}")
    print("| mesh | triangles | path | build | rays | per ray | build vs engine | rays vs engine |")
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    for r in rows:
        eb, er = r["engine_build_s"], r["engine_rays_s"]
        head = f"| {r['mesh']} | {r['triangles']:,} |"
        print(f"{head} engine BVH (Numba) | {ms(eb)} | {ms(er)} | "
              f"{er / r['rays'] * 1e6:.1f} us | 1.00x | 1.00x |")
        for name, peer in r["peers"].items():
            est = " (est.)" if peer["estimated"] else ""
            print(f"{head} {name} | {ms(peer['build_s'])} | {ms(peer['rays_s'])}{est} | "
                  f"{peer['rays_s'] / r['rays'] * 1e6:.1f} us | {peer['build_s'] / eb:.2f}x | "
                  f"{peer['rays_s'] / er:.2f}x |")
        if not r["peers"]:
            print(f"{head} trimesh | n/a: needs rtree or embreex, not installed | | | | |")
        print(f"{head} NumPy brute force | none | {long(r['numpy_rays_s'])} (est.) | "
              f"{r['numpy_rays_s'] / r['rays'] * 1e3:.0f} ms | | {r['numpy_rays_s'] / er:,.0f}x |")
    for r in rows:
        print(f"{r['mesh']}: engine {r['engine_hits']:,} hits; NumPy agrees on "
              f"{args.sample} rays: {r['numpy_agree']}")
        for name, peer in r["peers"].items():
            print(f"  {name}: {peer['hits']:,} hits of {peer['rays_compared']:,} rays (engine "
                  f"{peer['engine_hits']:,}), largest relative distance difference "
                  f"{peer['largest_rel_difference']:.1e}")
    if args.json is not None:
        args.json.write_text(json.dumps({"rows": rows, "machine": platform.platform(),
                                         "date": time.strftime("%Y-%m-%d"),
                                         "versions": versions()}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
