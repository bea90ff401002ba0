"""The glTF 2.0 container: JSON (a .gltf file or a GLB's JSON chunk), buffers and
images, with every field read through checked getters that name its JSON path.

Why not a glTF library (pygltflib was considered): the container is small (JSON plus a
12-byte GLB header and two chunks), and what the engine needs from it is validation that
names the exact JSON path of a bad value (``accessors[3].count``) and size checks
before any allocation; pygltflib maps JSON onto dataclasses without checking types or
ranges, so every field would be re-checked here anyway.

Sources: Khronos glTF 2.0 specification (2.0.1), sections "JSON Encoding", "URIs",
"GLB File Format Specification", "Buffers and Buffer Views".

URIs (spec "URIs"): ``data:`` URIs (base64, or percent-encoded text) are decoded;
anything else is a relative reference, percent-decoded (RFC 3986) and resolved against
the folder of the .gltf/.glb. Absolute paths and other schemes (http:, file:) are
refused (they are not relative references); the file a relative reference leads to is
read by ``engine.io.references`` (inside the model's folder or the ``root`` the caller
gave, a regular file): a file from elsewhere must not make the engine read arbitrary
files.
"""

from __future__ import annotations

import base64
import binascii
import math
import posixpath
import struct
from pathlib import Path
from urllib.parse import unquote_to_bytes

from ...errors import LoadError
from ..jsontext import parse_json
from ..references import References, RefusedFile

__all__ = ["Document", "read_document"]

_GLB_MAGIC = b"glTF"
_GLB_JSON, _GLB_BIN = 0x4E4F534A, 0x004E4942  # chunk types "JSON", "BIN\0"
_MISSING = object()


def read_document(path: Path, data: bytes, refs: References | None = None) -> Document:
    """The glTF document in ``data`` (the bytes of ``path``; GLB when it starts with the
    magic 'glTF' and the suffix is .glb); ``refs``: the files its URIs may read (default:
    those in the file's folder). Raises LoadError naming the file and what is wrong with
    the container or the JSON."""
    glb = path.suffix.lower() == ".glb"
    if not glb and data.startswith(_GLB_MAGIC):
        raise LoadError(f"{path}: binary glTF (GLB) data in a .gltf file (rename it to .glb)")
    if glb:
        doc, binary = _split_glb(path, data)
    else:
        doc, binary = _parse(path, data, ""), None
    return Document(path, doc, binary, len(data), refs)


def _parse(path: Path, raw: bytes, where: str) -> dict:
    """The checked top-level JSON object: an ``asset`` object with version 2.x."""
    doc = parse_json(path, raw, where, label="not a glTF file: ")
    if not isinstance(doc, dict) or not isinstance(doc.get("asset"), dict):
        raise LoadError(f"{path}: not a glTF file: no 'asset' object{where}, which glTF "
                        "requires")
    version = doc["asset"].get("version")
    if not isinstance(version, str) or version.split(".")[0] != "2":
        raise LoadError(f"{path}: glTF version {version!r} is not supported (only 2.x)")
    return doc


def _split_glb(path: Path, data: bytes):
    """(parsed JSON chunk, BIN chunk bytes or None) of a GLB file.

    GLB: a 12-byte header (magic 'glTF', uint32 version 2, uint32 total length), then
    chunks of uint32 length, uint32 type and data, the first one JSON, an optional second
    one BIN; other chunk types are skipped (all little-endian).
    """
    n = len(data)
    if not data.startswith(_GLB_MAGIC):
        hint = " (it is JSON text: a .gltf file?)" if data.lstrip()[:1] == b"{" else ""
        raise LoadError(f"{path}: not a GLB file: it does not start with 'glTF'{hint}")
    if n < 12:
        raise LoadError(f"{path}: truncated GLB: {n} bytes, shorter than the 12-byte header")
    version, length = struct.unpack_from("<II", data, 4)
    if version != 2:
        raise LoadError(f"{path}: GLB version {version} is not supported (only glTF 2.0)")
    if length > n:
        raise LoadError(f"{path}: truncated GLB: the header declares {length:,} bytes but the "
                        f"file has {n:,} bytes ({length - n:,} missing)")
    if length < n:
        raise LoadError(f"{path}: corrupt GLB: the file has {n:,} bytes, {n - length:,} more "
                        f"than the header declares ({length:,})")
    off, index = 12, 0
    json_chunk = binary = None
    view = memoryview(data)
    while off < n:
        if off + 8 > n:
            raise LoadError(f"{path}: truncated GLB: chunk {index} header cut at byte {n:,}")
        size, kind = struct.unpack_from("<II", data, off)
        name = {_GLB_JSON: "JSON", _GLB_BIN: "BIN"}.get(kind, f"0x{kind:08x}")
        if off + 8 + size > n:
            raise LoadError(f"{path}: truncated GLB: chunk {index} ({name}) declares "
                            f"{size:,} bytes but only {n - off - 8:,} follow")
        body = view[off + 8: off + 8 + size]
        if index == 0:
            if kind != _GLB_JSON:
                raise LoadError(f"{path}: corrupt GLB: the first chunk is {name}, not JSON")
            json_chunk = _parse(path, bytes(body), " in the JSON chunk")
        elif index == 1 and kind == _GLB_BIN:
            binary = body
        off += 8 + size
        index += 1
    if json_chunk is None:
        raise LoadError(f"{path}: truncated GLB: no JSON chunk after the header")
    return json_chunk, binary


class Document:
    """A parsed glTF document: ``json`` (the top-level dict), the GLB ``binary`` chunk
    (a memoryview, or None), ``folder`` (for relative URIs), ``file_size`` and ``refs``
    (the ``References`` its URIs may read; default: the file's folder).

    The getters take the JSON path of the value they read (``where``) and raise
    LoadError("<file>: <where>: <what is wrong>") for a missing required field, a wrong
    type or a value out of range.
    """

    def __init__(self, path: Path, doc: dict, binary, file_size: int,
                 refs: References | None = None):
        self.path = Path(path)
        self.refs = References(self.path) if refs is None else refs
        self.json = doc
        self.binary = binary
        self.folder = self.path.parent
        self.file_size = int(file_size)
        self._buffers: dict[int, memoryview] = {}

    # ------------------------------------------------------------------ errors
    def error(self, where: str, what: str) -> LoadError:
        return LoadError(f"{self.path}: {where}: {what}")

    # ----------------------------------------------------------------- getters
    def array(self, name: str) -> list:
        """Top-level array ``name`` (empty when absent)."""
        v = self.json.get(name, [])
        if not isinstance(v, list):
            raise self.error(name, f"must be an array, got {_kind(v)}")
        return v

    def item(self, name: str, index: int) -> dict:
        """Object ``name[index]`` (index already checked by ``ref``)."""
        v = self.array(name)[index]
        if not isinstance(v, dict):
            raise self.error(f"{name}[{index}]", f"must be an object, got {_kind(v)}")
        return v

    def obj(self, d: dict, key: str, where: str, required: bool = False):
        """Object ``d[key]`` or None when absent (LoadError when required)."""
        v = d.get(key, _MISSING)
        if v is _MISSING:
            if required:
                raise self.error(where, f"'{key}' is required")
            return None
        if not isinstance(v, dict):
            raise self.error(f"{where}.{key}", f"must be an object, got {_kind(v)}")
        return v

    def list(self, d: dict, key: str, where: str, required: bool = False, min_len: int = 0):
        v = d.get(key, _MISSING)
        if v is _MISSING:
            if required:
                raise self.error(where, f"'{key}' is required")
            return []
        if not isinstance(v, list):
            raise self.error(f"{where}.{key}", f"must be an array, got {_kind(v)}")
        if len(v) < min_len:
            raise self.error(f"{where}.{key}", f"must have at least {min_len} "
                                               f"entr{'y' if min_len == 1 else 'ies'}")
        return v

    def integer(self, d: dict, key: str, where: str, default=_MISSING, lo: int | None = 0,
                hi: int | None = None) -> int:
        v = d.get(key, _MISSING)
        if v is _MISSING:
            if default is _MISSING:
                raise self.error(where, f"'{key}' is required")
            return default
        if isinstance(v, float) and v.is_integer() and abs(v) < 2**63:
            v = int(v)  # 3.0 is an integer in JSON
        if not isinstance(v, int) or isinstance(v, bool):
            raise self.error(f"{where}.{key}", f"must be an integer, got {_show(v)}")
        if lo is not None and v < lo:
            raise self.error(f"{where}.{key}", f"must be >= {lo:,}, got {v:,}")
        if hi is not None and v > hi:
            raise self.error(f"{where}.{key}", f"must be <= {hi:,}, got {_show(v)}")
        return v

    def value_number(self, value, where: str) -> float:
        """``value`` (found at ``where``) as a finite number."""
        return self.number({"": value}, "", where, _at=where)

    def number(self, d: dict, key: str, where: str, default=_MISSING, lo=None, hi=None,
               lo_open: bool = False, _at=None) -> float:
        v = d.get(key, _MISSING)
        at = f"{where}.{key}" if _at is None else _at
        if v is _MISSING:
            if default is _MISSING:
                raise self.error(where, f"'{key}' is required")
            return default
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            raise self.error(at, f"must be a number, got {_show(v)}")
        try:
            f = float(v)
        except OverflowError:
            f = math.inf
        if not math.isfinite(f):
            raise self.error(at, f"must be a finite number, got {_show(v)}")
        if lo is not None and (f <= lo if lo_open else f < lo):
            raise self.error(at, f"must be {'>' if lo_open else '>='} {lo:g}, got {f:g}")
        if hi is not None and f > hi:
            raise self.error(at, f"must be <= {hi:g}, got {f:g}")
        return f

    def numbers(self, d: dict, key: str, where: str, n: int, default=_MISSING) -> tuple:
        v = d.get(key, _MISSING)
        if v is _MISSING:
            if default is _MISSING:
                raise self.error(where, f"'{key}' is required")
            return default
        if not isinstance(v, list) or len(v) != n:
            raise self.error(f"{where}.{key}", f"must be an array of {n} numbers, got "
                                               f"{_show(v)}")
        out = []
        for i, x in enumerate(v):
            if not isinstance(x, (int, float)) or isinstance(x, bool):
                raise self.error(f"{where}.{key}[{i}]", f"must be a number, got {_show(x)}")
            try:
                f = float(x)
            except OverflowError:
                f = math.inf
            if not math.isfinite(f):
                raise self.error(f"{where}.{key}[{i}]", f"must be finite, got {_show(x)}")
            out.append(f)
        return tuple(out)

    def string(self, d: dict, key: str, where: str, default=_MISSING, choices=None) -> str:
        v = d.get(key, _MISSING)
        if v is _MISSING:
            if default is _MISSING:
                raise self.error(where, f"'{key}' is required")
            return default
        if not isinstance(v, str):
            raise self.error(f"{where}.{key}", f"must be a string, got {_show(v)}")
        if choices is not None and v not in choices:
            raise self.error(f"{where}.{key}", f"must be one of {', '.join(choices)}, "
                                               f"got {_show(v)}")
        return v

    def boolean(self, d: dict, key: str, where: str, default: bool) -> bool:
        v = d.get(key, default)
        if not isinstance(v, bool):
            raise self.error(f"{where}.{key}", f"must be true or false, got {_show(v)}")
        return v

    def index(self, value, where: str, array: str) -> int:
        """``value`` (found at ``where``) as an index into the top-level ``array``."""
        return self.ref({"": value}, "", where, array, _at=where)

    def ref(self, d: dict, key: str, where: str, array: str, default=_MISSING, _at=None):
        """Index ``d[key]`` into the top-level ``array``, checked to exist (``default``,
        e.g. None, when absent and not required)."""
        if key not in d and default is not _MISSING:
            return default
        at = f"{where}.{key}" if _at is None else _at
        v = d[key] if _at is not None else None
        if _at is None:
            v = self.integer(d, key, where)
        elif isinstance(v, float) and v.is_integer() and abs(v) < 2**63:
            v = int(v)
        if _at is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            raise self.error(at, f"must be an index (an integer >= 0), got {_show(v)}")
        have = len(self.array(array))
        if v >= have:
            raise self.error(at, f"refers to {array}[{v:,}] but the file has {have:,} {array}")
        return v

    def name(self, d: dict, where: str, fallback: str) -> str:
        v = d.get("name")
        return v if isinstance(v, str) and v else fallback

    # ----------------------------------------------------------------- buffers
    def buffer(self, index: int) -> memoryview:
        """Bytes of ``buffers[index]``, exactly ``byteLength`` long (index checked)."""
        if index in self._buffers:
            return self._buffers[index]
        where = f"buffers[{index}]"
        b = self.item("buffers", index)
        length = self.integer(b, "byteLength", where, lo=1)
        uri = b.get("uri")
        if uri is None:
            if self.binary is None or index != 0:
                what = ("has no 'uri' and the file has no GLB binary chunk"
                        if self.binary is None else
                        "has no 'uri'; only buffers[0] can be the GLB binary chunk")
                raise self.error(where, what)
            data = self.binary
            source = "the GLB binary chunk"
        else:
            if not isinstance(uri, str):
                raise self.error(f"{where}.uri", f"must be a string, got {_show(uri)}")
            data = self._read_uri(uri, f"{where}.uri", limit=length)
            source = f"{_short(uri)!r}"
        if len(data) < length:
            raise self.error(where, f"byteLength is {length:,} but {source} holds only "
                                    f"{len(data):,} bytes")
        view = memoryview(data)[:length]
        self._buffers[index] = view
        return view

    def _read_uri(self, uri: str, where: str, limit: int | None = None) -> bytes:
        """Bytes a URI refers to: a data: URI or a file next to the glTF (module doc).
        ``limit``: read at most this many bytes of a file."""
        if uri[:5].lower() == "data:":
            head, sep, payload = uri[5:].partition(",")
            if not sep:
                raise self.error(where, "data: URI without a ',' before its data")
            if head.lower().endswith(";base64"):
                try:
                    return base64.b64decode("".join(payload.split()), validate=True)
                except (binascii.Error, ValueError) as exc:
                    raise self.error(where, f"data: URI is not valid base64 ({exc})") from None
            return unquote_to_bytes(payload)
        scheme = uri.split(":", 1)[0] if ":" in uri.split("/", 1)[0] else ""
        if len(scheme) > 1:  # one letter: a Windows drive, refused below as absolute
            raise self.error(where, f"{scheme}: URIs are not fetched (only data: URIs and "
                                    f"files next to the glTF file): {_short(uri)!r}")
        try:
            rel = unquote_to_bytes(uri.split("#", 1)[0].split("?", 1)[0]).decode("utf-8")
        except UnicodeDecodeError:
            raise self.error(where, f"{_short(uri)!r} does not decode to a UTF-8 file "
                                    "name") from None
        rel = rel.replace("\\", "/")
        if not rel or rel.startswith("/") or (len(rel) > 1 and rel[1] == ":") or "\0" in rel:
            raise self.error(where, f"{_short(uri)!r} is not a relative reference to a file "
                                    "(absolute paths are refused)")
        target = self.folder / posixpath.normpath(rel)
        try:
            return self.refs.read(target, limit)
        except RefusedFile as exc:
            if str(exc) == "is missing":
                raise self.error(where, f"the file {_short(rel)!r} it names is missing "
                                        f"(looked for {_short(str(target), 200)})") from None
            raise self.error(where, f"{_short(rel)!r} {exc}") from None

    def buffer_view(self, index: int, where: str) -> tuple[memoryview, int | None]:
        """(bytes, byteStride or None) of ``bufferViews[index]`` (index checked)."""
        w = f"bufferViews[{index}]"
        v = self.item("bufferViews", index)
        buf = self.ref(v, "buffer", w, "buffers")
        offset = self.integer(v, "byteOffset", w, default=0)
        length = self.integer(v, "byteLength", w, lo=1)
        stride = self.integer(v, "byteStride", w, default=None, lo=4, hi=252)
        data = self.buffer(buf)
        if offset + length > len(data):
            raise self.error(w, f"byteOffset {offset:,} + byteLength {length:,} runs past the "
                                f"end of buffers[{buf}] ({len(data):,} bytes)")
        return data[offset: offset + length], stride

    def image_bytes(self, index: int) -> tuple[bytes, str]:
        """(encoded bytes, a label for messages) of ``images[index]``."""
        where = f"images[{index}]"
        im = self.item("images", index)
        if "uri" in im:
            uri = self.string(im, "uri", where)
            return self._read_uri(uri, f"{where}.uri"), _short(uri)
        view = self.ref(im, "bufferView", where, "bufferViews", default=None)
        if view is None:
            raise self.error(where, "has neither 'uri' nor 'bufferView'")
        data, _ = self.buffer_view(view, f"{where}.bufferView")
        return bytes(data), f"bufferViews[{view}]"


def _kind(v) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
            type(None): "null"}.get(type(v), "a number")


def _short(text: str, n: int = 60) -> str:
    text = str(text)
    return text if len(text) <= n else text[: n - 3] + "..."


def _show(v) -> str:
    if isinstance(v, list):  # its length: what "an array of n numbers" checks
        return f"an array of {len(v)}"
    if isinstance(v, dict):
        return _kind(v)
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}" if abs(v) < 10**30 else f"an integer of {len(str(abs(v)))} digits"
    return _short(repr(v), 40)
