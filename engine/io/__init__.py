"""File input and output: 3D files in (``load``: glTF/GLB, OBJ+MTL, PLY, STL, LAS/LAZ,
PCD, XYZ/PTS/TXT; see docs/assets.md), images out (``image.save_image``), video out
(``video``), and the one lifecycle every output follows (``output``)."""

from .loaders import SUPPORTED_SUFFIXES, UP_AXES, load

__all__ = ["SUPPORTED_SUFFIXES", "UP_AXES", "load"]
