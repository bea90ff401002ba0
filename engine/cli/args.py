"""argparse types and the one-line-error parser shared by ``frustum`` and the example
scripts (``engine.cli.examples``). Each type raises ``argparse.ArgumentTypeError`` with a
message naming the expected form and the value given.
"""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path

# float32 depth has 24 bits of mantissa: beyond this the scene is a point at any size.
MAX_CAMERA_DISTANCE = 1e15


class FileCamera:
    """``--camera gltf:N``: the N-th camera (0-based) defined in the loaded file."""

    def __init__(self, index: int):
        self.index = int(index)

    def __repr__(self) -> str:
        return f"gltf:{self.index}"


def _camera_spec(text: str):
    """'az,el[,dist]' in degrees/world units -> (azimuth, elevation, distance or None);
    a value ending in .json/.toml is a camera path file -> Path (loaded later);
    'gltf:N' -> FileCamera(N), the file's own camera N."""
    from ..animation.pathfile import is_path_file

    if text.lower().startswith("gltf:"):
        index = text[5:]
        if not index.isdigit():
            raise argparse.ArgumentTypeError(
                f"--camera gltf:N needs a camera number N >= 0, got {text!r}")
        return FileCamera(int(index))
    if is_path_file(text):
        return Path(text)
    parts = text.split(",")
    try:
        vals = [float(p) for p in parts]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--camera must be AZ,EL[,DIST] numbers or a .json/.toml path file, got {text!r}")
    if len(vals) not in (2, 3) or not all(math.isfinite(v) for v in vals):
        raise argparse.ArgumentTypeError(f"--camera must be AZ,EL[,DIST], got {text!r}")
    if not -90.0 <= vals[1] <= 90.0:
        raise argparse.ArgumentTypeError(
            f"--camera elevation must be in [-90, 90] degrees, got {vals[1]}")
    if len(vals) == 3 and not 0 < vals[2] <= MAX_CAMERA_DISTANCE:
        raise argparse.ArgumentTypeError(
            f"--camera distance must be in (0, {MAX_CAMERA_DISTANCE:g}] world units, got {vals[2]}")
    return vals[0], vals[1], vals[2] if len(vals) == 3 else None


def index_arg(text: str) -> int:
    """argparse type: a whole number >= 0."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text!r}")
    return v


def indices_arg(text: str) -> tuple[int, ...]:
    """argparse type: whole numbers >= 0 separated by commas ("0" or "0,1,0")."""
    parts = text.split(",")
    try:
        return tuple(index_arg(p.strip()) for p in parts)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"expected N or N,M,... whole numbers >= 0, got {text!r}") from None


def non_negative_seconds_arg(text: str) -> float:
    """argparse type: a finite number of seconds >= 0."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}")
    if not (math.isfinite(v) and v >= 0):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds >= 0, got {text!r}")
    return v


def folder_arg(text: str) -> str:
    """argparse type: an existing folder, as an absolute path (Dask workers get the same
    path)."""
    path = Path(text).expanduser()
    if not text or not path.is_dir():
        raise argparse.ArgumentTypeError(f"expected an existing folder, got {text!r}")
    return str(path.resolve())


def count_arg(text: str) -> int:
    """argparse type: a whole number >= 1."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}")
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {text!r}")
    return v


def size_arg(text: str):
    """argparse type: WIDTHxHEIGHT in pixels."""
    from ..render.renderer import parse_size

    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc))


def out_arg(text: str) -> str:
    """argparse type for --out: any name but an empty one (``--out "$OUT"`` with OUT
    unset would otherwise mean the current folder, whose frames would be replaced)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            f"the output name is empty ({text!r}; an unset variable?): give a file or "
            f"folder name")
    return text


def seconds_arg(text: str) -> float:
    """argparse type: a finite number of seconds > 0 ('inf' and 'nan' refused)."""
    return _positive(text, "a finite number of seconds > 0")


def factor_arg(text: str) -> float:
    """argparse type of a factor (--animation-speed): a finite number > 0 ('inf' and
    'nan' refused)."""
    return _positive(text, "a finite number > 0")


def exposure_arg(text: str) -> float:
    """argparse type of --exposure: ``factor_arg`` at most MAX_EXPOSURE
    (engine.scene.exposure)."""
    from ..scene.exposure import MAX_EXPOSURE

    v = factor_arg(text)
    if v > MAX_EXPOSURE:
        raise argparse.ArgumentTypeError(f"must be a finite number > 0 and at most "
                                         f"{MAX_EXPOSURE:g}, got {text!r}")
    return v


def _positive(text: str, finite: str | None = None) -> float:
    """argparse type: a number > 0; with ``finite`` (the wording, e.g. "a finite number
    > 0") also finite, every refused value ('nan', 'inf', '-1') given that one wording."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}")
    if finite is not None and not (math.isfinite(v) and v > 0):
        raise argparse.ArgumentTypeError(f"must be {finite}, got {text!r}")
    if not v > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text!r}")
    return v


class ArgumentParser(argparse.ArgumentParser):
    """argparse with one-line errors: ``PROG: error: MESSAGE (see PROG --help)``, exit 2,
    instead of the usage block first; a value starting with '-' and a digit is a value,
    not an option (``--size -5x10`` gets the size error, ``--camera -30,20`` works), as
    argparse already does for plain negative numbers (``--fps -3``)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # argparse's own matcher takes only "-3" and "-.5" as values; no option of the
        # engine's looks like "-<digit>", so every such word is a value
        self._negative_number_matcher = re.compile(r"^-\.?\d")

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _debug_option(p: argparse.ArgumentParser, default):
    p.add_argument("--debug", action="store_true", default=default,
                   help="show tracebacks and debug logs")


def _sizes(text: str) -> list[int]:
    """'1e3,1e6' -> [1000, 1000000]."""
    try:
        vals = [float(t) for t in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--sizes must be numbers like 1e3,1e6, got {text!r}")
    if not vals or any(not (1 <= v <= 1e9) or v != int(v) for v in vals):
        raise argparse.ArgumentTypeError(f"--sizes must be whole numbers in [1, 1e9], got {text!r}")
    return sorted({int(v) for v in vals})


def color_arg(text: str):
    """argparse type: a colour -> (r, g, b, 1.0) floats in [0, 1]. Accepts what Pillow's
    ImageColor does (CSS names, #rgb, #rrggbb) or three comma-separated floats in [0, 1]."""
    from PIL import ImageColor

    parts = text.split(",")
    if len(parts) == 3:
        try:
            vals = [float(p) for p in parts]
        except ValueError:
            vals = []
        if len(vals) == 3 and all(0.0 <= v <= 1.0 for v in vals):
            return (*vals, 1.0)
        raise argparse.ArgumentTypeError(f"R,G,B must be three numbers in [0, 1], got {text!r}")
    try:
        rgb = ImageColor.getrgb(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a colour name, #rrggbb or R,G,B in [0, 1], got {text!r}") from None
    return (*(c / 255.0 for c in rgb[:3]), 1.0)


def background_arg(text: str):
    """argparse type of --background: ``color_arg``, or "transparent" -> (0, 0, 0, 0):
    empty pixels get alpha 0 in formats with alpha, black in the others
    (engine.io.image.composite)."""
    if text.strip().lower() == "transparent":
        return (0.0, 0.0, 0.0, 0.0)
    return color_arg(text)


def _css_colour(text: str, where: str):
    """Refuse a colour of --fog/--sky that Pillow's ImageColor does not know (CSS names,
    #rgb, #rrggbb): the only forms there, where ':' and ',' separate the fields."""
    from PIL import ImageColor

    if text.strip().lower() == "transparent":
        return
    try:
        ImageColor.getcolor(text, "RGBA")
    except ValueError:
        raise argparse.ArgumentTypeError(f"{where}: unknown colour {text!r} (use a CSS name "
                                         "or #rrggbb)") from None


def fog_arg(text: str):
    """argparse type of --fog -> engine.scene.Fog: ``linear:START:END[:COLOR]``,
    ``exp:DENSITY[:COLOR]`` or ``exp2:DENSITY[:COLOR]`` (distances in world units,
    density in 1 / world units; COLOR a CSS name or #rrggbb, default: the sky's colour
    in each pixel's direction, or the background)."""
    from ..scene.atmosphere import FOG_MODES, Fog

    mode, *rest = text.strip().split(":")
    counts = {"linear": 2, "exp": 1, "exp2": 1}
    if mode not in FOG_MODES or len(rest) not in (counts[mode], counts[mode] + 1):
        raise argparse.ArgumentTypeError(
            f"--fog must be linear:START:END[:COLOR], exp:DENSITY[:COLOR] or "
            f"exp2:DENSITY[:COLOR], got {text!r}")
    n = counts[mode]
    try:
        nums = [float(v) for v in rest[:n]]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--fog {text!r}: {':'.join(rest[:n])!r} is not "
                                         "a number") from None
    color = rest[n] if len(rest) > n else None
    if color is not None:
        _css_colour(color, f"--fog {text!r}: fog color")
    try:
        if mode == "linear":
            return Fog(mode, start=nums[0], end=nums[1], color=color)
        return Fog(mode, density=nums[0], color=color)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"--fog {text!r}: {e}") from None


def environment_arg(text: str):
    """argparse type of --environment -> engine.scene.Environment, or None for "none":
    an equirectangular image file (.png, .jpg or .hdr; engine.scene.environment) or a
    uniform colour (``color_arg``'s forms)."""
    from pathlib import Path

    from ..scene.environment import Environment

    if text.strip().lower() == "none":
        return None
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty (give an image file, a colour or none)")
    path = Path(text)
    if path.suffix.lower() in (".png", ".jpg", ".jpeg", ".hdr") or path.exists():
        try:
            return Environment.from_file(path)
        except (OSError, ValueError) as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    try:
        rgb = color_arg(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"must be an image file (.png, .jpg, .hdr), a colour (a CSS name, #rrggbb "
            f"or R,G,B in [0, 1]) or none, got {text!r}") from None
    return Environment(rgb)


def sky_arg(text: str):
    """argparse type of --sky -> engine.scene.Sky: ``HORIZON,ZENITH[,GROUND]`` colours
    (CSS names or #rrggbb); or "environment": the --environment shown behind the scene
    (engine.scene.atmosphere.SKY_ENVIRONMENT)."""
    from ..scene.atmosphere import SKY_ENVIRONMENT, Sky

    if text.strip().lower() == SKY_ENVIRONMENT:
        return SKY_ENVIRONMENT
    parts = [p.strip() for p in text.split(",")]
    if len(parts) not in (2, 3) or not all(parts):
        raise argparse.ArgumentTypeError(
            f"--sky must be HORIZON,ZENITH[,GROUND] colours (CSS names or #rrggbb), "
            f"got {text!r}")
    for part, field in zip(parts, ("horizon", "zenith", "ground")):
        _css_colour(part, f"--sky {text!r}: sky {field}")
    try:
        return Sky(*parts)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"--sky {text!r}: {e}") from None
