#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const cb_opt *find_opt(const cb_opt *opts, const char *name, size_t len)
{
    for (const cb_opt *o = opts; o->name != NULL; ++o) {
        if (strlen(o->name) == len && strncmp(o->name, name, len) == 0) {
            return o;
        }
    }
    return NULL;
}

/* Skips the digits from *p on (and one '.' among them when `point`); how many digits. */
static size_t decimal_digits(const char **p, bool point)
{
    size_t digits = 0;
    bool dot = !point; /* a '.' is taken once, where allowed */
    for (;; ++*p) {
        if (**p >= '0' && **p <= '9') {
            ++digits;
        } else if (**p == '.' && !dot) {
            dot = true;
        } else {
            return digits;
        }
    }
}

bool cb_opts_decimal(const char *text, double *out)
{
    const char *p = text + (*text == '-' || *text == '+');
    if (decimal_digits(&p, true) == 0) {
        return false;
    }
    if (*p == 'e' || *p == 'E') { /* a decimal exponent: "1e-4" */
        p += 1 + (p[1] == '-' || p[1] == '+');
        if (decimal_digits(&p, false) == 0) {
            return false;
        }
    }
    if (*p != '\0') {
        return false;
    }
    errno = 0;
    double v = strtod(text, NULL);
    if (errno != 0 || !isfinite(v)) { /* too many digits: out of double's range */
        return false;
    }
    *out = v;
    return true;
}

static bool store_value(const char *command, const cb_opt *o, const char *text)
{
    errno = 0;
    switch (o->kind) {
    case CB_OPT_INT: {
        /* Digits after an optional '-', nothing else: not the leading spaces or '+' that
         * strtol also takes. Which values an option allows, negative ones included, is its
         * command's range check. */
        const char *p = text + (*text == '-');
        if (decimal_digits(&p, false) == 0 || *p != '\0') {
            fprintf(stderr,
                    "%s: --%s expects an integer: digits, with '-' first if negative; got "
                    "'%s'\n",
                    command, o->name, text);
            return false;
        }
        long v = strtol(text, NULL, 10);
        if (errno != 0) {
            fprintf(stderr, "%s: --%s: '%s' is out of range\n", command, o->name, text);
            return false;
        }
        *(long *)o->value = v;
        return true;
    }
    case CB_OPT_DOUBLE:
        if (!cb_opts_decimal(text, (double *)o->value)) {
            fprintf(stderr, "%s: --%s expects a decimal number (as 2, 0.25 or 1e-4), got '%s'\n",
                    command, o->name, text);
            return false;
        }
        return true;
    case CB_OPT_STRING:
        *(const char **)o->value = text;
        return true;
    case CB_OPT_FLAG:
        break;
    }
    return false;
}

bool cb_opts_parse(const char *command, int argc, char **argv, int first, const cb_opt *opts,
                   const char **positional, size_t max_positional, size_t *positional_count)
{
    size_t npos = 0;
    for (int i = first; i < argc; ++i) {
        const char *arg = argv[i];
        if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
            if (npos >= max_positional) {
                fprintf(stderr, "%s: unexpected argument '%s'\n", command, arg);
                return false;
            }
            positional[npos++] = arg;
            continue;
        }
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq != NULL ? (size_t)(eq - name) : strlen(name);
        const cb_opt *o = find_opt(opts, name, len);
        if (o == NULL) {
            fprintf(stderr, "%s: unknown option '--%.*s' (try --help)\n", command, (int)len, name);
            return false;
        }
        if (o->given != NULL) {
            *o->given = true;
        }
        if (o->kind == CB_OPT_FLAG) {
            if (eq != NULL) {
                fprintf(stderr, "%s: --%s takes no value\n", command, o->name);
                return false;
            }
            *(bool *)o->value = true;
            continue;
        }
        const char *text = eq != NULL ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (text == NULL) {
            fprintf(stderr, "%s: --%s needs a value\n", command, o->name);
            return false;
        }
        if (!store_value(command, o, text)) {
            return false;
        }
    }
    if (positional_count != NULL) {
        *positional_count = npos;
    }
    return true;
}

/* The length of a help text's leading "NAME: " (capitals, digits, '_' and ','; the value's
 * name, as "HZ: " or "LEFT,RIGHT: "), or 0. */
static size_t value_name_length(const char *help)
{
    size_t n = 0;
    while ((help[n] >= 'A' && help[n] <= 'Z') || (help[n] >= '0' && help[n] <= '9') ||
           help[n] == '_' || help[n] == ',') {
        ++n;
    }
    return n > 0 && help[n] == ':' && help[n + 1] == ' ' ? n : 0;
}

void cb_opts_print_help(const char *usage, const cb_opt *opts)
{
    printf("usage: %s\n\noptions:\n", usage);
    for (const cb_opt *o = opts; o->name != NULL; ++o) {
        /* A help text that starts with its value's name gives it; else the kind's. */
        size_t named = o->kind == CB_OPT_FLAG ? 0 : value_name_length(o->help);
        const char *kind = o->kind == CB_OPT_FLAG ? "" : o->kind == CB_OPT_STRING ? " TEXT" : " N";
        char left[48];
        if (named > 0) {
            snprintf(left, sizeof left, "--%s %.*s", o->name, (int)named, o->help);
        } else {
            snprintf(left, sizeof left, "--%s%s", o->name, kind);
        }
        printf("  %-24s %s\n", left, o->help + (named > 0 ? named + 2 : 0));
    }
}
