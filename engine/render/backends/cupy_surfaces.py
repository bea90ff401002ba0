"""Surfaces on the GPU: the kernels of shaders/surface_vertices.cu, triangles.cu,
raster.cu and resolve.cu, launched per frame on device arrays.

The stages of ``cuda_backend.CudaBackend`` for frames with surfaces (points and
triangles; frames with lines run on the backend's host fallback):

    vertex stage: surface_vertices (clip and the varyings, engine.render.attributes)
    rasterize: clear_keys -> splat_points (points drawn as points; splat_sprites for
    discs and world sizes) -> classify_triangles
    -> clip_triangles (when some cross a clip plane) -> raster_triangles
    (atomicMin into the same keys; raster_masked_triangles for the pieces of alpha-cutoff
    materials, with the alpha test) -> resolve_surfaces (shade each pixel once); BLEND
    pieces: raster_layer_triangles into the transparency pass's k-buffer
    (``raster_layers``, engine.render.transparency), each layer then through
    resolve_surfaces; shadow maps (``shadow_depth``, before the camera's pass): the
    same vertex stage, classify, clip and raster kernels on the casters with the light's
    view, into a key buffer of their own; the depth stays on the device for the resolve

then the frame is copied to the host. Triangles that cross a clip plane (status 2) are
clipped on the device too (clip_triangles: up to 8 pieces each, the empty slots
dropped by a device compaction); only their count travels to the host. Results equal
the CPU paths': the same keys, colours within 1/255.

Written against an array module ``xp`` and a kernel provider ``get_function(source,
name)``, so the tests run this exact code on the CPU with NumPy arrays and the kernels
compiled by the host compiler (tests/cuda_emulation.py).
"""

from __future__ import annotations

import re

import numpy as np

from ...arrays import to_host
from ..attributes import VARYING_COUNT, layout_rows, packed_offset, varying_offsets
from ..deform import kernel_tables
from ..frame import Frame, background_rgba
from ..ibl import environment_arrays
from ..materials import TEXTURE_COLUMNS, pack_materials
from ..points import splat_sizes
from ..shading import light_arrays, point_light_arrays
from ..shadows import MAP_COLUMNS, caster_cutoffs, depth_of_keys, shadow_tables
from ..surface_vertices import mvp_matrices, normal_matrices
from ..tonemap import TONE_MAPS
from ..triangles import TriangleSetup
from .base import OutputBuffers
from .cuda_source import load_cuda_source
from .cupy_raster import sprite_arguments

__all__ = ["CudaSurfaces"]

THREADS = 256
MAX_PIECES = 8  # FR_MAX_PIECES of shaders/triangles.cuh: 3 + 7 polygon vertices, fanned


def kernel_varyings() -> tuple[str, ...]:
    """The varyings the kernels read, in the order of shading.cuh's
    ``enum Varying`` (read from the source, the one place that order is declared):
    ``VARYING_COLOR_LINEAR`` names "color_linear"."""
    text = load_cuda_source("shading.cuh")
    body = re.search(r"enum Varying \{(.*?)\};", text, re.DOTALL).group(1)
    return tuple(w.split("=")[0].strip().removeprefix("VARYING_").lower()
                 for w in body.split(",") if w.strip())


def _grid(n: int) -> tuple[int]:
    return (max(1, min((n + THREADS - 1) // THREADS, 4096)),)


class CudaSurfaces:
    """Renders FrameInputs with surfaces on a device (see the module docstring).

    Args:
        xp: the array module of the device arrays (cupy; numpy in the emulated tests).
        get_function: ``(source, name) -> kernel`` (cupy_backend.get_function by default).
    """

    def __init__(self, xp=None, get_function=None):
        if xp is None:
            import cupy as xp
        if get_function is None:
            from .cupy_backend import get_function
        self.xp = xp
        self._k = {name: get_function(src, name) for src, name in (
            ("raster.cu", "clear_keys"), ("raster.cu", "splat_points"),
            ("raster.cu", "splat_sprites"),
            ("surface_vertices.cu", "surface_vertices"),
            ("triangles.cu", "classify_triangles"), ("triangles.cu", "clip_triangles"),
            ("triangles.cu", "raster_triangles"),
            ("triangles.cu", "raster_masked_triangles"),
            ("triangles.cu", "raster_layer_triangles"), ("resolve.cu", "resolve_surfaces"))}
        self._static_key = None
        self._env_key = self._env_ref = self._env_args = None
        self._casters_key = None
        self._no_shadows = None  # the resolve's shadow arguments in frames without maps
        self._no_punctual = None  # the resolve's cone and range arguments without spots
        self._attrs_host = None
        self._static_deform = self._deform_key = None
        self._deform_rev, self._deform_on = -1, False
        self._attrs_version = None  # the attribute_changes version on the device
        self._points_out = OutputBuffers(self.xp)  # the points' projection, reused
        self.layout_rows = self.xp.asarray(layout_rows())
        self.offsets = self.xp.asarray(varying_offsets(kernel_varyings()))

    def _launch(self, name, n, *args):
        self._k[name](_grid(n), (THREADS,), args)

    def _upload_static(self, prims, colors):
        """Per-assembly device arrays (rebuilt only when the assembly changes)."""
        if self._static_key == (prims.key, id(prims)):
            return
        xp = self.xp
        self.tris = xp.asarray(np.ascontiguousarray(prims.triangles, np.int64))
        self.tri_material = xp.asarray(np.ascontiguousarray(prims.tri_material, np.int32))
        double = np.array([m.double_sided for m in prims.materials], bool)
        self.cull_back = xp.asarray((~double[prims.tri_material]).astype(np.uint8)) \
            if len(prims.triangles) else xp.zeros(0, np.uint8)
        self.point_mask = xp.asarray(prims.point_mask)
        self.surface_mask = xp.asarray(prims.surface_mask.astype(np.uint8))
        c = np.ascontiguousarray(to_host(colors), np.uint8)  # once per assembly
        self.point_rgba = xp.asarray(c.view(np.uint32).reshape(-1))
        records, texels, info = pack_materials(prims.materials)
        # the records travel as their bytes: the kernels read frustum::Material structs
        self.materials = xp.asarray(records.view(np.uint8))
        self.texels, self.tex_info = xp.asarray(texels), xp.asarray(info.reshape(-1, TEXTURE_COLUMNS))
        # alpha-cutoff materials (glTF MASK): their pieces take the alpha-tested raster
        blend = np.array([m.blend for m in prims.materials], bool)
        masked = (records["alpha_cutoff"] >= 0) & ~blend
        self.tri_masked = (xp.asarray(masked[prims.tri_material]) if masked.any()
                           and len(prims.triangles) else None)
        # BLEND materials: their pieces take the transparency pass's raster instead
        self.tri_blend = (xp.asarray(blend[prims.tri_material]) if blend.any()
                          and len(prims.triangles) else None)
        self._static_key = (prims.key, id(prims))

    def vertex_stage(self, batch, camera_vp, points_size=None):
        """The surface vertex stage on the device, one launch: (clip (N, 4), varyings
        (N, V)) float64 device arrays (engine.render.attributes), from the attributes of
        the last ``upload``, and with ``points_size`` = (width, height) every vertex's
        window coordinates as a Projection (else None)."""
        xp = self.xp
        n = batch.vertex_count
        model = np.asarray(batch.model_host, np.float64)
        mvp = xp.asarray(np.ascontiguousarray(mvp_matrices(camera_vp, model)))
        nm = xp.asarray(np.ascontiguousarray(normal_matrices(model)))
        clip = xp.empty((n, 4), np.float64)
        vary = xp.empty((n, VARYING_COUNT), np.float64)
        rows = self.layout_rows
        w, h = points_size if points_size is not None else (0, 0)
        out = self._points_out.get(n if points_size is not None else 0)
        self._launch("surface_vertices", n, xp.ascontiguousarray(batch.positions, np.float32),
                     xp.ascontiguousarray(batch.object_id, np.uint32), mvp,
                     xp.asarray(np.ascontiguousarray(model)), nm, self.attrs,
                     np.int32(self.attrs.shape[1]), rows, np.int32(rows.shape[0]),
                     np.int32(VARYING_COUNT), np.int64(n), np.int32(1), self.surface_mask,
                     clip, vary,
                     np.int32(points_size is not None), np.float64(w), np.float64(h),
                     out.screen_xy, out.depth, out.visible.view(np.uint8),
                     np.int32(self._deform_on), *self._deform,
                     np.int32(packed_offset("normal")), np.int32(packed_offset("tangent")))
        return clip, vary, (out if points_size is not None else None)

    def _raster(self, name, piece_tri, px, py, adj, zc, wc, size, id_base, keys, *extra):
        """One launch of a triangle raster kernel over pieces ``piece_tri`` (snapped
        ``px``, ``py``); ``extra``: the masked kernel's material arguments."""
        xp = self.xp
        m = int(piece_tri.shape[0])
        self._launch(name, m, xp.ascontiguousarray(px), xp.ascontiguousarray(py),
                     xp.ascontiguousarray(piece_tri), np.int64(m), adj, zc, wc,
                     np.int32(size[0]), np.int32(size[1]), np.int64(id_base), keys, *extra)

    def upload(self, prims, colors, attributes, deform=None, changes=None):
        """Make the per-assembly device arrays, the (N, A) ``attributes`` (packed by
        the backend, engine.render.attributes) and the deformation tables
        (engine.render.deform, or None) current: uploads only what changed (the
        per-frame joint matrices and morph weights in one copy each). ``changes`` is
        the backend's ``attribute_changes`` (version, rows rewritten in place or None):
        the next version after the one uploaded copies just those rows."""
        self._upload_static(prims, colors)
        version, rows = changes if changes is not None else (None, None)
        if attributes is not self._attrs_host or (
                version != self._attrs_version
                and (rows is None or self._attrs_version is None
                     or version != self._attrs_version + 1)):
            self.attrs = self.xp.asarray(np.ascontiguousarray(attributes, np.float64))
            self._attrs_host = attributes
        elif version != self._attrs_version:
            for s, e in rows:
                self.attrs[s:e] = self.xp.asarray(np.ascontiguousarray(attributes[s:e]))
        self._attrs_version = version
        self._upload_deform(deform)

    def _upload_deform(self, deform):
        xp = self.xp
        d = kernel_tables(deform)
        key = None if deform is None else deform.key
        if self._static_deform is None or key != self._deform_key:
            self._static_deform = [xp.asarray(np.ascontiguousarray(d[name])) for name in
                                   ("slots", "inf_joint", "inf_weight", "deltas")]
            self._deform_key, self._deform_rev = key, -1
        rev = -2 if deform is None else deform.revision
        if rev != self._deform_rev:
            frame = [xp.asarray(np.ascontiguousarray(d[name])) for name in
                     ("weights", "joints")]
            sl, ij, iw, dl = self._static_deform
            self._deform = (sl, ij, iw, np.int32(ij.shape[1]), dl, *frame)
            self._deform_rev = rev
        self._deform_on = deform is not None

    def _upload_casters(self, prims):
        """The shadow casters' device arrays (``Primitives.tri_cast``), per assembly: their
        triangles, materials, back-face culling, and material records whose alpha cutoff is the
        shadow pass's (engine.render.shadows.caster_cutoffs: BLEND casts at 0.5)."""
        if self._casters_key == (prims.key, id(prims)):
            return
        xp = self.xp
        sel = np.flatnonzero(prims.tri_cast)
        records = pack_materials(prims.materials)[0].copy()
        cutoffs = caster_cutoffs(prims.materials)
        if len(records):
            records["alpha_cutoff"] = cutoffs
        mats = np.ascontiguousarray(prims.tri_material[sel], np.int32)
        self.c_tris = xp.asarray(np.ascontiguousarray(prims.triangles[sel], np.int64))
        self.c_material = xp.asarray(mats)
        double = np.array([m.double_sided for m in prims.materials], bool)
        self.c_cull_back = xp.asarray((~double[mats]).astype(np.uint8)) if len(sel) \
            else xp.zeros(0, np.uint8)
        self.c_records = xp.asarray(records.view(np.uint8))
        masked = cutoffs >= 0
        self.c_masked = xp.asarray(masked[mats]) if masked.any() and len(sel) else None
        self._casters_key = (prims.key, id(prims))

    def shadow_depth(self, prims, clip, vary, size):
        """(S, S) float32 device depth of the casters in ``clip`` (the vertex stage's
        output with a light's view-projection, ``vary`` its varyings) on an S x S map."""
        xp = self.xp
        self._upload_casters(prims)
        keys = xp.empty(size * size, np.uint64)
        self._launch("clear_keys", size * size, keys, np.int64(size * size))
        t = int(self.c_tris.shape[0])
        if t:
            piece_tri, px, py, adj, zc, wc, _ = self._pieces(clip, self.c_tris,
                                                             self.c_cull_back, (size, size))
            groups = [("raster_triangles", None)] if self.c_masked is None else [
                ("raster_triangles", xp.flatnonzero(~self.c_masked[piece_tri])),
                ("raster_masked_triangles", xp.flatnonzero(self.c_masked[piece_tri]))]
            for name, sel in groups:
                extra = () if name == "raster_triangles" else (
                    self.c_tris, self.c_material, self.c_records, vary,
                    np.int32(VARYING_COUNT), self.offsets, self.texels, self.tex_info)
                pt, x, y = (piece_tri, px, py) if sel is None else (
                    piece_tri[sel], px[sel], py[sel])
                self._raster(name, pt, x, y, adj, zc, wc, (size, size), 0, keys, *extra)
        return depth_of_keys(keys, size, xp)

    def _pieces(self, clip, tris, cull_back, size):
        """classify_triangles (and clip_triangles where some cross a clip plane) of
        ``tris``: (piece_tri, px, py, adj, zc, wc, det) device arrays, pieces in the
        reference's order."""
        xp = self.xp
        w, h = size
        t = int(tris.shape[0])
        adj = xp.empty((t, 3, 3), np.float64)
        det = xp.empty(t, np.float64)
        zc, wc = xp.empty((t, 3), np.float64), xp.empty((t, 3), np.float64)
        status = xp.empty(t, np.int8)
        x, y = xp.empty((t, 3), np.int64), xp.empty((t, 3), np.int64)
        area = xp.empty(t, np.int64)
        self._launch("classify_triangles", t, clip, tris, cull_back, np.int64(t),
                     np.float64(w), np.float64(h), adj, det, zc, wc, status, x, y, area)
        whole = xp.flatnonzero((status == 1) & (area != 0))
        piece_tri, px, py = [whole], [x[whole]], [y[whole]]
        to_clip = status == 2
        n_cut = int(to_clip.sum())  # the one value that travels back (a wait)
        if n_cut:
            cut = xp.flatnonzero(to_clip)
            slots = MAX_PIECES * n_cut
            cx, cy = xp.empty((slots, 3), np.int64), xp.empty((slots, 3), np.int64)
            ctri, carea = xp.empty(slots, np.int64), xp.empty(slots, np.int64)
            self._launch("clip_triangles", n_cut, clip, tris,
                         xp.ascontiguousarray(cut, np.int64), np.int64(n_cut), np.float64(w),
                         np.float64(h), cx, cy, ctri, carea)
            keep = xp.flatnonzero(carea != 0)  # slot order: the reference's piece order
            piece_tri.append(ctri[keep])
            px.append(cx[keep])
            py.append(cy[keep])
        piece_tri = xp.ascontiguousarray(xp.concatenate(piece_tri).astype(np.int64))
        px = xp.ascontiguousarray(xp.concatenate(px))
        py = xp.ascontiguousarray(xp.concatenate(py))
        return piece_tri, px, py, adj, zc, wc, det

    def rasterize(self, inputs, view):
        """Points and triangles of ``inputs`` (the CUDA vertex stage's output: device
        ``clip``) into a fresh (W * H,) uint64 device key buffer."""
        xp = self.xp
        w, h = size = view.size
        prims = inputs.prims
        self._upload_static(prims, inputs.colors)
        npix = w * h
        keys = xp.empty(npix, np.uint64)
        self._launch("clear_keys", npix, keys, np.int64(npix))
        n = int(inputs.colors.shape[0])
        p = inputs.projection
        if p is not None and inputs.sprites is not None:  # engine.render.sprites
            vis = (xp.asarray(p.visible) & self.point_mask).astype(np.uint8)
            self._launch("splat_sprites", n, xp.ascontiguousarray(p.screen_xy, np.float32),
                         xp.ascontiguousarray(p.depth, np.float32), vis,
                         *sprite_arguments(xp, inputs.sprites.diameter, inputs.sprites.round),
                         np.int64(n), np.int32(w), np.int32(h), keys)
        elif p is not None:
            vis = (xp.asarray(p.visible) & self.point_mask).astype(np.uint8)
            sizes = xp.asarray(splat_sizes(to_host(view.point_size), n))
            stride = np.int64(0 if sizes.shape[0] == 1 and n != 1 else 1)
            self._launch("splat_points", n, xp.ascontiguousarray(p.screen_xy, np.float32),
                         xp.ascontiguousarray(p.depth, np.float32), vis, sizes, stride,
                         np.int64(n), np.int32(w), np.int32(h), keys)
        clip = inputs.clip
        piece_tri, px, py, adj, zc, wc, det = self._pieces(clip, self.tris, self.cull_back,
                                                           size)
        if self.tri_masked is None and self.tri_blend is None:
            self._raster("raster_triangles", piece_tri, px, py, adj, zc, wc, size, n, keys)
        else:
            none = xp.zeros(piece_tri.shape[0], bool)
            masked = none if self.tri_masked is None else self.tri_masked[piece_tri]
            blended = none if self.tri_blend is None else self.tri_blend[piece_tri]
            for name, sel in (("raster_triangles", xp.flatnonzero(~masked & ~blended)),
                              ("raster_masked_triangles", xp.flatnonzero(masked & ~blended))):
                extra = () if name == "raster_triangles" else (
                    self.tris, self.tri_material, self.materials, inputs.shader.varyings,
                    np.int32(VARYING_COUNT), self.offsets, self.texels, self.tex_info)
                self._raster(name, piece_tri[sel], px[sel], py[sel], adj, zc, wc, size, n,
                             keys, *extra)
        # the setup for the resolve; the raster kernels above read their own z and w
        self.setup = TriangleSetup(piece_tri, px, py, adj, clip, self.tris, det > 0)
        self._depth_planes = (zc, wc)  # for raster_layers
        return keys

    def raster_layers(self, inputs, view, bound, layers):
        """The BLEND pieces of the last ``rasterize`` into a k-buffer of ``layers`` keys
        per pixel in front of the host ``bound`` (engine.render.transparency):
        ((W * H, layers) uint64, (W * H,) uint32 overflow) device arrays."""
        xp = self.xp
        npix = view.size[0] * view.size[1]
        keys = xp.empty(layers * npix, np.uint64)
        self._launch("clear_keys", layers * npix, keys, np.int64(layers * npix))
        overflow = xp.zeros(npix, np.uint32)
        st = self.setup
        sel = xp.flatnonzero(self.tri_blend[st.piece_tri])
        zc, wc = self._depth_planes
        self._raster("raster_layer_triangles", st.piece_tri[sel], st.x[sel], st.y[sel],
                     st.adj, zc, wc, view.size, int(inputs.colors.shape[0]),
                     xp.asarray(np.ascontiguousarray(bound, np.uint64)), keys,
                     np.int32(layers), overflow)
        return keys.reshape(npix, layers), overflow

    def _environment(self, pre):
        """The resolve's environment arguments (shaders/ibl.cuh) for an
        engine.render.ibl.Prefiltered or None, copied to the device once per
        environment."""
        if self._env_key != id(pre):
            texels, info, sh, lut, on = environment_arrays(pre)
            xp = self.xp
            self._env_args = (xp.asarray(texels), xp.asarray(info),
                              xp.asarray(np.ascontiguousarray(sh.reshape(-1))),
                              xp.asarray(np.ascontiguousarray(lut)), np.int32(lut.shape[0]),
                              np.int32(on))
            self._env_key, self._env_ref = id(pre), pre  # the reference keeps the id unique
        return self._env_args

    def _punctual(self, cone, ranges, windowed):
        """The resolve's point-light cones and ranges on the device (shaders/punctual.cuh):
        copied where a light has a cone or range; otherwise never read, and placeholders
        made once stand in (no copy per frame)."""
        xp = self.xp
        if windowed:
            return (xp.asarray(np.ascontiguousarray(cone.reshape(-1))),
                    xp.asarray(np.ascontiguousarray(ranges)))
        if self._no_punctual is None:
            self._no_punctual = (xp.zeros(5), xp.zeros(1))
        return self._no_punctual

    def resolve(self, keys, inputs, view) -> Frame:
        """Shade each pixel of ``keys`` (from ``rasterize``) once -> host Frame."""
        xp = self.xp
        w, h = view.size
        prims, shader, setup = inputs.prims, inputs.shader, self.setup
        npix = w * h
        ambient, dl, de, pp, pe = light_arrays(shader.lights)
        # the point lights, then the spots and ranged lights (shaders/punctual.cuh)
        pp, pe, cone, ranges, windowed = point_light_arrays(pp, pe, shader.spots)
        if shader.shadows.maps:
            texels, table, dir_map, point_map, receive = shadow_tables(
                shader.shadows, len(dl), len(pp), xp)
            shadow_args = (texels, xp.asarray(table), xp.asarray(dir_map),
                           xp.asarray(point_map), xp.asarray(receive))
        else:  # never read (n_maps 0): placeholders made once
            if self._no_shadows is None:
                self._no_shadows = (xp.ones(1, np.float32), xp.zeros((1, MAP_COLUMNS)),
                                    xp.zeros(1, np.int64), xp.zeros(1, np.int64),
                                    xp.zeros(1, np.uint8))
            shadow_args = self._no_shadows
        ortho = shader.view_dir is not None
        view_dir = np.asarray(shader.view_dir if ortho else np.zeros(3), np.float64)
        color = xp.empty(npix, np.uint32)
        depth = xp.empty(npix, np.float32)
        bg = np.ascontiguousarray(background_rgba(view.background)).view(np.uint32)[0]
        no_lines = xp.zeros(1, np.uint32)
        dev = lambda a: xp.asarray(np.ascontiguousarray(a))
        self._launch("resolve_surfaces", npix, keys, np.int32(w), np.int32(h),
                     np.int64(inputs.colors.shape[0]), np.int64(len(prims.triangles)),
                     self.point_rgba if inputs.point_rgba is None else xp.ascontiguousarray(
                         inputs.point_rgba, np.uint8).view(np.uint32).reshape(-1),
                     no_lines, np.uint32(bg), self.tris, self.tri_material,
                     setup.adj, setup.front.astype(np.uint8), shader.varyings,
                     np.int32(VARYING_COUNT), self.offsets, self.materials,
                     self.texels, self.tex_info, dev(ambient),
                     np.int32(len(dl)), dev(dl), dev(de), np.int32(len(pp)), dev(pp), dev(pe),
                     dev(np.asarray(shader.eye, np.float64)), np.int32(ortho), dev(view_dir),
                     color, depth, *self._environment(shader.environment), *shadow_args,
                     np.int32(len(shader.shadows.maps)), *self._punctual(cone, ranges, windowed),
                     np.int32(windowed), np.float64(shader.exposure),
                     np.int32(TONE_MAPS.index(shader.tone_map)))
        out = to_host(color).view(np.uint8).reshape(h, w, 4)
        return Frame(np.ascontiguousarray(out), to_host(depth).reshape(h, w))
