"""3D files -> scene-graph nodes: OBJ, PLY (ASCII/binary; meshes and point clouds),
glTF/GLB and STL, read by trimesh and converted to engine geometry.

What is kept:
  - Node hierarchy and transforms (glTF): every trimesh scene-graph node becomes a
    ``Node`` whose TRS reproduces the file's local matrix; instanced meshes share one
    geometry object. Camera and empty nodes become plain nodes (no cameras are imported).
  - Positions as float64, so ``Geometry`` recentres them on their bounding-box midpoint
    (``geometry.origin``) and georeferenced data keeps its precision in float32.
  - Colours, first that applies: per-vertex colours from the file (uchar / 255, so PLY
    ``255 128 0`` -> (1.0, 0.50196, 0.0)); per-face colours (averaged onto vertices);
    the texture image sampled at each vertex UV (times the glTF base colour factor);
    the material's base/diffuse colour; else None (the batch then draws the geometry
    opaque white).
  - Faces (triangulated: quads and n-gons as fans), normals (from the file, else
    area-weighted face normals computed by trimesh) and UVs.

Axes are taken as they are in the file (glTF is +Y up like the engine; OBJ/PLY/STL have
no declared up axis). Loader defects worked around before trimesh reads the file are in
``engine.io.fixups``.

Errors: every problem raises ``engine.errors.LoadError`` with one line that names the
file and what is wrong (missing file, not a regular file, unknown format, an empty
file, malformed or truncated data with its line or byte counts, a file with no
vertices). A bad ``point_size`` argument is a ValueError, raised before the file is read.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import re
import struct
import warnings
from pathlib import Path

import numpy as np

from ..errors import LoadError
from ..scene.geometry import Geometry, Mesh, PointCloud
from ..scene.graph import Node
from ..scene.material import Material, Texture
from ..scene.transforms import matrix_to_quat
from . import fixups

__all__ = ["SUPPORTED_SUFFIXES", "load"]

log = logging.getLogger("engine")

#: File suffixes ``load`` reads, and the format each names.
SUPPORTED_SUFFIXES = {".obj": "OBJ", ".ply": "PLY", ".gltf": "glTF", ".glb": "GLB",
                      ".stl": "STL"}


def load(path, point_size: float = 2.0) -> Node:
    """Load the 3D file at ``path`` as a scene-graph subtree.

    Args:
        path: a .obj, .ply, .gltf, .glb or .stl file (suffix decides the format; case
            does not matter). OBJ materials/textures and glTF buffers are found next to it.
        point_size: splat size in pixels given to every geometry.

    Returns:
        A ``Node`` named after the file stem. A file with one geometry gives that node
        with the geometry attached; a file with a scene graph (glTF, OBJ split by
        material) gives a root node whose children mirror the file's hierarchy with
        their local transforms. Geometry is a ``Mesh`` (vertices, triangles) or a
        ``PointCloud`` (a PLY/OBJ without faces), positions in the node's local frame.

    Raises:
        TypeError: ``path`` is not a str or os.PathLike (None, say), naming it.
        ValueError: ``point_size`` is not a finite number > 0 (checked before reading).
        LoadError: one line naming the file and the problem.
    """
    size = _checked_point_size(point_size)
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path (str or pathlib.Path), got {path!r}")
    path = Path(path)
    suffix = path.suffix.lower()
    if not path.exists():
        raise LoadError(f"{path}: no such file")
    if not path.is_file():
        raise LoadError(f"{path}: not a file")
    if suffix not in SUPPORTED_SUFFIXES:
        known = ", ".join(SUPPORTED_SUFFIXES)
        raise LoadError(f"{path}: unknown 3D file format {suffix or '(no suffix)'!r} "
                        f"(supported: {known})")
    fmt = SUPPORTED_SUFFIXES[suffix]
    if path.stat().st_size == 0:
        raise LoadError(f"{path}: the file is empty (0 bytes)")
    reader = {".obj": _load_obj, ".ply": _load_ply, ".stl": _load_stl, ".gltf": _load_gltf,
              ".glb": _load_glb}[suffix]
    try:
        with _quiet_trimesh():
            node = reader(path, size)
    except LoadError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, OSError, AttributeError,
            AssertionError, EOFError, ImportError, NotImplementedError,
            struct.error) as exc:
        raise LoadError(f"{path}: cannot read {fmt} file: {_one_line(exc)}") from exc
    if not any(n.geometry is not None and n.geometry.vertex_count for n in node.traverse()):
        raise LoadError(f"{path}: the file contains no vertices")
    return node


# --------------------------------------------------------------------------- formats
def _load_obj(path: Path, point_size: float) -> Node:
    import trimesh
    from trimesh.exchange.obj import load_obj

    text = fixups.normalize_obj(fixups.decode_text(path.read_bytes()))
    resolver = trimesh.resolvers.FilePathResolver(str(path))
    # each mesh keeps the vertices its faces use (trimesh's default)
    kw = load_obj(io.StringIO(text), resolver=resolver)
    if "geometry" not in kw:  # no faces: a point cloud
        colors = kw.get("vertex_colors")
        return Node(path.stem, geometry=PointCloud(
            _positions(kw["vertices"]), _rgba8(colors), point_size=point_size))
    # trimesh replaces `v x y z r g b` colours by a texture visual when the file also
    # has `vt` lines; keep the colours from the parsed data instead.
    tscene = trimesh.Scene()
    raw_colors = {}
    for name, g in kw["geometry"].items():
        mesh = trimesh.Trimesh(vertices=g["vertices"], faces=g["faces"],
                               vertex_normals=g.get("vertex_normals"),
                               visual=g.get("visual"), process=False)
        tscene.add_geometry(mesh, geom_name=name, node_name=name)
        raw_colors[name] = g.get("vertex_colors")
    return _from_trimesh_scene(path, tscene, point_size, raw_colors)


def _load_ply(path: Path, point_size: float) -> Node:
    import trimesh

    header = fixups.read_ply_header(path)
    fixups.check_ply_body(path, header)
    try:
        obj = trimesh.load(str(path), process=False)
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
                               resolver=trimesh.resolvers.FilePathResolver(str(path)))
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
        return Node(path.stem, geometry=geom)
    return _from_trimesh_object(path, obj, point_size)


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


def _load_stl(path: Path, point_size: float) -> Node:
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
    return _from_trimesh_object(path, obj, point_size)


def _load_gltf(path: Path, point_size: float) -> Node:
    import trimesh

    text = fixups.check_gltf_json(path, path.read_bytes())
    obj = trimesh.load(io.BytesIO(text), file_type="gltf", process=False,
                       resolver=trimesh.resolvers.FilePathResolver(str(path)))
    return _from_trimesh_object(path, obj, point_size)


def _load_glb(path: Path, point_size: float) -> Node:
    import trimesh

    data = path.read_bytes()
    fixups.check_glb(path, data)
    obj = trimesh.load(io.BytesIO(data), file_type="glb", process=False,
                       resolver=trimesh.resolvers.FilePathResolver(str(path)))
    return _from_trimesh_object(path, obj, point_size)


# ------------------------------------------------------------------ trimesh -> engine
def _from_trimesh_object(path: Path, obj, point_size: float) -> Node:
    import trimesh

    if isinstance(obj, trimesh.Scene):
        return _from_trimesh_scene(path, obj, point_size, {})
    return Node(path.stem, geometry=_geometry(obj, point_size))


def _from_trimesh_scene(path: Path, tscene, point_size: float, raw_colors: dict) -> Node:
    graph = tscene.graph
    parents = graph.transforms.parents  # child -> parent
    children: dict = {}
    for child, parent in parents.items():
        children.setdefault(parent, []).append(child)
    geometries: dict[str, Geometry] = {}
    root = Node(path.stem)
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
                    geometries[gname] = _geometry(tscene.geometry[gname], point_size,
                                                  raw_colors.get(gname))
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


def _geometry(obj, point_size: float, raw_colors=None) -> Geometry:
    import trimesh

    if isinstance(obj, trimesh.PointCloud):
        colors = obj.colors if len(obj.colors) else None
        return PointCloud(_positions(obj.vertices), _rgba8(colors), point_size=point_size)
    if not isinstance(obj, trimesh.Trimesh):  # e.g. a Path3D of polylines: its vertices
        return PointCloud(_positions(obj.vertices), point_size=point_size)
    colors = _rgba8(raw_colors) if raw_colors is not None else _visual_colors(obj)
    faces = np.asarray(obj.faces, dtype=np.int64).reshape(-1, 3)
    normals = _normals(obj, faces)
    uv = getattr(obj.visual, "uv", None)
    if uv is not None and len(uv) != len(obj.vertices):
        uv = None
    if uv is not None:
        # trimesh keeps UVs with v up (OBJ/GL); the engine's (0, 0) is the image's top-left
        uv = np.column_stack([uv[:, 0], 1.0 - uv[:, 1]])
    material = _texture_material(obj, uv) or Material()
    # back faces are culled only where no back face can show: on closed meshes
    material.double_sided = not is_closed(faces, np.asarray(obj.vertices))
    return Mesh(_positions(obj.vertices), faces, colors=colors, normals=normals, uvs=uv,
                point_size=point_size, material=material)


def is_closed(faces, vertices) -> bool:
    """True when every edge of the (M, 3) triangles is shared by exactly two of them, in
    opposite directions (a closed, consistently oriented surface: from outside only front
    faces are seen, so back-face culling cannot open a hole). Vertices at the same
    position count as one (files split them along UV and normal seams)."""
    f = np.asarray(faces, np.int64)
    if not len(f):
        return False
    _, same = np.unique(np.asarray(vertices, np.float64), axis=0, return_inverse=True)
    f = same.reshape(-1)[f]
    directed = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    n = int(f.max()) + 1
    codes = directed[:, 0] * n + directed[:, 1]
    reverse = directed[:, 1] * n + directed[:, 0]
    if len(np.unique(codes)) != len(codes):  # an edge used twice in the same direction
        return False
    return bool(np.isin(reverse, codes, assume_unique=True).all())


def _texture_material(mesh, uv):
    """A lit Material sampling the mesh's base-colour texture per pixel (times the glTF
    baseColorFactor), or None when the mesh has no texture image with UVs. The vertex
    colours (the texture sampled at each vertex) then serve the point mode only."""
    material = getattr(mesh.visual, "material", None)
    if mesh.visual.kind != "texture" or material is None or uv is None:
        return None
    if hasattr(material, "baseColorTexture"):  # glTF PBR material
        image = material.baseColorTexture
    else:
        image = _file_image(getattr(material, "image", None))
    if image is None:
        return None
    factor = getattr(material, "baseColorFactor", None)
    color = (1.0, 1.0, 1.0, 1.0) if factor is None else tuple(
        float(c) / 255.0 for c in np.asarray(factor, dtype=np.float64)[:4])
    return Material(color=color, texture=Texture(np.asarray(image.convert("RGBA"))),
                    vertex_colors=False)


def _normals(mesh, faces):
    """(N, 3) vertex normals: the file's when it has them (trimesh keeps given normals in
    its cache), else area-weighted sums of face normals, normalised. Computed here in
    NumPy because trimesh's own fallback without SciPy is a Python loop (13 s for the
    armadillo's 29k faces)."""
    v = np.asarray(mesh.vertices, dtype=np.float64)
    if "vertex_normals" in mesh._cache:
        given = np.asarray(mesh.vertex_normals)
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


def _visual_colors(mesh):
    """(N, 4) uint8 vertex colours of a trimesh mesh, or None (see module doc)."""
    from trimesh.visual.color import uv_to_color

    visual = mesh.visual
    kind = visual.kind
    if kind == "vertex":
        return _rgba8(visual.vertex_colors)
    if kind == "face":
        return _face_to_vertex_colors(np.asarray(mesh.faces), _rgba8(visual.face_colors),
                                      len(mesh.vertices))
    material = getattr(visual, "material", None)
    if kind != "texture" or material is None:
        return None
    factor = getattr(material, "baseColorFactor", None)
    if hasattr(material, "baseColorTexture"):  # glTF PBR material
        image = material.baseColorTexture
    else:
        image = _file_image(getattr(material, "image", None))
    uv = getattr(visual, "uv", None)
    n = len(mesh.vertices)
    if image is not None and uv is not None and len(uv) == n:
        rgba = uv_to_color(uv, image).astype(np.float64)
        if factor is not None:
            rgba *= np.asarray(factor, dtype=np.float64)[:4] / 255.0
        return np.clip(np.rint(rgba), 0, 255).astype(np.uint8)
    if factor is not None:
        return np.tile(np.asarray(factor, dtype=np.uint8)[:4], (n, 1))
    if getattr(material, "kwargs", None):  # a material defined by an MTL file
        return np.tile(np.asarray(material.main_color, dtype=np.uint8)[:4], (n, 1))
    return None


def _face_to_vertex_colors(faces, face_rgba, n: int):
    """(M, 4) uint8 face colours -> (N, 4) uint8 vertex colours: the mean over the faces
    using each vertex (vertices no face uses get the mean of all faces). NumPy here,
    because trimesh's own conversion needs SciPy."""
    w = np.bincount(faces.ravel(), minlength=n).astype(np.float64)
    out = np.empty((n, 4))
    for k in range(4):
        total = np.bincount(faces.ravel(), np.repeat(face_rgba[:, k].astype(np.float64), 3),
                            minlength=n)
        out[:, k] = np.divide(total, w, out=np.full(n, face_rgba[:, k].mean()), where=w > 0)
    return np.rint(out).astype(np.uint8)


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


def _checked_point_size(point_size) -> float:
    """``point_size`` as a float, or ValueError naming the argument."""
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
    m = np.asarray(matrix, dtype=np.float64)
    if m.shape != (4, 4) or not np.all(np.isfinite(m)) or not np.allclose(m[3], [0, 0, 0, 1]):
        raise LoadError(f"{path}: node {label!r} has a non-affine or non-finite transform")
    a = m[:3, :3]
    scale = np.linalg.norm(a, axis=0)
    if np.linalg.det(a) < 0:
        scale[0] = -scale[0]
    safe = np.where(scale == 0, 1.0, scale)
    rot = a / safe
    rot[:, scale == 0] = np.eye(3)[:, scale == 0]
    if not np.allclose(rot.T @ rot, np.eye(3), atol=1e-5):
        raise LoadError(f"{path}: node {label!r} has a sheared transform, which TRS scene "
                        "nodes cannot represent")
    return {"position": m[:3, 3], "rotation": matrix_to_quat(rot), "scale": scale}


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
