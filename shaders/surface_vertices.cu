// The surface vertex stage: one launch computes every vertex's clip-space position and,
// for shading, its varyings (engine/render/surface_vertices.py, layout in
// engine/render/attributes.py): the batch-frame position, then each packed attribute by
// its space (0 normal: inverse transpose, renormalised; 1 direction: the 3x3 part,
// renormalised, a fourth component (a tangent's handedness) times sign(det) of the model's
// and the skin's 3x3 parts; 2 none: copied); with `points`, every vertex's window coordinates too
// (engine.render.backends.base.window_coordinates), so a frame of points and surfaces is
// one pass over its vertices. mvp (k, 4, 4) = VP @ M and nm (k, 3, 3) = inverse
// transpose of M's 3x3 part are made on the host per frame in double; every product is
// in the reference's order (no fused multiply-add), so the outputs match the CPU
// backends bit for bit. Vertices of deformed meshes (`deformed`; the tables of
// engine/render/deform.py) are morphed and skinned in their local frame first: the
// position, the "normal" attribute (packed column `normal_src`), the "tangent" one
// (`tangent_src`) and direction rows.
#include "common.cuh"
// triangles.cuh: FR_TRI_W_EPSILON, the projection contract's w epsilon in double
#include "triangles.cuh"

extern "C" __global__ void surface_vertices(const float* __restrict__ positions,     // (n, 3)
                                            const unsigned int* __restrict__ object_id,  // (n,)
                                            const double* __restrict__ mvp,          // (k, 4, 4)
                                            const double* __restrict__ model,        // (k, 4, 4)
                                            const double* __restrict__ nm,           // (k, 3, 3)
                                            const double* __restrict__ attrs,        // (n, a)
                                            int n_attrs,
                                            const long long* __restrict__ rows,      // (r, 4)
                                            int n_rows, int n_vary,
                                            long long n, int shading,
                                            const unsigned char* __restrict__ shaded, // (n,)
                                            double* __restrict__ clip,               // (n, 4)
                                            double* __restrict__ vary,               // (n, v)
                                            int points, double width, double height,
                                            float* __restrict__ xy,                  // (n, 2)
                                            float* __restrict__ depth,               // (n,)
                                            unsigned char* __restrict__ visible,     // (n,)
                                            int deformed,
                                            const long long* __restrict__ slots,     // (k, 5)
                                            const int* __restrict__ inf_joint,       // (m, i)
                                            const double* __restrict__ inf_weight,   // (m, i)
                                            int n_inf,
                                            const float* __restrict__ deltas,        // (d, 9)
                                            const double* __restrict__ mweights,     // (w,)
                                            const double* __restrict__ joints,       // (j, 12)
                                            int normal_src, int tangent_src)
{
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const long long k = object_id[i];
        double x = positions[3 * i], y = positions[3 * i + 1], z = positions[3 * i + 2];
        const bool shade = shading && shaded[i];
        const double* in = attrs + (long long)n_attrs * i;
        // the morphed normal and the skin's matrices (S: 3x4, T: its normal matrix)
        double q[3] = {0.0, 0.0, 0.0}, g[3] = {0.0, 0.0, 0.0};
        if (shade)
            for (int r = 0; r < 3; ++r) {
                q[r] = in[normal_src + r];
                g[r] = in[tangent_src + r];
            }
        const double* M3 = model + 16 * k;  // the handedness flips with a mirroring matrix
        double hand = M3[0] * (M3[5] * M3[10] - M3[6] * M3[9]) +
                      M3[1] * (M3[6] * M3[8] - M3[4] * M3[10]) +
                      M3[2] * (M3[4] * M3[9] - M3[5] * M3[8]) < 0 ? -1.0 : 1.0;
        double S[12] = {0.0}, T[9] = {0.0};
        bool skinned = false;
        if (deformed) {
            const long long* sl = slots + 5 * k;
            const long long first = sl[0], sb = sl[1], mb = sl[2], nt = sl[3], wb = sl[4];
            if (nt > 0) {
                const float* d = deltas + 9 * (mb + (i - first) * nt);
                for (long long t = 0; t < nt; ++t, d += 9) {
                    const double w = mweights[wb + t];
                    x = x + w * (double)d[0];
                    y = y + w * (double)d[1];
                    z = z + w * (double)d[2];
                    q[0] = q[0] + w * (double)d[3];
                    q[1] = q[1] + w * (double)d[4];
                    q[2] = q[2] + w * (double)d[5];
                    g[0] = g[0] + w * (double)d[6];
                    g[1] = g[1] + w * (double)d[7];
                    g[2] = g[2] + w * (double)d[8];
                }
            }
            if (sb >= 0) {
                skinned = true;
                const long long row = sb + (i - first);
                for (int c = 0; c < n_inf; ++c) {
                    const double v = inf_weight[row * n_inf + c];
                    const long long j = inf_joint[row * n_inf + c];
                    for (int e = 0; e < 12; ++e) S[e] += v * joints[12 * j + e];
                }
                // sign(det) x cofactors of S's 3x3 part: its normal matrix up to length
                const double c00 = S[5] * S[10] - S[6] * S[9];
                const double c01 = S[6] * S[8] - S[4] * S[10];
                const double c02 = S[4] * S[9] - S[5] * S[8];
                const double det = S[0] * c00 + S[1] * c01 + S[2] * c02;
                double sg = det < 0 ? -1.0 : 1.0;
                hand *= sg;
                if (!(det != 0.0 && FR_ISFINITE(det))) sg = 0.0;
                T[0] = c00 * sg;
                T[1] = c01 * sg;
                T[2] = c02 * sg;
                T[3] = (S[2] * S[9] - S[1] * S[10]) * sg;
                T[4] = (S[0] * S[10] - S[2] * S[8]) * sg;
                T[5] = (S[1] * S[8] - S[0] * S[9]) * sg;
                T[6] = (S[1] * S[6] - S[2] * S[5]) * sg;
                T[7] = (S[2] * S[4] - S[0] * S[6]) * sg;
                T[8] = (S[0] * S[5] - S[1] * S[4]) * sg;
                const double sx = S[0] * x + S[1] * y + S[2] * z + S[3];
                const double sy = S[4] * x + S[5] * y + S[6] * z + S[7];
                const double sz = S[8] * x + S[9] * y + S[10] * z + S[11];
                x = sx;
                y = sy;
                z = sz;
            }
        }
        const double* A = mvp + 16 * k;
        for (int r = 0; r < 4; ++r)
            clip[4 * i + r] = A[4 * r] * x + A[4 * r + 1] * y + A[4 * r + 2] * z + A[4 * r + 3];
        if (points) {
            const double X = clip[4 * i], Y = clip[4 * i + 1], Z = clip[4 * i + 2];
            const double W = clip[4 * i + 3];
            const bool ok = W > FR_TRI_W_EPSILON && FR_ISFINITE(W) && fabs(X) <= W &&
                            fabs(Y) <= W && fabs(Z) <= W;
            visible[i] = ok ? 1 : 0;
            if (ok) {
                const double inv = 1.0 / W;
                xy[2 * i] = (float)((X * inv * 0.5 + 0.5) * width);
                xy[2 * i + 1] = (float)((0.5 - Y * inv * 0.5) * height);
                depth[i] = (float)(Z * inv * 0.5 + 0.5);
            } else {
                xy[2 * i] = 0.0f;
                xy[2 * i + 1] = 0.0f;
                depth[i] = 1.0f;
            }
        }
        if (!shade) continue;  // points need no varyings
        const double* M = model + 16 * k;
        double* out = vary + (long long)n_vary * i;
        for (int r = 0; r < 3; ++r)
            out[r] = M[4 * r] * x + M[4 * r + 1] * y + M[4 * r + 2] * z + M[4 * r + 3];
        for (int j = 0; j < n_rows; ++j) {
            const long long src = rows[4 * j], dst = rows[4 * j + 1], width = rows[4 * j + 2];
            const long long space = rows[4 * j + 3];
            if (space == 2) {
                for (long long c = 0; c < width; ++c) out[dst + c] = in[src + c];
                continue;
            }
            const double* from = src == normal_src ? q : (src == tangent_src ? g : in + src);
            double a = from[0], b = from[1], c = from[2];
            if (skinned) {  // the skin's normal matrix (normals) or 3x3 part first
                const double* P = space == 0 ? T : S;
                const int w = space == 0 ? 3 : 4;
                const double a2 = P[0] * a + P[1] * b + P[2] * c;
                const double b2 = P[w] * a + P[w + 1] * b + P[w + 2] * c;
                const double c2 = P[2 * w] * a + P[2 * w + 1] * b + P[2 * w + 2] * c;
                a = a2;
                b = b2;
                c = c2;
            }
            double v[3];
            for (int r = 0; r < 3; ++r) {
                const double* N = space == 0 ? nm + 9 * k + 3 * r : M + 4 * r;
                v[r] = N[0] * a + N[1] * b + N[2] * c;
            }
            const double len = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
            for (int r = 0; r < 3; ++r) out[dst + r] = len > 0.0 ? v[r] / len : 0.0;
            if (width == 4) out[dst + 3] = in[src + 3] * hand;
        }
    }
}
