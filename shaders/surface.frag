#version 330 core
// The engine's shading model (engine/render/shading.py) in GLSL: base colour = material
// colour x vertex colour x texture in linear light; "unlit" encodes it to sRGB as is,
// "lit"/"flat" add ambient + Lambert diffuse + Blinn-Phong specular first, "pbr" the
// glTF metallic-roughness BRDF (engine/render/pbr.py, shaders/pbr.cuh); a scene's
// environment adds image-based lighting (engine/render/ibl.py, shaders/ibl.cuh).

#define MAX_LIGHTS 8

// the varyings (v_position, v_normal, v_uv0, v_color_linear), generated from the
// attribute layout (engine/render/attributes.py)
#pragma frustum varyings

// the material record (engine/render/materials.py): a std140 block generated from its
// dtype replaces this line when the source is loaded (engine.render.gl.glsl)
#pragma frustum material_block
uniform sampler2D u_texture;    // RGBA32F linear texels and their mip levels
uniform bvec2 u_mirror;         // mirrored repeat per axis (the sampler then clamps)
// "pbr" maps on units 1-3: metallic-roughness and occlusion RGBA32F (stored values / 255),
// emissive RGBA32F linear texels; each with its mirrored-repeat flags
uniform sampler2D u_mr_map;
uniform sampler2D u_occlusion_map;
uniform sampler2D u_emissive_map;
uniform bvec2 u_mr_mirror;
uniform bvec2 u_occlusion_mirror;
uniform bvec2 u_emissive_mirror;
// the "normal" map on unit 4: RGBA32F, stored values / 255 (linear data),
// engine/render/normal_map.py
uniform sampler2D u_normal_map;
uniform bvec2 u_normal_mirror;

uniform vec3 u_ambient;
uniform int u_n_directional;
uniform vec3 u_dir_to_light[MAX_LIGHTS];
uniform vec3 u_dir_radiance[MAX_LIGHTS];
uniform int u_n_point;
uniform vec3 u_point_position[MAX_LIGHTS];
uniform vec3 u_point_radiance[MAX_LIGHTS];
// spot and ranged lights among the point lights (shading.point_light_arrays): axis and
// cos outer, then 1 / (cos inner - cos outer) and the range (0: none); read when windowed
uniform bool u_windowed;
uniform vec4 u_point_cone[MAX_LIGHTS];
uniform vec2 u_point_window[MAX_LIGHTS];
// exposure and tone map (engine/render/tonemap.py), applied when u_tone_mapped
uniform bool u_tone_mapped;
uniform float u_exposure;
uniform bool u_pbr_neutral;
uniform vec3 u_eye;
uniform bool u_ortho;
uniform vec3 u_view_dir;
// image-based lighting (engine/render/ibl.py), when u_has_env: the SH coefficients of
// irradiance / pi, the specular chain as the mip levels of one equirectangular texture
// (level k: roughness k / 4; u repeats, v clamps) and the split-sum table (A, B) over
// (N.V, roughness), on units 5 and 6
uniform bool u_has_env;
uniform vec3 u_env_sh[9];
uniform sampler2D u_env_specular;
uniform sampler2D u_env_lut;

// the transparency passes (engine.render.gl.peeling): 0 none (opaque materials), 1 the
// nearest BLEND layer, 2 a later layer (behind u_peel_depth, the previous layer's depth),
// 3 count the fragments behind the last layer (output 1 into an additive target); every
// one keeps only fragments in front of u_opaque_depth, the opaque frame's depth
uniform int u_peel;
uniform sampler2D u_opaque_depth;
uniform sampler2D u_peel_depth;

// shadow maps (engine/render/shadows.py): every map's window depths stacked in one R32F
// texture (map k in rows u_map_row[k] .. + u_map_size[k]); each light's map or -1; the
// draw's triangles receive them when u_receive
#define MAX_MAPS 4
uniform int u_n_maps;
uniform bool u_receive;
uniform sampler2D u_shadow_atlas;
uniform int u_dir_map[MAX_LIGHTS];
uniform int u_point_map[MAX_LIGHTS];
uniform mat4 u_map_vp[MAX_MAPS];
uniform int u_map_row[MAX_MAPS];
uniform int u_map_size[MAX_MAPS];
uniform vec2 u_map_texel[MAX_MAPS];   // texel_a, texel_b
uniform vec3 u_map_origin[MAX_MAPS];
uniform vec3 u_map_axis[MAX_MAPS];

out vec4 f_color;

// What a draw needs, as constants where the painter compiled a program for one kind of
// material and light count, pass, shadow, environment and tone map (engine.render.gl.
// surfaces.variant_defines; the compiler then drops the unused branches, their varyings
// and the light loop's bound checks), else read from the material record and the
// uniforms (the general program: lines, occluders). Branches on a uniform are not free
// on llvmpipe: a discard anywhere in the shader turns off its early depth test, and the
// shadow, environment and tone-map code left behind uniform tests made the bunny's
// frame 2x raw moderngl's (docs/performance.md, "GL mode").
#ifndef VARIANT
#define IS_LIT (u_material.shading != 0)
#define IS_FLAT (u_material.shading == 2 || (u_material.shading == 3 && (u_material.flags & 4) != 0))
#define IS_PBR (u_material.shading == 3)
#define HAS_VERTEX_COLORS ((u_material.flags & 1) != 0)
#define HAS_TEXTURE (u_material.texture >= 0)
#define HAS_CUTOFF (u_material.alpha_cutoff >= 0.0)
#define HAS_SPECULAR (u_material.specular > 0.0)
#define N_DIRECTIONAL u_n_directional
#define N_LIGHTS (u_n_directional + u_n_point)
#define HAS_NORMAL_MAP_NOW (u_material.normal_texture >= 0)
#define PEELING (u_peel != 0)
#define RECEIVES_SHADOWS (u_n_maps != 0 && u_receive)
#define HAS_ENV u_has_env
#define TONE_MAPPED u_tone_mapped
#define DOUBLE_SIDED ((u_material.flags & 2) != 0)
#define KEEPS_ALPHA ((u_material.flags & 8) != 0)
#elif defined(HAS_NORMAL_MAP)
#define HAS_NORMAL_MAP_NOW true
#endif
// the alpha a drawn pixel writes: opaque whatever its base alpha (materials.FRAME_ALPHA),
// but a BLEND material's layer (flag 8) keeps it for the compositing
float frame_alpha(float a) {
    return KEEPS_ALPHA ? a : 1.0;
}

// the uv_sets bits of the material record (engine/render/materials.py UV_SET_BITS)
#define UV_BASE_COLOR 1
#define UV_METALLIC_ROUGHNESS 2
#define UV_OCCLUSION 4
#define UV_EMISSIVE 8
#define UV_NORMAL 16
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

// KHR_lights_punctual's spot cone t^2 and range window for point light q, seen along l
// (unit, towards the light) at squared distance r2 (engine/render/pbr.py)
float point_window(int q, vec3 l, float r2) {
    vec4 cone = u_point_cone[q];
    vec2 win = u_point_window[q];
    float t = clamp((-dot(l, cone.xyz) - cone.w) * win.x, 0.0, 1.0);
    float k = t * t;
    if (win.y > 0.0) {
        k *= clamp(1.0 - r2 * r2 / pow(win.y, 4.0), 0.0, 1.0);
    }
    return k;
}

// the fraction of light i's radiance reaching v_position of unit normal n, l the unit
// direction to the light (engine/render/shadows.py visibility: slope-scaled bias, the
// light's projection, 3 x 3 percentage-closer filtering); 1 without a map
float shadow_visibility(int i, vec3 n, vec3 l) {
    if (!RECEIVES_SHADOWS) return 1.0;
    int k = i < N_DIRECTIONAL ? u_dir_map[i] : u_point_map[i - N_DIRECTIONAL];
    float ndl = dot(n, l);
    if (k < 0 || ndl <= 0.0) return 1.0;
    ndl = min(ndl, 1.0);
    float nda = dot(n, u_map_axis[k]);
    float slope = min(sqrt(max(1.0 - nda * nda, 0.0)) / ndl, 10.0);  // MAX_SLOPE
    float texel = u_map_texel[k].x + u_map_texel[k].y * dot(v_position - u_map_origin[k],
                                                            u_map_axis[k]);
    vec3 q = v_position + l * (texel * (0.5 + 2.5 * slope));  // BIAS_CONSTANT, BIAS_SLOPE
    vec4 c = u_map_vp[k] * vec4(q, 1.0);
    if (c.w <= 0.0) return 1.0;
    int s = u_map_size[k];
    vec2 st = vec2((c.x / c.w + 1.0) * 0.5, (1.0 - c.y / c.w) * 0.5) * float(s);
    float d = (c.z / c.w) * 0.5 + 0.5;
    ivec2 i0 = ivec2(floor(clamp(st, -2.0, float(s) + 2.0)));
    int lit = 0;
    for (int dj = -1; dj <= 1; ++dj) {  // PCF_RADIUS 1
        for (int di = -1; di <= 1; ++di) {
            ivec2 t = i0 + ivec2(di, dj);
            if (t.x < 0 || t.x >= s || t.y < 0 || t.y >= s ||
                d <= texelFetch(u_shadow_atlas, ivec2(t.x, u_map_row[k] + t.y), 0).r) ++lit;
        }
    }
    return float(lit) / 9.0;
}

// linear radiance -> display (engine/render/tonemap.py): exposure, then Khronos PBR Neutral
vec3 display(vec3 c) {
    if (!TONE_MAPPED) return c;
    c *= u_exposure;
    if (!u_pbr_neutral) return c;
    const float start = 0.8 - 0.04, desaturation = 0.15;
    c = max(c, 0.0);
    float x = min(c.r, min(c.g, c.b));
    c -= x < 0.08 ? x - 6.25 * x * x : 0.04;
    float peak = max(c.r, max(c.g, c.b));
    if (peak < start) return c;
    float d = 1.0 - start;
    float new_peak = 1.0 - d * d / (peak + d - start);
    c *= new_peak / peak;
    float g = 1.0 - 1.0 / (desaturation * (peak - new_peak) + 1.0);
    return mix(c, vec3(new_peak), g);
}

// the texture coordinates of the texture whose uv_sets bit is `bit`: uv1 or uv0
vec2 uv_of(int bit) {
    return (u_material.uv_sets & bit) != 0 ? v_uv1 : v_uv0;
}

// GL_MIRRORED_REPEAT on the coordinate: even periods as is, odd ones reflected
vec2 wrapped_uv(bvec2 mirror, int bit) {
    vec2 uv = uv_of(bit);
    vec2 period = floor(uv);
    vec2 f = uv - period;
    vec2 mirrored = mix(f, 1.0 - f, mod(period, 2.0));
    return vec2(mirror.x ? mirrored.x : uv.x, mirror.y ? mirrored.y : uv.y);
}

// the level of detail of engine.scene.sampling for texture `tex` read through the uv
// set of uv_sets bit `bit` (the larger Euclidean footprint in texels, from the unfolded
// coordinate's derivatives, as for the base colour texture in main)
float map_lod(sampler2D tex, int bit) {
    vec2 texels = vec2(textureSize(tex, 0));
    vec2 ddx = dFdx(uv_of(bit)) * texels, ddy = dFdy(uv_of(bit)) * texels;
    return 0.5 * log2(max(dot(ddx, ddx), dot(ddy, ddy)));
}

// the unit normal n through the "normal" map (engine/render/normal_map.py): the map's
// stored RGB c at level of detail lod (map_lod, taken where control flow is uniform),
// n_t = normalize((2c - 1)(scale, scale, 1)), the frame T' = normalize(T - n (n.T)),
// B = cross(n, T') sign(w), n; n kept where the tangent is zero or parallel.
// For |scale| > 1 the same direction is taken as (2c - 1)(sign(scale), sign(scale),
// 1 / |scale|): float32 squares of (2c - 1) scale overflow for a huge scale (1e30)
vec3 mapped_normal(vec3 n, float lod) {
    vec3 c = textureLod(u_normal_map, wrapped_uv(u_normal_mirror, UV_NORMAL), lod).rgb;
    float s = u_material.normal_scale;
    vec3 k = abs(s) > 1.0 ? vec3(sign(s), sign(s), 1.0 / abs(s)) : vec3(s, s, 1.0);
    vec3 ts = (2.0 * c - 1.0) * k;
    float tl = dot(ts, ts);
    ts = tl > 0.0 ? ts * inversesqrt(tl) : vec3(0.0, 0.0, 1.0);
    vec3 t = v_tangent.xyz - n * dot(n, v_tangent.xyz);
    float t2 = dot(t, t);
    if (!(t2 > 1e-12)) return n;
    t *= inversesqrt(t2);
    vec3 b = cross(n, t) * (v_tangent.w < 0.0 ? -1.0 : 1.0);
    vec3 m = ts.x * t + ts.y * b + ts.z * n;
    float m2 = dot(m, m);
    return m2 > 0.0 ? m * inversesqrt(m2) : n;
}

// irradiance / pi at unit n (Ramamoorthi & Hanrahan 2001, the basis of engine/render/ibl.py)
vec3 env_irradiance(vec3 n) {
    vec3 e = u_env_sh[0] * 0.282095 + 0.488603 * (u_env_sh[1] * n.y + u_env_sh[2] * n.z
             + u_env_sh[3] * n.x) + 1.092548 * (u_env_sh[4] * n.x * n.y + u_env_sh[5] * n.y * n.z
             + u_env_sh[7] * n.x * n.z) + u_env_sh[6] * (0.315392 * (3.0 * n.z * n.z - 1.0))
             + u_env_sh[8] * (0.546274 * (n.x * n.x - n.y * n.y));
    return max(e, 0.0);
}

// the environment's light on a "pbr" pixel (engine/render/ibl.py ambient_pbr)
vec3 env_pbr(vec3 n, vec3 v, vec3 c, float m, float rough, float occlusion) {
    const float pi = 3.14159265358979;
    float ndv = dot(n, v);
    vec3 r = 2.0 * ndv * n - v;
    vec2 uv = vec2(0.5 + atan(r.x, -r.z) / (2.0 * pi), acos(clamp(r.y, -1.0, 1.0)) / pi);
    vec3 s = textureLod(u_env_specular, uv, clamp(rough, 0.0, 1.0) * 4.0).rgb;
    // the table's first and last texel centres are N.V, roughness 0 and 1 (ibl.lut_lookup)
    float n_lut = float(textureSize(u_env_lut, 0).x);
    vec2 t = clamp(vec2(ndv, rough), 0.0, 1.0);
    vec2 ab = texture(u_env_lut, (t * (n_lut - 1.0) + 0.5) / n_lut).rg;
    vec3 f0 = mix(vec3(0.04), c, m);
    return (c * (1.0 - m) * env_irradiance(n) + s * (f0 * ab.x + ab.y)) * occlusion;
}

// pi x the glTF metallic-roughness BRDF x max(N.L, 0) (engine/render/pbr.py, glTF 2.0
// Appendix B) for base c, metallic m, alpha^2 a2
vec3 pbr_light(vec3 n, vec3 v, vec3 l, vec3 c, float m, float a2) {
    const float pi = 3.14159265358979;
    float ndl = dot(n, l);
    if (ndl <= 0.0) return vec3(0.0);
    vec3 h = normalize(l + v);
    float ndh = dot(n, h), ndv = dot(n, v), vdh = dot(v, h), hdl = dot(h, l);
    float q = ndh * ndh * (a2 - 1.0) + 1.0;
    float d = ndh > 0.0 ? a2 / (pi * max(q * q, 1e-30)) : 0.0;
    float anl = abs(ndl), anv = abs(ndv);
    float g = (anl + sqrt(a2 + (1.0 - a2) * anl * anl)) * (anv + sqrt(a2 + (1.0 - a2) * anv * anv));
    float vis = (hdl > 0.0 && vdh > 0.0) ? 1.0 / max(g, 1e-30) : 0.0;
    vec3 f0 = mix(vec3(0.04), c, m);
    vec3 f = f0 + (1.0 - f0) * pow(1.0 - abs(vdh), 5.0);
    return pi * ((1.0 - f) * c * (1.0 - m) / pi + f * d * vis) * ndl;
}

// linear radiance of a "pbr" pixel (SurfaceShader._pbr): each map filtered by its sampler
// at its own level of detail (map_lod)
vec3 pbr_radiance(vec3 n, vec3 v, vec3 c) {
    float metallic = u_material.metallic, rough = u_material.roughness, occlusion = 1.0;
    vec3 emissive = u_material.emissive.rgb;
    if (u_material.mr_texture >= 0) {  // B metal, G roughness
        vec4 s = textureLod(u_mr_map, wrapped_uv(u_mr_mirror, UV_METALLIC_ROUGHNESS),
                            map_lod(u_mr_map, UV_METALLIC_ROUGHNESS));
        metallic *= s.b;
        rough *= s.g;
    }
    if (u_material.occlusion_texture >= 0)
        occlusion = 1.0 + u_material.occlusion_strength *
                    (textureLod(u_occlusion_map, wrapped_uv(u_occlusion_mirror, UV_OCCLUSION),
                                map_lod(u_occlusion_map, UV_OCCLUSION)).r - 1.0);
    if (u_material.emissive_texture >= 0)
        emissive *= textureLod(u_emissive_map, wrapped_uv(u_emissive_mirror, UV_EMISSIVE),
                               map_lod(u_emissive_map, UV_EMISSIVE)).rgb;
    float a2 = rough * rough * rough * rough;
    vec3 out_rgb = u_ambient * (c * (1.0 - metallic) + mix(vec3(0.04), c, metallic)) * occlusion;
    if (HAS_ENV) out_rgb += env_pbr(n, v, c, metallic, rough, occlusion);
    for (int i = 0; i < N_LIGHTS; ++i) {
        vec3 l, e;
        if (i < N_DIRECTIONAL) {
            l = u_dir_to_light[i];
            e = u_dir_radiance[i];
        } else {
            vec3 d = u_point_position[i - N_DIRECTIONAL] - v_position;
            float r2 = max(dot(d, d), 1e-30);
            l = d * inversesqrt(r2);
            e = u_point_radiance[i - N_DIRECTIONAL] / r2;
            if (u_windowed) e *= point_window(i - N_DIRECTIONAL, l, r2);
        }
        e *= shadow_visibility(i, n, l);
        out_rgb += pbr_light(n, v, l, c, metallic, a2) * e;
    }
    return out_rgb + emissive;
}

void main() {
    if (PEELING) {
        ivec2 at = ivec2(gl_FragCoord.xy);
        if (gl_FragCoord.z >= texelFetch(u_opaque_depth, at, 0).r) discard;
        if (u_peel >= 2 && gl_FragCoord.z <= texelFetch(u_peel_depth, at, 0).r) discard;
        if (u_peel == 3) {
            f_color = vec4(1.0);
            return;
        }
    }
    vec4 base = u_material.color_linear;
    if (HAS_VERTEX_COLORS) base *= v_color_linear;
    if (HAS_TEXTURE) {
        // the level of detail of engine.scene.sampling (the larger Euclidean footprint,
        // where a driver may approximate it), from the unfolded coordinate's derivatives
        // (the fold of a mirrored period would shrink them at its edge)
        vec2 texels = vec2(textureSize(u_texture, 0));
        vec2 uv = uv_of(UV_BASE_COLOR);
        vec2 ddx = dFdx(uv) * texels, ddy = dFdy(uv) * texels;
        float rho2 = max(dot(ddx, ddx), dot(ddy, ddy));
        base *= textureLod(u_texture, wrapped_uv(u_mirror, UV_BASE_COLOR), 0.5 * log2(rho2));
    }
    if (HAS_CUTOFF && base.a < u_material.alpha_cutoff) discard;
    if (!IS_LIT) {
        f_color = vec4(srgb_encode(display(base.rgb)), frame_alpha(base.a));
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
        if (DOUBLE_SIDED && !gl_FrontFacing) n = -n;
    }
#else
    vec3 dpdx = dFdx(v_position), dpdy = dFdy(v_position);
    if (IS_FLAT) {
        n = normalize(cross(dpdx, dpdy));
    } else {
        float len = length(v_normal);
        n = len > 0.0 ? v_normal / len : normalize(cross(dpdx, dpdy));
        if (DOUBLE_SIDED && !gl_FrontFacing) n = -n;
    }
#endif
#if defined(HAS_NORMAL_MAP_NOW)
    if (HAS_NORMAL_MAP_NOW) {
        // the frame of the normal before a back face reverses it (the software resolves'
        // winding normal for flat shading), the mapped normal reversed again
        bool back = !gl_FrontFacing && (DOUBLE_SIDED || IS_FLAT);
        float lod = map_lod(u_normal_map, UV_NORMAL);
        n = back ? -mapped_normal(-n, lod) : mapped_normal(n, lod);
    }
#endif
    vec3 v = u_ortho ? u_view_dir : normalize(u_eye - v_position);
    if (IS_PBR) {
        f_color = vec4(srgb_encode(display(pbr_radiance(n, v, base.rgb))), frame_alpha(base.a));
        return;
    }
    vec3 diffuse = u_ambient;
    if (HAS_ENV) diffuse += env_irradiance(n);  // the environment joins the ambient
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
            if (u_windowed) e *= point_window(i - N_DIRECTIONAL, l, r2);
        }
        e *= shadow_visibility(i, n, l);
        float ndl = dot(n, l);
        if (ndl > 0.0) {
            diffuse += e * ndl;
            if (HAS_SPECULAR) {
                float ndh = max(dot(n, normalize(l + v)), 0.0);
                spec += e * u_material.specular * pow(ndh, u_material.shininess);
            }
        }
    }
    f_color = vec4(srgb_encode(display(base.rgb * diffuse + spec)), frame_alpha(base.a));
}
