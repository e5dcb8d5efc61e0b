/* `crowdblend animate TRAJECTORIES...`: crowds (the embedded set or a --pack) driven along
 * simulator trajectories, measured as issue 12 defines (planted-foot skate, pops), optionally
 * exported as glTF; `--summary` only describes the files (what the loader read, for scripts and
 * tests). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/animate.h"
#include "cli/cli.h"
#include "export/gltf.h"

enum { MAX_FILES = 64 };

/* A file name as a JSON string (escaped by jansson: paths may hold quotes or backslashes). */
static void print_json_string(const char *s)
{
    json_t *j = json_string(s);
    char *text = j != NULL ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
    fputs(text != NULL ? text : "null", stdout);
    free(text);
    json_decref(j);
}

/* ---- --summary ---------------------------------------------------------------------------- */

static void summary_json(const char *path, const cb_traj *t, bool last)
{
    printf("{\"file\": ");
    print_json_string(path);
    printf(", \"format\": \"%s\", \"agents\": %u, \"samples\": %zu, "
           "\"t_min\": %.17g, \"t_max\": %.17g, \"source_rate\": %.17g, \"per_agent\": [",
           cb_traj_format_name(t->format), t->agent_count, t->sample_count, t->t_min, t->t_max,
           t->source_rate);
    for (uint32_t a = 0; a < t->agent_count; ++a) {
        const cb_traj_agent *ag = &t->agents[a];
        double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (uint32_t i = 0; i < ag->count; ++i) {
            for (int k = 0; k < 3; ++k) {
                lo[k] = fmin(lo[k], t->p[3 * (ag->first + i) + k]);
                hi[k] = fmax(hi[k], t->p[3 * (ag->first + i) + k]);
            }
        }
        printf("%s{\"id\": %lld, \"samples\": %u, \"t_first\": %.17g, \"t_last\": %.17g, "
               "\"min\": [%.17g, %.17g, %.17g], \"max\": [%.17g, %.17g, %.17g]}",
               a ? ", " : "", (long long)ag->id, ag->count, cb_traj_agent_start(t, a),
               cb_traj_agent_end(t, a), lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]);
    }
    printf("]}%s\n", last ? "" : ",");
}

static void summary_text(const char *path, const cb_traj *t)
{
    printf("%s: %s, %u agents, %zu samples, t %.3f .. %.3f s", path, cb_traj_format_name(t->format),
           t->agent_count, t->sample_count, t->t_min, t->t_max);
    if (t->source_rate > 0.0) {
        printf(", %g fps", t->source_rate);
    }
    printf("\n");
}

/* ---- results ------------------------------------------------------------------------------ */

/* A skate statistic in cm/s; with no foot-frames its figures are null (there are none), not
 * zeros that would read as feet that do not slide. */
static void stat_json(const char *key, const cb_stat *s)
{
    printf("\"%s\": {\"count\": %llu, ", key, (unsigned long long)s->count);
    if (s->count == 0) {
        printf("\"mean\": null, \"median\": null, \"p95\": null, \"above_5\": null}");
        return;
    }
    printf("\"mean\": %.4f, \"median\": %.4f, \"p95\": %.4f, \"above_5\": %.5f}", cb_stat_mean(s),
           cb_stat_quantile(s, 0.5), cb_stat_quantile(s, 0.95), cb_stat_share_above(s));
}

/* The bands by speed or turn rate; the last has no upper edge ("to": null). */
static void bands_json(const char *key, const double *edges, int count, const cb_stat *const *s)
{
    printf(", \"%s\": [", key);
    for (int b = 0; b < count; ++b) {
        printf("%s{\"from\": %g, \"to\": ", b ? ", " : "", edges[b]);
        if (b + 1 < count) {
            printf("%g, ", edges[b + 1]);
        } else {
            printf("null, ");
        }
        stat_json("skate", s[b]);
        printf("}");
    }
    printf("]");
}

/* Why the skate is not measured (the feet unknown, or no plants marked), or NULL. */
static const char *skate_absent(const cb_animate_assets *assets)
{
    return assets->feet_missing != NULL ? assets->feet_missing : assets->plants_missing;
}

/* The figures of a measurement: skate and its bands (null with the reason when the feet are
 * unknown or no plants are marked), pops. */
static void measure_json(const cb_measure_result *m, const cb_animate_assets *assets)
{
    double clips_pops = assets->clips_pops_p999;
    if (skate_absent(assets) != NULL) {
        printf("\"skate\": null, \"skate_absent\": ");
        print_json_string(skate_absent(assets));
    } else {
        stat_json("skate", m->skate);
        bands_json("skate_by_speed", cb_measure_speed_edges, CB_MEASURE_SPEED_BANDS,
                   m->skate_by_speed);
        bands_json("skate_by_turn", cb_measure_turn_edges, CB_MEASURE_TURN_BANDS, m->skate_by_turn);
    }
    printf(", \"pops\": {\"count\": %llu, \"p999\": %.4f, \"clips_p999\": ",
           (unsigned long long)m->pops->count, cb_stat_quantile(m->pops, 0.999));
    if (clips_pops < 0.0) {
        printf("null}"); /* no clip loops: no reference */
    } else {
        printf("%.4f}", clips_pops);
    }
}

/* With a pack: which pack and which foot joints; for the embedded set, the rate its clips are
 * stored at (--clip-rate), read back from a clip. */
static void pack_json(const cb_animate_options *o, const cb_animate_assets *assets)
{
    if (o->pack == NULL) {
        printf(", \"clip_rate_hz\": %g", (double)cb_clip_sample_rate(assets->locomotion[1]));
        return;
    }
    printf(", \"pack\": ");
    print_json_string(o->pack);
    printf(", \"gait\": ");
    if (assets->gait != NULL) { /* --gait: the clip and the forward speed the warp matches */
        print_json_string(cb_clip_name(assets->gait));
        printf(", \"gait_speed_mps\": %.6g",
               (double)cb_clip_query_root_motion(assets->gait).forward_mps);
    } else {
        printf("null");
    }
    printf(", \"skeleton_joints\": %u, \"feet\": ", cb_skeleton_joint_count(assets->skeleton));
    if (assets->feet_missing != NULL) {
        printf("null");
        return;
    }
    printf("[");
    print_json_string(assets->feet_names[0]);
    printf(", ");
    print_json_string(assets->feet_names[1]);
    printf("], \"feet_from\": ");
    print_json_string(assets->feet_from);
}

/* --out: the file written, its agents, frames and rate (null without --out). */
static void out_json(const cb_animate_options *o, const cb_animate_result *r)
{
    printf(", \"out\": ");
    if (o->out == NULL) {
        printf("null");
        return;
    }
    printf("{\"path\": ");
    print_json_string(o->out);
    printf(", \"format\": \"%s\", \"agents\": %u, \"frames\": %u, \"rate_hz\": %.9g}",
           cb_gltf_file_of(o->out) == CB_GLTF_FILE_GLB ? "glb" : "gltf", r->out_agents,
           r->out_frames, r->out_rate_hz);
}

static void result_json(const char *path, const cb_traj *t, const cb_animate_options *o,
                        const cb_animate_result *r, const cb_animate_assets *assets, bool last)
{
    cb_measure_result m = cb_measure_query(r->measure);
    printf("{\"file\": ");
    print_json_string(path);
    printf(", \"format\": \"%s\", \"agents\": %u, \"agents_shown\": %u, "
           "\"max_concurrent\": %u, \"frames\": %u, \"rate_hz\": %g, \"character_seconds\": "
           "%.9g, \"crowd\": ",
           cb_traj_format_name(t->format), t->agent_count, r->agents_shown, r->max_concurrent,
           r->frames, o->rate_hz, r->character_seconds);
    print_json_string(o->graph != NULL ? o->graph : "blend_space");
    pack_json(o, assets);
    printf(", \"host_warp\": %s, \"warp\": %s, \"lock\": %s, \"orient\": %s, \"stride\": %s, "
           "\"stride_warped\": %llu, \"locks\": %llu, "
           "\"reach_failures\": %llu, \"rate_clamped\": %llu, \"wall_s\": %.3f, ",
           o->host_warp ? "true" : "false", r->warp ? "true" : "false", r->lock ? "true" : "false",
           r->orient ? "true" : "false", r->stride ? "true" : "false",
           (unsigned long long)r->follow_stats.stride_warped,
           (unsigned long long)r->follow_stats.locks,
           (unsigned long long)r->follow_stats.reach_failures,
           (unsigned long long)r->follow_stats.rate_clamped, r->wall_s);
    measure_json(&m, assets);
    out_json(o, r);
    printf("}%s\n", last ? "" : ",");
}

static void stat_line(const char *label, const cb_stat *s)
{
    if (s->count == 0) {
        printf("    %-18s %8s %8s %8s %11s %10d\n", label, "-", "-", "-", "-", 0);
        return;
    }
    printf("    %-18s %8.2f %8.2f %8.2f %9.1f %% %10llu\n", label, cb_stat_mean(s),
           cb_stat_quantile(s, 0.5), cb_stat_quantile(s, 0.95), 100.0 * cb_stat_share_above(s),
           (unsigned long long)s->count);
}

static void bands_text(const char *prefix, const char *unit, const double *edges, int count,
                       const cb_stat *const *s)
{
    for (int b = 0; b < count; ++b) {
        char label[64];
        if (b + 1 < count) {
            snprintf(label, sizeof label, "%s%.1f-%.1f%s", prefix, edges[b], edges[b + 1], unit);
        } else {
            snprintf(label, sizeof label, "%s%.1f+%s", prefix, edges[b], unit);
        }
        stat_line(label, s[b]);
    }
}

static void skate_text(const cb_measure_result *m)
{
    printf("  planted-foot skate, cm/s     mean   median      p95   > 5 cm/s  foot-frames\n");
    stat_line("all", m->skate);
    bands_text("", " m/s", cb_measure_speed_edges, CB_MEASURE_SPEED_BANDS, m->skate_by_speed);
    bands_text("turn ", " rad/s", cb_measure_turn_edges, CB_MEASURE_TURN_BANDS, m->skate_by_turn);
}

static void measure_text(const cb_measure_result *m, const cb_animate_assets *assets)
{
    if (skate_absent(assets) != NULL) {
        printf("  planted-foot skate: not measured (%s)\n", skate_absent(assets));
    } else {
        if (assets->pack != NULL) {
            printf("  feet: %s, %s (from %s)\n", assets->feet_names[0], assets->feet_names[1],
                   assets->feet_from);
        }
        skate_text(m);
    }
    printf("  pops: p99.9 of the joints' second difference %.3f cm",
           cb_stat_quantile(m->pops, 0.999));
    if (assets->clips_pops_p999 >= 0.0) {
        printf(" (the clips alone: %.3f cm)", assets->clips_pops_p999);
    }
    printf("\n");
}

static void result_text(const char *path, const cb_traj *t, const cb_animate_options *o,
                        const cb_animate_result *r, const cb_animate_assets *assets)
{
    cb_measure_result m = cb_measure_query(r->measure);
    printf("%s (%s): %u agent%s", path, cb_traj_format_name(t->format), r->agents_shown,
           r->agents_shown == 1 ? "" : "s");
    if (r->agents_shown < t->agent_count) {
        printf(" shown of the file's %u (the rest fall between two frames or after --seconds)",
               t->agent_count);
    }
    printf(", %u at most at once, %.0f character-seconds, %u frames at %g Hz, %s%s, run in "
           "%.1f s\n",
           r->max_concurrent, r->character_seconds, r->frames, o->rate_hz,
           o->graph != NULL ? o->graph : "blend-space crowd",
           o->host_warp ? " + host playback-rate warp" : "", r->wall_s);
    if (assets->pack == NULL) {
        printf("  embedded clips stored at %g Hz\n",
               (double)cb_clip_sample_rate(assets->locomotion[1]));
    }
    if (r->warp || r->lock) {
        printf("  follow: %s%s%s; %llu plants locked, %llu of them not held (out of the leg's "
               "reach), %llu character-frames with the playback rate at a bound\n",
               r->warp ? "playback-rate warping" : "", r->warp && r->lock ? " + " : "",
               r->lock ? "foot locking" : "", (unsigned long long)r->follow_stats.locks,
               (unsigned long long)r->follow_stats.reach_failures,
               (unsigned long long)r->follow_stats.rate_clamped);
    }
    if (r->orient) {
        printf("  follow: orientation warping, up to %g degrees\n",
               (double)o->orient_rad * 180.0 / 3.14159265358979323846);
    }
    if (r->stride) {
        printf("  follow: stride warping, %llu character-frames with longer strides\n",
               (unsigned long long)r->follow_stats.stride_warped);
    }
    if (o->max_turn > 0.0f) {
        printf("  follow: the heading turns at most %g rad/s\n", (double)o->max_turn);
    }
    measure_text(&m, assets);
    if (o->out != NULL) {
        printf("  wrote %s (%s): %u agents, %u frames at %g Hz\n", o->out,
               cb_gltf_file_of(o->out) == CB_GLTF_FILE_GLB ? "GLB" : "glTF JSON and its .bin",
               r->out_agents, r->out_frames, r->out_rate_hz);
    }
}

/* What the command line gave, before it is checked. */
typedef struct animate_args {
    bool help, json, summary, host_warp, no_warp, no_lock, stride;
    double rate, seconds, fps, out_rate, stand, follow;
    double min_rate, max_rate, max_turn, orient_deg, max_stride;
    double clip_rate_hz; /* --clip-rate read (NaN when not a decimal number; 0 when not given) */
    long threads;
    const char *graph, *out, *pack, *feet, *format, *clip_rate, *gait;
    size_t file_count;
    cb_traj_format traj_format;
} animate_args;

/* The first thing wrong with the files and the pack, or NULL. */
static const char *bad_inputs(const animate_args *a)
{
    if (a->file_count == 0) {
        return "give at least one trajectory file";
    }
    if (a->traj_format == CB_TRAJ_FORMAT_COUNT) {
        return "unknown --format";
    }
    if (a->summary && (a->clip_rate != NULL || a->gait != NULL)) {
        return "--summary only describes the files (it loads no clips): not with --clip-rate or "
               "--gait, which choose the clips a run plays";
    }
    if (a->out != NULL && a->file_count != 1) {
        return "--out takes one trajectory file";
    }
    if (a->out != NULL && cb_gltf_file_of(a->out) == CB_GLTF_FILE_NONE) {
        return "--out names a glTF 2.0 file: FILE.gltf (JSON, and FILE.bin beside it) or FILE.glb "
               "(one binary file)";
    }
    if (a->pack == NULL && a->feet != NULL) {
        return "--feet names a pack's joints: it needs --pack";
    }
    if (a->pack == NULL && a->gait != NULL) {
        return "--gait names a pack's clip: it needs --pack (the embedded set's gait is walk_f)";
    }
    if (a->gait != NULL && a->no_warp) {
        return "--gait is the playback-rate warp's clip: not with --no-warp";
    }
    if (a->pack != NULL && a->clip_rate != NULL) {
        return "--clip-rate sets the embedded clips' rate: a pack's clips keep the rate they "
               "were imported at";
    }
    return a->pack != NULL && a->graph != NULL && strcmp(a->graph, "none") == 0
               ? "--pack: its clips run in a graph (a stored one or a JSON file), not none"
               : NULL;
}

/* The first rate, time or count out of its range, or NULL. */
static const char *bad_ranges(const animate_args *a)
{
    if (!(a->rate >= 1.0 && a->rate <= 1000.0)) {
        return "--rate must be in [1, 1000]";
    }
    /* Within cb_embedded_create's (0, 1000] (crowdblend/embedded.h); below 1 Hz a cycle keeps
     * one interval, so the stored rate is not the one asked. NaN and infinities fail. */
    if (a->clip_rate != NULL && !(a->clip_rate_hz >= 1.0 && a->clip_rate_hz <= 1000.0)) {
        return "--clip-rate must be a decimal number of Hz in [1, 1000] (as 30 or 60)";
    }
    if (!(a->seconds >= 0.0 && a->seconds <= 1e6)) {
        return "--seconds must be in [0, 1e6]";
    }
    if (!(a->fps >= 0.0 && a->fps <= 1e6)) {
        return "--fps must be in [0, 1e6]";
    }
    if (!(a->out_rate >= 0.0 && a->out_rate <= a->rate)) {
        return "--out-rate must be in (0, --rate]";
    }
    return a->threads < 0 || a->threads > 1024 ? "--threads must be in 0..1024" : NULL;
}

/* The first follow option out of its range, or NULL. */
static const char *bad_follow(const animate_args *a)
{
    if (!(a->min_rate >= 0.0 && a->min_rate <= 1.0)) {
        return "--min-rate must be in (0, 1]";
    }
    if (!(a->max_turn >= 0.0 && a->max_turn <= 1000.0)) {
        return "--max-turn must be in [0, 1000]";
    }
    if (!(a->orient_deg >= 0.0 && a->orient_deg <= 90.0)) {
        return "--orientation-warp must be in [0, 90] degrees";
    }
    if (!(a->max_stride == 0.0 || (a->max_stride >= 1.0 && a->max_stride <= 2.0))) {
        return "--max-stride must be in [1, 2]";
    }
    return !(a->max_rate == 0.0 || (a->max_rate >= 1.0 && a->max_rate <= 4.0))
               ? "--max-rate must be in [1, 4]"
               : NULL;
}

static const char *bad_args(const animate_args *a)
{
    const char *bad = bad_inputs(a);
    bad = bad != NULL ? bad : bad_ranges(a);
    return bad != NULL ? bad : bad_follow(a);
}

/* The export keeps every n-th animation frame, so --out-rate must divide --rate: 25 from 60
 * would otherwise come out as 30 or 20. Divides means to 1e-5, so that a rate printed to six
 * digits (100 / 3 as 33.3333, which the message below may suggest) is taken. False with the
 * rates that would do, said on stderr. */
static bool check_out_rate(const animate_args *a)
{
    if (a->out_rate == 0.0) {
        return true;
    }
    double q = a->rate / a->out_rate;
    if (fabs(q - round(q)) <= 1e-5 * q) {
        return true;
    }
    fprintf(stderr,
            "crowdblend animate: --out-rate %g does not divide --rate %g (the export keeps "
            "every n-th animation frame): give --out-rate %g or %g",
            a->out_rate, a->rate, a->rate / ceil(q), a->rate / floor(q));
    if (a->out_rate * ceil(q) <= 1000.0) {
        fprintf(stderr, ", or a --rate that is a multiple of %g, as %g", a->out_rate,
                a->out_rate * ceil(q));
    }
    fprintf(stderr, "\n");
    return false;
}

/* --out's folder can be written, checked before the run, which may take minutes, rather than
 * when the file is written at its end; false with the reason said on stderr. */
static bool check_out_folder(const char *out)
{
    if (out == NULL) {
        return true;
    }
    char dir[4096];
    const char *slash = strrchr(out, '/');
    if (slash == NULL) {
        snprintf(dir, sizeof dir, ".");
    } else {
        snprintf(dir, sizeof dir, "%.*s", slash == out ? 1 : (int)(slash - out), out);
    }
    if (access(dir, W_OK | X_OK) != 0) {
        fprintf(stderr, "crowdblend animate: --out %s: cannot write in '%s': %s\n", out, dir,
                strerror(errno));
        return false;
    }
    return true;
}

/* The graph the crowd runs: NULL (the blend-space crowd), the named one, or with a pack and
 * none named, the pack's first stored graph (NULL with a message when it stores none). */
static const char *crowd_graph(const animate_args *a, const cb_animate_assets *assets)
{
    if (a->pack == NULL) {
        return a->graph == NULL || strcmp(a->graph, "none") == 0 ? NULL : a->graph;
    }
    if (a->graph != NULL) {
        return a->graph;
    }
    if (cb_pack_graph_count(assets->pack) == 0) {
        fprintf(stderr, "crowdblend animate: --pack %s stores no graph: give --graph FILE\n",
                a->pack);
        return NULL;
    }
    return cb_pack_query_graph(assets->pack, 0).name;
}

static cb_animate_options options_of(const animate_args *a)
{
    return (cb_animate_options){
        .pack = a->pack,
        .rate_hz = a->rate,
        .seconds = a->seconds,
        .host_warp = a->host_warp,
        .out = a->out,
        .out_rate_hz = a->out_rate,
        .threads = (uint32_t)a->threads,
        .stand_speed = (float)a->stand,
        .follow_speed = (float)a->follow,
        .no_warp = a->no_warp,
        .no_lock = a->no_lock,
        .gait_named = a->gait != NULL,
        .min_rate = (float)a->min_rate,
        .max_rate = (float)a->max_rate,
        .max_turn = (float)a->max_turn,
        .orient_rad = (float)(a->orient_deg * 3.14159265358979323846 / 180.0),
        .stride = a->stride,
        .max_stride = (float)a->max_stride,
    };
}

/* ---- the command -------------------------------------------------------------------------- */

static int run_loaded(const char **files, size_t count, const cb_traj_load_desc *ld,
                      const cb_animate_options *o, bool summary, bool json,
                      const cb_animate_assets *assets);

/* Loads the assets (not for --summary), names the graph and runs every file. */
static int run_files(const char **files, const animate_args *a, const cb_traj_load_desc *ld,
                     cb_animate_options *o)
{
    if (a->summary) {
        return run_loaded(files, a->file_count, ld, o, true, a->json, NULL);
    }
    cb_animate_assets assets;
    cb_animate_source src = {
        .pack = a->pack, .feet = a->feet, .clip_rate_hz = (float)a->clip_rate_hz, .gait = a->gait};
    if (!cb_animate_assets_init(&assets, &src, o->rate_hz)) {
        return CB_EXIT_FAILURE;
    }
    o->graph = crowd_graph(a, &assets);
    int status = a->pack != NULL && o->graph == NULL
                     ? CB_EXIT_FAILURE
                     : run_loaded(files, a->file_count, ld, o, false, a->json, &assets);
    cb_animate_assets_finish(&assets);
    return status;
}

/* Every file's figures merged, for the "all" of several files. */
typedef struct totals {
    cb_measure *all;
    double seconds;
} totals;

/* Faster than this between two samples is no pedestrian (a sprinter peaks near 12 m/s): most
 * likely two agents under one id, or a unit or time column read wrong. */
#define IMPLAUSIBLE_SPEED_MPS 15.0

/* Says on stderr where an agent moves implausibly fast between two samples (the first such
 * step of each file, and how many agents have one): the run goes on, but its skate would
 * measure the jump. */
static void note_implausible_speeds(const char *path, const cb_traj *t)
{
    uint32_t agents = 0;
    for (uint32_t a = 0; a < t->agent_count; ++a) {
        const cb_traj_agent *ag = &t->agents[a];
        for (uint32_t i = ag->first; i + 1 < ag->first + ag->count; ++i) {
            double dx = t->p[3 * i + 3] - t->p[3 * i], dy = t->p[3 * i + 4] - t->p[3 * i + 1];
            double v = sqrt(dx * dx + dy * dy) / (t->t[i + 1] - t->t[i]);
            if (v > IMPLAUSIBLE_SPEED_MPS) {
                if (agents++ == 0) {
                    fprintf(stderr,
                            "crowdblend animate: note: %s: agent %lld moves at %.3g m/s between "
                            "t = %.9g and %.9g s, faster than a pedestrian (%g m/s): two agents "
                            "under one id, or a unit or time read wrong?\n",
                            path, (long long)ag->id, v, t->t[i], t->t[i + 1],
                            IMPLAUSIBLE_SPEED_MPS);
                }
                break;
            }
        }
    }
    if (agents > 1) {
        fprintf(stderr, "crowdblend animate: note: %s: %u agents move that fast at least once\n",
                path, agents);
    }
}

/* Animates one loaded file, prints its result and adds it to the totals. */
static bool animate_one(const char *path, const cb_traj *t, const cb_animate_options *o,
                        const cb_animate_assets *assets, bool json, bool last, totals *sum)
{
    note_implausible_speeds(path, t);
    cb_animate_result r;
    if (!cb_animate_run(t, path, o, assets, &r)) {
        return false;
    }
    json ? result_json(path, t, o, &r, assets, last) : result_text(path, t, o, &r, assets);
    sum->seconds += r.character_seconds;
    if (sum->all == NULL) {
        sum->all = r.measure;
    } else {
        cb_measure_merge(sum->all, r.measure);
        cb_measure_destroy(r.measure);
    }
    return true;
}

/* The end of the output: the merged figures of several files (total), and JSON's closing. */
static void print_totals(const totals *sum, size_t count, bool total, bool json,
                         const cb_animate_assets *assets)
{
    cb_measure_result m = total ? cb_measure_query(sum->all) : (cb_measure_result){0};
    if (json) {
        printf("]");
        if (total) {
            printf(", \"all\": {\"character_seconds\": %.9g, ", sum->seconds);
            measure_json(&m, assets);
            printf("}");
        }
        printf("}\n");
    } else if (total) {
        printf("all %zu files: %.0f character-seconds\n", count, sum->seconds);
        measure_text(&m, assets);
    }
}

static int run_loaded(const char **files, size_t count, const cb_traj_load_desc *ld,
                      const cb_animate_options *o, bool summary, bool json,
                      const cb_animate_assets *assets)
{
    bool ok = true;
    totals sum = {0};
    if (json) {
        printf("{\"files\": [\n");
    }
    for (size_t f = 0; f < count && ok; ++f) {
        cb_traj *t = NULL;
        cb_error err = {0};
        if (cb_traj_load_file(files[f], ld, &t, &err) != CB_OK) {
            fprintf(stderr, "crowdblend animate: %s\n", err.message);
            ok = false;
            break;
        }
        bool last = f + 1 == count;
        if (summary) {
            json ? summary_json(files[f], t, last) : summary_text(files[f], t);
        } else {
            ok = animate_one(files[f], t, o, assets, json, last, &sum);
        }
        cb_traj_destroy(t);
    }
    print_totals(&sum, count, sum.all != NULL && count > 1 && ok, json, assets);
    cb_measure_destroy(sum.all);
    return ok ? CB_EXIT_OK : CB_EXIT_FAILURE;
}

/* The command once its option table points into a: parses the command line, then checks the
 * options and runs the files. */
static int parse_and_run(int argc, char **argv, const cb_opt *opts, animate_args *a)
{
    const char *files[MAX_FILES];
    if (!cb_opts_parse("crowdblend animate", argc, argv, 2, opts, files, MAX_FILES,
                       &a->file_count)) {
        return CB_EXIT_USAGE;
    }
    if (a->help) {
        cb_opts_print_help(
            "crowdblend animate TRAJECTORIES... [--pack FILE.cbpack [--feet L,R]] "
            "[--graph NAME|FILE] [--rate 60] [--clip-rate 30] [--out FILE.gltf|.glb] [--json]",
            opts);
        return CB_EXIT_OK;
    }
    a->traj_format = cb_traj_format_from_name(a->format);
    /* A string option, to tell given from not; then the command line's number rule. */
    if (a->clip_rate != NULL && !cb_opts_decimal(a->clip_rate, &a->clip_rate_hz)) {
        a->clip_rate_hz = NAN;
    }
    const char *bad = bad_args(a);
    if (bad != NULL) {
        fprintf(stderr, "crowdblend animate: %s\n", bad);
        return CB_EXIT_USAGE;
    }
    if (!check_out_rate(a)) {
        return CB_EXIT_USAGE;
    }
    if (!check_out_folder(a->out)) {
        return CB_EXIT_FAILURE;
    }
    cb_traj_load_desc ld = {.format = a->traj_format, .fps = a->fps};
    cb_animate_options o = options_of(a);
    return run_files(files, a, &ld, &o);
}

int cb_cmd_animate(int argc, char **argv)
{
    animate_args a = {.rate = 60.0, .threads = 1, .format = "auto"};
    const cb_opt opts[] = {
        {"graph", CB_OPT_STRING, &a.graph,
         "graph: an example's name (locomotion_8dir, ...), a JSON file, or none (the "
         "blend-space crowd of the embedded set; default); with --pack: a graph stored in the "
         "pack or a JSON file naming its clips (default: the pack's first stored graph)"},
        {"pack", CB_OPT_STRING, &a.pack,
         "run a pack's skeleton, clips and graph (crowdblend import) instead of the embedded set"},
        {"feet", CB_OPT_STRING, &a.feet,
         "LEFT,RIGHT: the pack's foot joints whose skate is measured (default ball_l,ball_r, "
         "else the joints named left/right with foot, toe or ball, the deepest of each side's "
         "chain; without them the skate is reported absent)"},
        {"rate", CB_OPT_DOUBLE, &a.rate, "HZ: animation frames per second (default 60)"},
        {"clip-rate", CB_OPT_STRING, &a.clip_rate,
         "HZ: the rate the embedded clips are stored at, in [1, 1000] (default 30; not with "
         "--pack)"},
        {"out", CB_OPT_STRING, &a.out,
         "FILE: write the animated crowd to FILE.gltf (+ .bin) or FILE.glb"},
        {"out-rate", CB_OPT_DOUBLE, &a.out_rate,
         "HZ: frames per second of --out, dividing --rate (default: --rate)"},
        {"seconds", CB_OPT_DOUBLE, &a.seconds, "S: animate only the first S seconds of each file"},
        {"format", CB_OPT_STRING, &a.format,
         "auto (default), csv, jupedsim, vadere, pathfinder, crowdit or petrack"},
        {"fps", CB_OPT_DOUBLE, &a.fps,
         "FPS: frame rate of files that count frames, if they lack it"},
        {"host-warp", CB_OPT_FLAG, &a.host_warp,
         "reference: the host scales each character's dt by commanded / blended root speed"},
        {"stand-speed", CB_OPT_DOUBLE, &a.stand,
         "speed below which the heading is held, m/s (default 0.15: crowdblend/follow.h)"},
        {"follow-speed", CB_OPT_DOUBLE, &a.follow,
         "speed from which the heading is along the velocity (default 2 x --stand-speed)"},
        {"gait", CB_OPT_STRING, &a.gait,
         "CLIP: with --pack, the clip whose root-motion forward speed the follower's playback-rate "
         "warp matches (the graph's \"rate\" parameter; default: no warp with a pack)"},
        {"no-warp", CB_OPT_FLAG, &a.no_warp,
         "no playback-rate warping even if the graph has a \"rate\" parameter"},
        {"no-lock", CB_OPT_FLAG, &a.no_lock,
         "no foot locking even if the graph has the foot IK parameters"},
        {"min-rate", CB_OPT_DOUBLE, &a.min_rate, "the warp's lowest rate (default 0.5)"},
        {"max-rate", CB_OPT_DOUBLE, &a.max_rate, "the warp's highest rate (default 1.35)"},
        {"max-turn", CB_OPT_DOUBLE, &a.max_turn,
         "most the heading turns per second, rad/s (default 0: no limit)"},
        {"orientation-warp", CB_OPT_DOUBLE, &a.orient_deg,
         "DEG: turn the lower body towards the velocity by up to DEG degrees (graphs with a "
         "\"warp\" "
         "parameter; default 0: off; pair it with --max-turn)"},
        {"stride-warp", CB_OPT_FLAG, &a.stride,
         "beyond --max-rate, lengthen the strides instead (graphs with a \"stride\" parameter: "
         "locomotion_follow)"},
        {"max-stride", CB_OPT_DOUBLE, &a.max_stride,
         "stride warping's largest scale, in [1, 2] (default 1.3)"},
        {"threads", CB_OPT_INT, &a.threads, "threads of the crowd's pool (default 1; 0: all)"},
        {"summary", CB_OPT_FLAG, &a.summary,
         "only describe the files (agents, samples, extents); loads no clips: not with --clip-rate "
         "or --gait"},
        {"json", CB_OPT_FLAG, &a.json, "print JSON"},
        {"help", CB_OPT_FLAG, &a.help, "show this help"},
        {0},
    };
    return parse_and_run(argc, argv, opts, &a);
}
