"""Writes the 3D files the examples load, all generated here (no third-party data):

    assets/torus_knot.ply   coloured triangle mesh (binary PLY) of a (2, 3) torus knot tube,
                            the default model of examples/model_viewer.py

Usage: python assets/make_assets.py [OUT_DIR]   (default: this folder)
"""

import sys
from pathlib import Path

import numpy as np
import trimesh


def torus_knot_mesh(p=2, q=3, segments=720, sides=16, tube=0.12):
    t = np.linspace(0, 2 * np.pi, segments, endpoint=False)

    def centre(tt):
        rr = (2 + np.cos(q * tt)) / 3
        return np.stack([rr * np.cos(p * tt), np.sin(q * tt) / 3, rr * np.sin(p * tt)], axis=-1)

    c = centre(t)
    tangent = centre(t + 1e-4) - centre(t - 1e-4)
    tangent /= np.linalg.norm(tangent, axis=1, keepdims=True)
    normal = np.cross(tangent, [0.0, 1.0, 0.0])
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    binormal = np.cross(tangent, normal)
    a = np.linspace(0, 2 * np.pi, sides, endpoint=False)
    ring = (np.cos(a)[None, :, None] * normal[:, None, :] + np.sin(a)[None, :, None] * binormal[:, None, :])
    verts = (c[:, None, :] + tube * ring).reshape(-1, 3)
    i, j = np.meshgrid(np.arange(segments), np.arange(sides), indexing="ij")
    v00 = i * sides + j
    v10 = ((i + 1) % segments) * sides + j
    v01 = i * sides + (j + 1) % sides
    v11 = ((i + 1) % segments) * sides + (j + 1) % sides
    faces = np.concatenate([np.stack([v00, v10, v11], -1).reshape(-1, 3),
                            np.stack([v00, v11, v01], -1).reshape(-1, 3)])
    hue = np.repeat(t / (2 * np.pi), sides)
    colors = np.stack([0.5 + 0.5 * np.cos(2 * np.pi * (hue + k / 3)) for k in range(3)], axis=1)
    return trimesh.Trimesh(verts, faces, vertex_colors=(colors * 255).astype(np.uint8),
                           process=False)


def main(out_dir=None) -> list[Path]:
    out = Path(out_dir) if out_dir else Path(__file__).resolve().parent
    out.mkdir(parents=True, exist_ok=True)
    path = out / "torus_knot.ply"
    torus_knot_mesh().export(path)
    return [path]


if __name__ == "__main__":
    for path in main(sys.argv[1] if len(sys.argv) > 1 else None):
        print(f"wrote {path}")
