#version 330 core
// Full-screen quad without vertex buffers: 4 vertices as a triangle strip (the fragment
// shader reads the texel of its own pixel, so no coordinate is passed on).

void main() {
    vec2 corner = vec2(float(gl_VertexID & 1), float(gl_VertexID >> 1));  // (0,0) (1,0) (0,1) (1,1)
    gl_Position = vec4(corner * 2.0 - 1.0, 0.0, 1.0);
}
