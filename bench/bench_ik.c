/* IK post-process benchmarks on the embedded 64-joint humanoid.
 *
 * Each character has its own blended local pose (2 locomotion clips), its own model matrices
 * and its own targets; a job corrects the character's pose in place. Items are characters (one
 * job, or one frame's post-process, per character); "per_char" is ns per character.
 *   ik_two_bone_leg_pose/C/64      two-bone IK on a leg, model space computed by the job from
 *                                  the pose (root, pelvis, thigh, calf, foot: 5 local matrices)
 *   ik_two_bone_arm_pose/C/64      the same on an arm (9 local matrices down the spine)
 *   ik_two_bone_leg_model/C/64     two-bone IK on a leg reading local-to-model matrices
 *   ik_aim_head_pose/C/64          look-at over neck + head, model space from the pose
 *   ik_aim_spine_pose/C/64         look-at over spine_01 .. head (5 joints), from the pose
 *   ik_aim_head_model/C/64         look-at over neck + head reading local-to-model matrices
 *   ltm_full/C/64, ltm_from_thigh/C/64   local-to-model of all joints / from thigh_l on
 *   ik_frame_pose/C/64             the post-process of a frame the cheap way: both legs and a
 *                                  look-at, each job computing its model space, then one
 *                                  local-to-model for the host
 *   ik_frame_model/C/64            the same from matrices: local-to-model, the three jobs
 *                                  reading it, local-to-model again over the corrected
 *                                  subtrees (cb_ik_refresh_range: the legs, the neck's 5 joints)
 *   ik_legs_pose/C/64, ik_legs_model/C/64   the same with the feet only: the legs come last in
 *                                  the joint order, so the refresh after is short
 * No variant is SIMD: a job solves one chain, a few dozen dependent scalar operations (see
 * src/ik/ik.c); the comparisons that matter are pose against model. Job costs do not depend
 * on the values (no iteration, no data-dependent loops), so repeating a job in place on a pose
 * it already corrected measures the same work. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/prng.h"
#include "bench_all.h"
#include "crowdblend/crowdblend.h"
#include "shim.h"

typedef struct ik_workload {
    cb_embedded *set;
    const cb_skeleton *skel;
    size_t chars, groups, joints, bytes;
    cb_xform_group *poses;  /* chars poses */
    float *models;          /* chars * joints * 16 */
    float (*targets)[4][3]; /* left foot, right foot, look-at, left hand */
    uint32_t leg[2][3], arm[3], spine[5];
    uint32_t neck_from, neck_to; /* cb_ik_refresh_range of the neck: its subtree */
} ik_workload;

static void workload_free(ik_workload *w)
{
    cb_embedded_destroy(w->set);
    free(w->poses), free(w->models), free(w->targets);
}

static uint32_t find(const ik_workload *w, const char *name)
{
    uint32_t j = 0;
    cb_skeleton_find_joint(w->skel, name, &j);
    return (uint32_t)j;
}

static cb_xform_group *pose_of(const ik_workload *w, size_t c)
{
    return (cb_xform_group *)((char *)w->poses + c * w->bytes);
}

static float *model_of(const ik_workload *w, size_t c)
{
    return w->models + c * w->joints * 16;
}

static void ltm(const ik_workload *w, size_t c, uint32_t from, uint32_t to)
{
    cb_ltm_job job = {.skeleton = w->skel,
                      .local = {pose_of(w, c), w->groups},
                      .from = from,
                      .to = to,
                      .model = {model_of(w, c), w->joints * 16}};
    cb_ltm_job_run(&job, NULL);
}

static bool workload_make(ik_workload *w, size_t chars)
{
    memset(w, 0, sizeof *w);
    if (cb_embedded_create(NULL, &w->set, NULL) != CB_OK) {
        return false;
    }
    w->skel = cb_embedded_skeleton(w->set);
    w->chars = chars;
    w->groups = cb_skeleton_group_count(w->skel);
    w->joints = cb_skeleton_joint_count(w->skel);
    w->bytes = cb_skeleton_pose_bytes(w->skel);
    /* Every pose is blended and every model computed below: no need to clear them. Pose
     * bytes are a multiple of the group alignment, so aligned_alloc's size rule holds. */
    w->poses = aligned_alloc(cb_simd_group_align(), chars * w->bytes);
    w->models = malloc(chars * w->joints * 16 * sizeof(float));
    w->targets = calloc(chars, sizeof *w->targets);
    if (!w->poses || !w->models || !w->targets) {
        workload_free(w);
        return false;
    }
    const char *legs[2][3] = {{"thigh_l", "calf_l", "foot_l"}, {"thigh_r", "calf_r", "foot_r"}};
    for (int s = 0; s < 2; ++s) {
        for (int k = 0; k < 3; ++k) {
            w->leg[s][k] = find(w, legs[s][k]);
        }
    }
    w->arm[0] = find(w, "upperarm_l"), w->arm[1] = find(w, "lowerarm_l");
    w->arm[2] = find(w, "hand_l");
    const char *spine[5] = {"spine_01", "spine_02", "spine_03", "neck", "head"};
    for (int k = 0; k < 5; ++k) {
        w->spine[k] = find(w, spine[k]);
    }
    cb_ik_refresh_range(w->skel, w->spine[3], &w->neck_from, &w->neck_to, NULL);
    cb_prng r = cb_prng_seed(0x1C0FFEE + chars);
    for (size_t c = 0; c < chars; ++c) {
        float t = cb_prng_range(&r, 0.0f, 1.0f);
        cb_blend_entry e[2];
        for (int k = 0; k < 2; ++k) {
            e[k] = (cb_blend_entry){cb_embedded_clip(w->set, 1 + cb_prng_below(&r, 16)),
                                    t,
                                    0.5f,
                                    CB_BLEND_MODE_NORMAL,
                                    {NULL, 0}};
        }
        cb_pose_blend_job b = {w->skel, {e, 2}, 0.0f, {pose_of(w, c), w->groups}};
        cb_pose_blend_job_run(&b, NULL);
        ltm(w, c, 0, 0);
        float(*tg)[3] = w->targets[c];
        for (int s = 0; s < 2; ++s) { /* feet on uneven ground */
            tg[s][0] = s == 0 ? 0.1f : -0.1f;
            tg[s][1] = cb_prng_range(&r, 0.05f, 0.25f);
            tg[s][2] = cb_prng_range(&r, -0.3f, 0.3f);
        }
        tg[2][0] = cb_prng_range(&r, -2.0f, 2.0f); /* something to look at */
        tg[2][1] = cb_prng_range(&r, 0.5f, 2.5f);
        tg[2][2] = cb_prng_range(&r, 0.5f, 3.0f);
        tg[3][0] = cb_prng_range(&r, 0.0f, 0.4f); /* the off hand on a prop */
        tg[3][1] = cb_prng_range(&r, 0.9f, 1.4f);
        tg[3][2] = cb_prng_range(&r, 0.1f, 0.5f);
    }
    return true;
}

static cb_result two_bone(const ik_workload *w, size_t c, const uint32_t joints[3],
                          const float target[3], bool with_model)
{
    cb_xform_group *pose = pose_of(w, c);
    cb_ik_two_bone_job j = {.skeleton = w->skel,
                            .pose = {pose, w->groups},
                            .out = {pose, w->groups},
                            .start_joint = joints[0],
                            .mid_joint = joints[1],
                            .end_joint = joints[2],
                            .pole = {0.0f, 0.0f, 1.0f},
                            .mid_axis = {joints == w->arm ? -1.0f : 1.0f, 0.0f, 0.0f},
                            .weight = 1.0f};
    memcpy(j.target, target, sizeof j.target);
    if (with_model) {
        j.model = (cb_float_cspan){model_of(w, c), w->joints * 16};
    }
    return cb_ik_two_bone_job_run(&j, NULL);
}

static cb_result aim(const ik_workload *w, size_t c, size_t first, bool with_model)
{
    cb_xform_group *pose = pose_of(w, c);
    static const float weights[5] = {0.15f, 0.2f, 0.25f, 0.4f, 1.0f};
    cb_ik_aim_joint chain[5];
    for (size_t k = first; k < 5; ++k) {
        chain[k - first] = (cb_ik_aim_joint){w->spine[k], weights[k]};
    }
    cb_ik_aim_job j = {.skeleton = w->skel,
                       .pose = {pose, w->groups},
                       .out = {pose, w->groups},
                       .chain = {chain, 5 - first},
                       .pole = {0.0f, 1.0f, 0.0f},
                       .offset = {0.0f, 0.075f, 0.085f},
                       .angle_limit = 1.4f,
                       .weight = 1.0f};
    memcpy(j.target, w->targets[c][2], sizeof j.target);
    if (with_model) {
        j.model = (cb_float_cspan){model_of(w, c), w->joints * 16};
    }
    return cb_ik_aim_job_run(&j, NULL);
}

typedef enum kind {
    TWO_BONE_LEG_POSE,
    TWO_BONE_ARM_POSE,
    TWO_BONE_LEG_MODEL,
    AIM_HEAD_POSE,
    AIM_SPINE_POSE,
    AIM_HEAD_MODEL,
    LTM_FULL,
    LTM_FROM_THIGH,
    FRAME_POSE,
    FRAME_MODEL,
    LEGS_POSE,
    LEGS_MODEL,
} kind;

/* Returns the number of jobs that failed (0). */
static int run_kind(const ik_workload *w, kind kd)
{
    int r = 0;
    for (size_t c = 0; c < w->chars; ++c) {
        switch (kd) {
        case TWO_BONE_LEG_POSE:
            r += CB_OK != two_bone(w, c, w->leg[0], w->targets[c][0], false);
            break;
        case TWO_BONE_ARM_POSE:
            r += CB_OK != two_bone(w, c, w->arm, w->targets[c][3], false);
            break;
        case TWO_BONE_LEG_MODEL:
            r += CB_OK != two_bone(w, c, w->leg[0], w->targets[c][0], true);
            break;
        case AIM_HEAD_POSE:
            r += CB_OK != aim(w, c, 3, false);
            break;
        case AIM_SPINE_POSE:
            r += CB_OK != aim(w, c, 0, false);
            break;
        case AIM_HEAD_MODEL:
            r += CB_OK != aim(w, c, 3, true);
            break;
        case LTM_FULL:
            ltm(w, c, 0, 0);
            break;
        case LTM_FROM_THIGH:
            ltm(w, c, w->leg[0][0], 0);
            break;
        case FRAME_POSE:
            r += CB_OK != two_bone(w, c, w->leg[0], w->targets[c][0], false);
            r += CB_OK != two_bone(w, c, w->leg[1], w->targets[c][1], false);
            r += CB_OK != aim(w, c, 3, false);
            ltm(w, c, 0, 0);
            break;
        case FRAME_MODEL:
            /* The three chains are disjoint subtrees, so one set of matrices serves all. */
            ltm(w, c, 0, 0);
            r += CB_OK != two_bone(w, c, w->leg[0], w->targets[c][0], true);
            r += CB_OK != two_bone(w, c, w->leg[1], w->targets[c][1], true);
            r += CB_OK != aim(w, c, 3, true);
            /* Refresh what changed: the legs, the last 12 joints, and the neck's subtree. */
            ltm(w, c, w->leg[0][0], 0);
            ltm(w, c, w->neck_from, w->neck_to);
            break;
        case LEGS_POSE:
            r += CB_OK != two_bone(w, c, w->leg[0], w->targets[c][0], false);
            r += CB_OK != two_bone(w, c, w->leg[1], w->targets[c][1], false);
            ltm(w, c, 0, 0);
            break;
        case LEGS_MODEL:
            ltm(w, c, 0, 0);
            r += CB_OK != two_bone(w, c, w->leg[0], w->targets[c][0], true);
            r += CB_OK != two_bone(w, c, w->leg[1], w->targets[c][1], true);
            ltm(w, c, w->leg[0][0], 0); /* the legs come last: a short refresh */
            break;
        }
    }
    cb_bench_keep(w->poses);
    cb_bench_keep(w->models);
    return r;
}

static void bench(cb_bench_state *st, void *user)
{
    kind kd = (kind)(intptr_t)user;
    size_t chars = (size_t)cb_bench_range(st, 0);
    ik_workload w;
    if (!workload_make(&w, chars)) {
        cb_bench_skip_with_error(st, "out of memory");
        return;
    }
    if (run_kind(&w, kd) != 0) { /* warm, and check */
        cb_bench_skip_with_error(st, "an IK job failed");
        workload_free(&w);
        return;
    }
    while (cb_bench_keep_running(st)) {
        run_kind(&w, kd);
    }
    double items = (double)chars * (double)cb_bench_iterations(st);
    cb_bench_set_items_processed(st, (int64_t)items);
    cb_bench_set_counter(st, "per_char", items, CB_BENCH_COUNTER_RATE | CB_BENCH_COUNTER_INVERT);
    workload_free(&w);
}

static void reg(const char *name, kind kd)
{
    cb_bench *b = cb_bench_register(name, bench, (void *)(intptr_t)kd);
    cb_bench_args2(b, 1, 64);
    cb_bench_args2(b, 1024, 64);
}

void cb_bench_register_ik(void)
{
    reg("ik_two_bone_leg_pose", TWO_BONE_LEG_POSE);
    reg("ik_two_bone_arm_pose", TWO_BONE_ARM_POSE);
    reg("ik_two_bone_leg_model", TWO_BONE_LEG_MODEL);
    reg("ik_aim_head_pose", AIM_HEAD_POSE);
    reg("ik_aim_spine_pose", AIM_SPINE_POSE);
    reg("ik_aim_head_model", AIM_HEAD_MODEL);
    reg("ltm_full", LTM_FULL);
    reg("ltm_from_thigh", LTM_FROM_THIGH);
    reg("ik_frame_pose", FRAME_POSE);
    reg("ik_frame_model", FRAME_MODEL);
    reg("ik_legs_pose", LEGS_POSE);
    reg("ik_legs_model", LEGS_MODEL);
}
