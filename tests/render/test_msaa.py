"""Multisample anti-aliasing (engine.render.msaa): coverage of an edge against its exact
area, the fill rule at sample level, depth, picking keys and argument checks."""

from __future__ import annotations

import numpy as np
import pytest

from engine import Mesh, Node, OrthographicCamera, Renderer, Scene
from engine.render.msaa import SAMPLE_POSITIONS, sample_keys, sample_offsets
from engine.scene.colorspace import srgb_to_linear
from engine.scene.material import Material

W, H = 48, 32
BACKENDS = ("numpy", "numba")


def _world(sx, sy):
    """Screen pixels (x right, y down) -> world xy of the test camera (1/16 unit a px)."""
    return (np.asarray(sx, float) - W / 2) * (2 / H), (H / 2 - np.asarray(sy, float)) * (2 / H)


def _scene(*triangles, color=(1.0, 1.0, 1.0)):
    """Unlit triangles given in screen pixels, one node each, on black, seen by an
    orthographic camera whose pixels are 1/16 world unit (exact binary fractions)."""
    scene = Scene(background=(0, 0, 0))
    for i, tri in enumerate(triangles):
        x, y = _world(*np.asarray(tri, float).T)
        pos = np.stack([x, y, np.zeros(3)], 1).astype(np.float32)
        scene.add(Node(f"t{i}", geometry=Mesh(pos, [[0, 1, 2]], material=Material(
            color=color, shading="unlit", double_sided=True))))
    cam = scene.add(OrthographicCamera(height=2.0, aspect=W / H, near=0.1, far=10))
    cam.position = (0, 0, 3)
    cam.look_at((0, 0, 0))
    return scene, cam


def _clip_area(x0, y0, a, b, c):
    """Area of the unit pixel [x0, x0+1] x [y0, y0+1] where a x + b y + c >= 0
    (Sutherland-Hodgman clip of the square by the half-plane, then the shoelace sum)."""
    poly = [(x0, y0), (x0 + 1, y0), (x0 + 1, y0 + 1), (x0, y0 + 1)]
    out = []
    for i in range(4):
        p, q = poly[i], poly[(i + 1) % 4]
        fp, fq = a * p[0] + b * p[1] + c, a * q[0] + b * q[1] + c
        if fp >= 0:
            out.append(p)
        if (fp >= 0) != (fq >= 0):
            t = fp / (fp - fq)
            out.append((p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])))
    if len(out) < 3:
        return 0.0
    xs, ys = np.array(out).T
    return 0.5 * abs(np.dot(xs, np.roll(ys, -1)) - np.dot(ys, np.roll(xs, -1)))


def _worst_case(samples, a, b):
    """The pattern's largest |sampled - exact| coverage of a pixel over every offset of
    an edge with normal (a, b): a dense scan of the edge's offset across the pixel."""
    off = sample_offsets(samples) + 0.5
    worst = 0.0
    for c in np.linspace(-(abs(a) + abs(b)), abs(a) + abs(b), 4001):
        got = np.mean(a * off[:, 0] + b * off[:, 1] + c >= 0)
        worst = max(worst, abs(got - _clip_area(0.0, 0.0, a, b, c)))
    return worst


@pytest.mark.parametrize("samples", [2, 4, 8])
@pytest.mark.parametrize("backend", BACKENDS)
def test_edge_pixels_equal_their_covered_area(backend, samples):
    # the edge y = x / 3 + 9.3 (slope 1:3 in screen pixels); the triangle is below it
    # (y larger), far beyond the frame on the other sides
    slope, y0 = 1 / 3, 9.3
    tri = [(-200.0, -200 * slope + y0), (300.0, 300 * slope + y0), (50.0, 500.0)]
    scene, cam = _scene(tri)
    frame = Renderer(scene, cam, (W, H), backend=backend, msaa=samples).render()
    got = srgb_to_linear(frame.color[..., 0] / 255.0)
    # inside: y - x / 3 - y0 >= 0, i.e. a = -1/3, b = 1, c = -y0
    a, b, c = -slope, 1.0, -y0
    tol = _worst_case(samples, a, b) + 2 / 255
    assert tol < 0.5  # the scan found a pattern error, not a vacuous bound
    edge = 0
    for py in range(H):
        for px in range(W):
            area = _clip_area(px, py, a, b, c)
            assert abs(got[py, px] - area) <= tol, (px, py, got[py, px], area, tol)
            edge += 0 < area < 1
    assert edge >= W  # every column crosses the edge once at least
    # and the anti-aliasing is real: edge pixels take intermediate values
    assert ((got > 0.05) & (got < 0.95)).sum() >= W // 4


def _sample_coverage(backend, scene, cam, samples):
    """(S, W * H) bool: the samples some triangle covers, from the backend's rasters."""
    r = Renderer(scene, cam, (W, H), backend=backend, msaa=samples)
    prims = r._assembly()
    view = r._view()
    stages = r._stages(prims)
    inputs = stages.vertex_stage(r.batch, prims, view)
    return sample_keys(stages, inputs, view, samples) != np.uint64(0xFFFFFFFFFFFFFFFF)


@pytest.mark.parametrize("backend", BACKENDS)
def test_fill_rule_covers_each_sample_once_across_a_shared_edge(backend):
    # a square cut along its diagonal y = x - 0.25: sample 0 of the 4x pattern (offset
    # (-2, -6) / 16) of every pixel on the diagonal lies exactly on the shared edge
    a, b = (4.25, 4.0), (28.25, 28.0)
    lower = [a, b, (4.25, 28.0)]
    upper = [a, (28.25, 4.0), b]
    for samples in (4, 8):
        one = _sample_coverage(backend, *_scene(lower), samples)
        two = _sample_coverage(backend, *_scene(upper), samples)
        both = _sample_coverage(backend, *_scene(lower, upper), samples)
        assert not (one & two).any(), "a sample covered by both triangles"
        np.testing.assert_array_equal(one | two, both)
        # every sample strictly inside the square is covered exactly once
        off = sample_offsets(samples)
        xs = (np.arange(W * H) % W)[None] + 0.5 + off[:, :1]
        ys = (np.arange(W * H) // W)[None] + 0.5 + off[:, 1:]
        inside = (xs > 4.25) & (xs < 28.25) & (ys > 4.0) & (ys < 28.0)
        assert inside.sum() > 500 * samples // 4
        assert both[inside].all()
        on_edge = inside & (ys == xs - 0.25)
        assert on_edge.sum() >= 20  # samples exactly on the shared edge were tested
        assert ((one ^ two) | ~both)[on_edge].all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_depth_is_the_nearest_sample_and_visibility_sample_zero(backend):
    # two overlapping triangles at different depths share edge pixels
    scene, cam = _scene([(-100.0, -100.0), (200.0, -100.0), (-100.0, 200.0)],
                        [(20.6, -50.0), (200.0, -50.0), (20.6, 200.0)])
    next(n for n in scene.traverse() if n.name == "t0").position = (0, 0, -1.0)  # farther
    r = Renderer(scene, cam, (W, H), backend=backend, msaa=4)
    frame = r.render()
    single = Renderer(scene, cam, (W, H), backend=backend).render()
    keys = r.visibility()
    prims = r._assembly()
    view = r._view()
    stages = r._stages(prims)
    all_keys = sample_keys(stages, stages.vertex_stage(r.batch, prims, view), view, 4)
    np.testing.assert_array_equal(keys.ravel(), all_keys[0])
    nearest = (all_keys.min(axis=0) >> np.uint64(32)).astype(np.uint32).view(np.float32)
    np.testing.assert_array_equal(frame.depth.ravel(), nearest)
    # the near triangle's edge pixels take its depth where any sample saw it
    assert (frame.depth <= single.depth).all()
    assert (frame.depth < single.depth).any()


def test_bad_msaa_is_a_clear_error():
    scene, cam = _scene([(0.0, 0.0), (10.0, 0.0), (0.0, 10.0)])
    for bad in (3, 0, 16, "4", 4.0, True):
        with pytest.raises(ValueError, match="msaa must be one of 1, 2, 4, 8"):
            Renderer(scene, cam, (W, H), msaa=bad)


def test_sample_positions_are_the_standard_patterns():
    # D3D11 standard patterns (= Vulkan standard sample locations): inside the pixel,
    # centred (they sum to zero), distinct, and 1/16-pixel grid points
    for s, pos in SAMPLE_POSITIONS.items():
        p = np.asarray(pos)
        assert p.shape == (s, 2) and (np.abs(p) <= 8).all()
        assert (p.sum(axis=0) == 0).all() or s == 1
        assert len({tuple(q) for q in pos}) == s
    # Vulkan's 4x locations (0.375, 0.125), (0.875, 0.375), (0.125, 0.625), (0.625, 0.875)
    np.testing.assert_array_equal(sample_offsets(4) + 0.5, [[0.375, 0.125], [0.875, 0.375],
                                                            [0.125, 0.625], [0.625, 0.875]])


def test_compiled_layers_equal_the_reference():
    from engine.render.backends.numba_msaa import sample_layers_numba
    from engine.render.msaa import sample_layers

    rng = np.random.default_rng(3)
    for s in (2, 4, 8):
        ids = rng.integers(0, 4, (s, 5000)).astype(np.uint64)
        ids[:, :1000] = ids[0, :1000]  # uniform pixels
        ids[ids == 3] = np.uint64(0xFFFFFFFF)  # empty samples
        depth = rng.integers(1, 1 << 30, (s, 5000)).astype(np.uint64)
        keys = np.where(ids == np.uint64(0xFFFFFFFF), np.uint64(0xFFFFFFFFFFFFFFFF),
                        (depth << np.uint64(32)) | ids)
        want, want_counts = sample_layers(keys)
        got, got_counts = sample_layers_numba(keys)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got_counts, want_counts)
        assert (want_counts.sum(axis=0) == s).all()


def test_gl_multisampling_matches_the_edge_coverage():
    # GL's own sample pattern: the edge's total coverage within 2% of the software
    # path's (whose pixels are checked against the exact areas above); both patterns
    # have a bias at this slope, whose 3-pixel period meets few edge offsets
    from engine.errors import EngineError

    slope, y0 = 1 / 3, 9.3
    tri = [(-200.0, -200 * slope + y0), (300.0, 300 * slope + y0), (50.0, 500.0)]
    scene, cam = _scene(tri)
    exact = np.array([[_clip_area(x, y, -slope, 1.0, -y0) for x in range(W)]
                      for y in range(H)])
    edge = (exact > 0) & (exact < 1)
    r = Renderer(scene, cam, (W, H), backend="numba", raster="gl", msaa=4)
    try:
        frame = r.render()
        got = srgb_to_linear(frame.color[..., 0] / 255.0)
        soft = Renderer(scene, cam, (W, H), backend="numpy", msaa=4).render()
        want = srgb_to_linear(soft.color[..., 0] / 255.0)[edge].sum()
        assert abs(got[edge].sum() - want) <= 0.02 * want
        assert abs(got[edge].sum() - exact[edge].sum()) <= 0.15 * exact[edge].sum()
        assert ((got > 0.05) & (got < 0.95)).sum() >= W // 2
        # depth: the nearest sample's, so edge pixels any sample saw hold the surface
        assert (frame.depth[got > 0] < 1).all()
        # 2 samples (llvmpipe stores 4 then, and the resolve must average all it stores)
        r.msaa = 2
        two = srgb_to_linear(r.render().color[..., 0] / 255.0)
        assert abs(two[edge].sum() - exact[edge].sum()) <= 0.15 * exact[edge].sum()
        limit = int(r.gl.ctx.max_samples)
        r.msaa = 8
        if limit < 8:
            with pytest.raises(EngineError, match=f"at most {limit} samples"):
                r.render()
        else:
            assert r.render().color.shape == (H, W, 4)
    finally:
        r.close()


def test_cli_msaa(tmp_path):
    from PIL import Image

    from engine.cli import main

    src = tmp_path / "tri.obj"
    src.write_text("v -1 -1 0\nv 1 -0.6 0\nv 0 1 0\nf 1 2 3\n")
    levels = {}
    for flags in ((), ("--msaa", "1")):
        out = tmp_path / f"out{len(flags)}.png"
        assert main(["render", str(src), "--out", str(out), "--size", "96x64",
                     "--shading", "unlit", "--background", "black", "--backend", "numpy",
                     *flags]) == 0
        levels[flags] = len(np.unique(np.asarray(Image.open(out))[..., 0]))
    assert levels[("--msaa", "1")] == 2  # the surface and the background only
    assert levels[()] == 5  # default 4 samples: 1/4, 2/4, 3/4 coverage between them


def test_cli_bad_msaa_is_one_line(tmp_path, capsys):
    from engine.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["render", "demo", "--out", str(tmp_path / "x.png"), "--msaa", "3"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--msaa" in err[0] and "invalid choice: 3" in err[0]


@pytest.mark.parametrize(("backend", "raster"), [("numpy", "software"), ("numba", "software"),
                                                 ("numba", "gl")])
def test_transparent_background_edges_have_straight_alpha(backend, raster):
    # a white surface on a transparent background: edge pixels stay white (straight
    # alpha) and carry their coverage in alpha (with the 1:3 edge's pattern error)
    slope, y0 = 1 / 3, 9.3
    tri = [(-200.0, -200 * slope + y0), (300.0, 300 * slope + y0), (50.0, 500.0)]
    scene, cam = _scene(tri)
    scene.background = (0.0, 0.0, 0.0, 0.0)
    r = Renderer(scene, cam, (W, H), backend=backend, raster=raster, msaa=4)
    try:
        f = r.render()
    finally:
        r.close()
    a = f.color[..., 3].astype(int)
    partial = (a > 0) & (a < 255)
    assert partial.sum() >= W // 2
    assert (f.color[partial][:, :3] == 255).all()  # not darkened by the background
    assert (f.color[a == 0][:, :3] == 0).all()
    tol = _worst_case(4, -slope, 1.0) + 2 / 255
    exact = np.array([[_clip_area(x, y, -slope, 1.0, -y0) for x in range(W)]
                      for y in range(H)])
    if raster == "software":  # GL's own pattern: not pixel by pixel
        assert (np.abs(a / 255 - exact) <= tol).all()


def _stages_inputs(backend, scene, cam, size=(W, H)):
    r = Renderer(scene, cam, size, backend=backend)
    prims = r._assembly()
    view = r._view()
    stages = r._stages(prims)
    return stages, stages.vertex_stage(r.batch, prims, view), view


def _one_pass_scenes():
    """Scenes for the one-pass sample raster: overlapping flat triangles on exact binary
    coordinates, a lit perspective icosphere in front of a tilted quad (several hundred
    small triangles, depth varying across each, shared edges everywhere), and points
    and a line ring beside a quad (the moved splats and line rasters)."""
    from engine import Lines, PerspectiveCamera, PointCloud
    from engine.scene.procedural import icosphere

    scene, cam = _scene([(-100.0, -100.0), (200.0, -100.0), (-100.0, 200.0)],
                        [(20.6, -50.0), (200.0, -50.0), (20.6, 200.0)],
                        [(3.3, 4.1), (40.7, 9.9), (12.2, 29.5)])
    for name, z in (("t0", -1.0), ("t1", -0.5)):  # the later ones in front
        next(n for n in scene.traverse() if n.name == name).position = (0, 0, z)
    yield scene, cam
    scene = Scene(background=(0.1, 0.1, 0.1))
    pos, faces = icosphere(3)
    scene.add(Node("ball", geometry=Mesh(pos.astype(np.float32), faces)))
    quad = np.array([[-2, -2, -1], [2, -2, -1.6], [2, 2, -1], [-2, 2, -0.4]], np.float32)
    scene.add(Node("back", geometry=Mesh(quad, [[0, 1, 2], [0, 2, 3]])))
    cam = scene.add(PerspectiveCamera(fov_y=50, aspect=W / H, position=(0.3, 0.2, 3.1)))
    cam.look_at((0, 0, 0))
    yield scene, cam
    scene = Scene(background=(0, 0, 0))
    rng = np.random.default_rng(5)
    pts = rng.uniform(-1, 1, (200, 3)).astype(np.float32)
    scene.add(Node("cloud", geometry=PointCloud(pts, colors=np.ones((200, 3)), point_size=2)))
    t = np.linspace(0, 2 * np.pi, 25)
    ring = np.stack([1.2 * np.cos(t), 1.2 * np.sin(t), 0.3 * np.sin(3 * t)], 1)
    scene.add(Node("ring", geometry=Lines(ring.astype(np.float32),
                                          np.stack([np.arange(24), np.arange(1, 25)], 1))))
    scene.add(Node("quad", geometry=Mesh(quad * 0.3, [[0, 1, 2], [0, 2, 3]])))
    cam = scene.add(PerspectiveCamera(fov_y=50, aspect=W / H, position=(0, 0, 3)))
    cam.look_at((0, 0, 0))
    yield scene, cam


@pytest.mark.parametrize("samples", [2, 4, 8])
def test_one_pass_sample_keys_equal_the_moved_rasters(samples):
    # the Numba backend's one setup and one walk (raster_samples) against the whole
    # raster moved onto each sample position, on Numba and on the NumPy reference:
    # the same (S, P) keys, bit for bit
    from engine.render.msaa import moved_sample_keys

    for scene, cam in _one_pass_scenes():
        stages, inputs, view = _stages_inputs("numba", scene, cam)
        got = stages.raster_samples(inputs, view, samples)
        assert got is not None, "the frame took the moved rasters"
        got = got.copy()
        assert (got != np.uint64(0xFFFFFFFFFFFFFFFF)).sum() > 100 * samples
        np.testing.assert_array_equal(got, moved_sample_keys(stages, inputs, view, samples))
        ref_stages, ref_inputs, ref_view = _stages_inputs("numpy", scene, cam)
        np.testing.assert_array_equal(
            got, moved_sample_keys(ref_stages, ref_inputs, ref_view, samples))
        # the samples differ from one another (the offsets were applied)
        assert (got[0] != got[1]).any()


def test_one_pass_raster_is_left_to_the_moved_rasters_where_it_cannot_draw():
    # alpha-tested pieces (the NumPy keep raster) take the moved rasters; the frame
    # still equals the reference's
    scene, cam = _scene([(-100.0, -100.0), (200.0, -100.0), (-100.0, 200.0)])
    node = next(n for n in scene.traverse() if n.name == "t0")
    node.geometry.material.alpha_cutoff = 0.5
    stages, inputs, view = _stages_inputs("numba", scene, cam)
    assert stages.raster_samples(inputs, view, 4) is None
    got = Renderer(scene, cam, (W, H), backend="numba", msaa=4).render()
    want = Renderer(scene, cam, (W, H), backend="numpy", msaa=4).render()
    np.testing.assert_array_equal(got.depth, want.depth)
    np.testing.assert_allclose(got.color, want.color, atol=1, rtol=0)


def test_compiled_mix_steps_equal_the_reference():
    from engine.render.backends import numba_msaa
    from engine.render.msaa import finish_mix, mix_layer, mixed_layers, nearest_depth

    rng = np.random.default_rng(11)
    w, h, s = 40, 30, 4
    ids = rng.integers(0, 5, (s, w * h)).astype(np.uint64)
    ids[:, : w * h // 3] = ids[0, : w * h // 3]
    ids[ids == 4] = np.uint64(0xFFFFFFFF)
    depth = rng.integers(1, 1 << 30, (s, w * h)).astype(np.uint64)
    keys = np.where(ids == np.uint64(0xFFFFFFFF), np.uint64(0xFFFFFFFFFFFFFFFF),
                    (depth << np.uint64(32)) | ids)
    # a drawn region: every sample outside pixels [5, 31) x [3, 22) empty
    inside = np.zeros((h, w), bool)
    inside[3:22, 5:31] = True
    keys[:, ~inside.ravel()] = np.uint64(0xFFFFFFFFFFFFFFFF)
    want = mixed_layers(keys)
    for region in (None, (w, 5, 31, 3, 22)):
        got = numba_msaa.mixed_layers_numba(keys, region=region)
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(a, b)
    first, mixed, layers, counts = want
    assert len(mixed) > 100 and len(layers) >= 3
    np.testing.assert_array_equal(numba_msaa.nearest_depth_numba(first, mixed, layers),
                                  nearest_depth(first, mixed, layers))
    # the mix: random layer colours (half-transparent ones too), in the reference's
    # float64 operations; the encode within a level where it rounds at a tie
    acc_want, acc_got = np.zeros((len(mixed), 7)), np.zeros((len(mixed), 7))
    for k in range(len(layers)):
        color = rng.integers(0, 256, (w * h, 4)).astype(np.uint8)
        color[::3, 3] = 255
        mix_layer(acc_want, color, mixed, counts[k], s)
        numba_msaa.mix_layer_numba(acc_got, color, mixed, counts[k], s)
    np.testing.assert_allclose(acc_got, acc_want, rtol=1e-15, atol=0)
    out_want = rng.integers(0, 256, (w * h, 4)).astype(np.uint8)
    out_got = out_want.copy()
    finish_mix(acc_want, out_want, mixed)
    numba_msaa.finish_mix_numba(acc_got, out_got, mixed)
    assert np.abs(out_got.astype(int) - out_want).max() <= 1
    # and the mix is the coverage-weighted linear-light mean: a pixel 3/4 opaque red,
    # 1/4 opaque blue -> linear (0.75, 0, 0.25), encoded by IEC 61966-2-1
    def encode(v):
        return round(255 * (1.055 * v ** (1 / 2.4) - 0.055))

    for mix, finish in ((mix_layer, finish_mix),
                        (numba_msaa.mix_layer_numba, numba_msaa.finish_mix_numba)):
        acc = np.zeros((1, 7))
        red = np.array([[0, 0, 0, 0], [255, 0, 0, 255]], np.uint8)
        blue = np.array([[0, 0, 0, 0], [0, 0, 255, 255]], np.uint8)
        mix(acc, red, np.array([1]), np.array([3]), 4)
        mix(acc, blue, np.array([1]), np.array([1]), 4)
        out = np.zeros((2, 4), np.uint8)
        finish(acc, out, np.array([1]))
        assert out[1].tolist() == [encode(0.75), 0, encode(0.25), 255]
        assert out[0].tolist() == [0, 0, 0, 0]
