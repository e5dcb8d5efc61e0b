/* One clip from one source animation: the rate is chosen by measuring. Each candidate grid of N
 * intervals is sampled from the exact source, built into a clip exactly as the runtime stores it
 * (cb_clip_create: root-motion extraction, hemisphere continuity, float frames), and compared
 * with the source through the runtime's own sampling job at every source key, every stored frame
 * and a quarter, half and three quarters between each pair of those times; the first candidate
 * within the bound is kept. So the reported error is the error a crowd sees, not an estimate. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "import/import_impl.h"

/* Rates tried after the source's own grid, in Hz: the common animation rates and their
 * multiples, up to where a clip of a few seconds reaches CB_CLIP_MAX_FRAMES. */
static const double ladder_hz[] = {15,  20,  24,   30,   40,   48,   60,   80,
                                   96,  120, 160,  192,  240,  320,  384,  480,
                                   640, 960, 1280, 1920, 2560, 3840, 5120, 7680};

/* ---- candidates -------------------------------------------------------------------------- */

/* The smallest N (1..max) whose grid t = k D / N holds every key time; 0 when none does. */
static uint32_t key_grid(const double *keys, size_t count, double d, uint32_t max)
{
    for (uint32_t n = 1; n <= max; ++n) {
        bool on = true;
        for (size_t k = 0; k < count && on; ++k) {
            double x = keys[k] * n / d;
            on = fabs(x - floor(x + 0.5)) <= 1e-3;
        }
        if (on) {
            return n;
        }
    }
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Candidate interval counts, ascending and unique; returns the count. */
static size_t candidates(uint32_t grid, double d, uint32_t *out, size_t max)
{
    size_t n = 0;
    const uint32_t limit = CB_CLIP_MAX_FRAMES - 1;
    for (uint32_t m = 1; grid > 0 && m <= 64 && (uint64_t)grid * m <= limit && n < max; ++m) {
        out[n++] = grid * m;
    }
    for (size_t i = 0; i < sizeof ladder_hz / sizeof ladder_hz[0] && n < max; ++i) {
        double x = ceil(d * ladder_hz[i] - 1e-9);
        if (x <= limit) {
            out[n++] = x < 1.0 ? 1u : (uint32_t)x;
        }
    }
    qsort(out, n, sizeof *out, cmp_u32);
    size_t u = 0;
    for (size_t i = 0; i < n; ++i) {
        if (u == 0 || out[i] != out[u - 1]) {
            out[u++] = out[i];
        }
    }
    return u;
}

/* ---- building a candidate ---------------------------------------------------------------- */

typedef struct tracks {
    float *times;  /* N + 1 */
    float *values; /* joints x 10 x (N + 1): t, q, s per joint, key-major within a channel */
    cb_clip_track *tracks;
} tracks;

static void tracks_free(tracks *t)
{
    free(t->times);
    free(t->values);
    free(t->tracks);
}

/* Samples the source on the grid of n intervals. */
static cb_result sample_grid(const imp_clip_job *job, float dur, uint32_t n, tracks *t,
                             cb_error *err)
{
    const size_t joints = job->rig->joint_count, keys = (size_t)n + 1;
    t->times = malloc(keys * sizeof(float));
    t->values = malloc(joints * 10 * keys * sizeof(float));
    t->tracks = malloc(joints * 3 * sizeof(cb_clip_track));
    if (t->times == NULL || t->values == NULL || t->tracks == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "import: %zu keys", joints * keys);
    }
    for (size_t f = 0; f < keys; ++f) {
        /* The clip evaluates its tracks at f * duration / N; the keys sit there (the last one
         * exactly at the duration). */
        double tau = f == n ? (double)dur : (double)dur * (double)f / n;
        t->times[f] = f == n ? dur : (float)tau;
        for (size_t j = 0; j < joints; ++j) {
            dxf x = imp_joint_local(job->scene, job->rig, job->anim, j, tau);
            float *base = t->values + j * 10 * keys;
            for (int c = 0; c < 3; ++c) {
                base[f * 3 + (size_t)c] = (float)x.t[c];
                /* A scale within 1e-6 of 1 is 1: decomposed node matrices and exporters leave
                 * such residues, and storing them would cost every joint of every frame 12
                 * bytes more (the measured error includes what this drops). */
                base[3 * keys + f * 3 + (size_t)c] =
                    fabs(x.s[c] - 1.0) < 1e-6 ? 1.0f : (float)x.s[c];
            }
            for (int c = 0; c < 4; ++c) {
                base[6 * keys + f * 4 + (size_t)c] = (float)x.q[c];
            }
        }
    }
    for (size_t j = 0; j < joints; ++j) {
        float *base = t->values + j * 10 * keys;
        t->tracks[j * 3 + 0] = (cb_clip_track){.joint = (uint32_t)j,
                                               .channel = CB_CHANNEL_TRANSLATION,
                                               .key_count = keys,
                                               .times = t->times,
                                               .values = base};
        t->tracks[j * 3 + 1] = (cb_clip_track){.joint = (uint32_t)j,
                                               .channel = CB_CHANNEL_ROTATION,
                                               .key_count = keys,
                                               .times = t->times,
                                               .values = base + 6 * keys};
        t->tracks[j * 3 + 2] = (cb_clip_track){.joint = (uint32_t)j,
                                               .channel = CB_CHANNEL_SCALE,
                                               .key_count = keys,
                                               .times = t->times,
                                               .values = base + 3 * keys};
    }
    return CB_OK;
}

/* ---- measuring --------------------------------------------------------------------------- */

/* The stored clip's model pose at source time tau, root motion put back:
 * root = origin * delta(0, u) * pose(u). The local pose is the one the crowd plays: the clip
 * alone at weight 1 in the blend job (the graph's runtime plays every clip through the blend,
 * src/graph/runtime/batch.c), whose compressed sample differs from cb_pose_sample_job's by
 * rounding between keys (crowdblend/pose.h). */
static void clip_model_pose(const cb_clip *clip, const cb_skeleton *skeleton, const imp_rig *rig,
                            uint32_t root_joint, float dur, double tau, cb_xform_group *pose,
                            cb_xform *local, dxf *model)
{
    float u = (float)(tau / dur);
    size_t joints = rig->joint_count, groups = cb_simd_group_count(joints);
    const cb_blend_entry entry = {.clip = clip, .time = u, .weight = 1.0f};
    cb_pose_blend_job job = {.skeleton = skeleton, .entries = {&entry, 1}, .out = {pose, groups}};
    cb_pose_blend_job_run(&job, NULL);
    cb_xform_unpack(pose, groups, (cb_xform_span){local, joints});
    cb_clip_root_motion rm = cb_clip_query_root_motion(clip);
    cb_root_delta d = {{0, 0, 0}, 0};
    cb_clip_root_delta(clip, 0.0f, u, &d);
    /* origin * delta, a rigid motion on the ground (y carried along). */
    double oy = rm.origin_yaw, c = cos(oy), s = sin(oy);
    dxf g = imp_identity();
    g.t[0] = rm.origin[0] + c * d.translation[0] + s * d.translation[2];
    g.t[1] = rm.origin[1] + d.translation[1];
    g.t[2] = rm.origin[2] - s * d.translation[0] + c * d.translation[2];
    double yaw = oy + d.yaw;
    g.q[1] = sin(0.5 * yaw);
    g.q[3] = cos(0.5 * yaw);
    for (size_t j = 0; j < joints; ++j) {
        dxf x;
        for (int k = 0; k < 3; ++k) {
            x.t[k] = local[j].translation[k];
            x.s[k] = local[j].scale[k];
        }
        for (int k = 0; k < 4; ++k) {
            x.q[k] = local[j].rotation[k];
        }
        if (j == root_joint && rm.mode != CB_ROOT_MOTION_NONE) {
            x = imp_compose(&g, &x);
        }
        model[j] = rig->parents[j] < 0 ? x : imp_compose(&model[rig->parents[j]], &x);
    }
}

typedef struct measure {
    double max;   /* largest joint distance */
    double at_s;  /* where */
    size_t joint; /* which */
} measure;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Uniform frames cannot jump: across a STEP key the stored clip ramps over the frame interval
 * around it (the one before it when the key is on the grid, the one holding it when it is not).
 * Those intervals are the format's step itself, not a sampling error, and are left out of the
 * measure: every time within one frame interval of a STEP key (docs/import.md). */
static bool in_step_ramp(double tau, const double *steps, size_t count, double h)
{
    for (size_t i = 0; i < count; ++i) {
        if (fabs(tau - steps[i]) < h) {
            return true;
        }
    }
    return false;
}

/* Measures until the error exceeds stop_above (INFINITY: everywhere); a failing candidate is
 * known as soon as one joint at one time is out of bounds. */
static cb_result measure_clip(const imp_clip_job *job, const cb_clip *clip, uint32_t root_joint,
                              float dur, const double *keys, size_t key_count, double skip_after,
                              const double *steps, size_t step_count, double stop_above,
                              measure *out, cb_error *err)
{
    const uint32_t n = cb_clip_frame_count(clip) - 1;
    const size_t joints = job->rig->joint_count;
    double *base = malloc((key_count + n + 1) * sizeof *base);
    dxf *src = malloc(joints * sizeof *src), *got = malloc(joints * sizeof *got);
    cb_xform *local = malloc(joints * sizeof *local);
    cb_xform_group *pose =
        aligned_alloc(cb_simd_group_align(),
                      imp_round_up(cb_skeleton_pose_bytes(job->skeleton), cb_simd_group_align()));
    cb_result r = CB_OK;
    if (base == NULL || src == NULL || got == NULL || pose == NULL || local == NULL) {
        r = cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "import: measuring");
        goto done;
    }
    size_t m = 0;
    for (size_t k = 0; k < key_count; ++k) {
        base[m++] = keys[k];
    }
    for (uint32_t f = 0; f <= n; ++f) {
        base[m++] = f == n ? (double)dur : (double)dur * f / n;
    }
    qsort(base, m, sizeof *base, cmp_double);
    *out = (measure){0.0, 0.0, 0};
    for (size_t i = 0; i < m && out->max <= stop_above; ++i) {
        for (int q = 0; q < 4; ++q) {
            if (q > 0 && (i + 1 == m || base[i + 1] - base[i] < 1e-9)) {
                break;
            }
            double tau = q == 0 ? base[i] : base[i] + (base[i + 1] - base[i]) * q / 4.0;
            if (tau > skip_after || in_step_ramp(tau, steps, step_count, dur / (double)n)) {
                continue;
            }
            imp_model_pose(job->scene, job->rig, job->anim, tau, src);
            clip_model_pose(clip, job->skeleton, job->rig, root_joint, dur, tau, pose, local, got);
            for (size_t j = 0; j < joints; ++j) {
                double dx = src[j].t[0] - got[j].t[0], dy = src[j].t[1] - got[j].t[1],
                       dz = src[j].t[2] - got[j].t[2];
                double e = sqrt(dx * dx + dy * dy + dz * dz);
                if (!(e <= out->max)) {
                    *out = (measure){isfinite(e) ? e : INFINITY, tau, j};
                }
            }
        }
    }
done:
    free(base);
    free(src);
    free(got);
    free(local);
    free(pose);
    return r;
}

/* ---- markers ----------------------------------------------------------------------------- */

enum { MAX_MARKERS = 512 };

static float marker_time(double t, float dur, bool looping)
{
    float x = (float)t;
    x = x > dur ? dur : x < 0.0f ? 0.0f : x;
    return looping && x >= dur ? 0.0f : x;
}

/* Sidecar markers, then detected plants and lifts. */
static size_t collect_markers(const imp_clip_job *job, float dur, bool looping,
                              cb_clip_marker_desc *out, double *ground_speed)
{
    size_t n = 0;
    for (size_t i = 0; i < job->marker_count && n < MAX_MARKERS; ++i) {
        out[n++] = job->markers[i];
    }
    *ground_speed = 0.0;
    if (job->desc->foot_left == NULL || job->desc->foot_right == NULL) {
        return n;
    }
    const char *feet[2] = {job->desc->foot_left, job->desc->foot_right};
    static const char *const plant[2] = {"foot_plant_l", "foot_plant_r"};
    static const char *const lift[2] = {"foot_lift_l", "foot_lift_r"};
    for (int side = 0; side < 2; ++side) {
        size_t foot = 0;
        for (size_t j = 0; j < job->rig->joint_count; ++j) {
            foot = strcmp(job->rig->names[j], feet[side]) == 0 ? j : foot;
        }
        imp_contact c[64];
        double speed = 0.0;
        size_t k =
            imp_detect_contacts(job->scene, job->rig, job->anim, foot, looping, c, 64, &speed);
        *ground_speed = fmax(*ground_speed, speed);
        for (size_t i = 0; i < k && n + 2 <= MAX_MARKERS; ++i) {
            out[n++] =
                (cb_clip_marker_desc){plant[side], marker_time(c[i].start_s, dur, looping), false};
            if (c[i].end_s >= 0.0) {
                out[n++] =
                    (cb_clip_marker_desc){lift[side], marker_time(c[i].end_s, dur, looping), true};
            }
        }
    }
    return n;
}

/* ---- the clip ---------------------------------------------------------------------------- */

/* The root-motion mode: as asked, or XZ_YAW unless the joint's +Z axis comes within 30
 * degrees of vertical somewhere (there its heading is not defined, and a yaw track would jump). */
static cb_root_motion choose_mode(const imp_clip_job *job, uint32_t root, const double *keys,
                                  size_t key_count)
{
    if (job->desc->root_motion != _CB_ROOT_MOTION_DEFAULT) {
        return job->desc->root_motion;
    }
    dxf *model = malloc(job->rig->joint_count * sizeof *model);
    double worst = 1.0;
    for (size_t k = 0; model != NULL && k < key_count; ++k) {
        imp_model_pose(job->scene, job->rig, job->anim, keys[k], model);
        double len = 0.0;
        imp_heading(model[root].q, &len);
        worst = fmin(worst, len);
    }
    free(model);
    return worst < 0.5 ? CB_ROOT_MOTION_XZ : CB_ROOT_MOTION_XZ_YAW;
}

static cb_result root_joint_of(const imp_clip_job *job, uint32_t *root, cb_error *err)
{
    *root = 0;
    const char *name = job->desc->root_motion_joint;
    if (name == NULL) {
        return CB_OK;
    }
    for (size_t j = 0; j < job->rig->joint_count; ++j) {
        if (strcmp(job->rig->names[j], name) == 0) {
            if (job->rig->parents[j] >= 0) {
                return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                                    "import: --root-motion-joint \"%s\" has a parent joint; root "
                                    "motion comes from a root",
                                    name);
            }
            *root = (uint32_t)j;
            return CB_OK;
        }
    }
    return cb_error_set(err, CB_ERR_NOT_FOUND, "import: --root-motion-joint \"%s\" is not a joint",
                        name);
}

/* What one clip's fit works out about its source once (fit_begin), and where its search
 * stands. */
typedef struct clip_fit {
    double d;  /* duration, s (1/30 s for a clip of one key) */
    float dur; /* the same in float, as the clip stores it */
    uint32_t root;
    double *keys, *steps; /* the source's key times; those of its STEP keys */
    size_t key_count, step_count;
    cb_root_motion mode;
    double seam; /* distance between the first and last pose */
    bool looping;
    cb_clip_marker_desc *markers;
    size_t marker_count;
    double ground_speed;
    uint32_t grid;      /* the keys' grid in intervals (0: uneven keys) */
    uint32_t cand[128]; /* interval counts to try, fewest first */
    size_t cand_count;
    double skip_after; /* measured up to here: a forced loop's seam interval is not */
    cb_clip *best;     /* the first candidate within the bound, else the last tried */
    measure best_m;
    uint32_t tried;
    double compress_s;
} clip_fit;

/* The interval counts to try. STEP keys: the stored clip ramps over the interval before each
 * jump, so the grid is kept at four or more frames per key interval, and the ramp at a quarter
 * of it. */
static void fit_candidates(clip_fit *f)
{
    f->cand_count = candidates(f->grid, f->d, f->cand, 128);
    if (f->step_count == 0) {
        return;
    }
    uint32_t least = 4 * (f->grid > 0 ? f->grid : (uint32_t)f->key_count);
    size_t k = 0;
    for (size_t i = 0; i < f->cand_count; ++i) {
        if (f->cand[i] >= least || i + 1 == f->cand_count) {
            f->cand[k++] = f->cand[i];
        }
    }
    f->cand_count = k;
}

static cb_result fit_begin(const imp_clip_job *job, clip_fit *f, cb_error *err)
{
    const imp_anim *anim = job->anim;
    *f = (clip_fit){.d = anim->duration_s > 1e-6 ? anim->duration_s : 1.0 / 30.0,
                    .skip_after = INFINITY,
                    .best_m = {INFINITY, 0, 0}};
    f->dur = (float)f->d;
    cb_result r = root_joint_of(job, &f->root, err);
    if (r != CB_OK) {
        return r;
    }
    f->key_count = imp_key_times(job->scene, job->rig, anim, &f->keys);
    f->step_count = imp_step_times(job->scene, job->rig, anim, &f->steps);
    f->markers = malloc(MAX_MARKERS * sizeof *f->markers);
    if (f->keys == NULL || f->markers == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "import: %s",
                            f->keys == NULL ? "key times" : "markers");
    }
    f->mode = choose_mode(job, f->root, f->keys, f->key_count);
    f->seam = imp_seam(job->scene, job->rig, anim, f->mode, f->root);
    const cb_import_loop loop = job->desc->loop;
    f->looping =
        loop == CB_IMPORT_LOOP_FORCE || (loop != CB_IMPORT_LOOP_NEVER && f->seam <= job->bound_m);
    f->marker_count = collect_markers(job, f->dur, f->looping, f->markers, &f->ground_speed);
    f->grid = key_grid(f->keys, f->key_count, f->d, CB_CLIP_MAX_FRAMES - 1);
    fit_candidates(f);
    /* A forced loop with a seam: the last interval blends into the start, away from the
     * source; it is reported as the seam, not measured. */
    if (f->looping && f->seam > job->bound_m) {
        f->skip_after = f->d - f->d / f->cand[f->cand_count - 1];
    }
    return CB_OK;
}

static void fit_end(clip_fit *f)
{
    cb_clip_destroy(f->best);
    free(f->keys);
    free(f->steps);
    free(f->markers);
}

/* The source sampled at n intervals, as a clip; compressed to `compression` unless NULL. */
static cb_result fit_sample(const imp_clip_job *job, const clip_fit *f, uint32_t n,
                            const cb_clip_compression *compression, cb_clip **out, cb_error *err)
{
    tracks t = {0};
    cb_result r = sample_grid(job, f->dur, n, &t, err);
    if (r == CB_OK) {
        cb_clip_desc cd = {
            .name = job->anim->name,
            .skeleton = job->skeleton,
            .duration_s = f->dur,
            .sample_rate_hz = (float)(n / (double)f->dur),
            .tracks = t.tracks,
            .track_count = job->rig->joint_count * 3,
            .wrap = f->looping ? CB_CLIP_WRAP_LOOP : CB_CLIP_WRAP_CLAMP,
            .root_motion = f->mode,
            .root_joint = f->root,
            .markers = f->markers,
            .marker_count = f->marker_count,
            .compression = compression,
        };
        cb_error inner = {0};
        cb_result cr = cb_clip_create(&cd, out, &inner);
        if (cr != CB_OK) {
            r = cb_error_set(err, cr, "import: %s", inner.message);
        }
    }
    tracks_free(&t);
    return r;
}

static cb_result fit_measure(const imp_clip_job *job, const clip_fit *f, const cb_clip *clip,
                             double stop_above, measure *m, cb_error *err)
{
    return measure_clip(job, clip, f->root, f->dur, f->keys, f->key_count, f->skip_after, f->steps,
                        f->step_count, stop_above, m, err);
}

/* Diagnostics (docs/import.md): every candidate, and where it failed. */
static void trace_candidate(const imp_clip_job *job, const clip_fit *f, uint32_t n,
                            const measure *m)
{
    if (getenv("CB_IMPORT_TRACE") != NULL) {
        fprintf(stderr, "import trace: %s: %u intervals (%.2f Hz): %s%.3g m at %.6f s, %s\n",
                job->anim->name, n, n / f->d, m->max > job->bound_m ? ">= " : "", m->max, m->at_s,
                job->rig->names[m->joint]);
    }
}

/* The candidates, fewest frames first, until one holds the bound (the last is measured
 * everywhere, so its error is known when none does). */
static cb_result fit_search(const imp_clip_job *job, clip_fit *f, cb_error *err)
{
    cb_result r = CB_OK;
    for (size_t i = 0; i < f->cand_count && r == CB_OK; ++i) {
        cb_clip *clip = NULL;
        r = fit_sample(job, f, f->cand[i], NULL, &clip, err);
        measure m = {INFINITY, 0, 0};
        if (r == CB_OK) {
            ++f->tried;
            if (f->looping && f->seam > job->bound_m) {
                f->skip_after = f->d - f->d / f->cand[i];
            }
            bool last = i + 1 == f->cand_count;
            r = fit_measure(job, f, clip, last ? INFINITY : job->bound_m, &m, err);
        }
        trace_candidate(job, f, f->cand[i], &m);
        cb_clip_destroy(f->best);
        f->best = clip;
        f->best_m = m;
        if (r == CB_OK && m.max <= job->bound_m) {
            break;
        }
    }
    return r;
}

/* The bound the stored clip is held to: the import's; plus the compression's when compressed
 * to a bound given apart (the two errors add at worst). */
static double total_bound(const imp_clip_job *job, bool compressed)
{
    return job->bound_m + (compressed && !job->compress_within_bound ? job->compress_bound_m : 0.0);
}

/* How often the compression's bound is halved, at most, to hold the import bound (1/64 of it). */
enum { COMPRESS_TRIES = 7 };

/* The chosen rate again, compressed at creation (cb_clip_desc.compression, the library's one
 * path from frames to a compressed clip): what the crowd will play is that clip sampling its
 * compressed keys in place (a pack loads it so by default), measured again, everywhere, through
 * the blend as the crowd plays it (clip_model_pose). The
 * compressor's bound is against the rate's frames, which are themselves up to the import bound
 * from the source; by default the result must still be within the import bound of the source,
 * so where it is not the clip is compressed again at half the compression's bound (the shell
 * stays). The time reported is the last compression's. */
static cb_result fit_compress(const imp_clip_job *job, clip_fit *f, const cb_cclip **packed,
                              cb_error *err)
{
    const uint32_t intervals = cb_clip_frame_count(f->best) - 1;
    cb_clip_compression z = {(float)job->compress_bound_m, (float)job->compress_shell_m};
    for (int attempt = 0;; ++attempt) {
        struct timespec t0, t1;
        timespec_get(&t0, TIME_UTC);
        cb_clip *clip = NULL;
        cb_result r = fit_sample(job, f, intervals, &z, &clip, err);
        if (r != CB_OK) {
            return r;
        }
        timespec_get(&t1, TIME_UTC);
        f->compress_s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        cb_clip_destroy(f->best);
        f->best = clip;
        *packed = cb_clip_compressed_form(clip);
        r = fit_measure(job, f, f->best, INFINITY, &f->best_m, err);
        if (r != CB_OK || !job->compress_within_bound || f->best_m.max <= job->bound_m ||
            attempt + 1 == COMPRESS_TRIES) {
            return r;
        }
        z.max_error_m *= 0.5f;
    }
}

static void fit_report(const imp_clip_job *job, const clip_fit *f, const cb_cclip *packed,
                       bool raw_met, cb_import_clip_report *rep)
{
    const double bound = total_bound(job, packed != NULL);
    const uint32_t frames = cb_clip_frame_count(f->best);
    const size_t stride = cb_clip_frame_stride(f->best);
    const size_t root_bytes = f->mode != CB_ROOT_MOTION_NONE ? (size_t)frames * 16 : 0;
    *rep = (cb_import_clip_report){
        .name = cb_clip_name(f->best),
        .duration_s = f->dur,
        .source_keys = (uint32_t)f->key_count,
        .source_grid_hz = f->grid > 0 ? (float)(f->grid / f->d) : 0.0f,
        .source_even = f->grid > 0 && f->grid + 1 == f->key_count,
        .frames = frames,
        .rate_hz = cb_clip_sample_rate(f->best),
        .pack_bytes = (size_t)frames * job->rig->joint_count * stride * 4 + root_bytes,
        .runtime_bytes = cb_clip_bytes(f->best),
        .max_error_m = (float)f->best_m.max,
        .error_bound_m = (float)bound,
        .bound_met = raw_met && f->best_m.max <= bound,
        .candidates = f->tried,
        .looping = f->looping,
        .seam_m = (float)f->seam,
        .root_motion = f->mode,
        .root_speed_mps = cb_clip_query_root_motion(f->best).speed_mps,
        .markers = cb_clip_marker_count(f->best),
        .ground_speed_mps = (float)f->ground_speed,
    };
    if (packed != NULL) {
        cb_cclip_info ci = cb_cclip_query_info(packed);
        rep->compressed = true;
        rep->compressed_bytes = ci.stream_bytes;
        rep->source_bytes = ci.source_bytes;
        rep->compressed_keys = ci.keys;
        rep->compression_error_m = ci.measured_error_m;
        rep->compression_bound_m = ci.max_error_m;
        rep->compress_ms = (float)(f->compress_s * 1e3);
        /* The root track is in the stored form when compressed with it (pack encoding 2). */
        rep->pack_bytes =
            4 + (ci.stream_bytes + 3) / 4 * 4 + (ci.root_track_bytes == 0 ? root_bytes : 0);
    }
}

static void fit_warning(const imp_clip_job *job, const clip_fit *f, bool raw_met,
                        const cb_import_clip_report *rep, char *warning, size_t warning_size)
{
    const char *name = job->anim->name;
    if (raw_met && !rep->bound_met && job->compress_within_bound) {
        snprintf(warning, warning_size,
                 "%s: the compressed clip is %.3g m from the source (bound %.3g m; compressed to "
                 "%.3g m on the shell)",
                 name, f->best_m.max, job->bound_m, (double)rep->compression_bound_m);
    } else if (raw_met && !rep->bound_met) {
        snprintf(warning, warning_size,
                 "%s: the compressed clip is %.3g m from the source (bound %.3g m: %.3g import, "
                 "%.3g compression)",
                 name, f->best_m.max, total_bound(job, rep->compressed), job->bound_m,
                 job->compress_bound_m);
    } else if (!rep->bound_met) {
        snprintf(warning, warning_size,
                 "%s: no rate up to %u frames holds %.3g m: kept %u frames, max error %.3g m "
                 "(joint \"%s\" at %.4f s)",
                 name, CB_CLIP_MAX_FRAMES, job->bound_m, rep->frames, f->best_m.max,
                 job->rig->names[f->best_m.joint], f->best_m.at_s);
    } else if (f->looping && f->seam > job->bound_m) {
        snprintf(warning, warning_size,
                 "%s: forced loop has a seam of %.3g m (bound %.3g m): the last %.4f s blend back "
                 "to the start",
                 name, f->seam, job->bound_m, f->d / (rep->frames - 1));
    }
}

cb_result imp_clip_build(const imp_clip_job *job, cb_clip **out, const cb_cclip **packed,
                         cb_import_clip_report *rep, char *warning, size_t warning_size,
                         cb_error *err)
{
    warning[0] = '\0';
    *packed = NULL;
    clip_fit f;
    cb_result r = fit_begin(job, &f, err);
    if (r == CB_OK) {
        r = fit_search(job, &f, err);
    }
    const bool raw_met = f.best_m.max <= job->bound_m;
    if (r == CB_OK && job->compress) {
        r = fit_compress(job, &f, packed, err);
    }
    if (r == CB_OK) {
        fit_report(job, &f, *packed, raw_met, rep);
        fit_warning(job, &f, raw_met, rep, warning, warning_size);
        *out = f.best;
        f.best = NULL;
    } else {
        *packed = NULL; /* freed with f.best */
    }
    fit_end(&f);
    return r;
}
