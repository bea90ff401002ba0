"""The CUDA kernels themselves, run on the CPU: shaders/*.cu compiled by the host
compiler against tests/native/cuda_emu.h and launched through the same Python code the
GPU uses (tests/cuda_emulation.py), compared with the NumPy references. Real threads race
on the atomics; only the hardware is left for a GPU run."""

from __future__ import annotations

import numpy as np
import pytest
from cuda_emulation import EmulatedModule, build

from engine import Mesh, Node, PerspectiveCamera, PointCloud, Renderer, Scene
from engine.arrays import to_host
from engine.cli.commands import load_source
from engine.render.backends.cupy_surfaces import MAX_PIECES, CudaSurfaces
from engine.render.backends.stages import FrameView
from engine.render.triangles import _PLANES, setup_triangles
from engine.scene.light import PointLight
from engine.scene.material import Material, Sampler, Texture


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return EmulatedModule(build(tmp_path_factory.mktemp("cuda_emu")))


def cuda_frame(module, renderer):
    """The CUDA surface stages (cupy_surfaces) on emulated kernels and NumPy arrays: the
    CUDA vertex stage replaces the renderer's, then rasterize and resolve."""
    cuda = CudaSurfaces(np, module.get_function)
    inputs = renderer.frame_inputs()
    b, cam = renderer.batch, renderer.camera
    view = FrameView(renderer.scene, cam, renderer.size, b.view_projection(cam),
                     renderer.effective_point_size(), renderer.scene.background,
                     b.vertex_revision)
    cuda.upload(inputs.prims, inputs.colors, renderer.backend.attributes(b, inputs.prims))
    clip, varyings, _ = cuda.vertex_stage(b, view.view_projection)
    inputs.shader.varyings = varyings
    inputs = inputs._replace(clip=clip)
    return cuda, cuda.resolve(cuda.rasterize(inputs, view), inputs, view)


def assert_same_frame(ref, got):
    np.testing.assert_array_equal(got.depth, ref.depth)  # same winners and depth keys
    np.testing.assert_allclose(got.color, ref.color, atol=1, rtol=0)


@pytest.mark.parametrize("rel", ["classic/teapot.obj", "gltf/Duck.glb",
                                 "gltf-khronos/BoxTextured/BoxTextured.gltf",
                                 "gltf-khronos/BoxVertexColors/BoxVertexColors.gltf"])
def test_cuda_surface_kernels_match_the_numpy_reference(module, ref_assets, rel):
    scene, camera = load_source(str(ref_assets / rel), 4 / 3)
    r = Renderer(scene, camera, (160, 120), backend="numpy")
    ref = r.render()
    module.launches.clear()
    _, got = cuda_frame(module, r)
    assert_same_frame(ref, got)
    assert (ref.depth < 1).sum() > 1000
    # one launch of each kernel per frame, whatever the number of triangles
    assert module.launches == {name: 1 for name in (
        "clear_keys", "surface_vertices", "classify_triangles", "raster_triangles",
        "resolve_surfaces")}


def test_cuda_kernels_clip_points_lights_and_textures(module):
    """Near-plane clipping (host pieces), points in the same keys, a point light,
    specular, flat shading, mirrored and clamped nearest/linear textures."""
    scene = Scene(background=(0.1, 0.2, 0.3))
    cam = scene.add(PerspectiveCamera(fov_y=70, aspect=4 / 3, near=0.1, far=50))
    img = np.random.default_rng(0).integers(0, 256, (5, 7, 4), dtype=np.uint8)
    floor = np.array([[-6, -1, 1], [6, -1, 1], [6, -1, -20], [-6, -1, -20]], np.float32)
    uv = np.array([[-1.3, 2.2], [2.7, 2.2], [2.7, -3.1], [-1.3, -3.1]])
    scene.add(Node("floor", geometry=Mesh(floor, [[0, 1, 2], [0, 2, 3]], uvs=uv, material=Material(
        texture=Texture(img, Sampler("mirror", "clamp", "linear")), specular=0.4))))
    wall = np.array([[-2, -1, -6], [2, -1, -6], [2, 2, -6], [-2, 2, -6]], np.float32)
    scene.add(Node("wall", geometry=Mesh(wall, [[0, 1, 2], [0, 2, 3]], uvs=uv * 0.5,
                                         material=Material(
        color=(0.9, 0.5, 0.2), shading="flat",
        texture=Texture(img, Sampler("repeat", "mirror", "nearest"))))))
    scene.add(Node("pts", geometry=PointCloud(np.array([[0, 0, -4.0], [0.5, 0.5, -7.0]],
                                                       np.float32), point_size=3)))
    scene.add(PointLight(intensity=6.0, position=(1.0, 1.5, -3.0)))
    r = Renderer(scene, cam, (96, 72), backend="numpy")
    ref = r.render()
    module.launches.clear()
    cuda, got = cuda_frame(module, r)
    assert_same_frame(ref, got)
    # the floor starts behind the camera (z = +1): clipped by the device kernel, into
    # the reference's pieces (same order, same snapped vertices)
    assert module.launches.get("clip_triangles") == 1
    inputs = r.frame_inputs()
    prims = inputs.prims
    double = np.array([m.double_sided for m in prims.materials], bool)
    ref_setup = setup_triangles(inputs.clip, prims.triangles, ~double[prims.tri_material],
                                r.size)
    for field in ("piece_tri", "x", "y"):
        np.testing.assert_array_equal(to_host(getattr(cuda.setup, field)),
                                      getattr(ref_setup, field))
    assert len(to_host(cuda.setup.piece_tri)) > 4
    assert MAX_PIECES == 3 + len(_PLANES) - 2  # FR_MAX_PIECES: each plane adds a vertex


def test_cuda_clip_kernel_is_the_reference_clipper_bit_for_bit(module):
    """classify_triangles + clip_triangles on triangles crossing every clip plane give
    the reference's pieces of the clipped triangles, in its order."""
    rng = np.random.default_rng(11)
    n, size = 3000, (160, 90)
    clip = rng.normal(0, 1.5, (3 * n, 4))
    clip[:, 3] = rng.uniform(-0.5, 2.0, 3 * n)
    clip[: n // 10, :2] *= 40.0  # beyond the guard band
    tris = rng.integers(0, 3 * n, (n, 3)).astype(np.int64)
    cull = (rng.random(n) < 0.5).astype(np.uint8)
    ref = setup_triangles(clip, tris, cull.astype(bool), size)
    f = module.get_function
    adj, det = np.empty((n, 3, 3)), np.empty(n)
    zc, wc = np.empty((n, 3)), np.empty((n, 3))
    status = np.empty(n, np.int8)
    x, y, area = np.empty((n, 3), np.int64), np.empty((n, 3), np.int64), np.empty(n, np.int64)
    f("triangles.cu", "classify_triangles")((8,), (64,), (
        clip, tris, cull, np.int64(n), np.float64(size[0]), np.float64(size[1]), adj, det,
        zc, wc, status, x, y, area))
    cut = np.flatnonzero(status == 2).astype(np.int64)
    assert len(cut) > 100
    slots = MAX_PIECES * len(cut)
    cx, cy = np.empty((slots, 3), np.int64), np.empty((slots, 3), np.int64)
    ctri, carea = np.empty(slots, np.int64), np.empty(slots, np.int64)
    f("triangles.cu", "clip_triangles")((8,), (64,), (
        clip, tris, cut, np.int64(len(cut)), np.float64(size[0]), np.float64(size[1]),
        cx, cy, ctri, carea))
    keep = np.flatnonzero(carea != 0)
    whole = int(np.count_nonzero((status == 1) & (area != 0)))
    np.testing.assert_array_equal(ctri[keep], ref.piece_tri[whole:])
    np.testing.assert_array_equal(cx[keep], ref.x[whole:])
    np.testing.assert_array_equal(cy[keep], ref.y[whole:])


def test_cuda_point_kernels_match_the_numpy_rasterizer(module):
    from engine.render.points import rasterize_points

    rng = np.random.default_rng(5)
    n, size = 20_000, (101, 77)
    xy = rng.uniform(-5, 106, (n, 2)).astype(np.float32)
    depth = rng.uniform(0, 1, n).astype(np.float32)
    depth[::7] = depth[0]  # ties go to the lowest index
    vis = rng.random(n) < 0.9
    colors = rng.integers(0, 256, (n, 4), dtype=np.uint8)
    sizes = rng.integers(1, 6, n).astype(np.uint8)
    ref = rasterize_points(xy, depth, vis, colors, size, sizes.astype(np.float64))
    f = module.get_function
    keys = np.empty(size[0] * size[1], np.uint64)
    f("raster.cu", "clear_keys")((4,), (64,), (keys, np.int64(keys.size)))
    f("raster.cu", "splat_points")((8,), (64,), (xy, depth, vis.view(np.uint8), sizes,
                                                 np.int64(1), np.int64(n), np.int32(size[0]),
                                                 np.int32(size[1]), keys))
    color = np.empty(keys.size, np.uint32)
    out_depth = np.empty(keys.size, np.float32)
    f("raster.cu", "resolve_keys")((4,), (64,), (keys, colors.view(np.uint32).reshape(-1),
                                                 np.uint32(0xFF000000), np.int64(keys.size),
                                                 color, out_depth))
    np.testing.assert_array_equal(color.view(np.uint8).reshape(ref.color.shape), ref.color)
    np.testing.assert_array_equal(out_depth.reshape(ref.depth.shape), ref.depth)


def test_cuda_projection_kernel_matches_the_numpy_backend(module):
    from engine.render.backends import get_projector
    from engine.render.backends.cupy_backend import mat4_arg
    from engine.scene.transforms import perspective_matrix

    rng = np.random.default_rng(2)
    n = 5000
    pos = rng.uniform(-3, 3, (n, 3)).astype(np.float32)
    oid = rng.integers(0, 4, n).astype(np.uint32)  # 3 is out of range: not visible
    model = np.tile(np.eye(4, dtype=np.float32), (3, 1, 1))
    model[:, 2, 3] = [-5, -6, -7]
    vp = perspective_matrix(60, 1.2, 0.1, 100).astype(np.float32)
    ref = get_projector("numpy").project(pos, oid, model, vp, (120, 100))
    xy = np.empty((n, 2), np.float32)
    d = np.empty(n, np.float32)
    vis = np.empty(n, np.uint8)
    module.get_function("transform.cu", "project_points")((3,), (128,), (
        pos, oid, model, mat4_arg(vp), np.uint32(3), np.float32(120), np.float32(100), np.int64(n),
        xy, d, vis))
    np.testing.assert_array_equal(vis.astype(bool), to_host(ref.visible))
    np.testing.assert_allclose(xy[vis == 1], to_host(ref.screen_xy)[vis == 1], rtol=1e-5)


def test_a_launch_with_a_python_scalar_or_wrong_arity_is_refused(module):
    keys = np.empty(4, np.uint64)
    with pytest.raises(TypeError, match="NumPy scalar"):
        module.get_function("raster.cu", "clear_keys")((1,), (1,), (keys, 4))
    with pytest.raises(TypeError, match="takes 2 arguments"):
        module.get_function("raster.cu", "clear_keys")((1,), (1,), (keys,))


def test_cuda_sprite_kernel_matches_the_numpy_reference_at_ties(module):
    """splat_sprites (shaders/raster.cu) against engine.render.sprites.splat_sprites:
    discs and squares, centres on pixel centres, edges and corners, integer diameters
    (pixel centres exactly on the rim), per-point and shared values: the same keys."""
    from engine.render.frame import new_keys
    from engine.render.sprites import splat_sprites

    rng = np.random.default_rng(4)
    n, size = 4000, (89, 67)
    xy = rng.uniform(-6, 95, (n, 2))
    xy[: n // 2] = np.round(xy[: n // 2] * 2) / 2
    xy = xy.astype(np.float32)
    depth = rng.uniform(0, 1, n).astype(np.float32)
    depth[::5] = depth[0]
    vis = rng.random(n) < 0.9
    diam = rng.uniform(0.4, 12, n).astype(np.float32)
    diam[::3] = rng.integers(1, 6, len(diam[::3]))
    rnd = rng.random(n) < 0.7
    f = module.get_function
    for d, r in ((diam, rnd), (np.float32(3.0), True), (diam, True), (np.float32(2.5), rnd)):
        want = splat_sprites(new_keys(size), xy, depth, vis, d, r, size)
        keys = new_keys(size)
        per_d, per_r = np.ndim(d) > 0, np.ndim(r) > 0
        f("raster.cu", "splat_sprites")((8,), (64,), (
            xy, depth, vis.view(np.uint8), np.atleast_1d(d).astype(np.float32),
            np.int64(per_d), np.atleast_1d(r).astype(np.uint8), np.int64(per_r),
            np.int64(n), np.int32(size[0]), np.int32(size[1]), keys))
        assert (want != np.iinfo(np.uint64).max).sum() > 1000
        np.testing.assert_array_equal(keys, want)
