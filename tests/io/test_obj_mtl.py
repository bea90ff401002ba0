"""OBJ + MTL as exporters write them: texture paths with backslashes, drive letters and
other case, map_Kd options, the Kd/Ks/Ns/d/Tr/illum mapping, missing files as one
warning line, and the reference models' materials."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from PIL import Image

from engine.io import load

QUAD_OBJ = ("mtllib {mtl}\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n"
            "vt 0.25 0.5\nvt 0.25 0.5\nvt 0.25 0.5\nvt 0.25 0.5\n"
            "usemtl {name}\nf 1/1 2/2 3/3 4/4\n")


def _jpeg(path, rgb, size=(16, 8)):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, rgb).save(path, "JPEG", quality=95)


def _red_green(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.array([[[255, 0, 0], [0, 255, 0]]], np.uint8)).save(path, "PNG")


def _model(tmp_path, mtl_text, name="wood", caplog=None):
    (tmp_path / "m.mtl").write_text(mtl_text)
    obj = tmp_path / "m.obj"
    obj.write_text(QUAD_OBJ.format(mtl="m.mtl", name=name))
    if caplog is None:
        return load(obj)
    with caplog.at_level(logging.WARNING, logger="engine"):
        return load(obj)


@pytest.mark.parametrize("map_kd,disk", [
    (".\\textures\\wood.jpg", "textures/wood.jpg"),              # Windows exporters
    ("C:\\Users\\bob\\Desktop\\wood.jpg", "textures/wood.jpg"),  # an absolute path: by name
    ("Textures/WOOD.JPG", "textures/wood.jpg"),                   # another case
    ('"textures/wood.jpg"', "textures/wood.jpg"),                 # quoted
    ("wood grain.jpg", "wood grain.jpg"),                         # a space in the name
])
def test_texture_paths_as_exporters_write_them(tmp_path, map_kd, disk, caplog):
    _jpeg(tmp_path / disk, (0, 200, 0))
    model = _model(tmp_path, f"newmtl wood\nKd 0.2 0.2 0.2\nmap_Kd {map_kd}\n", caplog=caplog)
    mesh = model.geometry
    assert mesh.material.texture is not None
    # the texture replaces Kd (module doc of engine.io.mtl); the vertex colour samples it
    assert mesh.material.color == (1.0, 1.0, 1.0, 1.0)
    np.testing.assert_allclose(mesh.colors[0, :3], [0, 200, 0], atol=3)
    assert not caplog.records and model.warnings == []


def test_missing_texture_is_one_warning_and_kd_is_drawn(tmp_path, caplog):
    model = _model(tmp_path, "newmtl wood\nKd 0.5 0.25 1\nmap_Kd .\\tex\\gone.png\n",
                   caplog=caplog)
    mesh = model.geometry
    assert mesh.material.texture is None
    np.testing.assert_allclose(mesh.colors_float[0], [0.5, 0.25, 1, 1], atol=1 / 255)
    assert [r.message for r in caplog.records] == [
        (f"{tmp_path / 'm.obj'}: left out: texture '.\\\\tex\\\\gone.png' of material 'wood' "
        "(not found; drawn in its Kd colour)")]


def test_missing_mtl_is_one_warning_and_the_default_material(tmp_path, caplog):
    obj = tmp_path / "m.obj"
    obj.write_text(QUAD_OBJ.format(mtl="nowhere.mtl", name="wood"))
    with caplog.at_level(logging.WARNING, logger="engine"):
        mesh = load(obj).geometry
    assert mesh.colors is None and mesh.material.color == (1.0, 1.0, 1.0, 1.0)
    assert [r.message for r in caplog.records] == [
        f"{obj}: left out: material library 'nowhere.mtl' (not found; default material)"]


def test_map_kd_scale_offset_and_clamp(tmp_path, caplog):
    _red_green(tmp_path / "rg.png")
    # vt 0.25 -> 0.25 * 2 + 0.75 = 1.25 in u: green under clamp, red (0.25) under repeat
    model = _model(tmp_path, "newmtl wood\nmap_Kd -s 2 1 1 -o 0.75 0 0 -clamp on -bm 0.3 "
                   "rg.png\n", caplog=caplog)
    mesh = model.geometry
    np.testing.assert_allclose(mesh.uvs[:, 0], 1.25)
    np.testing.assert_allclose(mesh.uvs[:, 1], 0.5)  # (0.5 * 1 + 0) flipped: 1 - 0.5
    s = mesh.material.texture.sampler
    assert (s.wrap_s, s.wrap_t) == ("clamp", "clamp")
    assert mesh.colors[0].tolist() == [0, 255, 0, 255]
    assert model.warnings == [f"{tmp_path / 'm.obj'}: not drawn: map_Kd option -bm (wood)"]
    model = _model(tmp_path, "newmtl wood\nmap_Kd -s 2 1 1 -o 0.75 0 0 rg.png\n")
    assert model.geometry.material.texture.sampler.wrap_s == "repeat"
    assert model.geometry.colors[0].tolist() == [255, 0, 0, 255]


@pytest.mark.parametrize("lines,specular,shininess,alpha,shading", [
    ("Ks 0.5 0.25 0\nNs 64\n", 0.5, 64.0, 1.0, "lit"),
    ("Ks 0.9 0.9 0.9\nNs 0\n", 0.0, 1.0, 1.0, "lit"),        # Ns 0: no highlight
    ("Ks 1 1 1\nNs 20000\nd 0.25\n", 1.0, 10000.0, 0.25, "lit"),
    ("Tr 0.75\n", 0.0, 1.0, 0.25, "lit"),                     # Tr = 1 - d
    ("Tr 1.0\n", 0.0, 1.0, 1.0, "lit"),                       # MeshLab's opaque Tr 1
    ("d 0.5\nTr 0.9\n", 0.0, 1.0, 0.5, "lit"),                # d wins
    ("Ks 1 1 1\nNs 50\nillum 1\n", 0.0, 50.0, 1.0, "lit"),    # illum 1: no highlight
    ("illum 0\n", 0.0, 1.0, 1.0, "unlit"),
])
def test_mtl_statements_map_onto_the_material(tmp_path, lines, specular, shininess, alpha,
                                               shading):
    mesh = _model(tmp_path, "newmtl wood\nKd 1 0 0\nKa 0.2 0.2 0.2\n" + lines).geometry
    m = mesh.material
    assert (m.specular, m.shininess, m.shading) == (specular, shininess, shading)
    np.testing.assert_allclose(mesh.colors_float[0], [1, 0, 0, alpha], atol=1 / 255)


def test_reference_obj_textures_load(ref_assets, caplog):
    with caplog.at_level(logging.WARNING, logger="engine"):
        fuze = load(ref_assets / "textured/fuze/fuze.obj")  # 'fuze uv.jpg', tabs in newmtl
        table = load(ref_assets / "textured/table-cube/table.obj")
        bunny = load(ref_assets / "textured/bunny10k-textured/bunny10k_textured.obj")
    for model, size in ((fuze, (1024, 1024)), (table, (1024, 768)), (bunny, (512, 512))):
        mesh = next(n.geometry for n in model.traverse() if n.geometry is not None)
        assert mesh.material.texture is not None and mesh.material.texture.size == size
    # fuze: Ks 1 with Ns 0 (MeshLab) draws no highlight; Tr 1.0 is read as opaque
    fm = next(n.geometry for n in fuze.traverse() if n.geometry is not None)
    assert fm.material.specular == 0.0 and fm.material.color[3] == 1.0
    # table.mtl's map_Ka names a missing table.tga: an ambient map is not drawn anyway
    assert [r.message for r in caplog.records] == [
        f"{ref_assets / 'textured/table-cube/table.obj'}: not drawn: map_Ka (table)"]


def test_reference_obj_materials_keep_kd(ref_assets):
    model = load(ref_assets / "obj-awkward/regr01.obj")  # 12 materials from 3ds Max
    kd = {tuple(n.geometry.colors[0, :3]) for n in model.traverse() if n.geometry is not None}
    assert (204, 153, 102) in kd  # "Door": Kd 0.8 0.6 0.4
    rabbit = load(ref_assets / "obj-awkward/rabbit.obj")
    mesh = next(n.geometry for n in rabbit.traverse() if n.geometry is not None)
    assert mesh.colors[0].tolist() == [255, 0, 255, 255]  # Kd 1 0 1
    assert mesh.material.specular == 1.0 and mesh.material.shininess == 100.0
