"""One material record, three readers: the NumPy dtype (engine.render.materials.MATERIAL)
that the Numba resolve reads, the C struct of shaders/material.cuh that the CUDA kernels
read (every field offset checked against the dtype by the host compiler and by NVRTC),
and the std140 block generated for GLSL (its values read back through a real shader)."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

from engine.render.attributes import VARYINGS
from engine.render.backends.cuda_source import NVRTC_OPTIONS, SHADER_DIR, nvrtc_compile_source
from engine.render.backends.cupy_surfaces import kernel_varyings
from engine.render.materials import (
    FRAME_ALPHA,
    MATERIAL,
    MATERIAL_STD140,
    glsl_material_block,
    pack_materials,
    std140_record,
)
from engine.scene.material import Material, Sampler, Texture


def _srgb_decode(c):  # IEC 61966-2-1
    c = np.asarray(c, np.float64)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def test_packing_fills_every_field_and_shares_textures():
    img = np.arange(3 * 2 * 4, dtype=np.uint8).reshape(2, 3, 4)
    tex = Texture(img, Sampler("clamp", "mirror", "nearest"))
    other = Texture(np.full((1, 1, 4), 9, np.uint8))
    mats = [Material(color=(1.0, 0.5, 0.25, 0.8), specular=0.3, shininess=20.0,
                     shading="flat", double_sided=True, vertex_colors=False, texture=tex,
                     alpha_cutoff=0.4),
            Material(texture=tex, shading="unlit"), Material(), Material(texture=other)]
    rec, texels, info = pack_materials(mats)
    assert rec.dtype == MATERIAL and rec.shape == (4,)
    r = rec[0]
    assert r["color"].tolist() == [1.0, 0.5, 0.25, 0.8]
    np.testing.assert_allclose(r["color_linear"][:3], _srgb_decode([1.0, 0.5, 0.25]), atol=1e-15)
    assert r["color_linear"][3] == 0.8
    assert (r["specular"], r["shininess"], r["alpha_cutoff"]) == (0.3, 20.0, 0.4)
    assert (r["shading"], r["flags"], r["texture"]) == (2, 2, 0)  # flat; double-sided only
    # flat without vertex colours reads position and normal, and uv0 for its texture
    assert r["span"].tolist() == [0, VARYINGS["uv0"][0] + 2]
    assert (rec[1]["shading"], rec[1]["flags"], rec[1]["alpha_cutoff"]) == (0, 1, -1.0)
    assert (rec[2]["shading"], rec[2]["shininess"], rec[2]["texture"]) == (1, 32.0, -1)
    # lit with vertex colours: position, normal, linear colour; unlit: the linear colour
    # and uv0 (everything is multiplied in linear light)
    assert rec[2]["span"].tolist() == [0, VARYINGS["color_linear"][0] + 4]
    assert rec[1]["span"].tolist() == [VARYINGS["color_linear"][0], VARYINGS["uv0"][0] + 2]
    assert rec["texture"].tolist() == [0, 0, -1, 1]  # one texture stored once for two
    # offset, width, height, wrap_s (1 clamp), wrap_t (2 mirror), filter (0 nearest)
    # two texture rows (nearest/nearest: one level; default trilinear: the 1x1 image is
    # its whole chain, one level) pointing at their level rows 2 and 3
    assert info.tolist() == [[0, 3, 2, 1, 2, 0, 0, 1, 2], [6, 1, 1, 0, 0, 1, 5, 1, 3],
                             [0, 3, 2, 1, 2, 0, 0, 0, 0], [6, 1, 1, 0, 0, 1, 5, 0, 0]]
    # texels in linear light, float32: RGB decoded (IEC 61966-2-1), alpha / 255
    assert texels.dtype == np.float32
    want = img.reshape(-1, 4) / 255.0
    want[:, :3] = _srgb_decode(want[:, :3])
    np.testing.assert_allclose(texels[:6], want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(texels[6], [_srgb_decode(9 / 255)] * 3 + [9 / 255], rtol=1e-6)


def _offset_asserts(offsetof: str) -> str:
    lines = [f"static_assert(sizeof(frustum::Material) == {MATERIAL.itemsize}, \"size\");",
             f"static_assert(FR_FRAME_ALPHA == {FRAME_ALPHA}, \"the frame's alpha\");"]
    for name in MATERIAL.names:
        off = MATERIAL.fields[name][1]
        lines.append(f"static_assert({offsetof}(frustum::Material, {name}) == {off}, "
                     f"\"offset of {name}\");")
    return "\n".join(lines) + "\n"


def test_the_cuda_struct_has_the_dtype_layout_on_the_host(tmp_path):
    cxx = shutil.which("g++") or shutil.which("c++")
    assert cxx, "a host C++ compiler is needed"
    src = tmp_path / "layout.cpp"
    src.write_text(f'#include <cstddef>\n#include "{SHADER_DIR / "material.cuh"}"\n'
                   + _offset_asserts("offsetof"))
    r = subprocess.run([cxx, "-std=c++17", "-fsyntax-only", str(src)], capture_output=True,
                       text=True, check=False)
    assert r.returncode == 0, r.stderr


def _layout_from_ptx(ptx: str) -> list[int]:
    """The values a kernel stored as constants: ``out[i] = C`` compiles to ``mov.u64 %rdK,
    C`` then ``st.global.u64 [%rdJ+8i], %rdK``; returns them in index order."""
    consts = dict(re.findall(r"mov\.u64\s+(%rd\d+), (\d+);", ptx))
    stores = re.findall(r"st\.global\.u64\s+\[%rd\d+(?:\+(\d+))?\], (%rd\d+);", ptx)
    return [int(consts[reg]) for off, reg in sorted(stores, key=lambda s: int(s[0] or 0))]


@pytest.mark.nvrtc
def test_the_cuda_struct_has_the_dtype_layout_in_nvrtc():
    # NVRTC has no offsetof: a kernel stores sizeof and each field's offset, which the
    # device compiler folds to constants in the PTX
    body = "".join(f"    out[{i + 1}] = (long long)((const char*)&m->{name} - "
                   f"(const char*)m);\n" for i, name in enumerate(MATERIAL.names))
    source = ((SHADER_DIR / "material.cuh").read_text()
              + 'extern "C" __global__ void material_layout(const frustum::Material* m, '
              "long long* out) {\n    out[0] = sizeof(frustum::Material);\n" + body + "}\n")
    ptx, _ = nvrtc_compile_source(source, "material_layout.cu",
                                  ["-arch=compute_90", *NVRTC_OPTIONS])
    want = [MATERIAL.itemsize] + [MATERIAL.fields[n][1] for n in MATERIAL.names]
    assert _layout_from_ptx(ptx) == want == [200, 0, 32, 64, 72, 80, 88, 92, 96, 100, 108,
                                             112, 120, 128, 136, 168, 172, 176, 180, 184,
                                             192, 196]


def test_the_std140_block_reads_back_every_field_in_glsl():
    import moderngl

    from engine.render.gl import create_egl_context

    ctx = create_egl_context()
    try:
        prog = ctx.program(vertex_shader="""#version 330 core
            in vec2 p; void main() { gl_Position = vec4(p, 0.0, 1.0); }""",
                           fragment_shader="#version 330 core\n" + glsl_material_block() + """
            out vec4 f[8];
            void main() {
                f[0] = u_material.color;
                f[1] = u_material.color_linear;
                f[2] = vec4(u_material.specular, u_material.shininess / 100.0,
                            u_material.alpha_cutoff, 0.0);
                f[3] = vec4(u_material.shading, u_material.flags, u_material.texture,
                            u_material.pad) / 10.0;
                f[4] = vec4(u_material.metallic, u_material.roughness,
                            u_material.occlusion_strength, 0.0);
                f[5] = u_material.emissive;
                f[6] = vec4(u_material.mr_texture, u_material.occlusion_texture,
                            u_material.emissive_texture, u_material.pbr_pad) / 10.0;
                f[7] = vec4(u_material.normal_scale, u_material.normal_texture,
                            u_material.uv_sets, 0.0) / 10.0;
            }""")
        # the first fields end with pad at 64; 3 floats at 68, the emissive vec4 at 80
        # (16-byte aligned), 4 ints from 96, then normal_scale, normal_texture, uv_sets
        # from 112: 124, rounded up to 128
        assert prog["Material"].size == MATERIAL_STD140.itemsize == 128
        rec = pack_materials([Material(color=(0.25, 0.5, 0.75, 1.0), specular=0.5,
                                       shininess=50, alpha_cutoff=0.125, shading="flat",
                                       double_sided=True)])[0][0]
        rec["texture"] = 3
        rec["metallic"], rec["roughness"], rec["occlusion_strength"] = 0.25, 0.5, 0.75
        rec["emissive"] = (0.125, 0.375, 0.625, 0.0)
        rec["mr_texture"], rec["occlusion_texture"], rec["emissive_texture"] = 1, 2, 4
        rec["normal_scale"], rec["normal_texture"], rec["uv_sets"] = 0.5, 5, 18
        ubo = ctx.buffer(std140_record(rec))
        prog["Material"].binding = 0
        ubo.bind_to_uniform_block(0)
        targets = [ctx.renderbuffer((1, 1), 4, dtype="f4") for _ in range(8)]
        fbo = ctx.framebuffer(color_attachments=targets)
        fbo.use()
        vbo = ctx.buffer(np.array([-1, -1, 3, -1, -1, 3], "f4").tobytes())
        ctx.vertex_array(prog, [(vbo, "2f", "p")]).render(moderngl.TRIANGLES)
        got = [np.frombuffer(fbo.read(components=4, attachment=i, dtype="f4"), "f4")
               for i in range(8)]
        np.testing.assert_allclose(got[0], [0.25, 0.5, 0.75, 1.0], atol=1e-6)
        np.testing.assert_allclose(got[1][:3], _srgb_decode([0.25, 0.5, 0.75]), atol=1e-6)
        np.testing.assert_allclose(got[2][:3], [0.5, 0.5, 0.125], atol=1e-6)
        # flat = 2, flags 1 (vertex colours) | 2 (double-sided) = 3, texture 3, pad 0
        np.testing.assert_allclose(got[3], [0.2, 0.3, 0.3, 0.0], atol=1e-6)
        np.testing.assert_allclose(got[4], [0.25, 0.5, 0.75, 0.0], atol=1e-6)
        np.testing.assert_allclose(got[5], [0.125, 0.375, 0.625, 0.0], atol=1e-6)
        np.testing.assert_allclose(got[6], [0.1, 0.2, 0.4, 0.0], atol=1e-6)
        np.testing.assert_allclose(got[7], [0.05, 0.5, 1.8, 0.0], atol=1e-6)
    finally:
        ctx.release()


def test_the_kernels_name_their_varyings_in_the_order_they_are_given():
    # shaders/shading.cuh indexes the offsets array by its enum; cupy_surfaces builds
    # that array in the enum's order, read from the source
    assert kernel_varyings() == ("position", "normal", "uv0", "color_linear", "tangent",
                                 "uv1")
    assert set(kernel_varyings()) <= set(VARYINGS)
