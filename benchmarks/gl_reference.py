"""An independent OpenGL reference for the engine's lit PBR frames: raw moderngl, its own GLSL.

    from gl_reference import ReferenceRenderer       # with benchmarks/ on sys.path
    ref = ReferenceRenderer(scene, camera, (480, 320), msaa=4)
    rgba = ref.render()                               # (H, W, 4) uint8, row 0 the top
    ref.release()

It draws an engine ``Scene`` (what ``engine.load`` makes of a glTF file, or one built in
code) through the same camera, without any of the engine's GL stages or shaders
(engine.render.gl, shaders/): only the scene's data are shared (positions, normals,
texture coordinates, tangents, materials, textures, lights, world matrices), so a
picture that agrees with the engine's checks the engine's shading, not a copy of it.

What it computes, per fragment, in linear light (GLSL below):

- The glTF 2.0 metallic-roughness BRDF as the specification's Appendix B writes it
  (Khronos, glTF 2.0, Appendix B "BRDF Implementation"): ``alpha = roughness^2``,
  GGX ``D = alpha^2 / (pi ((N.H)^2 (alpha^2 - 1) + 1)^2)``, the visibility
  ``V = 1 / ((|N.L| + sqrt(alpha^2 + (1 - alpha^2) (N.L)^2)) (|N.V| + sqrt(alpha^2 +
  (1 - alpha^2) (N.V)^2)))``, Schlick ``F = F0 + (1 - F0) (1 - |V.H|)^5`` with
  ``F0 = mix(0.04, base, metallic)``, ``f = (1 - F) base (1 - metallic) / pi + F D V``.
  ``visibility="correlated"`` takes the height-correlated form of glTF-Sample-Viewer
  instead, ``0.5 / (N.L sqrt((N.V)^2 (1 - alpha^2) + alpha^2) + N.V sqrt((N.L)^2
  (1 - alpha^2) + alpha^2))`` (Heitz, "Understanding the Masking-Shadowing Function",
  JCGT 2014), to measure what the choice changes.
- The maps: base colour (sRGB texture, times the factor and the vertex colours),
  metallic-roughness (B metal, G roughness), occlusion (R, ``1 + strength (R - 1)``),
  emissive (sRGB, times the factor), normal (``(2 rgb - 1) (scale, scale, 1)`` through
  the interpolated tangent frame, bitangent ``cross(N, T) w``), each on the texture
  coordinate set its material names, with GL's filtering and mip maps (the glTF
  sampler's filters and wraps: glTF 2.0 section 5.26, a sampler applies to every
  texture of a material): the driver's own levels (glGenerateMipmap of the RGBA8 data
  maps and the SRGB8_ALPHA8 colour ones), each map at the level of detail of its own
  size and coordinate set. Tangents are the mesh's (a file's TANGENT), or where it has
  none the engine's generated ones (``Mesh.vertex_tangents``: scene data, like the
  normals ``Mesh.vertex_normals`` computes for a mesh without them).
- KHR_lights_punctual lights (the extension's README): outgoing radiance
  ``f I N.L`` with I the light's colour x intensity in the extension's units (lux for
  directional, candela for point and spot; the engine stores them divided by pi,
  engine.io.gltf.lights, so the reference multiplies by pi), point and spot lights by
  the inverse square law times the extension's recommended range attenuation
  ``clamp(1 - (d / range)^4, 0, 1)`` and the spot's ``clamp(cd scale + offset, 0, 1)^2``
  (``scale = 1 / max(0.001, cos inner - cos outer)``, ``offset = -cos outer scale``).
- Ambient light (the engine's AmbientLight nodes, not a glTF feature): the engine's
  documented term ``A (c_diff + F0) occlusion`` (engine.render.pbr); emission added last.
- Shadows for at most one directional light with ``shadows`` set: a depth-texture pass
  from the light (an orthographic box around every caster, ``shadow_map_size`` texels
  square, back faces of single-sided materials culled), then per fragment a normal-offset
  bias (the point moved along its normal by about one texel, more at grazing light:
  D. Holbert, "Saying Goodbye to Shadow Acne", GDC 2011) and percentage-closer
  filtering over 3 x 3 depth-compare taps (Reeves, Salesin and Cook, SIGGRAPH 1987).
  ``node.cast_shadow`` / ``node.receive_shadow`` are honoured.
- Exposure and the tone map of ``Scene.exposure`` / ``Scene.tone_map``: clamp for
  "none", the Khronos PBR Neutral operator (Khronos, "PBR Neutral Tone Mapper", 2024)
  for "pbr-neutral", per fragment, before the samples are mixed; the engine documents the
  same order (docs/surfaces.md, "Exposure and tone mapping").
- ``msaa`` samples per pixel into a multisampled SRGB8_ALPHA8 texture with
  GL_FRAMEBUFFER_SRGB on (one shading per fragment at the pixel centre, GL's rule; GL
  encodes each sample to 8-bit sRGB, IEC 61966-2-1), resolved by ``copy_framebuffer``
  (a blit, which averages sRGB samples in linear light) and read back to the host: the
  engine's rule too (8-bit sRGB colours mixed in linear light, docs/surfaces.md
  "Anti-aliasing"). The background is the scene's.

Not drawn (ValueError naming the node or the feature): image-based lighting
(``Scene.environment``), fog and sky, BLEND materials, "lit"/"flat" (Blinn-Phong)
materials, point clouds, lines, instance sets, skins and morph targets, MASK shadow
casters, more than one shadowed light, spot-light shadows. A scene with no light gets
no headlight: the reference draws only the scene's lights. An instance set raises
TypeError; no EGL context, RuntimeError.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["MAX_LIGHTS", "ReferenceRenderer"]

MAX_LIGHTS = 8

_VERT = """#version 330 core
uniform mat4 u_view_proj;
uniform mat4 u_model;
uniform mat3 u_normal_matrix;
uniform float u_handedness;     // sign of det(model): a mirroring matrix flips the bitangent
in vec3 in_pos;
in vec3 in_normal;
in vec2 in_uv0;
in vec2 in_uv1;
in vec4 in_tangent;
in vec4 in_color;               // sRGB-encoded, normalized bytes
out vec3 v_world;
out vec3 v_normal;
out vec2 v_uv0;
out vec2 v_uv1;
out vec4 v_tangent;
out vec4 v_color;
void main() {
    vec4 w = u_model * vec4(in_pos, 1.0);
    v_world = w.xyz;
    v_normal = u_normal_matrix * in_normal;
    v_tangent = vec4(mat3(u_model) * in_tangent.xyz, in_tangent.w * u_handedness);
    v_uv0 = in_uv0;
    v_uv1 = in_uv1;
    vec3 c = in_color.rgb;
    v_color = vec4(mix(c / 12.92, pow((c + 0.055) / 1.055, vec3(2.4)), step(0.04045, c)),
                   in_color.a);
    gl_Position = u_view_proj * w;
}
"""

_FRAG = """#version 330 core
#define MAX_LIGHTS %(max_lights)d
const float PI = 3.14159265358979;
in vec3 v_world;
in vec3 v_normal;
in vec2 v_uv0;
in vec2 v_uv1;
in vec4 v_tangent;
in vec4 v_color;
out vec4 f_color;

// material
uniform vec4 u_base_factor;        // linear RGB, alpha
uniform float u_metallic;
uniform float u_roughness;
uniform vec3 u_emissive;           // linear
uniform float u_normal_scale;
uniform float u_occlusion_strength;
uniform float u_alpha_cutoff;      // < 0: opaque
uniform bool u_unlit;
uniform bool u_flat;
uniform bool u_double_sided;
uniform bool u_vertex_colors;
// textures: 0 base colour, 1 metallic-roughness, 2 occlusion, 3 emissive, 4 normal
uniform sampler2D u_tex[5];
uniform bool u_has[5];
uniform int u_set[5];              // texture coordinate set
uniform bvec2 u_mirror[5];         // mirrored repeat per axis
// lights in KHR_lights_punctual units: 0 directional, 1 point, 2 spot
uniform int u_n_lights;
uniform int u_light_type[MAX_LIGHTS];
uniform vec3 u_light_intensity[MAX_LIGHTS];   // colour x intensity
uniform vec3 u_light_position[MAX_LIGHTS];
uniform vec3 u_light_direction[MAX_LIGHTS];   // where the light points (node -Z)
uniform float u_light_range[MAX_LIGHTS];      // 0: unlimited
uniform vec2 u_light_cone[MAX_LIGHTS];        // angle scale, offset
uniform vec3 u_ambient;
uniform vec3 u_eye;
uniform bool u_ortho;
uniform vec3 u_view_dir;           // towards the viewer, for an orthographic camera
uniform bool u_correlated;
// the shadowed directional light (index, or -1), its map and matrix
uniform int u_shadow_light;
uniform bool u_receive;
uniform sampler2DShadow u_shadow_map;
uniform mat4 u_light_view_proj;
uniform float u_shadow_texel;      // world size of one map texel
uniform float u_exposure;
uniform bool u_neutral;

vec2 uv_of(int k) { return u_set[k] == 1 ? v_uv1 : v_uv0; }

// GL_MIRRORED_REPEAT on an axis: odd periods reflected (GL then clamps)
vec2 wrap(int k, vec2 uv) {
    vec2 f = fract(uv);
    vec2 m = mix(f, 1.0 - f, mod(floor(uv), 2.0));
    return vec2(u_mirror[k].x ? m.x : uv.x, u_mirror[k].y ? m.y : uv.y);
}

// log2 of OpenGL 4.6 section 8.14.1's exact scale factor rho = max(|dUV/dx|, |dUV/dy|)
// in texels of texture `tex` (a driver may approximate it)
float lod(sampler2D tex, vec2 dx, vec2 dy) {
    vec2 size = vec2(textureSize(tex, 0));
    dx *= size;
    dy *= size;
    return 0.5 * log2(max(dot(dx, dx), dot(dy, dy)));
}

// map k (0 base colour, 1 metallic-roughness, 2 occlusion, 3 emissive, 4 normal) at its
// level of detail (each map's own size and coordinate set; module docstring)
vec4 sample_map(int k) {
    vec2 uv = uv_of(k);
    vec2 dx = dFdx(uv), dy = dFdy(uv);  // of the unfolded coordinate
    if (k == 0) return textureLod(u_tex[0], wrap(0, uv), lod(u_tex[0], dx, dy));
    if (k == 1) return textureLod(u_tex[1], wrap(1, uv), lod(u_tex[1], dx, dy));
    if (k == 2) return textureLod(u_tex[2], wrap(2, uv), lod(u_tex[2], dx, dy));
    if (k == 3) return textureLod(u_tex[3], wrap(3, uv), lod(u_tex[3], dx, dy));
    return textureLod(u_tex[4], wrap(4, uv), lod(u_tex[4], dx, dy));
}

float distribution(float ndh, float a2) {
    float q = ndh * ndh * (a2 - 1.0) + 1.0;
    return ndh > 0.0 ? a2 / (PI * q * q) : 0.0;
}

float visibility(float ndl, float ndv, float hdl, float hdv, float a2) {
    if (hdl <= 0.0 || hdv <= 0.0) return 0.0;
    float l = abs(ndl), v = abs(ndv);
    if (u_correlated) {
        float g = l * sqrt(v * v * (1.0 - a2) + a2) + v * sqrt(l * l * (1.0 - a2) + a2);
        return g > 0.0 ? 0.5 / g : 0.0;
    }
    return 1.0 / ((l + sqrt(a2 + (1.0 - a2) * l * l)) * (v + sqrt(a2 + (1.0 - a2) * v * v)));
}

// f (Appendix B) for unit n, v, l
vec3 brdf(vec3 n, vec3 v, vec3 l, vec3 base, float metallic, float a2) {
    vec3 h = normalize(l + v);
    float vdh = dot(v, h);
    vec3 f0 = mix(vec3(0.04), base, metallic);
    vec3 F = f0 + (1.0 - f0) * pow(1.0 - abs(vdh), 5.0);
    float s = distribution(dot(n, h), a2) * visibility(dot(n, l), dot(n, v), dot(h, l), vdh, a2);
    return (1.0 - F) * base * (1.0 - metallic) / PI + F * s;
}

float shadow(vec3 n, vec3 l) {
    float ndl = clamp(dot(n, l), 0.0, 1.0);
    float sine = sqrt(1.0 - ndl * ndl);
    vec3 p = v_world + n * (u_shadow_texel * (1.0 + 2.0 * sine)) + l * (0.5 * u_shadow_texel);
    vec4 c = u_light_view_proj * vec4(p, 1.0);
    vec3 s = c.xyz / c.w * 0.5 + 0.5;
    if (any(lessThan(s, vec3(0.0))) || any(greaterThan(s, vec3(1.0)))) return 1.0;
    vec2 texel = 1.0 / vec2(textureSize(u_shadow_map, 0));
    float lit = 0.0;
    for (int j = -1; j <= 1; ++j)
        for (int i = -1; i <= 1; ++i)
            lit += texture(u_shadow_map, vec3(s.xy + vec2(i, j) * texel, s.z));
    return lit / 9.0;
}

vec3 tone_map(vec3 c) {
    c *= u_exposure;
    if (!u_neutral) return clamp(c, 0.0, 1.0);
    const float start = 0.8 - 0.04, desaturation = 0.15;
    float x = min(c.r, min(c.g, c.b));
    c -= x < 0.08 ? x - 6.25 * x * x : 0.04;
    float peak = max(c.r, max(c.g, c.b));
    if (peak < start) return clamp(c, 0.0, 1.0);
    float d = 1.0 - start;
    float new_peak = 1.0 - d * d / (peak + d - start);
    c *= new_peak / peak;
    float g = 1.0 - 1.0 / (desaturation * (peak - new_peak) + 1.0);
    return clamp(mix(c, vec3(new_peak), g), 0.0, 1.0);
}

void main() {
    vec4 base = u_base_factor;
    if (u_vertex_colors) base *= v_color;
    if (u_has[0]) base *= sample_map(0);
    if (u_alpha_cutoff >= 0.0 && base.a < u_alpha_cutoff) discard;
    if (u_unlit) {
        f_color = vec4(tone_map(base.rgb), 1.0);
        return;
    }
    vec3 n = u_flat ? normalize(cross(dFdx(v_world), dFdy(v_world))) : normalize(v_normal);
    if (!u_flat && u_double_sided && !gl_FrontFacing) n = -n;
    if (u_has[4]) {
        vec3 t = normalize(v_tangent.xyz - n * dot(n, v_tangent.xyz));
        vec3 b = cross(n, t) * (v_tangent.w < 0.0 ? -1.0 : 1.0);
        vec3 m = (2.0 * sample_map(4).rgb - 1.0) * vec3(u_normal_scale, u_normal_scale, 1.0);
        n = normalize(m.x * t + m.y * b + m.z * n);
    }
    vec3 v = u_ortho ? u_view_dir : normalize(u_eye - v_world);
    float metallic = u_metallic, rough = u_roughness, occlusion = 1.0;
    if (u_has[1]) {
        vec4 mr = sample_map(1);
        metallic *= mr.b;
        rough *= mr.g;
    }
    if (u_has[2]) occlusion = 1.0 + u_occlusion_strength * (sample_map(2).r - 1.0);
    vec3 emissive = u_emissive;
    if (u_has[3]) emissive *= sample_map(3).rgb;
    float alpha = rough * rough, a2 = alpha * alpha;
    vec3 f0 = mix(vec3(0.04), base.rgb, metallic);
    vec3 radiance = u_ambient * (base.rgb * (1.0 - metallic) + f0) * occlusion;
    for (int i = 0; i < u_n_lights; ++i) {
        vec3 l;
        vec3 e = u_light_intensity[i];
        if (u_light_type[i] == 0) {
            l = -u_light_direction[i];
        } else {
            vec3 d = u_light_position[i] - v_world;
            float dist = length(d);
            l = d / dist;
            float att = 1.0 / (dist * dist);
            if (u_light_range[i] > 0.0)
                att *= clamp(1.0 - pow(dist / u_light_range[i], 4.0), 0.0, 1.0);
            if (u_light_type[i] == 2) {
                float cd = dot(u_light_direction[i], -l);
                float a = clamp(cd * u_light_cone[i].x + u_light_cone[i].y, 0.0, 1.0);
                att *= a * a;
            }
            e *= att;
        }
        float ndl = dot(n, l);
        if (ndl <= 0.0) continue;
        if (i == u_shadow_light && u_receive) e *= shadow(n, l);
        radiance += brdf(n, v, l, base.rgb, metallic, a2) * e * ndl;
    }
    f_color = vec4(tone_map(radiance + emissive), 1.0);
}
"""

_DEPTH_VERT = """#version 330 core
uniform mat4 u_light_mvp;
in vec3 in_pos;
void main() { gl_Position = u_light_mvp * vec4(in_pos, 1.0); }
"""
_DEPTH_FRAG = """#version 330 core
void main() {}
"""

_ROLES = ("base_color", "metallic_roughness", "occlusion", "emissive", "normal")
_SRGB_ROLES = ("base_color", "emissive")
_SRGB8_ALPHA8, _FRAMEBUFFER_SRGB = 0x8C43, 0x8DB9
_MIN_FILTERS = {"nearest": 0x2600, "linear": 0x2601, "nearest_mipmap_nearest": 0x2700,
                "linear_mipmap_nearest": 0x2701, "nearest_mipmap_linear": 0x2702,
                "linear_mipmap_linear": 0x2703}


def _srgb_to_linear(c):
    c = np.asarray(c, np.float64)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _unit(v):
    v = np.asarray(v, np.float64)
    return v / np.linalg.norm(v)


def _mat4(m) -> bytes:
    """A row-major float64 matrix as the column-major float32 bytes GLSL reads."""
    return np.ascontiguousarray(np.asarray(m, np.float64).T, np.float32).tobytes()


class ReferenceRenderer:
    """Draws ``scene`` through ``camera`` at ``size`` (width, height) with raw moderngl.

    Args:
        scene: an engine Scene (module docstring: what it may hold).
        camera: the engine camera to draw through (its viewport is set to ``size``).
        size: (width, height) pixels.
        msaa: samples per pixel, 1 or the driver's multisample counts (4 on llvmpipe).
        visibility: "appendix-b" (the specification's text, default) or "correlated".
        ctx: a moderngl context to draw in; default a new standalone EGL one.

    Attributes:
        renderer_name: the GL driver's GL_RENDERER string (e.g. "llvmpipe (LLVM 15.0.6,
            256 bits)").

    The scene's buffers, textures and uniforms are uploaded once; ``render`` redraws the
    same scene (the shadow pass, the colour pass, the resolve, the readback).

    Raises:
        ValueError: a scene feature the reference does not draw (module docstring).
        TypeError: an instance set in the scene.
        RuntimeError: no EGL OpenGL 3.3 context.
    """

    def __init__(self, scene, camera, size, msaa: int = 4, visibility: str = "appendix-b",
                 ctx=None):
        import moderngl

        if visibility not in ("appendix-b", "correlated"):
            raise ValueError(f"visibility must be 'appendix-b' or 'correlated', got {visibility!r}")
        self._check_scene(scene)
        self.size = (int(size[0]), int(size[1]))
        self.msaa = int(msaa)
        if ctx is None:
            try:
                ctx = moderngl.create_standalone_context(require=330, backend="egl")
            except Exception as exc:  # glcontext raises bare Exceptions
                raise RuntimeError(f"cannot create an EGL OpenGL 3.3 context: {exc}") from exc
            self._own_ctx = True
        else:
            self._own_ctx = False
        self.ctx = ctx
        self.renderer_name = str(ctx.info.get("GL_RENDERER", "unknown"))
        self._owned = []
        with ctx:
            self._build(scene, camera, visibility == "correlated")

    # ------------------------------------------------------------------ set-up
    @staticmethod
    def _check_scene(scene):
        from engine import Instances, Mesh
        from engine.scene.light import Light

        for what in ("environment", "fog", "sky"):
            if getattr(scene, what, None) is not None:
                raise ValueError(f"the GL reference does not draw Scene.{what}")
        for node in scene.traverse(visible_only=True):
            if isinstance(node, Instances):
                raise TypeError(f"{node.name}: the GL reference draws no instance sets")
            g = node.geometry
            if g is None or isinstance(node, Light):
                continue
            if not isinstance(g, Mesh) or node.draw_mode != "solid":
                raise ValueError(f"{node.name}: the GL reference draws solid meshes only")
            m = g.material
            if m.shading not in ("pbr", "unlit"):
                raise ValueError(f"{node.name}: the GL reference draws 'pbr' and 'unlit' "
                                 f"materials, not {m.shading!r}")
            if m.blend:
                raise ValueError(f"{node.name}: the GL reference draws no BLEND materials")
            if g.joints is not None or g.morph_positions is not None or \
                    g.morph_normals is not None:
                raise ValueError(f"{node.name}: the GL reference draws no skins or morph targets")

    def _texture(self, tex, role):
        import moderngl

        key = (id(tex), role)
        got = self._textures.get(key)
        if got is not None:
            return got
        fmt = _SRGB8_ALPHA8 if role in _SRGB_ROLES else 0x8058  # GL_RGBA8
        t = self.ctx.texture(tex.size, 4, np.ascontiguousarray(tex.image).tobytes(),
                             internal_format=fmt)
        s = tex.sampler
        mag = moderngl.LINEAR if s.filter == "linear" else moderngl.NEAREST
        min_filter = _MIN_FILTERS[s.min_filter]
        if "mipmap" in s.min_filter:  # the driver's levels, for every map
            t.build_mipmaps()
        t.filter = (min_filter, mag)
        # mirror is done in the shader on a clamped texture; repeat by GL
        t.repeat_x = s.wrap_s == "repeat"
        t.repeat_y = s.wrap_t == "repeat"
        self._owned.append(t)
        self._textures[key] = (t, (s.wrap_s == "mirror", s.wrap_t == "mirror"))
        return self._textures[key]

    def _lights(self, scene):
        """Uniform arrays of the scene's lights in KHR_lights_punctual units, the
        ambient radiance, and the shadowed directional light (index or -1, the node)."""
        from engine.scene.light import AmbientLight, DirectionalLight, Light, SpotLight

        types, intens, pos, dirs, ranges, cones = [], [], [], [], [], []
        ambient = np.zeros(3)
        shadowed, shadow_node = -1, None
        for node in scene.traverse(visible_only=True):
            if not isinstance(node, Light):
                continue
            e = np.asarray(node.color, np.float64) * node.intensity
            if isinstance(node, AmbientLight):
                ambient += e
                continue
            m = node.world_matrix
            if node.shadows:
                if not isinstance(node, DirectionalLight):
                    raise ValueError(f"{node.name}: the GL reference shadows directional "
                                     f"lights only")
                if shadow_node is not None:
                    raise ValueError("the GL reference shadows one directional light")
                shadowed, shadow_node = len(types), node
            types.append(0 if isinstance(node, DirectionalLight) else
                         2 if isinstance(node, SpotLight) else 1)
            intens.append(e * math.pi)  # the engine's unit is the extension's / pi
            pos.append(m[:3, 3])
            dirs.append(-_unit(m[:3, 2]))
            ranges.append(getattr(node, "range", None) or 0.0)
            if isinstance(node, SpotLight):
                ci, co = math.cos(node.inner_cone_angle), math.cos(node.outer_cone_angle)
                scale = 1.0 / max(0.001, ci - co)
                cones.append((scale, -co * scale))
            else:
                cones.append((0.0, 0.0))
        if len(types) > MAX_LIGHTS:
            raise ValueError(f"the GL reference draws at most {MAX_LIGHTS} lights, the "
                             f"scene has {len(types)}")
        return (types, intens, pos, dirs, ranges, cones), ambient, shadowed, shadow_node

    def _build(self, scene, camera, correlated):
        import moderngl

        from engine import Mesh
        from engine.scene.light import Light

        ctx, (w, h) = self.ctx, self.size
        prog = ctx.program(vertex_shader=_VERT,
                           fragment_shader=_FRAG % {"max_lights": MAX_LIGHTS})
        depth_prog = ctx.program(vertex_shader=_DEPTH_VERT, fragment_shader=_DEPTH_FRAG)
        self._owned += [prog, depth_prog]
        self._prog, self._depth_prog = prog, depth_prog
        self._textures = {}

        camera.set_viewport(w, h)
        prog["u_view_proj"].write(_mat4(camera.projection_matrix @ camera.view_matrix))
        cw = camera.world_matrix
        ortho = type(camera).__name__ == "OrthographicCamera"
        prog["u_eye"].value = tuple(float(x) for x in cw[:3, 3])
        prog["u_ortho"].value = ortho
        prog["u_view_dir"].value = tuple(float(x) for x in _unit(cw[:3, 2]))
        prog["u_correlated"].value = correlated
        prog["u_exposure"].value = float(scene.exposure)
        prog["u_neutral"].value = scene.tone_map == "pbr-neutral"

        (types, intens, pos, dirs, ranges, cones), ambient, shadowed, sun = self._lights(scene)
        pad = MAX_LIGHTS - len(types)
        prog["u_n_lights"].value = len(types)
        prog["u_light_type"].write(np.array(types + [0] * pad, np.int32))
        for name, rows, k in (("u_light_intensity", intens, 3), ("u_light_position", pos, 3),
                              ("u_light_direction", dirs, 3), ("u_light_cone", cones, 2)):
            a = np.zeros((MAX_LIGHTS, k), np.float32)
            if rows:
                a[:len(rows)] = rows
            prog[name].write(a)
        prog["u_light_range"].write(np.array(ranges + [0.0] * pad, np.float32))
        prog["u_ambient"].value = tuple(float(x) for x in ambient)
        prog["u_shadow_light"].value = shadowed
        prog["u_tex"].write(np.arange(5, dtype=np.int32))

        # one draw per mesh node: static buffers, its uniforms
        self._draws = []
        boxes = []
        for node in scene.traverse(visible_only=True):
            g = node.geometry
            if g is None or isinstance(node, Light) or not isinstance(g, Mesh):
                continue
            n = g.vertex_count
            mat = g.material
            model = np.array(node.world_matrix, np.float64)
            model[:3, 3] += model[:3, :3] @ np.asarray(g.origin, np.float64)
            normals = g.vertex_normals()
            uv0 = g.uvs if g.uvs is not None else np.zeros((n, 2))
            uv1 = g.uvs1 if g.uvs1 is not None else np.zeros((n, 2))
            set_normal = mat.tex_coords.get("normal", 0)
            tangents = g.vertex_tangents(set_normal) if "normal" in mat.maps else None
            if tangents is None:
                tangents = np.zeros((n, 4))
            colors = g.colors if g.colors is not None else np.full((n, 4), 255, np.uint8)
            arrays = ((g.positions, np.float32, "3f", "in_pos"),
                      (normals, np.float32, "3f", "in_normal"),
                      (uv0, np.float32, "2f", "in_uv0"), (uv1, np.float32, "2f", "in_uv1"),
                      (tangents, np.float32, "4f", "in_tangent"),
                      (colors, np.uint8, "4f1", "in_color"))
            bufs = [ctx.buffer(np.ascontiguousarray(a, dt)) for a, dt, _, _ in arrays]
            ibo = ctx.buffer(np.ascontiguousarray(g.faces, np.uint32))
            content = [(b, fmt, name) for b, (_, _, fmt, name) in zip(bufs, arrays)
                       if name in prog]
            vao = ctx.vertex_array(prog, content, ibo)
            depth_vao = ctx.vertex_array(depth_prog, [(bufs[0], "3f", "in_pos")], ibo)
            self._owned += [*bufs, ibo, vao, depth_vao]
            maps = {"base_color": mat.texture, **mat.maps}
            textures = []
            for role in _ROLES:
                tex = maps.get(role)
                if role != "base_color" and mat.shading == "unlit":
                    tex = None
                textures.append(None if tex is None else self._texture(tex, role))
            m3 = model[:3, :3]
            uniforms = {
                "u_model": _mat4(model),
                "u_normal_matrix": np.ascontiguousarray(np.linalg.inv(m3), np.float32).tobytes(),
                "u_handedness": 1.0 if np.linalg.det(m3) >= 0 else -1.0,
                "u_base_factor": (*(float(c) for c in _srgb_to_linear(mat.color[:3])),
                                  float(mat.color[3])),
                "u_metallic": mat.metallic, "u_roughness": mat.roughness,
                "u_emissive": tuple(float(c) for c in mat.emissive),
                "u_normal_scale": mat.normal_scale,
                "u_occlusion_strength": mat.occlusion_strength,
                "u_alpha_cutoff": -1.0 if mat.alpha_cutoff is None else mat.alpha_cutoff,
                "u_unlit": mat.shading == "unlit", "u_flat": bool(mat.flat_normals),
                "u_double_sided": mat.double_sided,
                "u_vertex_colors": bool(mat.vertex_colors and g.colors is not None),
                # uniform arrays as the tightly packed int32 GL takes for bools and ints
                "u_has": np.array([t is not None for t in textures], np.int32).tobytes(),
                "u_set": np.array([mat.tex_coords.get(r, 0) for r in _ROLES],
                                  np.int32).tobytes(),
                "u_mirror": np.array([t[1] if t else (False, False) for t in textures],
                                     np.int32).tobytes(),
                "u_receive": bool(node.receive_shadow),
            }
            if node.cast_shadow and sun is not None:
                if mat.alpha_cutoff is not None:
                    raise ValueError(f"{node.name}: the GL reference casts no MASK shadows")
                p = np.asarray(g.positions, np.float64) @ model[:3, :3].T + model[:3, 3]
                boxes.append((p.min(0), p.max(0)))
            self._draws.append((vao, depth_vao, uniforms, [t and t[0] for t in textures],
                                mat.double_sided, model, bool(node.cast_shadow)))

        # the shadow map: an orthographic box around every caster, seen along the rays
        self._shadow = None
        if sun is not None and boxes:
            size = int(sun.shadow_map_size)
            forward = -_unit(sun.world_matrix[:3, 2])
            up = np.array([0.0, 1.0, 0.0]) if abs(forward[1]) < 0.9 else np.array([1.0, 0, 0])
            right = _unit(np.cross(forward, up))
            up = np.cross(right, forward)
            view = np.eye(4)
            view[0, :3], view[1, :3], view[2, :3] = right, up, -forward
            lo = np.min([b[0] for b in boxes], 0)
            hi = np.max([b[1] for b in boxes], 0)
            corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                                for z in (lo[2], hi[2])]) @ view[:3, :3].T
            c_lo, c_hi = corners.min(0), corners.max(0)
            pad = 0.01 * float(np.max(c_hi - c_lo))
            c_lo, c_hi = c_lo - pad, c_hi + pad
            proj = np.eye(4)
            proj[0, 0], proj[0, 3] = 2 / (c_hi[0] - c_lo[0]), -(c_hi[0] + c_lo[0]) / (c_hi[0] - c_lo[0])
            proj[1, 1], proj[1, 3] = 2 / (c_hi[1] - c_lo[1]), -(c_hi[1] + c_lo[1]) / (c_hi[1] - c_lo[1])
            # view z is negative in front: near = -c_hi[2], far = -c_lo[2]
            near, far = -c_hi[2], -c_lo[2]
            proj[2, 2], proj[2, 3] = -2 / (far - near), -(far + near) / (far - near)
            light_vp = proj @ view
            depth = ctx.depth_texture((size, size))
            depth.compare_func = "<="
            depth.filter = (moderngl.NEAREST, moderngl.NEAREST)
            depth.repeat_x = depth.repeat_y = False
            fbo = ctx.framebuffer(depth_attachment=depth)
            self._owned += [depth, fbo]
            self._shadow = (fbo, depth, light_vp, size)
            texel = float(max(c_hi[0] - c_lo[0], c_hi[1] - c_lo[1])) / size
            prog["u_light_view_proj"].write(_mat4(light_vp))
            prog["u_shadow_texel"].value = texel
            prog["u_shadow_map"].value = 5
        else:
            prog["u_shadow_light"].value = -1
            prog["u_shadow_map"].value = 5

        # the colour targets: SRGB8_ALPHA8 (multisampled, + depth), written with
        # GL_FRAMEBUFFER_SRGB on, so GL encodes each linear sample and the resolve blit
        # averages the samples in linear light (OpenGL 4.6, sections 17.3.7 and 18.3.1)
        if self.msaa > 1:
            ms = ctx.framebuffer(
                color_attachments=[ctx.texture((w, h), 4, samples=self.msaa,
                                               internal_format=_SRGB8_ALPHA8)],
                depth_attachment=ctx.depth_renderbuffer((w, h), samples=self.msaa))
            self._owned += [*ms.color_attachments, ms.depth_attachment, ms]
        frame = ctx.framebuffer(
            color_attachments=[ctx.texture((w, h), 4, internal_format=_SRGB8_ALPHA8)],
            depth_attachment=None if self.msaa > 1 else ctx.depth_renderbuffer((w, h)))
        self._owned += [*frame.color_attachments, frame]
        if frame.depth_attachment is not None:
            self._owned.append(frame.depth_attachment)
        self._target = ms if self.msaa > 1 else frame
        self._frame = frame
        bg = scene.background
        self._clear = (*(float(c) for c in _srgb_to_linear(bg[:3])), float(bg[3]))

    # ------------------------------------------------------------------ a frame
    def render(self) -> np.ndarray:
        """(H, W, 4) uint8 sRGB frame, row 0 the top (GL reads bottom-up: flipped)."""
        import moderngl

        ctx = self.ctx
        with ctx:
            if self._shadow is not None:
                fbo, depth, light_vp, _ = self._shadow
                fbo.use()
                fbo.clear(depth=1.0)
                ctx.enable(moderngl.DEPTH_TEST)
                for vao, depth_vao, _, _, double, model, casts in self._draws:
                    if not casts:
                        continue
                    if double:
                        ctx.disable(moderngl.CULL_FACE)
                    else:
                        ctx.enable(moderngl.CULL_FACE)
                    self._depth_prog["u_light_mvp"].write(_mat4(light_vp @ model))
                    depth_vao.render()
                depth.use(5)
            target = self._target
            target.use()
            ctx.enable_direct(_FRAMEBUFFER_SRGB)
            target.clear(*self._clear, depth=1.0)
            ctx.enable(moderngl.DEPTH_TEST)
            prog = self._prog
            for vao, _, uniforms, textures, double, _, _ in self._draws:
                for name, value in uniforms.items():
                    if name not in prog:
                        continue
                    if isinstance(value, bytes):
                        prog[name].write(value)
                    else:
                        prog[name].value = value
                for unit, t in enumerate(textures):
                    if t is not None:
                        t.use(unit)
                if double:
                    ctx.disable(moderngl.CULL_FACE)
                else:
                    ctx.enable(moderngl.CULL_FACE)
                vao.render()
            if self.msaa > 1:
                ctx.copy_framebuffer(self._frame, target)
            data = self._frame.read(components=4, alignment=1)  # the stored sRGB bytes
            ctx.disable_direct(_FRAMEBUFFER_SRGB)
        w, h = self.size
        return np.frombuffer(data, np.uint8).reshape(h, w, 4)[::-1].copy()

    def release(self):
        """Free every GL object (and the context when this object made it)."""
        with self.ctx:
            for obj in reversed(self._owned):
                obj.release()
        self._owned = []
        if self._own_ctx:
            self.ctx.release()
