#version 330 core
// The transparency pass's fragment count (engine.render.gl.peeling): the clip-space
// positions the engine's vertex stage wrote, as shaders/surface.vert passes them (at depth
// bias 0 its z is in_clip.z exactly), so each fragment's depth equals the one the peeled
// layers were drawn with.

in vec4 in_clip;

void main() {
    gl_Position = in_clip;
}
