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

int cb_cmd_serve(int argc, char **argv)
{
    bool help = false, verbose = false;
    long characters = 1000, capacity = 0, threads = 0, max_clients = 16, seed = 1;
    double seconds = 0.0, area = 200.0, max_turn = 0.0;
    const char *graph = NULL, *listen = "127.0.0.1:8080";
    const char *web_root = CB_SERVE_WEB_ROOT, *model = NULL, *pack_path = NULL;
    const char *trajectories = NULL, *gait = NULL;
    const cb_opt opts[] = {
        {"pack", CB_OPT_STRING, &pack_path,
         "run a pack's skeleton, clips and graphs instead of the embedded set (with --model: the "
         "pack's source .glb, drawn as skinned meshes)"},
        {"graph", CB_OPT_STRING, &graph,
         "graph to run: an example's name, a JSON file, or none (default " CB_DEFAULT_EXAMPLE_GRAPH
         "; with --pack: a graph stored in the pack or a JSON file, default the pack's first)"},
        {"characters", CB_OPT_INT, &characters, "characters at start (default 1000)"},
        {"capacity", CB_OPT_INT, &capacity,
         "most characters at once, for clients that add some (default: characters + 25 %, at "
         "least + 64)"},
        {"listen", CB_OPT_STRING, &listen,
         "HOST:PORT to listen on; port 0 picks a free one (default 127.0.0.1:8080, loopback "
         "only)"},
        {"threads", CB_OPT_INT, &threads, "threads of the crowd's pool (default: all CPUs)"},
        {"max-clients", CB_OPT_INT, &max_clients, "WebSocket clients at once, 1..64 (default 16)"},
        {"web-root", CB_OPT_STRING, &web_root,
         "the viewer's folder, with public/ and node_modules/ (default: this source tree's web/)"},
        {"model", CB_OPT_STRING, &model,
         "a .glb whose joints the viewer drives by name (served at /models/NAME)"},
        {"seconds", CB_OPT_DOUBLE, &seconds,
         "stop after this many seconds (default: run until "
         "Ctrl-C)"},
        {"seed", CB_OPT_INT, &seed, "seed of the wandering (default 1)"},
        {"area", CB_OPT_DOUBLE, &area,
         "half the side of the square, centred on the origin, where characters appear (m; "
         "default 200)"},
        {"trajectories", CB_OPT_STRING, &trajectories,
         "play a crowd-simulator trajectory file (formats: crowdblend animate) in real time, "
         "looping: its agents are the characters (--characters is then ignored)"},
        {"max-turn", CB_OPT_DOUBLE, &max_turn,
         "with --trajectories: most the heading turns per second, rad/s (default 0: no limit; "
         "as crowdblend animate --max-turn)"},
        {"gait", CB_OPT_STRING, &gait,
         "with --trajectories and --pack: the pack's clip, moving its root forward, whose speed "
         "the follower's playback-rate warp matches (the graph needs a \"rate\"; as crowdblend "
         "animate --gait)"},
        {"verbose", CB_OPT_FLAG, &verbose, "print libwebsockets' notices"},
        {"help", CB_OPT_FLAG, &help, "show this help"},
        {0},
    };
    if (!cb_opts_parse("crowdblend serve", argc, argv, 2, opts, NULL, 0, NULL)) {
        return CB_EXIT_USAGE;
    }
    if (help) {
        cb_opts_print_help("crowdblend serve [--pack FILE.cbpack [--model FILE.glb]] "
                           "[--graph NAME|FILE|none] [--characters N | --trajectories FILE "
                           "[--max-turn R] [--gait CLIP (with --pack)]] "
                           "[--listen 127.0.0.1:8080] [--threads N]",
                           opts);
        return CB_EXIT_OK;
    }
    if (characters < 1 || characters > (long)CB_CROWD_MAX_CAPACITY || capacity < 0 ||
        capacity > (long)CB_CROWD_MAX_CAPACITY || (capacity != 0 && capacity < characters)) {
        fprintf(stderr,
                "crowdblend serve: --characters must be in 1..%u, --capacity at least "
                "--characters\n",
                CB_CROWD_MAX_CAPACITY);
        return CB_EXIT_USAGE;
    }
    if (threads < 0 || threads > 1024 || max_clients < 1 || max_clients > 64 || seconds < 0.0 ||
        !(area >= 1.0 && area <= 1e5)) {
        fprintf(stderr, "crowdblend serve: --threads must be in 0..1024, --max-clients in 1..64, "
                        "--seconds >= 0, --area in [1, 100000]\n");
        return CB_EXIT_USAGE;
    }
    if (!(max_turn >= 0.0 && max_turn <= 1000.0) || (max_turn != 0.0 && trajectories == NULL)) {
        fprintf(stderr, "crowdblend serve: --max-turn must be in [0, 1000] rad/s, and is for "
                        "--trajectories\n");
        return CB_EXIT_USAGE;
    }
    if (gait != NULL && (trajectories == NULL || pack_path == NULL)) {
        fprintf(stderr, "crowdblend serve: --gait names a pack's clip for the follower: it needs "
                        "--trajectories and --pack (the embedded set's gait is walk_f)\n");
        return CB_EXIT_USAGE;
    }
    /* Both files are checked now, so that a bad one stops the command with a clear message
     * rather than a server that runs and then fails the viewer. */
    cb_pack *pack = NULL;
    cb_error err = {0};
    if (pack_path != NULL && cb_pack_load_file(pack_path, NULL, &pack, &err) != CB_OK) {
        fprintf(stderr, "crowdblend serve: --pack: %s\n", err.message);
        return CB_EXIT_FAILURE;
    }
    FILE *f = model != NULL ? fopen(model, "rb") : NULL;
    if (model != NULL && f == NULL) {
        fprintf(stderr, "crowdblend serve: --model: cannot read '%s'\n", model);
        cb_pack_destroy(pack);
        return CB_EXIT_FAILURE;
    }
    if (f != NULL) {
        fclose(f);
    }
    cb_traj *traj = NULL;
    if (trajectories != NULL && cb_traj_load_file(trajectories, NULL, &traj, &err) != CB_OK) {
        fprintf(stderr, "crowdblend serve: --trajectories: %s\n", err.message);
        cb_pack_destroy(pack);
        return CB_EXIT_FAILURE;
    }
    cb_serve_desc d = {
        .graph = graph,
        .characters = (uint32_t)characters,
        .capacity = (uint32_t)capacity,
        .threads = (uint32_t)threads,
        .listen = listen,
        .web_root = web_root,
        .model = model,
        .max_clients = (uint32_t)max_clients,
        .seconds = seconds,
        .seed = (uint64_t)seed,
        .verbose = verbose,
        .pack = pack,
        .area = (float)area,
        .traj = traj,
        .max_turn_rps = (float)max_turn,
        .gait = gait,
    };
    int code = cb_serve_run(&d);
    cb_traj_destroy(traj);
    cb_pack_destroy(pack);
    return code;
}
