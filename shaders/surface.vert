#version 330 core
// Pass-through vertex stage: the engine's own vertex stage already transformed every
// vertex to clip space and computed its varyings (engine.render.attributes), so GL only
// clips, interpolates (perspective-correct) and depth-tests. The varyings' in_/v_
// declarations and copy_varyings() are generated from the attribute layout.

in vec4 in_clip;        // clip-space position

uniform float u_depth_bias;  // window-depth bias (lines drawn over their surface)

#pragma frustum varyings

void main() {
    // window depth d = z / w * 0.5 + 0.5: subtracting 2 * bias * w from z lowers d by bias
    gl_Position = vec4(in_clip.xy, in_clip.z - 2.0 * u_depth_bias * in_clip.w, in_clip.w);
    copy_varyings();
}
