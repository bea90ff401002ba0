"""The glTF metallic-roughness shading, KHR_lights_punctual lights and tone mapping
against values computed here, independently of engine.render.pbr: the BRDF of glTF 2.0
Appendix B written out in a few lines of NumPy, the spot and range windows of the
extension, the Khronos PBR Neutral curve evaluated by hand."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
import stand_in_device

from engine import (
    DirectionalLight,
    Material,
    Mesh,
    Node,
    OrthographicCamera,
    PerspectiveCamera,
    PointLight,
    Renderer,
    Scene,
    SpotLight,
    Texture,
)
from engine.io import load

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "io"))
from gltf_files import Gltf

SIZE = 64
HALF = 2.0  # the orthographic camera sees [-2, 2] x [-2, 2]


def encode(lin):
    """IEC 61966-2-1 sRGB encode of linear values, to 8 bits."""
    lin = np.clip(np.asarray(lin, np.float64), 0, 1)
    s = np.where(lin <= 0.0031308, 12.92 * lin, 1.055 * lin ** (1 / 2.4) - 0.055)
    return np.rint(s * 255).astype(int)


def appendix_b(n, v, l, base, metallic, roughness):
    """glTF 2.0 Appendix B, written out: f = (1 - F) c_diff / pi + F D Vis."""
    n, v, l, base = (np.asarray(x, float) for x in (n, v, l, base))
    h = (l + v) / np.linalg.norm(l + v)
    a2 = roughness**4
    nh, nl, nv, vh = n @ h, n @ l, n @ v, v @ h
    d = a2 / (math.pi * (nh * nh * (a2 - 1) + 1) ** 2) if nh > 0 else 0.0
    vis = 1 / ((abs(nl) + math.sqrt(a2 + (1 - a2) * nl * nl))
               * (abs(nv) + math.sqrt(a2 + (1 - a2) * nv * nv)))
    f0 = 0.04 * (1 - metallic) + base * metallic
    fres = f0 + (1 - f0) * (1 - abs(vh)) ** 5
    return (1 - fres) * base * (1 - metallic) / math.pi + fres * d * vis


def srgb_decode(c):
    c = np.asarray(c, float)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def quad(material, size=HALF, rotate_y=0.0):
    pos = np.array([[-size, -size, 0], [size, -size, 0], [size, size, 0], [-size, size, 0]],
                   np.float32)
    node = Node("quad", geometry=Mesh(pos, [[0, 1, 2], [0, 2, 3]],
                                      uvs=np.array([[0, 1], [1, 1], [1, 0], [0, 0]], np.float32),
                                      material=material))
    node.rotation = (0.0, math.sin(rotate_y / 2), 0.0, math.cos(rotate_y / 2))
    return node


def ortho_scene(*nodes, **scene_kw):
    scene = Scene(**scene_kw)
    for n in nodes:
        scene.add(n)
    cam = OrthographicCamera(height=2 * HALF, aspect=1.0, near=0.1, far=50)
    cam.position = (0, 0, 10)
    scene.add(cam).look_at((0, 0, 0))
    return scene, cam


def directional(direction_to_light, intensity=1.0, color=(1, 1, 1)):
    light = DirectionalLight("sun", color=color, intensity=intensity)
    light.position = tuple(np.asarray(direction_to_light, float) * 5)
    light.look_at((0, 0, 0))
    return light


def render(scene, cam, backend="numpy"):
    return Renderer(scene, cam, (SIZE, SIZE), backend=backend).render().color


@pytest.mark.parametrize("metallic,roughness,base", [
    (0.0, 0.5, (0.8, 0.3, 0.2)), (1.0, 0.4, (0.9, 0.6, 0.3)), (0.3, 0.8, (0.2, 0.7, 0.9)),
    (0.0, 1.0, (1.0, 1.0, 1.0))])
def test_brdf_matches_appendix_b(metallic, roughness, base):
    # a quad turned 30 degrees about y, seen by an orthographic camera (V = +z), lit by
    # one directional light from a direction in neither the N-V plane nor along N
    tilt = math.radians(30)
    n = np.array([math.sin(tilt), 0, math.cos(tilt)])
    l_dir = np.array([-0.3, 0.5, 0.8]) / np.linalg.norm([-0.3, 0.5, 0.8])
    e = 0.9
    base_srgb = encode(base) / 255
    mat = Material(color=tuple(base_srgb), shading="pbr", metallic=metallic,
                   roughness=roughness, vertex_colors=False)
    scene, cam = ortho_scene(quad(mat, rotate_y=tilt), directional(l_dir, e))
    px = render(scene, cam)[SIZE // 2, SIZE // 2]
    f = appendix_b(n, [0, 0, 1], l_dir, srgb_decode(base_srgb), metallic, roughness)
    want = encode(math.pi * f * e * (n @ l_dir))
    assert np.abs(px[:3].astype(int) - want).max() <= 1, (px, want)


def test_emissive_black_metal_is_pure_red():
    mat = Material(color=(0, 0, 0), shading="pbr", metallic=1.0, roughness=0.3,
                   emissive=(1.0, 0.0, 0.0))
    scene, cam = ortho_scene(quad(mat), directional([0.2, 0.3, 1.0], 3.0))
    scene.add(PointLight("bulb", intensity=5.0, position=(0, 0, 1)))
    img = render(scene, cam)
    assert (img[4:60, 4:60, :3] == [255, 0, 0]).all()


def test_emissive_map_multiplies_the_factor():
    # a 1x2 emissive map, sRGB (255, 0, 0) left and (188, 0, 0) right, nearest texels
    from engine.scene.material import Sampler

    tex = Texture(np.array([[[255, 0, 0, 255], [188, 0, 0, 255]]], np.uint8),
                  Sampler(filter="nearest"))
    mat = Material(color=(0, 0, 0), shading="pbr", metallic=1.0, emissive=(0.5, 0, 0),
                   maps={"emissive": tex})
    scene, cam = ortho_scene(quad(mat), directional([0, 0, 1]))
    img = render(scene, cam)
    assert img[32, 10, 0] == encode(0.5) and img[32, 54, 0] == encode(0.5 * srgb_decode(188 / 255))


def test_metallic_roughness_and_occlusion_maps_scale_the_factors():
    # map texel B = 255 (metal x 1), G = 128 (roughness x 128/255); occlusion R = 64 at
    # strength 0.5 scales the ambient term only
    from engine import AmbientLight

    mr = Texture(np.array([[[0, 128, 255, 255]]], np.uint8))
    occ = Texture(np.array([[[64, 0, 0, 255]]], np.uint8))
    base = np.array([0.9, 0.5, 0.2])
    l_dir = np.array([0.3, 0.2, 1.0]) / np.linalg.norm([0.3, 0.2, 1.0])
    mat = Material(color=tuple(encode(base) / 255), shading="pbr", metallic=1.0,
                   roughness=1.0, maps={"metallic_roughness": mr, "occlusion": occ},
                   occlusion_strength=0.5, vertex_colors=False)
    scene, cam = ortho_scene(quad(mat), directional(l_dir, 0.6),
                             AmbientLight("sky", intensity=0.2))
    px = render(scene, cam)[32, 32, :3].astype(int)
    c = srgb_decode(encode(base) / 255)
    rough = 128 / 255
    f = appendix_b([0, 0, 1], [0, 0, 1], l_dir, c, 1.0, rough)
    ao = 1 + 0.5 * (64 / 255 - 1)
    want = encode(math.pi * f * 0.6 * l_dir[2] + 0.2 * c * ao)  # metal: c_diff 0, F0 = c
    assert np.abs(px - want).max() <= 1, (px, want)


def _spot_scene(inner, outer, height=1.0, intensity=2.0):
    mat = Material(color=(1, 1, 1), shading="lit")  # Lambert: radiance E cos / d^2
    spot = SpotLight("spot", intensity=intensity, inner_cone_angle=inner,
                     outer_cone_angle=outer, position=(0, 0, height))
    spot.look_at((0, 0, 0))
    return ortho_scene(quad(mat), spot)


def _pixel_xy(row, col):
    step = 2 * HALF / SIZE
    return -HALF + (col + 0.5) * step, HALF - (row + 0.5) * step


def test_spot_cone_edge_and_smooth_falloff():
    inner, outer, h, e = math.radians(20), math.radians(40), 1.0, 2.0
    scene, cam = _spot_scene(inner, outer, h, e)
    img = render(scene, cam)
    row = SIZE // 2
    for col in range(SIZE // 2, SIZE):
        x, y = _pixel_xy(row, col)
        d2 = x * x + y * y + h * h
        cos_a = h / math.sqrt(d2)  # also N.L: the plane faces the light's axis
        t = min(max((cos_a - math.cos(outer)) / (math.cos(inner) - math.cos(outer)), 0), 1)
        want = encode(e * cos_a / d2 * t * t)
        assert abs(int(img[row, col, 0]) - int(want)) <= 1, (col, img[row, col], want)
    # the cone's edge: x = h tan(outer) = 0.839 -> column 45.4; black beyond it
    edge = SIZE / 2 + h * math.tan(outer) / (2 * HALF / SIZE)
    assert img[row, int(edge) + 1, 0] == 0 and img[row, int(edge) - 2, 0] > 0


def test_point_light_from_a_gltf_file_falls_off_with_the_inverse_square(tmp_path):
    # a KHR_lights_punctual point light of 8 candela, range 3, 1 above a white PBR quad
    # (metallic 0, roughness 1), written by hand as a file
    g = Gltf()
    pos = g.accessor([[-2, -2, 0], [2, -2, 0], [2, 2, 0], [-2, 2, 0]])
    nrm = g.accessor([[0, 0, 1]] * 4)
    idx = g.accessor(np.array([0, 1, 2, 0, 2, 3], np.uint16), component=5123, type_="SCALAR")
    mat = g.material(pbrMetallicRoughness={"metallicFactor": 0.0, "roughnessFactor": 1.0})
    g.mesh({"POSITION": pos, "NORMAL": nrm}, indices=idx, material=mat)
    g.doc["extensionsUsed"] = ["KHR_lights_punctual"]
    g.doc["extensions"] = {"KHR_lights_punctual": {"lights": [
        {"type": "point", "intensity": 8.0, "range": 3.0}]}}
    g.node(translation=[0, 0, 1], extensions={"KHR_lights_punctual": {"light": 0}})
    model = load(g.write_gltf(tmp_path / "point.gltf"))
    assert model.warnings == []
    scene, cam = ortho_scene(model)
    img = render(scene, cam)
    for row, col in ((32, 32), (32, 44), (20, 50), (5, 60), (60, 3)):
        x, y = _pixel_xy(row, col)
        p = np.array([x, y, 0.0])
        to_light = np.array([0, 0, 1.0]) - p
        d = np.linalg.norm(to_light)
        l_dir = to_light / d
        window = min(max(1 - (d / 3.0) ** 4, 0), 1)  # KHR_lights_punctual, "Range Property"
        f = appendix_b([0, 0, 1], [0, 0, 1], l_dir, np.ones(3), 0.0, 1.0)
        want = encode(f * 8.0 / d**2 * window * l_dir[2])  # Appendix B: f I N.L / d^2
        assert np.abs(img[row, col, :3].astype(int) - want).max() <= 1, (row, col)


def test_spot_light_from_a_gltf_file_has_its_cone(tmp_path):
    g = Gltf()
    pos = g.accessor([[-2, -2, 0], [2, -2, 0], [2, 2, 0], [-2, 2, 0]])
    idx = g.accessor(np.array([0, 1, 2, 0, 2, 3], np.uint16), component=5123, type_="SCALAR")
    g.mesh({"POSITION": pos, "NORMAL": g.accessor([[0, 0, 1]] * 4)}, indices=idx,
           material=g.material(pbrMetallicRoughness={"metallicFactor": 0.0}))
    g.doc["extensions"] = {"KHR_lights_punctual": {"lights": [
        {"type": "spot", "intensity": 3.0, "color": [1, 0.5, 0.25],
         "spot": {"innerConeAngle": 0.2, "outerConeAngle": 0.5}}]}}
    # the node at (0, 0, 2) looking down -z: its default orientation
    g.node(translation=[0, 0, 2], extensions={"KHR_lights_punctual": {"light": 0}})
    model = load(g.write_gltf(tmp_path / "spot.gltf"))
    spot = next(n for n in model.traverse() if isinstance(n, SpotLight))
    assert (spot.inner_cone_angle, spot.outer_cone_angle) == (0.2, 0.5)
    assert spot.intensity == pytest.approx(3 / math.pi) and spot.range is None
    scene, cam = ortho_scene(model)
    img = render(scene, cam)
    # edge radius 2 tan 0.5 = 1.093 world -> 17.5 px from the centre column (32)
    assert img[32, 32 + 19, :3].max() == 0 and img[32, 32 + 15, 0] > 0
    # centre: the full light, red > green > blue as its colour
    r, gg, b = (int(c) for c in img[32, 32, :3])
    assert r > gg > b > 0


@pytest.mark.parametrize("bad,message", [
    ({"type": "spot", "spot": {"innerConeAngle": 0.6, "outerConeAngle": 0.5}},
     "innerConeAngle: must be below outerConeAngle"),
    ({"type": "point", "range": 0}, "range"),
    ({"type": "area"}, "type"),
    ({"type": "point", "color": [2, 0, 0]}, "color[0]"),
])
def test_bad_punctual_lights_name_the_field(tmp_path, bad, message):
    from engine.errors import LoadError

    g = Gltf()
    g.doc["extensions"] = {"KHR_lights_punctual": {"lights": [bad]}}
    g.node(extensions={"KHR_lights_punctual": {"light": 0}})
    with pytest.raises(LoadError, match=r"lights\[0\]") as err:
        load(g.write_gltf(tmp_path / "bad.gltf"))
    assert message in str(err.value)


def test_light_index_out_of_range_is_an_error(tmp_path):
    from engine.errors import LoadError

    g = Gltf()
    g.doc["extensions"] = {"KHR_lights_punctual": {"lights": []}}
    g.node(extensions={"KHR_lights_punctual": {"light": 2}})
    with pytest.raises(LoadError, match="KHR_lights_punctual.light"):
        load(g.write_gltf(tmp_path / "bad.gltf"))


def test_exposure_and_pbr_neutral_tone_map():
    white = Material(color=(1, 1, 1), shading="unlit")
    grey = Material(color=tuple(encode([0.5, 0.2, 0.1]) / 255), shading="unlit",
                    vertex_colors=False)
    # exposure 2 with no tone map: linear 0.2 -> 0.4
    scene, cam = ortho_scene(quad(Material(color=tuple(encode([0.2] * 3) / 255),
                                           shading="unlit")), exposure=2.0)
    assert render(scene, cam)[32, 32, 0] == encode(0.4)
    # PBR Neutral by hand: (2, 2, 2): offset 0.04 -> peak 1.96, compressed to
    # 1 - 0.24**2 / (1.96 + 0.24 - 0.76) = 0.96, grey so desaturation changes nothing
    scene, cam = ortho_scene(quad(white), exposure=2.0, tone_map="pbr-neutral")
    assert (render(scene, cam)[32, 32, :3] == encode(0.96)).all()
    # the largest exposure saturates: 1 - 0.24**2 / (2**20 + 0.2) encodes as 255
    from engine.scene.exposure import MAX_EXPOSURE

    scene, cam = ortho_scene(quad(white), exposure=MAX_EXPOSURE, tone_map="pbr-neutral")
    assert (render(scene, cam)[32, 32, :3] == 255).all()
    # below the compression start only the offset: (0.5, 0.2, 0.1) - 0.04
    scene, cam = ortho_scene(quad(grey), tone_map="pbr-neutral")
    lin = srgb_decode(encode([0.5, 0.2, 0.1]) / 255)
    np.testing.assert_allclose(render(scene, cam)[32, 32, :3], encode(lin - 0.04), atol=1)


def test_scene_settings_are_checked():
    with pytest.raises(ValueError, match="exposure must be a finite number > 0"):
        Scene(exposure=0)
    with pytest.raises(ValueError, match="exposure must be a finite number > 0 and at most"):
        Scene(exposure=1e308)  # radiance times it overflowed to infinity, then NaN
    with pytest.raises(ValueError, match="tone_map must be one of none, pbr-neutral"):
        Scene(tone_map="aces")
    with pytest.raises(ValueError, match="cone angles"):
        SpotLight(inner_cone_angle=0.5, outer_cone_angle=0.4)
    with pytest.raises(ValueError, match="range must be a finite number > 0"):
        PointLight(range=-1)
    with pytest.raises(ValueError, match="metallic must be in"):
        Material(metallic=2)


def _mapped_material(flat=False):
    rng = np.random.default_rng(3)
    maps = {role: Texture(rng.integers(0, 256, (5, 7, 4), dtype=np.uint8))
            for role in ("metallic_roughness", "occlusion", "emissive")}
    return Material(color=(0.8, 0.5, 0.3), shading="pbr", metallic=0.9, roughness=0.7,
                    emissive=(0.3, 0.1, 0.0), maps=maps, occlusion_strength=0.6,
                    texture=Texture(rng.integers(0, 256, (4, 3, 4), dtype=np.uint8)),
                    flat_normals=flat, double_sided=True)


@pytest.mark.parametrize("backend", ["numba", "cuda", "gl"])
@pytest.mark.parametrize("perspective", [False, True])
@pytest.mark.parametrize("flat", [False, True])
def test_compiled_resolves_draw_pbr_as_the_reference(perspective, flat, backend, monkeypatch,
                                                    native_dir):
    from engine import AmbientLight
    from engine.scene.procedural import icosphere

    v, f = icosphere(2)
    ball = Node("ball", geometry=Mesh(v.astype(np.float32), f, uvs=(v[:, :2] + 1) / 2,
                                      material=_mapped_material(flat)))
    ball.position = (0.6, 0.0, 0.0)
    plain = quad(Material(color=(0.2, 0.6, 0.9), shading="pbr", metallic=0.1, roughness=0.3),
                 size=1.0, rotate_y=0.5)
    plain.position = (-1.0, 0.0, -0.5)
    scene, cam = ortho_scene(ball, plain, directional([0.2, 0.3, 1.0], 1.5),
                             AmbientLight("sky", intensity=0.1))
    scene.add(PointLight("bulb", intensity=1.5, position=(-0.5, 1.0, 1.5)))
    if perspective:
        cam = PerspectiveCamera(fov_y=60, aspect=1.0, position=(0.3, 0.4, 4))
        scene.add(cam).look_at((0, 0, 0))
    want = render(scene, cam)
    assert (want[..., :3] != 0).any(axis=-1).sum() > 1000
    if backend == "gl":  # surface.frag, headless EGL; float32, a GL rasterizer
        with Renderer(scene, cam, (SIZE, SIZE), backend="numba", raster="gl") as r:
            got = r.render()
            assert r.drawn_by == "gl"
        ref = Renderer(scene, cam, (SIZE, SIZE), backend="numpy").render()
        covered = (got.depth < 1) | (ref.depth < 1)
        assert covered.sum() > 1000
        diff = np.abs(got.color.astype(int) - want.astype(int)).max(axis=-1)
        assert (covered & (diff > 2)).sum() <= 0.005 * covered.sum()
        return
    if backend == "cuda":  # resolve.cu + pbr.cuh built by the host compiler (conftest)
        count = stand_in_device.install(monkeypatch, native_dir)
        r = Renderer(scene, cam, (SIZE, SIZE), backend="cupy")
        got = r.render().color
        assert "resolve_surfaces" in count.kernels
    else:
        r = Renderer(scene, cam, (SIZE, SIZE), backend="numba")
        got = r.render().color
    assert r.drawn_by == ("cupy" if backend == "cuda" else "numba")
    np.testing.assert_allclose(got, want, atol=1, rtol=0)


@pytest.mark.parametrize("raster", ["software", "gl"])
@pytest.mark.parametrize("tone_map", ["none", "pbr-neutral"])
@pytest.mark.parametrize("shading", ["pbr", "lit", "unlit"])
def test_numba_and_gl_draw_spot_and_ranged_lights_and_tone_maps_as_the_reference(
        shading, tone_map, raster):
    mat = Material(color=(0.8, 0.5, 0.3), shading=shading, metallic=0.5, roughness=0.4,
                   specular=0.3)
    scene, cam = ortho_scene(quad(mat), directional([0.2, 0.3, 1.0], 0.2), exposure=1.5,
                             tone_map=tone_map)
    spot = SpotLight(intensity=1.0, inner_cone_angle=0.1, outer_cone_angle=0.6, range=2.5,
                     position=(0.5, 0.0, 1.0))
    spot.look_at((0.5, 0.0, 0.0))
    scene.add(spot)
    scene.add(PointLight(intensity=1.0, range=1.5, position=(-1.0, 0.0, 0.5)))
    with Renderer(scene, cam, (SIZE, SIZE), backend="numba", raster=raster) as r:
        got = r.render().color
        assert r.drawn_by == ("gl" if raster == "gl" else "numba")
    want = render(scene, cam)
    if shading != "unlit":  # lit: the cone, the window, the tone curve
        assert len(np.unique(want.reshape(-1, 4), axis=0)) > 100
    # GL: float32 and its own rasterizer, within 2 levels (the parity matrix's tolerance)
    np.testing.assert_allclose(got, want, atol=2 if raster == "gl" else 1, rtol=0)


def test_headlight_pbr_dielectric_is_as_bright_as_blinn_phong_lambert():
    # a scene without lights: the headlight; a rough dielectric's diffuse term equals the
    # Lambert "lit" one (the pi of engine.render.pbr), its specular adds a little
    cam_scene = []
    for mat in (Material(color=(0.6, 0.6, 0.6), shading="pbr", metallic=0, roughness=1),
                Material(color=(0.6, 0.6, 0.6))):
        scene = Scene()
        scene.add(quad(mat))
        cam = PerspectiveCamera(fov_y=50, aspect=1.0)
        cam.position = (0, 0, 4)
        scene.add(cam).look_at((0, 0, 0))
        cam_scene.append(render(scene, cam)[32, 32, 0])
    pbr_px, lit_px = (int(x) for x in cam_scene)
    # pbr: 0.7 (1 - 0.04) c + 0.7 pi 0.04 D Vis + 0.15 (c + 0.04), D Vis = 1 / (4 pi)
    c = srgb_decode(0.6)
    want = encode(0.7 * 0.96 * c + 0.7 * 0.04 / 4 + 0.15 * (c + 0.04))
    assert abs(pbr_px - want) <= 1 and abs(lit_px - encode(0.85 * c)) <= 1
