"""Seeded mutations of 3D files and a worker that loads them under a memory limit and a
per-file timeout: the machinery of test_mutations.py, also runnable on its own for long
runs::

    python tests/io/mutations.py --per-file 200 --seed 7 --all     # every reference file
    python tests/io/mutations.py --per-file 5 --seed 0             # the CI sample

A load passes when it returns a model or raises ``LoadError`` with one line that names
the file and is not the catch-all "ran out of memory". Anything else fails: another
exception (MemoryError included: sizes must be checked before allocating), a crash of
the worker, or no answer within the timeout (a hang).

Mutations (each seeded by (seed, file index, k), so a failure replays exactly):
    truncate   cut the file at a random byte (half of the cuts inside the first 1 KB)
    flip       overwrite 1-8 random bytes (half inside the first 1 KB)
    header     binary: write an extreme uint32/uint64/float64 at an aligned offset in the
               first 300 bytes; text: put an extreme number in place of one in the
               first 2 KB
    count      replace any number of the file by an extreme one (2^63, 4e9, -1, 0, 1e400,
               a 400-digit integer, nan, ...)
    nest       insert 100,000 '[' at a random place
    splice     copy a random slice of the file over another place
    json       (.gltf/.glb) set a random value of the JSON document to an odd one (null,
               -1, 2^63, a string, a list, an object, 1e400) or delete it, and rebuild
    companion  mutate a file the model refers to (.mtl, .bin, texture) instead
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import select
import shutil
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
REF = ROOT.parent / "shared" / "ref-assets"
MEMORY_LIMIT = 3 << 30  # bytes of address space for the worker (the imports take ~0.2 GB)
EXTREMES = ["9223372036854775808", "18446744073709551616", "4000000000", "2147483648",
            "-1", "0", "1e400", "-1e400", "nan", "65536", "1" + "0" * 400, "3.5", "1e-320"]
KINDS = ("truncate", "flip", "header", "count", "nest", "splice", "json", "companion")
BINARY_SUFFIXES = {".glb", ".las", ".laz", ".stl"}
COMPANION_SUFFIXES = {".mtl", ".bin", ".png", ".jpg", ".jpeg", ".tga"}


# ------------------------------------------------------------------------- corpus
def reference_files(max_bytes: int | None) -> list[Path]:
    """Reference models (outside licenses/) up to ``max_bytes`` each (None: all)."""
    from engine.io import SUPPORTED_SUFFIXES

    out = []
    for p in sorted(REF.rglob("*")):
        rel = p.relative_to(REF)
        if (not p.is_file() or rel.parts[0] == "licenses" or p.stem.upper() == "README"
                or p.suffix.lower() not in SUPPORTED_SUFFIXES):
            continue
        if max_bytes is None or p.stat().st_size <= max_bytes:
            out.append(p)
    return out


def generated_files(folder: Path) -> list[Path]:
    """Small files of the formats the reference set lacks (LAS, LAZ, PCD x3, XYZ, PTS,
    STL x2) and a glTF using sparse accessors, textures, animations and every mode."""
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    rng = np.random.default_rng(1)
    xyz = rng.uniform(-5, 5, (200, 3))
    rgb = rng.integers(0, 256, (200, 3))
    import laspy

    for suffix in (".las", ".laz"):
        header = laspy.LasHeader(point_format=3, version="1.2")
        header.scales, header.offsets = [0.001] * 3, [100.0, 200.0, 0.0]
        las = laspy.LasData(header)
        las.x, las.y, las.z = xyz[:, 0] + 100, xyz[:, 1] + 200, xyz[:, 2]
        las.red, las.green, las.blue = (rgb * 257).T
        las.intensity = rng.integers(0, 1000, 200)
        path = folder / f"gen{suffix}"
        las.write(str(path))
        files.append(path)
    try:
        import pypcd4

        packed = pypcd4.PointCloud.encode_rgb(rgb)
        pc = pypcd4.PointCloud.from_xyzrgb_points(np.column_stack([xyz, packed]))
        for enc in ("ascii", "binary", "binary_compressed"):
            path = folder / f"gen_{enc}.pcd"
            pc.save(path, encoding=pypcd4.Encoding(enc))
            files.append(path)
    except ImportError:  # pragma: no cover - pypcd4 is in the dev extra
        pass
    path = folder / "gen.xyz"
    path.write_text("".join(f"{a:.4f} {b:.4f} {c:.4f} {r} {g} {bb}\n"
                            for (a, b, c), (r, g, bb) in zip(xyz, rgb)))
    files.append(path)
    path = folder / "gen.pts"
    path.write_text(f"{len(xyz)}\n" + "".join(f"{a:.4f} {b:.4f} {c:.4f} 5 {r} {g} {bb}\n"
                                            for (a, b, c), (r, g, bb) in zip(xyz, rgb)))
    files.append(path)
    tris = xyz[:30].reshape(10, 3, 3)
    path = folder / "gen_binary.stl"
    path.write_bytes(b"\0" * 80 + struct.pack("<I", 10) + b"".join(
        struct.pack("<12fH", 0, 0, 1, *t.ravel(), 0) for t in tris))
    files.append(path)
    path = folder / "gen_ascii.stl"
    path.write_text("solid g\n" + "".join(
        "facet normal 0 0 1\nouter loop\n" + "".join(f"vertex {x} {y} {z}\n" for x, y, z in t)
        + "endloop\nendfacet\n" for t in tris) + "endsolid g\n")
    files.append(path)
    files.append(_gltf_showcase(folder / "gen.glb"))
    return files


def _gltf_showcase(path: Path) -> Path:
    """A GLB with a texture (sampler, KHR_texture_transform), a sparse accessor, normals,
    COLOR_0, an interleaved view, cameras, a morph target, a skin and three animations."""
    sys.path.insert(0, str(HERE))
    from gltf_files import FLOAT, RED_GREEN, UBYTE, USHORT, Gltf

    g = Gltf()
    tex = g.image(RED_GREEN, wrapS=33648, magFilter=9728, minFilter=9986)
    mat = g.material(pbrMetallicRoughness={"baseColorTexture": {
        "index": tex, "extensions": {"KHR_texture_transform": {"offset": [0.5, 0],
                                                                "rotation": 0.3}}}},
        alphaMode="MASK", doubleSided=True)
    pos = g.accessor([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]])
    g.doc["accessors"][pos]["sparse"] = {
        "count": 1, "indices": {"bufferView": g.view(bytes([2])), "componentType": UBYTE},
        "values": {"bufferView": g.view(struct.pack("<3f", 1.5, 1.5, 0))}}
    uv = g.accessor([[0, 0], [1, 0], [1, 1], [0, 1]])
    col = g.accessor([[255, 0, 0, 255]] * 4, UBYTE, normalized=True)
    idx = g.accessor([0, 1, 2, 0, 2, 3], USHORT)
    delta = g.accessor([[0, 0, 1]] * 4)
    g.doc["meshes"] = [{"weights": [0.5], "primitives": [
        {"attributes": {"POSITION": pos, "TEXCOORD_0": uv, "COLOR_0": col}, "indices": idx,
         "material": mat, "targets": [{"POSITION": delta}]},
        {"attributes": {"POSITION": pos}, "mode": 3}]}]
    g.node(mesh=0, translation=[0, 0, 1])
    g.node(mesh=0, skin=0)
    joint = g.node(root=False, rotation=[0, 0, 0, 1])
    g.doc["skins"] = [{"joints": [joint]}]
    g.doc["cameras"] = [{"type": "perspective", "perspective": {"yfov": 0.8, "znear": 0.1}},
                        {"type": "orthographic", "orthographic": {"xmag": 1, "ymag": 1,
                                                                  "znear": 0.1, "zfar": 9}}]
    g.node(camera=0, translation=[0, 0, 5])
    times = g.accessor(np.array([[0.0], [0.5], [1.0]]))
    g.doc["animations"] = [
        {"samplers": [{"input": times, "output": g.accessor([[0, 0, 0], [1, 0, 0], [0, 0, 0]])}],
         "channels": [{"sampler": 0, "target": {"node": 0, "path": "translation"}}]},
        {"samplers": [{"input": times, "interpolation": "STEP",
                       "output": g.accessor([[0, 0, 0, 1], [0, 0, 1, 0], [0, 0, 0, 1]])}],
         "channels": [{"sampler": 0, "target": {"node": 1, "path": "rotation"}}]},
        {"samplers": [{"input": times, "interpolation": "CUBICSPLINE",
                       "output": g.accessor(np.ones((9, 3)))}],
         "channels": [{"sampler": 0, "target": {"node": 0, "path": "scale"}}]}]
    g.doc["extensionsUsed"] = ["KHR_texture_transform"]
    del FLOAT
    return g.write_glb(path)


def companions(path: Path) -> list[Path]:
    """Files next to ``path`` that it may refer to (material libraries, buffers,
    textures), found by name in the file's own text."""
    try:
        head = path.read_bytes()[: 4 << 20].decode("latin-1")
    except OSError:
        return []
    out = []
    for p in sorted(path.parent.iterdir()):
        named = p.name in head or p.name.replace(" ", "%20") in head or p.suffix == ".mtl"
        if p.is_file() and p != path and p.suffix.lower() in COMPANION_SUFFIXES and named:
            out.append(p)
    # a material library's textures
    for mtl in [p for p in out if p.suffix.lower() == ".mtl"]:
        text = mtl.read_text("latin-1")
        for p in sorted(path.parent.iterdir()):
            if p.is_file() and p not in out and p.name in text:
                out.append(p)
    return out


# ---------------------------------------------------------------------- mutations
def _text_numbers(data: bytes, limit: int | None = None):
    region = data if limit is None else data[:limit]
    return [m.span() for m in re.finditer(rb"-?\d+(\.\d+)?([eE][-+]?\d+)?", region)]


def _json_paths(doc, prefix=()):
    """Every (path, value) in a JSON value, depth first (bounded)."""
    out, stack = [], [(prefix, doc)]
    while stack and len(out) < 20000:
        p, v = stack.pop()
        out.append((p, v))
        if isinstance(v, dict):
            stack.extend((p + (k,), x) for k, x in v.items())
        elif isinstance(v, list) and len(v) < 64:
            stack.extend((p + (i,), x) for i, x in enumerate(v))
    return out


def _mutate_json(data: bytes, suffix: str, rng) -> bytes | None:
    from gltf_files import glb

    binary = None
    try:
        if suffix == ".glb":
            n = struct.unpack_from("<I", data, 12)[0]
            doc = json.loads(data[20:20 + n])
            if len(data) > 28 + n:
                m = struct.unpack_from("<I", data, 20 + n)[0]
                binary = data[28 + n: 28 + n + m]
        else:
            doc = json.loads(data.decode("utf-8-sig"))
    except (ValueError, struct.error, UnicodeDecodeError):
        return None
    paths = [p for p, _ in _json_paths(doc) if p]
    if not paths:
        return None
    path = paths[int(rng.integers(len(paths)))]
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    odd = [None, -1, 0, 2**63, 2**32 + 3, "x", [], {}, [1, 2, 3], 1e300, 0.5, True, -2**31]
    if rng.random() < 0.2 and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = odd[int(rng.integers(len(odd)))]
    text = json.dumps(doc).encode()
    return glb(doc, binary) if suffix == ".glb" else text


def mutate(data: bytes, suffix: str, rng, kind: str) -> bytes:
    """One mutation of ``kind`` (module doc) applied to ``data``."""
    n = len(data)
    binary = suffix in BINARY_SUFFIXES or b"\0" in data[:512]
    if n == 0:
        return b"\0"
    if kind == "truncate":
        cut = int(rng.integers(0, min(n, 1024))) if rng.random() < 0.5 else int(
            rng.integers(0, n))
        return data[:cut]
    if kind == "flip":
        b = bytearray(data)
        for _ in range(int(rng.integers(1, 9))):
            i = int(rng.integers(0, min(n, 1024))) if rng.random() < 0.5 else int(
                rng.integers(0, n))
            b[i] = int(rng.integers(0, 256))
        return bytes(b)
    if kind == "header":
        if binary:
            b = bytearray(data)
            off = int(rng.integers(0, max(1, min(n, 300) // 4))) * 4
            value = [0, 1, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, int(rng.integers(0, 2**32))][
                int(rng.integers(6))]
            fmt = ["<I", "<Q", "<d"][int(rng.integers(3))]
            packed = struct.pack(fmt, float(value) if fmt == "<d" else value)
            b[off:off + len(packed)] = packed
            return bytes(b[:max(n, off)])
        spans = _text_numbers(data, 2048)
        kind = "count" if not spans else kind
        if spans:
            s, e = spans[int(rng.integers(len(spans)))]
            return data[:s] + EXTREMES[int(rng.integers(len(EXTREMES)))].encode() + data[e:]
    if kind == "count":
        spans = _text_numbers(data) if not binary else []
        if not spans:
            return mutate(data, suffix, rng, "header")
        s, e = spans[int(rng.integers(len(spans)))]
        return data[:s] + EXTREMES[int(rng.integers(len(EXTREMES)))].encode() + data[e:]
    if kind == "nest":
        i = int(rng.integers(0, n))
        return data[:i] + b"[" * 100_000 + data[i:]
    if kind == "splice":
        a, b_ = sorted(int(x) for x in rng.integers(0, n, 2))
        i = int(rng.integers(0, n))
        piece = data[a:b_ + 1]
        return data[:i] + piece + data[i + len(piece):]
    if kind == "json":
        out = _mutate_json(data, suffix, rng) if suffix in (".gltf", ".glb") else None
        return out if out is not None else mutate(data, suffix, rng, "flip")
    raise ValueError(kind)


def make_cases(files: list[Path], per_file: int, seed: int, folder: Path) -> list[dict]:
    """Write ``per_file`` mutated copies of every file (with its companions beside it)
    into ``folder``; returns [{path, source, kind, seed}]."""
    cases = []
    for fi, src in enumerate(files):
        comps = companions(src)
        data = src.read_bytes()
        for k in range(per_file):
            rng = np.random.default_rng([seed, fi, k])
            kind = KINDS[int(rng.integers(len(KINDS)))]
            case = folder / f"c{fi:03d}_{k:03d}"
            case.mkdir(parents=True)
            target = case / src.name
            if kind == "companion" and comps:
                victim = comps[int(rng.integers(len(comps)))]
                sub = KINDS[int(rng.integers(6))]
                target.write_bytes(data)
                for c in comps:
                    dest = case / c.name
                    if c == victim:
                        dest.write_bytes(mutate(c.read_bytes(), c.suffix.lower(), rng, sub))
                    else:
                        os.symlink(c, dest)
                kind = f"companion {victim.name} {sub}"
            else:
                if kind == "companion":
                    kind = "flip"
                target.write_bytes(mutate(data, src.suffix.lower(), rng, kind))
                for c in comps:
                    os.symlink(c, case / c.name)
            cases.append({"path": str(target), "source": str(src), "kind": kind,
                          "seed": [seed, fi, k]})
    return cases


# ------------------------------------------------------------------------- worker
class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout


def worker(list_file: str, timeout: float):
    """Load every path in ``list_file`` (one per line) and print one JSON line each:
    {"i": index, "outcome": "ok" | "error" | "FAIL", "detail": ...}. A line
    {"start": i} goes out before each load, so the parent knows what hung or crashed."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    import logging

    logging.disable(logging.CRITICAL)
    from engine.errors import LoadError
    from engine.io import load

    signal.signal(signal.SIGALRM, _alarm)
    paths = Path(list_file).read_text().splitlines()
    first = int(os.environ.get("MUTATION_START", "0"))
    for i in range(first, len(paths)):
        path = paths[i]
        print(json.dumps({"start": i}), flush=True)
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            load(path)
            outcome, detail = "ok", ""
        except LoadError as exc:
            msg = str(exc)
            bad = ("\n" in msg or not msg.startswith(path) or "ran out of memory" in msg)
            outcome, detail = ("FAIL" if bad else "error"), msg[:300]
        except _Timeout:
            outcome, detail = "FAIL", f"no answer within {timeout:g} s (hang)"
        except BaseException as exc:  # noqa: BLE001 - every other exception is a finding
            import traceback

            tb = traceback.extract_tb(exc.__traceback__)[-1]
            outcome = "FAIL"
            detail = (f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]} "
                      f"at {Path(tb.filename).name}:{tb.lineno}")
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        print(json.dumps({"i": i, "outcome": outcome, "detail": detail}), flush=True)


def _worker_env(env: dict) -> dict:
    """The worker's environment (a hook for the harness's own test)."""
    return env


def run_cases(cases: list[dict], timeout: float = 20.0) -> list[dict]:
    """Load every case in worker processes (restarted after a crash or a hang); returns
    the cases with "outcome" and "detail" filled in."""
    import tempfile

    if not cases:
        return []
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as fh:
        fh.write("\n".join(c["path"] for c in cases) + "\n")
        list_file = Path(fh.name)
    try:
        return _run(cases, list_file, timeout)
    finally:
        list_file.unlink(missing_ok=True)


def _run(cases: list[dict], list_file: Path, timeout: float) -> list[dict]:
    nxt = 0
    while nxt < len(cases):
        env = _worker_env(dict(os.environ, MUTATION_START=str(nxt), PYTHONPATH=str(ROOT)))
        proc = subprocess.Popen([sys.executable, str(Path(__file__)), "--worker",
                                 str(list_file), "--timeout", str(timeout)],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                                cwd=ROOT)
        current, buf = None, b""
        last = time.monotonic()
        while True:
            ready, _, _ = select.select([proc.stdout], [], [], 1.0)
            if ready:
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    msg = json.loads(line)
                    last = time.monotonic()
                    if "start" in msg:
                        current = msg["start"]
                    else:
                        cases[msg["i"]].update(outcome=msg["outcome"], detail=msg["detail"])
                        nxt, current = msg["i"] + 1, None
            elif time.monotonic() - last > timeout + 10:  # stuck where SIGALRM cannot reach
                proc.kill()
                break
        proc.wait()
        if nxt >= len(cases):
            break
        if current is not None:
            how = f"worker died with status {proc.returncode} (crash or memory kill)"
            if proc.returncode in (-9, 137) and time.monotonic() - last > timeout:
                how = f"no answer within {timeout:g} s, killed (hang in native code)"
            cases[current].update(outcome="FAIL", detail=how)
            nxt = current + 1
        elif proc.returncode != 0:
            raise RuntimeError(f"mutation worker failed to start (status {proc.returncode})")
    return cases


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", metavar="LIST")
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--per-file", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--all", action="store_true", help="every reference file (not only "
                    "those up to 200 kB)")
    ap.add_argument("--keep", metavar="DIR", help="write the cases here and keep them")
    args = ap.parse_args(argv)
    if args.worker:
        sys.path.insert(0, str(ROOT))
        worker(args.worker, args.timeout)
        return 0
    import tempfile

    sys.path.insert(0, str(HERE))
    folder = Path(args.keep or tempfile.mkdtemp(prefix="mutations-"))
    files = reference_files(None if args.all else 200_000) + generated_files(folder / "gen")
    t0 = time.monotonic()
    cases = run_cases(make_cases(files, args.per_file, args.seed, folder / "cases"),
                      args.timeout)
    fails = [c for c in cases if c.get("outcome") == "FAIL"]
    counts = {k: sum(c.get("outcome") == k for c in cases) for k in ("ok", "error", "FAIL")}
    print(f"{len(cases)} loads of {len(files)} files in {time.monotonic() - t0:.0f} s: "
          f"{counts}")
    for c in fails:
        print(f"FAIL {c['kind']} {c['source']} seed={c['seed']}: {c['detail']}")
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
