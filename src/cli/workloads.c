/* The standard workloads of `crowdblend bench` (docs/performance.md):
 *   W1  1,000 characters, 64 joints, 3 clips blended with fixed weights + local-to-model
 *       (what ozz-animation's sample + blend + local-to-model does; the yardstick);
 *   W2  10,000 characters, the full locomotion frame: 2D Freeform Directional over the 17
 *       idle/walk/run clips, layers, sync, root motion;
 *   W3  W2 at 100,000 characters (outputs far beyond the caches);
 *   W4  weights only, each solver, 10,000 characters;
 *   W5  10,000 characters on the example graph with state machines, an upper-body layer and a
 *       head look-at (examples/graphs/locomotion_upper_body_look_at.json), events on.
 *   W1-plain  W1's pose and local-to-model jobs in a plain loop, no crowd runtime (beside W1);
 *   W6  W1 with the crowd's root motion left out (cb_crowd_desc.skip_root_motion): the work
 *       W1-plain does, through the crowd runtime (not in the default list);
 *   W0  a control: pure arithmetic on the pool, the scaling the machine allows at the moment.
 * Each at one thread and at all threads, several runs each. A frame's wall time is measured
 * around cb_crowd_update only (the host's steering is outside); a run's figure is the median
 * over its frames, and a workload reports the median run with the fastest and slowest. The
 * timed crowd runs without its stage profiler, as a host's does (W1-plain reads no clock
 * either); the stage split comes from a second, profiled crowd run for one run's frames
 * after the timed runs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_impl.h"
#include "base/prng.h"
#include "cli/cli.h"
#include "cli/example_graphs.h"
#include "cli/scene.h"
#include "cli/workloads.h"
#include "simd/detmath.h"

typedef struct workload_def {
    const char *name;
    uint32_t characters;
    uint32_t frames;
    bool fixed_three_clips;
    bool layers;
    const char *graph;
    bool skip_root_motion;
} workload_def;

static const workload_def defs[] = {
    {"W1", 1000, 300, true, false, NULL},
    {"W2", 10000, 60, false, true, NULL},
    {"W5", 10000, 60, false, false, CB_DEFAULT_EXAMPLE_GRAPH}, /* beside W2 */
    {"W3", 100000, 12, false, true, NULL},
    {"W6", 1000, 300, true, false, NULL, true}, /* W1 without root motion */
};

/* The fields every workload reports the same way, from the median frame time of each run
 * (sorted in place): the median run and the range, so one invocation shows how far its own
 * figures can be trusted. */
static void set_timing(cb_workload_result *out, const char *name, uint32_t threads,
                       uint32_t characters, double *run_ns, uint32_t runs, uint32_t frames)
{
    double median = cb_median(run_ns, runs);
    out->name = name;
    out->threads = threads;
    out->characters = characters;
    out->frames = frames;
    out->runs = runs;
    out->frame_ns = median;
    out->frame_ns_min = run_ns[0];
    out->frame_ns_max = run_ns[runs - 1];
    out->characters_per_second = characters / (median / 1e9);
    out->ns_per_character = median / characters;
}

/* Frame times of one run, reduced to their median. */
static double run_median(double *frame_ns, uint32_t frames)
{
    return cb_median(frame_ns, frames);
}

/* Every update of the timed (unprofiled) crowd, warm-up included, goes through here and
 * nothing else does: the callgrind recipe counts this function's instructions
 * (`--toggle-collect=timed_crowd_update`, docs/performance.md), not the profiled pass's. gcc's
 * noipa keeps the name: with noinline alone it becomes timed_crowd_update.constprop.0.isra.0. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((noipa))
#elif defined(__clang__)
__attribute__((noinline))
#endif
static cb_result
timed_crowd_update(cb_crowd *crowd, float dt_s)
{
    return cb_crowd_update(crowd, dt_s);
}

/* The stage split: a crowd like the timed one but with its profiler on (sd->profile), run
 * for one run's frames after the same warm-up; thread time per stage per character, and
 * each stage's share of their sum. */
static cb_result profile_stages(const cb_scene_desc *sd, uint32_t frames, float dt,
                                cb_workload_result *out)
{
    cb_scene *scene = cb_scene_create(sd);
    if (scene == NULL) {
        return CB_ERR_OUT_OF_MEMORY;
    }
    cb_crowd *crowd = cb_scene_crowd(scene);
    for (int f = 0; f < 3; ++f) {
        cb_scene_host_step(scene, dt);
        cb_crowd_update(crowd, dt);
    }
    cb_crowd_reset_stats(crowd);
    for (uint32_t f = 0; f < frames; ++f) {
        cb_scene_host_step(scene, dt);
        cb_crowd_update(crowd, dt);
    }
    cb_crowd_stats st = cb_crowd_query_stats(crowd);
    uint64_t stage_total = 0;
    for (int k = 0; k < _CB_CROWD_STAGE_COUNT; ++k) {
        stage_total += st.stage_ns[k];
    }
    for (int k = 0; k < _CB_CROWD_STAGE_COUNT; ++k) {
        /* Per character, in thread time: what a stage costs one core. */
        out->stage_ns_per_character[k] = (double)st.stage_ns[k] / ((double)sd->characters * frames);
        out->stage_share[k] = stage_total ? (double)st.stage_ns[k] / (double)stage_total : 0.0;
    }
    cb_scene_destroy(scene);
    return CB_OK;
}

static cb_result run_crowd_workload(const workload_def *w, uint32_t threads, double scale,
                                    uint32_t runs, cb_matrix_layout layout, cb_workload_result *out)
{
    uint32_t characters = (uint32_t)fmax(1.0, w->characters * scale);
    uint32_t frames = w->frames;
    cb_scene_desc sd = {
        .characters = characters,
        .threads = threads,
        .fixed_three_clips = w->fixed_three_clips,
        .layers = w->layers,
        .profile = false, /* timed as a host runs it; profile_stages turns it on */
        .seed = 7,
        .graph = w->graph,
        .skip_root_motion = w->skip_root_motion,
        .matrix_layout = layout,
    };
    cb_scene *scene = cb_scene_create(&sd);
    if (scene == NULL) {
        return CB_ERR_OUT_OF_MEMORY;
    }
    cb_crowd *crowd = cb_scene_crowd(scene);
    const float dt = 1.0f / 60.0f;
    double *frame_ns = malloc(2 * frames * sizeof *frame_ns), *cpu_ns = frame_ns + frames;
    double run_ns[CB_WORKLOAD_MAX_RUNS], run_cpu_ns[CB_WORKLOAD_MAX_RUNS];
    if (frame_ns == NULL) {
        cb_scene_destroy(scene);
        return CB_ERR_OUT_OF_MEMORY;
    }
    /* Warm-up: first touch of the outputs, workers spun up. */
    for (int f = 0; f < 3; ++f) {
        cb_scene_host_step(scene, dt);
        timed_crowd_update(crowd, dt);
    }
    for (uint32_t r = 0; r < runs; ++r) {
        for (uint32_t f = 0; f < frames; ++f) {
            cb_scene_host_step(scene, dt);
            uint64_t c0 = cb_thread_cpu_ns(), t0 = cb_now_ns();
            timed_crowd_update(crowd, dt);
            frame_ns[f] = (double)(cb_now_ns() - t0);
            cpu_ns[f] = (double)(cb_thread_cpu_ns() - c0);
        }
        run_ns[r] = run_median(frame_ns, frames);
        run_cpu_ns[r] = run_median(cpu_ns, frames);
    }
    set_timing(out, w->name, cb_scene_threads(scene), characters, run_ns, runs, frames);
    out->cpu_ns_per_character = cb_median(run_cpu_ns, runs) / characters;
    out->checksum = cb_crowd_output_hash(crowd);
    free(frame_ns);
    /* The timed crowd goes first: W3's outputs alone are hundreds of MB. */
    cb_scene_destroy(scene);
    sd.profile = true;
    return profile_stages(&sd, frames, dt, out);
}

/* ------------------------------------------------------------------------------------------ */
/* W4: each solver alone                                                                       */

typedef struct solver_job {
    const cb_solver *solver;
    const float *cols[CB_SOLVER_MAX_NODES];
    float *weights;
    size_t stride;
} solver_job;

static void solver_chunk(void *user, size_t begin, size_t end, uint32_t thread_index)
{
    (void)thread_index;
    solver_job *j = user;
    const float *cols[CB_SOLVER_MAX_NODES];
    size_t pc = cb_solver_param_count(j->solver);
    for (size_t p = 0; p < pc; ++p) {
        cols[p] = j->cols[p] + begin;
    }
    cb_solver_evaluate(j->solver, cols, end - begin, j->stride, j->weights + begin, NULL);
}

/* A layout per solver: the embedded set's 17 root velocities for the 2D kinds, a 4 x 4 grid for
 * bilinear, 8 speeds for 1D, 17 inputs for direct. */
static cb_result make_solver(cb_solver_kind kind, cb_solver **out)
{
    float nodes[2 * 17];
    cb_solver_desc d = {.kind = kind, .nodes = nodes};
    if (kind == CB_SOLVER_KIND_LINEAR_1D) {
        for (int i = 0; i < 8; ++i) {
            nodes[i] = 0.6f * (float)i;
        }
        d.node_count = 8;
    } else if (kind == CB_SOLVER_KIND_BILINEAR_2D) {
        for (int y = 0; y < 4; ++y) {
            for (int x = 0; x < 4; ++x) {
                nodes[2 * (y * 4 + x)] = -4.0f + 8.0f * (float)x / 3.0f;
                nodes[2 * (y * 4 + x) + 1] = -4.0f + 8.0f * (float)y / 3.0f;
            }
        }
        d.node_count = 16;
        d.grid_nx = 4;
        d.grid_ny = 4;
    } else {
        /* Idle at the origin, 8 directions at 1.4 and at 3.5 m/s. */
        nodes[0] = nodes[1] = 0.0f;
        for (int i = 0; i < 8; ++i) {
            float a = 6.2831853f * (float)i / 8.0f;
            nodes[2 + 2 * i] = 1.4f * cb_det_cosf(a);
            nodes[2 + 2 * i + 1] = 1.4f * cb_det_sinf(a);
            nodes[18 + 2 * i] = 3.5f * cb_det_cosf(a);
            nodes[18 + 2 * i + 1] = 3.5f * cb_det_sinf(a);
        }
        d.node_count = 17;
    }
    return cb_solver_create(&d, out, NULL);
}

static cb_result run_solver_workload(cb_solver_kind kind, uint32_t threads, double scale,
                                     uint32_t runs, cb_workload_result *out)
{
    uint32_t characters = (uint32_t)fmax(16.0, 10000 * scale);
    cb_solver *solver = NULL;
    cb_result r = make_solver(kind, &solver);
    if (r != CB_OK) {
        return r;
    }
    size_t pc = cb_solver_param_count(solver), nodes = cb_solver_node_count(solver);
    float *params = malloc(pc * characters * sizeof(float));
    float *weights = malloc(nodes * characters * sizeof(float));
    cb_jobs *jobs = NULL;
    cb_jobs_desc jd = {.thread_count = threads};
    if (params == NULL || weights == NULL || cb_jobs_create(&jd, &jobs, NULL) != CB_OK) {
        free(params), free(weights), cb_solver_destroy(solver);
        return CB_ERR_OUT_OF_MEMORY;
    }
    cb_prng rng = cb_prng_seed(11);
    for (size_t i = 0; i < pc * characters; ++i) {
        params[i] = cb_prng_range(&rng, kind == CB_SOLVER_KIND_DIRECT ? 0.0f : -4.5f, 4.5f);
    }
    solver_job job = {.solver = solver, .weights = weights, .stride = characters};
    for (size_t p = 0; p < pc; ++p) {
        job.cols[p] = params + p * characters;
    }
    enum { EVALUATIONS = 9 };
    double ns[EVALUATIONS], run_ns[CB_WORKLOAD_MAX_RUNS];
    for (int e = 0; e < 3; ++e) {
        cb_jobs_parallel_for(jobs, characters, 256, solver_chunk, &job);
    }
    for (uint32_t run = 0; run < runs; ++run) {
        for (int e = 0; e < EVALUATIONS; ++e) {
            uint64_t t0 = cb_now_ns();
            cb_jobs_parallel_for(jobs, characters, 256, solver_chunk, &job);
            ns[e] = (double)(cb_now_ns() - t0);
        }
        run_ns[run] = run_median(ns, EVALUATIONS);
    }
    static char names[_CB_SOLVER_KIND_COUNT][48];
    snprintf(names[kind], sizeof names[kind], "W4/%s", cb_solver_kind_name(kind));
    memset(out, 0, sizeof *out);
    set_timing(out, names[kind], cb_jobs_thread_count(jobs), characters, run_ns, runs, EVALUATIONS);
    out->stage_ns_per_character[CB_CROWD_STAGE_WEIGHTS] = out->frame_ns * out->threads / characters;
    out->stage_share[CB_CROWD_STAGE_WEIGHTS] = 1.0;
    out->checksum = cb_fnv1a64(CB_FNV1A64_BASIS, weights, nodes * characters * sizeof(float));
    cb_jobs_destroy(jobs);
    free(params), free(weights);
    cb_solver_destroy(solver);
    return CB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* W1-plain: W1's work without the crowd runtime                                              */

/* The same characters and clips as W1 (walk_f, run_f, walk_fr at weights 0.5, 0.3, 0.2, one
 * normalized phase per character advancing at the weight-averaged duration, as W1's sync group
 * does), each frame a cb_pose_blend_job and a cb_ltm_job per character into its outputs (4x4
 * matrices unless --layout says otherwise),
 * over the characters in chunks of 64 (the crowd's batch size) on a pool of the same size. No
 * parameters, weights, root motion or graph: the difference to W1 is the crowd runtime. */
typedef struct plain {
    const cb_skeleton *skeleton;
    const cb_clip *clips[3];
    float weights[3];
    float phase_step; /* per frame */
    float *phases;
    float *matrices;
    cb_matrix_layout layout;
    cb_xform_group *poses;                     /* one per thread */
    size_t joints, groups, pose_bytes, floats; /* floats: per character */
} plain;

static void plain_chunk(void *user, size_t begin, size_t end, uint32_t thread_index)
{
    plain *p = user;
    cb_xform_group *pose = (cb_xform_group *)((char *)p->poses + thread_index * p->pose_bytes);
    for (size_t i = begin; i < end; ++i) {
        float t = p->phases[i] + p->phase_step;
        t -= floorf(t);
        p->phases[i] = t;
        cb_blend_entry e[3];
        for (int k = 0; k < 3; ++k) {
            e[k] = (cb_blend_entry){p->clips[k], t, p->weights[k], CB_BLEND_MODE_NORMAL, {0}};
        }
        cb_pose_blend_job bj = {p->skeleton, {e, 3}, 0.0f, {pose, p->groups}};
        cb_pose_blend_job_run(&bj, NULL);
        cb_ltm_job lj = {.skeleton = p->skeleton,
                         .local = {pose, p->groups},
                         .model_layout = p->layout,
                         .model = {p->matrices + i * p->floats, p->floats}};
        cb_ltm_job_run(&lj, NULL);
    }
}

/* The plain loop's clips, weights and sizes for the embedded set's skeleton, and its buffers
 * for `characters` characters and `pool` threads; false when out of memory (buffers left to
 * free). */
static bool plain_setup(const cb_embedded *set, cb_matrix_layout layout, uint32_t characters,
                        uint32_t pool, plain *p)
{
    *p = (plain){
        .skeleton = cb_embedded_skeleton(set), .weights = {0.5f, 0.3f, 0.2f}, .layout = layout};
    static const char *const names[3] = {"walk_f", "run_f", "walk_fr"};
    float duration = 0.0f;
    for (int k = 0; k < 3; ++k) {
        p->clips[k] = cb_embedded_find_clip(set, names[k]);
        duration += p->weights[k] * cb_clip_duration(p->clips[k]);
    }
    const float dt = 1.0f / 60.0f;
    p->phase_step = dt / duration;
    p->joints = cb_skeleton_joint_count(p->skeleton);
    p->groups = cb_skeleton_group_count(p->skeleton);
    p->pose_bytes = cb_skeleton_pose_bytes(p->skeleton);
    p->floats = p->joints * cb_ltm_matrix_floats(layout);
    p->phases = malloc(characters * sizeof(float));
    p->matrices = malloc((size_t)characters * p->floats * sizeof(float));
    p->poses = aligned_alloc(cb_simd_group_align(), p->pose_bytes * pool);
    return p->phases != NULL && p->matrices != NULL && p->poses != NULL;
}

/* The plain loop timed as the crowd is: random phases, three warm-up frames, then `runs` runs
 * of `frames` frames, each frame's wall and CPU time taken (frame_ns: room for 2 x frames). */
static void plain_time(cb_jobs *jobs, plain *p, uint32_t characters, uint32_t runs, uint32_t frames,
                       double *frame_ns, cb_workload_result *out)
{
    double run_ns[CB_WORKLOAD_MAX_RUNS], run_cpu_ns[CB_WORKLOAD_MAX_RUNS];
    cb_prng rng = cb_prng_seed(7);
    for (uint32_t i = 0; i < characters; ++i) {
        p->phases[i] = (float)cb_prng_double(&rng);
    }
    for (int f = 0; f < 3; ++f) {
        cb_jobs_parallel_for(jobs, characters, 64, plain_chunk, p);
    }
    for (uint32_t run = 0; run < runs; ++run) {
        for (uint32_t f = 0; f < frames; ++f) {
            uint64_t c0 = cb_thread_cpu_ns(), t0 = cb_now_ns();
            cb_jobs_parallel_for(jobs, characters, 64, plain_chunk, p);
            frame_ns[f] = (double)(cb_now_ns() - t0);
            frame_ns[frames + f] = (double)(cb_thread_cpu_ns() - c0);
        }
        run_ns[run] = run_median(frame_ns, frames);
        run_cpu_ns[run] = run_median(frame_ns + frames, frames);
    }
    memset(out, 0, sizeof *out);
    set_timing(out, "W1-plain", cb_jobs_thread_count(jobs), characters, run_ns, runs, frames);
    out->cpu_ns_per_character = cb_median(run_cpu_ns, runs) / characters;
    out->checksum =
        cb_fnv1a64(CB_FNV1A64_BASIS, p->matrices, (size_t)characters * p->floats * sizeof(float));
}

static cb_result run_plain_workload(uint32_t threads, double scale, uint32_t runs,
                                    cb_matrix_layout layout, cb_workload_result *out)
{
    const uint32_t characters = (uint32_t)fmax(1.0, defs[0].characters * scale);
    const uint32_t frames = defs[0].frames;
    cb_embedded *set = NULL;
    cb_jobs *jobs = NULL;
    cb_jobs_desc jd = {.thread_count = threads};
    if (cb_embedded_create(NULL, &set, NULL) != CB_OK ||
        cb_jobs_create(&jd, &jobs, NULL) != CB_OK) {
        cb_embedded_destroy(set);
        return CB_ERR_OUT_OF_MEMORY;
    }
    plain p;
    bool ok = plain_setup(set, layout, characters, cb_jobs_thread_count(jobs), &p);
    double *frame_ns = malloc(2 * frames * sizeof *frame_ns);
    cb_result r = CB_ERR_OUT_OF_MEMORY;
    if (ok && frame_ns != NULL) {
        plain_time(jobs, &p, characters, runs, frames, frame_ns, out);
        r = CB_OK;
    }
    free(frame_ns), free(p.phases), free(p.matrices), free(p.poses);
    cb_jobs_destroy(jobs);
    cb_embedded_destroy(set);
    return r;
}

/* ------------------------------------------------------------------------------------------ */
/* W0: the machine's own ceiling                                                              */

/* 10,000 "characters" of pure arithmetic: each a dependent chain of 1,000 multiply-adds on
 * registers (about as long as a W2 character on this machine, and touching no memory), over the
 * pool in chunks of 64 like the crowd. A crowd workload cannot scale better than W0 at the same
 * moment: on an idle 2-core machine W0 gives 2.0x; when other processes hold the cores it
 * gives what they leave, and a W2 figure must be read against it. */
static void w0_chunk(void *user, size_t begin, size_t end, uint32_t thread_index)
{
    (void)thread_index;
    double *sink = user;
    for (size_t i = begin; i < end; ++i) {
        double a = 1.0 + 1e-9 * (double)i;
        for (int k = 0; k < 1000; ++k) {
            a = a * 0.9999999 + 1e-7;
        }
        sink[i] = a;
    }
}

static cb_result run_control_workload(uint32_t threads, double scale, uint32_t runs,
                                      cb_workload_result *out)
{
    const uint32_t characters = (uint32_t)fmax(64.0, 10000 * scale), frames = 60;
    cb_jobs *jobs = NULL;
    cb_jobs_desc jd = {.thread_count = threads};
    double *sink = malloc(characters * sizeof *sink);
    double frame_ns[60], run_ns[CB_WORKLOAD_MAX_RUNS];
    if (sink == NULL || cb_jobs_create(&jd, &jobs, NULL) != CB_OK) {
        free(sink);
        return CB_ERR_OUT_OF_MEMORY;
    }
    for (int f = 0; f < 3; ++f) {
        cb_jobs_parallel_for(jobs, characters, 64, w0_chunk, sink);
    }
    for (uint32_t run = 0; run < runs; ++run) {
        for (uint32_t f = 0; f < frames; ++f) {
            uint64_t t0 = cb_now_ns();
            cb_jobs_parallel_for(jobs, characters, 64, w0_chunk, sink);
            frame_ns[f] = (double)(cb_now_ns() - t0);
        }
        run_ns[run] = run_median(frame_ns, frames);
    }
    memset(out, 0, sizeof *out);
    set_timing(out, "W0 (control)", cb_jobs_thread_count(jobs), characters, run_ns, runs, frames);
    out->checksum = cb_fnv1a64(CB_FNV1A64_BASIS, sink, characters * sizeof *sink);
    cb_jobs_destroy(jobs);
    free(sink);
    return CB_OK;
}

/* ------------------------------------------------------------------------------------------ */

/* Is the n bytes at p a workload's name: the control W0, the solvers' W4, or a crowd's? */
static bool workload_name(const char *p, size_t n)
{
    bool known = n == 2 && (strncmp(p, "W0", 2) == 0 || strncmp(p, "W4", 2) == 0);
    for (size_t d = 0; !known && d < sizeof defs / sizeof defs[0]; ++d) {
        known = strlen(defs[d].name) == n && strncmp(p, defs[d].name, n) == 0;
    }
    return known;
}

bool cb_workloads_find_unknown(const char *which, char *bad, size_t size)
{
    for (const char *p = which;; ++p) {
        size_t n = strcspn(p, ",");
        if (!workload_name(p, n)) {
            snprintf(bad, size, "%.*s", (int)n, p);
            return true;
        }
        p += n;
        if (*p == '\0') {
            return false;
        }
    }
}

size_t cb_workloads_run(const char *which, uint32_t all_threads, double scale, uint32_t runs,
                        cb_matrix_layout layout, cb_workload_result *results, size_t max_results,
                        void (*on_result)(const cb_workload_result *, void *), void *user)
{
    runs = runs < 1 ? 1 : runs > CB_WORKLOAD_MAX_RUNS ? CB_WORKLOAD_MAX_RUNS : runs;
    size_t n = 0;
    uint32_t variants[2] = {1, all_threads};
    int variant_count = all_threads > 1 ? 2 : 1;
    for (int v = 0; strstr(which, "W0") != NULL && v < variant_count && n < max_results; ++v) {
        if (run_control_workload(variants[v], scale, runs, &results[n]) == CB_OK) {
            on_result(&results[n], user);
            n++;
        }
    }
    for (size_t d = 0; d < sizeof defs / sizeof defs[0]; ++d) {
        if (strstr(which, defs[d].name) == NULL) {
            continue;
        }
        for (int v = 0; v < variant_count && n < max_results; ++v) {
            if (run_crowd_workload(&defs[d], variants[v], scale, runs, layout, &results[n]) ==
                CB_OK) {
                on_result(&results[n], user);
                n++;
            }
        }
        /* W1's plain loop right after it, at the same thread counts. */
        for (int v = 0; d == 0 && v < variant_count && n < max_results; ++v) {
            if (run_plain_workload(variants[v], scale, runs, layout, &results[n]) == CB_OK) {
                on_result(&results[n], user);
                n++;
            }
        }
    }
    if (strstr(which, "W4") != NULL) {
        for (int k = 1; k < _CB_SOLVER_KIND_COUNT; ++k) {
            for (int v = 0; v < variant_count && n < max_results; ++v) {
                if (run_solver_workload((cb_solver_kind)k, variants[v], scale, runs, &results[n]) ==
                    CB_OK) {
                    on_result(&results[n], user);
                    n++;
                }
            }
        }
    }
    return n;
}
