"""The command line: main job (render the demo headless), errors as one line + exit 2."""

import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from engine.cli import main


def test_render_demo_writes_png(tmp_path, capsys):
    out = tmp_path / "demo.png"
    assert main(["render", "demo", "--out", str(out), "--size", "160x90", "--backend", "numpy"]) == 0
    assert str(out.resolve()) in capsys.readouterr().out
    img = np.asarray(Image.open(out))
    assert img.shape == (90, 160, 4)
    bg = img[0, 0]
    assert (np.any(img != bg, axis=2)).sum() > 500  # the scene drew something


def test_render_camera_option_changes_the_view(tmp_path):
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    main(["render", "--out", str(a), "--size", "96x64", "--camera", "0,20"])
    main(["render", "--out", str(b), "--size", "96x64", "--camera", "90,20,8"])
    assert not np.array_equal(np.asarray(Image.open(a)), np.asarray(Image.open(b)))


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "engine", *args], capture_output=True, text=True,
                          timeout=120, check=False)


def test_bad_arguments_exit_2_without_traceback(tmp_path):
    for args in (["render", "--size", "0x10"], ["render", "--camera", "a,b"],
                 ["render", "--point-size", "-1"],
                 ["render", "--out", str(tmp_path / "x.unknownext"), "--size", "8x8"]):
        r = run_cli(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert "Traceback" not in r.stderr
        assert "error" in r.stderr


def test_values_starting_with_a_minus_are_values(tmp_path, capsys):
    # "-5x10" and "-30,20" are not options: --size gets its own size error (argparse
    # said "expected one argument"), --camera takes the negative azimuth as --fps -3 does
    with pytest.raises(SystemExit) as e:
        main(["render", "--out", str(tmp_path / "x.png"), "--size", "-5x10"])
    assert e.value.code == 2
    assert capsys.readouterr().err.strip() == (
        "frustum render: error: argument --size: size must be between 1x1 and 16384x16384, "
        "got -5x10 (see frustum render --help)")
    out = tmp_path / "a.png"
    assert main(["render", "--out", str(out), "--size", "32x24", "--backend", "numpy",
                 "--camera", "-30,20"]) == 0
    assert Image.open(out).size == (32, 24)


def test_debug_flag_shows_traceback(tmp_path):
    r = run_cli("--debug", "render", "--out", str(tmp_path / "x.unknownext"), "--size", "8x8")
    assert r.returncode != 0 and "Traceback" in r.stderr


def test_help_lists_commands():
    r = run_cli("--help")
    assert r.returncode == 0 and "render" in r.stdout


def test_backend_and_raster_choices_come_from_the_registries():
    from engine.cli.commands import build_parser
    from engine.cli.examples import example_parser
    from engine.render.backends import BACKENDS
    from engine.render.renderer import RASTER_MODES

    def choices(parser, option):
        return next(tuple(a.choices) for a in parser._actions if option in a.option_strings)

    sub = next(a for a in build_parser()._actions if hasattr(a, "choices") and
               isinstance(a.choices, dict)).choices
    for name in ("render", "render-many", "view"):
        assert choices(sub[name], "--backend") == tuple(BACKENDS), name
    assert choices(example_parser("x"), "--backend") == tuple(BACKENDS)
    assert choices(sub["render"], "--raster") == tuple(RASTER_MODES)
    assert choices(sub["view"], "--raster") == ("auto", *RASTER_MODES)
    assert choices(example_parser("x"), "--raster") == ("auto", *RASTER_MODES)
