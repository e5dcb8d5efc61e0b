/* Vadere's postvis trajectories (.traj): an optional "#IDXCOL=..." line, a header naming the
 * columns (pedestrianId simTime endTime-PID1 startX-PID1 startY-PID1 endX-PID1 endY-PID1 ...;
 * the "-PIDn" suffixes name Vadere's output processors and are ignored), then one row per
 * straight step of a pedestrian: from (startX, startY) at simTime to (endX, endY) at endTime.
 * Each step gives two samples; a step's end and the next step's start, written at one time and
 * one place, become one sample. Between two steps that do not touch in time the pedestrian
 * stands. */
#include <string.h>

#include "traj/traj_impl.h"

enum { COL_ID, COL_T0, COL_T1, COL_X0, COL_Y0, COL_X1, COL_Y1, COL_COUNT };
static const char *const col_names[COL_COUNT] = {"pedestrianId", "simTime", "endTime", "startX",
                                                 "startY",       "endX",    "endY"};

/* The column name without its "-PIDn" processor suffix. */
static void base_name(const char *field, char *out, size_t size)
{
    size_t n = strcspn(field, "-");
    if (n >= size) {
        n = size - 1;
    }
    memcpy(out, field, n);
    out[n] = '\0';
}

static cb_result read_header(traj_builder *b, char **fields, int count, uint64_t line,
                             int column[COL_COUNT], cb_error *err)
{
    for (int k = 0; k < COL_COUNT; ++k) {
        column[k] = -1;
    }
    for (int f = 0; f < count; ++f) {
        char name[64];
        base_name(fields[f], name, sizeof name);
        for (int k = 0; k < COL_COUNT; ++k) {
            if (strcmp(name, col_names[k]) == 0) {
                if (column[k] >= 0) {
                    return cb_traj_error_at(err, CB_ERR_PARSE, b, line, "column '%s' appears twice",
                                            col_names[k]);
                }
                column[k] = f;
            }
        }
    }
    for (int k = 0; k < COL_COUNT; ++k) {
        if (column[k] < 0) {
            return cb_traj_error_at(err, CB_ERR_PARSE, b, line,
                                    "the header has no column '%s' (expected pedestrianId "
                                    "simTime endTime startX startY endX endY)",
                                    col_names[k]);
        }
    }
    return CB_OK;
}

static cb_result read_step(traj_builder *b, char **fields, int count, int columns, uint64_t line,
                           const int column[COL_COUNT], cb_error *err)
{
    if (count != columns) {
        return cb_traj_error_at(err, CB_ERR_PARSE, b, line, "%d fields where the header has %d",
                                count, columns);
    }
    int64_t id;
    const char *bad_id = cb_text_integer_problem(fields[column[COL_ID]], &id);
    if (bad_id != NULL) {
        return cb_traj_error_at(err, CB_ERR_PARSE, b, line, "pedestrianId '%s' %s",
                                fields[column[COL_ID]], bad_id);
    }
    double v[COL_COUNT];
    for (int k = 1; k < COL_COUNT; ++k) {
        if (!cb_text_number(fields[column[k]], &v[k])) {
            return cb_traj_error_at(err, CB_ERR_PARSE, b, line, "%s '%s' is not a finite number",
                                    col_names[k], fields[column[k]]);
        }
    }
    if (v[COL_T1] < v[COL_T0]) {
        return cb_traj_error_at(err, CB_ERR_PARSE, b, line,
                                "the step ends (endTime %.9g) before it starts (simTime %.9g)",
                                v[COL_T1], v[COL_T0]);
    }
    double p0[3] = {v[COL_X0], v[COL_Y0], 0.0}, p1[3] = {v[COL_X1], v[COL_Y1], 0.0};
    cb_result r = cb_traj_builder_add(b, id, v[COL_T0], p0, line, err);
    return r != CB_OK ? r : cb_traj_builder_add(b, id, v[COL_T1], p1, line, err);
}

cb_result cb_traj_load_vadere(const char *text, size_t length, const char *source, cb_traj **out,
                              cb_error *err)
{
    traj_builder b;
    cb_traj_builder_init(&b, source, false);
    b.merge_equal = true;
    text_records t = {.c = {.p = text, .end = text + length}, .sep = ' '};
    int column[COL_COUNT], columns = 0;
    bool have = true;
    cb_result r = CB_OK;
    while (r == CB_OK && (r = cb_text_next_record(&t, &b, &have, err)) == CB_OK && have) {
        if (columns == 0) {
            r = read_header(&b, t.fields, t.count, t.c.line, column, err);
            columns = t.count;
        } else {
            r = read_step(&b, t.fields, t.count, columns, t.c.line, column, err);
        }
    }
    if (r == CB_OK && columns == 0) {
        r = cb_traj_error_at(err, CB_ERR_PARSE, &b, t.c.line + 1,
                             "no header (expected pedestrianId simTime endTime startX startY "
                             "endX endY)");
    }
    if (r != CB_OK) {
        cb_traj_builder_finish(&b);
        return r;
    }
    return cb_traj_builder_build(&b, CB_TRAJ_FORMAT_VADERE, 0.0, out, err);
}
