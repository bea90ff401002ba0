#version 330 core
// The scene's fog and sky (engine.render.atmosphere: the formulas, in linear light) as a
// full-screen pass over a drawn frame: its colour (8-bit sRGB) and depth textures in,
// the fogged colour and the same depth out (engine.render.gl.atmosphere).
// With MULTISAMPLE defined it is the multisample resolve (engine.render.gl.multisample):
// each sample fogged by its own depth (an empty one shows the sky), then the samples
// decoded to linear light and averaged (straight alpha: colours weighted by their alpha)
// as the software path mixes them (engine.render.msaa), the nearest sample's depth
// written; without fog or a sky every sample keeps its colour, a plain resolve.
// sRGB transfer functions: IEC 61966-2-1.
#ifdef MULTISAMPLE
#extension GL_ARB_shader_texture_image_samples : enable
uniform sampler2DMS u_color;
uniform sampler2DMS u_depth;
uniform int u_samples;  // the samples requested (the driver may store more)
#else
uniform sampler2D u_color;
uniform sampler2D u_depth;
#endif
uniform vec2 u_size;              // (width, height) in pixels
uniform mat4 u_inverse_projection;
uniform mat3 u_camera_rotation;   // view -> world directions (unit columns)
uniform bool u_orthographic;
uniform int u_fog_mode;           // -1 none, 0 linear, 1 exp, 2 exp2 (engine.scene.atmosphere.FOG_MODES)
uniform vec2 u_fog;               // (start, end) for linear, (density, 0) otherwise
uniform vec3 u_fog_color;         // linear; unused when u_fog_to_sky
uniform bool u_fog_to_sky;        // the fog takes the sky's colour in the pixel's direction
uniform bool u_sky;
uniform vec3 u_sky_horizon;       // linear
uniform vec3 u_sky_zenith;
uniform vec3 u_sky_ground;
// Scene.sky = "environment": the environment's linear radiance (equirectangular, u
// repeating, v clamped: engine.scene.environment's layout), displayed through the
// scene's exposure and tone map (engine/render/tonemap.py)
uniform bool u_env_sky;
uniform sampler2D u_env_map;
uniform float u_exposure;
uniform bool u_pbr_neutral;
out vec4 f_color;

// exposure, then Khronos PBR Neutral when u_pbr_neutral (surface.frag's display)
vec3 display(vec3 c) {
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

vec3 srgb_decode(vec3 c) {
    return mix(c / 12.92, pow((c + 0.055) / 1.055, vec3(2.4)), step(0.04045, c));
}

vec3 srgb_encode(vec3 l) {
    l = clamp(l, 0.0, 1.0);
    return mix(l * 12.92, 1.055 * pow(l, vec3(1.0 / 2.4)) - 0.055, step(0.0031308, l));
}

float fog_factor(float d) {
    float f;
    if (u_fog_mode == 0) {
        f = (u_fog.y - d) / (u_fog.y - u_fog.x);
    } else if (u_fog_mode == 1) {
        f = exp(-u_fog.x * d);
    } else {
        f = exp(-(u_fog.x * d) * (u_fog.x * d));
    }
    return clamp(f, 0.0, 1.0);
}

vec3 sky_color(vec2 ndc) {
    vec3 ray = vec3(0.0, 0.0, -1.0);
    if (!u_orthographic) {  // towards the near plane's point through the pixel centre
        vec4 near = u_inverse_projection * vec4(ndc, -1.0, 1.0);  // (the far one's w: 1 / far)
        ray = near.xyz / near.w;
    }
    vec3 world = normalize(u_camera_rotation * ray);
    if (u_env_sky) {
        const float pi = 3.14159265358979;
        vec2 uv = vec2(0.5 + atan(world.x, -world.z) / (2.0 * pi),
                       acos(clamp(world.y, -1.0, 1.0)) / pi);
        return display(texture(u_env_map, uv).rgb);
    }
    float e = asin(clamp(world.y, -1.0, 1.0)) * (2.0 / 3.14159265358979);  // over 90 degrees
    return e >= 0.0 ? mix(u_sky_horizon, u_sky_zenith, e) : mix(u_sky_horizon, u_sky_ground, -e);
}

// one sample's colour (8-bit sRGB, straight alpha) with the fog by its window depth z,
// or the sky where nothing was drawn (z = 1); ndc: the pixel centre's
vec4 atmosphere(vec4 c, float z, vec2 ndc) {
    if (z >= 1.0) return (u_sky || u_env_sky) ? vec4(srgb_encode(sky_color(ndc)), 1.0) : c;
    if (u_fog_mode < 0) return c;
    vec4 q = u_inverse_projection * vec4(ndc, 2.0 * z - 1.0, 1.0);
    vec3 view = q.xyz / q.w;
    float f = fog_factor(u_orthographic ? -view.z : length(view));
    vec3 fog = u_fog_to_sky ? sky_color(ndc) : u_fog_color;
    return vec4(srgb_encode(f * srgb_decode(c.rgb) + (1.0 - f) * fog), c.a);
}

void main() {
    ivec2 p = ivec2(gl_FragCoord.xy);
    vec2 ndc = 2.0 * gl_FragCoord.xy / u_size - 1.0;  // GL rows run bottom-up, as NDC y
#ifdef MULTISAMPLE
    // every sample the driver stores (llvmpipe stores 4 for a 2x request), where GLSL can
    // ask; else the samples requested
#ifdef GL_ARB_shader_texture_image_samples
    int n = textureSamples(u_color);
#else
    int n = u_samples;
#endif
    vec3 rgb = vec3(0.0), plain = vec3(0.0);
    float alpha = 0.0;
    float nearest = 1.0;
    for (int i = 0; i < n; ++i) {
        float z = texelFetch(u_depth, p, i).r;
        vec4 c = atmosphere(texelFetch(u_color, p, i), z, ndc);
        vec3 lin = srgb_decode(c.rgb);
        rgb += c.a * lin;
        plain += lin;
        alpha += c.a;
        nearest = min(nearest, z);
    }
    // straight alpha: the alpha-weighted colour (a transparent background adds coverage,
    // not its colour); where every sample is transparent, the plain mean
    rgb = alpha > 0.0 ? rgb / alpha : plain / float(n);
    f_color = vec4(srgb_encode(rgb), alpha / float(n));
    gl_FragDepth = nearest;
#else
    float z = texelFetch(u_depth, p, 0).r;
    gl_FragDepth = z;
    f_color = atmosphere(texelFetch(u_color, p, 0), z, ndc);
#endif
}
