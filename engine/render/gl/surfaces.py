"""GL surface painter: the engine's clip-space triangles and lines drawn by OpenGL.

The engine's vertex stage has already transformed every vertex, so GL gets clip-space
positions through a pass-through vertex shader (shaders/surface.vert) and does its own
clipping, perspective-correct interpolation and depth test; shaders/surface.frag applies
the same shading model as engine.render.shading. First the occluders of hidden-line
removal (depth only: colour writes masked; the same offset corners as the software path,
engine.render.lines.occluder_clip), then one draw call per material (the index buffer is
sorted by material once per assembly), then the lines.

Buffers: the indices are uploaded when the primitive assembly changes; the clip-space
positions and the varyings (one interleaved (N, V) buffer, engine.render.attributes)
every frame:
from host memory, or, on the cupy backend, device to device by CUDA-GL interop
(``interop.py``; where it is unavailable the arrays are copied through the host, logged
once).
Textures are uploaded once per ``Texture`` object as SRGB8_ALPHA8 (GL decodes before
filtering, as engine.scene.sampling does, for lit and unlit materials).
"""

from __future__ import annotations

import numpy as np

from ...arrays import to_host
from ...scene.colorspace import srgb_to_linear
from ...scene.material import Material
from ..attributes import gl_buffer_format, glsl_varyings
from ..lines import LINE_DEPTH_BIAS, occluder_clip
from ..materials import MATERIAL_STD140, glsl_material_block, pack_materials, std140_record
from .glsl import load_glsl
from .interop import InteropSlot, InteropUnavailable, is_device_array

__all__ = ["MAX_LIGHTS", "SurfacePainter"]

MAX_LIGHTS = 8
_GL_SRGB8_ALPHA8 = 0x8C43
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
        self.program = ctx.program(
            vertex_shader=load_glsl("surface.vert", blocks={"varyings": glsl_varyings("vertex")}),
            fragment_shader=load_glsl("surface.frag", blocks={
                "varyings": glsl_varyings("fragment"), "material_block": glsl_material_block()}))
        # the material record of the current draw: one std140 block, rewritten per draw
        # (64 bytes, far inside the 16 KiB every GL driver guarantees)
        self._material_ubo = ctx.buffer(reserve=MATERIAL_STD140.itemsize)
        self.program["Material"].binding = 0
        self._static_key = None
        self._buffers: dict[str, object] = {}
        self._vao = None
        self._line_vao = None
        self._occluder_vao = None
        self._textures: dict[int, object] = {}
        self._samplers: dict[tuple[str, str, str], object] = {}
        self._groups: list[tuple[int, int, int]] = []  # (material, first index, count)

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
                data = data.astype(np.float32)  # on the device
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
        for vao in (self._vao, self._line_vao, self._occluder_vao):
            if vao is not None:
                vao.release()
        self._vao = self._line_vao = self._occluder_vao = None

    def _upload_static(self, prims):
        key = (prims.key, id(prims))
        if key == self._static_key:
            return
        order = np.argsort(prims.tri_material, kind="stable")
        tris = prims.triangles[order].astype(np.uint32)
        mats = prims.tri_material[order]
        self._groups = []
        if len(mats):
            starts = np.flatnonzero(np.r_[True, mats[1:] != mats[:-1]])
            ends = np.r_[starts[1:], len(mats)]
            self._groups = [(int(mats[s]), int(s) * 3, int(e - s) * 3) for s, e in zip(starts, ends)]
        self._records = pack_materials(prims.materials)[0]  # the MATERIAL records
        self._buffer("index", tris.reshape(-1))
        self._static_key = key

    def _texture(self, texture):
        """The GL texture of ``texture``: SRGB8_ALPHA8, so GL decodes texels before
        filtering for every material (lit and unlit alike, as the software resolves)."""
        tex = self._textures.get(id(texture))
        if tex is None:
            w, h = texture.size
            tex = self.ctx.texture((w, h), 4, texture.image.tobytes(), alignment=1,
                                   internal_format=_GL_SRGB8_ALPHA8)
            self._textures[id(texture)] = tex
        return tex

    def _sampler(self, sampler):
        """A GL sampler object for ``sampler``: repeat or clamp-to-edge per axis (mirrored
        repeat is done on the coordinate in the shader, then clamped), no mipmaps."""
        key = (sampler.wrap_s, sampler.wrap_t, sampler.filter)
        obj = self._samplers.get(key)
        if obj is None:
            f = self._mgl.LINEAR if sampler.filter == "linear" else self._mgl.NEAREST
            obj = self.ctx.sampler(repeat_x=sampler.wrap_s == "repeat",
                                   repeat_y=sampler.wrap_t == "repeat", filter=(f, f))
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

    def _draw_triangles(self, inputs):
        mgl = self._mgl
        prims, shader = inputs.prims, inputs.shader
        self._upload_static(prims)
        self._vertex_buffer("clip", inputs.clip)
        self._vertex_buffer("varyings", shader.varyings)  # (N, V): one interleaved buffer
        prog = self.program
        if self._vao is None:
            fmt, names = gl_buffer_format()
            content = [(self._buffers["clip"], "4f", "in_clip"),
                       (self._buffers["varyings"], fmt, *names)]
            self._vao = self.ctx.vertex_array(prog, content, self._buffers["index"],
                                              index_element_size=4)
        self._set_frame_uniforms(shader)
        prog["u_depth_bias"].value = 0.0
        for m, first, count in self._groups:
            mat = prims.materials[m]
            self._set_material(mat, self._records[m])
            if mat.double_sided:
                self.ctx.disable(mgl.CULL_FACE)
            else:
                self.ctx.enable(mgl.CULL_FACE)
                self.ctx.front_face = "ccw"
                self.ctx.cull_face = "back"
            self._vao.render(mgl.TRIANGLES, vertices=count, first=first)
        self.ctx.disable(mgl.CULL_FACE)

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

    def _set_frame_uniforms(self, shader):
        prog = self.program
        ambient, directional, point = shader.lights
        if len(directional) > MAX_LIGHTS or len(point) > MAX_LIGHTS:
            raise ValueError(f"the GL path draws at most {MAX_LIGHTS} directional and "
                             f"{MAX_LIGHTS} point lights")
        prog["u_ambient"].value = tuple(float(a) for a in ambient)
        prog["u_n_directional"].value = len(directional)
        prog["u_n_point"].value = len(point)
        pad = [(0.0, 0.0, 0.0)] * MAX_LIGHTS
        for name, values in (("u_dir_to_light", [d for d, _ in directional]),
                             ("u_dir_radiance", [e for _, e in directional]),
                             ("u_point_position", [q for q, _ in point]),
                             ("u_point_radiance", [e for _, e in point])):
            if name in prog:
                vals = [tuple(float(c) for c in v) for v in values] + pad[len(values):]
                prog[name].value = vals
        if "u_eye" in prog:
            prog["u_eye"].value = tuple(float(c) for c in shader.eye)
        if "u_ortho" in prog:
            prog["u_ortho"].value = shader.view_dir is not None
        if "u_view_dir" in prog:
            vd = shader.view_dir if shader.view_dir is not None else np.zeros(3)
            prog["u_view_dir"].value = tuple(float(c) for c in vd)

    def _use_material(self, record):
        """Write one MATERIAL record into the std140 block and bind it."""
        self._material_ubo.write(std140_record(record))
        self._material_ubo.bind_to_uniform_block(0)

    def _set_material(self, mat, record):
        prog = self.program
        self._use_material(record)
        if mat.texture is not None:
            self._texture(mat.texture).use(0)
            self._sampler(mat.texture.sampler).use(0)
            prog["u_texture"].value = 0
            prog["u_mirror"].value = (int(mat.texture.sampler.wrap_s == "mirror"),
                                      int(mat.texture.sampler.wrap_t == "mirror"))

    def release(self):
        """Free the program, buffers, vertex arrays, textures and interop registrations."""
        self._interop.release()
        self._release_vaos()
        for obj in [*self._buffers.values(), *self._textures.values(),
                    *self._samplers.values(), self._material_ubo, self.program]:
            obj.release()
        self._buffers.clear()
        self._textures.clear()
        self._samplers.clear()
