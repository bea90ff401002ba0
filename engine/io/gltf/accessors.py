"""glTF 2.0 accessors decoded with NumPy, every feature of the specification's
"Accessors" section (3.6.2):

- component types BYTE, UNSIGNED_BYTE, SHORT, UNSIGNED_SHORT, UNSIGNED_INT, FLOAT
  (5120, 5121, 5122, 5123, 5125, 5126), little-endian;
- types SCALAR, VEC2, VEC3, VEC4, MAT2, MAT3, MAT4; matrices are column-major and each
  column starts on a 4-byte boundary ("Data Alignment"), so MAT2 of bytes and MAT3 of
  bytes or shorts have padding after every column;
- ``byteOffset`` of the accessor within its buffer view, the view's ``byteStride``
  (interleaved attributes; elements tightly packed without one);
- ``normalized`` integers mapped to [0, 1] / [-1, 1] with the specification's equations:
  f = c / (2^b - 1) for unsigned, f = max(c / (2^(b-1) - 1), -1) for signed b-bit c;
- accessors without a buffer view (all zeros) and ``sparse`` substitution: ``count``
  strictly increasing indices (unsigned byte/short/int) and as many packed values
  replace the elements at those indices.

Size checks come before any allocation: the last element must end inside the buffer
view (offset + stride * (count - 1) + element size <= byteLength) and a view inside its
buffer, whose bytes are really there; an accessor with no buffer view may not decode to
more than ``zero_fill_limit`` bytes (64 MiB, or 16 x the file size when larger), since
nothing in the file bounds it.
"""

from __future__ import annotations

import numpy as np

from .document import Document

__all__ = ["COMPONENTS", "TYPES", "AccessorReader"]

COMPONENTS = {5120: np.dtype("<i1"), 5121: np.dtype("<u1"), 5122: np.dtype("<i2"),
              5123: np.dtype("<u2"), 5125: np.dtype("<u4"), 5126: np.dtype("<f4")}
COMPONENT_NAMES = {5120: "BYTE", 5121: "UNSIGNED_BYTE", 5122: "SHORT", 5123: "UNSIGNED_SHORT",
                   5125: "UNSIGNED_INT", 5126: "FLOAT"}
TYPES = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
_COLUMNS = {"MAT2": 2, "MAT3": 3, "MAT4": 4}


def _element_layout(type_: str, size: int):
    """(element byte size, column count, column byte stride) with matrix padding."""
    n = TYPES[type_]
    cols = _COLUMNS.get(type_)
    if cols is None:
        return n * size, 1, n * size
    rows = n // cols
    col_bytes = rows * size
    col_stride = (col_bytes + 3) // 4 * 4
    return col_stride * cols, cols, col_stride


def normalize(values: np.ndarray, component: int) -> np.ndarray:
    """Normalized integer components -> float64 (spec "Animations"/"Accessors" table)."""
    bits = COMPONENTS[component].itemsize * 8
    v = values.astype(np.float64)
    if COMPONENTS[component].kind == "u":
        return v / float(2 ** bits - 1)
    return np.maximum(v / float(2 ** (bits - 1) - 1), -1.0)


class Accessor:
    """A decoded accessor: ``data`` (count, components) float64 when normalized or FLOAT,
    else the integer dtype; ``component``, ``type``, ``normalized``, ``count``."""

    def __init__(self, data, component, type_, normalized):
        self.data, self.component, self.type, self.normalized = data, component, type_, normalized

    @property
    def count(self) -> int:
        return int(self.data.shape[0])

    def floats(self) -> np.ndarray:
        """(count, components) float64 (normalized integers already mapped)."""
        return self.data.astype(np.float64, copy=False)


class AccessorReader:
    """Decodes ``accessors[i]`` of a Document (cached)."""

    def __init__(self, doc: Document):
        self.doc = doc
        self.zero_fill_limit = max(64 << 20, 16 * doc.file_size)
        self._cache: dict[int, Accessor] = {}

    def header(self, index: int):
        """(componentType, type, count, normalized) of accessor ``index``, checked."""
        doc = self.doc
        where = f"accessors[{index}]"
        a = doc.item("accessors", index)
        comp = doc.integer(a, "componentType", where)
        if comp not in COMPONENTS:
            raise doc.error(f"{where}.componentType", f"{comp} is not a glTF component type "
                            "(5120, 5121, 5122, 5123, 5125 or 5126)")
        type_ = doc.string(a, "type", where, choices=tuple(TYPES))
        count = doc.integer(a, "count", where, lo=1)
        normalized = doc.boolean(a, "normalized", where, False)
        if normalized and comp in (5125, 5126):
            raise doc.error(f"{where}.normalized", f"must not be true for "
                            f"{COMPONENT_NAMES[comp]} components")
        return comp, type_, count, normalized

    def read(self, index: int) -> Accessor:
        if index in self._cache:
            return self._cache[index]
        doc = self.doc
        where = f"accessors[{index}]"
        a = doc.item("accessors", index)
        comp, type_, count, normalized = self.header(index)
        dtype = COMPONENTS[comp]
        n = TYPES[type_]
        elem, cols, col_stride = _element_layout(type_, dtype.itemsize)
        view = doc.ref(a, "bufferView", where, "bufferViews", default=None)
        if view is None:
            if "byteOffset" in a:
                doc.integer(a, "byteOffset", where, default=0)  # type check only
            if count * n * 8 > self.zero_fill_limit:
                raise doc.error(f"{where}.count", f"{count:,} elements without a bufferView "
                                f"would decode to {count * n * 8:,} bytes, more than this "
                                f"{doc.file_size:,}-byte file can describe")
            data = np.zeros((count, n), dtype)
        else:
            offset = doc.integer(a, "byteOffset", where, default=0)
            raw, stride = doc.buffer_view(view, f"{where}.bufferView")
            step = elem if stride is None else stride
            if step < elem:
                raise doc.error(f"bufferViews[{view}].byteStride",
                                f"{step} is smaller than the {elem}-byte elements of {where} "
                                f"({type_} of {COMPONENT_NAMES[comp]})")
            need = offset + step * (count - 1) + elem
            if need > len(raw):
                raise doc.error(where, f"byteOffset {offset:,} + {count:,} elements x "
                                f"{step} bytes needs {need:,} bytes, but bufferViews[{view}] "
                                f"has {len(raw):,}")
            data = self._strided(raw, offset, count, step, dtype, n, cols, col_stride)
        sparse = doc.obj(a, "sparse", where)
        if sparse is not None:
            self._apply_sparse(data, sparse, f"{where}.sparse", dtype, type_, count)
        if normalized:
            data = normalize(data, comp)
        out = Accessor(data, comp, type_, normalized)
        self._cache[index] = out
        return out

    @staticmethod
    def _strided(raw, offset, count, step, dtype, n, cols, col_stride) -> np.ndarray:
        """(count, n) copy of the elements; matrices read column by column."""
        buf = np.frombuffer(raw, np.uint8)
        rows = n // cols
        out = np.empty((count, n), dtype)
        for c in range(cols):
            start = offset + c * col_stride
            col = np.ndarray((count, rows), dtype=dtype, buffer=buf.data, offset=start,
                             strides=(step, dtype.itemsize))
            out[:, c * rows:(c + 1) * rows] = col
        return out

    def _apply_sparse(self, data, sparse, where, dtype, type_, count):
        doc = self.doc
        k = doc.integer(sparse, "count", where, lo=1, hi=count)
        ind = doc.obj(sparse, "indices", where, required=True)
        val = doc.obj(sparse, "values", where, required=True)
        iw, vw = f"{where}.indices", f"{where}.values"
        icomp = doc.integer(ind, "componentType", iw)
        if icomp not in (5121, 5123, 5125):
            raise doc.error(f"{iw}.componentType", f"{icomp} is not an unsigned integer type "
                            "(5121, 5123 or 5125)")
        idtype = COMPONENTS[icomp]
        iview = doc.ref(ind, "bufferView", iw, "bufferViews")
        ioff = doc.integer(ind, "byteOffset", iw, default=0)
        iraw, _ = doc.buffer_view(iview, f"{iw}.bufferView")
        if ioff + k * idtype.itemsize > len(iraw):
            raise doc.error(iw, f"{k:,} indices from byteOffset {ioff:,} need "
                            f"{ioff + k * idtype.itemsize:,} bytes, but bufferViews[{iview}] "
                            f"has {len(iraw):,}")
        idx = np.frombuffer(iraw, idtype, count=k, offset=ioff).astype(np.int64)
        if k > 1 and not np.all(np.diff(idx) > 0):
            bad = int(np.argmax(~(np.diff(idx) > 0))) + 1
            raise doc.error(iw, f"indices must increase strictly: index {bad} is "
                            f"{idx[bad]:,} after {idx[bad - 1]:,}")
        if idx[-1] >= count:
            raise doc.error(iw, f"index {int(idx[-1]):,} is out of range for {count:,} "
                            "elements")
        vview = doc.ref(val, "bufferView", vw, "bufferViews")
        voff = doc.integer(val, "byteOffset", vw, default=0)
        vraw, _ = doc.buffer_view(vview, f"{vw}.bufferView")
        n = TYPES[type_]
        elem, cols, col_stride = _element_layout(type_, dtype.itemsize)
        if voff + k * elem > len(vraw):
            raise doc.error(vw, f"{k:,} values of {elem} bytes from byteOffset {voff:,} need "
                            f"{voff + k * elem:,} bytes, but bufferViews[{vview}] has "
                            f"{len(vraw):,}")
        data[idx] = self._strided(vraw, voff, k, elem, dtype, n, cols, col_stride)
