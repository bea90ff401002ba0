"""Triangles, lines and their shading: coverage rules, clipping, depth, perspective-
correct textures, samplers and lighting, each against an analytic value, on the NumPy
reference and the Numba rasterizer (identical keys)."""

import numpy as np
import pytest
import trimesh

from engine import Mesh, Node, OrthographicCamera, PerspectiveCamera, PointCloud, Renderer, Scene
from engine.render.backends.numba_triangles import raster_triangles_numba, setup_triangles_numba
from engine.render.frame import new_keys
from engine.render.triangles import (
    GUARD,
    SUBPIXEL,
    Workspace,
    covered_pixels,
    raster_triangles,
    setup_triangles,
)
from engine.scene.colorspace import linear_to_srgb, srgb_to_linear
from engine.scene.light import AmbientLight, DirectionalLight
from engine.scene.material import Material, Sampler, Texture
from engine.scene.sampling import sample

# every surface test body runs on each backend; cupy (the CUDA kernels) where a GPU is
RASTERS = ["numpy", "numba", pytest.param("cupy", marks=pytest.mark.gpu)]


def coverage_counts(clip, tris, size):
    setup = setup_triangles(np.asarray(clip, float), np.asarray(tris), np.ones(len(tris), bool), size)
    counts = np.zeros(size[0] * size[1], int)
    for _, px, py, _ in covered_pixels(setup, size):
        np.add.at(counts, py * size[0] + px, 1)
    # the Numba rasterizer writes exactly the NumPy reference's keys
    keys_np = raster_triangles(new_keys(size), setup, size, 0)
    keys_nb = raster_triangles_numba(new_keys(size), setup, size, 0)
    np.testing.assert_array_equal(keys_np, keys_nb)
    return counts.reshape(size[1], size[0])


@pytest.mark.parametrize("size", [(37, 23), (64, 64), (1, 1), (5, 200)])
def test_full_viewport_quad_covers_every_pixel_once(size):
    clip = [[-1, -1, 0, 1], [1, -1, 0, 1], [1, 1, 0, 1], [-1, 1, 0, 1]]
    counts = coverage_counts(clip, [[0, 1, 2], [0, 2, 3]], size)
    assert counts.min() == counts.max() == 1


def test_fan_of_64_triangles_covers_the_disc_once():
    n, size = 64, (101, 97)
    ang = np.linspace(0, 2 * np.pi, n, endpoint=False)
    rim = np.stack([0.8 * np.cos(ang), 0.8 * np.sin(ang), np.zeros(n), np.ones(n)], 1)
    clip = np.concatenate([[[0.1, 0.05, 0, 1]], rim])
    tris = [[0, 1 + i, 1 + (i + 1) % n] for i in range(n)]
    counts = coverage_counts(clip, tris, size)
    assert counts.max() == 1
    # pixel centres well inside the 64-gon are covered, those well outside are not
    px, py = np.meshgrid(np.arange(size[0]), np.arange(size[1]))
    xn, yn = (2 * px + 1) / size[0] - 1, 1 - (2 * py + 1) / size[1]
    r = np.hypot(xn, yn)
    inner = 0.8 * np.cos(np.pi / n) - 0.03
    assert counts[r < inner].min() == 1 and counts[r > 0.83].max() == 0


def test_top_left_rule_on_a_shared_vertical_edge():
    # two triangles sharing the edge x = 0 exactly on pixel centres of a 4-px-wide image
    size = (4, 2)
    clip = [[-1, -1, 0, 1], [0, -1, 0, 1], [0, 1, 0, 1], [-1, 1, 0, 1], [1, -1, 0, 1], [1, 1, 0, 1]]
    left = coverage_counts(clip, [[0, 1, 2], [0, 2, 3]], size)
    right = coverage_counts(clip, [[1, 4, 5], [1, 5, 2]], size)
    np.testing.assert_array_equal(left + right, np.ones((2, 4)))
    # pixel centres at x_ndc = -0.75, -0.25, 0.25, 0.75: the edge lies between columns
    np.testing.assert_array_equal(left, [[1, 1, 0, 0]] * 2)


@pytest.mark.parametrize("kind", ["spread", "grid", "small", "huge", "strip"])
def test_compiled_raster_spans_are_the_reference_keys(kind):
    # the compiled walk solves each row's covered span from the edge functions; the
    # reference tests every pixel of the box. Random soups: triangles over and past
    # the viewport, vertices on a coarse grid (edges along rows and columns, shared
    # edges, centres exactly on edges: the top-left rule decides), small ones, huge
    # ones through the guard band and the near plane (w < 0 too), and 1-pixel-high or
    # wide viewports; each through both setups (the compiled one keeps int32 pieces)
    rng = np.random.default_rng({"spread": 11, "grid": 12, "small": 13, "huge": 14,
                                 "strip": 15}[kind])
    drawn = 0
    for _ in range(25):
        low = 40 if kind == "small" else 1  # small triangles: pixels enough to cover
        size = (int(rng.integers(low, 120)), int(rng.integers(low, 90)))
        if kind == "strip":
            size = (int(rng.integers(1, 600)), 1)[::int(rng.choice([1, -1]))]
        n = int(rng.integers(3, 40))
        w = rng.uniform(0.5, 3.0, n)
        if kind in ("spread", "strip"):
            ndc = rng.uniform(-1.5, 1.5, (n, 2))
        elif kind == "grid":
            ndc = rng.integers(-4, 5, (n, 2)) / 4.0
        elif kind == "small":
            ndc = rng.uniform(-0.15, 0.15, (n, 2)) + rng.uniform(-1, 1, 2)
        else:
            ndc = rng.uniform(-50, 50, (n, 2))
            w = rng.uniform(-1.0, 3.0, n)
        clip = np.column_stack([ndc * w[:, None], rng.uniform(-1, 1, n) * w, w])
        tris = rng.integers(0, n, (int(rng.integers(1, 60)), 3))
        cull = np.zeros(len(tris), bool)
        setup = setup_triangles(clip, tris, cull, size)
        keys_np = raster_triangles(new_keys(size), setup, size, 7)
        for s in (setup, setup_triangles_numba(clip, tris, cull, size)):
            np.testing.assert_array_equal(raster_triangles_numba(new_keys(size), s, size, 7),
                                          keys_np)
        drawn += int((keys_np != new_keys(size)).sum())
    assert drawn > 500  # the soups cover pixels: the keys compared are not all empty


def test_compiled_setup_is_the_reference_bit_for_bit():
    # triangles crossing every clip plane (w spans the eye, x and y the guard band),
    # non-finite vertices, both windings with half of them culled: the compiled setup
    # (classify, compaction, Sutherland-Hodgman) builds the reference's pieces exactly
    rng = np.random.default_rng(3)
    n = 5000
    clip = rng.normal(0, 1.5, (3 * n, 4))
    clip[:, 3] = rng.uniform(-0.5, 2.0, 3 * n)
    clip[: n // 10, :2] *= 40.0  # beyond the guard band
    clip[5], clip[17, 2] = np.nan, np.inf
    tris = rng.integers(0, 3 * n, (n, 3))
    cull = rng.random(n) < 0.5
    ws = Workspace()
    for size in [(640, 480), (37, 23), (640, 480)]:  # the third reuses grown arrays
        ref = setup_triangles(clip, tris, cull, size)
        got = setup_triangles_numba(clip, tris, cull, size, workspace=ws)
        assert len(ref.piece_tri) > n  # some triangles were clipped into several pieces
        for field in ref._fields:
            a, b = getattr(ref, field), getattr(got, field)
            # the pieces are int32 in the compiled setup (they fit), the rest as NumPy's
            small = np.int32 if field in ("piece_tri", "x", "y") else a.dtype
            assert b.dtype == small, field
            np.testing.assert_array_equal(a, b, err_msg=field)
    before = {k: v.ctypes.data for k, v in ws._bufs.items()}
    setup_triangles_numba(clip, tris, cull, (640, 480), workspace=ws)
    assert {k: v.ctypes.data for k, v in ws._bufs.items()} == before  # nothing allocated


def test_compiled_setup_of_a_huge_viewport_keeps_int64_pieces():
    # 10^6 pixels wide: guard-band coordinates pass 2^31, so the pieces stay int64,
    # with the reference's values and the same keys from the raster
    clip = np.array([[-1.0, -1.0, 0.0, 1.0], [20.0, -1.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0]])
    size = (1_000_000, 2)
    ref = setup_triangles(clip, np.array([[0, 1, 2]]), np.zeros(1, bool), size)
    got = setup_triangles_numba(clip, np.array([[0, 1, 2]]), np.zeros(1, bool), size)
    # clipped at x = 16 w: (16 + 1) * 500,000 * 256 = 2.176e9 > 2^31 - 1
    assert got.x.dtype == np.int64 and got.x.max() > 2**31 - 1
    np.testing.assert_array_equal(got.x, ref.x)
    np.testing.assert_array_equal(got.y, ref.y)


def test_compiled_clipping_of_one_triangle_across_the_near_plane():
    # clip space with w = 1 everywhere except vertex 2, behind the near plane (z < -w):
    # the polygon left is the quad cut at z = -w on the two edges to vertex 2
    size = (100, 100)
    clip = np.array([[-0.5, -0.5, 0.0, 1.0], [0.5, -0.5, 0.0, 1.0], [0.0, 0.5, -3.0, 1.0]])
    s = setup_triangles_numba(clip, np.array([[0, 1, 2]]), np.zeros(1, bool), size)
    assert list(s.piece_tri) == [0, 0]  # two fan pieces of one original triangle
    # z = -1 at t = 1/3 along 0->2 and 1->2: x = -0.5 + 0.5 / 3, y = -0.5 + 1 / 3
    qx, qy = -0.5 + 0.5 / 3, -0.5 + 1 / 3
    quad = [(-0.5, -0.5), (0.5, -0.5), (-qx, qy), (qx, qy)]
    snapped = {(round((x + 1) * 50 * SUBPIXEL), round((1 - y) * 50 * SUBPIXEL)) for x, y in quad}
    got = {(int(a), int(b)) for a, b in zip(s.x.reshape(-1), s.y.reshape(-1))}
    assert got == snapped
    areas = [(x[1] - x[0]) * (y[2] - y[0]) - (y[1] - y[0]) * (x[2] - x[0]) for x, y in zip(s.x, s.y)]
    assert min(areas) > 0  # oriented like the whole triangles
    # a triangle far beyond the guard band on one side is dropped, one across it is cut
    far = np.array([[GUARD * 3, 0.0, 0.0, 1.0], [GUARD * 4, 0.5, 0.0, 1.0], [GUARD * 3, 1.0, 0.0, 1.0],
                    [0.0, 0.0, 0.0, 1.0], [GUARD * 4, 0.5, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0]])
    s = setup_triangles_numba(far, np.array([[0, 1, 2], [3, 4, 5]]), np.zeros(2, bool), size)
    assert set(s.piece_tri) == {1}
    assert s.x.max() <= (GUARD + 1) * 50 * SUBPIXEL


def _scene(background=(0, 0, 0)):
    scene = Scene(background=background)
    cam = scene.add(PerspectiveCamera(fov_y=90.0, aspect=1.0, near=0.1, far=100.0))
    return scene, cam


def _quad(x0, x1, y0, y1, z, color, **mat):
    pos = np.array([[x0, y0, z], [x1, y0, z], [x1, y1, z], [x0, y1, z]], np.float32)
    return Mesh(pos, [[0, 1, 2], [0, 2, 3]],
                material=Material(color=color, shading="unlit", **mat))


@pytest.mark.parametrize("raster", RASTERS)
def test_near_plane_clipping_draws_exactly_the_clipped_part(raster):
    size = (120, 120)
    scene, cam = _scene()
    # one vertex behind the eye (z = +1): the visible part is the polygon cut at z = -near
    v = np.array([[-1.0, -1.0, -2.0], [1.0, -1.0, -2.0], [0.3, 1.0, 1.0]])
    scene.add(Node("t", geometry=Mesh(v.astype(np.float32), [[0, 1, 2]],
                                      material=Material((1, 0, 0), shading="unlit",
                                                        double_sided=True))))
    frame = Renderer(scene, cam, size, backend=raster).render()
    assert np.isfinite(frame.depth).all()
    drawn = frame.color[..., 0] == 255
    # analytic: clip the view-space triangle at z = -0.1, project with f = 1 (fov 90)
    near = 0.1
    poly = []
    for i in range(3):
        a, b = v[i], v[(i + 1) % 3]
        if a[2] <= -near:
            poly.append(a)
        if (a[2] <= -near) != (b[2] <= -near):
            t = (-near - a[2]) / (b[2] - a[2])
            poly.append(a + t * (b - a))
    scr = np.array([[(p[0] / -p[2] + 1) * size[0] / 2, (1 - p[1] / -p[2]) * size[1] / 2]
                    for p in poly])
    px, py = np.meshgrid(np.arange(size[0]) + 0.5, np.arange(size[1]) + 0.5)
    dist = np.full(px.shape, np.inf)  # signed distance to the convex polygon (inside > 0)
    area = sum(scr[i, 0] * scr[(i + 1) % len(scr), 1] - scr[(i + 1) % len(scr), 0] * scr[i, 1]
               for i in range(len(scr)))
    for i in range(len(scr)):
        a, b = scr[i], scr[(i + 1) % len(scr)]
        e = b - a
        d = (e[0] * (py - a[1]) - e[1] * (px - a[0])) / np.hypot(*e) * np.sign(area)
        dist = np.minimum(dist, d)
    assert drawn[dist > 0.75].all()
    assert not drawn[dist < -0.75].any()
    assert drawn[dist > 0].sum() > 0.3 * size[0] * size[1]  # a big part, not a sliver


@pytest.mark.parametrize("raster", RASTERS)
def test_interpenetrating_triangles_meet_on_the_intersection_line(raster):
    size = (100, 80)
    scene, cam = _scene()
    cam.aspect = size[0] / size[1]
    scene.add(Node("flat", geometry=_quad(-5, 5, -3, 3, -3.0, (1, 0, 0))))
    # tilted: z = -3 + 0.5 x, so it is behind the flat one for x < 0, in front for x > 0
    tilt = np.array([[-5, -3, -5.5], [5, -3, -0.5], [5, 3, -0.5], [-5, 3, -5.5]], np.float32)
    scene.add(Node("tilt", geometry=Mesh(tilt, [[0, 1, 2], [0, 2, 3]],
                                         material=Material((0, 1, 0), shading="unlit"))))
    frame = Renderer(scene, cam, size, backend=raster).render()
    row = frame.color[size[1] // 2]
    red, green = row[:, 0] == 255, row[:, 1] == 255
    # the line x = 0 projects to the image's middle column boundary
    mid = size[0] // 2
    assert red[: mid - 1].all() and green[mid + 1:].all()


@pytest.mark.parametrize("raster", RASTERS)
def test_points_and_triangles_share_the_depth_buffer(raster):
    scene, cam = _scene()
    scene.add(Node("wall", geometry=_quad(-1, 1, -1, 1, -3.0, (0, 0, 1))))
    pts = np.array([[-1.0, 0, -5.0], [1.0, 0, -2.0]], np.float32)  # behind / in front
    scene.add(Node("pts", geometry=PointCloud(pts, colors=[(1.0, 1.0, 0.0), (0.0, 1.0, 0.0)], point_size=3,
                                              point_shape="square")))
    frame = Renderer(scene, cam, (64, 64), backend=raster).render()
    c = frame.color
    assert not (c[..., 0] == 255).any()  # the yellow point behind the wall is hidden
    assert ((c[..., 1] == 255) & (c[..., 2] == 0)).sum() == 9  # the green one is drawn 3x3


def _checker(n=8):
    img = np.zeros((n, n, 3), np.uint8)
    img[(np.add.outer(np.arange(n), np.arange(n)) % 2) == 1] = 255
    return img


@pytest.mark.parametrize("raster", RASTERS)
def test_texture_on_a_grazing_plane_is_perspective_correct(raster):
    size, n, scale = (160, 120), 8, 4.0  # a texel every 0.5 world units
    scene, cam = _scene()
    cam.aspect = size[0] / size[1]
    # the floor y = -1 from z = -0.5 to -40, uv = (x, -z) / scale
    x0, x1, z0, z1 = -20.0, 20.0, -0.5, -40.0
    pos = np.array([[x0, -1, z0], [x1, -1, z0], [x1, -1, z1], [x0, -1, z1]], np.float32)
    uv = np.array([[x0, -z0], [x1, -z0], [x1, -z1], [x0, -z1]]) / scale
    tex = Texture(_checker(n), Sampler("repeat", "repeat", "nearest"))
    mesh = Mesh(pos, [[0, 2, 1], [0, 3, 2]], uvs=uv,
                material=Material(shading="unlit", texture=tex, double_sided=True))
    scene.add(Node("floor", geometry=mesh))
    frame = Renderer(scene, cam, size, backend=raster).render()
    t = np.tan(np.radians(45.0))
    checked = mismatched = 0
    for py in range(size[1] // 2 + 3, size[1], 3):
        for px in range(0, size[0], 7):
            xn, yn = (2 * px + 1) / size[0] - 1, 1 - (2 * py + 1) / size[1]
            d = np.array([xn * t * cam.aspect, yn * t, -1.0])
            p = d * (-1.0 / d[1])  # ray-plane intersection with y = -1
            if not (x0 < p[0] < x1 and z1 < p[2] < z0):
                continue
            u, v = p[0] / scale * n, -p[2] / scale * n
            if min(u % 1, v % 1) < 0.15 or max(u % 1, v % 1) > 0.85:
                continue  # too close to a texel edge for a pixel-centre comparison
            want = 255 * ((int(np.floor(u)) + int(np.floor(v))) % 2)
            assert frame.color[py, px, 0] == want, (px, py)
            checked += 1
            # affine (screen-linear) uv over the triangle would read another texel here
            mismatched += _affine_texel(cam, size, pos, uv * n, px, py) != want
    assert checked > 100 and mismatched > 10


def _affine_texel(cam, size, pos, uvn, px, py):
    vp = cam.projection_matrix @ cam.view_matrix
    c = np.c_[pos, np.ones(4)] @ vp.T
    s = np.c_[(c[:, 0] / c[:, 3] + 1) * size[0] / 2, (1 - c[:, 1] / c[:, 3]) * size[1] / 2]
    q = np.array([px + 0.5, py + 0.5])
    for tri in ([0, 2, 1], [0, 3, 2]):
        a, b, cc = s[tri]
        m = np.array([b - a, cc - a]).T
        l1, l2 = np.linalg.solve(m, q - a)
        if l1 >= 0 and l2 >= 0 and l1 + l2 <= 1:
            u, v = (1 - l1 - l2) * uvn[tri[0]] + l1 * uvn[tri[1]] + l2 * uvn[tri[2]]
            return 255 * ((int(np.floor(u)) + int(np.floor(v))) % 2)
    return -1


def test_sampler_wrap_modes_and_filters():
    # glTF REPEAT on a 2x1 red|green texture: u = 1.25, -0.75, 2.75 -> red, red, green
    rg = Texture(np.array([[[255, 0, 0], [0, 255, 0]]], np.uint8), Sampler(filter="nearest"))
    got = sample(rg, [[1.25, 0.5], [-0.75, 0.5], [2.75, 0.5]], linear=False)
    np.testing.assert_array_equal(got[:, :3], [[1, 0, 0], [1, 0, 0], [0, 1, 0]])
    grey = np.array([[[0] * 3, [85] * 3, [170] * 3, [255] * 3]], np.uint8)  # 4x1
    us = [[-0.75, 0.5], [1.25, 0.5], [2.75, 0.5]]
    expect = {  # texel indices floor(u * 4) = -3, 5, 11
        "repeat": [85, 85, 255],   # mod 4: 1, 1, 3
        "clamp": [0, 255, 255],    # 0, 3, 3
        "mirror": [170, 170, 255],  # i mod 8 = 5, 5, 3; 5 mirrors to 8 - 1 - 5 = 2
    }
    for mode, want in expect.items():
        tex = Texture(grey, Sampler(mode, mode, "nearest"))
        np.testing.assert_allclose(sample(tex, us, linear=False)[:, 0] * 255, want, atol=1e-9)
    # bilinear between texel centres (i + 0.5) / 4: u = 0.5 is halfway between texels 1
    # and 2, u = 0.125 is texel 0's centre, u = 0 is halfway between texel 3 (wrapped) and 0
    lin = Texture(grey, Sampler("repeat", "clamp", "linear"))
    got = sample(lin, [[0.5, 0.5], [0.125, 0.5], [0.0, 0.5]], linear=False)[:, 0] * 255
    np.testing.assert_allclose(got, [127.5, 0.0, 127.5], atol=1e-9)
    # filtered in linear space when decoding (as GL does for sRGB textures)
    got = sample(lin, [[0.5, 0.5]], linear=True)[0, 0]
    assert got == pytest.approx((srgb_to_linear(85 / 255) + srgb_to_linear(170 / 255)) / 2)


def _gl_index(i, n, mode):
    """GL's wrap of integer texel indices (OpenGL 4.6 section 8.14.2), one at a time."""
    if mode == "repeat":
        return i % n
    if mode == "clamp":
        return min(max(i, 0), n - 1)
    m = i % (2 * n)
    return m if m < n else 2 * n - 1 - m


@pytest.mark.parametrize("mode", ["repeat", "clamp", "mirror"])
def test_sampler_reads_gls_texels_for_any_coordinate(mode):
    # the sampler wraps once per axis with selects; it must read exactly the texels of
    # GL's index rule, at texel boundaries too (u * W an integer) and far from [0, 1]
    w = 5
    img = np.zeros((1, w, 4), np.uint8)
    img[0, :, 0] = [10, 60, 110, 160, 210]
    img[..., 3] = 255
    rng = np.random.default_rng(1)
    u = np.concatenate([rng.uniform(-7, 7, 400), np.arange(-35, 36) / w, [1e9 + 0.3]])
    uv = np.stack([u, np.full_like(u, 0.5)], 1)
    near = sample(Texture(img, Sampler(mode, mode, "nearest")), uv, linear=False)[:, 0] * 255
    want = [img[0, _gl_index(int(np.floor(x * w)), w, mode), 0] for x in u]
    np.testing.assert_allclose(near, want, atol=1e-9)
    got = sample(Texture(img, Sampler(mode, mode, "linear")), uv, linear=False)[:, 0] * 255
    x = u * w - 0.5
    i0, f = np.floor(x).astype(np.int64), x - np.floor(x)
    want = [img[0, _gl_index(i, w, mode), 0] * (1 - t) + img[0, _gl_index(i + 1, w, mode), 0] * t
            for i, t in zip(i0, f)]
    np.testing.assert_allclose(got, want, atol=1e-6)
    # the Numba resolve's twin (a multiply by 1 / the period) picks the same indices
    from engine.render.backends.numba_shading import _axis
    from engine.scene.sampling import _axis as reference

    code = {"repeat": 0, "clamp": 1, "mirror": 2}[mode]
    for linear in (False, True):
        want = reference(u, w, mode, linear)
        rp = 1.0 / (2 * w if mode == "mirror" else w)
        got = [_axis(x, w, code, linear, rp) for x in u]
        assert [g[0] for g in got] == want[0].tolist()
        assert [g[1] for g in got] == want[1].tolist()


@pytest.mark.parametrize("raster", RASTERS)
def test_unlit_factors_multiply_in_linear_light(raster):
    # glTF 2.0 section 3.9.2: factor x vertex colour in linear light, then encoded. The
    # factor 0.5 and the vertex colour 128/255 (stored as 8 bits): decode 0.21404 and
    # 0.21586, product 0.046203, encoded 0.23800 -> 61; the product of the encoded
    # values would be 0.2510 -> 64
    scene, cam = _scene()
    pos = np.array([[-1, -1, -2], [1, -1, -2], [1, 1, -2], [-1, 1, -2]], np.float32)
    scene.add(Node("q", geometry=Mesh(pos, [[0, 1, 2], [0, 2, 3]],
                                      colors=np.full((4, 3), 128 / 255),
                                      material=Material(color=(0.5, 0.5, 0.5),
                                                        shading="unlit"))))
    frame = Renderer(scene, cam, (16, 16), backend=raster).render()
    dec = lambda c: ((c + 0.055) / 1.055) ** 2.4
    want = round(255 * (1.055 * (dec(0.5) * dec(128 / 255)) ** (1 / 2.4) - 0.055))
    assert want == 61
    assert frame.color[8, 8].tolist() == [want, want, want, 255]


def test_texture_decoded_to_linear_once():
    img = np.array([[[0, 128, 255, 64], [188, 10, 3, 255]]], np.uint8)
    tex = Texture(img)
    lin = tex.linear
    assert lin.dtype == np.float32 and lin.shape == (1, 2, 4) and tex.linear is lin
    c = img / 255.0
    want = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)  # IEC 61966-2-1
    want[..., 3] = c[..., 3]  # alpha is not decoded
    np.testing.assert_allclose(lin, want, rtol=1e-6, atol=1e-9)


def test_numba_specular_table_is_within_its_bound():
    from engine.render.backends.numba_shading import SPECULAR_STEPS, specular_tables

    for s in (1.0, 1.5, 2.0, 7.0, 32.0, 100.0, 1000.0, 10000.0):
        (c,), (k,), (table,) = specular_tables([s])
        assert c == pytest.approx(2.0 ** (-16 / s))
        x = np.linspace(c, 1.0, 200_001)
        pos = np.minimum((x - c) * k, SPECULAR_STEPS - 1e-9)
        j = pos.astype(np.int64)
        got = table[j] + (table[j + 1] - table[j]) * (pos - j)
        assert np.abs(got - x**s).max() < 2e-5
        assert c**s == pytest.approx(2.0**-16)  # below c the power is under 2**-16


@pytest.mark.parametrize("raster", RASTERS)
def test_lit_sphere_matches_the_lighting_model(raster):
    size = (96, 96)
    scene = Scene()
    cam = scene.add(OrthographicCamera(height=2.4, aspect=1.0, near=0.1, far=10, position=(0, 0, 3)))
    ico = trimesh.creation.icosphere(subdivisions=5)
    base = (0.8, 0.6, 0.4)
    mesh = Mesh(np.asarray(ico.vertices, np.float32), np.asarray(ico.faces),
                normals=np.asarray(ico.vertices, np.float32),
                material=Material(color=base, specular=0.5, shininess=20.0))
    scene.add(Node("sphere", geometry=mesh))
    light = scene.add(DirectionalLight(intensity=0.9, position=(0, 0, 0)))
    light.look_at((-1.0, -1.0, -2.0))  # rays travel along (-1, -1, -2): from the upper right
    scene.add(AmbientLight(intensity=0.1))
    frame = Renderer(scene, cam, size, backend=raster).render()
    to_light = np.array([1.0, 1.0, 2.0]) / np.sqrt(6.0)
    view = np.array([0.0, 0.0, 1.0])
    half = (to_light + view) / np.linalg.norm(to_light + view)
    lin = srgb_to_linear(np.array(base))
    checked = 0
    for px, py in [(48, 48), (60, 40), (30, 60), (70, 30), (40, 20), (20, 50), (75, 75)]:
        x = ((2 * px + 1) / size[0] - 1) * 1.2
        y = (1 - (2 * py + 1) / size[1]) * 1.2
        if x * x + y * y > 0.9:
            continue
        nrm = np.array([x, y, np.sqrt(1 - x * x - y * y)])
        ndl = max(nrm @ to_light, 0.0)
        spec = 0.9 * 0.5 * max(nrm @ half, 0) ** 20 if ndl > 0 else 0.0
        want = np.rint(linear_to_srgb(lin * (0.1 + 0.9 * ndl) + spec) * 255)
        np.testing.assert_allclose(frame.color[py, px, :3], want, atol=1, err_msg=str((px, py)))
        checked += 1
    assert checked >= 5


@pytest.mark.parametrize("raster", RASTERS)
def test_default_headlight_and_back_face_culling(raster):
    scene, cam = _scene()
    front = Mesh(np.array([[-1, -1, -2], [1, -1, -2], [0, 1, -2]], np.float32), [[0, 1, 2]],
                 material=Material(color=(1.0, 1.0, 1.0)))
    scene.add(Node("front", geometry=front))
    frame = Renderer(scene, cam, (32, 32), backend=raster).render()
    # facing the camera: headlight 0.7 x N.L = 1 plus ambient 0.15, encoded to sRGB
    want = np.rint(linear_to_srgb(0.85) * 255)
    assert (frame.color[20, 16, :3] == want).all()
    back = Mesh(front.positions, [[0, 2, 1]], material=Material(color=(1.0, 1.0, 1.0)))
    scene.remove(scene.find("front"))
    node = scene.add(Node("back", geometry=back))
    assert (Renderer(scene, cam, (32, 32), backend=raster).render().depth == 1).all()
    back.material.double_sided = True
    node.geometry = back  # re-assign: the material changed after the node was drawn
    frame = Renderer(scene, cam, (32, 32), backend=raster).render()
    assert (frame.color[20, 16, :3] == want).all()  # lit from the side facing the camera


def test_wireframe_lines_step_one_pixel_per_column():
    scene, cam = _scene()
    scene.add(Node("tri", draw="wireframe", geometry=Mesh(
        np.array([[-1, -0.5, -2], [1, -0.5, -2], [0, 0.8, -2]], np.float32), [[0, 1, 2]],
        colors=np.ones((3, 3)))))
    frame = Renderer(scene, cam, (64, 64), backend="numpy").render()
    lit = frame.color[..., 0] == 255
    # the bottom edge spans x_ndc -0.5..0.5 at y_ndc -0.25: 32 pixels in one row
    assert lit[40].sum() == 32 and lit[40, 16:48].all()
    assert lit.sum() < 32 * 3  # three thin edges, nothing filled


def test_numpy_and_numba_render_identical_surfaces(ref_assets):
    from engine.cli.commands import load_source

    for rel in ["classic/teapot.obj", "gltf/Duck.glb", "gltf-khronos/BoxTextured/BoxTextured.gltf"]:
        scene, cam = load_source(str(ref_assets / rel), 4 / 3)
        a = Renderer(scene, cam, (160, 120), backend="numpy").render()
        b = Renderer(scene, cam, (160, 120), backend="numba").render()
        np.testing.assert_array_equal(a.depth, b.depth)
        # same winners and depth keys; colours within 1/255 (float order may differ)
        np.testing.assert_allclose(a.color, b.color, atol=1, rtol=0)
        assert (a.depth < 1).sum() > 1000


# --- mirror images (negative determinant) reverse the winding: glTF 2.0, 3.7.4 ---------
def _closed_cube():
    """(8, 3) corners and (12, 3) outward counter-clockwise triangles (trimesh's box)."""
    box = trimesh.creation.box(extents=(1.6, 1.6, 1.6))
    return np.asarray(box.vertices), np.asarray(box.faces)


def _cube_obj(path):
    v, f = _closed_cube()
    path.write_text("".join(f"v {x} {y} {z}\n" for x, y, z in v)
                    + "".join(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in f))
    return path


def _cube_gltf(path, **node):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "io"))
    from gltf_files import FLOAT, Gltf

    v, f = _closed_cube()
    g = Gltf()
    g.mesh({"POSITION": g.accessor(v, FLOAT)}, indices=g.accessor(f.reshape(-1).astype(np.uint32),
                                                                  5125), **node)
    return g.write_gltf(path)


def _centre_and_coverage(renderer):
    f = renderer.render()
    return float(f.depth[24, 32]), int((f.depth < 1).sum())


def _plain_cube_view(backend):
    v, f = _closed_cube()
    scene = Scene()
    scene.add(Node("cube", geometry=Mesh(v, f)))
    cam = scene.add(PerspectiveCamera(fov_y=60, position=(0, 0, 3)))
    return _centre_and_coverage(Renderer(scene, cam, size=(64, 48), backend=backend))


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("source", ["obj", "gltf_scale", "gltf_matrix"])
def test_mirrored_loaded_models_show_their_outside(tmp_path, backend, source):
    """A closed, single-sided cube under a mirror shows its near face (the depth there),
    as without the mirror, whichever axis or file carries it."""
    from engine import load

    plain = _plain_cube_view(backend)
    mirrors = [(-1, 1, 1), (1, -1, 1), (1, 1, -1), (-1, -1, -1)]
    for scale in mirrors:
        if source == "obj":
            node = Node("mirror", scale=scale)
            node.add(load(_cube_obj(tmp_path / "cube.obj")))
            assert not node.children[0].geometry.material.double_sided  # closed: culled
        elif source == "gltf_scale":
            node = load(_cube_gltf(tmp_path / "s.gltf", scale=list(map(float, scale))))
        else:
            m = np.diag([*map(float, scale), 1.0])
            node = load(_cube_gltf(tmp_path / "m.gltf", matrix=m.T.reshape(-1).tolist()))
        scene = Scene()
        scene.add(node)
        cam = scene.add(PerspectiveCamera(fov_y=60, position=(0, 0, 3)))
        got = _centre_and_coverage(Renderer(scene, cam, size=(64, 48), backend=backend))
        assert got[0] == pytest.approx(plain[0], abs=1e-6), scale  # the near face's depth
        assert got[1] == plain[1]


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_a_node_turning_into_a_mirror_image_is_reassembled_once(backend):
    v, f = _closed_cube()
    scene = Scene()
    node = scene.add(Node("cube", geometry=Mesh(v, f)))
    cam = scene.add(PerspectiveCamera(fov_y=60, position=(0, 0, 3)))
    r = Renderer(scene, cam, size=(64, 48), backend=backend)
    plain = _centre_and_coverage(r)
    first = r.primitives
    node.position = (0.0, 0.0, 0.0)  # moving keeps the assembly
    assert _centre_and_coverage(r) == plain and r.primitives is first
    node.scale = (-1.0, 1.0, 1.0)  # now a mirror image: reassembled, winding reversed
    assert _centre_and_coverage(r) == plain
    mirrored = r.primitives
    assert mirrored is not first
    np.testing.assert_array_equal(mirrored.triangles, first.triangles[:, [0, 2, 1]])
    node.scale = (-2.0, 1.0, 1.0)  # still a mirror: kept
    r.render()
    assert r.primitives is mirrored
    node.scale = (1.0, 1.0, 1.0)
    assert _centre_and_coverage(r) == plain
    np.testing.assert_array_equal(r.primitives.triangles, first.triangles)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_mirrored_instances_show_their_outside(backend):
    from engine import Instances

    v, f = _closed_cube()
    scene = Scene()
    scene.add(Instances(Mesh(v, f), name="cubes", positions=[(-1.2, 0, 0), (1.2, 0, 0)],
                        scales=[(1, 1, 1), (-1, 1, 1)]))
    cam = scene.add(PerspectiveCamera(fov_y=60, position=(0, 0, 3)))
    frame = Renderer(scene, cam, size=(96, 48), backend=backend).render()
    # the two cubes sit symmetrically about x = 0: the mirrored one's near face shows
    # where the plain one's does, so the depth image is symmetric
    np.testing.assert_allclose(frame.depth, frame.depth[:, ::-1], atol=1e-6)
    assert (frame.depth < 1).sum() > 800
