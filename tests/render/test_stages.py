"""The render stages one by one, on inputs built by hand and against values worked out
here: the surface vertex stage (NumPy, Numba and the exact CUDA kernel), the line raster,
the resolve (NumPy and Numba). The material record is test_material_record.py's; whole
frames on every backend are test_parity.py's."""

from __future__ import annotations

import numpy as np
import pytest
from cuda_emulation import EmulatedModule, build

from engine import DirectionalLight, Mesh, Node, PerspectiveCamera, Renderer, Scene
from engine.render.attributes import VARYING_COUNT, VARYINGS, layout_rows
from engine.render.backends.numba_shading import resolve_numba
from engine.render.backends.numba_vertex import surface_vertices_numba
from engine.render.frame import EMPTY_KEY, cleared_keys, fill_empty, new_keys
from engine.render.lines import LINE_DEPTH_BIAS, fragment_colors, raster_lines
from engine.render.shading import resolve
from engine.render.surface_vertices import mvp_matrices, normal_matrices, surface_vertices
from engine.render.triangles import setup_triangles
from engine.scene.material import Material
from engine.scene.transforms import perspective_matrix, trs_matrix


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return EmulatedModule(build(tmp_path_factory.mktemp("stages")))


def _srgb_decode(c):  # IEC 61966-2-1
    c = np.asarray(c, np.float64)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _srgb_encode(v):
    v = np.asarray(v, np.float64)
    return np.where(v <= 0.0031308, v * 12.92, 1.055 * v ** (1 / 2.4) - 0.055)


# ------------------------------------------------------------------- vertex stage
def deformation_arguments(tables=None):
    """The surface_vertices kernel's deformation arguments (engine.render.deform)."""
    from engine.render.attributes import packed_offset
    from engine.render.deform import kernel_tables

    d = kernel_tables(tables)
    return (np.int32(tables is not None), d["slots"], d["inf_joint"], d["inf_weight"],
            np.int32(d["inf_joint"].shape[1]), d["deltas"], d["weights"], d["joints"],
            np.int32(packed_offset("normal")), np.int32(packed_offset("tangent")))


def no_deformation():
    return deformation_arguments(None)


def _vertex_inputs(n=300):
    rng = np.random.default_rng(3)
    pos = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    attrs = np.zeros((n, VARYING_COUNT - 3))
    no, _ = VARYINGS["normal"]
    uo, _ = VARYINGS["uv0"]
    attrs[:, no - 3:no] = rng.normal(size=(n, 3))
    attrs[:, uo - 3:uo - 1] = rng.uniform(-2, 2, (n, 2))
    co = VARYINGS["color_linear"][0] - 3  # the vertex colour, RGBA
    attrs[:, co:co + 4] = rng.uniform(0, 1, (n, 4))
    oid = np.repeat(np.arange(3, dtype=np.uint32), n // 3)
    model = np.stack([trs_matrix((0, 0, -5), (0, 0, 0, 1), (2, 1, 1)),
                      trs_matrix((1, 2, -6), (0, 0.38268343, 0, 0.92387953), (1, 1, 1)),
                      trs_matrix((-1, 0, -4), (0.5, 0.5, 0.5, 0.5), (0.5, 3, 1))]
                     ).astype(np.float64)
    vp = perspective_matrix(60, 1.5, 0.1, 100).astype(np.float64)
    runs = np.array([[0, n // 3, 0], [n // 3, 2 * n // 3, 1], [2 * n // 3, n, 2]], np.int64)
    return pos, attrs, oid, model, vp, runs


def test_vertex_stage_on_every_backend_gives_the_same_bits_and_the_right_values(module):
    pos, attrs, oid, model, vp, runs = _vertex_inputs()
    n = len(pos)
    ref = surface_vertices(pos, oid, model, vp, attrs, runs)
    nb = surface_vertices_numba(pos, oid, model, vp, attrs, runs)
    clip, vary = np.empty((n, 4)), np.empty((n, VARYING_COUNT))
    rows = layout_rows()
    module.get_function("surface_vertices.cu", "surface_vertices")((2,), (64,), (
        pos, oid, mvp_matrices(vp, model), np.ascontiguousarray(model),
        np.ascontiguousarray(normal_matrices(model)), attrs, np.int32(attrs.shape[1]), rows,
        np.int32(len(rows)), np.int32(VARYING_COUNT), np.int64(n), np.int32(1),
        np.ones(n, np.uint8), clip, vary,
        np.int32(0), np.float64(0), np.float64(0), np.zeros((1, 2), np.float32),
        np.zeros(1, np.float32), np.zeros(1, np.uint8), *no_deformation()))
    for got in (nb, (clip, vary)):
        for a, b in zip(ref, got):
            np.testing.assert_array_equal(a, b)
    # the values: clip = VP M p, position = M p, normal = normalize(M^-T n) per object,
    # texture coordinates and colours as given
    hom = np.c_[pos.astype(np.float64), np.ones(n)]
    m = model[oid]
    np.testing.assert_allclose(ref[0], np.einsum("ij,njk,nk->ni", vp, m, hom), rtol=1e-12,
                               atol=1e-12)
    po, no, uo = VARYINGS["position"][0], VARYINGS["normal"][0], VARYINGS["uv0"][0]
    np.testing.assert_allclose(ref[1][:, po:po + 3], np.einsum("njk,nk->nj", m, hom)[:, :3],
                               atol=1e-12)
    want = np.einsum("nkj,nk->nj", np.linalg.inv(m[:, :3, :3]), attrs[:, no - 3:no])
    want /= np.linalg.norm(want, axis=1, keepdims=True)
    np.testing.assert_allclose(ref[1][:, no:no + 3], want, atol=1e-12)
    np.testing.assert_array_equal(ref[1][:, uo:], attrs[:, uo - 3:])
    # object 0 scales x by 2: the normal (1, 1, 0)/sqrt(2) leans to y, (0.5, 1, 0)
    one = attrs[:1].copy()
    one[0, no - 3:no] = np.array([1, 1, 0]) / np.sqrt(2)
    _, v = surface_vertices(pos[:1], oid[:1], model, vp, one, np.array([[0, 1, 0]]))
    np.testing.assert_allclose(v[0, no:no + 3], np.array([0.5, 1, 0]) / np.sqrt(1.25),
                               atol=1e-7)


def test_vertex_stage_gives_zero_normals_for_a_singular_model():
    model = np.stack([np.diag([1.0, 0.0, 1.0, 1.0])])
    attrs = np.ones((2, VARYING_COUNT - 3))
    _, vary = surface_vertices(np.zeros((2, 3), np.float32), np.zeros(2, np.uint32), model,
                               np.eye(4), attrs, np.array([[0, 2, 0]]))
    no = VARYINGS["normal"][0]
    assert vary[:, no:no + 3].tolist() == [[0.0, 0.0, 0.0]] * 2


# ---------------------------------------------------------------------- line raster
def _clip_of_pixels(points, size, z=0.0, w=1.0):
    """Clip coordinates (w = ``w``) of window pixel positions (x right, y down)."""
    wpx, hpx = size
    p = np.asarray(points, np.float64)
    x = (p[:, 0] / (0.5 * wpx) - 1.0) * w
    y = (1.0 - p[:, 1] / (0.5 * hpx)) * w
    return np.stack([x, y, np.full(len(p), z * w), np.full(len(p), w)], 1)


def test_line_stage_lights_one_pixel_per_major_axis_step():
    size = (20, 10)
    clip = _clip_of_pixels([(2.5, 3.5), (12.5, 5.5)], size, z=0.2)
    keys = new_keys(size)
    raster_lines(keys, clip, np.array([[0, 1]]), size, id_base=7)
    drawn = np.flatnonzero(keys != EMPTY_KEY)
    # x-major from pixel centre 2.5 to 12.5: columns 2..11, y = floor(3.5 + 2 f)
    cols = np.arange(2, 12)
    f = (cols + 0.5 - 2.5) / 10
    rows = np.floor(3.5 + 2 * f).astype(int)
    assert sorted(drawn.tolist()) == sorted((rows * 20 + cols).tolist())
    k = keys[rows * 20 + cols]
    assert ((k & np.uint64(0xFFFFFFFF)) == 7).all()
    depth = (k >> np.uint64(32)).astype(np.uint32).view(np.float32)
    np.testing.assert_allclose(depth, 0.2 * 0.5 + 0.5 - LINE_DEPTH_BIAS, atol=1e-7)


def test_line_stage_clips_at_the_near_plane_and_skips_non_finite_ends():
    size = (40, 10)
    a = _clip_of_pixels([(5.5, 5.5)], size, z=0.0, w=1.0)[0]
    b = a.copy()
    b[2], b[3] = -3.0, 1.0  # z < -w: behind the near plane
    b[0] = 30.0 / 20 - 1.0 + 0.0  # x of pixel 30 at w = 1
    keys = new_keys(size)
    frags = raster_lines(keys, np.stack([a, b]), np.array([[0, 1]]), size, 0)
    # z goes 0 -> -3 linearly: z = -w (w = 1) at t = 1/3, so the line stops a third of
    # the way, at x = 5.5 + (30 - 5.5) / 3 = 13.67: pixel centres 5.5 .. 13.5
    cols = np.flatnonzero((keys != EMPTY_KEY).reshape(10, 40).any(axis=0))
    assert cols.tolist() == list(range(5, 14))
    # each fragment's place on the whole segment: w = 1 at both ends, so the window t
    # along the visible third, scaled by 1/3; the colours follow it in linear light
    # (black -> red over the whole segment: linear 1/3, sRGB 156, at the clipping point)
    order = np.argsort(frags.pixel)
    x_end = 5.5 + (30 - 5.5) / 3
    want = (np.arange(5, 14) + 0.5 - 5.5) / (x_end - 5.5) / 3
    np.testing.assert_allclose(frags.s[order], want, atol=1e-12)
    assert (frags.pixel[order] % 40).tolist() == list(range(5, 14))
    ends = np.array([[[0, 0, 0, 255], [255, 0, 0, 255]]], np.uint8)
    red = fragment_colors(ends, frags)[order, 0]
    # IEC 61966-2-1 encoding of the linear value, written out
    enc = np.where(want <= 0.0031308, 12.92 * want, 1.055 * want ** (1 / 2.4) - 0.055)
    assert red.tolist() == np.rint(255 * enc).astype(int).tolist()
    nan = np.stack([a, np.full(4, np.nan)])
    keys = new_keys(size)
    assert raster_lines(keys, nan, np.array([[0, 1]]), size, 0).pixel.size == 0
    assert (keys == EMPTY_KEY).all()


# ------------------------------------------------------------------------ resolve
def _resolve_inputs(shading, light=None, grey=0.5):
    """A quad facing the camera, one point and one line id; the frame's inputs after
    setup, and a key buffer written by hand: pixel 0 the point, 1 the line, the centre
    the first triangle, the rest empty."""
    scene = Scene(background=(0.0, 0.25, 0.5))
    q = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], np.float32)
    scene.add(Node("quad", geometry=Mesh(q, [[0, 1, 2], [0, 2, 3]], material=Material(
        color=(grey, grey, grey), shading=shading))))
    if light is not None:
        scene.add(light)
    cam = scene.add(PerspectiveCamera(fov_y=60, aspect=1.0, position=(0, 0, 3)))
    size = (16, 16)
    r = Renderer(scene, cam, size, backend="numpy")
    inputs = r.frame_inputs()
    prims = inputs.prims
    inputs.shader.setup = setup_triangles(inputs.clip, prims.triangles,
                                          np.ones(len(prims.triangles), bool), size)
    n = r.batch.vertex_count
    keys = new_keys(size)
    depth_bits = np.uint64(np.float32(0.25).view(np.uint32)) << np.uint64(32)
    keys[0] = depth_bits | np.uint64(2)                       # point: vertex 2
    keys[1] = depth_bits | np.uint64(n + len(prims.triangles))  # line 0
    centre = 8 * 16 + 8
    keys[centre] = depth_bits | np.uint64(n)                  # triangle 0
    points = np.zeros((n, 4), np.uint8)
    points[2] = (10, 20, 30, 255)
    line_rgba = np.array([[200, 100, 50, 255]], np.uint8)
    return keys, size, n, points, scene.background, inputs.shader, len(prims.triangles), \
        line_rgba, centre


@pytest.mark.parametrize("stage", [resolve, resolve_numba], ids=["numpy", "numba"])
def test_resolve_stage_colours_points_lines_triangles_and_background(stage):
    # grey 0.4: unlit decodes and encodes again, 0.4 * 255 = 102 (0.5 would be a tie,
    # 127.5, that any rounding of the round trip may send either way)
    keys, size, n, points, bg, shader, t, line_rgba, centre = _resolve_inputs("unlit", grey=0.4)
    frame = stage(keys, size, n, points, bg, shader, t, line_rgba)
    color, depth = frame.color.reshape(-1, 4), frame.depth.reshape(-1)
    assert color[0].tolist() == [10, 20, 30, 255]
    assert color[1].tolist() == [200, 100, 50, 255]
    assert color[centre].tolist() == [102, 102, 102, 255]  # unlit: the colour as given
    assert color[5].tolist() == [0, 64, 128, 255] and depth[5] == 1.0  # background
    assert depth[0] == depth[1] == depth[centre] == 0.25


@pytest.mark.parametrize("stage", [resolve, resolve_numba], ids=["numpy", "numba"])
def test_resolve_stage_lights_in_linear_space(stage):
    # a directional light of radiance 0.8 straight onto the quad (N.L = 1), no ambient:
    # encode(decode(0.5) * 0.8)
    sun = DirectionalLight(intensity=0.8)  # travels along -Z, onto the +Z-facing quad
    keys, size, n, points, bg, shader, t, line_rgba, centre = _resolve_inputs("lit", sun)
    frame = stage(keys, size, n, points, bg, shader, t, line_rgba)
    want = int(np.rint(_srgb_encode(_srgb_decode(0.5) * 0.8) * 255))
    assert frame.color.reshape(-1, 4)[centre].tolist() == [want] * 3 + [255]
    assert want == 115  # 1.055 * 0.1712 ** (1 / 2.4) - 0.055 = 0.4507


# --------------------------------------------------------------- the backend's stages
def test_numpy_backend_is_numpy_in_every_stage_the_batch_matrices_too():
    scene = Scene()
    scene.add(Node("quad", geometry=Mesh(np.zeros((3, 3), np.float32), [[0, 1, 2]])))
    cam = scene.add(PerspectiveCamera())
    for name in ("numpy", "numba"):
        r = Renderer(scene, cam, (8, 8), backend=name)
        assert (r.backend.name, r.projector.name, r.batch.transforms) == (name, name, name)
        assert r.backend.for_frame(r._assembly()) is r.backend  # no fallback on the CPU


def test_the_numba_vertex_kernels_compile_to_parallel_loops():
    # a prange body Numba cannot parallelise (the vertex block's loops inline in it,
    # with their `continue` statements, were one) compiles to a serial loop with only a
    # NumbaPerformanceWarning: compile the kernels afresh and require none
    import warnings

    import numba

    from engine.render.backends import numba_vertex as nv
    from engine.render.deform import KERNEL_TABLES, kernel_tables

    pos, attrs, _, model, vp, runs = _vertex_inputs(30)
    out = nv.VertexBuffers()
    mats = out.matrices(len(model))
    with warnings.catch_warnings():
        warnings.simplefilter("error", numba.NumbaPerformanceWarning)
        numba.njit(parallel=True, cache=False)(nv._slot_matrices_body)(vp, model, *mats)
        numba.njit(parallel=True, cache=False)(nv._vertices_body)(
            pos, nv.blocks_of(runs), runs, np.ones(len(runs), bool), *mats, attrs, True,
            out.clip(30), out.varyings(30), False, 0.0, 0.0, 1e-7, out.no_points.screen_xy,
            out.no_points.depth, out.no_points.visible, False,
            *(kernel_tables(None)[k] for k in KERNEL_TABLES))


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_vertex_stage_output_is_finite_for_points_beside_meshes(backend):
    # a point cloud's vertices are no mesh's: their clip and varyings rows were left as
    # whatever memory held (GL's float32 upload overflowed casting them); now 0
    from engine import PointCloud
    from engine.scene.procedural import box

    scene = Scene()
    rng = np.random.default_rng(3)
    scene.add(Node("cloud", geometry=PointCloud(rng.uniform(-1, 1, (5000, 3)))))
    scene.add(Node("box", geometry=box()))
    camera = scene.add(PerspectiveCamera(position=(0, 0, 4)))
    with Renderer(scene, camera, (64, 48), backend=backend) as r:
        for _ in range(2):  # the second frame reuses the buffers
            inputs = r.frame_inputs()
            assert np.isfinite(inputs.clip).all()
            assert np.isfinite(inputs.shader.varyings).all()


def test_key_buffers_clear_to_the_empty_key_in_place():
    assert EMPTY_KEY == np.uint64(2**64 - 1)  # what the byte fill of fill_empty relies on
    keys = np.random.default_rng(3).integers(0, 2**63, (2, 12), dtype=np.uint64)
    assert fill_empty(keys) is keys and (keys == EMPTY_KEY).all()
    reused = np.arange(6, dtype=np.uint64)
    assert cleared_keys(reused, (3, 2)) is reused and (reused == EMPTY_KEY).all()
    fresh = cleared_keys(reused, (4, 2))  # another size: a new buffer
    assert fresh is not reused and fresh.shape == (8,) and (fresh == EMPTY_KEY).all()
    assert (new_keys((5, 3)) == EMPTY_KEY).all() and new_keys((5, 3)).shape == (15,)
