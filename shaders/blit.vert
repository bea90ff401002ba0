#version 330 core
// Full-screen quad without vertex buffers: 4 vertices as a triangle strip.
out vec2 v_uv;

void main() {
    vec2 corner = vec2(float(gl_VertexID & 1), float(gl_VertexID >> 1));  // (0,0) (1,0) (0,1) (1,1)
    // The image's row 0 is its top row but was uploaded as texture row t = 0 (GL's
    // bottom), so v is flipped here instead of copying the image upside down.
    v_uv = vec2(corner.x, 1.0 - corner.y);
    gl_Position = vec4(corner * 2.0 - 1.0, 0.0, 1.0);
}
