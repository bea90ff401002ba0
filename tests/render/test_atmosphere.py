"""Fog and sky (engine.scene.atmosphere, engine.render.atmosphere): right values computed
here from the formulas, on the NumPy reference and the Numba backend (the parity matrix,
test_parity.py, runs them on CUDA and GL too)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine import Mesh, Node, PerspectiveCamera, Renderer, Scene
from engine.cli.args import fog_arg, sky_arg
from engine.scene.atmosphere import Fog, Sky
from engine.scene.material import Material

W, H, FOV = 128, 96, 60.0


def _srgb8(lin):
    lin = min(max(lin, 0.0), 1.0)
    s = lin * 12.92 if lin <= 0.0031308 else 1.055 * lin ** (1 / 2.4) - 0.055
    return round(s * 255)


def _lin(byte):
    c = byte / 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def _pixel_ray(col, row, pitch_deg=0.0):
    """World direction (unit) of the ray through a pixel centre for a camera at pitch
    ``pitch_deg`` (looking up), fov FOV, W x H."""
    t = math.tan(math.radians(FOV / 2))
    xv = (2 * (col + 0.5) / W - 1) * t * W / H
    yv = (1 - 2 * (row + 0.5) / H) * t
    p = math.radians(pitch_deg)
    d = np.array([xv, yv * math.cos(p) + math.sin(p), -math.cos(p) + yv * math.sin(p)])
    return d / np.linalg.norm(d)


def _wall_scene(distance, fog):
    scene = Scene(background=(0, 0, 0), fog=fog)
    pos = np.array([[-50, -50, -distance], [50, -50, -distance], [50, 50, -distance],
                    [-50, 50, -distance]], np.float32)
    scene.add(Node("wall", geometry=Mesh(pos, [[0, 1, 2], [0, 2, 3]],
                                         material=Material(color=(0, 0, 0), shading="unlit"))))
    cam = scene.add(PerspectiveCamera(fov_y=FOV, aspect=W / H, near=0.1, far=200))
    return scene, cam


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("fog,distance", [
    (Fog("linear", start=2.0, end=10.0, color="white"), 5.0),
    (Fog("linear", start=2.0, end=10.0, color="white"), 12.0),  # beyond end: all fog
    (Fog("exp", density=0.2, color="white"), 4.0),
    (Fog("exp2", density=0.15, color="white"), 6.0),
])
def test_fog_factor_at_chosen_depths(backend, fog, distance):
    scene, cam = _wall_scene(distance, fog)
    frame = Renderer(scene, cam, (W, H), backend=backend).render()
    for col, row in ((64, 48), (10, 80), (120, 5)):
        d = distance / -_pixel_ray(col, row)[2]  # radial distance to the wall z = -distance
        if fog.mode == "linear":
            f = (fog.end - d) / (fog.end - fog.start)
        elif fog.mode == "exp":
            f = math.exp(-fog.density * d)
        else:
            f = math.exp(-(fog.density * d) ** 2)
        f = min(max(f, 0.0), 1.0)
        want = _srgb8(1.0 - f)  # black surface, white fog, in linear light
        assert abs(int(frame.color[row, col, 0]) - want) <= 1, (col, row, d, f)
        assert frame.color[row, col, 3] == 255


def test_fog_without_sky_keeps_the_background():
    scene, cam = _wall_scene(5.0, Fog("exp", density=0.5, color="white"))
    scene.background = (0.2, 0.4, 0.6, 1.0)
    scene.find("wall").visible = False  # nothing drawn: every pixel is background
    frame = Renderer(scene, cam, (W, H), backend="numpy").render()
    empty = frame.depth >= 1
    assert empty.any()
    assert (frame.color[empty][:, :3] == [51, 102, 153]).all()


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_sky_rows_follow_the_camera_pitch(backend):
    sky = Sky(horizon="#ff8000", zenith="#0040ff", ground="#204020")
    scene = Scene(background=(0, 0, 0), sky=sky)
    pitch = 12.0
    cam = scene.add(PerspectiveCamera(fov_y=FOV, aspect=W / H, near=0.1, far=100))
    cam.look_at((0.0, math.sin(math.radians(pitch)), -math.cos(math.radians(pitch))))
    frame = Renderer(scene, cam, (W, H), backend=backend).render()
    hz, zn, gr = ([_lin(b) for b in bytes.fromhex(c[1:])] for c in
                  ("#ff8000", "#0040ff", "#204020"))
    # the horizon row: the ray at elevation 0 is at ndc y = -tan(pitch) / tan(fov / 2)
    t = math.tan(math.radians(FOV / 2))
    horizon_row = round((1 + math.tan(math.radians(pitch)) / t) * H / 2 - 0.5)
    for row in (0, H - 1, horizon_row, horizon_row - 1, horizon_row + 1):
        ray = _pixel_ray(64, row, pitch)
        e = math.degrees(math.asin(ray[1]))
        other = zn if e >= 0 else gr
        k = min(abs(e) / 90.0, 1.0)
        want = [_srgb8(a + k * (b - a)) for a, b in zip(hz, other)]
        got = frame.color[row, 64, :3].astype(int)
        assert np.abs(got - want).max() <= 1, (row, e, got, want)
        assert frame.color[row, 64, 3] == 255
    # the chosen row is the horizon's: its ray within one row's angle of horizontal, and
    # its red and green channels (bright, so flat in sRGB) the horizon's own
    assert abs(math.degrees(math.asin(_pixel_ray(64, horizon_row, pitch)[1]))) < FOV / H
    assert np.abs(frame.color[horizon_row, 64, :2].astype(int) - [255, 128]).max() <= 1


def test_fog_with_a_sky_fades_into_the_sky_in_its_direction():
    sky = Sky(horizon="#ff8000", zenith="#0040ff")
    scene, cam = _wall_scene(20.0, Fog("linear", start=1.0, end=2.0))
    scene.sky = sky
    frame = Renderer(scene, cam, (W, H), backend="numpy").render()
    assert (frame.depth < 1).all()  # the wall covers every pixel, fully fogged
    sky_only = Scene(sky=sky)
    sky_cam = sky_only.add(PerspectiveCamera(fov_y=FOV, aspect=W / H, near=0.1, far=200))
    want = Renderer(sky_only, sky_cam, (W, H), backend="numpy").render()
    assert np.abs(frame.color.astype(int) - want.color.astype(int)).max() <= 1


@pytest.mark.parametrize("kwargs,match", [
    ({"mode": "fuzzy"}, "fog mode"),
    ({"mode": "linear", "start": 5.0, "end": 2.0}, "start < end"),
    ({"mode": "linear", "density": 0.1}, "start and end"),
    ({"mode": "exp2", "density": 0.0}, "density must be > 0"),
    ({"mode": "exp", "density": float("nan")}, "finite"),
    ({"mode": "exp", "density": 0.1, "color": "nocolour"}, "fog color"),
])
def test_bad_fog_is_a_clear_error(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Fog(**kwargs)


def test_scene_checks_fog_and_sky_types():
    with pytest.raises(TypeError, match="Scene.fog"):
        Scene(fog="exp2")
    with pytest.raises(TypeError, match="Scene.sky"):
        Scene(sky=("red", "blue"))


def test_cli_fog_and_sky_syntax():
    f = fog_arg("linear:5:50:#aabbcc")
    assert (f.mode, f.start, f.end) == ("linear", 5.0, 50.0)
    assert np.allclose(f.color, (0xaa / 255, 0xbb / 255, 0xcc / 255, 1))
    f = fog_arg("exp2:0.05")
    assert (f.mode, f.density, f.color) == ("exp2", 0.05, None)
    s = sky_arg("white,#000080")
    assert s.horizon == (1, 1, 1, 1) and np.allclose(s.zenith, (0, 0, 128 / 255, 1))
    assert s.ground == s.horizon


@pytest.mark.parametrize("camera_kind", ["perspective", "orthographic"])
@pytest.mark.parametrize("fog, sky", [
    (Fog("linear", start=2.0, end=6.0), Sky("#d8e4f0", "#3a6ea5", ground="#203010")),
    (Fog("exp2", density=0.3, color="#ff8000"), None),
    (Fog("exp", density=0.5), None),
    (None, Sky("black", "white", ground="red")),
])
def test_compiled_pass_matches_the_reference(camera_kind, fog, sky):
    """The Numba pass (engine.render.backends.numba_atmosphere) against the NumPy stage
    on one frame, a rolled and pitched camera: every byte within 1, alpha equal."""
    from engine import OrthographicCamera
    from engine.render.atmosphere import apply_atmosphere
    from engine.render.backends.numba_atmosphere import apply_atmosphere_numba
    from engine.scene.procedural import box

    scene = Scene(background=(0.1, 0.2, 0.3, 0.0), fog=fog, sky=sky)
    for i in range(4):
        scene.add(Node(f"box{i}", geometry=box((1.0, 1.0, 1.0)),
                       position=(1.5 * i - 2.0, 0.0, -2.0 * i)))
    if camera_kind == "perspective":
        camera = PerspectiveCamera(fov_y=FOV, aspect=W / H, position=(0, 1, 4))
    else:
        camera = OrthographicCamera(height=8.0, aspect=W / H, position=(0, 1, 4))
    camera.rotation = (-20.0, 10.0, 15.0)
    scene.add(camera)
    bare = Scene(background=scene.background)
    for node in list(scene.children):
        if node is not camera:
            bare.add(Node(node.name, geometry=node.geometry, position=node.position))
    frame = Renderer(bare, camera, (W, H), backend="numpy").render()
    assert 0.05 < (frame.depth < 1).mean() < 0.95  # both drawn and empty pixels
    want, got = frame.color.copy(), frame.color.copy()
    apply_atmosphere(want, frame.depth, scene, camera)
    apply_atmosphere_numba(got, frame.depth, scene, camera)
    assert np.abs(want.astype(int) - got).max() <= 1
    np.testing.assert_array_equal(want[..., 3], got[..., 3])
    assert (want != frame.color).any()  # the stage changed the frame


@pytest.mark.parametrize("min_filter", ["linear_mipmap_linear", "nearest_mipmap_nearest"])
def test_gl_fog_and_sky_over_a_mipmapped_texture(min_filter):
    # GL drew mipmapped surfaces as (0, 0, 0, 0) under fog or a sky: the texture's
    # sampler object stayed bound to unit 0, where the fog pass reads the frame
    from mip_floor import checker, floor_scene

    scene, camera = floor_scene(checker(), min_filter, size=(96, 72))
    scene.fog = Fog("exp", density=0.05)
    scene.sky = Sky("#ffa040", "#2040c0")
    want = Renderer(scene, camera, (96, 72), backend="numpy").render()
    with Renderer(scene, camera, (96, 72), backend="numpy", raster="gl") as r:
        got = r.render()
        assert r.drawn_by == "gl"
    covered = (want.depth < 1) & (got.depth < 1)
    assert covered.sum() > 1000 and (got.color[..., 3] == 255).all()
    diff = np.abs(want.color[..., :3].astype(int) - got.color[..., :3]).max(axis=-1)
    assert diff[(want.depth >= 1) & (got.depth >= 1)].max() <= 2  # the sky
    # the floor: the same mean (before the fix GL's was 0); a nearest filter picks other
    # texels of the 1-texel checker where GL's level selection differs, so pixel by
    # pixel only for trilinear (a few levels where the far floor is minified)
    mean = [float(f.color[..., :3][covered].mean()) for f in (want, got)]
    assert abs(mean[0] - mean[1]) <= 6
    if min_filter == "linear_mipmap_linear":
        assert np.percentile(diff[covered], 99) <= 8


def test_sky_direction_does_not_depend_on_the_far_plane():
    # the far plane's w (1 / far) underflowed in float32 for far / near of about 1e10:
    # the NumPy stage drew a black sky, and the compiled pass turned it upside down
    from engine.render.atmosphere import apply_atmosphere
    from engine.render.backends.numba_atmosphere import apply_atmosphere_numba

    rows = {}
    for near, far in ((0.1, 100.0), (0.1, 1e9), (1e-9, 1e9)):
        scene = Scene(background=(0, 0, 0), sky=Sky("white", "blue", ground="red"))
        camera = PerspectiveCamera(fov_y=FOV, aspect=W / H, near=near, far=far)
        camera.set_viewport(W, H)
        for fn in (apply_atmosphere, apply_atmosphere_numba):
            color = np.zeros((H, W, 4), np.uint8)
            fn(color, np.ones((H, W), np.float32), scene, camera)
            rows[(near, far, fn.__name__)] = color[[0, H - 1], W // 2, :3].astype(int)
    first = rows[(0.1, 100.0, "apply_atmosphere")]
    assert first[0, 2] > first[0, 0] and first[1, 0] > first[1, 2]  # zenith blue, ground red
    for got in rows.values():
        assert np.abs(got - first).max() <= 1


@pytest.mark.parametrize("backend", ["numpy", "numba", "gl"])
def test_multisampled_edges_take_the_sky_and_keep_their_coverage_under_fog(backend):
    # the stage ran after the samples were mixed: an edge pixel's empty samples showed
    # the background (an outline against the sky) and fog covered the whole pixel by its
    # nearest surface (a hard edge); now each layer (GL: each sample, in its resolve) is
    # fogged by its own depth
    from engine.scene.procedural import box

    def frame(**scene_kw):
        scene = Scene(**scene_kw)
        scene.add(Node("box", geometry=box(material=Material(shading="unlit",
                                                             color=(0.9, 0.9, 0.9)))))
        camera = scene.add(PerspectiveCamera(fov_y=FOV, aspect=W / H, position=(0.3, 0.4, 3)))
        camera.look_at((0, 0, 0))
        kw = {"backend": "numba", "raster": "gl"} if backend == "gl" else {"backend": backend}
        with Renderer(scene, camera, (W, H), msaa=4, **kw) as r:
            return r.render()

    white_sky = frame(background=(0, 0, 0, 0), sky=Sky("white", "white"))
    white_bg = frame(background="white")
    assert np.abs(white_sky.color.astype(int) - white_bg.color).max() <= 1
    assert (white_sky.color[..., 3] == 255).all()
    fogged = frame(background="black", fog=Fog("linear", start=0.0, end=1e-6, color="blue"))
    blue = fogged.color[..., 2].astype(int)
    partial = (blue > 10) & (blue < 245)  # anti-aliased edge pixels, blue by coverage
    assert partial.sum() > 40 and (fogged.color[..., :2] == 0).all()
