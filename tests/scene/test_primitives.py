"""Procedural primitives: watertight where closed, unit normals, analytic areas and
volumes within 1% at the default tessellation, UVs in [0, 1], and the height field's
layout (heights[i, j] at x_j, z_i) checked against the formula in its docstring."""

import math

import numpy as np
import pytest
import trimesh
from PIL import Image

from engine.errors import LoadError
from engine.scene import Mesh
from engine.scene import procedural as P

PI = math.pi


def world(mesh):
    return mesh.positions.astype(np.float64) + mesh.origin


# (mesh, area, volume or None for open shapes), the formulas in the docstrings
CASES = {
    "box": (lambda: P.box((2, 3, 4), segments=3), 2 * (6 + 12 + 8), 24.0),
    "plane": (lambda: P.plane((2, 3), segments=(4, 5)), 6.0, None),
    "uv_sphere": (lambda: P.uv_sphere(1.5), 4 * PI * 1.5 ** 2, 4 / 3 * PI * 1.5 ** 3),
    "cylinder": (lambda: P.cylinder(0.5, 2.0), 2 * PI * 0.5 * 2.5, PI * 0.25 * 2),
    "open cylinder": (lambda: P.cylinder(0.5, 2.0, caps=False), 2 * PI * 0.5 * 2, None),
    "cone": (lambda: P.cone(1.0, 2.0), PI * (1 + math.sqrt(5)), PI * 2 / 3),
    "capsule": (lambda: P.capsule(0.5, 3.0), 2 * PI * 0.5 * (1 + 2), PI * 0.25 * (2 / 3 + 2)),
    "sphere capsule": (lambda: P.capsule(0.5, 1.0), PI, PI / 6),
    "torus": (lambda: P.torus(2.0, 0.5), 4 * PI ** 2 * 2 * 0.5, 2 * PI ** 2 * 2 * 0.25),
}


@pytest.mark.parametrize("name", list(CASES))
def test_primitive_is_closed_oriented_and_measures_right(name):
    make, area, volume = CASES[name]
    mesh = make()
    assert isinstance(mesh, Mesh)
    p, f = world(mesh), mesh.faces
    # unit normals; each face's winding agrees with its vertices' normals (front = out)
    np.testing.assert_allclose(np.linalg.norm(mesh.normals, axis=1), 1.0, atol=1e-6)
    cross = np.cross(p[f[:, 1]] - p[f[:, 0]], p[f[:, 2]] - p[f[:, 0]])
    assert np.all(np.linalg.norm(cross, axis=1) > 0)  # no degenerate face
    assert np.all(np.einsum("ij,ij->i", cross, mesh.normals[f].mean(axis=1)) > 0)
    assert mesh.uvs.min() >= 0 and mesh.uvs.max() <= 1
    assert np.ptp(mesh.uvs[:, 0]) == 1 and np.ptp(mesh.uvs[:, 1]) == 1  # the whole range
    t = trimesh.Trimesh(p, f, process=True)  # merges the seams' duplicate positions
    assert t.area == pytest.approx(area, rel=0.01)
    if volume is None:
        assert not t.is_watertight
    else:
        assert t.is_watertight and t.is_winding_consistent
        assert t.volume == pytest.approx(volume, rel=0.01)


def test_box_faces_are_flat_and_axis_aligned():
    mesh = P.box((2, 4, 6))
    np.testing.assert_allclose(world(mesh).min(axis=0), [-1, -2, -3])
    np.testing.assert_allclose(world(mesh).max(axis=0), [1, 2, 3])
    # every vertex normal is the axis of the face it lies on
    p, n = world(mesh), mesh.normals
    axis = np.argmax(np.abs(n), axis=1)
    np.testing.assert_allclose(np.abs(n).max(axis=1), 1.0)
    np.testing.assert_allclose(p[np.arange(len(p)), axis] * n[np.arange(len(p)), axis],
                               np.array([1, 2, 3.0])[axis])


def test_sphere_normals_are_radial():
    mesh = P.uv_sphere(2.0, 16, 8)
    p = world(mesh)
    np.testing.assert_allclose(np.linalg.norm(p, axis=1), 2.0, rtol=1e-6)
    np.testing.assert_allclose(mesh.normals, p / 2.0, atol=1e-6)


def test_heightfield_layout_follows_the_docstring():
    rng = np.random.default_rng(3)
    h = rng.uniform(-1, 2, (5, 7))  # rows along z, columns along x
    mesh = P.heightfield(h, size=(6.0, 4.0))
    p = world(mesh).reshape(5, 7, 3)
    i, j = 3, 5
    np.testing.assert_allclose(p[i, j], [-3 + j * 6 / 6, h[i, j], -2 + i * 4 / 4], atol=1e-6)
    np.testing.assert_allclose(mesh.uvs.reshape(5, 7, 2)[i, j], [j / 6, i / 4])
    assert mesh.face_count == 2 * 4 * 6


def test_heightfield_normals_of_a_sloped_plane_are_exact():
    x = np.linspace(-2, 2, 9)
    z = np.linspace(-1, 1, 5)
    h = 0.5 * x[None, :] - 0.25 * z[:, None]  # dh/dx = 0.5, dh/dz = -0.25
    mesh = P.heightfield(h, size=(4, 2))
    expected = np.array([-0.5, 1.0, 0.25]) / np.linalg.norm([-0.5, 1.0, 0.25])
    np.testing.assert_allclose(mesh.normals, np.broadcast_to(expected, mesh.normals.shape),
                               atol=1e-6)


def test_heightfield_from_a_greyscale_image(tmp_path):
    grey = np.array([[0, 51, 255], [102, 204, 153]], np.uint8)
    Image.fromarray(grey, "L").save(tmp_path / "h.png")
    mesh = P.heightfield_from_image(tmp_path / "h.png", size=(2, 1), height=10.0)
    np.testing.assert_allclose(world(mesh)[:, 1], grey.ravel() / 255 * 10, atol=1e-5)
    deep = np.array([[0, 65535], [32768, 1000]], np.uint16)
    Image.fromarray(deep).save(tmp_path / "h16.png")
    mesh = P.heightfield_from_image(tmp_path / "h16.png", height=1.0)
    np.testing.assert_allclose(world(mesh)[:, 1], deep.ravel() / 65535, atol=1e-6)
    with pytest.raises(LoadError, match="no such file"):
        P.heightfield_from_image(tmp_path / "missing.png")
    (tmp_path / "bad.png").write_text("not an image")
    with pytest.raises(LoadError, match="bad.png"):
        P.heightfield_from_image(tmp_path / "bad.png")


@pytest.mark.parametrize("call, message", [
    (lambda: P.box((1, 0, 1)), "box size"),
    (lambda: P.uv_sphere(segments=2), "segments"),
    (lambda: P.capsule(1.0, 1.0), "twice its radius"),
    (lambda: P.torus(1.0, 1.0), "smaller than its radius"),
    (lambda: P.heightfield(np.zeros(4)), "2-D"),
    (lambda: P.heightfield([[0, np.nan], [0, 0]]), "finite"),
    (lambda: P.plane((1, -1)), "plane size"),
    (lambda: P.cylinder(height=float("inf")), "height"),
])
def test_bad_arguments_name_the_problem(call, message):
    with pytest.raises(ValueError, match=message):
        call()
