"""Small glTF 2.0 files written by hand for the tests: ``Gltf`` collects binary data,
buffer views and accessors into a document and writes it as .gltf (buffer as a data:
URI, or a named .bin file) or .glb."""

from __future__ import annotations

import base64
import io
import json
import struct
from pathlib import Path

import numpy as np

FLOAT, UBYTE, USHORT, UINT, BYTE, SHORT = 5126, 5121, 5123, 5125, 5120, 5122
TYPES = {1: "SCALAR", 2: "VEC2", 3: "VEC3", 4: "VEC4", 16: "MAT4"}


def png_bytes(rgba) -> bytes:
    """(H, W, 3|4) uint8 -> PNG bytes."""
    from PIL import Image

    a = np.asarray(rgba, np.uint8)
    out = io.BytesIO()
    Image.fromarray(a, "RGBA" if a.shape[2] == 4 else "RGB").save(out, "PNG")
    return out.getvalue()


RED_GREEN = png_bytes([[[255, 0, 0], [0, 255, 0]]])  # 2 x 1: red | green


class Gltf:
    def __init__(self):
        self.bin = bytearray()
        self.doc = {"asset": {"version": "2.0"}, "buffers": [], "bufferViews": [],
                    "accessors": []}

    # --------------------------------------------------------------- raw data
    def view(self, data: bytes, stride: int | None = None, align: int = 4) -> int:
        self.bin += b"\0" * (-len(self.bin) % align)
        v = {"buffer": 0, "byteOffset": len(self.bin), "byteLength": len(data)}
        if stride is not None:
            v["byteStride"] = stride
        self.bin += data
        self.doc["bufferViews"].append(v)
        return len(self.doc["bufferViews"]) - 1

    def accessor(self, values, component=FLOAT, type_=None, normalized=False, view=None,
                 **extra) -> int:
        """Accessor over ``values`` ((count, k) array, written tightly in its own view
        unless ``view`` is given)."""
        dt = {FLOAT: "<f4", UBYTE: "<u1", USHORT: "<u2", UINT: "<u4", BYTE: "<i1",
              SHORT: "<i2"}[component]
        a = np.asarray(values, dt)
        if a.ndim == 1:
            a = a[:, None]
        acc = {"componentType": component, "count": len(a),
               "type": type_ or TYPES[a.shape[1]]}
        if normalized:
            acc["normalized"] = True
        acc["bufferView"] = self.view(a.tobytes()) if view is None else view
        acc.update(extra)
        if component == FLOAT and acc["type"] == "VEC3" and "min" not in acc:
            acc["min"], acc["max"] = a.min(0).tolist(), a.max(0).tolist()
        self.doc["accessors"].append(acc)
        return len(self.doc["accessors"]) - 1

    def image(self, png: bytes, **sampler) -> int:
        """A texture (image as a bufferView) with an optional sampler; returns its index."""
        self.doc.setdefault("images", []).append({"bufferView": self.view(png),
                                                  "mimeType": "image/png"})
        tex = {"source": len(self.doc["images"]) - 1}
        if sampler:
            self.doc.setdefault("samplers", []).append(sampler)
            tex["sampler"] = len(self.doc["samplers"]) - 1
        self.doc.setdefault("textures", []).append(tex)
        return len(self.doc["textures"]) - 1

    def mesh(self, attributes: dict, indices=None, mode=None, material=None, **node) -> int:
        """One mesh with one primitive on a new root node; returns the node index."""
        prim = {"attributes": attributes}
        if indices is not None:
            prim["indices"] = indices
        if mode is not None:
            prim["mode"] = mode
        if material is not None:
            prim["material"] = material
        self.doc.setdefault("meshes", []).append({"primitives": [prim]})
        node = dict(node, mesh=len(self.doc["meshes"]) - 1)
        return self.node(**node)

    def node(self, root: bool = True, **fields) -> int:
        self.doc.setdefault("nodes", []).append(fields)
        i = len(self.doc["nodes"]) - 1
        if root:
            self.doc.setdefault("scenes", [{"nodes": []}])
            self.doc["scene"] = 0
            self.doc["scenes"][0]["nodes"].append(i)
        return i

    def material(self, **fields) -> int:
        self.doc.setdefault("materials", []).append(fields)
        return len(self.doc["materials"]) - 1

    # ----------------------------------------------------------------- output
    def document(self, uri: str | None = None) -> dict:
        doc = json.loads(json.dumps(self.doc))
        buf = {"byteLength": len(self.bin)}
        if uri is not None:
            buf["uri"] = uri
        doc["buffers"] = [buf] if self.bin else []
        return doc

    def write_gltf(self, path: Path, bin_name: str | None = None) -> Path:
        """.gltf with the buffer as a data: URI, or in ``bin_name`` next to it."""
        if bin_name is None:
            uri = "data:application/octet-stream;base64," + base64.b64encode(
                bytes(self.bin)).decode()
        else:
            from urllib.parse import quote

            (path.parent / bin_name).write_bytes(bytes(self.bin))
            uri = quote(bin_name)
        path.write_text(json.dumps(self.document(uri)))
        return path

    def write_glb(self, path: Path) -> Path:
        path.write_bytes(glb(self.document(), bytes(self.bin)))
        return path


def glb(doc: dict, binary: bytes | None) -> bytes:
    js = json.dumps(doc).encode()
    js += b" " * (-len(js) % 4)
    chunks = struct.pack("<I4s", len(js), b"JSON") + js
    if binary:
        binary = binary + b"\0" * (-len(binary) % 4)
        chunks += struct.pack("<I4s", len(binary), b"BIN\0") + binary
    return struct.pack("<4sII", b"glTF", 2, 12 + len(chunks)) + chunks


def world_points(node):
    """(N, 3) float64 world positions of every geometry under ``node``."""
    out = []
    for n in node.traverse():
        g = n.geometry
        if g is not None:
            p = g.positions.astype(np.float64) + g.origin
            out.append(p @ n.world_matrix[:3, :3].T + n.world_matrix[:3, 3])
    return np.concatenate(out)


def geometries(node):
    return [n.geometry for n in node.traverse() if n.geometry is not None]
