#version 330 core
// The engine's shading model (engine/render/shading.py) in GLSL: base colour = material
// colour x vertex colour x texture in linear light; "unlit" encodes it to sRGB as is,
// "lit"/"flat" add ambient + Lambert diffuse + Blinn-Phong specular first.

#define MAX_LIGHTS 8

// the varyings (v_position, v_normal, v_uv0, v_color_linear), generated from the
// attribute layout (engine/render/attributes.py)
#pragma frustum varyings

// the material record (engine/render/materials.py): a std140 block generated from its
// dtype replaces this line when the source is loaded (engine.render.gl.glsl)
#pragma frustum material_block
uniform sampler2D u_texture;    // RGBA32F linear texels and their mip levels
uniform bvec2 u_mirror;         // mirrored repeat per axis (the sampler then clamps)

uniform vec3 u_ambient;
uniform int u_n_directional;
uniform vec3 u_dir_to_light[MAX_LIGHTS];
uniform vec3 u_dir_radiance[MAX_LIGHTS];
uniform int u_n_point;
uniform vec3 u_point_position[MAX_LIGHTS];
uniform vec3 u_point_radiance[MAX_LIGHTS];
uniform vec3 u_eye;
uniform bool u_ortho;
uniform vec3 u_view_dir;

out vec4 f_color;

// What a draw needs, as constants where the painter compiled a program for one kind of
// material and light count (engine.render.gl.surfaces.variant_defines; the compiler then
// drops the unused branches, their varyings and the light loop's bound checks), else read
// from the material record and the light counts (the general program: lines, occluders).
#ifndef VARIANT
#define IS_LIT (u_material.shading != 0)
#define IS_FLAT (u_material.shading == 2)
#define HAS_VERTEX_COLORS ((u_material.flags & 1) != 0)
#define HAS_TEXTURE (u_material.texture >= 0)
#define HAS_CUTOFF (u_material.alpha_cutoff >= 0.0)
#define HAS_SPECULAR (u_material.specular > 0.0)
#define N_DIRECTIONAL u_n_directional
#define N_LIGHTS (u_n_directional + u_n_point)
#endif
// HAS_NORMALS (defined or not, in every program): every vertex drawn has a normal, so no
// pixel needs the screen-derivative one (and v_position is read only where specular or
// point lights need it)

// sRGB encoding (IEC 61966-2-1). Measured on llvmpipe (docs/performance.md, "GL mode"):
// neither an sRGB framebuffer (GL encoding on write: slower) nor a pow-free fit by square
// roots (within 0.25/255, no faster within the noise, and not bit-equal between the window
// and the offscreen framebuffer) beat this pow, so it stays.
vec3 srgb_encode(vec3 l) {
    l = clamp(l, 0.0, 1.0);
    return mix(l * 12.92, 1.055 * pow(l, vec3(1.0 / 2.4)) - 0.055, step(0.0031308, l));
}

void main() {
    vec4 base = u_material.color_linear;
    if (HAS_VERTEX_COLORS) base *= v_color_linear;
    if (HAS_TEXTURE) {
        // GL_MIRRORED_REPEAT on the coordinate: even periods as is, odd ones reflected
        vec2 period = floor(v_uv0);
        vec2 f = v_uv0 - period;
        vec2 mirrored = mix(f, 1.0 - f, mod(period, 2.0));
        vec2 uv = vec2(u_mirror.x ? mirrored.x : v_uv0.x, u_mirror.y ? mirrored.y : v_uv0.y);
        // the level of detail of engine.scene.sampling (the larger Euclidean footprint,
        // where a driver may approximate it), from the unfolded coordinate's derivatives
        // (the fold of a mirrored period would shrink them at its edge)
        vec2 texels = vec2(textureSize(u_texture, 0));
        vec2 ddx = dFdx(v_uv0) * texels, ddy = dFdy(v_uv0) * texels;
        float rho2 = max(dot(ddx, ddx), dot(ddy, ddy));
        base *= textureLod(u_texture, uv, 0.5 * log2(rho2));
    }
    if (HAS_CUTOFF && base.a < u_material.alpha_cutoff) discard;
    // a drawn pixel is opaque whatever its base alpha (materials.FRAME_ALPHA)
    if (!IS_LIT) {
        f_color = vec4(srgb_encode(base.rgb), 1.0);
        return;
    }
    // geometric normal towards the viewer: the cross product of the screen-space
    // derivatives (window x right, y up) faces the eye whichever way the triangle winds;
    // the derivatives are taken here, in uniform control flow, and the normal is only
    // formed for flat shading or a pixel whose mesh has no normals
    vec3 n;
#if defined(HAS_NORMALS)
    if (IS_FLAT) {
        n = normalize(cross(dFdx(v_position), dFdy(v_position)));
    } else {
        // normals interpolated to exactly zero (opposite ones across a triangle) give 0:
        // ambient light only, where the general program would use the geometric normal
        n = v_normal * inversesqrt(max(dot(v_normal, v_normal), 1e-30));
        if ((u_material.flags & 2) != 0 && !gl_FrontFacing) n = -n;
    }
#else
    vec3 dpdx = dFdx(v_position), dpdy = dFdy(v_position);
    if (IS_FLAT) {
        n = normalize(cross(dpdx, dpdy));
    } else {
        float len = length(v_normal);
        n = len > 0.0 ? v_normal / len : normalize(cross(dpdx, dpdy));
        if ((u_material.flags & 2) != 0 && !gl_FrontFacing) n = -n;
    }
#endif
    vec3 v = u_ortho ? u_view_dir : normalize(u_eye - v_position);
    vec3 diffuse = u_ambient;
    vec3 spec = vec3(0.0);
    for (int i = 0; i < N_LIGHTS; ++i) {
        vec3 l, e;
        if (i < N_DIRECTIONAL) {
            l = u_dir_to_light[i];
            e = u_dir_radiance[i];
        } else {
            vec3 d = u_point_position[i - N_DIRECTIONAL] - v_position;
            float r2 = max(dot(d, d), 1e-30);
            l = normalize(d);
            e = u_point_radiance[i - N_DIRECTIONAL] / r2;
        }
        float ndl = dot(n, l);
        if (ndl > 0.0) {
            diffuse += e * ndl;
            if (HAS_SPECULAR) {
                float ndh = max(dot(n, normalize(l + v)), 0.0);
                spec += e * u_material.specular * pow(ndh, u_material.shininess);
            }
        }
    }
    f_color = vec4(srgb_encode(base.rgb * diffuse + spec), 1.0);
}
