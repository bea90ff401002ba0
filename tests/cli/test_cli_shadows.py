"""frustum render / render-many / example --shadows: a glTF whose only light is a
KHR_lights_punctual directional light at 45 degrees over a ground quad and a floating
square "roof" (no ambient light in the file): with --shadows the ground under the roof's
shadow receives nothing (black), without it no ground pixel is black; a file without
directional or spot lights gets a one-line warning."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from engine import Node
from engine.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "io"))
from gltf_files import FLOAT, USHORT, Gltf

SIZE = "160x120"


def _quad(g, half, y, material):
    pos = [[-half, y, -half], [half, y, -half], [half, y, half], [-half, y, half]]
    # counter-clockwise seen from above: facing the light and the camera
    g.mesh({"POSITION": g.accessor(pos, FLOAT), "NORMAL": g.accessor([[0, 1, 0]] * 4, FLOAT)},
           indices=g.accessor(np.array([0, 2, 1, 0, 3, 2]), USHORT), material=material)


def _roof_scene(path, light=True):
    g = Gltf()
    mat = g.material(pbrMetallicRoughness={"baseColorFactor": [0.8, 0.8, 0.8, 1],
                                           "metallicFactor": 0.0, "roughnessFactor": 1.0})
    _quad(g, 2.0, 0.0, mat)  # the ground
    _quad(g, 0.5, 1.0, mat)  # the roof: its shadow falls 1 along -x, on x in [-1.5, -0.5]
    if light:
        aim = Node("aim", position=(1.0, 1.0, 0.0)).look_at((0.0, 0.0, 0.0))  # rays (-1, -1, 0)
        g.doc["extensionsUsed"] = ["KHR_lights_punctual"]
        g.doc["extensions"] = {"KHR_lights_punctual": {"lights": [
            {"type": "directional", "intensity": 3.0}]}}
        g.node(rotation=[float(v) for v in aim.rotation],
               extensions={"KHR_lights_punctual": {"light": 0}})
    return g.write_gltf(path)


def _black_ground(png):
    """(RGB (H, W, 3) int, the count of drawn pixels that are black): with a transparent
    background the drawn pixels are the opaque ones."""
    rgba = np.asarray(Image.open(png)).astype(int)
    drawn = rgba[..., 3] == 255
    return rgba[..., :3], int((drawn & (rgba[..., :3].sum(axis=-1) == 0)).sum())


def test_render_shadows_darken_the_ground_under_the_roof(tmp_path):
    src = _roof_scene(tmp_path / "roof.gltf")
    args = ["render", str(src), "--size", SIZE, "--camera", "0,60", "--background",
            "transparent", "--msaa", "1"]
    assert main([*args, "--out", str(tmp_path / "plain.png")]) == 0
    assert main([*args, "--out", str(tmp_path / "shadows.png"), "--shadows"]) == 0
    plain, black_plain = _black_ground(tmp_path / "plain.png")
    shadowed, black_shadowed = _black_ground(tmp_path / "shadows.png")
    # the only light hidden: those ground pixels are black (the 1 x 1 shadow is about a
    # sixteenth of the 4 x 4 ground's 3,800 pixels here); nothing gets brighter
    assert black_plain == 0 and black_shadowed > 150
    assert (shadowed <= plain).all()


def test_render_many_takes_the_shadows(tmp_path):
    _roof_scene(tmp_path / "roof.gltf")
    for flags, name in (([], "plain"), (["--shadows"], "shadows")):
        assert main(["render-many", str(tmp_path / "*.gltf"), "--out", str(tmp_path / name),
                     "--size", SIZE, "--camera", "0,60", "--background", "transparent",
                     "--msaa", "1", *flags]) == 0
    _, black_plain = _black_ground(tmp_path / "plain" / "roof.png")
    _, black_shadowed = _black_ground(tmp_path / "shadows" / "roof.png")
    assert black_plain == 0 and black_shadowed > 150


@pytest.mark.parametrize("flags, lit_by", [
    ([], "the default headlight casts no shadows"),
    (["--environment", "white"], "the environment casts no shadows"),  # no headlight then
])
def test_shadows_without_a_light_to_cast_them_warn(tmp_path, capsys, flags, lit_by):
    src = _roof_scene(tmp_path / "dark.gltf", light=False)
    assert main(["render", str(src), "--size", SIZE, "--out", str(tmp_path / "x.png"),
                 "--shadows", *flags]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert any("--shadows" in line and "no directional or spot light" in line
               and lit_by in line for line in err), err


def test_example_runner_shadows_turn_on_the_apps_lights(tmp_path):
    # the option every example shares: the App's directional and spot lights get maps,
    # and its headless frames show the roof's shadow as the renderer's do
    from engine import DirectionalLight, PerspectiveCamera, Scene, SpotLight
    from engine.cli.examples import example_parser, run_example
    from engine.game.app import App
    from engine.io import load

    scene = Scene(background="transparent")
    scene.add(load(_roof_scene(tmp_path / "roof.gltf")))
    cam = scene.add(PerspectiveCamera(position=(0, 4, 3))).look_at((0, 0, 0))
    spot = scene.add(SpotLight(intensity=0.0, position=(0, 3, 0)))
    app = App(scene, cam, (160, 120), backend="numpy")
    out = tmp_path / "app.png"
    args = example_parser("test").parse_args(["--headless", "--frames", "1", "--shadows",
                                              "--out", str(out)])
    assert run_example(app, args) == 0
    sun = next(n for n in scene.traverse() if isinstance(n, DirectionalLight))
    assert sun.shadows and spot.shadows
    _, black = _black_ground(out)
    assert black > 150
