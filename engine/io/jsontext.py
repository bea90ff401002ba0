"""JSON text from files, parsed so that any input gives a value or one ``LoadError``.

Python's ``json`` raises ``RecursionError`` on deeply nested arrays (about 1,000
levels; 100,000 ``[`` is an easy crash) and ``ValueError`` for integers over 4,300
digits; both become a ``LoadError`` here that says where the text goes wrong. Numbers
too large for a float (``1e400``) parse as inf and ``NaN``/``Infinity`` literals are
accepted by ``json``: callers that need finite numbers check them (engine.io.gltf does).
"""

from __future__ import annotations

import json

from ..errors import LoadError

__all__ = ["MAX_DEPTH", "deepest_point", "parse_json"]

#: Nesting depth named in the message when the parser gives up (glTF needs < 10 levels).
MAX_DEPTH = 500


def deepest_point(text: str, limit: int):
    """(line, column, depth) where the nesting first exceeds ``limit``, or None.
    Strings are skipped, so brackets inside them do not count."""
    depth, line, col, in_str, esc = 0, 1, 0, False, False
    for ch in text:
        col += 1
        if ch == "\n":
            line, col = line + 1, 0
            continue
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return line, col, depth
        elif ch in "]}":
            depth -= 1
    return None


def parse_json(path, raw: bytes, where: str = "", label: str = ""):
    """Parse ``raw`` (UTF-8, an optional byte-order mark is dropped) as JSON.

    ``where`` is added to messages (e.g. " in the JSON chunk"), ``label`` put before the
    not-UTF-8 message (e.g. "not a glTF file: "). Raises LoadError naming ``path`` for
    text that is not UTF-8, not JSON (with the line and column, and whether the text
    just ends early), nested too deeply for the parser (with the line and column where
    it passes ``MAX_DEPTH`` levels) or holding an integer too long to convert.
    """
    raw = bytes(raw).removeprefix(b"\xef\xbb\xbf")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LoadError(f"{path}: {label}not UTF-8 text{where} (byte {exc.start:,} is "
                        f"0x{raw[exc.start]:02x})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.pos >= len(text.rstrip()):
            raise LoadError(f"{path}: not valid JSON{where}: the text ends at line "
                            f"{exc.lineno}, column {exc.colno} before the document is "
                            "complete (truncated file?)") from None
        raise LoadError(f"{path}: not valid JSON{where} at line {exc.lineno}, column "
                        f"{exc.colno}: {exc.msg[:1].lower()}{exc.msg[1:]}") from None
    except RecursionError:
        deep = deepest_point(text, MAX_DEPTH)
        at = "" if deep is None else f" (deeper than {MAX_DEPTH} levels at line {deep[0]}, " \
                                     f"column {deep[1]})"
        raise LoadError(f"{path}: JSON{where} is nested too deeply to read{at}") from None
    except ValueError as exc:  # e.g. "Exceeds the limit (4300 digits) for integer string"
        raise LoadError(f"{path}: JSON{where} has a number that cannot be read: "
                        f"{' '.join(str(exc).split())}") from None
