/* Double-precision transforms for the importer: the source is evaluated and compared in double,
 * so float rounding enters only where the clip stores its frames. Quaternions are x y z w
 * (Hamilton product); matrices are column-major 4x4 (m[c * 4 + r]). */
#include <math.h>
#include <string.h>

#include "import/import_impl.h"

dxf imp_identity(void)
{
    return (dxf){{0, 0, 0}, {0, 0, 0, 1}, {1, 1, 1}};
}

static void qmul(const double a[4], const double b[4], double out[4])
{
    double r[4] = {
        a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
        a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
        a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
        a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2],
    };
    memcpy(out, r, sizeof r);
}

static void qrotate(const double q[4], const double v[3], double out[3])
{
    /* v + 2 w (u x v) + 2 u x (u x v), u the vector part. */
    double u[3] = {q[0], q[1], q[2]};
    double t[3] = {2 * (u[1] * v[2] - u[2] * v[1]), 2 * (u[2] * v[0] - u[0] * v[2]),
                   2 * (u[0] * v[1] - u[1] * v[0])};
    double r[3] = {v[0] + q[3] * t[0] + (u[1] * t[2] - u[2] * t[1]),
                   v[1] + q[3] * t[1] + (u[2] * t[0] - u[0] * t[2]),
                   v[2] + q[3] * t[2] + (u[0] * t[1] - u[1] * t[0])};
    memcpy(out, r, sizeof r);
}

void imp_qnormalize(double q[4])
{
    double l = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (l > 0.0) {
        for (int k = 0; k < 4; ++k) {
            q[k] /= l;
        }
    }
}

dxf imp_compose(const dxf *a, const dxf *b)
{
    dxf r;
    double st[3] = {a->s[0] * b->t[0], a->s[1] * b->t[1], a->s[2] * b->t[2]};
    qrotate(a->q, st, r.t);
    for (int k = 0; k < 3; ++k) {
        r.t[k] += a->t[k];
        r.s[k] = a->s[k] * b->s[k];
    }
    qmul(a->q, b->q, r.q);
    return r;
}

void imp_apply(const dxf *x, const double p[3], double out[3])
{
    double sp[3] = {x->s[0] * p[0], x->s[1] * p[1], x->s[2] * p[2]};
    qrotate(x->q, sp, out);
    for (int k = 0; k < 3; ++k) {
        out[k] += x->t[k];
    }
}

void imp_qslerp(const double a[4], const double b0[4], double u, double out[4])
{
    double b[4] = {b0[0], b0[1], b0[2], b0[3]};
    double d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
    if (d < 0.0) {
        for (int k = 0; k < 4; ++k) {
            b[k] = -b[k];
        }
        d = -d;
    }
    /* The angle from the chords, accurate near 0 (acos is not). */
    double diff = 0.0, sum = 0.0;
    for (int k = 0; k < 4; ++k) {
        diff += (a[k] - b[k]) * (a[k] - b[k]);
        sum += (a[k] + b[k]) * (a[k] + b[k]);
    }
    double theta = 2.0 * atan2(sqrt(diff), sqrt(sum));
    double wa, wb;
    if (theta < 1e-12) {
        wa = 1.0 - u;
        wb = u;
    } else {
        wa = sin((1.0 - u) * theta) / sin(theta);
        wb = sin(u * theta) / sin(theta);
    }
    for (int k = 0; k < 4; ++k) {
        out[k] = wa * a[k] + wb * b[k];
    }
    imp_qnormalize(out);
}

void imp_mat_to_quat(const double m[16], double q[4])
{
    /* Shepperd's method: take the largest of the four diagonal combinations. */
    double m00 = m[0], m11 = m[5], m22 = m[10];
    double tr = m00 + m11 + m22;
    if (tr > 0.0) {
        double s = sqrt(tr + 1.0) * 2.0;
        q[3] = 0.25 * s;
        q[0] = (m[6] - m[9]) / s;
        q[1] = (m[8] - m[2]) / s;
        q[2] = (m[1] - m[4]) / s;
    } else if (m00 > m11 && m00 > m22) {
        double s = sqrt(1.0 + m00 - m11 - m22) * 2.0;
        q[3] = (m[6] - m[9]) / s;
        q[0] = 0.25 * s;
        q[1] = (m[4] + m[1]) / s;
        q[2] = (m[8] + m[2]) / s;
    } else if (m11 > m22) {
        double s = sqrt(1.0 + m11 - m00 - m22) * 2.0;
        q[3] = (m[8] - m[2]) / s;
        q[0] = (m[4] + m[1]) / s;
        q[1] = 0.25 * s;
        q[2] = (m[9] + m[6]) / s;
    } else {
        double s = sqrt(1.0 + m22 - m00 - m11) * 2.0;
        q[3] = (m[1] - m[4]) / s;
        q[0] = (m[8] + m[2]) / s;
        q[1] = (m[9] + m[6]) / s;
        q[2] = 0.25 * s;
    }
    imp_qnormalize(q);
}

dxf imp_decompose(const double m[16])
{
    dxf x = imp_identity();
    double r[16];
    memcpy(r, m, sizeof r);
    for (int c = 0; c < 3; ++c) {
        double len =
            sqrt(m[c * 4] * m[c * 4] + m[c * 4 + 1] * m[c * 4 + 1] + m[c * 4 + 2] * m[c * 4 + 2]);
        x.s[c] = len;
        for (int k = 0; k < 3; ++k) {
            r[c * 4 + k] = len > 0.0 ? m[c * 4 + k] / len : (c == k ? 1.0 : 0.0);
        }
    }
    /* A mirrored basis: fold the reflection into one negative scale. */
    double det = r[0] * (r[5] * r[10] - r[9] * r[6]) - r[4] * (r[1] * r[10] - r[9] * r[2]) +
                 r[8] * (r[1] * r[6] - r[5] * r[2]);
    if (det < 0.0) {
        x.s[0] = -x.s[0];
        for (int k = 0; k < 3; ++k) {
            r[k] = -r[k];
        }
    }
    imp_mat_to_quat(r, x.q);
    x.t[0] = m[12];
    x.t[1] = m[13];
    x.t[2] = m[14];
    return x;
}

void imp_xf_to_mat(const dxf *x, double m[16])
{
    const double *q = x->q;
    double xx = q[0] * q[0], yy = q[1] * q[1], zz = q[2] * q[2];
    double xy = q[0] * q[1], xz = q[0] * q[2], yz = q[1] * q[2];
    double wx = q[3] * q[0], wy = q[3] * q[1], wz = q[3] * q[2];
    double rot[9] = {1 - 2 * (yy + zz), 2 * (xy + wz),     2 * (xz - wy),
                     2 * (xy - wz),     1 - 2 * (xx + zz), 2 * (yz + wx),
                     2 * (xz + wy),     2 * (yz - wx),     1 - 2 * (xx + yy)};
    for (int c = 0; c < 3; ++c) {
        for (int r = 0; r < 3; ++r) {
            m[c * 4 + r] = rot[c * 3 + r] * x->s[c];
        }
        m[c * 4 + 3] = 0.0;
    }
    m[12] = x->t[0];
    m[13] = x->t[1];
    m[14] = x->t[2];
    m[15] = 1.0;
}

void imp_mat_mul(const double a[16], const double b[16], double out[16])
{
    double r[16];
    for (int c = 0; c < 4; ++c) {
        for (int row = 0; row < 4; ++row) {
            double s = 0.0;
            for (int k = 0; k < 4; ++k) {
                s += a[k * 4 + row] * b[c * 4 + k];
            }
            r[c * 4 + row] = s;
        }
    }
    memcpy(out, r, sizeof r);
}

void imp_mat_inverse_affine(const double m[16], double out[16])
{
    /* The inverse of the 3x3 part by cofactors, then -A^-1 t. */
    double a = m[0], b = m[4], c = m[8], d = m[1], e = m[5], f = m[9], g = m[2], h = m[6],
           i = m[10];
    double det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g);
    double inv = det != 0.0 ? 1.0 / det : 0.0;
    double r[16] = {0};
    r[0] = (e * i - f * h) * inv;
    r[4] = (c * h - b * i) * inv;
    r[8] = (b * f - c * e) * inv;
    r[1] = (f * g - d * i) * inv;
    r[5] = (a * i - c * g) * inv;
    r[9] = (c * d - a * f) * inv;
    r[2] = (d * h - e * g) * inv;
    r[6] = (b * g - a * h) * inv;
    r[10] = (a * e - b * d) * inv;
    for (int row = 0; row < 3; ++row) {
        r[12 + row] = -(r[row] * m[12] + r[4 + row] * m[13] + r[8 + row] * m[14]);
    }
    r[15] = 1.0;
    memcpy(out, r, sizeof r);
}

double imp_heading(const double q[4], double *ground_len)
{
    double z[3] = {0, 0, 1}, f[3];
    qrotate(q, z, f);
    *ground_len = sqrt(f[0] * f[0] + f[2] * f[2]);
    return atan2(f[0], f[2]);
}
