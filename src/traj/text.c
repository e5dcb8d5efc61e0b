/* Text reading shared by the trajectory loaders: lines, fields and numbers. Every function
 * reads only within the buffer it is given (the fuzz targets hold it to that). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "traj/traj_impl.h"

bool cb_text_next_line(text_cursor *c, const char **s, size_t *n)
{
    if (c->p >= c->end) {
        return false;
    }
    const char *start = c->p, *q = c->p;
    while (q < c->end && *q != '\n' && *q != '\r') {
        ++q;
    }
    *s = start;
    *n = (size_t)(q - start);
    if (q < c->end && *q == '\r') {
        ++q;
    }
    if (q < c->end && *q == '\n') {
        ++q;
    }
    c->p = q;
    c->line++;
    return true;
}

static bool is_space(char ch)
{
    return ch == ' ' || ch == '\t';
}

void cb_text_trim(const char **s, size_t *n)
{
    while (*n > 0 && is_space(**s)) {
        ++*s;
        --*n;
    }
    while (*n > 0 && is_space((*s)[*n - 1])) {
        --*n;
    }
}

bool cb_text_blank(const char *s, size_t n)
{
    cb_text_trim(&s, &n);
    return n == 0;
}

/* Appends one field [s, s + n) to buf, unquoting a CSV field when asked. */
static bool put_field(const char *s, size_t n, bool csv, char **fields, int *count, int max,
                      char *buf, size_t buf_size, size_t *used, const char **why)
{
    if (*count >= max) {
        *why = "too many fields";
        return false;
    }
    if (*used + n + 1 > buf_size) {
        *why = "line too long";
        return false;
    }
    char *dst = buf + *used;
    size_t k = 0;
    if (csv && n >= 1 && s[0] == '"') {
        if (n < 2 || s[n - 1] != '"') {
            *why = "unclosed quote";
            return false;
        }
        for (size_t i = 1; i + 1 < n; ++i) {
            if (s[i] == '"') {
                /* Inside quotes a quote must be doubled. */
                if (i + 2 >= n || s[i + 1] != '"') {
                    *why = "stray quote inside a quoted field";
                    return false;
                }
                ++i;
            }
            dst[k++] = s[i];
        }
    } else {
        memcpy(dst, s, n);
        k = n;
    }
    dst[k] = '\0';
    fields[(*count)++] = dst;
    *used += k + 1;
    return true;
}

int cb_text_split(const char *s, size_t n, char sep, char **fields, int max, char *buf,
                  size_t buf_size, const char **why)
{
    int count = 0;
    size_t used = 0, i = 0;
    *why = NULL;
    if (memchr(s, '\0', n) != NULL) {
        /* A NUL would end a field early and hide what follows it from the number parser. */
        *why = "NUL byte in the line";
        return -1;
    }
    if (sep == ',') {
        for (;;) {
            /* A field runs to the next comma outside quotes. */
            size_t start = i;
            bool quoted = false;
            while (i < n && (quoted || s[i] != ',')) {
                if (s[i] == '"') {
                    quoted = !quoted;
                }
                ++i;
            }
            if (quoted) {
                *why = "unclosed quote";
                return -1;
            }
            const char *f = s + start;
            size_t fn = i - start;
            cb_text_trim(&f, &fn);
            if (!put_field(f, fn, true, fields, &count, max, buf, buf_size, &used, why)) {
                return -1;
            }
            if (i >= n) {
                return count;
            }
            ++i; /* the comma */
        }
    }
    while (i < n) {
        while (i < n && is_space(s[i])) {
            ++i;
        }
        if (i >= n) {
            break;
        }
        size_t start = i;
        while (i < n && !is_space(s[i])) {
            ++i;
        }
        if (!put_field(s + start, i - start, false, fields, &count, max, buf, buf_size, &used,
                       why)) {
            return -1;
        }
    }
    return count;
}

bool cb_text_number(const char *field, double *out)
{
    if (field[0] == '\0' || is_space(field[0])) {
        return false;
    }
    char *end = NULL;
    errno = 0;
    double v = strtod(field, &end);
    /* Underflow to a denormal or zero is harmless; overflow gives an infinity, refused below. */
    if (end == field || *end != '\0' || !isfinite(v)) {
        return false;
    }
    *out = v;
    return true;
}

const char *cb_text_integer_problem(const char *field, int64_t *out)
{
    if (field[0] == '\0' || is_space(field[0])) {
        return "is not an integer";
    }
    char *end = NULL;
    errno = 0;
    long long v = strtoll(field, &end, 10);
    if (end == field || *end != '\0') {
        return "is not an integer";
    }
    if (errno == ERANGE) {
        return "is beyond the 64-bit integers an id may be";
    }
    *out = (int64_t)v;
    return NULL;
}

bool cb_text_is(const char *field, const char *name)
{
    return strcmp(field, name) == 0;
}

double cb_text_unit_scale(const char *unit, bool time)
{
    static const struct {
        const char *name;
        double scale;
    } lengths[] = {{"m", 1.0}, {"cm", 0.01}, {"mm", 0.001}, {"ft", 0.3048}, {"in", 0.0254}},
      times[] = {{"s", 1.0}, {"ms", 0.001}};
    size_t n = time ? sizeof times / sizeof times[0] : sizeof lengths / sizeof lengths[0];
    for (size_t k = 0; k < n; ++k) {
        if (cb_text_is(unit, time ? times[k].name : lengths[k].name)) {
            return time ? times[k].scale : lengths[k].scale;
        }
    }
    return 0.0;
}

cb_result cb_text_next_record(text_records *t, const traj_builder *b, bool *have, cb_error *err)
{
    const char *s;
    size_t n;
    *have = false;
    while (cb_text_next_line(&t->c, &s, &n)) {
        const char *ts = s;
        size_t tn = n;
        cb_text_trim(&ts, &tn);
        if (tn == 0 || ts[0] == '#') {
            continue;
        }
        const char *why;
        t->count =
            cb_text_split(s, n, t->sep, t->fields, CB_TEXT_MAX_FIELDS, t->buf, sizeof t->buf, &why);
        if (t->count < 0) {
            return cb_traj_error_at(err, CB_ERR_PARSE, b, t->c.line, "%s", why);
        }
        *have = true;
        return CB_OK;
    }
    return CB_OK;
}
