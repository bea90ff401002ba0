"""glTF 2.0 document -> engine scene graph: nodes, meshes and their primitives, cameras,
morph targets, skins, animations (translation, rotation, scale and weights channels).

Primitive modes (spec 3.7.2.1, "Topology types"), for vertex (or index) list v::

    0 POINTS          PointCloud of the referenced vertices
    1 LINES           Lines: segments {v_2i, v_2i+1}
    2 LINE_LOOP       Lines: {v_i, v_i+1} and {v_n-1, v_0}
    3 LINE_STRIP      Lines: {v_i, v_i+1}
    4 TRIANGLES       Mesh: {v_3i, v_3i+1, v_3i+2}
    5 TRIANGLE_STRIP  Mesh: {v_i, v_i+(1+i%2), v_i+(2-i%2)}
    6 TRIANGLE_FAN    Mesh: {v_i+1, v_i+2, v_0}

Each primitive is its own geometry: a mesh with one primitive puts it on its node; with
several, each goes on a child node "<mesh name>/<i>" (identity transform).

A primitive without NORMAL gets flat shading (the spec asks for flat normals then).
Morph targets (3.7.2.2) keep their POSITION/NORMAL/TANGENT deltas on the Mesh
(``morph_positions`` ...), the mesh's ``weights`` as its default ``morph_weights`` and a
node's ``weights`` as ``node.morph_weights``; skins (3.7.3) become ``engine.scene.deform.Skin``
objects on the nodes that draw the skinned mesh (each primitive child too), with
JOINTS_n/WEIGHTS_n (unsigned byte/short joints, float or normalized weights, any number
of sets) as the Mesh's ``joints``/``weights``. The renderer deforms them in its vertex
stage (``engine.render.deform``).
Nodes keep their TRS (a ``matrix`` is decomposed; it must be a rotation-scale-translation
as the spec requires). Cameras become ``PerspectiveCamera`` / ``OrthographicCamera``
children of the nodes using them (yfov radians -> fov_y degrees; ortho height =
2 abs(ymag)); the aspect ratio follows the viewport (``aspectRatio`` is not imposed) and a
perspective camera without ``zfar`` gets a far plane twice the distance to the far side
of the model's bounding sphere. KHR_lights_punctual lights become engine lights on the
nodes placing them (engine.io.gltf.lights).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ...scene.camera import OrthographicCamera, PerspectiveCamera
from ...scene.clips import Clip, TransformTrack
from ...scene.colorspace import linear_to_srgb, srgb_to_linear
from ...scene.deform import Skin, normalized_influences
from ...scene.geometry import FLOAT32_MAX, Lines, Mesh, PointCloud
from ...scene.graph import Node
from ...scene.material import textures_read
from ...scene.model import Model
from ...scene.transforms import decompose_trs
from ..notes import Notes
from ..references import References
from ..textures import sample_texture, to_rgba8
from .accessors import COMPONENT_NAMES, AccessorReader
from .document import Document, read_document
from .lights import node_light
from .materials import GLTF_TEXTURE_NAMES, Materials

__all__ = ["SUPPORTED_EXTENSIONS", "load_gltf"]

#: Extensions the loader implements (others in extensionsRequired refuse the file).
SUPPORTED_EXTENSIONS = frozenset({
    "KHR_materials_unlit", "KHR_texture_transform", "KHR_mesh_quantization",
    "KHR_materials_emissive_strength", "EXT_texture_webp", "KHR_lights_punctual"})
_HINTS = {
    "KHR_draco_mesh_compression": "Draco-compressed geometry; decompress it first, e.g. "
                                  "with glTF-Transform or Blender",
    "EXT_meshopt_compression": "meshoptimizer-compressed buffers; decompress it first",
    "KHR_texture_basisu": "KTX2/Basis Universal textures",
}
_MODES = {0: "POINTS", 1: "LINES", 2: "LINE_LOOP", 3: "LINE_STRIP", 4: "TRIANGLES",
          5: "TRIANGLE_STRIP", 6: "TRIANGLE_FAN"}


def load_gltf(path: Path, point_size: float, refs: References | None = None) -> Model:
    """Load a .gltf or .glb file (see the package docstring); ``refs``: the files its
    URIs may read (``engine.io.references``; default: its folder). Raises LoadError."""
    data = path.read_bytes()
    doc = read_document(path, data, refs)
    return _Builder(doc, point_size).build()


class _Builder:
    def __init__(self, doc: Document, point_size: float):
        self.doc = doc
        self.point_size = point_size
        self.notes = Notes(doc.path)
        self.accessors = AccessorReader(doc)
        self.materials = Materials(doc, self.notes)
        self.meshes: dict = {}
        self.skinned: list = []  # (node, glTF skin index, where) resolved after the nodes

    # ------------------------------------------------------------------ top level
    def build(self) -> Model:
        doc = self.doc
        self._check_extensions()
        path = doc.path
        model = self.model = Model(path.stem, source=path)
        nodes = doc.array("nodes")
        parent = self.parent = self._hierarchy(len(nodes))
        scenes = doc.array("scenes")
        if scenes:
            si = doc.ref(doc.json, "scene", "(root)", "scenes", default=0)
            scene = doc.item("scenes", si)
            roots = [doc.index(r, f"scenes[{si}].nodes[{k}]", "nodes")
                     for k, r in enumerate(doc.list(scene, "nodes", f"scenes[{si}]"))]
            for k, r in enumerate(roots):
                if parent[r] is not None:
                    raise doc.error(f"scenes[{si}].nodes[{k}]", f"nodes[{r}] is not a root: it "
                                    f"is a child of nodes[{parent[r]}]")
        else:  # no scene: every root node (the spec leaves this to the client)
            roots = [i for i in range(len(nodes)) if parent[i] is None]
            if not nodes:  # meshes alone: each once at the origin
                for mi in range(len(doc.array("meshes"))):
                    self._attach(model.add(Node(f"mesh {mi}")), self._mesh(mi), mi)
        objs: list[Node | None] = [None] * len(nodes)
        cameras: dict[int, Node] = {}
        stack = [(r, model) for r in reversed(roots)]
        while stack:
            i, up = stack.pop()
            node = self._node(i, model, cameras)
            objs[i] = node
            up.add(node)
            kids = doc.list(doc.item("nodes", i), "children", f"nodes[{i}]")
            stack.extend((int(c), node) for c in reversed(kids))
        for ci in range(len(doc.array("cameras"))):
            if ci not in cameras:  # defined but used by no node: at the model's origin
                cam = self._camera(ci, f"camera {ci}")
                model.add(cam)
                cameras[ci] = cam
        model.cameras = [cameras[ci] for ci in sorted(cameras)]
        self._far_planes(model)
        self._skins(objs)
        model.clips = self._animations(objs)
        for name in doc.json.get("extensionsUsed", []) if isinstance(
                doc.json.get("extensionsUsed"), list) else []:
            if (isinstance(name, str) and name not in SUPPORTED_EXTENSIONS
                    and not name.startswith("KHR_materials_")):
                self.notes.add(f"extension {name}")
        self.notes.emit(model)
        return model

    def _check_extensions(self):
        doc = self.doc
        for k, name in enumerate(doc.list(doc.json, "extensionsRequired", "(root)")):
            if not isinstance(name, str):
                raise doc.error(f"extensionsRequired[{k}]", "must be a string")
            if name not in SUPPORTED_EXTENSIONS:
                hint = _HINTS.get(name)
                raise doc.error("extensionsRequired", f"the file needs extension {name}"
                                f"{f' ({hint})' if hint else ''}, which this engine does "
                                f"not implement (supported: "
                                f"{', '.join(sorted(SUPPORTED_EXTENSIONS))})")

    def _hierarchy(self, n: int) -> list[int | None]:
        """Parent of every node; LoadError for a bad child index, a node with two
        parents, or a cycle (glTF node hierarchies are forests)."""
        doc = self.doc
        parent: list[int | None] = [None] * n
        for i in range(n):
            where = f"nodes[{i}]"
            node = doc.item("nodes", i)
            for k, c in enumerate(doc.list(node, "children", where)):
                c = doc.index(c, f"{where}.children[{k}]", "nodes")
                if c == i:
                    raise doc.error(f"{where}.children[{k}]", "a node cannot be its own child")
                if parent[c] is not None:
                    raise doc.error(f"{where}.children[{k}]", f"nodes[{c}] is already a child "
                                    f"of nodes[{parent[c]}] (a node has one parent)")
                parent[c] = i
        # with one parent each, a cycle is a chain that never reaches a root
        state = [0] * n  # 0 unknown, 1 reaches a root
        for i in range(n):
            chain, j = [], i
            while j is not None and state[j] == 0:
                if len(chain) > n:
                    raise doc.error(f"nodes[{i}]", "the node hierarchy has a cycle")
                chain.append(j)
                j = parent[j]
            for c in chain:
                state[c] = 1
        return parent

    # ------------------------------------------------------------------- nodes
    def _transform_node(self, i: int) -> Node:
        """A Node with ``nodes[i]``'s name and transform (nothing attached)."""
        doc = self.doc
        where = f"nodes[{i}]"
        d = doc.item("nodes", i)
        name = doc.name(d, where, f"node {i}")
        if "matrix" in d:
            m = np.array(doc.numbers(d, "matrix", where, 16)).reshape(4, 4).T  # column-major
            trs = self._decompose(m, f"{where}.matrix")
        else:
            q = np.array(doc.numbers(d, "rotation", where, 4, default=(0.0, 0.0, 0.0, 1.0)))
            big = float(np.max(np.abs(q)))
            if big < 1e-150:
                raise doc.error(f"{where}.rotation", "must be a unit quaternion, got zero")
            q = q / big  # the same rotation, and its length cannot overflow
            trs = {"position": doc.numbers(d, "translation", where, 3, default=(0.0, 0.0, 0.0)),
                   "rotation": q,
                   "scale": doc.numbers(d, "scale", where, 3, default=(1.0, 1.0, 1.0))}
        return Node(name, **trs)

    def _node(self, i: int, model: Model, cameras: dict) -> Node:
        doc = self.doc
        where = f"nodes[{i}]"
        d = doc.item("nodes", i)
        node = self._transform_node(i)
        name = node.name
        mesh = doc.ref(d, "mesh", where, "meshes", default=None)
        if mesh is not None:
            prims = self._mesh(mesh)
            self._attach(node, prims, mesh)
            targets = max((g.morph_target_count for g in prims
                           if isinstance(g, Mesh)), default=0)
            if "weights" in d:
                w = self._weights(d, where)
                if len(w) != targets:
                    raise doc.error(f"{where}.weights", f"{len(w)} weights but the mesh has "
                                    f"{targets} morph targets")
                for n in self._geometry_nodes(node):
                    n.morph_weights = np.array(w, np.float64)
            if "skin" in d:
                self.skinned.append((node, doc.ref(d, "skin", where, "skins"), where))
        cam = doc.ref(d, "camera", where, "cameras", default=None)
        if cam is not None:
            c = node.add(self._camera(cam, f"{name} camera"))
            cameras.setdefault(cam, c)
        light = node_light(doc, d, where, name)
        if light is not None:
            node.add(light)
        return node

    def _attach(self, node: Node, prims, mesh_index: int):
        mesh_name = self.doc.name(self.doc.item("meshes", mesh_index), "", f"mesh {mesh_index}")
        geoms = [g for g in prims if g is not None]
        if len(geoms) == 1:
            node.geometry = geoms[0]
            return
        for k, g in enumerate(geoms):
            child = node.add(Node(f"{mesh_name}/{k}", geometry=g))
            child._gltf_primitive = True

    def _decompose(self, m: np.ndarray, where: str) -> dict:
        try:
            return decompose_trs(m)
        except ValueError as exc:
            if "shear" in str(exc):
                raise self.doc.error(where, "has shear, which glTF does not allow (a node "
                                     "matrix must decompose into translation, rotation and "
                                     "scale)") from None
            raise self.doc.error(where, "is not an affine transform (its last row is not "
                                 "0, 0, 0, 1)") from None

    def _weights(self, d: dict, where: str) -> list[float]:
        doc = self.doc
        out = []
        for k, w in enumerate(doc.list(d, "weights", where)):
            out.append(doc.value_number(w, f"{where}.weights[{k}]"))
        return out

    # ------------------------------------------------------------------ cameras
    def _camera(self, index: int, name: str):
        doc = self.doc
        where = f"cameras[{index}]"
        c = doc.item("cameras", index)
        kind = doc.string(c, "type", where, choices=("perspective", "orthographic"))
        p = doc.obj(c, kind, where, required=True)
        pw = f"{where}.{kind}"
        if kind == "perspective":
            yfov = doc.number(p, "yfov", pw, lo=0.0, lo_open=True, hi=math.pi - 1e-9)
            near = doc.number(p, "znear", pw, lo=0.0, lo_open=True, hi=1e30)
            far = doc.number(p, "zfar", pw, default=None, lo=near, lo_open=True)
            if "aspectRatio" in p:
                doc.number(p, "aspectRatio", pw, lo=0.0, lo_open=True)
            cam = PerspectiveCamera(fov_y=math.degrees(yfov), near=near,
                                    far=far if far is not None else near * 2.0, name=name)
            cam._gltf_infinite = far is None
            return cam
        xmag = doc.number(p, "xmag", pw)
        ymag = doc.number(p, "ymag", pw)
        if xmag == 0 or ymag == 0:
            raise doc.error(pw, "xmag and ymag must not be zero")
        near = doc.number(p, "znear", pw, lo=0.0, hi=1e30)
        far = doc.number(p, "zfar", pw, lo=near, lo_open=True)
        cam = OrthographicCamera(height=2.0 * abs(ymag), near=max(near, far * 1e-7), far=far,
                                 name=name)
        cam._gltf_infinite = False
        return cam

    def _far_planes(self, model: Model):
        """Finite far planes for perspective cameras without zfar (module doc)."""
        if not any(getattr(c, "_gltf_infinite", False) for c in model.cameras):
            return
        boxes = []
        for n in model.traverse():
            g = n.geometry
            b = None if g is None else g.bounds()
            if b is not None:
                corners = np.array([[b[i, 0], b[j, 1], b[k, 2], 1.0]
                                    for i in (0, 1) for j in (0, 1) for k in (0, 1)])
                boxes.append((corners @ n.world_matrix.T)[:, :3])
        if boxes:
            pts = np.concatenate(boxes)
            center = 0.5 * (pts.min(0) + pts.max(0))
            radius = 0.5 * float(np.linalg.norm(pts.max(0) - pts.min(0)))
        else:
            center, radius = np.zeros(3), 1.0
        for cam in model.cameras:
            if getattr(cam, "_gltf_infinite", False):
                dist = float(np.linalg.norm(cam.world_position - center))
                far = max(2.0 * (dist + radius), cam.near * 1000.0)
                if not math.isfinite(far):  # geometry at 1e300: any finite far plane
                    far = max(1e30, cam.near * 1000.0)
                cam.set_clip(cam.near, far)

    # ------------------------------------------------------------------- meshes
    @staticmethod
    def _geometry_nodes(node: Node) -> list[Node]:
        """The nodes drawing a glTF node's mesh: itself, or its primitive children."""
        if node.geometry is not None:
            return [node]
        return [c for c in node.children if c.geometry is not None
                and getattr(c, "_gltf_primitive", False)]

    def _mesh(self, index: int):
        if index not in self.meshes:
            doc = self.doc
            where = f"meshes[{index}]"
            m = doc.item("meshes", index)
            prims = doc.list(m, "primitives", where, required=True, min_len=1)
            weights = tuple(self._weights(m, where)) if "weights" in m else None
            self.meshes[index] = [self._primitive(index, k, weights)
                                  for k in range(len(prims))]
        return self.meshes[index]

    def _attribute(self, attrs: dict, name: str, where: str, count: int | None,
                   widths=(1, 2, 3, 4)):
        """Float64 (count, k) data of attribute ``name`` or None when absent."""
        doc = self.doc
        if name not in attrs:
            return None
        i = doc.ref(attrs, name, where, "accessors")
        acc = self.accessors.read(i)
        if acc.data.shape[1] not in widths:
            raise doc.error(f"{where}.{name}", f"accessors[{i}] is {acc.type}, not "
                            f"{' or '.join(('SCALAR', 'VEC2', 'VEC3', 'VEC4')[w - 1] for w in widths)}")
        if count is not None and acc.count != count:
            raise doc.error(f"{where}.{name}", f"accessors[{i}] has {acc.count:,} elements but "
                            f"POSITION has {count:,} (all attributes of a primitive have the "
                            "same count)")
        return acc.floats()

    def _primitive(self, mesh: int, k: int, weights):
        doc = self.doc
        where = f"meshes[{mesh}].primitives[{k}]"
        p = doc.item("meshes", mesh)["primitives"][k]
        if not isinstance(p, dict):
            raise doc.error(where, "must be an object")
        attrs = doc.obj(p, "attributes", where, required=True)
        mode = doc.integer(p, "mode", where, default=4, hi=6)
        pos = self._attribute(attrs, "POSITION", f"{where}.attributes", None, (3,))
        if pos is None:
            self.notes.left_out(f"{where} (no POSITION)")
            return None
        n = len(pos)
        normals = self._attribute(attrs, "NORMAL", f"{where}.attributes", n, (3,))
        targets = doc.list(p, "targets", where)
        morph = self._morph(targets, weights, n, where) if targets else {}
        skin = self._influences(attrs, f"{where}.attributes", n)
        mat_index = doc.ref(p, "material", where, "materials", default=None)
        info = self.materials.get(mat_index)
        # the two UV sets the engine carries, each transformed by the KHR_texture_transform
        # of the first texture reading it (engine.io.gltf.materials)
        sets = [self._attribute(attrs, f"TEXCOORD_{k}", f"{where}.attributes", n, (2,))
                for k in (0, 1)]
        for s, transform in info.set_transforms.items():
            if sets[s] is not None and transform is not None:
                sets[s] = self._transformed(sets[s], transform, mat_index)
        uv = sets[info.texcoord]
        color0 = self._attribute(attrs, "COLOR_0", f"{where}.attributes", n, (3, 4))
        idx = self._indices(p, where, n)
        # colours in linear space: factor x COLOR_0 (x the texture at the vertex for points)
        lin = np.tile(info.factor, (n, 1))
        if color0 is not None:
            c = np.ones((n, 4))
            c[:, :color0.shape[1]] = color0
            lin *= np.clip(c, 0.0, 1.0)
        # a texture whose UV set the primitive lacks is left out (drawn as if absent)
        missing = [s for s in (0, 1) if sets[s] is None]
        without = info.roles_on(missing)
        for role in without:
            k = info.tex_coords.get(role, 0)
            self.notes.left_out(f"{where}: {GLTF_TEXTURE_NAMES[role]} without TEXCOORD_{k}")
        textured = info.texture is not None and "base_color" not in without
        if textured and color0 is None:
            t = sample_texture(info.texture, uv)
            t[:, :3] = srgb_to_linear(t[:, :3])
            lin = lin * t
        colors = np.concatenate([to_rgba8(linear_to_srgb(lin[:, :3])), to_rgba8(lin[:, 3:])],
                                axis=1)
        material = info.engine_material(vertex_colors=color0 is not None or not textured,
                                        flat=normals is None, without=without)
        # keep only the sets some drawn texture reads
        used = {material.tex_coords.get(r, 0) for r, _ in textures_read(material)}
        for s in (0, 1):
            if s not in used:
                sets[s] = None
        tangents = self._attribute(attrs, "TANGENT", f"{where}.attributes", n, (4,))
        if tangents is not None:
            # xyz unit; w is +-1 (glTF 2.0 3.7.2.1): its sign is the handedness
            length = np.linalg.norm(tangents[:, :3], axis=1, keepdims=True)
            tangents[:, :3] = np.divide(tangents[:, :3], length,
                                        out=np.zeros_like(tangents[:, :3]), where=length > 0)
            tangents[:, 3] = np.where(tangents[:, 3] < 0, -1.0, 1.0)
        if normals is None or "normal" not in material.maps:
            tangents = None  # without NORMAL the spec ignores TANGENT (flat normals)
        if mode == 0:
            keep = idx if idx is not None else slice(None)
            return PointCloud(pos[keep], colors[keep], point_size=self.point_size)
        if idx is None:
            idx = np.arange(n, dtype=np.int64)
        if mode in (1, 2, 3):
            return Lines(pos, self._segments(idx, mode, where), colors,
                         point_size=self.point_size)
        faces = self._triangles(idx, mode, where)
        if normals is not None:
            length = np.linalg.norm(normals, axis=1, keepdims=True)
            normals = np.divide(normals, length, out=np.zeros_like(normals), where=length > 0)
        return Mesh(pos, faces, colors=colors, normals=normals, uvs=sets[0], uvs1=sets[1],
                    tangents=tangents, point_size=self.point_size, material=material, **skin,
                    **morph)

    def _transformed(self, uv, transform, mat_index):
        """(n, 2) texture coordinates through a (3, 3) KHR_texture_transform, checked to
        stay within float32."""
        with np.errstate(over="ignore", invalid="ignore"):  # checked just below
            uv = uv @ transform[:2, :2].T + transform[:2, 2]
        reach = float(np.abs(uv).max()) if len(uv) else 0.0
        if not reach <= FLOAT32_MAX:
            far = f"{reach:.3g}" if np.isfinite(reach) else "more than 1.8e+308"
            raise self.doc.error(f"materials[{mat_index}]", "KHR_texture_transform puts "
                                 f"texture coordinates {far} out, beyond the float32 range "
                                 f"({FLOAT32_MAX:.3g})")
        return uv

    def _indices(self, p: dict, where: str, n: int):
        doc = self.doc
        if "indices" not in p:
            return None
        i = doc.ref(p, "indices", where, "accessors")
        comp, type_, _, normalized = self.accessors.header(i)
        if type_ != "SCALAR" or comp not in (5121, 5123, 5125) or normalized:
            raise doc.error(f"{where}.indices", f"accessors[{i}] must hold SCALAR unsigned "
                            f"integers, not {type_} {COMPONENT_NAMES[comp]}"
                            f"{' normalized' if normalized else ''}")
        idx = self.accessors.read(i).data[:, 0].astype(np.int64)
        if len(idx) and int(idx.max()) >= n:
            bad = int(np.argmax(idx >= n))
            raise doc.error(f"{where}.indices", f"index {int(idx[bad]):,} at position {bad:,} "
                            f"of accessors[{i}] is out of range: POSITION has {n:,} vertices")
        return idx

    def _segments(self, idx: np.ndarray, mode: int, where: str) -> np.ndarray:
        m = len(idx)
        if mode == 1:
            if m % 2:
                raise self.doc.error(where, f"LINES needs an even number of vertices, got {m:,}")
            return idx.reshape(-1, 2)
        if m < 2:
            return np.zeros((0, 2), np.int64)
        seg = np.stack([idx[:-1], idx[1:]], axis=1)
        if mode == 2:
            seg = np.concatenate([seg, [[idx[-1], idx[0]]]])
        return seg

    def _triangles(self, idx: np.ndarray, mode: int, where: str) -> np.ndarray:
        m = len(idx)
        if mode == 4:
            if m % 3:
                raise self.doc.error(where, f"TRIANGLES needs a multiple of 3 vertices, got "
                                     f"{m:,}")
            return idx.reshape(-1, 3)
        if m < 3:
            return np.zeros((0, 3), np.int64)
        i = np.arange(m - 2)
        if mode == 5:
            return np.stack([idx[i], idx[i + 1 + i % 2], idx[i + 2 - i % 2]], axis=1)
        return np.stack([idx[i + 1], idx[i + 2], np.full(m - 2, idx[0])], axis=1)

    def _morph(self, targets, weights, n: int, where: str) -> dict:
        """The Mesh keyword arguments of a primitive's morph targets: (T, n, 3) deltas
        of POSITION, NORMAL and TANGENT (zeros for a target without one) and the
        default weights (the mesh's, else zeros)."""
        doc = self.doc
        w = np.zeros(len(targets)) if weights is None else np.asarray(weights, np.float64)
        if len(w) != len(targets):
            raise doc.error(where, f"{len(targets)} morph targets but {len(w)} weights")
        out = {}
        for key, name in (("morph_positions", "POSITION"), ("morph_normals", "NORMAL"),
                          ("morph_tangents", "TANGENT")):
            deltas = []
            for t, target in enumerate(targets):
                tw = f"{where}.targets[{t}]"
                if not isinstance(target, dict):
                    raise doc.error(tw, "must be an object")
                d = self._attribute(target, name, tw, n, (3,) if name != "TANGENT" else (3, 4))
                deltas.append(None if d is None else d[:, :3])
            if any(d is not None for d in deltas):
                out[key] = np.stack([np.zeros((n, 3)) if d is None else d for d in deltas])
        if not out:  # targets that move nothing: keep the weights (animation channels)
            out["morph_positions"] = np.zeros((len(targets), n, 3))
        out["morph_weights"] = w
        return out

    def _influences(self, attrs: dict, where: str, n: int) -> dict:
        """The Mesh keyword arguments of JOINTS_n/WEIGHTS_n (every set), or {}."""
        doc = self.doc
        joints, weights, s = [], [], 0
        while f"JOINTS_{s}" in attrs or f"WEIGHTS_{s}" in attrs:
            for name in (f"JOINTS_{s}", f"WEIGHTS_{s}"):
                if name not in attrs:
                    raise doc.error(f"{where}", f"has {'WEIGHTS' if 'J' in name[0] else 'JOINTS'}"
                                    f"_{s} without {name}")
            i = doc.ref(attrs, f"JOINTS_{s}", where, "accessors")
            comp, type_, _, normalized = self.accessors.header(i)
            if type_ != "VEC4" or comp not in (5121, 5123) or normalized:
                raise doc.error(f"{where}.JOINTS_{s}", f"accessors[{i}] must be VEC4 unsigned "
                                f"byte or short joint indices, not {type_} "
                                f"{COMPONENT_NAMES[comp]}{' normalized' if normalized else ''}")
            acc = self.accessors.read(i)
            if acc.count != n:
                raise doc.error(f"{where}.JOINTS_{s}", f"accessors[{i}] has {acc.count:,} "
                                f"elements but POSITION has {n:,}")
            joints.append(acc.data)
            k = doc.ref(attrs, f"WEIGHTS_{s}", where, "accessors")
            comp, type_, _, normalized = self.accessors.header(k)
            if type_ != "VEC4" or not (comp == 5126 or (normalized and comp in (5121, 5123))):
                raise doc.error(f"{where}.WEIGHTS_{s}", f"accessors[{k}] must be VEC4 float or "
                                f"normalized unsigned byte/short weights, not {type_} "
                                f"{COMPONENT_NAMES[comp]}{' normalized' if normalized else ''}")
            weights.append(self._attribute(attrs, f"WEIGHTS_{s}", where, n, (4,)))
            s += 1
        if not joints:
            return {}
        try:
            j, w = normalized_influences(joints, weights, 1 << 16, where)
        except ValueError as exc:
            raise doc.error(where, str(exc).split(": ", 1)[-1]) from None
        return {"joints": j, "weights": w}

    def _joint_node(self, j: int, objs: list) -> Node:
        """The scene node of joint ``nodes[j]``; a joint outside the loaded scene becomes
        a detached node (with its detached ancestors) that is never drawn."""
        if objs[j] is None:
            node = self._transform_node(j)
            up = self.parent[j]
            if up is not None:
                self._joint_node(up, objs).add(node)
            objs[j] = node
        return objs[j]

    def _skins(self, objs: list):
        """``Skin`` objects for the skinned nodes (joints are nodes of the scene)."""
        doc = self.doc
        made: dict[int, Skin] = {}
        for node, si, where in self.skinned:
            sw = f"skins[{si}]"
            if si not in made:
                s = doc.item("skins", si)
                joints = []
                for k, j in enumerate(doc.list(s, "joints", sw, required=True, min_len=1)):
                    j = doc.index(j, f"{sw}.joints[{k}]", "nodes")
                    joints.append(self._joint_node(j, objs))
                ibm = None
                if "inverseBindMatrices" in s:
                    i = doc.ref(s, "inverseBindMatrices", sw, "accessors")
                    acc = self.accessors.read(i)
                    if acc.type != "MAT4" or acc.count != len(joints):
                        raise doc.error(f"{sw}.inverseBindMatrices", f"accessors[{i}] must be "
                                        f"{len(joints)} MAT4 (one per joint), got {acc.count} "
                                        f"{acc.type}")
                    ibm = acc.floats().reshape(-1, 4, 4).transpose(0, 2, 1)  # column-major
                try:
                    made[si] = Skin(joints, ibm, doc.name(s, sw, f"skin {si}"))
                except ValueError as exc:
                    raise doc.error(sw, str(exc).split(": ", 1)[-1]) from None
            skin = made[si]
            for n in self._geometry_nodes(node):
                g = n.geometry
                if getattr(g, "joints", None) is None:
                    # no influences to skin it by: drawn as stored in the model's frame
                    # (a skinned mesh node's own transform is ignored, 3.7.3.3)
                    self.notes.add("skinned mesh primitive without JOINTS_0 (drawn as "
                                   "stored)", where)
                    n.geometry = None
                    self.model.add(Node(f"{n.name} (unskinned)", geometry=g))
                    continue
                if int(g.joints[g.weights > 0].max(initial=0)) >= len(skin.joints):
                    raise doc.error(where, f"its mesh uses joint {int(g.joints.max())} but "
                                    f"{sw} has {len(skin.joints)} joints")
                n.skin = skin

    # --------------------------------------------------------------- animations
    def _animations(self, objs: list) -> list[Clip]:
        doc = self.doc
        clips = []
        for a in range(len(doc.array("animations"))):
            where = f"animations[{a}]"
            anim = doc.item("animations", a)
            samplers = doc.list(anim, "samplers", where, required=True, min_len=1)
            channels = doc.list(anim, "channels", where, required=True, min_len=1)
            tracks = []
            for c, ch in enumerate(channels):
                cw = f"{where}.channels[{c}]"
                if not isinstance(ch, dict):
                    raise doc.error(cw, "must be an object")
                s = doc.integer(ch, "sampler", cw, hi=len(samplers) - 1)
                target = doc.obj(ch, "target", cw, required=True)
                tw = f"{cw}.target"
                path = doc.string(target, "path", tw)
                node = doc.ref(target, "node", tw, "nodes", default=None)
                if path not in ("translation", "rotation", "scale", "weights"):
                    self.notes.add(f"animation path {path!r}", cw)
                    continue
                if node is None or objs[node] is None:
                    continue  # not in the loaded scene (or animated through an extension)
                if path == "weights":  # every node drawing the mesh: its primitives
                    morphed = [n for n in self._geometry_nodes(objs[node])
                               if getattr(n.geometry, "morph_target_count", 0)]
                    if not morphed:
                        raise doc.error(tw, f"animates weights, but nodes[{node}] has no "
                                        "mesh with morph targets")
                    for n in morphed:
                        tracks.append(self._track(n, path, samplers[s],
                                                  f"{where}.samplers[{s}]", tw,
                                                  n.geometry.morph_target_count))
                    continue
                tracks.append(self._track(objs[node], path, samplers[s],
                                          f"{where}.samplers[{s}]", tw))
            clips.append(Clip(doc.name(anim, where, f"animation {a}"), tracks))
        return clips

    def _track(self, node: Node, path: str, sampler, sw: str, tw: str,
               targets: int = 0) -> TransformTrack:
        doc = self.doc
        if not isinstance(sampler, dict):
            raise doc.error(sw, "must be an object")
        interp = doc.string(sampler, "interpolation", sw, default="LINEAR",
                            choices=("LINEAR", "STEP", "CUBICSPLINE"))
        ii = doc.ref(sampler, "input", sw, "accessors")
        oi = doc.ref(sampler, "output", sw, "accessors")
        times = self.accessors.read(ii)
        if times.type != "SCALAR":
            raise doc.error(f"{sw}.input", f"accessors[{ii}] must be SCALAR times, not {times.type}")
        t = times.floats()[:, 0]
        out = self.accessors.read(oi)
        k = len(t)
        if path == "weights":  # SCALAR outputs, one per target per key (3.11)
            width = targets
            if out.type != "SCALAR":
                raise doc.error(f"{sw}.output", f"accessors[{oi}] is {out.type}; weights "
                                "need SCALAR")
            per = 3 * k if interp == "CUBICSPLINE" else k
            if out.count != per * width:
                raise doc.error(f"{sw}.output", f"accessors[{oi}] has {out.count:,} values; "
                                f"{per:,} keyframe values x {width} morph targets need "
                                f"{per * width:,}")
            v = out.floats().reshape(per, width)
        else:
            width = 4 if path == "rotation" else 3
            if out.data.shape[1] != width:
                raise doc.error(f"{sw}.output", f"accessors[{oi}] is {out.type}; {path} needs "
                                f"{'VEC4' if width == 4 else 'VEC3'}")
            v = out.floats()
        if interp == "CUBICSPLINE":
            if len(v) != 3 * k:
                raise doc.error(f"{sw}.output", f"CUBICSPLINE needs 3 x {k:,} = {3 * k:,} "
                                f"values (in-tangent, value, out-tangent per key), "
                                f"accessors[{oi}] has {len(v):,}")
            v = v.reshape(k, 3, width)
        elif len(v) != k:
            raise doc.error(f"{sw}.output", f"accessors[{oi}] has {len(v):,} values for "
                            f"{k:,} key times")
        try:
            return TransformTrack(node, path, t, v, interp.lower())
        except ValueError as exc:
            raise doc.error(f"{sw} (used by {tw})", str(exc)) from None
