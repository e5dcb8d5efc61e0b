/* The three CSV formats, one reader: a header names the columns, each format maps its own
 * names onto time, id, x, y and z.
 *   csv         time,id,x,y[,z] in any order, nothing else (docs/trajectories.md);
 *   crowdit     crowd:it: time,pedID,posX,posY (other columns ignored);
 *   pathfinder  Pathfinder: "t","id",...,"x","y","z",... then a units row ("s", "m", ...);
 *               lengths in m, cm, mm, ft or in and times in s or ms are converted.
 * Blank lines and lines starting with '#' are skipped in every one of them. */
#include <string.h>

#include "traj/traj_impl.h"

enum { ROLE_TIME, ROLE_ID, ROLE_X, ROLE_Y, ROLE_Z, ROLE_COUNT };

typedef struct csv_dialect {
    const char *names[ROLE_COUNT]; /* the header name of each role */
    bool z_required;
    bool strict;    /* every column must be one of the roles */
    bool units_row; /* a row of units follows the header */
} csv_dialect;

static const csv_dialect dialects[] = {
    [CB_TRAJ_FORMAT_CSV] = {{"time", "id", "x", "y", "z"}, false, true, false},
    [CB_TRAJ_FORMAT_CROWDIT] = {{"time", "pedID", "posX", "posY", "posZ"}, false, false, false},
    [CB_TRAJ_FORMAT_PATHFINDER] = {{"t", "id", "x", "y", "z"}, false, false, true},
};

typedef struct csv_state {
    const csv_dialect *dialect;
    traj_builder *b;
    int column[ROLE_COUNT]; /* the column of each role, -1 if absent */
    int columns;            /* fields per row */
    double scale[ROLE_COUNT];
} csv_state;

/* What each role is, for a message about a missing column of a format whose names differ. */
static const char *const role_words[ROLE_COUNT] = {"sample time", "agent id", "x coordinate",
                                                   "y coordinate", "z coordinate"};

static cb_result read_header(csv_state *st, char **fields, int count, uint64_t line, cb_error *err)
{
    for (int r = 0; r < ROLE_COUNT; ++r) {
        st->column[r] = -1;
        st->scale[r] = 1.0;
    }
    for (int k = 0; k < count; ++k) {
        int role = -1;
        for (int r = 0; r < ROLE_COUNT; ++r) {
            if (cb_text_is(fields[k], st->dialect->names[r])) {
                role = r;
            }
        }
        if (role < 0 && st->dialect->strict) {
            return cb_traj_error_at(err, CB_ERR_PARSE, st->b, line,
                                    "unknown column '%s' (the columns are time, id, x, y and "
                                    "optionally z)",
                                    fields[k]);
        }
        if (role >= 0 && st->column[role] >= 0) {
            return cb_traj_error_at(err, CB_ERR_PARSE, st->b, line, "column '%s' appears twice",
                                    fields[k]);
        }
        if (role >= 0) {
            st->column[role] = k;
        }
    }
    for (int r = 0; r < ROLE_COUNT; ++r) {
        if (st->column[r] < 0 && (r != ROLE_Z || st->dialect->z_required)) {
            return cb_traj_error_at(err, CB_ERR_PARSE, st->b, line,
                                    "the header has no column '%s' (the %s)", st->dialect->names[r],
                                    role_words[r]);
        }
    }
    st->columns = count;
    return CB_OK;
}

static cb_result read_units(csv_state *st, char **fields, int count, uint64_t line, cb_error *err)
{
    if (count != st->columns) {
        return cb_traj_error_at(err, CB_ERR_PARSE, st->b, line,
                                "the units row has %d fields, the header %d", count, st->columns);
    }
    for (int r = 0; r < ROLE_COUNT; ++r) {
        if (st->column[r] < 0 || r == ROLE_ID) {
            continue;
        }
        const char *unit = fields[st->column[r]];
        st->scale[r] = cb_text_unit_scale(unit, r == ROLE_TIME);
        if (st->scale[r] == 0.0) {
            return cb_traj_error_at(
                err, CB_ERR_UNSUPPORTED, st->b, line, "unknown unit '%s' for column '%s' (%s)",
                unit, st->dialect->names[r], r == ROLE_TIME ? "s or ms" : "m, cm, mm, ft or in");
        }
    }
    return CB_OK;
}

static cb_result read_row(csv_state *st, char **fields, int count, uint64_t line, cb_error *err)
{
    if (count != st->columns) {
        return cb_traj_error_at(err, CB_ERR_PARSE, st->b, line, "%d fields where the header has %d",
                                count, st->columns);
    }
    int64_t id;
    const char *bad_id = cb_text_integer_problem(fields[st->column[ROLE_ID]], &id);
    if (bad_id != NULL) {
        return cb_traj_error_at(err, CB_ERR_PARSE, st->b, line, "column '%s': '%s' %s",
                                st->dialect->names[ROLE_ID], fields[st->column[ROLE_ID]], bad_id);
    }
    double v[ROLE_COUNT] = {0};
    for (int r = 0; r < ROLE_COUNT; ++r) {
        if (r == ROLE_ID || st->column[r] < 0) {
            continue;
        }
        if (!cb_text_number(fields[st->column[r]], &v[r])) {
            return cb_traj_error_at(err, CB_ERR_PARSE, st->b, line,
                                    "column '%s': '%s' is not a finite number",
                                    st->dialect->names[r], fields[st->column[r]]);
        }
        v[r] *= st->scale[r];
    }
    double p[3] = {v[ROLE_X], v[ROLE_Y], v[ROLE_Z]};
    return cb_traj_builder_add(st->b, id, v[ROLE_TIME], p, line, err);
}

cb_result cb_traj_load_csv_like(const char *text, size_t length, cb_traj_format format,
                                const char *source, cb_traj **out, cb_error *err)
{
    traj_builder b;
    cb_traj_builder_init(&b, source, false);
    csv_state st = {.dialect = &dialects[format], .b = &b};
    text_records t = {.c = {.p = text, .end = text + length}, .sep = ','};
    int stage = 0; /* 0: header next, 1: units next, 2: rows */
    bool have = true;
    cb_result r = CB_OK;
    while (r == CB_OK && (r = cb_text_next_record(&t, &b, &have, err)) == CB_OK && have) {
        if (stage == 0) {
            r = read_header(&st, t.fields, t.count, t.c.line, err);
            stage = st.dialect->units_row ? 1 : 2;
        } else if (stage == 1) {
            r = read_units(&st, t.fields, t.count, t.c.line, err);
            stage = 2;
        } else {
            r = read_row(&st, t.fields, t.count, t.c.line, err);
        }
    }
    if (r == CB_OK && stage < 2) {
        r = cb_traj_error_at(err, CB_ERR_PARSE, &b, t.c.line + 1,
                             stage == 0 ? "no header (expected %s)"
                                        : "no units row after the "
                                          "header%s",
                             stage == 0 ? "a line naming the columns" : "");
    }
    if (r != CB_OK) {
        cb_traj_builder_finish(&b);
        return r;
    }
    return cb_traj_builder_build(&b, format, 0.0, out, err);
}
