"""Image-based lighting (engine.render.ibl, engine.scene.environment): the prefiltered
maps against values computed here independently, the white furnace, a mirror sphere,
the environment behind the scene, the neutral default and bad inputs.

Every backend draws the same frames through tests/render/test_parity.py (rows
ibl_uniform, ibl_image); here the host resolves are checked for the right values.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from engine import (
    DirectionalLight,
    Environment,
    Mesh,
    Node,
    PerspectiveCamera,
    Renderer,
    Scene,
)
from engine.render import ibl
from engine.render.shading import DEFAULT_HEADLIGHT, scene_lights
from engine.scene.colorspace import srgb_to_linear
from engine.scene.material import Material
from engine.scene.procedural import icosphere

pytestmark = pytest.mark.timeout(300)

SIZE = 64


def _ball_scene(environment, exposure=1.0, **material):
    v, f = icosphere(4)
    scene = Scene(environment=environment, exposure=exposure)
    scene.add(Node("ball", geometry=Mesh(v.astype(np.float32), f, normals=v.astype(np.float32),
                                         material=Material(**material))))
    cam = scene.add(PerspectiveCamera(fov_y=40, aspect=1.0, near=0.1, far=20))
    cam.position = (0.0, 0.0, 4.0)
    cam.look_at((0.0, 0.0, 0.0))
    return scene, cam


def _hemisphere(n=400):
    """Midpoint quadrature of the upper hemisphere (z up): (directions (n*4n, 3), dw)."""
    theta = (np.arange(n) + 0.5) / n * (np.pi / 2)
    phi = (np.arange(4 * n) + 0.5) / (4 * n) * 2 * np.pi
    t, p = np.meshgrid(theta, phi, indexing="ij")
    d = np.stack([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)], -1).reshape(-1, 3)
    dw = (np.sin(t) * (np.pi / 2 / n) * (2 * np.pi / (4 * n))).reshape(-1)
    return d, dw


def _split_sum_integral(nv, roughness):
    """(A, B) by direct quadrature of the glTF specular lobe (GGX D, the engine's Smith
    visibility, Schlick's Fc) for white light: F0 A + B = integral f_spec N.L dw."""
    a2 = roughness ** 4
    v = np.array([np.sqrt(1 - nv * nv), 0.0, nv])
    l, dw = _hemisphere()
    h = l + v
    h /= np.linalg.norm(h, axis=1, keepdims=True)
    nh, nl, vh = h[:, 2], l[:, 2], h @ v
    d = a2 / (np.pi * (nh * nh * (a2 - 1) + 1) ** 2)
    vis = 1 / ((nl + np.sqrt(a2 + (1 - a2) * nl * nl)) * (nv + np.sqrt(a2 + (1 - a2) * nv * nv)))
    fc = (1 - vh) ** 5
    lobe = d * vis * nl * dw
    return float((lobe * (1 - fc)).sum()), float((lobe * fc).sum())


# ------------------------------------------------------------ the split-sum table
@pytest.mark.parametrize("nv, roughness", [(0.5, 0.5), (0.9, 0.3), (0.2, 0.8), (0.7, 1.0)])
def test_split_sum_matches_a_direct_integral(nv, roughness):
    a, b = _split_sum_integral(nv, roughness)
    got_a, got_b = ibl.split_sum(nv, roughness)
    assert abs(got_a - a) < 0.01 and abs(got_b - b) < 0.01, (got_a, got_b, a, b)
    # the cached table, read bilinearly between its texel centres
    ta, tb = ibl.lut_lookup(ibl.split_sum_table(), nv, roughness)
    assert abs(ta - a) < 0.02 and abs(tb - b) < 0.02, (ta, tb, a, b)


def test_split_sum_closed_forms():
    # roughness 0 is a mirror: A + B = 1; roughness 1 (alpha 1, D = 1/pi) at N.V = 1:
    # integral of mu / ((mu + 1) 2) 2 pi dmu / pi = 1 - ln 2
    a, b = ibl.split_sum(0.6, 0.0)
    assert abs(a + b - 1.0) < 1e-6
    a, b = ibl.split_sum(1.0, 1.0)
    assert abs(a + b - (1 - np.log(2))) < 0.005
    assert ibl.split_sum_table() is ibl.split_sum_table()  # computed once


# ------------------------------------------------------------------ SH irradiance
def _two_hemispheres(top, bottom, w=64, h=32):
    img = np.empty((h, w, 3))
    img[: h // 2] = top
    img[h // 2:] = bottom
    return img


def test_sh_irradiance_of_two_hemispheres():
    top, bottom = np.array([1.0, 0.6, 0.2]), np.array([0.1, 0.2, 0.4])
    sh = ibl.sh_coefficients(_two_hemispheres(top, bottom))
    # analytic: irradiance / pi of a sky of radiance `top` over a ground of `bottom` at a
    # normal theta from +Y is (top + bottom) / 2 + (top - bottom) / 2 cos(theta)
    for theta in (0.0, np.pi / 4, np.pi / 2, 2.0, np.pi):
        n = np.array([np.sin(theta), np.cos(theta), 0.0])
        want = (top + bottom) / 2 + (top - bottom) / 2 * np.cos(theta)
        assert np.abs(ibl.irradiance(sh, n) - want).max() < 2e-3, theta
    # sideways along any azimuth
    n = np.array([0.0, 0.0, 1.0])
    assert np.abs(ibl.irradiance(sh, n) - (top + bottom) / 2).max() < 2e-3


def test_lit_material_takes_the_environment_irradiance_as_ambient():
    top, bottom = np.array([0.8, 0.8, 0.8]), np.array([0.0, 0.0, 0.0])
    env = Environment.from_array(_two_hemispheres(top, bottom))
    scene, cam = _ball_scene(env, shading="lit", color=(1, 1, 1), specular=0.0)
    f = Renderer(scene, cam, (SIZE, SIZE), backend="numpy").render()
    # no headlight (the scene has an environment): the centre pixel's normal faces the
    # camera (sideways): (0.8 + 0) / 2
    got = srgb_to_linear(f.color[SIZE // 2, SIZE // 2, :3] / 255.0)
    assert np.abs(got - 0.4).max() < 0.01


# ---------------------------------------------------------------- white furnace
@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("metallic, roughness, mean_error", [
    # measured (mean linear radiance over the sphere - 1): the dielectric's diffuse is not
    # reduced by its Fresnel (engine.render.ibl), the rough metal loses what the single-
    # scattering split sum has no multiple scattering for
    (0.0, 0.2, 0.087), (0.0, 1.0, 0.019), (1.0, 0.2, -0.010), (1.0, 1.0, -0.620)])
def test_white_furnace(backend, metallic, roughness, mean_error):
    # exposure 1/2 so that nothing clips: linear radiance = 2 x the decoded frame
    scene, cam = _ball_scene(Environment("white"), exposure=0.5, shading="pbr",
                             color=(1, 1, 1), metallic=metallic, roughness=roughness)
    f = Renderer(scene, cam, (SIZE, SIZE), backend=backend).render()
    lin = 2 * srgb_to_linear(f.color[..., 0] / 255.0)
    ball = lin[f.depth < 1]
    assert abs(ball.mean() - 1 - mean_error) < 0.01
    if (metallic, roughness) != (1.0, 1.0):
        assert abs(ball.mean() - 1) < 0.1  # close to white
    # the pixel facing the camera, against the lobe integrated here: the diffuse part
    # (1 for the white dielectric, 0 for the metal) + F0 A + B at N.V = 1
    a, b = _split_sum_integral(0.9999, roughness)
    f0 = 0.04 if metallic == 0.0 else 1.0
    want = (1.0 - metallic) + f0 * a + b
    assert abs(lin[SIZE // 2, SIZE // 2] - want) < 0.02 * want, (lin[SIZE // 2, SIZE // 2], want)


# --------------------------------------------------------------- a mirror sphere
def _direction_image(w=64, h=32):
    """An environment whose radiance is 0.5 + 0.4 d (per channel x, y, z) at direction
    d, sampled at the texel centres (engine.scene.environment's layout)."""
    phi = ((np.arange(w) + 0.5) / w - 0.5) * 2 * np.pi
    theta = (np.arange(h) + 0.5) / h * np.pi
    t, p = np.meshgrid(theta, phi, indexing="ij")
    d = np.stack([np.sin(t) * np.sin(p), np.cos(t), -np.sin(t) * np.cos(p)], -1)
    return 0.5 + 0.4 * d


def _pixel_ray(px, py, fov_y=40.0):
    """Unit view ray through pixel centre (px, py) of the camera of _ball_scene."""
    k = np.tan(np.radians(fov_y) / 2)
    x = (2 * (px + 0.5) / SIZE - 1) * k
    y = (1 - 2 * (py + 0.5) / SIZE) * k
    r = np.array([x, y, -1.0])
    return r / np.linalg.norm(r)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_mirror_sphere_reflects_the_environment(backend):
    env = Environment.from_array(_direction_image())
    scene, cam = _ball_scene(env, shading="pbr", color=(1, 1, 1), metallic=1.0, roughness=0.0)
    scene.sky = "environment"
    f = Renderer(scene, cam, (SIZE, SIZE), backend=backend).render()
    eye = np.array([0.0, 0.0, 4.0])
    for px, py in ((40, 24), (26, 38), (32, 20)):
        d = _pixel_ray(px, py)
        # the ray meets the unit sphere at t: |eye + t d| = 1 (the nearer root)
        bq = eye @ d
        t = -bq - np.sqrt(bq * bq - (eye @ eye - 1))
        n = eye + t * d
        r = d - 2 * (d @ n) * n  # the reflected direction
        want = np.round(255 * _encode(0.5 + 0.4 * r)).astype(int)
        got = f.color[py, px, :3].astype(int)
        # the mesh's interpolated normals are within ~0.2 degrees of the sphere's
        assert np.abs(got - want).max() <= 3, ((px, py), got, want)
    # the sky: the environment along the corner pixel's ray
    want = np.round(255 * _encode(0.5 + 0.4 * _pixel_ray(0, 0))).astype(int)
    assert np.abs(f.color[0, 0, :3].astype(int) - want).max() <= 2


def _encode(lin):
    from engine.scene.colorspace import linear_to_srgb

    return linear_to_srgb(np.clip(lin, 0, 1))


# ------------------------------------------------------------- the neutral default
def test_headlight_only_without_lights_and_environment():
    scene, cam = _ball_scene(None, shading="pbr")
    ambient, directional, _ = scene_lights(scene, cam, np.zeros(3))
    assert len(directional) == 1 and np.allclose(directional[0][1], DEFAULT_HEADLIGHT)
    scene.environment = Environment("grey")
    ambient, directional, _ = scene_lights(scene, cam, np.zeros(3))
    assert directional == [] and (ambient == 0).all()
    scene.add(DirectionalLight(intensity=2.0))
    _, directional, _ = scene_lights(scene, cam, np.zeros(3))
    assert len(directional) == 1 and np.allclose(directional[0][1], 2.0)


def test_intensity_scales_the_light():
    scene, cam = _ball_scene(Environment("white", intensity=0.25), shading="pbr",
                             color=(1, 1, 1), metallic=0.0, roughness=1.0)
    f = Renderer(scene, cam, (SIZE, SIZE), backend="numpy").render()
    lin = srgb_to_linear(f.color[SIZE // 2, SIZE // 2, 0] / 255.0)
    a, b = _split_sum_integral(0.9999, 1.0)
    assert abs(lin - 0.25 * (1 + 0.04 * a + b)) < 0.005


# ------------------------------------------------------------------- bad inputs
def test_bad_environment_values():
    with pytest.raises(ValueError, match="environment color"):
        Environment("no-such-colour")
    for bad in (-1.0, float("nan"), "x"):
        with pytest.raises(ValueError, match="environment intensity"):
            Environment("white", intensity=bad)
    with pytest.raises(ValueError, match=r"\(H, W, 3\)"):
        Environment.from_array(np.ones((4, 8)))
    with pytest.raises(ValueError, match="finite and >= 0"):
        Environment.from_array(np.full((4, 8, 3), np.nan))
    with pytest.raises(ValueError, match="overflows float32"):
        Environment("white", intensity=1e39)
    with pytest.raises(ValueError, match="overflows float32"):
        Environment.from_array(np.full((4, 8, 3), 1e300))
    with pytest.raises(TypeError, match="Scene.environment"):
        Scene(environment="white")
    with pytest.raises(TypeError, match="Scene.sky"):
        Scene(sky="sunset")


def test_bad_environment_files(tmp_path, monkeypatch):
    with pytest.raises(FileNotFoundError, match="missing.png"):
        Environment.from_file(tmp_path / "missing.png")
    fake = tmp_path / "fake.png"
    fake.write_text("not an image")
    with pytest.raises(ValueError, match="fake.png: not a readable image"):
        Environment.from_file(fake)
    exr = tmp_path / "sky.exr"
    exr.write_bytes(b"\x76\x2f\x31\x01")
    with pytest.raises(ValueError, match="sky.exr: unknown type '.exr'"):
        Environment.from_file(exr)
    # a round trip of linear radiance above 1 through the reader (a plain dependency)
    import cv2

    hdr = tmp_path / "sky.hdr"
    img = _direction_image(16, 8).astype(np.float32) * 3
    cv2.imwrite(str(hdr), img[:, :, ::-1])
    env = Environment.from_file(hdr)
    # RGBE: 8-bit mantissas under one exponent per texel, a step of 1/64 below 4
    assert np.abs(env.radiance - img).max() <= 1 / 64
    # a broken install without the reader: the error names the package
    monkeypatch.setitem(sys.modules, "cv2", None)
    with pytest.raises(ValueError, match="sky.hdr: reading Radiance .hdr needs "
                                         "opencv-python-headless"):
        Environment.from_file(hdr)


def test_sky_environment_needs_an_environment():
    scene, cam = _ball_scene(None, shading="pbr")
    scene.sky = "environment"
    for backend in ("numpy", "numba"):
        with pytest.raises(ValueError, match="Scene.environment is None"):
            Renderer(scene, cam, (16, 16), backend=backend).render()


def test_png_environment_is_decoded_to_linear(tmp_path):
    from PIL import Image

    path = tmp_path / "env.png"
    Image.new("RGB", (8, 4), (188, 188, 188)).save(path)
    env = Environment.from_file(path, intensity=2.0)
    assert np.allclose(env.radiance, 2 * srgb_to_linear(188 / 255), atol=1e-6)
    assert not env.radiance.flags.writeable


_MAIN = "import sys; from engine.cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.mark.parametrize("value, message", [
    ("blurple", "argument --environment: must be an image file"),
    ("missing.hdr", "missing.hdr: no such file"),
    ("", "argument --environment: is empty"),
    ("{tmp}", "a directory, not a file"),
    ("{tmp}/cut.hdr", "cut.hdr: not a readable Radiance .hdr image"),  # no OpenCV log line
])
def test_cli_bad_environment(tmp_path, value, message):
    import cv2

    cv2.imwrite(str(tmp_path / "whole.hdr"), np.ones((4, 8, 3), np.float32))
    (tmp_path / "cut.hdr").write_bytes((tmp_path / "whole.hdr").read_bytes()[:40])
    r = subprocess.run([sys.executable, "-c", _MAIN, "render", "demo", "--size", "32x32",
                        "-o", str(tmp_path / "x.png"), "--environment",
                        value.format(tmp=tmp_path)],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_cli_environment_renders(tmp_path):
    from PIL import Image

    out = tmp_path / "lit.png"
    Image.fromarray((np.clip(_direction_image(), 0, 1) * 255).astype(np.uint8)).save(
        tmp_path / "env.png")
    r = subprocess.run([sys.executable, "-c", _MAIN, "render", "demo", "--size", "48x32",
                        "-o", str(out), "--environment", str(tmp_path / "env.png"),
                        "--sky", "environment", "--msaa", "1"],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    img = np.asarray(Image.open(out))
    assert img[0, 0, 1] > img[-1, 0, 1]  # the sky: brighter green looking up than down
