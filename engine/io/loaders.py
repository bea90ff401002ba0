"""3D files -> scene-graph nodes: glTF/GLB (engine.io.gltf, from the specification),
OBJ (+ MTL), PLY and STL (read by trimesh, with the repairs in ``engine.io.fixups`` and
materials from ``engine.io.mtl``), and point clouds: LAS/LAZ, PCD, XYZ/PTS/TXT
(``engine.io.pointclouds``).

What is kept (OBJ/PLY/STL):
  - Positions as float64, so ``Geometry`` recentres them on their bounding-box midpoint
    (``geometry.origin``) and georeferenced data keeps its precision in float32.
  - Colours, first that applies: per-vertex colours from the file (uchar / 255, so PLY
    ``255 128 0`` -> (1.0, 0.50196, 0.0)); per-face colours (each face keeps its own:
    a vertex between faces of different colours is split, ``split_face_colors``);
    the texture image sampled at each vertex UV with the material's sampler rules; the
    material's diffuse colour; else None (the batch then draws the geometry opaque
    white).
  - Back faces: OBJ, PLY and STL declare no sidedness, so back faces are culled only on
    closed meshes (``is_closed``), where none can show; glTF says it per material.
  - Faces (triangulated: quads and n-gons as fans), normals (from the file, else
    area-weighted face normals) and UVs.

Axes: every format is read in its own axes, then ``up`` decides: "y" keeps them (the
engine is +Y up, like glTF), "z" turns a Z-up file into the engine's frame by a -90
degree rotation about X on the returned root ((x, y, z) -> (x, z, -y)); the default
None means the format's convention: Z-up for LAS/LAZ (projected coordinates with
elevation in Z), as-is for everything else.

Referenced files (OBJ ``mtllib`` and MTL maps, PLY ``comment TextureFile``, glTF buffer
and image URIs) follow one rule, ``engine.io.references``: inside the model's folder or
the ``root`` given to ``load``, regular files only, opened without blocking.

Errors: every problem raises ``engine.errors.LoadError`` with one line that names the
file and what is wrong (missing file, not a regular file, unknown format, an empty
file, malformed or truncated data with its line, element or JSON path, a file with no
vertices, a node whose world transform overflows or puts its geometry beyond the
float32 range: ``engine.scene.graph.subtree_bounds``). Bad ``point_size`` / ``up``
arguments are ValueErrors, raised before the file is read. Features a file uses that
the renderer does not draw are listed in one warning line per file (logged on the
"engine" logger and kept on ``Model.warnings``).
"""

from __future__ import annotations

import contextlib
import io
import logging
import math
import os
import re
import struct
import warnings
from pathlib import Path

import numpy as np

from ..errors import LoadError
from ..scene.geometry import Geometry, Mesh, PointCloud
from ..scene.graph import Node, TransformError, subtree_bounds
from ..scene.material import Material, Sampler, Texture
from ..scene.model import Model
from ..scene.pixels import pixels
from ..scene.transforms import decompose_trs, quat_from_axis_angle, quat_multiply
from . import fixups
from .notes import Notes
from .references import References, RefusedFile, regular_file_problem

__all__ = ["SUPPORTED_SUFFIXES", "UP_AXES", "load"]

log = logging.getLogger("engine")

#: File suffixes ``load`` reads, and the format each names.
SUPPORTED_SUFFIXES = {".obj": "OBJ", ".ply": "PLY", ".gltf": "glTF", ".glb": "GLB",
                      ".stl": "STL", ".las": "LAS", ".laz": "LAZ", ".pcd": "PCD",
                      ".xyz": "XYZ", ".pts": "PTS", ".txt": "XYZ text"}
UP_AXES = ("y", "z")
#: Formats whose files are Z-up by their specification (used when ``up`` is None).
_Z_UP = {".las", ".laz"}
# Readers built on third-party parsers whose own exceptions are turned into LoadError;
# the engine's own readers (glTF, point clouds) raise LoadError themselves.
_WRAPPED = {".obj", ".ply", ".stl"}


def load(path, point_size: float | None = None, up: str | None = None, root=None) -> Model:
    """Load the 3D file at ``path`` as a scene-graph subtree.

    Args:
        path: a file with one of ``SUPPORTED_SUFFIXES`` (the suffix decides the format;
            case does not matter). OBJ materials/textures, PLY textures and glTF
            buffers/images are found next to it.
        point_size: point diameter in pixels given to every geometry; None (default):
            each geometry's ``engine.scene.geometry.default_point_size`` of its vertex
            count (5 px for a small cloud, 1 px for a scan of millions).
        up: "y" (the file is +Y up, like the engine), "z" (Z-up: rotated into +Y up at
            load) or None for the format's convention (module docstring).
        root: the folder the files ``path`` refers to may be read from: a folder that
            contains ``path`` (e.g. a project folder with ``models/`` and ``textures/``
            side by side); None: the file's own folder and its subfolders
            (``engine.io.references``).

    Returns:
        A ``Model`` (a ``Node``) named after the file stem. A file with one geometry
        gives that node with the geometry attached; a file with a scene graph (glTF, OBJ
        split by material) gives a root whose children mirror the file's hierarchy with
        their local transforms. Geometry is a ``Mesh`` (triangles), ``Lines`` (glTF line
        modes) or ``PointCloud``, positions in the node's local frame. ``Model.cameras``
        and ``Model.clips`` hold a glTF file's cameras and animations.

    Raises:
        TypeError: ``path`` is not a str or os.PathLike (None, say), naming it.
        ValueError: ``point_size`` is not a finite number > 0, ``up`` is not one of
            None, "y", "z", or ``root`` is not a folder containing ``path`` (checked
            before reading).
        LoadError: one line naming the file and the problem.
    """
    size = _checked_point_size(point_size)
    if up is not None and up not in UP_AXES:
        raise ValueError(f"up must be 'y', 'z' or None, got {up!r}")
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path (str or pathlib.Path), got {path!r}")
    path = Path(path)
    refs = References(path, root)
    suffix = path.suffix.lower()
    try:
        kind = regular_file_problem(path.stat())
    except FileNotFoundError:
        raise LoadError(f"{path}: no such file") from None
    except OSError as exc:
        raise LoadError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if kind is not None:  # a FIFO would block the reader's open()
        raise LoadError(f"{path}: not a file")
    if suffix not in SUPPORTED_SUFFIXES:
        known = ", ".join(SUPPORTED_SUFFIXES)
        raise LoadError(f"{path}: unknown 3D file format {suffix or '(no suffix)'!r} "
                        f"(supported: {known})")
    fmt = SUPPORTED_SUFFIXES[suffix]
    if path.stat().st_size == 0:
        raise LoadError(f"{path}: the file is empty (0 bytes)")
    try:
        if suffix in _WRAPPED:
            node = _read_wrapped(path, suffix, fmt, size, refs)
        elif suffix in (".gltf", ".glb"):
            from .gltf import load_gltf

            node = load_gltf(path, size, refs)
        else:
            from .pointclouds import load_point_cloud

            node = load_point_cloud(path, size)
    except MemoryError:
        raise LoadError(f"{path}: ran out of memory reading this {fmt} file") from None
    except OSError as exc:  # the file vanished or cannot be read while loading
        raise LoadError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if not any(n.geometry is not None and n.geometry.vertex_count for n in node.traverse()):
        raise LoadError(f"{path}: the file contains no vertices")
    try:  # every world transform composed once: overflow or beyond float32 is refused
        subtree_bounds(node)
    except TransformError as exc:
        raise LoadError(f"{path}: {exc}") from None
    if (up or ("z" if suffix in _Z_UP else "y")) == "z":
        node.rotation = quat_multiply(Z_UP_TO_Y_UP, node.rotation)
    return node


#: Rotation taking a Z-up frame into the engine's +Y-up frame: -90 degrees about X.
Z_UP_TO_Y_UP = quat_from_axis_angle((1.0, 0.0, 0.0), -math.pi / 2)


def _read_wrapped(path: Path, suffix: str, fmt: str, size: float,
                  refs: References) -> Model:
    reader = {".obj": _load_obj, ".ply": _load_ply, ".stl": _load_stl}[suffix]
    try:
        with _quiet_trimesh():
            return reader(path, size, refs)
    except LoadError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, AssertionError,
            EOFError, ImportError, NotImplementedError, struct.error) as exc:
        raise LoadError(f"{path}: cannot read {fmt} file: {_one_line(exc)}") from exc


# --------------------------------------------------------------------------- formats
def _load_obj(path: Path, point_size: float, refs: References) -> Model:
    notes = Notes(path)
    text, triangles = fixups.normalize_obj_parsed(fixups.decode_text(path.read_bytes()))
    library = _obj_materials(path, text, notes, refs)
    if triangles is not None:  # plain triangles: parsed already, trimesh is not needed
        kw = {"geometry": {path.name: {"vertices": triangles[0], "faces": triangles[1]}}}
    else:
        kw = _trimesh_obj(path, text)
    if "geometry" not in kw:  # no faces: a point cloud
        colors = kw.get("vertex_colors")
        return Model(path.stem, source=path, geometry=PointCloud(
            _positions(kw["vertices"]), _rgba8(colors), point_size=point_size))
    # One node per part, straight from trimesh's parsed arrays: no trimesh Scene (its
    # add_geometry also searches names per part) and no Trimesh objects.
    model = Model(path.stem, source=path)
    textures: dict = {}
    for name, g in kw["geometry"].items():
        visual = g.get("visual")
        material = getattr(getattr(visual, "material", None), "name", None)
        mtl = library.get(material) if material is not None else None
        # trimesh replaces `v x y z r g b` colours by a texture visual when the file
        # also has `vt` lines: the colours come from the parsed data instead
        geom = _obj_geometry(path, g, getattr(visual, "uv", None), mtl,
                             g.get("vertex_colors"), point_size, textures, notes, refs)
        model.add(Node(str(name), geometry=geom))
    if len(model.children) == 1:  # one part (one material): the root itself
        model.geometry = model.remove(model.children[0]).geometry
    note_non_finite(model, notes)
    notes.emit(model)
    return model


def _trimesh_obj(path: Path, text: str) -> dict:
    """trimesh's ``load_obj`` result for normalised OBJ ``text`` (parts split by
    material)."""
    from trimesh.exchange.obj import load_obj

    # trimesh parses the geometry and splits it by `usemtl`; it is handed a library
    # that only names the materials (so it keeps the names and loads no images), and
    # the materials themselves come from engine.io.mtl
    used = sorted({m.group(1).strip() for m in re.finditer(r"(?m)^usemtl[ \t]+(.*)$", text)}
                  if "usemtl" in text else ())
    # trimesh names each part after its material only when a library declares the
    # materials; otherwise every part is named after the file and uniquified by a
    # linear search per part (quadratic: 20,000 parts took 95 s). So it always gets a
    # library line to ask the resolver for (the file's own, or this one).
    head = "" if "mtllib" in text or not used else "mtllib material-names.mtl\n"
    vertices = text.count("\nv ") + text.startswith("v ")
    if len(used) > 1 and len(used) * vertices > _SPLIT_WORK:
        return _load_obj_by_material(text, path.name)
    return load_obj(io.StringIO(head + text), resolver=_MaterialNames(used, path.name))


#: Parts x vertices above which an OBJ is parsed one material at a time
#: (``fixups.split_obj_by_material``): about 0.3 s of trimesh's per-part masks over all
#: vertices, more than the split costs for the files that pass it.
_SPLIT_WORK = 10**8


def _load_obj_by_material(text: str, file_name: str) -> dict:
    """trimesh's ``load_obj`` result for ``text``, parsed one material at a time
    (``fixups.split_obj_by_material``): {"geometry": {material name: part}}."""
    from trimesh.exchange.obj import load_obj

    geometry = {}
    for material, sub in fixups.split_obj_by_material(text):
        names = [] if material is None else [material]
        head = "" if material is None else "mtllib material-names.mtl\n"
        kw = load_obj(io.StringIO(head + sub), resolver=_MaterialNames(names, file_name))
        for part in kw.get("geometry", {}).values():
            geometry[file_name if material is None else material] = part
    return {"geometry": geometry}


class _MaterialNames:
    """A trimesh resolver that answers every request for a material library with one
    that only declares ``names`` (see ``_load_obj``)."""

    def __init__(self, names, file_name):
        self.file_name = file_name
        self._text = "".join(f"newmtl {n}\n" for n in names).encode()

    def get(self, name):
        return self._text

    def __getitem__(self, name):
        return self._text


def _obj_materials(path: Path, text: str, notes: Notes, refs: References) -> dict:
    """Every material of the libraries an OBJ names (``mtllib``), by name; a library
    that cannot be found or read (``refs``' rule) is noted and skipped."""
    from .mtl import parse_mtl, resolve_texture

    library: dict = {}
    # the `in` test is a fast byte search; the regex alone scans each of the bunny's 3 MB
    for m in re.finditer(r"(?m)^mtllib[ \t]+(.*)$", text) if "mtllib" in text else ():
        rest = m.group(1).strip()
        names = [rest]
        found = resolve_texture(rest, path.parent, path.parent)
        if found is None and " " in rest:  # several libraries on one line
            names = rest.split()
        for name in names:
            found = found if len(names) == 1 else resolve_texture(name, path.parent,
                                                                  path.parent)
            if found is None:
                notes.left_out(f"material library {name!r} (not found; default material)")
                continue
            try:
                mtl_text = fixups.decode_text(refs.read(found, limit=64 << 20))
            except RefusedFile as exc:
                notes.left_out(f"material library {name!r} ({found.name} {exc}; default "
                               "material)")
                continue
            for mname, mat in parse_mtl(mtl_text, notes).items():
                mat.folder = found.parent
                library.setdefault(mname, mat)
    return library


def _obj_texture(path: Path, mtl, textures: dict, notes: Notes, refs: References):
    """The engine Texture of an MTL material's ``map_Kd`` (cached), or None (noted)."""
    from .mtl import resolve_texture
    from .textures import decode_image

    found = resolve_texture(mtl.map_kd, mtl.folder, path.parent)
    if found is None:
        notes.left_out(f"texture {mtl.map_kd!r} of material {mtl.name!r} (not found; drawn "
                       "in its Kd colour)")
        return None
    key = (found, mtl.clamp)
    if key not in textures:
        try:
            image = decode_image(refs.read(found))
        except RefusedFile as exc:
            notes.left_out(f"texture {mtl.map_kd!r} of material {mtl.name!r} ({found.name} "
                           f"{exc}; drawn in its Kd colour)")
            image = None
        except ValueError as exc:
            notes.left_out(f"texture {mtl.map_kd!r} of material {mtl.name!r} ({exc}; drawn "
                           "in its Kd colour)")
            image = None
        wrap = "clamp" if mtl.clamp else "repeat"
        textures[key] = None if image is None else Texture(image, Sampler(wrap, wrap))
    return textures[key]


def _obj_geometry(path: Path, part: dict, uv, mtl, raw_colors, point_size: float,
                  textures: dict, notes: Notes, refs: References) -> Geometry:
    """One part of an OBJ as trimesh's ``load_obj`` parses it (``vertices``, ``faces``,
    optional ``vertex_normals``; ``uv`` from its visual) -> engine Mesh with its MTL
    material (see engine.io.mtl for the mapping)."""
    from .textures import sample_texture, to_rgba8

    vertices = np.asarray(part["vertices"], dtype=np.float64).reshape(-1, 3)
    faces = np.asarray(part["faces"], dtype=np.int64)
    if faces.ndim == 2 and faces.shape[1] != 3:  # quads and n-gons: fans, as trimesh's
        from trimesh.geometry import triangulate_quads  # Trimesh(faces=...) makes them

        faces = triangulate_quads(faces)
    faces = faces.reshape(-1, 3)
    n = len(vertices)
    normals = _vertex_normals(vertices, faces, part.get("vertex_normals"))
    uv = None if uv is None or len(uv) != n else np.asarray(uv, np.float64)
    colors = _rgba8(raw_colors) if raw_colors is not None else None
    # back faces are culled only where no back face can show: on closed meshes
    double_sided = not is_closed(faces, vertices)
    if mtl is None:
        if uv is not None:
            uv = np.column_stack([uv[:, 0], 1.0 - uv[:, 1]])
        return Mesh(vertices, faces, colors=colors, normals=normals, uvs=uv,
                    point_size=point_size, material=Material(double_sided=double_sided))
    if mtl.ignored_options:
        for opt in mtl.ignored_options:
            notes.add(f"map_Kd option {opt}", mtl.name)
    for other in mtl.other_maps:
        notes.add(other, mtl.name)
    if mtl.alpha < 1.0:
        notes.add("transparency (drawn opaque)", mtl.name)
    shading = "unlit" if mtl.illum == 0 else "lit"
    texture = None
    if mtl.map_kd:
        texture = _obj_texture(path, mtl, textures, notes, refs)
        if texture is not None and uv is None:
            notes.left_out(f"texture {mtl.map_kd!r} of material {mtl.name!r} (the faces have "
                           "no texture coordinates; drawn in its Kd colour)")
    if uv is not None:
        # -s / -o act in the OBJ's UV space; then v flips (engine (0, 0) = image top-left)
        uv = uv * np.asarray(mtl.uv_scale) + np.asarray(mtl.uv_offset)
        uv = np.column_stack([uv[:, 0], 1.0 - uv[:, 1]])
    if texture is not None and uv is not None:
        material = Material(color=(1.0, 1.0, 1.0, mtl.alpha), shading=shading,
                            texture=texture, vertex_colors=False, specular=mtl.specular,
                            shininess=mtl.shininess, double_sided=double_sided)
        if colors is None:
            colors = to_rgba8(sample_texture(texture, uv))
            colors[:, 3] = to_rgba8(colors[:, 3] / 255.0 * mtl.alpha)
    else:
        material = Material(shading=shading, specular=mtl.specular, shininess=mtl.shininess,
                            double_sided=double_sided)
        if colors is None:
            colors = np.tile(to_rgba8([*mtl.kd, mtl.alpha]), (n, 1))
    return Mesh(vertices, faces, colors=colors, normals=normals, uvs=uv,
                point_size=point_size, material=material)


def _load_ply(path: Path, point_size: float, refs: References) -> Model:
    notes = Notes(path)
    try:
        model = _load_ply_checked(path, point_size, _PlyTextures(refs, notes))
    except IndexError as exc:  # a binary face list naming a vertex that does not exist
        m = re.search(r"index (-?\d+) is out of bounds for axis 0 with size (\d+)", str(exc))
        if m is None:
            raise
        raise LoadError(f"{path}: a face refers to vertex {int(m[1]):,}, but the file has "
                        f"{int(m[2]):,} vertices") from None
    note_non_finite(model, notes)
    notes.emit(model)
    return model


class _PlyTextures:
    """The trimesh resolver for a PLY's ``comment TextureFile NAME``: the file is read
    by ``refs``' rule, and one that is refused is noted (trimesh then loads the mesh
    without its texture)."""

    def __init__(self, refs: References, notes: Notes):
        self.refs, self.notes = refs, notes

    def get(self, name):
        try:
            return self.refs.read(self.refs.folder / str(name).strip())
        except RefusedFile as exc:
            self.notes.left_out(f"texture file {str(name).strip()!r} ({exc}; drawn without "
                                "it)")
            raise


def _load_ply_checked(path: Path, point_size: float, resolver) -> Model:
    import trimesh

    header = fixups.read_ply_header(path)
    fixups.check_ply_body(path, header)
    source = str(path)
    with open(path, "rb") as fh:
        head = fh.read(header.data_offset)
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:  # e.g. a Latin-1 comment, which trimesh cannot decode
        data = head.decode("latin-1").encode("utf-8") + path.read_bytes()[header.data_offset:]
        source = io.BytesIO(data)
    try:
        obj = trimesh.load(source, file_type="ply", process=False,
                           resolver=resolver)
    except ValueError as exc:
        if "unexpected length" not in str(exc):
            raise
        # trimesh sizes every face list like the first: retry with polygons as fans
        fixed = fixups.fan_binary_ply_faces(path, header)
        if fixed is None:
            raise LoadError(f"{path}: binary PLY data does not match the header "
                            "(truncated or corrupt file)") from exc
        try:
            obj = trimesh.load(io.BytesIO(fixed), file_type="ply", process=False,
                               resolver=resolver)
        except ValueError as exc2:
            if "unexpected length" in str(exc2):
                raise LoadError(f"{path}: binary PLY data does not match the header "
                                "(truncated or corrupt file)") from exc2
            raise
    # trimesh keeps the parsed PLY elements in metadata["_ply_raw"] but ignores strips
    raw = obj.metadata.get("_ply_raw", {})
    fixups.check_ply_colors(path, raw)
    strips = raw.get("tristrips")
    if isinstance(obj, trimesh.PointCloud) and strips is not None:
        faces = fixups.tristrip_faces(_strip_indices(strips["data"]))
        colors = obj.colors if len(obj.colors) else None
        geom = Mesh(_positions(obj.vertices), faces, colors=_rgba8(colors),
                    point_size=point_size)
        return Model(path.stem, source=path, geometry=geom)
    if isinstance(obj, trimesh.Trimesh) and obj.visual.kind == "face":
        face_rgba = _rgba8(obj.visual.face_colors)
        polygons = _ply_polygons(raw)
        if polygons is not None and len(polygons) == len(face_rgba) != len(obj.faces):
            # trimesh triangulated the polygons but kept one colour per polygon
            face_rgba = face_rgba[polygon_of_triangle(polygons)]
        return Model(path.stem, source=path, geometry=_geometry(obj, point_size,
                                                                face_rgba=face_rgba))
    return _from_trimesh_object(path, obj, point_size)


def _ply_polygons(raw: dict):
    """The PLY face element's vertex lists as trimesh parsed them ((P, k) array or a
    ragged sequence), or None."""
    data = raw.get("face", {}).get("data")
    if not isinstance(data, dict):
        return None
    for name in ("vertex_indices", "vertex_index"):
        if name in data:
            return data[name]
    return None


def polygon_of_triangle(polygons) -> np.ndarray:
    """(T,) int64: the polygon each triangle trimesh makes of ``polygons`` came from.

    trimesh triangulates with ``trimesh.geometry.triangulate_quads`` (triangles first,
    then quads, then fans, each group in order); triangulating polygons whose every
    index is the polygon's own number gives the map in the same order."""
    from trimesh.geometry import triangulate_quads

    if isinstance(polygons, np.ndarray) and polygons.ndim == 2:
        numbered = np.repeat(np.arange(len(polygons))[:, None], polygons.shape[1], axis=1)
    else:
        numbered = [np.full(len(p), i, np.int64) for i, p in enumerate(polygons)]
    return np.asarray(triangulate_quads(numbered), np.int64).reshape(-1, 3)[:, 0]


def _strip_indices(data) -> np.ndarray:
    """trimesh's raw ``tristrips`` data -> 1-D indices with -1 after every strip.
    ASCII gives {name: (rows, n)}; binary a structured array of (count, values)."""
    if isinstance(data, dict):
        rows = next(iter(data.values()))
    else:
        field = data[data.dtype.names[0]]
        rows = field["f1"] if field.dtype.names else field
    rows = np.atleast_2d(np.asarray(rows, dtype=np.int64))
    return np.concatenate([rows, np.full((len(rows), 1), -1)], axis=1).ravel()


def _load_stl(path: Path, point_size: float, refs: References) -> Model:
    import trimesh

    data = path.read_bytes()
    if not fixups.stl_is_binary(path, data):
        text = fixups.decode_text(data)
        fixups.check_ascii_stl(path, text)
        # trimesh decodes non-UTF-8 text with an optional package: give it UTF-8
        data = text.encode("utf-8")
    # STL stores every triangle's corners separately: merge them (process=True) so each
    # surface point is drawn once
    obj = trimesh.load(io.BytesIO(data), file_type="stl", process=True)
    model = _from_trimesh_object(path, obj, point_size)
    notes = Notes(path)
    note_non_finite(model, notes)
    notes.emit(model)
    return model


def note_non_finite(model: Model, notes: Notes):
    """Note (``notes.left_out``) each mesh of ``model`` with vertices that are not finite
    (a ``nan`` coordinate, an OBJ ``w = 0`` point at infinity): how many, and the
    triangles using them, which no renderer can draw (they are culled when drawn).
    Vertices and triangles are numbered from 1 in the mesh's order (an OBJ or PLY of
    triangles: the file's ``v`` and ``f`` order)."""
    for node in model.traverse():
        g = node.geometry
        faces = getattr(g, "faces", None)
        if faces is None:
            continue
        bad = ~np.isfinite(np.asarray(g.positions)).all(axis=1)
        if not bad.any():
            continue
        verts = np.flatnonzero(bad) + 1
        tris = np.flatnonzero(bad[np.asarray(faces)].any(axis=1)) + 1
        them = "it" if len(verts) == 1 else "them"
        using = (f"the {_counted(tris, 'triangle', 'triangles')} using {them}" if len(tris)
                 else f"no triangle uses {them}")
        where = "" if node is model else f"{node.name}: "
        notes.left_out(f"{where}{_counted(verts, 'non-finite vertex', 'non-finite vertices')}"
                       f" and {using}")


def _counted(numbers, one: str, many: str) -> str:
    """'1 triangle (3)' or '5 triangles (1, 2, 4, 7 and 1 more)'."""
    shown = ", ".join(str(k) for k in numbers[:4])
    more = f" and {len(numbers) - 4} more" if len(numbers) > 4 else ""
    return f"{len(numbers)} {one if len(numbers) == 1 else many} ({shown}{more})"


# ------------------------------------------------------------------ trimesh -> engine
def _from_trimesh_object(path: Path, obj, point_size: float) -> Model:
    import trimesh

    if isinstance(obj, trimesh.Scene):
        return _from_trimesh_scene(path, obj, point_size, {})
    return Model(path.stem, source=path, geometry=_geometry(obj, point_size))


def _from_trimesh_scene(path: Path, tscene, point_size: float, raw_colors: dict,
                        convert=None) -> Model:
    """A trimesh Scene -> Model mirroring its graph; ``convert(name, mesh)`` builds each
    geometry (default: ``_geometry``)."""
    graph = tscene.graph
    parents = graph.transforms.parents  # child -> parent
    children: dict = {}
    for child, parent in parents.items():
        children.setdefault(parent, []).append(child)
    geometries: dict[str, Geometry] = {}
    root = Model(path.stem, source=path)
    if graph.base_frame not in children:
        return root
    stack = [(graph.base_frame, root)]
    while stack:
        name, node = stack.pop()
        for child in reversed(children.get(name, [])):
            data = graph.transforms.edge_data[(name, child)]
            trs = _decompose(path, str(child), data.get("matrix", np.eye(4)))
            gname = data.get("geometry")
            geom = None
            if gname is not None and gname in tscene.geometry:
                if gname not in geometries:
                    tmesh = tscene.geometry[gname]
                    geometries[gname] = (
                        convert(gname, tmesh) if convert is not None
                        else _geometry(tmesh, point_size, raw_colors.get(gname)))
                geom = geometries[gname]
            sub = Node(str(child), geometry=geom, **trs)
            node.add(sub)
            stack.append((child, sub))
    # a lone untransformed geometry node (OBJ with one material) becomes the root itself
    if len(root.children) == 1 and not root.children[0].children \
            and np.allclose(root.children[0].local_matrix, np.eye(4)):
        only = root.remove(root.children[0])
        root.geometry = only.geometry
    return root


def _geometry(obj, point_size: float, raw_colors=None, face_rgba=None) -> Geometry:
    """A trimesh object from a PLY or STL file -> engine geometry (module doc).
    ``face_rgba``: (M, 4) uint8 per-triangle colours replacing the object's own."""
    import trimesh

    if isinstance(obj, trimesh.PointCloud):
        colors = obj.colors if len(obj.colors) else None
        return PointCloud(_positions(obj.vertices), _rgba8(colors), point_size=point_size,
                          normals=_ply_point_normals(obj))
    if not isinstance(obj, trimesh.Trimesh):  # e.g. a Path3D of polylines: its vertices
        return PointCloud(_positions(obj.vertices), point_size=point_size)
    faces = np.asarray(obj.faces, dtype=np.int64).reshape(-1, 3)
    normals = _normals(obj, faces)
    uv = getattr(obj.visual, "uv", None)
    if uv is not None and len(uv) != len(obj.vertices):
        uv = None
    if uv is not None:
        # trimesh keeps UVs with v up (OBJ/GL); the engine's (0, 0) is the image's top-left
        uv = np.column_stack([uv[:, 0], 1.0 - uv[:, 1]])
    material = _texture_material(obj, uv)
    positions = _positions(obj.vertices)
    if raw_colors is not None:
        colors = _rgba8(raw_colors)
    elif material is not None:  # the texture at each vertex, for drawing as points
        from .textures import sample_texture, to_rgba8

        colors = to_rgba8(sample_texture(material.texture, uv))
    elif face_rgba is not None or obj.visual.kind == "face":
        rgba = _rgba8(obj.visual.face_colors) if face_rgba is None else face_rgba
        keep, faces, colors = split_face_colors(faces, rgba, len(positions))
        positions = positions[keep]
        normals = None if normals is None else np.asarray(normals)[keep]
        uv = None if uv is None else uv[keep]
    else:
        colors = _rgba8(obj.visual.vertex_colors) if obj.visual.kind == "vertex" else None
    material = material or Material()
    # back faces are culled only where no back face can show: on closed meshes
    material.double_sided = not is_closed(faces, positions)
    return Mesh(positions, faces, colors=colors, normals=normals, uvs=uv,
                point_size=point_size, material=material)


def split_face_colors(faces, face_rgba, vertex_count: int):
    """Per-face colours as vertex colours without blending them: a vertex whose faces
    have different colours is split into one copy per colour (faces of one colour keep
    sharing their vertices, so smooth normals and UVs stay as they were).

    Args:
        faces: (M, 3) int64 vertex indices.
        face_rgba: (M, 4) uint8 colour of each face.
        vertex_count: N, the original vertices.

    Returns:
        (keep, faces, colors): (V,) int64 index of the original vertex each new vertex
        copies (index positions, normals and UVs with it), the (M, 3) int64 faces over
        the new vertices, and their (V, 4) uint8 colours. Vertices no face uses come
        last, coloured with the mean of the face colours (they show as points).
    """
    faces = np.asarray(faces, np.int64).reshape(-1, 3)
    palette, colour_of_face = np.unique(face_rgba, axis=0, return_inverse=True)
    colour_of_face = colour_of_face.reshape(-1)
    # one new vertex per distinct (original vertex, face colour) pair
    pairs = faces * len(palette) + colour_of_face[:, None]
    unique_pairs, new_faces = np.unique(pairs.reshape(-1), return_inverse=True)
    keep = unique_pairs // len(palette)
    colors = palette[unique_pairs % len(palette)]
    unused = np.setdiff1d(np.arange(vertex_count), keep, assume_unique=True)
    if len(unused):
        mean = np.rint(face_rgba.astype(np.float64).mean(axis=0)).astype(np.uint8)
        keep = np.concatenate([keep, unused])
        colors = np.concatenate([colors, np.broadcast_to(mean, (len(unused), 4))])
    return keep, new_faces.reshape(-1, 3).astype(np.int64), np.ascontiguousarray(colors)


def is_closed(faces, vertices) -> bool:
    """True when every edge of the (M, 3) triangles is shared by exactly two of them, in
    opposite directions (a closed, consistently oriented surface: from outside only front
    faces are seen, so back-face culling cannot open a hole). Vertices at the same
    position count as one (files split them along UV and normal seams)."""
    f = np.asarray(faces, np.int64)
    if not len(f):
        return False
    f = _same_positions(vertices)[f]
    directed = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    n = int(f.max()) + 1
    codes = np.sort(directed[:, 0] * n + directed[:, 1])
    if (codes[1:] == codes[:-1]).any():  # an edge used twice in the same direction
        return False
    # with no edge twice, every reversed edge is an edge exactly when both sorted lists
    # are equal (two sorts: faster than searching each reversed edge)
    return bool(np.array_equal(codes, np.sort(directed[:, 1] * n + directed[:, 0])))


def _same_positions(vertices, position_hash=None) -> np.ndarray:
    """(N,) int64: for each of the (N, 3) ``vertices`` the index of the first vertex at
    the same position (equal as floats, so -0.0 is 0.0 and a NaN matches nothing).

    One sort of a 64-bit hash of each position's bits brings equal positions together
    (a stable sort: the first of them leads); when two rows that are not equal share a
    hash (two different positions, or two NaN rows of the same bits: then equal rows may
    not be neighbours) one lexicographic sort of the coordinates does it instead. The
    hash sort takes half the time of the lexicographic one on the bunny's 36k vertices
    (8.6 against 16.0 ms); ``np.unique(axis=0)`` sorts structured rows, about ten times
    slower (0.1 s). ``position_hash``: (N, 3) uint64 bits -> (N,)
    uint64 (``_position_hash``; injectable for tests)."""
    v = np.asarray(vertices, np.float64).reshape(-1, 3)
    if not len(v):
        return np.zeros(0, np.int64)
    h = (position_hash or _position_hash)((v + 0.0).view(np.uint64))  # -0.0 + 0.0 is 0.0
    order = np.argsort(h, kind="stable")
    new = _new_positions(v[order])
    hs = h[order]
    if ((hs[1:] == hs[:-1]) & new[1:]).any():
        order = np.lexsort(v.T[::-1])
        new = _new_positions(v[order])
    same = np.empty(len(v), np.int64)
    same[order] = order[np.maximum.accumulate(np.where(new, np.arange(len(v)), 0))]
    return same


def _position_hash(bits):
    """(N,) uint64 hash of (N, 3) uint64 coordinate bits: each coordinate times an odd
    constant (the 64-bit golden-ratio and xxHash primes), modulo 2**64, combined by xor."""
    return (bits[:, 0] * np.uint64(0x9E3779B97F4A7C15) ^ bits[:, 1] * np.uint64(0xC2B2AE3D27D4EB4F)
            ^ bits[:, 2] * np.uint64(0x165667B19E3779F9))


def _new_positions(s):
    """(N,) bool over sorted (N, 3) positions: True where a row differs from the one
    before it (the first row, and NaN rows, always)."""
    new = np.ones(len(s), bool)
    new[1:] = (s[1:] != s[:-1]).any(axis=1)
    return new


def _texture_material(mesh, uv):
    """A lit Material sampling the mesh's texture per pixel (a PLY ``TextureFile``
    comment), or None when the mesh has no texture image with UVs."""
    material = getattr(mesh.visual, "material", None)
    if mesh.visual.kind != "texture" or material is None or uv is None:
        return None
    image = _file_image(getattr(material, "image", None))
    if image is None:
        return None
    return Material(texture=Texture(pixels(image, "RGBA")), vertex_colors=False)


def _normals(mesh, faces):
    """(N, 3) vertex normals of a trimesh mesh: ``_vertex_normals`` with the normals the
    file gave (trimesh keeps given normals in its cache)."""
    given = mesh.vertex_normals if "vertex_normals" in mesh._cache else None
    return _vertex_normals(mesh.vertices, faces, given)


def _vertex_normals(vertices, faces, given=None):
    """(N, 3) vertex normals: ``given`` (the file's) when it has one per vertex, else
    area-weighted sums of face normals, normalised. Computed here in NumPy because
    trimesh's own fallback without SciPy is a Python loop (13 s for the armadillo's 29k
    faces)."""
    v = np.asarray(vertices, dtype=np.float64)
    if given is not None:
        given = np.asarray(given)
        if given.shape == v.shape:
            return given
    if not len(faces):
        return None
    # cross product length is twice the triangle area: the sum is area-weighted
    fn = np.cross(v[faces[:, 1]] - v[faces[:, 0]], v[faces[:, 2]] - v[faces[:, 0]])
    fn = np.nan_to_num(fn, nan=0.0, posinf=0.0, neginf=0.0)
    n = np.stack([np.bincount(faces.ravel(), np.repeat(fn[:, k], 3), minlength=len(v))
                  for k in range(3)], axis=1)
    length = np.linalg.norm(n, axis=1, keepdims=True)
    return np.divide(n, length, out=np.zeros_like(n), where=length > 0)


def _file_image(image):
    """The image if it was decoded from a file; trimesh's in-memory placeholder (an
    untextured material's 2x2 grey image) is not a texture of the model."""
    from PIL import ImageFile

    return image if isinstance(image, ImageFile.ImageFile) else None


def _positions(v) -> np.ndarray:
    """(N, 3) float64 positions (float64 makes Geometry recentre them)."""
    return np.asarray(v, dtype=np.float64).reshape(-1, 3)


def _rgba8(colors):
    """Colours as trimesh gives them (uint8 0-255 or float 0-1, 3 or 4 channels) ->
    (N, 4) uint8, or None."""
    if colors is None:
        return None
    c = np.asarray(colors)
    if c.size == 0:
        return None
    if c.dtype != np.uint8:
        c = np.clip(np.rint(np.nan_to_num(c.astype(np.float64)) * 255.0), 0, 255)
        c = c.astype(np.uint8)
    if c.shape[1] == 3:
        c = np.concatenate([c, np.full((len(c), 1), 255, np.uint8)], axis=1)
    return np.ascontiguousarray(c[:, :4])


def _ply_point_normals(obj):
    """(N, 3) float32 normals of a PLY point cloud's vertices (its nx, ny, nz properties,
    kept by trimesh in ``metadata["_ply_raw"]``), or None when the file has none or one
    of them is not finite or zero (not usable for lighting)."""
    data = obj.metadata.get("_ply_raw", {}).get("vertex", {}).get("data")
    # ASCII files give a dict of columns, binary ones a structured array
    names = data.keys() if isinstance(data, dict) else (
        getattr(getattr(data, "dtype", None), "names", None) or ())
    if not all(k in names for k in ("nx", "ny", "nz")):
        return None
    n = np.stack([np.asarray(data[k], np.float64).reshape(-1) for k in ("nx", "ny", "nz")], 1)
    if n.shape[0] != len(obj.vertices) or not np.isfinite(n).all() \
            or not (np.abs(n).sum(axis=1) > 0).all():
        return None
    return n.astype(np.float32)


def _checked_point_size(point_size) -> float:
    """``point_size`` as a float (None stays None: the geometries' default), or
    ValueError naming the argument."""
    if point_size is None:
        return None
    try:
        size = float(point_size)
    except (TypeError, ValueError):
        size = float("nan")
    if not (size > 0 and np.isfinite(size)):
        raise ValueError(f"point_size must be a finite number of pixels > 0, got {point_size!r}")
    return size


def _decompose(path: Path, label: str, matrix) -> dict:
    """Local (4, 4) matrix -> Node keyword arguments position/rotation/scale, such that
    ``T @ R @ S`` reproduces it. A negative determinant is put in the x scale.

    Raises LoadError for a projective, non-finite or sheared matrix (glTF 2.0 requires
    node matrices to be decomposable to TRS).
    """
    try:
        return decompose_trs(matrix)
    except ValueError as exc:
        if "shear" in str(exc):
            raise LoadError(f"{path}: node {label!r} has a sheared transform, which TRS "
                            "scene nodes cannot represent") from None
        raise LoadError(f"{path}: node {label!r} has a non-affine or non-finite "
                        "transform") from None


@contextlib.contextmanager
def _quiet_trimesh():
    """trimesh logs warnings with tracebacks (e.g. a missing texture file): keep them out
    of the user's terminal unless debug logging is on; silence NumPy parse warnings."""
    tlog = logging.getLogger("trimesh")
    old = tlog.level
    if not log.isEnabledFor(logging.DEBUG):
        tlog.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        tlog.setLevel(old)


def _one_line(exc: BaseException) -> str:
    """The exception as one line; bare file names and keys get a word of context."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, FileNotFoundError):
        return f"a file it refers to is missing: {text}"
    if isinstance(exc, ImportError):
        # trimesh re-raises missing optional imports without ``name``: take it from text
        m = re.search(r"No module named '([\w.]+)'", text)
        name = exc.name or (m.group(1) if m else None)
        if name:
            return f"this part of the file needs the optional package {name!r} " \
                f"(pip install {name.split('.')[0]})"
    if isinstance(exc, KeyError):
        return f"a required entry is missing: {text}"
    return text
