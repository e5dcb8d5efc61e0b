/* The graph tests' shared fixture (tests/test_graph.c, tests/test_graph_runtime.c): a small
 * random skeleton (hierarchical, or "flat": every joint a root, so a model matrix is the local
 * transform and offsets can be read joint by joint) with random clips whose keys are kept, the
 * double-precision reference pipeline of tests/common/anim_test.h over them, the builder and
 * crowd helpers every case uses, and the embedded humanoid for the cases that need a real
 * figure. A case registered with GRAPH_CASE gets a scene made for it (seeded by its own name,
 * so CB_TEST_SEED replays it) and freed after it. */
#ifndef CROWDBLEND_TESTS_GRAPH_FIXTURE_H
#define CROWDBLEND_TESTS_GRAPH_FIXTURE_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_test.h"
#include "crowdblend/crowdblend.h"
#include "test_util.h"

enum { NJ = 14, NCLIP = 7 };
enum { CLIP_A, CLIP_B, CLIP_C, CLIP_CLAMP, CLIP_ADD, CLIP_E, CLIP_E2 };
extern const char *const clip_names[NCLIP];
/* Durations in seconds: binary fractions where exit times are counted in frames. */
extern const float clip_durations[NCLIP];

/* dt of 1/32 s is exact in binary, so times accumulated frame by frame are exact too. */
#define DT (1.0f / 32.0f)

typedef struct scene {
    cb_skeleton *sk;
    bool flat;
    int32_t parents[NJ];
    cb_xform rest[NJ];
    cb_test_tracks tracks[NCLIP];
    cb_clip *clips[NCLIP];
    const cb_clip *clip_ptrs[NCLIP];
    dref_clip refs[NCLIP];
} scene;

scene *scene_make(cb_prng *r, bool flat);
void scene_free(scene *sc);

/* The fixture of one case: its PRNG (after the scene's draws) and its scene. */
typedef struct graph_fx {
    cb_prng r;
    scene *sc;
} graph_fx;

/* cmocka fixtures: *state holds the case's name on entry (GRAPH_CASE passes it), the
 * graph_fx after setup. The humanoid is made once for the whole group. */
int graph_fx_setup(void **state);
int graph_fx_setup_flat(void **state);
int graph_fx_teardown(void **state);
int graph_group_setup(void **state);
int graph_group_teardown(void **state);
#define GRAPH_CASE(name)                                                                           \
    cmocka_unit_test_prestate_setup_teardown(name, graph_fx_setup, graph_fx_teardown, (void *)#name)
#define GRAPH_CASE_FLAT(name)                                                                      \
    cmocka_unit_test_prestate_setup_teardown(name, graph_fx_setup_flat, graph_fx_teardown,         \
                                             (void *)#name)

/* The embedded humanoid (graph_group_setup) and its skeleton's joint count. */
extern cb_embedded *humanoid;
const cb_skeleton *humanoid_skeleton(void);

cb_graph_builder *builder_of(const scene *sc);

/* Builder calls that must succeed (err: the caller's cb_error, for the message). */
#define OK(call)                                                                                   \
    do {                                                                                           \
        cb_result r_ = (call);                                                                     \
        CB_CHECK(r_ == CB_OK, "%s: %s (%s)", #call, cb_result_str(r_), err.message);               \
    } while (0)

cb_graph_node add_clip(cb_graph_builder *b, const char *name, int clip);
/* Builds and destroys the builder. */
cb_graph *build(cb_graph_builder *b);
/* A crowd running one graph, weights kept and events on. */
cb_crowd *graph_crowd(const cb_skeleton *sk, const cb_graph *g, uint32_t capacity, uint32_t threads,
                      uint32_t batch);
cb_crowd *crowd_of(const scene *sc, const cb_graph *g, uint32_t capacity, uint32_t threads,
                   uint32_t batch);
void add_characters(cb_crowd *c, uint32_t n, float phase_step);
float *column(cb_crowd *c, const char *param);
/* The weight kept for clip slot `clip` of character i. */
float kept(const cb_crowd *c, uint32_t clip, uint32_t i);
float clip_time(const cb_crowd *c, uint32_t clip, uint32_t i);

/* ---- the reference pipeline, in double ---- */

typedef struct rpose {
    dref_xform x[NJ];
} rpose;

rpose ref_blend(const scene *sc, const dref_entry *e, size_t count);
rpose ref_clip(const scene *sc, int clip, double t);
/* slerp(a, b, w * mask[j]) per joint, translations lerped: the crossfade's contract. */
rpose ref_slerp(const rpose *a, const rpose *b, double w, const float *mask);
/* Largest translation error (m) and rotation error (rad) of a character's matrices against a
 * reference local pose taken to model space. */
void pose_error(const scene *sc, const rpose *want, const float *m, double *terr, double *rerr);

/* Bounds of a float pipeline against the double one, for these clips (rotations up to 1.2 rad
 * off rest, 14 joints, chains of up to 7): the largest errors measured over the three build
 * configurations and 20 seeds were about 1e-6 m and 1.5e-6 rad; the bounds leave a 5x margin. */
#define POSE_T_BOUND 5e-6
#define POSE_R_BOUND 1e-5

void check_pose(cb_err_track *te, cb_err_track *re, const scene *sc, const rpose *want,
                const float *m, size_t index);
/* The character's local pose read back from a flat scene's matrices (model = local). */
rpose read_flat(const float *m);
/* Angle between two unit quaternions (either hemisphere). */
double quat_angle(const double *a, const double *b);
/* Largest per-joint difference of two local poses: translation (m) and angle (rad). */
void pose_diff(const rpose *a, const rpose *b, double *t, double *r);

#endif
