"""Wireframe line colours and hidden-line removal, the scene helpers (grid, axes, box),
the orientation gizmo and pixel picking, checked on rendered pixels whose right values
are computed here from the geometry (camera projections, face orientations), not read
back from the renderer."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from engine import Mesh, Node, OrthographicCamera, PerspectiveCamera, Renderer, Scene
from engine.render.gizmo import OrientationAxes
from engine.render.lines import MIN_LINE_CONTRAST, contrast_ratio, relative_luminance
from engine.render.picking import pick_pixel
from engine.scene.helpers import (
    AXIS_COLORS,
    BOX_COLOR,
    GRID_COLOR,
    axes_helper,
    box_helper,
    grid_helper,
    ground_grid,
    nice_step,
)
from engine.scene.material import Material

SIZE = (240, 180)
BOX = trimesh.creation.box((1.0, 1.0, 1.0))


def _u8(rgba):
    return np.rint(np.asarray(rgba[:3]) * 255).astype(int)


def _cube_scene(background="white", **node_kw):
    scene = Scene(background=background)
    node = scene.add(Node("cube", geometry=Mesh(BOX.vertices, BOX.faces), **node_kw))
    cam = scene.add(PerspectiveCamera(fov_y=40)).frame(scene.bounds(), azimuth=30, elevation=25)
    return scene, cam, node


def _pixels_near(color, xy, rgb, tol=2, radius=1):
    """Whether a pixel within ``radius`` of screen point ``xy`` has colour ``rgb``."""
    x, y = int(np.floor(xy[0])), int(np.floor(xy[1]))
    patch = color[max(y - radius, 0):y + radius + 1, max(x - radius, 0):x + radius + 1, :3]
    return bool((np.abs(patch.astype(int) - rgb).max(axis=-1) <= tol).any())


def _edges_and_visibility(cam):
    """Every mesh edge of the triangulated cube (12 sides, 6 face diagonals) as (a, b,
    visible): on a convex solid an edge shows when one of the triangles holding it faces
    the eye (n . (eye - v0) > 0, counter-clockwise faces)."""
    eye = cam.world_position
    v, f = np.asarray(BOX.vertices), np.asarray(BOX.faces)
    front = [np.dot(np.cross(v[b] - v[a], v[c] - v[a]), eye - v[a]) > 0 for a, b, c in f]
    edges = {}
    for tri, fr in zip(f, front):
        for k in range(3):
            e = tuple(sorted((int(tri[k]), int(tri[(k + 1) % 3]))))
            edges[e] = edges.get(e, False) or fr
    return [(v[a], v[b], vis) for (a, b), vis in edges.items()]


def _distance_to_segments(p, segs):
    """Smallest distance from screen point p (2,) to screen segments (S, 2, 2)."""
    a, b = segs[:, 0], segs[:, 1]
    d = b - a
    t = np.clip(np.einsum("ij,ij->i", p - a, d) / np.maximum(np.einsum("ij,ij->i", d, d), 1e-12),
                0, 1)
    return np.linalg.norm(a + t[:, None] * d - p, axis=1).min()


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_hidden_line_removal_hides_exactly_the_back_edges(backend):
    scene, cam, node = _cube_scene(draw="wireframe")
    cam.set_viewport(*SIZE)
    edges = _edges_and_visibility(cam)
    assert len(edges) == 18 and sum(v for *_, v in edges) == 12  # 3 faces seen: 9 + 3
    shown = np.array([[cam.project(a)[0][0], cam.project(b)[0][0]]
                      for a, b, vis in edges if vis])
    plain = Renderer(scene, cam, SIZE, backend=backend).render()
    node.hidden_line_removal = True
    hidden = Renderer(scene, cam, SIZE, backend=backend).render()
    black = np.zeros(3, int)
    checked_hidden = 0
    for a, b, visible in edges:
        for t in (0.3, 0.5, 0.7):  # points along the edge, away from its corners
            xy, _, ok = cam.project(a + t * (b - a))
            assert ok[0]
            # without removal every edge is drawn (black: a white mesh on white)
            assert _pixels_near(plain.color, xy[0], black)
            if visible:
                assert _pixels_near(hidden.color, xy[0], black), (a, b, t)
            elif _distance_to_segments(xy[0], shown) > 3:  # not where a shown edge crosses
                assert not _pixels_near(hidden.color, xy[0], black), (a, b, t)
                checked_hidden += 1
    assert checked_hidden >= 6
    # the faces hide, but are not drawn: only black lines and the white background
    colours = np.unique(hidden.color[..., :3].reshape(-1, 3), axis=0)
    assert {tuple(c) for c in colours} == {(0, 0, 0), (255, 255, 255)}
    assert (hidden.depth[hidden.color[..., 0] == 255] == 1.0).all()
    assert 0 < (hidden.color[..., 0] == 0).sum() < (plain.color[..., 0] == 0).sum()


def test_hidden_line_faces_hide_other_geometry_behind_them():
    scene, cam, _ = _cube_scene(draw="wireframe", hidden_line_removal=True)
    # a red quad behind the cube, facing the camera, larger than the cube's silhouette
    d = cam.world_position / np.linalg.norm(cam.world_position)  # cube centre -> eye
    right = np.cross((0, 1, 0), d)
    right /= np.linalg.norm(right)
    up = np.cross(d, right)
    c = -1.5 * d
    quad = np.array([c - 6 * right - 6 * up, c + 6 * right - 6 * up, c + 6 * right + 6 * up,
                     c - 6 * right + 6 * up], np.float32)
    scene.add(Node("wall", geometry=Mesh(quad, [[0, 1, 2], [0, 2, 3]], material=Material(
        color=(1, 0, 0), shading="unlit"))))
    frame = Renderer(scene, cam, SIZE, backend="numba").render()
    cam.set_viewport(*SIZE)
    centre, _, _ = cam.project((0, 0, 0))  # inside the silhouette: the wall is hidden
    x, y = (int(v) for v in centre[0])
    assert tuple(frame.color[y, x, :3]) == (255, 255, 255)
    assert tuple(frame.color[2, 2, :3]) == (255, 0, 0)  # outside: the wall shows


def test_hidden_lines_in_gl_match_the_software_path():
    scene, cam, _ = _cube_scene(draw="wireframe", hidden_line_removal=True)
    soft = Renderer(scene, cam, SIZE, backend="numba").render()
    r = Renderer(scene, cam, SIZE, backend="numba", raster="gl")
    try:
        gl = r.render()
    finally:
        r.close()
    a, b = soft.color[..., 0] < 128, gl.color[..., 0] < 128
    assert a.sum() > 300
    # the same edges: GL rasterizes lines with the diamond-exit rule, so allow a few
    # pixels' difference, but no hidden edge may appear (it would add ~100 pixels)
    assert abs(int(a.sum()) - int(b.sum())) <= 0.02 * a.sum()
    assert (a & b).sum() >= 0.97 * a.sum()
    assert (gl.color[..., 3] == 255).all()  # the depth-only pass wrote no colour


@pytest.mark.parametrize("background, material, want", [
    ("white", (1, 1, 1), (0, 0, 0)),        # white on white: 1:1 -> black
    ("black", (1, 1, 1), (255, 255, 255)),  # white on black: 21:1, kept
    ("black", (1, 0, 0), (255, 0, 0)),      # red on black: 5.25:1, kept
    ("black", (0, 0, 0.5), (255, 255, 255)),  # dark blue on black: 1.3:1 -> white
    ("#202020", (0.1, 0.1, 0.1), (255, 255, 255)),
    ("#e0e0e0", (0.9, 0.9, 0.9), (0, 0, 0)),
])
def test_wireframe_default_colour_contrasts_with_the_background(background, material, want):
    scene, cam, node = _cube_scene(background=background, draw="wireframe")
    node.geometry.material.color = (*material, 1.0)
    node.geometry = node.geometry  # the material changed after the node was made
    frame = Renderer(scene, cam, SIZE, backend="numpy").render()
    bg = _u8(scene.background)
    lines = np.abs(frame.color[..., :3].astype(int) - bg).max(axis=-1) > 0
    assert lines.sum() > 300
    got = np.unique(frame.color[lines][:, :3], axis=0)
    assert [tuple(g) for g in got] == [want]
    # the rule: WCAG contrast of the material colour with the background below 3:1
    ratio = contrast_ratio(relative_luminance(np.asarray(material, float)),
                           relative_luminance(bg / 255.0))
    assert (ratio < MIN_LINE_CONTRAST) == (want != tuple(_u8(material)))


def test_line_color_overrides_meshes_and_lines():
    scene, cam, node = _cube_scene(draw="wireframe", line_color="orange")
    axes = scene.add(axes_helper(0.2, origin=(0.9, 0.0, 0.0)))
    axes.line_color = (0.0, 0.0, 1.0)
    frame = Renderer(scene, cam, SIZE, backend="numba").render()
    cols = {tuple(c) for c in np.unique(frame.color[..., :3].reshape(-1, 3), axis=0)}
    assert cols == {(255, 255, 255), (255, 165, 0), (0, 0, 255)}
    with pytest.raises(ValueError, match="'cube': line_color"):
        node.line_color = "not-a-colour"
    with pytest.raises(TypeError, match="hidden_line_removal"):
        node.hidden_line_removal = "yes"


def test_helper_colours_contrast_with_black_and_white():
    for c in (GRID_COLOR, BOX_COLOR, *AXIS_COLORS):
        lum = relative_luminance(np.asarray(c[:3]))
        assert contrast_ratio(lum, 0.0) >= 3.0 and contrast_ratio(lum, 1.0) >= 3.0, c


def test_grid_helper_geometry():
    g = grid_helper(4.0, 4, center=(1.0, -2.0, 0.0)).geometry
    assert g.segment_count == 10 and g.vertex_count == 20
    p = g.positions
    assert np.allclose(p[:, 1], -2.0)
    assert set(np.round(p[:, 0], 6)) == {-1.0, 0.0, 1.0, 2.0, 3.0}
    assert set(np.round(p[:, 2], 6)) == {-2.0, -1.0, 0.0, 1.0, 2.0}
    assert nice_step(10) == 1 and nice_step(13) == 2 and nice_step(0.3) == pytest.approx(0.05)
    grid = ground_grid([[-0.3, 1.0, -0.7], [0.9, 2.0, 0.4]]).geometry
    assert np.allclose(grid.positions[:, 1], 1.0)  # under the scene
    lo, hi = grid.bounds()
    assert lo[0] <= -0.3 and hi[0] >= 0.9 and lo[2] <= -0.7 and hi[2] >= 0.4
    box = box_helper([[0, 0, 0], [1, 2, 3]]).geometry
    assert box.segment_count == 12
    lengths = np.linalg.norm(np.diff(box.positions[box.segments], axis=1)[:, 0], axis=1)
    assert sorted(np.round(lengths, 6)) == [1.0] * 4 + [2.0] * 4 + [3.0] * 4
    for bad in (None, [[0, 0, 0]], [[1, 1, 1], [0, 0, 0]], [[0, 0, np.nan], [1, 1, 1]]):
        with pytest.raises(ValueError, match="bounds"):
            box_helper(bad)
    with pytest.raises(ValueError, match="grid size"):
        grid_helper(0.0)
    with pytest.raises(ValueError, match="divisions"):
        grid_helper(1.0, 2.5)


def test_grid_box_and_axes_pixels_are_where_the_camera_puts_them():
    scene, cam, _ = _cube_scene()
    bounds = scene.bounds()
    scene.add(ground_grid(bounds))
    scene.add(box_helper(bounds))
    scene.add(axes_helper(1.2))
    frame = Renderer(scene, cam, SIZE, backend="numba").render()
    cam.set_viewport(*SIZE)
    # the box's top edges and the axes' tips stick out of the shaded cube
    for a, b in (((-0.5, 0.5, -0.5), (0.5, 0.5, -0.5)), ((-0.5, 0.5, -0.5), (-0.5, 0.5, 0.5))):
        xy, _, _ = cam.project(0.5 * (np.add(a, b)))
        assert _pixels_near(frame.color, xy[0], _u8(BOX_COLOR))
    for axis in range(3):
        tip = np.zeros(3)
        tip[axis] = 1.1
        xy, _, _ = cam.project(tip)
        assert _pixels_near(frame.color, xy[0], _u8(AXIS_COLORS[axis])), axis
    # the grid: y = -0.5, spacing 0.1 for a 1-unit cube (nice_step), 0.6 each side;
    # its line x = 0 on the floor in front of the cube, and nothing beyond 0.6
    xy, _, _ = cam.project((0.0, -0.5, 0.57))
    assert _pixels_near(frame.color, xy[0], _u8(GRID_COLOR))
    xy, _, _ = cam.project((0.0, -0.5, 0.75))
    assert not _pixels_near(frame.color, xy[0], _u8(GRID_COLOR), radius=2)


def test_orientation_gizmo_points_its_axes_along_the_view():
    scene, cam, _ = _cube_scene(background="black")
    r = Renderer(scene, cam, SIZE, backend="numpy")
    plain = r.render().color
    gizmo = OrientationAxes(size=96, corner="bottom-left", margin=8)
    r.overlays.append(gizmo)
    frame = r.render().color
    x0, y0, side, _ = gizmo.rect(SIZE)
    assert (x0, y0, side) == (8, SIZE[1] - 8 - 45, 45)  # a quarter of 180 rows
    assert gizmo.rect((1280, 720))[2] == 96 and gizmo.rect((40, 30))[2] == 14
    outside = np.ones(SIZE[::-1], bool)
    outside[y0:y0 + side, x0:x0 + side] = False
    assert (frame[outside] == plain[outside]).all()  # nothing else changed
    # the screen direction of world axis e: (e . right, -(e . up)) of the camera
    rot = cam.world_matrix[:3, :3]
    right, up = rot[:, 0], rot[:, 1]
    cx, cy = x0 + side / 2, y0 + side / 2
    px_per_unit = side / 2.4  # the gizmo's orthographic view is 2.4 units high
    for axis in range(3):
        e = np.eye(3)[axis]
        d = np.array([e @ right, -(e @ up)])
        if np.linalg.norm(d) < 0.3:
            continue  # nearly along the view: too short to sample
        xy = (cx + 0.75 * px_per_unit * d[0], cy + 0.75 * px_per_unit * d[1])
        assert _pixels_near(frame, xy, _u8(AXIS_COLORS[axis]), radius=1), axis
    with pytest.raises(ValueError, match="corner"):
        OrientationAxes(corner="middle")


def test_pick_pixel_reports_the_node_and_the_surface_point():
    scene = Scene()
    scene.add(Node("cube", geometry=Mesh(BOX.vertices, BOX.faces), position=(0.25, 0, 0)))
    scene.add(Node("far", geometry=Mesh(BOX.vertices, BOX.faces), position=(-1.5, 0, -5)))
    cam = scene.add(PerspectiveCamera(fov_y=40, position=(0, 0, 4)))
    r = Renderer(scene, cam, (160, 120), backend="numba")
    cam.set_viewport(160, 120)
    xy, _, _ = cam.project((0.4, 0.2, 0.5))  # a point on the near cube's front face
    pick = pick_pixel(r, *xy[0])
    assert pick.node.name == "cube" and pick.kind == "triangle"
    # the right value: the screen ray through the picked pixel centre meets z = 0.5
    ray = cam.screen_ray(*pick.screen_xy, (160, 120))
    t = (0.5 - ray.origin[2]) / ray.direction[2]
    np.testing.assert_allclose(pick.world, ray.origin + t * ray.direction, atol=2e-3)
    assert pick.distance_px <= 0.71
    xy, _, _ = cam.project((-1.5, 0.0, -4.5))  # beside the near cube: the far one
    assert pick_pixel(r, *xy[0]).node.name == "far"
    assert pick_pixel(r, 2, 2) is None  # empty corner
    assert pick_pixel(r, 2, 2, radius=0) is None
    with pytest.raises(ValueError, match="radius"):
        pick_pixel(r, 2, 2, radius=-1)


def test_pick_pixel_finds_points_and_lines_within_the_radius():
    from engine import PointCloud

    scene = Scene()
    # one pixel: the radius checks below count from the point's own pixel
    scene.add(Node("dot", geometry=PointCloud(np.array([[0.3, 0.1, 0.0]], np.float32),
                                              point_size=1)))
    scene.add(axes_helper(0.5, origin=(-0.6, -0.4, 0.0)))
    cam = scene.add(OrthographicCamera(height=2.0, position=(0, 0, 3)))
    r = Renderer(scene, cam, (100, 100), backend="numpy")
    cam.set_viewport(100, 100)
    xy, _, _ = cam.project((0.3, 0.1, 0.0))
    pick = pick_pixel(r, xy[0, 0] + 4, xy[0, 1] - 3)  # 5 px away
    assert pick.node.name == "dot" and pick.kind == "point"
    np.testing.assert_allclose(pick.world, (0.3, 0.1, 0.0), atol=1e-6)
    assert pick_pixel(r, xy[0, 0] + 4, xy[0, 1] - 3, radius=3) is None
    xy, _, _ = cam.project((-0.35, -0.4, 0.0))  # on the X axis segment
    pick = pick_pixel(r, *xy[0])
    assert pick.node.name == "axes" and pick.kind == "line"
    assert abs(pick.world[1] + 0.4) < 0.03


@pytest.mark.parametrize("material, want", [((1, 1, 1), (0, 0, 0)), ((0.1, 0.1, 0.3), (255, 255, 255))])
def test_edges_over_their_own_faces_contrast_with_the_faces(material, want):
    scene, cam, node = _cube_scene(background="black", draw="solid+wireframe")
    node.geometry.material.color = (*material, 1.0)
    node.geometry.material.shading = "unlit"
    node.geometry = node.geometry
    frame = Renderer(scene, cam, SIZE, backend="numpy").render()
    face = tuple(_u8(material))
    colours = np.unique(frame.color[..., :3].reshape(-1, 3), axis=0).astype(int)
    expected = np.array([(0, 0, 0), face, want])  # background, faces, edges
    assert (np.abs(colours[:, None] - expected[None]).max(axis=-1).min(axis=1) <= 1).all()
    assert (np.abs(frame.color[..., :3].astype(int) - want).max(axis=-1) == 0).sum() > 300


def test_hidden_lines_numpy_and_numba_give_the_same_keys():
    import trimesh as tm

    knot = tm.creation.torus(major_radius=1.0, minor_radius=0.35, major_sections=24,
                             minor_sections=12)
    scene = Scene(background="black")
    scene.add(Node("torus", geometry=Mesh(knot.vertices, knot.faces), draw="wireframe",
                   hidden_line_removal=True))
    cam = scene.add(PerspectiveCamera(fov_y=40)).frame(scene.bounds(), azimuth=20, elevation=35)
    a = Renderer(scene, cam, SIZE, backend="numpy")
    b = Renderer(scene, cam, SIZE, backend="numba")
    fa, fb = a.render(), b.render()
    np.testing.assert_array_equal(a.visibility(), b.visibility())
    np.testing.assert_array_equal(fa.color, fb.color)
    # the far side of the ring is hidden: fewer edge pixels than the full wireframe
    scene.find("torus").hidden_line_removal = False
    full = Renderer(scene, cam, SIZE, backend="numba").render()
    assert 0.3 * (full.depth < 1).sum() < (fb.depth < 1).sum() < 0.8 * (full.depth < 1).sum()
