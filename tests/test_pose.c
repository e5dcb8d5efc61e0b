/* pose: the sample, fused blend and crossfade jobs. Validity tables (every error, nothing
 * written on failure), the blend against the double-precision reference for every layer kind
 * (both the SIMD job and its scalar _ref twin), and the properties the issue names: weight 1
 * reproduces the sample, rest fallback, masks, override and additive layers, an identity
 * additive that changes nothing, padding lanes that never leak, slerp crossfades. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_test.h"
#include "test_util.h"

/* Blend against the double reference, per component of unit-scale values (|t| <= 0.5 m,
 * s <= 1.4): each sample is a 2-term fused lerp per frame, weighted sums over up to 6 entries,
 * a division by the weight sum and one normalization (3e-7 per docs/performance.md); layers add
 * a normalize, an nlerp and a quaternion product each. Measured maxima over the three
 * configurations and both paths: t 9.9e-8, q 1.9e-7, s 3.5e-7; bounds about 2.5x. */
static const double BOUND_T = 3e-7, BOUND_Q = 5e-7, BOUND_S = 8e-7;

typedef struct scene {
    cb_skeleton *skeleton;
    size_t n, groups, soa;
    cb_test_tracks tracks[6];
    cb_clip *clips[6];
    dref_clip refs[6];
    float *masks[2];
} scene;

/* Four ordinary clips (looping and clamped, scaled and not), one additive (first frame), one
 * additive against the rest pose; two masks (a subtree and its complement, with fractions). */
static scene scene_make(cb_prng *r, size_t n)
{
    scene sc = {0};
    sc.skeleton = cb_test_random_skeleton(r, n, true, false);
    sc.n = n;
    sc.groups = cb_skeleton_group_count(sc.skeleton);
    sc.soa = cb_skeleton_soa_joint_count(sc.skeleton);
    for (int k = 0; k < 6; ++k) {
        float duration = cb_prng_range(r, 0.3f, 1.6f);
        sc.tracks[k] = cb_test_random_tracks(r, sc.skeleton, duration, n, k == 1 || k == 4,
                                             k == 3 ? 3.0f : 1.2f);
        cb_clip_desc d = {.skeleton = sc.skeleton, .duration_s = duration,
                          .tracks = sc.tracks[k].tracks, .track_count = sc.tracks[k].count,
                          .wrap = k == 2 ? CB_CLIP_WRAP_CLAMP : CB_CLIP_WRAP_LOOP,
                          .root_motion = CB_ROOT_MOTION_NONE,
                          .additive = k == 4   ? CB_ADDITIVE_FIRST_FRAME
                                      : k == 5 ? CB_ADDITIVE_REST_POSE
                                               : CB_ADDITIVE_NONE};
        cb_error err = {0};
        cb_result res = cb_clip_create(&d, &sc.clips[k], &err);
        CB_CHECK(res == CB_OK, "scene clip %d: %s", k, err.message);
        sc.refs[k] = dref_clip_build(&d);
    }
    for (int m = 0; m < 2; ++m) {
        sc.masks[m] = malloc(sc.soa * sizeof(float));
        cb_mask_rule rule = {cb_skeleton_joint_name(sc.skeleton, n / 3), m == 0 ? 1.0f : 0.0f,
                             false};
        assert_int_equal(cb_skeleton_build_mask(sc.skeleton, m == 0 ? 0.25f : 1.0f, &rule, 1,
                                                (cb_float_span){sc.masks[m], sc.soa}, NULL),
                         CB_OK);
    }
    return sc;
}

static void scene_free(scene *sc)
{
    for (int k = 0; k < 6; ++k) {
        cb_clip_destroy(sc->clips[k]);
        dref_clip_free(&sc->refs[k]);
        cb_test_tracks_free(&sc->tracks[k]);
    }
    free(sc->masks[0]), free(sc->masks[1]);
    cb_skeleton_destroy(sc->skeleton);
}

static cb_result blend(const scene *sc, const cb_blend_entry *e, size_t count, float threshold,
                       cb_xform_group *out, bool ref)
{
    cb_pose_blend_job job = {sc->skeleton, {e, count}, threshold, {out, sc->groups}};
    return ref ? cb_pose_blend_job_run_ref(&job, NULL) : cb_pose_blend_job_run(&job, NULL);
}

/* A new pose (NaN-filled first where nan_fill) holding clip k of the scene sampled at t. */
static cb_xform_group *sampled_pose(const scene *sc, int k, float t, bool nan_fill)
{
    cb_xform_group *p = cb_test_pose_alloc(sc->skeleton, nan_fill);
    cb_pose_sample_job sj = {sc->clips[k], t, {p, sc->groups}};
    assert_int_equal(cb_pose_sample_job_run(&sj, NULL), CB_OK);
    return p;
}

static void rest_of(const cb_skeleton *s, cb_xform *rest)
{
    for (size_t j = 0; j < cb_skeleton_joint_count(s); ++j) {
        rest[j] = cb_skeleton_rest_xform(s, j);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Validity                                                                                   */

static void pose_jobs_validity(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    scene sc = scene_make(&r, 2 * cb_simd_width() + 1);
    cb_skeleton *other = cb_test_random_skeleton(&r, sc.n, false, false);
    cb_xform_group *out = cb_test_pose_alloc(sc.skeleton, false);
    size_t bytes = cb_skeleton_pose_bytes(sc.skeleton);
    unsigned char *before = malloc(bytes);
    memset(out, 0x5a, bytes);
    memcpy(before, out, bytes);
    cb_error err = {0};

    /* Sample job. */
    cb_pose_sample_job sj = {0};
    assert_int_equal(cb_pose_sample_job_run(&sj, &err), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_pose_sample_job_run(NULL, &err), CB_ERR_NULL_ARGUMENT);
    sj = (cb_pose_sample_job){sc.clips[0], 0.5f, {out, sc.groups - 1}};
    assert_int_equal(cb_pose_sample_job_run(&sj, &err), CB_ERR_SPAN_TOO_SHORT);
    sj.out = (cb_xform_group_span){(cb_xform_group *)((char *)out + 4), sc.groups};
    assert_int_equal(cb_pose_sample_job_run(&sj, &err), CB_ERR_MISALIGNED);
    sj.out = (cb_xform_group_span){out, sc.groups};
    sj.time = NAN;
    assert_int_equal(cb_pose_sample_job_run(&sj, &err), CB_ERR_NOT_FINITE);
    sj.clip = NULL, sj.time = 0.5f;
    assert_int_equal(cb_pose_sample_job_run(&sj, &err), CB_ERR_NULL_ARGUMENT);
    assert_memory_equal(out, before, bytes);
    sj.clip = sc.clips[0];
    assert_int_equal(cb_pose_sample_job_validate(&sj, &err), CB_OK);

    /* Blend job: a zeroed job fails, then each field on its own. */
    cb_pose_blend_job bj = {0};
    assert_int_equal(cb_pose_blend_job_validate(&bj, &err), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_pose_blend_job_run(NULL, &err), CB_ERR_NULL_ARGUMENT);
    cb_blend_entry e[3] = {{sc.clips[0], 0.3f, 1.0f}, {sc.clips[1], 0.6f, 0.5f},
                           {sc.clips[4], 0.2f, 1.0f, CB_BLEND_MODE_ADDITIVE}};
    const cb_pose_blend_job good = {sc.skeleton, {e, 3}, 0.0f, {out, sc.groups}};
    struct {
        cb_result want;
        const char *needle;
    } cases[] = {
        {CB_ERR_NULL_ARGUMENT, "skeleton"},
        {CB_ERR_NULL_ARGUMENT, "out"},
        {CB_ERR_NULL_ARGUMENT, "entries"},
        {CB_ERR_SPAN_TOO_SHORT, "out"},
        {CB_ERR_MISALIGNED, "out"},
        {CB_ERR_NOT_FINITE, "threshold"},
        {CB_ERR_INVALID_ARGUMENT, "threshold"},
        {CB_ERR_NULL_ARGUMENT, "entries[1].clip"},
        {CB_ERR_MISMATCH, "entries[1].clip"},
        {CB_ERR_NOT_FINITE, "entries[0].weight"},
        {CB_ERR_NOT_FINITE, "entries[0].time"},
        {CB_ERR_INVALID_ARGUMENT, "entries[0].weight"},
        {CB_ERR_INVALID_ARGUMENT, "entries[1].mode"},
        {CB_ERR_MISMATCH, "entries[2]"},
        {CB_ERR_MISMATCH, "entries[0]"},
        {CB_ERR_SPAN_TOO_SHORT, "entries[1].mask"},
    };
    cb_clip *foreign = NULL;
    cb_clip_desc fd = {.skeleton = other, .duration_s = 1.0f};
    assert_int_equal(cb_clip_create(&fd, &foreign, NULL), CB_OK);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        cb_blend_entry ee[3];
        memcpy(ee, e, sizeof ee);
        cb_pose_blend_job j = good;
        j.entries.ptr = ee;
        switch (c) {
        case 0: j.skeleton = NULL; break;
        case 1: j.out.ptr = NULL; break;
        case 2: j.entries.ptr = NULL; break;
        case 3: j.out.count = sc.groups - 1; break;
        case 4: j.out.ptr = (cb_xform_group *)((char *)out + 4); break;
        case 5: j.threshold = NAN; break;
        case 6: j.threshold = -0.1f; break;
        case 7: ee[1].clip = NULL; break;
        case 8: ee[1].clip = foreign; break;
        case 9: ee[0].weight = INFINITY; break;
        case 10: ee[0].time = NAN; break;
        case 11: ee[0].weight = -1.0f; break;
        case 12: ee[1].mode = _CB_BLEND_MODE_COUNT; break;
        case 13: ee[2].mode = CB_BLEND_MODE_NORMAL; break;   /* additive clip, not ADDITIVE */
        case 14: ee[0].mode = CB_BLEND_MODE_ADDITIVE; break; /* ordinary clip as ADDITIVE */
        case 15: ee[1].mask = (cb_float_cspan){sc.masks[0], sc.n - 1}; break;
        }
        memset(&err, 0, sizeof err);
        cb_result got = cb_pose_blend_job_run(&j, &err);
        CB_CHECK(got == cases[c].want, "case %zu: %s, want %s (%s)", c, cb_result_str(got),
                 cb_result_str(cases[c].want), err.message);
        CB_CHECK(strstr(err.message, cases[c].needle) != NULL,
                 "case %zu: message \"%s\" does not name \"%s\"", c, err.message,
                 cases[c].needle);
        assert_int_equal(cb_pose_blend_job_validate(&j, NULL), cases[c].want);
        assert_int_equal(cb_pose_blend_job_run_ref(&j, NULL), cases[c].want);
        assert_memory_equal(out, before, bytes);
    }
    /* The minimal valid jobs: no entries (rest pose), and the good one. */
    cb_pose_blend_job empty = {sc.skeleton, {NULL, 0}, 0.0f, {out, sc.groups}};
    assert_int_equal(cb_pose_blend_job_run(&empty, &err), CB_OK);
    assert_int_equal(cb_pose_blend_job_run(&good, &err), CB_OK);

    /* Crossfade job. */
    cb_xform_group *a = cb_test_pose_alloc(sc.skeleton, false);
    cb_pose_crossfade_job cj = {0};
    assert_int_equal(cb_pose_crossfade_job_run(&cj, &err), CB_ERR_NULL_ARGUMENT);
    const cb_pose_crossfade_job cgood = {sc.skeleton, {a, sc.groups}, {a, sc.groups}, 0.5f,
                                         {NULL, 0}, {out, sc.groups}};
    assert_int_equal(cb_pose_crossfade_job_validate(&cgood, &err), CB_OK);
    cj = cgood, cj.to.ptr = NULL;
    assert_int_equal(cb_pose_crossfade_job_run(&cj, &err), CB_ERR_NULL_ARGUMENT);
    cj = cgood, cj.from.count = 0;
    assert_int_equal(cb_pose_crossfade_job_run(&cj, &err), CB_ERR_SPAN_TOO_SHORT);
    cj = cgood, cj.mask = (cb_float_cspan){sc.masks[0], sc.n - 1};
    assert_int_equal(cb_pose_crossfade_job_run(&cj, &err), CB_ERR_SPAN_TOO_SHORT);
    cj = cgood, cj.to.ptr = (const cb_xform_group *)((const char *)a + 8);
    assert_int_equal(cb_pose_crossfade_job_run(&cj, &err), CB_ERR_MISALIGNED);
    cj = cgood, cj.weight = NAN;
    assert_int_equal(cb_pose_crossfade_job_run(&cj, &err), CB_ERR_NOT_FINITE);
    cj = cgood, cj.weight = 1.5f;
    assert_int_equal(cb_pose_crossfade_job_run(&cj, &err), CB_ERR_INVALID_ARGUMENT);

    cb_clip_destroy(foreign);
    cb_skeleton_destroy(other);
    free(out), free(a), free(before);
    scene_free(&sc);
}

/* ------------------------------------------------------------------------------------------ */
/* Against the double reference                                                               */

static void check_against_reference(const scene *sc, const cb_blend_entry *e, size_t count,
                                    float threshold, const cb_xform_group *out, cb_err_track *et,
                                    cb_err_track *eq, cb_err_track *es)
{
    dref_entry de[8];
    for (size_t k = 0; k < count; ++k) {
        int ci = 0;
        while (sc->clips[ci] != e[k].clip) {
            ++ci;
        }
        de[k] = (dref_entry){&sc->refs[ci], e[k].time, e[k].weight, e[k].mode, e[k].mask.ptr};
    }
    cb_xform rest[64];
    rest_of(sc->skeleton, rest);
    double thr = threshold == 0.0f ? CB_BLEND_DEFAULT_THRESHOLD : threshold;
    for (size_t j = 0; j < sc->n; ++j) {
        dref_xform want = dref_blend_joint(de, count, rest, j, thr);
        dref_xform got = dref_from_pose(out, j);
        double dot = 0;
        for (int c = 0; c < 4; ++c) {
            dot += want.q[c] * got.q[c];
        }
        double sign = dot < 0 ? -1 : 1;
        for (int c = 0; c < 3; ++c) {
            cb_err_track_add(et, got.t[c], want.t[c], j);
            cb_err_track_add(es, got.s[c], want.s[c], j);
        }
        for (int c = 0; c < 4; ++c) {
            cb_err_track_add(eq, got.q[c], sign * want.q[c], j);
        }
    }
}

static void random_entries(cb_prng *r, const scene *sc, cb_blend_entry *e, size_t *count)
{
    size_t k = 0;
    size_t normal = 1 + cb_prng_below(r, 4);
    for (size_t i = 0; i < normal; ++i) {
        e[k++] = (cb_blend_entry){sc->clips[cb_prng_below(r, 4)], cb_prng_range(r, -2.0f, 3.0f),
                                  cb_prng_below(r, 5) == 0 ? 0.0f : cb_prng_range(r, 0.0f, 1.0f),
                                  cb_prng_below(r, 2) ? CB_BLEND_MODE_NORMAL
                                                      : _CB_BLEND_MODE_DEFAULT,
                                  {cb_prng_below(r, 3) == 0 ? sc->masks[cb_prng_below(r, 2)]
                                                            : NULL,
                                   sc->soa}};
    }
    if (cb_prng_below(r, 2)) {
        e[k++] = (cb_blend_entry){sc->clips[cb_prng_below(r, 4)], cb_prng_range(r, 0.0f, 1.0f),
                                  cb_prng_range(r, 0.0f, 1.2f), CB_BLEND_MODE_OVERRIDE,
                                  {sc->masks[0], sc->soa}};
    }
    if (cb_prng_below(r, 2)) {
        e[k++] = (cb_blend_entry){sc->clips[4 + cb_prng_below(r, 2)], cb_prng_range(r, 0.0f, 1.0f),
                                  cb_prng_range(r, 0.0f, 1.5f), CB_BLEND_MODE_ADDITIVE,
                                  {cb_prng_below(r, 2) ? sc->masks[1] : NULL, sc->soa}};
    }
    *count = k;
}

static void pose_blend_matches_double_reference(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    for (int path = 0; path < 2; ++path) {
        cb_err_track et = cb_err_track_make(path ? "blend ref translation" : "blend translation");
        cb_err_track eq = cb_err_track_make(path ? "blend ref rotation" : "blend rotation");
        cb_err_track es = cb_err_track_make(path ? "blend ref scale" : "blend scale");
        for (int it = 0; it < 30; ++it) {
            scene sc = scene_make(&r, 1 + cb_prng_below(&r, 50));
            cb_xform_group *out = cb_test_pose_alloc(sc.skeleton, true);
            for (int rep = 0; rep < 20; ++rep) {
                cb_blend_entry e[8];
                size_t count;
                random_entries(&r, &sc, e, &count);
                float thr = cb_prng_below(&r, 3) == 0 ? 0.0f : cb_prng_range(&r, 0.0f, 2.0f);
                assert_int_equal(blend(&sc, e, count, thr, out, path == 1), CB_OK);
                check_against_reference(&sc, e, count, thr, out, &et, &eq, &es);
            }
            free(out);
            scene_free(&sc);
        }
        cb_err_track_check(&et, BOUND_T);
        cb_err_track_check(&eq, BOUND_Q);
        cb_err_track_check(&es, BOUND_S);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Properties                                                                                 */

static void pose_blend_weight_one_reproduces_the_sample(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    scene sc = scene_make(&r, 3 * cb_simd_width() - 1);
    cb_xform_group *a = cb_test_pose_alloc(sc.skeleton, false);
    cb_xform_group *b = cb_test_pose_alloc(sc.skeleton, false);
    size_t bytes = cb_skeleton_pose_bytes(sc.skeleton);
    cb_err_track ew = cb_err_track_make("blend of one clip, any weight");
    for (int it = 0; it < 200; ++it) {
        const cb_clip *c = sc.clips[it % 4];
        float t = cb_prng_range(&r, -3.0f, 3.0f);
        cb_pose_sample_job sj = {c, t, {a, sc.groups}};
        assert_int_equal(cb_pose_sample_job_run(&sj, NULL), CB_OK);
        cb_blend_entry e = {c, t, 1.0f};
        assert_int_equal(blend(&sc, &e, 1, 0.0f, b, false), CB_OK);
        /* Weight exactly 1: the same operations in the same order, bit for bit. */
        CB_CHECK(memcmp(a, b, bytes) == 0, "weight 1 differs from the sample at t = %g",
                 (double)t);
        /* Any weight above the threshold: the same pose up to the rounding of w and 1/w. */
        e.weight = cb_prng_range(&r, 0.1f, 50.0f);
        assert_int_equal(blend(&sc, &e, 1, 0.0f, b, false), CB_OK);
        for (size_t j = 0; j < sc.n; ++j) {
            dref_xform x = dref_from_pose(a, j), y = dref_from_pose(b, j);
            for (int k = 0; k < 3; ++k) {
                cb_err_track_add(&ew, y.t[k], x.t[k], j);
                cb_err_track_add(&ew, y.s[k], x.s[k], j);
            }
            for (int k = 0; k < 4; ++k) {
                cb_err_track_add(&ew, y.q[k], x.q[k], j);
            }
        }
    }
    /* w (1 - f) and w f round once more than 1 - f and f, and t w / w once more: 3 ulp of
     * values up to 1.4 (measured 2.4e-7). */
    cb_err_track_check(&ew, 5e-7);
    free(a), free(b);
    scene_free(&sc);
}

static double max_pose_diff(const cb_xform_group *a, const cb_xform_group *b, size_t n)
{
    double m = 0;
    for (size_t j = 0; j < n; ++j) {
        dref_xform x = dref_from_pose(a, j), y = dref_from_pose(b, j);
        double dot = 0;
        for (int k = 0; k < 4; ++k) {
            dot += x.q[k] * y.q[k];
        }
        double sign = dot < 0 ? -1 : 1;
        for (int k = 0; k < 3; ++k) {
            m = fmax(m, fmax(fabs(x.t[k] - y.t[k]), fabs(x.s[k] - y.s[k])));
        }
        for (int k = 0; k < 4; ++k) {
            m = fmax(m, fabs(x.q[k] - sign * y.q[k]));
        }
    }
    return m;
}

static void pose_blend_falls_back_to_rest_smoothly(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    scene sc = scene_make(&r, 2 * cb_simd_width() + 5);
    cb_xform_group *out = cb_test_pose_alloc(sc.skeleton, false);
    cb_xform_group *prev = cb_test_pose_alloc(sc.skeleton, false);
    cb_xform_group_cspan rest = cb_skeleton_rest_pose(sc.skeleton);
    /* All weights zero (and no entries at all): the rest pose. */
    cb_blend_entry e = {sc.clips[0], 0.4f, 0.0f};
    assert_int_equal(blend(&sc, &e, 1, 0.0f, out, false), CB_OK);
    CB_CHECK(max_pose_diff(out, rest.ptr, sc.n) < 3e-7, "zero weight is not the rest pose");
    assert_int_equal(blend(&sc, NULL, 0, 0.3f, out, false), CB_OK);
    CB_CHECK(max_pose_diff(out, rest.ptr, sc.n) < 3e-7, "no entries is not the rest pose");
    /* Weights sliding from the threshold to 0: the pose moves towards the rest pose, a little
     * at a time (no jump), and is the rest pose at the end. */
    double total = 0, max_step = 0;
    for (int k = 0; k <= 100; ++k) {
        e.weight = 0.1f * (float)(100 - k) / 100.0f;
        assert_int_equal(blend(&sc, &e, 1, 0.1f, out, false), CB_OK);
        if (k > 0) {
            double step = max_pose_diff(out, prev, sc.n);
            max_step = fmax(max_step, step);
            total += step;
        }
        memcpy(prev, out, cb_skeleton_pose_bytes(sc.skeleton));
    }
    CB_CHECK(max_pose_diff(out, rest.ptr, sc.n) < 3e-7, "weight 0 is not the rest pose");
    CB_CHECK(max_step < 0.05 && max_step <= 5.0 * total / 100.0,
             "the fade to rest jumps: largest step %g, mean %g", max_step, total / 100.0);
    /* A masked entry: joints the mask removes fall back to rest, the others keep the clip. */
    cb_blend_entry m = {sc.clips[0], 0.4f, 1.0f, CB_BLEND_MODE_NORMAL, {sc.masks[1], sc.soa}};
    assert_int_equal(blend(&sc, &m, 1, 0.0f, out, false), CB_OK);
    cb_blend_entry plain = {sc.clips[0], 0.4f, 1.0f};
    assert_int_equal(blend(&sc, &plain, 1, 0.0f, prev, false), CB_OK);
    for (size_t j = 0; j < sc.n; ++j) {
        const cb_xform_group *want = sc.masks[1][j] == 0.0f ? rest.ptr : prev;
        /* Compare joint j alone through a one-joint view. */
        dref_xform x = dref_from_pose(out, j), y = dref_from_pose(want, j);
        for (int k = 0; k < 3; ++k) {
            CB_CHECK(fabs(x.t[k] - y.t[k]) < 3e-7, "masked joint %zu translation", j);
        }
    }
    free(out), free(prev);
    scene_free(&sc);
}

static void pose_blend_masks_split_the_body(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    scene sc = scene_make(&r, 3 * cb_simd_width() + 2);
    float *upper = malloc(sc.soa * sizeof(float)), *lower = malloc(sc.soa * sizeof(float));
    cb_mask_rule rule = {cb_skeleton_joint_name(sc.skeleton, 2), 1.0f, false};
    assert_int_equal(cb_skeleton_build_mask(sc.skeleton, 0.0f, &rule, 1,
                                            (cb_float_span){upper, sc.soa}, NULL),
                     CB_OK);
    rule.weight = 0.0f;
    assert_int_equal(cb_skeleton_build_mask(sc.skeleton, 1.0f, &rule, 1,
                                            (cb_float_span){lower, sc.soa}, NULL),
                     CB_OK);
    cb_xform_group *out = cb_test_pose_alloc(sc.skeleton, false);
    cb_xform_group *ua = cb_test_pose_alloc(sc.skeleton, false);
    cb_xform_group *lb = cb_test_pose_alloc(sc.skeleton, false);
    for (int it = 0; it < 20; ++it) {
        float ta = cb_prng_range(&r, 0, 1), tb = cb_prng_range(&r, 0, 1);
        cb_blend_entry e[2] = {{sc.clips[0], ta, 1.0f, CB_BLEND_MODE_NORMAL, {upper, sc.soa}},
                               {sc.clips[3], tb, 1.0f, CB_BLEND_MODE_NORMAL, {lower, sc.soa}}};
        assert_int_equal(blend(&sc, e, 2, 0.0f, out, false), CB_OK);
        cb_pose_sample_job sa = {sc.clips[0], ta, {ua, sc.groups}};
        cb_pose_sample_job sb = {sc.clips[3], tb, {lb, sc.groups}};
        assert_int_equal(cb_pose_sample_job_run(&sa, NULL), CB_OK);
        assert_int_equal(cb_pose_sample_job_run(&sb, NULL), CB_OK);
        for (size_t j = 0; j < sc.n; ++j) {
            dref_xform got = dref_from_pose(out, j);
            dref_xform want = dref_from_pose(upper[j] == 1.0f ? ua : lb, j);
            for (int k = 0; k < 3; ++k) {
                CB_CHECK(fabs(got.t[k] - want.t[k]) < 2e-7, "joint %zu: mask not respected", j);
            }
            for (int k = 0; k < 4; ++k) {
                CB_CHECK(fabs(fabs(got.q[k]) - fabs(want.q[k])) < 3e-7,
                         "joint %zu: mask not respected (rotation)", j);
            }
        }
    }
    free(upper), free(lower), free(out), free(ua), free(lb);
    scene_free(&sc);
}

static void pose_blend_override_and_additive_layers(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    scene sc = scene_make(&r, 2 * cb_simd_width() + 3);
    size_t bytes = cb_skeleton_pose_bytes(sc.skeleton);
    cb_xform_group *base = cb_test_pose_alloc(sc.skeleton, false);
    cb_xform_group *out = cb_test_pose_alloc(sc.skeleton, false);
    cb_xform_group *over = cb_test_pose_alloc(sc.skeleton, false);

    /* An override at weight 1 with a mask replaces exactly the masked joints. */
    float *upper = sc.masks[0]; /* 1 on the subtree, 0.25 elsewhere */
    for (size_t j = 0; j < sc.soa; ++j) {
        upper[j] = upper[j] == 1.0f ? 1.0f : 0.0f;
    }
    cb_blend_entry e[3] = {{sc.clips[0], 0.3f, 0.6f},
                           {sc.clips[1], 0.7f, 0.4f},
                           {sc.clips[3], 0.5f, 1.0f, CB_BLEND_MODE_OVERRIDE, {upper, sc.soa}}};
    assert_int_equal(blend(&sc, e, 2, 0.0f, base, false), CB_OK);
    assert_int_equal(blend(&sc, e, 3, 0.0f, out, false), CB_OK);
    cb_pose_sample_job sj = {sc.clips[3], 0.5f, {over, sc.groups}};
    assert_int_equal(cb_pose_sample_job_run(&sj, NULL), CB_OK);
    for (size_t j = 0; j < sc.n; ++j) {
        dref_xform got = dref_from_pose(out, j);
        dref_xform want = dref_from_pose(upper[j] == 1.0f ? over : base, j);
        for (int k = 0; k < 3; ++k) {
            CB_CHECK(fabs(got.t[k] - want.t[k]) < 2e-7 && fabs(got.s[k] - want.s[k]) < 2e-7,
                     "override: joint %zu", j);
        }
        for (int k = 0; k < 4; ++k) {
            CB_CHECK(fabs(fabs(got.q[k]) - fabs(want.q[k])) < 4e-7, "override: joint %zu q", j);
        }
    }

    /* An additive clip whose frames never change is the identity delta: any weight, any mask,
     * the pose is bit-identical to the pose without it. */
    float times[1] = {0.0f};
    float q[4] = {0.1f, 0.2f, 0.3f, 0.9f};
    cb_clip_track tr = {.joint = (uint32_t)(sc.n - 1), .channel = CB_CHANNEL_ROTATION,
                        .key_count = 1, .times = times, .values = q};
    cb_clip_desc d = {.skeleton = sc.skeleton, .duration_s = 0.7f, .tracks = &tr,
                      .track_count = 1, .additive = CB_ADDITIVE_FIRST_FRAME};
    cb_clip *still = NULL;
    assert_int_equal(cb_clip_create(&d, &still, NULL), CB_OK);
    for (int it = 0; it < 20; ++it) {
        cb_blend_entry ea[4] = {e[0], e[1], e[2],
                                {still, cb_prng_range(&r, -5, 5), cb_prng_range(&r, 0, 3),
                                 CB_BLEND_MODE_ADDITIVE,
                                 {it % 2 ? sc.masks[1] : NULL, sc.soa}}};
        size_t with_override = (size_t)(it % 3 != 0);
        cb_blend_entry no_add[3];
        memcpy(no_add, ea, sizeof no_add);
        size_t nb = 2 + with_override;
        if (!with_override) {
            ea[2] = ea[3];
        }
        assert_int_equal(blend(&sc, no_add, nb, 0.0f, base, false), CB_OK);
        assert_int_equal(blend(&sc, ea, nb + 1, 0.0f, out, false), CB_OK);
        CB_CHECK(memcmp(base, out, bytes) == 0, "identity additive changed the pose (it %d)", it);
        assert_int_equal(blend(&sc, no_add, nb, 0.0f, base, true), CB_OK);
        assert_int_equal(blend(&sc, ea, nb + 1, 0.0f, out, true), CB_OK);
        CB_CHECK(memcmp(base, out, bytes) == 0, "ref: identity additive changed the pose");
    }
    /* Weight 0 (below epsilon) leaves any additive out, bit for bit. */
    cb_blend_entry ez[3] = {e[0], e[1], {sc.clips[4], 0.5f, 0.0f, CB_BLEND_MODE_ADDITIVE}};
    assert_int_equal(blend(&sc, ez, 2, 0.0f, base, false), CB_OK);
    assert_int_equal(blend(&sc, ez, 3, 0.0f, out, false), CB_OK);
    assert_memory_equal(base, out, bytes);
    /* Weight 1 of a delta dq on base b gives b * dq (checked per joint in double). */
    cb_blend_entry e1[3] = {e[0], e[1], {sc.clips[5], 0.35f, 1.0f, CB_BLEND_MODE_ADDITIVE}};
    assert_int_equal(blend(&sc, e1, 3, 0.0f, out, false), CB_OK);
    cb_xform_group *delta = cb_test_pose_alloc(sc.skeleton, false);
    sj = (cb_pose_sample_job){sc.clips[5], 0.35f, {delta, sc.groups}};
    assert_int_equal(cb_pose_sample_job_run(&sj, NULL), CB_OK);
    for (size_t j = 0; j < sc.n; ++j) {
        dref_xform b = dref_from_pose(base, j), dq = dref_from_pose(delta, j),
                   got = dref_from_pose(out, j);
        double want[4];
        dref_quat_mul(b.q, dq.q, want);
        double dot = want[0] * got.q[0] + want[1] * got.q[1] + want[2] * got.q[2] +
                     want[3] * got.q[3];
        CB_CHECK(fabs(fabs(dot) - 1.0) < 1e-6, "additive weight 1, joint %zu: |dot| %g", j, dot);
        for (int k = 0; k < 3; ++k) {
            CB_CHECK(fabs(got.t[k] - (b.t[k] + dq.t[k])) < 3e-7, "additive t, joint %zu", j);
            CB_CHECK(fabs(got.s[k] - b.s[k] * dq.s[k]) < 5e-7, "additive s, joint %zu", j);
        }
    }
    free(delta);
    cb_clip_destroy(still);
    free(base), free(out), free(over);
    scene_free(&sc);
}

/* Padding lanes: NaN in the masks' padding entries changes no real lane, not even by one bit,
 * and every job leaves identity in the output's padding lanes. */
static void pose_padding_lanes_never_leak(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    size_t w = cb_simd_width();
    scene sc = scene_make(&r, 2 * w + 1);
    size_t bytes = cb_skeleton_pose_bytes(sc.skeleton);
    float *poisoned[2];
    for (int m = 0; m < 2; ++m) {
        poisoned[m] = malloc(sc.soa * sizeof(float));
        memcpy(poisoned[m], sc.masks[m], sc.soa * sizeof(float));
        for (size_t j = sc.n; j < sc.soa; ++j) {
            poisoned[m][j] = NAN;
        }
    }
    /* a starts as NaN, b as zeros: the output never depends on what was there before. */
    cb_xform_group *a = cb_test_pose_alloc(sc.skeleton, true);
    cb_xform_group *b = cb_test_pose_alloc(sc.skeleton, false);
    for (int it = 0; it < 40; ++it) {
        cb_blend_entry e[8];
        size_t count;
        random_entries(&r, &sc, e, &count);
        /* Small weights, so that the rest fallback runs too. */
        if (it % 2) {
            for (size_t k = 0; k < count; ++k) {
                e[k].weight *= 0.05f;
            }
        }
        for (int path = 0; path < 2; ++path) {
            assert_int_equal(blend(&sc, e, count, 0.0f, a, path), CB_OK);
            for (size_t k = 0; k < count; ++k) {
                if (e[k].mask.ptr != NULL) {
                    e[k].mask.ptr = e[k].mask.ptr == sc.masks[0] ? poisoned[0] : poisoned[1];
                }
            }
            assert_int_equal(blend(&sc, e, count, 0.0f, b, path), CB_OK);
            CB_CHECK(memcmp(a, b, bytes) == 0, "NaN mask padding changed the pose (path %d)",
                     path);
            for (size_t k = 0; k < count; ++k) {
                if (e[k].mask.ptr != NULL) {
                    e[k].mask.ptr = e[k].mask.ptr == poisoned[0] ? sc.masks[0] : sc.masks[1];
                }
            }
        }
        const float *g = (const float *)a + (sc.groups - 1) * 10 * w;
        for (size_t l = sc.n - (sc.groups - 1) * w; l < w; ++l) {
            CB_CHECK(g[0 * w + l] == 0.0f && g[3 * w + l] == 0.0f && g[6 * w + l] == 1.0f &&
                         g[7 * w + l] == 1.0f,
                     "output padding lane %zu is not identity", l);
        }
    }
    /* Crossfade of poses whose padding lanes are NaN. */
    cb_xform_group *from = sampled_pose(&sc, 0, 0.3f, true);
    cb_xform_group *to = sampled_pose(&sc, 1, 0.8f, true);
    cb_pose_crossfade_job cj = {sc.skeleton, {from, sc.groups}, {to, sc.groups}, 0.4f,
                                {poisoned[0], sc.soa}, {a, sc.groups}};
    assert_int_equal(cb_pose_crossfade_job_run(&cj, NULL), CB_OK);
    float *fp = (float *)from, *tp = (float *)to;
    for (size_t j = sc.n; j < sc.soa; ++j) {
        size_t gi = j / w, l = j % w;
        for (int k = 0; k < 10; ++k) {
            fp[gi * 10 * w + k * w + l] = tp[gi * 10 * w + k * w + l] = NAN;
        }
    }
    cj.mask.ptr = sc.masks[0];
    cj.out.ptr = b;
    assert_int_equal(cb_pose_crossfade_job_run(&cj, NULL), CB_OK);
    CB_CHECK(memcmp(a, b, bytes) == 0, "crossfade: padding leaked");
    free(from), free(to), free(a), free(b), free(poisoned[0]), free(poisoned[1]);
    scene_free(&sc);
}

/* Crossfade: true slerp per joint (constant angular speed), lerped translation and scale,
 * endpoints, masks, and out aliasing an input. */
static void pose_crossfade_is_a_true_slerp(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    scene sc = scene_make(&r, 2 * cb_simd_width() + 3);
    cb_xform_group *from = cb_test_pose_alloc(sc.skeleton, false);
    cb_xform_group *to = cb_test_pose_alloc(sc.skeleton, false);
    cb_xform_group *out = cb_test_pose_alloc(sc.skeleton, false);
    cb_pose_sample_job sj = {sc.clips[0], 0.1f, {from, sc.groups}};
    assert_int_equal(cb_pose_sample_job_run(&sj, NULL), CB_OK);
    sj = (cb_pose_sample_job){sc.clips[3], 0.6f, {to, sc.groups}};
    assert_int_equal(cb_pose_sample_job_run(&sj, NULL), CB_OK);
    cb_err_track eq = cb_err_track_make("crossfade slerp vs double");
    cb_err_track et = cb_err_track_make("crossfade lerp vs double");
    for (int k = 0; k <= 16; ++k) {
        float wgt = (float)k / 16.0f;
        cb_pose_crossfade_job cj = {sc.skeleton, {from, sc.groups}, {to, sc.groups}, wgt,
                                    {NULL, 0}, {out, sc.groups}};
        assert_int_equal(cb_pose_crossfade_job_run(&cj, NULL), CB_OK);
        for (size_t j = 0; j < sc.n; ++j) {
            dref_xform a = dref_from_pose(from, j), b = dref_from_pose(to, j),
                       got = dref_from_pose(out, j);
            double want[4];
            dref_quat_slerp(a.q, b.q, wgt, want);
            double dot = want[0] * got.q[0] + want[1] * got.q[1] + want[2] * got.q[2] +
                         want[3] * got.q[3];
            double sign = dot < 0 ? -1 : 1;
            for (int c = 0; c < 4; ++c) {
                cb_err_track_add(&eq, got.q[c], sign * want[c], j);
            }
            for (int c = 0; c < 3; ++c) {
                cb_err_track_add(&et, got.t[c], (1 - wgt) * a.t[c] + wgt * b.t[c], j);
                cb_err_track_add(&et, got.s[c], (1 - wgt) * a.s[c] + wgt * b.s[c], j);
            }
        }
    }
    /* The slerp kernel's own bound (docs/performance.md, 4.5e-7; measured here 1.9e-7) and the
     * lerp's two roundings of values up to 1.4 (measured 6.0e-8). */
    cb_err_track_check(&eq, 4.5e-7);
    cb_err_track_check(&et, 1.5e-7);
    /* A mask of 0 keeps `from` on those joints; out may alias from. */
    size_t bytes = cb_skeleton_pose_bytes(sc.skeleton);
    cb_xform_group *copy = cb_test_pose_alloc(sc.skeleton, false);
    memcpy(copy, from, bytes);
    cb_pose_crossfade_job cj = {sc.skeleton, {copy, sc.groups}, {to, sc.groups}, 0.7f,
                                {sc.masks[1], sc.soa}, {copy, sc.groups}};
    assert_int_equal(cb_pose_crossfade_job_run(&cj, NULL), CB_OK);
    for (size_t j = 0; j < sc.n; ++j) {
        if (sc.masks[1][j] == 0.0f) {
            dref_xform x = dref_from_pose(copy, j), y = dref_from_pose(from, j);
            CB_CHECK(fabs(x.t[0] - y.t[0]) < 1e-7 && fabs(fabs(x.q[3]) - fabs(y.q[3])) < 3e-7,
                     "mask 0 moved joint %zu", j);
        }
    }
    free(copy), free(from), free(to), free(out);
    scene_free(&sc);
}

/* ------------------------------------------------------------------------------------------ */
/* Masks of one float per joint (issue 11, trap 7)                                            */

/* Random per-joint factors in [0, 1] (a quarter of them exactly 0 or 1) in a heap buffer of
 * exactly n floats, so that ASan (the sanitize build of the test command) reports any read past
 * the last joint. */
static float *exact_mask(cb_prng *r, size_t n)
{
    float *m = malloc(n * sizeof(float));
    for (size_t j = 0; j < n; ++j) {
        uint32_t k = cb_prng_below(r, 8);
        m[j] = k == 0 ? 0.0f : k == 1 ? 1.0f : cb_prng_range(r, 0.0f, 1.0f);
    }
    return m;
}

/* The same factors padded to the SoA joint count with zeros (cb_skeleton_build_mask's padding). */
static float *padded_copy(const float *m, size_t n, size_t soa)
{
    float *p = calloc(soa, sizeof(float));
    memcpy(p, m, n * sizeof(float));
    return p;
}

/* Blend (SIMD and scalar paths) and crossfade jobs given masks of exactly joint_count floats,
 * on skeletons whose last group is partial at every W (31 joints: the "needs 32"):
 * accepted, within the accuracy bounds of the double-precision reference of the masked blend
 * and slerp, and bit-identical to the same masks padded with zeros. One float short is still
 * refused, naming the joint count. */
static void pose_masks_take_one_float_per_joint(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    size_t w = cb_simd_width();
    const size_t sizes[] = {31, 1, 2 * w + 1, 3 * w - 1, 2 * w};
    cb_err_track et = cb_err_track_make("exact masks: blend translation");
    cb_err_track eq = cb_err_track_make("exact masks: blend rotation");
    cb_err_track es = cb_err_track_make("exact masks: blend scale");
    cb_err_track ex = cb_err_track_make("exact masks: crossfade rotation");
    cb_err_track ey = cb_err_track_make("exact masks: crossfade translation");
    for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; ++c) {
        scene sc = scene_make(&r, sizes[c]);
        size_t n = sc.n, bytes = cb_skeleton_pose_bytes(sc.skeleton);
        cb_xform_group *a = cb_test_pose_alloc(sc.skeleton, true);
        cb_xform_group *b = cb_test_pose_alloc(sc.skeleton, false);
        float *exact[3], *padded[3];
        for (int m = 0; m < 3; ++m) {
            exact[m] = exact_mask(&r, n);
            padded[m] = padded_copy(exact[m], n, sc.soa);
        }
        for (int rep = 0; rep < 12; ++rep) {
            cb_blend_entry e[8];
            size_t count;
            random_entries(&r, &sc, e, &count);
            for (size_t k = 0; k < count; ++k) {
                e[k].mask = (cb_float_cspan){exact[(k + (size_t)rep) % 3], n};
            }
            float thr = cb_prng_range(&r, 0.0f, 1.0f);
            for (int path = 0; path < 2; ++path) {
                cb_error err = {0};
                cb_pose_blend_job job = {sc.skeleton, {e, count}, thr, {a, sc.groups}};
                cb_result got = path ? cb_pose_blend_job_run_ref(&job, &err)
                                     : cb_pose_blend_job_run(&job, &err);
                CB_CHECK(got == CB_OK && strstr(err.message, "needs") == NULL,
                         "%zu joints, %zu-float masks: %s (%s)", n, n, cb_result_str(got),
                         err.message);
                check_against_reference(&sc, e, count, thr, a, &et, &eq, &es);
                cb_blend_entry ep[8];
                memcpy(ep, e, count * sizeof e[0]);
                for (size_t k = 0; k < count; ++k) {
                    ep[k].mask = (cb_float_cspan){padded[(k + (size_t)rep) % 3], sc.soa};
                }
                assert_int_equal(blend(&sc, ep, count, thr, b, path == 1), CB_OK);
                CB_CHECK(memcmp(a, b, bytes) == 0,
                         "%zu joints (path %d): an unpadded mask changed the pose", n, path);
            }
        }
        /* Crossfade with a mask of n floats: slerp(from, to, weight * mask[j]) per joint. */
        cb_xform_group *from = sampled_pose(&sc, 0, 0.2f, false);
        cb_xform_group *to = sampled_pose(&sc, 3, 0.7f, false);
        float wgt = cb_prng_range(&r, 0.2f, 1.0f);
        cb_pose_crossfade_job cj = {sc.skeleton, {from, sc.groups}, {to, sc.groups},
                                    wgt,         {exact[0], n},     {a, sc.groups}};
        assert_int_equal(cb_pose_crossfade_job_run(&cj, NULL), CB_OK);
        for (size_t j = 0; j < n; ++j) {
            dref_xform x = dref_from_pose(from, j), y = dref_from_pose(to, j),
                       got = dref_from_pose(a, j);
            double want[4];
            double wj = (double)wgt * exact[0][j];
            dref_quat_slerp(x.q, y.q, wj, want);
            double dot = 0;
            for (int k = 0; k < 4; ++k) {
                dot += want[k] * got.q[k];
            }
            for (int k = 0; k < 4; ++k) {
                cb_err_track_add(&ex, got.q[k], (dot < 0 ? -1 : 1) * want[k], j);
            }
            for (int k = 0; k < 3; ++k) {
                cb_err_track_add(&ey, got.t[k], (1 - wj) * x.t[k] + wj * y.t[k], j);
            }
        }
        cj.mask = (cb_float_cspan){padded[0], sc.soa}, cj.out.ptr = b;
        assert_int_equal(cb_pose_crossfade_job_run(&cj, NULL), CB_OK);
        CB_CHECK(memcmp(a, b, bytes) == 0, "%zu joints: crossfade differs unpadded", n);
        /* One float short: refused by both jobs, naming the joint count, nothing written. */
        char needs[48];
        snprintf(needs, sizeof needs, "has %zu floats, needs %zu ", n - 1, n);
        memcpy(b, a, bytes);
        cj.mask = (cb_float_cspan){exact[0], n - 1};
        cb_error err = {0};
        assert_int_equal(cb_pose_crossfade_job_run(&cj, &err), CB_ERR_SPAN_TOO_SHORT);
        CB_CHECK(strstr(err.message, needs) != NULL, "crossfade: %s", err.message);
        cb_blend_entry e1 = {sc.clips[0], 0.5f, 1.0f, CB_BLEND_MODE_NORMAL, {exact[1], n - 1}};
        cb_pose_blend_job bj = {sc.skeleton, {&e1, 1}, 0.0f, {b, sc.groups}};
        memset(&err, 0, sizeof err);
        assert_int_equal(cb_pose_blend_job_run(&bj, &err), CB_ERR_SPAN_TOO_SHORT);
        CB_CHECK(strstr(err.message, needs) != NULL && strstr(err.message, "entries[0].mask"),
                 "blend: %s", err.message);
        assert_int_equal(cb_pose_blend_job_run_ref(&bj, NULL), CB_ERR_SPAN_TOO_SHORT);
        assert_memory_equal(a, b, bytes);
        for (int m = 0; m < 3; ++m) {
            free(exact[m]), free(padded[m]);
        }
        free(a), free(b), free(from), free(to);
        scene_free(&sc);
    }
    cb_err_track_check(&et, BOUND_T);
    cb_err_track_check(&eq, BOUND_Q);
    cb_err_track_check(&es, BOUND_S);
    /* As pose_crossfade_is_a_true_slerp: the slerp kernel's bound (docs/performance.md), plus
     * one rounding of weight * mask, which moves the result by at most 6e-8 of its angle. */
    cb_err_track_check(&ex, 4.5e-7);
    /* The lerp's two roundings plus the one of weight * mask, values up to 0.5 m. */
    cb_err_track_check(&ey, 1.5e-7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pose_jobs_validity),
        cmocka_unit_test(pose_blend_matches_double_reference),
        cmocka_unit_test(pose_blend_weight_one_reproduces_the_sample),
        cmocka_unit_test(pose_blend_falls_back_to_rest_smoothly),
        cmocka_unit_test(pose_blend_masks_split_the_body),
        cmocka_unit_test(pose_blend_override_and_additive_layers),
        cmocka_unit_test(pose_padding_lanes_never_leak),
        cmocka_unit_test(pose_crossfade_is_a_true_slerp),
        cmocka_unit_test(pose_masks_take_one_float_per_joint),
    };
    return CB_RUN_TESTS(tests);
}
