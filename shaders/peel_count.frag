#version 330 core
// 1 per BLEND fragment behind the last peeled layer (the depth test, against that layer's
// depth) and in front of the opaque frame (here), added into a float target
// (engine.render.gl.peeling). No varyings and no shading: the only work per fragment.

uniform sampler2D u_opaque_depth;

out float f_count;

void main() {
    if (gl_FragCoord.z >= texelFetch(u_opaque_depth, ivec2(gl_FragCoord.xy), 0).r) discard;
    f_count = 1.0;
}
