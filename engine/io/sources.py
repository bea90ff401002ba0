"""A scene ready to render from a *source*: the built-in demo or a 3D file, framed by a
camera the way ``frustum render`` frames it.

Shared by the command line, ``engine.show`` in a notebook and the Dask workers of a
distributed render (``engine.distributed``), so the same source gives the same first
view, and so the same pixels, everywhere.
"""

from __future__ import annotations

from pathlib import Path

from ..scene.framing import (
    DEFAULT_BACKGROUND,
    VIEW_AZIMUTH,
    VIEW_ELEVATION,
    VIEW_FOV_Y,
    framed_camera,
)
from ..scene.light import enable_shadows

__all__ = ["DEFAULT_BACKGROUND", "VIEW_AZIMUTH", "VIEW_ELEVATION", "VIEW_FOV_Y", "apply_look",
           "framed_camera", "load_source", "load_sources"]

# The framing itself is the scene layer's (engine.scene.framing), so the notebook view can
# frame a Scene without importing the file loaders (trimesh).


def load_source(source, aspect: float = 1.0, up: str | None = None, root=None):
    """(scene, camera) for 'demo' or a 3D file path.

    A file is loaded with ``engine.io.load`` under a new Scene, and a perspective camera
    with ``aspect`` (output width / height) is framed on the bounding box of its finite
    points (NaN/inf vertices are ignored), so the whole model fits the narrower side.
    Raises LoadError (an EngineError) for a file that cannot be read or has no finite
    point. ``up``: the file's up axis, "y" or "z" (default: the format's own); ``root``:
    the folder its referenced files may be read from (default: its own); see
    ``engine.io.load``.
    """
    from ..errors import LoadError
    from ..scene.graph import Scene
    from ..scene.procedural import demo_scene
    from .loaders import load

    if str(source) == "demo":
        return demo_scene(aspect=aspect)
    scene = Scene(Path(source).name, background=DEFAULT_BACKGROUND)
    scene.add(load(source, up=up, root=root))
    if scene.bounds() is None:
        raise LoadError(f"{source}: no vertex has finite coordinates, nothing to show")
    return scene, scene.add(framed_camera(scene, aspect))


def load_sources(sources, aspect: float = 1.0, up: str | None = None, root=None):
    """(scene, camera) showing every source together; one source is ``load_source``'s.

    Several sources are moved under one new scene (background of the first, cameras
    dropped) and a new camera is framed on the union of their bounds. Raises
    EngineError when there is nothing to show.
    """
    from ..errors import EngineError
    from ..scene.camera import Camera
    from ..scene.graph import Scene

    if len(sources) == 1:
        return load_source(sources[0], aspect, up, root)
    scene = None
    for source in sources:
        part, _ = load_source(source, aspect, up, root)
        if scene is None:
            scene = Scene("view", background=part.background)
        for child in part.children:
            if not isinstance(child, Camera):
                scene.add(child)
    if scene.bounds() is None:
        raise EngineError(f"nothing to show in {', '.join(map(str, sources))}: no finite points")
    return scene, scene.add(framed_camera(scene, aspect))


def apply_look(scene, draw=None, shading=None, background=None, line_color=None,
               hidden_lines=False, exposure=None, tone_map=None, point_size=None,
               point_shape=None, point_units=None, shadows=False):
    """The command line's --draw, --shading, --background, --line-color,
    --hidden-lines, --exposure, --tone-map, --point-size, --point-shape,
    --point-units and --shadows applied to a freshly loaded scene
    (None/False leaves each as loaded; exposure and tone map set ``Scene.exposure`` and
    ``Scene.tone_map``; ``shadows`` turns on every directional and spot light's,
    engine.scene.light.enable_shadows):
    every node with geometry is drawn as ``draw`` with lines of ``line_color`` (see
    ``Node.line_color``) and ``hidden_line_removal`` on when ``hidden_lines``, and every
    mesh material shaded as ``shading``; every geometry's vertices drawn as points get
    diameter ``point_size``, ``point_shape`` ("round", "square") and ``size_units``
    ``point_units`` ("px", "world"). Raises ValueError for an unknown shape or unit."""
    if background is not None:
        scene.background = background
    if exposure is not None:
        scene.exposure = exposure
    if tone_map is not None:
        scene.tone_map = tone_map
    if shadows:
        enable_shadows(scene)
    for node in scene.traverse():
        if node.geometry is None:
            continue
        if draw is not None:
            node.draw = draw
        if line_color is not None:
            node.line_color = line_color
        if hidden_lines:
            node.hidden_line_removal = True
        if shading is not None and hasattr(node.geometry, "material"):
            node.geometry.material.shading = shading
        if point_size is not None:
            node.geometry.point_size = float(point_size)
        if point_shape is not None:
            node.geometry.point_shape = point_shape
        if point_units is not None:
            node.geometry.size_units = point_units
    return scene
