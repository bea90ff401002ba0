"""Normal maps, tangents and the second UV set against values computed here: Lambert's
cosine of the tilt a normal map encodes, the tangent frame of glTF 2.0 3.7.2.1 (u along
the tangent, bitangent = cross(N, T) w) written out for each quad, and analytic tangents
of UV-mapped shapes."""

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
    Renderer,
    Scene,
    Texture,
)
from engine.io import load
from engine.scene.material import Sampler
from engine.scene.tangents import vertex_tangents

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "io"))
from gltf_files import FLOAT, Gltf, geometries, png_bytes

SIZE = 32
T30 = math.radians(30)
# glTF's UV layout on a quad in the z = 0 plane: u grows along +x, v down the image (-y)
QUAD_UV = np.array([[0, 1], [1, 1], [1, 0], [0, 0]], np.float32)
QUAD_POS = np.array([[-2, -2, 0], [2, -2, 0], [2, 2, 0], [-2, 2, 0]], np.float32)


def srgb_decode(c):
    c = np.asarray(c, float) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def normal_texel(n):
    """(2, 2, 4) uint8 normal map of one tangent-space normal: c = (n + 1) / 2."""
    c = np.rint((np.asarray(n, float) + 1) / 2 * 255).astype(np.uint8)
    return Texture(np.tile(np.append(c, 255).astype(np.uint8), (2, 2, 1)),
                   Sampler("clamp", "clamp", "nearest", "nearest"))


def decoded(n):
    """The unit tangent-space normal the 8-bit texel of ``n`` decodes to."""
    c = np.rint((np.asarray(n, float) + 1) / 2 * 255) / 255
    v = 2 * c - 1
    return v / np.linalg.norm(v)


def render_centre(material, light_dir, backend="numpy", uv=QUAD_UV, scale=(1, 1, 1),
                  monkeypatch=None, native_dir=None, **mesh):
    scene = Scene()
    node = scene.add(Node("quad", geometry=Mesh(QUAD_POS, [[0, 1, 2], [0, 2, 3]], uvs=uv,
                                                 material=material, **mesh)))
    node.scale = scale
    light = DirectionalLight("sun", intensity=1.0)
    light.position = tuple(np.asarray(light_dir, float) * 5)
    scene.add(light).look_at((0, 0, 0))
    cam = OrthographicCamera(height=4, aspect=1.0, near=0.1, far=50)
    cam.position = (0, 0, 10)
    scene.add(cam).look_at((0, 0, 0))
    name = backend
    if backend == "cuda":
        stand_in_device.install(monkeypatch, native_dir)
        name = "cupy"
    kw = {"raster": "gl", "backend": "numba"} if backend == "gl" else {"backend": name}
    with Renderer(scene, cam, (SIZE, SIZE), **kw) as r:
        px = r.render().color[SIZE // 2, SIZE // 2]
        assert r.drawn_by == name if backend != "gl" else r.drawn_by == "gl"
    return srgb_decode(px[:3])


def matte(**kw):
    return Material(color=(0.5, 0.5, 0.5), shading="pbr", metallic=0.0, roughness=1.0,
                    vertex_colors=False, **kw)


@pytest.mark.parametrize("backend", ["numpy", "numba", "cuda", "gl"])
def test_a_30_degree_normal_map_scales_lambert_by_its_cosine(backend, monkeypatch,
                                                             native_dir):
    nmap = normal_texel([math.sin(T30), 0, math.cos(T30)])
    kw = {"backend": backend, "monkeypatch": monkeypatch, "native_dir": native_dir}
    flat = render_centre(matte(), [0, 0, 1], **kw)
    # the light along the quad's normal: the mapped normal is 30 degrees off it
    tilted = render_centre(matte(maps={"normal": nmap}), [0, 0, 1], **kw)
    np.testing.assert_allclose(tilted / flat, math.cos(T30), rtol=0.03)
    # the light along the mapped normal (tilted towards +x: the tangent, u grows with x):
    # the test, 1 / cos 30 times the unmapped quad's radiance in the same light
    along = [math.sin(T30), 0, math.cos(T30)]
    mapped = render_centre(matte(maps={"normal": nmap}), along, **kw)
    plain = render_centre(matte(), along, **kw)
    np.testing.assert_allclose(mapped / plain, 1 / math.cos(T30), rtol=0.03)


def test_the_tilt_follows_the_tangent_and_the_handedness():
    nx = normal_texel([math.sin(T30), 0, math.cos(T30)])
    ny = normal_texel([0, math.sin(T30), math.cos(T30)])
    lit = [math.sin(T30), 0, math.cos(T30)]  # from +x, 30 degrees off the quad's normal
    toward = render_centre(matte(maps={"normal": nx}), lit)
    flipped_uv = QUAD_UV.copy()
    flipped_uv[:, 0] = 1 - flipped_uv[:, 0]  # u now grows along -x
    away = render_centre(matte(maps={"normal": nx}), lit, uv=flipped_uv)
    # Lambert of the decoded normal (the 8-bit texel), tilted +x then -x, against L
    n = decoded([math.sin(T30), 0, math.cos(T30)])
    assert away[0] / toward[0] == pytest.approx(
        (np.array([-n[0], 0, n[2]]) @ lit) / (n @ lit), rel=0.03)
    # the generated tangent frames: T = +x, bitangent along +v = -y: w = -1; flipping u
    # turns T to -x and, v unchanged, the handedness to +1
    m = Mesh(QUAD_POS, [[0, 1, 2], [0, 2, 3]], uvs=QUAD_UV)
    np.testing.assert_allclose(m.vertex_tangents(), [[1, 0, 0, -1]] * 4)
    m = Mesh(QUAD_POS, [[0, 1, 2], [0, 2, 3]], uvs=flipped_uv)
    np.testing.assert_allclose(m.vertex_tangents(), [[-1, 0, 0, 1]] * 4)
    # the map's Y (green) tilts along the bitangent, +v, down the image: -y in the world
    down = [0, -math.sin(T30), math.cos(T30)]
    up = [0, math.sin(T30), math.cos(T30)]
    d = decoded([0, math.sin(T30), math.cos(T30)])
    ratio = render_centre(matte(maps={"normal": ny}), up)[0] / render_centre(
        matte(maps={"normal": ny}), down)[0]
    assert ratio == pytest.approx((np.array([0, -d[1], d[2]]) @ up)
                                  / (np.array([0, -d[1], d[2]]) @ down), rel=0.03)


def test_file_tangents_and_a_mirroring_node_keep_the_frame():
    nx = normal_texel([math.sin(T30), 0, math.cos(T30)])
    ny = normal_texel([0, math.sin(T30), math.cos(T30)])
    lit_y = [0, math.sin(T30), math.cos(T30)]
    # given tangents along +y (w = +1: bitangent cross(z, y) = -x): the X tilt goes to +y
    along_y = np.array([[0, 1, 0, 1]] * 4, np.float32)
    given = render_centre(matte(maps={"normal": nx}), lit_y, tangents=along_y)
    flat = render_centre(matte(), lit_y)
    n = decoded([math.sin(T30), 0, math.cos(T30)])
    assert given[0] / flat[0] == pytest.approx(
        (np.array([0, n[0], n[2]]) @ lit_y) / lit_y[2], rel=0.03)
    # a node mirrored in x (scale -1): its bitangent must stay M b = -y, so the handedness
    # flips with the mirror (attributes, "direction" space): the Y tilt still points to
    # -y, the same radiance as the unmirrored quad's in a light from -y
    down = [0, -math.sin(T30), math.cos(T30)]
    plain = render_centre(matte(maps={"normal": ny}, double_sided=True), down)
    mirrored = render_centre(matte(maps={"normal": ny}, double_sided=True), down,
                             scale=(-1, 1, 1))
    np.testing.assert_allclose(mirrored, plain, rtol=0.01)
    assert plain[0] > 1.1 * render_centre(matte(double_sided=True), down)[0]


def test_morph_targets_move_the_tangents():
    # a morph target turns the tangent from +x to +y (delta (-1, 1, 0)); at weight 1 the
    # X tilt of the map points to +y
    nx = normal_texel([math.sin(T30), 0, math.cos(T30)])
    lit_y = [0, math.sin(T30), math.cos(T30)]
    tangents = np.array([[1, 0, 0, 1]] * 4, np.float32)
    delta = np.array([[[-1, 1, 0]] * 4], np.float32)
    for backend in ("numpy", "numba"):
        got = render_centre(matte(maps={"normal": nx}), lit_y, backend=backend,
                            tangents=tangents, morph_tangents=delta, morph_weights=[1.0])
        rest = render_centre(matte(maps={"normal": nx}), lit_y, backend=backend,
                             tangents=tangents, morph_tangents=delta, morph_weights=[0.0])
        flat = render_centre(matte(), lit_y, backend=backend)
        n = decoded([math.sin(T30), 0, math.cos(T30)])
        assert got[0] / flat[0] == pytest.approx(
            (np.array([0, n[0], n[2]]) @ lit_y) / lit_y[2], rel=0.03)
        assert rest[0] / flat[0] == pytest.approx(n[2], rel=0.03)  # tilted along x


def test_generated_tangents_of_a_uv_mapped_cube_are_the_analytic_ones():
    # each face of a cube mapped with u along a chosen edge direction and v along another:
    # T = that u direction (dp/du), w = sign of cross(N, T) . dp/dv
    faces, pos, uv, want = [], [], [], []
    for normal, du, dv in (((0, 0, 1), (1, 0, 0), (0, -1, 0)), ((0, 0, -1), (-1, 0, 0), (0, -1, 0)),
                           ((1, 0, 0), (0, 0, -1), (0, -1, 0)), ((-1, 0, 0), (0, 0, 1), (0, 1, 0)),
                           ((0, 1, 0), (1, 0, 0), (0, 0, 1)), ((0, -1, 0), (1, 0, 0), (0, 0, 1))):
        n, a, b = (np.array(x, float) for x in (normal, du, dv))
        base = len(pos)
        for u, v in ((0, 0), (1, 0), (1, 1), (0, 1)):
            pos.append(n + (2 * u - 1) * a + (2 * v - 1) * b)
            uv.append((u, v))
        quad = [[base, base + 1, base + 2], [base, base + 2, base + 3]]
        if np.cross(a, b) @ n < 0:  # counter-clockwise seen from outside
            quad = [[i, k, j] for i, j, k in quad]
        faces += quad
        w = 1.0 if np.cross(n, a) @ b > 0 else -1.0
        want += [list(a) + [w]] * 4
    normals = np.repeat([[0, 0, 1], [0, 0, -1], [1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0]],
                        4, axis=0)
    got = vertex_tangents(np.array(pos), normals, np.array(uv), np.array(faces))
    np.testing.assert_allclose(got, want, atol=1e-6)
    # both handednesses occur on this cube (mirrored UVs on some faces)
    assert set(got[:, 3]) == {-1.0, 1.0}


def test_generated_tangents_are_orthogonalised_against_the_normal():
    # a sheared UV map: dp/du = (1, 0, 0.5) on the plane z = 0.5 x, normal (-0.447, 0, 0.894)
    pos = np.array([[0, 0, 0], [1, 0, 0.5], [1, 1, 0.5], [0, 1, 0]], float)
    uv = np.array([[0, 1], [1, 1], [1, 0], [0, 0]], float)
    n = np.tile([-0.5, 0, 1] / np.linalg.norm([-0.5, 0, 1]), (4, 1))
    got = vertex_tangents(pos, n, uv, [[0, 1, 2], [0, 2, 3]])
    np.testing.assert_allclose(got[:, :3], np.tile([1, 0, 0.5] / np.linalg.norm([1, 0, 0.5]),
                                                   (4, 1)), atol=1e-6)
    np.testing.assert_allclose(np.einsum("ij,ij->i", got[:, :3], n), 0, atol=1e-6)
    # no UV area (all uvs equal): no tangent, so the shading keeps the normal
    flat = vertex_tangents(pos, n, np.zeros((4, 2)), [[0, 1, 2], [0, 2, 3]])
    np.testing.assert_array_equal(flat, [[0, 0, 0, 1]] * 4)


@pytest.mark.parametrize("backend", ["numpy", "numba", "cuda", "gl"])
def test_texcoord_1_picks_the_second_set(backend, monkeypatch, native_dir):
    # a normal map whose left half tilts +x and right half -x; uv0 reads the left half
    # everywhere, uv1 the right half
    img = np.zeros((2, 2, 4), np.uint8)
    img[:, 0] = np.append(np.rint((np.array([math.sin(T30), 0, math.cos(T30)]) + 1) / 2 * 255), 255)
    img[:, 1] = np.append(np.rint((np.array([-math.sin(T30), 0, math.cos(T30)]) + 1) / 2 * 255), 255)
    nmap = Texture(img, Sampler("clamp", "clamp", "nearest", "nearest"))
    lit = [math.sin(T30), 0, math.cos(T30)]
    # u still grows with x on both sets (the tangents come from the map's set)
    uv0 = np.array([[0.1, 1], [0.2, 1], [0.2, 0], [0.1, 0]], np.float32)
    uv1 = np.array([[0.8, 1], [0.9, 1], [0.9, 0], [0.8, 0]], np.float32)
    kw = {"backend": backend, "monkeypatch": monkeypatch, "native_dir": native_dir}
    first = render_centre(matte(maps={"normal": nmap}), lit, uv=uv0, uvs1=uv1, **kw)
    second = render_centre(matte(maps={"normal": nmap}, tex_coords={"normal": 1}), lit,
                           uv=uv0, uvs1=uv1, **kw)
    n = decoded([math.sin(T30), 0, math.cos(T30)])
    assert first[0] / second[0] == pytest.approx(
        (n @ lit) / (np.array([-n[0], 0, n[2]]) @ lit), rel=0.03)


@pytest.mark.parametrize("backend", ["numpy", "numba", "cuda", "gl"])
def test_a_large_normal_scale_tilts_towards_the_limit(backend, monkeypatch, native_dir):
    # n_t = normalize((2c - 1)(s, s, 1)) for s = 4 and, as s grows, its limit: the map's
    # XY direction in the surface plane (90 degrees from N); 1e30 once overflowed float32
    # in GLSL and drew the quad as if unmapped
    nmap = normal_texel([math.sin(T30), 0, math.cos(T30)])
    v = 2 * np.rint((np.array([math.sin(T30), 0, math.cos(T30)]) + 1) / 2 * 255) / 255 - 1
    lit = [math.sin(math.radians(60)), 0, math.cos(math.radians(60))]
    kw = {"backend": backend, "monkeypatch": monkeypatch, "native_dir": native_dir}

    def lambert(**m):  # "lit" without specular: radiance proportional to max(N.L, 0)
        return Material(color=(0.5, 0.5, 0.5), shading="lit", specular=0.0,
                        vertex_colors=False, **m)

    flat = render_centre(lambert(), lit, **kw)[0]
    for s, n_t in ((4.0, v * [4, 4, 1]), (1e30, v * [1, 1, 0]), (-1e30, -v * [1, 1, 0])):
        n_t = n_t / np.linalg.norm(n_t)
        got = render_centre(lambert(maps={"normal": nmap}, normal_scale=s), lit, **kw)[0]
        assert got / flat == pytest.approx(max(n_t @ lit, 0) / lit[2], rel=0.03, abs=1e-3), s
    # the reviewer's case: the light along the quad's normal, 90 degrees from the limit
    assert render_centre(matte(maps={"normal": nmap}, normal_scale=1e30), [0, 0, 1],
                         **kw)[0] == 0


def test_bad_tangents_and_texture_sets_are_refused():
    with pytest.raises(ValueError, match=r"tangents\[1\] has w = 0.5"):
        Mesh(QUAD_POS, [[0, 1, 2]], tangents=[[1, 0, 0, 1], [1, 0, 0, 0.5], [1, 0, 0, 1],
                                              [1, 0, 0, 1]])
    with pytest.raises(ValueError, match=r"tangents must have shape \(4, 4\)"):
        Mesh(QUAD_POS, [[0, 1, 2]], tangents=np.zeros((4, 3)))
    with pytest.raises(ValueError, match="tex_coords.'normal'. must be 0"):
        Material(tex_coords={"normal": 2})
    with pytest.raises(ValueError, match="unknown texture role 'bump'"):
        Material(tex_coords={"bump": 1})
    with pytest.raises(ValueError, match="normal_scale must be finite"):
        Material(normal_scale=float("nan"))


def test_a_texture_on_uvs1_of_a_mesh_without_them_is_an_error():
    # it would read zeros (the normal map silently dropped); the glTF loader leaves such
    # a texture out and says so, the API names the node and the role when drawn
    nmap = normal_texel([math.sin(T30), 0, math.cos(T30)])
    for material in (matte(maps={"normal": nmap}, tex_coords={"normal": 1}),
                     matte(texture=nmap, tex_coords={"base_color": 1})):
        role = "normal" if material.maps else "base_color"
        with pytest.raises(ValueError, match=f"node 'quad': its material's '{role}' "
                                             "texture reads uvs1 .* has no uvs1"):
            render_centre(material, [0, 0, 1])
    # with the second set given, the same material draws the map: cos 30 of the flat quad
    tilted = render_centre(matte(maps={"normal": nmap}, tex_coords={"normal": 1}), [0, 0, 1],
                           uvs1=QUAD_UV)
    assert tilted / render_centre(matte(), [0, 0, 1]) == pytest.approx(
        [math.cos(T30)] * 3, rel=0.03)


def test_a_gltf_with_tangent_normal_texture_and_texcoord_1(tmp_path):
    """A quad built by hand: TANGENT along +y (w = +1), a normalTexture (scale 0.5) on
    TEXCOORD_1 tilting 30 degrees along X, and a base colour texture on TEXCOORD_0."""
    g = Gltf()
    pos = g.accessor(QUAD_POS.tolist(), FLOAT)
    nrm = g.accessor([[0, 0, 1]] * 4, FLOAT)
    tan = g.accessor([[0, 1, 0, 1]] * 4, FLOAT)
    uv0 = g.accessor(QUAD_UV.tolist(), FLOAT)
    uv1 = g.accessor([[0.5, 0.5]] * 4, FLOAT)
    idx = g.accessor(np.array([0, 1, 2, 0, 2, 3]), 5123)
    c = np.rint((np.array([math.sin(T30), 0, math.cos(T30)]) + 1) / 2 * 255).astype(np.uint8)
    tilt = g.image(png_bytes(np.tile(c, (2, 2, 1))), magFilter=9728, minFilter=9728)
    grey = g.image(png_bytes(np.full((2, 2, 3), 188, np.uint8)))
    mat = g.material(pbrMetallicRoughness={"baseColorTexture": {"index": grey},
                                           "metallicFactor": 0.0, "roughnessFactor": 1.0},
                     normalTexture={"index": tilt, "texCoord": 1, "scale": 0.5})
    g.mesh({"POSITION": pos, "NORMAL": nrm, "TANGENT": tan, "TEXCOORD_0": uv0,
            "TEXCOORD_1": uv1}, indices=idx, material=mat)
    model = load(g.write_gltf(tmp_path / "nt.gltf"))
    assert model.warnings == []  # the normal texture is drawn: no note
    (mesh,) = geometries(model)
    m = mesh.material
    assert m.tex_coords == {"base_color": 0, "normal": 1} and m.normal_scale == 0.5
    assert "normal" in m.maps
    np.testing.assert_array_equal(mesh.tangents, [[0, 1, 0, 1]] * 4)
    np.testing.assert_array_equal(mesh.uvs1, [[0.5, 0.5]] * 4)
    scene = Scene()
    scene.add(model)
    light = DirectionalLight("sun", intensity=1.0)
    lit_y = np.array([0, math.sin(T30), math.cos(T30)])
    light.position = tuple(lit_y * 5)
    scene.add(light).look_at((0, 0, 0))
    cam = OrthographicCamera(height=4, aspect=1.0, near=0.1, far=50)
    cam.position = (0, 0, 10)
    scene.add(cam).look_at((0, 0, 0))
    got = srgb_decode(Renderer(scene, cam, (SIZE, SIZE), backend="numpy").render()
                      .color[SIZE // 2, SIZE // 2, :3])
    # the decoded texel with X scaled by 0.5, along the file's tangent (+y)
    v = 2 * (c / 255) - 1
    v[0] *= 0.5
    n = np.array([0, v[0], v[2]]) / np.linalg.norm(v)
    base = srgb_decode(188)
    # roughness 1, metallic 0, V = +z: (1 - F) c / pi + F D Vis times pi N.L; the diffuse
    # term dominates: within 3% of base * N.L
    assert got[0] == pytest.approx(base * (n @ lit_y), rel=0.03)
