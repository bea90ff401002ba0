"""alphaMode BLEND: order-independent "over" compositing in linear light
(engine.render.transparency) on the host backends, the CUDA kernels (emulated) and GL
(depth peeling on llvmpipe).

The right values are computed here from the colours and alphas of the layers, back to
front in linear light (sRGB decode/encode of engine.scene.colorspace), never read off a
render. The parity matrix (test_parity.py ``blend_*`` rows) repeats the scenes on every
backend, GL included.
"""

from __future__ import annotations

import numpy as np
import pytest
import stand_in_device

from engine import Mesh, Node, PerspectiveCamera, Renderer, Scene
from engine.render.frame import EMPTY_KEY
from engine.render.transparency import LAYERS, opaque_bound, raster_layers
from engine.render.triangles import setup_triangles
from engine.scene.colorspace import linear_to_srgb, srgb_to_linear
from engine.scene.material import Material, Texture

pytestmark = pytest.mark.timeout(300)

SIZE = (64, 48)
CENTRE = (24, 32)  # (row, column) of the image centre


def _quad(half, z, x=0.0, colors=None, **material):
    p = np.array([[-half, -half, z], [half, -half, z], [half, half, z], [-half, half, z]],
                 np.float32)
    p[:, 0] += x
    uv = np.array([[0, 1], [1, 1], [1, 0], [0, 0]], np.float32)
    return Mesh(p, [[0, 1, 2], [0, 2, 3]], uvs=uv, colors=colors, material=Material(**material))


def _camera(scene):
    cam = PerspectiveCamera(fov_y=55, aspect=SIZE[0] / SIZE[1], near=0.1, far=50)
    cam.position = (0.0, 0.0, 3.0)
    return scene.add(cam).look_at((0.0, 0.0, 0.0))


def two_quads(order, background=(0.0, 0.0, 0.0)):
    """Red (alpha 0.5) at z = 0 and green (alpha 0.5) at z = 0.3 over an opaque blue
    quad at z = -0.5, all unlit; ``order`` 0 adds red first, 1 green first."""
    scene = Scene(background=background)
    scene.add(Node("blue", geometry=_quad(1.0, -0.5, color=(0, 0, 1), shading="unlit")))
    quads = [("red", _quad(0.8, 0.0, color=(1, 0, 0, 0.5), shading="unlit", blend=True)),
             ("green", _quad(0.6, 0.3, color=(0, 1, 0, 0.5), shading="unlit", blend=True))]
    for name, mesh in quads if order == 0 else quads[::-1]:
        scene.add(Node(name, geometry=mesh))
    return scene, _camera(scene)


def over(layers, below=(0.0, 0.0, 0.0), below_alpha=1.0):
    """Back-to-front "over" in linear light of ``layers`` [(linear rgb, alpha)], nearest
    first, on a straight-alpha ``below``: (linear rgb, alpha)."""
    c = np.asarray(below, float) * below_alpha
    a = below_alpha
    for rgb, alpha in layers[::-1]:
        c = alpha * np.asarray(rgb, float) + (1 - alpha) * c
        a = alpha + (1 - alpha) * a
    return c / a if a > 0 else c, a


def to_srgb8(rgb):
    return np.rint(linear_to_srgb(np.clip(rgb, 0, 1)) * 255).astype(int)


def _render(backend, scene, cam, monkeypatch=None, native_dir=None, **kw):
    if backend == "cuda":
        count = stand_in_device.install(monkeypatch, native_dir)
        r = Renderer(scene, cam, SIZE, backend="cupy", **kw)
        frame = r.render()
        assert "raster_layer_triangles" in count.kernels  # drawn by the CUDA k-buffer
        return frame, r
    if backend == "gl":  # GL's depth peeling (engine.render.gl.peeling)
        with Renderer(scene, cam, SIZE, backend="numba", raster="gl", **kw) as r:
            return r.render(), r
    r = Renderer(scene, cam, SIZE, backend=backend, **kw)
    return r.render(), r


BACKENDS = ("numpy", "numba", "cuda", "gl")


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_quads_either_order(backend, monkeypatch, native_dir):
    # red 0.5 over blue, then green 0.5 over that: linear (0.25, 0.5, 0.25)
    rgb, alpha = over([((0, 1, 0), 0.5), ((1, 0, 0), 0.5)], below=(0, 0, 1))
    assert np.allclose(rgb, (0.25, 0.5, 0.25)) and alpha == 1
    want = to_srgb8(rgb)
    assert want.tolist() == [137, 188, 137]
    frames = [_render(backend, *two_quads(order), monkeypatch, native_dir)[0]
              for order in (0, 1)]
    for f in frames:
        got = f.color[CENTRE].astype(int)
        assert np.abs(got[:3] - want).max() <= 1 and got[3] == 255
    assert np.abs(frames[0].color.astype(int) - frames[1].color.astype(int)).max() <= 1
    # the depth is the opaque quad's alone: the same as without the transparent ones
    scene, cam = two_quads(0)
    for node in scene.children[1:3]:
        node.visible = False
    opaque = Renderer(scene, cam, SIZE, backend="numpy").render()
    # (GL's depth buffer has 24 bits)
    assert np.allclose(frames[0].depth, opaque.depth, rtol=0, atol=0 if backend != "gl" else 1e-6)


def test_only_red_over_blue_and_outside():
    f, r = _render("numpy", *two_quads(0))
    # a pixel inside the red quad but outside the green one: red 0.5 over blue. Half
    # sides in pixels: red 0.8 at distance 3, green 0.6 at 2.7 (24 rows per tan 27.5)
    red, green = (h / (d * np.tan(np.radians(27.5))) * 24 for h, d in ((0.8, 3), (0.6, 2.7)))
    col = 32 + 11  # its centre 11.5 px right of the image centre
    assert green < 11.5 < red
    rgb, _ = over([((1, 0, 0), 0.5)], below=(0, 0, 1))
    assert np.abs(f.color[CENTRE[0], col, :3].astype(int) - to_srgb8(rgb)).max() <= 1
    # picking sees the opaque surface: the visibility keys are the blue quad's
    keys = r.visibility()
    # (triangle ids follow the 12 vertex ids; blue's two triangles come first)
    assert (keys[CENTRE] & np.uint64(0xFFFFFFFF)) - 12 < 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_more_layers_than_kept_merge(backend, monkeypatch, native_dir):
    # LAYERS + 2 unlit quads of distinct alphas and colours over opaque white: the
    # LAYERS nearest are exact, the farthest kept stands for the 2 beyond it
    n = LAYERS + 2
    colors = [(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0), (0, 1, 1), (1, 0, 1)][:n]
    alphas = [0.2 + 0.1 * i for i in range(n)]  # nearest first
    scene = Scene(background=(0, 0, 0))
    scene.add(Node("white", geometry=_quad(1.0, -1.0, color=(1, 1, 1), shading="unlit")))
    order = [3, 0, 5, 1, 4, 2][:n]  # the draw order is not the depth order
    for i in order:
        scene.add(Node(f"q{i}", geometry=_quad(0.5, 0.5 - 0.2 * i, color=(*colors[i], alphas[i]),
                                               shading="unlit", blend=True)))
    f, _ = _render(backend, scene, _camera(scene), monkeypatch, native_dir)
    a8 = [round(a * 255) / 255 for a in alphas]  # the resolve's 8-bit alphas
    kept = [(srgb_to_linear(np.array(c, float)), a) for c, a in zip(colors, a8)][:LAYERS]
    last_rgb, last_a = kept[-1]
    kept[-1] = (last_rgb, 1 - (1 - last_a) ** (1 + n - LAYERS))
    rgb, _ = over(kept, below=(1, 1, 1))
    got = f.color[CENTRE].astype(int)
    assert np.abs(got[:3] - to_srgb8(rgb)).max() <= 1 and got[3] == 255
    # and it is not what dropping the two (or compositing all six) would give
    exact, _ = over([(srgb_to_linear(np.array(c, float)), a) for c, a in zip(colors, a8)],
                    below=(1, 1, 1))
    dropped, _ = over([(srgb_to_linear(np.array(c, float)), a)
                       for c, a in zip(colors, a8)][:LAYERS], below=(1, 1, 1))
    assert np.abs(to_srgb8(exact) - to_srgb8(rgb)).max() > 2
    assert np.abs(to_srgb8(dropped) - to_srgb8(rgb)).max() > 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_transparent_background_alpha(backend, monkeypatch, native_dir):
    # no opaque quad: red 0.5 and green 0.5 over alpha 0 -> 1 - 0.5 * 0.5 = 0.75, the
    # colour the straight-alpha mix; an OPAQUE quad beside them keeps alpha 255
    scene = Scene(background="transparent")
    scene.add(Node("red", geometry=_quad(0.8, 0.0, color=(1, 0, 0, 0.5), shading="unlit",
                                         blend=True)))
    scene.add(Node("green", geometry=_quad(0.6, 0.3, color=(0, 1, 0, 0.5), shading="unlit",
                                           blend=True)))
    # right of the transparent ones
    scene.add(Node("opaque", geometry=_quad(0.2, 0.0, x=1.6, color=(1, 1, 1), shading="unlit")))
    f, _ = _render(backend, scene, _camera(scene), monkeypatch, native_dir)
    rgb, alpha = over([((0, 1, 0), 0.5), ((1, 0, 0), 0.5)], below=(0, 0, 0), below_alpha=0)
    assert alpha == 0.75
    got = f.color[CENTRE].astype(int)
    assert np.abs(got[:3] - to_srgb8(rgb)).max() <= 1 and abs(got[3] - 191) <= 1
    assert f.color[0, 0].tolist() == [0, 0, 0, 0]
    col = 32 + round(1.6 / (3 * np.tan(np.radians(27.5))) * 24)
    assert f.color[CENTRE[0], col].tolist() == [255, 255, 255, 255]


def test_alpha_from_texture_factor_and_vertex_colour():
    # alpha = texel alpha x factor alpha x vertex alpha: 0.8 x 0.5 x 0.5 = 0.2
    img = np.zeros((2, 2, 4), np.uint8)
    img[..., 0] = 255
    img[..., 3] = 204  # 0.8
    scene = Scene(background=(0, 0, 0))
    scene.add(Node("blue", geometry=_quad(1.0, -0.5, color=(0, 0, 1), shading="unlit")))
    scene.add(Node("red", geometry=_quad(0.8, 0.0, colors=(1.0, 1.0, 1.0, 0.5),
                                         color=(1, 1, 1, 0.5), shading="unlit", blend=True,
                                         texture=Texture(img))))
    f, _ = _render("numpy", scene, _camera(scene))
    a = round(0.8 * 0.5 * 0.5 * 255) / 255
    rgb, _ = over([((1, 0, 0), a)], below=(0, 0, 1))
    assert np.abs(f.color[CENTRE][:3].astype(int) - to_srgb8(rgb)).max() <= 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_msaa_blends_at_the_pixel_centre(backend, monkeypatch, native_dir):
    # 4 samples: inside the overlap every sample holds blue, so the value is the same;
    # the transparent quads' edges are not anti-aliased (one sample per pixel), so an
    # edge pixel is either side's value, never a mix
    f, _ = _render(backend, *two_quads(0), monkeypatch, native_dir, msaa=4)
    assert np.abs(f.color[CENTRE][:3].astype(int) - [137, 188, 137]).max() <= 1
    red_over_blue = to_srgb8(over([((1, 0, 0), 0.5)], below=(0, 0, 1))[0])
    # from the overlap out to blue alone (the blue quad's own edge, 13.2 px from the
    # centre, is multisampled: left out)
    row = f.color[CENTRE[0], 32:44, :3].astype(int)
    values = [[137, 188, 137], red_over_blue.tolist(), [0, 0, 255]]
    assert all(min(np.abs(px - v).max() for v in values) <= 1 for px in row)


def test_numba_k_buffer_matches_the_reference():
    # random overlapping triangles, random bound: the compiled k-buffer equals the
    # NumPy reference's, and both equal the brute-force sort of every fragment
    from engine.render.backends.numba_layers import raster_layers_numba
    from engine.render.triangles import covered_pixels

    rng = np.random.default_rng(3)
    t = 40
    clip = np.column_stack([rng.uniform(-1.2, 1.2, (3 * t, 2)), rng.uniform(-0.9, 0.9, 3 * t),
                            np.ones(3 * t)])
    tris = np.arange(3 * t).reshape(t, 3)
    size = (32, 24)
    setup = setup_triangles(clip, tris, np.zeros(t, bool), size)
    depth = rng.uniform(0.3, 1.0, (size[1], size[0])).astype(np.float32)
    depth[:4] = 1.0
    bound = opaque_bound(depth)
    pieces = np.arange(len(setup.piece_tri))
    out = []
    for fn in (raster_layers, raster_layers_numba):
        layers = np.full((size[0] * size[1], LAYERS), EMPTY_KEY, np.uint64)
        overflow = np.zeros(size[0] * size[1], np.int32)
        fn(layers, overflow, setup, size, 7, pieces, bound)
        out.append((layers, overflow))
    assert np.array_equal(out[0][0], out[1][0]) and np.array_equal(out[0][1], out[1][1])
    per_pixel: dict[int, list] = {}
    for m, px, py, d in covered_pixels(setup, size):
        k = (d.view(np.uint32).astype(np.uint64) << np.uint64(32)) | (
            setup.piece_tri[m].astype(np.uint64) + np.uint64(7))
        for p, key in zip(py * size[0] + px, k):
            if key < bound[p]:
                per_pixel.setdefault(int(p), []).append(key)
    layers, overflow = out[0]
    assert max(len(v) for v in per_pixel.values()) > LAYERS  # the overflow is exercised
    for p in range(size[0] * size[1]):
        keys = sorted(per_pixel.get(p, []))
        want = keys[:LAYERS] + [EMPTY_KEY] * (LAYERS - len(keys[:LAYERS]))
        assert layers[p].tolist() == want
        assert overflow[p] == max(0, len(keys) - LAYERS)


def test_numba_composite_matches_the_reference():
    # random layers (any alpha, 0 and 255 included), random overflow, a transparent
    # opaque-pass pixel here and there: the compiled compositing gives the reference's
    # bytes within 1 level
    from engine.render.backends.numba_layers import composite_layers_numba
    from engine.render.transparency import composite_layers

    rng = np.random.default_rng(5)
    p = 5000
    color = rng.integers(0, 256, (p, 4), dtype=np.uint8)
    color[::7, 3] = 0
    rgba = rng.integers(0, 256, (LAYERS, p, 4), dtype=np.uint8)
    rgba[:, ::11, 3] = 0
    rgba[:, ::13, 3] = 255
    count = rng.integers(0, LAYERS + 1, p)
    present = np.arange(LAYERS)[:, None] < count[None, :]
    overflow = np.where(count == LAYERS, rng.integers(0, 5, p), 0)
    want = composite_layers(color, rgba, present, overflow)
    got = composite_layers_numba(color, rgba, present, overflow)
    assert np.abs(want.astype(int) - got).max() <= 1
    assert (want[count == 0] == color[count == 0]).all()
    # one pixel by hand: two layers over an opaque pixel, the farther one merged with 2
    c = np.array([[255, 255, 255, 255]], np.uint8)
    layers = np.zeros((LAYERS, 1, 4), np.uint8)
    layers[0, 0], layers[1, 0] = (255, 0, 0, 51), (0, 0, 255, 102)
    on = np.array([[True], [True], [False], [False]])
    a1, a2 = 51 / 255, 1 - (1 - 102 / 255) ** 3
    rgb, _ = over([((1, 0, 0), a1), ((0, 0, 1), a2)], below=(1, 1, 1))
    for fn in (composite_layers, composite_layers_numba):
        out = fn(c, layers, on, np.array([2]))
        assert np.abs(out[0, :3].astype(int) - to_srgb8(rgb)).max() <= 1 and out[0, 3] == 255


@pytest.mark.parametrize("backend", BACKENDS)
def test_fog_applies_to_each_layer_by_its_depth(backend, monkeypatch, native_dir):
    # linear fog from 2 to 4 to white: along the centre ray green is 2.7 away (keeps
    # 0.65 of its colour), red 3.0 (0.5), blue 3.5 (0.25); each fogged in linear light,
    # then composited
    from engine import Fog

    scene, cam = two_quads(0)
    scene.fog = Fog("linear", start=2.0, end=4.0, color="white")
    f, _ = _render(backend, scene, cam, monkeypatch, native_dir)

    def fogged(rgb, d):
        k = (4.0 - d) / 2.0
        return k * np.asarray(rgb, float) + (1 - k) * np.ones(3)

    # the centre pixel's ray is half a pixel off the axis: distances scale by its secant
    sec = np.sqrt(1 + ((0.5 / 24) * np.tan(np.radians(27.5))) ** 2 * 2)
    rgb, _ = over([(fogged((0, 1, 0), 2.7 * sec), 0.5), (fogged((1, 0, 0), 3.0 * sec), 0.5)],
                  below=fogged((0, 0, 1), 3.5 * sec))
    assert np.abs(f.color[CENTRE][:3].astype(int) - to_srgb8(rgb)).max() <= 1


def test_gl_peeling_follows_the_layer_count_between_frames():
    # one GL renderer, three frames: LAYERS + 2 quads (every layer filled, the count
    # pass runs), then one quad (the peeling stops after one layer: no stale layers or
    # count from the frame before), then all again (the first frame's bytes)
    n = LAYERS + 2
    scene = Scene(background=(0, 0, 0))
    scene.add(Node("white", geometry=_quad(1.0, -1.0, color=(1, 1, 1), shading="unlit")))
    quads = [scene.add(Node(f"q{i}", geometry=_quad(0.5, 0.5 - 0.2 * i, color=(1, 0, 0, 0.5),
                                                      shading="unlit", blend=True)))
             for i in range(n)]
    cam = _camera(scene)
    a8 = round(0.5 * 255) / 255
    red = srgb_to_linear(np.array([1.0, 0.0, 0.0]))
    many = [(red, a8)] * (LAYERS - 1) + [(red, 1 - (1 - a8) ** (1 + n - LAYERS))]
    with Renderer(scene, cam, SIZE, backend="numba", raster="gl") as r:
        first = r.render()
        got = first.color[CENTRE].astype(int)
        assert np.abs(got[:3] - to_srgb8(over(many, below=(1, 1, 1))[0])).max() <= 1
        for q in quads[1:]:
            q.visible = False
        got = r.render().color[CENTRE].astype(int)
        assert np.abs(got[:3] - to_srgb8(over([(red, a8)], below=(1, 1, 1))[0])).max() <= 1
        for q in quads[1:]:
            q.visible = True
        assert np.array_equal(r.render().color, first.color)
