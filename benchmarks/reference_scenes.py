"""The scenes the engine is compared on against the GL reference (benchmarks/gl_reference.py).

    .venv/bin/python benchmarks/reference_scenes.py OUT_DIR   # writes OUT_DIR/pbr_lights.gltf

``write_pbr_gltf(folder)`` writes a glTF 2.0 file by hand (``pbr_lights.gltf``, its
``.bin`` buffer and PNG textures): no model in ../shared/ref-assets has normal,
occlusion, emissive or metallic-roughness textures or KHR_lights_punctual lights. It
holds

    floor       an 8 x 8 quad of bevelled tiles: base colour, metallic-roughness
                (tiles roughness 0.45, grooves 1), occlusion (dark grooves) and normal
                (the bevels) textures, repeated 4 times, with TANGENT
    gold        a UV sphere, metallic 1, roughness 0.3, no textures
    bumpy       a UV sphere: striped base colour, a normal map of dimples, an emissive
                band (emissiveTexture x emissiveFactor x KHR_materials_emissive_strength)
    crate       a box with a metallic-roughness checker (metal / rough squares) and an
                occlusion map on TEXCOORD_1 (texCoord 1)
    lights      KHR_lights_punctual: a directional sun (lux), a blue point light and a
                spot light (candela) aimed at the floor, placed by their nodes
    camera      a perspective camera node

``bunny_scene(size)`` is the quality frame's scene: the Stanford bunny
(../shared/ref-assets/classic/stanford-bunny.obj) standing on a plane, both "pbr"
materials, one directional light with a shadow map and an ambient light.

Texture coordinates follow glTF (u right, v down the image) and the tangents its
convention: xyz along increasing u, ``w`` so that ``cross(N, T) w`` points along
increasing v (engine.scene.tangents says the same), which is also the direction the
normal maps' green channel encodes.
"""

from __future__ import annotations

import io
import json
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BUNNY = ROOT.parent / "shared" / "ref-assets" / "classic" / "stanford-bunny.obj"
PBR_FILE = "pbr_lights.gltf"

__all__ = ["BUNNY", "PBR_FILE", "bunny_scene", "pbr_scene", "write_pbr_gltf"]


# ------------------------------------------------------------------ textures
def _png(rgb) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.fromarray(np.asarray(rgb, np.uint8)).save(out, "PNG")
    return out.getvalue()


def _normal_rgb(height, strength):
    """RGB of the tangent-space normals of a height field (rows along v, columns along
    u): ``normalize(-dh/du, -dh/dv, 1)`` encoded as ``(n + 1) / 2``."""
    du = np.gradient(height, axis=1) * strength
    dv = np.gradient(height, axis=0) * strength
    n = np.dstack([-du, -dv, np.ones_like(height)])
    n /= np.linalg.norm(n, axis=-1, keepdims=True)
    return np.rint((n + 1) / 2 * 255)


def _tile_textures(size=128, tiles=2):
    """Base colour, metallic-roughness, occlusion and normal images of bevelled tiles."""
    t = (np.arange(size) + 0.5) / size * tiles
    f = t - np.floor(t)
    edge = np.minimum(f, 1 - f)                      # distance to a tile border, in tiles
    e = np.minimum(edge[None, :], edge[:, None])
    height = np.clip(e / 0.08, 0.0, 1.0)             # 0 in the groove, 1 on the tile
    cell = (np.floor(t)[None, :] + np.floor(t)[:, None]) % 2
    shade = np.where(cell[..., None] > 0, [182, 160, 128], [120, 134, 150])
    base = np.where(height[..., None] > 0.02, shade, [70, 62, 56])
    groove = height < 0.5
    mr = np.dstack([np.zeros_like(height), np.where(groove, 255, 115), np.zeros_like(height)])
    occ = np.repeat(np.rint(255 * (0.35 + 0.65 * height))[..., None], 3, axis=2)
    return base, mr, occ, _normal_rgb(height, 6.0)


def _ball_textures(size=128):
    """Base colour stripes, a dimpled normal map and an emissive band for a UV sphere
    (u around, v from the north pole)."""
    u = (np.arange(2 * size) + 0.5) / (2 * size)
    v = (np.arange(size) + 0.5) / size
    stripes = (np.floor(u * 12)[None, :] % 2) * np.ones((size, 1))
    base = np.where(stripes[..., None] > 0, [200, 60, 50], [235, 225, 205])
    fu, fv = u * 16 - np.floor(u * 16), v * 8 - np.floor(v * 8)
    r2 = (fu[None, :] - 0.5) ** 2 + (fv[:, None] - 0.5) ** 2
    height = -np.clip(1 - r2 / 0.12, 0, None) ** 2   # round dimples
    band = (np.abs(v - 0.5) < 0.05)[:, None] * np.ones((1, 2 * size))
    emissive = np.where(band[..., None] > 0, [255, 230, 150], [0, 0, 0])
    return base, _normal_rgb(height, 3.0), emissive


def _crate_textures(size=64):
    t = (np.arange(size) + 0.5) / size
    cell = (np.floor(t * 4)[None, :] + np.floor(t * 4)[:, None]) % 2
    mr = np.dstack([np.zeros_like(cell), np.where(cell > 0, 60, 230), np.where(cell > 0, 255, 0)])
    base = np.dstack([np.full_like(cell, 210), np.full_like(cell, 170), np.full_like(cell, 90)])
    e = np.minimum(np.minimum(t, 1 - t)[None, :], np.minimum(t, 1 - t)[:, None])
    occ = np.repeat(np.rint(255 * np.clip(0.4 + 4 * e, 0, 1))[..., None], 3, axis=2)
    return base, mr, occ


# ------------------------------------------------------------------ geometry
def _quad(half):
    p = np.array([[-half, 0, -half], [half, 0, -half], [half, 0, half], [-half, 0, half]])
    n = np.tile([0.0, 1.0, 0.0], (4, 1))
    uv = np.array([[0, 0], [4, 0], [4, 4], [0, 4]], np.float64)
    # u along +x, v along +z: cross(N, +x) = -z, so w = -1 gives B = +z
    t = np.tile([1.0, 0.0, 0.0, -1.0], (4, 1))
    return p, n, uv, t, np.array([[0, 2, 1], [0, 3, 2]])


def _sphere(radius, rings=48, segments=96):
    """UV sphere: u = longitude / 2 pi (increasing towards +x from +z... eastwards),
    v = polar angle / pi (0 at the north pole). Analytic tangents dp/du, w from dp/dv."""
    th = np.linspace(0, np.pi, rings + 1)                 # polar angle
    ph = np.linspace(0, 2 * np.pi, segments + 1)          # longitude
    T, P = np.meshgrid(th, ph, indexing="ij")
    n = np.stack([np.sin(T) * np.sin(P), np.cos(T), np.sin(T) * np.cos(P)], -1)
    dpdu = np.stack([np.cos(P), np.zeros_like(P), -np.sin(P)], -1)   # along +phi
    dpdv = np.stack([np.cos(T) * np.sin(P), -np.sin(T), np.cos(T) * np.cos(P)], -1)
    w = np.sign(np.einsum("...i,...i", np.cross(n, dpdu), dpdv))
    uv = np.stack([P / (2 * np.pi), T / np.pi], -1)
    idx = np.arange((rings + 1) * (segments + 1)).reshape(rings + 1, segments + 1)
    a, b = idx[:-1, :-1].ravel(), idx[:-1, 1:].ravel()
    c, d = idx[1:, 1:].ravel(), idx[1:, :-1].ravel()
    faces = np.concatenate([np.stack([a, d, c], 1), np.stack([a, c, b], 1)])
    tangent = np.concatenate([dpdu, w[..., None]], -1).reshape(-1, 4)
    return (n * radius).reshape(-1, 3), n.reshape(-1, 3), uv.reshape(-1, 2), tangent, faces


def _box(half):
    """A cube: 4 vertices per face, uv0 0..1 per face, uv1 the faces side by side."""
    pos, nor, uv, tan, faces, uv1 = [], [], [], [], [], []
    axes = [np.array(a, float) for a in ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0),
                                         (0, 0, 1), (0, 0, -1))]
    for k, nrm in enumerate(axes):
        up = np.array([0.0, 1.0, 0.0]) if abs(nrm[1]) < 0.5 else np.array([0.0, 0.0, -1.0])
        right = np.cross(up, nrm)
        down = -up
        corners = [nrm - right + up, nrm + right + up, nrm + right - up, nrm - right - up]
        base = len(pos)
        for c, (s, t) in zip(corners, ((0, 0), (1, 0), (1, 1), (0, 1))):
            pos.append(c * half)
            nor.append(nrm)
            uv.append((s, t))
            uv1.append(((k + s) / 6.0, t))
            w = 1.0 if np.dot(np.cross(nrm, right), down) >= 0 else -1.0
            tan.append((*right, w))
        faces += [[base, base + 3, base + 2], [base, base + 2, base + 1]]
    return (np.array(pos), np.array(nor), np.array(uv), np.array(tan), np.array(faces),
            np.array(uv1))


def _look_quaternion(eye, target):
    """(x, y, z, w) rotating -Z onto ``target - eye`` with +Y kept up."""
    f = np.asarray(target, float) - np.asarray(eye, float)
    f /= np.linalg.norm(f)
    up = np.array([0.0, 1.0, 0.0]) if abs(f[1]) < 0.99 else np.array([0.0, 0.0, -1.0])
    r = np.cross(f, up)
    r /= np.linalg.norm(r)
    u = np.cross(r, f)
    m = np.eye(4)
    m[:3, :3] = np.column_stack([r, u, -f])
    from trimesh.transformations import quaternion_from_matrix

    w, x, y, z = quaternion_from_matrix(m)  # trimesh's order is (w, x, y, z)
    return [float(x), float(y), float(z), float(w)]


# ------------------------------------------------------------------ the file
class _Writer:
    def __init__(self):
        self.bin = bytearray()
        self.doc = {"asset": {"version": "2.0", "generator": "benchmarks/reference_scenes.py"},
                    "buffers": [], "bufferViews": [], "accessors": [], "meshes": [],
                    "nodes": [], "materials": [], "images": [], "textures": [],
                    "samplers": [{"magFilter": 9729, "minFilter": 9987, "wrapS": 10497,
                                  "wrapT": 10497}]}
        self.files = {}

    def accessor(self, a, component=5126, target=34962):
        a = np.ascontiguousarray(a, "<f4" if component == 5126 else "<u4")
        self.bin += b"\0" * (-len(self.bin) % 4)
        self.doc["bufferViews"].append({"buffer": 0, "byteOffset": len(self.bin),
                                        "byteLength": a.nbytes, "target": target})
        self.bin += a.tobytes()
        acc = {"bufferView": len(self.doc["bufferViews"]) - 1, "componentType": component,
               "count": int(a.shape[0]) if component == 5126 else int(a.size),
               "type": {1: "SCALAR", 2: "VEC2", 3: "VEC3", 4: "VEC4"}[
                   a.shape[1] if component == 5126 else 1]}
        if component == 5126 and a.shape[1] == 3:
            acc["min"], acc["max"] = a.min(0).tolist(), a.max(0).tolist()
        self.doc["accessors"].append(acc)
        return len(self.doc["accessors"]) - 1

    def texture(self, name, rgb):
        self.files[f"{name}.png"] = _png(rgb)
        self.doc["images"].append({"uri": f"{name}.png"})
        self.doc["textures"].append({"source": len(self.doc["images"]) - 1, "sampler": 0})
        return len(self.doc["textures"]) - 1

    def mesh(self, name, geometry, material, translation, rotation=None, uv1=None):
        p, n, uv, t, faces = geometry
        attrs = {"POSITION": self.accessor(p), "NORMAL": self.accessor(n),
                 "TEXCOORD_0": self.accessor(uv), "TANGENT": self.accessor(t)}
        if uv1 is not None:
            attrs["TEXCOORD_1"] = self.accessor(uv1)
        self.doc["materials"].append(material)
        self.doc["meshes"].append({"name": name, "primitives": [{
            "attributes": attrs, "indices": self.accessor(faces.ravel(), 5125, 34963),
            "material": len(self.doc["materials"]) - 1}]})
        node = {"name": name, "mesh": len(self.doc["meshes"]) - 1,
                "translation": [float(x) for x in translation]}
        if rotation is not None:
            node["rotation"] = rotation
        self.doc["nodes"].append(node)


def write_pbr_gltf(folder) -> Path:
    """Write ``pbr_lights.gltf`` (+ ``pbr_lights.bin`` and PNG textures) into ``folder``
    (created when missing); returns the .gltf path. Deterministic: the same bytes every
    time."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    wr = _Writer()
    base, mr, occ, nrm = _tile_textures()
    floor_mat = {"name": "tiles", "pbrMetallicRoughness": {
        "baseColorTexture": {"index": wr.texture("tiles_base", base)},
        "metallicRoughnessTexture": {"index": wr.texture("tiles_mr", mr)},
        "metallicFactor": 1.0, "roughnessFactor": 1.0},
        "occlusionTexture": {"index": wr.texture("tiles_occlusion", occ), "strength": 0.8},
        "normalTexture": {"index": wr.texture("tiles_normal", nrm), "scale": 1.0}}
    wr.mesh("floor", _quad(4.0), floor_mat, (0, 0, 0))
    wr.mesh("gold", _sphere(0.8), {"name": "gold", "pbrMetallicRoughness": {
        "baseColorFactor": [1.0, 0.78, 0.34, 1.0], "metallicFactor": 1.0,
        "roughnessFactor": 0.3}}, (-1.4, 0.8, 0.0))
    bb, bn, be = _ball_textures()
    wr.mesh("bumpy", _sphere(0.8), {
        "name": "bumpy", "pbrMetallicRoughness": {
            "baseColorTexture": {"index": wr.texture("ball_base", bb)},
            "metallicFactor": 0.0, "roughnessFactor": 0.55},
        "normalTexture": {"index": wr.texture("ball_normal", bn), "scale": 0.8},
        "emissiveTexture": {"index": wr.texture("ball_emissive", be)},
        "emissiveFactor": [1.0, 0.6, 0.3],
        "extensions": {"KHR_materials_emissive_strength": {"emissiveStrength": 2.0}}},
        (1.4, 0.8, 0.3))
    cb, cmr, cocc = _crate_textures()
    p, n, uv, t, faces, uv1 = _box(0.5)
    wr.mesh("crate", (p, n, uv, t, faces), {
        "name": "crate", "pbrMetallicRoughness": {
            "baseColorTexture": {"index": wr.texture("crate_base", cb)},
            "metallicRoughnessTexture": {"index": wr.texture("crate_mr", cmr)}},
        "occlusionTexture": {"index": wr.texture("crate_occlusion", cocc), "texCoord": 1}},
        (0.1, 0.5, -1.6), rotation=[0.0, math.sin(0.3), 0.0, math.cos(0.3)], uv1=uv1)
    wr.doc["extensionsUsed"] = ["KHR_lights_punctual", "KHR_materials_emissive_strength"]
    wr.doc["extensions"] = {"KHR_lights_punctual": {"lights": [
        {"name": "sun", "type": "directional", "color": [1.0, 0.95, 0.85], "intensity": 2.2},
        {"name": "fill", "type": "point", "color": [0.55, 0.7, 1.0], "intensity": 14.0,
         "range": 60.0},
        {"name": "spot", "type": "spot", "color": [1.0, 0.9, 0.7], "intensity": 40.0,
         "spot": {"innerConeAngle": 0.2, "outerConeAngle": 0.42}}]}}
    for name, index, eye, target in (("sun", 0, (-3, 6, 4), (0, 0, 0)),
                                     ("fill", 1, (3.2, 2.2, 2.6), (0, 0, 0)),
                                     ("spot", 2, (0.4, 4.5, 1.2), (0.3, 0, 0.9))):
        wr.doc["nodes"].append({"name": f"{name} light", "translation": list(map(float, eye)),
                                "rotation": _look_quaternion(eye, target),
                                "extensions": {"KHR_lights_punctual": {"light": index}}})
    wr.doc["cameras"] = [{"type": "perspective", "perspective": {
        "yfov": 0.72, "aspectRatio": 1.5, "znear": 0.1, "zfar": 50.0}}]
    eye = (0.0, 2.7, 5.4)
    wr.doc["nodes"].append({"name": "camera", "camera": 0, "translation": list(eye),
                            "rotation": _look_quaternion(eye, (0.0, 0.45, 0.0))})
    wr.doc["scenes"] = [{"nodes": list(range(len(wr.doc["nodes"])))}]
    wr.doc["scene"] = 0
    wr.doc["buffers"] = [{"uri": "pbr_lights.bin", "byteLength": len(wr.bin)}]
    (folder / "pbr_lights.bin").write_bytes(bytes(wr.bin))
    for name, data in wr.files.items():
        (folder / name).write_bytes(data)
    path = folder / PBR_FILE
    path.write_text(json.dumps(wr.doc, indent=1))
    return path


def pbr_scene(path, size):
    """(scene, camera) of the file at ``path`` loaded by ``engine.load``: its lights, its
    camera, the Khronos PBR Neutral tone map (the lights are in physical units), and an
    ambient light (glTF has none) so that the occlusion maps, which scale only ambient
    light, show."""
    from engine import AmbientLight, Scene, load

    scene = Scene("pbr", background=(0.02, 0.02, 0.03), tone_map="pbr-neutral")
    scene.add(AmbientLight("sky", color=(0.8, 0.9, 1.0), intensity=0.35))
    model = scene.add(load(path))
    camera = model.cameras[0]
    camera.set_viewport(*size)
    return scene, camera


def bunny_scene(size, map_size=2048):
    """(scene, camera, sun): the bunny ("pbr", metallic 0, roughness 0.45) standing on a
    plane ("pbr", roughness 0.85), a directional light with a ``map_size`` shadow map,
    an ambient light, a camera framed on the bunny at azimuth 30, elevation 25 (the
    plane fills the rest of the frame). An icosphere of
    similar size stands in when ../shared/ref-assets is not there."""
    from engine import (
        AmbientLight,
        DirectionalLight,
        Material,
        Mesh,
        Node,
        PerspectiveCamera,
        Scene,
    )
    from engine.scene.graph import subtree_bounds

    if BUNNY.exists():
        import trimesh

        m = trimesh.load(BUNNY, force="mesh", process=False)
        pos, faces = np.asarray(m.vertices, np.float32), np.asarray(m.faces)
    else:
        from engine.scene.procedural import icosphere

        pos, faces = icosphere(6, radius=0.08)
        pos = pos.astype(np.float32) + [0, 0.08, 0]
    scene = Scene(background=(0.05, 0.06, 0.09))
    bunny = scene.add(Node("bunny", geometry=Mesh(pos, faces, material=Material(
        color=(0.85, 0.62, 0.42), shading="pbr", metallic=0.0, roughness=0.45))))
    lo, hi = scene.bounds()
    c, r = (lo + hi) / 2, float(np.max(hi - lo))
    plane = np.array([[-1, 0, -1], [1, 0, -1], [1, 0, 1], [-1, 0, 1]], np.float32) * 1.5 * r
    plane += [c[0], lo[1], c[2]]
    scene.add(Node("plane", geometry=Mesh(plane, [[0, 2, 1], [0, 3, 2]], material=Material(
        color=(0.7, 0.7, 0.7), shading="pbr", metallic=0.0, roughness=0.85))))
    sun = scene.add(DirectionalLight("sun", intensity=1.0, shadows=True,
                                     shadow_map_size=map_size,
                                     position=c + [r, 1.5 * r, 0.6 * r]))
    sun.look_at(c)
    scene.add(AmbientLight(intensity=0.2))
    w, h = size
    cam = scene.add(PerspectiveCamera(fov_y=50, aspect=w / h))
    cam.frame(subtree_bounds(bunny), azimuth=30, elevation=25, margin=1.3)
    return scene, cam, sun


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: reference_scenes.py OUT_DIR")
    print(write_pbr_gltf(sys.argv[1]))
