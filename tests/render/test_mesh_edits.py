"""Mesh edits take effect: geometry arrays are read-only (an in-place write names the
method to use), ``Geometry.update`` reaches the next frame, a same-size update is
rewritten in place (no repack) and a new size repacks. The pixel-exact check of a moved
vertex on every backend is the parity matrix's ``mesh_edit`` row (test_parity.py)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from engine import Instances, Mesh, Node, OrthographicCamera, PointCloud, Renderer, Scene
from engine.scene.geometry import Lines
from engine.scene.material import Material, Sampler, Texture

TRI = np.array([[-1, -1, 0], [1, -1, 0], [-1, 1, 0]], np.float32)


def _scene(geometry, background=(0, 0, 0)):
    scene = Scene(background=background)
    node = scene.add(Node("thing", geometry=geometry))
    cam = OrthographicCamera(height=2.0, aspect=1.0)
    cam.position = (0, 0, 5)
    scene.add(cam)
    return scene, node, cam


@pytest.mark.parametrize("write", [
    lambda m: m.positions.__setitem__(0, (5, 5, 5)),
    lambda m: m.positions.__iadd__(1.0),
    lambda m: m.positions[1].__setitem__(0, 2.0),  # through a view
    lambda m: m.normals.__imul__(-1),
    lambda m: m.uvs.__setitem__((0, 0), 0.5),
    lambda m: m.colors.__setitem__(0, 0),
    lambda m: m.faces.__setitem__(0, (0, 2, 1)),
])
def test_in_place_writes_raise_naming_update(write):
    mesh = Mesh(TRI, [[0, 1, 2]], colors="red", normals=np.tile([0, 0, 1], (3, 1)),
                uvs=np.zeros((3, 2)))
    before = {f: np.array(getattr(mesh, f)) for f in mesh.FIELDS + mesh.INDEX_FIELDS}
    with pytest.raises(ValueError, match=r"read-only.*use geometry\.update\(\w+=new_values\)"):
        write(mesh)
    for f, a in before.items():
        np.testing.assert_array_equal(getattr(mesh, f), a)  # nothing was written
    assert mesh.revision == 0


def test_other_writes_are_refused_by_numpy_and_copies_are_free():
    mesh = Mesh(TRI, [[0, 1, 2]])
    with pytest.raises(ValueError, match="read-only"):
        np.copyto(mesh.positions, 0.0)
    p = mesh.positions.copy()
    p[0] = (9, 9, 9)  # a copy is an ordinary writable array
    assert mesh.positions[0].tolist() == [-1, -1, 0]
    doubled = mesh.positions * 2  # arithmetic gives plain arrays
    assert type(doubled) is np.ndarray and doubled.flags.writeable
    # the constructor copies: the caller's array stays writable and unaliased
    mine = TRI.copy()
    mesh = Mesh(mine, [[0, 1, 2]])
    mine[0] = (7, 7, 7)
    assert mesh.positions[0].tolist() == [-1, -1, 0]


def test_update_checks_and_keeps_the_data_consistent():
    mesh = Mesh(TRI, [[0, 1, 2]], colors="red")
    with pytest.raises(ValueError, match=r"colors has 3 rows but the new positions have 4: "
                                         r"give colors= too"):
        mesh.update(positions=np.zeros((4, 3)))
    with pytest.raises(ValueError, match=r"face indices must be in \[0, 2\)"):
        mesh.update(positions=np.zeros((2, 3)), colors=None)
    with pytest.raises(ValueError, match=r"normals must have shape \(3, 3\)"):
        mesh.update(normals=np.zeros((2, 3)))
    with pytest.raises(TypeError, match="Mesh.update: no field 'segments'"):
        mesh.update(segments=[[0, 1]])
    with pytest.raises(TypeError, match="PointCloud has no field 'uvs'"):
        PointCloud(TRI).mark_changed("uvs")
    assert mesh.revision == 0 and mesh.vertex_count == 3  # failed updates change nothing
    mesh.update(positions=np.zeros((4, 3)), colors=None, faces=[[0, 1, 2], [0, 2, 3]])
    assert (mesh.vertex_count, mesh.face_count, mesh.colors) == (4, 2, None)
    assert mesh.field_revision("positions") == 1 and mesh.field_revision("uvs") == 0
    mesh.positions = TRI.tolist() + [[1, 1, 0]]  # assignment is update(positions=...)
    assert mesh.field_revision("positions") == 2 and not mesh.positions.flags.writeable
    lines = Lines(TRI, [[0, 1]])
    lines.update(segments=[[1, 2], [2, 0]])
    assert lines.segments.tolist() == [[1, 2], [2, 0]]


def test_float64_updates_keep_the_recentred_origin():
    far = TRI.astype(np.float64) + (596650.0, 0, 0)
    mesh = Mesh(far, [[0, 1, 2]])
    assert mesh.origin[0] == 596650.0
    moved = far.copy()
    moved[0, 0] += 0.25
    mesh.update(positions=moved)  # float64: the origin is subtracted again
    assert mesh.origin[0] == 596650.0
    assert mesh.positions[0].tolist() == [-0.75, -1.0, 0.0]


def test_computed_normals_follow_the_positions():
    mesh = Mesh(TRI, [[0, 1, 2]])
    np.testing.assert_allclose(mesh.vertex_normals(), np.tile([0, 0, 1], (3, 1)))
    mesh.update(faces=[[0, 2, 1]])  # the other winding faces -z
    np.testing.assert_allclose(mesh.vertex_normals(), np.tile([0, 0, -1], (3, 1)))
    mesh.update(positions=TRI[:, [0, 2, 1]])  # the triangle turned into the y = 0 plane
    np.testing.assert_allclose(mesh.vertex_normals(), np.tile([0, 1, 0], (3, 1)), atol=1e-7)


def test_pickled_geometry_stays_read_only():
    mesh = pickle.loads(pickle.dumps(Mesh(TRI, [[0, 1, 2]], uvs=np.zeros((3, 2)))))
    with pytest.raises(ValueError, match=r"update\(uvs=new_values\)"):
        mesh.uvs[0] = (1, 1)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_same_size_update_is_drawn_without_a_repack(backend):
    mesh = Mesh(TRI, [[0, 1, 2]], colors=(1.0, 0.0, 0.0),
                material=Material(shading="unlit", double_sided=True))  # the flip turns it
    scene, _, cam = _scene(mesh)
    r = Renderer(scene, cam, (32, 32), backend=backend)
    first = r.render()
    repacks, revision = r.batch.repacks, r.batch.vertex_revision
    assert r.render().color.tolist() == first.color.tolist()
    assert r.batch.vertex_revision == revision  # nothing changed: nothing rewritten
    # the right-angle corner moves from (-1, -1) to (1, 1): the triangle flips across
    # the diagonal, so the pixels below it turn dark and those above it light up
    mesh.update(positions=[[1, 1, 0], [1, -1, 0], [-1, 1, 0]],
                colors=np.tile([0, 0, 255], (3, 1)).astype(np.uint8))
    second = r.render()
    assert r.batch.repacks == repacks and r.batch.data_updates == 1
    ys, xs = np.mgrid[0:32, 0:32] + 0.5  # pixel centres; world x = xs/16 - 1, y = 1 - ys/16
    inside = xs < ys  # x + y < 0 in world units: the first triangle
    off = xs != ys  # centres on the shared diagonal go to one of the two (top-left rule)
    a, b = first.depth < 1, second.depth < 1
    assert (a == inside)[off].all() and (b == ~inside)[off].all() and (a ^ b)[~off].all()
    assert (second.color[b][:, :3] == [0, 0, 255]).all()
    # a new vertex count repacks, and draws the new mesh
    mesh.update(positions=[[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], colors=None,
                faces=[[0, 1, 2], [0, 2, 3]])
    assert (r.render().depth < 1).all() and r.batch.repacks == repacks + 1


def test_updates_reach_every_instance_and_uvs_and_normals():
    tex = np.zeros((1, 2, 4), np.uint8)
    tex[0, 0], tex[0, 1] = (255, 0, 0, 255), (0, 255, 0, 255)
    quad = Mesh([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], [[0, 1, 2], [0, 2, 3]],
                uvs=np.full((4, 2), 0.25),  # the red texel everywhere
                material=Material(shading="unlit", texture=Texture(tex, Sampler(filter="nearest"))))
    scene = Scene(background=(0, 0, 0))
    scene.add(Instances(quad, name="tiles", positions=[[-1, 0, 0], [1, 0, 0]],
                        scales=[[0.5, 0.5, 0.5]] * 2))
    cam = scene.add(OrthographicCamera(height=2.0, aspect=2.0))
    cam.position = (0, 0, 5)
    r = Renderer(scene, cam, (64, 32), backend="numpy")
    a = r.render().color
    assert (a[16, 16, :3] == [255, 0, 0]).all() and (a[16, 48, :3] == [255, 0, 0]).all()
    quad.update(uvs=np.full((4, 2), 0.75))  # the green texel, on both instances
    b = r.render().color
    assert (b[16, 16, :3] == [0, 255, 0]).all() and (b[16, 48, :3] == [0, 255, 0]).all()
    p = quad.positions.copy()
    p[:, 1] *= 0.5  # squashed to half height: rows 12..19 of 32 are covered
    quad.update(positions=p)
    depth = r.render().depth
    assert (depth[12:20, 8:24] < 1).all() and (depth[:11] == 1).all()
    assert (depth[12:20, 40:56] < 1).all() and r.batch.repacks == 1

    # normals: a lit quad facing the light turns dark when its normals point away
    lit = Mesh(TRI, [[0, 1, 2]], normals=np.tile([0, 0, 1], (3, 1)), colors="white")
    scene, _, cam = _scene(lit)
    r = Renderer(scene, cam, (16, 16), backend="numpy")
    bright = r.render().color[12, 4, :3].astype(int)
    lit.update(normals=np.tile([0, 0, -1], (3, 1)))
    dark = r.render().color[12, 4, :3].astype(int)
    assert bright.min() > 100 and (dark < bright).all() and r.batch.repacks == 1


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_only_the_edited_mesh_is_packed_again(backend):
    """Two meshes; edits of the small one re-pack just its rows of the host attributes
    (``attribute_changes``), and every frame equals a fresh renderer's frame."""
    from engine.scene.procedural import icosphere

    v, f = icosphere(3)
    big = Mesh(v * 0.8 + (-1, 0, 0), f, colors="steelblue")
    small = Mesh(TRI * 0.5 + np.float32([1, 0, 0.5]), [[0, 1, 2]], colors="red")
    scene = Scene(background=(0, 0, 0))
    scene.add(Node("big", geometry=big))
    scene.add(Node("small", geometry=small))
    cam = scene.add(OrthographicCamera(height=3.0, aspect=4 / 3))
    cam.position = (0, 0, 5)
    r = Renderer(scene, cam, (64, 48), backend=backend)
    r.render()
    start, stop = r.batch.ranges[scene.find("small")]
    for k in range(3):
        p = small.positions.copy()
        p[2] += (0.1 * (k + 1), 0, 0)
        small.update(positions=p, colors=[(0.2 * k, 1.0, 0.0)] * 3)
        got = r.render()
        assert r.backend.attribute_changes[1] == [(start, stop)]
        fresh = Renderer(scene, cam, (64, 48), backend=backend).render()
        np.testing.assert_array_equal(got.color, fresh.color)
        np.testing.assert_array_equal(got.depth, fresh.depth)
    assert r.batch.repacks == 1 and r.batch.data_updates == 3
    scene.find("big").color = "white"  # a recolour is not an edit: everything again
    r.render()
    assert r.backend.attribute_changes[1] is None


def test_lines_and_points_updates_are_drawn():
    lines = Lines([[-0.9, 0, 0], [0.9, 0, 0], [0, 0.9, 0]], [[0, 1]])
    scene, _, cam = _scene(lines)
    r = Renderer(scene, cam, (32, 32), backend="numpy")
    horizontal = r.render().depth < 1
    assert horizontal[15:17].any() and not horizontal[:12].any()
    lines.update(segments=[[2, 1]])  # now from the top middle down to the right
    slanted = r.render().depth < 1
    assert slanted[:12].any() and r.batch.repacks == 1
    cloud = PointCloud([[0.5, 0.5, 0]], colors="red", point_size=3)
    cloud.attributes["intensity"] = np.array([7.0])
    scene, _, cam = _scene(cloud)
    r = Renderer(scene, cam, (32, 32), backend="numpy")
    assert (r.render().depth < 1)[8, 24]  # (x, y) = (0.5, 0.5): column 24, row 8
    cloud.update(positions=[[-0.5, -0.5, 0]])
    moved = r.render().depth < 1
    assert moved[24, 8] and not moved[8, 24] and r.batch.repacks == 1
    with pytest.raises(ValueError, match=r"attributes\['intensity'\] has 1 rows but the new "
                                         r"positions have 2"):
        cloud.update(positions=np.zeros((2, 3)), colors=None)


def test_a_replaced_material_is_drawn():
    mesh = Mesh(TRI, [[0, 1, 2]], material=Material(shading="unlit", color=(1, 0, 0)))
    scene, _, cam = _scene(mesh)
    r = Renderer(scene, cam, (16, 16), backend="numpy")
    assert r.render().color[12, 4, :3].tolist() == [255, 0, 0]
    mesh.material = Material(shading="unlit", color=(0, 1, 0))
    assert r.render().color[12, 4, :3].tolist() == [0, 255, 0]
    assert r.batch.repacks == 1 and mesh.field_revision("material") == 1


def test_material_fields_assigned_later_are_checked_and_drawn():
    mesh = Mesh(TRI, [[0, 1, 2]], material=Material(shading="unlit", color=(1, 0, 0)))
    scene, _, cam = _scene(mesh)
    r = Renderer(scene, cam, (16, 16), backend="numba")
    r.render()
    # RGB: alpha 1, as the constructor takes it; 0.6 * 255 = 153 exactly (0.5 would be a
    # rounding tie, 127.5, that the linear-light round trip may break either way)
    mesh.material.color = (0, 0.6, 1)
    assert mesh.material.color == (0.0, 0.6, 1.0, 1.0)
    assert r.render().color[12, 4, :3].tolist() == [0, 153, 255]
    with pytest.raises(ValueError, match="shading must be one of lit, unlit, flat"):
        mesh.material.shading = "shiny"
    with pytest.raises(ValueError, match=r"specular must be in \[0.0, 1.0\]"):
        mesh.material.specular = 2
    assert mesh.material.shading == "unlit" and mesh.material.specular == 0.0


def test_a_frame_checks_only_the_nodes_whose_geometry_changed(monkeypatch):
    """Per-frame work follows the edited geometries, not the number of nodes."""
    from engine.render.batch import updates

    scene = Scene()
    meshes = [Mesh(TRI + np.float32([i, 0, 0]), [[0, 1, 2]]) for i in range(300)]
    for i, m in enumerate(meshes):
        scene.add(Node(f"m{i}", geometry=m))
    cam = scene.add(OrthographicCamera(height=4.0, aspect=1.0))
    cam.position = (0, 0, 5)
    r = Renderer(scene, cam, (16, 16), backend="numpy")
    r.render()
    checked = []
    real = updates.data_revisions
    monkeypatch.setattr(updates, "data_revisions", lambda g: checked.append(g) or real(g))
    meshes[7].update(positions=meshes[7].positions * 0.5)
    r.render()
    assert checked == [meshes[7]] and r.batch.data_updates == 1
    np.testing.assert_array_equal(r.batch.positions[slice(*r.batch.ranges[scene.find("m7")])],
                                  meshes[7].positions)
