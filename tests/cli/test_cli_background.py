"""frustum render with alpha: OPAQUE and MASK materials whose texels have alpha 0 are
opaque in the PNG (glTF 2.0 section 3.9.4), ``--background transparent`` leaves the empty
pixels alpha 0 in a PNG and composites them over black in JPEG and GIF, and bad values
are one line + exit 2."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from engine.cli import main
from engine.io.image import composite, save_image

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "io"))
from gltf_files import FLOAT, USHORT, Gltf, png_bytes

SIZE = "96x64"
QUAD = [[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]]


def _quad_gltf(path, **material):
    """An unlit quad whose one texel is (200, 0, 0, 0), with ``material`` fields."""
    g = Gltf()
    texel = np.array([[[200, 0, 0, 0]]], np.uint8)
    tex = g.image(png_bytes(texel), magFilter=9728, minFilter=9728)
    mat = g.material(pbrMetallicRoughness={"baseColorTexture": {"index": tex},
                                           "baseColorFactor": [1, 1, 1, 0.3]},
                     extensions={"KHR_materials_unlit": {}}, **material)
    g.doc["extensionsUsed"] = ["KHR_materials_unlit"]
    g.mesh({"POSITION": g.accessor(QUAD, FLOAT),
            "TEXCOORD_0": g.accessor([[0, 1], [1, 1], [1, 0], [0, 0]], FLOAT)},
           indices=g.accessor(np.array([0, 1, 2, 0, 2, 3]), USHORT), material=mat)
    return g.write_gltf(path)


def _render(tmp_path, source, out, *flags):
    out = tmp_path / out
    assert main(["render", str(source), "--out", str(out), "--size", SIZE,
                 "--backend", "numba", "--msaa", "1", *flags]) == 0  # exact pixels
    return out


@pytest.mark.parametrize("material", [{}, {"alphaMode": "OPAQUE"},
                                      {"alphaMode": "MASK", "alphaCutoff": 0.0}])
def test_opaque_and_mask_materials_are_opaque_in_the_png(tmp_path, material):
    src = _quad_gltf(tmp_path / "quad.gltf", **material)
    img = np.asarray(Image.open(_render(tmp_path, src, "out.png", "--background", "blue")))
    assert img.shape == (64, 96, 4)
    centre = img[32, 48].tolist()
    assert centre == [200, 0, 0, 255]
    # the whole quad is drawn, alpha 255 (a frame-filling view of it covers the centre)
    drawn = (img[..., :3] != [0, 0, 255]).any(axis=-1)
    assert drawn.sum() > 500 and (img[drawn] == [200, 0, 0, 255]).all()
    assert (img[..., 3] == 255).all()


def test_transparent_background_png_jpeg_and_gif(tmp_path):
    src = _quad_gltf(tmp_path / "quad.gltf")
    png = np.asarray(Image.open(_render(tmp_path, src, "out.png", "--background",
                                        "transparent")))
    assert png[0, 0].tolist() == [0, 0, 0, 0]  # a corner: nothing drawn
    assert png[32, 48].tolist() == [200, 0, 0, 255]
    assert set(np.unique(png[..., 3]).tolist()) == {0, 255}  # no partial coverage yet
    # JPEG has no alpha: composited over black (lossy: within a few levels)
    jpg = np.asarray(Image.open(_render(tmp_path, src, "out.jpg", "--background",
                                        "transparent"))).astype(int)
    assert jpg.shape == (64, 96, 3)
    assert np.abs(jpg[0, 0]).max() <= 3
    assert np.abs(jpg[32, 48] - [200, 0, 0]).max() <= 6
    gif = Image.open(_render(tmp_path, src, "out.gif", "--background", "transparent",
                             "--frames", "2"))
    first = np.asarray(gif.convert("RGB")).astype(int)
    assert first[0, 0].tolist() == [0, 0, 0]
    assert np.abs(first[32, 48] - [200, 0, 0]).max() <= 4



@pytest.mark.parametrize("fmt", ["png", "jpg"])
def test_render_many_takes_a_transparent_background(tmp_path, fmt):
    _quad_gltf(tmp_path / "quad.gltf")
    out = tmp_path / "thumbs"
    assert main(["render-many", str(tmp_path / "*.gltf"), "--out", str(out), "--size", SIZE,
                 "--format", fmt, "--background", "transparent"]) == 0
    img = np.asarray(Image.open(out / f"quad.{fmt}")).astype(int)
    if fmt == "png":
        assert img[0, 0].tolist() == [0, 0, 0, 0] and img[32, 48].tolist() == [200, 0, 0, 255]
    else:  # no alpha: over black, within JPEG's error
        assert np.abs(img[0, 0]).max() <= 3 and np.abs(img[32, 48] - [200, 0, 0]).max() <= 6

def test_composite_is_straight_alpha_over_the_matte(tmp_path):
    a = np.zeros((2, 3, 4), np.uint8)
    a[0, 0] = (200, 100, 0, 128)  # half covered
    a[0, 1] = (10, 20, 30, 255)  # opaque
    a[0, 2] = (255, 255, 255, 0)  # empty
    a[1] = (90, 180, 240, 64)
    out = composite(a, matte=(20, 40, 60)).astype(int)
    for (y, x), rgba in np.ndenumerate(a[..., 0]):
        c, al = a[y, x, :3].astype(float), a[y, x, 3] / 255.0
        want = np.floor(c * al + np.array([20, 40, 60]) * (1 - al) + 0.5)
        assert out[y, x].tolist() == want.astype(int).tolist()
    # through save_image: a flat half-covered image as JPEG over black
    flat = np.full((16, 16, 4), (200, 100, 0, 128), np.uint8)
    back = np.asarray(Image.open(save_image(tmp_path / "half.jpg", flat))).astype(int)
    # 200 * 128 / 255 = 100.4 and 100 * 128 / 255 = 50.2, over black
    assert np.abs(back - [100, 50, 0]).max() <= 2


@pytest.mark.parametrize("flags, message", [
    (["--background", "transparentish"], "expected a colour name"),
    (["--line-color", "transparent"], "expected a colour name"),
])
def test_bad_background_values_are_one_line(tmp_path, capsys, flags, message):
    src = _quad_gltf(tmp_path / "quad.gltf")
    with pytest.raises(SystemExit) as exc:
        main(["render", str(src), "--out", str(tmp_path / "x.png"), *flags])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err
    assert not (tmp_path / "x.png").exists()


def test_blend_material_in_png_over_colour_and_transparent(tmp_path):
    # alphaMode BLEND, unlit red at alpha 0.5 (baseColorFactor, linear): over blue,
    # linear (0.5, 0, 0.5) = sRGB 188; over a transparent background, straight alpha
    # 0.5 (128) with the red itself
    g = Gltf()
    mat = g.material(pbrMetallicRoughness={"baseColorFactor": [1, 0, 0, 0.5]},
                     alphaMode="BLEND", extensions={"KHR_materials_unlit": {}})
    g.doc["extensionsUsed"] = ["KHR_materials_unlit"]
    g.mesh({"POSITION": g.accessor(QUAD, FLOAT)},
           indices=g.accessor(np.array([0, 1, 2, 0, 2, 3]), USHORT), material=mat)
    src = g.write_gltf(tmp_path / "blend.gltf")
    half = round((1.055 * 0.5 ** (1 / 2.4) - 0.055) * 255)
    over_blue = np.asarray(Image.open(_render(tmp_path, src, "blue.png", "--background",
                                              "blue")))
    assert np.abs(over_blue[32, 48].astype(int) - [half, 0, half, 255]).max() <= 1
    assert over_blue[0, 0].tolist() == [0, 0, 255, 255]
    clear = np.asarray(Image.open(_render(tmp_path, src, "clear.png", "--background",
                                          "transparent")))
    assert np.abs(clear[32, 48].astype(int) - [255, 0, 0, 128]).max() <= 1
    assert clear[0, 0].tolist() == [0, 0, 0, 0]
