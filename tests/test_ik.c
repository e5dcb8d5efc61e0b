/* ik: the two-bone and aim IK jobs. Validity tables (every error code, nothing written on
 * failure), then properties on the embedded humanoid's legs, arms, neck and spine, checked in
 * model space after the corrected pose goes through local-to-model again:
 *  - reachable targets are reached (the issue asks for 1 mm; the bound asserted is far tighter),
 *    and the whole solved chain matches a double-precision construction of the contract;
 *  - unreachable targets: as a target moves steadily out of reach the end moves continuously,
 *    never passes the target or the full reach, and follows the documented soft-limit formula;
 *  - weight 0 is bit-identical, weight 1 reaches, joints outside the chain never move;
 *  - the pole decides the bending plane, degenerate geometry stays finite;
 *  - aim: the forward axis points at the target, stops at the angle limit, per-joint weights
 *    distribute the turn, the up axis follows the pole;
 *  - bad input (NaN, zero-length bones, broken chains, indices out of range) gets a code and a
 *    message and leaves the pose alone; a finite rotation that is not unit (tiny to 1e25) gets
 *    the verdict of the frames it makes, from the pose as from model matrices. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anim_test.h"
#include "test_util.h"

/* ---- the embedded humanoid and its poses --------------------------------------------------- */

typedef struct limb {
    const char *name;
    uint32_t start, mid, end;
    float axis[3]; /* hinge, mid joint space */
} limb;

typedef struct world {
    cb_embedded *set;
    const cb_skeleton *s;
    size_t n, groups, bytes;
    cb_xform_group *pose, *out, *scratch;
    float *model; /* n * 16, float local-to-model of `pose` */
    dref_mat *dm; /* n, double local-to-model */
    limb limb[4]; /* legs and arms, left then right */
} world;

static uint32_t joint(const world *w, const char *name)
{
    uint32_t j = 0;
    CB_CHECK(cb_skeleton_find_joint(w->s, name, &j) == CB_OK, "no joint %s", name);
    return (uint32_t)j;
}

static world world_make(void)
{
    world w = {0};
    assert_int_equal(cb_embedded_create(NULL, &w.set, NULL), CB_OK);
    w.s = cb_embedded_skeleton(w.set);
    w.n = cb_skeleton_joint_count(w.s);
    w.groups = cb_skeleton_group_count(w.s);
    w.bytes = cb_skeleton_pose_bytes(w.s);
    w.pose = cb_test_pose_alloc(w.s, false);
    w.out = cb_test_pose_alloc(w.s, false);
    w.scratch = cb_test_pose_alloc(w.s, false);
    w.model = calloc(w.n * 16, sizeof(float));
    w.dm = calloc(w.n, sizeof *w.dm);
    /* The knees hinge about their local +X, the elbows about -X (the forearm comes forward). */
    const char *names[4][3] = {{"thigh_l", "calf_l", "foot_l"},
                               {"thigh_r", "calf_r", "foot_r"},
                               {"upperarm_l", "lowerarm_l", "hand_l"},
                               {"upperarm_r", "lowerarm_r", "hand_r"}};
    for (int k = 0; k < 4; ++k) {
        w.limb[k] = (limb){names[k][0],
                           joint(&w, names[k][0]),
                           joint(&w, names[k][1]),
                           joint(&w, names[k][2]),
                           {k < 2 ? 1.0f : -1.0f, 0.0f, 0.0f}};
    }
    return w;
}

static void world_free(world *w)
{
    cb_embedded_destroy(w->set);
    free(w->pose), free(w->out), free(w->scratch), free(w->model), free(w->dm);
}

/* A pose of the humanoid into `pose`: the rest pose (straight limbs) one time in eight, else a
 * blend of 1..3 locomotion clips at a random time (bent, moving limbs). */
static void random_pose(world *w, cb_prng *r, cb_xform_group *pose)
{
    if (cb_prng_below(r, 8) == 0) {
        cb_xform_group_cspan rest = cb_skeleton_rest_pose(w->s);
        memcpy(pose, rest.ptr, w->bytes);
        return;
    }
    cb_blend_entry e[3];
    size_t k = 1 + cb_prng_below(r, 3);
    float t = cb_prng_range(r, 0.0f, 1.0f);
    for (size_t i = 0; i < k; ++i) {
        e[i] = (cb_blend_entry){cb_embedded_clip(w->set, cb_prng_below(r, 17)),
                                t,
                                cb_prng_range(r, 0.2f, 1.0f),
                                CB_BLEND_MODE_NORMAL,
                                {NULL, 0}};
    }
    cb_pose_blend_job job = {w->s, {e, k}, 0.0f, {pose, w->groups}};
    assert_int_equal(cb_pose_blend_job_run(&job, NULL), CB_OK);
}

/* Double-precision local-to-model of a pose into w->dm. */
static void model_double(world *w, const cb_xform_group *pose)
{
    dref_xform *local = malloc(w->n * sizeof *local);
    for (size_t j = 0; j < w->n; ++j) {
        local[j] = dref_from_pose(pose, j);
    }
    dref_local_to_model(cb_skeleton_parents(w->s), w->n, local, w->dm);
    free(local);
}

/* A new random pose in w->pose, with its double model in w->dm. */
static void new_pose(world *w, cb_prng *r)
{
    random_pose(w, r, w->pose);
    model_double(w, w->pose);
}

/* Float local-to-model of a pose into w->model (4x4), joints [from, n). */
static void model_float(world *w, const cb_xform_group *pose, uint32_t from)
{
    cb_ltm_job j = {
        .skeleton = w->s, .local = {pose, w->groups}, .from = from, .model = {w->model, w->n * 16}};
    assert_int_equal(cb_ltm_job_run(&j, NULL), CB_OK);
}

/* ---- double vectors ------------------------------------------------------------------------ */

typedef struct dv {
    double x, y, z;
} dv;

static dv dv_sub(dv a, dv b)
{
    return (dv){a.x - b.x, a.y - b.y, a.z - b.z};
}

static dv dv_add(dv a, dv b)
{
    return (dv){a.x + b.x, a.y + b.y, a.z + b.z};
}

static dv dv_scale(dv a, double s)
{
    return (dv){a.x * s, a.y * s, a.z * s};
}

static double dv_dot(dv a, dv b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

static dv dv_cross(dv a, dv b)
{
    return (dv){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

static double dv_len(dv a)
{
    return sqrt(dv_dot(a, a));
}

static dv dv_unit(dv a)
{
    return dv_scale(a, 1.0 / dv_len(a));
}

static double dv_angle(dv a, dv b)
{
    return atan2(dv_len(dv_cross(a, b)), dv_dot(a, b));
}

static dv dv_of(const float v[3])
{
    return (dv){v[0], v[1], v[2]};
}

static void dv_store(dv a, float out[3])
{
    out[0] = (float)a.x, out[1] = (float)a.y, out[2] = (float)a.z;
}

static dv pos_d(const world *w, uint32_t j)
{
    return (dv){w->dm[j].m[3][0], w->dm[j].m[3][1], w->dm[j].m[3][2]};
}

static dv pos_f(const world *w, uint32_t j)
{
    const float *m = w->model + 16 * (size_t)j;
    return (dv){m[12], m[13], m[14]};
}

/* Joint j's model linear part applied to v (double model). */
static dv lin_d(const world *w, uint32_t j, dv v)
{
    const dref_mat *m = &w->dm[j];
    return (dv){m->m[0][0] * v.x + m->m[1][0] * v.y + m->m[2][0] * v.z,
                m->m[0][1] * v.x + m->m[1][1] * v.y + m->m[2][1] * v.z,
                m->m[0][2] * v.x + m->m[1][2] * v.y + m->m[2][2] * v.z};
}

static dv random_unit(cb_prng *r)
{
    dv v;
    do {
        v = (dv){cb_prng_range(r, -1, 1), cb_prng_range(r, -1, 1), cb_prng_range(r, -1, 1)};
    } while (dv_len(v) < 0.1 || dv_len(v) > 1.0);
    return dv_unit(v);
}

/* The reach of a limb in the current double model (w->dm): the header's law of cosines on the
 * bone parts perpendicular to the hinge. */
static void reach_d(const world *w, const limb *lb, double *dmin, double *dmax)
{
    dv s = pos_d(w, lb->start), m = pos_d(w, lb->mid), e = pos_d(w, lb->end);
    dv n = dv_unit(lin_d(w, lb->mid, dv_of(lb->axis)));
    dv u = dv_sub(m, s), l = dv_sub(e, m);
    double un = dv_dot(u, n), ln = dv_dot(l, n);
    double p = dv_len(dv_sub(u, dv_scale(n, un))), q = dv_len(dv_sub(l, dv_scale(n, ln)));
    *dmax = sqrt((un + ln) * (un + ln) + (p + q) * (p + q));
    *dmin = sqrt((un + ln) * (un + ln) + (p - q) * (p - q));
}

/* A limb in the current double model: its joints' positions and its reach. */
typedef struct limb_now {
    const limb *L;
    dv s, m, e;
    double dmin, dmax;
} limb_now;

static limb_now limb_state(const world *w, int index)
{
    limb_now x = {&w->limb[index % 4], {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 0.0, 0.0};
    x.s = pos_d(w, x.L->start), x.m = pos_d(w, x.L->mid), x.e = pos_d(w, x.L->end);
    reach_d(w, x.L, &x.dmin, &x.dmax);
    return x;
}

/* The documented soft limit, in double. */
static double soft_ref(double d, double dmin, double dmax, double soften)
{
    double start = fmax(soften * dmax, dmin);
    if (d < dmin) {
        return dmin;
    }
    if (d <= start) {
        return d;
    }
    if (dmax > start) {
        return dmax - (dmax - start) * exp(-(d - start) / (dmax - start));
    }
    return dmax;
}

static cb_ik_two_bone_job two_bone(world *w, const limb *lb, dv target, dv pole,
                                   cb_ik_two_bone_result *res)
{
    cb_ik_two_bone_job j = {.skeleton = w->s,
                            .pose = {w->pose, w->groups},
                            .out = {w->out, w->groups},
                            .start_joint = lb->start,
                            .mid_joint = lb->mid,
                            .end_joint = lb->end,
                            .weight = 1.0f,
                            .result = res};
    dv_store(target, j.target);
    dv_store(pole, j.pole);
    memcpy(j.mid_axis, lb->axis, sizeof j.mid_axis);
    return j;
}

/* Every float of two poses equal except the rotations of the listed joints. */
static void check_only_rotations_changed(const world *w, const cb_xform_group *a,
                                         const cb_xform_group *b, const uint32_t *joints,
                                         size_t count)
{
    size_t wd = cb_simd_width();
    const float *fa = (const float *)a, *fb = (const float *)b;
    for (size_t i = 0; i < w->groups * 10 * wd; ++i) {
        size_t g = i / (10 * wd), comp = (i / wd) % 10, lane = i % wd, j = g * wd + lane;
        bool allowed = false;
        for (size_t k = 0; k < count; ++k) {
            allowed = allowed || (j == joints[k] && comp >= 3 && comp <= 6);
        }
        if (!allowed) {
            CB_CHECK(memcmp(&fa[i], &fb[i], sizeof(float)) == 0,
                     "joint %zu component %zu changed (%.9g -> %.9g) outside the chain", j, comp,
                     (double)fa[i], (double)fb[i]);
        }
    }
}

/* ---- validity tables ----------------------------------------------------------------------- */

static void ik_two_bone_job_validity(void **state)
{
    (void)state;
    world w = world_make();
    cb_prng r = cb_test_prng(__func__);
    random_pose(&w, &r, w.pose);
    memcpy(w.out, w.pose, w.bytes);
    model_float(&w, w.pose, 0);
    cb_ik_two_bone_result res;
    const cb_ik_two_bone_job good =
        two_bone(&w, &w.limb[0], (dv){0.1, 0.3, 0.2}, (dv){0, 0, 1}, &res);
    cb_xform_group *before = cb_test_pose_alloc(w.s, false);
    memcpy(before, w.pose, w.bytes);
    uint32_t spine = joint(&w, "spine_01");
    struct {
        cb_result want;
        const char *needle;
    } cases[] = {
        {CB_ERR_NULL_ARGUMENT, "skeleton"},        /* 0 */
        {CB_ERR_NULL_ARGUMENT, "pose"},            /* 1 */
        {CB_ERR_SPAN_TOO_SHORT, "pose"},           /* 2 */
        {CB_ERR_MISALIGNED, "pose"},               /* 3 */
        {CB_ERR_SPAN_TOO_SHORT, "out"},            /* 4 */
        {CB_ERR_MISALIGNED, "out"},                /* 5 */
        {CB_ERR_INVALID_ARGUMENT, "overlaps"},     /* 6 */
        {CB_ERR_INVALID_ARGUMENT, "model_layout"}, /* 7 */
        {CB_ERR_NULL_ARGUMENT, "model"},           /* 8 */
        {CB_ERR_SPAN_TOO_SHORT, "model"},          /* 9 */
        {CB_ERR_NOT_FINITE, "weight"},             /* 10 */
        {CB_ERR_INVALID_ARGUMENT, "weight"},       /* 11 */
        {CB_ERR_INVALID_ARGUMENT, "weight"},       /* 12 */
        {CB_ERR_INVALID_ARGUMENT, "start_joint"},  /* 13 */
        {CB_ERR_INVALID_ARGUMENT, "mid_joint"},    /* 14 */
        {CB_ERR_INVALID_ARGUMENT, "end_joint"},    /* 15 */
        {CB_ERR_HIERARCHY, "chain"},               /* 16: end not below mid */
        {CB_ERR_HIERARCHY, "chain"},               /* 17: mid == start */
        {CB_ERR_HIERARCHY, "chain"},               /* 18: reversed */
        {CB_ERR_NOT_FINITE, "target"},             /* 19 */
        {CB_ERR_NOT_FINITE, "target"},             /* 20 */
        {CB_ERR_INVALID_ARGUMENT, "target"},       /* 21 */
        {CB_ERR_NOT_FINITE, "pole"},               /* 22 */
        {CB_ERR_INVALID_ARGUMENT, "pole"},         /* 23 */
        {CB_ERR_NOT_FINITE, "mid_axis"},           /* 24 */
        {CB_ERR_NOT_FINITE, "soften"},             /* 25 */
        {CB_ERR_INVALID_ARGUMENT, "soften"},       /* 26 */
        {CB_ERR_INVALID_ARGUMENT, "soften"},       /* 27 */
        {CB_ERR_INVALID_ARGUMENT, "no output"},    /* 28 */
        {CB_ERR_INVALID_ARGUMENT, "QTS"},          /* 29: not a matrix */
        {CB_ERR_INVALID_ARGUMENT, "QTS"},          /* 30: also without a model */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        cb_ik_two_bone_job j = good;
        switch (k) {
        case 0:
            j.skeleton = NULL;
            break;
        case 1:
            j.pose.ptr = NULL;
            break;
        case 2:
            j.pose.count = w.groups - 1;
            break;
        case 3:
            j.pose.ptr = (const cb_xform_group *)((const char *)w.pose + 4);
            break;
        case 4:
            j.out.count = w.groups - 1;
            break;
        case 5:
            j.out.ptr = (cb_xform_group *)((char *)w.out + 4);
            break;
        case 6:
            j.out.ptr = (cb_xform_group *)((char *)w.pose + cb_simd_group_bytes());
            break;
        case 7:
            j.model_layout = _CB_MATRIX_LAYOUT_COUNT;
            break;
        case 8:
            j.model = (cb_float_cspan){NULL, 16};
            break;
        case 9:
            j.model = (cb_float_cspan){w.model, w.n * 16 - 1};
            break;
        case 10:
            j.weight = NAN;
            break;
        case 11:
            j.weight = -0.5f;
            break;
        case 12:
            j.weight = 1.5f;
            break;
        case 13:
            j.start_joint = (uint32_t)w.n;
            break;
        case 14:
            j.mid_joint = 1000;
            break;
        case 15:
            j.end_joint = (uint32_t)w.n + 3;
            break;
        case 16:
            j.end_joint = w.limb[1].end;
            break;
        case 17:
            j.mid_joint = j.start_joint;
            break;
        case 18:
            j.start_joint = w.limb[0].end, j.end_joint = w.limb[0].start;
            break;
        case 19:
            j.target[1] = NAN;
            break;
        case 20:
            j.target[2] = INFINITY;
            break;
        case 21:
            j.target[0] = 2e9f;
            break;
        case 22:
            j.pole[0] = NAN;
            break;
        case 23:
            j.pole[2] = -3e9f;
            break;
        case 24:
            j.mid_axis[0] = INFINITY;
            break;
        case 25:
            j.soften = NAN;
            break;
        case 26:
            j.soften = -0.1f;
            break;
        case 27:
            j.soften = 1.01f;
            break;
        case 28:
            j.out = (cb_xform_group_span){NULL, 0}, j.result = NULL;
            break;
        case 29:
            j.model_layout = CB_MATRIX_LAYOUT_QTS;
            j.model = (cb_float_cspan){w.model, w.n * 16};
            break;
        case 30:
            j.model_layout = CB_MATRIX_LAYOUT_QTS;
            break;
        }
        cb_error err = {0};
        memset(&res, 0x5a, sizeof res);
        cb_ik_two_bone_result res_before = res;
        cb_result got = cb_ik_two_bone_job_run(&j, &err);
        CB_CHECK(got == cases[k].want, "case %zu: %s, want %s (%s)", k, cb_result_str(got),
                 cb_result_str(cases[k].want), err.message);
        CB_CHECK(strstr(err.message, cases[k].needle) != NULL,
                 "case %zu: \"%s\" does not name \"%s\"", k, err.message, cases[k].needle);
        assert_int_equal(cb_ik_two_bone_job_validate(&j, NULL), cases[k].want);
        assert_memory_equal(w.pose, before, w.bytes);
        assert_memory_equal(w.out, before, w.bytes);
        assert_memory_equal(&res, &res_before, sizeof res);
    }
    assert_int_equal(cb_ik_two_bone_job_validate(NULL, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_ik_two_bone_job_run(NULL, NULL), CB_ERR_NULL_ARGUMENT);
    cb_ik_two_bone_job zero = {0};
    assert_int_equal(cb_ik_two_bone_job_validate(&zero, NULL), CB_ERR_NULL_ARGUMENT);
    /* The minimal valid jobs: result only; pose only; with a model in either layout; a chain
     * with joints between (thigh -> calf -> ball skips the foot). */
    cb_ik_two_bone_job j = good;
    j.out = (cb_xform_group_span){NULL, 0};
    assert_int_equal(cb_ik_two_bone_job_run(&j, NULL), CB_OK);
    j = good;
    j.result = NULL;
    assert_int_equal(cb_ik_two_bone_job_run(&j, NULL), CB_OK);
    j = good;
    j.model = (cb_float_cspan){w.model, w.n * 16};
    assert_int_equal(cb_ik_two_bone_job_run(&j, NULL), CB_OK);
    j.end_joint = joint(&w, "ball_l");
    assert_int_equal(cb_ik_two_bone_job_run(&j, NULL), CB_OK);
    j.start_joint = spine;
    j.end_joint = w.limb[0].end;
    assert_int_equal(cb_ik_two_bone_job_run(&j, NULL), CB_ERR_HIERARCHY);
    free(before);
    world_free(&w);
}

/* ---- two-bone IK: reaching -------------------------------------------------------------- */

/* A random pole, at least ~6 degrees away from the direction dir (the pole is ill-defined along
 * the target axis; that case has its own test). */
static dv random_pole(cb_prng *r, dv dir)
{
    dv p;
    do {
        p = random_unit(r);
    } while (dv_len(dv_cross(p, dir)) < 0.1);
    return dv_scale(p, cb_prng_range(r, 0.1f, 3.0f));
}

/* Where the contract puts the mid joint: in the plane of the target direction t and the pole,
 * on the pole's side, at the bone lengths a and b from the start joint and the reached point
 * (law of cosines, in double). Valid for hinges perpendicular to both bones, as the humanoid's
 * are (checked). */
static dv mid_ref(dv s, dv t, dv pole, double a, double b, double dd)
{
    dv pp = dv_unit(dv_sub(pole, dv_scale(t, dv_dot(pole, t))));
    double ca = (a * a + dd * dd - b * b) / (2.0 * a * dd);
    ca = fmin(1.0, fmax(-1.0, ca));
    return dv_add(s, dv_add(dv_scale(t, a * ca), dv_scale(pp, a * sqrt(1.0 - ca * ca))));
}

/* Reachable targets are reached: 2000 random targets on random poses (walk, run, idle blends
 * and the straight rest pose) for both legs and both arms, default soft limit and none, random
 * poles, model space from the pose or from matrices. After the corrected pose goes through
 * local-to-model again (the double reference, and the float job refreshing from first_joint),
 * the end joint is on the target and the mid joint where the double construction puts it.
 * Bounds: the solve is about 40 dependent float operations on positions up to 1.5 m, then a
 * float local-to-model of up to 9 levels. The mid joint's error is weighted by d / (a + b):
 * the direction of a nearly folded chain (d = 1 cm for a 86 cm leg) is the difference of its
 * two bones, so its rounding grows as (a + b) / d (measured 1.5e-5 m unweighted at d = 1 cm,
 * 15 micrometres, where the end itself is still within 5e-7 m). Near full reach without
 * softening the knee is ill-conditioned by nature (its position moves as sqrt(D - d)): the
 * knee of a leg within 1e-4 of its length of straight is not compared. Measured maxima over
 * the three configurations and 40 seeds (CB_TEST_SEED): end 9.3e-7 m (double ltm) and 9.7e-7 m
 * (float ltm), weighted mid 3.5e-6 m. The issue asks for 1 mm; the bounds asserted are about
 * 2x the measured maxima. */
static void ik_two_bone_reaches_reachable_targets(void **state)
{
    (void)state;
    world w = world_make();
    cb_prng r = cb_test_prng(__func__);
    cb_err_track end_d = cb_err_track_make("two-bone |end - target| (m)");
    cb_err_track end_f = cb_err_track_make("two-bone |end - target|, float ltm (m)");
    cb_err_track mid = cb_err_track_make("two-bone |mid - construction| d/(a+b) (m)");
    cb_err_track hinge = cb_err_track_make("humanoid hinge . bones (m)");
    for (int it = 0; it < 2000; ++it) {
        new_pose(&w, &r);
        limb_now ln = limb_state(&w, it);
        const limb *L = ln.L;
        double dmin = ln.dmin, dmax = ln.dmax;
        const bool hard = it % 3 == 0;
        double soften = hard ? 1.0 : CB_IK_DEFAULT_SOFTEN;
        double lo = dmin + 0.005, hi = soften * dmax * (1.0 - 1e-6);
        double d = lo + (hi - lo) * cb_prng_double(&r);
        dv s = ln.s, m0 = ln.m, e0 = ln.e;
        double a = dv_len(dv_sub(m0, s)), b = dv_len(dv_sub(e0, m0));
        dv n = dv_unit(lin_d(&w, L->mid, dv_of(L->axis)));
        cb_err_track_add(&hinge, fabs(dv_dot(dv_sub(m0, s), n)) + fabs(dv_dot(dv_sub(e0, m0), n)),
                         0.0, (size_t)it);
        dv dir = random_unit(&r);
        dv target = dv_add(s, dv_scale(dir, d));
        dv pole = random_pole(&r, dir);
        cb_ik_two_bone_result res;
        cb_ik_two_bone_job j = two_bone(&w, L, target, pole, &res);
        j.soften = hard ? 1.0f : 0.0f;
        if (it % 2 == 1) {
            model_float(&w, w.pose, 0);
            j.model = (cb_float_cspan){w.model, w.n * 16};
            j.model_layout = it % 4 == 1 ? CB_MATRIX_LAYOUT_MAT4 : _CB_MATRIX_LAYOUT_DEFAULT;
        }
        cb_error err = {0};
        cb_result got = cb_ik_two_bone_job_run(&j, &err);
        CB_CHECK(got == CB_OK, "iteration %d: %s", it, err.message);
        CB_CHECK(res.reached, "iteration %d (%s): d = %.4f in [%.4f, %.4f] not reached", it,
                 L->name, d, dmin, soften * dmax);
        CB_CHECK(res.first_joint == L->start, "first_joint %u", res.first_joint);
        const uint32_t chain[2] = {L->start, L->mid};
        check_only_rotations_changed(&w, w.pose, w.out, chain, 2);
        /* Refresh the float model from first_joint only, as a host would. */
        model_float(&w, w.pose, 0);
        model_float(&w, w.out, res.first_joint);
        model_double(&w, w.out);
        dv e = pos_d(&w, L->end);
        cb_err_track_add(&end_d, dv_len(dv_sub(e, target)), 0.0, (size_t)it);
        cb_err_track_add(&end_f, dv_len(dv_sub(pos_f(&w, L->end), target)), 0.0, (size_t)it);
        dv want_mid = mid_ref(s, dir, pole, a, b, d);
        /* The knee of a leg less than 1e-4 of its length short of straight is beyond any
         * float solver (see above); its end is checked, not its knee. */
        if (dmax - d > 1e-4 * dmax) {
            cb_err_track_add(&mid, dv_len(dv_sub(pos_d(&w, L->mid), want_mid)) * d / (a + b), 0.0,
                             (size_t)it);
        }
        CB_CHECK(dv_len(dv_sub(pos_d(&w, L->start), s)) == 0.0, "the start joint moved");
    }
    /* The humanoid's hinges are perpendicular to its bones (so mid_ref applies): the bones'
     * components along the hinge are float noise. */
    cb_err_track_check(&hinge, 1e-9);
    cb_err_track_check(&end_d, 2e-6);
    cb_err_track_check(&end_f, 2e-6);
    cb_err_track_check(&mid, 7e-6);
    CB_CHECK(end_d.max < 1e-3 && end_f.max < 1e-3, "the issue's 1 mm");
    world_free(&w);
}

/* ---- two-bone IK: out of reach ------------------------------------------------------------- */

/* Targets moving steadily out of reach, 1 mm per step along a random ray from the start joint,
 * from 60 % to 200 % of the full reach, on random poses for all four limbs; with the default
 * soft limit and with none. At every step the end joint: never passes the target or the full
 * reach; moves away monotonically; stays on the target's ray; is where the documented
 * soft-limit formula (written again in double here) puts it; and moves by at most the target's
 * step (the soft limit has slope <= 1). The mid joint's largest step shows what softening is
 * for: without it the knee or elbow snaps as the chain straightens. */
static void ik_two_bone_degrades_smoothly_out_of_reach(void **state)
{
    (void)state;
    world w = world_make();
    cb_prng r = cb_test_prng(__func__);
    cb_err_track formula = cb_err_track_make("two-bone |end - start| vs soft formula (m)");
    cb_err_track ray = cb_err_track_make("two-bone end off the target ray (rad)");
    double mid_step_soft = 0.0, mid_step_hard = 0.0, end_step_ratio = 0.0;
    const double step = 0.001;
    for (int trial = 0; trial < 16; ++trial) {
        new_pose(&w, &r);
        limb_now ln = limb_state(&w, trial);
        const limb *L = ln.L;
        double dmin = ln.dmin, dmax = ln.dmax;
        dv s = ln.s;
        dv dir = random_unit(&r);
        dv pole = random_pole(&r, dir);
        for (int hard = 0; hard < 2; ++hard) {
            dv prev_e = {0, 0, 0}, prev_m = {0, 0, 0};
            double prev_len = 0.0;
            int steps = (int)((2.0 - 0.6) * dmax / step);
            for (int k = 0; k <= steps; ++k) {
                double d = 0.6 * dmax + k * step;
                cb_ik_two_bone_result res;
                cb_ik_two_bone_job j = two_bone(&w, L, dv_add(s, dv_scale(dir, d)), pole, &res);
                j.soften = hard ? 1.0f : 0.0f;
                assert_int_equal(cb_ik_two_bone_job_run(&j, NULL), CB_OK);
                model_double(&w, w.out);
                dv e = pos_d(&w, L->end), m = pos_d(&w, L->mid);
                double len = dv_len(dv_sub(e, s));
                CB_CHECK(len <= d + 2e-6, "step %d: the end passed the target (%.7f > %.7f)", k,
                         len, d);
                CB_CHECK(len <= dmax + 2e-6, "step %d: beyond full reach (%.7f > %.7f)", k, len,
                         dmax);
                cb_err_track_add(&formula, len, soft_ref(d, dmin, dmax, hard ? 1.0 : 0.97),
                                 (size_t)k);
                cb_err_track_add(&ray, dv_angle(dv_sub(e, s), dir), 0.0, (size_t)k);
                if (k > 0) {
                    CB_CHECK(len >= prev_len - 2e-6, "step %d: the end came back (%.7f < %.7f)", k,
                             len, prev_len);
                    double es = dv_len(dv_sub(e, prev_e)), ms = dv_len(dv_sub(m, prev_m));
                    end_step_ratio = fmax(end_step_ratio, (es - 4e-6) / step);
                    if (hard) {
                        mid_step_hard = fmax(mid_step_hard, ms);
                    } else {
                        mid_step_soft = fmax(mid_step_soft, ms);
                    }
                }
                prev_e = e, prev_m = m, prev_len = len;
            }
            CB_CHECK(!hard || prev_len > dmax - 2e-6, "the hard limit ends straight");
        }
    }
    /* |end - start| is a float length built from model positions up to 1.5 m (measured
     * 3.2e-7 m against the formula over configurations and 40 seeds); the direction, a swing
     * onto the target ray, is a position error of ~1e-6 m over 0.5-1.7 m (3.8e-6 rad). */
    cb_err_track_check(&formula, 6e-7);
    cb_err_track_check(&ray, 7e-6);
    cb_test_note("largest end step per 1 mm target step: %.4f mm", end_step_ratio);
    cb_test_note("largest mid-joint step per 1 mm target step: soft %.2f mm, hard %.2f mm",
                 mid_step_soft * 1e3, mid_step_hard * 1e3);
    CB_CHECK(end_step_ratio <= 1.0, "the end moved faster than the target: %.4f", end_step_ratio);
    /* Softening keeps the knee's motion within a few times the target's (measured 2.0 mm per
     * mm); the snap without it is an order of magnitude larger (20.7 mm). */
    CB_CHECK(mid_step_soft <= 0.006, "soft mid step %.4f m", mid_step_soft);
    CB_CHECK(mid_step_hard > 3.0 * mid_step_soft, "softening made no difference");
    world_free(&w);
}

/* ---- two-bone IK: weights, plane, degenerate cases ----------------------------------------- */

/* Weight 0 changes nothing, bit for bit (in place and copying), and reports identity; weights
 * in between move the end continuously from the animated position to the target, and weight 1
 * reaches it. */
static void ik_two_bone_weight(void **state)
{
    (void)state;
    world w = world_make();
    cb_prng r = cb_test_prng(__func__);
    cb_xform_group *before = cb_test_pose_alloc(w.s, false);
    for (int it = 0; it < 40; ++it) {
        new_pose(&w, &r);
        memcpy(before, w.pose, w.bytes);
        limb_now ln = limb_state(&w, it);
        const limb *L = ln.L;
        dv s = ln.s, e0 = ln.e;
        dv dir = random_unit(&r);
        dv target = dv_add(s, dv_scale(dir, 0.5));
        cb_ik_two_bone_result res;
        cb_ik_two_bone_job j = two_bone(&w, L, target, random_pole(&r, dir), &res);
        j.weight = 0.0f;
        memset(w.out, 0x7f, w.bytes);
        assert_int_equal(cb_ik_two_bone_job_run(&j, NULL), CB_OK);
        assert_memory_equal(w.out, w.pose, w.bytes);
        const float id[4] = {0, 0, 0, 1};
        assert_memory_equal(res.start_correction, id, sizeof id);
        assert_memory_equal(res.mid_correction, id, sizeof id);
        assert_false(res.reached);
        j.out.ptr = w.pose; /* in place */
        assert_int_equal(cb_ik_two_bone_job_run(&j, NULL), CB_OK);
        assert_memory_equal(w.pose, before, w.bytes);
        j.out.ptr = w.out;
        /* Continuity in the weight: the largest step of the end over the weight's range
         * shrinks with the step of the weight (about 4x for 4x finer steps when the path is
         * continuous; a jump would stay the same size). */
        double largest[2] = {0.0, 0.0};
        dv prev = e0;
        for (int fine = 0; fine < 2; ++fine) {
            int steps = fine ? 400 : 100;
            prev = e0;
            for (int k = 1; k <= steps; ++k) {
                j.weight = (float)k / (float)steps;
                assert_int_equal(cb_ik_two_bone_job_run(&j, NULL), CB_OK);
                model_double(&w, w.out);
                dv e = pos_d(&w, L->end);
                largest[fine] = fmax(largest[fine], dv_len(dv_sub(e, prev)));
                prev = e;
            }
        }
        CB_CHECK(largest[1] < 0.35 * largest[0] + 1e-6,
                 "iteration %d: the end's largest step went from %.4g m to %.4g m with 4x finer "
                 "weights",
                 it, largest[0], largest[1]);
        CB_CHECK(dv_len(dv_sub(prev, target)) < 1.2e-6, "weight 1 does not reach (%.3g m)",
                 dv_len(dv_sub(prev, target)));
    }
    free(before);
    world_free(&w);
}

/* The pole decides the bending plane: for poles all around the target axis, with the hinge
 * given or taken from the pose, the mid joint lies in the plane of the target direction and
 * the pole, on the pole's side. Targets at least 5 cm beyond the folded reach: closer in, the
 * chain's direction is the difference of two nearly opposite bones and the plane is as
 * ill-conditioned as test ik_two_bone_reaches_reachable_targets describes. */
static void ik_two_bone_pole_decides_the_plane(void **state)
{
    (void)state;
    world w = world_make();
    cb_prng r = cb_test_prng(__func__);
    cb_err_track plane = cb_err_track_make("two-bone mid off the pole plane (m)");
    for (int it = 0; it < 400; ++it) {
        new_pose(&w, &r);
        limb_now ln = limb_state(&w, it);
        const limb *L = ln.L;
        dv s = ln.s;
        dv dir = random_unit(&r);
        double lo = ln.dmin + 0.05, hi = 0.9 * ln.dmax;
        dv target = dv_add(s, dv_scale(dir, lo + (hi - lo) * cb_prng_double(&r)));
        dv pole = random_pole(&r, dir);
        cb_ik_two_bone_result res;
        cb_ik_two_bone_job j = two_bone(&w, L, target, pole, &res);
        if (it % 2 == 1) {
            memset(j.mid_axis, 0, sizeof j.mid_axis); /* hinge from the pose */
        }
        assert_int_equal(cb_ik_two_bone_job_run(&j, NULL), CB_OK);
        model_double(&w, w.out);
        dv m = dv_sub(pos_d(&w, L->mid), s);
        dv pp = dv_unit(dv_sub(pole, dv_scale(dir, dv_dot(pole, dir))));
        dv normal = dv_unit(dv_cross(dir, pp));
        cb_err_track_add(&plane, fabs(dv_dot(m, normal)), 0.0, (size_t)it);
        CB_CHECK(dv_dot(m, pp) > 0.0,
                 "iteration %d (%s%s): the mid joint bends away from the "
                 "pole (%.4f)",
                 it, L->name, it % 2 ? ", hinge from pose" : "", dv_dot(m, pp));
    }
    /* Positions up to 0.5 m from the start, a handful of float operations: measured 1.6e-6 m
     * over configurations and 40 seeds. */
    cb_err_track_check(&plane, 3.5e-6);
    world_free(&w);
}

/* Degenerate geometry: the target on the start joint, a pole along the target axis, a zero
 * pole, a straight chain (the rest pose) with and without a hinge axis, a target on the mid
 * joint, a target at exactly the full reach: always finite, unit rotations, and the end where
 * the contract says. */
static void ik_two_bone_degenerate_cases(void **state)
{
    (void)state;
    world w = world_make();
    cb_prng r = cb_test_prng(__func__);
    for (int it = 0; it < 96; ++it) {
        const limb *L = &w.limb[it % 4];
        int kind = (it / 4) % 8;
        bool rest = (it / 32) % 2 == 0;
        if (rest) {
            memcpy(w.pose, cb_skeleton_rest_pose(w.s).ptr, w.bytes);
        } else {
            random_pose(&w, &r, w.pose);
        }
        model_double(&w, w.pose);
        limb_now ln = limb_state(&w, it);
        double dmin = ln.dmin, dmax = ln.dmax;
        dv s = ln.s, m0 = ln.m, e0 = ln.e;
        dv dir = random_unit(&r);
        dv target = dv_add(s, dv_scale(dir, 0.7 * dmax)), pole = {0, 0, 1};
        double want_len = -1.0; /* < 0: reach the target */
        dv want_dir = dir;
        bool no_axis = it / 64 == 1;
        switch (kind) {
        case 0: /* target exactly on the start joint */
            target = s;
            want_len = dmin;
            want_dir = dv_unit(dv_sub(e0, s));
            break;
        case 1: /* pole along the target axis */
            pole = dv_scale(dir, 2.0);
            break;
        case 2: /* pole against the target axis */
            pole = dv_scale(dir, -0.5);
            break;
        case 3: /* no pole */
            pole = (dv){0, 0, 0};
            break;
        case 4: /* target on the mid joint */
            target = m0;
            want_dir = dv_unit(dv_sub(m0, s));
            break;
        case 5: /* exactly at full reach, no softening: straight */
            target = dv_add(s, dv_scale(dir, dmax));
            break;
        case 6: /* far beyond reach along the current chain */
            target = dv_add(s, dv_scale(dv_unit(dv_sub(e0, s)), 10.0));
            want_dir = dv_unit(dv_sub(e0, s));
            want_len = soft_ref(dv_len(dv_sub(target, s)), dmin, dmax, 0.97);
            break;
        default: /* no pole and no hinge on a straight chain */
            pole = (dv){0, 0, 0};
            no_axis = true;
            break;
        }
        cb_ik_two_bone_result res;
        cb_ik_two_bone_job j = two_bone(&w, L, target, pole, &res);
        j.soften = kind == 5 ? 1.0f : 0.0f;
        if (no_axis) {
            memset(j.mid_axis, 0, sizeof j.mid_axis);
        }
        cb_error err = {0};
        cb_result got = cb_ik_two_bone_job_run(&j, &err);
        CB_CHECK(got == CB_OK, "case %d: %s", it, err.message);
        for (int k = 0; k < 4; ++k) {
            CB_CHECK(isfinite(res.start_correction[k]) && isfinite(res.mid_correction[k]),
                     "case %d: correction not finite", it);
        }
        model_double(&w, w.out);
        dv e = dv_sub(pos_d(&w, L->end), s);
        double len = dv_len(e);
        double tol = 5e-6;
        if (want_len < 0.0) {
            double dd = soft_ref(dv_len(dv_sub(target, s)), dmin, dmax, kind == 5 ? 1.0 : 0.97);
            CB_CHECK(fabs(len - dd) < tol,
                     "case %d (kind %d, %s): |end - start| %.7f, want "
                     "%.7f",
                     it, kind, L->name, len, dd);
        } else {
            CB_CHECK(fabs(len - want_len) < tol,
                     "case %d (kind %d): |end - start| %.7f, want "
                     "%.7f",
                     it, kind, len, want_len);
        }
        if (len > 1e-3) {
            CB_CHECK(dv_angle(e, want_dir) < 1e-4,
                     "case %d (kind %d, %s): end direction off by "
                     "%.3g rad",
                     it, kind, L->name, dv_angle(e, want_dir));
        }
    }
    world_free(&w);
}

/* ---- two-bone IK: general chains, both model sources, bad geometry -------------------------- */

/* Random skeletons (random rest rotations, a uniform scale of 0.8-1.25 per joint compounding
 * down the hierarchy), chains with joints in between, hinges at any angle to the bones (or taken
 * from the pose): targets inside the generalized reach of the header are reached. The error is
 * relative to the scale of the coordinates involved, the chain's length plus the start joint's
 * distance from the origin (float positions round at their own magnitude, which compounding
 * scales make up to several metres). Measured maximum over the configurations and 40 seeds
 * 6.4e-7; bound 1.3e-6. (Before from_to computed 1 + a.b as |a + b|^2 / 2 this was 2.8e-6:
 * chains swung by nearly 180 degrees lost digits in the cancellation.) */
static void ik_two_bone_random_skeletons(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_err_track rel = cb_err_track_make("two-bone random chains |end - target| (rel)");
    size_t tried = 0;
    for (int it = 0; it < 400; ++it) {
        size_t n = 8 + cb_prng_below(&r, 40);
        cb_skeleton *s = cb_test_random_skeleton(&r, n, true, true);
        const int32_t *parents = cb_skeleton_parents(s);
        cb_xform_group *pose = cb_test_pose_alloc(s, false), *out = cb_test_pose_alloc(s, false);
        size_t groups = cb_skeleton_group_count(s);
        memcpy(pose, cb_skeleton_rest_pose(s).ptr, cb_skeleton_pose_bytes(s));
        /* A chain: end, an ancestor of it as mid, an ancestor of that as start (1-2 levels). */
        uint32_t e = (uint32_t)(n - 1 - cb_prng_below(&r, (uint32_t)n / 2));
        int32_t m = parents[e];
        if (m > 0 && cb_prng_below(&r, 3) == 0 && parents[m] > 0) {
            m = parents[m];
        }
        int32_t st = m > 0 ? parents[m] : -1;
        if (st > 0 && cb_prng_below(&r, 3) == 0 && parents[st] >= 0) {
            st = parents[st];
        }
        dref_xform *local = malloc(n * sizeof *local);
        dref_mat *dm = malloc(n * sizeof *dm);
        for (size_t j = 0; j < n; ++j) {
            local[j] = dref_from_pose(pose, j);
        }
        dref_local_to_model(parents, n, local, dm);
        if (st < 0) {
            goto next;
        }
        dv ps = {dm[st].m[3][0], dm[st].m[3][1], dm[st].m[3][2]};
        dv pm = {dm[m].m[3][0], dm[m].m[3][1], dm[m].m[3][2]};
        dv pe = {dm[e].m[3][0], dm[e].m[3][1], dm[e].m[3][2]};
        dv u = dv_sub(pm, ps), l = dv_sub(pe, pm);
        double a = dv_len(u), b = dv_len(l);
        dv axis = cb_prng_below(&r, 4) == 0 ? (dv){0, 0, 0} : random_unit(&r);
        dv nrm;
        if (dv_len(axis) > 0.0) {
            const dref_mat *mm = &dm[m];
            nrm = dv_unit((dv){mm->m[0][0] * axis.x + mm->m[1][0] * axis.y + mm->m[2][0] * axis.z,
                               mm->m[0][1] * axis.x + mm->m[1][1] * axis.y + mm->m[2][1] * axis.z,
                               mm->m[0][2] * axis.x + mm->m[1][2] * axis.y + mm->m[2][2] * axis.z});
        } else {
            nrm = dv_unit(dv_cross(u, l));
        }
        double un = dv_dot(u, nrm), ln = dv_dot(l, nrm);
        double p = dv_len(dv_sub(u, dv_scale(nrm, un))), q = dv_len(dv_sub(l, dv_scale(nrm, ln)));
        if (a < 0.02 || b < 0.02 || p * q < 0.05 * a * b) {
            goto next; /* short bones, or a hinge nearly along a bone: ill-conditioned */
        }
        double dmax = sqrt((un + ln) * (un + ln) + (p + q) * (p + q));
        double dmin = sqrt((un + ln) * (un + ln) + (p - q) * (p - q));
        if (0.97 * dmax - dmin < 0.05 * dmax) {
            goto next; /* a hinge so oblique that nearly nothing is reachable */
        }
        double d = dmin + (0.97 * dmax - dmin) * (0.02 + 0.96 * cb_prng_double(&r));
        dv dir = random_unit(&r);
        dv target = dv_add(ps, dv_scale(dir, d));
        cb_ik_two_bone_result res;
        cb_ik_two_bone_job j = {.skeleton = s,
                                .pose = {pose, groups},
                                .out = {out, groups},
                                .start_joint = (uint32_t)st,
                                .mid_joint = (uint32_t)m,
                                .end_joint = e,
                                .weight = 1.0f,
                                .result = &res};
        dv_store(target, j.target);
        dv_store(random_pole(&r, dir), j.pole);
        dv_store(axis, j.mid_axis);
        cb_error err = {0};
        cb_result got = cb_ik_two_bone_job_run(&j, &err);
        CB_CHECK(got == CB_OK, "iteration %d: %s", it, err.message);
        CB_CHECK(res.reached, "iteration %d: not reached (d %g in [%g, %g])", it, d, dmin,
                 0.97 * dmax);
        for (size_t k = 0; k < n; ++k) {
            local[k] = dref_from_pose(out, k);
        }
        dref_local_to_model(parents, n, local, dm);
        dv got_e = {dm[e].m[3][0], dm[e].m[3][1], dm[e].m[3][2]};
        cb_err_track_add(&rel, dv_len(dv_sub(got_e, target)) / (a + b + dv_len(ps)), 0.0,
                         (size_t)it);
        tried++;
    next:
        free(local), free(dm), free(pose), free(out);
        cb_skeleton_destroy(s);
    }
    cb_test_note("%zu random chains solved", tried);
    CB_CHECK(tried > 150, "too few usable chains (%zu)", tried);
    cb_err_track_check(&rel, 1.3e-6);
}

/* Model space read from local-to-model matrices (both layouts) gives the corrections computed
 * from the pose, to float rounding; and applying the reported corrections by hand (local
 * rotation times correction) gives the pose the job wrote. */
static void ik_two_bone_model_sources_and_corrections_agree(void **state)
{
    (void)state;
    world w = world_make();
    cb_prng r = cb_test_prng(__func__);
    float *m3 = calloc(w.n * 12, sizeof(float));
    cb_err_track src = cb_err_track_make("two-bone corrections, model vs pose path");
    cb_err_track hand = cb_err_track_make("two-bone corrections applied by hand");
    for (int it = 0; it < 400; ++it) {
        new_pose(&w, &r);
        model_float(&w, w.pose, 0);
        cb_ltm_job l3 = {.skeleton = w.s,
                         .local = {w.pose, w.groups},
                         .model_layout = CB_MATRIX_LAYOUT_MAT3X4,
                         .model = {m3, w.n * 12}};
        assert_int_equal(cb_ltm_job_run(&l3, NULL), CB_OK);
        const limb *L = &w.limb[it % 4];
        dv s = pos_d(&w, L->start);
        dv dir = random_unit(&r);
        dv target = dv_add(s, dv_scale(dir, cb_prng_range(&r, 0.1f, 1.2f)));
        cb_ik_two_bone_result a, b, c;
        cb_ik_two_bone_job j = two_bone(&w, L, target, random_pole(&r, dir), &a);
        if (it % 3 == 0) {
            memset(j.mid_axis, 0, sizeof j.mid_axis);
        }
        assert_int_equal(cb_ik_two_bone_job_run(&j, NULL), CB_OK);
        j.out = (cb_xform_group_span){NULL, 0};
        j.result = &b;
        j.model = (cb_float_cspan){w.model, w.n * 16};
        assert_int_equal(cb_ik_two_bone_job_run(&j, NULL), CB_OK);
        j.result = &c;
        j.model = (cb_float_cspan){m3, w.n * 12};
        j.model_layout = CB_MATRIX_LAYOUT_MAT3X4;
        assert_int_equal(cb_ik_two_bone_job_run(&j, NULL), CB_OK);
        for (int k = 0; k < 4; ++k) {
            cb_err_track_add(&src, b.start_correction[k], a.start_correction[k], (size_t)it);
            cb_err_track_add(&src, b.mid_correction[k], a.mid_correction[k], (size_t)it);
            /* The two layouts hold the same numbers: bit-identical corrections. */
            CB_CHECK(b.start_correction[k] == c.start_correction[k] &&
                         b.mid_correction[k] == c.mid_correction[k],
                     "3x4 and 4x4 model matrices disagree");
        }
        CB_CHECK(a.start_correction[3] >= 0.0f && a.mid_correction[3] >= 0.0f, "w < 0");
        /* By hand, in double: local * correction, normalized. */
        const uint32_t js[2] = {L->start, L->mid};
        const float *cs[2] = {a.start_correction, a.mid_correction};
        for (int k = 0; k < 2; ++k) {
            dref_xform x = dref_from_pose(w.pose, js[k]), y = dref_from_pose(w.out, js[k]);
            double cq[4] = {cs[k][0], cs[k][1], cs[k][2], cs[k][3]}, q[4];
            dref_quat_mul(x.q, cq, q);
            dref_quat_normalize(q);
            for (int e = 0; e < 4; ++e) {
                cb_err_track_add(&hand, y.q[e], q[e], (size_t)it);
            }
        }
    }
    /* Model matrices from local-to-model (top-down products) and from the job's own bottom-up
     * products differ by a few roundings per level, and the corrections by as much (measured
     * 3.1e-6 over configurations and 40 seeds). By hand: one product and one normalization
     * (measured 1.6e-7). */
    cb_err_track_check(&src, 6e-6);
    cb_err_track_check(&hand, 3.5e-7);
    free(m3);
    world_free(&w);
}

/* ---- the model frames from the pose, against the scalar products they replaced ------------ */

/* Model matrices (4x4) that hold, at the chain joints js[0..n), the scalar float frames the
 * jobs multiplied before session 6: the first joint's bottom-up product from the root, each
 * next one the frame before times the bottom-up product of the path between them (ik.c's
 * order). The other joints' matrices are left as they are (the jobs read only the chain's). */
static void scalar_chain_model(const world *w, const uint32_t *js, size_t n, float *m4)
{
    cb_test_fmat f = cb_test_fmat_path(w->s, w->pose, js[0], -1);
    for (size_t k = 0; k < n; ++k) {
        if (k > 0) {
            cb_test_fmat rel = cb_test_fmat_path(w->s, w->pose, js[k], (int32_t)js[k - 1]);
            f = cb_test_fmat_mul(&f, &rel);
        }
        float *m = m4 + 16 * (size_t)js[k];
        for (int c = 0; c < 4; ++c) {
            memcpy(m + 4 * c, f.c[c], sizeof f.c[c]);
            m[4 * c + 3] = c == 3 ? 1.0f : 0.0f;
        }
    }
}

/* The jobs compute their chain's model frames from the pose with 4-wide columns (simd/col4.h)
 * since session 6, where they multiplied scalar float frames: every operation the same, so the
 * same bits. Checked here for each job: the job from the pose gives the corrections (and the
 * pose), bit for bit, of the job given model matrices that hold the scalar products at the
 * chain's joints. Two-bone IK on the four limbs with and without a hinge axis; the
 * positions of cb_ik_joint_position are pinned in tests/test_ik_kernels.c. */
static void ik_two_bone_pose_frames_are_the_scalar_products(void **state)
{
    (void)state;
    world w = world_make();
    cb_prng r = cb_test_prng(__func__);
    float *m4 = calloc(w.n * 16, sizeof(float));
    for (int it = 0; it < 400; ++it) {
        new_pose(&w, &r);
        const limb *L = &w.limb[it % 4];
        const uint32_t js[3] = {L->start, L->mid, L->end};
        scalar_chain_model(&w, js, 3, m4);
        dv s = pos_d(&w, L->start), dir = random_unit(&r);
        dv target = dv_add(s, dv_scale(dir, cb_prng_range(&r, 0.1f, 1.2f)));
        cb_ik_two_bone_result a, b;
        cb_ik_two_bone_job j = two_bone(&w, L, target, random_pole(&r, dir), &a);
        if (it % 3 == 0) {
            memset(j.mid_axis, 0, sizeof j.mid_axis);
        }
        j.out = (cb_xform_group_span){NULL, 0};
        assert_int_equal(cb_ik_two_bone_job_run(&j, NULL), CB_OK);
        j.result = &b;
        j.model = (cb_float_cspan){m4, w.n * 16};
        assert_int_equal(cb_ik_two_bone_job_run(&j, NULL), CB_OK);
        CB_CHECK(memcmp(a.start_correction, b.start_correction, sizeof a.start_correction) == 0 &&
                     memcmp(a.mid_correction, b.mid_correction, sizeof a.mid_correction) == 0 &&
                     a.reached == b.reached,
                 "pose %d, %s: the frames from the pose are not the scalar products", it, L->name);
    }
    free(m4);
    world_free(&w);
}

/* The same for orientation warping (whose turns depend on every chain frame's linear part):
 * the pelvis and 0-3 spine joints, random shares and angles. */
static void ik_orient_pose_frames_are_the_scalar_products(void **state)
{
    (void)state;
    world w = world_make();
    cb_prng r = cb_test_prng(__func__);
    float *m4 = calloc(w.n * 16, sizeof(float));
    cb_xform_group *first = cb_test_pose_alloc(w.s, false);
    const char *spine[3] = {"spine_01", "spine_02", "spine_03"};
    for (int it = 0; it < 400; ++it) {
        new_pose(&w, &r);
        size_t n = (size_t)(it % 4);
        cb_ik_aim_joint chain[3];
        uint32_t js[4] = {joint(&w, "pelvis")};
        for (size_t k = 0; k < n; ++k) {
            js[k + 1] = joint(&w, spine[k]);
            chain[k] = (cb_ik_aim_joint){js[k + 1], cb_prng_range(&r, 0.0f, 1.0f / 3.0f)};
        }
        scalar_chain_model(&w, js, n + 1, m4);
        cb_ik_orient_result a, b;
        cb_ik_orient_job j = {.skeleton = w.s,
                              .pose = {w.pose, w.groups},
                              .out = {first, w.groups},
                              .hip_joint = js[0],
                              .spine = {chain, n},
                              .angle = cb_prng_range(&r, -1.5f, 1.5f),
                              .weight = 1.0f,
                              .result = &a};
        assert_int_equal(cb_ik_orient_job_run(&j, NULL), CB_OK);
        j.out = (cb_xform_group_span){w.out, w.groups};
        j.result = &b;
        j.model = (cb_float_cspan){m4, w.n * 16};
        assert_int_equal(cb_ik_orient_job_run(&j, NULL), CB_OK);
        CB_CHECK(memcmp(first, w.out, w.bytes) == 0 &&
                     memcmp(&a.angle, &b.angle, sizeof a.angle) == 0 && a.limited == b.limited,
                 "pose %d, %zu spine joints: the frames from the pose are not the scalar products",
                 it, n);
    }
    free(first);
    free(m4);
    world_free(&w);
}

/* Bad geometry in the pose: a zero-length bone, NaN or Inf on the chain or its ancestors, a
 * coordinate beyond CB_IK_MAX_COORDINATE, NaN in given model matrices. Each gets its code and
 * a message, and nothing is written; NaN elsewhere in the pose (not on the chain's path) does
 * not stop the job and never reaches the chain. */
static void ik_two_bone_bad_pose_geometry(void **state)
{
    (void)state;
    world w = world_make();
    cb_prng r = cb_test_prng(__func__);
    random_pose(&w, &r, w.pose);
    model_float(&w, w.pose, 0);
    const size_t wd = cb_simd_width();
    uint32_t pelvis = joint(&w, "pelvis"), head = joint(&w, "head");
    cb_xform_group *clean = cb_test_pose_alloc(w.s, false);
    memcpy(clean, w.pose, w.bytes);
    struct {
        uint32_t joint;
        int comp;
        float value;
        int model; /* 0: none; 1: given, the value goes into it; 2: given, value in pose */
        cb_result want;
        const char *needle;
    } cases[] = {
        {0, 0, 0.0f, 0, CB_ERR_DEGENERATE, "bone"},           /* calf at the thigh */
        {1, 1, 0.0f, 0, CB_ERR_DEGENERATE, "bone"},           /* foot at the calf */
        {0, 4, NAN, 0, CB_ERR_NOT_FINITE, "not finite"},      /* calf rotation */
        {2, 0, INFINITY, 0, CB_ERR_NOT_FINITE, "not finite"}, /* pelvis translation */
        {2, 0, 3e9f, 0, CB_ERR_INVALID_ARGUMENT, "CB_IK_MAX_COORDINATE"},
        {1, 12, NAN, 1, CB_ERR_NOT_FINITE, "not finite"},     /* foot's matrix */
        {0, 6, NAN, 2, CB_ERR_NOT_FINITE, "local rotation"},  /* calf, matrices fine */
        {1, 5, INFINITY, 1, CB_ERR_NOT_FINITE, "not finite"}, /* foot's matrix, linear part */
        {2, 1, -3e9f, 0, CB_ERR_INVALID_ARGUMENT, "CB_IK_MAX_COORDINATE"},
        {3, 0, NAN, 0, CB_OK, ""}, /* head: off the path */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        memcpy(w.pose, clean, w.bytes);
        model_float(&w, w.pose, 0);
        const limb *L = &w.limb[0];
        uint32_t j = cases[k].joint == 0   ? L->mid
                     : cases[k].joint == 1 ? L->end
                     : cases[k].joint == 2 ? pelvis
                                           : head;
        if (cases[k].model == 1) {
            w.model[16 * (size_t)j + (size_t)cases[k].comp] = cases[k].value;
        } else if (cases[k].value == 0.0f) {
            /* A zero-length bone: the joint's translation zeroed. */
            float *g = (float *)w.pose + (j / wd) * 10 * wd;
            for (int c = 0; c < 3; ++c) {
                g[c * wd + j % wd] = 0.0f;
            }
        } else {
            float *g = (float *)w.pose + (j / wd) * 10 * wd;
            g[(size_t)cases[k].comp * wd + j % wd] = cases[k].value;
        }
        cb_xform_group *before = cb_test_pose_alloc(w.s, false);
        memcpy(before, w.pose, w.bytes);
        memset(w.out, 0x3c, w.bytes);
        cb_xform_group *out_before = cb_test_pose_alloc(w.s, false);
        memcpy(out_before, w.out, w.bytes);
        cb_ik_two_bone_result res;
        memset(&res, 0x11, sizeof res);
        cb_ik_two_bone_job job = two_bone(&w, L, (dv){0.1, 0.4, 0.2}, (dv){0, 0, 1}, &res);
        if (cases[k].model != 0) {
            job.model = (cb_float_cspan){w.model, w.n * 16};
        }
        cb_error err = {0};
        cb_result got = cb_ik_two_bone_job_run(&job, &err);
        CB_CHECK(got == cases[k].want, "case %zu: %s, want %s (%s)", k, cb_result_str(got),
                 cb_result_str(cases[k].want), err.message);
        CB_CHECK(strstr(err.message, cases[k].needle) != NULL, "case %zu: \"%s\" lacks \"%s\"", k,
                 err.message, cases[k].needle);
        assert_memory_equal(w.pose, before, w.bytes);
        if (got != CB_OK) {
            assert_memory_equal(w.out, out_before, w.bytes);
        } else {
            for (int c = 0; c < 4; ++c) {
                CB_CHECK(isfinite(res.start_correction[c]) && isfinite(res.mid_correction[c]),
                         "NaN reached the chain");
            }
        }
        free(before), free(out_before);
    }
    /* A skeleton whose bone has zero length in its rest pose. */
    const char *names[3] = {"a", "b", "c"};
    const int32_t parents[3] = {-1, 0, 1};
    cb_xform rest[3] = {cb_xform_identity(), cb_xform_identity(), cb_xform_identity()};
    rest[2].translation[1] = 0.5f; /* b sits on a: bone a-b is zero */
    cb_skeleton_desc d = {.joint_count = 3, .names = names, .parents = parents, .rest_pose = rest};
    cb_skeleton *s = NULL;
    assert_int_equal(cb_skeleton_create(&d, &s, NULL), CB_OK);
    cb_ik_two_bone_result res;
    cb_ik_two_bone_job job = {.skeleton = s,
                              .pose = cb_skeleton_rest_pose(s),
                              .start_joint = 0,
                              .mid_joint = 1,
                              .end_joint = 2,
                              .target = {0, 0.3f, 0.1f},
                              .weight = 1.0f,
                              .result = &res};
    cb_error err = {0};
    assert_int_equal(cb_ik_two_bone_job_run(&job, &err), CB_ERR_DEGENERATE);
    CB_CHECK(strstr(err.message, "joint 0 to joint 1") != NULL, "message: %s", err.message);
    cb_skeleton_destroy(s);
    free(clean);
    world_free(&w);
}

/* The leg of two-bone jobs and the spine of orientation warps whose paths from the root the
 * rotation tests below spoil: root, pelvis, the right leg's three joints, spine_02 (the
 * spine's second joint; spine_01 its first). */
typedef struct rot_path {
    const limb *leg;
    uint32_t joints[6];
    cb_ik_aim_joint spine[2];
} rot_path;

static rot_path rot_path_make(world *w)
{
    const limb *L = &w->limb[1];
    rot_path p = {
        L,
        {joint(w, "root"), joint(w, "pelvis"), L->start, L->mid, L->end, joint(w, "spine_02")},
        {{joint(w, "spine_01"), 0.5f}, {joint(w, "spine_02"), 0.5f}}};
    return p;
}

/* The orientation warp over p's spine (0.4 rad, weight 1), from the pose. */
static cb_ik_orient_job rot_path_orient(const world *w, const rot_path *p)
{
    return (cb_ik_orient_job){.skeleton = w->s,
                              .pose = {w->pose, w->groups},
                              .out = {w->out, w->groups},
                              .hip_joint = p->joints[1],
                              .spine = {p->spine, 2},
                              .angle = 0.4f,
                              .weight = 1.0f};
}

/* A NaN or an infinity in any rotation component of a joint on the path from the root to a chain
 * (the chain's joints and their ancestors), in a pose without model matrices, is refused with
 * CB_ERR_NOT_FINITE by two-bone IK and by orientation warping, and nothing is written: the
 * kernels' quick check tests only the frames computed from such a pose (not the rotations
 * again), which holds if every such value reaches the frames. Each case on a fresh random pose;
 * the same pose without it solves. */
static void ik_pose_rotation_not_finite_refused(void **state)
{
    (void)state;
    world w = world_make();
    cb_prng r = cb_test_prng(__func__);
    const size_t wd = cb_simd_width();
    const rot_path rp = rot_path_make(&w);
    const limb *L = rp.leg;
    const uint32_t *path = rp.joints;
    const float bad[3] = {NAN, INFINITY, -INFINITY};
    cb_xform_group *out_before = cb_test_pose_alloc(w.s, false);
    for (size_t k = 0; k < 6; ++k) {
        for (size_t comp = 3; comp < 7; ++comp) { /* the rotation's x, y, z, w */
            for (size_t v = 0; v < 3; ++v) {
                new_pose(&w, &r);
                cb_ik_two_bone_result res;
                cb_ik_two_bone_job tb = two_bone(&w, L, (dv){-0.1, 0.3, 0.2}, (dv){0, 0, 1}, &res);
                cb_ik_orient_job oj = rot_path_orient(&w, &rp);
                bool on_leg = k < 5, on_spine = k < 2 || k == 5;
                assert_int_equal(cb_ik_two_bone_job_run(&tb, NULL), CB_OK);
                assert_int_equal(cb_ik_orient_job_run(&oj, NULL), CB_OK);
                float *g = (float *)w.pose + (path[k] / wd) * 10 * wd;
                g[comp * wd + path[k] % wd] = bad[v];
                memset(w.out, 0x3c, w.bytes);
                memcpy(out_before, w.out, w.bytes);
                cb_error err = {0};
                cb_result got = cb_ik_two_bone_job_run(&tb, &err);
                CB_CHECK(got == (on_leg ? CB_ERR_NOT_FINITE : CB_OK),
                         "two-bone, joint %u, component %zu, value %g: %s (%s)", path[k], comp,
                         (double)bad[v], cb_result_str(got), err.message);
                if (on_leg) {
                    assert_memory_equal(w.out, out_before, w.bytes);
                    CB_CHECK(strstr(err.message, "not finite") != NULL, "message: %s", err.message);
                }
                err = (cb_error){0};
                got = cb_ik_orient_job_run(&oj, &err);
                CB_CHECK(got == (on_spine ? CB_ERR_NOT_FINITE : CB_OK),
                         "orient, joint %u, component %zu, value %g: %s (%s)", path[k], comp,
                         (double)bad[v], cb_result_str(got), err.message);
                if (on_spine) {
                    CB_CHECK(strstr(err.message, "not finite") != NULL, "message: %s", err.message);
                }
            }
        }
    }
    free(out_before);
    world_free(&w);
}

/* The joint a chain check's message names ("joint %u"), UINT32_MAX when none. */
static uint32_t named_joint(const char *message)
{
    const char *at = strstr(message, "joint ");
    unsigned j = 0;
    return at != NULL && sscanf(at, "joint %u", &j) == 1 ? (uint32_t)j : UINT32_MAX;
}

/* A finite rotation that is not unit, scaled by 1e-3, 3, 1e15 (frames far beyond
 * CB_IK_MAX_COORDINATE) or 1e25 (products beyond FLT_MAX) on a joint of the path from the root to
 * a chain, in a pose without model matrices: the quick chain check reads only the frames
 * computed from the pose, and the verdict is theirs: the same code, naming the same joint, as
 * the same job given the model matrices the library's local-to-model makes of that pose (where
 * the rotations are checked too, and are finite), never "the local rotation is not finite";
 * the modest scales solve. Two-bone IK and orientation warping, each case on a fresh random
 * pose. */
static void ik_pose_rotation_not_unit_judged_by_frames(void **state)
{
    (void)state;
    world w = world_make();
    cb_prng r = cb_test_prng(__func__);
    const float scale[4] = {1e-3f, 3.0f, 1e15f, 1e25f};
    const rot_path rp = rot_path_make(&w);
    const uint32_t *path = rp.joints;
    const size_t wd = cb_simd_width();
    int refused = 0;
    for (size_t k = 0; k < 6; ++k) {
        for (size_t v = 0; v < 4; ++v) {
            for (int rep = 0; rep < 3; ++rep) {
                new_pose(&w, &r);
                float *g = (float *)w.pose + (path[k] / wd) * 10 * wd;
                for (size_t comp = 3; comp < 7; ++comp) {
                    g[comp * wd + path[k] % wd] *= scale[v];
                }
                cb_ltm_job lj = {
                    .skeleton = w.s, .local = {w.pose, w.groups}, .model = {w.model, w.n * 16}};
                assert_int_equal(cb_ltm_job_run(&lj, NULL), CB_OK);
                for (int job = 0; job < 2; ++job) {
                    cb_result got[2];
                    cb_error err[2] = {{0}, {0}};
                    for (int from_model = 0; from_model < 2; ++from_model) {
                        cb_float_cspan model = {from_model ? w.model : NULL, w.n * 16};
                        if (job == 0) {
                            cb_ik_two_bone_result res;
                            cb_ik_two_bone_job tb =
                                two_bone(&w, rp.leg, (dv){-0.1, 0.3, 0.2}, (dv){0, 0, 1}, &res);
                            tb.model = from_model ? model : tb.model;
                            got[from_model] = cb_ik_two_bone_job_run(&tb, &err[from_model]);
                        } else {
                            cb_ik_orient_job oj = rot_path_orient(&w, &rp);
                            oj.model = from_model ? model : oj.model;
                            got[from_model] = cb_ik_orient_job_run(&oj, &err[from_model]);
                        }
                    }
                    CB_CHECK(got[0] == got[1] &&
                                 named_joint(err[0].message) == named_joint(err[1].message),
                             "%s, joint %u scaled by %g: from the pose %s (%s), from the model "
                             "matrices %s (%s)",
                             job == 0 ? "two-bone" : "orient", path[k], (double)scale[v],
                             cb_result_str(got[0]), err[0].message, cb_result_str(got[1]),
                             err[1].message);
                    CB_CHECK(strstr(err[0].message, "local rotation") == NULL, "message: %s",
                             err[0].message);
                    CB_CHECK(got[0] == CB_OK || scale[v] > 3.0f, "%s, joint %u scaled by %g: %s",
                             job == 0 ? "two-bone" : "orient", path[k], (double)scale[v],
                             err[0].message);
                    refused += got[0] != CB_OK;
                }
            }
        }
    }
    CB_CHECK(refused > 20, "only %d cases refused", refused);
    world_free(&w);
}

/* ---- aim IK -------------------------------------------------------------------------------- */

typedef struct aim_setup {
    const char *name;
    const char *joints[5];
    float weights[5];
    size_t count;
    float forward[3], up[3], offset[3];
} aim_setup;

/* Head look-at (the eyes' midpoint as the offset), over the head alone, neck + head, and the
 * whole spine; and pointing the right arm (its -Y axis) by turning the upper spine and the
 * shoulder. */
static const aim_setup aim_setups[4] = {
    {"head", {"head"}, {1.0f}, 1, {0, 0, 1}, {0, 1, 0}, {0.0f, 0.075f, 0.085f}},
    {"neck+head", {"neck", "head"}, {0.5f, 1.0f}, 2, {0, 0, 1}, {0, 1, 0}, {0.0f, 0.075f, 0.085f}},
    {"spine..head",
     {"spine_01", "spine_02", "spine_03", "neck", "head"},
     {0.15f, 0.2f, 0.25f, 0.4f, 1.0f},
     5,
     {0, 0, 1},
     {0, 1, 0},
     {0.0f, 0.075f, 0.085f}},
    {"weapon arm",
     {"spine_03", "upperarm_r"},
     {0.4f, 1.0f},
     2,
     {0, -1, 0},
     {0, 0, 1},
     {0.0f, -0.3f, 0.0f}},
};

typedef struct aim_case {
    cb_ik_aim_joint chain[5];
    cb_ik_aim_job job;
    cb_ik_aim_result res;
    float corr[20];
    uint32_t end;
    dv o0, f0, u0; /* the aimed ray's origin and direction, and the up axis, before the job */
} aim_case;

static void aim_make(world *w, const aim_setup *a, aim_case *c)
{
    memset(c, 0, sizeof *c);
    for (size_t k = 0; k < a->count; ++k) {
        c->chain[k] = (cb_ik_aim_joint){joint(w, a->joints[k]), a->weights[k]};
    }
    c->end = c->chain[a->count - 1].joint;
    c->job = (cb_ik_aim_job){.skeleton = w->s,
                             .pose = {w->pose, w->groups},
                             .out = {w->out, w->groups},
                             .chain = {c->chain, a->count},
                             .weight = 1.0f,
                             .corrections = {c->corr, 4 * a->count},
                             .result = &c->res};
    memcpy(c->job.forward, a->forward, sizeof a->forward);
    memcpy(c->job.up, a->up, sizeof a->up);
    memcpy(c->job.offset, a->offset, sizeof a->offset);
}

/* In the double model w->dm: the aimed ray's origin and direction, and the up axis. */
static void aim_ray(const world *w, const aim_case *c, dv *origin, dv *fwd, dv *up)
{
    *origin = dv_add(pos_d(w, c->end), lin_d(w, c->end, dv_of(c->job.offset)));
    *fwd = dv_unit(lin_d(w, c->end, dv_of(c->job.forward)));
    *up = dv_unit(lin_d(w, c->end, dv_of(c->job.up)));
}

/* A new random pose, and the aimed ray in it. */
static void aim_start(world *w, cb_prng *r, aim_case *c)
{
    new_pose(w, r);
    aim_ray(w, c, &c->o0, &c->f0, &c->u0);
}

/* Rotation angle of a unit quaternion. */
static double quat_angle(const float q[4])
{
    double v = sqrt((double)q[0] * q[0] + (double)q[1] * q[1] + (double)q[2] * q[2]);
    return 2.0 * atan2(v, fabs((double)q[3]));
}

/* The forward axis points at the target: random poses, the four setups, targets all around at
 * 0.5-4 m beyond the offset, with and without a pole, model space from the pose or from
 * matrices. With a pole the up axis ends in the plane of the pole and the direction from the
 * end joint to the target, leaning towards the pole (checked where that plane is well defined:
 * the target at least 20 degrees from the pole's line). Bounds: a chain of up to 5 sequential
 * aims, each a few dozen float operations on positions up to 2 m and a normalized rotation,
 * then local-to-model: measured maxima over the configurations and 40 seeds 1.5e-6 rad (aim)
 * and 2.7e-6 (up, a sine); bounds 3e-6 and 6e-6. */
static void ik_aim_points_at_the_target(void **state)
{
    (void)state;
    world w = world_make();
    cb_prng r = cb_test_prng(__func__);
    cb_err_track aim = cb_err_track_make("aim forward vs target (rad)");
    cb_err_track upe = cb_err_track_make("aim up off the pole plane");
    for (int it = 0; it < 1200; ++it) {
        const aim_setup *a = &aim_setups[it % 4];
        aim_case c;
        aim_make(&w, a, &c);
        aim_start(&w, &r, &c);
        double reach = dv_len(dv_of(a->offset));
        double dist = 2.0 * reach + cb_prng_range(&r, 0.5f, 4.0f);
        dv target = dv_add(c.o0, dv_scale(random_unit(&r), dist));
        dv_store(target, c.job.target);
        bool pole = it % 2 == 0;
        if (pole) {
            c.job.pole[1] = 1.0f;
        }
        if (it % 3 == 0) {
            model_float(&w, w.pose, 0);
            c.job.model = (cb_float_cspan){w.model, w.n * 16};
        }
        cb_error err = {0};
        cb_result got = cb_ik_aim_job_run(&c.job, &err);
        CB_CHECK(got == CB_OK, "iteration %d: %s", it, err.message);
        CB_CHECK(c.res.reached && !c.res.limited, "iteration %d (%s): not reached", it, a->name);
        CB_CHECK(c.res.first_joint == c.chain[0].joint, "first_joint %u", c.res.first_joint);
        uint32_t js[5];
        for (size_t k = 0; k < a->count; ++k) {
            js[k] = c.chain[k].joint;
        }
        check_only_rotations_changed(&w, w.pose, w.out, js, a->count);
        model_double(&w, w.out);
        dv o, f, u;
        aim_ray(&w, &c, &o, &f, &u);
        cb_err_track_add(&aim, dv_angle(f, dv_sub(target, o)), 0.0, (size_t)it);
        dv t = dv_unit(dv_sub(target, pos_d(&w, c.end)));
        if (pole && dv_len(dv_cross(t, (dv){0, 1, 0})) > 0.35) {
            dv side = dv_unit(dv_cross(t, (dv){0, 1, 0}));
            cb_err_track_add(&upe, dv_dot(u, side), 0.0, (size_t)it);
            dv up_perp = dv_sub(u, dv_scale(t, dv_dot(u, t)));
            dv pole_perp = dv_sub((dv){0, 1, 0}, dv_scale(t, t.y));
            CB_CHECK(dv_dot(up_perp, pole_perp) > 0.0, "iteration %d: up leans away from the pole",
                     it);
        }
    }
    cb_err_track_check(&aim, 3e-6);
    cb_err_track_check(&upe, 6e-6);
    world_free(&w);
}

/* The same for aim IK (whose turns depend on the end frame's linear part: the forward and up
 * axes): chains of 1-5 joints (the four setups), with and without a pole. */
static void ik_aim_pose_frames_are_the_scalar_products(void **state)
{
    (void)state;
    world w = world_make();
    cb_prng r = cb_test_prng(__func__);
    float *m4 = calloc(w.n * 16, sizeof(float));
    cb_xform_group *first = cb_test_pose_alloc(w.s, false);
    for (int it = 0; it < 400; ++it) {
        const aim_setup *a = &aim_setups[it % 4];
        aim_case c;
        aim_make(&w, a, &c);
        aim_start(&w, &r, &c);
        uint32_t js[5];
        for (size_t k = 0; k < a->count; ++k) {
            js[k] = c.chain[k].joint;
        }
        scalar_chain_model(&w, js, a->count, m4);
        dv target = dv_add(c.o0, dv_scale(random_unit(&r), cb_prng_range(&r, 0.5f, 4.0f)));
        dv_store(target, c.job.target);
        if (it % 2 == 0) {
            c.job.pole[1] = 1.0f;
        }
        float corr[20];
        cb_ik_aim_result res;
        assert_int_equal(cb_ik_aim_job_run(&c.job, NULL), CB_OK);
        memcpy(corr, c.corr, sizeof corr);
        res = c.res;
        memcpy(first, w.out, w.bytes);
        c.job.model = (cb_float_cspan){m4, w.n * 16};
        assert_int_equal(cb_ik_aim_job_run(&c.job, NULL), CB_OK);
        CB_CHECK(memcmp(corr, c.corr, sizeof corr) == 0 && memcmp(first, w.out, w.bytes) == 0 &&
                     res.reached == c.res.reached && res.limited == c.res.limited,
                 "pose %d, %s: the frames from the pose are not the scalar products", it, a->name);
    }
    free(first);
    free(m4);
    world_free(&w);
}

/* The angle limit: targets swept around the end joint, 1 degree per step from straight ahead
 * to 20 degrees short of straight behind (where no side is preferred and the aim must swing
 * over to one side or the other), for limits of 20-120 degrees. The forward axis never turns
 * more than the limit; targets well inside it are hit; targets well past it leave the axis
 * exactly at the limit; and the axis moves continuously (at most 1.5 degrees per degree of the
 * sweep). "Well": 15 degrees of margin, because the joints before the last move the aimed ray
 * (the spine carries the head by decimetres), so the turn the last joint needs differs from
 * the sweep angle by that parallax. */
static void ik_aim_stops_at_the_limit(void **state)
{
    (void)state;
    world w = world_make();
    cb_prng r = cb_test_prng(__func__);
    cb_err_track at = cb_err_track_make("aim at the limit (rad)");
    cb_err_track in = cb_err_track_make("aim inside the limit vs target (rad)");
    double worst_step = 0.0, over = 0.0;
    const double deg = 3.14159265358979 / 180.0;
    for (int trial = 0; trial < 24; ++trial) {
        const aim_setup *a = &aim_setups[trial % 3];
        aim_case c;
        aim_make(&w, a, &c);
        aim_start(&w, &r, &c);
        double limit = cb_prng_range(&r, 20.0f, 120.0f) * deg;
        c.job.angle_limit = (float)limit;
        /* Sweep about the up axis (sideways; with a pole keeping the head upright every other
         * time), or about a random axis perpendicular to f0 (without a pole: such sweeps pass
         * near straight up, where an upright twist is undefined and the offset eyes swing
         * round with the roll). */
        if (trial % 4 == 0) {
            c.job.pole[1] = 1.0f;
        }
        dv axis = trial % 4 < 2 ? dv_unit(dv_sub(c.u0, dv_scale(c.f0, dv_dot(c.u0, c.f0))))
                                : dv_unit(dv_cross(c.f0, random_unit(&r)));
        dv prev = c.f0;
        for (int k = 0; k <= 160; ++k) {
            double psi = k * deg;
            dv dir = dv_add(dv_scale(c.f0, cos(psi)), dv_scale(dv_cross(axis, c.f0), sin(psi)));
            dv target = dv_add(c.o0, dv_scale(dir, 3.0));
            dv_store(target, c.job.target);
            assert_int_equal(cb_ik_aim_job_run(&c.job, NULL), CB_OK);
            model_double(&w, w.out);
            dv o, f, u;
            aim_ray(&w, &c, &o, &f, &u);
            double phi = dv_angle(c.f0, f);
            over = fmax(over, phi - limit);
            if (psi <= limit * (1.0 - CB_IK_AIM_LIMIT_EASE) - 15.0 * deg) {
                cb_err_track_add(&in, dv_angle(f, dv_sub(target, o)), 0.0, (size_t)k);
                CB_CHECK(!c.res.limited, "trial %d step %d: limited inside the limit", trial, k);
            }
            if (psi >= limit * (1.0 + CB_IK_AIM_LIMIT_EASE) + 15.0 * deg) {
                cb_err_track_add(&at, phi, limit, (size_t)k);
                CB_CHECK(c.res.limited && !c.res.reached, "trial %d step %d: not flagged", trial,
                         k);
            }
            if (k > 0) {
                worst_step = fmax(worst_step, dv_angle(prev, f) / deg);
            }
            prev = f;
        }
    }
    cb_test_note("largest turn past the limit %.3g rad; largest step %.3f degree per degree", over,
                 worst_step);
    /* At the limit the last joint's clamp is exact up to a rotation and local-to-model:
     * measured 8.7e-7 rad (7.2e-7 past it) over configurations and 40 seeds; inside it the aim
     * is as exact as unconstrained (measured 6.5e-7). */
    CB_CHECK(over <= 2e-6, "the forward axis turned %.3g rad past the limit", over);
    cb_err_track_check(&at, 2e-6);
    cb_err_track_check(&in, 1.5e-6);
    CB_CHECK(worst_step <= 1.5, "the aim jumped %.3f degrees in one 1-degree step", worst_step);
    world_free(&w);
}

/* Per-joint weights distribute the turn: neck (weight w) + head (1), no pole. With w = 0 the
 * neck keeps its rotation bit for bit and the head does everything; as w grows the neck turns
 * more and the head less; at w = 1 the neck does it all and the head's correction vanishes.
 * The neck's correction at w is nlerp(identity, its correction at w = 1, w), as documented. And
 * at every w the chain still aims at the target. */
static void ik_aim_weights_distribute_the_turn(void **state)
{
    (void)state;
    world w = world_make();
    cb_prng r = cb_test_prng(__func__);
    cb_err_track share = cb_err_track_make("aim neck share vs nlerp(id, full, w)");
    cb_err_track aim = cb_err_track_make("aim at every neck weight (rad)");
    double head_left = 0.0;
    for (int it = 0; it < 100; ++it) {
        aim_case c;
        aim_make(&w, &aim_setups[1], &c);
        aim_start(&w, &r, &c);
        dv dir;
        do {
            dir = random_unit(&r);
        } while (dv_angle(dir, c.f0) > 1.2 || dv_angle(dir, c.f0) < 0.2);
        dv target = dv_add(c.o0, dv_scale(dir, 1.5));
        dv_store(target, c.job.target);
        float full[4];
        c.chain[0].weight = 1.0f;
        assert_int_equal(cb_ik_aim_job_run(&c.job, NULL), CB_OK);
        memcpy(full, c.corr, sizeof full);
        head_left = fmax(head_left, quat_angle(c.corr + 4));
        double prev_neck = -1.0, prev_head = 10.0;
        for (int k = 0; k <= 4; ++k) {
            float wk = (float)k / 4.0f;
            c.chain[0].weight = wk;
            assert_int_equal(cb_ik_aim_job_run(&c.job, NULL), CB_OK);
            double neck = quat_angle(c.corr), head = quat_angle(c.corr + 4);
            CB_CHECK(neck >= prev_neck - 1e-6 && head <= prev_head + 1e-6,
                     "iteration %d, w %.2f: neck %.4f (before %.4f), head %.4f (before %.4f)", it,
                     (double)wk, neck, prev_neck, head, prev_head);
            prev_neck = neck, prev_head = head;
            /* nlerp(identity, full, w) in double. */
            double q[4] = {wk * full[0], wk * full[1], wk * full[2], 1.0 - wk + wk * full[3]};
            dref_quat_normalize(q);
            for (int e = 0; e < 4; ++e) {
                cb_err_track_add(&share, c.corr[e], q[e], (size_t)it);
            }
            if (k == 0) {
                uint32_t neck_j = c.chain[0].joint;
                dref_xform x = dref_from_pose(w.pose, neck_j), y = dref_from_pose(w.out, neck_j);
                CB_CHECK(memcmp(x.q, y.q, sizeof x.q) == 0, "weight 0 moved the neck");
                CB_CHECK(c.res.first_joint == c.chain[1].joint, "first_joint %u",
                         c.res.first_joint);
            }
            model_double(&w, w.out);
            dv o, f, u;
            aim_ray(&w, &c, &o, &f, &u);
            cb_err_track_add(&aim, dv_angle(f, dv_sub(target, o)), 0.0, (size_t)it);
        }
    }
    cb_test_note("head correction left with the neck at weight 1: %.3g rad", head_left);
    /* At w = 1 the neck puts the target on the ray; what the head adds is rounding (measured
     * 5.4e-7 rad). */
    CB_CHECK(head_left < 1e-6, "the head still turned %.3g rad", head_left);
    /* The share is computed in model space and carried into the joint's frame, which commutes
     * with the nlerp up to rounding (measured 1.3e-7). */
    cb_err_track_check(&share, 3.5e-7);
    cb_err_track_check(&aim, 3e-6);
    world_free(&w);
}

/* Weight 0 and the job's weight: 0 is bit-identical (copy and in place), with identity
 * corrections; a job weight between 0 and 1 nlerps every correction from the identity. */
static void ik_aim_weight(void **state)
{
    (void)state;
    world w = world_make();
    cb_prng r = cb_test_prng(__func__);
    cb_xform_group *before = cb_test_pose_alloc(w.s, false);
    cb_err_track share = cb_err_track_make("aim job weight vs nlerp(id, full, w)");
    for (int it = 0; it < 40; ++it) {
        aim_case c;
        aim_make(&w, &aim_setups[2 + it % 2], &c);
        aim_start(&w, &r, &c);
        memcpy(before, w.pose, w.bytes);
        dv_store(dv_add(c.o0, dv_scale(random_unit(&r), 2.0)), c.job.target);
        c.job.pole[1] = 1.0f;
        c.job.weight = 0.0f;
        memset(w.out, 0x7f, w.bytes);
        assert_int_equal(cb_ik_aim_job_run(&c.job, NULL), CB_OK);
        assert_memory_equal(w.out, w.pose, w.bytes);
        for (size_t k = 0; k < c.job.chain.count; ++k) {
            const float id[4] = {0, 0, 0, 1};
            assert_memory_equal(c.corr + 4 * k, id, sizeof id);
        }
        assert_false(c.res.reached);
        c.job.out.ptr = w.pose;
        assert_int_equal(cb_ik_aim_job_run(&c.job, NULL), CB_OK);
        assert_memory_equal(w.pose, before, w.bytes);
        c.job.out.ptr = w.out;
        c.job.weight = 1.0f;
        assert_int_equal(cb_ik_aim_job_run(&c.job, NULL), CB_OK);
        float full[20];
        memcpy(full, c.corr, sizeof full);
        float wt = cb_prng_range(&r, 0.05f, 0.95f);
        c.job.weight = wt;
        assert_int_equal(cb_ik_aim_job_run(&c.job, NULL), CB_OK);
        assert_false(c.res.reached);
        for (size_t k = 0; k < c.job.chain.count; ++k) {
            const float *fq = full + 4 * k;
            double q[4] = {wt * fq[0], wt * fq[1], wt * fq[2], 1.0 - wt + wt * fq[3]};
            dref_quat_normalize(q);
            for (int e = 0; e < 4; ++e) {
                cb_err_track_add(&share, c.corr[4 * k + e], q[e], (size_t)it);
            }
        }
    }
    /* One nlerp: 2 roundings and a normalization (measured 1.3e-7). */
    cb_err_track_check(&share, 3e-7);
    free(before);
    world_free(&w);
}

/* Degenerate aims: the target on the end joint, on the offset point, inside the offset's reach,
 * straight behind (with and without a limit), a pole along the aim: always finite, unit
 * rotations, reached false where the target cannot be hit. */
static void ik_aim_degenerate_cases(void **state)
{
    (void)state;
    world w = world_make();
    cb_prng r = cb_test_prng(__func__);
    for (int it = 0; it < 84; ++it) {
        const aim_setup *a = &aim_setups[it % 3];
        aim_case c;
        aim_make(&w, a, &c);
        aim_start(&w, &r, &c);
        dv p = pos_d(&w, c.end);
        int kind = (it / 3) % 7;
        bool can_hit = true, any = false;
        dv target;
        switch (kind) {
        case 0:
            target = p, can_hit = false;
            break;
        case 1:
            target = c.o0, any = true;
            break; /* on the ray, at its origin */
        case 2:
            target = dv_add(p, dv_scale(random_unit(&r), 0.03)), can_hit = false;
            break;
        case 3:
            target = dv_sub(c.o0, dv_scale(c.f0, 2.0));
            break;
        case 4:
            target = dv_sub(c.o0, dv_scale(c.f0, 2.0));
            c.job.angle_limit = 1.0f;
            can_hit = false;
            break;
        case 5:
            target = dv_add(c.o0, dv_scale(c.f0, 2.0));
            dv_store(c.f0, c.job.pole);
            break;
        default:
            target = dv_add(c.o0, dv_scale(random_unit(&r), 1.0));
            c.job.angle_limit = 3.14159265f;
            break;
        }
        dv_store(target, c.job.target);
        cb_error err = {0};
        cb_result got = cb_ik_aim_job_run(&c.job, &err);
        CB_CHECK(got == CB_OK, "case %d: %s", it, err.message);
        for (size_t k = 0; k < a->count; ++k) {
            const float *q = c.corr + 4 * k;
            double len = sqrt((double)q[0] * q[0] + (double)q[1] * q[1] + (double)q[2] * q[2] +
                              (double)q[3] * q[3]);
            CB_CHECK(isfinite(len) && fabs(len - 1.0) < 1e-6, "case %d: correction %zu: %g", it, k,
                     len);
        }
        if (any) {
            continue;
        }
        if (!can_hit) {
            CB_CHECK(!c.res.reached, "case %d (kind %d): reported reached", it, kind);
        } else {
            model_double(&w, w.out);
            dv o, f, u;
            aim_ray(&w, &c, &o, &f, &u);
            CB_CHECK(dv_angle(f, dv_sub(target, o)) < 1e-4, "case %d (kind %d, %s): off by %g", it,
                     kind, a->name, dv_angle(f, dv_sub(target, o)));
        }
    }
    world_free(&w);
}

static void ik_aim_job_validity(void **state)
{
    (void)state;
    world w = world_make();
    cb_prng r = cb_test_prng(__func__);
    random_pose(&w, &r, w.pose);
    memcpy(w.out, w.pose, w.bytes);
    model_float(&w, w.pose, 0);
    aim_case c;
    aim_make(&w, &aim_setups[1], &c);
    c.job.target[2] = 2.0f;
    c.job.pole[1] = 1.0f;
    cb_xform_group *before = cb_test_pose_alloc(w.s, false);
    memcpy(before, w.pose, w.bytes);
    cb_ik_aim_joint many[CB_IK_AIM_MAX_JOINTS + 1];
    for (size_t k = 0; k <= CB_IK_AIM_MAX_JOINTS; ++k) {
        many[k] = (cb_ik_aim_joint){(uint32_t)k, 0.5f};
    }
    cb_ik_aim_joint broken[2] = {{joint(&w, "head"), 0.5f}, {joint(&w, "neck"), 1.0f}};
    cb_ik_aim_joint apart[2] = {{joint(&w, "hand_l"), 0.5f}, {joint(&w, "head"), 1.0f}};
    cb_ik_aim_joint bad_w[2] = {{joint(&w, "neck"), 1.5f}, {joint(&w, "head"), 1.0f}};
    cb_ik_aim_joint nan_w[2] = {{joint(&w, "neck"), NAN}, {joint(&w, "head"), 1.0f}};
    cb_ik_aim_joint range[1] = {{(uint32_t)w.n, 1.0f}};
    struct {
        cb_result want;
        const char *needle;
    } cases[] = {
        {CB_ERR_NULL_ARGUMENT, "skeleton"},           /* 0 */
        {CB_ERR_NULL_ARGUMENT, "pose"},               /* 1 */
        {CB_ERR_SPAN_TOO_SHORT, "pose"},              /* 2 */
        {CB_ERR_MISALIGNED, "out"},                   /* 3 */
        {CB_ERR_INVALID_ARGUMENT, "overlaps"},        /* 4 */
        {CB_ERR_INVALID_ARGUMENT, "model_layout"},    /* 5 */
        {CB_ERR_SPAN_TOO_SHORT, "model"},             /* 6 */
        {CB_ERR_NOT_FINITE, "weight"},                /* 7 */
        {CB_ERR_INVALID_ARGUMENT, "weight"},          /* 8 */
        {CB_ERR_NULL_ARGUMENT, "chain"},              /* 9 */
        {CB_ERR_TOO_FEW, "empty"},                    /* 10 */
        {CB_ERR_TOO_MANY, "at most"},                 /* 11 */
        {CB_ERR_INVALID_ARGUMENT, "chain[0].joint"},  /* 12 */
        {CB_ERR_HIERARCHY, "descendant"},             /* 13 */
        {CB_ERR_HIERARCHY, "descendant"},             /* 14 */
        {CB_ERR_INVALID_ARGUMENT, "chain[0].weight"}, /* 15 */
        {CB_ERR_NOT_FINITE, "chain[0].weight"},       /* 16 */
        {CB_ERR_NOT_FINITE, "target"},                /* 17 */
        {CB_ERR_INVALID_ARGUMENT, "target"},          /* 18 */
        {CB_ERR_NOT_FINITE, "pole"},                  /* 19 */
        {CB_ERR_NOT_FINITE, "forward"},               /* 20 */
        {CB_ERR_NOT_FINITE, "up"},                    /* 21 */
        {CB_ERR_NOT_FINITE, "offset"},                /* 22 */
        {CB_ERR_NOT_FINITE, "angle_limit"},           /* 23 */
        {CB_ERR_INVALID_ARGUMENT, "angle_limit"},     /* 24 */
        {CB_ERR_INVALID_ARGUMENT, "angle_limit"},     /* 25 */
        {CB_ERR_DEGENERATE, "parallel"},              /* 26 */
        {CB_ERR_DEGENERATE, "parallel"},              /* 27: default up along forward */
        {CB_ERR_NULL_ARGUMENT, "corrections"},        /* 28 */
        {CB_ERR_SPAN_TOO_SHORT, "corrections"},       /* 29 */
        {CB_ERR_INVALID_ARGUMENT, "no output"},       /* 30 */
        {CB_ERR_INVALID_ARGUMENT, "QTS"},             /* 31 */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        cb_ik_aim_job j = c.job;
        switch (k) {
        case 0:
            j.skeleton = NULL;
            break;
        case 1:
            j.pose.ptr = NULL;
            break;
        case 2:
            j.pose.count = 0;
            break;
        case 3:
            j.out.ptr = (cb_xform_group *)((char *)w.out + 8);
            break;
        case 4:
            j.out.ptr = (cb_xform_group *)((char *)w.pose + cb_simd_group_bytes());
            break;
        case 5:
            j.model_layout = (cb_matrix_layout)7;
            break;
        case 6:
            j.model = (cb_float_cspan){w.model, 16};
            break;
        case 7:
            j.weight = INFINITY;
            break;
        case 8:
            j.weight = -1.0f;
            break;
        case 9:
            j.chain.ptr = NULL;
            break;
        case 10:
            j.chain.count = 0;
            break;
        case 11:
            j.chain = (cb_ik_aim_joint_cspan){many, CB_IK_AIM_MAX_JOINTS + 1};
            break;
        case 12:
            j.chain = (cb_ik_aim_joint_cspan){range, 1};
            break;
        case 13:
            j.chain = (cb_ik_aim_joint_cspan){broken, 2};
            break;
        case 14:
            j.chain = (cb_ik_aim_joint_cspan){apart, 2};
            break;
        case 15:
            j.chain = (cb_ik_aim_joint_cspan){bad_w, 2};
            break;
        case 16:
            j.chain = (cb_ik_aim_joint_cspan){nan_w, 2};
            break;
        case 17:
            j.target[0] = NAN;
            break;
        case 18:
            j.target[1] = -1e10f;
            break;
        case 19:
            j.pole[2] = NAN;
            break;
        case 20:
            j.forward[0] = INFINITY;
            break;
        case 21:
            j.up[1] = NAN;
            break;
        case 22:
            j.offset[2] = NAN;
            break;
        case 23:
            j.angle_limit = NAN;
            break;
        case 24:
            j.angle_limit = -0.1f;
            break;
        case 25:
            j.angle_limit = 3.2f;
            break;
        case 26:
            j.up[0] = 0, j.up[1] = 0, j.up[2] = -2.0f;
            break;
        case 27:
            j.forward[0] = 0, j.forward[1] = 3.0f, j.forward[2] = 0, j.up[1] = 0;
            break;
        case 28:
            j.corrections = (cb_float_span){NULL, 8};
            break;
        case 29:
            j.corrections.count = 7;
            break;
        case 30:
            j.out = (cb_xform_group_span){NULL, 0};
            j.corrections = (cb_float_span){NULL, 0};
            j.result = NULL;
            break;
        case 31:
            j.model_layout = CB_MATRIX_LAYOUT_QTS;
            j.model = (cb_float_cspan){w.model, w.n * 16};
            break;
        }
        cb_error err = {0};
        float corr_before[20];
        memcpy(corr_before, c.corr, sizeof corr_before);
        cb_result got = cb_ik_aim_job_run(&j, &err);
        CB_CHECK(got == cases[k].want, "case %zu: %s, want %s (%s)", k, cb_result_str(got),
                 cb_result_str(cases[k].want), err.message);
        CB_CHECK(strstr(err.message, cases[k].needle) != NULL,
                 "case %zu: \"%s\" does not name \"%s\"", k, err.message, cases[k].needle);
        assert_int_equal(cb_ik_aim_job_validate(&j, NULL), cases[k].want);
        assert_memory_equal(w.pose, before, w.bytes);
        assert_memory_equal(w.out, before, w.bytes);
        assert_memory_equal(c.corr, corr_before, sizeof corr_before);
    }
    assert_int_equal(cb_ik_aim_job_validate(NULL, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_ik_aim_job_run(NULL, NULL), CB_ERR_NULL_ARGUMENT);
    cb_ik_aim_job zero = {0};
    assert_int_equal(cb_ik_aim_job_validate(&zero, NULL), CB_ERR_NULL_ARGUMENT);
    /* Minimal valid jobs: only a result; the defaults (forward +Z, up +Y, no pole, no limit)
     * give the same corrections as spelling them out. */
    cb_ik_aim_job j = c.job;
    j.out = (cb_xform_group_span){NULL, 0};
    j.corrections = (cb_float_span){NULL, 0};
    assert_int_equal(cb_ik_aim_job_run(&j, NULL), CB_OK);
    j = c.job;
    memset(j.forward, 0, sizeof j.forward);
    memset(j.up, 0, sizeof j.up);
    j.pole[1] = 1.0f;
    float def[8], spelled[8];
    j.corrections = (cb_float_span){def, 8};
    assert_int_equal(cb_ik_aim_job_run(&j, NULL), CB_OK);
    j.forward[2] = 1.0f, j.up[1] = 1.0f, j.angle_limit = 3.14159265f;
    j.corrections = (cb_float_span){spelled, 8};
    assert_int_equal(cb_ik_aim_job_run(&j, NULL), CB_OK);
    assert_memory_equal(def, spelled, sizeof def);
    /* NaN in the chain's path of the pose, and a zero-scale end joint. */
    size_t wd = cb_simd_width();
    uint32_t neck = joint(&w, "neck"), head = joint(&w, "head");
    float *g = (float *)w.pose + (neck / wd) * 10 * wd;
    float keep = g[0 * wd + neck % wd];
    g[0 * wd + neck % wd] = NAN;
    cb_error err = {0};
    assert_int_equal(cb_ik_aim_job_run(&c.job, &err), CB_ERR_NOT_FINITE);
    CB_CHECK(strstr(err.message, "not finite") != NULL, "%s", err.message);
    g[0 * wd + neck % wd] = keep;
    g = (float *)w.pose + (head / wd) * 10 * wd;
    for (int k = 7; k < 10; ++k) {
        g[k * wd + head % wd] = 0.0f;
    }
    memcpy(before, w.out, w.bytes);
    assert_int_equal(cb_ik_aim_job_run(&c.job, &err), CB_ERR_DEGENERATE);
    CB_CHECK(strstr(err.message, "zero scale") != NULL, "%s", err.message);
    assert_memory_equal(w.out, before, w.bytes);
    free(before);
    world_free(&w);
}

/* ---- refreshing model space ----------------------------------------------------------------- */

/* cb_ik_refresh_range: on the humanoid the exact subtrees (a leg, the neck and head); on random
 * skeletons (subtrees not always contiguous) a range holding every descendant and ending at
 * one; and after IK jobs, local-to-model over that range turns the stale matrices into exactly
 * (bit for bit) what a full run on the corrected pose gives. */
static void ik_refresh_range_updates_the_model(void **state)
{
    (void)state;
    world w = world_make();
    cb_prng r = cb_test_prng(__func__);
    uint32_t from = 7, to = 7;
    cb_error err = {0};
    assert_int_equal(cb_ik_refresh_range(NULL, 0, &from, &to, &err), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_ik_refresh_range(w.s, 0, NULL, &to, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_ik_refresh_range(w.s, 0, &from, NULL, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_ik_refresh_range(w.s, (uint32_t)w.n, &from, &to, &err),
                     CB_ERR_INVALID_ARGUMENT);
    CB_CHECK(strstr(err.message, "out of range") != NULL, "%s", err.message);
    CB_CHECK(from == 7 && to == 7, "written on failure");
    struct {
        const char *joint, *last;
    } subtrees[] = {{"thigh_l", "ball_l"},
                    {"neck", "eye_r"},
                    {"root", "ball_r"},
                    {"head", "eye_r"},
                    {"ball_r", "ball_r"}};
    for (size_t k = 0; k < sizeof subtrees / sizeof subtrees[0]; ++k) {
        assert_int_equal(cb_ik_refresh_range(w.s, joint(&w, subtrees[k].joint), &from, &to, NULL),
                         CB_OK);
        CB_CHECK(from == joint(&w, subtrees[k].joint) && to == joint(&w, subtrees[k].last) + 1,
                 "%s: [%u, %u)", subtrees[k].joint, from, to);
    }
    /* After the jobs, on the humanoid. */
    float *full = malloc(w.n * 16 * sizeof(float));
    for (int it = 0; it < 40; ++it) {
        new_pose(&w, &r);
        model_float(&w, w.pose, 0);
        cb_ik_two_bone_result res;
        cb_ik_aim_result ares;
        uint32_t first;
        if (it % 2 == 0) {
            const limb *L = &w.limb[it % 4];
            cb_ik_two_bone_job j =
                two_bone(&w, L, dv_add(pos_d(&w, L->start), random_unit(&r)), (dv){0, 0, 1}, &res);
            j.out.ptr = w.pose;
            assert_int_equal(cb_ik_two_bone_job_run(&j, NULL), CB_OK);
            first = res.first_joint;
        } else {
            aim_case c;
            aim_make(&w, &aim_setups[it % 4], &c);
            c.job.out.ptr = w.pose;
            c.job.result = &ares;
            dv_store(random_unit(&r), c.job.target);
            assert_int_equal(cb_ik_aim_job_run(&c.job, NULL), CB_OK);
            first = ares.first_joint;
        }
        assert_int_equal(cb_ik_refresh_range(w.s, first, &from, &to, NULL), CB_OK);
        cb_ltm_job all = {.skeleton = w.s, .local = {w.pose, w.groups}, .model = {full, w.n * 16}};
        assert_int_equal(cb_ltm_job_run(&all, NULL), CB_OK);
        cb_ltm_job part = all;
        part.model.ptr = w.model, part.from = from, part.to = to;
        assert_int_equal(cb_ltm_job_run(&part, NULL), CB_OK);
        CB_CHECK(memcmp(full, w.model, w.n * 16 * sizeof(float)) == 0,
                 "iteration %d: refreshing [%u, %u) differs from a full run", it, from, to);
    }
    free(full);
    /* Random skeletons: every descendant inside, the last one a descendant. */
    for (int it = 0; it < 50; ++it) {
        size_t n = 2 + cb_prng_below(&r, 60);
        cb_skeleton *s = cb_test_random_skeleton(&r, n, false, false);
        uint32_t j = cb_prng_below(&r, (uint32_t)n);
        assert_int_equal(cb_ik_refresh_range(s, j, &from, &to, NULL), CB_OK);
        const int32_t *parents = cb_skeleton_parents(s);
        CB_CHECK(from == j && to > j && to <= n, "[%u, %u) for joint %u of %zu", from, to, j, n);
        for (size_t d = 0; d < n; ++d) {
            int32_t k = (int32_t)d;
            while (k > (int32_t)j) {
                k = parents[k];
            }
            bool below = k == (int32_t)j;
            CB_CHECK(!below || (d >= from && d < to), "descendant %zu outside [%u, %u)", d, from,
                     to);
            CB_CHECK(d != to - 1 || below, "the range ends at %zu, not a descendant", d);
        }
        cb_skeleton_destroy(s);
    }
    world_free(&w);
}

/* ---- no NaN, ever --------------------------------------------------------------------------- */

/* A value of any magnitude: 0, or sign * 10^u with u uniform in [lo, hi]. */
static float wild(cb_prng *r, float lo, float hi)
{
    if (cb_prng_below(r, 8) == 0) {
        return 0.0f;
    }
    float m = powf(10.0f, cb_prng_range(r, lo, hi));
    return cb_prng_below(r, 2) ? m : -m;
}

static void wild_vec(cb_prng *r, float out[3], float lo, float hi)
{
    for (int k = 0; k < 3; ++k) {
        out[k] = wild(r, lo, hi);
    }
}

/* Every float of a pose is finite. */
static bool pose_finite(const world *w, const cb_xform_group *p)
{
    const float *f = (const float *)p;
    for (size_t i = 0; i < w->bytes / sizeof(float); ++i) {
        if (!isfinite(f[i])) {
            return false;
        }
    }
    return true;
}

/* Random valid-but-wild input for both jobs: targets and poles from 1e-30 to 1e9 in magnitude
 * (or exactly zero, or on a joint), hinge and aim axes of any length and direction, any soften,
 * weights and limits, and poses with zero, tiny, huge or non-unit rotations and zero or tiny
 * scales on the chain. Whatever the job answers, a job that succeeds writes only finite
 * numbers and unit corrections, and a job that fails writes nothing. */
static void ik_never_writes_nan(void **state)
{
    (void)state;
    world w = world_make();
    cb_prng r = cb_test_prng(__func__);
    cb_xform_group *before = cb_test_pose_alloc(w.s, false);
    const size_t wd = cb_simd_width();
    size_t ok = 0, failed = 0;
    for (int it = 0; it < 6000; ++it) {
        new_pose(&w, &r);
        /* Spoil a few joints of the pose. */
        for (int k = cb_prng_below(&r, 4); k > 0; --k) {
            uint32_t j = cb_prng_below(&r, (uint32_t)w.n);
            float *g = (float *)w.pose + (j / wd) * 10 * wd;
            int what = (int)cb_prng_below(&r, 4);
            for (size_t c = 3; c < 7 && what < 2; ++c) {
                g[c * wd + j % wd] = what == 0 ? 0.0f : wild(&r, -20.0f, 6.0f);
            }
            for (size_t c = 7; c < 10 && what >= 2; ++c) {
                g[c * wd + j % wd] = what == 2 ? 0.0f : wild(&r, -8.0f, 0.5f);
            }
        }
        memcpy(before, w.pose, w.bytes);
        memset(w.out, 0, w.bytes);
        const limb *L = &w.limb[it % 4];
        cb_result got;
        float corr[20];
        bool two = it % 2 == 0;
        if (two) {
            cb_ik_two_bone_result res;
            cb_ik_two_bone_job j = two_bone(&w, L, (dv){0, 0, 0}, (dv){0, 0, 0}, &res);
            wild_vec(&r, j.target, -30.0f, 9.0f);
            if (cb_prng_below(&r, 6) == 0) {
                dv_store(pos_d(&w, cb_prng_below(&r, 2) ? L->start : L->mid), j.target);
            }
            wild_vec(&r, j.pole, -30.0f, 9.0f);
            wild_vec(&r, j.mid_axis, -30.0f, 30.0f);
            j.weight = cb_prng_range(&r, 0.0f, 1.0f);
            j.soften = cb_prng_range(&r, 0.0f, 1.0f);
            got = cb_ik_two_bone_job_run(&j, NULL);
            memcpy(corr, res.start_correction, sizeof res.start_correction);
            memcpy(corr + 4, res.mid_correction, sizeof res.mid_correction);
        } else {
            aim_case c;
            aim_make(&w, &aim_setups[it % 4], &c);
            wild_vec(&r, c.job.target, -30.0f, 9.0f);
            if (cb_prng_below(&r, 6) == 0) {
                dv_store(pos_d(&w, c.end), c.job.target);
            }
            wild_vec(&r, c.job.pole, -30.0f, 9.0f);
            wild_vec(&r, c.job.forward, -30.0f, 30.0f);
            wild_vec(&r, c.job.up, -30.0f, 30.0f);
            wild_vec(&r, c.job.offset, -6.0f, 1.0f);
            c.job.angle_limit = cb_prng_range(&r, 0.0f, 3.14159f);
            c.job.weight = cb_prng_range(&r, 0.0f, 1.0f);
            for (size_t k = 0; k < c.job.chain.count; ++k) {
                c.chain[k].weight = cb_prng_range(&r, 0.0f, 1.0f);
            }
            got = cb_ik_aim_job_run(&c.job, NULL);
            memcpy(corr, c.corr, sizeof corr);
        }
        assert_memory_equal(w.pose, before, w.bytes);
        if (got != CB_OK) {
            failed++;
            for (size_t i = 0; i < w.bytes / sizeof(float); ++i) {
                CB_CHECK(((const float *)w.out)[i] == 0.0f, "iteration %d: %s wrote out", it,
                         cb_result_str(got));
            }
            continue;
        }
        ok++;
        /* NaN may only come out where the host put it: check the pose only when it was
         * finite (spoiled rotations and scales are finite, so it always is here). */
        CB_CHECK(!pose_finite(&w, w.pose) || pose_finite(&w, w.out),
                 "iteration %d (%s): NaN or Inf in the output", it, two ? "two-bone" : "aim");
        size_t nq = two ? 2 : aim_setups[it % 4].count;
        for (size_t k = 0; k < nq; ++k) {
            const float *q = corr + 4 * k;
            double len = sqrt((double)q[0] * q[0] + (double)q[1] * q[1] + (double)q[2] * q[2] +
                              (double)q[3] * q[3]);
            CB_CHECK(fabs(len - 1.0) < 1e-5, "iteration %d: correction %zu has length %g", it, k,
                     len);
        }
    }
    cb_test_note("%zu wild jobs succeeded, %zu were refused", ok, failed);
    CB_CHECK(ok > 1000, "too few jobs ran (%zu)", ok);
    free(before);
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ik_two_bone_job_validity),
        cmocka_unit_test(ik_two_bone_reaches_reachable_targets),
        cmocka_unit_test(ik_two_bone_degrades_smoothly_out_of_reach),
        cmocka_unit_test(ik_two_bone_weight),
        cmocka_unit_test(ik_two_bone_pole_decides_the_plane),
        cmocka_unit_test(ik_two_bone_degenerate_cases),
        cmocka_unit_test(ik_two_bone_random_skeletons),
        cmocka_unit_test(ik_two_bone_model_sources_and_corrections_agree),
        cmocka_unit_test(ik_two_bone_pose_frames_are_the_scalar_products),
        cmocka_unit_test(ik_orient_pose_frames_are_the_scalar_products),
        cmocka_unit_test(ik_two_bone_bad_pose_geometry),
        cmocka_unit_test(ik_pose_rotation_not_finite_refused),
        cmocka_unit_test(ik_pose_rotation_not_unit_judged_by_frames),
        cmocka_unit_test(ik_aim_job_validity),
        cmocka_unit_test(ik_aim_points_at_the_target),
        cmocka_unit_test(ik_aim_pose_frames_are_the_scalar_products),
        cmocka_unit_test(ik_aim_stops_at_the_limit),
        cmocka_unit_test(ik_aim_weights_distribute_the_turn),
        cmocka_unit_test(ik_aim_weight),
        cmocka_unit_test(ik_aim_degenerate_cases),
        cmocka_unit_test(ik_refresh_range_updates_the_model),
        cmocka_unit_test(ik_never_writes_nan),
    };
    return CB_RUN_TESTS(tests);
}
