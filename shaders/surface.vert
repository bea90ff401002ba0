#version 330 core
// Pass-through vertex stage: the engine's own vertex stage already transformed every
// vertex to clip space (engine.render), so GL only clips, interpolates (perspective-
// correct) and depth-tests. Attributes for shading are in the batch frame (world minus
// the batch origin), as in engine/render/shading.py.

in vec4 in_clip;        // clip-space position
in vec3 in_world;       // position, batch frame
in vec3 in_normal;      // unit normal, batch frame
in vec2 in_uv;          // texture coordinates, (0, 0) = the image's top-left
in vec4 in_color;       // vertex colour, sRGB-encoded RGBA uint8 normalised to [0, 1]

uniform float u_depth_bias;  // window-depth bias (lines drawn over their surface)

out vec3 v_world;
out vec3 v_normal;
out vec2 v_uv;
out vec4 v_color_encoded;
out vec4 v_color_linear;

vec3 srgb_decode(vec3 c) {
    // IEC 61966-2-1 (engine/scene/colorspace.py)
    return mix(c / 12.92, pow((c + 0.055) / 1.055, vec3(2.4)), step(0.04045, c));
}

void main() {
    // window depth d = z / w * 0.5 + 0.5: subtracting 2 * bias * w from z lowers d by bias
    gl_Position = vec4(in_clip.xy, in_clip.z - 2.0 * u_depth_bias * in_clip.w, in_clip.w);
    v_world = in_world;
    v_normal = in_normal;
    v_uv = in_uv;
    v_color_encoded = in_color;
    // decoded per vertex, interpolated in linear space (as the software resolve)
    v_color_linear = vec4(srgb_decode(in_color.rgb), in_color.a);
}
