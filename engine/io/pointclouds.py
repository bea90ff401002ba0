"""Point-cloud files users bring: LAS/LAZ (laspy with the lazrs backend), PCD (read here
with NumPy; binary_compressed through the LZF codec of python-neo-lzf) and XYZ/PTS/TXT
text columns.

Every reader returns a ``Model`` holding one ``PointCloud`` (positions float64, so the
geometry recentres them and keeps precision, e.g. for georeferenced coordinates) with

    colours          RGB when the file has it, else a colour by classification (LAS, when
                     any point has a class other than 0/1), else a grey ramp by
                     intensity, else none (the default point colour)
    attributes       "intensity", "classification" (LAS), "return_number" (LAS), the
                     PCD/text columns other than x, y, z, colour and normals, by name
    normals          PCD ``normal_x normal_y normal_z`` or text ``nx ny nz`` columns (when
                     every normal is finite and non-zero): they light the points
                     (engine.render.sprites)

Colour rules:
    RGB              16-bit channels (LAS always; PCD/text when a value is > 255) are
                     scaled by 255 / 65535; LAS files whose channels are all <= 255 hold
                     8-bit values (many writers do this) and are taken as they are. Text
                     colours all <= 1 are floats in [0, 1]
    intensity        grey = (i - p1) / (p99 - p1), clipped to [0, 1], with p1 and p99 the
                     1st and 99th percentiles (a few bright returns do not darken the rest)
    classification   the ASPRS LAS 1.4 standard classes (R15, table 17) in ``CLASS_COLORS``;
                     other codes get a fixed colour from their number (golden-angle hues)

Sizes are checked before anything is allocated: a LAS body must hold count x record
length bytes; a LAZ file's declared count must fit its chunk table (chunks x chunk size)
and its points are decompressed a million at a time, so a header that claims more
points than the data holds fails when the data ends, not by allocating the claim; a PCD
body must hold POINTS x record size bytes (binary) or decompress to exactly that from at
most 1/88 of it (binary_compressed: LZF expands at most 264 bytes from 3).

Sources: ASPRS "LAS Specification 1.4 - R15" (2019); the LASzip compressed LAS format
(M. Isenburg, "LASzip: lossless compression of LiDAR data", 2013; chunk table layout as
in the LASzip source's documentation); PCL "The PCD (Point Cloud Data) file format"
(pointclouds.org); Leica PTS (a point count line, then ``x y z intensity r g b`` lines).
"""

from __future__ import annotations

import math
import re
import struct
import warnings
from pathlib import Path

import numpy as np

from ..errors import LoadError
from ..scene.geometry import PointCloud
from ..scene.model import Model
from .notes import Notes

__all__ = ["CLASS_COLORS", "load_point_cloud"]

#: ASPRS standard point classes (LAS 1.4 R15, table 17) -> RGB.
CLASS_COLORS = {
    0: (160, 160, 160),   # created, never classified
    1: (200, 200, 200),   # unclassified
    2: (166, 118, 64),    # ground
    3: (170, 220, 120),   # low vegetation
    4: (90, 180, 70),     # medium vegetation
    5: (30, 110, 40),     # high vegetation
    6: (220, 80, 60),     # building
    7: (255, 0, 255),     # low point (noise)
    8: (255, 255, 0),     # reserved (model key-point in LAS 1.0-1.3)
    9: (60, 120, 220),    # water
    10: (120, 80, 160),   # rail
    11: (90, 90, 90),     # road surface
    12: (255, 200, 0),    # reserved (overlap in LAS 1.0-1.3)
    13: (240, 240, 240),  # wire - guard (shield)
    14: (255, 230, 120),  # wire - conductor (phase)
    15: (200, 200, 255),  # transmission tower
    16: (255, 150, 200),  # wire-structure connector (insulator)
    17: (150, 150, 200),  # bridge deck
    18: (255, 0, 128),    # high noise
}
CHUNK_POINTS = 1 << 20
MAX_LAZ_CHUNK = 1 << 24
LZF_MAX_RATIO = 88


def load_point_cloud(path: Path, point_size: float) -> Model:
    suffix = path.suffix.lower()
    notes = Notes(path)
    if suffix in (".las", ".laz"):
        positions, colors, attrs = _read_las(path)
    elif suffix == ".pcd":
        positions, colors, attrs = _read_pcd(path, notes)
    else:
        positions, colors, attrs = _read_text(path, notes)
    geom = PointCloud(positions, colors, point_size=point_size,
                      normals=_normals_of(attrs, len(positions)))
    geom.attributes.update(attrs)
    model = Model(path.stem, source=path, geometry=geom)
    notes.emit(model)
    return model


#: Column names of per-point normals: PCD (PCL's ``normal_x``), text headers (``nx``).
NORMAL_COLUMNS = (("normal_x", "normal_y", "normal_z"), ("nx", "ny", "nz"))


def _normals_of(attrs: dict, n: int):
    """(n, 3) float32 normals from the columns ``NORMAL_COLUMNS`` names (removed from
    ``attrs``: they become the cloud's ``normals``, which light it), or None when the file
    has none or some normal is not finite or zero (not usable for lighting; the columns
    then stay attributes)."""
    for names in NORMAL_COLUMNS:
        if all(k in attrs for k in names):
            nrm = np.stack([np.asarray(attrs[k], np.float64).reshape(-1) for k in names], 1)
            if nrm.shape != (n, 3) or not np.isfinite(nrm).all() \
                    or not (np.abs(nrm).sum(axis=1) > 0).all():
                return None
            for k in names:
                del attrs[k]
            return nrm.astype(np.float32)
    return None


# --------------------------------------------------------------------------- colours
def class_colors(codes) -> np.ndarray:
    """(N,) class codes -> (N, 4) uint8 colours (``CLASS_COLORS``, else by number)."""
    codes = np.asarray(codes).astype(np.int64)
    table = np.zeros((256, 4), np.uint8)
    table[:, 3] = 255
    for k in range(256):
        if k in CLASS_COLORS:
            table[k, :3] = CLASS_COLORS[k]
        else:
            h = (k * 0.618033988749895) % 1.0
            table[k, :3] = [round(255 * (0.5 + 0.5 * math.cos(2 * math.pi * (h + o))))
                            for o in (0.0, 1 / 3, 2 / 3)]
    return table[np.clip(codes, 0, 255)]


def intensity_colors(values) -> np.ndarray | None:
    """Grey ramp over the 1st-99th percentiles (module doc); None when constant."""
    v = np.asarray(values, np.float64)
    finite = np.isfinite(v)
    if not finite.any():
        return None
    lo, hi = np.percentile(v[finite], [1.0, 99.0])
    if not hi > lo:
        lo, hi = float(v[finite].min()), float(v[finite].max())
        if not hi > lo:
            return None
    g = np.rint(np.clip((np.nan_to_num(v, nan=lo) - lo) / (hi - lo), 0, 1) * 255)
    out = np.full((len(v), 4), 255, np.uint8)
    out[:, :3] = g.astype(np.uint8)[:, None]
    return out


def _rgb8(rgb, sixteen: bool | None = None) -> np.ndarray:
    """(N, 3) channel values -> (N, 4) uint8 (16-bit rule of the module doc)."""
    rgb = np.asarray(rgb, np.float64)
    top = float(np.nanmax(rgb)) if rgb.size else 0.0
    if sixteen is None:
        sixteen = top > 255
    scale = 255.0 / 65535.0 if sixteen else 1.0
    out = np.full((len(rgb), 4), 255, np.uint8)
    out[:, :3] = np.clip(np.rint(np.nan_to_num(rgb) * scale), 0, 255).astype(np.uint8)
    return out


def _choose_colors(rgb, classification, intensity):
    if rgb is not None:
        return rgb
    if classification is not None and len(classification) and \
            np.any(~np.isin(classification, (0, 1))):
        return class_colors(classification)
    if intensity is not None:
        return intensity_colors(intensity)
    return None


# ------------------------------------------------------------------------------ LAS
def _is_panic(exc: BaseException) -> bool:
    """A Rust panic inside lazrs (pyo3's PanicException derives from BaseException)."""
    return type(exc).__name__ == "PanicException"


def _las_error_types():
    import laspy

    types = [laspy.errors.LaspyException, ValueError, struct.error, EOFError, OverflowError,
             IndexError, KeyError, TypeError, NotImplementedError]
    try:
        import lazrs

        types.append(lazrs.LazrsError)
    except ImportError:  # pragma: no cover - lazrs is a dependency
        pass
    return tuple(types)


def _read_las(path: Path):
    try:
        import laspy
    except ImportError as exc:  # pragma: no cover - laspy is a dependency
        raise LoadError(f"{path}: reading LAS/LAZ needs the package 'laspy' (pip install "
                        "'laspy[lazrs]')") from exc
    errors = _las_error_types()
    size = path.stat().st_size
    with open(path, "rb") as fh:
        head = fh.read(375)
    _check_las_header(path, head, size)
    try:
        reader = laspy.open(path, mode="r")
    except errors as exc:
        raise LoadError(f"{path}: cannot read the LAS header: {_one_line(exc)}") from None
    except BaseException as exc:
        if not _is_panic(exc):
            raise
        raise LoadError(f"{path}: corrupt LAZ: the decompressor failed ({_one_line(exc)})"
                        ) from None
    with reader:
        h = reader.header
        count = int(h.point_count)
        record = int(h.point_format.size)
        start = int(h.offset_to_point_data)
        if not np.all(np.isfinite(h.scales)) or np.any(np.asarray(h.scales) == 0):
            raise LoadError(f"{path}: LAS header scale factors {h.scales.tolist()} must be "
                            "finite and non-zero")
        if not np.all(np.isfinite(h.offsets)):
            raise LoadError(f"{path}: LAS header offsets {h.offsets.tolist()} must be finite")
        compressed = bool(h.are_points_compressed)
        if not compressed:
            need = start + count * record
            if need > size:
                raise LoadError(f"{path}: truncated LAS: the header declares {count:,} points "
                                f"x {record} bytes from byte {start:,} = {need:,} bytes, but "
                                f"the file has {size:,} ({need - size:,} missing)")
        else:
            _check_laz_count(path, h, count, start, size)
        dims = set(h.point_format.dimension_names)
        xyz, rgb, inten, cls, ret = [], [], [], [], []
        done = 0
        try:
            for chunk in reader.chunk_iterator(CHUNK_POINTS):
                xyz.append(np.stack([np.asarray(chunk.x, np.float64),
                                     np.asarray(chunk.y, np.float64),
                                     np.asarray(chunk.z, np.float64)], axis=1))
                if {"red", "green", "blue"} <= dims:
                    rgb.append(np.stack([np.asarray(chunk["red"]), np.asarray(chunk["green"]),
                                         np.asarray(chunk["blue"])], axis=1))
                inten.append(np.asarray(chunk["intensity"]).copy())
                cls.append(np.asarray(chunk["classification"]).astype(np.uint8))
                ret.append(np.asarray(chunk["return_number"]).astype(np.uint8))
                done += len(chunk)
        except errors as exc:
            raise LoadError(f"{path}: the LAS point data ends or breaks after {done:,} of the "
                            f"{count:,} points the header declares: {_one_line(exc)}") from None
        except BaseException as exc:
            if not _is_panic(exc):
                raise
            raise LoadError(f"{path}: corrupt LAZ: the decompressor failed after {done:,} of "
                            f"{count:,} points ({_one_line(exc)})") from None
    if done != count:
        raise LoadError(f"{path}: the LAS point data holds {done:,} points, the header "
                        f"declares {count:,}")
    positions = np.concatenate(xyz) if xyz else np.zeros((0, 3))
    intensity = np.concatenate(inten) if inten else np.zeros(0, np.uint16)
    classification = np.concatenate(cls) if cls else np.zeros(0, np.uint8)
    attrs = {"intensity": intensity, "classification": classification,
             "return_number": np.concatenate(ret) if ret else np.zeros(0, np.uint8)}
    colors = None
    if rgb:
        values = np.concatenate(rgb)
        colors = _rgb8(values, sixteen=bool(values.size) and int(values.max()) > 255)
    return positions, _choose_colors(colors, classification, intensity), attrs


# LAS 1.4 R15, table 7 ff.: the least record length of each point data record format
_LAS_RECORD = {0: 20, 1: 28, 2: 26, 3: 34, 4: 57, 5: 63, 6: 30, 7: 36, 8: 38, 9: 59, 10: 67}
_LAS_HEADER = {0: 227, 1: 227, 2: 227, 3: 235, 4: 375}


def _check_las_header(path: Path, head: bytes, size: int):
    """The public header block's sizes against the file, before laspy reads anything
    (a corrupt VLR count would otherwise make it read a billion records)."""
    if not head.startswith(b"LASF"):
        raise LoadError(f"{path}: not a LAS file (it does not start with 'LASF')")
    if len(head) < 227:
        raise LoadError(f"{path}: truncated LAS header: {len(head)} bytes, the header has at "
                        "least 227")
    major, minor = head[24], head[25]
    if major != 1 or minor not in _LAS_HEADER:
        raise LoadError(f"{path}: LAS version {major}.{minor} is not supported (1.0 to 1.4)")
    header_size, start, vlrs, fmt, record = struct.unpack_from("<HIIBH", head, 94)
    least = _LAS_HEADER[minor]
    if not least <= header_size <= start <= size:
        raise LoadError(f"{path}: corrupt LAS header: header size {header_size:,} and point "
                        f"data offset {start:,} must satisfy {least} <= size <= offset <= "
                        f"file size {size:,}")
    if vlrs * 54 > start - header_size:
        raise LoadError(f"{path}: corrupt LAS header: {vlrs:,} variable length records of at "
                        f"least 54 bytes do not fit the {start - header_size:,} bytes before "
                        "the point data")
    fmt_id = fmt & 0x3F
    if fmt_id not in _LAS_RECORD or record < _LAS_RECORD[fmt_id]:
        raise LoadError(f"{path}: corrupt LAS header: point format {fmt_id} with "
                        f"{record}-byte records (the format needs at least "
                        f"{_LAS_RECORD.get(fmt_id, '?')})")
    if minor == 4 and len(head) >= 255:
        evlr_start, evlrs = struct.unpack_from("<QI", head, 235)
        if evlrs and (evlr_start > size or evlrs * 60 > size - evlr_start):
            raise LoadError(f"{path}: corrupt LAS header: {evlrs:,} extended variable length "
                            f"records from byte {evlr_start:,} do not fit the {size:,}-byte "
                            "file")


# LASzip item types -> bytes per point (0: any, the extra bytes); from the LASzip source
_LAZ_ITEMS = {0: 0, 6: 20, 7: 8, 8: 6, 9: 29, 10: 30, 11: 6, 12: 8, 13: 29, 14: 0}


def _check_laz_count(path: Path, header, count: int, start: int, size: int):
    """A LAZ file's declared point count against its chunk table (module doc)."""
    vlr = next((v for v in header.vlrs if getattr(v, "record_id", None) == 22204
                and getattr(v, "user_id", "").startswith("laszip")), None)
    raw = None if vlr is None else getattr(vlr, "record_data", None)
    if raw is None or len(raw) < 16:
        raise LoadError(f"{path}: LAZ file without a readable 'laszip encoded' record")
    compressor, coder = struct.unpack_from("<HH", raw, 0)
    chunk_size = struct.unpack_from("<I", raw, 12)[0]
    items = struct.unpack_from("<H", raw, 32)[0] if len(raw) >= 34 else 0
    if compressor not in (1, 2, 3) or coder != 0 or not items or len(raw) != 34 + 6 * items:
        raise LoadError(f"{path}: corrupt LAZ: the 'laszip encoded' record (compressor "
                        f"{compressor}, coder {coder}, {items} items in {len(raw)} bytes) is "
                        "not one LASzip writes")
    total = 0
    for k in range(items):
        kind, nbytes, _version = struct.unpack_from("<HHH", raw, 34 + 6 * k)
        want = _LAZ_ITEMS.get(kind)
        if want is None or (want and nbytes != want):
            raise LoadError(f"{path}: corrupt LAZ: item {k} of the 'laszip encoded' record "
                            f"(type {kind}, {nbytes} bytes) is not a LASzip item")
        total += nbytes
    record = int(header.point_format.size)
    if total != record:
        raise LoadError(f"{path}: corrupt LAZ: the LASzip items hold {total} bytes per point, "
                        f"the point format {record}")
    data = max(size - start, 0)
    if compressor in (2, 3) and chunk_size != 0xFFFFFFFF:
        if start + 8 > size:
            raise LoadError(f"{path}: truncated LAZ: no chunk table offset at byte {start:,}")
        with open(path, "rb") as fh:
            fh.seek(start)
            table = struct.unpack("<q", fh.read(8))[0]
            chunks = None
            if 0 < table <= size - 8:
                fh.seek(table)
                chunks = struct.unpack("<II", fh.read(8))[1]
        if chunks is None:
            raise LoadError(f"{path}: corrupt LAZ: the chunk table offset {table:,} is outside "
                            f"the {size:,}-byte file")
        if not 0 < chunk_size <= MAX_LAZ_CHUNK:
            raise LoadError(f"{path}: corrupt LAZ: chunk size {chunk_size:,} points (LASzip "
                            f"writes 50,000; at most {MAX_LAZ_CHUNK:,} are accepted)")
        if count > chunks * chunk_size or chunks > data:
            raise LoadError(f"{path}: corrupt LAZ: the header declares {count:,} points but "
                            f"the chunk table lists {chunks:,} chunks of at most "
                            f"{chunk_size:,} points")
    elif count > 256 * data:  # no chunk table to check against: a generous ratio
        raise LoadError(f"{path}: corrupt LAZ: the header declares {count:,} points, more "
                        f"than 256 per byte of its {data:,} bytes of point data")


# ------------------------------------------------------------------------------ PCD
_PCD_TYPES = {("F", 2): "<f2", ("F", 4): "<f4", ("F", 8): "<f8", ("I", 1): "<i1",
              ("I", 2): "<i2", ("I", 4): "<i4", ("I", 8): "<i8", ("U", 1): "<u1",
              ("U", 2): "<u2", ("U", 4): "<u4", ("U", 8): "<u8"}
_PCD_KEYS = ("VERSION", "FIELDS", "SIZE", "TYPE", "COUNT", "WIDTH", "HEIGHT", "VIEWPOINT",
             "POINTS", "DATA")


def _pcd_header(path: Path, data: bytes):
    """Parse the PCD header -> (fields, dtype, points, encoding, body offset)."""
    values: dict[str, tuple[int, list[str]]] = {}
    pos, line_no = 0, 0
    while True:
        end = data.find(b"\n", pos)
        if end < 0:
            raise LoadError(f"{path}: PCD header has no DATA line (truncated header?)")
        line_no += 1
        if line_no > 1000 or end > 1 << 20:
            raise LoadError(f"{path}: PCD header has no DATA line in its first 1,000 lines")
        raw = data[pos:end]
        pos = end + 1
        try:
            line = raw.decode("ascii").strip()
        except UnicodeDecodeError:
            raise LoadError(f"{path}: PCD header line {line_no} is not ASCII text (not a PCD "
                            "file?)") from None
        if not line or line.startswith("#"):
            continue
        key, *rest = line.split()
        key = key.upper()
        if key not in _PCD_KEYS:
            raise LoadError(f"{path}: PCD header line {line_no}: unknown entry {key!r}")
        values[key] = (line_no, rest)
        if key == "DATA":
            break
    for key in ("FIELDS", "SIZE", "TYPE"):
        if key not in values:
            raise LoadError(f"{path}: PCD header has no {key} line")
    fields = values["FIELDS"][1]
    n = len(fields)

    def ints(key, default=None, lo=0):
        if key not in values:
            return default
        no, toks = values[key]
        try:
            out = [int(t) for t in toks]
        except ValueError:
            raise LoadError(f"{path}: PCD header line {no}: {key} needs whole numbers, got "
                            f"{' '.join(toks)!r}") from None
        if any(v < lo for v in out):
            raise LoadError(f"{path}: PCD header line {no}: {key} values must be >= {lo}")
        return out

    sizes = ints("SIZE", lo=1)
    types = [t.upper() for t in values["TYPE"][1]]
    counts = ints("COUNT", [1] * n, lo=1)
    for key, got in (("SIZE", sizes), ("TYPE", types), ("COUNT", counts)):
        if len(got) != n:
            no = values[key][0] if key in values else 0
            raise LoadError(f"{path}: PCD header line {no}: {key} has {len(got)} values for "
                            f"{n} FIELDS")
    dtype_fields = []
    for name, sz, ty, ct in zip(fields, sizes, types, counts):
        code = _PCD_TYPES.get((ty, sz))
        if code is None:
            raise LoadError(f"{path}: PCD header line {values['TYPE'][0]}: field {name!r} has "
                            f"TYPE {ty} SIZE {sz}, which PCD does not define")
        dtype_fields.append((name if name != "_" else f"_pad{len(dtype_fields)}", code,
                             (ct,) if ct > 1 else ()))
    try:
        dtype = np.dtype([(nm, code, shape) for nm, code, shape in dtype_fields])
    except (ValueError, TypeError) as exc:
        raise LoadError(f"{path}: PCD header line {values['FIELDS'][0]}: fields "
                        f"{' '.join(fields)!r} cannot be read ({exc})") from None
    width = ints("WIDTH", lo=0)
    height = ints("HEIGHT", [1], lo=0)
    points = ints("POINTS", lo=0)
    if points is None:
        if width is None:
            raise LoadError(f"{path}: PCD header has neither POINTS nor WIDTH")
        points = [width[0] * height[0]]
    points = points[0]
    if width is not None and width[0] * height[0] != points:
        raise LoadError(f"{path}: PCD header line {values['POINTS'][0]}: POINTS {points:,} "
                        f"is not WIDTH x HEIGHT = {width[0]:,} x {height[0]:,}")
    enc_no, enc = values["DATA"]
    encoding = enc[0].lower() if enc else ""
    if encoding not in ("ascii", "binary", "binary_compressed"):
        raise LoadError(f"{path}: PCD header line {enc_no}: DATA must be ascii, binary or "
                        f"binary_compressed, got {' '.join(enc)!r}")
    return dtype, points, encoding, pos, line_no


def _read_pcd(path: Path, notes: Notes):
    data = path.read_bytes()
    dtype, points, encoding, body, header_lines = _pcd_header(path, data)
    names = dtype.names
    for axis in "xyz":
        if axis not in names:
            raise LoadError(f"{path}: PCD file has no {axis!r} field (fields: "
                            f"{' '.join(names)})")
    rest = len(data) - body
    if encoding == "binary":
        need = points * dtype.itemsize
        if need > rest:
            raise LoadError(f"{path}: truncated PCD: {points:,} points x {dtype.itemsize} "
                            f"bytes = {need:,} bytes of data declared, {rest:,} present "
                            f"({need - rest:,} missing)")
        rec = np.frombuffer(data, dtype, count=points, offset=body)
    elif encoding == "binary_compressed":
        rec = _pcd_compressed(path, data, body, dtype, points)
    else:
        rec = _pcd_ascii(path, data[body:], dtype, points, header_lines)
    positions = np.stack([rec["x"], rec["y"], rec["z"]], axis=1).astype(np.float64)
    colors = None
    attrs = {}
    for name in names:
        if name in ("x", "y", "z") or name.startswith("_pad"):
            continue
        col = rec[name]
        if name in ("rgb", "rgba") and col.ndim == 1 and col.dtype.itemsize == 4:
            packed = np.ascontiguousarray(col).view(np.uint32)
            colors = np.empty((points, 4), np.uint8)
            colors[:, 0] = (packed >> 16) & 255
            colors[:, 1] = (packed >> 8) & 255
            colors[:, 2] = packed & 255
            colors[:, 3] = (packed >> 24) & 255 if name == "rgba" else 255
            continue
        attrs[name] = np.array(col)
    if colors is None and {"r", "g", "b"} <= set(names):
        colors = _rgb8(np.stack([rec["r"], rec["g"], rec["b"]], axis=1).astype(np.float64))
    if colors is None and "intensity" in attrs:
        colors = intensity_colors(attrs["intensity"])
    return positions, colors, attrs


def _pcd_compressed(path: Path, data: bytes, body: int, dtype, points: int):
    need = points * dtype.itemsize
    if len(data) - body < 8:
        raise LoadError(f"{path}: truncated PCD: binary_compressed data has no size header")
    csize, usize = struct.unpack_from("<II", data, body)
    if usize != need:
        raise LoadError(f"{path}: corrupt PCD: the compressed block decompresses to {usize:,} "
                        f"bytes, but {points:,} points x {dtype.itemsize} bytes = {need:,}")
    have = len(data) - body - 8
    if csize > have:
        raise LoadError(f"{path}: truncated PCD: the compressed block is {csize:,} bytes, "
                        f"{have:,} follow ({csize - have:,} missing)")
    if usize > LZF_MAX_RATIO * csize + 64:
        raise LoadError(f"{path}: corrupt PCD: {csize:,} compressed bytes cannot hold "
                        f"{usize:,} bytes (LZF expands at most {LZF_MAX_RATIO}x)")
    if points == 0:
        return np.zeros(0, dtype)
    try:
        import lzf
    except ImportError as exc:  # pragma: no cover - python-neo-lzf is a dependency
        raise LoadError(f"{path}: binary_compressed PCD needs the package 'python-neo-lzf'"
                        ) from exc
    try:
        raw = lzf.decompress(bytes(data[body + 8: body + 8 + csize]), usize)
    except (ValueError, OSError, SystemError) as exc:
        raise LoadError(f"{path}: corrupt PCD: the compressed block does not decompress "
                        f"({_one_line(exc)})") from None
    if raw is None or len(raw) != usize:
        raise LoadError(f"{path}: corrupt PCD: the compressed block decompresses to "
                        f"{0 if raw is None else len(raw):,} bytes, not {usize:,}")
    # column-major: all values of the first field, then the second, ...
    rec = np.zeros(points, dtype)
    off = 0
    for name in dtype.names:
        sub = dtype.fields[name][0]
        k = int(np.prod(sub.shape)) if sub.shape else 1
        values = np.frombuffer(raw, sub.base, count=points * k, offset=off)
        rec[name] = values.reshape((points,) + sub.shape)
        off += points * k * sub.base.itemsize
    return rec


def _pcd_ascii(path: Path, body: bytes, dtype, points: int, header_lines: int):
    width = {n: int(np.prod(dtype.fields[n][0].shape)) if dtype.fields[n][0].shape else 1
             for n in dtype.names}
    per = sum(width.values())
    text = body.decode("latin-1")
    lines = text.splitlines()
    rows = []
    for i, line in enumerate(lines):
        if len(rows) == points:
            break
        s = line.strip()
        if not s:
            continue
        rows.append((header_lines + 1 + i, s))
    if len(rows) < points:
        raise LoadError(f"{path}: truncated PCD: POINTS declares {points:,} lines of data, "
                        f"the file has {len(rows):,}")
    table = _numbers(path, rows, per)
    rec = np.zeros(points, dtype)
    col = 0
    for name in dtype.names:
        sub = dtype.fields[name][0]
        k = width[name]
        vals = table[:, col:col + k]
        col += k
        if name in ("rgb", "rgba") and k == 1 and sub.base == np.dtype("<f4"):
            # PCL writes a packed colour in ASCII as the decimal uint32 (e.g. 4.2108e+06
            # in the PCD tutorial); other writers print the float with those bits. An
            # integer in [0, 2^32) is the former, anything else the latter.
            v = vals[:, 0]
            whole = np.isfinite(v) & (v == np.floor(v)) & (v >= 0) & (v < 2.0**32)
            bits = np.where(whole, v, 0).astype(np.uint32)
            with np.errstate(invalid="ignore", over="ignore"):
                floats = np.where(whole, 0, v).astype(np.float32)
            bits = np.where(whole, bits, floats.view(np.uint32))
            rec[name] = bits.view(np.float32)
            continue
        with np.errstate(invalid="ignore", over="ignore"):
            rec[name] = (vals[:, 0] if k == 1 else vals).astype(sub.base)
    return rec


# ----------------------------------------------------------------------------- text
_NUMERIC = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^[-+]?(nan|inf)$",
                      re.IGNORECASE)
_NAMES = {"x": "x", "y": "y", "z": "z", "r": "r", "red": "r", "g": "g", "green": "g",
          "b": "b", "blue": "b", "i": "intensity", "intensity": "intensity",
          "scalar_intensity": "intensity"}


def _numbers(path: Path, rows, per: int) -> np.ndarray:
    """(len(rows), per) float64 from (line number, text) rows; LoadError naming the
    first line with another number of values or a value that is not a number."""
    out = np.empty((len(rows), per))
    block = 100_000
    for b in range(0, len(rows), block):
        part = rows[b:b + block]
        split = [s.replace(",", " ").replace(";", " ").split() for _, s in part]
        for (no, s), toks in zip(part, split):
            if len(toks) != per:
                raise LoadError(f"{path}: line {no} has {len(toks)} values, expected {per}: "
                                f"{s[:60]!r}")
        try:
            out[b:b + len(part)] = np.array(split, dtype=np.float64)
        except (ValueError, OverflowError):
            for (no, _), toks in zip(part, split):
                for t in toks:
                    try:
                        float(t)
                    except ValueError:
                        raise LoadError(f"{path}: line {no}: {t[:40]!r} is not a number"
                                        ) from None
            raise
    return out


def _read_text(path: Path, notes: Notes):
    """XYZ / PTS / TXT: one point per line (module doc for the columns)."""
    from .fixups import decode_text

    fast = _fast_table(path)
    if fast is not None:
        table, names, first_line = fast
    else:
        table, names, rows = _slow_table(path, decode_text(path.read_bytes()))
        first_line = rows[0][0]
    per = table.shape[1]
    if per < 3:
        raise LoadError(f"{path}: line {first_line} has {per} values; a point needs x y z")
    cols: dict[str, int] = {}
    if names is not None:
        if len(names) != per:
            raise LoadError(f"{path}: the header names {len(names)} columns, the data has "
                            f"{per}")
        for i, nm in enumerate(names):
            cols.setdefault(_NAMES.get(nm, nm), i)
        for axis in "xyz":
            if axis not in cols:
                raise LoadError(f"{path}: the header names no {axis!r} column")
    else:
        layout = {3: "x y z", 4: "x y z intensity", 6: "x y z r g b",
                  7: "x y z intensity r g b", 9: "x y z r g b nx ny nz"}.get(per)
        if layout is None:
            layout = "x y z"
            notes.add(f"columns 4 to {per} (not understood without a header line)")
        cols = {nm: i for i, nm in enumerate(layout.split())}
    xyz = [cols["x"], cols["y"], cols["z"]]
    # the table itself when it is just x y z (10^7 points: no second 240 MB copy)
    positions = table if xyz == [0, 1, 2] and per == 3 else table[:, xyz]
    colors = None
    attrs = {}
    if all(c in cols for c in "rgb"):
        rgb = table[:, [cols["r"], cols["g"], cols["b"]]]
        finite = rgb[np.isfinite(rgb)]
        top = float(finite.max()) if finite.size else 0.0
        if finite.size and (float(finite.min()) < 0 or top > 65535):
            bad = int(np.argmax(np.any((rgb < 0) | (rgb > 65535), axis=1)))
            raise LoadError(f"{path}: line {_line_of_row(path, bad)}: colour values must be "
                            "0-1, 0-255 or 0-65535")
        if top <= 1.0:
            rgb = rgb * 255.0
        colors = _rgb8(rgb, sixteen=top > 255)
    for nm, i in cols.items():
        if nm not in ("x", "y", "z", "r", "g", "b"):
            attrs[nm] = table[:, i].copy()
    if colors is None and "intensity" in attrs:
        colors = intensity_colors(attrs["intensity"])
    return positions, colors, attrs


def _line_kind(s: str, may_name: bool):
    """What the non-empty, stripped line ``s`` of a text point cloud is: ("names", the
    column names) when it names the columns (a comment "# x y z ..." or a plain line of
    names) and ``may_name`` (no names nor rows yet), ("comment", None), ("count", n) for
    a PTS count line, or ("data", None)."""
    if s.startswith(("#", "//", "%")):
        head = s.lstrip("#/% ").replace(",", " ").replace(";", " ").split()
        if may_name and head and all(
                h.lower().lstrip("/") in _NAMES or not _NUMERIC.match(h) for h in head) \
                and len(head) >= 3 and head[0].lower().lstrip("/") == "x":
            return "names", [h.lower().lstrip("/") for h in head]
        return "comment", None
    toks = s.replace(",", " ").replace(";", " ").split()
    if len(toks) == 1 and toks[0].isdigit():
        return "count", int(toks[0])
    if may_name and not _NUMERIC.match(toks[0]):
        return "names", [t.lower() for t in toks]
    return "data", None


def _header(text: str):
    """(names or None, PTS count lines, the first data line, its line number): the
    lines before the data, read by the rules of ``_slow_table`` (``_line_kind``); None
    when ``text`` has no data line."""
    names = None
    blocks = []
    for no, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s:
            continue
        kind, value = _line_kind(s, names is None)
        if kind == "names":
            names = value
        elif kind == "count":
            blocks.append(value)
        elif kind == "data":
            return names, blocks, s, no
    return None


#: Bytes read to find the header of a text point cloud (its data starts within them).
_HEAD_BYTES = 1 << 20


def _fast_table(path: Path):
    """(table, names, line number of the first row) of a regular UTF-8 text file: a
    header (``_header``) within its first ``_HEAD_BYTES``, then rows with one number of
    values each, separated like the first row (spaces, or commas, or semicolons), and
    nothing else among them (no comment or count line). Parsed from the file by NumPy's
    C reader (``np.loadtxt``: about 0.3 s per 10^6 rows on the build machine, memory the
    float64 table). None when the file is not that regular: ``_slow_table`` then reads
    it line by line and names the line of any fault."""
    with open(path, "rb") as fh:
        raw = fh.read(_HEAD_BYTES)
    cut = raw.rfind(b"\n") + 1 if len(raw) == _HEAD_BYTES else len(raw)
    try:
        head = _header(raw[:cut].decode("utf-8-sig"))
    except UnicodeDecodeError:
        return None
    if head is None:
        return None
    names, blocks, first, line = head
    if len(blocks) > 1:
        return None
    sample = first.split("#", 1)[0]
    delimiter = ";" if ";" in sample else "," if "," in sample else None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # e.g. "input contained no data"
            table = np.loadtxt(path, dtype=np.float64, comments=None, delimiter=delimiter,
                               skiprows=line - 1, ndmin=2, encoding="utf-8-sig")
    except (ValueError, UserWarning, UnicodeDecodeError):
        return None
    if not len(table) or (blocks and blocks[0] != len(table)):
        return None
    return table, names, line


def _slow_table(path: Path, text: str):
    """(table, names, rows) of any text file, line by line: rows are (line number,
    text); LoadError naming the line of a fault."""
    names = None
    rows = []
    blocks = []  # (line number, declared count, rows before it) of PTS count lines
    for no, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s:
            continue
        kind, value = _line_kind(s, names is None and not rows)
        if kind == "names":
            names = value
        elif kind == "count":
            blocks.append((no, value, len(rows)))
        elif kind == "data":
            rows.append((no, s))
    for k, (no, declared, before) in enumerate(blocks):
        after = blocks[k + 1][2] if k + 1 < len(blocks) else len(rows)
        if after - before != declared:
            raise LoadError(f"{path}: line {no} declares {declared:,} points but "
                            f"{after - before:,} follow")
    if not rows:
        raise LoadError(f"{path}: the file contains no vertices")
    per = len(rows[0][1].replace(",", " ").replace(";", " ").split())
    return _numbers(path, rows, per), names, rows


def _line_of_row(path: Path, row: int) -> int:
    """The line number of data row ``row`` (0-based) of a text file, for messages."""
    from .fixups import decode_text

    _, _, rows = _slow_table(path, decode_text(path.read_bytes()))
    return rows[row][0]


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
