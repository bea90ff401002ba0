"""Camera path files: JSON or TOML, validated on load, written back losslessly.

Schema (version 1; docs/camera.md shows full examples)::

    version        optional, must be 1
    interpolation  optional default mode: "linear" | "catmull_rom" | "monotone" | "step"
                   (default "catmull_rom")
    easing         optional default easing: "linear" | "ease-in" | "ease-out" |
                   "ease-in-out" | "smoothstep" (default "linear")
    keyframes      list (TOML: [[keyframes]] tables) of at least one keyframe:
        time           seconds, number >= 0, strictly increasing        (required)
        position       [x, y, z] world units                           (required)
        target         [x, y, z] look-at point           } exactly one of the two
        orientation    [x, y, z, w] quaternion, non-zero }
        fov            vertical field of view, degrees in (0, 180)     (on all keys or none)
        interpolation  mode of the segment starting at this key        (optional)
        easing         easing of the segment starting at this key      (optional)

Anything else is an error. Every problem raises ``engine.errors.EngineError`` whose
message names the file, the keyframe index and the field, e.g.
``tour.json: keyframe 2: time: must be greater than the previous key's time 4.0``.
That includes values no pose can be computed from: coordinates beyond ``MAX_COORDINATE``
(1e150: squared distances between keys would overflow float64), numbers too large for a
float (a 400-digit integer), and keys so close in time for their distance that the
curve's slope overflows.
Files are parsed with ``json`` / ``tomllib`` only: nothing is evaluated or unpickled.

Scale: the keys are checked and stored as arrays (``CameraPath.from_arrays``), and a
JSON file is decoded key by key into those arrays (each key object is turned into a few
numbers as soon as it is parsed, so no tree of a million dicts and lists is kept): a
path of 10^6 keyframes loads in seconds and about the size of its text in memory. A
file that breaks a rule is checked again key by key to name the first problem exactly.
"""

from __future__ import annotations

import array
import json
import math
from pathlib import Path

import numpy as np

from ..errors import EngineError
from .camera_path import CameraPath, Keyframe
from .easing import EASINGS
from .interpolation import MODES

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

__all__ = [
    "PATH_SUFFIXES",
    "is_path_file",
    "load_path",
    "path_from_dict",
    "path_to_dict",
    "save_path",
]

PATH_SUFFIXES = (".json", ".toml")
MAX_COORDINATE = 1e150  # larger coordinates overflow float64 in the pose computations
TOP_KEYS = ("version", "interpolation", "easing", "keyframes")
KEY_FIELDS = ("time", "position", "target", "orientation", "fov", "interpolation", "easing")


def is_path_file(name) -> bool:
    """True when ``name`` ends in .json or .toml (case-insensitive)."""
    return str(name).lower().endswith(PATH_SUFFIXES)


def _number(v, where: str, limit: float | None = None) -> float:
    # bool is an int subclass in Python; true/false are not numbers in a path file.
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise EngineError(f"{where}: must be a number, got {v!r}")
    try:
        x = float(v)
    except OverflowError:
        digits = len(str(abs(v)))
        raise EngineError(f"{where}: a {digits}-digit integer is too large for a number "
                          f"(at most about 1.8e308)") from None
    if not math.isfinite(x):
        raise EngineError(f"{where}: must be finite, got {v!r}")
    if limit is not None and abs(x) > limit:
        raise EngineError(f"{where}: {x:g} is too large: coordinates must be within "
                          f"+-{limit:g} (beyond it the camera pose overflows)")
    return x


def _vector(v, n: int, where: str, limit: float | None = None) -> list[float]:
    if not isinstance(v, list):
        raise EngineError(f"{where}: must be a list of {n} numbers, got {v!r}")
    if len(v) != n:
        raise EngineError(f"{where}: must have {n} numbers, got {len(v)}")
    return [_number(x, f"{where}[{i}]", limit) for i, x in enumerate(v)]


def _choice(v, allowed, where: str) -> str:
    if v not in allowed:
        raise EngineError(f"{where}: must be one of {', '.join(allowed)}, got {v!r}")
    return v


def _check_top(data, source: str):
    if not isinstance(data, dict):
        raise EngineError(f"{source}: a camera path must be a table/object with 'keyframes'")
    for k in data:
        if k not in TOP_KEYS:
            raise EngineError(f"{source}: {k}: unknown key (allowed: {', '.join(TOP_KEYS)})")
    if "version" in data and (isinstance(data["version"], bool) or data["version"] != 1):
        raise EngineError(f"{source}: version: only version 1 is supported, got "
                          f"{data['version']!r}")
    interp = _choice(data.get("interpolation", "catmull_rom"), MODES, f"{source}: interpolation")
    easing = _choice(data.get("easing", "linear"), tuple(EASINGS), f"{source}: easing")
    keys = data.get("keyframes")
    if not isinstance(keys, (list, _Columns)) or not len(keys):
        raise EngineError(f"{source}: keyframes: must be a non-empty list of keyframes")
    return interp, easing, keys


def path_from_dict(data, source: str = "<path>") -> CameraPath:
    """Validate parsed path data (dicts/lists as from JSON or TOML) into a CameraPath.

    The keys are checked with array operations; when a rule is broken they are checked
    again one by one so the error names the first bad keyframe and field exactly.
    ``source`` names the origin in error messages. Raises EngineError (see module doc).
    """
    interp, easing, keys = _check_top(data, source)
    cols = keys if isinstance(keys, _Columns) else _Columns.of(keys)
    if cols is not None:
        path = _from_columns(cols, interp, easing, source)
        if path is not None:
            return path
    if isinstance(keys, _Columns):
        raise _Recheck  # load_path parses again into plain lists for exact messages
    return _path_key_by_key(keys, interp, easing, source)


def _path_key_by_key(keys, interp, easing, source) -> CameraPath:
    """The reference check, one key at a time (exact messages for broken files)."""
    path = CameraPath(interpolation=interp, easing=easing)
    prev_time = None
    has_fov = None
    for i, kd in enumerate(keys):
        here = f"{source}: keyframe {i}"
        if not isinstance(kd, dict):
            raise EngineError(f"{here}: must be a table/object, got {kd!r}")
        for k in kd:
            if k not in KEY_FIELDS:
                raise EngineError(f"{here}: {k}: unknown field (allowed: {', '.join(KEY_FIELDS)})")
        for k in ("time", "position"):
            if k not in kd:
                raise EngineError(f"{here}: {k}: missing (every keyframe needs time and position)")
        t = _number(kd["time"], f"{here}: time")
        if t < 0:
            raise EngineError(f"{here}: time: must be >= 0, got {t}")
        if prev_time is not None and not t > prev_time:
            raise EngineError(f"{here}: time: must be greater than the previous key's time "
                              f"{prev_time} (got {t})")
        prev_time = t
        pos = _vector(kd["position"], 3, f"{here}: position", MAX_COORDINATE)
        if ("target" in kd) == ("orientation" in kd):
            raise EngineError(f"{here}: target/orientation: give exactly one of the two")
        target = orient = None
        if "target" in kd:
            target = _vector(kd["target"], 3, f"{here}: target", MAX_COORDINATE)
            if target == pos:
                raise EngineError(f"{here}: target: equals position (no view direction)")
        else:
            orient = _vector(kd["orientation"], 4, f"{here}: orientation")
            if not any(orient):
                raise EngineError(f"{here}: orientation: must be a non-zero quaternion")
        fov = None
        if "fov" in kd:
            fov = _number(kd["fov"], f"{here}: fov")
            if not 0 < fov < 180:
                raise EngineError(f"{here}: fov: must be in (0, 180) degrees, got {fov}")
        if has_fov is not None and has_fov != (fov is not None):
            raise EngineError(f"{here}: fov: give fov on every keyframe or on none")
        has_fov = fov is not None
        ki = _choice(kd["interpolation"], MODES, f"{here}: interpolation") \
            if "interpolation" in kd else None
        ke = _choice(kd["easing"], tuple(EASINGS), f"{here}: easing") if "easing" in kd else None
        try:
            path.append(Keyframe(t, pos, target, orient, fov, ki, ke))
        except ValueError as exc:  # defensive: Keyframe re-checks the same rules
            raise EngineError(f"{here}: {exc}") from None
    _check_finite_curve(path, source)
    return path


def _check_finite_curve(path: CameraPath, source: str):
    """Refuse a path whose curve cannot be evaluated to finite poses: the slopes of
    keys too close in time for their distance overflow."""
    _, _, _, rot, _, tangents, _ = path._arrays()
    for name, m in tangents.items():
        bad = ~np.isfinite(m).all(axis=1)
        if bad.any():
            i = int(np.argmax(bad))
            raise EngineError(f"{source}: keyframe {i}: {name}: the change from its "
                              f"neighbouring keys is too fast for their times (the curve's "
                              f"slope overflows); move the keys apart in time")
    if rot is not None and not np.isfinite(rot).all():
        i = int(np.argmax(~np.isfinite(rot).all(axis=1)))
        raise EngineError(f"{source}: keyframe {i}: orientation: no finite rotation")


class _Recheck(Exception):
    """The streamed columns broke a rule: parse again for the exact message."""


_NUMBER = (int, float)
_NUMBER_SET = frozenset(_NUMBER)
_NAN3 = (math.nan,) * 3
_NAN4 = (math.nan,) * 4


class _Columns:
    """Keyframes as columns (array.array of doubles, lists of names): what the JSON
    decoder hook builds while parsing, or ``of(list of dicts)``. ``ok`` is False once a
    key broke a structural rule (then the file is checked key by key)."""

    def __init__(self):
        self.times = array.array("d")
        self.pos = array.array("d")
        self.tgt = array.array("d")
        self.quat = array.array("d")
        self.fov = array.array("d")
        self.modes: list = []
        self.easings: list = []
        self.count = 0
        self.fov_count = 0
        self.ok = True

    def __len__(self):
        return self.count

    def add(self, kd) -> bool:
        """Append one key object (a dict, or the (name, value) pairs the JSON decoder
        gives); False when it breaks a rule the columns cannot carry (the file is then
        checked key by key)."""
        t = p = tg = q = f = mode = ease = None
        for name, v in (kd.items() if type(kd) is dict else kd):
            if name == "time":
                t = v
            elif name == "position":
                p = v
            elif name == "target":
                tg = v
            elif name == "orientation":
                q = v
            elif name == "fov":
                f = v
            elif name == "interpolation":
                mode = v
            elif name == "easing":
                ease = v
            else:
                return False
        if type(t) not in _NUMBER or type(p) is not list or len(p) != 3 \
                or (tg is None) == (q is None):
            return False
        if tg is not None:
            if type(tg) is not list or len(tg) != 3 or not _NUMBER_SET.issuperset(map(type, tg)):
                return False
            q = _NAN4
        elif type(q) is not list or len(q) != 4 or not _NUMBER_SET.issuperset(map(type, q)):
            return False
        else:
            tg = _NAN3
        if not _NUMBER_SET.issuperset(map(type, p)) or (f is not None and type(f) not in _NUMBER):
            return False
        try:  # an integer too large for a double fails here, before anything is kept
            row = (float(t), float(p[0]), float(p[1]), float(p[2]),
                   float(tg[0]), float(tg[1]), float(tg[2]),
                   float(q[0]), float(q[1]), float(q[2]), float(q[3]),
                   0.0 if f is None else float(f))
        except OverflowError:
            return False
        self.times.append(row[0])
        self.pos.extend(row[1:4])
        self.tgt.extend(row[4:7])
        self.quat.extend(row[7:11])
        if f is not None:
            self.fov.append(row[11])
            self.fov_count += 1
        self.modes.append(mode)
        self.easings.append(ease)
        self.count += 1
        return True

    @classmethod
    def of(cls, keys) -> _Columns | None:
        cols = cls()
        for kd in keys:
            if type(kd) is not dict or not cols.add(kd):
                return None
        return cols


def _from_columns(c: _Columns, interp, easing, source) -> CameraPath | None:
    """The path from columns, with every rule checked on arrays; None when a rule is
    broken (the caller re-checks key by key for the message)."""
    k = c.count
    if not c.ok or c.fov_count not in (0, k):
        return None
    t = np.frombuffer(c.times, np.float64)
    p = np.frombuffer(c.pos, np.float64).reshape(k, 3)
    tg = np.frombuffer(c.tgt, np.float64).reshape(k, 3)
    q = np.frombuffer(c.quat, np.float64).reshape(k, 4)
    has_t = ~np.isnan(tg[:, 0])
    all_t = bool(has_t.all())
    fov = np.frombuffer(c.fov, np.float64) if c.fov_count else None

    def rows(a, mask):
        return a if mask is None else a[mask]

    t_rows = None if all_t else has_t
    q_rows = None if not has_t.any() else ~has_t
    ok = (np.isfinite(t).all() and (t >= 0).all() and (k < 2 or (t[1:] > t[:-1]).all())
          and np.isfinite(p).all() and (np.abs(p) <= MAX_COORDINATE).all())
    if ok and has_t.any():
        tgt = rows(tg, t_rows)
        ok = (np.isfinite(tgt).all() and (np.abs(tgt) <= MAX_COORDINATE).all()
              and not (tgt == rows(p, t_rows)).all(axis=1).any())
    if ok and not all_t:
        quat = rows(q, q_rows)
        ok = np.isfinite(quat).all() and (np.abs(quat).sum(axis=1) > 0).all()
    if not ok or (fov is not None and not ((fov > 0) & (fov < 180)).all()):
        return None
    for names, allowed in ((c.modes, MODES), (c.easings, tuple(EASINGS))):
        if any(v is not None and v not in allowed for v in set(names)):
            return None
    path = CameraPath.from_arrays(
        t, p, tg if has_t.any() else None, None if all_t else q, fov,
        c.modes, c.easings, interpolation=interp, easing=easing, _checked=True)
    _check_finite_curve(path, source)
    return path


def _decode_json(text: str):
    """json.loads with key objects turned into columns as they are parsed."""
    cols = _Columns()

    def hook(pairs):
        if not cols.ok or any(name == "keyframes" for name, _ in pairs):
            return dict(pairs)
        if cols.add(pairs):
            return cols  # a stand-in entry: the list holds the columns object
        cols.ok = False
        return dict(pairs)

    data = json.loads(text, object_pairs_hook=hook)
    if isinstance(data, dict) and isinstance(data.get("keyframes"), list):
        entries = data["keyframes"]
        if cols.ok and entries and all(e is cols for e in entries) \
                and len(entries) == cols.count:
            data["keyframes"] = cols
            return data
    raise _Recheck


def load_path(filename) -> CameraPath:
    """Read and validate a .json or .toml camera path file.

    Raises EngineError naming the file for a missing/unreadable file, a syntax error
    (with line and column), or any schema violation (see module doc).
    """
    p = Path(filename)
    if not is_path_file(p):
        raise EngineError(f"{p}: camera path files must end in .json or .toml")
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise EngineError(f"{p}: camera path file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise EngineError(f"{p}: cannot read camera path file: {exc}") from None
    try:
        if p.suffix.lower() == ".json":
            try:
                data = _decode_json(text)
            except _Recheck:
                data = None
            text = None  # the columns hold the keys now: let the text go
            if data is not None:
                try:
                    return path_from_dict(data, str(p))
                except _Recheck:
                    pass
            data = json.loads(p.read_text(encoding="utf-8"))  # name the broken rule exactly
        else:
            data = tomllib.loads(text)
    except json.JSONDecodeError as exc:
        raise EngineError(f"{p}: invalid JSON at line {exc.lineno} column {exc.colno}: "
                          f"{exc.msg}") from None
    except tomllib.TOMLDecodeError as exc:
        raise EngineError(f"{p}: invalid TOML: {exc}") from None
    except RecursionError:
        raise EngineError(f"{p}: nested too deeply to be a camera path") from None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        raise EngineError(f"{p}: a number cannot be read: {' '.join(str(exc).split())}"
                          ) from None
    return path_from_dict(data, str(p))


def path_to_dict(path: CameraPath) -> dict:
    """Plain dict (schema version 1) of ``path``; floats kept at full precision."""
    keys = []
    for k in path.keyframes:
        d = {"time": k.time, "position": [float(v) for v in k.position]}
        if k.target is not None:
            d["target"] = [float(v) for v in k.target]
        else:
            d["orientation"] = [float(v) for v in k.orientation]
        if k.fov is not None:
            d["fov"] = k.fov
        if k.interpolation is not None:
            d["interpolation"] = k.interpolation
        if k.easing is not None:
            d["easing"] = k.easing
        keys.append(d)
    return {"version": 1, "interpolation": path.interpolation, "easing": path.easing,
            "keyframes": keys}


def _toml_value(v) -> str:
    if isinstance(v, str):
        return json.dumps(v)  # the names used here are ASCII: a JSON string is a TOML string
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, float):
        return repr(v)  # shortest round-trip form; finite by construction
    return str(v)


def save_path(path: CameraPath, filename) -> Path:
    """Write ``path`` to ``filename`` (.json or .toml); reloading gives the same keys.

    Raises EngineError for another suffix or an empty path, OSError when unwritable.
    """
    p = Path(filename)
    if not is_path_file(p):
        raise EngineError(f"{p}: camera path files must end in .json or .toml")
    if not len(path):
        raise EngineError(f"{p}: refusing to save a camera path with no keyframes")
    data = path_to_dict(path)
    if p.suffix.lower() == ".json":
        text = json.dumps(data, indent=2) + "\n"
    else:
        lines = [f"{k} = {_toml_value(data[k])}" for k in ("version", "interpolation", "easing")]
        for kd in data["keyframes"]:
            lines += ["", "[[keyframes]]"] + [f"{k} = {_toml_value(v)}" for k, v in kd.items()]
        text = "\n".join(lines) + "\n"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p
