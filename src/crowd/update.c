/* The crowd's frame: for each batch of characters, parameters -> weights -> time & sync ->
 * sample + blend -> local-to-model.
 *
 * Everything a character's outputs depend on is its own state, its parameters and dt, and every
 * stage computes each character alone (the solver's SIMD lanes included: it gives the same bits
 * for a character wherever it sits in a batch). That is the whole argument for "bit-identical
 * whatever the thread count, batch size and update ranges"; tests/test_crowd.c checks it. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <string.h>
#include <time.h>

#include "crowd/crowd_impl.h"

/* dt above an hour is almost certainly a unit error (ms passed as s, say); refuse it. */
#define MAX_DT_S 3600.0f

cb_result cb_crowd_check_dt(float dt_s)
{
    if (!isfinite(dt_s)) {
        return CB_ERR_NOT_FINITE;
    }
    if (dt_s < 0.0f || dt_s > MAX_DT_S) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    return CB_OK;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    /* clock_gettime(CLOCK_MONOTONIC) is answered in user space (vDSO) on Linux: no system call
     * in the frame. Only called when the crowd profiles. */
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Adds the time since *mark to a stage and moves the mark. */
static inline void lap(cb_crowd_scratch *s, bool profile, uint64_t *mark, cb_crowd_stage stage)
{
    if (profile) {
        uint64_t t = now_ns();
        s->stats.stage_ns[stage] += t - *mark;
        *mark = t;
    }
}

/* Wraps a phase into [0, 1). Phases advance by at most dt / duration < 2^24 per frame. */
static inline float wrap01(float p)
{
    p -= floorf(p);
    return p < 1.0f ? p : 0.0f;
}

/* ------------------------------------------------------------------------------------------ */
/* Stage 1: parameters                                                                         */

/* The blend-parameter columns for the batch: the crowd's own columns are read in place, host
 * views are gathered into the scratch (a strided read the solver's SIMD loads cannot do). */
static void read_params(const cb_crowd *c, cb_crowd_scratch *s, uint32_t first, uint32_t n,
                        const float **cols)
{
    for (uint32_t p = 0; p < c->blend_param_count; ++p) {
        const cb_crowd_column *col = &c->columns[p];
        if (col->view == NULL) {
            cols[p] = col->own + first;
            continue;
        }
        float *dst = s->params + (size_t)p * c->batch_size;
        for (uint32_t i = 0; i < n; ++i) {
            memcpy(&dst[i], col->view + (size_t)(first + i) * col->view_stride, sizeof(float));
        }
        cols[p] = dst;
    }
}

/* Layer weights, clamped to [0, 1] (NaN counts as 0) and counted when they had to be. */
static void read_layer_weights(const cb_crowd *c, cb_crowd_scratch *s, uint32_t first,
                               uint32_t n)
{
    for (uint32_t layer = 0; layer < 2; ++layer) {
        const cb_crowd_column *col = &c->columns[c->blend_param_count + layer];
        float *dst = s->layer_weights + (size_t)layer * c->batch_size;
        for (uint32_t i = 0; i < n; ++i) {
            float w;
            if (col->view != NULL) {
                memcpy(&w, col->view + (size_t)(first + i) * col->view_stride, sizeof(float));
            } else {
                w = col->own[first + i];
            }
            if (!(w >= 0.0f && w <= 1.0f)) {
                s->stats.clamped_weights++;
                w = w > 1.0f ? 1.0f : 0.0f; /* NaN and negatives -> 0 */
            }
            dst[i] = w;
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Stage 3: time & sync                                                                        */

/* One normalized phase per character drives every node clip: the walk and run cycles of the
 * embedded set put their foot contacts at the same phases, so blending them at one phase keeps
 * the feet in step. The phase advances at the weight-averaged duration, so a 50/50 blend of a
 * 1.0 s and a 0.7 s cycle takes 0.85 s: neither clip's feet slide against the other's. */
static void advance_time(cb_crowd *c, cb_crowd_scratch *s, float dt, uint32_t first, uint32_t n)
{
    const float eps = CB_BLEND_WEIGHT_EPSILON;
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t ch = first + i;
        uint8_t *active = s->active + (size_t)i * c->node_count;
        uint32_t count = 0;
        float wsum = 0.0f, dsum = 0.0f;
        for (uint32_t k = 0; k < c->node_count; ++k) {
            float w = s->weights[(size_t)k * c->batch_size + i];
            if (w > eps) {
                active[count++] = (uint8_t)k;
                wsum += w;
                dsum += w * c->durations[k];
            }
        }
        s->active_count[i] = (uint8_t)count;
        float from = c->phase[ch];
        float to = from;
        if (wsum > 0.0f) {
            to = from + dt * wsum / dsum;
            for (uint32_t a = 0; a < count; ++a) {
                uint32_t k = active[a];
                s->root_entries[a] = (cb_root_motion_entry){
                    .clip = c->clips[k],
                    .from = from,
                    .to = to,
                    .weight = s->weights[(size_t)k * c->batch_size + i],
                };
            }
        }
        cb_root_delta delta = {{0.0f, 0.0f, 0.0f}, 0.0f};
        if (count > 0) {
            /* Inputs are checked by construction (finite times, weights > eps): this cannot
             * fail, and a failure would leave the zero delta. */
            cb_clip_blend_root_motion(s->root_entries, count, &delta);
        }
        c->root_motion[ch] = delta;
        c->phase[ch] = wrap01(to);
        if (c->additive_clip != NULL) {
            c->additive_phase[ch] = wrap01(c->additive_phase[ch] + dt / c->additive_duration);
        }
        if (c->upper_clip != NULL) {
            c->upper_phase[ch] = wrap01(c->upper_phase[ch] + dt / c->upper_duration);
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Stages 4 and 5: pose and local-to-model                                                     */

static void blend_pose(const cb_crowd *c, cb_crowd_scratch *s, uint32_t i, uint32_t ch,
                       cb_xform_group *pose)
{
    const uint8_t *active = s->active + (size_t)i * c->node_count;
    uint32_t n = 0;
    for (uint32_t a = 0; a < s->active_count[i]; ++a) {
        uint32_t k = active[a];
        s->entries[n++] = (cb_blend_entry){
            .clip = c->clips[k],
            .time = c->phase[ch],
            .weight = s->weights[(size_t)k * c->batch_size + i],
        };
    }
    float upper = s->layer_weights[c->batch_size + i];
    if (c->upper_clip != NULL && upper > 0.0f) {
        s->entries[n++] = (cb_blend_entry){
            .clip = c->upper_clip,
            .time = c->upper_phase[ch],
            .weight = upper,
            .mode = CB_BLEND_MODE_OVERRIDE,
            .mask = {c->upper_mask, c->upper_mask ? c->soa_joint_count : 0},
        };
    }
    float additive = s->layer_weights[i];
    if (c->additive_clip != NULL && additive > 0.0f) {
        s->entries[n++] = (cb_blend_entry){
            .clip = c->additive_clip,
            .time = c->additive_phase[ch],
            .weight = additive,
            .mode = CB_BLEND_MODE_ADDITIVE,
            .mask = {c->additive_mask, c->additive_mask ? c->soa_joint_count : 0},
        };
    }
    cb_pose_blend_job job = {
        .skeleton = c->skeleton,
        .entries = {s->entries, n},
        .out = {pose, c->group_count},
    };
    /* Every input was validated at create or clamped above; the job's own checks are kept
     * (they are cheap) and a failure would leave the previous pose in the scratch. */
    if (c->use_ref) {
        cb_pose_blend_job_run_ref(&job, NULL);
    } else {
        cb_pose_blend_job_run(&job, NULL);
    }
}

static void local_to_model(const cb_crowd *c, const cb_xform_group *pose, uint32_t ch)
{
    cb_ltm_job job = {
        .skeleton = c->skeleton,
        .local = {pose, c->group_count},
        .from = 0,
        .to = (uint32_t)c->joint_count,
        .model_layout = c->layout,
        .model = {(float *)(c->matrices + (size_t)ch * c->matrix_stride),
                  c->joint_count * c->matrix_floats},
    };
    if (c->use_ref) {
        cb_ltm_job_run_ref(&job, NULL);
    } else {
        cb_ltm_job_run(&job, NULL);
    }
}

/* ------------------------------------------------------------------------------------------ */

void cb_crowd_run_batch(cb_crowd *c, cb_crowd_scratch *s, float dt, uint32_t first, uint32_t n)
{
    CB_ASSERT(n <= c->batch_size);
    bool profile = c->profile;
    uint64_t mark = profile ? now_ns() : 0;

    const float *cols[CB_SOLVER_MAX_NODES];
    read_params(c, s, first, n, cols);
    read_layer_weights(c, s, first, n);
    lap(s, profile, &mark, CB_CROWD_STAGE_PARAMS);

    size_t nonfinite = 0;
    if (c->use_ref) {
        cb_solver_evaluate_ref(c->solver, cols, n, s->weights, c->batch_size, &nonfinite);
    } else {
        cb_solver_evaluate(c->solver, cols, n, s->weights, c->batch_size, &nonfinite);
    }
    s->stats.nonfinite_params += nonfinite;
    if (c->kept_weights != NULL) {
        for (uint32_t k = 0; k < c->node_count; ++k) {
            memcpy(c->kept_weights + (size_t)k * c->capacity + first,
                   s->weights + (size_t)k * c->batch_size, n * sizeof(float));
        }
    }
    lap(s, profile, &mark, CB_CROWD_STAGE_WEIGHTS);

    advance_time(c, s, dt, first, n);
    lap(s, profile, &mark, CB_CROWD_STAGE_TIME);

    size_t pose_stride = c->group_count;
    for (uint32_t base = 0; base < n; base += CB_CROWD_POSE_CHUNK) {
        uint32_t m = n - base < CB_CROWD_POSE_CHUNK ? n - base : CB_CROWD_POSE_CHUNK;
        for (uint32_t j = 0; j < m; ++j) {
            blend_pose(c, s, base + j, first + base + j,
                       (cb_xform_group *)((char *)s->poses + j * pose_stride * cb_simd_group_bytes()));
        }
        lap(s, profile, &mark, CB_CROWD_STAGE_SAMPLE_BLEND);
        for (uint32_t j = 0; j < m; ++j) {
            local_to_model(c,
                           (const cb_xform_group *)((const char *)s->poses +
                                                    j * pose_stride * cb_simd_group_bytes()),
                           first + base + j);
        }
        lap(s, profile, &mark, CB_CROWD_STAGE_LTM);
    }
    s->stats.characters_updated += n;
}

/* The range [first, first + count) in batches of at most batch_size. */
static void run_range(cb_crowd *c, cb_crowd_scratch *s, float dt, uint32_t first, uint32_t count)
{
    for (uint32_t b = 0; b < count; b += c->batch_size) {
        uint32_t n = count - b < c->batch_size ? count - b : c->batch_size;
        cb_crowd_run_batch(c, s, dt, first + b, n);
    }
}

typedef struct update_ctx {
    cb_crowd *crowd;
    float dt;
} update_ctx;

static void update_chunk(void *user, size_t begin, size_t end, uint32_t thread_index)
{
    update_ctx *u = user;
    run_range(u->crowd, u->crowd->thread_scratch[thread_index], u->dt, (uint32_t)begin,
              (uint32_t)(end - begin));
}

cb_result cb_crowd_update(cb_crowd *c, float dt_s)
{
    if (c == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    cb_result r = cb_crowd_check_dt(dt_s);
    if (r != CB_OK) {
        return r;
    }
    update_ctx u = {c, dt_s};
    r = cb_jobs_parallel_for(c->jobs, c->handles.count, c->batch_size, update_chunk, &u);
    c->updates++;
    return r;
}

cb_result cb_crowd_update_range(cb_crowd *c, cb_crowd_scratch *s, float dt_s, uint32_t first,
                                uint32_t count)
{
    if (c == NULL || s == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    if (s->crowd != c) {
        return CB_ERR_MISMATCH;
    }
    cb_result r = cb_crowd_check_dt(dt_s);
    if (r != CB_OK) {
        return r;
    }
    if (first > c->handles.count || count > c->handles.count - first) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    run_range(c, s, dt_s, first, count);
    return CB_OK;
}
