"""Inline output in Jupyter: ``engine.show(x)``.

What ``show`` takes and what it displays:

- a ``Frame``: the frame (PNG);
- a ``Scene``, a ``Node`` or a geometry (``Mesh``, ``PointCloud``), a 3D file path or
  'demo': a frame rendered with the framing of ``frustum render`` (a perspective
  camera, 50 degrees vertical field of view, from azimuth 35 / elevation 25 degrees at
  the distance that fits the whole thing); a Scene with a camera is seen through its
  first camera unless ``camera=`` says otherwise;
- a rendered clip: a ``RenderResult`` (what the offline renders return), or the path of
  an .mp4 (an HTML5 video), a .gif, a .png/.jpg or a folder of PNG frames.

Nothing of the caller's scene graph is changed: a Node that belongs to another graph is
shown through a copy of its subtree (same geometry objects, same local transforms), and
the framing camera is not added to the scene.
"""

from __future__ import annotations

from pathlib import Path

from ..render.msaa import IMAGE_MSAA

__all__ = ["MEDIA_SUFFIXES", "Media", "render_still", "show", "to_scene"]

MEDIA_SUFFIXES = (".mp4", ".gif", ".png", ".jpg", ".jpeg")
DEFAULT_SIZE = (800, 450)


class Media:
    """A written image or clip as a Jupyter display object (see engine.io.embed)."""

    def __init__(self, path, width: int | None = None):
        self.path = Path(path)
        self.width = width

    def _repr_mimebundle_(self, include=None, exclude=None):
        from ..io.embed import media_mimebundle

        return media_mimebundle(self.path, width=self.width)

    def __repr__(self) -> str:
        return f"Media({str(self.path)!r})"


def _copy_subtree(node):
    from ..scene.graph import Node

    copy = Node(node.name, position=node.position, rotation=node.rotation, scale=node.scale,
                geometry=node.geometry, visible=node.visible, draw=node.draw,
                color=node.color, line_color=node.line_color,
                hidden_line_removal=node.hidden_line_removal)
    for child in node.children:
        copy.add(_copy_subtree(child))
    return copy


def to_scene(x, aspect: float = 16 / 9, camera=None, background=None):
    """(scene, camera) to render ``x``: a Scene, Node, Geometry, 3D file path or 'demo'
    (see the module docstring). ``camera``: a Camera to use, or (azimuth, elevation[,
    distance]) for the framing; None frames the default view (a Scene's own camera
    first). Raises EngineError for anything else."""
    from ..errors import EngineError
    from ..scene.camera import Camera
    from ..scene.framing import DEFAULT_BACKGROUND, framed_camera
    from ..scene.geometry import Geometry
    from ..scene.graph import Node, Scene

    if isinstance(x, (str, Path)):
        from ..io.sources import load_source  # the loaders (trimesh) only for files

        scene, own = load_source(x, aspect)
    elif isinstance(x, Scene):
        scene = x
        own = next((n for n in x.traverse() if isinstance(n, Camera)), None)
    elif isinstance(x, Node):
        scene = Scene(x.name, background=DEFAULT_BACKGROUND)
        scene.add(_copy_subtree(x) if x.parent is not None else x)
        own = None
    elif isinstance(x, Geometry):
        scene = Scene(type(x).__name__, background=DEFAULT_BACKGROUND)
        scene.add(Node(type(x).__name__.lower(), geometry=x))
        own = None
    else:
        raise EngineError(f"cannot show a {type(x).__name__}: give a Scene, Node, Mesh, "
                          f"PointCloud, Frame, a rendered clip or a file path")
    if background is not None and scene is not x:
        scene.background = background
    if isinstance(camera, Camera):
        return scene, camera
    if camera is not None:
        az, el, *dist = camera
        return scene, framed_camera(scene, aspect, az, el, dist[0] if dist else None)
    if own is not None:
        return scene, own  # the renderer sets its aspect from the frame size
    return scene, framed_camera(scene, aspect)


def render_still(x, size=DEFAULT_SIZE, camera=None, backend=None, point_size=None,
                 draw=None, shading=None, background=None, msaa: int = IMAGE_MSAA,
                 shadows: bool = False):
    """The ``Frame`` that ``show(x)`` displays for a scene, node, geometry or file
    (``msaa`` samples per pixel, engine.render.msaa: 4 by default for a still;
    ``shadows``: every directional and spot light renders shadow maps, as ``frustum
    render --shadows``)."""
    from ..render.renderer import Renderer, check_size
    from ..scene.graph import Scene

    w, h = check_size(size)
    scene, cam = to_scene(x, w / h, camera, background)
    if draw is not None or shading is not None or shadows:
        if isinstance(x, Scene):
            from ..errors import EngineError

            raise EngineError("draw=/shading=/shadows= change the scene: set them on its "
                              "nodes (shadows: light.shadows = True)")
        from ..io.sources import apply_look

        apply_look(scene, draw, shading, shadows=shadows)
    renderer = Renderer(scene, cam, (w, h), backend=backend, point_size=point_size,
                        msaa=msaa)
    try:
        return renderer.render(depth=False)
    finally:
        renderer.close()


def _is_media(x) -> bool:
    if isinstance(x, (str, Path)):
        p = Path(x)
        return p.suffix.lower() in MEDIA_SUFFIXES or (p.is_dir() and any(p.glob("frame_*.png")))
    return False


def show(x, size=DEFAULT_SIZE, camera=None, backend=None, point_size=None, draw=None,
         shading=None, background=None, width: int | None = None, msaa: int = IMAGE_MSAA,
         shadows: bool = False):
    """Display ``x`` inline in Jupyter (see the module docstring for what ``x`` may be).

    size: (width, height) pixels of a rendered frame (default 800x450). camera: a
    Camera, or (azimuth, elevation[, distance]) degrees/world units. backend,
    point_size: as ``engine.Renderer``. draw, shading, background: as ``frustum render``
    (draw/shading for files, nodes and geometry; a Scene keeps its own). width: display
    width of a clip in CSS pixels. msaa: samples per pixel of a rendered still (1, 2, 4
    or 8; default 4, anti-aliased: engine.render.msaa). shadows: shadow maps for every
    directional and spot light of a file, node or geometry shown (``frustum render
    --shadows``; a Scene's lights say for themselves: ``light.shadows``).

    Returns None (the output is displayed, like ``print``); for the Frame itself use
    ``render_still``. Raises EngineError for something it cannot show, and when
    IPython is missing.
    """
    from ..errors import EngineError

    try:
        from IPython.display import display
    except ImportError:
        raise EngineError("engine.show displays in Jupyter/IPython: pip install "
                          "'frustum[notebook]'; in a script render with engine.Renderer "
                          "and save with engine.io.image.save_image") from None
    from ..animation.offline import RenderResult
    from ..render.frame import Frame

    if isinstance(x, Frame):
        obj = x
    elif isinstance(x, RenderResult):
        obj = Media(x.path, width)
    elif _is_media(x):
        if not Path(x).exists():
            raise EngineError(f"{x}: no such file")
        obj = Media(x, width)
    else:
        obj = render_still(x, size, camera, backend, point_size, draw, shading, background,
                           msaa, shadows)
    display(obj)
