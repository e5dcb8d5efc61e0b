/* The follow benchmarks' worlds (follow_world.h). */
#include "follow_world.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/example_graphs.h"

const char *const follow_world_w2_clips[17] = {
    "idle",  "walk_f", "walk_fl", "walk_l", "walk_bl", "walk_b", "walk_br", "walk_r", "walk_fr",
    "run_f", "run_fl", "run_l",   "run_bl", "run_b",   "run_br", "run_r",   "run_fr",
};

void follow_world_destroy(follow_world *w)
{
    cb_follow_destroy(w->follow);
    cb_crowd_destroy(w->crowd);
    cb_graph_destroy(w->graph);
    cb_embedded_destroy(w->set);
    free(w->pos);
    free(w->vel);
}

cb_result follow_world_w2_graph(const cb_embedded *set, cb_graph **graph)
{
    const cb_clip *clips[17];
    for (int k = 0; k < 17; ++k) {
        clips[k] = cb_embedded_find_clip(set, follow_world_w2_clips[k]);
    }
    cb_graph_blend_desc bd = {
        .skeleton = cb_embedded_skeleton(set),
        .clips = clips,
        .clip_count = 17,
        .additive = {.clip = cb_embedded_find_clip(set, "lean_add")},
        .upper_body = {.clip = cb_embedded_find_clip(set, "wave_upper"), .mask_joint = "spine_01"},
    };
    return cb_graph_create_blend(&bd, graph, NULL);
}

bool follow_world_w2(follow_world *w, uint32_t n, bool follow)
{
    memset(w, 0, sizeof *w);
    w->n = n;
    if (cb_embedded_create(NULL, &w->set, NULL) != CB_OK) {
        return false;
    }
    if (follow_world_w2_graph(w->set, &w->graph) != CB_OK) {
        return false;
    }
    const cb_graph *graphs[1] = {w->graph};
    cb_crowd_desc cd = {
        .skeleton = cb_embedded_skeleton(w->set),
        .capacity = n,
        .graphs = graphs,
        .graph_count = 1,
        .thread_count = 1,
    };
    cb_follow_desc fd = {.capacity = n};
    w->pos = calloc(3 * (size_t)n, sizeof(float));
    w->vel = calloc(3 * (size_t)n, sizeof(float));
    if (w->pos == NULL || w->vel == NULL || cb_crowd_create(&cd, &w->crowd, NULL) != CB_OK) {
        return false;
    }
    fd.crowd = w->crowd;
    if (follow && cb_follow_create(&fd, &w->follow, NULL) != CB_OK) {
        return false;
    }
    for (uint32_t i = 0; i < n; ++i) {
        cb_character ch;
        float phase = (float)((i * 2654435761u) % 1000u) / 1000.0f;
        cb_result r = follow ? cb_follow_add(w->follow, phase, 0.0f, &ch)
                             : cb_crowd_add(w->crowd, 0, phase, &ch);
        if (r != CB_OK) {
            return false;
        }
    }
    /* The blend space's parameters (crowdblend/graph.h): blend_0 left (+X), blend_1 forward. */
    uint32_t left = 0, forward = 0;
    cb_crowd_find_param(w->crowd, 0, CB_GRAPH_BLEND_PARAM_PREFIX "0", &left);
    cb_crowd_find_param(w->crowd, 0, CB_GRAPH_BLEND_PARAM_PREFIX "1", &forward);
    w->left = cb_crowd_param_column(w->crowd, 0, left);
    w->forward = cb_crowd_param_column(w->crowd, 0, forward);
    return true;
}

/* Frame f of a wandering crowd: each agent walks or runs on a slowly turning circle. */
void follow_world_move(follow_world *w, uint32_t frame)
{
    const float dt = 1.0f / 60.0f;
    for (uint32_t i = 0; i < w->n; ++i) {
        float speed = 0.4f + 3.0f * (float)(i % 7) / 7.0f;
        float turn = 0.2f + 0.1f * (float)(i % 5);
        float a = turn * dt * (float)frame + (float)i;
        w->vel[3 * i] = speed * sinf(a);
        w->vel[3 * i + 2] = speed * cosf(a);
        w->pos[3 * i] += w->vel[3 * i] * dt;
        w->pos[3 * i + 2] += w->vel[3 * i + 2] * dt;
    }
}

/* text with `add` inserted after every occurrence of `key` (a new string, freed by the caller;
 * NULL when out of memory). text is freed. */
static char *insert_after(char *text, const char *key, const char *add)
{
    if (text == NULL) {
        return NULL;
    }
    size_t count = 0, kl = strlen(key), al = strlen(add), length = strlen(text);
    for (const char *p = strstr(text, key); p != NULL; p = strstr(p + kl, key)) {
        ++count;
    }
    char *out = malloc(length + count * al + 1), *o = out;
    const char *from = text;
    for (const char *p = strstr(text, key); out != NULL && p != NULL; p = strstr(p + kl, key)) {
        memcpy(o, from, (size_t)(p + kl - from));
        o += p + kl - from;
        memcpy(o, add, al);
        o += al;
        from = p + kl;
    }
    if (out != NULL) {
        memcpy(o, from, strlen(from) + 1);
    }
    free(text);
    return out;
}

/* The example graph's text, NUL-terminated, with `"pelvis_drop_m": 0.05` added to its foot_lock
 * step when `drop`, and with `lod` a parameter "lod" as its lod_param and `"max_lod": 0` on
 * every post-process step (freed by the caller; NULL when out of memory). */
static char *example_text(const char *text, size_t length, bool drop, bool lod)
{
    char *out = malloc(length + 1);
    if (out == NULL) {
        return NULL;
    }
    memcpy(out, text, length);
    out[length] = '\0';
    if (drop) {
        out = insert_after(out, "\"type\": \"foot_lock\",", " \"pelvis_drop_m\": 0.05,");
    }
    if (lod) {
        out = insert_after(out, "\"name\": \"locomotion_follow\",", " \"lod_param\": \"lod\",");
        out = insert_after(out, "\"parameters\": [", "{\"name\": \"lod\"}, ");
        static const char *const steps[] = {"\"type\": \"orientation_warp\",",
                                            "\"type\": \"stride_warp\",",
                                            "\"type\": \"foot_lock\","};
        for (int k = 0; k < 3; ++k) {
            out = insert_after(out, steps[k], " \"max_lod\": 0,");
        }
    }
    return out;
}

/* The example graph locomotion_follow and a follower with the features of `mode` (bit 0:
 * warping, bit 1: locking, bit 2: turn limit, bit 3: orientation warping, bit 4: stride
 * warping, bit 5: the foot_lock step's pelvis drop, up to 5 cm), n characters added
 * through it. */
bool follow_world_features(follow_world *w, uint32_t n, int mode)
{
    return follow_world_features_lod(w, n, mode, -1, false);
}

bool follow_world_features_lod(follow_world *w, uint32_t n, int mode, int near_percent,
                               bool keep_weights)
{
    memset(w, 0, sizeof *w);
    w->n = n;
    const cb_example_graph *ex = cb_example_graph_find("locomotion_follow");
    if (ex == NULL || cb_embedded_create(NULL, &w->set, NULL) != CB_OK) {
        return false;
    }
    const cb_clip *clips[32];
    size_t count = cb_embedded_clip_count(w->set);
    count = count < 32 ? count : 32;
    for (size_t k = 0; k < count; ++k) {
        clips[k] = cb_embedded_clip(w->set, k);
    }
    const cb_skeleton *sk = cb_embedded_skeleton(w->set);
    cb_graph_json_desc jd = {.skeleton = sk, .clips = clips, .clip_count = (uint32_t)count};
    char *text = example_text(ex->text, ex->length, mode & 32, near_percent >= 0);
    cb_result r = text != NULL ? cb_graph_load_json(text, strlen(text), &jd, &w->graph, NULL)
                               : CB_ERR_OUT_OF_MEMORY;
    free(text);
    if (r != CB_OK) {
        return false;
    }
    const cb_graph *graphs[1] = {w->graph};
    cb_crowd_desc cd = {.skeleton = sk,
                        .capacity = n,
                        .graphs = graphs,
                        .graph_count = 1,
                        .thread_count = 1,
                        .keep_weights = keep_weights};
    w->pos = calloc(3 * (size_t)n, sizeof(float));
    w->vel = calloc(3 * (size_t)n, sizeof(float));
    if (w->pos == NULL || w->vel == NULL || cb_crowd_create(&cd, &w->crowd, NULL) != CB_OK) {
        return false;
    }
    cb_follow_desc fd = {.crowd = w->crowd, .capacity = n};
    if (mode & 1) {
        fd.warp = (cb_follow_warp){.rate_param = "rate", .gait_speed_mps = 1.4f};
    }
    if (mode & 2) {
        /* The graph's foot_lock step locks; the follower gives it the roots. */
        fd.lock = (cb_follow_lock){.root_param = {"root_x", "root_y", "root_z", "root_yaw"},
                                   .weight_param = "lock",
                                   .locked_param = {"locked_l", "locked_r"},
                                   .failed_param = {"failed_l", "failed_r"}};
    }
    if (mode & 4) {
        fd.max_turn_rps = 0.25f;
    }
    if (mode & 8) {
        fd.orient = (cb_follow_orient){.angle_param = "warp"};
    }
    if (mode & 16) {
        fd.stride = (cb_follow_stride){.scale_param = "stride",
                                       .direction_param = {"stride_x", "stride_z"}};
    }
    if (cb_follow_create(&fd, &w->follow, NULL) != CB_OK) {
        return false;
    }
    for (uint32_t i = 0; i < n; ++i) {
        cb_character ch;
        float phase = (float)((i * 2654435761u) % 1000u) / 1000.0f;
        if (cb_follow_add(w->follow, phase, 0.0f, &ch) != CB_OK) {
            return false;
        }
    }
    if (near_percent >= 0) {
        /* near_percent of the characters at LOD 0, spread evenly over the dense order (so a
         * batch mixes them), the others at LOD 1, above every step's max_lod */
        uint32_t p;
        if (cb_crowd_find_param(w->crowd, 0, "lod", &p) != CB_OK) {
            return false;
        }
        float *lod = cb_crowd_param_column(w->crowd, 0, p);
        for (uint32_t i = 0; i < n; ++i) {
            uint64_t a = (uint64_t)i * (uint64_t)near_percent, b = a + (uint64_t)near_percent;
            lod[i] = b / 100u > a / 100u ? 0.0f : 1.0f;
        }
    }
    return true;
}

void follow_world_host_velocity(follow_world *w)
{
    for (uint32_t i = 0; i < w->n; ++i) {
        w->left[i] = 0.0f;
        w->forward[i] = hypotf(w->vel[3 * i], w->vel[3 * i + 2]);
    }
}
