"""Read-only vertex arrays: geometry data that refuses in-place writes with a message
naming the method that does take effect.

The renderer copies a geometry's vertex arrays into its batch (and GL buffers, device
memory) once, and sees later changes through the geometry's revisions. A write into a
NumPy array in place (``mesh.positions[0] = ...``, ``mesh.positions *= 2``,
``np.copyto(mesh.positions, ...)``, a compiled kernel writing through a view) leaves no
trace that could be noticed without comparing the whole array every frame, so the
arrays a geometry holds are read-only (NumPy's ``writeable`` flag) and edits go through
``Geometry.update``, which knows exactly what changed.

``ReadOnlyArray`` is an ``np.ndarray`` subclass that only changes the error: indexing
assignment and in-place operators on it (or on a view of it) raise ValueError naming
``update``; any other write is refused by NumPy itself ("assignment destination is
read-only"). Copies (``a.copy()``, ``np.array(a)``) are ordinary writable arrays, and
arithmetic on it returns plain ``np.ndarray`` results.
"""

from __future__ import annotations

import numpy as np

__all__ = ["DEFORM_FIELDS", "ReadOnlyArray", "freeze", "read_only_message"]

#: A Mesh's skin and morph-target arrays: read-only too, and fixed at construction (the
#: renderer builds its deformation tables from them once per scene structure).
DEFORM_FIELDS = ("joints", "weights", "morph_positions", "morph_normals", "morph_tangents")


def read_only_message(field: str | None) -> str:
    """The error for an in-place write into geometry field ``field`` (e.g. "positions")."""
    if field in DEFORM_FIELDS:
        return (f"mesh.{field} is read-only: skin and morph-target data are fixed when the "
                f"Mesh is built; build a new Mesh to change them (animate morph_weights "
                f"or the joints' nodes instead)")
    name = field or "this array"
    return (f"geometry.{name} is read-only: edits in place would not reach the renderer; "
            f"use geometry.update({name}=new_values) (same size: no repack), e.g. "
            f"p = geometry.{name}.copy(); p[0] = ...; geometry.update({name}=p)")


class ReadOnlyArray(np.ndarray):
    """A NumPy array of a geometry field; read-only while ``flags.writeable`` is False
    (see the module docstring). ``field`` names the geometry attribute it holds."""

    field: str | None = None

    def __array_finalize__(self, obj):
        self.field = getattr(obj, "field", None)

    def __setitem__(self, key, value):
        if not self.flags.writeable:
            raise ValueError(read_only_message(self.field))
        super().__setitem__(key, value)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.get("out") or ()
        for o in out:
            if isinstance(o, ReadOnlyArray) and not o.flags.writeable:
                raise ValueError(read_only_message(o.field))

        def plain(x):
            return x.view(np.ndarray) if isinstance(x, ReadOnlyArray) else x

        if out:
            kwargs["out"] = tuple(plain(o) for o in out)
        return getattr(ufunc, method)(*(plain(x) for x in inputs), **kwargs)

    def __reduce__(self):
        # pickled as a plain array: the owning geometry freezes it again on load
        return self.view(np.ndarray).__reduce__()


def freeze(a, field: str):
    """``a`` as a read-only ``ReadOnlyArray`` view for geometry field ``field`` when it
    is a NumPy array (the caller owns ``a``: it must not be an array the user still
    writes to); device (CuPy) arrays, which have no read-only flag, and None are
    returned as they are."""
    if not isinstance(a, np.ndarray):
        return a
    view = a.view(ReadOnlyArray)
    view.field = field
    view.flags.writeable = False
    return view
