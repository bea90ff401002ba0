"""A non-editable install works away from the checkout: the wheel holds every engine
package and the shader sources (engine.shaders), and renders the demo from a fresh
virtual environment whose working directory is outside the source tree."""

import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT
from PIL import Image


@pytest.fixture(scope="module")
def wheel_build(tmp_path_factory):
    """(wheel path, everything pip and the build backend printed)."""
    out = tmp_path_factory.mktemp("wheel")
    r = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(out), str(ROOT)],
        check=True,
        timeout=300,
        capture_output=True,
        text=True,
    )
    (path,) = out.glob("frustum-*.whl")
    return path, r.stdout + r.stderr


@pytest.fixture(scope="module")
def wheel(wheel_build):
    return wheel_build[0]


def test_licence_is_an_spdx_expression_without_deprecation_warnings(wheel_build):
    """pyproject.toml's licence is the PEP 639 string: the wheel's metadata says
    ``License-Expression: MIT`` and the build prints no deprecation warning (a TOML
    table made setuptools print 'project.license as a TOML table is deprecated')."""
    path, output = wheel_build
    meta = next(n for n in zipfile.ZipFile(path).namelist() if n.endswith(".dist-info/METADATA"))
    lines = zipfile.ZipFile(path).read(meta).decode().splitlines()
    assert "License-Expression: MIT" in lines
    assert "deprecated" not in output.lower(), [
        line for line in output.splitlines() if "deprecated" in line.lower()]


def test_wheel_holds_every_package_and_shader(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    packages = {
        p.parent.relative_to(ROOT).as_posix() for p in (ROOT / "engine").rglob("__init__.py")
    }
    assert packages, "no packages found"
    for pkg in packages:
        assert f"{pkg}/__init__.py" in names, f"{pkg} is missing from the wheel"
    shaders = {
        p.name
        for p in (ROOT / "shaders").iterdir()
        if p.suffix in (".cu", ".cuh", ".vert", ".frag")
    }
    assert {"transform.cu", "raster.cu", "points.vert"} <= shaders
    for name in shaders:
        assert f"engine/shaders/{name}" in names, f"shaders/{name} is missing from the wheel"


def test_installed_wheel_renders_the_demo_outside_the_checkout(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            str(wheel),
        ],
        check=True,
        timeout=300,
    )
    # The dependencies come from the test environment's site-packages as a plain path
    # entry: its .pth files (the editable install of this checkout) are not processed.
    site = Path(sysconfig.get_paths()["purelib"])
    env_site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    (env_site / "deps.pth").write_text(f"{site}\n")
    work = tmp_path / "elsewhere"
    work.mkdir()
    check = (
        "import engine, engine.shaders\n"
        "from engine.render.backends.cuda_source import load_cuda_source\n"
        "from engine.render.gl.glsl import load_glsl\n"
        "src = load_cuda_source('transform.cu')\n"
        "assert '__global__' in src and '#include \"' not in src\n"
        "assert load_glsl('points.vert').startswith('#version')\n"
        "print(engine.__file__)\n"
    )
    r = subprocess.run(
        [str(python), "-c", check],
        check=False,
        cwd=work,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert Path(r.stdout.strip()).is_relative_to(env_dir), r.stdout
    r = subprocess.run(
        [
            str(env_dir / "bin" / "frustum"),
            "render",
            "demo",
            "--size",
            "160x120",
            "--out",
            "demo.png",
            "--backend",
            "numpy",
        ],
        check=False,
        cwd=work,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    img = np.asarray(Image.open(work / "demo.png"))
    assert img.shape == (120, 160, 4) or img.shape == (120, 160, 3)
    assert len(np.unique(img.reshape(-1, img.shape[-1]), axis=0)) > 10  # a picture, not a fill
