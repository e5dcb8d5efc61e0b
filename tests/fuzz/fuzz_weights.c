/* libFuzzer target: the input of `crowdblend weights` (a JSON blend space and queries), through
 * the command's own code after parsing (cb_weights_run_document in src/cli/cmd_weights.c).
 *
 * Contract on every output: weights finite and in [0, 1]; each row sums to 1 (blend solvers: a
 * partition of unity; velocity_blend_4dir: 1 - |z| / speed, so at most 1, exactly 1 for ground
 * motion, 0 when standing; direct: all zeros, and only then, when no parameter is positive or
 * one is not finite as a float, solvers/direct.c); and the batch equals the same queries one at a
 * time, bit for bit (the first eight queries are re-run alone). finterp_to returns values, not
 * weights: only finiteness is checked there. The output goes through a file in /dev/shm (what the
 * command writes), read back with jansson. */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

static char out_path[128];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(out_path, sizeof out_path, "%s/cb_fuzz_weights_%ld.json", dir, (long)getpid());
    return 0;
}

/* Runs the command on a document; returns its weights (NULL when it refused the input). */
static json_t *run(json_t *doc)
{
    remove(out_path);
    if (cb_weights_run_document(doc, out_path, NULL, 160) != 0) {
        return NULL;
    }
    json_t *out = json_load_file(out_path, 0, NULL);
    json_t *w = json_incref(json_object_get(out, "weights"));
    json_decref(out);
    if (w == NULL) {
        fprintf(stderr, "contract: the command succeeded without weights\n");
        abort();
    }
    return w;
}

/* Whether a direct query gets all-zero weights (solvers/direct.c): no parameter is positive,
 * or one is not finite once read as a float (as the command reads it). */
static bool direct_all_zero(json_t *query)
{
    bool positive = false;
    size_t n = json_is_array(query) ? json_array_size(query) : 1;
    for (size_t k = 0; k < n; ++k) {
        json_t *v = json_is_array(query) ? json_array_get(query, k) : query;
        float f = (float)json_number_value(v);
        if (!isfinite(f)) {
            return true;
        }
        positive |= f > 0.0f;
    }
    return !positive;
}

static void check_row(json_t *row, bool weights, bool velocity, bool zero_row)
{
    double sum = 0.0;
    for (size_t k = 0; k < json_array_size(row); ++k) {
        double v = json_number_value(json_array_get(row, k));
        if (!isfinite(v) || (weights && (v < 0.0 || v > 1.0 + 1e-6))) {
            fprintf(stderr, "contract: weight %zu is %g\n", k, v);
            abort();
        }
        sum += v;
    }
    if (zero_row && sum != 0.0) {
        fprintf(stderr, "contract: a direct query with no positive finite parameter sums to %.9g\n",
                sum);
        abort();
    }
    if (weights && !velocity && !zero_row && fabs(sum - 1.0) > 1e-5) {
        fprintf(stderr, "contract: a row sums to %.9g, not 1\n", sum);
        abort();
    }
    if (velocity && sum > 1.0 + 1e-5) {
        fprintf(stderr, "contract: velocity weights sum to %.9g > 1\n", sum);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *doc = json_loadb((const char *)data, size, 0, NULL);
    if (doc == NULL) {
        return 0;
    }
    json_t *w = run(doc);
    if (w != NULL) {
        const char *solver = json_string_value(json_object_get(doc, "solver"));
        bool interp = solver != NULL && strcmp(solver, "finterp_to") == 0;
        bool velocity = solver != NULL && strcmp(solver, "velocity_blend_4dir") == 0;
        bool direct = solver != NULL && strcmp(solver, "direct") == 0;
        json_t *queries = json_object_get(doc, "queries");
        for (size_t r = 0; r < json_array_size(w); ++r) {
            bool zero_row = direct && direct_all_zero(json_array_get(queries, r));
            check_row(json_array_get(w, r), !interp, velocity, zero_row);
        }
        /* One at a time: the same document with a single query. */
        for (size_t q = 0; q < json_array_size(queries) && q < 8; ++q) {
            json_t *one = json_deep_copy(doc);
            json_t *single = json_array();
            json_array_append(single, json_array_get(queries, q));
            json_object_set_new(one, "queries", single);
            json_t *w1 = run(one);
            if (w1 == NULL || !json_equal(json_array_get(w1, 0), json_array_get(w, q))) {
                fprintf(stderr, "contract: query %zu alone differs from the batch\n", q);
                abort();
            }
            json_decref(w1);
            json_decref(one);
        }
        json_decref(w);
    }
    json_decref(doc);
    return 0;
}
