/* The graph tests' shared fixture: see graph_fixture.h. */
#include "graph_fixture.h"

const char *const clip_names[NCLIP] = {"a", "b", "c", "once", "add", "e", "e2"};
const float clip_durations[NCLIP] = {1.0f, 0.75f, 1.25f, 0.5f, 1.1f, 0.9f, 0.9f};
/* Markers: c plants "L" at 10 % and "R" at 60 % of its cycle, e at 35 % and 80 %, so syncing
 * the two by normalized time would put their plants a quarter of a cycle apart; e2 is e with
 * other names (no marker in common with c). Each also marks an event-only "lift". */
static const cb_clip_marker_desc c_markers[3] = {
    {"L", 0.10f * 1.25f, false}, {"R", 0.60f * 1.25f, false}, {"lift", 0.3f * 1.25f, true}};
static const cb_clip_marker_desc e_markers[3] = {
    {"L", 0.35f * 0.9f, false}, {"R", 0.80f * 0.9f, false}, {"lift", 0.5f * 0.9f, true}};
static const cb_clip_marker_desc e2_markers[2] = {{"L2", 0.35f * 0.9f, false},
                                                  {"R2", 0.80f * 0.9f, false}};

scene *scene_make(cb_prng *r, bool flat)
{
    scene *sc = calloc(1, sizeof *sc);
    char names[NJ][8];
    const char *ptrs[NJ];
    sc->flat = flat;
    for (int j = 0; j < NJ; ++j) {
        snprintf(names[j], sizeof names[j], "j%d", j);
        ptrs[j] = names[j];
        /* A spine j0..j4 with two limbs off j2 and j4, or all roots. */
        static const int32_t tree[NJ] = {-1, 0, 1, 2, 3, 2, 5, 6, 4, 8, 9, 0, 11, 12};
        sc->parents[j] = flat ? -1 : tree[j];
        sc->rest[j] = cb_test_random_xform(r, 0.3f);
    }
    cb_skeleton_desc sd = {
        .joint_count = NJ, .names = ptrs, .parents = sc->parents, .rest_pose = sc->rest};
    cb_error err = {0};
    CB_CHECK(cb_skeleton_create(&sd, &sc->sk, &err) == CB_OK, "skeleton: %s", err.message);
    for (int j = 0; j < NJ; ++j) {
        sc->rest[j] = cb_skeleton_rest_xform(sc->sk, (size_t)j); /* normalized */
    }
    for (int k = 0; k < NCLIP; ++k) {
        if (k == CLIP_E2) {
            /* The same keys as e. */
            sc->tracks[k] = (cb_test_tracks){0};
        } else {
            sc->tracks[k] = cb_test_random_tracks(r, sc->sk, clip_durations[k], NJ, false, 1.2f);
        }
        const cb_test_tracks *keys = &sc->tracks[k == CLIP_E2 ? CLIP_E : k];
        cb_clip_desc d = {
            .name = clip_names[k],
            .skeleton = sc->sk,
            .duration_s = clip_durations[k],
            .tracks = keys->tracks,
            .track_count = keys->count,
            .markers = k == CLIP_C    ? c_markers
                       : k == CLIP_E  ? e_markers
                       : k == CLIP_E2 ? e2_markers
                                      : NULL,
            .marker_count = k == CLIP_C    ? 3
                            : k == CLIP_E  ? 3
                            : k == CLIP_E2 ? 2
                                           : 0,
            .wrap = k == CLIP_CLAMP ? CB_CLIP_WRAP_CLAMP : CB_CLIP_WRAP_LOOP,
            .root_motion = CB_ROOT_MOTION_NONE,
            .additive = k == CLIP_ADD ? CB_ADDITIVE_FIRST_FRAME : CB_ADDITIVE_NONE,
        };
        CB_CHECK(cb_clip_create(&d, &sc->clips[k], &err) == CB_OK, "clip %d: %s", k, err.message);
        sc->clip_ptrs[k] = sc->clips[k];
        sc->refs[k] = dref_clip_build(&d);
    }
    return sc;
}

void scene_free(scene *sc)
{
    for (int k = 0; k < NCLIP; ++k) {
        cb_clip_destroy(sc->clips[k]);
        dref_clip_free(&sc->refs[k]);
        cb_test_tracks_free(&sc->tracks[k]);
    }
    cb_skeleton_destroy(sc->sk);
    free(sc);
}

cb_graph_builder *builder_of(const scene *sc)
{
    cb_graph_builder_desc d = {
        .skeleton = sc->sk, .clips = sc->clip_ptrs, .clip_count = NCLIP, .name = "test"};
    cb_graph_builder *b = NULL;
    cb_error err = {0};
    CB_CHECK(cb_graph_builder_create(&d, &b, &err) == CB_OK, "builder: %s", err.message);
    return b;
}

cb_graph_node add_clip(cb_graph_builder *b, const char *name, int clip)
{
    cb_error err = {0};
    cb_graph_node n = {0};
    cb_graph_clip_desc d = {.name = name, .clip = clip_names[clip]};
    OK(cb_graph_add_clip(b, &d, &n, &err));
    return n;
}

cb_graph *build(cb_graph_builder *b)
{
    cb_error err = {0};
    cb_graph *g = NULL;
    OK(cb_graph_build(b, &g, &err));
    cb_graph_builder_destroy(b);
    return g;
}

/* A crowd running one graph, weights kept and events on. */
cb_crowd *graph_crowd(const cb_skeleton *sk, const cb_graph *g, uint32_t capacity, uint32_t threads,
                      uint32_t batch)
{
    const cb_graph *gs[1] = {g};
    cb_crowd_desc d = {.skeleton = sk,
                       .capacity = capacity,
                       .graphs = gs,
                       .graph_count = 1,
                       .thread_count = threads,
                       .batch_size = batch,
                       .keep_weights = true,
                       .events = true};
    cb_crowd *c = NULL;
    cb_error err = {0};
    CB_CHECK(cb_crowd_create(&d, &c, &err) == CB_OK, "crowd: %s", err.message);
    return c;
}

cb_crowd *crowd_of(const scene *sc, const cb_graph *g, uint32_t capacity, uint32_t threads,
                   uint32_t batch)
{
    return graph_crowd(sc->sk, g, capacity, threads, batch);
}

void add_characters(cb_crowd *c, uint32_t n, float phase_step)
{
    for (uint32_t i = 0; i < n; ++i) {
        cb_character ch;
        assert_int_equal(cb_crowd_add(c, 0, fmodf(phase_step * (float)i, 1.0f), &ch), CB_OK);
    }
}

float *column(cb_crowd *c, const char *param)
{
    uint32_t p = 0;
    CB_CHECK(cb_crowd_find_param(c, 0, param, &p) == CB_OK, "no parameter %s", param);
    return cb_crowd_param_column(c, 0, p);
}

/* The weight kept for clip slot `clip` of character i. */
float kept(const cb_crowd *c, uint32_t clip, uint32_t i)
{
    size_t stride = 0;
    const float *w = cb_crowd_weights(c, 0, &stride);
    return w[clip * stride + i];
}

float clip_time(const cb_crowd *c, uint32_t clip, uint32_t i)
{
    return cb_crowd_clip_times(c, 0, clip)[i];
}

/* ------------------------------------------------------------------------------------------ */
/* The reference pipeline, in double                                                          */

rpose ref_blend(const scene *sc, const dref_entry *e, size_t count)
{
    rpose p;
    for (size_t j = 0; j < NJ; ++j) {
        p.x[j] = dref_blend_joint(e, count, sc->rest, j, CB_BLEND_DEFAULT_THRESHOLD);
    }
    return p;
}

rpose ref_clip(const scene *sc, int clip, double t)
{
    dref_entry e = {&sc->refs[clip], t, 1.0, CB_BLEND_MODE_NORMAL, NULL};
    return ref_blend(sc, &e, 1);
}

/* slerp(a, b, w * mask[j]) per joint, translations lerped: the crossfade's contract. */
rpose ref_slerp(const rpose *a, const rpose *b, double w, const float *mask)
{
    rpose p;
    for (size_t j = 0; j < NJ; ++j) {
        double u = w * (mask != NULL ? mask[j] : 1.0);
        dref_quat_slerp(a->x[j].q, b->x[j].q, u, p.x[j].q);
        for (int k = 0; k < 3; ++k) {
            p.x[j].t[k] = a->x[j].t[k] + u * (b->x[j].t[k] - a->x[j].t[k]);
            p.x[j].s[k] = a->x[j].s[k] + u * (b->x[j].s[k] - a->x[j].s[k]);
        }
    }
    return p;
}

/* Largest translation error (m) and rotation error (rad) of a character's matrices against a
 * reference local pose taken to model space. */
void pose_error(const scene *sc, const rpose *want, const float *m, double *terr, double *rerr)
{
    dref_mat model[NJ];
    dref_local_to_model(sc->parents, NJ, want->x, model);
    *terr = 0.0, *rerr = 0.0;
    for (size_t j = 0; j < NJ; ++j) {
        const float *mj = m + 16 * j;
        for (int k = 0; k < 3; ++k) {
            double d = fabs((double)mj[12 + k] - model[j].m[3][k]);
            *terr = d > *terr || isnan(d) ? d : *terr;
        }
        double a = dref_rotation_error(&model[j], mj);
        *rerr = a > *rerr || isnan(a) ? a : *rerr;
    }
}

void check_pose(cb_err_track *te, cb_err_track *re, const scene *sc, const rpose *want,
                const float *m, size_t index)
{
    double t, r;
    pose_error(sc, want, m, &t, &r);
    cb_err_track_add(te, t, 0.0, index);
    cb_err_track_add(re, r, 0.0, index);
}

/* The character's local pose read back from a flat scene's matrices (model = local). */
rpose read_flat(const float *m)
{
    rpose p;
    for (size_t j = 0; j < NJ; ++j) {
        const float *c = m + 16 * j;
        double r[3][3];
        for (int col = 0; col < 3; ++col) {
            for (int row = 0; row < 3; ++row) {
                r[col][row] = c[4 * col + row];
            }
            p.x[j].t[col] = c[12 + col];
            p.x[j].s[col] = 1.0;
        }
        /* Rotation matrix (column-major r[col][row]) to quaternion. */
        double tr = r[0][0] + r[1][1] + r[2][2], *q = p.x[j].q;
        if (tr > 0.0) {
            double s = sqrt(tr + 1.0) * 2.0;
            q[3] = 0.25 * s, q[0] = (r[1][2] - r[2][1]) / s, q[1] = (r[2][0] - r[0][2]) / s,
            q[2] = (r[0][1] - r[1][0]) / s;
        } else if (r[0][0] > r[1][1] && r[0][0] > r[2][2]) {
            double s = sqrt(1.0 + r[0][0] - r[1][1] - r[2][2]) * 2.0;
            q[3] = (r[1][2] - r[2][1]) / s, q[0] = 0.25 * s, q[1] = (r[1][0] + r[0][1]) / s,
            q[2] = (r[2][0] + r[0][2]) / s;
        } else if (r[1][1] > r[2][2]) {
            double s = sqrt(1.0 + r[1][1] - r[0][0] - r[2][2]) * 2.0;
            q[3] = (r[2][0] - r[0][2]) / s, q[0] = (r[1][0] + r[0][1]) / s, q[1] = 0.25 * s,
            q[2] = (r[2][1] + r[1][2]) / s;
        } else {
            double s = sqrt(1.0 + r[2][2] - r[0][0] - r[1][1]) * 2.0;
            q[3] = (r[0][1] - r[1][0]) / s, q[0] = (r[2][0] + r[0][2]) / s,
            q[1] = (r[2][1] + r[1][2]) / s, q[2] = 0.25 * s;
        }
        dref_quat_normalize(q);
    }
    return p;
}

/* Angle between two unit quaternions (either hemisphere). */
double quat_angle(const double *a, const double *b)
{
    double d = fabs(a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]);
    return 2.0 * acos(d > 1.0 ? 1.0 : d);
}

/* Largest per-joint difference of two local poses: translation (m) and angle (rad). */
void pose_diff(const rpose *a, const rpose *b, double *t, double *r)
{
    *t = 0.0, *r = 0.0;
    for (size_t j = 0; j < NJ; ++j) {
        for (int k = 0; k < 3; ++k) {
            double d = fabs(a->x[j].t[k] - b->x[j].t[k]);
            *t = d > *t ? d : *t;
        }
        double g = quat_angle(a->x[j].q, b->x[j].q);
        *r = g > *r ? g : *r;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Fixtures                                                                                   */

cb_embedded *humanoid;

const cb_skeleton *humanoid_skeleton(void)
{
    return cb_embedded_skeleton(humanoid);
}

static int fx_setup(void **state, bool flat)
{
    const char *name = *state;
    graph_fx *fx = calloc(1, sizeof *fx);
    if (fx == NULL) {
        return -1;
    }
    fx->r = cb_test_prng(name);
    fx->sc = scene_make(&fx->r, flat);
    *state = fx;
    return 0;
}

int graph_fx_setup(void **state)
{
    return fx_setup(state, false);
}

int graph_fx_setup_flat(void **state)
{
    return fx_setup(state, true);
}

int graph_fx_teardown(void **state)
{
    graph_fx *fx = *state;
    scene_free(fx->sc);
    free(fx);
    return 0;
}

int graph_group_setup(void **state)
{
    (void)state;
    return cb_embedded_create(NULL, &humanoid, NULL) == CB_OK ? 0 : -1;
}

int graph_group_teardown(void **state)
{
    (void)state;
    cb_embedded_destroy(humanoid);
    return 0;
}
