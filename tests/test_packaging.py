"""A non-editable install works away from the checkout: the wheel holds every engine
package and the shader sources (engine.shaders), and renders the demo from a fresh
virtual environment whose working directory is outside the source tree."""

import os
import re
import shutil
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
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
        check=True,
        timeout=300,
    )
    (path,) = out.glob("frustum-*.whl")
    return path


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


def _extras() -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]


def test_setup_picks_extras_that_pyproject_has():
    """scripts/setup.sh chooses the GPU and development extras by CUDA major; each name
    it can choose is an extra of pyproject.toml (pip would install without a missing one
    after a mere warning)."""
    script = (ROOT / "scripts" / "setup.sh").read_text()
    chosen = set(re.findall(r'(?:GPU|DEV)_EXTRA="([^"]+)"', script))
    assert chosen == {"gpu", "gpu-cuda13", "dev", "dev-cuda12"}
    assert chosen <= set(_extras())


@pytest.mark.parametrize("extras", ["dev,gpu-cuda12", "fast", "dev,gpu-cuda11"])
def test_setup_refuses_an_extra_pyproject_lacks(extras, tmp_path):
    """An unknown name in FRUSTUM_EXTRAS (the removed gpu-cuda12 and fast, a major that
    has no extra) stops scripts/setup.sh with exit 2 and one line naming it, before it
    installs or creates anything. It runs on a copy of the script and pyproject.toml, so
    a regression cannot touch this checkout's environment."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "setup.sh", tmp_path / "scripts" / "setup.sh")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    r = subprocess.run(["bash", str(tmp_path / "scripts" / "setup.sh")], capture_output=True,
                       text=True, timeout=60, env={**os.environ, "FRUSTUM_EXTRAS": extras},
                       check=False)
    bad = next(e for e in extras.split(",") if e not in _extras())
    assert r.returncode == 2, r.stderr
    assert f"pyproject.toml has no extra '{bad}'" in r.stderr
    assert "installing" not in r.stderr and not (tmp_path / ".venv").exists()
