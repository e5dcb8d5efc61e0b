/* The crowdblend command: one function per subcommand, and the small helpers they share. */
#ifndef CROWDBLEND_CLI_H
#define CROWDBLEND_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes: 0 success, 1 the work failed (bad input data, an error result), 2 bad usage. */
enum { CB_EXIT_OK = 0, CB_EXIT_FAILURE = 1, CB_EXIT_USAGE = 2 };

int cb_cmd_info(int argc, char **argv);
int cb_cmd_bench(int argc, char **argv);
int cb_cmd_demo(int argc, char **argv);
int cb_cmd_inspect(int argc, char **argv);
int cb_cmd_weights(int argc, char **argv);
int cb_cmd_animate(int argc, char **argv);
/* Only when built with libwebsockets (src/serve). */
int cb_cmd_serve(int argc, char **argv);
/* issue 10: assets */
int cb_cmd_import(int argc, char **argv);
int cb_cmd_pose(int argc, char **argv);
/* The `weights` command after parsing its JSON input (the fuzz target's entry, issue 10). */
struct json_t;
int cb_weights_run_document(struct json_t *root, const char *output, const char *plot,
                            long plot_size);
/* Writes s as a JSON string, quotes and control characters escaped (json_out.c). */
void cb_json_string(FILE *to, const char *s);
/* `crowdblend bench --pack FILE.cbpack` (bench_pack.c). */
int cb_bench_pack(const char *path, bool json);
/* `crowdblend inspect FILE.cbpack` (inspect_pack.c). */
int cb_inspect_pack(const char *path, bool json);

/* ---- options: --name value, --name=value, --flag ---------------------------------------- */

typedef enum cb_opt_kind { CB_OPT_FLAG, CB_OPT_INT, CB_OPT_DOUBLE, CB_OPT_STRING } cb_opt_kind;

typedef struct cb_opt {
    const char *name; /* without the leading "--" */
    cb_opt_kind kind;
    void *value; /* bool*, long*, double* or const char** */
    /* One line for --help; when it starts with the value's name in capitals and ": " ("HZ: the
     * rate ..."), the help shows "--rate HZ" and the rest, else TEXT or N by the kind. */
    const char *help;
    bool *given; /* set to true when the option is on the command line; may be NULL */
} cb_opt;

/* Parses argv[first..argc) against opts (terminated by a zero entry). CB_OPT_INT values are
 * digits with an optional '-' first ("16", "-1"; not " 16" or "+16", which strtol takes, nor
 * "0x10"), within long's range; the command's range check then says which values the option
 * allows. CB_OPT_DOUBLE values follow cb_opts_decimal. Positional arguments are stored in
 * order into positional[] (at most max_positional; more is an error). On error prints a
 * message naming the option to stderr and returns false. */
bool cb_opts_parse(const char *command, int argc, char **argv, int first, const cb_opt *opts,
                   const char **positional, size_t max_positional, size_t *positional_count);
void cb_opts_print_help(const char *usage, const cb_opt *opts);
/* The command line's numbers (CB_OPT_DOUBLE, and options parsed later from a string): a
 * decimal, an optional sign then digits with at most one '.' and an optional decimal exponent
 * ("60", "-1", "0.25", ".5", "1e-4"), finite. Hexadecimal, "inf", "nan" and spaces, which
 * strtod takes, are refused: false, and *out is left alone. */
bool cb_opts_decimal(const char *text, double *out);

/* ---- timing ------------------------------------------------------------------------------ */

/* Monotonic time in nanoseconds. */
uint64_t cb_now_ns(void);
/* CPU time of the calling thread in nanoseconds (a system call: keep it out of timed loops'
 * inner parts). */
uint64_t cb_thread_cpu_ns(void);
/* Median of n values (sorts them in place). */
double cb_median(double *values, size_t n);

#endif
