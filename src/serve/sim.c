/* The simulation thread of `crowdblend serve` (sim.h). A tick applies the queued commands,
 * steps the scene and the crowd by 1/60 s times the time scale, and publishes on the boards.
 * The per-frame path writes into memory allocated at create (frames, details, stats) and
 * takes no lock; its only system calls are the clock reads and the sleep to the next tick.
 * Control actions that must allocate (switching graphs) are commands, not frames. */
#include "serve/sim.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cli/example_graphs.h"
#include "cli/scene.h"
#include "crowdblend/crowdblend.h"
#include "serve/traj_source.h"
#include "traj/host.h"

enum { MAX_MACHINES = 8, MAX_MARKERS = 256, MAX_PARAMS = 256, ADD_IDS_REPLIED = 32 };

typedef struct event_entry {
    uint64_t frame;
    uint32_t marker_hash, node;
    float weight;
} event_entry;

typedef struct subscription {
    uint64_t id; /* a cb_character id: 53 bits */
    uint32_t slot, serial, joint;
    event_entry events[CB_SIM_EVENT_HISTORY];
    uint32_t event_count; /* total ever; the last CB_SIM_EVENT_HISTORY are kept */
} subscription;

struct cb_sim {
    cb_sim_desc desc;
    char start_graph[512]; /* the graph given at start, which a client may switch back to */
    char graph_name[512];
    cb_embedded *names; /* the embedded set (without a pack), for clip and marker names */
    cb_jobs *jobs;      /* one pool for the crowd's update and the encoding */
    uint32_t *clamped_by_thread;
    cb_scene *scene;
    cb_serve_traj *traj; /* --trajectories: drives the scene's crowd instead of its host */
    const cb_clip *gait; /* the follower's warp: --gait's clip, walk_f without a pack, or NULL */
    cb_crowd *crowd;
    const cb_graph *graph;
    const cb_skeleton *skeleton;
    uint32_t joints, capacity, threads;
    float position_scale;
    /* Parameter overrides: [param * capacity + dense], NaN = none; a value for all; counts. */
    uint32_t param_count;
    float *override;
    float global[MAX_PARAMS];
    uint32_t velocity[2]; /* left (+X), forward velocity parameters; UINT32_MAX: none */
    uint64_t frame;
    double sim_time_s;
    bool paused, dirty;
    uint32_t steps_pending;
    float time_scale;
    uint32_t epoch;
    uint32_t step_us;
    uint64_t clamped;
    cb_board frames[CB_FRAME_ENCODING_COUNT], hello, details, stats;
    _Atomic int want[CB_FRAME_ENCODING_COUNT];
    cb_ring commands, replies;
    subscription subs[CB_SIM_MAX_SUBSCRIPTIONS];
    uint32_t sub_count;
    /* Statistics over the current window (about one second). */
    uint64_t window_start_ns, window_ticks, window_step_ns, window_step_max_ns;
    uint64_t window_encode_ns[CB_FRAME_ENCODING_COUNT], window_encoded[CB_FRAME_ENCODING_COUNT];
    uint64_t window_frames;
    cb_crowd_stats window_crowd;
    cb_sim_stats last;
    uint64_t ticks, late_ticks;
    /* The thread: pthreads rather than C11 <threads.h>, whose glibc thrd_create bypasses the
     * sanitizers' interception of pthread_create (ThreadSanitizer crashes in such a thread). */
    pthread_t thread;
    _Atomic bool running;
    bool started;
    void (*notify)(void *);
    void *user;
};

static uint64_t now_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- text output into fixed buffers ------------------------------------------------------- */

typedef struct text {
    char *p;
    size_t cap, len;
    bool full;
} text;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
put(text *t, const char *fmt, ...)
{
    if (t->full) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= t->cap - t->len) {
        t->full = true;
        return;
    }
    t->len += (size_t)n;
}

static void put_string(text *t, const char *s)
{
    if (t->full) {
        return;
    }
    size_t n = cb_json_quote(s, t->p + t->len, t->cap - t->len);
    if (n >= t->cap - t->len) {
        t->full = true;
        return;
    }
    t->len += n;
}

/* A JSON number: JSON has no NaN or infinity, so those become null. */
static void put_number(text *t, double v)
{
    if (isfinite(v)) {
        put(t, "%.6g", v);
    } else {
        put(t, "null");
    }
}

/* ---- replies ------------------------------------------------------------------------------ */

static void reply(cb_sim *s, const cb_sim_command *c, const char *json)
{
    if (c->quiet) {
        return;
    }
    cb_sim_reply r = {.slot = c->slot, .serial = c->serial};
    size_t n = strlen(json);
    if (n >= sizeof r.text) {
        n = sizeof r.text - 1;
    }
    memcpy(r.text, json, n);
    r.length = (uint32_t)n;
    /* A full reply queue means the network thread is not draining it; the reply is lost and
     * the client sees no answer to that one request, which is all it can do. */
    (void)cb_ring_push(&s->replies, &r);
}

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static void
reply_error(cb_sim *s, const cb_sim_command *c, cb_ctl_error code, const char *fmt, ...)
{
    char msg[512], buf[CB_SIM_REPLY_BYTES], quoted[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cb_json_quote(msg, quoted, sizeof quoted);
    char req[32] = "null";
    if (c->ctl.req >= 0) {
        snprintf(req, sizeof req, "%lld", (long long)c->ctl.req);
    }
    snprintf(buf, sizeof buf,
             "{\"type\":\"error\",\"req\":%s,\"for\":\"%s\",\"code\":\"%s\","
             "\"message\":%s}",
             req, cb_ctl_kind_name(c->ctl.kind), cb_ctl_error_name(code), quoted);
    reply(s, c, buf);
}

static void reply_ok(cb_sim *s, const cb_sim_command *c, const char *extra)
{
    char buf[CB_SIM_REPLY_BYTES], req[32] = "null";
    if (c->ctl.req >= 0) {
        snprintf(req, sizeof req, "%lld", (long long)c->ctl.req);
    }
    snprintf(buf, sizeof buf, "{\"type\":\"ok\",\"req\":%s,\"for\":\"%s\"%s%s}", req,
             cb_ctl_kind_name(c->ctl.kind), extra[0] ? "," : "", extra);
    reply(s, c, buf);
}

/* ---- the scene ---------------------------------------------------------------------------- */

/* The farthest any joint can be from the root: the longest chain of rest translations. */
static float skeleton_reach(const cb_skeleton *sk)
{
    size_t n = cb_skeleton_joint_count(sk);
    const int32_t *parents = cb_skeleton_parents(sk);
    float reach = 0.0f, path[CB_FRAME_MAX_JOINTS];
    for (size_t j = 0; j < n && j < CB_FRAME_MAX_JOINTS; ++j) {
        cb_xform x = cb_skeleton_rest_xform(sk, j);
        float len =
            sqrtf(x.translation[0] * x.translation[0] + x.translation[1] * x.translation[1] +
                  x.translation[2] * x.translation[2]);
        path[j] = len + (parents[j] >= 0 ? path[parents[j]] : 0.0f);
        reach = path[j] > reach ? path[j] : reach;
    }
    return reach > 0.1f ? reach : 0.1f;
}

/* The clips the hello lists and whose markers name events: the pack's, else the embedded set's. */
static size_t clip_count(const cb_sim *s)
{
    return s->desc.pack != NULL ? cb_pack_clip_count(s->desc.pack)
                                : cb_embedded_clip_count(s->names);
}

static const cb_clip *clip_at(const cb_sim *s, size_t k)
{
    return s->desc.pack != NULL ? cb_pack_clip(s->desc.pack, k) : cb_embedded_clip(s->names, k);
}

/* Graph k a client may switch to (NULL past the last): the one given at start, then the
 * pack's stored graphs, or the embedded examples and "none" (the blend-space crowd). */
static const char *graph_choice(const cb_sim *s, size_t k)
{
    if (k == 0) {
        return s->start_graph;
    }
    k--;
    if (s->desc.pack != NULL) {
        for (size_t g = 0; g < cb_pack_graph_count(s->desc.pack); ++g) {
            const char *name = cb_pack_query_graph(s->desc.pack, g).name;
            if (strcmp(name, s->start_graph) != 0 && k-- == 0) {
                return name;
            }
        }
        return NULL;
    }
    for (const cb_example_graph *g = cb_example_graphs; g->name != NULL; ++g) {
        if (strcmp(g->name, s->start_graph) != 0 && k-- == 0) {
            return g->name;
        }
    }
    return k == 0 && strcmp(s->start_graph, "none") != 0 ? "none" : NULL;
}

static bool known_graph(const cb_sim *s, const char *name)
{
    for (size_t k = 0; graph_choice(s, k) != NULL; ++k) {
        if (strcmp(graph_choice(s, k), name) == 0) {
            return true;
        }
    }
    return false;
}

/* Model-space rest positions of the joints, flat x, y, z (double-precision 4x4 products; parents
 * come first): the viewer fits a model's units to them (docs/serve.md, "The mesh path"). */
static json_t *rest_positions(const cb_skeleton *sk, uint32_t n)
{
    double(*m)[16] = malloc(sizeof *m * (n ? n : 1));
    json_t *out = json_array();
    const int32_t *parents = cb_skeleton_parents(sk);
    for (uint32_t j = 0; m != NULL && j < n; ++j) {
        cb_xform x = cb_skeleton_rest_xform(sk, j);
        double qx = x.rotation[0], qy = x.rotation[1], qz = x.rotation[2], qw = x.rotation[3];
        double r[9] = {
            1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy + qz * qw),     2 * (qx * qz - qy * qw),
            2 * (qx * qy - qz * qw),     1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz + qx * qw),
            2 * (qx * qz + qy * qw),     2 * (qy * qz - qx * qw),     1 - 2 * (qx * qx + qy * qy)};
        double local[16] = {0};
        for (int c = 0; c < 3; ++c) {
            for (int row = 0; row < 3; ++row) {
                local[4 * c + row] = r[3 * c + row] * x.scale[c];
            }
            local[12 + c] = x.translation[c];
        }
        local[15] = 1.0;
        for (int k = 0; k < 16; ++k) {
            double v = 0.0;
            for (int q = 0; parents[j] >= 0 && q < 4; ++q) {
                v += m[parents[j]][4 * q + k % 4] * local[4 * (k / 4) + q];
            }
            m[j][k] = parents[j] >= 0 ? v : local[k];
        }
        for (int c = 0; c < 3; ++c) {
            json_array_append_new(out, json_real(m[j][12 + c]));
        }
    }
    free(m);
    return out;
}

static void find_velocity_params(cb_sim *s)
{
    static const char *const names[2][2] = {
        {"vx", "vy"}, {CB_GRAPH_BLEND_PARAM_PREFIX "0", CB_GRAPH_BLEND_PARAM_PREFIX "1"}};
    s->velocity[0] = s->velocity[1] = UINT32_MAX;
    for (int set = 0; set < 2; ++set) {
        uint32_t a, b;
        if (cb_graph_find_param(s->graph, names[set][0], &a) == CB_OK &&
            cb_graph_find_param(s->graph, names[set][1], &b) == CB_OK) {
            s->velocity[0] = a;
            s->velocity[1] = b;
            return;
        }
    }
}

/* The hello's skeleton: joint names, parents and rest positions. */
static json_t *hello_skeleton(const cb_sim *s)
{
    json_t *joints = json_array(), *parents = json_array();
    const int32_t *par = cb_skeleton_parents(s->skeleton);
    for (uint32_t j = 0; j < s->joints; ++j) {
        json_array_append_new(joints, json_string(cb_skeleton_joint_name(s->skeleton, j)));
        json_array_append_new(parents, json_integer(par[j]));
    }
    return json_pack("{s:o, s:o, s:o}", "joints", joints, "parents", parents, "rest",
                     rest_positions(s->skeleton, s->joints));
}

static json_t *hello_clips(const cb_sim *s)
{
    json_t *clips = json_array();
    for (size_t k = 0; k < clip_count(s); ++k) {
        json_array_append_new(clips, json_string(cb_clip_name(clip_at(s, k))));
    }
    return clips;
}

static json_t *hello_params(const cb_sim *s)
{
    json_t *params = json_array();
    for (uint32_t p = 0; p < s->param_count; ++p) {
        /* Indexed by cb_param_type, whose 0 is the default (float). */
        static const char *const types[_CB_PARAM_TYPE_COUNT] = {"float", "float", "int", "bool",
                                                                "trigger"};
        cb_param_type t = cb_graph_param_type(s->graph, p);
        json_array_append_new(
            params, json_pack("{s:s, s:s, s:f}", "name", cb_graph_param_name(s->graph, p), "type",
                              (unsigned)t < _CB_PARAM_TYPE_COUNT ? types[t] : "float", "default",
                              (double)cb_graph_param_default(s->graph, p)));
    }
    return params;
}

static json_t *hello_machines(const cb_sim *s)
{
    json_t *machines = json_array();
    for (uint32_t m = 0; m < cb_graph_state_machine_count(s->graph); ++m) {
        json_t *states = json_array();
        for (uint32_t k = 0; k < cb_graph_state_count(s->graph, m); ++k) {
            json_array_append_new(states, json_string(cb_graph_state_name(s->graph, m, k)));
        }
        json_array_append_new(machines, json_pack("{s:o}", "states", states));
    }
    return machines;
}

/* The hello's graph: its name, parameters, state machines and clip nodes. */
static json_t *hello_graph(const cb_sim *s)
{
    json_t *params = hello_params(s), *machines = hello_machines(s);
    json_t *clip_nodes = json_array();
    for (uint32_t c = 0; c < cb_graph_clip_count(s->graph); ++c) {
        json_array_append_new(
            clip_nodes, json_string(cb_graph_node_name(s->graph, cb_graph_clip_node(s->graph, c))));
    }
    return json_pack("{s:s, s:o, s:o, s:o}", "name", s->graph_name, "params", params, "machines",
                     machines, "clip_nodes", clip_nodes);
}

/* The graphs a client may switch to (graph_choice). */
static json_t *hello_graph_choices(const cb_sim *s)
{
    json_t *graphs = json_array();
    for (size_t k = 0; graph_choice(s, k) != NULL; ++k) {
        json_array_append_new(graphs, json_string(graph_choice(s, k)));
    }
    return graphs;
}

static json_t *hello_velocity_params(const cb_sim *s)
{
    return s->velocity[0] == UINT32_MAX
               ? json_null()
               : json_pack("[s,s]", cb_graph_param_name(s->graph, s->velocity[0]),
                           cb_graph_param_name(s->graph, s->velocity[1]));
}

static json_t *hello_encodings(void)
{
    json_t *encodings = json_array();
    for (int e = 0; e < CB_FRAME_ENCODING_COUNT; ++e) {
        json_array_append_new(encodings, json_string(cb_frame_encoding_name(e)));
    }
    return encodings;
}

/* The hello of the current epoch (docs/serve.md, "Hello"), built with jansson: once per graph,
 * so allocation is fine here. */
static bool publish_hello(cb_sim *s)
{
    json_t *h = json_object();
    json_object_set_new(h, "type", json_string("hello"));
    json_object_set_new(h, "protocol", json_integer(CB_FRAME_VERSION));
    json_object_set_new(h, "epoch", json_integer(s->epoch));
    json_object_set_new(h, "server", json_string("crowdblend " CB_VERSION_STRING));
    json_object_set_new(h, "hz", json_integer(CB_SIM_HZ));
    json_object_set_new(h, "encodings", hello_encodings());
    json_object_set_new(h, "encoding", json_string("q16"));
    json_object_set_new(h, "position_scale", json_real(s->position_scale));
    json_object_set_new(h, "skeleton", hello_skeleton(s));
    json_object_set_new(h, "clips", hello_clips(s));
    json_object_set_new(h, "graph", hello_graph(s));
    json_object_set_new(h, "graphs", hello_graph_choices(s));
    json_object_set_new(h, "velocity_params", hello_velocity_params(s));
    json_object_set_new(h, "model",
                        s->desc.model_url != NULL ? json_pack("{s:s}", "url", s->desc.model_url)
                                                  : json_null());
    json_object_set_new(h, "capacity", json_integer(s->capacity));
    json_object_set_new(h, "limits",
                        json_pack("{s:i, s:i, s:i, s:i, s:i}", "message_bytes", CB_CTL_MAX_MESSAGE,
                                  "characters_per_message", CB_CTL_MAX_CHARACTERS, "clients",
                                  CB_SIM_MAX_CLIENTS, "subscriptions", CB_SIM_MAX_SUBSCRIPTIONS,
                                  "add", CB_CTL_MAX_ADD));
    /* 9 significant digits keep every float; the rest positions would otherwise take 17. */
    char *txt = json_dumps(h, JSON_COMPACT | JSON_REAL_PRECISION(9));
    json_decref(h);
    if (txt == NULL || strlen(txt) > s->hello.capacity) {
        free(txt);
        return false;
    }
    size_t n = strlen(txt);
    memcpy(cb_board_back(&s->hello), txt, n);
    free(txt);
    cb_board_publish(&s->hello, n, s->epoch);
    return true;
}

/* A scene running `graph`, checked against the server's limits, its gait and its trajectories,
 * and its parameter overrides (*override); NULL, with why, where it cannot run here. */
static cb_scene *build_scene(cb_sim *s, const char *graph, uint32_t characters, float **override,
                             char *why)
{
    cb_scene_desc sd = {
        .characters = s->traj != NULL ? 0 : characters, /* the file adds them */
        .capacity = s->capacity,
        .jobs = s->jobs,
        .layers = true,
        .profile = true,
        .seed = s->desc.seed ? s->desc.seed : 1,
        .graph = strcmp(graph, "none") == 0 ? NULL : graph,
        .keep_weights = true,
        .events = true,
        .pack = s->desc.pack,
        .area = s->desc.area,
    };
    cb_scene *scene = cb_scene_create(&sd);
    if (scene == NULL) {
        snprintf(why, 256, "could not build the scene for graph '%.160s' (see the server's log)",
                 graph);
        return NULL;
    }
    cb_crowd *crowd = cb_scene_crowd(scene);
    const cb_graph *g = cb_crowd_graph(crowd, 0);
    if (cb_graph_param_count(g) > MAX_PARAMS || cb_graph_state_machine_count(g) > MAX_MACHINES ||
        cb_crowd_joint_count(crowd) != s->joints) {
        snprintf(why, 256, "graph '%.160s' has more than %d parameters or %d state machines", graph,
                 MAX_PARAMS, MAX_MACHINES);
        cb_scene_destroy(scene);
        return NULL;
    }
    float *ov = malloc(sizeof(float) * (cb_graph_param_count(g) ? cb_graph_param_count(g) : 1) *
                       s->capacity);
    if (ov == NULL) {
        snprintf(why, 256, "out of memory");
        cb_scene_destroy(scene);
        return NULL;
    }
    /* A named gait warps every graph run, so each must take the rate (as animate --gait). */
    bool gait_ok = s->desc.gait == NULL || cb_traj_host_gait_graph(g, graph, why, 256);
    if (!gait_ok || (s->traj != NULL && !cb_serve_traj_attach(s->traj, crowd, s->gait, why))) {
        free(ov);
        cb_scene_destroy(scene);
        return NULL;
    }
    *override = ov;
    return scene;
}

/* The simulation moves to scene (running `graph`) and its overrides ov: the old scene freed,
 * every override and global value released, the subscriptions ended, a new epoch. */
static void adopt_scene(cb_sim *s, cb_scene *scene, float *ov, const char *graph)
{
    cb_crowd *crowd = cb_scene_crowd(scene);
    const cb_graph *g = cb_crowd_graph(crowd, 0);
    cb_scene_destroy(s->scene);
    free(s->override);
    s->scene = scene;
    s->crowd = crowd;
    s->graph = g;
    /* The scene owns its skeleton: take it from the new one (the old one is gone). */
    s->skeleton = cb_graph_skeleton(g);
    s->param_count = cb_graph_param_count(g);
    s->override = ov;
    for (size_t k = 0; k < (size_t)s->param_count * s->capacity; ++k) {
        ov[k] = NAN;
    }
    for (uint32_t p = 0; p < MAX_PARAMS; ++p) {
        s->global[p] = NAN;
    }
    snprintf(s->graph_name, sizeof s->graph_name, "%s", graph);
    find_velocity_params(s);
    s->sub_count = 0;
    s->epoch++;
    s->dirty = true;
    s->window_crowd = cb_crowd_query_stats(crowd);
}

/* Builds a scene running `graph` with `characters` characters, and everything sized by it. */
static bool load_scene(cb_sim *s, const char *graph, uint32_t characters, char *why)
{
    float *ov = NULL;
    cb_scene *scene = build_scene(s, graph, characters, &ov, why);
    if (scene == NULL) {
        return false;
    }
    adopt_scene(s, scene, ov, graph);
    if (!publish_hello(s)) {
        snprintf(why, 256, "the hello of graph '%.160s' does not fit in %d bytes", graph,
                 CB_SIM_HELLO_BYTES);
        return false;
    }
    return true;
}

/* The crowd's capacity: the one asked, else the characters and room for clients to add some;
 * with trajectories, at least the file's most agents at once (opened here). */
static bool size_crowd(cb_sim *s, const cb_sim_desc *d, char *why)
{
    uint32_t extra = d->characters / 4 > 64 ? d->characters / 4 : 64;
    uint64_t cap = d->capacity ? d->capacity : (uint64_t)d->characters + extra;
    if (d->traj != NULL) { /* the file's most agents at once */
        s->traj = cb_serve_traj_create(d->traj, CB_SIM_HZ, d->max_turn_rps, why);
        if (s->traj == NULL) {
            return false;
        }
        uint32_t most = cb_serve_traj_capacity(s->traj);
        cap = d->capacity > most ? d->capacity : most;
    }
    s->capacity = (uint32_t)(cap < CB_CROWD_MAX_CAPACITY ? cap : CB_CROWD_MAX_CAPACITY);
    return true;
}

/* The graph run at start: the one named, else the pack's first, else the default example. */
static bool choose_start_graph(cb_sim *s, const cb_sim_desc *d, char *why)
{
    const char *start = d->graph != NULL  ? d->graph
                        : d->pack != NULL ? cb_scene_pack_default_graph(d->pack)
                                          : CB_DEFAULT_EXAMPLE_GRAPH;
    if (start == NULL) {
        snprintf(why, 256, "the pack stores no graph: name a graph file (--graph)");
        return false;
    }
    snprintf(s->start_graph, sizeof s->start_graph, "%s", start);
    return true;
}

/* The thread pool, its per-thread clamp counts, and the embedded set when there is no pack. */
static bool create_pool_and_names(cb_sim *s, const cb_sim_desc *d, char *why)
{
    cb_error err = {0};
    cb_jobs_desc jd = {.thread_count = d->threads};
    if (cb_jobs_create(&jd, &s->jobs, &err) != CB_OK) {
        snprintf(why, 256, "thread pool: %.200s", err.message);
        return false;
    }
    s->clamped_by_thread = calloc(cb_jobs_thread_count(s->jobs), sizeof(uint32_t));
    if (s->clamped_by_thread == NULL) {
        snprintf(why, 256, "out of memory: the per-thread clamp counts");
        return false;
    }
    if (d->pack == NULL && cb_embedded_create(NULL, &s->names, &err) != CB_OK) {
        snprintf(why, 256, "embedded set: %.200s", err.message);
        return false;
    }
    return true;
}

/* The skeleton and the follower's gait clip; false when --gait cannot be met. */
static bool find_skeleton_and_gait(cb_sim *s, const cb_sim_desc *d, char *why)
{
    s->skeleton = d->pack != NULL ? cb_pack_skeleton(d->pack) : cb_embedded_skeleton(s->names);
    if (d->gait != NULL && (d->pack == NULL || d->traj == NULL)) {
        snprintf(why, 256,
                 "--gait names a pack's clip for the trajectories' follower: it needs "
                 "a pack and trajectories");
        return false;
    }
    s->gait = d->gait != NULL    ? cb_traj_host_find_gait(d->pack, d->gait, why, CB_SIM_WHY_BYTES)
              : s->names != NULL ? cb_embedded_find_clip(s->names, "walk_f")
                                 : NULL; /* a pack without --gait: no warp (trajectories.md) */
    return d->gait == NULL || s->gait != NULL;
}

/* The joints a frame carries, and the scale of their positions. */
static bool measure_skeleton(cb_sim *s, char *why)
{
    s->joints = (uint32_t)cb_skeleton_joint_count(s->skeleton);
    if (s->joints > CB_FRAME_MAX_JOINTS) {
        snprintf(why, 256, "the skeleton has %u joints; frames carry at most %d", s->joints,
                 CB_FRAME_MAX_JOINTS);
        return false;
    }
    s->position_scale = cb_frame_position_scale(skeleton_reach(s->skeleton));
    return true;
}

/* The boards and queues between the threads, sized for the capacity: all the memory the
 * per-frame path writes into. */
static bool create_boards(cb_sim *s, const cb_sim_desc *d, char *why)
{
    bool ok = cb_board_init(&s->hello, CB_SIM_HELLO_BYTES, d->headroom) &&
              cb_board_init(&s->details, CB_SIM_DETAILS_BYTES, d->headroom) &&
              cb_board_init(&s->stats, sizeof(cb_sim_stats), 0) &&
              cb_ring_init(&s->commands, sizeof(cb_sim_command), 256) &&
              cb_ring_init(&s->replies, sizeof(cb_sim_reply), 256);
    for (int e = 0; ok && e < CB_FRAME_ENCODING_COUNT; ++e) {
        ok = cb_board_init(&s->frames[e], cb_frame_bytes(e, s->capacity, s->joints), d->headroom);
        atomic_init(&s->want[e], 0);
    }
    if (!ok) {
        snprintf(why, 256, "out of memory for %u characters' frames", s->capacity);
    }
    return ok;
}

cb_sim *cb_sim_create(const cb_sim_desc *d, char why[CB_SIM_WHY_BYTES])
{
    cb_sim *s = calloc(1, sizeof *s);
    if (s == NULL) {
        snprintf(why, 256, "out of memory");
        return NULL;
    }
    s->desc = *d;
    s->time_scale = 1.0f;
    if (!size_crowd(s, d, why)) {
        free(s);
        return NULL;
    }
    /* In order: the first step that fails says why. */
    if (!choose_start_graph(s, d, why) || !create_pool_and_names(s, d, why) ||
        !find_skeleton_and_gait(s, d, why) || !measure_skeleton(s, why) ||
        !create_boards(s, d, why) || !load_scene(s, s->start_graph, d->characters, why)) {
        cb_sim_destroy(s);
        return NULL;
    }
    s->threads = cb_scene_threads(s->scene);
    s->window_start_ns = now_ns(CLOCK_MONOTONIC);
    return s;
}

void cb_sim_destroy(cb_sim *s)
{
    if (s == NULL) {
        return;
    }
    cb_sim_stop(s);
    cb_serve_traj_destroy(s->traj); /* its follower, before the crowd */
    cb_scene_destroy(s->scene);
    cb_jobs_destroy(s->jobs);
    free(s->clamped_by_thread);
    cb_embedded_destroy(s->names);
    free(s->override);
    for (int e = 0; e < CB_FRAME_ENCODING_COUNT; ++e) {
        cb_board_finish(&s->frames[e]);
    }
    cb_board_finish(&s->hello);
    cb_board_finish(&s->details);
    cb_board_finish(&s->stats);
    cb_ring_finish(&s->commands);
    cb_ring_finish(&s->replies);
    free(s);
}

/* ---- commands ----------------------------------------------------------------------------- */

/* Every id must name a live character; returns the first that does not, or 0. Ids listed twice
 * count as unknown the second time when `distinct` (removing one twice is an error). */
static uint64_t first_unknown(const cb_sim *s, const cb_ctl *c, bool distinct)
{
    for (uint32_t k = 0; k < c->character_count; ++k) {
        uint32_t kind, dense;
        cb_character ch = {c->characters[k]};
        if (cb_crowd_locate(s->crowd, ch, &kind, &dense) != CB_OK) {
            return c->characters[k];
        }
        for (uint32_t q = 0; distinct && q < k; ++q) {
            if (c->characters[q] == c->characters[k]) {
                return c->characters[k];
            }
        }
    }
    return 0;
}

static uint32_t dense_of(const cb_sim *s, uint64_t id)
{
    uint32_t kind, dense;
    return cb_crowd_locate(s->crowd, (cb_character){id}, &kind, &dense) == CB_OK ? dense
                                                                                 : UINT32_MAX;
}

/* Sets (or clears, v = NaN) a parameter's override for the command's characters. */
static void set_override(cb_sim *s, const cb_ctl *c, uint32_t p, float v)
{
    float *col = s->override + (size_t)p * s->capacity;
    if (c->all) {
        s->global[p] = v;
        for (uint32_t i = 0; i < s->capacity; ++i) {
            col[i] = NAN; /* "all" replaces every per-character value */
        }
        return;
    }
    for (uint32_t k = 0; k < c->character_count; ++k) {
        col[dense_of(s, c->characters[k])] = v;
    }
}

static void apply_set_param(cb_sim *s, const cb_sim_command *cmd)
{
    const cb_ctl *c = &cmd->ctl;
    uint32_t p;
    uint64_t bad;
    if (cb_graph_find_param(s->graph, c->name, &p) != CB_OK) {
        reply_error(s, cmd, CB_CTL_ERR_NOT_FOUND, "graph '%s' has no parameter '%s'", s->graph_name,
                    c->name);
        return;
    }
    if ((bad = first_unknown(s, c, false)) != 0) {
        reply_error(s, cmd, CB_CTL_ERR_NOT_FOUND, "no character %" PRIu64, bad);
        return;
    }
    set_override(s, c, p, c->clear ? NAN : c->value);
    reply_ok(s, cmd, "");
}

static void apply_steer(cb_sim *s, const cb_sim_command *cmd)
{
    const cb_ctl *c = &cmd->ctl;
    uint64_t bad;
    if (s->velocity[0] == UINT32_MAX) {
        reply_error(s, cmd, CB_CTL_ERR_REFUSED,
                    "graph '%s' has no velocity parameters (vx, vy or blend_0, blend_1)",
                    s->graph_name);
        return;
    }
    if ((bad = first_unknown(s, c, false)) != 0) {
        reply_error(s, cmd, CB_CTL_ERR_NOT_FOUND, "no character %" PRIu64, bad);
        return;
    }
    /* direction 0 is forward and +90 degrees the character's right: right = sin, fwd = cos;
     * the x parameter is to the left (+X, crowdblend/clip.h), so it takes -sin. */
    set_override(s, c, s->velocity[0], c->clear ? NAN : -c->speed_mps * sinf(c->direction_rad));
    set_override(s, c, s->velocity[1], c->clear ? NAN : c->speed_mps * cosf(c->direction_rad));
    reply_ok(s, cmd, "");
}

static void apply_add(cb_sim *s, const cb_sim_command *cmd)
{
    uint32_t have = cb_crowd_count(s->crowd, 0);
    if (cmd->ctl.count > s->capacity - have) {
        reply_error(s, cmd, CB_CTL_ERR_REFUSED, "room for %u more characters (capacity %u)",
                    s->capacity - have, s->capacity);
        return;
    }
    char extra[CB_SIM_REPLY_BYTES / 2];
    text t = {extra, sizeof extra, 0, false};
    put(&t, "\"added\":%u,\"ids\":[", cmd->ctl.count);
    for (uint32_t k = 0; k < cmd->ctl.count; ++k) {
        cb_character ch;
        if (cb_scene_add(s->scene, &ch) != CB_OK) {
            break;
        }
        if (k < ADD_IDS_REPLIED) {
            put(&t, "%s%" PRIu64, k ? "," : "", ch.id);
        }
    }
    put(&t, "]");
    s->dirty = true;
    reply_ok(s, cmd, t.full ? "" : extra);
}

static void apply_remove(cb_sim *s, const cb_sim_command *cmd)
{
    uint64_t bad = first_unknown(s, &cmd->ctl, true);
    if (bad != 0) {
        reply_error(s, cmd, CB_CTL_ERR_NOT_FOUND, "no character %" PRIu64 " (or listed twice)",
                    bad);
        return;
    }
    for (uint32_t k = 0; k < cmd->ctl.character_count; ++k) {
        uint32_t dense = dense_of(s, cmd->ctl.characters[k]);
        uint32_t last = cb_crowd_count(s->crowd, 0) - 1;
        if (cb_scene_remove(s->scene, (cb_character){cmd->ctl.characters[k]}) != CB_OK) {
            continue;
        }
        /* The overrides follow the crowd's swap-remove. */
        for (uint32_t p = 0; p < s->param_count; ++p) {
            float *col = s->override + (size_t)p * s->capacity;
            col[dense] = col[last];
            col[last] = NAN;
        }
    }
    s->dirty = true;
    reply_ok(s, cmd, "");
}

static void apply_switch(cb_sim *s, const cb_sim_command *cmd)
{
    char why[256];
    if (!known_graph(s, cmd->ctl.name)) {
        reply_error(s, cmd, CB_CTL_ERR_NOT_FOUND,
                    "unknown graph '%s' (the hello lists the graphs this server runs)",
                    cmd->ctl.name);
        return;
    }
    if (!load_scene(s, cmd->ctl.name, cb_crowd_count(s->crowd, 0), why)) {
        reply_error(s, cmd, CB_CTL_ERR_REFUSED, "%s", why);
        return;
    }
    reply_ok(s, cmd, "");
}

/* The joint a subscription follows by default: "head" (the embedded humanoid's), else the first
 * whose name contains "head" in any case (the Fox's "b_Head_05"), else joint 0. */
static uint32_t head_joint(const cb_skeleton *sk)
{
    uint32_t exact;
    if (cb_skeleton_find_joint(sk, "head", &exact) == CB_OK) {
        return exact;
    }
    for (uint32_t j = 0; j < cb_skeleton_joint_count(sk); ++j) {
        const char *name = cb_skeleton_joint_name(sk, j);
        for (size_t k = 0; name[k] != '\0'; ++k) {
            if (strncasecmp(name + k, "head", 4) == 0) {
                return j;
            }
        }
    }
    return 0;
}

static void apply_subscribe(cb_sim *s, const cb_sim_command *cmd)
{
    const cb_ctl *c = &cmd->ctl;
    uint64_t id = c->characters[0];
    uint32_t joint = 0;
    if (dense_of(s, id) == UINT32_MAX) {
        reply_error(s, cmd, CB_CTL_ERR_NOT_FOUND, "no character %" PRIu64, id);
        return;
    }
    if (c->name[0] != '\0') {
        if (cb_skeleton_find_joint(s->skeleton, c->name, &joint) != CB_OK) {
            reply_error(s, cmd, CB_CTL_ERR_NOT_FOUND, "no joint '%s'", c->name);
            return;
        }
    } else {
        joint = head_joint(s->skeleton);
    }
    subscription *sub = NULL;
    for (uint32_t k = 0; k < s->sub_count; ++k) {
        if (s->subs[k].slot == cmd->slot && s->subs[k].serial == cmd->serial &&
            s->subs[k].id == id) {
            sub = &s->subs[k];
        }
    }
    if (sub == NULL) {
        if (s->sub_count == CB_SIM_MAX_SUBSCRIPTIONS) {
            reply_error(s, cmd, CB_CTL_ERR_REFUSED, "%d subscriptions already",
                        CB_SIM_MAX_SUBSCRIPTIONS);
            return;
        }
        sub = &s->subs[s->sub_count++];
        memset(sub, 0, sizeof *sub);
    }
    sub->slot = cmd->slot;
    sub->serial = cmd->serial;
    sub->id = id;
    sub->joint = joint;
    s->dirty = true;
    reply_ok(s, cmd, "");
}

static void apply_unsubscribe(cb_sim *s, const cb_sim_command *cmd)
{
    uint32_t kept = 0;
    for (uint32_t k = 0; k < s->sub_count; ++k) {
        const subscription *sub = &s->subs[k];
        bool mine = sub->slot == cmd->slot && sub->serial == cmd->serial;
        if (!(mine && (cmd->ctl.all || sub->id == cmd->ctl.characters[0]))) {
            s->subs[kept++] = *sub;
        }
    }
    s->sub_count = kept;
    s->dirty = true; /* publish the details without them */
    reply_ok(s, cmd, "");
}

/* With --trajectories the file decides which characters exist and when, in real time: adding,
 * removing and a time scale other than 1 are refused. */
static bool refused_by_file(cb_sim *s, const cb_sim_command *cmd)
{
    cb_ctl_kind k = cmd->ctl.kind;
    if (s->traj == NULL || (k != CB_CTL_ADD && k != CB_CTL_REMOVE &&
                            (k != CB_CTL_TIME_SCALE || cmd->ctl.value == 1.0f))) {
        return false;
    }
    reply_error(s, cmd, CB_CTL_ERR_REFUSED,
                "the trajectory file decides the characters and plays in real time");
    return true;
}

static void apply(cb_sim *s, const cb_sim_command *cmd)
{
    if (refused_by_file(s, cmd)) {
        return;
    }
    switch (cmd->ctl.kind) {
    case CB_CTL_SET_PARAM:
        apply_set_param(s, cmd);
        return;
    case CB_CTL_STEER:
        apply_steer(s, cmd);
        return;
    case CB_CTL_ADD:
        apply_add(s, cmd);
        return;
    case CB_CTL_REMOVE:
        apply_remove(s, cmd);
        return;
    case CB_CTL_PAUSE:
    case CB_CTL_RESUME:
        s->paused = cmd->ctl.kind == CB_CTL_PAUSE;
        s->dirty = true;
        reply_ok(s, cmd, "");
        return;
    case CB_CTL_STEP:
        if (!s->paused) {
            reply_error(s, cmd, CB_CTL_ERR_REFUSED, "step works while paused");
            return;
        }
        s->steps_pending += cmd->ctl.count;
        reply_ok(s, cmd, "");
        return;
    case CB_CTL_TIME_SCALE:
        s->time_scale = cmd->ctl.value;
        reply_ok(s, cmd, "");
        return;
    case CB_CTL_SWITCH_GRAPH:
        apply_switch(s, cmd);
        return;
    case CB_CTL_SUBSCRIBE:
        apply_subscribe(s, cmd);
        return;
    case CB_CTL_UNSUBSCRIBE:
        apply_unsubscribe(s, cmd);
        return;
    case CB_CTL_ENCODING: /* the network thread's business; nothing to do here */
    case CB_CTL_KIND_COUNT:
        reply_ok(s, cmd, "");
        return;
    }
}

/* ---- a frame ------------------------------------------------------------------------------ */

/* Host overrides on top of what the wandering host wrote: per character, else for all. */
static void apply_overrides(cb_sim *s)
{
    uint32_t n = cb_crowd_count(s->crowd, 0);
    for (uint32_t p = 0; p < s->param_count; ++p) {
        float *col = cb_crowd_param_column(s->crowd, 0, p);
        const float *ov = s->override + (size_t)p * s->capacity;
        float all = s->global[p];
        for (uint32_t i = 0; i < n; ++i) {
            float v = ov[i] == ov[i] ? ov[i] : all;
            if (v == v) {
                col[i] = v;
            }
        }
    }
}

/* Where a character's root is: on its trajectory, or where the wandering host put it. */
static void root_of(const cb_sim *s, uint32_t dense, float pos[3], float *yaw)
{
    if (s->traj != NULL) {
        cb_serve_traj_root(s->traj, dense, pos, yaw);
    } else {
        cb_scene_root(s->scene, dense, pos, yaw);
    }
}

typedef struct encode_job {
    cb_sim *sim;
    cb_frame_encoding encoding;
    uint8_t *records;
} encode_job;

/* Characters [begin, end) into their records: disjoint outputs, so any split is the same
 * bytes; clamps are counted per thread and summed after. */
static void encode_range(void *user, size_t begin, size_t end, uint32_t thread)
{
    const encode_job *job = user;
    cb_sim *s = job->sim;
    size_t rec = cb_frame_record_bytes(job->encoding, s->joints);
    for (size_t i = begin; i < end; ++i) {
        float pos[3], yaw;
        root_of(s, (uint32_t)i, pos, &yaw);
        float rot[4] = {0.0f, sinf(0.5f * yaw), 0.0f, cosf(0.5f * yaw)};
        s->clamped_by_thread[thread] += cb_frame_encode_character(
            job->encoding, s->position_scale, cb_crowd_character_at(s->crowd, 0, (uint32_t)i).id,
            pos, rot, cb_crowd_matrices(s->crowd, 0, (uint32_t)i), s->joints,
            job->records + i * rec);
    }
}

static void encode(cb_sim *s, cb_frame_encoding e, uint64_t wall_us)
{
    uint64_t t0 = now_ns(CLOCK_MONOTONIC);
    uint8_t *out = cb_board_back(&s->frames[e]);
    uint32_t n = cb_crowd_count(s->crowd, 0);
    cb_frame_header h = {
        .encoding = e,
        .frame = s->frame,
        .sim_time_s = s->sim_time_s,
        .wall_us = wall_us,
        .characters = n,
        .joints = (uint16_t)s->joints,
        .flags = s->paused ? CB_FRAME_FLAG_PAUSED : 0,
        .position_scale = s->position_scale,
        .epoch = s->epoch,
        .step_us = s->step_us,
    };
    cb_frame_write_header(&h, out);
    /* On the crowd's pool, which is idle between updates: 64 characters a chunk. */
    encode_job job = {s, e, out + CB_FRAME_HEADER_BYTES};
    cb_jobs_parallel_for(s->jobs, n, 64, encode_range, &job);
    for (uint32_t k = 0; k < cb_jobs_thread_count(s->jobs); ++k) {
        s->clamped += s->clamped_by_thread[k];
        s->clamped_by_thread[k] = 0;
    }
    cb_board_publish(&s->frames[e], cb_frame_bytes(e, n, s->joints), s->frame);
    s->window_encode_ns[e] += now_ns(CLOCK_MONOTONIC) - t0;
    s->window_encoded[e] += n;
}

static const char *marker_name(const cb_sim *s, uint32_t hash)
{
    for (size_t k = 0; k < clip_count(s); ++k) {
        const cb_clip *clip = clip_at(s, k);
        uint32_t at;
        cb_clip_marker m;
        if (cb_clip_find_marker(clip, hash, 0, &at) == CB_OK &&
            cb_clip_query_marker(clip, at, &m) == CB_OK) {
            return m.name;
        }
    }
    return "?";
}

/* Remembers the subscribed characters' events of this step. */
static void track_subscriptions(cb_sim *s)
{
    uint32_t kept = 0;
    for (uint32_t k = 0; k < s->sub_count; ++k) {
        subscription *sub = &s->subs[k];
        uint32_t dense = dense_of(s, sub->id);
        if (dense == UINT32_MAX) {
            continue; /* removed: the subscription ends with it */
        }
        uint32_t n = 0;
        const cb_graph_event *ev = cb_crowd_events(s->crowd, 0, dense, &n);
        for (uint32_t q = 0; q < n; ++q) {
            sub->events[sub->event_count++ % CB_SIM_EVENT_HISTORY] =
                (event_entry){s->frame, ev[q].marker_hash, ev[q].node, ev[q].weight};
        }
        s->subs[kept++] = *sub;
    }
    s->sub_count = kept;
}

/* A machine's state and its running transition, exactly as the crowd keeps it
 * (cb_crowd_query_transition): {"state", "next", "transition": null or its times}. */
static void put_machine(const cb_sim *s, text *t, uint32_t machine, uint32_t dense)
{
    cb_crowd_transition tr;
    if (cb_crowd_query_transition(s->crowd, 0, machine, dense, &tr, NULL) != CB_OK) {
        put(t, "{\"state\":\"?\",\"next\":null,\"transition\":null}");
        return;
    }
    put(t, "{\"state\":");
    put_string(t, cb_graph_state_name(s->graph, machine, tr.from));
    if (!tr.active) {
        put(t, ",\"next\":null,\"transition\":null}");
        return;
    }
    put(t, ",\"next\":");
    put_string(t, cb_graph_state_name(s->graph, machine, tr.to));
    put(t, ",\"transition\":{\"elapsed_s\":");
    put_number(t, tr.elapsed_s);
    put(t, ",\"duration_s\":");
    put_number(t, tr.duration_s);
    put(t, ",\"progress\":");
    put_number(t, tr.progress);
    put(t, ",\"blend\":\"%s\"}}",
        tr.blend == CB_TRANSITION_INERTIALIZE ? "inertialize" : "crossfade");
}

/* The character's root, and its subscribed joint in world space, computed here in floats
 * from the crowd's own matrix: the reference the browser test compares its decoded, quantized
 * pose with. */
static void put_root_and_joint(cb_sim *s, text *t, const subscription *sub, uint32_t dense)
{
    float pos[3], yaw;
    root_of(s, dense, pos, &yaw);
    const float *m = cb_crowd_matrices(s->crowd, 0, dense) + 16 * (size_t)sub->joint;
    float c = cosf(yaw), sn = sinf(yaw);
    float wx = pos[0] + c * m[12] + sn * m[14], wy = pos[1] + m[13];
    float wz = pos[2] - sn * m[12] + c * m[14];
    put(t, "\"root\":[");
    put_number(t, pos[0]);
    put(t, ",");
    put_number(t, pos[1]);
    put(t, ",");
    put_number(t, pos[2]);
    put(t, "],\"yaw\":");
    put_number(t, yaw);
    put(t, ",\"joint\":{\"index\":%u,\"name\":", sub->joint);
    put_string(t, cb_skeleton_joint_name(s->skeleton, sub->joint));
    put(t, ",\"world\":[");
    put_number(t, wx);
    put(t, ",");
    put_number(t, wy);
    put(t, ",");
    put_number(t, wz);
    put(t, "]}");
}

/* "params": every parameter's value; "machines": every state machine's state. */
static void put_params_and_machines(cb_sim *s, text *t, uint32_t dense)
{
    put(t, ",\"params\":{");
    for (uint32_t p = 0; p < s->param_count; ++p) {
        put(t, "%s", p ? "," : "");
        put_string(t, cb_graph_param_name(s->graph, p));
        put(t, ":");
        put_number(t, cb_crowd_param_column(s->crowd, 0, p)[dense]);
    }
    put(t, "},\"machines\":[");
    for (uint32_t mi = 0; mi < cb_graph_state_machine_count(s->graph); ++mi) {
        put(t, "%s", mi ? "," : "");
        put_machine(s, t, mi, dense);
    }
    put(t, "]");
}

/* "weights": [clip node, weight] for each clip above 1e-4. */
static void put_weights(cb_sim *s, text *t, uint32_t dense)
{
    put(t, ",\"weights\":[");
    size_t stride = 0;
    const float *w = cb_crowd_weights(s->crowd, 0, &stride);
    bool first = true;
    for (uint32_t cl = 0; w != NULL && cl < cb_graph_clip_count(s->graph); ++cl) {
        float v = w[cl * stride + dense];
        if (v > 1e-4f) {
            put(t, "%s[", first ? "" : ",");
            put_string(t, cb_graph_node_name(s->graph, cb_graph_clip_node(s->graph, cl)));
            put(t, ",");
            put_number(t, v);
            put(t, "]");
            first = false;
        }
    }
    put(t, "]");
}

/* "events": the subscription's last CB_SIM_EVENT_HISTORY events, numbered. */
static void put_events(cb_sim *s, text *t, const subscription *sub)
{
    put(t, ",\"events\":[");
    uint32_t total = sub->event_count;
    uint32_t from = total > CB_SIM_EVENT_HISTORY ? total - CB_SIM_EVENT_HISTORY : 0;
    for (uint32_t q = from; q < total; ++q) {
        const event_entry *e = &sub->events[q % CB_SIM_EVENT_HISTORY];
        put(t, "%s{\"n\":%u,\"frame\":%llu,\"marker\":", q > from ? "," : "", q,
            (unsigned long long)e->frame);
        put_string(t, marker_name(s, e->marker_hash));
        put(t, ",\"clip\":");
        put_string(t, cb_graph_node_name(s->graph, e->node));
        put(t, ",\"weight\":");
        put_number(t, e->weight);
        put(t, "}");
    }
    put(t, "]");
}

static void put_character_details(cb_sim *s, text *t, const subscription *sub, uint64_t mask)
{
    uint32_t dense = dense_of(s, sub->id);
    put(t, "{\"id\":%" PRIu64 ",\"clients\":\"%llx\",", sub->id, (unsigned long long)mask);
    put_root_and_joint(s, t, sub, dense);
    put_params_and_machines(s, t, dense);
    put_weights(s, t, dense);
    put_events(s, t, sub);
    put(t, "}");
}

/* One details message for all subscribed characters; the board's tag says which client slots
 * subscribed to any, so that only they are sent it. */
static void publish_details(cb_sim *s)
{
    text t = {(char *)cb_board_back(&s->details), s->details.capacity, 0, false};
    uint64_t all = 0;
    put(&t, "{\"type\":\"details\",\"epoch\":%u,\"frame\":%llu,\"time\":", s->epoch,
        (unsigned long long)s->frame);
    put_number(&t, s->sim_time_s);
    put(&t, ",\"characters\":[");
    bool first = true;
    for (uint32_t k = 0; k < s->sub_count; ++k) {
        bool seen = false;
        uint64_t mask = 0;
        for (uint32_t q = 0; q < s->sub_count; ++q) {
            seen |= q < k && s->subs[q].id == s->subs[k].id;
            mask |= s->subs[q].id == s->subs[k].id ? 1ull << s->subs[q].slot : 0;
        }
        if (seen) {
            continue;
        }
        size_t mark = t.len;
        if (!first) {
            put(&t, ",");
        }
        put_character_details(s, &t, &s->subs[k], mask);
        if (t.full || t.cap - t.len < 64) { /* keep room to close the message */
            t.len = mark;
            t.full = false;
            break;
        }
        first = false;
        all |= mask;
    }
    put(&t, "]}");
    cb_board_publish(&s->details, t.len, all);
}

static void publish_stats(cb_sim *s, uint64_t now)
{
    cb_sim_stats *st = &s->last;
    double window_s = (double)(now - s->window_start_ns) / 1e9;
    if (window_s >= 1.0) {
        cb_crowd_stats cs = cb_crowd_query_stats(s->crowd);
        double frames = s->window_frames ? (double)s->window_frames : 1.0;
        st->tick_hz = (double)s->window_ticks / window_s;
        st->step_ms_mean = (double)s->window_step_ns / 1e6 / frames;
        st->step_ms_max = (double)s->window_step_max_ns / 1e6;
        st->stage_count = _CB_CROWD_STAGE_COUNT;
        for (int k = 0; k < _CB_CROWD_STAGE_COUNT && k < 8; ++k) {
            st->stage_ms[k] = (double)(cs.stage_ns[k] - s->window_crowd.stage_ns[k]) / 1e6 /
                              frames / (s->threads ? s->threads : 1);
        }
        for (int e = 0; e < CB_FRAME_ENCODING_COUNT; ++e) {
            st->encode_ns_per_character[e] =
                s->window_encoded[e] ? (double)s->window_encode_ns[e] / s->window_encoded[e] : 0.0;
            s->window_encode_ns[e] = s->window_encoded[e] = 0;
        }
        s->window_crowd = cs;
        s->window_start_ns = now;
        s->window_ticks = s->window_step_ns = s->window_step_max_ns = s->window_frames = 0;
    }
    st->frame = s->frame;
    st->ticks = s->ticks;
    st->late_ticks = s->late_ticks;
    st->clamped_positions = s->clamped;
    st->sim_time_s = s->sim_time_s;
    st->characters = cb_crowd_count(s->crowd, 0);
    st->capacity = s->capacity;
    st->epoch = s->epoch;
    st->paused = s->paused;
    st->time_scale = s->time_scale;
    st->threads = s->threads;
    for (int e = 0; e < CB_FRAME_ENCODING_COUNT; ++e) {
        st->bytes_per_frame[e] = cb_frame_bytes(e, st->characters, s->joints);
    }
    memcpy(cb_board_back(&s->stats), st, sizeof *st);
    cb_board_publish(&s->stats, sizeof *st, 0);
}

void cb_sim_tick(cb_sim *s)
{
    cb_sim_command cmd;
    while (cb_ring_pop(&s->commands, &cmd)) {
        apply(s, &cmd);
    }
    uint64_t t0 = now_ns(CLOCK_MONOTONIC);
    s->ticks++;
    s->window_ticks++;
    bool step = !s->paused || s->steps_pending > 0;
    if (step) {
        if (s->paused) {
            s->steps_pending--;
        }
        float dt = s->time_scale / (float)CB_SIM_HZ;
        if (s->traj != NULL) {
            cb_serve_traj_step(s->traj, s->frame + 1, dt);
        } else {
            cb_scene_host_step(s->scene, dt);
        }
        apply_overrides(s);
        cb_crowd_update(s->crowd, dt);
        uint64_t step_ns = now_ns(CLOCK_MONOTONIC) - t0;
        s->step_us = (uint32_t)(step_ns / 1000);
        s->window_step_ns += step_ns;
        s->window_step_max_ns = step_ns > s->window_step_max_ns ? step_ns : s->window_step_max_ns;
        s->window_frames++;
        s->frame++;
        s->sim_time_s += dt;
        track_subscriptions(s);
    }
    if (step || s->dirty) {
        uint64_t wall_us = now_ns(CLOCK_REALTIME) / 1000;
        for (int e = 0; e < CB_FRAME_ENCODING_COUNT; ++e) {
            if (atomic_load_explicit(&s->want[e], memory_order_relaxed) > 0) {
                encode(s, (cb_frame_encoding)e, wall_us);
            }
        }
        if (s->sub_count > 0 || s->dirty) {
            publish_details(s);
        }
        s->dirty = false;
    }
    publish_stats(s, now_ns(CLOCK_MONOTONIC));
}

/* ---- the thread --------------------------------------------------------------------------- */

static void *run(void *arg)
{
    cb_sim *s = arg;
    const uint64_t period = 1000000000u / CB_SIM_HZ;
    uint64_t next = now_ns(CLOCK_MONOTONIC);
    while (atomic_load(&s->running)) {
        next += period;
        cb_sim_tick(s);
        if (s->notify != NULL) {
            s->notify(s->user);
        }
        uint64_t now = now_ns(CLOCK_MONOTONIC);
        if (now > next) {
            /* Late: count it and restart the schedule from now rather than run a burst of
             * catch-up steps, which would only make the next ones late too. */
            s->late_ticks++;
            next = now;
            continue;
        }
        struct timespec ts = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
        }
    }
    return NULL;
}

bool cb_sim_start(cb_sim *s, void (*notify)(void *), void *user)
{
    s->notify = notify;
    s->user = user;
    atomic_store(&s->running, true);
    s->started = pthread_create(&s->thread, NULL, run, s) == 0;
    return s->started;
}

void cb_sim_stop(cb_sim *s)
{
    if (s->started) {
        atomic_store(&s->running, false);
        pthread_join(s->thread, NULL);
        s->started = false;
    }
}

bool cb_sim_post(cb_sim *s, const cb_sim_command *c)
{
    return cb_ring_push(&s->commands, c);
}

bool cb_sim_next_reply(cb_sim *s, cb_sim_reply *out)
{
    return cb_ring_pop(&s->replies, out);
}

void cb_sim_want(cb_sim *s, cb_frame_encoding e, int delta)
{
    atomic_fetch_add(&s->want[e], delta);
}

cb_board *cb_sim_frames(cb_sim *s, cb_frame_encoding e)
{
    return &s->frames[e];
}

cb_board *cb_sim_hello(cb_sim *s)
{
    return &s->hello;
}

cb_board *cb_sim_details(cb_sim *s)
{
    return &s->details;
}

cb_board *cb_sim_stats_board(cb_sim *s)
{
    return &s->stats;
}

cb_crowd *cb_sim_crowd(cb_sim *s)
{
    return s->crowd;
}
