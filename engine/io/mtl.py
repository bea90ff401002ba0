"""Wavefront MTL material libraries as real exporters write them, mapped onto engine
materials.

Statements read (MTL spec, Wavefront Advanced Visualizer manual, Appendix B1)::

    newmtl NAME     starts a material (the name is the rest of the line, tabs trimmed)
    Kd r g b        diffuse colour (default 1 1 1)
    Ks r g b        specular colour -> ``specular`` = max(Ks) (the engine's highlights
                    are white)
    Ns n            specular exponent -> ``shininess`` = n clamped to [1, 10000]; Ns 0,
                    which 3ds Max's and MeshLab's exporters write for materials without
                    gloss, draws no highlight (a lobe that wide is no highlight)
    d a / Tr t      opacity a, or transparency t (alpha = 1 - t; a lone ``Tr 1``, which
                    MeshLab writes for opaque materials, reads as opaque; ``d`` wins when
                    both are given). Alpha below 1 is kept in the colour but drawn
                    opaque (MTL has no blend mode; ``material.blend = True`` blends
                    it, engine.render.transparency), and the loader says so
    illum k         0: colour only (shading "unlit"); 1: no highlight; 2 and up: Ks/Ns
    map_Kd [opts] F the diffuse texture. Exporters (3ds Max, Blender, MeshLab) write a Kd
                    beside it as the untextured fallback, so the texture replaces Kd.
                    Options: -s u v w (scale) and -o u v w (offset) transform the UVs
                    (uv * s + o), -clamp on clamps both axes; others are named in the
                    loader's warning
    Ka              read, not drawn: the engine's ambient term uses the diffuse colour

Other statements (map_Ka, map_Bump, bump, Ke, Ni, Tf, ...) are named in the warning when
they name a map, else ignored.

Texture paths: backslashes become '/', quotes are dropped; a relative path is looked up
in the MTL's folder (case-insensitively per component), a path with a drive letter or
an absolute one by its file name only; then, failing that, by file name
(case-insensitive) anywhere up to three folders below the MTL's folder and the OBJ's.
The file found is read only if ``engine.io.references`` allows it (inside the model's
folder or the root given to ``load``, a regular file).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["MtlMaterial", "parse_mtl", "resolve_texture"]

_ARGS = {"-blendu": 1, "-blendv": 1, "-bm": 1, "-boost": 1, "-cc": 1, "-clamp": 1,
         "-imfchan": 1, "-mm": 2, "-o": 3, "-s": 3, "-t": 3, "-texres": 1, "-type": 1}
_MAPS = ("map_ka", "map_ks", "map_ns", "map_d", "map_bump", "bump", "disp", "decal",
         "refl", "map_ke", "map_pr", "map_pm", "norm")
_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


@dataclass
class MtlMaterial:
    """One ``newmtl`` block (module doc for the meaning of each field)."""

    name: str
    kd: tuple = (1.0, 1.0, 1.0)
    ks: tuple = (0.0, 0.0, 0.0)
    ka: tuple = (0.0, 0.0, 0.0)
    ns: float | None = None
    alpha: float = 1.0
    illum: int = 2
    map_kd: str | None = None
    uv_scale: tuple = (1.0, 1.0)
    uv_offset: tuple = (0.0, 0.0)
    clamp: bool = False
    ignored_options: list = field(default_factory=list)
    other_maps: list = field(default_factory=list)
    folder: Path | None = None
    _d: float | None = None
    _tr: float | None = None

    @property
    def specular(self) -> float:
        if self.illum < 2 or self.ns is None or self.ns < 1.0:
            return 0.0
        return float(min(1.0, max(0.0, max(self.ks))))

    @property
    def shininess(self) -> float:
        return float(min(10000.0, max(1.0, self.ns or 1.0)))

    def finish(self):
        if self._d is not None:
            self.alpha = self._d
        elif self._tr is not None:
            self.alpha = 1.0 if self._tr == 1.0 else 1.0 - self._tr
        self.alpha = float(min(1.0, max(0.0, self.alpha)))


def _floats(tokens, n, line_no, notes, what):
    vals = []
    for t in tokens[:n]:
        if not _NUMBER.match(t):
            notes.left_out(f"line {line_no} of the material library ({what}: {t!r} is not a "
                           "number)")
            return None
        vals.append(float(t))
    if not vals:
        notes.left_out(f"line {line_no} of the material library ({what} without a value)")
        return None
    if len(vals) < n:  # "Kd 0.5" means grey
        vals += [vals[-1]] * (n - len(vals))
    if not all(np.isfinite(vals)):
        notes.left_out(f"line {line_no} of the material library ({what} is not finite)")
        return None
    return tuple(vals)


def _texture_statement(rest: str):
    """``map_Kd`` arguments -> (file name, {option: values}); options and the file name
    are separated by whitespace, the file name is the rest of the line (it may hold
    spaces: "fuze uv.jpg")."""
    options = {}
    s = rest.strip()
    while s.startswith("-"):
        head, _, s = s.partition(" ")
        s = s.lstrip()
        opt = head.lower()
        n = _ARGS.get(opt)
        values = []
        if n is None:  # unknown option: record it, take no argument
            options[opt] = values
            continue
        for _ in range(n):
            tok, _, after = s.partition(" ")
            if opt in ("-o", "-s", "-t") and values and not _NUMBER.match(tok):
                break  # -s takes 1 to 3 numbers
            if not tok:
                break
            values.append(tok)
            s = after.lstrip()
        options[opt] = values
    name = s.strip().strip('"').strip()
    return (name or None), options


def parse_mtl(text: str, notes) -> dict[str, MtlMaterial]:
    """MTL text -> materials by name. Lines that cannot be read are reported through
    ``notes.left_out`` and skipped (a material library never stops a model loading)."""
    out: dict[str, MtlMaterial] = {}
    cur: MtlMaterial | None = None
    for no, raw in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, *tail = re.split(r"[ \t]+", line, maxsplit=1)
        rest = tail[0].replace("\t", " ").strip() if tail else ""
        k = key.lower()
        if k == "newmtl":
            if cur is not None:
                cur.finish()
            cur = MtlMaterial(rest.strip())
            out[cur.name] = cur
            continue
        if cur is None:
            continue
        tokens = rest.split()
        if k in ("kd", "ks", "ka"):
            if tokens and tokens[0].lower() in ("spectral", "xyz"):
                notes.add(f"MTL {key} {tokens[0]} colours", cur.name)
                continue
            v = _floats(tokens, 3, no, notes, key)
            if v is not None:
                setattr(cur, k, tuple(min(1.0, max(0.0, x)) for x in v))
        elif k == "ns":
            v = _floats(tokens, 1, no, notes, key)
            if v is not None:
                cur.ns = v[0]
        elif k == "d":
            toks = [t for t in tokens if t.lower() != "-halo"]
            v = _floats(toks, 1, no, notes, key)
            if v is not None:
                cur._d = v[0]
        elif k == "tr":
            v = _floats(tokens, 1, no, notes, key)
            if v is not None:
                cur._tr = v[0]
        elif k == "illum":
            if tokens and tokens[0].isdigit():
                cur.illum = int(tokens[0][:3])
        elif k == "map_kd":
            name, opts = _texture_statement(rest)
            cur.map_kd = name
            for opt, vals in opts.items():
                nums = [float(v) for v in vals if _NUMBER.match(v)]
                if opt in ("-s", "-o") and nums:
                    nums += [nums[-1] if opt == "-s" else 0.0] * (2 - min(2, len(nums)))
                    if opt == "-s":
                        cur.uv_scale = (nums[0], nums[1])
                    else:
                        cur.uv_offset = (nums[0], nums[1])
                elif opt == "-clamp":
                    cur.clamp = bool(vals) and vals[0].lower() == "on"
                else:
                    cur.ignored_options.append(opt)
        elif k in _MAPS:
            cur.other_maps.append(key)
    if cur is not None:
        cur.finish()
    return out


def _match_ci(folder: Path, parts: list[str]) -> Path | None:
    """``folder / parts...`` with each component matched case-insensitively."""
    cur = folder
    for part in parts:
        if part in ("", "."):
            continue
        if part == "..":
            cur = cur.parent
            continue
        direct = cur / part
        if direct.exists():
            cur = direct
            continue
        try:
            names = os.listdir(cur)
        except OSError:
            return None
        low = part.lower()
        hit = next((n for n in names if n.lower() == low), None)
        if hit is None:
            return None
        cur = cur / hit
    # anything but a folder is returned: whether it may be read (a regular file inside
    # the root) is engine.io.references' decision, and its reason is the message
    return cur if cur.exists() and not cur.is_dir() else None


def _find_by_name(folders, name: str, max_depth: int = 3, max_entries: int = 20000):
    low = name.lower()
    seen = 0
    for root in folders:
        stack = [(Path(root), 0)]
        while stack:
            folder, depth = stack.pop()
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                continue
            for e in entries:
                seen += 1
                if seen > max_entries:
                    return None
                try:
                    if e.is_file() and e.name.lower() == low:
                        return Path(e.path)
                    if e.is_dir(follow_symlinks=False) and depth < max_depth:
                        stack.append((Path(e.path), depth + 1))
                except OSError:
                    continue
    return None


def resolve_texture(raw: str, mtl_folder: Path, obj_folder: Path) -> Path | None:
    """The file a ``map_Kd`` path names (module doc for the search order), or None."""
    name = raw.strip().strip('"').replace("\\", "/")
    if not name:
        return None
    absolute = name.startswith("/") or bool(re.match(r"^[A-Za-z]:", name))
    parts = [p for p in name.split("/") if p]
    if not parts:
        return None
    if not absolute:
        hit = _match_ci(Path(mtl_folder), parts)
        if hit is not None:
            return hit
    folders = [Path(mtl_folder)]
    if Path(obj_folder).resolve() != Path(mtl_folder).resolve():
        folders.append(Path(obj_folder))
    return _find_by_name(folders, parts[-1])
