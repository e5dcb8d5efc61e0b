/* The trajectory set: the builder every loader feeds, format names and detection, and the file
 * entry point (zlib reads plain and gzipped text alike). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/base_impl.h" /* CB_PRINTF_LIKE */
#include "traj/traj_impl.h"

static const char *const format_names[CB_TRAJ_FORMAT_COUNT] = {
    "auto", "csv", "jupedsim", "vadere", "pathfinder", "crowdit", "petrack",
};

const char *cb_traj_format_name(cb_traj_format format)
{
    return (unsigned)format < CB_TRAJ_FORMAT_COUNT ? format_names[format] : NULL;
}

cb_traj_format cb_traj_format_from_name(const char *name)
{
    for (int f = 0; name != NULL && f < CB_TRAJ_FORMAT_COUNT; ++f) {
        if (strcmp(name, format_names[f]) == 0) {
            return (cb_traj_format)f;
        }
    }
    return CB_TRAJ_FORMAT_COUNT;
}

/* err's message: the prefix already written (n bytes), then fmt. */
static void finish_message(cb_error *err, int n, const char *fmt, va_list ap)
{
    if (n >= 0 && (size_t)n < sizeof err->message) {
        vsnprintf(err->message + n, sizeof err->message - (size_t)n, fmt, ap);
    }
}

cb_result cb_traj_error_at(cb_error *err, cb_result code, const traj_builder *b, uint64_t place,
                           const char *fmt, ...)
{
    if (err == NULL) {
        return code;
    }
    err->code = code;
    int n = b->place_is_row ? snprintf(err->message, sizeof err->message,
                                       "%s: row %llu: ", b->source, (unsigned long long)place)
                            : snprintf(err->message, sizeof err->message, "%s:%llu: ", b->source,
                                       (unsigned long long)place);
    va_list ap;
    va_start(ap, fmt);
    finish_message(err, n, fmt, ap);
    va_end(ap);
    return code;
}

/* An error about the whole file: "source: " and the formatted rest. */
static cb_result error_plain(cb_error *err, cb_result code, const char *source, const char *fmt,
                             ...) CB_PRINTF_LIKE(4, 5);
static cb_result error_plain(cb_error *err, cb_result code, const char *source, const char *fmt,
                             ...)
{
    if (err == NULL) {
        return code;
    }
    err->code = code;
    int n = snprintf(err->message, sizeof err->message, "%s: ", source);
    va_list ap;
    va_start(ap, fmt);
    finish_message(err, n, fmt, ap);
    va_end(ap);
    return code;
}

/* ---- builder ------------------------------------------------------------------------------ */

void cb_traj_builder_init(traj_builder *b, const char *source, bool place_is_row)
{
    memset(b, 0, sizeof *b);
    b->source = source;
    b->place_is_row = place_is_row;
}

void cb_traj_builder_finish(traj_builder *b)
{
    free(b->rows);
    b->rows = NULL;
    b->count = b->capacity = 0;
}

cb_result cb_traj_builder_add(traj_builder *b, int64_t id, double t, const double p[3],
                              uint64_t place, cb_error *err)
{
    if (!isfinite(t) || !isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2])) {
        return cb_traj_error_at(err, CB_ERR_NOT_FINITE, b, place,
                                "a time or coordinate is not "
                                "finite");
    }
    if (fabs(t) > CB_TRAJ_MAX_TIME) {
        return cb_traj_error_at(err, CB_ERR_INVALID_ARGUMENT, b, place,
                                "time %g s is beyond +-%g s", t, CB_TRAJ_MAX_TIME);
    }
    for (int k = 0; k < 3; ++k) {
        if (fabs(p[k]) > CB_TRAJ_MAX_COORDINATE) {
            return cb_traj_error_at(err, CB_ERR_INVALID_ARGUMENT, b, place,
                                    "coordinate %g m is beyond +-%g m", p[k],
                                    CB_TRAJ_MAX_COORDINATE);
        }
    }
    if (b->count == b->capacity) {
        if (b->count >= CB_TRAJ_MAX_SAMPLES) {
            return cb_traj_error_at(err, CB_ERR_TOO_MANY, b, place, "more than %u samples",
                                    CB_TRAJ_MAX_SAMPLES);
        }
        size_t cap = b->capacity ? b->capacity * 2 : 1024;
        traj_row *rows = realloc(b->rows, cap * sizeof *rows);
        if (rows == NULL) {
            return cb_traj_error_at(err, CB_ERR_OUT_OF_MEMORY, b, place, "out of memory");
        }
        b->rows = rows;
        b->capacity = cap;
    }
    b->rows[b->count++] = (traj_row){.id = id, .t = t, .p = {p[0], p[1], p[2]}, .place = place};
    return CB_OK;
}

/* By agent, then time, then place in the file: a total order, so qsort's instability cannot
 * change the result. */
static int row_order(const void *pa, const void *pb)
{
    const traj_row *a = pa, *b = pb;
    if (a->id != b->id) {
        return a->id < b->id ? -1 : 1;
    }
    if (a->t != b->t) {
        return a->t < b->t ? -1 : 1;
    }
    return a->place < b->place ? -1 : a->place > b->place;
}

/* Drops rows repeating their predecessor (same agent, time and position) where the format
 * allows it, and refuses other rows at one time. */
static cb_result dedupe(traj_builder *b, cb_error *err)
{
    size_t kept = 0;
    for (size_t i = 0; i < b->count; ++i) {
        const traj_row *r = &b->rows[i];
        if (kept > 0 && b->rows[kept - 1].id == r->id && b->rows[kept - 1].t == r->t) {
            const traj_row *prev = &b->rows[kept - 1];
            bool same = prev->p[0] == r->p[0] && prev->p[1] == r->p[1] && prev->p[2] == r->p[2];
            if (b->merge_equal && same) {
                continue;
            }
            return cb_traj_error_at(err, CB_ERR_DUPLICATE, b, r->place,
                                    "agent %lld has two %ssamples at t = %.9g s (the other at "
                                    "%s %llu)",
                                    (long long)r->id, same ? "" : "different ", r->t,
                                    b->place_is_row ? "row" : "line",
                                    (unsigned long long)prev->place);
        }
        b->rows[kept++] = *r;
    }
    b->count = kept;
    return CB_OK;
}

/* The number of agents in the sorted rows. */
static size_t count_agents(const traj_builder *b)
{
    size_t agents = 1;
    for (size_t i = 1; i < b->count; ++i) {
        agents += b->rows[i].id != b->rows[i - 1].id;
    }
    return agents;
}

/* A set with room for the agents and samples, or NULL with whatever was allocated freed. */
static cb_traj *traj_alloc(size_t agents, size_t samples)
{
    cb_traj *t = calloc(1, sizeof *t);
    if (t != NULL) {
        t->agents = calloc(agents, sizeof *t->agents);
        t->t = malloc(samples * sizeof *t->t);
        t->p = malloc(samples * 3 * sizeof *t->p);
        t->m = malloc(samples * 3 * sizeof *t->m);
    }
    if (t == NULL || t->agents == NULL || t->t == NULL || t->p == NULL || t->m == NULL) {
        cb_traj_destroy(t);
        return NULL;
    }
    return t;
}

/* Copies the sorted rows into t, agent by agent, and notes the time span. */
static void fill_samples(cb_traj *t, const traj_builder *b)
{
    t->sample_count = b->count;
    t->t_min = INFINITY;
    t->t_max = -INFINITY;
    uint32_t a = 0;
    for (size_t i = 0; i < b->count; ++i) {
        const traj_row *row = &b->rows[i];
        if (i > 0 && row->id != b->rows[i - 1].id) {
            ++a;
        }
        if (t->agents[a].count == 0) {
            t->agents[a].id = row->id;
            t->agents[a].first = (uint32_t)i;
        }
        t->agents[a].count++;
        t->t[i] = row->t;
        memcpy(&t->p[3 * i], row->p, sizeof row->p);
        t->t_min = fmin(t->t_min, row->t);
        t->t_max = fmax(t->t_max, row->t);
    }
}

cb_result cb_traj_builder_build(traj_builder *b, cb_traj_format format, double source_rate,
                                cb_traj **out, cb_error *err)
{
    cb_result r = CB_OK;
    cb_traj *t = NULL;
    if (b->count == 0) {
        r = error_plain(err, CB_ERR_TOO_FEW, b->source, "no samples");
        goto done;
    }
    qsort(b->rows, b->count, sizeof *b->rows, row_order);
    r = dedupe(b, err);
    if (r != CB_OK) {
        goto done;
    }
    size_t agents = count_agents(b);
    if (agents > CB_TRAJ_MAX_AGENTS) {
        r = error_plain(err, CB_ERR_TOO_MANY, b->source, "more than 1000000 agents");
        goto done;
    }
    t = traj_alloc(agents, b->count);
    if (t == NULL) {
        r = error_plain(err, CB_ERR_OUT_OF_MEMORY, b->source, "out of memory");
        goto done;
    }
    t->format = format;
    t->source_rate = source_rate;
    fill_samples(t, b);
    t->agent_count = (uint32_t)agents;
    cb_traj_compute_tangents(t);
    *out = t;
    t = NULL;
done:
    cb_traj_destroy(t);
    cb_traj_builder_finish(b);
    return r;
}

void cb_traj_destroy(cb_traj *t)
{
    if (t == NULL) {
        return;
    }
    free(t->agents);
    free(t->t);
    free(t->p);
    free(t->m);
    free(t);
}

double cb_traj_agent_start(const cb_traj *t, uint32_t agent)
{
    return t->t[t->agents[agent].first];
}

double cb_traj_agent_end(const cb_traj *t, uint32_t agent)
{
    return t->t[t->agents[agent].first + t->agents[agent].count - 1];
}

/* ---- format detection --------------------------------------------------------------------- */

/* The first line that is neither blank nor (when skip_comments) a '#' comment. */
static bool first_content_line(const char *text, size_t length, bool skip_comments, const char **s,
                               size_t *n)
{
    text_cursor c = {.p = text, .end = text + length};
    while (cb_text_next_line(&c, s, n)) {
        const char *ts = *s;
        size_t tn = *n;
        cb_text_trim(&ts, &tn);
        if (tn == 0 || (skip_comments && ts[0] == '#')) {
            continue;
        }
        *s = ts;
        *n = tn;
        return true;
    }
    return false;
}

/* Whether the line's first field (unquoted) is `name`, and the line holds `also` somewhere. */
static bool header_like(const char *s, size_t n, const char *name, const char *also)
{
    char buf[CB_TEXT_MAX_LINE];
    char *fields[CB_TEXT_MAX_FIELDS];
    const char *why;
    int count = cb_text_split(s, n, ',', fields, CB_TEXT_MAX_FIELDS, buf, sizeof buf, &why);
    if (count < 2 || !cb_text_is(fields[0], name)) {
        return false;
    }
    for (int k = 1; also != NULL && k < count; ++k) {
        if (cb_text_is(fields[k], also)) {
            return true;
        }
    }
    return also == NULL;
}

/* Whether a line is a CSV header whose first field is one of the plain CSV's columns. */
static bool plain_csv_header(const char *s, size_t n)
{
    static const char *const names[] = {"time", "id", "x", "y", "z"};
    if (memchr(s, ',', n) == NULL) {
        return false;
    }
    for (size_t k = 0; k < sizeof names / sizeof names[0]; ++k) {
        if (header_like(s, n, names[k], NULL)) {
            return true;
        }
    }
    return false;
}

cb_traj_format cb_traj_detect_text(const char *text, size_t length)
{
    const char *s;
    size_t n;
    if (!first_content_line(text, length, false, &s, &n)) {
        return CB_TRAJ_FORMAT_AUTO;
    }
    if (n >= 7 && memcmp(s, "#IDXCOL", 7) == 0) {
        return CB_TRAJ_FORMAT_VADERE;
    }
    /* Past any comments, the first line names the format: a header, or PeTrack's numbers. */
    if (!first_content_line(text, length, true, &s, &n)) {
        return CB_TRAJ_FORMAT_AUTO;
    }
    if (n >= 12 && memcmp(s, "pedestrianId", 12) == 0) {
        return CB_TRAJ_FORMAT_VADERE;
    }
    if (header_like(s, n, "t", "id")) {
        return CB_TRAJ_FORMAT_PATHFINDER;
    }
    if (header_like(s, n, "time", "pedID")) {
        return CB_TRAJ_FORMAT_CROWDIT;
    }
    if (plain_csv_header(s, n)) {
        return CB_TRAJ_FORMAT_CSV;
    }
    /* PeTrack rows: "id frame x y ...", whitespace-separated numbers. */
    char buf[CB_TEXT_MAX_LINE];
    char *fields[CB_TEXT_MAX_FIELDS];
    const char *why;
    int count = cb_text_split(s, n, ' ', fields, CB_TEXT_MAX_FIELDS, buf, sizeof buf, &why);
    double v;
    if (count >= 4 && cb_text_number(fields[0], &v) && cb_text_number(fields[1], &v)) {
        return CB_TRAJ_FORMAT_PETRACK;
    }
    return CB_TRAJ_FORMAT_AUTO;
}

/* ---- entry points ------------------------------------------------------------------------- */

/* Bytes of a file's first line that a message about it shows. */
enum { EXCERPT_BYTES = 40 };

/* Why text is no format auto-detection knows: it is empty, or its first line after comments
 * (shown, cut at EXCERPT_BYTES, other than printable ASCII as '?': the file may be binary) is no
 * format's header. The advice comes first, so that a long path cuts only the excerpt. */
static cb_result unknown_format(cb_error *err, const char *source, const char *text, size_t length)
{
    const char *s;
    size_t n;
    if (!first_content_line(text, length, true, &s, &n)) {
        return error_plain(err, CB_ERR_TOO_FEW, source,
                           "no trajectories: the file is empty, or holds only blank and comment "
                           "lines");
    }
    char shown[EXCERPT_BYTES + 1];
    size_t k = 0;
    for (; k < n && k < EXCERPT_BYTES; ++k) {
        shown[k] = s[k] >= 0x20 && s[k] < 0x7f ? s[k] : '?';
    }
    shown[k] = '\0';
    return error_plain(err, CB_ERR_UNSUPPORTED, source,
                       "not a trajectory format crowdblend knows: name it with --format (csv, "
                       "vadere, pathfinder, crowdit, petrack, jupedsim); a plain CSV starts "
                       "'time,id,x,y', this file '%s%s'",
                       shown, n > EXCERPT_BYTES ? "..." : "");
}

cb_result cb_traj_load_text(const char *text, size_t length, const cb_traj_load_desc *desc,
                            cb_traj **out, cb_error *err)
{
    cb_traj_load_desc d = desc != NULL ? *desc : (cb_traj_load_desc){0};
    const char *source = d.source_name != NULL ? d.source_name : "trajectories";
    if (out == NULL || (text == NULL && length > 0)) {
        return error_plain(err, CB_ERR_NULL_ARGUMENT, source, "text or out is NULL");
    }
    if ((unsigned)d.format >= CB_TRAJ_FORMAT_COUNT || !(d.fps >= 0.0) || d.fps > 1e6) {
        return error_plain(err, CB_ERR_INVALID_ARGUMENT, source, "invalid format or fps");
    }
    /* A UTF-8 byte order mark, as spreadsheet programs write, is not part of the first field. */
    if (length >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        text += 3;
        length -= 3;
    }
    cb_traj_format f = d.format;
    if (f == CB_TRAJ_FORMAT_AUTO) {
        f = cb_traj_detect_text(text, length);
        if (f == CB_TRAJ_FORMAT_AUTO) {
            return unknown_format(err, source, text, length);
        }
    }
    switch (f) {
    case CB_TRAJ_FORMAT_CSV:
    case CB_TRAJ_FORMAT_PATHFINDER:
    case CB_TRAJ_FORMAT_CROWDIT:
        return cb_traj_load_csv_like(text, length, f, source, out, err);
    case CB_TRAJ_FORMAT_VADERE:
        return cb_traj_load_vadere(text, length, source, out, err);
    case CB_TRAJ_FORMAT_PETRACK:
        return cb_traj_load_petrack(text, length, source, d.fps, out, err);
    default:
        return error_plain(err, CB_ERR_UNSUPPORTED, source,
                           "JuPedSim trajectories are SQLite files: load them from a file");
    }
}

/* Reads a whole file through zlib, which passes plain files through unchanged. */
static cb_result read_text_file(const char *path, const char *source, char **text, size_t *length,
                                cb_error *err)
{
    gzFile f = gzopen(path, "rb");
    if (f == NULL) {
        return error_plain(err, CB_ERR_IO, source, "cannot open the file");
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    cb_result r = CB_OK;
    for (;;) {
        if (buf == NULL) {
            r = error_plain(err, CB_ERR_OUT_OF_MEMORY, source, "out of memory");
            break;
        }
        if (n == cap) {
            if (cap >= CB_TRAJ_MAX_TEXT_BYTES) {
                r = error_plain(err, CB_ERR_TOO_MANY, source,
                                "more than 1 GiB of text (decompressed)");
                break;
            }
            char *bigger = realloc(buf, cap * 2);
            if (bigger == NULL) {
                free(buf);
                buf = NULL;
                continue;
            }
            buf = bigger;
            cap *= 2;
        }
        size_t want = cap - n > (1u << 30) ? (1u << 30) : cap - n;
        int got = gzread(f, buf + n, (unsigned)want);
        if (got < 0) {
            int code = 0;
            const char *why = gzerror(f, &code);
            if (err != NULL) {
                err->code = CB_ERR_IO;
                snprintf(err->message, sizeof err->message, "%s: cannot read: %s", source,
                         why != NULL ? why : "zlib error");
            }
            r = CB_ERR_IO;
            break;
        }
        if (got == 0) {
            break;
        }
        n += (size_t)got;
    }
    gzclose(f);
    if (r != CB_OK) {
        free(buf);
        return r;
    }
    *text = buf;
    *length = n;
    return CB_OK;
}

static bool is_sqlite_file(const char *path)
{
    static const char magic[16] = "SQLite format 3";
    char head[16];
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return false;
    }
    size_t got = fread(head, 1, sizeof head, f);
    fclose(f);
    return got == sizeof head && memcmp(head, magic, sizeof magic) == 0;
}

cb_result cb_traj_load_file(const char *path, const cb_traj_load_desc *desc, cb_traj **out,
                            cb_error *err)
{
    cb_traj_load_desc d = desc != NULL ? *desc : (cb_traj_load_desc){0};
    if (path == NULL || out == NULL) {
        return error_plain(err, CB_ERR_NULL_ARGUMENT, "trajectories", "path or out is NULL");
    }
    const char *source = d.source_name != NULL ? d.source_name : path;
    d.source_name = source;
    if (d.format == CB_TRAJ_FORMAT_JUPEDSIM ||
        (d.format == CB_TRAJ_FORMAT_AUTO && is_sqlite_file(path))) {
        if (!(d.fps >= 0.0) || d.fps > 1e6) {
            return error_plain(err, CB_ERR_INVALID_ARGUMENT, source, "invalid fps");
        }
        return cb_traj_load_jupedsim(path, source, d.fps, out, err);
    }
    char *text = NULL;
    size_t length = 0;
    cb_result r = read_text_file(path, source, &text, &length, err);
    if (r != CB_OK) {
        return r;
    }
    r = cb_traj_load_text(text, length, &d, out, err);
    free(text);
    return r;
}
