/* One trajectory file through a crowd: the trajectory host (traj/host.h) adds and removes the
 * agents as the file says and places them on their interpolated trajectories
 * (crowdblend/follow.h); here every frame is measured (measure.h) and optionally recorded for
 * glTF (export/gltf.h). docs/trajectories.md describes the whole. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/animate.h"
#include "cli/cli.h"
#include "cli/example_graphs.h"
#include "export/gltf.h"
#include "traj/host.h"

static const char *const locomotion_names[17] = {
    "idle",  "walk_f", "walk_fl", "walk_l", "walk_bl", "walk_b", "walk_br", "walk_r", "walk_fr",
    "run_f", "run_fl", "run_l",   "run_bl", "run_b",   "run_br", "run_r",   "run_fr",
};

static const float PI_F = 3.14159265358979f;

/* ---- the clips' own pops ------------------------------------------------------------------ */

enum { MAX_REFERENCE_CLIPS = 256 };

/* The clips of the pops reference: the blend-space crowd's, or the pack's looping ones (the
 * crowd wraps a DIRECT blend's phases; the first 256). */
static uint32_t reference_clips(const cb_animate_assets *a, const cb_clip **clips)
{
    if (a->pack == NULL) {
        memcpy(clips, a->locomotion, sizeof a->locomotion);
        return 17;
    }
    uint32_t n = 0;
    for (size_t k = 0; k < cb_pack_clip_count(a->pack) && n < MAX_REFERENCE_CLIPS; ++k) {
        const cb_clip *c = cb_pack_clip(a->pack, k);
        if (cb_clip_is_looping(c)) {
            clips[n++] = c;
        }
    }
    return n;
}

/* A crowd of one character per clip on a DIRECT blend of the clips (its graph in *graph). */
static bool reference_crowd(const cb_skeleton *sk, const cb_clip *const *clips, uint32_t count,
                            cb_graph **graph, cb_crowd **crowd)
{
    cb_graph_blend_desc bd = {.skeleton = sk,
                              .solver = {.kind = CB_SOLVER_KIND_DIRECT},
                              .clips = clips,
                              .clip_count = count};
    cb_error err = {0};
    if (cb_graph_create_blend(&bd, graph, &err) != CB_OK) {
        fprintf(stderr, "crowdblend animate: clip reference graph: %s\n", err.message);
        return false;
    }
    const cb_graph *graphs[1] = {*graph};
    cb_crowd_desc cd = {
        .skeleton = sk,
        .capacity = count,
        .graphs = graphs,
        .graph_count = 1,
        .thread_count = 1,
    };
    if (cb_crowd_create(&cd, crowd, &err) != CB_OK) {
        fprintf(stderr, "crowdblend animate: clip reference crowd: %s\n", err.message);
        cb_graph_destroy(*graph);
        return false;
    }
    return true;
}

/* Character c plays clip c alone (weight 1 on the DIRECT blend's parameter "blend_<c>",
 * crowdblend/graph.h), each measured in its own slot of m. */
static void play_each_alone(cb_crowd *crowd, cb_measure *m, uint32_t count)
{
    for (uint32_t c = 0; c < count; ++c) {
        cb_character ch;
        cb_crowd_add(crowd, 0, 0.0f, &ch);
        char name[32];
        snprintf(name, sizeof name, CB_GRAPH_BLEND_PARAM_PREFIX "%u", c);
        uint32_t p = 0;
        cb_crowd_find_param(crowd, 0, name, &p);
        cb_crowd_param_column(crowd, 0, p)[c] = 1.0f;
        cb_measure_slot_take(m);
    }
}

/* 4 s of the crowd, each character's root moved by its own root motion, every frame measured. */
static void run_alone(cb_crowd *crowd, cb_measure *m, uint32_t count, double rate_hz)
{
    float yaw[MAX_REFERENCE_CLIPS] = {0}, pos[MAX_REFERENCE_CLIPS][3] = {{0}};
    uint32_t frames = (uint32_t)(4.0 * rate_hz);
    for (uint32_t k = 0; k < frames; ++k) {
        cb_crowd_update(crowd, (float)(1.0 / rate_hz));
        const cb_root_delta *rm = cb_crowd_root_motion(crowd, 0);
        for (uint32_t c = 0; c < count; ++c) {
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
}

/* Each clip played alone (a DIRECT blend with weight 1 on it), its root moved by its own root
 * motion, for 4 s: the second differences a clean animation has by itself (-1: no clip loops). */
static bool clip_pops(cb_animate_assets *a, double rate_hz)
{
    const cb_skeleton *sk = a->skeleton;
    const cb_clip *clips[MAX_REFERENCE_CLIPS];
    uint32_t count = reference_clips(a, clips);
    if (count == 0) {
        a->clips_pops_p999 = -1.0;
        return true;
    }
    cb_graph *graph = NULL;
    cb_crowd *crowd = NULL;
    if (!reference_crowd(sk, clips, count, &graph, &crowd)) {
        return false;
    }
    cb_measure_desc md = {.skeleton = sk,
                          .ball_joint = {a->feet[0], a->feet[1]},
                          .dt_s = (float)(1.0 / rate_hz),
                          .slots = count};
    cb_measure *m = cb_measure_create(&md);
    if (m != NULL) {
        play_each_alone(crowd, m, count);
        run_alone(crowd, m, count, rate_hz);
        a->clips_pops_p999 = cb_stat_quantile(cb_measure_query(m).pops, 0.999);
    }
    cb_measure_destroy(m);
    cb_crowd_destroy(crowd);
    cb_graph_destroy(graph); /* after the crowd that runs it */
    return m != NULL;
}

/* ---- the assets --------------------------------------------------------------------------- */

static bool load_embedded(cb_animate_assets *a, float clip_rate_hz)
{
    cb_error err = {0};
    cb_embedded_desc ed = {.sample_rate_hz = clip_rate_hz};
    if (cb_embedded_create(&ed, &a->set, &err) != CB_OK) {
        fprintf(stderr, "crowdblend animate: embedded set: %s\n", err.message);
        return false;
    }
    a->skeleton = cb_embedded_skeleton(a->set);
    for (int k = 0; k < 17; ++k) {
        a->locomotion[k] = cb_embedded_find_clip(a->set, locomotion_names[k]);
    }
    a->gait = a->locomotion[1]; /* walk_f: every walk clip moves at its speed */
    return true;
}

/* The pack's clip `name` for the follower's playback-rate warp (--gait; the rule and its
 * messages are the trajectory host's, shared with `crowdblend serve --gait`). */
static bool find_gait(cb_animate_assets *a, const char *name)
{
    char why[1024]; /* an unknown name lists the pack's clips */
    a->gait = cb_traj_host_find_gait(a->pack, name, why, sizeof why);
    if (a->gait == NULL) {
        fprintf(stderr, "crowdblend animate: %s\n", why);
        return false;
    }
    return true;
}

static bool load_pack(cb_animate_assets *a, const char *path)
{
    cb_error err = {0};
    if (cb_pack_load_file(path, NULL, &a->pack, &err) != CB_OK) {
        fprintf(stderr, "crowdblend animate: --pack: %s\n", err.message);
        return false;
    }
    if (cb_pack_clip_count(a->pack) == 0) {
        fprintf(stderr, "crowdblend animate: --pack: %s holds no clip\n", path);
        return false;
    }
    a->skeleton = cb_pack_skeleton(a->pack);
    return true;
}

/* Whether `name` says it is a joint of the foot on one side (docs/trajectories.md, "The skate's
 * joints"): it names the side ("left"/"right" anywhere, or a "_l"/".l"/"_r"/".r" ending) and
 * the foot ("foot", "toe" or "ball"), case-insensitively. */
static bool foot_name(const char *name, int side)
{
    char low[CB_JOINT_NAME_MAX + 1];
    size_t n = strlen(name);
    n = n < CB_JOINT_NAME_MAX ? n : CB_JOINT_NAME_MAX;
    for (size_t k = 0; k < n; ++k) {
        low[k] = (char)(name[k] >= 'A' && name[k] <= 'Z' ? name[k] - 'A' + 'a' : name[k]);
    }
    low[n] = '\0';
    const char letter = side == 0 ? 'l' : 'r';
    bool sided = strstr(low, side == 0 ? "left" : "right") != NULL ||
                 (n >= 2 && low[n - 1] == letter && (low[n - 2] == '_' || low[n - 2] == '.'));
    return sided && (strstr(low, "foot") != NULL || strstr(low, "toe") != NULL ||
                     strstr(low, "ball") != NULL);
}

/* Whether joint a is joint d or one of its ancestors. */
static bool ancestor_or_self(const int32_t *parents, uint32_t a, uint32_t d)
{
    for (int32_t j = (int32_t)d; j >= 0; j = parents[j]) {
        if ((uint32_t)j == a) {
            return true;
        }
    }
    return false;
}

/* The foot of one side by name: the joints foot_name() accepts must lie on one chain, and the
 * deepest of them (the end of the foot: the Fox's b_LeftFoot02_018) is the one measured.
 * Returns false when none matches or they branch (a quadruped naming four feet). */
static bool foot_by_name(const cb_skeleton *sk, int side, uint32_t *out)
{
    const int32_t *parents = cb_skeleton_parents(sk);
    bool found = false;
    for (uint32_t j = 0; j < cb_skeleton_joint_count(sk); ++j) {
        if (!foot_name(cb_skeleton_joint_name(sk, j), side)) {
            continue;
        }
        if (found && !ancestor_or_self(parents, *out, j) && !ancestor_or_self(parents, j, *out)) {
            return false;
        }
        if (!found || ancestor_or_self(parents, *out, j)) {
            *out = j;
        }
        found = true;
    }
    return found;
}

/* The feet by name patterns, when both sides are found and differ. */
static bool feet_by_name(cb_animate_assets *a)
{
    uint32_t f[2];
    if (!foot_by_name(a->skeleton, 0, &f[0]) || !foot_by_name(a->skeleton, 1, &f[1]) ||
        f[0] == f[1]) {
        return false;
    }
    for (int k = 0; k < 2; ++k) {
        a->feet[k] = f[k];
        snprintf(a->feet_names[k], sizeof a->feet_names[k], "%s",
                 cb_skeleton_joint_name(a->skeleton, f[k]));
    }
    a->feet_from = "names";
    return true;
}

/* The skate's joints: --feet "LEFT,RIGHT", else "ball_l", "ball_r" when the skeleton has them
 * (the embedded humanoid always does), else the feet the joint names say (feet_by_name);
 * unknown ones leave the skate unmeasured. */
static bool find_feet(cb_animate_assets *a, const char *feet)
{
    char(*names)[CB_JOINT_NAME_MAX + 1] = a->feet_names;
    const char *comma = feet != NULL ? strchr(feet, ',') : NULL;
    if (feet != NULL) {
        size_t left = (size_t)(comma != NULL ? comma - feet : 0);
        if (comma == NULL || left == 0 || left > CB_JOINT_NAME_MAX ||
            strlen(comma + 1) > CB_JOINT_NAME_MAX || strchr(comma + 1, ',') != NULL) {
            fprintf(stderr, "crowdblend animate: --feet takes two joint names: LEFT,RIGHT\n");
            return false;
        }
        memcpy(names[0], feet, left);
        names[0][left] = '\0';
        memcpy(names[1], comma + 1, strlen(comma + 1) + 1);
    } else {
        memcpy(names[0], "ball_l", sizeof "ball_l");
        memcpy(names[1], "ball_r", sizeof "ball_r");
    }
    a->feet_from = feet != NULL ? "--feet" : "ball_l,ball_r";
    for (int k = 0; k < 2; ++k) {
        if (cb_skeleton_find_joint(a->skeleton, names[k], &a->feet[k]) == CB_OK) {
            continue;
        }
        if (feet != NULL) {
            fprintf(stderr, "crowdblend animate: --feet: the skeleton has no joint '%s'\n",
                    names[k]);
            return false;
        }
        if (feet_by_name(a)) {
            return true;
        }
        a->feet[0] = a->feet[1] = 0;
        a->feet_from = NULL;
        a->feet_missing = "the skeleton has neither ball_l, ball_r nor one joint chain per side "
                          "named as a foot (left/right with foot, toe or ball): name its feet "
                          "with --feet LEFT,RIGHT";
        return true;
    }
    return true;
}

/* Whether any of the pack's clips marks a foot's plants (foot_plant_l and the like): without
 * such markers no frame counts as planted, and the skate would read as none of none. */
static bool pack_marks_plants(const cb_pack *pack)
{
    for (uint32_t c = 0; c < cb_pack_clip_count(pack); ++c) {
        cb_clip_feet feet;
        /* (false when a foot has more markers than the rule keeps: the count is then the
         * most, so markers there are) */
        cb_clip_feet_init(&feet, cb_pack_clip(pack, c));
        if (feet.count[CB_FOOT_LEFT] > 0 || feet.count[CB_FOOT_RIGHT] > 0) {
            return true;
        }
    }
    return false;
}

bool cb_animate_assets_init(cb_animate_assets *a, const cb_animate_source *src, double rate_hz)
{
    memset(a, 0, sizeof *a);
    bool ok = src->pack != NULL ? load_pack(a, src->pack) : load_embedded(a, src->clip_rate_hz);
    ok = ok && (src->gait == NULL || find_gait(a, src->gait));
    ok = ok && find_feet(a, src->feet) && clip_pops(a, rate_hz);
    if (ok && a->pack != NULL && !pack_marks_plants(a->pack)) {
        a->plants_missing = "the pack's clips have no foot_plant_l/_r markers, so no frame "
                            "counts as planted: crowdblend import --detect-foot-plants LEFT,RIGHT "
                            "adds them";
    }
    if (!ok) {
        cb_animate_assets_finish(a);
    }
    return ok;
}

void cb_animate_assets_finish(cb_animate_assets *a)
{
    cb_embedded_destroy(a->set);
    cb_pack_destroy(a->pack);
    a->set = NULL;
    a->pack = NULL;
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
    cb_traj_host *host; /* the agents in and out, and their follower */
    cb_follow *follow;  /* the host's */
    cb_measure *measure;
    cb_gltf *gltf;
    const cb_clip *slot_clips[256];
    uint32_t slot_count;
    /* per agent */
    uint32_t *measure_slot;
    float *prev_yaw;
    float *rate;            /* host warp: this frame's playback rate */
    float *anim_speed;      /* host warp: the blend's own root speed last frame, m/s */
    uint32_t *export_first; /* index of the first exported frame on the export grid */
    uint32_t *export_agent; /* index in the export, UINT32_MAX when not exported */
    float *weights;         /* slot_count scratch */
    float *times;
    uint32_t export_step;
    uint32_t export_agents;  /* agents on the export grid */
    uint32_t export_frames;  /* frames of the export grid */
    float stand;             /* the follow path's stand speed */
    bool warp, lock, orient; /* the follow features used */
    bool stride;
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

/* Which clip each clip slot of the graph plays (the skate measurement's slots). */
static bool map_graph_slots(run *r)
{
    r->slot_count = cb_graph_clip_count(r->graph);
    if (r->slot_count > 256) {
        fprintf(stderr, "crowdblend animate: more than 256 clip nodes\n");
        return false;
    }
    for (uint32_t s = 0; s < r->slot_count; ++s) {
        r->slot_clips[s] = cb_graph_clip(r->graph, s);
    }
    return true;
}

/* A graph text stored in the pack, by name (NULL: none of that name). */
static const char *pack_graph_text(const cb_pack *pack, const char *name, size_t *length)
{
    for (size_t i = 0; pack != NULL && i < cb_pack_graph_count(pack); ++i) {
        cb_pack_graph g = cb_pack_query_graph(pack, i);
        if (strcmp(g.name, name) == 0) {
            *length = g.length;
            return g.text;
        }
    }
    return NULL;
}

/* The graph over the pack's clips: one stored in it by name, else a JSON file. */
static bool load_pack_graph(run *r)
{
    const cb_pack *pack = r->assets->pack;
    cb_graph_json_desc jd = {.skeleton = r->skeleton,
                             .clips = cb_pack_clips(pack),
                             .clip_count = cb_pack_clip_count(pack),
                             .source_name = r->o->graph};
    size_t length = 0;
    const char *text = pack_graph_text(pack, r->o->graph, &length);
    cb_error err = {0};
    cb_result res = text != NULL ? cb_graph_load_json(text, length, &jd, &r->graph, &err)
                                 : cb_graph_load_json_file(r->o->graph, &jd, &r->graph, &err);
    if (res != CB_OK) {
        fprintf(stderr, "crowdblend animate: graph: %s\n", err.message);
        return false;
    }
    return map_graph_slots(r);
}

static bool load_graph(run *r)
{
    if (r->assets->pack != NULL) {
        return load_pack_graph(r);
    }
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
    ok = ok && map_graph_slots(r);
    free(text);
    return ok;
}

/* Says on stderr which feature asked for on the command line the crowd's graph cannot run
 * (it has no parameter for it), so that an option does not go unheeded without a word. */
static void note_features_off(const run *r)
{
    const char *graph = r->o->graph != NULL ? r->o->graph : "the blend-space crowd";
    if (r->o->orient_rad > 0.0f && !r->orient) {
        fprintf(stderr,
                "crowdblend animate: note: --orientation-warp is off: %s has no \"warp\" "
                "parameter (locomotion_follow has)\n",
                graph);
    }
    if (r->o->stride && !r->stride) {
        fprintf(stderr, "crowdblend animate: note: --stride-warp is off: %s\n",
                !r->warp ? "it lengthens strides beyond the playback-rate warp, which is not "
                           "running (locomotion_follow runs it)"
                         : "the graph has no \"stride\" parameter (locomotion_follow has)");
    }
}

/* The follow features the graph has parameters for (cb_traj_host_enable_features); false with
 * a message when --gait asks for the warp and the graph cannot take it. */
static bool enable_features(run *r, cb_follow_desc *fd)
{
    if (r->graph == NULL) {
        note_features_off(r);
        return true;
    }
    /* A pack without --gait has no known gait clip: no playback-rate warping by the follower
     * (docs/trajectories.md). */
    cb_traj_host_features f = {.gait = r->assets->gait,
                               .no_warp = r->o->no_warp,
                               .no_lock = r->o->no_lock,
                               .min_rate = r->o->min_rate,
                               .max_rate = r->o->max_rate,
                               .orient_rad = r->o->orient_rad,
                               .stride = r->o->stride,
                               .max_stride = r->o->max_stride};
    cb_traj_host_enable_features(r->graph, &f, fd, &r->warp, &r->lock);
    char why[512];
    if (r->o->gait_named && !cb_traj_host_gait_graph(r->graph, r->o->graph, why, sizeof why)) {
        fprintf(stderr, "crowdblend animate: %s\n", why);
        return false;
    }
    if (r->lock && r->assets->feet_missing == NULL) { /* the IK's end joints: the feet */
        fd->lock.joint[0] = r->assets->feet_names[0];
        fd->lock.joint[1] = r->assets->feet_names[1];
    }
    r->orient = fd->orient.angle_param != NULL;
    r->stride = fd->stride.scale_param != NULL;
    note_features_off(r);
    return true;
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
    cb_follow_desc fd = {.crowd = r->crowd, /* capacity 0: the crowd's */
                         .stand_speed_mps = r->o->stand_speed,
                         .follow_speed_mps = r->o->follow_speed,
                         .max_turn_rps = r->o->max_turn};
    if (!enable_features(r, &fd)) {
        return false;
    }
    /* The command names no velocity parameters: a graph without the follower's default ones
     * is not a locomotion graph it can drive. */
    if (!cb_follow_graph_takes_velocity(r->graph != NULL ? r->graph : r->blend)) {
        fprintf(stderr,
                "crowdblend animate: --graph %s cannot follow trajectories: it has no float "
                "parameters 'vx' (left) and 'vy' (forward) for the velocity, as locomotion_8dir "
                "and locomotion_follow have\n",
                r->o->graph);
        return false;
    }
    if (cb_traj_host_follow(r->host, &fd, &err) != CB_OK) {
        fprintf(stderr, "crowdblend animate: follow: %s\n", err.message);
        return false;
    }
    r->follow = cb_traj_host_follower(r->host);
    r->stand = cb_follow_query_desc(&fd).stand_speed_mps;
    /* Unknown feet: no slot plants, so no skate sample is taken (the pops still are). */
    bool feet = r->assets->feet_missing == NULL;
    cb_measure_desc md = {.skeleton = r->skeleton,
                          .slot_clips = feet ? r->slot_clips : NULL,
                          .slot_count = feet ? r->slot_count : 0,
                          .ball_joint = {r->assets->feet[0], r->assets->feet[1]},
                          .dt_s = (float)(1.0 / r->o->rate_hz),
                          .slots = capacity};
    r->measure = cb_measure_create(&md);
    return r->measure != NULL;
}

/* ---- agents in and out (told by the host) ------------------------------------------------ */

static void agent_added(void *user, uint32_t a, float heading)
{
    run *r = user;
    r->measure_slot[a] = cb_measure_slot_take(r->measure);
    r->prev_yaw[a] = heading;
    r->rate[a] = 1.0f;
    r->anim_speed[a] = 0.0f;
}

static void agent_removed(void *user, uint32_t a)
{
    run *r = user;
    cb_measure_slot_release(r->measure, r->measure_slot[a]);
}

/* ---- a frame ------------------------------------------------------------------------------ */

/* The reference playback-rate warp, done by the host through the public API: each character
 * is updated alone with dt scaled by rate = commanded speed / the blend's own root speed (of
 * the previous frame), within [0.25, 4]; standing or idling characters play at rate 1. */
static cb_result update_warped(run *r, float dt)
{
    uint32_t n = cb_follow_count(r->follow);
    const cb_follow_root *roots = cb_follow_roots(r->follow);
    const uint32_t *dense_agent = cb_traj_host_dense_agents(r->host);
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t a = dense_agent[i];
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
        uint32_t a = dense_agent[i];
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
    const uint32_t *dense_agent = cb_traj_host_dense_agents(r->host);
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t a = dense_agent[i];
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
    r->measure_slot = malloc(n * sizeof *r->measure_slot);
    r->prev_yaw = malloc(n * sizeof *r->prev_yaw);
    r->rate = malloc(n * sizeof *r->rate);
    r->anim_speed = malloc(n * sizeof *r->anim_speed);
    r->export_first = calloc(n, sizeof *r->export_first);
    r->export_agent = calloc(n, sizeof *r->export_agent);
    r->weights = malloc(256 * sizeof *r->weights);
    r->times = malloc(256 * sizeof *r->times);
    bool ok = r->measure_slot && r->prev_yaw && r->rate && r->anim_speed && r->export_first &&
              r->export_agent && r->weights && r->times;
    if (!ok) {
        fprintf(stderr, "crowdblend animate: out of memory\n");
    }
    return ok;
}

static void free_run(run *r)
{
    cb_gltf_destroy(r->gltf);
    cb_traj_host_destroy(r->host); /* and its follower */
    cb_crowd_scratch_destroy(r->crowd, r->scratch);
    cb_crowd_destroy(r->crowd);
    cb_graph_destroy(r->graph);
    cb_graph_destroy(r->blend);
    free(r->measure_slot);
    free(r->prev_yaw);
    free(r->rate);
    free(r->anim_speed);
    free(r->export_first);
    free(r->export_agent);
    free(r->weights);
    free(r->times);
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
        int64_t first_k, last_k;
        cb_traj_host_agent_frames(r->host, a, &first_k, &last_k);
        int64_t e0 = (first_k + r->export_step - 1) / r->export_step;
        int64_t e1 = last_k >= 0 ? last_k / r->export_step : -1;
        r->export_first[a] = (uint32_t)e0;
        r->export_agent[a] = e1 >= e0 ? used : UINT32_MAX;
        if (e1 >= e0) {
            ids[used] = r->traj->agents[a].id;
            count[used] = (uint32_t)(e1 - e0 + 1);
            first[used++] = (uint32_t)e0;
        }
    }
    r->export_agents = used;
    r->export_frames = (frames + r->export_step - 1) / r->export_step;
    cb_gltf_desc gd = {.skeleton = r->skeleton,
                       .agent_count = used,
                       .agent_ids = ids,
                       .frames = count,
                       .first_frame = first,
                       .dt_s = (double)r->export_step / r->o->rate_hz,
                       .total_frames = r->export_frames};
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

static bool frames_loop(run *r, uint32_t frames)
{
    float dt = (float)(1.0 / r->o->rate_hz);
    for (uint32_t k = 0; k < frames; ++k) {
        cb_error err = {0};
        if (cb_traj_host_step(r->host, k, dt, &err) != CB_OK) {
            fprintf(stderr, "crowdblend animate: %s\n", err.message);
            return false;
        }
        if (cb_follow_count(r->follow) == 0) {
            continue;
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
    run r = {.traj = traj, .o = o, .assets = assets, .skeleton = assets->skeleton};
    memset(out, 0, sizeof *out);
    cb_traj_host_desc hd = {.traj = traj,
                            .rate_hz = o->rate_hz,
                            .seconds = o->seconds,
                            .on_add = agent_added,
                            .on_remove = agent_removed,
                            .user = &r};
    cb_error err = {0};
    bool ok = cb_traj_host_create(&hd, &r.host, &err) == CB_OK;
    if (!ok) {
        fprintf(stderr, "crowdblend animate: %s\n", err.message);
    }
    ok = ok && alloc_tables(&r);
    cb_traj_host_plan plan = ok ? cb_traj_host_query_plan(r.host) : (cb_traj_host_plan){0};
    uint32_t concurrent = plan.max_concurrent, shown = plan.agents_shown, frames = plan.frames;
    ok = ok && frames > 0 && (o->graph == NULL || load_graph(&r)) && make_crowd(&r, concurrent);
    ok = ok && (o->out == NULL || make_export(&r, frames));
    ok = ok && frames_loop(&r, frames);
    if (ok && r.gltf != NULL) {
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
        out->stride = r.stride;
        out->follow_stats = cb_follow_query_stats(r.follow);
        if (r.gltf != NULL) {
            out->out_agents = r.export_agents;
            out->out_frames = r.export_frames;
            out->out_rate_hz = o->rate_hz / r.export_step;
        }
        r.measure = NULL;
    } else {
        fprintf(stderr, "crowdblend animate: stopped at %s\n", name);
    }
    cb_measure_destroy(r.measure);
    free_run(&r);
    out->wall_s = (double)(cb_now_ns() - t0) / 1e9;
    return ok;
}
