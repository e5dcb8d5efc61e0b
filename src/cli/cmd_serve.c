/* `crowdblend serve`: the crowd as a service, streamed to the browser viewer (docs/serve.md). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/example_graphs.h"
#include "crowdblend/crowd.h"
#include "crowdblend/pack.h"
#include "serve/serve.h"
#include "traj/traj.h"

#ifndef CB_SERVE_WEB_ROOT
#define CB_SERVE_WEB_ROOT "web"
#endif

/* What the command line gave, before it is checked. */
typedef struct serve_args {
    bool help, verbose;
    long characters, capacity, threads, max_clients, seed;
    double seconds, area, max_turn;
    const char *graph, *listen, *web_root, *model, *pack, *trajectories, *gait;
} serve_args;

/* False, with the first fault on stderr, when an option is out of its range or lacks the
 * options it works with. */
static bool args_ok(const serve_args *a)
{
    if (a->characters < 1 || a->characters > (long)CB_CROWD_MAX_CAPACITY || a->capacity < 0 ||
        a->capacity > (long)CB_CROWD_MAX_CAPACITY ||
        (a->capacity != 0 && a->capacity < a->characters)) {
        fprintf(stderr,
                "crowdblend serve: --characters must be in 1..%u, --capacity at least "
                "--characters\n",
                CB_CROWD_MAX_CAPACITY);
        return false;
    }
    if (a->threads < 0 || a->threads > 1024 || a->max_clients < 1 || a->max_clients > 64 ||
        a->seconds < 0.0 || !(a->area >= 1.0 && a->area <= 1e5)) {
        fprintf(stderr, "crowdblend serve: --threads must be in 0..1024, --max-clients in 1..64, "
                        "--seconds >= 0, --area in [1, 100000]\n");
        return false;
    }
    if (!(a->max_turn >= 0.0 && a->max_turn <= 1000.0) ||
        (a->max_turn != 0.0 && a->trajectories == NULL)) {
        fprintf(stderr, "crowdblend serve: --max-turn must be in [0, 1000] rad/s, and is for "
                        "--trajectories\n");
        return false;
    }
    if (a->gait != NULL && (a->trajectories == NULL || a->pack == NULL)) {
        fprintf(stderr, "crowdblend serve: --gait names a pack's clip for the follower: it needs "
                        "--trajectories and --pack (the embedded set's gait is walk_f)\n");
        return false;
    }
    return true;
}

/* False, with a message, when --model names a file that cannot be read. */
static bool model_readable(const char *model)
{
    FILE *f = model != NULL ? fopen(model, "rb") : NULL;
    if (model != NULL && f == NULL) {
        fprintf(stderr, "crowdblend serve: --model: cannot read '%s'\n", model);
        return false;
    }
    if (f != NULL) {
        fclose(f);
    }
    return true;
}

static cb_serve_desc serve_desc_of(const serve_args *a, const cb_pack *pack, const cb_traj *traj)
{
    return (cb_serve_desc){
        .graph = a->graph,
        .characters = (uint32_t)a->characters,
        .capacity = (uint32_t)a->capacity,
        .threads = (uint32_t)a->threads,
        .listen = a->listen,
        .web_root = a->web_root,
        .model = a->model,
        .max_clients = (uint32_t)a->max_clients,
        .seconds = a->seconds,
        .seed = (uint64_t)a->seed,
        .verbose = a->verbose,
        .pack = pack,
        .area = (float)a->area,
        .traj = traj,
        .max_turn_rps = (float)a->max_turn,
        .gait = a->gait,
    };
}

/* Loads the pack and the trajectories, checks the model, and serves. */
static int serve_files(const serve_args *a)
{
    /* Both files are checked now, so that a bad one stops the command with a clear message
     * rather than a server that runs and then fails the viewer. */
    cb_pack *pack = NULL;
    cb_error err = {0};
    if (a->pack != NULL && cb_pack_load_file(a->pack, NULL, &pack, &err) != CB_OK) {
        fprintf(stderr, "crowdblend serve: --pack: %s\n", err.message);
        return CB_EXIT_FAILURE;
    }
    if (!model_readable(a->model)) {
        cb_pack_destroy(pack);
        return CB_EXIT_FAILURE;
    }
    cb_traj *traj = NULL;
    if (a->trajectories != NULL && cb_traj_load_file(a->trajectories, NULL, &traj, &err) != CB_OK) {
        fprintf(stderr, "crowdblend serve: --trajectories: %s\n", err.message);
        cb_pack_destroy(pack);
        return CB_EXIT_FAILURE;
    }
    cb_serve_desc d = serve_desc_of(a, pack, traj);
    int code = cb_serve_run(&d);
    cb_traj_destroy(traj);
    cb_pack_destroy(pack);
    return code;
}

int cb_cmd_serve(int argc, char **argv)
{
    serve_args a = {.characters = 1000,
                    .max_clients = 16,
                    .seed = 1,
                    .area = 200.0,
                    .listen = "127.0.0.1:8080",
                    .web_root = CB_SERVE_WEB_ROOT};
    const cb_opt opts[] = {
        {"pack", CB_OPT_STRING, &a.pack,
         "run a pack's skeleton, clips and graphs instead of the embedded set (with --model: the "
         "pack's source .glb, drawn as skinned meshes)"},
        {"graph", CB_OPT_STRING, &a.graph,
         "graph to run: an example's name, a JSON file, or none (default " CB_DEFAULT_EXAMPLE_GRAPH
         "; with --pack: a graph stored in the pack or a JSON file, default the pack's first)"},
        {"characters", CB_OPT_INT, &a.characters, "characters at start (default 1000)"},
        {"capacity", CB_OPT_INT, &a.capacity,
         "most characters at once, for clients that add some (default: characters + 25 %, at "
         "least + 64)"},
        {"listen", CB_OPT_STRING, &a.listen,
         "HOST:PORT to listen on; port 0 picks a free one (default 127.0.0.1:8080, loopback "
         "only)"},
        {"threads", CB_OPT_INT, &a.threads, "threads of the crowd's pool (default: all CPUs)"},
        {"max-clients", CB_OPT_INT, &a.max_clients,
         "WebSocket clients at once, 1..64 (default 16)"},
        {"web-root", CB_OPT_STRING, &a.web_root,
         "the viewer's folder, with public/ and node_modules/ (default: this source tree's web/)"},
        {"model", CB_OPT_STRING, &a.model,
         "a .glb whose joints the viewer drives by name (served at /models/NAME)"},
        {"seconds", CB_OPT_DOUBLE, &a.seconds,
         "stop after this many seconds (default: run until "
         "Ctrl-C)"},
        {"seed", CB_OPT_INT, &a.seed, "seed of the wandering (default 1)"},
        {"area", CB_OPT_DOUBLE, &a.area,
         "half the side of the square, centred on the origin, where characters appear (m; "
         "default 200)"},
        {"trajectories", CB_OPT_STRING, &a.trajectories,
         "play a crowd-simulator trajectory file (formats: crowdblend animate) in real time, "
         "looping: its agents are the characters (--characters is then ignored)"},
        {"max-turn", CB_OPT_DOUBLE, &a.max_turn,
         "with --trajectories: most the heading turns per second, rad/s (default 0: no limit; "
         "as crowdblend animate --max-turn)"},
        {"gait", CB_OPT_STRING, &a.gait,
         "with --trajectories and --pack: the pack's clip, moving its root forward, whose speed "
         "the follower's playback-rate warp matches (the graph needs a \"rate\"; as crowdblend "
         "animate --gait)"},
        {"verbose", CB_OPT_FLAG, &a.verbose, "print libwebsockets' notices"},
        {"help", CB_OPT_FLAG, &a.help, "show this help"},
        {0},
    };
    if (!cb_opts_parse("crowdblend serve", argc, argv, 2, opts, NULL, 0, NULL)) {
        return CB_EXIT_USAGE;
    }
    if (a.help) {
        cb_opts_print_help("crowdblend serve [--pack FILE.cbpack [--model FILE.glb]] "
                           "[--graph NAME|FILE|none] [--characters N | --trajectories FILE "
                           "[--max-turn R] [--gait CLIP (with --pack)]] "
                           "[--listen 127.0.0.1:8080] [--threads N]",
                           opts);
        return CB_EXIT_OK;
    }
    return args_ok(&a) ? serve_files(&a) : CB_EXIT_USAGE;
}
