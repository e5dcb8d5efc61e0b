/* Helpers for the animation tests: allocators that count or fail, random data, and a plain
 * double-precision reference of the pose pipeline (resampling, sampling, blending with layers,
 * local-to-model) written from the contracts in crowdblend/clip.h, pose.h and ltm.h, with none
 * of the library's code. */
#ifndef CROWDBLEND_TEST_ANIM_TEST_H
#define CROWDBLEND_TEST_ANIM_TEST_H

#include <stdbool.h>
#include <stddef.h>

#include "crowdblend/crowdblend.h"
#include "test_util.h"

/* ---- allocators ---------------------------------------------------------------------------- */

typedef struct cb_test_counter {
    size_t allocs, frees;
    long long live_bytes;
} cb_test_counter;

void *cb_test_counting_alloc(size_t size, size_t align, void *user);
void cb_test_counting_free(void *ptr, size_t size, void *user);
cb_allocator cb_test_counting_allocator(cb_test_counter *c);
/* An allocator whose alloc_fn always fails. */
cb_allocator cb_test_failing_allocator(void);

/* An allocator that counts as the one above and fails its call number fail_at (from 0), for
 * the tests that fail every allocation in turn: run with fail_at 0, 1, ... until the call
 * succeeds, and check count.live_bytes == 0 after each. */
typedef struct cb_test_failing_nth {
    cb_test_counter count;
    size_t calls, fail_at;
} cb_test_failing_nth;

cb_allocator cb_test_failing_nth_allocator(cb_test_failing_nth *f);

/* ---- graphs -------------------------------------------------------------------------------- */

/* The JSON desc of a graph over the embedded set's clips (up to max of them, into clips). */
cb_graph_json_desc cb_test_embedded_json_desc(const cb_embedded *set, const cb_clip **clips,
                                              uint32_t max);

/* A graph builder over two clips with a float parameter "cmd" and a clip node of each (kids),
 * and the desc of a blend space "loco" over them (1D on "cmd", positions 0 and 1.4, rate_warp
 * on "cmd"), for the tests of a blend space's desc. */
cb_graph_builder *cb_test_two_clip_blend(const cb_skeleton *skeleton, const cb_clip *clips[2],
                                         cb_graph_node kids[2], cb_graph_blend_space_desc *d);

/* Expects the one-line JSON graph `doc` over the embedded set's clips to be refused with `want`,
 * a message holding `needle` and the place "graph:1:", and no graph (`label` names the case in
 * a failure); prints the message as a TAP comment. */
void cb_test_expect_embedded_json_error(const cb_embedded *set, const char *doc, cb_result want,
                                        const char *needle, const char *label);

/* ---- clips --------------------------------------------------------------------------------- */

/* Creates a clip, failing the test (with the error message) when create fails. */
cb_clip *cb_test_clip_create(const cb_clip_desc *desc);

/* Expects cb_clip_create to fail with `want`, leave its output untouched, fill the cb_error with
 * the same code, and name `needle` in the message (when not NULL). */
void cb_test_expect_clip_error(const cb_clip_desc *desc, cb_result want, const char *needle);

/* ---- data ---------------------------------------------------------------------------------- */

/* A random transform: unit rotation, translation in [-range, range], scale 1. */
cb_xform cb_test_random_xform(cb_prng *r, float range);

/* Pose buffer for a skeleton, aligned; fill_nan poisons every float (padding lanes included). */
cb_xform_group *cb_test_pose_alloc(const cb_skeleton *s, bool fill_nan);

/* A random skeleton of n joints: each parent is a random earlier joint (biased to the one just
 * before, like limbs), names "j<i>", rest translations of 0.05..0.3 m, random rest rotations;
 * with `scaled`, rest scales in [0.8, 1.25] (uniform per joint when `uniform`). */
cb_skeleton *cb_test_random_skeleton(cb_prng *r, size_t n, bool scaled, bool uniform);

/* Keyframe data of a random clip: one translation, rotation and (optionally) scale track for
 * `animated` random joints, keys at random increasing times in [0, duration] (the first and
 * last not necessarily at the ends), values near the rest pose or anywhere. Owned by the
 * struct; free with cb_test_tracks_free. */
typedef struct cb_test_tracks {
    cb_clip_track *tracks;
    size_t count;
    float duration;
    void *memory;
} cb_test_tracks;

cb_test_tracks cb_test_random_tracks(cb_prng *r, const cb_skeleton *s, float duration,
                                     size_t animated, bool scale, float max_angle);
void cb_test_tracks_free(cb_test_tracks *t);

/* ---- double reference ---------------------------------------------------------------------- */

typedef struct dref_xform {
    double t[3], q[4], s[3];
} dref_xform;

/* Resampled frames of a clip in double: frames[f * joints + j], f in 0..intervals. Root motion
 * is not modelled (build reference clips with CB_ROOT_MOTION_NONE). */
typedef struct dref_clip {
    size_t joints;
    unsigned intervals;
    bool looping, additive;
    dref_xform *frames;
} dref_clip;

/* Resamples desc's tracks as crowdblend/clip.h specifies: rest pose where no track, linear /
 * slerp between keys, hold outside the keys (looping clips interpolate from the last key to the
 * first one duration later), hemisphere continuity along time, last frame = first for looping
 * clips, additive deltas against the first frame or the rest pose. */
dref_clip dref_clip_build(const cb_clip_desc *desc);
void dref_clip_free(dref_clip *c);

/* The frames around a normalized time (wrap or clamp) and the fraction, in double. */
void dref_clip_locate(const dref_clip *c, double t, unsigned *i, double *f);

/* One joint's sample: lerped translation / scale, and rotation (1 - f) q_i + f q_(i+1), not
 * normalized. */
dref_xform dref_clip_sample(const dref_clip *c, double t, size_t joint);

/* An entry of the reference blend, mirroring cb_blend_entry. mask may be NULL. */
typedef struct dref_entry {
    const dref_clip *clip;
    double time, weight;
    cb_blend_mode mode;
    const float *mask;
} dref_entry;

/* The blend job's contract, per joint, in double: weighted mean of NORMAL entries (hemisphere
 * by the first frame of each sample, against the running sum), rest fallback, OVERRIDE nlerps,
 * ADDITIVE deltas, one normalization at the end. rest: the skeleton's rest transforms. */
dref_xform dref_blend_joint(const dref_entry *entries, size_t count, const cb_xform *rest,
                            size_t joint, double threshold);

/* Column-major 4x4 in double, m[c][r]. */
typedef struct dref_mat {
    double m[4][4];
} dref_mat;

dref_mat dref_mat_from_xform(const dref_xform *x);
dref_mat dref_mat_mul(const dref_mat *a, const dref_mat *b);

/* Local-to-model over a whole skeleton: model[j] = model[parent] * local[j]. */
void dref_local_to_model(const int32_t *parents, size_t n, const dref_xform *local,
                         dref_mat *model);

/* Reads joint j of a pose (joint groups) as a double transform. */
dref_xform dref_from_pose(const cb_xform_group *pose, size_t j);

/* The model transforms (double) of every joint of a pose: dref_from_pose, then
 * dref_local_to_model. */
void dref_model_of_pose(const cb_skeleton *s, const cb_xform_group *pose, dref_mat *model);

/* ---- float products of local matrices, as the library's bottom-up paths form them ------------ */

/* A float affine matrix as 4 columns (linear part, then position), the 4x4 layout's order. */
typedef struct cb_test_fmat {
    float c[4][3];
} cb_test_fmat;

/* Joint j's local matrix T R S, Shoemake's formula written out in scalar float. */
cb_test_fmat cb_test_fmat_local(const cb_xform_group *pose, uint32_t j);

/* a * b, each element ((a0 b0 + a1 b1) + a2 b2) (+ a's position), in scalar float. */
cb_test_fmat cb_test_fmat_mul(const cb_test_fmat *a, const cb_test_fmat *b);

/* The product of the local matrices from `stop` (exclusive, -1 the root) down to j, multiplied
 * bottom-up (acc = local[parent] * acc), in scalar float: IK's order (src/ik/ik.c). */
cb_test_fmat cb_test_fmat_path(const cb_skeleton *s, const cb_xform_group *pose, uint32_t j,
                               int32_t stop);

/* The reach interval [dmin, dmax] of a two-bone chain with bones u (start to mid) and l (mid to
 * end) turning about the axis n (any length), in double (crowdblend/ik.h): with un, ln the
 * bones' parts along n and p, q their lengths across it, sqrt((un + ln)^2 + (p -+ q)^2). */
void cb_test_hinge_reach(const double u[3], const double l[3], const double n[3], double *dmin,
                         double *dmax);

/* A joint by name (fails the test when the skeleton has none). */
uint32_t cb_test_joint(const cb_skeleton *s, const char *name);

/* The pose of `clip` alone at normalized time t (cb_pose_blend_job, one entry of weight 1). */
void cb_test_clip_pose(const cb_skeleton *s, const cb_clip *clip, float t, cb_xform_group *pose);

/* Rotation angle between the rotation parts of two affine matrices (scale removed), radians. */
double dref_rotation_error(const dref_mat *a, const float *m4);

/* Quaternion helpers. */
void dref_quat_mul(const double a[4], const double b[4], double out[4]);
void dref_quat_normalize(double q[4]);
void dref_quat_slerp(const double a[4], const double b[4], double t, double out[4]);

#endif
