/* `crowdblend animate TRAJECTORIES...`: crowds driven along simulator trajectories, measured as
 * issue 12 defines (planted-foot skate, pops), optionally exported as glTF; `--summary` only
 * describes the files (what the loader read, for scripts and tests). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/animate.h"
#include "cli/cli.h"

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

static void stat_json(const char *key, const cb_stat *s)
{
    printf("\"%s\": {\"count\": %llu, \"mean\": %.4f, \"median\": %.4f, \"p95\": %.4f, "
           "\"above_5\": %.5f}",
           key, (unsigned long long)s->count, cb_stat_mean(s), cb_stat_quantile(s, 0.5),
           cb_stat_quantile(s, 0.95), cb_stat_share_above(s));
}

static void bands_json(const char *key, const double *edges, int count, const cb_stat *const *s)
{
    printf(", \"%s\": [", key);
    for (int b = 0; b < count; ++b) {
        printf("%s{\"from\": %g, \"to\": %s%g%s, ", b ? ", " : "", edges[b],
               b + 1 < count ? "" : "\"", b + 1 < count ? edges[b + 1] : INFINITY,
               b + 1 < count ? "" : "\"");
        stat_json("skate", s[b]);
        printf("}");
    }
    printf("]");
}

/* The figures of a measurement: skate, its bands, pops. */
static void measure_json(const cb_measure_result *m, double clips_pops)
{
    stat_json("skate", m->skate);
    bands_json("skate_by_speed", cb_measure_speed_edges, CB_MEASURE_SPEED_BANDS, m->skate_by_speed);
    bands_json("skate_by_turn", cb_measure_turn_edges, CB_MEASURE_TURN_BANDS, m->skate_by_turn);
    printf(", \"pops\": {\"count\": %llu, \"p999\": %.4f, \"clips_p999\": %.4f}",
           (unsigned long long)m->pops->count, cb_stat_quantile(m->pops, 0.999), clips_pops);
}

static void result_json(const char *path, const cb_traj *t, const cb_animate_options *o,
                        const cb_animate_result *r, double clips_pops, bool last)
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
    printf(", \"host_warp\": %s, \"warp\": %s, \"lock\": %s, \"orient\": %s, \"locks\": %llu, "
           "\"reach_failures\": %llu, \"rate_clamped\": %llu, \"wall_s\": %.3f, ",
           o->host_warp ? "true" : "false", r->warp ? "true" : "false", r->lock ? "true" : "false",
           r->orient ? "true" : "false", (unsigned long long)r->follow_stats.locks,
           (unsigned long long)r->follow_stats.reach_failures,
           (unsigned long long)r->follow_stats.rate_clamped, r->wall_s);
    measure_json(&m, clips_pops);
    printf("}%s\n", last ? "" : ",");
}

static void stat_line(const char *label, const cb_stat *s)
{
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

static void measure_text(const cb_measure_result *m, double clips_pops)
{
    printf("  planted-foot skate, cm/s     mean   median      p95   > 5 cm/s  foot-frames\n");
    stat_line("all", m->skate);
    bands_text("", " m/s", cb_measure_speed_edges, CB_MEASURE_SPEED_BANDS, m->skate_by_speed);
    bands_text("turn ", " rad/s", cb_measure_turn_edges, CB_MEASURE_TURN_BANDS, m->skate_by_turn);
    printf("  pops: p99.9 of the joints' second difference %.3f cm (the clips alone: %.3f cm)\n",
           cb_stat_quantile(m->pops, 0.999), clips_pops);
}

static void result_text(const char *path, const cb_traj *t, const cb_animate_options *o,
                        const cb_animate_result *r, double clips_pops)
{
    cb_measure_result m = cb_measure_query(r->measure);
    printf("%s (%s): %u agents (%u at most at once), %.0f character-seconds, %u frames at %g "
           "Hz, %s%s, %.1f s\n",
           path, cb_traj_format_name(t->format), r->agents_shown, r->max_concurrent,
           r->character_seconds, r->frames, o->rate_hz,
           o->graph != NULL ? o->graph : "blend-space crowd",
           o->host_warp ? " + host playback-rate warp" : "", r->wall_s);
    if (r->warp || r->lock) {
        printf("  follow: %s%s%s; %llu plants locked, %llu reach failures, %llu rates at a "
               "bound\n",
               r->warp ? "playback-rate warping" : "", r->warp && r->lock ? " + " : "",
               r->lock ? "foot locking" : "", (unsigned long long)r->follow_stats.locks,
               (unsigned long long)r->follow_stats.reach_failures,
               (unsigned long long)r->follow_stats.rate_clamped);
    }
    if (r->orient) {
        printf("  follow: orientation warping, up to %g degrees\n",
               (double)o->orient_rad * 180.0 / 3.14159265358979323846);
    }
    measure_text(&m, clips_pops);
}

/* ---- the command -------------------------------------------------------------------------- */

static int run_files(const char **files, size_t count, const cb_traj_load_desc *ld,
                     const cb_animate_options *o, bool summary, bool json)
{
    cb_animate_assets assets;
    bool have_assets = !summary && cb_animate_assets_init(&assets, o->rate_hz);
    if (!summary && !have_assets) {
        return CB_EXIT_FAILURE;
    }
    int status = CB_EXIT_OK;
    cb_measure *all = NULL; /* every file's figures merged (several files) */
    double all_seconds = 0.0;
    if (json) {
        printf("{\"files\": [\n");
    }
    for (size_t f = 0; f < count && status == CB_EXIT_OK; ++f) {
        cb_traj *t = NULL;
        cb_error err = {0};
        if (cb_traj_load_file(files[f], ld, &t, &err) != CB_OK) {
            fprintf(stderr, "crowdblend animate: %s\n", err.message);
            status = CB_EXIT_FAILURE;
            break;
        }
        bool last = f + 1 == count;
        if (summary) {
            json ? summary_json(files[f], t, last) : summary_text(files[f], t);
        } else {
            cb_animate_result r;
            if (!cb_animate_run(t, files[f], o, &assets, &r)) {
                status = CB_EXIT_FAILURE;
            } else {
                json ? result_json(files[f], t, o, &r, assets.clips_pops_p999, last)
                     : result_text(files[f], t, o, &r, assets.clips_pops_p999);
                all_seconds += r.character_seconds;
                if (all == NULL) {
                    all = r.measure;
                } else {
                    cb_measure_merge(all, r.measure);
                    cb_measure_destroy(r.measure);
                }
            }
        }
        cb_traj_destroy(t);
    }
    cb_measure_result m = all != NULL ? cb_measure_query(all) : (cb_measure_result){0};
    bool total = all != NULL && count > 1 && status == CB_EXIT_OK;
    if (json) {
        printf("]");
        if (total) {
            printf(", \"all\": {\"character_seconds\": %.9g, ", all_seconds);
            measure_json(&m, assets.clips_pops_p999);
            printf("}");
        }
        printf("}\n");
    } else if (total) {
        printf("all %zu files: %.0f character-seconds\n", count, all_seconds);
        measure_text(&m, assets.clips_pops_p999);
    }
    cb_measure_destroy(all);
    if (have_assets) {
        cb_animate_assets_finish(&assets);
    }
    return status;
}

int cb_cmd_animate(int argc, char **argv)
{
    bool help = false, json = false, summary = false, host_warp = false, no_warp = false,
         no_lock = false;
    double rate = 60.0, seconds = 0.0, fps = 0.0, out_rate = 0.0, stand = 0.0, follow = 0.0;
    double min_rate = 0.0, max_rate = 0.0, max_turn = 0.0, orient_deg = 0.0;
    long threads = 1;
    const char *graph = "none", *out = NULL, *pack = NULL, *format = "auto";
    const cb_opt opts[] = {
        {"graph", CB_OPT_STRING, &graph,
         "graph: an example's name (locomotion_8dir, ...), a JSON file, or none (the "
         "blend-space crowd of the embedded set; default)"},
        {"pack", CB_OPT_STRING, &pack, "an asset pack (not available yet: needs asset import)"},
        {"rate", CB_OPT_DOUBLE, &rate, "animation frames per second (default 60)"},
        {"out", CB_OPT_STRING, &out, "write the animated crowd to FILE.gltf (+ .bin) or FILE.glb"},
        {"out-rate", CB_OPT_DOUBLE, &out_rate, "frames per second of --out (default: --rate)"},
        {"seconds", CB_OPT_DOUBLE, &seconds, "animate only the first S seconds of each file"},
        {"format", CB_OPT_STRING, &format,
         "auto (default), csv, jupedsim, vadere, pathfinder, crowdit or petrack"},
        {"fps", CB_OPT_DOUBLE, &fps, "frame rate of files that count frames, if they lack it"},
        {"host-warp", CB_OPT_FLAG, &host_warp,
         "reference: the host scales each character's dt by commanded / blended root speed"},
        {"stand-speed", CB_OPT_DOUBLE, &stand,
         "speed below which the heading is held, m/s (default 0.15: crowdblend/follow.h)"},
        {"follow-speed", CB_OPT_DOUBLE, &follow,
         "speed from which the heading is along the velocity (default 2 x --stand-speed)"},
        {"no-warp", CB_OPT_FLAG, &no_warp,
         "no playback-rate warping even if the graph has a \"rate\" parameter"},
        {"no-lock", CB_OPT_FLAG, &no_lock,
         "no foot locking even if the graph has the foot IK parameters"},
        {"min-rate", CB_OPT_DOUBLE, &min_rate, "the warp's lowest rate (default 0.5)"},
        {"max-rate", CB_OPT_DOUBLE, &max_rate, "the warp's highest rate (default 1.35)"},
        {"max-turn", CB_OPT_DOUBLE, &max_turn,
         "most the heading turns per second, rad/s (default 0: no limit)"},
        {"orientation-warp", CB_OPT_DOUBLE, &orient_deg,
         "turn the lower body towards the velocity by up to DEG degrees (graphs with a \"warp\" "
         "parameter; default 0: off; pair it with --max-turn)"},
        {"threads", CB_OPT_INT, &threads, "threads of the crowd's pool (default 1; 0: all)"},
        {"summary", CB_OPT_FLAG, &summary, "only describe the files (agents, samples, extents)"},
        {"json", CB_OPT_FLAG, &json, "print JSON"},
        {"help", CB_OPT_FLAG, &help, "show this help"},
        {0},
    };
    const char *files[MAX_FILES];
    size_t count = 0;
    if (!cb_opts_parse("crowdblend animate", argc, argv, 2, opts, files, MAX_FILES, &count)) {
        return CB_EXIT_USAGE;
    }
    if (help) {
        cb_opts_print_help("crowdblend animate TRAJECTORIES... [--graph NAME|FILE] [--rate 60] "
                           "[--out FILE.gltf|.glb] [--json]",
                           opts);
        return CB_EXIT_OK;
    }
    cb_traj_load_desc ld = {.format = cb_traj_format_from_name(format), .fps = fps};
    const char *bad = count == 0     ? "give at least one trajectory file"
                      : pack != NULL ? "--pack is not available yet (it comes with asset import)"
                      : ld.format == CB_TRAJ_FORMAT_COUNT      ? "unknown --format"
                      : !(rate >= 1.0 && rate <= 1000.0)       ? "--rate must be in [1, 1000]"
                      : !(seconds >= 0.0 && seconds <= 1e6)    ? "--seconds must be in [0, 1e6]"
                      : !(fps >= 0.0 && fps <= 1e6)            ? "--fps must be in [0, 1e6]"
                      : !(out_rate >= 0.0 && out_rate <= rate) ? "--out-rate must be in (0, --rate]"
                      : threads < 0 || threads > 1024          ? "--threads must be in 0..1024"
                      : !(min_rate >= 0.0 && min_rate <= 1.0)  ? "--min-rate must be in (0, 1]"
                      : !(max_turn >= 0.0 && max_turn <= 1000.0) ? "--max-turn must be in [0, 1000]"
                      : !(orient_deg >= 0.0 && orient_deg <= 90.0)
                          ? "--orientation-warp must be in [0, 90] degrees"
                      : !(max_rate == 0.0 || (max_rate >= 1.0 && max_rate <= 4.0))
                          ? "--max-rate must be in [1, 4]"
                      : out != NULL && count != 1 ? "--out takes one trajectory file"
                                                  : NULL;
    if (bad != NULL) {
        fprintf(stderr, "crowdblend animate: %s\n", bad);
        return CB_EXIT_USAGE;
    }
    cb_animate_options o = {
        .graph = strcmp(graph, "none") == 0 ? NULL : graph,
        .rate_hz = rate,
        .seconds = seconds,
        .host_warp = host_warp,
        .out = out,
        .out_rate_hz = out_rate,
        .threads = (uint32_t)threads,
        .stand_speed = (float)stand,
        .follow_speed = (float)follow,
        .no_warp = no_warp,
        .no_lock = no_lock,
        .min_rate = (float)min_rate,
        .max_rate = (float)max_rate,
        .max_turn = (float)max_turn,
        .orient_rad = (float)(orient_deg * 3.14159265358979323846 / 180.0),
    };
    return run_files(files, count, &ld, &o, summary, json);
}
