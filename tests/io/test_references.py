"""The files a model names besides itself (engine.io.references): one rule in every
format. A named pipe is refused without blocking; a reference that leads outside the
model's folder (by '..', an absolute path or a symbolic link) is refused unless
``root=`` / ``--root`` widens the folder; inside it the file is read."""

from __future__ import annotations

import json
import logging
import os
import threading

import numpy as np
import pytest

from engine.cli import main
from engine.errors import LoadError
from engine.io import load
from engine.io.references import References, RefusedFile
from tests.io.gltf_files import RED_GREEN, Gltf, geometries, png_bytes

GREEN_PNG = png_bytes([[[0, 255, 0]]])
TRIANGLE = [[0, 0, 0], [1, 0, 0], [0, 1, 0]]


def _load_within(seconds, *args, **kwargs):
    """``load(*args, **kwargs)`` in a thread that must finish within ``seconds``: the
    model, or the exception it raised. If it is still running (blocked in open() on a
    FIFO), a writer is opened on every FIFO under the test folder to free it, and the
    test fails."""
    out = {}

    def run():
        try:
            out["model"] = load(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - handed to the test
            out["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        for fifo in _fifos:
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        t.join(5)
        pytest.fail(f"load({args[0]}) still running after {seconds} s")
    if "error" in out:
        raise out["error"]
    return out["model"]


_fifos: list = []


def _fifo(path):
    os.mkfifo(path)
    _fifos.append(path)
    return path


def _textured_gltf(tmp_path, image_uri, bin_name=None):
    g = Gltf()
    mat = g.material(pbrMetallicRoughness={"baseColorTexture": {"index": 0}})
    g.doc["images"] = [{"uri": image_uri}]
    g.doc["textures"] = [{"source": 0}]
    g.mesh({"POSITION": g.accessor(TRIANGLE), "TEXCOORD_0": g.accessor([[0.5, 0.5]] * 3)},
           material=mat)
    return g.write_gltf(tmp_path / "t.gltf", bin_name=bin_name)


QUAD_OBJ = ("mtllib {mtl}\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n"
            "vt 0.5 0.5\nvt 0.5 0.5\nvt 0.5 0.5\nvt 0.5 0.5\n"
            "usemtl wood\nf 1/1 2/2 3/3 4/4\n")
MTL = "newmtl wood\nKd 0.5 0.25 1\nmap_Kd {map}\n"
KD = [128, 64, 255]  # Kd 0.5 0.25 1 as uint8


def _obj(folder, mtl="m.mtl", map_kd="tex.png", write_mtl=True):
    folder.mkdir(parents=True, exist_ok=True)
    if write_mtl:
        (folder / "m.mtl").write_text(MTL.format(map=map_kd))
    obj = folder / "m.obj"
    obj.write_text(QUAD_OBJ.format(mtl=mtl))
    return obj


PLY = ("ply\nformat ascii 1.0\ncomment TextureFile {tex}\nelement vertex 3\n"
       "property float x\nproperty float y\nproperty float z\nproperty float s\n"
       "property float t\nelement face 1\nproperty list uchar int vertex_indices\n"
       "end_header\n0 0 0 0.5 0.5\n1 0 0 0.5 0.5\n0 1 0 0.5 0.5\n3 0 1 2\n")


def _ply(folder, tex):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "p.ply"
    path.write_text(PLY.format(tex=tex))
    return path


def _warnings(caplog):
    return [r.getMessage() for r in caplog.records]


# ------------------------------------------------------------------- named pipes
def test_a_fifo_as_gltf_buffer_is_refused_at_once(tmp_path):
    g = Gltf()
    g.mesh({"POSITION": g.accessor(TRIANGLE)})
    f = tmp_path / "b.gltf"
    f.write_text(json.dumps(g.document("data.bin")))
    _fifo(tmp_path / "data.bin")
    with pytest.raises(LoadError) as e:
        _load_within(2, f)
    assert str(e.value) == (f"{f}: buffers[0].uri: 'data.bin' is a named pipe (FIFO), not a "
                            "regular file")


def test_a_fifo_as_gltf_image_is_refused_at_once(tmp_path):
    f = _textured_gltf(tmp_path, "tex.png")
    _fifo(tmp_path / "tex.png")
    with pytest.raises(LoadError) as e:
        _load_within(2, f)
    assert str(e.value) == (f"{f}: images[0].uri: 'tex.png' is a named pipe (FIFO), not a "
                            "regular file")


def test_a_fifo_as_ply_texture_is_left_out_at_once(tmp_path, caplog):
    ply = _ply(tmp_path, "tex.png")
    _fifo(tmp_path / "tex.png")
    with caplog.at_level(logging.WARNING, logger="engine"):
        model = _load_within(2, ply)
    assert model.geometry.material.texture is None
    assert model.warnings == _warnings(caplog) == [
        (f"{ply}: left out: texture file 'tex.png' (is a named pipe (FIFO), not a regular "
        "file; drawn without it)")]


def test_a_fifo_as_obj_library_or_map_is_left_out_at_once(tmp_path):
    obj = _obj(tmp_path / "a", mtl="lib.mtl", write_mtl=False)
    _fifo(tmp_path / "a" / "lib.mtl")
    model = _load_within(2, obj)
    assert model.warnings == [(f"{obj}: left out: material library 'lib.mtl' (lib.mtl is a "
                              "named pipe (FIFO), not a regular file; default material)")]
    obj = _obj(tmp_path / "b")
    _fifo(tmp_path / "b" / "tex.png")
    model = _load_within(2, obj)
    assert model.geometry.material.texture is None
    assert model.geometry.colors[0, :3].tolist() == KD
    assert model.warnings == [(f"{obj}: left out: texture 'tex.png' of material 'wood' "
                              "(tex.png is a named pipe (FIFO), not a regular file; drawn in "
                              "its Kd colour)")]


def test_a_fifo_as_the_model_itself_is_refused(tmp_path):
    f = _fifo(tmp_path / "m.obj")
    with pytest.raises(LoadError) as e:
        _load_within(2, f)
    assert str(e.value) == f"{f}: not a file"


# ------------------------------------------------------------- outside the folder
def test_obj_map_and_mtllib_outside_the_folder_are_refused(tmp_path):
    """The inputs of issue 24 item 11: `map_Kd ../outside/secret.png` and
    `mtllib ../outside/lib.mtl`."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.png").write_bytes(GREEN_PNG)
    (tmp_path / "outside" / "lib.mtl").write_text(MTL.format(map="secret.png"))
    obj = _obj(tmp_path / "model", map_kd="../outside/secret.png")
    model = load(obj)
    assert model.geometry.material.texture is None
    assert model.geometry.colors[0, :3].tolist() == KD  # the Kd colour, not the secret
    assert model.warnings == [
        (f"{obj}: left out: texture '../outside/secret.png' of material 'wood' (secret.png is "
        "outside the model's folder (root= or --root widens what it may read); drawn in its "
        "Kd colour)")]
    obj2 = _obj(tmp_path / "model2", mtl="../outside/lib.mtl", write_mtl=False)
    model = load(obj2)
    assert model.geometry.colors is None  # the default material: no Kd from the library
    assert model.warnings == [
        (f"{obj2}: left out: material library '../outside/lib.mtl' (lib.mtl is outside the "
        "model's folder (root= or --root widens what it may read); default material)")]


def test_a_wider_root_lets_the_same_references_be_read(tmp_path):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.png").write_bytes(GREEN_PNG)
    (tmp_path / "outside" / "lib.mtl").write_text(MTL.format(map="secret.png"))
    obj = _obj(tmp_path / "model", map_kd="../outside/secret.png")
    model = load(obj, root=tmp_path)
    assert model.geometry.material.texture is not None and model.warnings == []
    assert model.geometry.colors[0, :3].tolist() == [0, 255, 0]
    obj2 = _obj(tmp_path / "model2", mtl="../outside/lib.mtl", write_mtl=False)
    model = load(obj2, root=tmp_path)  # the library, and its map next to it
    assert model.warnings == [] and model.geometry.colors[0, :3].tolist() == [0, 255, 0]


def test_gltf_and_ply_references_follow_the_same_rule(tmp_path):
    (tmp_path / "textures").mkdir()
    (tmp_path / "textures" / "rg.png").write_bytes(RED_GREEN)
    (tmp_path / "models").mkdir()
    f = _textured_gltf(tmp_path / "models", "../textures/rg.png")
    with pytest.raises(LoadError) as e:
        load(f)
    assert str(e.value) == (f"{f}: images[0].uri: '../textures/rg.png' is outside the "
                            "model's folder (root= or --root widens what it may read)")
    # u = 0.5 of a 2 x 1 red | green texture with linear filtering: the texel centres
    # are at u = 0.25 and 0.75, so 0.5 is the sRGB encoding of the linear midpoint
    mid = round(255 * ((0.5 ** (1 / 2.4)) * 1.055 - 0.055))
    assert geometries(load(f, root=tmp_path))[0].colors[0, :3].tolist() == [mid, mid, 0]
    ply = _ply(tmp_path / "models", "../textures/rg.png")
    model = load(ply)
    assert model.geometry.material.texture is None
    assert model.warnings == [(f"{ply}: left out: texture file '../textures/rg.png' (is "
                              "outside the model's folder (root= or --root widens what it may "
                              "read); drawn without it)")]
    model = load(ply, root=tmp_path)
    assert model.warnings == []
    np.testing.assert_array_equal(model.geometry.material.texture.image[0, :, :3],
                                  [[255, 0, 0], [0, 255, 0]])


def test_absolute_paths_and_links_out_of_the_folder_are_refused(tmp_path):
    (tmp_path / "outside").mkdir()
    secret = tmp_path / "outside" / "secret.png"
    secret.write_bytes(GREEN_PNG)
    model_dir = tmp_path / "model"
    ply = _ply(model_dir, str(secret))  # trimesh joins the folder and an absolute name
    assert "is outside the model's folder" in load(ply).warnings[0]
    os.symlink(secret, model_dir / "tex.png")  # a link inside that leads outside
    obj = _obj(model_dir, map_kd="tex.png")
    model = load(obj)
    assert model.geometry.colors[0, :3].tolist() == KD
    assert "(tex.png is outside the model's folder" in model.warnings[0]
    # a link that stays inside the folder is followed
    (model_dir / "real.png").write_bytes(GREEN_PNG)
    os.remove(model_dir / "tex.png")
    os.symlink(model_dir / "real.png", model_dir / "tex.png")
    assert load(obj).geometry.colors[0, :3].tolist() == [0, 255, 0]


def test_root_must_contain_the_model(tmp_path):
    obj = _obj(tmp_path / "model")
    (tmp_path / "elsewhere").mkdir()
    with pytest.raises(ValueError, match="does not contain the model file"):
        load(obj, root=tmp_path / "elsewhere")
    with pytest.raises(ValueError, match="root must be an existing folder"):
        load(obj, root=tmp_path / "nope")
    refs = References(obj, tmp_path)
    assert refs.inside(tmp_path / "x" / "y.png") and not refs.inside(tmp_path.parent / "z")
    with pytest.raises(RefusedFile, match="^is missing$"):
        refs.read(tmp_path / "gone.png")
    with pytest.raises(RefusedFile, match="^is a folder, not a regular file$"):
        refs.read(tmp_path / "model")


def test_cli_root_option(tmp_path, capsys, caplog):
    from PIL import Image

    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.png").write_bytes(GREEN_PNG)
    obj = _obj(tmp_path / "model", map_kd="../outside/secret.png")
    out = tmp_path / "a.png"
    with caplog.at_level(logging.WARNING, logger="engine"):
        assert main(["render", str(obj), "--out", str(out), "--size", "64x48",
                     "--root", str(tmp_path)]) == 0
        assert _warnings(caplog) == []
        r, g, b = Image.open(out).convert("RGB").getpixel((32, 24))
        assert g > 2 * max(r, b)  # the green texture, lit
        assert main(["render", str(obj), "--out", str(out), "--size", "64x48"]) == 0
        assert "secret.png is outside the model's folder" in _warnings(caplog)[0]
        r, g, b = Image.open(out).convert("RGB").getpixel((32, 24))
        assert b > g and r > g  # Kd (0.5, 0.25, 1), lit
    assert main(["render", str(obj), "--out", str(out), "--root",
                 str(tmp_path / "outside")]) == 2
    assert capsys.readouterr().err == (
        f"frustum: error: root {str(tmp_path / 'outside')!r} does not contain the model "
        f"file {str(obj)!r}\n")
    with pytest.raises(SystemExit) as e:
        main(["render", str(obj), "--out", str(out), "--root", str(tmp_path / "no")])
    assert e.value.code == 2
    assert "--root: expected an existing folder" in capsys.readouterr().err


def test_render_many_root_option(tmp_path, caplog):
    """render-many hands --root to every file's load (ManySpec.root)."""
    from PIL import Image

    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.png").write_bytes(GREEN_PNG)
    obj = _obj(tmp_path / "model", map_kd="../outside/secret.png")
    for root, out in ((str(tmp_path), tmp_path / "wide"), (None, tmp_path / "own")):
        args = ["render-many", str(obj), "--out", str(out), "--size", "64x48"]
        assert main(args + (["--root", root] if root else [])) == 0
        (png,) = out.rglob("*.png")
        r, g, b = Image.open(png).convert("RGB").getpixel((32, 24))
        assert (g > 2 * max(r, b)) == (root is not None)  # green texture, or Kd
