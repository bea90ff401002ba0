"""Offscreen GL (EGL, Mesa llvmpipe here) against the software rasterizer, on real pixels.

These tests need libEGL + Mesa (installed by scripts/setup.sh); they never skip: a
machine without them fails here with the reason.
"""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from engine import Node, OrthographicCamera, PointCloud, Renderer, Scene
from engine.render.gl import OffscreenGL
from engine.render.points import rasterize_points

pytestmark = pytest.mark.timeout(60)

RED, GREEN, BLUE, YELLOW = (255, 0, 0, 255), (0, 255, 0, 255), (0, 0, 255, 255), (255, 255, 0, 255)
BG = (0.0, 0.0, 0.0, 1.0)


@pytest.fixture(scope="module")
def gl():
    presenter = OffscreenGL()
    yield presenter
    presenter.release()


def _draw(raster, gl, xy, depth, colors, size, point_size=1.0, visible=None, background=BG):
    xy = np.asarray(xy, np.float32)
    depth = np.asarray(depth, np.float32)
    visible = np.ones(len(xy), bool) if visible is None else np.asarray(visible, bool)
    colors = np.asarray(colors, np.uint8)
    draw = gl.render if raster == "gl" else rasterize_points
    return draw(xy, depth, visible, colors, size, point_size, background)


def _pixels_scene():
    """World units = pixels: an orthographic camera 48 units tall on a 64x48 image, so
    world (x, y) lands at screen (x + 32, 24 - y) and pixel (floor(sx), floor(sy))."""
    scene = Scene("pixels", background=(0.0, 0.0, 0.0))
    # (world x, world y, world z, colour, size); nearer = larger z (camera at z = +10).
    points = [
        (-21.5, 13.5, 0.0, RED, 1),     # pixel (10, 10)
        (10.5, -5.5, 0.0, GREEN, 1),    # pixel (42, 29)
        (10.5, -5.5, 1.0, BLUE, 1),     # same pixel, nearer: blue wins
        (-0.5, 0.5, 0.0, YELLOW, 3),    # 3x3 splat centred on pixel (31, 23)
    ]
    for i, (x, y, z, col, size) in enumerate(points):
        scene.add(Node(f"p{i}", geometry=PointCloud(np.array([[x, y, z]]),
                                                    np.array([col], np.uint8), point_size=size)))
    camera = scene.add(OrthographicCamera(height=48.0, position=(0.0, 0.0, 10.0),
                                          near=1.0, far=20.0))
    return scene, camera


@pytest.mark.parametrize("raster", ["software", "gl"])
def test_known_points_render_to_exact_pixels(raster):
    scene, camera = _pixels_scene()
    renderer = Renderer(scene, camera, (64, 48), backend="numpy", raster=raster)
    try:
        frame = renderer.render()
    finally:
        renderer.close()
    expected = np.zeros((48, 64, 4), np.uint8)
    expected[..., 3] = 255
    expected[10, 10] = RED
    expected[29, 42] = BLUE
    expected[22:25, 30:33] = YELLOW
    np.testing.assert_array_equal(frame.color, expected)
    # Orthographic depth is linear: z_view = -10 + z over near 1 / far 20.
    assert frame.depth[10, 10] == pytest.approx((10.0 - 1.0) / 19.0, abs=1e-6)
    assert frame.depth[29, 42] == pytest.approx((9.0 - 1.0) / 19.0, abs=1e-6)
    assert frame.depth[0, 0] == 1.0


def test_gl_and_software_agree_on_random_scene(gl):
    rng = np.random.default_rng(1)
    n, size = 10_000, (320, 240)
    xy = rng.uniform(0, size, (n, 2))
    depth = rng.uniform(0, 1, n)
    visible = rng.uniform(size=n) < 0.9
    colors = rng.integers(0, 256, (n, 4))
    a = _draw("gl", gl, xy, depth, colors, size, 1.0, visible)
    b = _draw("software", gl, xy, depth, colors, size, 1.0, visible)
    agree = np.mean(np.all(a.color == b.color, axis=-1))
    assert agree >= 0.99, f"only {agree:.4%} of pixels agree"
    drawn = np.any(b.color != a.color[0, 0], axis=-1).sum()
    assert drawn > 5000  # the scene really covers many pixels


def test_gl_and_software_agree_with_per_point_sizes(gl):
    rng = np.random.default_rng(2)
    n, size = 2000, (200, 150)
    xy = rng.uniform(0, size, (n, 2))
    depth = rng.uniform(0, 1, n)
    colors = rng.integers(0, 256, (n, 4))
    sizes = rng.uniform(0.6, 7.4, n)
    a = _draw("gl", gl, xy, depth, colors, size, sizes)
    b = _draw("software", gl, xy, depth, colors, size, sizes)
    assert np.mean(np.all(a.color == b.color, axis=-1)) >= 0.99


def _halves(width, height):
    """One 1-pixel point per pixel centre: red in the top half, blue in the bottom."""
    ys, xs = np.mgrid[0:height, 0:width]
    xy = np.stack([xs.ravel() + 0.5, ys.ravel() + 0.5], axis=1)
    colors = np.where((ys.ravel() < height // 2)[:, None], RED, BLUE)
    return xy, np.full(len(xy), 0.5), colors


@pytest.mark.parametrize("raster", ["gl", "software"])
def test_odd_width_frame_saves_png_with_red_top_row(raster, gl, tmp_path):
    from engine.io.image import save_image

    xy, depth, colors = _halves(101, 50)
    frame = _draw(raster, gl, xy, depth, colors, (101, 50))
    path = save_image(tmp_path / "halves.png", frame.color)
    img = np.asarray(Image.open(path).convert("RGBA"))
    assert img.shape == (50, 101, 4)
    assert np.all(img[0] == RED)
    assert np.all(img[:25] == RED) and np.all(img[25:] == BLUE)


@pytest.mark.parametrize("raster", ["gl", "software"])
@pytest.mark.parametrize("centre, box", [
    ((32.0, 32.0), (27, 37, 27, 37)),   # integer centre: pixels 27..36 in x and y
    ((20.3, 40.7), (15, 25, 36, 46)),   # off-grid centre: still 10 x 10
])
def test_point_of_size_10_lights_10x10_pixels(raster, centre, box, gl):
    frame = _draw(raster, gl, [centre], [0.5], [RED], (64, 64), point_size=10)
    lit = np.all(frame.color == RED, axis=-1)
    x0, x1, y0, y1 = box
    expected = np.zeros((64, 64), bool)
    expected[y0:y1, x0:x1] = True
    np.testing.assert_array_equal(lit, expected)


def test_invisible_points_and_background(gl):
    frame = _draw("gl", gl, [[5.5, 5.5], [10.5, 3.5]], [0.2, 0.2], [RED, GREEN], (16, 8),
                  visible=[False, True], background=(0.2, 0.4, 0.6))
    bg = np.array([51, 102, 153, 255], np.uint8)  # rint(0.2*255), rint(0.4*255), rint(0.6*255)
    assert np.all(frame.color[5, 5] == bg)
    assert np.all(frame.color[3, 10] == GREEN)
    assert np.sum(np.any(frame.color != bg, axis=-1)) == 1


def test_buffers_are_reused_and_grown_only_when_needed(gl):
    rng = np.random.default_rng(3)

    def frame(n):
        _draw("gl", gl, rng.uniform(0, 32, (n, 2)), rng.uniform(0, 1, n),
              rng.integers(0, 256, (n, 4)), (32, 32))

    frame(1000)
    before = gl.painter.allocations
    for _ in range(5):
        frame(1000)
    frame(10)  # fewer points: the same buffers
    assert gl.painter.allocations == before
    frame(50_000)  # more points than the buffers hold: they grow once
    grown = gl.painter.allocations
    assert grown > before
    frame(50_000)
    assert gl.painter.allocations == grown


def test_gl_rejects_bad_input(gl):
    with pytest.raises(ValueError, match="colors"):
        gl.render(np.zeros((2, 2), np.float32), np.zeros(2, np.float32), np.ones(2, bool),
                  np.zeros((3, 4), np.uint8), (8, 8))
    with pytest.raises(ValueError, match="point_size"):
        _draw("gl", gl, [[1, 1]], [0.5], [RED], (8, 8), point_size=float("nan"))
    with pytest.raises(ValueError, match="size"):
        _draw("gl", gl, [[1, 1]], [0.5], [RED], (0, 8))


def test_cli_render_gl_matches_software(tmp_path):
    from engine.cli import main

    out = {}
    for raster in ("software", "gl"):
        out[raster] = tmp_path / f"{raster}.png"
        assert main(["render", "demo", "--backend", "numpy", "--size", "160x90",
                     "--raster", raster, "--out", str(out[raster]),
                     "--msaa", "1"]) == 0  # pixel by pixel: one sample (GL's pattern differs)
    a = np.asarray(Image.open(out["gl"]))
    b = np.asarray(Image.open(out["software"]))
    assert a.shape == b.shape == (90, 160, 4)
    assert np.mean(np.all(a == b, axis=-1)) >= 0.99
    assert len(np.unique(a.reshape(-1, 4), axis=0)) > 10  # a real picture, not a blank


def test_static_colours_are_uploaded_once_per_revision(gl, monkeypatch):
    rng = np.random.default_rng(4)
    n = 500
    xy, depth = rng.uniform(0, 32, (n, 2)).astype(np.float32), rng.uniform(0, 1, n).astype(np.float32)
    colors = rng.integers(0, 256, (n, 4)).astype(np.uint8)
    uploads = []
    real = gl.painter._upload
    monkeypatch.setattr(gl.painter, "_upload", lambda name, a: (uploads.append(name), real(name, a)))
    vis = np.ones(n, bool)
    first = gl.render(xy, depth, vis, colors, (32, 32), colors_revision=7)
    again = gl.render(xy, depth, vis, colors, (32, 32), colors_revision=7)
    assert uploads.count("in_color") == 1 and uploads.count("in_xy") == 2
    np.testing.assert_array_equal(first.color, again.color)
    gl.render(xy, depth, vis, colors[::-1].copy(), (32, 32), colors_revision=8)  # repacked
    assert uploads.count("in_color") == 2
    fresh = gl.render(xy, depth, vis, colors, (32, 32))  # no revision: always uploads
    np.testing.assert_array_equal(first.color, fresh.color)
    assert uploads.count("in_color") == 3


_LEAK_PROBE = r"""
import gc, sys
import numpy as np
from engine import Mesh, Node, PerspectiveCamera, Renderer, Scene

def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20

scene = Scene()
quad = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], np.float32)
scene.add(Node("quad", geometry=Mesh(quad, [[0, 1, 2], [0, 2, 3]])))
cam = scene.add(PerspectiveCamera(fov_y=60, position=(0, 0, 3)))

def dropped():
    Renderer(scene, cam, size=(64, 48), backend="numpy", raster="gl").render()

def closed():
    with Renderer(scene, cam, size=(64, 48), backend="numpy", raster="gl") as r:
        r.render()

for make in (dropped, closed):
    for _ in range(3):  # warm-up: driver and allocator caches
        make()
    gc.collect()
    before = rss_mb()
    for _ in range(int(sys.argv[1])):
        make()
    gc.collect()
    print(make.__name__, rss_mb() - before)
"""


def test_gl_renderers_return_their_memory_when_dropped_or_closed():
    """A Renderer(raster="gl") kept ~5 MB of RSS (an EGL context, llvmpipe) after it was
    dropped without close(): 20 of them 245 -> 346 MB. Dropped or used in a with block,
    20 of them now grow RSS by under 1 MB each (measured here: about 1 MB in all)."""
    import subprocess
    import sys
    from pathlib import Path

    n = 20  # a fresh process (the checkout's engine): RSS is this test's alone
    out = subprocess.run([sys.executable, "-c", _LEAK_PROBE, str(n)], capture_output=True,
                         text=True, timeout=120, check=True,
                         cwd=Path(__file__).resolve().parents[2]).stdout
    growth = {name: float(mb) for name, mb in (line.split() for line in out.splitlines())}
    assert set(growth) == {"dropped", "closed"}
    for name, mb in growth.items():
        assert mb < n * 1.0, f"{n} {name} GL renderers kept {mb:.1f} MB"


def test_a_dropped_offscreen_context_is_released_and_others_keep_drawing():
    import gc

    import moderngl

    scene, camera = _pixels_scene()
    keep = Renderer(scene, camera, size=(64, 48), backend="numpy", raster="gl")
    first = keep.render().color
    other = Renderer(scene, camera, size=(64, 48), backend="numpy", raster="gl")
    other.render()
    ctx = other.gl.ctx
    del other
    gc.collect()
    assert isinstance(ctx.mglo, moderngl.InvalidObject)  # the finalizer released it
    np.testing.assert_array_equal(keep.render().color, first)  # the survivor still draws
    with keep as r:
        assert r is keep
    assert keep._gl is None  # closed at the end of the with block
    np.testing.assert_array_equal(keep.render().color, first)  # and usable again
    keep.close()
    keep.close()  # a second close does nothing
