"""The Khronos samples RiggedSimple (a skinned cylinder, 2 joints) and SimpleMorph (a
triangle, 2 morph targets) animated: vertex positions out of the renderer's vertex
stage at chosen key times equal the glTF formulas evaluated here in NumPy from the
file's JSON and buffers decoded by hand (independent of the loader), rendered frames
change over the clip, and ``frustum render --animation 0`` plays them."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from engine import PerspectiveCamera, Renderer, Scene
from engine.cli import main
from engine.io import load
from engine.scene.deform import posed_vertices

RIGGED = "gltf-khronos/RiggedSimple/RiggedSimple.gltf"
MORPH = "gltf-khronos/SimpleMorph/SimpleMorph.gltf"
_DTYPES = {5121: "<u1", 5123: "<u2", 5125: "<u4", 5126: "<f4"}
_WIDTH = {"SCALAR": 1, "VEC3": 3, "VEC4": 4, "MAT4": 16}


def _decode(doc, path: Path, index: int) -> np.ndarray:
    """(count, width) float64 values of accessor ``index`` (tightly packed or strided
    views, embedded base64 or external buffers; no sparse, no normalisation)."""
    acc = doc["accessors"][index]
    view = doc["bufferViews"][acc["bufferView"]]
    uri = doc["buffers"][view["buffer"]]["uri"]
    data = (base64.b64decode(uri.split(",", 1)[1]) if uri.startswith("data:")
            else (path.parent / uri).read_bytes())
    dt = np.dtype(_DTYPES[acc["componentType"]])
    width = _WIDTH[acc["type"]]
    stride = view.get("byteStride", dt.itemsize * width)
    start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
    rows = [np.frombuffer(data, dt, width, start + i * stride) for i in range(acc["count"])]
    return np.array(rows, np.float64)


def _matrix(node: dict) -> np.ndarray:
    """A glTF node's local matrix from its JSON (matrix, or T R S)."""
    if "matrix" in node:
        return np.array(node["matrix"], np.float64).reshape(4, 4).T
    return _trs(node.get("translation", (0, 0, 0)), node.get("rotation", (0, 0, 0, 1)),
                node.get("scale", (1, 1, 1)))


def _trs(t, q, s) -> np.ndarray:
    x, y, z, w = np.asarray(q, np.float64) / np.linalg.norm(q)
    r = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                  [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                  [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
    m = np.eye(4)
    m[:3, :3] = r * np.asarray(s, np.float64)
    m[:3, 3] = t
    return m


def _drawn(model, backend="numba"):
    """(world positions of the model's one mesh out of the vertex stage, frame)."""
    scene = Scene()
    scene.add(model)
    cam = scene.add(PerspectiveCamera(fov_y=50, aspect=4 / 3))
    cam.frame(scene.bounds())
    node = next(n for n in model.traverse() if n.geometry is not None)
    r = Renderer(scene, cam, (96, 72), backend=backend)
    frame = r.render()
    start, stop = r.batch.ranges[node]
    return r.frame_inputs().shader.varyings[start:stop, :3] + r.batch.origin, frame, node


@pytest.mark.parametrize("key", [0, 12, 25, 49])
def test_rigged_simple_follows_its_joints(ref_assets, key):
    path = ref_assets / RIGGED
    doc = json.loads(path.read_text())
    nodes = doc["nodes"]
    prim = doc["meshes"][0]["primitives"][0]
    pos = _decode(doc, path, prim["attributes"]["POSITION"])
    joints = _decode(doc, path, prim["attributes"]["JOINTS_0"]).astype(int)
    weights = _decode(doc, path, prim["attributes"]["WEIGHTS_0"])
    weights /= weights.sum(axis=1, keepdims=True)
    skin = doc["skins"][0]
    ibm = _decode(doc, path, skin["inverseBindMatrices"]).reshape(-1, 4, 4).transpose(0, 2, 1)
    anim = doc["animations"][0]
    t = _decode(doc, path, anim["samplers"][0]["input"])[key, 0]
    keyed = {}
    for ch in anim["channels"]:
        keyed[ch["target"]["path"]] = _decode(doc, path,
                                              anim["samplers"][ch["sampler"]]["output"])[key]
    # the file's hierarchy: Z_UP (0) > Armature (1) > Bone (3, joint 0) > Bone.001 (4,
    # joint 1, the animated one); nodes[4] at key ``key``
    parent = {c: i for i, n in enumerate(nodes) for c in n.get("children", [])}
    animated = anim["channels"][0]["target"]["node"]

    def world(i):
        local = (_trs(keyed["translation"], keyed["rotation"], keyed["scale"])
                 if i == animated else _matrix(nodes[i]))
        return local if i not in parent else world(parent[i]) @ local

    jm = np.stack([world(j) @ b for j, b in zip(skin["joints"], ibm)])
    skin_m = np.einsum("ni,nirc->nrc", weights, jm[joints])
    want = np.einsum("nrc,nc->nr", skin_m, np.c_[pos, np.ones(len(pos))])[:, :3]
    model = load(path)
    clip = model.clips[0]
    clip.apply(t)
    got, _, node = _drawn(model)
    np.testing.assert_allclose(got, want, atol=1e-4)
    np.testing.assert_allclose(posed_vertices(node)[0], want, atol=1e-5)


def test_rigged_simple_frames_change_over_the_clip(ref_assets):
    model = load(ref_assets / RIGGED)
    clip = model.clips[0]
    covered = []
    for t in (0.04166662, 1.0, clip.duration):
        clip.apply(t)
        covered.append(_drawn(model)[1].depth < 1)
    assert (covered[0] != covered[1]).sum() > 30


@pytest.mark.parametrize("key", [0, 1, 2, 3, 4])
def test_simple_morph_follows_its_weights_channel(ref_assets, key):
    path = ref_assets / MORPH
    doc = json.loads(path.read_text())
    prim = doc["meshes"][0]["primitives"][0]
    base = _decode(doc, path, prim["attributes"]["POSITION"])
    deltas = [_decode(doc, path, tg["POSITION"]) for tg in prim["targets"]]
    sampler = doc["animations"][0]["samplers"][0]
    times = _decode(doc, path, sampler["input"])[:, 0]
    w = _decode(doc, path, sampler["output"]).reshape(len(times), len(deltas))[key]
    want = base + sum(wt * d for wt, d in zip(w, deltas))
    model = load(path)
    clip = model.clips[0]
    assert clip.duration == pytest.approx(times[-1]) and times[-1] == 4.0
    clip.apply(times[key])
    for backend in ("numpy", "numba"):
        got, _, node = _drawn(model, backend)
        np.testing.assert_allclose(got, want, atol=1e-6)
    np.testing.assert_allclose(posed_vertices(node)[0], want, atol=1e-12)


def test_cli_renders_simple_morph_animated(ref_assets, tmp_path, capsys):
    out = tmp_path / "frames"
    rc = main(["render", str(ref_assets / MORPH), "--animation", "0", "--out", f"{out}/",
               "--fps", "1", "--size", "64x48", "--backend", "numba"])
    assert rc == 0, capsys.readouterr().err
    files = sorted(out.glob("*.png"))
    assert len(files) == 4  # 4 s at 1 fps
    frames = [np.asarray(Image.open(f)) for f in files]
    # t = 0: weights (0, 0), t = 1: (1, 0): the top vertex moves
    assert not np.array_equal(frames[0], frames[1])
