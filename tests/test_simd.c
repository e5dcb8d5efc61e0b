/* simd: the vector layer against scalar arithmetic, the public kernels' contracts (argument
 * checks, n-independence of results, aliasing), and the joint-group transposes and blend. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "crowdblend/simd.h"
#include "simd/soa.h"
#include "test_util.h"

/* ------------------------------------------------------------------------------------------ */
/* The vector layer                                                                            */

typedef struct lanes {
    CB_VF_ALIGNED float v[CB_W];
} lanes;

static lanes random_lanes(cb_prng *r, float lo, float hi)
{
    lanes l;
    for (int i = 0; i < CB_W; ++i) {
        l.v[i] = cb_prng_range(r, lo, hi);
    }
    return l;
}

static lanes to_lanes(cb_vf v)
{
    lanes l;
    cb_vf_store(l.v, v);
    return l;
}

static bool same_bits(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Exact operations must match scalar IEEE arithmetic bit for bit, in every lane. */
static void simd_vf_exact_ops_match_scalar(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    for (int it = 0; it < 2000; ++it) {
        lanes a = random_lanes(&r, -100, 100), b = random_lanes(&r, -100, 100);
        lanes p = random_lanes(&r, 0, 1000);
        cb_vf va = cb_vf_load(a.v), vb = cb_vf_load(b.v), vp = cb_vf_load(p.v);
        lanes add = to_lanes(cb_vf_add(va, vb)), sub = to_lanes(cb_vf_sub(va, vb));
        lanes mul = to_lanes(cb_vf_mul(va, vb)), dv = to_lanes(cb_vf_div(va, vb));
        lanes mn = to_lanes(cb_vf_min(va, vb)), mx = to_lanes(cb_vf_max(va, vb));
        lanes sq = to_lanes(cb_vf_sqrt(vp)), ab = to_lanes(cb_vf_abs(va));
        lanes ng = to_lanes(cb_vf_neg(va)), fl = to_lanes(cb_vf_floor(va));
        lanes sel = to_lanes(cb_vf_select(cb_vf_lt(va, vb), va, vb));
        unsigned lt = cb_vm_bits(cb_vf_lt(va, vb)), ge = cb_vm_bits(cb_vf_ge(va, vb));
        unsigned le = cb_vm_bits(cb_vf_le(va, vb)), gt = cb_vm_bits(cb_vf_gt(va, vb));
        unsigned eq = cb_vm_bits(cb_vf_eq(va, va));
        for (int i = 0; i < CB_W; ++i) {
            float x = a.v[i], y = b.v[i];
            CB_CHECK(same_bits(add.v[i], x + y), "add lane %d", i);
            CB_CHECK(same_bits(sub.v[i], x - y), "sub lane %d", i);
            CB_CHECK(same_bits(mul.v[i], x * y), "mul lane %d", i);
            CB_CHECK(same_bits(dv.v[i], x / y), "div lane %d", i);
            CB_CHECK(same_bits(mn.v[i], x < y ? x : y), "min lane %d", i);
            CB_CHECK(same_bits(mx.v[i], x > y ? x : y), "max lane %d", i);
            CB_CHECK(same_bits(sq.v[i], sqrtf(p.v[i])), "sqrt lane %d", i);
            CB_CHECK(same_bits(ab.v[i], fabsf(x)), "abs lane %d", i);
            CB_CHECK(same_bits(ng.v[i], -x), "neg lane %d", i);
            CB_CHECK(same_bits(fl.v[i], floorf(x)), "floor lane %d", i);
            CB_CHECK(same_bits(sel.v[i], x < y ? x : y), "select lane %d", i);
            CB_CHECK(((lt >> i) & 1u) == (x < y), "lt lane %d", i);
            CB_CHECK(((le >> i) & 1u) == (x <= y), "le lane %d", i);
            CB_CHECK(((gt >> i) & 1u) == (x > y), "gt lane %d", i);
            CB_CHECK(((ge >> i) & 1u) == (x >= y), "ge lane %d", i);
            CB_CHECK(((eq >> i) & 1u) == 1u, "eq lane %d", i);
        }
    }
}

static void simd_vf_fma_and_rsqrt_accuracy(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    double worst_rsqrt = 0.0;
    for (int it = 0; it < 5000; ++it) {
        lanes a = random_lanes(&r, -10, 10), b = random_lanes(&r, -10, 10);
        lanes c = random_lanes(&r, -10, 10);
        lanes x;
        for (int i = 0; i < CB_W; ++i) {
            /* Spread over 60 orders of magnitude. */
            x.v[i] = (float)pow(10.0, cb_prng_range(&r, -30, 30));
        }
        cb_vf va = cb_vf_load(a.v), vb = cb_vf_load(b.v), vc = cb_vf_load(c.v);
        lanes f = to_lanes(cb_vf_fmadd(va, vb, vc)), g = to_lanes(cb_vf_fnmadd(va, vb, vc));
        lanes rs = to_lanes(cb_vf_rsqrt(cb_vf_load(x.v)));
        for (int i = 0; i < CB_W; ++i) {
            double exact = (double)a.v[i] * b.v[i] + c.v[i];
            double exactn = c.v[i] - (double)a.v[i] * b.v[i];
            /* Fused or not (x86-64-v2 and portable may round twice): within 2 roundings. */
            double tol = 2.0 * FLT_EPSILON * (fabs((double)a.v[i] * b.v[i]) + fabs(c.v[i]));
            CB_CHECK(fabs(f.v[i] - exact) <= tol, "fmadd lane %d: %g vs %g", i, f.v[i], exact);
            CB_CHECK(fabs(g.v[i] - exactn) <= tol, "fnmadd lane %d", i);
            double want = 1.0 / sqrt(x.v[i]);
            double rel = fabs(rs.v[i] - want) / want;
            worst_rsqrt = rel > worst_rsqrt ? rel : worst_rsqrt;
        }
    }
    cb_test_note("rsqrt (estimate + 1 Newton step) max relative error %.3e", worst_rsqrt);
    /* One Newton step from a 12-bit estimate leaves ~3 * 2^-24 relative error plus rounding. */
    CB_CHECK(worst_rsqrt < 4e-7, "rsqrt relative error %.3e", worst_rsqrt);
}

static void simd_vf_nan_conventions(void **state)
{
    (void)state;
    lanes l;
    const float specials[4] = {NAN, -1.0f, 2.0f, 0.5f};
    for (int i = 0; i < CB_W; ++i) {
        l.v[i] = specials[i % 4];
    }
    lanes c = to_lanes(cb_vf_clamp01(cb_vf_load(l.v)));
    unsigned fin = cb_vm_bits(cb_vf_is_finite(cb_vf_load(l.v)));
    for (int i = 0; i < CB_W; ++i) {
        const float want[4] = {0.0f, 0.0f, 1.0f, 0.5f};
        CB_CHECK(same_bits(c.v[i], want[i % 4]), "clamp01 lane %d gave %g", i, c.v[i]);
        CB_CHECK(((fin >> i) & 1u) == (i % 4 != 0), "is_finite lane %d", i);
    }
    cb_vf inf = cb_vf_set1(INFINITY);
    assert_false(cb_vm_any(cb_vf_is_finite(inf)));
    assert_true(cb_vm_all(cb_vf_is_finite(cb_vf_set1(FLT_MAX))));
    /* Mask algebra. */
    cb_vm t = cb_vf_eq(cb_vf_zero(), cb_vf_zero()), f = cb_vm_not(t);
    assert_true(cb_vm_all(t));
    assert_false(cb_vm_any(f));
    assert_int_equal(cb_vm_bits(cb_vm_and(t, f)), 0);
    assert_int_equal(cb_vm_bits(cb_vm_or(t, f)), CB_VM_ALL_BITS);
    /* hsum adds in lane order. */
    lanes h;
    float want = 0.0f;
    for (int i = 0; i < CB_W; ++i) {
        h.v[i] = (float)(i + 1) * 0.1f;
        want += h.v[i];
    }
    assert_true(same_bits(cb_vf_hsum(cb_vf_load(h.v)), want));
    assert_true(same_bits(cb_vf_lane(cb_vf_load(h.v), CB_W - 1), h.v[CB_W - 1]));
}

/* ------------------------------------------------------------------------------------------ */
/* Public kernels: contracts                                                                   */

static void simd_width_queries(void **state)
{
    (void)state;
    size_t w = cb_simd_width();
    assert_int_equal(w, CB_W);
    assert_int_equal(cb_simd_group_count(0), 0);
    assert_int_equal(cb_simd_group_count(1), 1);
    assert_int_equal(cb_simd_group_count(w), 1);
    assert_int_equal(cb_simd_group_count(w + 1), 2);
    assert_int_equal(cb_simd_group_bytes(), 10 * w * sizeof(float));
    assert_int_equal(cb_simd_group_align(), w * sizeof(float));
}

enum { MAXN = 5 * CB_W + 3 };

/* Columns for every kernel: a, b (quaternions), t, v (vec3), and two outputs. */
typedef struct kcols {
    float a[4][MAXN + 8], b[4][MAXN + 8], t[MAXN + 8], v[3][MAXN + 8];
    float out[4][MAXN + 8];
} kcols;

static void fill_kcols(kcols *k, cb_prng *r)
{
    for (size_t i = 0; i < MAXN + 8; ++i) {
        float q[4];
        cb_prng_unit_quat(r, q);
        for (int c = 0; c < 4; ++c) {
            k->a[c][i] = q[c] * cb_prng_range(r, 0.5f, 2.0f);
        }
        cb_prng_unit_quat(r, q);
        for (int c = 0; c < 4; ++c) {
            k->b[c][i] = q[c];
        }
        k->t[i] = cb_prng_range(r, 0, 1);
        for (int c = 0; c < 3; ++c) {
            k->v[c][i] = cb_prng_range(r, -5, 5);
        }
    }
}

enum kernel { K_NORMALIZE, K_NLERP, K_SLERP, K_MUL, K_ROTATE, K_LERP, K_COUNT };

/* Runs kernel k (SIMD or ref) on n elements starting at offset off; output columns at out. */
static cb_result run_kernel(enum kernel k, bool ref, kcols *c, size_t off, size_t n,
                            float (*out)[MAXN + 8])
{
    cb_quat_csoa a = {c->a[0] + off, c->a[1] + off, c->a[2] + off, c->a[3] + off};
    cb_quat_csoa b = {c->b[0] + off, c->b[1] + off, c->b[2] + off, c->b[3] + off};
    cb_vec3_csoa va = {c->v[0] + off, c->v[1] + off, c->v[2] + off};
    cb_vec3_csoa vb = {c->a[0] + off, c->a[1] + off, c->a[2] + off};
    cb_quat_soa qo = {out[0] + off, out[1] + off, out[2] + off, out[3] + off};
    cb_vec3_soa vo = {out[0] + off, out[1] + off, out[2] + off};
    const float *t = c->t + off;
    switch (k) {
    case K_NORMALIZE:
        return (ref ? cb_quat_normalize_soa_ref : cb_quat_normalize_soa)(a, n, qo);
    case K_NLERP:
        return (ref ? cb_quat_nlerp_soa_ref : cb_quat_nlerp_soa)(a, b, t, n, qo);
    case K_SLERP:
        return (ref ? cb_quat_slerp_soa_ref : cb_quat_slerp_soa)(a, b, t, n, qo);
    case K_MUL:
        return (ref ? cb_quat_mul_soa_ref : cb_quat_mul_soa)(a, b, n, qo);
    case K_ROTATE:
        return (ref ? cb_quat_rotate_soa_ref : cb_quat_rotate_soa)(a, va, n, vo);
    case K_LERP:
        return (ref ? cb_vec3_lerp_soa_ref : cb_vec3_lerp_soa)(va, vb, t, n, vo);
    case K_COUNT:
        break;
    }
    return CB_ERR_INVALID_ARGUMENT;
}

static int out_columns(enum kernel k)
{
    return k == K_ROTATE || k == K_LERP ? 3 : 4;
}

/* Element i's result does not depend on n or on where the batch starts: the tail goes
 * through the same vector code on a padded copy. Elements past n are never written. */
static void simd_kernels_bit_identical_for_any_n_and_offset(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    static kcols c;
    static float full[4][MAXN + 8], part[4][MAXN + 8];
    fill_kcols(&c, &r);
    const float sentinel = -12345.0f;
    for (int k = 0; k < K_COUNT; ++k) {
        for (int ref = 0; ref < 2; ++ref) {
            assert_int_equal(run_kernel((enum kernel)k, ref, &c, 0, MAXN + 8, full), CB_OK);
            for (size_t off = 0; off < 4; ++off) {
                for (size_t n = 1; n + off <= MAXN; ++n) {
                    for (int col = 0; col < 4; ++col) {
                        for (size_t i = 0; i < MAXN + 8; ++i) {
                            part[col][i] = sentinel;
                        }
                    }
                    assert_int_equal(run_kernel((enum kernel)k, ref, &c, off, n, part), CB_OK);
                    for (int col = 0; col < out_columns((enum kernel)k); ++col) {
                        for (size_t i = 0; i < MAXN + 8; ++i) {
                            bool inside = i >= off && i < off + n;
                            float want = inside ? full[col][i] : sentinel;
                            CB_CHECK(same_bits(part[col][i], want),
                                     "kernel %d ref %d n %zu off %zu: element %zu differs", k,
                                     ref, n, off, i);
                        }
                    }
                }
            }
        }
    }
}

/* An output may be the same arrays as an input. */
static void simd_kernels_allow_output_aliasing_input(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    static kcols c, alias;
    static float sep[4][MAXN + 8];
    fill_kcols(&c, &r);
    for (int ref = 0; ref < 2; ++ref) {
        alias = c;
        assert_int_equal(run_kernel(K_SLERP, ref, &c, 0, MAXN, sep), CB_OK);
        /* Output into a itself. */
        assert_int_equal(run_kernel(K_SLERP, ref, &alias, 0, MAXN, alias.a), CB_OK);
        for (int col = 0; col < 4; ++col) {
            for (size_t i = 0; i < MAXN; ++i) {
                CB_CHECK(same_bits(alias.a[col][i], sep[col][i]), "aliased slerp %zu", i);
            }
        }
    }
}

static void simd_kernels_reject_null_columns(void **state)
{
    (void)state;
    static kcols c;
    float x[CB_W] = {0}, keep = 7.0f;
    float *o = &keep;
    cb_quat_csoa q = {x, x, x, x}, qnull = {x, NULL, x, x};
    cb_quat_soa out = {o, o, o, o}, onull = {o, o, o, NULL};
    cb_vec3_csoa v = {x, x, x}, vnull = {NULL, x, x};
    cb_vec3_soa vo = {o, o, o}, vonull = {o, NULL, o};
    for (int ref = 0; ref < 2; ++ref) {
        assert_int_equal((ref ? cb_quat_normalize_soa_ref : cb_quat_normalize_soa)(qnull, 1, out),
                         CB_ERR_NULL_ARGUMENT);
        assert_int_equal((ref ? cb_quat_normalize_soa_ref : cb_quat_normalize_soa)(q, 1, onull),
                         CB_ERR_NULL_ARGUMENT);
        assert_int_equal((ref ? cb_quat_nlerp_soa_ref : cb_quat_nlerp_soa)(q, q, NULL, 1, out),
                         CB_ERR_NULL_ARGUMENT);
        assert_int_equal((ref ? cb_quat_slerp_soa_ref : cb_quat_slerp_soa)(q, qnull, x, 1, out),
                         CB_ERR_NULL_ARGUMENT);
        assert_int_equal((ref ? cb_quat_mul_soa_ref : cb_quat_mul_soa)(qnull, q, 1, out),
                         CB_ERR_NULL_ARGUMENT);
        assert_int_equal((ref ? cb_quat_rotate_soa_ref : cb_quat_rotate_soa)(q, vnull, 1, vo),
                         CB_ERR_NULL_ARGUMENT);
        assert_int_equal((ref ? cb_quat_rotate_soa_ref : cb_quat_rotate_soa)(q, v, 1, vonull),
                         CB_ERR_NULL_ARGUMENT);
        assert_int_equal((ref ? cb_vec3_lerp_soa_ref : cb_vec3_lerp_soa)(v, vnull, x, 1, vo),
                         CB_ERR_NULL_ARGUMENT);
        /* Nothing was written. */
        assert_true(keep == 7.0f);
        /* n == 0 is a no-op, even with NULL columns. */
        cb_quat_csoa qn = {0};
        cb_quat_soa on = {0};
        assert_int_equal((ref ? cb_quat_slerp_soa_ref : cb_quat_slerp_soa)(qn, qn, NULL, 0, on),
                         CB_OK);
        assert_int_equal(run_kernel(K_MUL, ref, &c, 0, 0, c.out), CB_OK);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Joint groups                                                                                */

static void *alloc_groups(size_t count)
{
    size_t align = cb_simd_group_align(), bytes = (count ? count : 1) * cb_simd_group_bytes();
    void *p = aligned_alloc(align, (bytes + align - 1) / align * align);
    assert_non_null(p);
    return p;
}

static cb_xform random_xform(cb_prng *r)
{
    cb_xform x;
    cb_prng_unit_quat(r, x.rotation);
    for (int e = 0; e < 3; ++e) {
        x.translation[e] = cb_prng_range(r, -3, 3);
        x.scale[e] = cb_prng_range(r, 0.5f, 2);
    }
    return x;
}

static void simd_pack_unpack_round_trip_with_identity_padding(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    for (size_t n = 1; n <= 3 * CB_W + 1; ++n) {
        cb_xform in[3 * CB_W + 1], back[3 * CB_W + 1];
        for (size_t i = 0; i < n; ++i) {
            in[i] = random_xform(&r);
        }
        size_t groups = cb_simd_group_count(n);
        struct cb_xform_group *g = alloc_groups(groups);
        assert_int_equal(cb_xform_pack((cb_xform_cspan){in, n}, g, groups), CB_OK);
        assert_int_equal(cb_xform_unpack(g, groups, (cb_xform_span){back, n}), CB_OK);
        for (size_t i = 0; i < n; ++i) {
            assert_memory_equal(in[i].rotation, back[i].rotation, sizeof in[i].rotation);
            assert_memory_equal(in[i].translation, back[i].translation, sizeof in[i].translation);
            assert_memory_equal(in[i].scale, back[i].scale, sizeof in[i].scale);
        }
        /* Padding lanes of the last group hold identity. */
        struct cb_xform_group *last = &g[groups - 1];
        for (size_t l = n - (groups - 1) * CB_W; l < CB_W; ++l) {
            assert_true(last->qw[l] == 1.0f && last->qx[l] == 0.0f && last->tx[l] == 0.0f &&
                        last->sx[l] == 1.0f && last->sz[l] == 1.0f);
        }
        free(g);
    }
}

static void simd_pack_unpack_reject_bad_arguments(void **state)
{
    (void)state;
    cb_xform in[CB_W + 1];
    for (int i = 0; i < CB_W + 1; ++i) {
        in[i] = cb_xform_identity();
    }
    struct cb_xform_group *g = alloc_groups(2);
    memset(g, 0x5a, 2 * cb_simd_group_bytes());
    unsigned char before[2 * sizeof(struct cb_xform_group)];
    memcpy(before, g, sizeof before);
    assert_int_equal(cb_xform_pack((cb_xform_cspan){in, CB_W + 1}, g, 1), CB_ERR_SPAN_TOO_SHORT);
    assert_int_equal(cb_xform_pack((cb_xform_cspan){NULL, 3}, g, 2), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_xform_pack((cb_xform_cspan){in, 3}, NULL, 2), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(
        cb_xform_pack((cb_xform_cspan){in, 3}, (cb_xform_group *)((char *)g + 4), 1),
        CB_ERR_MISALIGNED);
    assert_memory_equal(g, before, sizeof before);

    cb_xform out[CB_W + 1];
    assert_int_equal(cb_xform_unpack(g, 1, (cb_xform_span){out, CB_W + 1}), CB_ERR_SPAN_TOO_SHORT);
    assert_int_equal(cb_xform_unpack(NULL, 1, (cb_xform_span){out, 1}), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_xform_unpack((const cb_xform_group *)((const char *)g + 4), 1,
                                     (cb_xform_span){out, 1}),
                     CB_ERR_MISALIGNED);
    /* Empty spans are fine. */
    assert_int_equal(cb_xform_pack((cb_xform_cspan){NULL, 0}, g, 0), CB_OK);
    free(g);
}

/* Unpacking n joints never reads the padding lanes: poisoned with NaN, they do not leak. */
static void simd_unpack_ignores_padding(void **state)
{
    (void)state;
    enum { N = CB_W + 1 };
    struct cb_xform_group *g = alloc_groups(2);
    float *f = (float *)g;
    for (size_t i = 0; i < 2 * 10 * CB_W; ++i) {
        f[i] = NAN;
    }
    for (size_t j = 0; j < N; ++j) {
        struct cb_xform_group *grp = &g[j / CB_W];
        size_t l = j % CB_W;
        grp->tx[l] = grp->ty[l] = grp->tz[l] = (float)j;
        grp->qx[l] = grp->qy[l] = grp->qz[l] = 0.0f;
        grp->qw[l] = 1.0f;
        grp->sx[l] = grp->sy[l] = grp->sz[l] = 1.0f;
    }
    cb_xform out[N];
    assert_int_equal(cb_xform_unpack(g, 2, (cb_xform_span){out, N}), CB_OK);
    for (size_t j = 0; j < N; ++j) {
        assert_true(out[j].translation[0] == (float)j);
        assert_false(isnan(out[j].rotation[0]) || isnan(out[j].scale[2]));
    }
    free(g);
}

static void simd_blend_groups_contract(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    enum { N = 3 * CB_W };
    size_t groups = cb_simd_group_count(N);
    cb_xform a[N], b[N];
    for (size_t i = 0; i < N; ++i) {
        a[i] = random_xform(&r);
        b[i] = random_xform(&r);
    }
    struct cb_xform_group *ga = alloc_groups(groups), *gb = alloc_groups(groups);
    struct cb_xform_group *out = alloc_groups(groups), *out2 = alloc_groups(groups);
    cb_xform_pack((cb_xform_cspan){a, N}, ga, groups);
    cb_xform_pack((cb_xform_cspan){b, N}, gb, groups);
    const cb_xform_group *poses[2] = {ga, gb};

    for (int ref = 0; ref < 2; ++ref) {
        cb_result (*blend)(const cb_xform_group *const *, const float *, size_t, size_t,
                           cb_xform_group *) = ref ? cb_xform_blend_groups_ref
                                                   : cb_xform_blend_groups;
        /* Validity table: each bad argument alone fails and writes nothing. */
        memset(out, 0x33, groups * cb_simd_group_bytes());
        unsigned char before[sizeof(struct cb_xform_group)];
        memcpy(before, out, sizeof before);
        float w[2] = {0.3f, 0.7f};
        const cb_xform_group *with_null[2] = {ga, NULL};
        const cb_xform_group *misaligned[2] = {ga, (const cb_xform_group *)((const char *)gb + 4)};
        float zero[2] = {0, 0}, neg[2] = {1, -0.5f}, nan[2] = {1, NAN}, inf[2] = {1, INFINITY};
        assert_int_equal(blend(NULL, w, 2, groups, out), CB_ERR_NULL_ARGUMENT);
        assert_int_equal(blend(poses, NULL, 2, groups, out), CB_ERR_NULL_ARGUMENT);
        assert_int_equal(blend(poses, w, 2, groups, NULL), CB_ERR_NULL_ARGUMENT);
        assert_int_equal(blend(with_null, w, 2, groups, out), CB_ERR_NULL_ARGUMENT);
        assert_int_equal(blend(misaligned, w, 2, groups, out), CB_ERR_MISALIGNED);
        assert_int_equal(blend(poses, w, 0, groups, out), CB_ERR_INVALID_ARGUMENT);
        assert_int_equal(blend(poses, zero, 2, groups, out), CB_ERR_INVALID_ARGUMENT);
        assert_int_equal(blend(poses, neg, 2, groups, out), CB_ERR_INVALID_ARGUMENT);
        assert_int_equal(blend(poses, nan, 2, groups, out), CB_ERR_INVALID_ARGUMENT);
        assert_int_equal(blend(poses, inf, 2, groups, out), CB_ERR_INVALID_ARGUMENT);
        assert_memory_equal(out, before, sizeof before);

        /* One pose at any positive weight returns it (rotation renormalized). */
        float one[1] = {2.5f};
        assert_int_equal(blend(poses, one, 1, groups, out), CB_OK);
        cb_xform got[N];
        cb_xform_unpack(out, groups, (cb_xform_span){got, N});
        for (size_t i = 0; i < N; ++i) {
            for (int e = 0; e < 3; ++e) {
                CB_CHECK(fabsf(got[i].translation[e] - a[i].translation[e]) <= 1e-6f,
                         "single-pose translation %zu", i);
                CB_CHECK(fabsf(got[i].scale[e] - a[i].scale[e]) <= 1e-6f, "single-pose scale");
            }
            for (int e = 0; e < 4; ++e) {
                CB_CHECK(fabsf(got[i].rotation[e] - a[i].rotation[e]) <= 4e-7f,
                         "single-pose rotation %zu", i);
            }
        }
        /* Self-blend is unchanged: a with a at any weights. */
        const cb_xform_group *self[2] = {ga, ga};
        assert_int_equal(blend(self, w, 2, groups, out), CB_OK);
        cb_xform_unpack(out, groups, (cb_xform_span){got, N});
        for (size_t i = 0; i < N; ++i) {
            for (int e = 0; e < 4; ++e) {
                CB_CHECK(fabsf(got[i].rotation[e] - a[i].rotation[e]) <= 4e-7f,
                         "self-blend rotation %zu", i);
            }
        }
        /* out may be one of the poses. */
        assert_int_equal(blend(poses, w, 2, groups, out2), CB_OK);
        struct cb_xform_group *copy = alloc_groups(groups);
        memcpy(copy, ga, groups * cb_simd_group_bytes());
        const cb_xform_group *aliased[2] = {copy, gb};
        assert_int_equal(blend(aliased, w, 2, groups, copy), CB_OK);
        assert_memory_equal(copy, out2, groups * cb_simd_group_bytes());
        free(copy);
    }
    free(ga), free(gb), free(out), free(out2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(simd_vf_exact_ops_match_scalar),
        cmocka_unit_test(simd_vf_fma_and_rsqrt_accuracy),
        cmocka_unit_test(simd_vf_nan_conventions),
        cmocka_unit_test(simd_width_queries),
        cmocka_unit_test(simd_kernels_bit_identical_for_any_n_and_offset),
        cmocka_unit_test(simd_kernels_allow_output_aliasing_input),
        cmocka_unit_test(simd_kernels_reject_null_columns),
        cmocka_unit_test(simd_pack_unpack_round_trip_with_identity_padding),
        cmocka_unit_test(simd_pack_unpack_reject_bad_arguments),
        cmocka_unit_test(simd_unpack_ignores_padding),
        cmocka_unit_test(simd_blend_groups_contract),
    };
    return CB_RUN_TESTS(tests);
}
