/* `crowdblend import INPUT -o OUTPUT.cbpack`: a glTF, FBX, BVH or Collada file through
 * crowdblend-import to a pack, with a report per clip of the rate chosen, the bytes and the
 * error measured against the source.
 *
 * The import runs in a child process: assimp reads untrusted files, and should it crash or hang
 * on one, the command survives to say so (and removes the partial output) instead of dying with
 * it. The pack itself is written to OUTPUT.tmp and renamed, so OUTPUT is never half-written. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "crowdblend/crowdblend.h"

#if CB_HAVE_IMPORT
#include "crowdblend/import.h"
#endif

static const char *const CMD = "crowdblend import";

#if CB_HAVE_IMPORT

typedef struct options {
    const char *input, *output, *root, *up, *clips, *root_motion, *root_joint, *markers, *feet,
        *graph;
    long skin;
    double scale, max_error, timeout_s, compress_error, compress_shell;
    bool loop, no_loop, json, in_process, no_compress;
} options;

static const char *const mode_names[] = {"default", "none", "xz", "xz_yaw", "xyz", "xyz_yaw"};

static bool parse_mode(const char *s, cb_root_motion *out)
{
    for (int k = 1; k < _CB_ROOT_MOTION_COUNT; ++k) {
        if (strcmp(s, mode_names[k]) == 0) {
            *out = (cb_root_motion)k;
            return true;
        }
    }
    return false;
}

/* "a,b,c" -> pointers into a copy (at most 64 names). */
static size_t split_list(char *s, const char **out, size_t max)
{
    size_t n = 0;
    for (char *tok = strtok(s, ","); tok != NULL && n < max; tok = strtok(NULL, ",")) {
        out[n++] = tok;
    }
    return n;
}

static void report_json(const options *o, const cb_import *imp, size_t pack_bytes, double ms)
{
    const cb_skeleton *s = cb_import_skeleton(imp);
    printf("{\"input\": ");
    cb_json_string(stdout, o->input);
    printf(", \"output\": ");
    cb_json_string(stdout, o->output);
    printf(", \"joints\": %u, \"clips\": [", cb_skeleton_joint_count(s));
    for (size_t i = 0; i < cb_import_clip_count(imp); ++i) {
        cb_import_clip_report r = cb_import_query_report(imp, i);
        printf("%s{\"name\": ", i ? ", " : "");
        cb_json_string(stdout, r.name);
        printf(", \"duration_s\": %.9g, \"source_keys\": %u, \"source_grid_hz\": %.9g, "
               "\"source_even\": %s, "
               "\"frames\": %u, \"rate_hz\": %.9g, \"bytes\": %zu, \"runtime_bytes\": %zu, "
               "\"max_error_m\": %.9g, \"error_bound_m\": %.9g, \"bound_met\": %s, "
               "\"candidates\": %u, \"looping\": %s, \"seam_m\": %.9g, \"root_motion\": \"%s\", "
               "\"root_speed_mps\": %.9g, \"markers\": %u, \"ground_speed_mps\": %.9g, ",
               (double)r.duration_s, r.source_keys, (double)r.source_grid_hz,
               r.source_even ? "true" : "false", r.frames, (double)r.rate_hz, r.pack_bytes,
               r.runtime_bytes, (double)r.max_error_m, (double)r.error_bound_m,
               r.bound_met ? "true" : "false", r.candidates, r.looping ? "true" : "false",
               (double)r.seam_m, mode_names[r.root_motion], (double)r.root_speed_mps, r.markers,
               (double)r.ground_speed_mps);
        printf("\"compressed\": %s, \"source_bytes\": %zu, \"compressed_keys\": %u, "
               "\"compression_error_m\": %.9g, \"compression_bound_m\": %.9g, "
               "\"compress_ms\": %.3f}",
               r.compressed ? "true" : "false", r.source_bytes, r.compressed_keys,
               (double)r.compression_error_m, (double)r.compression_bound_m, (double)r.compress_ms);
    }
    printf("], \"pack_bytes\": %zu, \"import_ms\": %.3f, \"warnings\": [", pack_bytes, ms);
    for (size_t i = 0; i < cb_import_warning_count(imp); ++i) {
        printf(i ? ", " : "");
        cb_json_string(stdout, cb_import_warning(imp, i));
    }
    printf("]}\n");
}

static void report_text(const options *o, const cb_import *imp, size_t pack_bytes, double ms)
{
    const cb_skeleton *s = cb_import_skeleton(imp);
    printf("%s -> %s: %u joints, %u clips, %zu bytes, imported in %.1f ms\n", o->input, o->output,
           cb_skeleton_joint_count(s), cb_import_clip_count(imp), pack_bytes, ms);
    for (size_t i = 0; i < cb_import_warning_count(imp); ++i) {
        printf("  note: %s\n", cb_import_warning(imp, i));
    }
    printf("\n  %-16s %9s %6s %10s %7s %9s %9s %11s %11s %-6s %7s\n", "clip", "duration", "keys",
           "key grid", "frames", "rate", "bytes", "max error", "bound", "loop", "markers");
    for (size_t i = 0; i < cb_import_clip_count(imp); ++i) {
        cb_import_clip_report r = cb_import_query_report(imp, i);
        char grid[32] = "none";
        if (r.source_grid_hz > 0.0f) {
            snprintf(grid, sizeof grid, "%.1fHz%s", (double)r.source_grid_hz,
                     r.source_even ? "" : "*");
        }
        printf("  %-16.16s %8.3fs %6u %10s %7u %7.1fHz %9zu %9.3gmm %9.3gmm %-6s %7u%s\n", r.name,
               (double)r.duration_s, r.source_keys, grid, r.frames, (double)r.rate_hz, r.pack_bytes,
               1e3 * (double)r.max_error_m, 1e3 * (double)r.error_bound_m,
               r.looping ? "loop" : "clamp", r.markers, r.bound_met ? "" : "  (bound not met)");
    }
    printf("\n  keys: distinct source key times; key grid: the coarsest uniform grid holding them\n"
           "  (*: not every grid point is a key);\n"
           "  max error: largest joint distance to the source at every key, every stored frame\n"
           "  and between them, root motion included (of the compressed clip as decoded, when\n"
           "  compressed: held to the import's bound, or to the import's plus --compress-error\n"
           "  when that is given).\n");
    for (size_t i = 0; i < cb_import_clip_count(imp); ++i) {
        cb_import_clip_report r = cb_import_query_report(imp, i);
        if (r.compressed) {
            printf("  %s: compressed %zu -> %zu bytes (%.1fx), %u of %u keys, shell error %.3g mm "
                   "(bound %.3g mm), %.1f ms\n",
                   r.name, r.source_bytes, r.pack_bytes,
                   (double)r.source_bytes / (double)r.pack_bytes, r.compressed_keys, r.frames,
                   1e3 * (double)r.compression_error_m, 1e3 * (double)r.compression_bound_m,
                   (double)r.compress_ms);
        }
    }
}

/* The pack's optional graph: its text, checked against the imported clips. */
static int add_graph(const options *o, const cb_import *imp, cb_pack_desc *pd, char **text,
                     cb_pack_graph *g)
{
    FILE *f = fopen(o->graph, "rb");
    long len = -1;
    if (f != NULL && fseek(f, 0, SEEK_END) == 0) {
        len = ftell(f);
    }
    if (f == NULL || len < 0 || fseek(f, 0, SEEK_SET) != 0 ||
        (*text = malloc((size_t)len + 1)) == NULL ||
        fread(*text, 1, (size_t)len, f) != (size_t)len) {
        if (f != NULL) {
            fclose(f);
        }
        fprintf(stderr, "%s: --graph %s: cannot read it\n", CMD, o->graph);
        return CB_EXIT_FAILURE;
    }
    fclose(f);
    cb_graph_json_desc jd = {.skeleton = cb_import_skeleton(imp),
                             .clips = pd->clips,
                             .clip_count = pd->clip_count,
                             .source_name = o->graph};
    cb_graph *graph = NULL;
    cb_error err = {0};
    if (cb_graph_load_json(*text, (size_t)len, &jd, &graph, &err) != CB_OK) {
        fprintf(stderr, "%s: --graph: %s\n", CMD, err.message);
        return CB_EXIT_FAILURE;
    }
    cb_graph_destroy(graph);
    const char *base = strrchr(o->graph, '/');
    base = base != NULL ? base + 1 : o->graph;
    static char name[CB_JOINT_NAME_MAX + 1];
    snprintf(name, sizeof name, "%s", base);
    char *dot = strrchr(name, '.');
    if (dot != NULL && dot != name) {
        *dot = '\0';
    }
    *g = (cb_pack_graph){name, *text, (size_t)len};
    pd->graphs = g;
    pd->graph_count = 1;
    return CB_EXIT_OK;
}

/* The import itself (in the child process, or in-process with --in-process). */
static int run_import(const options *o, const cb_import_desc *d)
{
    cb_import *imp = NULL;
    cb_error err = {0};
    uint64_t t0 = cb_now_ns();
    cb_result r = cb_import_file(d, &imp, &err);
    double ms = (double)(cb_now_ns() - t0) / 1e6;
    if (r != CB_OK) {
        /* The library's messages start with "import: ". */
        bool prefixed = strncmp(err.message, "import: ", 8) == 0;
        fprintf(stderr, "%s%s\n", prefixed ? "crowdblend " : "crowdblend import: ", err.message);
        return CB_EXIT_FAILURE;
    }
    cb_pack_desc pd = cb_import_pack_desc(imp);
    char *text = NULL;
    cb_pack_graph graph;
    int rc = o->graph != NULL ? add_graph(o, imp, &pd, &text, &graph) : CB_EXIT_OK;
    size_t bytes = 0;
    if (rc == CB_EXIT_OK && (cb_pack_save_memory(&pd, NULL, 0, &bytes, &err) != CB_OK ||
                             cb_pack_save(&pd, o->output, &err) != CB_OK)) {
        fprintf(stderr, "%s: %s\n", CMD, err.message);
        rc = CB_EXIT_FAILURE;
    }
    if (rc == CB_EXIT_OK) {
        if (o->json) {
            report_json(o, imp, bytes, ms);
        } else {
            report_text(o, imp, bytes, ms);
        }
    }
    free(text);
    cb_import_destroy(imp);
    return rc;
}

/* Runs the import in a child; a crash or a hang there becomes an error message here. */
static int run_guarded(const options *o, const cb_import_desc *d)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "%s: cannot start the importer process: %s\n", CMD, strerror(errno));
        return CB_EXIT_FAILURE;
    }
    if (pid == 0) {
        alarm((unsigned)o->timeout_s);
        if (getenv("CB_IMPORT_SELFTEST_CRASH") != NULL) {
            /* The tests' way to check this guard without a file that crashes assimp. */
            abort();
        }
        int rc = run_import(o, d);
        fflush(stdout);
        exit(rc);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "%s: lost the importer process: %s\n", CMD, strerror(errno));
            return CB_EXIT_FAILURE;
        }
    }
    if (WIFEXITED(status)) {
        return WEXITSTATUS(status) == 0 ? CB_EXIT_OK : CB_EXIT_FAILURE;
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", o->output);
    remove(tmp);
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    fprintf(stderr,
            "%s: the importer (assimp) %s on %s (signal %d%s); nothing was written. This is a "
            "bug in the input file or in assimp; see docs/reliability.md\n",
            CMD, sig == SIGALRM ? "took longer than --timeout" : "crashed", o->input, sig,
            sig == SIGALRM ? ", SIGALRM" : "");
    return CB_EXIT_FAILURE;
}

static int usage_error(const char *msg)
{
    fprintf(stderr, "%s: %s (try --help)\n", CMD, msg);
    return CB_EXIT_USAGE;
}

/* -o is the one short option: rewrite it before the common parser sees it. */
static void rewrite_short_output(int argc, char **argv)
{
    for (int i = 2; i < argc; ++i) {
        if (strcmp(argv[i], "-o") == 0) {
            argv[i] = "--output";
        }
    }
}

/* The numbers' ranges and --loop against --no-loop: the message for the first one wrong, or
 * NULL. */
static const char *bad_numbers(const options *o)
{
    if (o->compress_error < 0.0 || o->compress_shell < 0.0) {
        return "--compress-error and --compress-shell are > 0";
    }
    if (o->skin < -1 || o->skin > 1000000 || o->scale < 0.0 || o->max_error < 0.0 ||
        !(o->timeout_s >= 1.0 && o->timeout_s <= 86400.0)) {
        return "--skin, --scale, --max-error or --timeout is out of range";
    }
    if (o->loop && o->no_loop) {
        return "--loop and --no-loop exclude each other";
    }
    return NULL;
}

/* Looping, the up axis and the root motion into d: the message for the first option wrong, or
 * NULL. */
static const char *set_motion(const options *o, cb_import_desc *d)
{
    d->loop = o->loop      ? CB_IMPORT_LOOP_FORCE
              : o->no_loop ? CB_IMPORT_LOOP_NEVER
                           : CB_IMPORT_LOOP_AUTO;
    if (o->up != NULL) {
        if (strcmp(o->up, "y") != 0 && strcmp(o->up, "z") != 0) {
            return "--up is y or z";
        }
        d->up = o->up[0] == 'y' ? CB_IMPORT_UP_Y : CB_IMPORT_UP_Z;
    }
    if (o->root_motion != NULL && !parse_mode(o->root_motion, &d->root_motion)) {
        return "--root-motion is none, xz, xz_yaw, xyz or xyz_yaw";
    }
    return NULL;
}

/* The copies of --clips and --detect-foot-plants that the import's names point into. */
typedef struct name_lists {
    char clips_copy[4096], feet_copy[512];
    const char *clip_names[64], *feet[2];
} name_lists;

/* The clip and foot joint names into d: the message when --detect-foot-plants is not two
 * names, or NULL. */
static const char *set_names(const options *o, name_lists *l, cb_import_desc *d)
{
    if (o->clips != NULL) {
        snprintf(l->clips_copy, sizeof l->clips_copy, "%s", o->clips);
        d->clips = l->clip_names;
        d->clip_count = (uint32_t)split_list(l->clips_copy, l->clip_names, 64);
    }
    if (o->feet != NULL) {
        snprintf(l->feet_copy, sizeof l->feet_copy, "%s", o->feet);
        if (split_list(l->feet_copy, l->feet, 2) != 2) {
            return "--detect-foot-plants takes LEFT,RIGHT";
        }
        d->foot_left = l->feet[0];
        d->foot_right = l->feet[1];
    }
    return NULL;
}

/* The import's description from the options: the message for the first option wrong, or
 * NULL. lists holds the names d points into. */
static const char *import_desc(const options *o, name_lists *lists, cb_import_desc *d)
{
    *d = (cb_import_desc){.path = o->input,
                          .skin = (int)o->skin,
                          .root = o->root,
                          .scale = (float)o->scale,
                          .max_error_m = (float)o->max_error,
                          .root_motion_joint = o->root_joint,
                          .markers_path = o->markers,
                          .compression = o->no_compress ? CB_IMPORT_COMPRESSION_NONE
                                                        : CB_IMPORT_COMPRESSION_ON,
                          .compression_error_m = (float)o->compress_error,
                          .compression_shell_m = (float)o->compress_shell};
    const char *bad = bad_numbers(o);
    if (bad == NULL) {
        bad = set_motion(o, d);
    }
    if (bad == NULL) {
        bad = set_names(o, lists, d);
    }
    return bad;
}

int cb_cmd_import(int argc, char **argv)
{
    bool help = false;
    options o = {.skin = -1, .timeout_s = 600.0};
    const cb_opt opts[] = {
        {"output", CB_OPT_STRING, &o.output, "the pack to write (required; also -o)"},
        {"skin", CB_OPT_INT, &o.skin, "which skin (glTF skins[N]; default the first)"},
        {"root", CB_OPT_STRING, &o.root, "skeleton: the node hierarchy under this node"},
        {"scale", CB_OPT_DOUBLE, &o.scale, "units to metres (default 1; FBX: its header's)"},
        {"up", CB_OPT_STRING, &o.up, "the file's up axis: y (default) or z"},
        {"clips", CB_OPT_STRING, &o.clips, "only these animations: a,b,... (default all)"},
        {"max-error", CB_OPT_DOUBLE, &o.max_error,
         "error bound in metres (default 0.0001, or 1e-4 x height above 2.5 m)"},
        {"loop", CB_OPT_FLAG, &o.loop, "make every clip loop"},
        {"no-loop", CB_OPT_FLAG, &o.no_loop, "make every clip clamp"},
        {"root-motion", CB_OPT_STRING, &o.root_motion,
         "none, xz, xz_yaw, xyz or xyz_yaw (default xz_yaw; xz for a root pointing up)"},
        {"root-motion-joint", CB_OPT_STRING, &o.root_joint,
         "the root joint root motion comes from (default joint 0)"},
        {"markers", CB_OPT_STRING, &o.markers, "sidecar marker file (JSON)"},
        {"detect-foot-plants", CB_OPT_STRING, &o.feet,
         "LEFT,RIGHT foot joints: foot_plant_l/r markers, foot_lift_l/r events"},
        {"graph", CB_OPT_STRING, &o.graph, "also store this graph JSON (checked) in the pack"},
        {"no-compress", CB_OPT_FLAG, &o.no_compress, "store raw frames (default: compressed)"},
        {"compress-error", CB_OPT_DOUBLE, &o.compress_error,
         "compression bound in metres on the shell (default: the error bound)"},
        {"compress-shell", CB_OPT_DOUBLE, &o.compress_shell,
         "compression shell distance in metres (default 0.03, scaled as the bound)"},
        {"json", CB_OPT_FLAG, &o.json, "print the report as one JSON object"},
        {"timeout", CB_OPT_DOUBLE, &o.timeout_s, "seconds before a hung import is stopped (600)"},
        {"in-process", CB_OPT_FLAG, &o.in_process,
         "import in this process (no crash guard; for debuggers)"},
        {"help", CB_OPT_FLAG, &help, "show this help"},
        {0},
    };
    rewrite_short_output(argc, argv);
    const char *positional[1] = {NULL};
    size_t npos = 0;
    if (!cb_opts_parse(CMD, argc, argv, 2, opts, positional, 1, &npos)) {
        return CB_EXIT_USAGE;
    }
    if (help) {
        cb_opts_print_help("crowdblend import INPUT -o OUTPUT.cbpack [options]", opts);
        return CB_EXIT_OK;
    }
    o.input = positional[0];
    if (o.input == NULL || o.output == NULL) {
        return usage_error("needs an INPUT file and -o OUTPUT.cbpack");
    }
    cb_import_desc d;
    name_lists lists;
    const char *bad = import_desc(&o, &lists, &d);
    if (bad != NULL) {
        return usage_error(bad);
    }
    return o.in_process ? run_import(&o, &d) : run_guarded(&o, &d);
}

#else

int cb_cmd_import(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr,
            "%s: this build has no importer (meson option import: assimp, Debian "
            "libassimp-dev, was not found)\n",
            CMD);
    return CB_EXIT_FAILURE;
}

#endif
