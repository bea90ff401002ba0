"""The files a model file names besides itself (glTF buffer and image URIs, OBJ
``mtllib``, MTL ``map_Kd``, PLY ``comment TextureFile``): one rule for where they may
be, and the one place they are opened.

The rule (the same for every format):

- A reference is resolved against the folder of the file that names it (the model's
  folder; an MTL's folder for its maps).
- The file it leads to must lie inside the *root*: by default the model's folder and its
  subfolders; ``load(path, root=FOLDER)`` (``--root FOLDER`` on the command line) widens
  it to a folder that contains the model, e.g. a project folder whose ``textures/``
  sits beside ``models/``. Symbolic links are followed and judged by where they lead,
  so a link inside the folder cannot point outside it.
- It must be a regular file. Named pipes, devices and sockets are refused without
  waiting: the file is opened non-blocking and checked with ``fstat`` on the open
  descriptor, so a FIFO can neither hang the loader nor be swapped in after a check.

A downloaded model therefore cannot make the engine read files outside the folder the
user chose. What a refused reference costs depends on the format: a glTF buffer or
image file is an error (LoadError, as a missing one is); an OBJ material library, an
MTL map or a PLY texture is left out with a note in the file's warning line (the model
is drawn in its plain colours, as when the file is missing).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["References", "RefusedFile", "regular_file_problem"]

# S_IFMT kinds -> the words a message uses for them
_KINDS = {stat.S_IFIFO: "a named pipe (FIFO)", stat.S_IFCHR: "a character device",
          stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket",
          stat.S_IFDIR: "a folder"}


class RefusedFile(Exception):
    """A referenced file that is not read; ``str(exc)`` is the reason, phrased to follow
    the file's name ("is missing", "is outside ...")."""


def regular_file_problem(st: os.stat_result) -> str | None:
    """None for a regular file, else what the ``stat`` result shows it is instead
    ("a named pipe (FIFO)", "a folder", "a socket", ...)."""
    if stat.S_ISREG(st.st_mode):
        return None
    return _KINDS.get(stat.S_IFMT(st.st_mode), "another kind of file")


class References:
    """The files one model may read: those inside ``root`` (module docstring).

    Args:
        model: path of the model file (its folder is the default root).
        root: a folder containing the model, or None.

    Raises:
        ValueError: ``root`` is not an existing folder, or does not contain ``model``
            (after following symbolic links), naming both.
    """

    def __init__(self, model, root=None):
        self.model = Path(model)
        self.folder = self.model.parent
        self.root = self.folder if root is None else Path(root)
        self._real_root = Path(os.path.realpath(self.root))
        if root is not None:
            if not self._real_root.is_dir():
                raise ValueError(f"root must be an existing folder, got {str(root)!r}")
            if not self.inside(self.model):
                raise ValueError(f"root {str(root)!r} does not contain the model file "
                                 f"{str(model)!r}")

    def inside(self, path) -> bool:
        """True when ``path`` (followed through symbolic links) lies inside the root."""
        real = Path(os.path.realpath(path))
        return real == self._real_root or self._real_root in real.parents

    def outside_reason(self) -> str:
        """Why a file outside the root is refused, for messages."""
        if self.root == self.folder:
            return "is outside the model's folder (root= or --root widens what it may read)"
        return f"is outside the root folder {str(self.root)!r}"

    def read(self, path, limit: int | None = None) -> bytes:
        """The bytes of ``path`` (at most ``limit``), checked by the rule.

        Raises RefusedFile with the reason: outside the root, missing, a folder, a named
        pipe or another non-regular file, or the operating system's error text.
        """
        path = Path(path)
        if not self.inside(path):
            raise RefusedFile(self.outside_reason())
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
        try:
            fd = os.open(os.path.realpath(path), flags)
        except FileNotFoundError:
            raise RefusedFile("is missing") from None
        except IsADirectoryError:
            raise RefusedFile("is a folder, not a regular file") from None
        except OSError as exc:
            raise RefusedFile(f"cannot be read: {exc.strerror or exc}") from None
        st = os.fstat(fd)
        kind = regular_file_problem(st)
        if kind is not None:
            os.close(fd)
            raise RefusedFile(f"is {kind}, not a regular file")
        with os.fdopen(fd, "rb") as fh:
            # read(n) reserves n bytes first: never ask for more than the file holds
            try:
                return fh.read(st.st_size if limit is None else min(limit, st.st_size))
            except OSError as exc:
                raise RefusedFile(f"cannot be read: {exc.strerror or exc}") from None
