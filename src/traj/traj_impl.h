/* Internals of the trajectory loaders: the sample builder every format feeds, and the text
 * reading they share (lines, fields, numbers), so that each rule is written once. */
#ifndef CROWDBLEND_TRAJ_IMPL_H
#define CROWDBLEND_TRAJ_IMPL_H

#include <stdbool.h>

#include "traj/traj.h"

/* ---- the builder: rows in any order -> agents with time-sorted samples -------------------- */

typedef struct traj_row {
    int64_t id;
    double t;
    double p[3];
    uint64_t place; /* line (text) or row id (SQLite), for messages */
} traj_row;

typedef struct traj_builder {
    const char *source;
    bool place_is_row; /* messages say "row N" instead of ":N" */
    /* Vadere writes each step's end and the next step's start as two rows at one time: equal
     * positions at one time are merged instead of refused. */
    bool merge_equal;
    traj_row *rows;
    size_t count, capacity;
} traj_builder;

void cb_traj_builder_init(traj_builder *b, const char *source, bool place_is_row);
void cb_traj_builder_finish(traj_builder *b);

/* Adds a sample, checking its values (finite, within range); err names the place. */
cb_result cb_traj_builder_add(traj_builder *b, int64_t id, double t, const double p[3],
                              uint64_t place, cb_error *err);

/* Sorts, checks for duplicate times, and makes the cb_traj (tangents included). The builder's
 * rows are released either way. */
cb_result cb_traj_builder_build(traj_builder *b, cb_traj_format format, double source_rate,
                                cb_traj **out, cb_error *err);

/* Fills traj->m from the samples (resample.c). */
void cb_traj_compute_tangents(cb_traj *traj);

/* Formats "source:place: " or "source: row place: " followed by the message into err. */
cb_result cb_traj_error_at(cb_error *err, cb_result code, const traj_builder *b, uint64_t place,
                           const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* Longest line and most fields a text loader accepts. */
enum { CB_TEXT_MAX_LINE = 4096, CB_TEXT_MAX_FIELDS = 64 };

/* ---- text --------------------------------------------------------------------------------- */

/* Walks a buffer line by line; `line` is the 1-based number of the line last returned. */
typedef struct text_cursor {
    const char *p, *end;
    uint64_t line;
} text_cursor;

/* The next line without its end-of-line characters ("\n", "\r\n" or "\r"); false at the end. */
bool cb_text_next_line(text_cursor *c, const char **s, size_t *n);

/* Skips spaces and tabs at both ends. */
void cb_text_trim(const char **s, size_t *n);

/* Whether a line is empty after trimming. */
bool cb_text_blank(const char *s, size_t n);

/* Splits a line into fields, at most `max`. sep ',' : CSV (fields may be double-quoted, with ""
 * for a quote; spaces around fields are trimmed); sep ' ': runs of spaces and tabs. The fields
 * are copied, NUL-terminated, into buf (buf_size bytes). Returns the field count, or -1 when a
 * field is malformed (an unclosed quote), there are more than max fields or buf is too small;
 * *why then says which. */
int cb_text_split(const char *s, size_t n, char sep, char **fields, int max, char *buf,
                  size_t buf_size, const char **why);

/* Parses a whole field as a finite double / an integer within int64. */
bool cb_text_number(const char *field, double *out);
/* Reads a decimal integer field (no leading space, nothing after it, within 64 bits) into *out:
 * NULL, or what is wrong with it ("is not an integer", "is beyond ..."), for a message after
 * the field. */
const char *cb_text_integer_problem(const char *field, int64_t *out);

/* Case-sensitive equality of a field with a name. */
bool cb_text_is(const char *field, const char *name);

/* Metres per length unit (m, cm, mm, ft, in) or seconds per time unit (s, ms); 0 if unknown. */
double cb_text_unit_scale(const char *unit, bool time);

/* Records of a delimited text: lines that are neither blank nor '#' comments, split into
 * fields (cb_text_split). */
typedef struct text_records {
    text_cursor c;
    char sep;
    int count; /* fields of the record last returned */
    char *fields[CB_TEXT_MAX_FIELDS];
    char buf[CB_TEXT_MAX_LINE];
} text_records;

/* The next record into t->fields / t->count (*have false at the end of the text); a malformed
 * line is CB_ERR_PARSE with its place. */
cb_result cb_text_next_record(text_records *t, const traj_builder *b, bool *have, cb_error *err);

/* Loaders of the text formats (each reads the whole text). */
cb_result cb_traj_load_csv_like(const char *text, size_t length, cb_traj_format format,
                                const char *source, cb_traj **out, cb_error *err);
cb_result cb_traj_load_vadere(const char *text, size_t length, const char *source, cb_traj **out,
                              cb_error *err);
cb_result cb_traj_load_petrack(const char *text, size_t length, const char *source, double fps,
                               cb_traj **out, cb_error *err);
cb_result cb_traj_load_jupedsim(const char *path, const char *source, double fps, cb_traj **out,
                                cb_error *err);

/* The text format of a buffer, from its first lines; CB_TRAJ_FORMAT_AUTO when unrecognised. */
cb_traj_format cb_traj_detect_text(const char *text, size_t length);

#endif
