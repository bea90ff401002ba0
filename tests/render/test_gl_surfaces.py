"""Oracle: Mesa's llvmpipe (a conformant OpenGL) draws the engine's clip-space surfaces
through the GL path; the software path must agree on the same frames. Both sides use the
same vertex stage, sampler settings (no mipmaps) and shading model, so this checks
coverage, depth, clipping and interpolation. Needs libEGL + Mesa (scripts/setup.sh
installs them); never skips."""

from __future__ import annotations

import numpy as np
import pytest

from engine import Node, PointCloud, Renderer, Scene
from engine.cli.commands import load_source
from engine.io import load

pytestmark = pytest.mark.timeout(120)

SIZE = (320, 240)


def _agreement(a, b):
    """Fraction of pixels covered in either frame whose colours differ by <= 2/255 in
    every channel, and the mask of the disagreeing ones."""
    covered = (a.depth < 1) | (b.depth < 1)
    diff = np.abs(a.color.astype(int) - b.color.astype(int)).max(axis=-1)
    bad = covered & (diff > 2)
    return 1.0 - bad.sum() / covered.sum(), bad


def _edge_pixels(frame):
    """Pixels next to a depth discontinuity or the coverage boundary (3x3 neighbourhood)."""
    d = frame.depth.astype(np.float64)
    pad = np.pad(d, 1, mode="edge")
    near = np.zeros(d.shape, bool)
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            n = pad[1 + dy: 1 + dy + d.shape[0], 1 + dx: 1 + dx + d.shape[1]]
            near |= ((n == 1) != (d == 1)) | (np.abs(n - d) > 1e-3)
    return near


def _compare(scene, camera, only_edges=True):
    soft = Renderer(scene, camera, SIZE, backend="numba").render()
    r = Renderer(scene, camera, SIZE, backend="numba", raster="gl")
    try:
        gl = r.render()
        assert "llvmpipe" in r.gl.renderer_name or r.gl.renderer_name
    finally:
        r.close()
    frac, bad = _agreement(soft, gl)
    assert frac >= 0.995, frac
    if only_edges:  # differences only along edges
        assert not (bad & ~(_edge_pixels(soft) | _edge_pixels(gl))).any()
    assert (soft.depth < 1).sum() > 2000
    return soft, gl


# a named gap: with mipmaps llvmpipe's level of detail (per 2x2 quad, its own rounding)
# and the software's per-pixel analytic one pick other level blends on minified texels
# (measured: BoxTextured 98.29% of covered pixels within 2/255; the Duck, drawn with the
# metallic-roughness BRDF, agrees again)
_MIP_GAP = pytest.mark.xfail(strict=True, reason="GL's mip level of detail is llvmpipe's, "
                             "not the per-pixel analytic one (issue 21 item 2)")


@pytest.mark.parametrize("rel", ["classic/stanford-bunny.obj", "classic/teapot.obj",
                                 "classic/suzanne.obj",
                                 "gltf/Duck.glb",
                                 pytest.param("gltf-khronos/BoxTextured/BoxTextured.gltf",
                                              marks=_MIP_GAP)])
def test_llvmpipe_and_software_agree_on_reference_models(ref_assets, rel):
    scene, camera = load_source(str(ref_assets / rel), SIZE[0] / SIZE[1])
    _compare(scene, camera)


def test_llvmpipe_and_software_agree_on_points_with_a_mesh(ref_assets):
    scene, camera = load_source(str(ref_assets / "classic/stanford-bunny.obj"), SIZE[0] / SIZE[1])
    # the bounding-sphere view this test was written for: in the closer default view
    # (engine.scene.framing) a point of the cloud lies on the bunny's surface within the
    # edge test's depth tolerance, where GL and software may pick either
    camera.frame(scene.bounds(), azimuth=35.0, elevation=25.0)
    bunny = next(n for n in scene.traverse() if n.geometry is not None)
    lo, hi = scene.bounds()
    rng = np.random.default_rng(3)
    pts = rng.uniform(lo, hi, (4000, 3)).astype(np.float32)  # a cloud through the bunny
    scene.add(Node("cloud", geometry=PointCloud(pts, colors=rng.uniform(0, 1, (4000, 3)),
                                                point_size=2)))
    soft, _ = _compare(scene, camera)
    bunny.visible = False
    alone = Renderer(scene, camera, SIZE, backend="numba").render()

    def coloured(f):  # the cloud's random colours; the lit bunny is grey
        c = f.color[..., :3].astype(int)
        return ((c.max(axis=-1) - c.min(axis=-1)) > 40) & (f.depth < 1)

    # one depth buffer: points behind the bunny are hidden, those in front drawn over it
    assert 100 < coloured(soft).sum() < coloured(alone).sum() - 100


def test_llvmpipe_and_software_agree_on_wireframes_and_flat_shading(ref_assets):
    scene, camera = load_source(str(ref_assets / "classic/suzanne.obj"), SIZE[0] / SIZE[1])
    for node in scene.traverse():
        if node.geometry is not None:
            node.draw = "solid+wireframe"
            node.geometry.material.shading = "flat"
    _compare(scene, camera, only_edges=False)  # lines cross faces: not only at edges
    for node in scene.traverse():  # lines alone: one pixel per major-axis step, like GL's
        if node.geometry is not None:
            node.draw = "wireframe"
    soft = Renderer(scene, camera, SIZE, backend="numba").render()
    r = Renderer(scene, camera, SIZE, backend="numba", raster="gl")
    gl = r.render()
    r.close()
    a, b = soft.depth < 1, gl.depth < 1
    assert (a & b).sum() >= 0.99 * max(a.sum(), b.sum()) and a.sum() > 2000


@_MIP_GAP
def test_loaded_textures_render_the_same_through_load(ref_assets):
    scene = Scene()
    scene.add(load(ref_assets / "gltf/BoxTextured.glb"))
    from engine import PerspectiveCamera

    cam = scene.add(PerspectiveCamera(aspect=SIZE[0] / SIZE[1]))
    cam.frame(scene.bounds())
    _compare(scene, cam)
