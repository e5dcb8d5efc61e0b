/* The control-message parser (docs/serve.md, "Control messages"): JSON text from a client into
 * a fixed-size cb_ctl. Everything a client sends passes through here before the simulation sees
 * it, so every member is checked for presence, type and range, and unknown members are
 * refused. Names (parameters, graphs, joints, characters) are checked by the simulation, which
 * knows them. */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "serve/protocol.h"

static const char *const kind_names[CB_CTL_KIND_COUNT] = {
    "set_param", "steer",      "add",          "remove",    "pause",       "resume",
    "step",      "time_scale", "switch_graph", "subscribe", "unsubscribe", "encoding",
};

/* Members each kind accepts besides "type" and "req". */
static const char *const kind_members[CB_CTL_KIND_COUNT] = {
    [CB_CTL_SET_PARAM] = "name value characters",
    [CB_CTL_STEER] = "speed direction characters",
    [CB_CTL_ADD] = "count",
    [CB_CTL_REMOVE] = "characters",
    [CB_CTL_PAUSE] = "",
    [CB_CTL_RESUME] = "",
    [CB_CTL_STEP] = "frames",
    [CB_CTL_TIME_SCALE] = "value",
    [CB_CTL_SWITCH_GRAPH] = "graph",
    [CB_CTL_SUBSCRIBE] = "character joint",
    [CB_CTL_UNSUBSCRIBE] = "character",
    [CB_CTL_ENCODING] = "encoding",
};

static const char *const error_names[CB_CTL_ERROR_COUNT] = {
    "ok", "malformed", "unknown_type", "bad_field", "too_large", "not_found", "refused", "binary",
};

const char *cb_ctl_kind_name(cb_ctl_kind kind)
{
    return (unsigned)kind < CB_CTL_KIND_COUNT ? kind_names[kind] : "unknown";
}

const char *cb_ctl_error_name(cb_ctl_error e)
{
    return (unsigned)e < CB_CTL_ERROR_COUNT ? error_names[e] : "unknown";
}

static cb_ctl_error fail(char *why, cb_ctl_error e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, CB_ERROR_MESSAGE_SIZE, fmt, ap);
    va_end(ap);
    return e;
}

/* True when `key` is a word of the space-separated list. */
static bool listed(const char *list, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = list; *p != '\0';) {
        const char *end = strchr(p, ' ');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, key, n) == 0) {
            return true;
        }
        p += len + (end != NULL);
    }
    return false;
}

/* A finite number in [lo, hi]. */
static cb_ctl_error number(json_t *v, const char *key, double lo, double hi, float *out, char *why)
{
    if (!json_is_number(v)) {
        return fail(why, CB_CTL_ERR_BAD_FIELD, "\"%s\" must be a number", key);
    }
    double x = json_number_value(v);
    if (!(x >= lo && x <= hi)) {
        return fail(why, CB_CTL_ERR_BAD_FIELD, "\"%s\" must be in [%g, %g]", key, lo, hi);
    }
    *out = (float)x;
    return CB_CTL_OK;
}

/* A whole number in [lo, hi]. */
static cb_ctl_error whole(json_t *v, const char *key, int64_t lo, int64_t hi, int64_t *out,
                          char *why)
{
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
        return fail(why, CB_CTL_ERR_BAD_FIELD, "\"%s\" must be a whole number in [%lld, %lld]", key,
                    (long long)lo, (long long)hi);
    }
    *out = json_integer_value(v);
    return CB_CTL_OK;
}

static cb_ctl_error name(json_t *v, const char *key, char out[CB_CTL_MAX_NAME], char *why)
{
    if (!json_is_string(v)) {
        return fail(why, CB_CTL_ERR_BAD_FIELD, "\"%s\" must be a string", key);
    }
    size_t n = json_string_length(v);
    if (n == 0 || n >= CB_CTL_MAX_NAME || memchr(json_string_value(v), 0, n) != NULL) {
        return fail(why, CB_CTL_ERR_BAD_FIELD, "\"%s\" must be 1 to %d bytes without NUL", key,
                    CB_CTL_MAX_NAME - 1);
    }
    memcpy(out, json_string_value(v), n + 1);
    return CB_CTL_OK;
}

/* A character id: a JSON integer in [1, 2^53 - 1]. jansson reads integers as json_int_t (long
 * long, and refuses a literal beyond its range as malformed); a fraction or exponent ("1.0",
 * "1e3") is a real, which is refused rather than rounded, so an id never changes on its way in. */
static cb_ctl_error character_id(json_t *v, const char *key, uint64_t *out, char *why)
{
    if (!json_is_integer(v) || json_integer_value(v) < 1 ||
        (uint64_t)json_integer_value(v) > CB_CTL_MAX_ID) {
        return fail(why, CB_CTL_ERR_BAD_FIELD,
                    "\"%s\" must be a character id: a whole number in [1, 2^53 - 1]", key);
    }
    *out = (uint64_t)json_integer_value(v);
    return CB_CTL_OK;
}

/* "characters": absent means all (when allowed), else an array of 1..256 ids. */
static cb_ctl_error characters(json_t *obj, bool absent_means_all, cb_ctl *c, char *why)
{
    json_t *v = json_object_get(obj, "characters");
    if (v == NULL || json_is_null(v)) {
        if (!absent_means_all) {
            return fail(why, CB_CTL_ERR_BAD_FIELD, "\"characters\" is required");
        }
        c->all = true;
        return CB_CTL_OK;
    }
    size_t n = json_array_size(v);
    if (!json_is_array(v) || n == 0 || n > CB_CTL_MAX_CHARACTERS) {
        return fail(why, CB_CTL_ERR_BAD_FIELD,
                    "\"characters\" must be an array of 1 to %d character ids",
                    CB_CTL_MAX_CHARACTERS);
    }
    for (size_t k = 0; k < n; ++k) {
        if (character_id(json_array_get(v, k), "characters[]", &c->characters[k], why) !=
            CB_CTL_OK) {
            return CB_CTL_ERR_BAD_FIELD;
        }
    }
    c->character_count = (uint32_t)n;
    return CB_CTL_OK;
}

/* set_param: "name", "value" (null releases), "characters" (absent: all). */
static cb_ctl_error parse_set_param(json_t *o, cb_ctl *c, char *why)
{
    cb_ctl_error e = name(json_object_get(o, "name"), "name", c->name, why);
    if (e != CB_CTL_OK) {
        return e;
    }
    json_t *v = json_object_get(o, "value");
    if (v == NULL) {
        return fail(why, CB_CTL_ERR_BAD_FIELD, "\"value\" is required (null releases)");
    }
    c->clear = json_is_null(v);
    if (!c->clear && (e = number(v, "value", -1e6, 1e6, &c->value, why)) != CB_CTL_OK) {
        return e;
    }
    return characters(o, true, c, why);
}

/* steer: "speed" (null releases), "direction" in degrees (default 0), "characters" (absent:
 * all). */
static cb_ctl_error parse_steer(json_t *o, cb_ctl *c, char *why)
{
    json_t *v = json_object_get(o, "speed");
    if (v == NULL) {
        return fail(why, CB_CTL_ERR_BAD_FIELD, "\"speed\" is required (null releases)");
    }
    c->clear = json_is_null(v);
    if (!c->clear) {
        float deg = 0.0f;
        cb_ctl_error e = number(v, "speed", 0.0, 20.0, &c->speed_mps, why);
        if (e != CB_CTL_OK) {
            return e;
        }
        v = json_object_get(o, "direction");
        if (v != NULL && (e = number(v, "direction", -360.0, 360.0, &deg, why)) != CB_CTL_OK) {
            return e;
        }
        c->direction_rad = deg * 0.017453292519943295f;
    }
    return characters(o, true, c, why);
}

/* add: "count"; step: "frames" (default 1). */
static cb_ctl_error parse_count(json_t *o, const char *key, int64_t most, bool required, cb_ctl *c,
                                char *why)
{
    json_t *v = json_object_get(o, key);
    if (!required) {
        c->count = 1;
        if (v == NULL) {
            return CB_CTL_OK;
        }
    }
    int64_t n = 0;
    cb_ctl_error e = whole(v, key, 1, most, &n, why);
    if (e == CB_CTL_OK) {
        c->count = (uint32_t)n;
    }
    return e;
}

/* subscribe: "character", "joint" (optional); unsubscribe: "character" (absent: all). */
static cb_ctl_error parse_subscription(json_t *o, bool subscribe, cb_ctl *c, char *why)
{
    json_t *v = json_object_get(o, "character");
    if (subscribe) {
        cb_ctl_error e = character_id(v, "character", &c->characters[0], why);
        if (e != CB_CTL_OK) {
            return e;
        }
        c->character_count = 1;
        v = json_object_get(o, "joint");
        return v != NULL ? name(v, "joint", c->name, why) : CB_CTL_OK;
    }
    c->all = v == NULL;
    c->character_count = v != NULL;
    return v != NULL ? character_id(v, "character", &c->characters[0], why) : CB_CTL_OK;
}

/* encoding: "encoding", one of the frame encodings' names. */
static cb_ctl_error parse_encoding(json_t *o, cb_ctl *c, char *why)
{
    json_t *v = json_object_get(o, "encoding");
    if (!json_is_string(v) ||
        cb_frame_encoding_from_name(json_string_value(v), &c->encoding) != CB_OK) {
        return fail(why, CB_CTL_ERR_BAD_FIELD,
                    "\"encoding\" must be \"f32\", \"q16\" or \"pos16\"");
    }
    return CB_CTL_OK;
}

/* The fields of c's kind (parse_head named it). */
static cb_ctl_error parse_body(json_t *o, cb_ctl *c, char *why)
{
    switch (c->kind) {
    case CB_CTL_SET_PARAM:
        return parse_set_param(o, c, why);
    case CB_CTL_STEER:
        return parse_steer(o, c, why);
    case CB_CTL_ADD:
        return parse_count(o, "count", CB_CTL_MAX_ADD, true, c, why);
    case CB_CTL_REMOVE:
        return characters(o, false, c, why);
    case CB_CTL_STEP:
        return parse_count(o, "frames", CB_CTL_MAX_STEP, false, c, why);
    case CB_CTL_TIME_SCALE:
        return number(json_object_get(o, "value"), "value", 0.0, 8.0, &c->value, why);
    case CB_CTL_SWITCH_GRAPH:
        return name(json_object_get(o, "graph"), "graph", c->name, why);
    case CB_CTL_SUBSCRIBE:
        return parse_subscription(o, true, c, why);
    case CB_CTL_UNSUBSCRIBE:
        return parse_subscription(o, false, c, why);
    case CB_CTL_ENCODING:
        return parse_encoding(o, c, why);
    case CB_CTL_PAUSE:
    case CB_CTL_RESUME:
    case CB_CTL_KIND_COUNT:
        break;
    }
    return CB_CTL_OK;
}

/* The kind named by "type", and "req" when present. */
static cb_ctl_error parse_head(json_t *o, cb_ctl *c, char *why)
{
    json_t *req = json_object_get(o, "req");
    if (req != NULL) {
        if (!json_is_integer(req) || json_integer_value(req) < 0 ||
            (uint64_t)json_integer_value(req) > CB_CTL_MAX_ID) {
            return fail(why, CB_CTL_ERR_BAD_FIELD, "\"req\" must be a whole number >= 0");
        }
        c->req = json_integer_value(req);
    }
    json_t *type = json_object_get(o, "type");
    if (!json_is_string(type)) {
        return fail(why, CB_CTL_ERR_UNKNOWN_TYPE, "\"type\" (a string) is required");
    }
    for (int k = 0; k < CB_CTL_KIND_COUNT; ++k) {
        if (strcmp(json_string_value(type), kind_names[k]) == 0) {
            c->kind = (cb_ctl_kind)k;
            const char *key;
            json_t *value;
            json_object_foreach(o, key, value)
            {
                if (strcmp(key, "type") != 0 && strcmp(key, "req") != 0 &&
                    !listed(kind_members[k], key)) {
                    return fail(why, CB_CTL_ERR_BAD_FIELD, "unknown member \"%.40s\" in %s", key,
                                kind_names[k]);
                }
            }
            return CB_CTL_OK;
        }
    }
    return fail(why, CB_CTL_ERR_UNKNOWN_TYPE, "unknown message type \"%.40s\"",
                json_string_value(type));
}

cb_ctl_error cb_ctl_parse(const char *text, size_t length, cb_ctl *out,
                          char why[CB_ERROR_MESSAGE_SIZE])
{
    memset(out, 0, sizeof *out);
    out->req = -1;
    why[0] = '\0';
    if (length > CB_CTL_MAX_MESSAGE) {
        return fail(why, CB_CTL_ERR_TOO_LARGE, "message of %zu bytes; at most %d", length,
                    CB_CTL_MAX_MESSAGE);
    }
    json_error_t jerr;
    /* Duplicate keys are refused: which of two "value"s counts would be a guess. */
    json_t *o = json_loadb(text, length, JSON_REJECT_DUPLICATES, &jerr);
    if (o == NULL) {
        return fail(why, CB_CTL_ERR_MALFORMED, "not JSON: %s (column %d)", jerr.text, jerr.column);
    }
    cb_ctl_error e = json_is_object(o)
                         ? parse_head(o, out, why)
                         : fail(why, CB_CTL_ERR_MALFORMED, "a message must be a JSON object");
    if (e == CB_CTL_OK) {
        e = parse_body(o, out, why);
    }
    json_decref(o);
    return e;
}

/* Writes the escaped form of byte c (at most 6 bytes) to esc; returns its length. */
static size_t json_escape_byte(unsigned char c, char esc[6])
{
    static const char hex[] = "0123456789abcdef";
    if (c == '"' || c == '\\') {
        esc[0] = '\\', esc[1] = (char)c;
        return 2;
    }
    if (c < 0x20) {
        memcpy(esc, "\\u00", 4);
        esc[4] = hex[c >> 4], esc[5] = hex[c & 15];
        return 6;
    }
    esc[0] = (char)c;
    return 1;
}

/* Appends len bytes at out[*n], keeping those that fit before the terminator; *n counts all. */
static void put_bytes(char *out, size_t size, size_t *n, const char *bytes, size_t len)
{
    for (size_t k = 0; k < len; ++k, ++*n) {
        if (*n + 1 < size) {
            out[*n] = bytes[k];
        }
    }
}

size_t cb_json_quote(const char *s, char *out, size_t size)
{
    size_t n = 0;
    char esc[6];
    put_bytes(out, size, &n, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; ++p) {
        put_bytes(out, size, &n, esc, json_escape_byte(*p, esc));
    }
    put_bytes(out, size, &n, "\"", 1);
    if (size > 0) {
        out[n < size ? n : size - 1] = '\0';
    }
    return n;
}
