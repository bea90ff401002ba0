#version 330 core
// Projected points -> GL_POINTS. Input is the projector's output: screen position in
// pixels (origin top-left, y down), window depth in [0, 1] and the visible flag.
// The host inserts "#define PER_POINT_SIZE" after the #version line when every point
// carries its own size; otherwise one uniform size is used.

uniform vec2 u_viewport;      // (width, height) in pixels
uniform vec2 u_size_range;    // the driver's GL_POINT_SIZE_RANGE

in vec2 in_xy;
in float in_depth;
in uint in_visible;
in vec4 in_color;             // RGBA uint8, normalised to [0, 1]
#ifdef PER_POINT_SIZE
in float in_size;             // pixels, already rounded to an integer on the host
#else
uniform float u_point_size;   // pixels, already rounded to an integer on the host
#endif

out vec4 v_color;

void main() {
    // Inverse of the viewport transform: pixel x -> NDC x; pixel y is flipped (y down).
    vec2 ndc = vec2(in_xy.x / u_viewport.x * 2.0 - 1.0, 1.0 - in_xy.y / u_viewport.y * 2.0);
    // Window depth d = z_ndc * 0.5 + 0.5, so z_ndc = 2d - 1 and GL writes d back exactly.
    // Invisible points are moved outside the clip volume, where GL discards them.
    gl_Position = in_visible != 0u ? vec4(ndc, in_depth * 2.0 - 1.0, 1.0)
                                   : vec4(2.0, 2.0, 2.0, 1.0);
#ifdef PER_POINT_SIZE
    gl_PointSize = clamp(in_size, u_size_range.x, u_size_range.y);
#else
    gl_PointSize = clamp(u_point_size, u_size_range.x, u_size_range.y);
#endif
    v_color = in_color;
}
