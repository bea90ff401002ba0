"""File input and output: 3D files in (``load``), images out (``image.save_image``)."""

from .loaders import SUPPORTED_SUFFIXES, load

__all__ = ["SUPPORTED_SUFFIXES", "load"]
