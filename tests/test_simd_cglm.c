/* Cross-check against cglm, an independent float implementation: the SIMD kernels and their
 * scalar references agree with glm_quat_* and glm_vec3_lerp on random inputs.
 *
 * cglm is itself float code, so the bounds are cglm's precision, not ours. Its
 * glm_quat_slerp computes sin(theta) as sqrtf(1 - cos^2), which loses digits at small angles
 * (about 5e-4 relative at theta = 0.01), and for sin(theta) < 0.001 it lerps between `from`
 * and the unflipped `to`, which for nearly antipodal inputs passes near zero; so slerp is
 * compared only for pairs more than 0.2 rad apart (docs/performance.md, "cglm"). */
#include <math.h>
#include <stdlib.h>

#include <cglm/cglm.h>

#include "crowdblend/simd.h"
#include "test_util.h"

enum { N = 50000 };

typedef struct data {
    float a[4][N], b[4][N], t[N], v[3][N], out[4][N];
} data;

static data *make_data(const char *name)
{
    data *d = malloc(sizeof *d);
    assert_non_null(d);
    cb_prng r = cb_test_prng(name);
    for (size_t i = 0; i < N; ++i) {
        float qa[4], qb[4];
        cb_prng_unit_quat(&r, qa);
        cb_prng_unit_quat(&r, qb);
        for (int k = 0; k < 4; ++k) {
            d->a[k][i] = qa[k];
            d->b[k][i] = qb[k];
        }
        d->t[i] = cb_prng_range(&r, 0, 1);
        for (int k = 0; k < 3; ++k) {
            d->v[k][i] = cb_prng_range(&r, -2, 2);
        }
    }
    return d;
}

static cb_quat_csoa qa(const data *d) { return (cb_quat_csoa){d->a[0], d->a[1], d->a[2], d->a[3]}; }
static cb_quat_csoa qb(const data *d) { return (cb_quat_csoa){d->b[0], d->b[1], d->b[2], d->b[3]}; }
static cb_quat_soa qo(data *d) { return (cb_quat_soa){d->out[0], d->out[1], d->out[2], d->out[3]}; }

static void load(float (*cols)[N], size_t i, versor q)
{
    q[0] = cols[0][i], q[1] = cols[1][i], q[2] = cols[2][i], q[3] = cols[3][i];
}

/* Largest component difference, taking q and -q as the same rotation when `either_sign`. */
static double quat_diff(const data *d, size_t i, const versor want, bool either_sign)
{
    double e = 0, f = 0;
    for (int k = 0; k < 4; ++k) {
        e = fmax(e, fabs(d->out[k][i] - want[k]));
        f = fmax(f, fabs(d->out[k][i] + want[k]));
    }
    return either_sign ? fmin(e, f) : e;
}

static void cglm_quat_kernels_agree(void **state)
{
    (void)state;
    data *d = make_data(__func__);
    for (int ref = 0; ref < 2; ++ref) {
        const char *path = ref ? "ref" : "simd";
        /* normalize: scale the inputs first so there is something to do. */
        for (size_t i = 0; i < N; ++i) {
            for (int k = 0; k < 4; ++k) {
                d->a[k][i] *= 1.0f + (float)(i % 7);
            }
        }
        (ref ? cb_quat_normalize_soa_ref : cb_quat_normalize_soa)(qa(d), N, qo(d));
        double worst = 0;
        for (size_t i = 0; i < N; ++i) {
            versor q;
            load(d->a, i, q);
            glm_quat_normalize(q);
            worst = fmax(worst, quat_diff(d, i, q, false));
        }
        cb_test_note("%s normalize vs glm_quat_normalize: %.3e", path, worst);
        CB_CHECK(worst <= 5e-7, "%s normalize differs from cglm by %.3e", path, worst);
        (ref ? cb_quat_normalize_soa_ref : cb_quat_normalize_soa)(qa(d), N,
            (cb_quat_soa){d->a[0], d->a[1], d->a[2], d->a[3]});

        (ref ? cb_quat_mul_soa_ref : cb_quat_mul_soa)(qa(d), qb(d), N, qo(d));
        worst = 0;
        for (size_t i = 0; i < N; ++i) {
            versor p, q, m;
            load(d->a, i, p);
            load(d->b, i, q);
            glm_quat_mul(p, q, m);
            worst = fmax(worst, quat_diff(d, i, m, false));
        }
        cb_test_note("%s mul vs glm_quat_mul: %.3e", path, worst);
        CB_CHECK(worst <= 6e-7, "%s mul differs from cglm by %.3e", path, worst);

        (ref ? cb_quat_nlerp_soa_ref : cb_quat_nlerp_soa)(qa(d), qb(d), d->t, N, qo(d));
        worst = 0;
        for (size_t i = 0; i < N; ++i) {
            versor p, q, m;
            load(d->a, i, p);
            load(d->b, i, q);
            glm_quat_nlerp(p, q, d->t[i], m);
            worst = fmax(worst, quat_diff(d, i, m, false));
        }
        cb_test_note("%s nlerp vs glm_quat_nlerp: %.3e", path, worst);
        CB_CHECK(worst <= 6e-7, "%s nlerp differs from cglm by %.3e", path, worst);

        (ref ? cb_quat_slerp_soa_ref : cb_quat_slerp_soa)(qa(d), qb(d), d->t, N, qo(d));
        worst = 0;
        size_t compared = 0;
        for (size_t i = 0; i < N; ++i) {
            versor p, q, m;
            load(d->a, i, p);
            load(d->b, i, q);
            if (fabsf(glm_quat_dot(p, q)) > cosf(0.2f)) {
                continue;
            }
            glm_quat_slerp(p, q, d->t[i], m);
            /* cglm flips `from` where we flip `to`: the results are q and -q. */
            worst = fmax(worst, quat_diff(d, i, m, true));
            compared++;
        }
        cb_test_note("%s slerp vs glm_quat_slerp (%zu pairs > 0.2 rad): %.3e", path, compared,
                     worst);
        CB_CHECK(worst <= 2e-6, "%s slerp differs from cglm by %.3e", path, worst);
    }
    free(d);
}

static void cglm_rotate_and_lerp_agree(void **state)
{
    (void)state;
    data *d = make_data(__func__);
    for (int ref = 0; ref < 2; ++ref) {
        const char *path = ref ? "ref" : "simd";
        cb_vec3_csoa v = {d->v[0], d->v[1], d->v[2]};
        cb_vec3_soa o = {d->out[0], d->out[1], d->out[2]};
        (ref ? cb_quat_rotate_soa_ref : cb_quat_rotate_soa)(qa(d), v, N, o);
        double worst = 0;
        for (size_t i = 0; i < N; ++i) {
            versor q;
            vec3 x = {d->v[0][i], d->v[1][i], d->v[2][i]}, y;
            load(d->a, i, q);
            glm_quat_rotatev(q, x, y);
            for (int k = 0; k < 3; ++k) {
                worst = fmax(worst, fabs(d->out[k][i] - y[k]));
            }
        }
        cb_test_note("%s rotate vs glm_quat_rotatev (|v| <= 3.5): %.3e", path, worst);
        CB_CHECK(worst <= 2e-6, "%s rotate differs from cglm by %.3e", path, worst);

        cb_vec3_csoa w = {d->b[0], d->b[1], d->b[2]};
        (ref ? cb_vec3_lerp_soa_ref : cb_vec3_lerp_soa)(v, w, d->t, N, o);
        worst = 0;
        for (size_t i = 0; i < N; ++i) {
            vec3 x = {d->v[0][i], d->v[1][i], d->v[2][i]};
            vec3 z = {d->b[0][i], d->b[1][i], d->b[2][i]}, y;
            glm_vec3_lerp(x, z, d->t[i], y);
            for (int k = 0; k < 3; ++k) {
                worst = fmax(worst, fabs(d->out[k][i] - y[k]));
            }
        }
        cb_test_note("%s vec3 lerp vs glm_vec3_lerp: %.3e", path, worst);
        CB_CHECK(worst <= 1e-6, "%s lerp differs from cglm by %.3e", path, worst);
    }
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cglm_quat_kernels_agree),
        cmocka_unit_test(cglm_rotate_and_lerp_agree),
    };
    return CB_RUN_TESTS(tests);
}
