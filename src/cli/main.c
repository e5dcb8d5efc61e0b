/* crowdblend: the command-line front end of the library. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "crowdblend/crowdblend.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"demo", cb_cmd_demo, "a crowd of characters wandering on the embedded set, timed by stage"},
    {"info", cb_cmd_info, "version and build: the kernel set in use and why, SIMD width, compiler"},
    {"bench", cb_cmd_bench,
     "the standard workloads W0-W5 at 1 and all threads (--kernels: SIMD kernels)"},
    {"inspect", cb_cmd_inspect, "a pack, or the embedded humanoid and locomotion clips (--json)"},
    {"weights", cb_cmd_weights,
     "blend weights of queries in a blend space (JSON), weight maps (PNG)"},
    {"import", cb_cmd_import, "glTF/FBX/BVH/Collada to a pack (.cbpack), with the error measured"},
    {"pose", cb_cmd_pose, "model-space joints of a pack's clip at a time (--json)"},
    {"animate", cb_cmd_animate,
     "a crowd along simulator trajectories: foot skate, pops, glTF (--out)"},
#ifdef CB_HAVE_SERVE
    {"serve", cb_cmd_serve, "stream a crowd to the browser viewer over WebSocket (docs/serve.md)"},
#endif
};

static void usage(FILE *to)
{
    fprintf(to, "usage: crowdblend <command> [options]   (crowdblend <command> --help)\n\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; ++i) {
        fprintf(to, "  %-10s %s\n", commands[i].name, commands[i].summary);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? CB_EXIT_USAGE : CB_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("crowdblend %s\n", cb_query_build_info().version);
        return CB_EXIT_OK;
    }
    /* A kernel set asked for by CROWDBLEND_ISA but refused (the CPU lacks it, or this library
     * does not carry it) is worth a word: the command runs, but not as asked. */
    cb_kernel_info k = cb_simd_kernel_info();
    if (k.refused) {
        fprintf(stderr, "crowdblend: warning: %s\n", k.reason);
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; ++i) {
        if (strcmp(argv[1], commands[i].name) == 0) {
            return commands[i].run(argc, argv);
        }
    }
    fprintf(stderr, "crowdblend: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return CB_EXIT_USAGE;
}
