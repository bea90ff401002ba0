"""The package layering of engine/ (README "Package map"), checked on every import
statement in the source, including the lazy ones inside functions:

    helpers (errors, arrays, progress)  <- scene <- render <- io <- animation <- controls
        <- display <- bench <- game <- cli
    animation <- distributed (Dask) <- cli;  controls <- notebook (Jupyter)

Each package may import itself, the helpers and the packages listed for it below; the
scene imports no render, GL or GPU module; nothing but the CLI imports the game layer.
"""

import ast
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[1] / "engine"
HELPERS = {"errors", "arrays", "progress"}
ALLOWED = {
    "scene": set(),
    "render": {"scene"},
    "io": {"scene"},
    "animation": {"scene", "render", "io"},
    "controls": {"scene", "animation"},
    "display": {"scene", "render", "io", "animation", "controls"},
    "bench": {"scene", "render", "io", "display"},
    "game": {"scene", "render", "io", "animation", "controls", "display"},
    "notebook": {"scene", "render", "io", "animation", "controls"},
    "distributed": {"scene", "render", "io", "animation"},
    "cli": {"scene", "render", "io", "animation", "controls", "display", "bench", "game",
            "distributed"},
}
GL_OR_GPU = {"pyglet", "moderngl", "_moderngl", "cupy", "numba", "torch", "cuda"}


def _modules():
    for path in sorted(ENGINE.rglob("*.py")):
        rel = path.relative_to(ENGINE.parent).with_suffix("")
        parts = list(rel.parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        yield path, parts, is_pkg


def imports_of(path: Path, parts: list[str], is_pkg: bool):
    """Absolute module names imported anywhere in the file (relative imports resolved)."""
    package = parts if is_pkg else parts[:-1]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module
            yield mod
            if node.level and not node.module:  # "from . import x": x is a module
                yield from (f"{mod}.{a.name}" for a in node.names)


def layer(parts: list[str]) -> str | None:
    """engine.<layer>...: the subpackage or helper a module belongs to."""
    return parts[1] if len(parts) > 1 else None


def violations():
    found = []
    for path, parts, is_pkg in _modules():
        src = layer(parts)
        if src is None or src == "__main__":
            continue  # engine/__init__ gathers the public API; __main__ runs the CLI
        for mod in imports_of(path, parts, is_pkg):
            top, *rest = mod.split(".")
            where = f"{'.'.join(parts)} imports {mod}"
            if top != "engine":
                if src in ("scene", *HELPERS) and top in GL_OR_GPU:
                    found.append(f"{where}: no GL or GPU module below render")
                continue
            dst = rest[0] if rest else None
            if dst is None:
                found.append(f"{where}: import the submodule, not the top-level package")
            elif src in HELPERS:
                if dst != src:
                    found.append(f"{where}: helpers import nothing of the engine")
            elif dst != src and dst not in HELPERS and dst not in ALLOWED[src]:
                found.append(f"{where}: {src} may import only {sorted(ALLOWED[src])}")
    return found


def test_every_package_has_a_layer():
    names = {p.name for p in ENGINE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert names == set(ALLOWED)
    helpers = {p.stem for p in ENGINE.glob("*.py")} - {"__init__", "__main__"}
    assert helpers == HELPERS


def test_layering_rules_hold():
    assert violations() == []


def test_the_allowed_imports_form_no_cycle():
    order = []  # depth-first topological sort; a back edge is a cycle
    state = {}

    def visit(name, stack):
        if state.get(name) == "done":
            return
        assert state.get(name) != "open", f"import cycle: {' -> '.join(stack + [name])}"
        state[name] = "open"
        for dep in ALLOWED[name]:
            visit(dep, stack + [name])
        state[name] = "done"
        order.append(name)

    for name in ALLOWED:
        visit(name, [])
    assert order.index("scene") < order.index("render") < order.index("cli")


@pytest.mark.parametrize(
    "source, expected",
    [
        ("from ..render.frame import Frame", "engine.scene.bad imports engine.render.frame"),
        ("import pyglet", "engine.scene.bad imports pyglet"),
        ("from ..game.app import App", "engine.scene.bad imports engine.game.app"),
    ],
)
def test_the_checker_catches_a_bad_import(tmp_path, monkeypatch, source, expected):
    fake = tmp_path / "engine"
    (fake / "scene").mkdir(parents=True)
    (fake / "scene" / "__init__.py").write_text("")
    (fake / "scene" / "bad.py").write_text(source + "\n")
    monkeypatch.setitem(globals(), "ENGINE", fake)
    assert any(v.startswith(expected) for v in violations())
