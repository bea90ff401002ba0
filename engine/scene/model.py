"""``Model``: the root node of a loaded file, with what the file holds besides geometry.

``engine.io.load`` returns one. It is an ordinary ``Node`` (add it to a scene, move it,
draw it) that also carries::

    cameras   the file's cameras as camera nodes inside the subtree, in the file's order
              (glTF ``cameras[i]`` -> ``cameras[i]``, placed at the first node using it)
    clips     the file's animations as ``engine.scene.clips.Clip`` objects, in order
    warnings  the lines the loader logged about what is not drawn (or was left out)
    source    the path it was loaded from
"""

from __future__ import annotations

from pathlib import Path

from .graph import Node

__all__ = ["Model"]


class Model(Node):
    """Root of a loaded file; see the module docstring. Arguments are ``Node``'s."""

    def __init__(self, name: str = "model", source=None, **node_kwargs):
        super().__init__(name, **node_kwargs)
        self.source = None if source is None else Path(source)
        self.cameras: list = []
        self.clips: list = []
        self.warnings: list[str] = []

    def camera(self, index: int):
        """The file's camera ``index`` (0-based); IndexError naming how many there are."""
        if not 0 <= index < len(self.cameras):
            have = len(self.cameras)
            raise IndexError(f"camera {index} does not exist: the file has "
                             f"{have} camera{'s' * (have != 1)}")
        return self.cameras[index]

    def clip(self, index: int):
        """The file's animation ``index`` (0-based); IndexError naming how many there are."""
        if not 0 <= index < len(self.clips):
            have = len(self.clips)
            raise IndexError(f"animation {index} does not exist: the file has "
                             f"{have} animation{'s' * (have != 1)}")
        return self.clips[index]
