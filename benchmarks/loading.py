"""Load rates of files with many parts (issue 24 item 12), the inputs generated here:

    .venv/bin/python benchmarks/loading.py [--scale 1.0] [--out DIR]

    obj-groups   an OBJ of 20,000 one-triangle groups, each its own material, no library
                 (3 shared vertices; ~0.6 MB)
    gltf-nodes   a glTF of 10^5 nodes sharing one triangle mesh (~5 MB)
    gltf-meshes  a glTF of 10^5 nodes, each with its own triangle mesh (~26 MB)
    xyz-points   an XYZ text file of 10^7 points (~250 MB; ``--scale 0.1`` for 10^6)

``--scale`` multiplies every count. Each file is loaded with ``engine.io.load`` in a
fresh process, so the peak memory is that load's; it prints the time, MB/s, parts/s or
points/s, and the peak resident memory over the process's start. Each input is also
loaded at half its count in the same run and the time ratio printed (2.0 is
proportional): the ratio, not the absolute time, is what compares across machines.
"""

from __future__ import annotations

import argparse
import base64
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

_MEASURE = r"""
import logging, os, resource, sys, time
logging.disable(logging.WARNING)
from engine.io import load
def rss():
    return int(open('/proc/self/statm').read().split()[1]) * os.sysconf('SC_PAGE_SIZE')
start = rss()
t = time.perf_counter()
m = load(sys.argv[1])
dt = time.perf_counter() - t
parts = max(len(m.children), 1)
verts = sum(n.geometry.vertex_count for n in m.traverse() if n.geometry is not None)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(dt, parts, verts, peak - start)
"""


def obj_groups(path: Path, n: int) -> Path:
    lines = ["v 0 0 0\nv 1 0 0\nv 0 1 0\n"]
    lines += [f"g g{i}\nusemtl m{i}\nf 1 2 3\n" for i in range(n)]
    path.write_text("".join(lines))
    return path


def _gltf(path: Path, n: int, own: bool) -> Path:
    tri = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32)
    pos = (np.tile(tri, (n, 1)) + np.repeat(np.arange(n), 3)[:, None] * [1, 0, 0]
           if own else tri).astype(np.float32).tobytes()
    uri = "data:application/octet-stream;base64," + base64.b64encode(pos).decode()
    count = n if own else 1
    doc = {"asset": {"version": "2.0"}, "buffers": [{"byteLength": len(pos), "uri": uri}],
           "bufferViews": [{"buffer": 0, "byteLength": len(pos)}],
           "accessors": [{"bufferView": 0, "byteOffset": 36 * i, "componentType": 5126,
                          "count": 3, "type": "VEC3", "min": [i if own else 0, 0, 0],
                          "max": [(i if own else 0) + 1, 1, 0]} for i in range(count)],
           "meshes": [{"primitives": [{"attributes": {"POSITION": i}}]} for i in range(count)],
           "nodes": [{"mesh": i if own else 0, "translation": [0, 0, 0.0 if own else i]}
                     for i in range(n)],
           "scenes": [{"nodes": list(range(n))}], "scene": 0}
    path.write_text(json.dumps(doc))
    return path


def xyz_points(path: Path, n: int) -> Path:
    rng = np.random.default_rng(0)
    with open(path, "w") as fh:
        for start in range(0, n, 1_000_000):
            np.savetxt(fh, rng.uniform(-100, 100, (min(1_000_000, n - start), 3)), fmt="%.4f")
    return path


INPUTS = {
    "obj-groups": (20_000, "parts", lambda p, n: obj_groups(p.with_suffix(".obj"), n)),
    "gltf-nodes": (100_000, "parts", lambda p, n: _gltf(p.with_suffix(".gltf"), n, False)),
    "gltf-meshes": (100_000, "parts", lambda p, n: _gltf(p.with_suffix(".gltf"), n, True)),
    "xyz-points": (10_000_000, "points", lambda p, n: xyz_points(p.with_suffix(".xyz"), n)),
}


def measure(path: Path):
    out = subprocess.run([sys.executable, "-c", _MEASURE, str(path)], check=True,
                         capture_output=True, text=True).stdout.split()
    return float(out[0]), int(out[1]), int(out[2]), int(out[3])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies every count")
    ap.add_argument("--out", default=None, help="folder for the inputs (default: temporary)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.out or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for name, (count, unit, make) in INPUTS.items():
            n = max(2, int(count * args.scale))
            half = make(folder / f"{name}-half", n // 2)
            full = make(folder / name, n)
            t_half = measure(half)[0]
            dt, parts, verts, peak = measure(full)
            mb = full.stat().st_size / 1e6
            many = parts if unit == "parts" else verts
            print(f"{name:12s} {mb:8.1f} MB {many:>12,} {unit:6s} {dt:7.2f} s "
                  f"{mb / dt:7.1f} MB/s {many / dt:>12,.0f} {unit}/s  peak +{peak / 1e6:,.0f} MB"
                  f"  (x2 the count: x{dt / t_half:.2f} the time)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
