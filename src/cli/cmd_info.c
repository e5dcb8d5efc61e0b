#include <stdio.h>

#include "cli/cli.h"
#include "crowdblend/crowdblend.h"

/* The kernel sets of a mask, comma-separated, into buf. */
static const char *set_list(unsigned mask, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int s = 0; s < CB_KERNEL_SET_COUNT && len < size; ++s) {
        if ((mask >> s) & 1u) {
            len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? "," : "",
                                    cb_kernel_set_name((cb_kernel_set)s));
        }
    }
    return buf;
}

/* s as the body of a JSON string (the reason quotes CROWDBLEND_ISA, which may hold anything). */
static const char *json_escaped(const char *s, char *buf, size_t size)
{
    size_t n = 0;
    for (; *s != '\0' && n + 7 < size; ++s) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            buf[n++] = '\\';
            buf[n++] = (char)c;
        } else if (c < 0x20) {
            n += (size_t)snprintf(buf + n, size - n, "\\u%04x", c);
        } else {
            buf[n++] = (char)c;
        }
    }
    buf[n] = '\0';
    return buf;
}

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
    cb_kernel_info k = cb_simd_kernel_info();
    char built[64], supported[64], reason[512];
    set_list(k.built, built, sizeof built);
    set_list(k.supported & k.built, supported, sizeof supported);
    if (json) {
        printf("{\"version\": \"%s\", \"isa\": \"%s\", \"kernel_set\": \"%s\", \"simd_width\": %u, "
               "\"dispatch\": %s, \"kernel_sets_built\": \"%s\", \"kernel_sets_supported\": "
               "\"%s\", \"reason\": \"%s\", \"fma\": %s, \"compiler\": \"%s\", \"debug\": %s}\n",
               b.version, b.isa, k.name, k.simd_width, k.dispatch ? "true" : "false", built,
               supported, json_escaped(k.reason, reason, sizeof reason), b.fma ? "true" : "false",
               b.compiler, b.debug ? "true" : "false");
        return CB_EXIT_OK;
    }
    printf("crowdblend %s\n", b.version);
    printf("  isa          %s (%s)\n", b.isa,
           k.dispatch ? "kernel sets chosen at start-up" : "one kernel set, fixed when built");
    printf("  kernel set   %s: %s\n", k.name, k.reason);
    printf("  SIMD width   %u floats (%u-bit vectors)\n", k.simd_width, k.simd_width * 32);
    printf("  carried      %s (this CPU runs: %s)\n", built, supported);
    printf("  FMA          %s\n", b.fma ? "fused" : "unfused on every set: one result everywhere");
    printf("  compiler     %s\n", b.compiler);
    printf("  build        %s\n", b.debug ? "debug (asserts on)" : "release");
    return CB_EXIT_OK;
}
