"""The host backends: every stage on the CPU, in NumPy (the reference) or compiled by
Numba (the CPU fast path). One pipeline, two sets of stage functions::

    stage                     NumpyBackend (reference)          NumbaBackend
    points: projection        NumpyProjector                    NumbaProjector
    surfaces: vertex stage    surface_vertices                  numba_vertex
    points: splat             points.splat_keys                 numba_raster.splat_into
    points: discs, world size sprites.splat_sprites             numba_raster.splat_sprites_into
    points: lit colours       sprites.lit_point_colors          the same (NumPy)
    triangles: setup          triangles.setup_triangles         numba_triangles
    triangles: raster         triangles.raster_triangles        numba_triangles
    alpha-cutoff pieces       triangles.raster_triangles(keep)  the same (NumPy)
    lines: raster             lines.raster_lines                the same (NumPy)
    lines: colour             lines.fragment_colors             the same (NumPy)
    hidden-line occluders     triangles.raster_triangles        numba_triangles
    BLEND layers (k-buffer)   transparency.raster_layers        numba_layers
    MSAA sample keys          msaa.moved_sample_keys            numba_triangles (one setup)
    MSAA layers, mix, depth   msaa (NumPy)                      numba_msaa
    resolve                   shading.resolve / frame.resolve_keys   numba_shading / numba_raster
    shadow maps: depth        triangles.raster_triangles        numba_shadow.raster_depth

Every stage writes or reads the one key buffer per pixel, reused from frame to frame;
the twins give the same keys bit for bit and colours within 1/255 (test_parity.py).
"""

from __future__ import annotations

import numpy as np

from ...arrays import to_host
from .. import transparency
from ..culling import FrustumCuller, mark_culled
from ..frame import EMPTY_KEY, Frame, cleared_keys, fill_empty
from ..lines import fragment_colors, occluder_clip, raster_lines
from ..msaa import sample_offsets, shifted_inputs
from ..points import check_points, resolve_keys, splat_keys
from ..shading import SurfaceShader
from ..shading import resolve as resolve_surfaces
from ..shadows import caster_cutoffs, depth_of_keys
from ..sprites import splat_sprites
from ..surface_vertices import surface_vertices
from ..transparency import blended_pieces
from ..triangles import SUBPIXEL, Workspace, raster_triangles, setup_triangles
from .base import OutputBuffers
from .numpy_backend import NumpyProjector
from .stages import Backend

__all__ = ["NumbaBackend", "NumpyBackend", "SoftwareBackend"]


class SoftwareBackend(Backend):
    """The host pipeline over a table of stage functions (set by the subclasses).

    Accepts a batch on any array module: device arrays are copied to the host once per
    frame (a CUDA backend's fallback for the features it lacks)."""

    xp = np

    def __init__(self, projector):
        super().__init__()
        self.projector = projector
        self._project = projector.project  # the points' projection (NumbaBackend: timed)
        self._keys = None
        self._line_fragments = None  # this frame's line pixels (rasterize -> resolve)
        self._points_out = OutputBuffers(np)  # the points' projection, reused
        # the frame's triangle setup in reused arrays (the Numba setup builds in them)
        self._setup_workspace = Workspace() if self.reuses_setup else None
        self._culler = FrustumCuller()
        self._frame_out = None  # points-only frames of render(copy=False)
        self._layers = None  # the transparency pass's k-buffer and overflow, reused
        self._sample_keys = None  # the multisampled frames' (S, W * H) keys, reused
        # the shadow passes' own key buffer and setup arrays (the camera's stay its own)
        self._shadow_keys = None
        self._shadow_workspace = Workspace() if self.reuses_setup else None

    # stage functions (NumPy reference; NumbaBackend replaces them)
    _surface_vertices = staticmethod(surface_vertices)
    _splat = staticmethod(splat_keys)
    _splat_sprites = staticmethod(splat_sprites)
    _raster_triangles = staticmethod(raster_triangles)
    _mark_culled = staticmethod(mark_culled)
    reuses_setup = False  # the NumPy reference allocates its setup every frame

    @staticmethod
    def _setup(clip, triangles, cull_back, size, workspace=None):
        """The NumPy reference's triangle setup (it allocates: ``workspace`` unused)."""
        return setup_triangles(clip, triangles, cull_back, size)

    def in_view(self, batch, view) -> np.ndarray:
        """(R,) bool over ``batch.runs``: the runs whose bounds can meet the view
        frustum (engine.render.culling); the others get no vertex work this frame."""
        return self._culler.visible(batch, lambda: to_host(batch.positions),
                                    view.view_projection)

    def project_points(self, batch, view):
        runs = batch.runs
        model = to_host(batch.model)
        if len(runs):
            # a culled run points past the model array: not visible, not transformed
            runs = runs.copy()
            runs[~self.in_view(batch, view), 2] = len(model)
        return self._project(to_host(batch.positions), to_host(batch.object_id), model,
                             view.view_projection, view.size, runs=runs)

    def surface_vertices(self, batch, prims, view, attributes, with_shading, points,
                         deform=None):
        """(clip, varyings, Projection or None) of one pass over the vertices: the objects
        drawn as surfaces, and with ``points`` every object (a point cloud beside a mesh
        is projected in the same pass; without points it costs nothing). Runs outside
        the view frustum are skipped: their clip rows are zero (the null slot's) and
        their points not visible (engine.render.culling)."""
        runs = batch.runs
        shaded = prims.surface_mask[runs[:, 0]] if len(runs) else np.zeros(0, bool)
        drawn = self.in_view(batch, view) if len(runs) else np.zeros(0, bool)
        if deform is not None:
            # a skinned or morphed mesh's rest bounds say nothing of its pose: never culled
            drawn |= np.isin(runs[:, 2], [slot for _, slot in deform.nodes])
        culled = runs[~drawn & (shaded | points)]
        if points:
            runs, shaded = runs[drawn], shaded[drawn]
        else:
            runs, shaded = runs[shaded & drawn], None
        screen = (view.size, self._points_out.get(batch.vertex_count)) if points else None
        clip, vary = self._surface_vertices(to_host(batch.positions), to_host(batch.object_id),
                                            to_host(batch.model), view.view_projection,
                                            attributes, runs, with_shading=with_shading,
                                            points=screen, shaded=shaded, deform=deform)
        if len(culled):
            self._mark_culled(clip, screen[1].visible if points else None, culled)
        return clip, vary, (screen[1] if points else None)

    def shadow_depth(self, batch, prims, shadow_map, slot, deform):
        """One light's depth pass on this backend's own stages (engine.render.shadows):
        the vertex stage with the light's view (the casters posed by the frame's
        ``deform``), the casters' triangles set up (back faces of single-sided materials
        culled, as for the camera) and rasterized (``_caster_depth``), alpha-tested
        where their material asks (the NumPy raster's keep). Returns (S, S) float32
        depth."""
        casters = _Casters.of(prims)
        clip = vary = None
        if len(casters.triangles):
            view = self.light_view(batch, shadow_map)
            clip, vary, _ = self.surface_vertices(batch, prims, view,
                                                  self.attributes(batch, prims),
                                                  casters.masked_pieces is not None,
                                                  points=False,
                                                  deform=deform)
        return self._caster_depth(casters, clip, vary, shadow_map.size, slot)

    def _caster_setup(self, casters, clip, size):
        """The TriangleSetup of the casters' triangles (clip-space vertices ``clip``) in
        an S x S map, back faces of single-sided materials culled."""
        return self._setup(clip, casters.triangles, casters.cull_back, (size, size),
                           self._shadow_workspace)

    def _caster_depth(self, casters, clip, vary, size, slot):
        """The NumPy reference's map: the casters' pieces (their clip-space vertices
        ``clip``, None: no casters) into the shadow key buffer, their depths
        (depth_of_keys, new arrays every frame)."""
        keys = self._shadow_keys = cleared_keys(self._shadow_keys, (size, size))
        if clip is not None:
            setup = self._caster_setup(casters, clip, size)
            cut = casters.cut_pieces(setup)
            self._raster_triangles(keys, setup, (size, size), 0,
                                   None if cut is None else np.flatnonzero(~cut))
            if cut is not None:
                casters.raster_cut(keys, setup, vary, size, cut)
        return depth_of_keys(keys, size)

    def rasterize(self, inputs, view):
        """Points, triangles and lines into one (W * H,) uint64 key buffer (host)."""
        prims, size = inputs.prims, view.size
        keys = self._keys = cleared_keys(self._keys, size)
        self._line_fragments = None
        n = len(inputs.colors)
        if inputs.projection is not None:
            self._raster_points(keys, inputs, inputs.projection, view)
        if len(prims.triangles):
            double = np.array([m.double_sided for m in prims.materials], bool)
            setup = inputs.shader.setup = self._setup(
                inputs.clip, prims.triangles, ~double[prims.tri_material], size,
                self._setup_workspace)
            masked = np.array([m.alpha_cutoff is not None and not m.blend
                               for m in prims.materials], bool)
            # BLEND pieces are the transparency pass's (engine.render.transparency)
            blended = blended_pieces(prims, setup.piece_tri)
            if not masked.any() and blended is None:
                self._raster_triangles(keys, setup, size, n)  # every piece, no gather
            else:
                piece_masked = masked[prims.tri_material[setup.piece_tri]]
                opaque = ~piece_masked if blended is None else ~piece_masked & ~blended
                self._raster_triangles(keys, setup, size, n, np.flatnonzero(opaque))
                # alpha-tested per pixel: the NumPy raster's keep
                raster_triangles(keys, setup, size, n, np.flatnonzero(piece_masked),
                                 keep=inputs.shader.alpha_keep)
        occ_base = n + len(prims.triangles) + len(prims.lines)
        if len(prims.occluders):
            # hidden-line removal: the faces first, depth only, pushed back
            # (engine.render.lines.occluder_clip); their keys become background below
            corners = occluder_clip(inputs.clip, prims.occluders, size)
            faces = np.arange(len(corners), dtype=np.int64).reshape(-1, 3)
            occ = self._setup(corners, faces, np.zeros(len(faces), bool), size)
            self._raster_triangles(keys, occ, size, occ_base)
        if len(prims.lines):
            self._line_fragments = raster_lines(keys, inputs.clip, prims.lines, size,
                                                n + len(prims.triangles))
        if len(prims.occluders):
            hidden = (keys & np.uint64(0xFFFFFFFF)) >= np.uint64(occ_base)
            keys[hidden] = EMPTY_KEY  # EMPTY_KEY's low word is above every id: unchanged
        return keys

    def _raster_points(self, keys, inputs, p, view):
        """The points of Projection ``p`` into ``keys``: pixel-sized squares, or discs
        and world sizes (engine.render.sprites)."""
        prims = inputs.prims
        xy, z, vis, _, size = check_points(p.screen_xy, p.depth, p.visible, inputs.colors,
                                           view.size)
        if prims.has_surfaces:  # vertices of solid or wireframe nodes are not points
            vis = vis & prims.point_mask
        if inputs.sprites is None:  # pixel-sized squares
            self._splat(keys, xy, z, vis, view.point_size, size)
        else:  # discs, world sizes (engine.render.sprites)
            self._splat_sprites(keys, xy, z, vis, inputs.sprites.diameter,
                                inputs.sprites.round, size)

    # the per-sample triangle raster (NumbaBackend: numba_triangles.raster_samples_numba);
    # None: engine.render.msaa moves the whole raster onto each sample position
    _raster_samples = None
    sample_region = None  # set by raster_samples

    def raster_samples(self, inputs, view, samples):
        """(S, W * H) uint64 host keys of the S sample positions of engine.render.msaa
        in one pass, or None where this backend or the frame needs msaa's moved whole
        rasters (no per-sample raster, alpha-tested pieces, hidden-line occluders).

        The triangles are set up once (the setup left in ``inputs.shader`` for the
        resolve) and each piece walked at every sample position (``_raster_samples``,
        the moved raster's keys from one setup); points and lines, cheap beside them,
        are splatted and drawn once per sample with their positions moved
        (engine.render.msaa.shifted_inputs), and a frame with lines is rasterized at
        the pixel centres too (the line fragments the
        resolve colours). The array is reused by the next frame. ``sample_region``
        becomes the frame's (width, x0, x1, y0, y1): pixels [x0, x1) x [y0, y1) hold
        every drawn sample (triangles only: the pieces' bounding box), or None: any
        pixel may."""
        prims, size = inputs.prims, view.size
        self.sample_region = None
        if self._raster_samples is None or len(prims.occluders) or any(
                m.alpha_cutoff is not None and not m.blend for m in prims.materials):
            return None
        w, h = size
        if self._sample_keys is None or self._sample_keys.shape != (samples, w * h):
            self._sample_keys = np.empty((samples, w * h), np.uint64)
        keys = fill_empty(self._sample_keys)
        offsets = sample_offsets(samples)
        n = len(inputs.colors)
        if inputs.projection is not None or len(prims.lines):
            for s, (dx, dy) in enumerate(offsets):
                moved = shifted_inputs(inputs, dx, dy, size)
                if inputs.projection is not None:
                    self._raster_points(keys[s], inputs, moved.projection, view)
                if len(prims.lines):
                    raster_lines(keys[s], moved.clip, prims.lines, size,
                                 n + len(prims.triangles))
        if len(prims.triangles):
            double = np.array([m.double_sided for m in prims.materials], bool)
            setup = inputs.shader.setup = self._setup(
                inputs.clip, prims.triangles, ~double[prims.tri_material], size,
                self._setup_workspace)
            # BLEND pieces are the transparency pass's (engine.render.transparency)
            blended = blended_pieces(prims, setup.piece_tri)
            pieces = None if blended is None else np.flatnonzero(~blended)
            self._raster_samples(keys, setup, size, n, offsets, pieces)
            if inputs.projection is None and not len(prims.lines):
                self.sample_region = _pixel_region(setup, pieces, size)
        if len(prims.lines):
            self.rasterize(inputs, view)
        return keys

    def raster_layers(self, inputs, view, bound, layers):
        """The BLEND triangles of ``inputs`` into a k-buffer of ``layers`` keys per pixel
        in front of ``bound`` (engine.render.transparency), from the setup of the last
        ``rasterize``: ((W * H, layers) uint64 keys nearest first, (W * H,) int32
        overflow), arrays reused from frame to frame."""
        w, h = view.size
        shape = (w * h, layers)
        if self._layers is None or self._layers[0].shape != shape:
            self._layers = (np.empty(shape, np.uint64), np.empty(w * h, np.int32))
        keys, overflow = self._layers
        fill_empty(keys)
        overflow.fill(0)
        setup = inputs.shader.setup
        pieces = np.flatnonzero(blended_pieces(inputs.prims, setup.piece_tri))
        self._raster_layers(keys, overflow, setup, view.size, len(inputs.colors), pieces,
                            bound)
        return keys, overflow

    _raster_layers = staticmethod(transparency.raster_layers)

    def resolve(self, keys, inputs, view) -> Frame:
        """Shade each pixel's winner once -> host Frame (colour and depth)."""
        prims = inputs.prims
        if not prims.has_surfaces:
            col = np.ascontiguousarray(to_host(inputs.colors if inputs.point_rgba is None
                                               else inputs.point_rgba), np.uint8)
            out = None
            if view.reuse_output:  # render(copy=False): the same arrays every frame
                w, h = view.size
                if self._frame_out is None or self._frame_out.color.shape[:2] != (h, w):
                    self._frame_out = Frame(np.empty((h, w, 4), np.uint8),
                                            np.empty((h, w), np.float32))
                out = self._frame_out
            return self._resolve_points(keys, col, view.size, view.background, out)
        col = inputs.host_colors
        lines = self._line_fragments if len(prims.lines) else None
        points = col if inputs.point_rgba is None else inputs.point_rgba
        frame = self._resolve(keys, view.size, len(col), points, view.background, inputs.shader,
                              len(prims.triangles),
                              None if lines is None else np.ascontiguousarray(
                                  inputs.line_rgba[:, 0]))
        if lines is not None:
            # the resolve gave each line pixel its segment's first colour; the colour
            # along the segment (engine.render.lines) replaces it where ``keys`` still
            # names that segment (a multisample layer may hold another primitive there)
            lines = _fragments_named(lines, keys, len(col) + len(prims.triangles))
            frame.color.reshape(-1, 4)[lines.pixel] = fragment_colors(inputs.line_rgba,
                                                                      lines)
        return frame

    _resolve = staticmethod(resolve_surfaces)

    @staticmethod
    def _resolve_points(keys, colors, size, background, out=None) -> Frame:
        """The NumPy reference's point resolve (it allocates: ``out`` unused)."""
        w, h = size
        return resolve_keys(keys.reshape(h, w), colors, background)


class NumpyBackend(SoftwareBackend):
    """NumPy in every stage (the batch's matrices too): the reference the other backends
    are tested against."""

    name = "numpy"
    transforms = "numpy"

    def __init__(self):
        super().__init__(NumpyProjector())


class NumbaBackend(SoftwareBackend):
    """The stages compiled by Numba (the CPU default). Raises
    engine.errors.BackendUnavailable when Numba cannot be imported."""

    name = "numba"
    transforms = "numba"
    reuses_setup = True

    def __init__(self):
        from .numba_backend import NumbaProjector

        super().__init__(NumbaProjector())  # raises first when Numba is missing
        from functools import partial

        from . import numba_raster, numba_shading, numba_shadow, numba_triangles, numba_vertex
        from .threads import StageThreads

        # each surface stage on one thread or all, whichever costs less lately
        # (engine.render.backends.threads.StageThreads: a busy machine makes the
        # parallel choice wait for a core)
        self.stage_threads = st = StageThreads()
        self._surface_vertices = _chosen_threads(
            st, "vertex", lambda a: len(a[0]),
            partial(numba_vertex.surface_vertices_numba, out=numba_vertex.VertexBuffers()))
        self._splat = numba_raster.splat_into
        self._splat_sprites = numba_raster.splat_sprites_into
        self._setup = _chosen_threads(st, "setup", lambda a: len(a[1]),
                                      numba_triangles.setup_triangles_numba)
        self._mark_culled = _numba_mark_culled
        self._raster_triangles = _chosen_threads(st, "raster", lambda a: len(a[1].piece_tri),
                                                 numba_triangles.raster_triangles_numba)
        from .numba_layers import composite_layers_numba, raster_layers_numba

        self._raster_layers = raster_layers_numba
        # engine.render.transparency's compositing, compiled
        self.composite_layers = composite_layers_numba
        self._resolve = _chosen_threads(st, "resolve", lambda a: a[1][0] * a[1][1],
                                        numba_shading.resolve_numba)
        self._resolve_points = _chosen_threads(st, "points resolve", lambda a: a[2][0] * a[2][1],
                                               numba_raster.resolve_point_keys)
        self._project = _chosen_threads(st, "points", lambda a: len(a[0]), self.projector.project)
        from . import numba_msaa

        # engine.render.msaa's steps, compiled: the per-sample raster, the layers (layer
        # 0 into a reused array), the mix of their colours, the nearest depth
        self._raster_samples = _chosen_threads(st, "sample raster",
                                               lambda a: len(a[1].piece_tri),
                                               numba_triangles.raster_samples_numba)
        first = Workspace()
        self.mixed_layers = _chosen_threads(
            st, "msaa layers", lambda a: a[0].size, lambda keys: numba_msaa.mixed_layers_numba(
                keys, first.array("first", keys.shape[1:], np.uint64), self.sample_region))
        self.mix_layer = _chosen_threads(st, "msaa mix", lambda a: len(a[2]),
                                         numba_msaa.mix_layer_numba)
        self.finish_mix = _chosen_threads(st, "msaa mix end", lambda a: len(a[2]),
                                          numba_msaa.finish_mix_numba)
        self.nearest_depth = _chosen_threads(st, "msaa depth", lambda a: len(a[0]),
                                             numba_msaa.nearest_depth_numba)
        self.empty_keys = lambda n: fill_empty(first.array("layer", (n,), np.uint64))
        # the shadow maps' depth-only raster, its own thread choice (texels, not pixels)
        self._raster_depth = _chosen_threads(st, "shadow raster",
                                             lambda a: len(a[1].piece_tri),
                                             numba_shadow.raster_depth)
        # the opaque casters' whole pass in one (numba_shadow.draw_casters)
        self._draw_casters = _chosen_threads(st, "shadow pass", lambda a: len(a[2]),
                                             numba_shadow.draw_casters)
        self._shadow_depths = {}  # slot -> numba_shadow.DepthMap, reused (16 MB at 2048^2)

    def _caster_depth(self, casters, clip, vary, size, slot):
        """The casters drawn depth-only into this slot's map, kept from frame to frame
        and cleared where it was drawn: without alpha-tested casters in one pass over
        the triangles (numba_shadow.draw_casters); else their setup's pieces
        (numba_shadow.raster_depth), the alpha-tested ones through the NumPy raster's
        keys, folded in."""
        from .numba_shadow import DepthMap, fold_keys

        target = self._shadow_depths.get(slot)
        if target is None or target.size != size:
            target = self._shadow_depths[slot] = DepthMap(size)
        if clip is not None and casters.masked_pieces is None:  # cleared in the pass
            self._draw_casters(target, clip, casters.triangles, casters.cull_back,
                               self._shadow_workspace, clear=True)
            return target.depth
        target.clear()
        if clip is not None:
            setup = self._caster_setup(casters, clip, size)
            cut = casters.cut_pieces(setup)
            self._raster_depth(target, setup, None if cut is None else np.flatnonzero(~cut))
            if cut is not None:
                keys = self._shadow_keys = cleared_keys(self._shadow_keys, (size, size))
                fold_keys(target, casters.raster_cut(keys, setup, vary, size, cut))
        return target.depth


class _Casters:
    """The assembly's shadow casters (``Primitives.tri_cast``), kept in its ``derived``:
    their triangles, materials (what SurfaceShader.interpolate and _base read) and
    shadow-pass alpha cutoffs (engine.render.shadows.caster_cutoffs)."""

    def __init__(self, prims):
        sel = np.flatnonzero(prims.tri_cast)
        self.triangles = np.ascontiguousarray(prims.triangles[sel])
        self.tri_material = np.ascontiguousarray(prims.tri_material[sel])
        self.materials = prims.materials
        double = np.array([m.double_sided for m in prims.materials], bool)
        self.cull_back = np.ascontiguousarray(~double[self.tri_material]) if len(sel) \
            else np.zeros(0, np.bool_)
        self.cutoffs = caster_cutoffs(prims.materials)
        used = np.unique(self.tri_material)
        self.masked_pieces = (True if len(used) and (self.cutoffs[used] >= 0).any()
                              else None)

    @classmethod
    def of(cls, prims):
        c = prims.derived.get("shadow_casters")
        if c is None:
            c = prims.derived["shadow_casters"] = cls(prims)
        return c

    def cut_pieces(self, setup):
        """(P,) bool over ``setup``'s pieces: alpha-tested (their material's cutoff), or
        None when no caster is."""
        if self.masked_pieces is None:
            return None
        return self.cutoffs[self.tri_material[setup.piece_tri]] >= 0

    def raster_cut(self, keys, setup, vary, size, cut):
        """The alpha-tested pieces (``cut``) into the (S * S,) key buffer ``keys`` by the
        NumPy raster with ``keep``, in place. Returns keys."""
        shader = SurfaceShader(self, setup, vary, np.zeros(3), None, (size, size))
        return raster_triangles(keys, setup, (size, size), 0, np.flatnonzero(cut),
                                keep=self.keep(shader))

    def keep(self, shader):
        """The raster's ``keep(t, px, py)``: base alpha >= the caster cutoff."""
        def keep(t, px, py):
            out = np.ones(len(t), bool)
            mats = self.tri_material[t]
            for m in np.unique(mats):
                sel = np.flatnonzero(mats == m)
                mat = self.materials[m]
                vals = shader.interpolate(t[sel], shader.barycentrics(t[sel], px[sel],
                                                                      py[sel]), mat)
                out[sel] = shader._base(mat, vals)[:, 3] >= self.cutoffs[m]
            return out
        return keep

    def atmosphere(self, frame, view):
        """The scene's fog and sky in one compiled pass over the frame
        (engine.render.backends.numba_atmosphere)."""
        from .numba_atmosphere import apply_atmosphere_numba

        apply_atmosphere_numba(frame.color, frame.depth, view.scene, view.camera)


def _pixel_region(setup, pieces, size):
    """(width, x0, x1, y0, y1): the pixels [x0, x1) x [y0, y1) within one pixel of the
    bounding box of the setup's ``pieces`` (all where None), clamped to the frame;
    a sample outside the box of its piece's snapped vertices is not covered."""
    w, h = size
    x = setup.x if pieces is None else setup.x[pieces]
    if not len(x):
        return (w, 0, 0, 0, 0)
    y = setup.y if pieces is None else setup.y[pieces]
    x0, x1 = int(x.min()) // SUBPIXEL - 1, int(x.max()) // SUBPIXEL + 2
    y0, y1 = int(y.min()) // SUBPIXEL - 1, int(y.max()) // SUBPIXEL + 2
    return (w, max(x0, 0), min(max(x1, 0), w), max(y0, 0), min(max(y1, 0), h))


def _fragments_named(lines, keys, first_line_id):
    """The LineFragments whose pixel's key in ``keys`` holds their own segment."""
    own = (keys[lines.pixel] & np.uint64(0xFFFFFFFF)).astype(np.int64) \
        == lines.segment + first_line_id
    return lines if own.all() else type(lines)(*(a[own] for a in lines))


def _numba_mark_culled(clip, visible, runs):
    """engine.render.culling.mark_culled compiled (no index arrays)."""
    from .numba_kernels import mark_culled as kernel

    kernel(np.zeros((1, 4)) if clip is None else clip,
           np.zeros(1, np.bool_) if visible is None else visible,
           np.ascontiguousarray(runs, np.int64), clip is not None, visible is not None)


def _chosen_threads(stages, name, work, fn):
    """``fn`` run through ``stages.run(name, work(args), ...)``."""
    def call(*args, **kwargs):
        return stages.run(name, work(args), fn, *args, **kwargs)

    return call
