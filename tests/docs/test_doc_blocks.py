"""Every ```python and ```bash block of README.md and docs/*.md runs as written (exit
status 0), unless a visible marker says why not; see doc_blocks.py for the markers, the
fixtures that replace placeholder file names, and the working directory."""

from __future__ import annotations

import pytest
from doc_blocks import (
    ROOT,
    RUN_LANGUAGES,
    SAMPLE_COMMAND,
    all_blocks,
    make_fixtures,
    make_samples,
    run_block,
    setup_stamp_problem,
)

BLOCKS, PROBLEMS = all_blocks()
RUN = [b for b in BLOCKS if b.runs]


@pytest.fixture(scope="session")
def fixtures(tmp_path_factory):
    return make_fixtures(tmp_path_factory.mktemp("doc-fixtures"), BLOCKS)


@pytest.fixture(scope="session")
def samples(tmp_path_factory):
    return make_samples(tmp_path_factory.mktemp("doc-samples"))


def test_markers_are_valid():
    assert PROBLEMS == []


def test_blocks_are_found_and_skips_say_why():
    code = [b for b in BLOCKS if b.language in RUN_LANGUAGES]
    readme = [b for b in code if b.path.name == "README.md"]
    assert len(readme) >= 3 and len(RUN) >= 20, [b.id for b in code]
    for b in code:
        assert b.runs or b.skip, b.id
    # a marker only makes sense on the block it is written for
    for b in BLOCKS:
        if b.language not in RUN_LANGUAGES:
            assert not (b.skip or b.files or b.env or b.replace), b.id


def test_the_readme_shows_the_sample_command_and_it_runs():
    """The sample models a `samples` block gets are the README's own command's output."""
    shown = [b for b in RUN if b.path == ROOT / "README.md" and b.language == "bash"
             and SAMPLE_COMMAND in b.code.splitlines()[0]]
    assert shown, f"README.md has no runnable bash block starting with {SAMPLE_COMMAND!r}"


def test_the_sample_command_writes_the_models_the_docs_name(samples):
    assert sorted(p.name for p in samples) == ["model.glb", "model.mtl", "model.obj",
                                               "model.png", "scan.ply"]


def test_placeholder_files_name_existing_fixtures(fixtures):
    for b in BLOCKS:
        for name, fixture in b.files.items():
            assert fixture in fixtures, f"{b.id}: files {name}={fixture}: no such fixture"


@pytest.mark.parametrize("block", RUN, ids=[b.id for b in RUN])
def test_block_runs_as_written(block, tmp_path, fixtures, samples):
    if "scripts/" in block.code:
        problem = setup_stamp_problem()
        if problem is not None:
            pytest.fail(f"{block.id} runs scripts/ (which set up .venv): {problem}")
    r = run_block(block, tmp_path, fixtures, samples if block.samples else ())
    assert r.returncode == 0, (
        f"{block.id} ({block.language}) exited with status {r.returncode}\n"
        f"--- code as run\n{block.source()}--- stdout\n{r.stdout[-4000:]}\n"
        f"--- stderr\n{r.stderr[-4000:]}")
