"""Transforms that cannot be drawn (issue 24 item 13): a zero-scale camera, a world
transform that overflows float64 or reaches beyond float32, a texture transform that
does. Each is one line naming the file, the node or camera and the cause, exit 2, and no
raw NumPy warning on the console; a render that succeeds (an infinite vertex) prints
none either."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from engine import Mesh, Node, PerspectiveCamera, Renderer, Scene
from engine.errors import LoadError
from engine.io import load
from engine.scene.graph import TransformError
from engine.scene.transforms import decompose_trs

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "io"))
from gltf_files import FLOAT, Gltf, png_bytes

ROOT = Path(__file__).resolve().parents[2]
TRIANGLE = [[-1, -1, 0], [1, -1, 0], [0, 1, 0]]


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "engine", *args], capture_output=True,
                          text=True, timeout=120, check=False, cwd=ROOT)


def _triangle(g, **node):
    return g.mesh({"POSITION": g.accessor(TRIANGLE, FLOAT)}, **node)


def zero_scale_camera(path):
    g = Gltf()
    _triangle(g)
    g.doc["cameras"] = [{"type": "perspective", "perspective": {"yfov": 0.8, "znear": 0.1}}]
    g.node(name="rig", camera=0, scale=[0.0, 0.0, 0.0], translation=[0, 0, 3])
    return g.write_gltf(path), ["--camera", "gltf:0"]


def nested_overflow(path):
    g = Gltf()
    _triangle(g, name="leaf", scale=[1e10] * 3)
    for i in range(40):  # 41 scales of 1e10: 1e410 overflows float64 at the 31st
        g.node(root=False, name=f"n{i}", scale=[1e10] * 3, children=[i])
    g.doc["scenes"][0]["nodes"] = [40]
    return g.write_gltf(path), []


def huge_scale(path):
    g = Gltf()
    _triangle(g, name="big", scale=[1e300] * 3)
    return g.write_gltf(path), []


def pure_scale_matrix(path):
    g = Gltf()
    _triangle(g, name="m", matrix=[1e308, 0, 0, 0, 0, 1e308, 0, 0, 0, 0, 1e308, 0, 0, 0, 0, 1])
    return g.write_gltf(path), []


def huge_texture_transform(path):
    g = Gltf()
    pos = g.accessor([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], FLOAT)
    uv = g.accessor([[0, 1], [1, 1], [1, 0], [0, 0]], FLOAT)
    tex = g.image(png_bytes(np.full((2, 2, 3), 200, np.uint8)))
    mat = g.material(pbrMetallicRoughness={"baseColorTexture": {"index": tex, "extensions": {
        "KHR_texture_transform": {"scale": [1e300, 1e300]}}}})
    g.doc["extensionsUsed"] = ["KHR_texture_transform"]
    g.mesh({"POSITION": pos, "TEXCOORD_0": uv}, indices=g.accessor(
        np.array([0, 1, 2, 0, 2, 3]), 5123), material=mat)
    return g.write_gltf(path), []


# (build, what the line must say besides the file)
FAULTS = {
    "zero_scale_camera": (zero_scale_camera, ["--camera gltf:0", "camera", "'rig'",
                                              "scale (0.0, 0.0, 0.0)", "no view"]),
    # n9 is 31 levels below the root: 1e10 ** 31 > 1.8e308
    "nested_overflow": (nested_overflow, ["node 'n9'", "overflows the float64 range"]),
    "huge_scale": (huge_scale, ["node 'big'", "1e+300", "beyond the float32 range"]),
    "pure_scale_matrix": (pure_scale_matrix, ["node 'm'", "1e+308",
                                              "beyond the float32 range"]),
    "huge_texture_transform": (huge_texture_transform, ["materials[0]",
                                                        "KHR_texture_transform", "1e+300"]),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_undrawable_transforms_are_one_line_naming_file_node_and_cause(tmp_path, fault):
    build, says = FAULTS[fault]
    src, extra = build(tmp_path / f"{fault}.gltf")
    out = tmp_path / "out.png"
    r = _cli("render", str(src), "--out", str(out), "--size", "32x24", "--backend", "numpy",
             *extra)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr  # no RuntimeWarning lines, no traceback
    line = lines[0]
    assert line.startswith("frustum: error: ") and str(src) in line, line
    for text in says:
        assert text in line, (text, line)
    assert "shear" not in line and "Singular matrix" not in line
    assert not out.exists()


def test_an_infinite_vertex_renders_without_warnings(tmp_path):
    g = Gltf()
    pos = g.accessor(np.array([[-1, -1, 0], [1, -1, 0], [0, 1, 0], [np.inf, 0, 0]],
                              np.float32), FLOAT)
    g.mesh({"POSITION": pos}, indices=g.accessor(np.array([0, 1, 2, 0, 1, 3]), 5123))
    src = g.write_gltf(tmp_path / "inf.gltf")
    out = tmp_path / "inf.png"
    r = _cli("render", str(src), "--out", str(out), "--size", "32x24", "--backend", "numpy")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert out.exists()


def test_a_pure_1e308_scale_decomposes_as_a_scale():
    trs = decompose_trs(np.diag([1e308, -1e308, 1e308, 1.0]))
    np.testing.assert_array_equal(trs["scale"], [-1e308, 1e308, 1e308])
    np.testing.assert_allclose(trs["rotation"], [0, 0, 1, 0], atol=1e-12)  # 180 deg about z
    with pytest.raises(ValueError, match="shear"):  # a real shear is still one
        decompose_trs(np.array([[1e308, 1e308, 0, 0], [0, 1e308, 0, 0], [0, 0, 1, 0],
                                [0, 0, 0, 1.0]]))


def test_the_loader_names_the_file_for_each_fault(tmp_path):
    src, _ = nested_overflow(tmp_path / "n.gltf")
    with pytest.raises(LoadError, match=r"n\.gltf: node 'n9': its world transform overflows"):
        load(src)


def _quad_scene():
    scene = Scene()
    quad = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], np.float32)
    node = scene.add(Node("quad", geometry=Mesh(quad, [[0, 1, 2], [0, 2, 3]])))
    rig = scene.add(Node("rig"))
    cam = rig.add(PerspectiveCamera(name="eye", position=(0, 0, 3)))
    return scene, node, rig, cam


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_api_faults_name_the_node_or_camera_without_warnings(backend):
    scene, node, rig, cam = _quad_scene()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a raw RuntimeWarning fails the test
        cam.scale = 0
        with pytest.raises(ValueError, match=r"camera 'eye': its world transform is singular "
                                             r"\(the camera has scale \(0.0, 0.0, 0.0\)\)"):
            Renderer(scene, cam, size=(32, 24), backend=backend).render()
        cam.scale = 1
        rig.scale = (1, 0, 1)
        with pytest.raises(ValueError, match=r"node 'rig' has scale \(1.0, 0.0, 1.0\)"):
            cam.project([(0, 0, 0)], (32, 24))
        rig.scale = 1
        r = Renderer(scene, cam, size=(32, 24), backend=backend)
        assert (r.render().depth < 1).sum() > 0
        node.scale = 1e300  # after the first frame: the batch names it
        with pytest.raises(TransformError, match="node 'quad': its model matrix is not finite"):
            r.render()
        with pytest.raises(TransformError, match="node 'quad': .* 1e\\+300 world units"):
            scene.bounds()
        node.scale = 1
        chain = node
        for i in range(40):
            chain = chain.add(Node(f"c{i}", scale=1e10))
        chain.geometry = Mesh(np.eye(3, dtype=np.float32), [[0, 1, 2]])
        with pytest.raises(TransformError, match="node 'c30': its world transform overflows"):
            scene.bounds()
        with pytest.raises(ValueError, match="uvs: values up to 1e\\+300 overflow float32"):
            Mesh(np.eye(3), [[0, 1, 2]], uvs=np.full((3, 2), 1e300))
