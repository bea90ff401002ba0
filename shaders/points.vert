#version 330 core
// Projected points -> GL_POINTS. Input is the projector's output: screen position in
// pixels (origin top-left, y down), window depth in [0, 1] and the visible flag.
// The host inserts "#define PER_POINT_SIZE" after the #version line when every point
// carries its own size; otherwise one uniform size is used. "#define SPRITES" draws
// round and world-sized points (engine/render/sprites.py): each point carries its size
// in its own units and a style (bit 0 round, bit 1 world units).

uniform vec2 u_viewport;      // (width, height) in pixels
uniform vec2 u_size_range;    // the driver's GL_POINT_SIZE_RANGE

in vec2 in_xy;
in float in_depth;
in uint in_visible;
in vec4 in_color;             // RGBA uint8, normalised to [0, 1]
#if defined(PER_POINT_SIZE) || defined(SPRITES)
in float in_size;             // pixels, already rounded to an integer on the host
                              // (SPRITES: the diameter in the point's units, unrounded)
#else
uniform float u_point_size;   // pixels, already rounded to an integer on the host
#endif
#ifdef SPRITES
in uint in_style;
uniform vec4 u_depth_to_w;    // (P22, P23, P32, P33) of the camera's projection
uniform float u_focal;        // P11 * height / 2: pixels per world unit at depth 1
flat out vec2 v_center;       // window coordinates of the point (y up)
flat out float v_radius;      // disc radius in pixels; < 0 for a square
#endif

out vec4 v_color;

void main() {
    // Inverse of the viewport transform: pixel x -> NDC x; pixel y is flipped (y down).
    vec2 ndc = vec2(in_xy.x / u_viewport.x * 2.0 - 1.0, 1.0 - in_xy.y / u_viewport.y * 2.0);
    // Window depth d = z_ndc * 0.5 + 0.5, so z_ndc = 2d - 1 and GL writes d back exactly.
    // Invisible points are moved outside the clip volume, where GL discards them.
    gl_Position = in_visible != 0u ? vec4(ndc, in_depth * 2.0 - 1.0, 1.0)
                                   : vec4(2.0, 2.0, 2.0, 1.0);
#ifdef SPRITES
    // engine/render/sprites.py: D = size * focal / w for world units, w recovered from
    // the window depth by the projection's z row; D clamped to [1, 255]; a disc from
    // sqrt(2) pixels on, else a square of side round-half-even(D)
    float d = in_size;
    if ((in_style & 2u) != 0u) {
        // 1 / w = (z P32 - P22) / (P32 P23 - P22 P33), linear in z = 2 depth - 1
        float z = in_depth * 2.0 - 1.0;
        float det = u_depth_to_w.z * u_depth_to_w.y - u_depth_to_w.x * u_depth_to_w.w;
        d = in_size * u_focal * (z * u_depth_to_w.z - u_depth_to_w.x) / det;
        d = d > 0.0 ? d : 1.0;
    }
    d = clamp(d, 1.0, 255.0);
    bool disc = (in_style & 1u) != 0u && d >= 1.4142135623730951;
    gl_PointSize = clamp(disc ? d : roundEven(d), u_size_range.x, u_size_range.y);
    v_radius = disc ? 0.5 * d : -1.0;
    v_center = vec2(in_xy.x, u_viewport.y - in_xy.y);
#elif defined(PER_POINT_SIZE)
    gl_PointSize = clamp(in_size, u_size_range.x, u_size_range.y);
#else
    gl_PointSize = clamp(u_point_size, u_size_range.x, u_size_range.y);
#endif
    v_color = in_color;
}
