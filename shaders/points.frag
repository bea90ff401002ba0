#version 330 core
// Square point splats in the point's own colour (no blending, no smoothing), so GL and
// the software rasterizer write the same bytes.
in vec4 v_color;
out vec4 f_color;

void main() {
    f_color = v_color;
}
