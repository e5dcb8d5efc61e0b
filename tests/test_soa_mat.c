/* soa_mat: the matrix kernels of src/simd/soa_mat.h against a plain double-precision reference:
 * transform to matrix, SoA matrix product, per-joint column products, 4x4 and W x W transposes.
 * Bounds are a small multiple of the measured maxima (printed as TAP comments) over the three
 * build configurations; each is justified where it is set. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "simd/soa_mat.h"
#include "test_util.h"

/* Rotation part of T R S for unit q and |s| <= 2: about 3 roundings of terms up to 2 (1 ulp at
 * 2 is 2.4e-7); measured 3.3e-7. Products of such matrices, |elements| <= 4, translations up to
 * 3 m: a few roundings at the scale of 4..12 (measured 1.7e-6 for the SoA product, 1.1e-6 for
 * the column products). Maxima over the three configurations; bounds about 2.5x. */
static const double BOUND_TRS = 8e-7, BOUND_MUL = 4e-6;

typedef struct lanes {
    CB_VF_ALIGNED float v[CB_W];
} lanes;

/* Column-major 4x4 in double: m[c][r]. */
typedef struct dmat {
    double m[4][4];
} dmat;

static dmat dmat_trs(const float t[3], const float q[4], const float s[3])
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    dmat r = {{{0}}};
    r.m[0][0] = (1 - 2 * (y * y + z * z)) * s[0];
    r.m[0][1] = 2 * (x * y + w * z) * s[0];
    r.m[0][2] = 2 * (x * z - w * y) * s[0];
    r.m[1][0] = 2 * (x * y - w * z) * s[1];
    r.m[1][1] = (1 - 2 * (x * x + z * z)) * s[1];
    r.m[1][2] = 2 * (y * z + w * x) * s[1];
    r.m[2][0] = 2 * (x * z + w * y) * s[2];
    r.m[2][1] = 2 * (y * z - w * x) * s[2];
    r.m[2][2] = (1 - 2 * (x * x + y * y)) * s[2];
    r.m[3][0] = t[0], r.m[3][1] = t[1], r.m[3][2] = t[2], r.m[3][3] = 1;
    return r;
}

static dmat dmat_mul(const dmat *a, const dmat *b)
{
    dmat r;
    for (int c = 0; c < 4; ++c) {
        for (int i = 0; i < 4; ++i) {
            double v = 0;
            for (int k = 0; k < 4; ++k) {
                v += a->m[k][i] * b->m[c][k];
            }
            r.m[c][i] = v;
        }
    }
    return r;
}

typedef struct xf {
    float t[3], q[4], s[3];
} xf;

static xf random_xf(cb_prng *r)
{
    xf x;
    cb_prng_unit_quat(r, x.q);
    for (int k = 0; k < 3; ++k) {
        x.t[k] = cb_prng_range(r, -3, 3);
        x.s[k] = cb_prng_range(r, 0.5f, 2);
    }
    return x;
}

static cb_soa_xform load_lanes(const xf *x)
{
    lanes c[10];
    for (int l = 0; l < CB_W; ++l) {
        for (int k = 0; k < 3; ++k) {
            c[k].v[l] = x[l].t[k];
            c[7 + k].v[l] = x[l].s[k];
        }
        for (int k = 0; k < 4; ++k) {
            c[3 + k].v[l] = x[l].q[k];
        }
    }
    return (cb_soa_xform){{cb_vf_load(c[0].v), cb_vf_load(c[1].v), cb_vf_load(c[2].v)},
                          {cb_vf_load(c[3].v), cb_vf_load(c[4].v), cb_vf_load(c[5].v),
                           cb_vf_load(c[6].v)},
                          {cb_vf_load(c[7].v), cb_vf_load(c[8].v), cb_vf_load(c[9].v)}};
}

static void soa_mat_xform_to_mat34_and_mul(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_err_track et = cb_err_track_make("soa_mat trs -> mat34");
    cb_err_track em = cb_err_track_make("soa_mat mat34 * mat34");
    for (int it = 0; it < 20000; ++it) {
        xf a[CB_W], b[CB_W];
        for (int l = 0; l < CB_W; ++l) {
            a[l] = random_xf(&r);
            b[l] = random_xf(&r);
        }
        cb_soa_mat34 ma = cb_soa_xform_to_mat34(load_lanes(a));
        cb_soa_mat34 mb = cb_soa_xform_to_mat34(load_lanes(b));
        cb_soa_mat34 mab = cb_soa_mat34_mul(&ma, &mb);
        for (int l = 0; l < CB_W; ++l) {
            dmat da = dmat_trs(a[l].t, a[l].q, a[l].s), db = dmat_trs(b[l].t, b[l].q, b[l].s);
            dmat dab = dmat_mul(&da, &db);
            for (int c = 0; c < 4; ++c) {
                for (int i = 0; i < 3; ++i) {
                    cb_err_track_add(&et, cb_vf_lane(ma.c[c][i], l), da.m[c][i], (size_t)it);
                    cb_err_track_add(&em, cb_vf_lane(mab.c[c][i], l), dab.m[c][i], (size_t)it);
                }
            }
        }
    }
    cb_err_track_check(&et, BOUND_TRS);
    cb_err_track_check(&em, BOUND_MUL);
}

/* The per-joint column products: parent (any 4x4) x affine local from SoA staging, and a general
 * 4x4 product, against double. */
static void soa_mat_column_products(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_err_track ea = cb_err_track_make("soa_mat col4 parent * affine");
    cb_err_track eg = cb_err_track_make("soa_mat col4 4x4 * 4x4");
    CB_VF_ALIGNED float soa[12 * CB_W];
    for (int it = 0; it < 20000; ++it) {
        xf p = random_xf(&r), locals[CB_W];
        for (int l = 0; l < CB_W; ++l) {
            locals[l] = random_xf(&r);
        }
        cb_soa_mat34 m = cb_soa_xform_to_mat34(load_lanes(locals));
        cb_soa_mat34_store(soa, &m);
        dmat dp = dmat_trs(p.t, p.q, p.s);
        /* A general (non-affine) parent: perturb the bottom row. */
        dp.m[0][3] = cb_prng_range(&r, -0.5f, 0.5f);
        dp.m[3][3] = cb_prng_range(&r, 0.5f, 1.5f);
        float pf[16];
        cb_mat4c pm;
        for (int c = 0; c < 4; ++c) {
            for (int i = 0; i < 4; ++i) {
                pf[4 * c + i] = (float)dp.m[c][i];
                dp.m[c][i] = pf[4 * c + i];
            }
            pm.c[c] = cb_col4_loadu(pf + 4 * c);
        }
        size_t lane = (size_t)it % CB_W;
        dmat dl = {{{0}}};
        for (int c = 0; c < 4; ++c) {
            for (int i = 0; i < 3; ++i) {
                dl.m[c][i] = soa[(3 * c + i) * CB_W + lane];
            }
        }
        dl.m[3][3] = 1;
        dmat want = dmat_mul(&dp, &dl);
        cb_mat4c got = cb_mat4c_mul_affine(&pm, soa, lane);
        cb_mat4c g2 = cb_mat4c_mul(&pm, pf); /* parent * parent, general */
        dmat want2 = dmat_mul(&dp, &dp);
        for (int c = 0; c < 4; ++c) {
            float out[4], o2[4];
            cb_col4_storeu(out, got.c[c]);
            cb_col4_storeu(o2, g2.c[c]);
            for (int i = 0; i < 4; ++i) {
                cb_err_track_add(&ea, out[i], want.m[c][i], (size_t)it);
                cb_err_track_add(&eg, o2[i], want2.m[c][i], (size_t)it);
            }
        }
    }
    cb_err_track_check(&ea, BOUND_MUL);
    cb_err_track_check(&eg, BOUND_MUL);
}

static void soa_mat_transposes_are_exact(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    for (int it = 0; it < 200; ++it) {
        lanes in[CB_W];
        cb_vf v[CB_W];
        for (int i = 0; i < CB_W; ++i) {
            for (int l = 0; l < CB_W; ++l) {
                in[i].v[l] = cb_prng_range(&r, -100, 100);
            }
            v[i] = cb_vf_load(in[i].v);
        }
        cb_vf_transpose(v);
        for (int i = 0; i < CB_W; ++i) {
            for (int l = 0; l < CB_W; ++l) {
                CB_CHECK(cb_vf_lane(v[i], l) == in[l].v[i], "transpose: out[%d][%d] != in[%d][%d]",
                         i, l, l, i);
            }
        }
        float m[16];
        cb_mat4c c4;
        for (int k = 0; k < 16; ++k) {
            m[k] = cb_prng_range(&r, -10, 10);
        }
        for (int c = 0; c < 4; ++c) {
            c4.c[c] = cb_col4_loadu(m + 4 * c);
        }
        cb_mat4c t = cb_mat4c_transpose(c4);
        for (int c = 0; c < 4; ++c) {
            float col[4];
            cb_col4_storeu(col, t.c[c]);
            for (int i = 0; i < 4; ++i) {
                CB_CHECK(col[i] == m[4 * i + c], "4x4 transpose at %d %d", c, i);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(soa_mat_xform_to_mat34_and_mul),
        cmocka_unit_test(soa_mat_column_products),
        cmocka_unit_test(soa_mat_transposes_are_exact),
    };
    return CB_RUN_TESTS(tests);
}
