"""frustum render-many: one image or clip per 3D file, failures reported one line each
without stopping the others, an index of what was written, restartable (complete
outputs skipped, incomplete ones redone), the same bytes in-process and on Dask."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from dist_support import dask_client, dask_cluster, write_mesh  # noqa: F401 - fixtures
from PIL import Image

from engine.cli import main
from engine.distributed.many import ManySpec, is_complete, plan, render_many

pytestmark = pytest.mark.timeout(240)


@pytest.fixture
def models(tmp_path):
    root = tmp_path / "models"
    write_mesh(root / "cars" / "a.ply", seed=1)
    write_mesh(root / "cars" / "b.obj", seed=2)
    write_mesh(root / "planes" / "c.glb", seed=3)
    (root / "planes" / "broken.glb").write_bytes(b"glTF\x02\x00\x00\x00garbage")
    (root / "empty.stl").write_bytes(b"")
    (root / "notes.md").write_text("not a model")  # not a 3D suffix: ignored
    return root


def run_cli(*args, timeout=180):
    return subprocess.run([sys.executable, "-m", "engine", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, check=False)


def outputs(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_plan_names_outputs_below_the_fixed_folder_and_keeps_suffixes_on_collisions(tmp_path):
    root = tmp_path / "m"
    for name in ("x/a.glb", "x/a.obj", "x/b.ply", "y/z/c.stl", "readme.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(b"x")
    items = plan([str(root / "**" / "*")], tmp_path / "out", "png")
    got = {os.path.relpath(it.source, root): os.path.relpath(it.output, tmp_path / "out")
           for it in items}
    assert got == {"x/a.glb": "x/a.glb.png", "x/a.obj": "x/a.obj.png", "x/b.ply": "x/b.png",
                   "y/z/c.stl": "y/z/c.png"}
    with pytest.raises(Exception, match="no 3D file"):
        plan([str(root / "*.md")], tmp_path / "out")


def test_failures_are_reported_and_the_others_written_then_a_rerun_skips(models, tmp_path,
                                                                         capsys):
    out = tmp_path / "thumbs"
    args = ["render-many", str(models / "**" / "*"), "--out", str(out), "--size", "64x48",
            "--backend", "numba"]
    assert main(args) == 1  # some failed
    err = capsys.readouterr().err
    failed = [ln for ln in err.splitlines() if ln.startswith("frustum: failed:")]
    assert len(failed) == 2
    assert any("broken.glb" in ln for ln in failed) and any("empty.stl" in ln for ln in failed)
    assert "Traceback" not in err
    assert outputs(out) == ["cars/a.png", "cars/b.png", "index.json", "planes/c.png"]
    for name in ("cars/a.png", "cars/b.png", "planes/c.png"):
        img = np.asarray(Image.open(out / name))
        assert img.shape == (48, 64, 4)
        assert (np.any(img != img[0, 0], axis=2)).sum() > 100  # the model is drawn
    index = json.loads((out / "index.json").read_text())
    status = {os.path.relpath(e["source"], models): e["status"] for e in index["items"]}
    assert status == {"cars/a.ply": "written", "cars/b.obj": "written",
                      "planes/c.glb": "written", "planes/broken.glb": "failed",
                      "empty.stl": "failed"}
    assert index["summary"] == {"written": 3, "skipped": 0, "failed": 2, "pending": 0}
    assert all(e["error"] and "\n" not in e["error"] for e in index["items"]
               if e["status"] == "failed")
    # Second run: complete outputs are skipped (not rewritten), failures tried again.
    stamp = {n: (out / n).stat().st_mtime_ns for n in ("cars/a.png", "planes/c.png")}
    (out / "cars" / "b.png").write_bytes((out / "cars" / "b.png").read_bytes()[:100])
    assert not is_complete(out / "cars" / "b.png")  # a truncated PNG is redone
    assert main(args) == 1
    capsys.readouterr()
    index = json.loads((out / "index.json").read_text())
    assert index["summary"] == {"written": 1, "skipped": 2, "failed": 2, "pending": 0}
    assert {n: (out / n).stat().st_mtime_ns for n in stamp} == stamp
    assert is_complete(out / "cars" / "b.png")


def test_dask_workers_write_the_same_files(models, tmp_path, dask_client):  # noqa: F811
    spec = ManySpec(size=(64, 48), backend="numba")
    local = render_many([str(models / "**" / "*.*")], tmp_path / "local", spec, progress=False)
    dist = render_many([str(models / "**" / "*.*")], tmp_path / "dist", spec,
                       client=dask_client, progress=False)
    assert [it.status for it in local.items] == [it.status for it in dist.items]
    assert dist.count("written") == 3 and dist.count("failed") == 2
    assert [it.error for it in local.items] == [it.error for it in dist.items]
    for name in ("cars/a.png", "cars/b.png", "planes/c.png"):
        assert (tmp_path / "local" / name).read_bytes() == (tmp_path / "dist" / name).read_bytes()


def test_turntable_clips_on_a_local_cluster_from_the_cli(models, tmp_path):
    out = tmp_path / "clips"
    r = run_cli("render-many", models / "cars" / "*.ply", models / "planes" / "c.glb",
                "--out", out, "--size", "64x48", "--turntable", "0.5", "--fps", "8",
                "--format", "gif", "--workers", "2")
    assert r.returncode == 0, r.stderr
    assert "2 written, 0 skipped (complete), 0 failed of 2 files" in r.stdout
    # below the folder common to both patterns (models): one output per input
    assert outputs(out) == ["cars/a.gif", "index.json", "planes/c.gif"]
    for name in ("cars/a.gif", "planes/c.gif"):
        with Image.open(out / name) as im:
            assert im.n_frames == 4 and im.size == (64, 48)
    mp4 = run_cli("render-many", models / "cars" / "a.ply", "--out", out, "--size", "64x48",
                  "--turntable", "0.25")
    assert mp4.returncode == 0, mp4.stderr
    assert is_complete(out / "a.mp4")
    data = (out / "a.mp4").read_bytes()
    (out / "a.mp4").write_bytes(data[: len(data) // 2])
    assert not is_complete(out / "a.mp4")  # cut short: redone by the next run


def test_bad_input_is_one_line_and_exit_2(tmp_path, models):
    cases = [
        (["render-many", tmp_path / "nothing" / "*.glb", "--out", tmp_path / "o"],
         "no 3D file"),
        (["render-many", models / "cars" / "a.ply", "--out", tmp_path / "o", "--format", "mp4"],
         "--turntable"),
        (["render-many", models / "cars" / "a.ply", "--out", tmp_path / "o", "--turntable", "1",
          "--format", "png"], "mp4 or gif"),
        (["render-many", models / "cars" / "a.ply", "--out", models / "notes.md"],
         "not a folder"),
        (["render-many", models / "cars" / "a.ply", "--out", tmp_path / "o", "--camera",
          "path.json"], "AZ,EL"),
    ]
    for args, words in cases:
        r = run_cli(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert words in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "o").exists()
