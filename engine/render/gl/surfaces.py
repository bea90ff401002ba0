"""GL surface painter: the engine's clip-space triangles and lines drawn by OpenGL.

The engine's vertex stage has already transformed every vertex, so GL gets clip-space
positions through a pass-through vertex shader (shaders/surface.vert) and does its own
clipping, perspective-correct interpolation and depth test; shaders/surface.frag applies
the same shading model as engine.render.shading. First the occluders of hidden-line
removal (depth only: colour writes masked; the same offset corners as the software path,
engine.render.lines.occluder_clip), then one draw call per material (the index buffer is
sorted by material once per assembly; BLEND materials are left to the transparency
passes, ``draw_blended`` and engine.render.gl.peeling), then the lines.

Buffers: the indices are uploaded when the primitive assembly changes; the clip-space
positions and the varyings that the frame's programs read (one interleaved buffer of
those columns of the (N, V) varyings, engine.render.attributes) every frame:
from host memory, or, on the cupy backend, device to device by CUDA-GL interop
(``interop.py``; where it is unavailable the arrays are copied through the host, logged
once).
Textures are uploaded once per ``Texture`` object as SRGB8_ALPHA8 (GL decodes before
filtering, as engine.scene.sampling does, for lit and unlit materials).
Shadows: the compute backend's own shadow maps (engine.render.shadows, rendered by its
raster) are uploaded every frame as one R32F texture, the maps' rows stacked, and read
with texelFetch by the same bias and 3 x 3 PCF in surface.frag; the draw groups are
split by ``Node.receive_shadow`` (a uniform per draw).
"""

from __future__ import annotations

import numpy as np

from ...arrays import to_host
from ...scene.colorspace import srgb_to_linear
from ...scene.material import MIN_FILTERS, Material
from ..attributes import VARYINGS, gl_buffer_format, glsl_varyings
from ..lines import LINE_DEPTH_BIAS, occluder_clip
from ..materials import (
    BLENDED,
    DOUBLE_SIDED,
    FLAT_NORMALS,
    MATERIAL_STD140,
    glsl_material_block,
    pack_materials,
    std140_record,
)
from ..shading import point_light_arrays
from .glsl import load_glsl
from .interop import InteropSlot, InteropUnavailable, is_device_array

__all__ = ["MAX_LIGHTS", "MAX_SHADOW_MAPS", "PEEL_UNITS", "SurfacePainter", "variant_defines"]

MAX_LIGHTS = 8
MAX_SHADOW_MAPS = 4  # MAX_MAPS of shaders/surface.frag
# texture units: 0 the base colour texture, 1-3 the "pbr" maps, then these
NORMAL_UNIT = 4  # the "normal" map
ENV_UNIT = 5  # the environment's specular chain (5) and split-sum table (6)
# the transparency passes' depth textures (opaque, previous layer)
PEEL_UNITS = (7, 8)
SHADOW_UNIT = 9  # the shadow maps' atlas
_COUNT = ("peel_count",)  # the count program's vertex array in the per-program table
# lines: unlit, white, times the vertex colour each end carries
_LINE_MATERIAL = pack_materials([Material(shading="unlit")])[0][0]


class SurfacePainter:
    """Draws a frame's surfaces (``Renderer.frame_inputs``) with a moderngl context."""

    def __init__(self, ctx, interop_factory=None):
        import moderngl

        self.ctx = ctx
        self._interop = InteropSlot() if interop_factory is None else InteropSlot(interop_factory)
        self.host_uploads = 0  # per-frame vertex arrays written from host memory
        self._mgl = moderngl
        self._programs: dict[tuple[str, ...], object] = {}  # by variant_defines
        self._vaos: dict[tuple[str, ...], object] = {}  # the triangles' VAO per program
        self.program = self._program(())  # the general one: lines, occluders
        # the material record of the current draw: one std140 block, rewritten per draw
        # (64 bytes, far inside the 16 KiB every GL driver guarantees)
        self._material_ubo = ctx.buffer(reserve=MATERIAL_STD140.itemsize)
        self._static_key = None
        self._sorted_triangles = np.zeros((0, 3), np.uint32)
        self._facts: tuple = (None, {})
        self._buffers: dict[str, object] = {}
        self._varying_names: tuple[str, ...] = ()  # in the "varyings" buffer, interleaved
        self._packed = np.zeros((0, 0), np.float32)  # their host staging array
        self._line_vao = None
        self._occluder_vao = None
        self._textures: dict[int, object] = {}
        self._samplers: dict[tuple[str, str, str], object] = {}
        # (material, first index, count, receives shadows)
        self._groups: list[tuple[int, int, int, bool]] = []
        self._count_program = None  # shaders/peel_count.*, made by the first count_blended
        self._blend_order: tuple = (None, [])  # (frame inputs, their BLEND groups in order)
        self._atlas = None  # the shadow maps' R32F texture
        self._env_key = self._env_ref = None
        self._env_textures: tuple = ()

    def _program(self, defines: tuple[str, ...]):
        """The surface program compiled with ``defines`` (``variant_defines``; () for the
        general program), compiled once per painter, its material block bound to 0."""
        prog = self._programs.get(defines)
        if prog is None:
            prog = self.ctx.program(
                vertex_shader=load_glsl("surface.vert",
                                        blocks={"varyings": glsl_varyings("vertex")}),
                fragment_shader=load_glsl("surface.frag", defines, blocks={
                    "varyings": glsl_varyings("fragment"),
                    "material_block": glsl_material_block()}))
            prog["Material"].binding = 0
            self._programs[defines] = prog
        return prog

    # --- buffers ------------------------------------------------------------------------
    def _buffer(self, name, data):
        data = np.ascontiguousarray(data)
        buf = self._buffers.get(name)
        if buf is None or buf.size < max(data.nbytes, 4):
            if buf is not None:
                buf.release()
            self._buffers[name] = buf = self.ctx.buffer(reserve=max(data.nbytes, 4) * 2,
                                                        dynamic=True)
            self._release_vaos()
        else:
            buf.orphan()
        if data.nbytes:
            buf.write(data)

    def _vertex_buffer(self, name, data):
        """A per-frame float32 vertex array into its buffer: device arrays by interop
        (into a buffer that is never orphaned while registered), else from the host."""
        if is_device_array(data):
            interop = self._interop.get()
            if interop is not None:
                # on the device, C-contiguous (a gather of columns need not be)
                data = data.astype(np.float32, order="C")
                try:
                    buf = self._buffers.get(name)
                    if buf is None or buf.size < data.nbytes:
                        if buf is not None:
                            interop.forget(buf)
                            buf.release()
                        self._buffers[name] = buf = self.ctx.buffer(reserve=max(data.nbytes, 4))
                        self._release_vaos()
                    interop.copy_to_buffer(buf, data)
                    return
                except InteropUnavailable as exc:
                    self._interop.disable(str(exc))
            data = to_host(data)
        self._buffer(name, np.ascontiguousarray(data, np.float32))
        self.host_uploads += 1

    @property
    def interop(self):
        """The CudaGLInterop in use, or None (not tried yet, or unavailable)."""
        return self._interop.interop

    def _release_vaos(self):
        for vao in (*self._vaos.values(), self._line_vao, self._occluder_vao):
            if vao is not None:
                vao.release()
        self._vaos.clear()
        self._line_vao = self._occluder_vao = None

    def _upload_static(self, prims):
        key = (prims.key, id(prims))
        if key == self._static_key:
            return
        # by material, then receivers of shadows first (one draw per material and flag)
        order = np.lexsort((~prims.tri_receive, prims.tri_material))
        tris = prims.triangles[order].astype(np.uint32)
        mats = prims.tri_material[order]
        receive = prims.tri_receive[order]
        self._groups = []
        if len(mats):
            starts = np.flatnonzero(np.r_[True, (mats[1:] != mats[:-1])
                                          | (receive[1:] != receive[:-1])])
            ends = np.r_[starts[1:], len(mats)]
            self._groups = [(int(mats[s]), int(s) * 3, int(e - s) * 3, bool(receive[s]))
                            for s, e in zip(starts, ends)]
        self._records = pack_materials(prims.materials)[0]  # the MATERIAL records
        self._sorted_triangles = tris
        self._facts = (None, {})  # (host colours, {(material, first): _group_facts})
        self._buffer("index", tris.reshape(-1))
        self._static_key = key

    def _texture(self, texture, raw: bool = False):
        """The GL texture of ``texture``: RGBA32F of its linear texels (``Texture.linear``,
        the software resolves' texels, so GL filters decoded texels for every material),
        with the engine's own mip chain (engine.scene.mipmap: box-filtered in linear
        light) as its levels when the sampler's min filter reads mipmaps; ``raw``: RGBA32F
        of the stored values / 255 (``Texture.stored``, the data maps: "pbr" ones and the
        normal map, as engine.render.materials packs them), its levels the chain of the
        stored values (``Texture.stored_mipmaps``)."""
        key = (id(texture), raw)
        tex = self._textures.get(key)
        if tex is None:
            w, h = texture.size
            if raw:
                # float32 stored / 255, the software resolves' texels: filtered from RGBA8,
                # llvmpipe's bilinear weights moved a normal-mapped highlight by up to 4
                # levels (measured on the parity matrix's bumpy ball)
                tex = self.ctx.texture((w, h), 4, texture.stored.tobytes(), alignment=1,
                                       dtype="f4")
            else:
                tex = self.ctx.texture((w, h), 4, texture.linear.tobytes(), alignment=1,
                                       dtype="f4")
            if MIN_FILTERS.index(texture.sampler.min_filter) >= 2:
                levels = texture.stored_mipmaps if raw else texture.mipmaps
                tex.build_mipmaps(0, len(levels) - 1)  # allocates the levels
                for k, level in enumerate(levels[1:], 1):
                    tex.write(level.tobytes(), level=k, alignment=1)
            self._textures[key] = tex
        return tex

    def _sampler(self, sampler):
        """A GL sampler object for ``sampler``: repeat or clamp-to-edge per axis (mirrored
        repeat is done on the coordinate in the shader, then clamped), the min filter
        (GL's level selection, OpenGL 4.6 section 8.14) and the magnification filter."""
        mini_name = sampler.min_filter
        key = (sampler.wrap_s, sampler.wrap_t, sampler.filter, mini_name)
        obj = self._samplers.get(key)
        if obj is None:
            f = self._mgl.LINEAR if sampler.filter == "linear" else self._mgl.NEAREST
            mini = getattr(self._mgl, mini_name.upper())
            obj = self.ctx.sampler(repeat_x=sampler.wrap_s == "repeat",
                                   repeat_y=sampler.wrap_t == "repeat", filter=(mini, f))
            self._samplers[key] = obj
        return obj

    # --- drawing ------------------------------------------------------------------------
    def draw(self, inputs, viewport):
        """Draw ``inputs`` (a ``FrameInputs`` with surfaces) into the bound framebuffer;
        clearing is the caller's job."""
        mgl = self._mgl
        prims, shader = inputs.prims, inputs.shader
        self.ctx.enable(mgl.DEPTH_TEST)
        self.ctx.depth_func = "<"
        if len(prims.occluders):
            self._draw_occluders(inputs, viewport)
        if shader is not None:
            self._draw_triangles(inputs)
        if len(prims.lines):
            self._draw_lines(inputs)

    def draw_blended(self, inputs, peel: int):
        """Draw the BLEND materials' triangles of ``inputs`` (after ``draw`` drew the
        frame: its buffers) in transparency pass ``peel`` (shaders/surface.frag
        ``u_peel``; engine.render.gl.peeling binds the depth textures it reads) into the
        bound framebuffer."""
        self.ctx.enable(self._mgl.DEPTH_TEST)
        self.ctx.depth_func = "<"
        self._draw_triangles(inputs, peel)

    def _draw_triangles(self, inputs, peel: int = 0):
        """The opaque materials' triangles (``peel`` 0), or the BLEND ones in that
        transparency pass (the buffers as the opaque pass uploaded them)."""
        mgl = self._mgl
        prims, shader = inputs.prims, inputs.shader
        _, directional, point = shader.lights
        n_point = len(point) + len(shader.spots)  # spots and ranged lights join them
        if len(directional) > MAX_LIGHTS or n_point > MAX_LIGHTS:
            raise ValueError(f"the GL path draws at most {MAX_LIGHTS} directional and "
                             f"{MAX_LIGHTS} point and spot lights")
        maps = shader.shadows.maps
        if len(maps) > MAX_SHADOW_MAPS:
            raise ValueError(f"the GL path draws at most {MAX_SHADOW_MAPS} lights with shadows")
        if not peel:
            self._upload_static(prims)
            self._vertex_buffer("clip", inputs.clip)
            # what every program of the frame reads, the transparency layers' too (their
            # passes draw from these buffers)
            self._upload_varyings(shader.varyings, [
                self._program(self._group_defines(inputs, g, len(directional), n_point,
                                                  prims.materials[g[0]].blend))
                for g in self._groups])
        if maps:
            self._shadow_atlas(maps).use(SHADOW_UNIT)
        ready = set()  # programs whose frame uniforms are set
        groups = self._groups
        if peel:
            groups = self._blended_front_to_back(inputs)
        for m, first, count, receive in groups:
            mat = prims.materials[m]
            if mat.blend != bool(peel):
                continue
            defines = self._group_defines(inputs, (m, first, count, receive), len(directional),
                                          n_point, bool(peel))
            prog = self._program(defines)
            if defines not in ready:
                self._set_frame_uniforms(prog, shader)
                self._set_shadow_uniforms(prog, shader, len(directional), n_point)
                _set(prog, "u_depth_bias", 0.0)
                _set(prog, "u_peel", peel)
                _set(prog, "u_opaque_depth", PEEL_UNITS[0])
                _set(prog, "u_peel_depth", PEEL_UNITS[1])
                ready.add(defines)
            _set(prog, "u_receive", receive)
            self._set_material(prog, mat, self._records[m])
            self._cull(mat)
            self._triangle_vao(defines, prog).render(mgl.TRIANGLES, vertices=count, first=first)
        self.ctx.disable(mgl.CULL_FACE)

    def _group_defines(self, inputs, group, n_directional, n_point, peel: bool):
        """The ``variant_defines`` of draw group ``group`` (material, first index, count,
        receives shadows) of ``inputs`` in the opaque pass or (``peel``) a transparency
        pass."""
        m, first, count, receive = group
        shader = inputs.shader
        white, normals = self._group_facts(inputs, m, first, count)
        return variant_defines(self._records[m], n_directional, n_point, white=white,
                               normals=normals, peel=peel,
                               shadows=bool(shader.shadows.maps) and receive,
                               environment=shader.environment is not None,
                               tone_mapped=_tone_mapped(shader))

    def _upload_varyings(self, varyings, programs):
        """The (N, V) ``varyings`` that ``programs`` read (their active ``in_`` attributes:
        the GLSL linker drops the varyings a program's fragment stage never reads) into
        the "varyings" buffer, those columns interleaved in VARYINGS order: the bunny's
        lit program reads 3 of the 18 floats per vertex, and uploading all of them cost
        its 1280x720 frame about 4 ms on llvmpipe (docs/performance.md, "GL mode"). The
        triangles' vertex arrays are remade when that set of varyings changes."""
        names = tuple(n for n in VARYINGS if any(f"in_{n}" in p for p in programs))
        if names != self._varying_names:
            self._release_vaos()
            self._varying_names = names
        if not names:
            return
        spans = [VARYINGS[n] for n in names]
        if is_device_array(varyings):  # gathered on the device, then by interop
            packed = varyings[:, [c for first, width in spans for c in range(first, first + width)]]
        else:  # into float32 kept between frames: no allocation per frame
            shape = (len(varyings), sum(width for _, width in spans))
            packed = self._packed
            if packed.shape != shape:
                packed = self._packed = np.empty(shape, np.float32)
            column = 0
            for first, width in spans:
                packed[:, column:column + width] = varyings[:, first:first + width]
                column += width
        self._vertex_buffer("varyings", packed)

    def count_blended(self, inputs):
        """Draw the BLEND materials' triangles of ``inputs`` with the fragment-count
        program (shaders/peel_count.*: 1 per fragment in front of the opaque frame's depth
        texture, bound by engine.render.gl.peeling at PEEL_UNITS[0]) into the bound
        framebuffer, whose depth and blending the caller sets: no varyings, no shading."""
        mgl = self._mgl
        vao = self._vaos.get(_COUNT)
        if vao is None:
            prog = self._count_program
            if prog is None:
                prog = self._count_program = self.ctx.program(
                    vertex_shader=load_glsl("peel_count.vert"),
                    fragment_shader=load_glsl("peel_count.frag"))
                _set(prog, "u_opaque_depth", PEEL_UNITS[0])
            vao = self._vaos[_COUNT] = self.ctx.vertex_array(
                prog, [(self._buffers["clip"], "4f", "in_clip")], self._buffers["index"],
                index_element_size=4)
        for m, first, count, _ in self._blended_front_to_back(inputs):
            self._cull(inputs.prims.materials[m])
            vao.render(mgl.TRIANGLES, vertices=count, first=first)
        self.ctx.disable(mgl.CULL_FACE)

    def _cull(self, material):
        """Back faces culled (counter-clockwise front faces) unless ``material`` is
        double-sided."""
        if material.double_sided:
            self.ctx.disable(self._mgl.CULL_FACE)
        else:
            self.ctx.enable(self._mgl.CULL_FACE)
            self.ctx.front_face = "ccw"
            self.ctx.cull_face = "back"

    def _blended_front_to_back(self, inputs) -> list[tuple[int, int, int, bool]]:
        """The BLEND materials' draw groups, nearest first: by each group's smallest
        NDC depth (z / w) over its vertices in front of the eye (w > 0), a group with
        none last. Every peeling pass keeps one fragment per pixel (the nearest behind
        the previous layer) and llvmpipe tests depth before a shader that only may
        discard, so drawn nearest first the farther groups fail that early test
        instead of being shaded and overwritten: 100 full-screen BLEND quads drawn in
        back-to-front order shaded every quad in each of the five passes. Kept for the
        frame's ``inputs`` (the passes share them)."""
        if self._blend_order[0] is inputs:
            return self._blend_order[1]
        prims = inputs.prims
        groups = [g for g in self._groups if prims.materials[g[0]].blend]
        if len(groups) > 1:
            clip = np.asarray(to_host(inputs.clip), np.float64)
            with np.errstate(divide="ignore", invalid="ignore"):
                ndc = np.where(clip[:, 3] > 0.0, clip[:, 2] / clip[:, 3], np.inf)
            ndc[~np.isfinite(ndc)] = np.inf
            tris = self._sorted_triangles  # the BLEND groups' slices only
            near = [ndc[tris[first // 3:(first + count) // 3]].min()
                    for _, first, count, _ in groups]
            groups = [groups[i] for i in np.argsort(near, kind="stable")]
        self._blend_order = (inputs, groups)
        return groups

    def _group_facts(self, inputs, material, first, count) -> tuple[bool, bool]:
        """(every vertex of the draw group is white (255, 255, 255, 255), every one has a
        non-zero normal) for the group's ``first``/``count`` indices of the sorted index
        buffer: then its program neither reads the vertex colour (multiplying by 1
        changes nothing) nor forms the screen-derivative normal. Cached while the assembly
        and the host colour array (kept per vertex revision) stay: a rigid motion turns
        normals but never makes one zero or non-zero."""
        host_colors = inputs.host_colors
        if host_colors is None:
            return False, False
        if self._facts[0] is not host_colors:
            self._facts = (host_colors, {})
        known = self._facts[1]
        if (material, first) not in known:
            used = self._sorted_triangles[first // 3:(first + count) // 3].reshape(-1)
            start, width = VARYINGS["normal"]
            normals = to_host(inputs.shader.varyings)[used, start:start + width]
            known[material, first] = (bool((host_colors[used] == 255).all()),
                                      bool((np.abs(normals).max(axis=1) > 0).all()))
        return known[material, first]

    def _triangle_vao(self, defines, prog):
        """The vertex array of the triangles for ``prog``: the varyings of the frame's
        programs (``_upload_varyings``); those this variant does not read are inactive
        in it, and skipped."""
        vao = self._vaos.get(defines)
        if vao is None:
            content = [(self._buffers["clip"], "4f", "in_clip")]
            if self._varying_names:
                fmt, names = gl_buffer_format(self._varying_names)
                content.append((self._buffers["varyings"], fmt, *names))
            vao = self._vaos[defines] = self.ctx.vertex_array(
                prog, content, self._buffers["index"], index_element_size=4,
                skip_errors=True)
        return vao

    def _draw_occluders(self, inputs, viewport):
        """Hidden-line removal: the occluder faces into the depth buffer only."""
        corners = occluder_clip(to_host(inputs.clip), inputs.prims.occluders, viewport)
        self._buffer("occluder_clip", corners.astype(np.float32))
        if self._occluder_vao is None:
            self._occluder_vao = self.ctx.vertex_array(
                self.program, [(self._buffers["occluder_clip"], "4f", "in_clip")])
        self.program["u_depth_bias"].value = 0.0
        # an opaque, untextured record, so no occluder fragment is discarded whatever
        # record is bound (today the lines' one, drawn last in every frame)
        self._use_material(_LINE_MATERIAL)
        # colour kept by blending (ZERO, ONE) rather than a colour mask: moderngl applies
        # a framebuffer's color_mask only when it is bound, and the caller binds it
        mgl = self._mgl
        self.ctx.enable(mgl.BLEND)
        self.ctx.blend_func = (mgl.ZERO, mgl.ONE)
        try:
            self._occluder_vao.render(mgl.TRIANGLES, vertices=len(corners))
        finally:
            self.ctx.blend_func = mgl.DEFAULT_BLENDING
            self.ctx.disable(mgl.BLEND)

    def _draw_lines(self, inputs):
        mgl = self._mgl
        lines = inputs.prims.lines
        ends = lines.reshape(-1)
        # one vertex per segment end: gathered on the host (device clip is copied here)
        self._buffer("line_clip", to_host(inputs.clip)[ends].astype(np.float32))
        # the shader multiplies linear colours and encodes the product (unlit): the ends
        # carry their colours decoded, so each end shows the colour given and GL
        # interpolates in linear light between them, as engine.render.lines does
        rgba = inputs.line_rgba.reshape(-1, 4) / 255.0  # each end's colour
        rgba[:, :3] = srgb_to_linear(rgba[:, :3])
        self._buffer("line_color", np.ascontiguousarray(rgba, np.float32))
        if self._line_vao is None:
            self._line_vao = self.ctx.vertex_array(self.program, [
                (self._buffers["line_clip"], "4f", "in_clip"),
                (self._buffers["line_color"], "4f", "in_color_linear")])
        prog = self.program
        prog["u_depth_bias"].value = LINE_DEPTH_BIAS
        # unlit: GL interpolates the ends' encoded colours along the segment (OpenGL 4.6
        # section 14.5.1), as engine.render.lines does
        self._use_material(_LINE_MATERIAL)
        self._line_vao.render(mgl.LINES, vertices=len(ends))

    def _set_frame_uniforms(self, prog, shader):
        """The lights and the eye of this frame into ``prog`` (uniforms its variant does
        not use are inactive there, and skipped)."""
        ambient, directional, point = shader.lights
        pos, radiance, cone, ranges, windowed = point_light_arrays(
            np.array([q for q, _ in point], np.float64).reshape(-1, 3),
            np.array([e for _, e in point], np.float64).reshape(-1, 3), shader.spots)
        _set(prog, "u_ambient", tuple(float(a) for a in ambient))
        _set(prog, "u_n_directional", len(directional))
        _set(prog, "u_n_point", len(pos))
        _set(prog, "u_windowed", bool(windowed))
        _set(prog, "u_tone_mapped", _tone_mapped(shader))
        _set(prog, "u_exposure", float(shader.exposure))
        _set(prog, "u_pbr_neutral", shader.tone_map == "pbr-neutral")
        cone4 = cone[:, :4]
        window = np.column_stack([cone[:, 4], ranges]) if len(cone) else np.zeros((0, 2))
        for name, values, width in (("u_dir_to_light", [d for d, _ in directional], 3),
                                    ("u_dir_radiance", [e for _, e in directional], 3),
                                    ("u_point_position", list(pos), 3),
                                    ("u_point_radiance", list(radiance), 3),
                                    ("u_point_cone", list(cone4), 4),
                                    ("u_point_window", list(window), 2)):
            if name in prog:  # a variant's compiler may keep only the elements it reads
                pad = [(0.0,) * width] * MAX_LIGHTS
                vals = [tuple(float(c) for c in v) for v in values] + pad[len(values):]
                n = prog[name].array_length
                prog[name].value = vals[:n] if n > 1 else vals[0]
        self._set_environment(prog, shader.environment)
        _set(prog, "u_eye", tuple(float(c) for c in shader.eye))
        _set(prog, "u_ortho", shader.view_dir is not None)
        vd = shader.view_dir if shader.view_dir is not None else np.zeros(3)
        _set(prog, "u_view_dir", tuple(float(c) for c in vd))

    def _set_environment(self, prog, pre):
        """Image-based lighting (engine.render.ibl.Prefiltered or None) into ``prog``: the
        SH coefficients, the specular chain as one RGB32F texture's mip levels 0-4
        (LINEAR_MIPMAP_LINEAR: bilinear in a level, linear between levels, as the
        software lookups; u repeats, v clamps) on unit ENV_UNIT, the split-sum table as
        RG32F (LINEAR, clamped) on unit ENV_UNIT + 1; made once per environment."""
        _set(prog, "u_has_env", pre is not None)
        if pre is None:
            return
        if self._env_key != id(pre):
            for t in self._env_textures:
                t.release()
            mgl = self._mgl
            level0 = pre.levels[0]
            spec = self.ctx.texture((level0.shape[1], level0.shape[0]), 3,
                                    np.ascontiguousarray(level0).tobytes(), dtype="f4",
                                    alignment=4)
            spec.build_mipmaps(0, len(pre.levels) - 1)  # allocates the levels
            for k, level in enumerate(pre.levels[1:], 1):
                spec.write(np.ascontiguousarray(level).tobytes(), level=k, alignment=4)
            spec.filter = (mgl.LINEAR_MIPMAP_LINEAR, mgl.LINEAR)
            spec.repeat_x, spec.repeat_y = True, False
            n = pre.lut.shape[0]
            lut = self.ctx.texture((n, n), 2, np.ascontiguousarray(pre.lut).tobytes(),
                                   dtype="f4", alignment=4)
            lut.filter = (mgl.LINEAR, mgl.LINEAR)
            lut.repeat_x = lut.repeat_y = False
            self._env_textures = (spec, lut)
            self._env_key, self._env_ref = id(pre), pre  # the reference keeps the id unique
        for unit, tex in enumerate(self._env_textures, start=ENV_UNIT):
            tex.use(unit)
        _set(prog, "u_env_specular", ENV_UNIT)
        _set(prog, "u_env_lut", ENV_UNIT + 1)
        if "u_env_sh" in prog:
            prog["u_env_sh"].value = [tuple(float(c) for c in row) for row in pre.sh]

    def _shadow_atlas(self, maps):
        """The R32F texture of this frame's shadow maps, rows stacked (map k from row
        sum of the earlier maps' sizes), written every frame; nearest, no mipmaps."""
        width = max(m.size for m in maps)
        height = sum(m.size for m in maps)
        if self._atlas is None or self._atlas.size != (width, height):
            if self._atlas is not None:
                self._atlas.release()
            self._atlas = self.ctx.texture((width, height), 1, dtype="f4")
            self._atlas.filter = (self._mgl.NEAREST, self._mgl.NEAREST)
        data = np.ones((height, width), np.float32)
        row = 0
        for m in maps:
            # GL's texture row 0 is the first written: the maps' row 0 (the top) first
            data[row:row + m.size, :m.size] = to_host(m.depth)
            row += m.size
        self._atlas.write(data.tobytes(), alignment=1)
        return self._atlas

    def _set_shadow_uniforms(self, prog, shader, n_directional, n_point):
        """The shadow maps' views and each light's map (shaders/surface.frag)."""
        maps = shader.shadows.maps
        _set(prog, "u_n_maps", len(maps))
        if not maps:
            return
        _set(prog, "u_shadow_atlas", SHADOW_UNIT)
        dir_map, point_map = [-1] * MAX_LIGHTS, [-1] * MAX_LIGHTS
        rows, row = [], 0
        for k, m in enumerate(maps):
            (dir_map if m.kind == "directional" else point_map)[m.index] = k
            rows.append(row)
            row += m.size
        pad = MAX_SHADOW_MAPS - len(maps)
        values = {
            "u_dir_map": dir_map, "u_point_map": point_map,
            "u_map_row": rows + [0] * pad, "u_map_size": [m.size for m in maps] + [1] * pad,
            "u_map_texel": [(m.texel_a, m.texel_b) for m in maps] + [(0.0, 0.0)] * pad,
            "u_map_origin": [tuple(m.origin) for m in maps] + [(0.0,) * 3] * pad,
            "u_map_axis": [tuple(m.axis) for m in maps] + [(0.0,) * 3] * pad}
        for name, v in values.items():
            if name in prog:
                n = prog[name].array_length
                prog[name].value = v[:n] if n > 1 else v[0]
        if "u_map_vp" in prog:  # column-major mat4s
            vps = [np.asarray(m.view_projection, np.float32).T for m in maps]
            vps += [np.eye(4, dtype=np.float32)] * pad
            n = prog["u_map_vp"].array_length
            prog["u_map_vp"].write(np.ascontiguousarray(vps[:n]).tobytes())

    def _use_material(self, record):
        """Write one MATERIAL record into the std140 block and bind it."""
        self._material_ubo.write(std140_record(record))
        self._material_ubo.bind_to_uniform_block(0)

    def _set_material(self, prog, mat, record):
        self._use_material(record)
        if mat.texture is not None:
            self._texture(mat.texture).use(0)
            self._sampler(mat.texture.sampler).use(0)
            _set(prog, "u_texture", 0)
            _set(prog, "u_mirror", (int(mat.texture.sampler.wrap_s == "mirror"),
                                    int(mat.texture.sampler.wrap_t == "mirror")))
        if mat.shading == "pbr":
            for unit, (role, name) in enumerate((("metallic_roughness", "mr"),
                                                 ("occlusion", "occlusion"),
                                                 ("emissive", "emissive")), start=1):
                t = mat.maps.get(role)
                if t is None:
                    continue
                self._texture(t, raw=role != "emissive").use(unit)
                # the sampler's own min filter: the shader picks the level (map_lod)
                self._sampler(t.sampler).use(unit)
                _set(prog, f"u_{name}_map", unit)
                _set(prog, f"u_{name}_mirror", (int(t.sampler.wrap_s == "mirror"),
                                                int(t.sampler.wrap_t == "mirror")))
        normal = mat.maps.get("normal") if mat.shading != "unlit" else None
        if normal is not None:  # stored values (data), its own levels
            self._texture(normal, raw=True).use(NORMAL_UNIT)
            self._sampler(normal.sampler).use(NORMAL_UNIT)
            _set(prog, "u_normal_map", NORMAL_UNIT)
            _set(prog, "u_normal_mirror", (int(normal.sampler.wrap_s == "mirror"),
                                           int(normal.sampler.wrap_t == "mirror")))

    def release(self):
        """Free the program, buffers, vertex arrays, textures and interop registrations."""
        self._interop.release()
        self._release_vaos()
        for obj in [*self._buffers.values(), *self._textures.values(), *self._env_textures,
                    *self._samplers.values(), self._material_ubo, *self._programs.values()]:
            obj.release()
        if self._atlas is not None:
            self._atlas.release()
            self._atlas = None
        if self._count_program is not None:
            self._count_program.release()
            self._count_program = None
        self._programs.clear()
        self._buffers.clear()
        self._textures.clear()
        self._samplers.clear()
        self._env_textures, self._env_key, self._env_ref = (), None, None


def _set(prog, name, value):
    """Set uniform ``name`` of ``prog`` when the program has it active."""
    if name in prog:
        prog[name].value = value


def _tone_mapped(shader) -> bool:
    """Whether the frame of ``shader`` (a SurfaceShader) applies exposure or a tone map
    (engine.render.tonemap; surface.frag ``display``)."""
    return shader.exposure != 1.0 or shader.tone_map != "none"


def variant_defines(record, n_directional: int, n_point: int, white: bool = False,
                    normals: bool = False, peel: bool = False, shadows: bool = False,
                    environment: bool = False, tone_mapped: bool = False) -> tuple[str, ...]:
    """The ``#define`` lines (shaders/surface.frag) of the program drawing one MATERIAL
    ``record`` (engine.render.materials) lit by ``n_directional`` directional and
    ``n_point`` point lights: what the record's fields decide (lit or not, flat, vertex
    colours, a texture, an alpha cutoff, specular, double-sided lighting, a BLEND
    layer's alpha kept) and the light loop's bound, as
    constants (``white``: the vertices drawn are all white, so vertex colours are left
    out even where the record multiplies them; ``normals``: every vertex drawn has a
    non-zero normal, so no pixel forms the screen-derivative one); and what the frame
    and the pass decide: ``peel``, a transparency pass (the only programs that may
    discard by depth, which turns off llvmpipe's early depth test); ``shadows``, the
    draw receives shadow maps; ``environment``, image-based lighting; ``tone_mapped``,
    exposure or a tone map. One program per distinct tuple is compiled and kept."""
    def flag(value) -> str:
        return "true" if value else "false"

    shading = int(record["shading"])
    flat = shading == 2 or (shading == 3 and int(record["flags"]) & FLAT_NORMALS)
    return ("VARIANT",
            f"IS_LIT {flag(shading != 0)}",
            f"IS_FLAT {flag(flat)}",
            f"IS_PBR {flag(shading == 3)}",
            f"HAS_VERTEX_COLORS {flag(int(record['flags']) & 1 and not white)}",
            f"HAS_TEXTURE {flag(int(record['texture']) >= 0)}",
            f"HAS_CUTOFF {flag(float(record['alpha_cutoff']) >= 0.0)}",
            f"HAS_SPECULAR {flag(float(record['specular']) > 0.0)}",
            f"N_DIRECTIONAL {int(n_directional)}",
            f"N_LIGHTS {int(n_directional + n_point)}",
            f"PEELING {flag(peel)}",
            f"RECEIVES_SHADOWS {flag(shadows)}",
            f"HAS_ENV {flag(environment)}",
            f"TONE_MAPPED {flag(tone_mapped)}",
            f"DOUBLE_SIDED {flag(int(record['flags']) & DOUBLE_SIDED)}",
            f"KEEPS_ALPHA {flag(int(record['flags']) & BLENDED)}") + (("HAS_NORMALS",) if normals else ()) + (
        ("HAS_NORMAL_MAP",) if shading != 0 and int(record["normal_texture"]) >= 0 else ())
