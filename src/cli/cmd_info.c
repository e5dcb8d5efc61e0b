#include <stdio.h>

#include "cli/cli.h"
#include "crowdblend/crowdblend.h"

int cb_cmd_info(int argc, char **argv)
{
    bool help = false, json = false;
    const cb_opt opts[] = {
        {"json", CB_OPT_FLAG, &json, "print one JSON object"},
        {"help", CB_OPT_FLAG, &help, "show this help"},
        {0},
    };
    if (!cb_opts_parse("crowdblend info", argc, argv, 2, opts, NULL, 0, NULL)) {
        return CB_EXIT_USAGE;
    }
    if (help) {
        cb_opts_print_help("crowdblend info [--json]", opts);
        return CB_EXIT_OK;
    }
    cb_build_info b = cb_query_build_info();
    if (json) {
        printf("{\"version\": \"%s\", \"isa\": \"%s\", \"simd_width\": %u, \"fma\": %s, "
               "\"compiler\": \"%s\", \"debug\": %s}\n",
               b.version, b.isa, b.simd_width, b.fma ? "true" : "false", b.compiler,
               b.debug ? "true" : "false");
        return CB_EXIT_OK;
    }
    printf("crowdblend %s\n", b.version);
    printf("  isa          %s\n", b.isa);
    printf("  SIMD width   %u floats (%u-bit vectors)\n", b.simd_width, b.simd_width * 32);
    printf("  FMA          %s\n", b.fma ? "yes" : "no");
    printf("  compiler     %s\n", b.compiler);
    printf("  build        %s\n", b.debug ? "debug (asserts on)" : "release");
    return CB_EXIT_OK;
}
