#include "cli/scene.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/prng.h"
#include "cli/example_graphs.h"
#include "simd/detmath.h"

/* A wandering character as a host game would keep it. Velocities are in the character's
 * frame (right, forward), which is what the locomotion blend space takes. */
typedef struct agent {
    float x, z, yaw;      /* world position (m) and heading (rad) */
    float right, forward; /* current local velocity, m/s */
    float goal_right, goal_forward;
    float turn_rate;  /* rad/s */
    float timer;      /* seconds until the next decision */
    float wave_timer; /* > 0 while waving */
    float additive;   /* lean/breathe layer weight */
    float upper;      /* upper-body wave layer weight */
    float look_yaw, look_pitch, look_goal_yaw, look_goal_pitch; /* where the head turns */
    float drift; /* phase of the slowly drifting "w_..." weights */
    cb_prng rng;
} agent;

/* Parameters of a graph that the host drives, found by name (UINT32_MAX: absent). */
enum { P_VX, P_VY, P_WAVE, P_LOOK, P_LOOK_X, P_LOOK_Y, P_LOOK_Z, P_LEAN, P_NAMED };
static const char *const driven_names[P_NAMED] = {"vx",     "vy",     "wave",   "look",
                                                  "look_x", "look_y", "look_z", "w_lean"};
enum { MAX_DRIFTING = 32 };

struct cb_scene {
    cb_embedded *set;
    cb_crowd *crowd;
    agent *agents;
    uint32_t count;
    uint32_t threads;
    bool fixed;
    uint32_t p_right, p_forward, p_additive, p_upper;
    uint32_t p_blend[3];
    cb_graph *graph; /* the example graph the scene drives, or NULL */
    cb_graph *blend; /* else: the blend-space graph the crowd runs */
    uint32_t driven[P_NAMED];
    uint32_t drifting[MAX_DRIFTING]; /* other "w_..." floats */
    uint32_t drifting_count;
    uint32_t capacity;
    uint64_t seed;
    float area;     /* half the side of the square where they appear (m) */
    cb_prng layout; /* where characters appear, also those added later */
    uint32_t added; /* characters ever added (seeds each one's stream) */
    /* The clips play in place (a pack's, like the Fox's): the host moves each character by the
     * velocity its graph was given (vx, vy) instead of the animation's root motion, as a game
     * moves a capsule under an in-place animation. */
    bool in_place;
};

/* A graph text stored in a pack, by name. */
static const cb_pack_graph *pack_graph(const cb_pack *pack, const char *name, cb_pack_graph *g)
{
    for (size_t i = 0; pack != NULL && i < cb_pack_graph_count(pack); ++i) {
        *g = cb_pack_query_graph(pack, i);
        if (strcmp(g->name, name) == 0) {
            return g;
        }
    }
    return NULL;
}

const char *cb_scene_pack_default_graph(const cb_pack *pack)
{
    return cb_pack_graph_count(pack) > 0 ? cb_pack_query_graph(pack, 0).name : NULL;
}

/* Loads the graph a scene runs: an embedded example by name (a graph stored in the pack, with
 * a pack), else a JSON file. */
static cb_result load_graph(const char *name, const cb_embedded *set, const cb_pack *pack,
                            cb_graph **out, cb_error *err)
{
    const cb_clip *clips[64];
    size_t n = cb_embedded_clip_count(set);
    for (size_t k = 0; k < n && k < 64; ++k) {
        clips[k] = cb_embedded_clip(set, k);
    }
    cb_graph_json_desc jd = {.skeleton = cb_embedded_skeleton(set),
                             .clips = clips,
                             .clip_count = (uint32_t)(n < 64 ? n : 64),
                             .source_name = name};
    if (pack != NULL) {
        jd.skeleton = cb_pack_skeleton(pack);
        jd.clips = cb_pack_clips(pack);
        jd.clip_count = cb_pack_clip_count(pack);
        cb_pack_graph g;
        if (pack_graph(pack, name, &g) != NULL) {
            return cb_graph_load_json(g.text, g.length, &jd, out, err);
        }
        return cb_graph_load_json_file(name, &jd, out, err);
    }
    const cb_example_graph *ex = cb_example_graph_find(name);
    if (ex != NULL) {
        return cb_graph_load_json(ex->text, ex->length, &jd, out, err);
    }
    return cb_graph_load_json_file(name, &jd, out, err);
}

/* True when no clip of the pack moves its root (every clip's ground speed under 1 cm/s). */
static bool clips_in_place(const cb_pack *pack)
{
    for (size_t k = 0; k < cb_pack_clip_count(pack); ++k) {
        if (cb_clip_query_root_motion(cb_pack_clip(pack, k)).speed_mps >= 0.01f) {
            return false;
        }
    }
    return true;
}

/* Finds the parameters the host drives in the scene's graph. */
static void find_driven(cb_scene *s)
{
    const cb_graph *g = s->graph;
    for (int k = 0; k < P_NAMED; ++k) {
        if (cb_graph_find_param(g, driven_names[k], &s->driven[k]) != CB_OK) {
            s->driven[k] = UINT32_MAX;
        }
    }
    s->drifting_count = 0;
    for (uint32_t p = 0; p < cb_graph_param_count(g) && s->drifting_count < MAX_DRIFTING; ++p) {
        const char *name = cb_graph_param_name(g, p);
        if (strncmp(name, "w_", 2) == 0 && strcmp(name, "w_lean") != 0 &&
            cb_graph_param_type(g, p) == CB_PARAM_FLOAT) {
            s->drifting[s->drifting_count++] = p;
        }
    }
}

static const char *const locomotion_names[CB_SCENE_LOCOMOTION_CLIPS] = {
    "idle",  "walk_f", "walk_fl", "walk_l", "walk_bl", "walk_b", "walk_br", "walk_r", "walk_fr",
    "run_f", "run_fl", "run_l",   "run_bl", "run_b",   "run_br", "run_r",   "run_fr",
};

/* Picks the next goal: mostly forward, sometimes strafing or backing up, at idle, walk or run
 * speed, held for 2-6 s. Varied on purpose: every part of the blend space gets visited. */
static void decide(agent *a)
{
    double u = cb_prng_double(&a->rng);
    float speed = u < 0.12   ? 0.0f
                  : u < 0.65 ? cb_prng_range(&a->rng, 0.7f, 1.6f)
                             : cb_prng_range(&a->rng, 2.6f, 4.0f);
    double d = cb_prng_double(&a->rng);
    float dir = d < 0.6    ? cb_prng_range(&a->rng, -0.5f, 0.5f)
                : d < 0.85 ? (cb_prng_double(&a->rng) < 0.5 ? 1.0f : -1.0f) *
                                 cb_prng_range(&a->rng, 0.7f, 1.9f)
                           : 3.14159265f + cb_prng_range(&a->rng, -0.7f, 0.7f);
    a->goal_right = speed * cb_det_sinf(dir);
    a->goal_forward = speed * cb_det_cosf(dir);
    a->turn_rate = cb_prng_range(&a->rng, -0.6f, 0.6f);
    a->timer = cb_prng_range(&a->rng, 2.0f, 6.0f);
    if (cb_prng_double(&a->rng) < 0.15) {
        a->wave_timer = cb_prng_range(&a->rng, 1.5f, 3.0f);
    }
}

/* Moves x toward goal by at most step. */
static float approach(float x, float goal, float step)
{
    return fabsf(goal - x) <= step ? goal : x + (goal > x ? step : -step);
}

/* The blend space's clips, found by name in the embedded set: W1's three, else the 17
 * locomotion clips. */
static bool find_clips(const cb_scene *s, const cb_scene_desc *d, const cb_clip **clips,
                       uint32_t clip_count)
{
    static const char *const three[3] = {"walk_f", "run_f", "walk_fr"};
    for (uint32_t k = 0; k < clip_count; ++k) {
        const char *name = d->fixed_three_clips ? three[k] : locomotion_names[k];
        clips[k] = cb_embedded_find_clip(s->set, name);
        if (clips[k] == NULL) {
            fprintf(stderr, "crowdblend: the embedded set has no clip '%s'\n", name);
            return false;
        }
    }
    return true;
}

/* The graph the scene drives, when one is named, and the parameters it drives in it. */
static bool load_scene_graph(cb_scene *s, const cb_scene_desc *d)
{
    if (d->pack != NULL && d->graph == NULL) {
        fprintf(stderr, "crowdblend: a pack's clips run in a graph: name one\n");
        return false;
    }
    if (d->graph != NULL) {
        cb_error err = {0};
        if (load_graph(d->graph, s->set, d->pack, &s->graph, &err) != CB_OK) {
            fprintf(stderr, "crowdblend: graph: %s\n", err.message);
            return false;
        }
        find_driven(s);
        s->in_place = d->pack != NULL && clips_in_place(d->pack) && s->driven[P_VX] != UINT32_MAX &&
                      s->driven[P_VY] != UINT32_MAX;
    }
    return true;
}

/* Without a graph: the blend space of the clips, with its layers when asked. */
static bool create_blend(cb_scene *s, const cb_scene_desc *d, const cb_clip **clips,
                         uint32_t clip_count)
{
    cb_graph_blend_desc bd = {
        .skeleton = cb_embedded_skeleton(s->set), .clips = clips, .clip_count = clip_count};
    bd.solver.kind = d->fixed_three_clips ? CB_SOLVER_KIND_DIRECT : d->solver;
    if (d->layers && !d->fixed_three_clips) {
        bd.additive.clip = cb_embedded_find_clip(s->set, "lean_add");
        bd.upper_body.clip = cb_embedded_find_clip(s->set, "wave_upper");
        bd.upper_body.mask_joint = "spine_01";
    }
    cb_error err = {0};
    if (cb_graph_create_blend(&bd, &s->blend, &err) != CB_OK) {
        fprintf(stderr, "crowdblend: blend space: %s\n", err.message);
        return false;
    }
    return true;
}

/* The crowd running the scene's graph; sets the scene's capacity. */
static bool create_crowd(cb_scene *s, const cb_scene_desc *d)
{
    const cb_graph *graphs[1] = {s->graph != NULL ? s->graph : s->blend};
    cb_crowd_desc cd = {
        .skeleton = d->pack != NULL ? cb_pack_skeleton(d->pack) : cb_embedded_skeleton(s->set),
        .capacity = d->capacity > d->characters ? d->capacity : d->characters,
        .graphs = graphs,
        .graph_count = 1,
        .jobs = d->jobs,
        .thread_count = d->threads,
        .batch_size = d->batch_size,
        .profile = d->profile,
        .keep_weights = d->keep_weights,
        .skip_root_motion = d->skip_root_motion,
        .matrix_layout = d->matrix_layout,
        /* A graph's host reads its events (footsteps); the blend-space crowd's does not. */
        .events = s->graph != NULL || d->events,
    };
    cb_error err = {0};
    if (cb_crowd_create(&cd, &s->crowd, &err) != CB_OK) {
        fprintf(stderr, "crowdblend: crowd: %s\n", err.message);
        return false;
    }
    s->capacity = cd.capacity;
    return true;
}

/* The blend-space graph's parameters (graph.h): blend_0, blend_1, ..., the layers'. */
static void find_blend_params(cb_scene *s)
{
    const cb_graph *g = s->blend;
    for (uint32_t k = 0; k < 3; ++k) {
        char name[16];
        snprintf(name, sizeof name, CB_GRAPH_BLEND_PARAM_PREFIX "%u", k);
        s->p_blend[k] = CB_INVALID_INDEX;
        cb_graph_find_param(g, name, &s->p_blend[k]);
    }
    s->p_right = s->p_blend[0];
    s->p_forward = s->p_blend[1];
    cb_graph_find_param(g, CB_GRAPH_BLEND_ADDITIVE_WEIGHT, &s->p_additive);
    cb_graph_find_param(g, CB_GRAPH_BLEND_UPPER_WEIGHT, &s->p_upper);
}

/* The starting characters, laid out from the seed, and their first parameters. */
static void populate(cb_scene *s, const cb_scene_desc *d)
{
    s->seed = d->seed;
    s->area = d->area > 0.0f ? d->area : 200.0f;
    s->layout = cb_prng_seed(d->seed);
    s->count = 0;
    for (uint32_t i = 0; i < d->characters; ++i) {
        cb_character ch;
        cb_scene_add(s, &ch);
    }
    cb_scene_host_step(s, 0.0f);
}

cb_scene *cb_scene_create(const cb_scene_desc *d)
{
    cb_scene *s = calloc(1, sizeof *s);
    if (s == NULL) {
        fprintf(stderr, "crowdblend: out of memory\n");
        return NULL;
    }
    cb_error err = {0};
    if (cb_embedded_create(NULL, &s->set, &err) != CB_OK) {
        fprintf(stderr, "crowdblend: embedded set: %s\n", err.message);
        cb_scene_destroy(s);
        return NULL;
    }
    const cb_clip *clips[CB_SCENE_LOCOMOTION_CLIPS];
    uint32_t clip_count = d->fixed_three_clips ? 3 : CB_SCENE_LOCOMOTION_CLIPS;
    /* In order: the first step that fails says why. */
    if (!find_clips(s, d, clips, clip_count) || !load_scene_graph(s, d) ||
        (s->graph == NULL && !create_blend(s, d, clips, clip_count)) || !create_crowd(s, d)) {
        cb_scene_destroy(s);
        return NULL;
    }
    s->fixed = d->fixed_three_clips;
    s->threads = d->jobs != NULL   ? cb_jobs_thread_count(d->jobs)
                 : d->threads != 0 ? d->threads
                                   : cb_jobs_query_desc(NULL).thread_count;
    s->count = d->characters;
    s->agents = calloc(s->capacity ? s->capacity : 1, sizeof *s->agents);
    if (s->agents == NULL) {
        fprintf(stderr, "crowdblend: out of memory for %u characters\n", d->characters);
        cb_scene_destroy(s);
        return NULL;
    }
    if (s->graph == NULL) {
        find_blend_params(s);
    }
    populate(s, d);
    return s;
}

cb_result cb_scene_add(cb_scene *s, cb_character *out)
{
    uint32_t i = cb_crowd_count(s->crowd, 0);
    if (i >= s->capacity) {
        return CB_ERR_CAPACITY;
    }
    agent *a = &s->agents[i];
    *a = (agent){0};
    a->rng = cb_prng_seed(s->seed * 0x9E3779B97F4A7C15ull + s->added + 1);
    a->x = cb_prng_range(&s->layout, -s->area, s->area);
    a->z = cb_prng_range(&s->layout, -s->area, s->area);
    a->yaw = cb_prng_range(&s->layout, -3.14159265f, 3.14159265f);
    a->additive = cb_prng_range(&a->rng, 0.3f, 0.9f);
    a->drift = cb_prng_range(&a->rng, 0.0f, 100.0f);
    decide(a);
    a->right = a->goal_right;
    a->forward = a->goal_forward;
    /* Staggered phases, as in any real crowd. */
    cb_result r = cb_crowd_add(s->crowd, 0, (float)cb_prng_double(&s->layout), out);
    if (r == CB_OK) {
        s->added++;
        s->count = cb_crowd_count(s->crowd, 0);
    }
    return r;
}

cb_result cb_scene_remove(cb_scene *s, cb_character character)
{
    uint32_t kind, dense;
    cb_result r = cb_crowd_locate(s->crowd, character, &kind, &dense);
    if (r != CB_OK) {
        return r;
    }
    uint32_t last = cb_crowd_count(s->crowd, kind) - 1;
    r = cb_crowd_remove(s->crowd, character);
    if (r == CB_OK) {
        s->agents[dense] = s->agents[last]; /* mirror the crowd's swap-remove */
        s->count = cb_crowd_count(s->crowd, 0);
    }
    return r;
}

void cb_scene_root(const cb_scene *s, uint32_t dense, float position[3], float *yaw)
{
    const agent *a = &s->agents[dense];
    position[0] = a->x;
    position[1] = 0.0f;
    position[2] = a->z;
    *yaw = a->yaw;
}

void cb_scene_destroy(cb_scene *s)
{
    if (s == NULL) {
        return;
    }
    cb_crowd_destroy(s->crowd);
    cb_graph_destroy(s->graph);
    cb_graph_destroy(s->blend);
    cb_embedded_destroy(s->set);
    free(s->agents);
    free(s);
}

cb_crowd *cb_scene_crowd(cb_scene *s)
{
    return s->crowd;
}

uint32_t cb_scene_threads(const cb_scene *s)
{
    return s->threads;
}

const cb_graph *cb_scene_graph(const cb_scene *s)
{
    return s->graph;
}

/* A parameter column, or NULL when the graph does not have it. */
static float *driven_column(cb_scene *s, int which)
{
    return s->driven[which] != UINT32_MAX ? cb_crowd_param_column(s->crowd, 0, s->driven[which])
                                          : NULL;
}

/* Writes what the agents want into the graph's parameters. */
static void drive_graph(cb_scene *s, float dt)
{
    float *cols[P_NAMED], *drifting[MAX_DRIFTING];
    for (int k = 0; k < P_NAMED; ++k) {
        cols[k] = driven_column(s, k);
    }
    for (uint32_t k = 0; k < s->drifting_count; ++k) {
        drifting[k] = cb_crowd_param_column(s->crowd, 0, s->drifting[k]);
    }
    uint32_t n = cb_crowd_count(s->crowd, 0);
    for (uint32_t i = 0; i < n; ++i) {
        agent *a = &s->agents[i];
        /* The head wanders between points of interest: within 70 degrees to either side. */
        if (cb_prng_below(&a->rng, 120) == 0) {
            a->look_goal_yaw = cb_prng_range(&a->rng, -1.2f, 1.2f);
            a->look_goal_pitch = cb_prng_range(&a->rng, -0.3f, 0.3f);
        }
        a->look_yaw = approach(a->look_yaw, a->look_goal_yaw, 1.5f * dt);
        a->look_pitch = approach(a->look_pitch, a->look_goal_pitch, 1.0f * dt);
        float values[P_NAMED] = {
            -a->right, /* vx: +X, the character's left (crowdblend/clip.h) */
            a->forward,
            a->upper,
            1.0f,
            /* +X is the character's left. The host's own trigonometry is the library's
             * deterministic one too, so the demo's checksums compare across machines. */
            3.0f * cb_det_sinf(a->look_yaw) * cb_det_cosf(a->look_pitch),
            1.6f + 3.0f * cb_det_sinf(a->look_pitch),
            3.0f * cb_det_cosf(a->look_yaw) * cb_det_cosf(a->look_pitch),
            a->additive,
        };
        for (int k = 0; k < P_NAMED; ++k) {
            if (cols[k] != NULL) {
                cols[k][i] = values[k];
            }
        }
        a->drift += dt;
        for (uint32_t k = 0; k < s->drifting_count; ++k) {
            float v = 0.5f + 0.5f * cb_det_sinf(0.4f * a->drift + 1.7f * (float)k);
            drifting[k][i] = v * v;
        }
    }
}

void cb_scene_host_step(cb_scene *s, float dt)
{
    cb_crowd *c = s->crowd;
    if (s->fixed) {
        /* W1: three clips at fixed weights, the same for everyone. */
        static const float w[3] = {0.5f, 0.3f, 0.2f};
        for (uint32_t k = 0; k < 3; ++k) {
            float *col = cb_crowd_param_column(c, 0, s->p_blend[k]);
            for (uint32_t i = 0; i < s->count; ++i) {
                col[i] = w[k];
            }
        }
        return;
    }
    const cb_root_delta *rm = cb_crowd_root_motion(c, 0);
    bool graph = s->graph != NULL;
    float *right = graph ? NULL : cb_crowd_param_column(c, 0, s->p_right);
    float *forward = graph ? NULL : cb_crowd_param_column(c, 0, s->p_forward);
    float *additive = graph ? NULL : cb_crowd_param_column(c, 0, s->p_additive);
    float *upper = graph ? NULL : cb_crowd_param_column(c, 0, s->p_upper);
    /* In place: last frame's velocity parameters, which a host (`crowdblend serve`) may have
     * overridden after this step wrote them. */
    const float *vx = s->in_place ? driven_column(s, P_VX) : NULL;
    const float *vy = s->in_place ? driven_column(s, P_VY) : NULL;
    uint32_t n = cb_crowd_count(c, 0);
    for (uint32_t i = 0; i < n; ++i) {
        agent *a = &s->agents[i];
        /* Apply the animation's own motion (x is the character's left, z its forward). */
        cb_root_delta m = rm[i];
        if (s->in_place) {
            m.translation[0] = vx[i] * dt; /* both +X, the character's left */
            m.translation[2] = vy[i] * dt;
        }
        float cy = cb_det_cosf(a->yaw), sy = cb_det_sinf(a->yaw);
        a->x += cy * m.translation[0] + sy * m.translation[2];
        a->z += -sy * m.translation[0] + cy * m.translation[2];
        a->yaw += m.yaw + a->turn_rate * dt;
        a->timer -= dt;
        if (a->timer <= 0.0f) {
            decide(a);
        }
        /* Velocity changes at most 3 m/s^2, as a body would. */
        a->right = approach(a->right, a->goal_right, 3.0f * dt);
        a->forward = approach(a->forward, a->goal_forward, 3.0f * dt);
        a->wave_timer -= dt;
        a->upper = approach(a->upper, a->wave_timer > 0.0f ? 1.0f : 0.0f, 2.0f * dt);
        if (!graph) {
            right[i] = -a->right; /* blend_0 is to the left (+X) */
            forward[i] = a->forward;
            additive[i] = a->additive;
            upper[i] = a->upper;
        }
    }
    if (graph) {
        drive_graph(s, dt);
    }
}
