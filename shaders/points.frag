#version 330 core
// Point splats in the point's own colour (no blending, no smoothing), so GL and the
// software rasterizer write the same bytes. SPRITES: a round point keeps the samples
// whose position lies within its radius of the point, the software rule
// (engine/render/sprites.py). The sample's window position is the pixel's corner plus
// gl_SamplePosition (the pixel centre without multisampling); reading it shades each
// sample on its own (ARB_sample_shading), so under MSAA a disc's rim is anti-aliased
// as the software's per-sample rasters are.
#ifdef SPRITES
#extension GL_ARB_sample_shading : require
#endif
in vec4 v_color;
#ifdef SPRITES
flat in vec2 v_center;
flat in float v_radius;
#endif
out vec4 f_color;

void main() {
#ifdef SPRITES
    vec2 c = floor(gl_FragCoord.xy) + gl_SamplePosition - v_center;
    if (v_radius > 0.0 && dot(c, c) > v_radius * v_radius) discard;
#endif
    f_color = v_color;
}
