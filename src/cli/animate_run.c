/* One trajectory file through a crowd: agents appear and leave as the file says, follow their
 * interpolated trajectories (crowdblend/follow.h), and every frame is measured (measure.h) and
 * optionally recorded for glTF (export/gltf.h). docs/trajectories.md describes the whole. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/animate.h"
#include "cli/cli.h"
#include "cli/example_graphs.h"
#include "export/gltf.h"

static const char *const locomotion_names[17] = {
    "idle",  "walk_f", "walk_fl", "walk_l", "walk_bl", "walk_b", "walk_br", "walk_r", "walk_fr",
    "run_f", "run_fl", "run_l",   "run_bl", "run_b",   "run_br", "run_r",   "run_fr",
};

static const float PI_F = 3.14159265358979f;

/* ---- the clips' own pops ------------------------------------------------------------------ */

/* Each locomotion clip played alone (a DIRECT blend with weight 1 on it), its root moved by
 * its own root motion, for 4 s: the second differences a clean animation has by itself. */
static bool clip_pops(cb_animate_assets *a, double rate_hz)
{
    const cb_skeleton *sk = cb_embedded_skeleton(a->set);
    cb_graph_blend_desc bd = {.skeleton = sk,
                              .solver = {.kind = CB_SOLVER_KIND_DIRECT},
                              .clips = a->locomotion,
                              .clip_count = 17};
    cb_graph *graph = NULL;
    cb_error err = {0};
    if (cb_graph_create_blend(&bd, &graph, &err) != CB_OK) {
        fprintf(stderr, "crowdblend animate: clip reference graph: %s\n", err.message);
        return false;
    }
    const cb_graph *graphs[1] = {graph};
    cb_crowd_desc cd = {
        .skeleton = sk,
        .capacity = 17,
        .graphs = graphs,
        .graph_count = 1,
        .thread_count = 1,
    };
    cb_crowd *crowd = NULL;
    if (cb_crowd_create(&cd, &crowd, &err) != CB_OK) {
        fprintf(stderr, "crowdblend animate: clip reference crowd: %s\n", err.message);
        cb_graph_destroy(graph);
        return false;
    }
    uint32_t ball_l = 0, ball_r = 0;
    cb_skeleton_find_joint(sk, "ball_l", &ball_l);
    cb_skeleton_find_joint(sk, "ball_r", &ball_r);
    cb_measure_desc md = {.skeleton = sk,
                          .ball_joint = {ball_l, ball_r},
                          .dt_s = (float)(1.0 / rate_hz),
                          .slots = 17};
    cb_measure *m = cb_measure_create(&md);
    float yaw[17] = {0}, pos[17][3] = {{0}};
    for (uint32_t c = 0; m != NULL && c < 17; ++c) {
        cb_character ch;
        cb_crowd_add(crowd, 0, 0.0f, &ch);
        /* DIRECT: one parameter per clip, "blend_<c>" (crowdblend/graph.h). */
        char name[16];
        snprintf(name, sizeof name, CB_GRAPH_BLEND_PARAM_PREFIX "%u", c);
        uint32_t p = 0;
        cb_crowd_find_param(crowd, 0, name, &p);
        cb_crowd_param_column(crowd, 0, p)[c] = 1.0f;
        cb_measure_slot_take(m);
    }
    uint32_t frames = (uint32_t)(4.0 * rate_hz);
    for (uint32_t k = 0; m != NULL && k < frames; ++k) {
        cb_crowd_update(crowd, (float)(1.0 / rate_hz));
        const cb_root_delta *rm = cb_crowd_root_motion(crowd, 0);
        for (uint32_t c = 0; c < 17; ++c) {
            /* The delta is in the character's frame at the start of the update. */
            float s = sinf(yaw[c]), co = cosf(yaw[c]);
            pos[c][0] += co * rm[c].translation[0] + s * rm[c].translation[2];
            pos[c][2] += -s * rm[c].translation[0] + co * rm[c].translation[2];
            yaw[c] += rm[c].yaw;
            cb_follow_root root = {.position = {pos[c][0], 0.0f, pos[c][2]}, .yaw = yaw[c]};
            cb_measure_frame f = {.matrices = cb_crowd_matrices(crowd, 0, c)};
            cb_follow_root_matrix(&root, f.root);
            cb_measure_add(m, c, &f);
        }
    }
    if (m != NULL) {
        a->clips_pops_p999 = cb_stat_quantile(cb_measure_query(m).pops, 0.999);
    }
    cb_measure_destroy(m);
    cb_crowd_destroy(crowd);
    cb_graph_destroy(graph); /* after the crowd that runs it */
    return m != NULL;
}

bool cb_animate_assets_init(cb_animate_assets *a, double rate_hz)
{
    memset(a, 0, sizeof *a);
    cb_error err = {0};
    if (cb_embedded_create(NULL, &a->set, &err) != CB_OK) {
        fprintf(stderr, "crowdblend animate: embedded set: %s\n", err.message);
        return false;
    }
    for (int k = 0; k < 17; ++k) {
        a->locomotion[k] = cb_embedded_find_clip(a->set, locomotion_names[k]);
    }
    return clip_pops(a, rate_hz);
}

void cb_animate_assets_finish(cb_animate_assets *a)
{
    cb_embedded_destroy(a->set);
    a->set = NULL;
}

/* ---- the crowd ---------------------------------------------------------------------------- */

typedef struct run {
    const cb_traj *traj;
    const cb_animate_options *o;
    const cb_animate_assets *assets;
    const cb_skeleton *skeleton;
    cb_graph *graph; /* the --graph the crowd runs, or NULL */
    cb_graph *blend; /* else: the locomotion blend-space graph it runs */
    cb_crowd *crowd;
    cb_crowd_scratch *scratch;
    cb_follow *follow;
    cb_measure *measure;
    cb_gltf *gltf;
    const cb_clip *slot_clips[256];
    uint32_t slot_count;
    /* per agent */
    int64_t *first_k, *last_k;
    uint32_t *measure_slot;
    float *prev_yaw;
    float *rate;            /* host warp: this frame's playback rate */
    float *anim_speed;      /* host warp: the blend's own root speed last frame, m/s */
    uint32_t *export_first; /* index of the first exported frame on the export grid */
    uint32_t *export_agent; /* index in the export, UINT32_MAX when not exported */
    /* per dense index */
    uint32_t *dense_agent;
    cb_character *handle; /* per agent */
    float *pos, *vel;     /* 3 per dense index */
    float *weights;       /* slot_count scratch */
    float *times;
    uint32_t export_step;
    float stand;             /* the follow path's stand speed */
    bool warp, lock, orient; /* the follow features used */
} run;

/* The graph text: an example's, or a file's. */
static char *graph_text(const char *name, size_t *length)
{
    const cb_example_graph *ex = cb_example_graph_find(name);
    if (ex != NULL) {
        char *t = malloc(ex->length + 1);
        if (t != NULL) {
            memcpy(t, ex->text, ex->length);
            t[ex->length] = '\0';
            *length = ex->length;
        }
        return t;
    }
    FILE *f = fopen(name, "rb");
    if (f == NULL) {
        fprintf(stderr, "crowdblend animate: --graph '%s': no such example or file\n", name);
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *t = malloc(cap + 1);
    size_t got;
    while (t != NULL && (got = fread(t + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *bigger = realloc(t, 2 * cap + 1);
            if (bigger == NULL) {
                free(t);
                t = NULL;
            }
            t = bigger;
            cap *= 2;
        }
    }
    fclose(f);
    if (t != NULL) {
        t[n] = '\0';
        *length = n;
    }
    return t;
}

/* Which clip each clip slot of the graph plays. The public API names a slot's node
 * (cb_graph_clip_node) but not its clip, so the node's "clip" member is read back from the
 * graph's JSON (docs/trajectories.md lists this among what the graph API lacks). */
static bool map_graph_slots(run *r, const char *text, size_t length)
{
    json_error_t jerr;
    json_t *doc = json_loadb(text, length, 0, &jerr);
    json_t *nodes = doc != NULL ? json_object_get(doc, "nodes") : NULL;
    r->slot_count = cb_graph_clip_count(r->graph);
    if (nodes == NULL || r->slot_count > 256) {
        json_decref(doc);
        fprintf(stderr, "crowdblend animate: cannot map the graph's clip nodes to clips\n");
        return false;
    }
    for (uint32_t s = 0; s < r->slot_count; ++s) {
        const char *node = cb_graph_node_name(r->graph, cb_graph_clip_node(r->graph, s));
        json_t *clip = json_object_get(json_object_get(nodes, node), "clip");
        r->slot_clips[s] = json_is_string(clip)
                               ? cb_embedded_find_clip(r->assets->set, json_string_value(clip))
                               : NULL;
    }
    json_decref(doc);
    return true;
}

static bool load_graph(run *r)
{
    size_t length = 0;
    char *text = graph_text(r->o->graph, &length);
    if (text == NULL) {
        return false;
    }
    const cb_clip *clips[32];
    size_t n = cb_embedded_clip_count(r->assets->set);
    n = n < 32 ? n : 32;
    for (size_t k = 0; k < n; ++k) {
        clips[k] = cb_embedded_clip(r->assets->set, k);
    }
    cb_graph_json_desc jd = {.skeleton = r->skeleton,
                             .clips = clips,
                             .clip_count = (uint32_t)n,
                             .source_name = r->o->graph};
    cb_error err = {0};
    bool ok = cb_graph_load_json(text, length, &jd, &r->graph, &err) == CB_OK;
    if (!ok) {
        fprintf(stderr, "crowdblend animate: graph: %s\n", err.message);
    }
    ok = ok && map_graph_slots(r, text, length);
    free(text);
    return ok;
}

/* The follow features the graph has parameters for (docs/trajectories.md): a "rate" for
 * playback-rate warping (the gait: the walk, whose root speed is walk_f's), "foot_l_w" and
 * "foot_r_w" with "foot_l_x" ... "foot_r_z" for foot locking. */
static void enable_features(run *r, cb_follow_desc *fd)
{
    uint32_t index;
    if (r->graph == NULL) {
        return;
    }
    if (!r->o->no_warp && cb_graph_find_param(r->graph, "rate", &index) == CB_OK) {
        fd->warp = (cb_follow_warp){
            .rate_param = "rate",
            .gait_speed_mps = cb_clip_query_root_motion(r->assets->locomotion[1]).forward_mps,
            .min_rate = r->o->min_rate,
            .max_rate = r->o->max_rate};
        r->warp = true;
    }
    if (r->o->orient_rad > 0.0f && cb_graph_find_param(r->graph, "warp", &index) == CB_OK) {
        fd->orient = (cb_follow_orient){.angle_param = "warp", .max_angle_rad = r->o->orient_rad};
        r->orient = true;
    }
    if (!r->o->no_lock && cb_graph_find_param(r->graph, "foot_l_w", &index) == CB_OK) {
        fd->lock = (cb_follow_lock){
            .target_param = {{"foot_l_x", "foot_l_y", "foot_l_z"},
                             {"foot_r_x", "foot_r_y", "foot_r_z"}},
            .weight_param = {"foot_l_w", "foot_r_w"},
            .slot_clips = r->slot_clips,
            .slot_count = r->slot_count,
        };
        r->lock = true;
    }
}

static bool make_crowd(run *r, uint32_t capacity)
{
    cb_error err = {0};
    if (r->graph == NULL) {
        cb_graph_blend_desc bd = {
            .skeleton = r->skeleton, .clips = r->assets->locomotion, .clip_count = 17};
        if (cb_graph_create_blend(&bd, &r->blend, &err) != CB_OK) {
            fprintf(stderr, "crowdblend animate: blend space: %s\n", err.message);
            return false;
        }
    }
    const cb_graph *graphs[1] = {r->graph != NULL ? r->graph : r->blend};
    cb_crowd_desc cd = {
        .skeleton = r->skeleton,
        .capacity = capacity,
        .graphs = graphs,
        .graph_count = 1,
        .thread_count = r->o->threads,
        .keep_weights = true,
    };
    if (cb_crowd_create(&cd, &r->crowd, &err) != CB_OK ||
        cb_crowd_scratch_create(r->crowd, &r->scratch) != CB_OK) {
        fprintf(stderr, "crowdblend animate: crowd: %s\n", err.message);
        return false;
    }
    if (r->graph == NULL) {
        r->slot_count = 17;
        memcpy(r->slot_clips, r->assets->locomotion, sizeof r->assets->locomotion);
    }
    cb_follow_desc fd = {.crowd = r->crowd,
                         .capacity = capacity,
                         .stand_speed_mps = r->o->stand_speed,
                         .follow_speed_mps = r->o->follow_speed,
                         .max_turn_rps = r->o->max_turn};
    enable_features(r, &fd);
    if (cb_follow_create(&fd, &r->follow, &err) != CB_OK) {
        fprintf(stderr, "crowdblend animate: follow: %s\n", err.message);
        return false;
    }
    r->stand = cb_follow_query_desc(&fd).stand_speed_mps;
    uint32_t ball_l = 0, ball_r = 0;
    cb_skeleton_find_joint(r->skeleton, "ball_l", &ball_l);
    cb_skeleton_find_joint(r->skeleton, "ball_r", &ball_r);
    cb_measure_desc md = {.skeleton = r->skeleton,
                          .slot_clips = r->slot_clips,
                          .slot_count = r->slot_count,
                          .ball_joint = {ball_l, ball_r},
                          .dt_s = (float)(1.0 / r->o->rate_hz),
                          .slots = capacity};
    r->measure = cb_measure_create(&md);
    return r->measure != NULL;
}

/* ---- agents in and out -------------------------------------------------------------------- */

/* The file's ground plane (x, y, elevation z) in the crowd's world (+Y up): (x, z, -y). */
static void to_world(const double g[3], float w[3])
{
    w[0] = (float)g[0];
    w[1] = (float)g[2];
    w[2] = (float)-g[1];
}

/* The heading an agent starts with: along its first tangent fast enough to set one (the file
 * knows where a standing agent will go), else facing +Z. */
static float initial_heading(const cb_traj *t, uint32_t a, float follow_speed)
{
    const cb_traj_agent *ag = &t->agents[a];
    for (uint32_t i = 0; i < ag->count; ++i) {
        const double *m = &t->m[3 * (size_t)(ag->first + i)];
        float w[3];
        to_world(m, w);
        if (hypotf(w[0], w[2]) >= follow_speed) {
            return atan2f(w[0], w[2]);
        }
    }
    return 0.0f;
}

/* A phase in [0, 1) from the agent's id, so a crowd is staggered the same way every run. */
static float phase_of(int64_t id)
{
    uint64_t z = (uint64_t)id + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (float)((z ^ (z >> 31)) >> 40) / 16777216.0f;
}

static bool add_agent(run *r, uint32_t a)
{
    cb_follow_desc fd = {.stand_speed_mps = r->o->stand_speed,
                         .follow_speed_mps = r->o->follow_speed};
    float heading = initial_heading(r->traj, a, cb_follow_query_desc(&fd).follow_speed_mps);
    uint32_t dense = cb_follow_count(r->follow);
    if (cb_follow_add(r->follow, phase_of(r->traj->agents[a].id), heading, &r->handle[a]) !=
        CB_OK) {
        fprintf(stderr, "crowdblend animate: cannot add agent %lld\n",
                (long long)r->traj->agents[a].id);
        return false;
    }
    r->dense_agent[dense] = a;
    r->measure_slot[a] = cb_measure_slot_take(r->measure);
    r->prev_yaw[a] = heading;
    r->rate[a] = 1.0f;
    r->anim_speed[a] = 0.0f;
    return true;
}

static void remove_agent(run *r, uint32_t a)
{
    uint32_t kind, dense;
    cb_crowd_locate(r->crowd, r->handle[a], &kind, &dense);
    uint32_t last = cb_follow_count(r->follow) - 1;
    cb_follow_remove(r->follow, r->handle[a]);
    r->dense_agent[dense] = r->dense_agent[last];
    cb_measure_slot_release(r->measure, r->measure_slot[a]);
}

/* ---- a frame ------------------------------------------------------------------------------ */

static bool place(run *r, double t)
{
    uint32_t n = cb_follow_count(r->follow);
    for (uint32_t i = 0; i < n; ++i) {
        double p[3], v[3];
        cb_traj_eval(r->traj, r->dense_agent[i], t, p, v);
        to_world(p, &r->pos[3 * i]);
        to_world(v, &r->vel[3 * i]);
    }
    cb_result res = cb_follow_update(r->follow, r->pos, r->vel, 0, (float)(1.0 / r->o->rate_hz));
    if (res != CB_OK) {
        fprintf(stderr, "crowdblend animate: follow update: %s\n", cb_result_str(res));
    }
    return res == CB_OK;
}

/* The reference playback-rate warp, done by the host through the public API: each character
 * is updated alone with dt scaled by rate = commanded speed / the blend's own root speed (of
 * the previous frame), within [0.25, 4]; standing or idling characters play at rate 1. */
static cb_result update_warped(run *r, float dt)
{
    uint32_t n = cb_follow_count(r->follow);
    const cb_follow_root *roots = cb_follow_roots(r->follow);
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t a = r->dense_agent[i];
        float cmd = roots[i].speed_mps, own = r->anim_speed[a];
        float rate = cmd >= r->stand && own > 0.05f ? cmd / own : 1.0f;
        rate = fminf(fmaxf(rate, 0.25f), 4.0f);
        r->rate[a] = rate;
        cb_result res = cb_crowd_update_range(r->crowd, r->scratch, dt * rate, 0, i, 1);
        if (res != CB_OK) {
            return res;
        }
    }
    const cb_root_delta *rm = cb_crowd_root_motion(r->crowd, 0);
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t a = r->dense_agent[i];
        r->anim_speed[a] = hypotf(rm[i].translation[0], rm[i].translation[2]) / (dt * r->rate[a]);
    }
    return CB_OK;
}

static float wrap_angle(float a)
{
    a = remainderf(a, 2.0f * PI_F);
    return a <= -PI_F ? a + 2.0f * PI_F : a;
}

static void measure_frame(run *r, uint32_t k)
{
    uint32_t n = cb_follow_count(r->follow);
    const cb_follow_root *roots = cb_follow_roots(r->follow);
    size_t stride = 0;
    const float *w = cb_crowd_weights(r->crowd, 0, &stride);
    float dt = (float)(1.0 / r->o->rate_hz);
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t a = r->dense_agent[i];
        for (uint32_t s = 0; s < r->slot_count; ++s) {
            r->weights[s] = w[s * stride + i];
            r->times[s] = cb_crowd_clip_times(r->crowd, 0, s)[i];
        }
        cb_measure_frame f = {
            .matrices = cb_crowd_matrices(r->crowd, 0, i),
            .weights = r->weights,
            .times = r->times,
            .speed_mps = roots[i].speed_mps,
            .turn_rps = fabsf(wrap_angle(roots[i].yaw - r->prev_yaw[a])) / dt,
        };
        r->prev_yaw[a] = roots[i].yaw;
        cb_follow_root_matrix(&roots[i], f.root);
        cb_measure_add(r->measure, r->measure_slot[a], &f);
        if (r->gltf != NULL && k % r->export_step == 0 && r->export_agent[a] != UINT32_MAX) {
            cb_gltf_record(r->gltf, r->export_agent[a], k / r->export_step - r->export_first[a],
                           roots[i].position, roots[i].rotation, f.matrices);
        }
    }
}

/* ---- setup and the loop ------------------------------------------------------------------- */

static bool alloc_tables(run *r)
{
    uint32_t n = r->traj->agent_count;
    r->first_k = malloc(n * sizeof *r->first_k);
    r->last_k = malloc(n * sizeof *r->last_k);
    r->measure_slot = malloc(n * sizeof *r->measure_slot);
    r->prev_yaw = malloc(n * sizeof *r->prev_yaw);
    r->rate = malloc(n * sizeof *r->rate);
    r->anim_speed = malloc(n * sizeof *r->anim_speed);
    r->export_first = calloc(n, sizeof *r->export_first);
    r->export_agent = calloc(n, sizeof *r->export_agent);
    r->handle = malloc(n * sizeof *r->handle);
    r->dense_agent = malloc(n * sizeof *r->dense_agent);
    r->pos = malloc(3 * (size_t)n * sizeof *r->pos);
    r->vel = malloc(3 * (size_t)n * sizeof *r->vel);
    r->weights = malloc(256 * sizeof *r->weights);
    r->times = malloc(256 * sizeof *r->times);
    bool ok = r->first_k && r->last_k && r->measure_slot && r->prev_yaw && r->rate &&
              r->anim_speed && r->export_first && r->export_agent && r->handle && r->dense_agent &&
              r->pos && r->vel && r->weights && r->times;
    if (!ok) {
        fprintf(stderr, "crowdblend animate: out of memory\n");
    }
    return ok;
}

static void free_run(run *r)
{
    cb_gltf_destroy(r->gltf);
    cb_follow_destroy(r->follow);
    cb_crowd_scratch_destroy(r->crowd, r->scratch);
    cb_crowd_destroy(r->crowd);
    cb_graph_destroy(r->graph);
    cb_graph_destroy(r->blend);
    free(r->first_k);
    free(r->last_k);
    free(r->measure_slot);
    free(r->prev_yaw);
    free(r->rate);
    free(r->anim_speed);
    free(r->export_first);
    free(r->export_agent);
    free(r->handle);
    free(r->dense_agent);
    free(r->pos);
    free(r->vel);
    free(r->weights);
    free(r->times);
}

/* Each agent's frames [first_k, last_k] on the grid t = t_min + k / rate (last_k < first_k:
 * the agent falls between two frames and never shows); the frame count; the most agents at
 * once (a sweep over arrivals and departures). */
static uint32_t plan_frames(run *r, uint32_t *max_concurrent, uint32_t *shown)
{
    const cb_traj *t = r->traj;
    double rate = r->o->rate_hz, span = t->t_max - t->t_min;
    if (r->o->seconds > 0.0 && r->o->seconds < span) {
        span = r->o->seconds;
    }
    uint32_t frames = (uint32_t)floor(span * rate + 1e-9) + 1;
    int64_t *delta = calloc((size_t)frames + 1, sizeof *delta);
    *shown = 0;
    for (uint32_t a = 0; a < t->agent_count; ++a) {
        r->first_k[a] = (int64_t)ceil((cb_traj_agent_start(t, a) - t->t_min) * rate - 1e-9);
        r->last_k[a] = (int64_t)floor((cb_traj_agent_end(t, a) - t->t_min) * rate + 1e-9);
        if (r->last_k[a] >= (int64_t)frames) {
            r->last_k[a] = (int64_t)frames - 1;
        }
        if (r->first_k[a] <= r->last_k[a] && delta != NULL) {
            delta[r->first_k[a]]++;
            delta[r->last_k[a] + 1]--;
            ++*shown;
        }
    }
    int64_t live = 0, most = 0;
    for (uint32_t k = 0; delta != NULL && k < frames; ++k) {
        live += delta[k];
        most = live > most ? live : most;
    }
    free(delta);
    *max_concurrent = (uint32_t)(most > 0 ? most : 1);
    return delta != NULL || frames == 0 ? frames : 0;
}

static bool make_export(run *r, uint32_t frames)
{
    double out_rate = r->o->out_rate_hz > 0.0 ? r->o->out_rate_hz : r->o->rate_hz;
    long step = lround(r->o->rate_hz / out_rate);
    r->export_step = (uint32_t)(step < 1 ? 1 : step);
    uint32_t n = r->traj->agent_count, used = 0;
    int64_t *ids = malloc(n * sizeof *ids);
    uint32_t *count = malloc(n * sizeof *count), *first = malloc(n * sizeof *first);
    bool ok = ids != NULL && count != NULL && first != NULL;
    for (uint32_t a = 0; ok && a < n; ++a) {
        /* Exported frames: the multiples of the step within [first_k, last_k]. Agents never
         * on that grid are left out of the file; the others are numbered compactly. */
        int64_t e0 = (r->first_k[a] + r->export_step - 1) / r->export_step;
        int64_t e1 = r->last_k[a] >= 0 ? r->last_k[a] / r->export_step : -1;
        r->export_first[a] = (uint32_t)e0;
        r->export_agent[a] = e1 >= e0 ? used : UINT32_MAX;
        if (e1 >= e0) {
            ids[used] = r->traj->agents[a].id;
            count[used] = (uint32_t)(e1 - e0 + 1);
            first[used++] = (uint32_t)e0;
        }
    }
    cb_gltf_desc gd = {.skeleton = r->skeleton,
                       .agent_count = used,
                       .agent_ids = ids,
                       .frames = count,
                       .first_frame = first,
                       .dt_s = (double)r->export_step / r->o->rate_hz,
                       .total_frames = (frames + r->export_step - 1) / r->export_step};
    cb_error err = {0};
    if (ok && used == 0) {
        fprintf(stderr, "crowdblend animate: --out: no agent is on the export grid\n");
        ok = false;
    } else if (ok && cb_gltf_create(&gd, &r->gltf, &err) != CB_OK) {
        fprintf(stderr, "crowdblend animate: %s\n", err.message);
        ok = false;
    }
    free(ids);
    free(count);
    free(first);
    return ok;
}

/* Arrivals and departures at frame k: agents whose last frame was k - 1 leave, agents whose
 * first frame is k arrive. Agents are few next to frames, so a scan per frame is cheap; an
 * index sorted by frame would serve files with millions of agents. */
static bool agents_at(run *r, int64_t k)
{
    for (uint32_t a = 0; a < r->traj->agent_count; ++a) {
        if (r->first_k[a] <= r->last_k[a] && r->last_k[a] == k - 1) {
            remove_agent(r, a);
        }
    }
    for (uint32_t a = 0; a < r->traj->agent_count; ++a) {
        if (r->first_k[a] <= r->last_k[a] && r->first_k[a] == k && !add_agent(r, a)) {
            return false;
        }
    }
    return true;
}

static bool frames_loop(run *r, uint32_t frames)
{
    float dt = (float)(1.0 / r->o->rate_hz);
    for (uint32_t k = 0; k < frames; ++k) {
        if (!agents_at(r, k)) {
            return false;
        }
        if (cb_follow_count(r->follow) == 0) {
            continue;
        }
        if (!place(r, r->traj->t_min + (double)k / r->o->rate_hz)) {
            return false;
        }
        cb_result res = r->o->host_warp ? update_warped(r, dt) : cb_crowd_update(r->crowd, dt);
        if (res != CB_OK) {
            fprintf(stderr, "crowdblend animate: update: %s\n", cb_result_str(res));
            return false;
        }
        measure_frame(r, k);
    }
    return true;
}

bool cb_animate_run(const cb_traj *traj, const char *name, const cb_animate_options *o,
                    const cb_animate_assets *assets, cb_animate_result *out)
{
    uint64_t t0 = cb_now_ns();
    run r = {.traj = traj, .o = o, .assets = assets, .skeleton = cb_embedded_skeleton(assets->set)};
    memset(out, 0, sizeof *out);
    bool ok = alloc_tables(&r);
    uint32_t concurrent = 1, shown = 0;
    uint32_t frames = ok ? plan_frames(&r, &concurrent, &shown) : 0;
    ok = ok && frames > 0 && (o->graph == NULL || load_graph(&r)) && make_crowd(&r, concurrent);
    ok = ok && (o->out == NULL || make_export(&r, frames));
    ok = ok && frames_loop(&r, frames);
    if (ok && r.gltf != NULL) {
        cb_error err = {0};
        if (cb_gltf_write(r.gltf, o->out, &err) != CB_OK) {
            fprintf(stderr, "crowdblend animate: %s\n", err.message);
            ok = false;
        }
    }
    if (ok) {
        out->agents_shown = shown;
        out->max_concurrent = concurrent;
        out->frames = frames;
        out->character_seconds = (double)cb_measure_query(r.measure).character_frames / o->rate_hz;
        out->measure = r.measure;
        out->warp = r.warp;
        out->lock = r.lock;
        out->orient = r.orient;
        out->follow_stats = cb_follow_query_stats(r.follow);
        r.measure = NULL;
    } else {
        fprintf(stderr, "crowdblend animate: %s: failed\n", name);
    }
    cb_measure_destroy(r.measure);
    free_run(&r);
    out->wall_s = (double)(cb_now_ns() - t0) / 1e9;
    return ok;
}
