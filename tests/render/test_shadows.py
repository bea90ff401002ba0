"""Shadow maps (engine.render.shadows) against the geometry: a unit box standing on a
plane, seen straight down (shadow_scenes.py), its shadow's outline computed here from
the light's direction or position, the lit and shadowed values from the shading model
written out (Lambert with no specular: base x (ambient + E N.L); in shadow base x
ambient), encoded by the IEC 61966-2-1 formula."""

from __future__ import annotations

import math

import numpy as np
import pytest
import stand_in_device
from shadow_scenes import (
    AMBIENT,
    PLANE_COLOR,
    box_on_plane,
    pixel_centres,
    spot_over_box,
)

from engine import Renderer
from engine.render.shadows import BLEND_SHADOW_CUTOFF
from engine.scene.light import AmbientLight, DirectionalLight, PointLight
from engine.scene.material import Material, Sampler, Texture

pytestmark = pytest.mark.timeout(300)

SIZE = (160, 160)  # 0.05 world units per pixel: the box's edges on pixel boundaries
PX = 8.0 / 160
# cuda: the shaders/*.cu kernels built by the host compiler behind the stand-in device
BACKENDS = ("numpy", "numba", "cuda")


def linear(c):
    c = np.asarray(c, np.float64)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def encode(lin):
    lin = np.clip(np.asarray(lin, np.float64), 0, 1)
    s = np.where(lin <= 0.0031308, 12.92 * lin, 1.055 * lin ** (1 / 2.4) - 0.055)
    return np.rint(255 * s).astype(int)


BASE = float(linear(PLANE_COLOR))
SHADOWED = int(encode(BASE * AMBIENT))


def lit_value(elevation=45.0):
    return int(encode(BASE * (AMBIENT + math.sin(math.radians(elevation)))))


@pytest.fixture
def render(monkeypatch, native_dir):
    """render(scene, camera, backend) -> the Frame, checked to come from that backend
    (on cuda: from its kernels, shadow passes included)."""
    def draw(scene, cam, backend):
        count = None
        if backend == "cuda":
            count = stand_in_device.install(monkeypatch, native_dir)
        r = Renderer(scene, cam, SIZE, backend="cupy" if backend == "cuda" else backend)
        frame = r.render()
        assert r.drawn_by == ("cupy" if backend == "cuda" else backend)
        if count is not None:
            assert {"resolve_surfaces", "raster_triangles"} <= set(count.kernels)
        return frame
    return draw


def box_masks(elevation=45.0, margin=1.0):
    """(inside, outside, box) (H, W) bool over the pixel centres: more than ``margin``
    pixels inside / outside the analytic shadow of the box on the plane (the footprint
    swept 1 / tan(elevation) along -x), and the box's top seen from above."""
    x, z = pixel_centres(SIZE)
    xx, zz = np.meshgrid(x, z)
    reach = 1.0 / math.tan(math.radians(elevation))
    m = margin * PX
    top = (np.abs(xx) < 0.5) & (np.abs(zz) < 0.5)
    in_shadow = (xx > -0.5 - reach + m) & (xx < -0.5 - m) & (np.abs(zz) < 0.5 - m)
    near = (xx > -0.5 - reach - m) & (xx < 0.5 + m) & (np.abs(zz) < 0.5 + m)
    on_plane = (np.abs(xx) < 3 - m) & (np.abs(zz) < 3 - m)
    return in_shadow, on_plane & ~near, top


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("elevation", [45.0, 30.0])
def test_box_shadow_outline_values_and_no_acne(render, backend, elevation):
    scene, cam, _ = box_on_plane(SIZE, elevation=elevation)
    red = render(scene, cam, backend).color[..., 0].astype(int)
    inside, outside, _ = box_masks(elevation)
    assert inside.sum() > 300 and outside.sum() > 10000
    # in the shadow: the ambient light alone; everywhere else on the plane: fully lit
    # (no acne), so the edge lies within a pixel of the outline the geometry gives
    assert np.abs(red[inside] - SHADOWED).max() <= 1
    assert np.abs(red[outside] - lit_value(elevation)).max() <= 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_shadow_touches_the_box(render, backend):
    # x = -0.5 (the box's face) is the boundary between columns 69 and 70: column 69's
    # centre is half a pixel from the base, 68's one and a half
    scene, cam, _ = box_on_plane(SIZE)
    red = render(scene, cam, backend).color[..., 0].astype(int)
    rows = slice(72, 88)  # |z| < 0.4
    assert np.abs(red[rows, 68] - SHADOWED).max() <= 1
    assert np.abs(red[rows, 69] - SHADOWED).max() <= 1
    # the box's top, lit from 45 degrees: its own colour, not shadowed by itself
    top = int(encode(linear(0.8) * (AMBIENT + math.sin(math.radians(45)))))
    assert np.abs(red[rows, 70] - top).max() <= 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_cast_and_receive_flags(render, backend):
    scene, cam, _ = box_on_plane(SIZE)
    inside, _, _ = box_masks()
    box = scene.find("box")
    box.cast_shadow = False
    red = render(scene, cam, backend).color[..., 0].astype(int)
    assert np.abs(red[inside] - lit_value()).max() <= 1
    box.cast_shadow = True
    scene.find("plane").receive_shadow = False
    red = render(scene, cam, backend).color[..., 0].astype(int)
    assert np.abs(red[inside] - lit_value()).max() <= 1
    scene.find("plane").receive_shadow = True
    red = render(scene, cam, backend).color[..., 0].astype(int)
    assert np.abs(red[inside] - SHADOWED).max() <= 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_light_shadows_switch(render, backend):
    scene, cam, light = box_on_plane(SIZE)
    inside, _, _ = box_masks()
    light.shadows = False
    red = render(scene, cam, backend).color[..., 0].astype(int)
    assert np.abs(red[inside] - lit_value()).max() <= 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_pbr_shadow_keeps_only_the_ambient_term(render, backend):
    # metallic 0: in shadow the ambient term ambient x (c (1 - m) + F0), F0 = 0.04
    mat = Material(color=(PLANE_COLOR,) * 3, shading="pbr", metallic=0.0, roughness=1.0)
    scene, cam, _ = box_on_plane(SIZE, plane_material=mat)
    red = render(scene, cam, backend).color[..., 0].astype(int)
    inside, outside, _ = box_masks()
    assert np.abs(red[inside] - int(encode(AMBIENT * (BASE + 0.04)))).max() <= 1
    assert (red[outside] > SHADOWED + 40).all()


def _hull(points):
    """Counter-clockwise convex hull of (n, 2) points (Andrew's monotone chain)."""
    pts = sorted(map(tuple, points))

    def half(seq):
        out = []
        for p in seq:
            while len(out) >= 2 and ((out[-1][0] - out[-2][0]) * (p[1] - out[-2][1])
                                     - (out[-1][1] - out[-2][1]) * (p[0] - out[-2][0])) <= 0:
                out.pop()
            out.append(p)
        return out[:-1]

    return np.array(half(pts) + half(pts[::-1]))


def _edge_distance(hull, x, z):
    """(H, W) signed distance of points to a ccw hull: > 0 inside, the smallest over edges."""
    d = np.full(x.shape, np.inf)
    for a, b in zip(hull, np.roll(hull, -1, axis=0)):
        e = b - a
        d = np.minimum(d, (e[0] * (z - a[1]) - e[1] * (x - a[0])) / np.hypot(*e))
    return d


# no spot lights in resolve.cu yet: such frames run on the host path (test_parity GAPS)
@pytest.mark.parametrize("backend", ("numpy", "numba"))
def test_spot_light_shadow(render, backend):
    scene, cam, light = spot_over_box(SIZE)
    red = render(scene, cam, backend).color[..., 0].astype(int)
    x, z = pixel_centres(SIZE)
    xx, zz = np.meshgrid(x, z)
    p = np.array([2.0, 3.0, 0.0])
    # the box's corners projected from the light onto y = 0: the shadow's outline
    corners = np.array([[sx, sy, sz] for sx in (-0.5, 0.5) for sy in (0.0, 1.0)
                        for sz in (-0.5, 0.5)])
    hits = p + (corners - p) * (p[1] / (p[1] - corners[:, 1]))[:, None]
    hull = _hull(hits[:, [0, 2]])
    dist = _edge_distance(hull, xx, zz)
    top = (np.abs(xx) < 0.5 + PX) & (np.abs(zz) < 0.5 + PX)
    inside = (dist > PX) & ~top
    # lit: KHR_lights_punctual's cone t^2 x the inverse square law x N.L
    d = np.stack([p[0] - xx, np.full_like(xx, p[1]), p[2] - zz], -1)
    r2 = (d ** 2).sum(-1)
    to_light = d / np.sqrt(r2)[..., None]
    axis = -p / np.linalg.norm(p)
    cos_a = -(to_light @ axis)
    co, ci = math.cos(light.outer_cone_angle), math.cos(light.inner_cone_angle)
    t = np.clip((cos_a - co) / (ci - co), 0, 1)
    want_lit = encode(BASE * (AMBIENT + 12.0 * t * t * to_light[..., 1] / r2))
    outside = (dist < -PX) & (np.abs(xx) < 3 - PX) & (np.abs(zz) < 3 - PX)
    assert inside.sum() > 300
    assert np.abs(red[inside] - SHADOWED).max() <= 1
    assert np.abs(red[outside] - want_lit[outside]).max() <= 1


def _card(alpha_image, blend=False, cutoff=None):
    """A horizontal card over x in [0, 1], z in [-0.5, 0.5] at y = 1 (unlit, so it hides
    nothing of what it shadows in the checks below), textured with ``alpha_image``."""
    from engine import Mesh

    pos = np.array([[0, 1, -0.5], [1, 1, -0.5], [1, 1, 0.5], [0, 1, 0.5]], np.float32)
    uv = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    img = np.zeros(alpha_image.shape + (4,), np.uint8)
    img[..., :3] = 255
    img[..., 3] = alpha_image
    return Mesh(pos, [[0, 2, 1], [0, 3, 2]], uvs=uv, material=Material(
        shading="unlit", texture=Texture(img, Sampler("clamp", "clamp", "nearest")),
        alpha_cutoff=cutoff, blend=blend, double_sided=True))


@pytest.mark.parametrize("backend", BACKENDS)
def test_mask_casts_cut_out_shadow_and_blend_casts_above_half(render, backend):
    from engine import Node

    scene, cam, _ = box_on_plane(SIZE)
    scene.find("box").visible = False
    half = np.zeros((2, 2), np.uint8)
    half[:, 1] = 255  # u >= 0.5 opaque (x in [0.5, 1]), the rest transparent
    card = scene.add(Node("card", geometry=_card(half, cutoff=0.5)))
    x, z = pixel_centres(SIZE)
    # the light at 45 degrees shifts the card's shadow by 1 along -x: the opaque half
    # shadows x in [-0.5, 0], the cut-out half (x in [-1, -0.5]) casts nothing
    col = lambda x0: int(np.argmin(np.abs(x - x0)))
    row = int(np.argmin(np.abs(z)))
    red = render(scene, cam, backend).color[..., 0].astype(int)
    assert abs(red[row, col(-0.25)] - SHADOWED) <= 1
    assert abs(red[row, col(-0.75)] - lit_value()) <= 1
    # BLEND: casts where alpha >= BLEND_SHADOW_CUTOFF
    for alpha, shadowed in ((0.6, True), (0.4, False)):
        assert (alpha >= BLEND_SHADOW_CUTOFF) == shadowed
        card.geometry = _card(np.full((2, 2), round(alpha * 255), np.uint8), blend=True)
        red = render(scene, cam, backend).color[..., 0].astype(int)
        want = SHADOWED if shadowed else lit_value()
        assert abs(red[row, col(-0.5)] - want) <= 1, alpha


def test_ambient_and_point_lights_refuse_shadows():
    with pytest.raises(ValueError, match="only directional and spot lights"):
        PointLight(shadows=True)
    with pytest.raises(ValueError, match="only directional and spot lights"):
        AmbientLight().shadows = True
    with pytest.raises(TypeError, match="shadows must be True or False"):
        DirectionalLight().shadows = "yes"
    for bad in (8, 10000, 100.5, "big", None):
        with pytest.raises(ValueError, match="shadow_map_size"):
            DirectionalLight().shadow_map_size = bad
    from engine import Node

    with pytest.raises(TypeError, match="cast_shadow must be True or False"):
        Node("n").cast_shadow = 1
