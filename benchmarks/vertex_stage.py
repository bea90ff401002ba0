"""The surface vertex stage (Numba), measured side by side in one run:

    .venv/bin/python benchmarks/vertex_stage.py [--vertices 1000000] [--repeats 15] [--json PATH]

1. inline     ``numba_vertex.surface_vertices_numba`` on ``--vertices`` lit vertices (10
              objects) against a plain ``prange`` loop written here with the same
              arithmetic inline (clip = VP M p, position = M p, the normal by the
              inverse transpose and renormalised, the other varyings copied; each
              object's matrices in locals, made beforehand, the same blocks of
              vertices per work item). Target (issue 19): <= 1.5x.
2. skinned    100 characters x 5,000 vertices x 4 influences (30 joints each, every
              skeleton in its own pose) through the vertex stage, against the same
              vertices unskinned. Target (issue 20): <= 1.5x.
3. joints     the per-frame joint-matrix update of those 100 skeletons x 30 joints
              (``engine.render.deform.DeformTables.update``: every skin at once)
              against the per-skin NumPy evaluation ``engine.scene.deform.joint_matrices``
              called for each skeleton (the reference). Target: 1 ms-class work.
4. morph      a 10^5-vertex mesh with 8 morph targets against the same mesh unmorphed.
              Target (issue 20): <= 2x.

Each figure is the median of ``--repeats`` calls, the two sides of a ratio alternated
so that machine load hits them alike. Compare figures within one invocation only.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from pathlib import Path

import numba
import numpy as np

from engine import Mesh, Node, PerspectiveCamera, Renderer, Scene
from engine.render.attributes import VARYING_COUNT, packed_offset
from engine.render.backends.numba_vertex import (
    VertexBuffers,
    blocks_of,
    surface_vertices_numba,
)
from engine.scene.deform import Skin, joint_matrices
from engine.scene.transforms import trs_matrix


@numba.njit(cache=True, boundscheck=False, error_model="numpy")
def _inline_span(p, lo, hi, k, mvp, m, nm, attrs, clip, vary):
    a00, a01, a02, a03 = mvp[k, 0, 0], mvp[k, 0, 1], mvp[k, 0, 2], mvp[k, 0, 3]
    a10, a11, a12, a13 = mvp[k, 1, 0], mvp[k, 1, 1], mvp[k, 1, 2], mvp[k, 1, 3]
    a20, a21, a22, a23 = mvp[k, 2, 0], mvp[k, 2, 1], mvp[k, 2, 2], mvp[k, 2, 3]
    a30, a31, a32, a33 = mvp[k, 3, 0], mvp[k, 3, 1], mvp[k, 3, 2], mvp[k, 3, 3]
    m00, m01, m02, m03 = m[k, 0, 0], m[k, 0, 1], m[k, 0, 2], m[k, 0, 3]
    m10, m11, m12, m13 = m[k, 1, 0], m[k, 1, 1], m[k, 1, 2], m[k, 1, 3]
    m20, m21, m22, m23 = m[k, 2, 0], m[k, 2, 1], m[k, 2, 2], m[k, 2, 3]
    n00, n01, n02 = nm[k, 0, 0], nm[k, 0, 1], nm[k, 0, 2]
    n10, n11, n12 = nm[k, 1, 0], nm[k, 1, 1], nm[k, 1, 2]
    n20, n21, n22 = nm[k, 2, 0], nm[k, 2, 1], nm[k, 2, 2]
    for i in range(lo, hi):
        x, y, z = np.float64(p[i, 0]), np.float64(p[i, 1]), np.float64(p[i, 2])
        clip[i, 0] = a00 * x + a01 * y + a02 * z + a03
        clip[i, 1] = a10 * x + a11 * y + a12 * z + a13
        clip[i, 2] = a20 * x + a21 * y + a22 * z + a23
        clip[i, 3] = a30 * x + a31 * y + a32 * z + a33
        vary[i, 0] = m00 * x + m01 * y + m02 * z + m03
        vary[i, 1] = m10 * x + m11 * y + m12 * z + m13
        vary[i, 2] = m20 * x + m21 * y + m22 * z + m23
        a, b, c = attrs[i, 0], attrs[i, 1], attrs[i, 2]
        vx = n00 * a + n01 * b + n02 * c
        vy = n10 * a + n11 * b + n12 * c
        vz = n20 * a + n21 * b + n22 * c
        length = math.sqrt(vx * vx + vy * vy + vz * vz)
        vary[i, 3], vary[i, 4], vary[i, 5] = vx / length, vy / length, vz / length
        for col in range(3, attrs.shape[1]):
            vary[i, 3 + col] = attrs[i, col]


@numba.njit(parallel=True, cache=True, boundscheck=False, error_model="numpy")
def _inline(p, blocks, runs, mvp, m, nm, attrs, clip, vary):
    # the reference: the same arithmetic as the vertex stage written inline, each run's
    # matrices in locals, blocks of vertices over the threads
    for b in numba.prange(blocks.shape[0]):
        _inline_span(p, blocks[b, 0], blocks[b, 1], runs[blocks[b, 2], 2], mvp, m, nm,
                     attrs, clip, vary)


def _median(fn, repeats):
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def _pair(a, b, repeats):
    """Medians (s) of a and b, alternated call by call."""
    ta, tb = [], []
    for _ in range(repeats):
        for fn, acc in ((a, ta), (b, tb)):
            t0 = time.perf_counter()
            fn()
            acc.append(time.perf_counter() - t0)
    return statistics.median(ta), statistics.median(tb)


def inline_section(n, repeats):
    rng = np.random.default_rng(1)
    pos = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    k = 10
    runs = np.stack([np.arange(k) * (n // k), (np.arange(k) + 1) * (n // k),
                     np.arange(k)], axis=1).astype(np.int64)
    runs[-1, 1] = n
    oid = np.repeat(np.arange(k, dtype=np.uint32), np.diff(np.r_[runs[:, 0], n]))
    model = np.stack([trs_matrix(rng.normal(size=3), (0, 0, 0, 1), (1, 2, 1))
                      for _ in range(k)]).astype(np.float32)
    vp = np.eye(4, dtype=np.float32)
    attrs = rng.uniform(0, 1, (n, VARYING_COUNT - 3))
    out = VertexBuffers()

    def stage():
        surface_vertices_numba(pos, oid, model, vp, attrs, runs, out=out)

    m = model.astype(np.float64)
    mvp = np.einsum("ij,kjl->kil", vp.astype(np.float64), m)
    nm = np.transpose(np.linalg.inv(m[:, :3, :3]), (0, 2, 1)).copy()
    clip, vary = np.empty((n, 4)), np.empty((n, VARYING_COUNT))

    blocks = blocks_of(runs)

    def inline():
        _inline(pos, blocks, runs, mvp, m, nm, attrs, clip, vary)

    stage(), inline()
    a, b = _pair(stage, inline, repeats)
    print(f"1. vertex stage {n:,} lit vertices, {numba.get_num_threads()} threads: "
          f"{a * 1e3:.2f} ms ({a / n * 1e9:.1f} ns/vertex); inline prange loop "
          f"{b * 1e3:.2f} ms ({b / n * 1e9:.1f} ns/vertex); ratio {a / b:.2f}x "
          f"(target <= 1.5x)")
    return {"vertices": n, "stage_ms": a * 1e3, "inline_ms": b * 1e3, "ratio": a / b}


def _characters(count=100, verts=5000, joints=30, influences=4, skinned=True):
    rng = np.random.default_rng(2)
    pos = rng.uniform(-1, 1, (verts, 3))
    faces = rng.integers(0, verts, (verts, 3))
    j = rng.integers(0, joints, (verts, influences))
    w = rng.uniform(0.1, 1, (verts, influences))
    mesh = Mesh(pos, faces, normals=rng.normal(size=(verts, 3)),
                joints=j if skinned else None, weights=w if skinned else None)
    scene = Scene()
    nodes = []
    for c in range(count):
        root = scene.add(Node(f"character {c}", position=(c % 10 * 3.0, 0, -(c // 10) * 3.0)))
        bones, up = [], root
        for b in range(joints):  # a chain, each bone in its own (random) pose
            up = up.add(Node(f"bone {b}", position=(0, 0.1, 0),
                             rotation=tuple(rng.normal(size=4))))
            bones.append(up)
        node = root.add(Node("body", geometry=mesh))
        if skinned:
            node.skin = Skin(bones, np.tile(np.eye(4), (joints, 1, 1)))
        nodes.append(node)
    cam = scene.add(PerspectiveCamera(fov_y=60, aspect=16 / 9))
    cam.position = (15, 10, 20)
    cam.look_at((15, 0, -15))
    return scene, cam, nodes


def _stage_call(r):
    """The vertex stage of renderer ``r``'s last frame as a repeatable call."""
    b = r.batch
    prims = r.primitives
    be = r.backend
    attrs = be.attributes(b, prims)
    deform = be.deformation(b, prims)
    vp = b.view_projection(r.camera)
    out = VertexBuffers()

    def call():
        surface_vertices_numba(b.positions, b.object_id, b.model_host, vp,
                               attrs, b.runs, out=out, deform=deform)

    return call, deform


def skinned_section(repeats):
    calls = {}
    for skinned in (True, False):
        scene, cam, _ = _characters(skinned=skinned)
        r = Renderer(scene, cam, (320, 180), backend="numba")
        r.render()
        calls[skinned] = _stage_call(r)
    (skin_call, _), (plain_call, _) = calls[True], calls[False]
    skin_call(), plain_call()
    a, b = _pair(skin_call, plain_call, repeats)
    n = 100 * 5000
    print(f"2. 100 characters x 5,000 vertices x 4 influences: skinned {a * 1e3:.2f} ms, "
          f"unskinned {b * 1e3:.2f} ms ({n:,} vertices): ratio {a / b:.2f}x (target <= 1.5x)")
    return {"vertices": n, "skinned_ms": a * 1e3, "unskinned_ms": b * 1e3, "ratio": a / b}


def joints_section(repeats):
    scene, cam, nodes = _characters()
    r = Renderer(scene, cam, (320, 180), backend="numba")
    r.render()
    tables = r.backend.deformation(r.batch, r.primitives)
    batch = r.batch

    def vectorised():
        tables.update(batch)

    def reference():
        for node in nodes:
            joint_matrices(node.skin, node.world_matrix)

    vectorised(), reference()
    a, b = _pair(vectorised, reference, repeats)
    print(f"3. joint matrices, 100 skeletons x 30 joints: every skin at once {a * 1e3:.3f} ms"
          f", per-skin NumPy reference {b * 1e3:.3f} ms: ratio {a / b:.2f}x")
    return {"vectorised_ms": a * 1e3, "reference_ms": b * 1e3, "ratio": a / b}


def morph_section(repeats):
    rng = np.random.default_rng(3)
    n = 10**5
    pos = rng.uniform(-1, 1, (n, 3))
    faces = rng.integers(0, n, (n, 3))
    normals = rng.normal(size=(n, 3))
    calls = {}
    for morphed in (True, False):
        mesh = Mesh(pos, faces, normals=normals,
                    morph_positions=rng.normal(size=(8, n, 3)) * 0.01 if morphed else None,
                    morph_normals=rng.normal(size=(8, n, 3)) * 0.01 if morphed else None,
                    morph_weights=rng.uniform(0, 1, 8) if morphed else None)
        scene = Scene()
        scene.add(Node("blob", geometry=mesh))
        cam = scene.add(PerspectiveCamera(fov_y=60, aspect=16 / 9))
        cam.position = (0, 0, 4)
        r = Renderer(scene, cam, (320, 180), backend="numba")
        r.render()
        calls[morphed] = _stage_call(r)[0]
    calls[True](), calls[False]()
    a, b = _pair(calls[True], calls[False], repeats)
    print(f"4. 10^5 vertices, 8 morph targets: {a * 1e3:.2f} ms, unmorphed {b * 1e3:.2f} ms: "
          f"ratio {a / b:.2f}x (target <= 2x)")
    return {"vertices": n, "morphed_ms": a * 1e3, "unmorphed_ms": b * 1e3, "ratio": a / b}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vertices", type=int, default=10**6)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--json", type=Path, default=None, help="also write the figures as JSON")
    args = ap.parse_args(argv)
    assert packed_offset("normal") == 0  # the inline loop reads the normal first
    rows = {"inline": inline_section(args.vertices, args.repeats),
            "skinned": skinned_section(args.repeats), "joints": joints_section(args.repeats),
            "morph": morph_section(args.repeats)}
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
