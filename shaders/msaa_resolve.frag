#version 330 core
#extension GL_ARB_shader_texture_image_samples : enable
// Resolves a multisampled frame (engine.render.gl.multisample): each pixel's samples,
// stored as 8-bit sRGB like a single-sample frame, are decoded to linear light and
// averaged (straight alpha: colours weighted by their alpha), then encoded again (as the
// software path does, engine.render.msaa); the
// depth written is the nearest sample's. sRGB transfer functions: IEC 61966-2-1.
uniform sampler2DMS u_color;
uniform sampler2DMS u_depth;
uniform int u_samples;  // the samples requested (the driver may store more)
out vec4 f_color;

vec3 srgb_decode(vec3 c) {
    return mix(c / 12.92, pow((c + 0.055) / 1.055, vec3(2.4)), step(0.04045, c));
}

vec3 srgb_encode(vec3 l) {
    l = clamp(l, 0.0, 1.0);
    return mix(l * 12.92, 1.055 * pow(l, vec3(1.0 / 2.4)) - 0.055, step(0.0031308, l));
}

void main() {
    ivec2 p = ivec2(gl_FragCoord.xy);
    // every sample the driver stores (llvmpipe stores 4 for a 2x request), where GLSL can
    // ask; else the samples requested
#ifdef GL_ARB_shader_texture_image_samples
    int n = textureSamples(u_color);
#else
    int n = u_samples;
#endif
    vec3 rgb = vec3(0.0), plain = vec3(0.0);
    float alpha = 0.0;
    float z = 1.0;
    for (int i = 0; i < n; ++i) {
        vec4 c = texelFetch(u_color, p, i);
        vec3 lin = srgb_decode(c.rgb);
        rgb += c.a * lin;
        plain += lin;
        alpha += c.a;
        z = min(z, texelFetch(u_depth, p, i).r);
    }
    // straight alpha: the alpha-weighted colour (a transparent background adds coverage,
    // not its colour); where every sample is transparent, the plain mean
    rgb = alpha > 0.0 ? rgb / alpha : plain / float(n);
    f_color = vec4(srgb_encode(rgb), alpha / float(n));
    gl_FragDepth = z;
}
