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
Files are parsed with ``json`` / ``tomllib`` only: nothing is evaluated or unpickled.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

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
TOP_KEYS = ("version", "interpolation", "easing", "keyframes")
KEY_FIELDS = ("time", "position", "target", "orientation", "fov", "interpolation", "easing")


def is_path_file(name) -> bool:
    """True when ``name`` ends in .json or .toml (case-insensitive)."""
    return str(name).lower().endswith(PATH_SUFFIXES)


def _number(v, where: str) -> float:
    # bool is an int subclass in Python; true/false are not numbers in a path file.
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise EngineError(f"{where}: must be a number, got {v!r}")
    x = float(v)
    if not math.isfinite(x):
        raise EngineError(f"{where}: must be finite, got {v!r}")
    return x


def _vector(v, n: int, where: str) -> list[float]:
    if not isinstance(v, list):
        raise EngineError(f"{where}: must be a list of {n} numbers, got {v!r}")
    if len(v) != n:
        raise EngineError(f"{where}: must have {n} numbers, got {len(v)}")
    return [_number(x, f"{where}[{i}]") for i, x in enumerate(v)]


def _choice(v, allowed, where: str) -> str:
    if v not in allowed:
        raise EngineError(f"{where}: must be one of {', '.join(allowed)}, got {v!r}")
    return v


def path_from_dict(data, source: str = "<path>") -> CameraPath:
    """Validate parsed path data (dicts/lists as from JSON or TOML) into a CameraPath.

    ``source`` names the origin in error messages. Raises EngineError (see module doc).
    """
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
    if not isinstance(keys, list) or not keys:
        raise EngineError(f"{source}: keyframes: must be a non-empty list of keyframes")
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
        pos = _vector(kd["position"], 3, f"{here}: position")
        if ("target" in kd) == ("orientation" in kd):
            raise EngineError(f"{here}: target/orientation: give exactly one of the two")
        target = orient = None
        if "target" in kd:
            target = _vector(kd["target"], 3, f"{here}: target")
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
    return path


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
            data = json.loads(text)
        else:
            data = tomllib.loads(text)
    except json.JSONDecodeError as exc:
        raise EngineError(f"{p}: invalid JSON at line {exc.lineno} column {exc.colno}: "
                          f"{exc.msg}") from None
    except tomllib.TOMLDecodeError as exc:
        raise EngineError(f"{p}: invalid TOML: {exc}") from None
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
