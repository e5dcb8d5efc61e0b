/* `crowdblend demo`: a crowd on the embedded data wandering for a few simulated seconds, driven
 * by an animation graph (by default the locomotion example with an upper-body layer and a
 * head look-at), then where the time went, stage by stage, and what the characters did. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/example_graphs.h"
#include "cli/scene.h"

static void progress(bool tty, uint32_t frame, uint32_t frames, double ms_per_frame)
{
    if (tty) {
        enum { BAR = 40 };
        int filled = (int)((uint64_t)frame * BAR / frames);
        char bar[BAR + 1];
        memset(bar, '#', (size_t)filled);
        memset(bar + filled, '.', (size_t)(BAR - filled));
        bar[BAR] = '\0';
        printf("\r  [%s] %3u%%  frame %u/%u  %.2f ms/frame", bar,
               (unsigned)((uint64_t)frame * 100 / frames), frame, frames, ms_per_frame);
        if (frame == frames) {
            printf("\n");
        }
        fflush(stdout);
    } else if (frame == frames || frame % (frames / 10 ? frames / 10 : 1) == 0) {
        printf("  frame %u/%u (%u%%), %.2f ms/frame\n", frame, frames,
               (unsigned)((uint64_t)frame * 100 / frames), ms_per_frame);
        fflush(stdout);
    }
}

/* What the characters did: events per second, and where each state machine's characters are
 * at the end. */
static void print_activity(const cb_crowd *crowd, uint32_t characters, uint64_t events,
                           uint32_t frames)
{
    const cb_graph *g = cb_crowd_graph(crowd, 0);
    printf("  events (markers crossed): %.1f per character per second of animation\n",
           (double)events / characters / frames * 60.0);
    for (uint32_t m = 0; m < cb_graph_state_machine_count(g); ++m) {
        uint32_t states = cb_graph_state_count(g, m), counts[64] = {0}, in_transition = 0;
        for (uint32_t i = 0; i < characters; ++i) {
            uint32_t s = cb_crowd_state(crowd, 0, m, i);
            counts[s < 64 ? s : 63]++;
            in_transition += cb_crowd_next_state(crowd, 0, m, i) != UINT32_MAX;
        }
        printf("  machine %u, last frame:", m);
        for (uint32_t s = 0; s < states && s < 64; ++s) {
            printf(" %s %u%s", cb_graph_state_name(g, m, s), counts[s], s + 1 < states ? "," : "");
        }
        printf(" (%u in a transition)\n", in_transition);
    }
}

/* What the command line gave, before it is checked. */
typedef struct demo_args {
    bool help, json;
    long characters, threads, hz, seed;
    double seconds;
    const char *solver, *graph, *pack;
} demo_args;

/* False, with the first fault on stderr, when an option is unknown or out of its range. */
static bool args_ok(const demo_args *a, cb_solver_kind *kind)
{
    if (cb_solver_kind_from_name(a->solver, kind) != CB_OK) {
        fprintf(stderr, "crowdblend demo: unknown solver '%s'\n", a->solver);
        return false;
    }
    if (a->characters < 1 || a->characters > (long)CB_CROWD_MAX_CAPACITY) {
        fprintf(stderr, "crowdblend demo: --characters must be in 1..%u\n", CB_CROWD_MAX_CAPACITY);
        return false;
    }
    if (!(a->seconds > 0.0 && a->seconds <= 3600.0) || a->hz < 1 || a->hz > 1000) {
        fprintf(stderr, "crowdblend demo: --seconds must be in (0, 3600], --hz in 1..1000\n");
        return false;
    }
    if (a->threads < 0 || a->threads > 1024) {
        fprintf(stderr, "crowdblend demo: --threads must be in 0..1024\n");
        return false;
    }
    return true;
}

/* True when the command line names a graph (--graph NAME or --graph=NAME). */
static bool graph_named(int argc, char **argv)
{
    bool named = false;
    for (int i = 2; i < argc; ++i) {
        named = named || strncmp(argv[i], "--graph", 7) == 0;
    }
    return named;
}

/* issue 10: a pack instead of the embedded set; --graph then names a file or one of the
 * pack's graphs (default: its first). False, said on stderr, when the pack does not load. */
static bool open_pack(demo_args *a, int argc, char **argv, cb_pack **pack)
{
    if (a->pack == NULL) {
        return true;
    }
    cb_error err = {0};
    if (cb_pack_load_file(a->pack, NULL, pack, &err) != CB_OK) {
        fprintf(stderr, "crowdblend demo: %s\n", err.message);
        return false;
    }
    if (!graph_named(argc, argv)) {
        a->graph = cb_scene_pack_default_graph(*pack);
        a->graph = a->graph != NULL ? a->graph : "none";
    }
    return true;
}

/* What a run measured: the crowd's update time and the events it reported. */
typedef struct demo_run {
    uint32_t frames;
    uint64_t crowd_ns, events;
} demo_run;

/* Runs every frame: the host's step, then the timed crowd update. False, said on stderr, when
 * an update fails. */
static bool run_frames(cb_scene *scene, const demo_args *a, bool tty, demo_run *run)
{
    cb_crowd *crowd = cb_scene_crowd(scene);
    float dt = 1.0f / (float)a->hz;
    for (uint32_t f = 1; f <= run->frames; ++f) {
        cb_scene_host_step(scene, dt);
        uint64_t t0 = cb_now_ns();
        cb_result r = cb_crowd_update(crowd, dt);
        run->crowd_ns += cb_now_ns() - t0;
        for (uint32_t i = 0; i < (uint32_t)a->characters; ++i) {
            uint32_t n = 0;
            cb_crowd_events(crowd, 0, i, &n);
            run->events += n;
        }
        if (r != CB_OK) {
            fprintf(stderr, "crowdblend demo: update failed: %s\n", cb_result_str(r));
            return false;
        }
        if (!a->json) {
            progress(tty, f, run->frames, (double)run->crowd_ns / 1e6 / f);
        }
    }
    return true;
}

/* The sum of every stage's thread time. */
static uint64_t stage_total_ns(const cb_crowd_stats *st)
{
    uint64_t stage_total = 0;
    for (int k = 0; k < _CB_CROWD_STAGE_COUNT; ++k) {
        stage_total += st->stage_ns[k];
    }
    return stage_total;
}

/* The report as one JSON object. */
static void print_json(const cb_crowd *crowd, const demo_args *a, const demo_run *run,
                       uint32_t nthreads)
{
    cb_crowd_stats st = cb_crowd_query_stats(crowd);
    double wall_s = (double)run->crowd_ns / 1e9;
    double cps = (double)a->characters * run->frames / wall_s;
    uint64_t stage_total = stage_total_ns(&st);
    cb_kernel_info set = cb_simd_kernel_info();
    printf("{\"graph\": ");
    cb_json_string(stdout, a->graph);
    printf(", \"kernel_set\": \"%s\", \"simd_width\": %u, \"characters\": %ld, "
           "\"frames\": %u, \"threads\": %u, \"characters_per_second\": %.0f, "
           "\"ms_per_frame\": %.4f, \"stages\": {",
           set.name, set.simd_width, a->characters, run->frames, nthreads, cps,
           (double)run->crowd_ns / 1e6 / run->frames);
    for (int k = 0; k < _CB_CROWD_STAGE_COUNT; ++k) {
        /* Thread time spread over the threads: the stage's share of a frame's wall time. */
        double ms = (double)st.stage_ns[k] / 1e6 / run->frames / nthreads;
        printf("%s\"%s\": {\"ms_per_frame\": %.4f, \"share\": %.4f}", k ? ", " : "",
               cb_crowd_stage_name((cb_crowd_stage)k), ms,
               stage_total ? (double)st.stage_ns[k] / (double)stage_total : 0.0);
    }
    printf("}, \"checksum\": \"%016llx\", \"nonfinite_params\": %llu}\n",
           (unsigned long long)cb_crowd_output_hash(crowd),
           (unsigned long long)st.nonfinite_params);
}

/* The report as a table: where the time went, stage by stage, then what the characters did. */
static void print_table(const cb_crowd *crowd, const demo_args *a, const demo_run *run,
                        uint32_t nthreads)
{
    cb_crowd_stats st = cb_crowd_query_stats(crowd);
    double wall_s = (double)run->crowd_ns / 1e9;
    double chars = (double)a->characters * run->frames;
    double cps = chars / wall_s;
    uint64_t stage_total = stage_total_ns(&st);
    printf("\n  %-16s %10s %18s %8s\n", "stage", "ms/frame", "characters/s/core", "share");
    for (int k = 0; k < _CB_CROWD_STAGE_COUNT; ++k) {
        double ms = (double)st.stage_ns[k] / 1e6 / run->frames / nthreads;
        double per_core = st.stage_ns[k] ? chars / ((double)st.stage_ns[k] / 1e9) : 0.0;
        printf("  %-16s %10.3f %18.0f %7.1f%%\n", cb_crowd_stage_name((cb_crowd_stage)k), ms,
               per_core, stage_total ? 100.0 * (double)st.stage_ns[k] / (double)stage_total : 0.0);
    }
    printf("  %-16s %10.3f %18.0f\n", "whole frame", (double)run->crowd_ns / 1e6 / run->frames,
           cps / nthreads);
    printf("  (a stage's ms/frame: its time summed over the %u threads and divided by them, so "
           "the stages add up to about the frame's wall time)\n",
           nthreads);
    printf("\n  %.0f characters per second on %u threads (%.0f per thread), %.3f us per "
           "character-frame per thread\n",
           cps, nthreads, cps / nthreads, 1e6 * nthreads / cps);
    printf("  checksum of the last frame's outputs: %016llx\n",
           (unsigned long long)cb_crowd_output_hash(crowd));
    print_activity(crowd, (uint32_t)a->characters, run->events, run->frames);
}

/* Builds the scene, runs it and prints the report: the command's exit code. */
static int run_demo(const demo_args *a, cb_solver_kind kind, const cb_pack *pack)
{
    cb_scene_desc sd = {
        .characters = (uint32_t)a->characters,
        .threads = (uint32_t)a->threads,
        .solver = kind,
        .layers = true,
        .profile = true,
        .seed = (uint64_t)a->seed,
        .graph = strcmp(a->graph, "none") == 0 ? NULL : a->graph,
        .pack = pack,
    };
    cb_scene *scene = cb_scene_create(&sd);
    if (scene == NULL) {
        return CB_EXIT_FAILURE;
    }
    demo_run run = {.frames = (uint32_t)(a->seconds * (double)a->hz + 0.5)};
    run.frames = run.frames ? run.frames : 1;
    bool tty = !a->json && isatty(STDOUT_FILENO);
    if (!a->json) {
        printf("crowdblend demo: %ld characters, %u frames (%.1f s at %ld Hz), %u threads, %s\n",
               a->characters, run.frames, a->seconds, a->hz, cb_scene_threads(scene),
               sd.graph != NULL ? sd.graph : a->solver);
    }
    bool ok = run_frames(scene, a, tty, &run);
    if (ok) {
        const cb_crowd *crowd = cb_scene_crowd(scene);
        if (a->json) {
            print_json(crowd, a, &run, cb_scene_threads(scene));
        } else {
            print_table(crowd, a, &run, cb_scene_threads(scene));
        }
    }
    cb_scene_destroy(scene);
    return ok ? CB_EXIT_OK : CB_EXIT_FAILURE;
}

int cb_cmd_demo(int argc, char **argv)
{
    demo_args a = {.characters = 10000,
                   .hz = 60,
                   .seed = 1,
                   .seconds = 10.0,
                   .solver = "freeform_directional_2d",
                   .graph = CB_DEFAULT_EXAMPLE_GRAPH};
    const cb_opt opts[] = {
        {"pack", CB_OPT_STRING, &a.pack,
         "run a pack's skeleton and clips (needs --graph FILE, or uses the pack's graph)"},
        {"graph", CB_OPT_STRING, &a.graph,
         "graph to run: an example's name (locomotion_8dir, locomotion_upper_body_look_at, "
         "direct_blend, locomotion_follow), a JSON file, or none (the blend-space crowd; "
         "default " CB_DEFAULT_EXAMPLE_GRAPH ")"},
        {"characters", CB_OPT_INT, &a.characters, "crowd size (default 10000)"},
        {"seconds", CB_OPT_DOUBLE, &a.seconds, "simulated seconds (default 10)"},
        {"hz", CB_OPT_INT, &a.hz, "frames per simulated second (default 60)"},
        {"threads", CB_OPT_INT, &a.threads, "threads, caller included (default: all CPUs)"},
        {"solver", CB_OPT_STRING, &a.solver,
         "blend-space solver with --graph none (default freeform_directional_2d)"},
        {"seed", CB_OPT_INT, &a.seed, "seed of the wandering (default 1)"},
        {"json", CB_OPT_FLAG, &a.json, "print one JSON object instead of the table"},
        {"help", CB_OPT_FLAG, &a.help, "show this help"},
        {0},
    };
    if (!cb_opts_parse("crowdblend demo", argc, argv, 2, opts, NULL, 0, NULL)) {
        return CB_EXIT_USAGE;
    }
    if (a.help) {
        cb_opts_print_help(
            "crowdblend demo [--pack FILE.cbpack] [--graph NAME|FILE|none] "
            "[--characters N] "
            "[--seconds S] [--threads T] [--solver NAME] [--hz N] [--seed N] [--json]",
            opts);
        return CB_EXIT_OK;
    }
    cb_solver_kind kind;
    if (!args_ok(&a, &kind)) {
        return CB_EXIT_USAGE;
    }
    cb_pack *pack = NULL;
    if (!open_pack(&a, argc, argv, &pack)) {
        return CB_EXIT_FAILURE;
    }
    int code = run_demo(&a, kind, pack);
    cb_pack_destroy(pack);
    return code;
}
