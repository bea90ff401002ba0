#version 330 core
// Shows an RGBA8 image texel for pixel (texture size = viewport): one texelFetch at the
// pixel's own texel, no interpolated coordinate and no filtering (the cheapest read on
// a CPU GL such as llvmpipe, where this pass costs a share of every window frame).
uniform sampler2D u_image;
uniform ivec2 u_origin;  // the viewport's lower-left corner in window pixels
out vec4 f_color;

void main() {
    // The image's row 0 is its top row but was uploaded as texture row 0 (GL's bottom),
    // so the row is flipped here instead of copying the image upside down.
    ivec2 size = textureSize(u_image, 0);
    ivec2 p = ivec2(gl_FragCoord.xy) - u_origin;
    f_color = texelFetch(u_image, ivec2(p.x, size.y - 1 - p.y), 0);
}
