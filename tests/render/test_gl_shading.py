"""The GL path's lean fragment work (engine.render.gl.surfaces, shaders/surface.frag):
its sRGB encoding against the exact IEC 61966-2-1 curve, programs specialised
per material kind, light count, pass, shadows, environment and tone map against the
general program, and no depth readback
unless the caller asks for depth. Needs libEGL + Mesa (scripts/setup.sh); never skips."""

from __future__ import annotations

import re

import numpy as np
import pytest

from engine import DirectionalLight, Material, Mesh, Node, PerspectiveCamera, Renderer, Scene
from engine.render.attributes import VARYINGS
from engine.render.gl import offscreen, surfaces
from engine.render.gl.glsl import SHADER_DIR
from engine.render.materials import pack_materials
from engine.scene.procedural import box, icosphere

pytestmark = pytest.mark.timeout(120)

SIZE = (160, 120)


def _exact_srgb(linear):
    """IEC 61966-2-1 encoding of linear values in [0, 1] (float64)."""
    return np.where(linear <= 0.0031308, 12.92 * linear, 1.055 * linear ** (1 / 2.4) - 0.055)


def test_srgb_encode_matches_the_exact_curve():
    """The real srgb_encode text of surface.frag, run by GL on 4096 linear values."""
    source = (SHADER_DIR / "surface.frag").read_text()
    body = re.search(r"vec3 srgb_encode\(vec3 l\) \{.*?\n\}", source, re.DOTALL).group(0)
    ctx = offscreen.create_egl_context()
    try:
        n = 4096
        prog = ctx.program(
            vertex_shader="#version 330 core\nvoid main() { vec2 c = vec2(gl_VertexID & 1, "
                          "gl_VertexID >> 1); gl_Position = vec4(c * 2.0 - 1.0, 0.0, 1.0); }",
            fragment_shader="#version 330 core\nout vec4 f;\n" + body + "\nvoid main() { "
                            f"float x = (gl_FragCoord.x - 0.5) / {n - 1}.0; "
                            "f = vec4(srgb_encode(vec3(x, x * x, sqrt(x))), 1.0); }")
        fbo = ctx.framebuffer(color_attachments=[ctx.renderbuffer((n, 1), 4, dtype="f4")])
        fbo.use()
        ctx.vertex_array(prog, []).render(mode=5, vertices=4)  # GL_TRIANGLE_STRIP
        got = np.frombuffer(fbo.read(components=4, dtype="f4"), np.float32).reshape(n, 4)
    finally:
        ctx.release()
    x = np.arange(n) / (n - 1)
    want = _exact_srgb(np.stack([x, x * x, np.sqrt(x)], axis=1))
    err = np.abs(got[:, :3] - want) * 255
    assert err.max() <= 0.05, err.max()  # GL's pow and float32: a small share of a level
    assert np.abs(got[0, :3]).max() < 1e-6 and np.abs(got[-1, :3] - 1).max() < 2e-3


def _scene():
    """Lit with specular, flat, unlit, textured and vertex-coloured materials, a mesh
    with zero normals on some vertices, two lights."""
    scene = Scene(background=(0.1, 0.1, 0.1))
    ball, faces = icosphere(2)
    rng = np.random.default_rng(3)
    image = rng.integers(0, 256, (8, 8, 4), dtype=np.uint8)
    image[..., 3] = 255
    from engine import Texture

    scene.add(Node("spec", position=(-1.2, 0, 0), geometry=Mesh(
        ball, faces, normals=ball, material=Material(color=(0.9, 0.5, 0.2), specular=0.6))))
    scene.add(Node("flat", position=(1.2, 0, 0), geometry=Mesh(
        ball, faces, colors=np.abs(ball), material=Material(shading="flat"))))
    scene.add(Node("unlit", position=(0, 1.2, 0), geometry=Mesh(
        ball, faces, colors=np.abs(ball), material=Material(shading="unlit"))))
    scene.add(Node("tex", position=(0, -1.2, 0), geometry=box(
        material=Material(texture=Texture(image)))))
    holes = ball.copy()
    holes[::3] = 0  # a third of the vertices without a normal: those pixels use the
    scene.add(Node("holes", position=(0, 0, 0.8), scale=0.5, geometry=Mesh(  # geometric one
        ball, faces, normals=holes, material=Material(color=(0.3, 0.8, 0.3)))))
    for position, color, intensity in (((2, 2, 3), (1, 1, 1), 0.8), ((-3, 1, 2), (1, 0.8, 0.6), 0.5)):
        light = scene.add(DirectionalLight(color=color, intensity=intensity, position=position))
        light.look_at((0, 0, 0))
    camera = scene.add(PerspectiveCamera(fov_y=50, aspect=SIZE[0] / SIZE[1]))
    camera.frame(scene.bounds(), azimuth=20, elevation=15)
    return scene, camera


def test_specialised_programs_draw_what_the_general_program_draws(monkeypatch):
    scene, camera = _scene()
    r = Renderer(scene, camera, SIZE, backend="numba", raster="gl")
    try:
        special = r.render()
        painter = r._stages(r._assembly()).offscreen._surface_painter
        kinds = {d for d in painter._programs if d}
        assert len(kinds) == 5  # spec, flat, unlit, textured, holes: one program each
        assert all("N_LIGHTS 2" in d for d in kinds)
        # the mesh with zero normals is the one smooth lit program with the derivative one
        lit = [d for d in kinds if "IS_LIT true" in d and "IS_FLAT false" in d]
        assert sorted("HAS_NORMALS" in d for d in lit) == [False, True, True]
    finally:
        r.close()
    _assert_general_program_draws(special, scene, camera, monkeypatch, covered=2000)


def _assert_general_program_draws(special, scene, camera, monkeypatch, covered):
    """The frame of the general program (no variant defines, every uniform tested at
    run time, every varying read) equals ``special`` (depth exactly, colour within
    1/255) over more than ``covered`` drawn pixels."""
    monkeypatch.setattr(surfaces, "variant_defines", lambda *a, **k: ())
    r = Renderer(scene, camera, SIZE, backend="numba", raster="gl")
    try:
        general = r.render()
        painter = r._stages(r._assembly()).offscreen._surface_painter
        assert painter._varying_names == tuple(VARYINGS)  # it reads every varying
    finally:
        r.close()
    assert (general.depth < 1).sum() > covered
    np.testing.assert_array_equal(special.depth, general.depth)
    diff = np.abs(special.color.astype(int) - general.color.astype(int))
    assert diff.max() <= 1, diff.max()


def _frame_scene():
    """What the frame and the pass decide: a shadow-casting light over a plane that
    receives its shadows and a box that does not, a uniform environment, exposure with
    PBR Neutral, and a BLEND quad in front (the transparency passes)."""
    from engine import Environment
    from engine.scene.light import AmbientLight

    scene = Scene(background=(0.1, 0.1, 0.1), environment=Environment((0.3, 0.3, 0.3)))
    scene.exposure, scene.tone_map = 1.5, "pbr-neutral"
    pos = np.array([[-3, 0, -3], [3, 0, -3], [3, 0, 3], [-3, 0, 3]], np.float32)
    scene.add(Node("plane", geometry=Mesh(pos, [[0, 2, 1], [0, 3, 2]], material=Material(
        color=(0.8, 0.8, 0.8), shading="pbr", metallic=0.0, roughness=0.7))))
    lid = scene.add(Node("box", position=(0.3, 0.5, 0), geometry=box(
        material=Material(color=(0.8, 0.3, 0.2), specular=0.3))))
    lid.receive_shadow = False
    scene.add(Node("pane", position=(0, 0.8, 1.2), geometry=Mesh(
        np.array([[-0.6, -0.4, 0], [0.6, -0.4, 0], [0.6, 0.4, 0], [-0.6, 0.4, 0]], np.float32),
        [[0, 1, 2], [0, 2, 3]], material=Material(color=(0.2, 0.4, 1.0, 0.5), blend=True))))
    light = scene.add(DirectionalLight(intensity=2.0, shadows=True, shadow_map_size=256,
                                       position=(2.0, 4.0, 1.0)))
    light.look_at((0, 0, 0))
    scene.add(AmbientLight(intensity=0.2))
    camera = scene.add(PerspectiveCamera(fov_y=50, aspect=SIZE[0] / SIZE[1],
                                         position=(0.0, 3.5, 4.0)))
    camera.look_at((0, 0, 0))
    return scene, camera


def test_programs_specialised_per_pass_shadow_environment_and_tone_map(monkeypatch):
    """The pass (opaque or transparency layer), the draw's shadows, the environment and
    the tone map are constants of each program: the opaque programs have no discard by
    depth (whose uniforms are then inactive), only the receiving draw reads the shadow
    atlas, and the frame matches the general program's."""
    scene, camera = _frame_scene()
    r = Renderer(scene, camera, SIZE, backend="numba", raster="gl")
    try:
        special = r.render()
        programs = r._stages(r._assembly()).offscreen._surface_painter._programs
        kinds = {d: p for d, p in programs.items() if d}
        assert all("HAS_ENV true" in d and "TONE_MAPPED true" in d for d in kinds)
        peeling = [d for d in kinds if "PEELING true" in d]
        assert len(peeling) == 1 and len(kinds) == 3  # plane, box, the pane's layers
        for d, prog in kinds.items():
            assert ("u_peel" in prog) == (d in peeling), d
            assert ("u_opaque_depth" in prog) == (d in peeling), d
            assert ("u_shadow_atlas" in prog) == ("RECEIVES_SHADOWS true" in d), d
        receiving = [d for d in kinds if "RECEIVES_SHADOWS true" in d]
        assert len(receiving) == 2 and all("IS_PBR true" in d or d in peeling
                                           for d in receiving)  # the plane and the pane
    finally:
        r.close()
    _assert_general_program_draws(special, scene, camera, monkeypatch, covered=5000)


def test_only_the_varyings_the_programs_read_are_uploaded():
    """A lit mesh without specular under a directional light reads its normal only (3
    of the 18 floats a vertex carries); a specular, a textured and a vertex-coloured
    material add the position, the texture coordinates and the linear colour (the frames are compared with
    the general program's, which reads every varying, in the tests above)."""
    from engine.render.attributes import gl_buffer_format

    assert gl_buffer_format(["uv0", "normal"]) == ("3f 2f", ["in_normal", "in_uv0"])
    assert gl_buffer_format()[0] == "3f 3f 4f 2f 4f 2f"
    with pytest.raises(KeyError, match="uv2"):
        gl_buffer_format(["uv2"])
    ball, faces = icosphere(2)
    scene = Scene(background=(0.1, 0.1, 0.1))
    scene.add(Node("ball", geometry=Mesh(ball, faces, normals=ball)))
    scene.add(DirectionalLight(position=(1, 2, 3))).look_at((0, 0, 0))
    camera = scene.add(PerspectiveCamera(fov_y=50, aspect=SIZE[0] / SIZE[1], position=(0, 0, 4)))
    r = Renderer(scene, camera, SIZE, backend="numba", raster="gl")
    try:
        r.render(depth=False)
        painter = r._stages(r._assembly()).offscreen._surface_painter
        assert painter._varying_names == ("normal",)
        assert painter._packed.shape == (len(ball), 3)
    finally:
        r.close()
    scene, camera = _scene()
    r = Renderer(scene, camera, SIZE, backend="numba", raster="gl")
    try:
        r.render(depth=False)
        painter = r._stages(r._assembly()).offscreen._surface_painter
        # (the textured program picks uv0 or uv1 by the record's uv_sets: it reads both)
        assert painter._varying_names == ("position", "normal", "color_linear", "uv0", "uv1")
    finally:
        r.close()


def test_white_vertices_leave_vertex_colours_out_of_the_program():
    record = pack_materials([Material()])[0][0]  # multiplies vertex colours
    assert "HAS_VERTEX_COLORS true" in surfaces.variant_defines(record, 1, 0)
    assert "HAS_VERTEX_COLORS false" in surfaces.variant_defines(record, 1, 0, white=True)
    assert "N_LIGHTS 3" in surfaces.variant_defines(record, 1, 2)
    unlit = pack_materials([Material(shading="unlit", specular=0.5)])[0][0]
    assert "IS_LIT false" in surfaces.variant_defines(unlit, 0, 0)


def test_depth_is_read_back_only_when_asked(monkeypatch):
    scene, camera = _scene()
    reads = []
    real = offscreen.OffscreenGL.read_depth
    monkeypatch.setattr(offscreen.OffscreenGL, "read_depth",
                        lambda self, size: reads.append(size) or real(self, size))
    r = Renderer(scene, camera, SIZE, backend="numba", raster="gl")
    try:
        colour_only = r.render(depth=False)
        assert colour_only.depth is None and reads == []
        full = r.render()
        assert reads == [SIZE]
    finally:
        r.close()
    np.testing.assert_array_equal(colour_only.color, full.color)
    soft = Renderer(scene, camera, SIZE, backend="numba").render()
    covered = (soft.depth < 1) & (full.depth < 1)
    assert covered.sum() > 2000
    assert np.abs(soft.depth[covered] - full.depth[covered]).max() < 1e-3


def test_each_frame_owns_its_colour():
    """The colour is read into a buffer kept between frames and copied out flipped: a
    frame is the caller's (writable, not changed by the next frame), row 0 the top
    (its coverage is the software raster's frame's, not that upside down)."""
    scene, camera = _scene()
    r = Renderer(scene, camera, SIZE, backend="numba", raster="gl")
    try:
        first = r.render(depth=False)
        kept = first.color.copy()
        camera.position = tuple(np.asarray(camera.position) * 1.5)
        second = r.render(depth=False)
    finally:
        r.close()
    assert first.color.flags.writeable and first.color.flags.c_contiguous
    assert not np.shares_memory(first.color, second.color)
    np.testing.assert_array_equal(first.color, kept)
    assert (first.color != second.color).any()
    scene2, camera2 = _scene()
    soft = Renderer(scene2, camera2, SIZE, backend="numba").render()
    covered_gl = (first.color != first.color[0, 0]).any(-1)  # the corner: background
    covered_soft = soft.depth < 1

    def overlap(a, b):  # intersection over union of two coverage masks
        return (a & b).sum() / (a | b).sum()

    assert overlap(covered_gl, covered_soft) > 0.98
    assert overlap(covered_gl[::-1], covered_soft) < 0.9  # not upside down (0.77)
