/* ik: the IK jobs on the thread pool. Many characters share one immutable skeleton; each runs
 * two-bone IK on both legs and an aim over neck and head on its own pose, in place, from every
 * thread of the pool at once. The result must be bit-identical to running the same jobs one
 * after the other on one thread, for every thread count. A separate program, in the `jobs`
 * suite, so that the test command also runs it under ThreadSanitizer. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_test.h"
#include "test_util.h"

enum { CHARACTERS = 192 };

typedef struct crowd {
    cb_embedded *set;
    const cb_skeleton *s;
    size_t groups, bytes;
    uint32_t legs[2][3], neck, head;
    cb_xform_group *start;  /* CHARACTERS poses before IK */
    cb_xform_group *work;   /* CHARACTERS poses the jobs correct in place */
    float (*targets)[3][3]; /* per character: left foot, right foot, look-at */
    cb_result *results;     /* per character: the first failure, or CB_OK */
} crowd;

static cb_xform_group *pose_of(cb_xform_group *base, size_t bytes, size_t c)
{
    return (cb_xform_group *)((char *)base + c * bytes);
}

static void run_character(crowd *cr, size_t c)
{
    cb_xform_group *pose = pose_of(cr->work, cr->bytes, c);
    cb_result r = CB_OK;
    for (int side = 0; side < 2; ++side) {
        cb_ik_two_bone_job j = {.skeleton = cr->s,
                                .pose = {pose, cr->groups},
                                .out = {pose, cr->groups},
                                .start_joint = cr->legs[side][0],
                                .mid_joint = cr->legs[side][1],
                                .end_joint = cr->legs[side][2],
                                .pole = {0, 0, 1},
                                .mid_axis = {1, 0, 0},
                                .weight = 1.0f};
        memcpy(j.target, cr->targets[c][side], sizeof j.target);
        r = r != CB_OK ? r : cb_ik_two_bone_job_run(&j, NULL);
    }
    cb_ik_aim_joint chain[2] = {{cr->neck, 0.4f}, {cr->head, 1.0f}};
    cb_ik_aim_job a = {.skeleton = cr->s,
                       .pose = {pose, cr->groups},
                       .out = {pose, cr->groups},
                       .chain = {chain, 2},
                       .pole = {0, 1, 0},
                       .offset = {0.0f, 0.075f, 0.085f},
                       .angle_limit = 1.2f,
                       .weight = 0.9f};
    memcpy(a.target, cr->targets[c][2], sizeof a.target);
    r = r != CB_OK ? r : cb_ik_aim_job_run(&a, NULL);
    cr->results[c] = r;
}

static void range_fn(void *user, size_t begin, size_t end, uint32_t thread_index)
{
    (void)thread_index;
    for (size_t c = begin; c < end; ++c) {
        run_character(user, c);
    }
}

static void ik_jobs_share_a_skeleton_across_threads(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    crowd cr = {0};
    assert_int_equal(cb_embedded_create(NULL, &cr.set, NULL), CB_OK);
    cr.s = cb_embedded_skeleton(cr.set);
    cr.groups = cb_skeleton_group_count(cr.s);
    cr.bytes = cb_skeleton_pose_bytes(cr.s);
    const char *names[2][3] = {{"thigh_l", "calf_l", "foot_l"}, {"thigh_r", "calf_r", "foot_r"}};
    uint32_t j;
    for (int side = 0; side < 2; ++side) {
        for (int k = 0; k < 3; ++k) {
            assert_int_equal(cb_skeleton_find_joint(cr.s, names[side][k], &j), CB_OK);
            cr.legs[side][k] = (uint32_t)j;
        }
    }
    assert_int_equal(cb_skeleton_find_joint(cr.s, "neck", &j), CB_OK);
    cr.neck = (uint32_t)j;
    assert_int_equal(cb_skeleton_find_joint(cr.s, "head", &j), CB_OK);
    cr.head = (uint32_t)j;
    size_t align = cb_simd_group_align();
    size_t total = (CHARACTERS * cr.bytes + align - 1) / align * align;
    cr.start = aligned_alloc(align, total);
    cr.work = aligned_alloc(align, total);
    cb_xform_group *serial = aligned_alloc(align, total);
    cr.targets = calloc(CHARACTERS, sizeof *cr.targets);
    cr.results = calloc(CHARACTERS, sizeof *cr.results);
    assert_true(cr.start && cr.work && serial && cr.targets && cr.results);
    for (size_t c = 0; c < CHARACTERS; ++c) {
        cb_blend_entry e[2];
        float t = cb_prng_range(&r, 0.0f, 1.0f);
        for (int k = 0; k < 2; ++k) {
            e[k] = (cb_blend_entry){cb_embedded_clip(cr.set, 1 + cb_prng_below(&r, 16)),
                                    t,
                                    cb_prng_range(&r, 0.2f, 1.0f),
                                    CB_BLEND_MODE_NORMAL,
                                    {NULL, 0}};
        }
        cb_pose_blend_job b = {cr.s, {e, 2}, 0.0f, {pose_of(cr.start, cr.bytes, c), cr.groups}};
        assert_int_equal(cb_pose_blend_job_run(&b, NULL), CB_OK);
        for (int k = 0; k < 2; ++k) {
            cr.targets[c][k][0] = (k == 0 ? 0.1f : -0.1f) + cb_prng_range(&r, -0.1f, 0.1f);
            cr.targets[c][k][1] = cb_prng_range(&r, 0.05f, 0.4f);
            cr.targets[c][k][2] = cb_prng_range(&r, -0.3f, 0.3f);
        }
        cr.targets[c][2][0] = cb_prng_range(&r, -2.0f, 2.0f);
        cr.targets[c][2][1] = cb_prng_range(&r, 0.5f, 2.5f);
        cr.targets[c][2][2] = cb_prng_range(&r, -2.0f, 2.0f);
    }
    /* The serial reference. */
    memcpy(cr.work, cr.start, CHARACTERS * cr.bytes);
    range_fn(&cr, 0, CHARACTERS, 0);
    for (size_t c = 0; c < CHARACTERS; ++c) {
        CB_CHECK(cr.results[c] == CB_OK, "character %zu: %s", c, cb_result_str(cr.results[c]));
    }
    memcpy(serial, cr.work, CHARACTERS * cr.bytes);
    CB_CHECK(memcmp(serial, cr.start, CHARACTERS * cr.bytes) != 0, "the jobs changed nothing");
    const uint32_t threads[3] = {2, 3, 4};
    for (int t = 0; t < 3; ++t) {
        cb_jobs_desc d = {.thread_count = threads[t], .spin_count = 100};
        cb_jobs *jobs = NULL;
        assert_int_equal(cb_jobs_create(&d, &jobs, NULL), CB_OK);
        for (size_t grain = 1; grain <= 16; grain *= 4) {
            memcpy(cr.work, cr.start, CHARACTERS * cr.bytes);
            assert_int_equal(cb_jobs_parallel_for(jobs, CHARACTERS, grain, range_fn, &cr), CB_OK);
            CB_CHECK(memcmp(serial, cr.work, CHARACTERS * cr.bytes) == 0,
                     "%u threads, grain %zu: results differ from the serial run", threads[t],
                     grain);
            for (size_t c = 0; c < CHARACTERS; ++c) {
                CB_CHECK(cr.results[c] == CB_OK, "character %zu: %s", c,
                         cb_result_str(cr.results[c]));
            }
        }
        cb_jobs_destroy(jobs);
    }
    free(cr.start), free(cr.work), free(serial), free(cr.targets), free(cr.results);
    cb_embedded_destroy(cr.set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ik_jobs_share_a_skeleton_across_threads),
    };
    return CB_RUN_TESTS(tests);
}
