"""engine.scene.pixels: a 16-bit grey image is scaled to 8 bits, not clipped at 255 as
Pillow's convert does (a 16-bit grey PNG environment read as white, found by a
new-user pass), for environments and textures alike."""

import io

import numpy as np
import pytest
from PIL import Image

from engine.scene.pixels import pixels

# 30000 of 65535 is 116.73 of 255: 117
GREY16 = np.full((4, 8), 30000, np.uint16)


def _png16(path=None):
    img = Image.fromarray(GREY16)
    buf = io.BytesIO()
    img.save(path or buf, "PNG")
    return None if path else buf.getvalue()


@pytest.mark.parametrize("mode, shape", [("L", (4, 8)), ("RGB", (4, 8, 3)), ("RGBA", (4, 8, 4))])
def test_sixteen_bit_grey_is_scaled(mode, shape):
    with Image.open(io.BytesIO(_png16())) as img:
        img.load()
        assert img.mode in ("I;16", "I")  # what Pillow gives a 16-bit grey PNG
        got = pixels(img, mode)
    assert got.shape == shape and got.dtype == np.uint8
    want = np.full(shape, 117, np.uint8)
    if mode == "RGBA":
        want[..., 3] = 255
    np.testing.assert_array_equal(got, want)


def test_eight_bit_images_are_convert_unchanged():
    a = np.arange(32, dtype=np.uint8).reshape(4, 8)
    np.testing.assert_array_equal(pixels(Image.fromarray(a), "RGB")[..., 1], a)
    small = Image.fromarray(a.astype(np.int32), "I")  # 32-bit integers of 8-bit values
    np.testing.assert_array_equal(pixels(small, "L"), a)


def test_a_sixteen_bit_environment_and_texture_are_grey(tmp_path):
    from engine.io.textures import decode_image
    from engine.scene.colorspace import srgb_to_linear
    from engine.scene.environment import Environment

    path = tmp_path / "grey16.png"
    _png16(path)
    env = Environment.from_file(path)
    np.testing.assert_allclose(env.radiance, srgb_to_linear(117 / 255), rtol=1e-6)
    rgba = decode_image(path.read_bytes())
    np.testing.assert_array_equal(rgba[..., :3], 117)


def test_a_truncated_hdr_is_one_error_and_nothing_on_stderr(tmp_path, capfd):
    import cv2

    from engine.scene.environment import Environment

    good = tmp_path / "good.hdr"
    cv2.imwrite(str(good), np.ones((4, 8, 3), np.float32))
    bad = tmp_path / "bad.hdr"
    bad.write_bytes(good.read_bytes()[:40])
    with pytest.raises(ValueError, match="bad.hdr: not a readable Radiance .hdr image"):
        Environment.from_file(bad)
    assert capfd.readouterr().err == ""  # OpenCV's own log line is silenced
