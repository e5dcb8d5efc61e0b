/* sync: marker events and marker-based sync (crowdblend/sync.h).
 *
 * Events: validity table; every query against a brute-force reference written here (all
 * occurrences k + m enumerated, filtered by the documented endpoint rule, sorted in playback
 * order), truncation included; the property that events fire exactly once per crossing at any
 * dt and speed (random frame sequences, negative and huge steps, exact hits on markers): the
 * concatenated events of monotone runs are those of the whole interval, and the signed count of
 * mixed runs is the closed form sum over markers of floor(end - m) - floor(start - m); frame-rate
 * independence and invariance under whole-cycle shifts.
 * Sync: validity table; positions against a reference; round trips; random pairs of clips that
 * agree (different counts, starts, extra and event-only markers): followers sit on the same
 * named markers as their leader and move monotonically; clips that disagree fall back to
 * normalized time everywhere; group names; the embedded walk/run plants coincide for every
 * leader/follower pair; and, through the pose pipeline, time-warped copies of embedded clips
 * whose feet land at different normalized times put their feet down together when synced by
 * markers (and not when synced by normalized time). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_test.h"
#include "test_util.h"

/* ------------------------------------------------------------------------------------------ */
/* Clips with markers                                                                         */

static cb_skeleton *small_skeleton(void)
{
    cb_prng r = cb_prng_seed(7);
    return cb_test_random_skeleton(&r, 3, false, false);
}

/* A clip of `duration` seconds carrying the given markers (times given normalized here and
 * converted to seconds the way a host would). */
typedef struct mk {
    const char *name;
    double time; /* normalized */
    bool event_only;
} mk;

static cb_clip *marker_clip(const cb_skeleton *s, const char *name, float duration, bool looping,
                            const mk *m, size_t n)
{
    cb_clip_marker_desc d[64];
    assert_true(n <= 64);
    for (size_t i = 0; i < n; ++i) {
        d[i] = (cb_clip_marker_desc){m[i].name, (float)(m[i].time * duration), m[i].event_only};
    }
    cb_clip_desc cd = {.name = name,
                       .skeleton = s,
                       .duration_s = duration,
                       .wrap = looping ? CB_CLIP_WRAP_LOOP : CB_CLIP_WRAP_CLAMP,
                       .markers = d,
                       .marker_count = n};
    return cb_test_clip_create(&cd);
}

static float marker_time(const cb_clip *c, size_t i)
{
    cb_clip_marker q;
    assert_int_equal(cb_clip_query_marker(c, i, &q), CB_OK);
    return q.time;
}

static uint32_t h(const char *name)
{
    return cb_name_hash(name);
}

/* ------------------------------------------------------------------------------------------ */
/* Events: the reference                                                                      */

typedef struct ref_event {
    uint32_t marker;
    double time;
} ref_event;

static int cmp_up(const void *a, const void *b)
{
    const ref_event *x = a, *y = b;
    if (x->time != y->time) {
        return x->time < y->time ? -1 : 1;
    }
    return (x->marker > y->marker) - (x->marker < y->marker);
}

static int cmp_down(const void *a, const void *b)
{
    return cmp_up(b, a);
}

/* Every occurrence in the documented interval, in playback order: forward (from, to], backward
 * [to, from), closed at `from` with include_from. Returns the count; stores the first cap (in
 * playback order: all are collected and sorted before any is dropped). */
static size_t ref_events(const cb_clip *c, double from, double to, bool incl, ref_event *out,
                         size_t cap)
{
    bool loop = cb_clip_is_looping(c);
    double a = from, b = to;
    if (!loop) {
        a = a < 0 ? 0 : a > 1 ? 1 : a;
        b = b < 0 ? 0 : b > 1 ? 1 : b;
    }
    size_t m = cb_clip_marker_count(c);
    double lo = fmin(a, b), hi = fmax(a, b);
    long k0 = loop ? (long)floor(lo) - 1 : 0, k1 = loop ? (long)floor(hi) + 1 : 0;
    ref_event *all = malloc(((size_t)(k1 - k0 + 1) * m + 1) * sizeof *all);
    assert_non_null(all);
    size_t n = 0;
    for (long k = k0; k <= k1; ++k) {
        for (size_t i = 0; i < m; ++i) {
            double x = (double)k + marker_time(c, i);
            bool in = b > a   ? (x > a || (incl && x == a)) && x <= b
                      : b < a ? x >= b && (x < a || (incl && x == a))
                              : incl && x == a;
            if (in) {
                all[n++] = (ref_event){(uint32_t)i, x};
            }
        }
    }
    qsort(all, n, sizeof *all, b >= a ? cmp_up : cmp_down);
    memcpy(out, all, (n < cap ? n : cap) * sizeof *out);
    free(all);
    return n;
}

/* Events of one frame from the library, checked against the reference in full. */
static size_t check_frame(const cb_clip *c, float from, float to, bool incl, size_t cap,
                          cb_marker_event *got, ref_event *want, size_t want_cap)
{
    size_t written = 999;
    uint64_t crossed = 999;
    cb_result r = cb_sync_events(c, from, to, incl ? CB_EVENT_FLAG_INCLUDE_FROM : 0,
                                 (cb_marker_event_span){got, cap}, &written, &crossed);
    assert_int_equal(r, CB_OK);
    size_t n = ref_events(c, from, to, incl, want, want_cap);
    CB_CHECK(crossed == n, "%s %.9g -> %.9g%s: %llu crossings, reference %zu", cb_clip_name(c),
             (double)from, (double)to, incl ? " (incl)" : "", (unsigned long long)crossed, n);
    CB_CHECK(written == (n < cap ? n : cap), "written %zu of %zu (capacity %zu)", written, n, cap);
    for (size_t i = 0; i < written && i < want_cap; ++i) {
        CB_CHECK(got[i].marker == want[i].marker && got[i].time == (float)want[i].time,
                 "%s %.9g -> %.9g event %zu: marker %u at %.9g, reference %u at %.9g",
                 cb_clip_name(c), (double)from, (double)to, i, got[i].marker, (double)got[i].time,
                 want[i].marker, want[i].time);
        cb_clip_marker q;
        cb_clip_query_marker(c, got[i].marker, &q);
        assert_int_equal(got[i].name_hash, q.name_hash);
        double span = (double)to - (double)from;
        double f = span != 0.0 ? (want[i].time - from) / span : 1.0;
        f = f < 0 ? 0 : f > 1 ? 1 : f;
        CB_CHECK(fabs(got[i].fraction - f) <= 1e-6, "fraction %.9g, reference %.9g",
                 (double)got[i].fraction, f);
    }
    return written;
}

/* A random clip with 0..12 markers on a grid (so ties and exact hits are common), sometimes at
 * 0, sometimes clamped with a marker at the end. */
static cb_clip *random_event_clip(cb_prng *r, const cb_skeleton *s, bool looping)
{
    static const char *const names[] = {"a", "b", "c", "d", "e", "f"};
    mk m[12];
    size_t n = cb_prng_below(r, 13);
    unsigned grid = 4 + cb_prng_below(r, 9);
    for (size_t i = 0; i < n; ++i) {
        bool clash;
        do {
            unsigned k = cb_prng_below(r, looping ? grid : grid + 1);
            m[i] = (mk){names[cb_prng_below(r, 6)], (double)k / grid, false};
            clash = false;
            for (size_t j = 0; j < i; ++j) {
                clash = clash || (strcmp(m[j].name, m[i].name) == 0 && m[j].time == m[i].time);
            }
        } while (clash);
    }
    return marker_clip(s, looping ? "loop" : "clamp", 1.0f + cb_prng_range(r, 0.0f, 1.0f), looping,
                       m, n);
}

/* A time on the clip's grid of marker times (an exact hit) or anywhere, within +-span. */
static float random_time(cb_prng *r, const cb_clip *c, float span)
{
    size_t m = cb_clip_marker_count(c);
    if (m > 0 && cb_prng_below(r, 3) == 0) {
        float k = (float)((int)cb_prng_below(r, (uint32_t)(2 * span + 1)) - (int)span);
        return (cb_clip_is_looping(c) ? k : 0.0f) + marker_time(c, cb_prng_below(r, (uint32_t)m));
    }
    return cb_prng_range(r, -span, span);
}

/* ------------------------------------------------------------------------------------------ */
/* Events                                                                                     */

static void sync_events_validity(void **state)
{
    (void)state;
    cb_skeleton *s = small_skeleton();
    mk m[2] = {{"a", 0.25, false}, {"b", 0.5, true}};
    cb_clip *c = marker_clip(s, "c", 1.0f, true, m, 2);
    cb_marker_event ev[4];
    memset(ev, 0x5a, sizeof ev);
    cb_marker_event_span out = {ev, 4};
    size_t written = 123;
    uint64_t crossed = 456;
    struct {
        const cb_clip *clip;
        float from, to;
        uint32_t flags;
        cb_marker_event_span out;
        size_t *written;
        cb_result want;
    } cases[] = {
        {NULL, 0.0f, 1.0f, 0, out, &written, CB_ERR_NULL_ARGUMENT},
        {c, 0.0f, 1.0f, 0, out, NULL, CB_ERR_NULL_ARGUMENT},
        {c, 0.0f, 1.0f, 0, {NULL, 2}, &written, CB_ERR_NULL_ARGUMENT},
        {c, NAN, 1.0f, 0, out, &written, CB_ERR_NOT_FINITE},
        {c, 0.0f, INFINITY, 0, out, &written, CB_ERR_NOT_FINITE},
        {c, -INFINITY, 0.0f, 0, out, &written, CB_ERR_NOT_FINITE},
        {c, 0.0f, 2.0f * CB_SYNC_MAX_CYCLES, 0, out, &written, CB_ERR_INVALID_ARGUMENT},
        {c, -2.0f * CB_SYNC_MAX_CYCLES, 0.0f, 0, out, &written, CB_ERR_INVALID_ARGUMENT},
        {c, 0.0f, 1.0f, 2u, out, &written, CB_ERR_INVALID_ARGUMENT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        cb_result r = cb_sync_events(cases[i].clip, cases[i].from, cases[i].to, cases[i].flags,
                                     cases[i].out, cases[i].written, &crossed);
        CB_CHECK(r == cases[i].want, "case %zu: %s, expected %s", i, cb_result_str(r),
                 cb_result_str(cases[i].want));
        CB_CHECK(written == 123 && crossed == 456, "case %zu wrote its outputs", i);
        for (size_t k = 0; k < sizeof ev; ++k) {
            CB_CHECK(((unsigned char *)ev)[k] == 0x5a, "case %zu wrote an event", i);
        }
    }
    /* The minimal valid calls: counting only (no span), no `crossed`, the largest span. */
    assert_int_equal(
        cb_sync_events(c, 0.0f, 1.0f, 0, (cb_marker_event_span){NULL, 0}, &written, &crossed),
        CB_OK);
    assert_int_equal(written, 0);
    assert_int_equal(crossed, 2);
    assert_int_equal(cb_sync_events(c, 0.0f, 1.0f, 0, out, &written, NULL), CB_OK);
    assert_int_equal(written, 2);
    assert_int_equal(
        cb_sync_events(c, -CB_SYNC_MAX_CYCLES, CB_SYNC_MAX_CYCLES, 0, out, &written, &crossed),
        CB_OK);
    assert_int_equal(crossed, (uint64_t)2 * 2 * 16777216);
    assert_int_equal(written, 4);
    /* A clip without markers never reports anything. */
    cb_clip *none = marker_clip(s, "none", 1.0f, true, NULL, 0);
    assert_int_equal(
        cb_sync_events(none, -5.0f, 5.0f, CB_EVENT_FLAG_INCLUDE_FROM, out, &written, &crossed),
        CB_OK);
    assert_int_equal(written, 0);
    assert_int_equal(crossed, 0);
    cb_clip_destroy(none);
    cb_clip_destroy(c);
    cb_skeleton_destroy(s);
}

/* Hand cases that show the rules, each also checked in full against the reference. */
static void sync_events_hand_cases(void **state)
{
    (void)state;
    cb_skeleton *s = small_skeleton();
    mk m[3] = {{"a", 0.0, false}, {"b", 0.25, false}, {"c", 0.5, false}};
    cb_clip *loop = marker_clip(s, "loop", 1.0f, true, m, 3);
    mk mc[3] = {{"start", 0.0, false}, {"mid", 0.5, false}, {"end", 1.0, false}};
    cb_clip *clamp = marker_clip(s, "clamp", 1.0f, false, mc, 3);
    cb_marker_event got[16];
    ref_event want[16];
    struct {
        const cb_clip *c;
        float from, to;
        bool incl;
        size_t count;   /* what the rules say, worked out by hand */
        uint32_t first; /* marker of the first event (when count > 0) */
    } cases[] = {
        {loop, 0.0f, 0.25f, false, 1, 1},  /* b: the current time is inclusive */
        {loop, 0.25f, 0.5f, false, 1, 2},  /* c, not b again: the previous time is exclusive */
        {loop, 0.0f, 0.1f, true, 1, 0},    /* a at the start, asked for */
        {loop, 0.0f, 0.1f, false, 0, 0},   /* ... and not otherwise */
        {loop, 0.9f, 1.1f, false, 1, 0},   /* a across the wrap, at 1.0 */
        {loop, 0.9f, 3.1f, false, 7, 0},   /* a b c a b c a: every crossing of 2.2 cycles */
        {loop, 1.1f, 0.9f, false, 1, 0},   /* backwards over the wrap */
        {loop, 0.5f, 0.25f, false, 1, 1},  /* backwards [0.25, 0.5): b, not c */
        {loop, 0.5f, 0.25f, true, 2, 2},   /* ... and c too when asked */
        {loop, 0.25f, 0.25f, false, 0, 0}, /* standing still */
        {loop, 0.25f, 0.25f, true, 1, 1},  /* standing on b after a start */
        {loop, -0.8f, -0.7f, false, 1, 1}, /* b at -0.75 */
        {clamp, 0.9f, 1.5f, false, 1, 2},  /* end, once */
        {clamp, 1.2f, 1.5f, false, 0, 0},  /* clamped past the end: nothing more */
        {clamp, -0.5f, 0.2f, false, 0, 0}, /* start is where the clip began: needs the flag */
        {clamp, 0.0f, 0.2f, true, 1, 0},
        {clamp, 2.0f, -1.0f, false, 2, 1}, /* backwards over all: end is at `from`, excluded */
        {clamp, 0.4f, 3.0f, false, 2, 1},  /* no wrap: mid, end */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        size_t n =
            check_frame(cases[i].c, cases[i].from, cases[i].to, cases[i].incl, 16, got, want, 16);
        CB_CHECK(n == cases[i].count, "case %zu: %zu events, %zu by hand", i, n, cases[i].count);
        CB_CHECK(n == 0 || got[0].marker == cases[i].first, "case %zu starts with marker %u", i,
                 got[0].marker);
    }
    /* Huge spans cost the events written, not the cycles: a million cycles, three events. */
    size_t written;
    uint64_t crossed;
    assert_int_equal(cb_sync_events(loop, 0.1f, 1e6f + 0.1f, 0, (cb_marker_event_span){got, 3},
                                    &written, &crossed),
                     CB_OK);
    assert_int_equal(crossed, 3000000);
    assert_int_equal(written, 3);
    assert_true(got[0].time == 0.25f && got[1].time == 0.5f && got[2].time == 1.0f);
    cb_clip_destroy(loop);
    cb_clip_destroy(clamp);
    cb_skeleton_destroy(s);
}

/* Random clips and frames (forwards, backwards, standing, wraps, exact hits, large spans), each
 * against the reference; small capacities truncate. */
static void sync_events_match_reference(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_skeleton *s = small_skeleton();
    enum { CAP = 4096 };
    cb_marker_event *got = malloc(CAP * sizeof *got);
    ref_event *want = malloc(CAP * sizeof *want);
    size_t frames = 0, events = 0, truncated = 0;
    for (int it = 0; it < 300; ++it) {
        cb_clip *c = random_event_clip(&r, s, it % 3 != 0);
        for (int k = 0; k < 60; ++k) {
            float span = k % 10 == 0 ? 200.0f : 3.0f;
            float from = random_time(&r, c, span);
            float to = cb_prng_below(&r, 8) == 0 ? from : random_time(&r, c, span);
            size_t cap = cb_prng_below(&r, 4) == 0 ? cb_prng_below(&r, 4) : CAP;
            bool incl = cb_prng_below(&r, 4) == 0;
            size_t n = check_frame(c, from, to, incl, cap, got, want, CAP);
            frames++, events += n;
            truncated += ref_events(c, from, to, incl, want, 0) > cap;
        }
        cb_clip_destroy(c);
    }
    cb_test_note("events: %zu frames, %zu events, %zu truncated, all as the reference", frames,
                 events, truncated);
    CB_CHECK(truncated > 100, "only %zu truncated frames", truncated);
    free(got), free(want);
    cb_skeleton_destroy(s);
}

/* Net signed crossings from start to end (forward counts +1, backward -1), in closed form: per
 * marker m, forwards the occurrences in (start, end] number floor(end - m) - floor(start - m),
 * backwards those in [end, start) number ceil(start - m) - ceil(end - m). Looping clips. */
static long closed_form(const cb_clip *c, double start, double end)
{
    long n = 0;
    for (size_t i = 0; i < cb_clip_marker_count(c); ++i) {
        double m = marker_time(c, i);
        n += end >= start ? (long)(floor(end - m) - floor(start - m))
                          : -(long)(ceil(start - m) - ceil(end - m));
    }
    return n;
}

static bool on_occurrence(const cb_clip *c, float t)
{
    for (size_t i = 0; i < cb_clip_marker_count(c); ++i) {
        double x = (double)t - marker_time(c, i);
        if (x == floor(x)) {
            return true;
        }
    }
    return false;
}

/* "Events fire exactly once per crossing at any dt and speed." Frames advance by
 * dt * speed / duration with random dts (1e-4 s .. 0.1 s, now and then a huge one of up to 10^4
 * cycles, or exactly to the next marker) and speeds (negative, zero, up to 8x):
 *  - monotone runs (all speeds of one sign): the frames' events, concatenated, are exactly the
 *    reference events of the whole interval: same markers, same times, same order, none twice,
 *    none missing, even when frames end exactly on markers;
 *  - mixed runs: the signed sum of the frames' crossings equals the closed form for the whole
 *    interval (frames that end exactly on an occurrence are re-drawn here, since a reversal
 *    there fires on arrival only, see sync_events_reversal_on_a_marker). */
static void sync_events_fire_once_per_crossing_at_any_dt_and_speed(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_skeleton *s = small_skeleton();
    enum { CAP = 1 << 20 };
    cb_marker_event *got = malloc(CAP * sizeof *got);
    ref_event *all = malloc(CAP * sizeof *all);
    size_t runs = 0, total_events = 0, exact_hits = 0;
    for (int it = 0; it < 400; ++it) {
        cb_clip *c = random_event_clip(&r, s, true);
        float duration = cb_clip_duration(c);
        size_t m = cb_clip_marker_count(c);
        bool monotone = it % 2 == 0;
        float sign = cb_prng_below(&r, 2) ? 1.0f : -1.0f;
        float start = cb_prng_range(&r, -3.0f, 3.0f);
        while (on_occurrence(c, start)) {
            start = cb_prng_range(&r, -3.0f, 3.0f);
        }
        float t = start;
        long net = 0;
        size_t count = 0;
        for (int f = 0; f < 200; ++f) {
            float speed =
                monotone ? sign * cb_prng_range(&r, 0.0f, 8.0f) : cb_prng_range(&r, -8.0f, 8.0f);
            float dt = cb_prng_range(&r, 1e-4f, 0.1f);
            float next = t + dt * speed / duration;
            uint32_t pick = cb_prng_below(&r, 40);
            if (pick == 0) {
                next = t + (speed >= 0 ? 1.0f : -1.0f) * cb_prng_range(&r, 0.0f, 2e3f);
            } else if (pick < 8 && m > 0 && monotone) {
                /* Exactly onto the next occurrence in the direction of travel. */
                ref_event e[1];
                float far = t + (sign > 0 ? 2.0f : -2.0f);
                if (ref_events(c, t, far, false, e, 1) > 0) {
                    next = (float)e[0].time;
                    exact_hits++;
                }
            } else if (pick == 8) {
                next = t; /* a paused frame */
            }
            if (!monotone && on_occurrence(c, next)) {
                continue;
            }
            size_t written;
            uint64_t crossed;
            cb_marker_event_span out = {got + (count < CAP ? count : CAP),
                                        count < CAP ? CAP - count : 0};
            assert_int_equal(cb_sync_events(c, t, next, 0, out, &written, &crossed), CB_OK);
            count += written;
            net += next > t ? (long)crossed : -(long)crossed;
            t = next;
        }
        if (monotone) {
            size_t n = ref_events(c, start, t, false, all, CAP);
            CB_CHECK(n == count && count <= CAP,
                     "run %d: %zu events over the frames, %zu in the "
                     "whole interval %.9g -> %.9g",
                     it, count, n, (double)start, (double)t);
            for (size_t i = 0; i < n && i < CAP; ++i) {
                CB_CHECK(got[i].marker == all[i].marker && got[i].time == (float)all[i].time,
                         "run %d event %zu: marker %u at %.9g, whole interval: %u at %.9g", it, i,
                         got[i].marker, (double)got[i].time, all[i].marker, all[i].time);
            }
        }
        long want = closed_form(c, start, t);
        CB_CHECK(net == want, "run %d (%s): net crossings %ld, closed form %ld over %.9g -> %.9g",
                 it, monotone ? "monotone" : "mixed", net, want, (double)start, (double)t);
        runs++, total_events += count;
        cb_clip_destroy(c);
    }
    cb_test_note("%zu runs of 200 frames, %zu events, %zu frames ending exactly on a marker", runs,
                 total_events, exact_hits);
    CB_CHECK(exact_hits > 1000, "only %zu exact hits", exact_hits);
    free(got), free(all);
    cb_skeleton_destroy(s);
}

/* Reversing exactly on a marker: the marker fires when playback arrives at it, not when it
 * leaves it backwards, and again on each new arrival. */
static void sync_events_reversal_on_a_marker(void **state)
{
    (void)state;
    cb_skeleton *s = small_skeleton();
    mk m[1] = {{"x", 0.5, false}};
    cb_clip *c = marker_clip(s, "c", 1.0f, true, m, 1);
    const float path[] = {0.4f, 0.5f, 0.45f, 0.5f, 0.5f, 0.6f, 0.5f, 0.4f, 0.5f};
    const size_t want[] = {1, 0, 1, 0, 0, 1, 0, 1}; /* per frame, by the rules */
    size_t arrivals = 0;
    for (size_t i = 0; i + 1 < sizeof path / sizeof path[0]; ++i) {
        size_t written;
        cb_marker_event ev[2];
        assert_int_equal(cb_sync_events(c, path[i], path[i + 1], 0, (cb_marker_event_span){ev, 2},
                                        &written, NULL),
                         CB_OK);
        CB_CHECK(written == want[i], "frame %.2f -> %.2f: %zu events", (double)path[i],
                 (double)path[i + 1], written);
        arrivals += written;
    }
    assert_int_equal(arrivals, 4); /* the path arrives at 0.5 four times */
    cb_clip_destroy(c);
    cb_skeleton_destroy(s);
}

/* The same motion at 30, 60 and 144 Hz and at random frame times gives the same events; and
 * shifting both ends of a frame by whole cycles shifts the events' times and nothing else. */
static void sync_events_frame_rate_independent(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_skeleton *s = small_skeleton();
    enum { CAP = 4096 };
    cb_marker_event *a = malloc(CAP * sizeof *a), *b = malloc(CAP * sizeof *b);
    for (int it = 0; it < 50; ++it) {
        cb_clip *c = random_event_clip(&r, s, it % 4 != 0);
        double rate = cb_prng_range(&r, -3.0f, 3.0f); /* cycles per second */
        double t0 = cb_prng_range(&r, -2.0f, 2.0f);
        size_t na = 0;
        const double hz[4] = {30.0, 60.0, 144.0, 0.0};
        for (int k = 0; k < 4; ++k) {
            size_t n = 0;
            double wall = 0.0;
            float prev = (float)t0;
            while (wall < 10.0) {
                wall = hz[k] > 0 ? wall + 1.0 / hz[k] : wall + cb_prng_range(&r, 0.001f, 0.2f);
                wall = fmin(wall, 10.0);
                /* Times from wall-clock time, not accumulated, so every rate ends at the same
                 * float. */
                float now = (float)(t0 + rate * wall);
                size_t written;
                assert_int_equal(cb_sync_events(c, prev, now, 0,
                                                (cb_marker_event_span){b + n, CAP - n}, &written,
                                                NULL),
                                 CB_OK);
                n += written;
                prev = now;
            }
            if (k == 0) {
                memcpy(a, b, n * sizeof *a);
                na = n;
            }
            CB_CHECK(n == na, "%g Hz: %zu events, 30 Hz: %zu", hz[k], n, na);
            for (size_t i = 0; i < n && i < na; ++i) {
                CB_CHECK(a[i].marker == b[i].marker && a[i].time == b[i].time,
                         "%g Hz: event %zu differs", hz[k], i);
            }
        }
        if (cb_clip_is_looping(c)) {
            for (int k = 0; k < 50; ++k) {
                /* Times on a 2^-10 grid, so that shifting them by up to 1000 cycles is exact in
                 * float and the shifted frame is the same frame. */
                float from = floorf(cb_prng_range(&r, -2.0f, 2.0f) * 1024.0f) / 1024.0f;
                float to = floorf(cb_prng_range(&r, -2.0f, 2.0f) * 1024.0f) / 1024.0f;
                float shift = (float)((int)cb_prng_below(&r, 2001) - 1000);
                size_t n1, n2;
                assert_int_equal(
                    cb_sync_events(c, from, to, 0, (cb_marker_event_span){a, CAP}, &n1, NULL),
                    CB_OK);
                assert_int_equal(cb_sync_events(c, from + shift, to + shift, 0,
                                                (cb_marker_event_span){b, CAP}, &n2, NULL),
                                 CB_OK);
                CB_CHECK(n1 == n2, "shift %g: %zu events, unshifted %zu", (double)shift, n2, n1);
                /* Same markers; the times differ by the shift up to the float rounding of
                 * k + m near 1000 (ulp 6.1e-5). */
                for (size_t i = 0; i < n1 && i < n2; ++i) {
                    CB_CHECK(a[i].marker == b[i].marker &&
                                 fabs((double)b[i].time - shift - a[i].time) <= 6.2e-5,
                             "shift %g: event %zu differs", (double)shift, i);
                }
            }
        }
        cb_clip_destroy(c);
    }
    free(a), free(b);
    cb_skeleton_destroy(s);
}

/* ------------------------------------------------------------------------------------------ */
/* Sync: the reference                                                                        */

/* Selected sync markers of a clip, in time order: not event_only, name in `names` (all when
 * names is NULL). */
typedef struct seg_list {
    uint32_t n;
    double t[64];
    uint32_t h[64];
} seg_list;

static seg_list selected(const cb_clip *c, const cb_sync_names *names)
{
    seg_list l = {0};
    for (size_t i = 0; i < cb_clip_marker_count(c); ++i) {
        cb_clip_marker q;
        cb_clip_query_marker(c, i, &q);
        bool in = !q.event_only;
        if (in && names != NULL) {
            in = false;
            for (size_t k = 0; k < names->count; ++k) {
                in = in || names->hashes[k] == q.name_hash;
            }
        }
        if (in) {
            l.t[l.n] = q.time;
            l.h[l.n++] = q.name_hash;
        }
    }
    return l;
}

/* The documented position at time t. */
static cb_sync_pos ref_pos(const cb_clip *c, double t, const cb_sync_names *names)
{
    double u = cb_clip_is_looping(c) ? t - floor(t) : fmin(fmax(t, 0.0), 1.0);
    cb_sync_pos p = {CB_SYNC_KIND_NORMALIZED, 0, 0, 0.0f, (float)u};
    seg_list l = selected(c, names);
    if (l.n == 0) {
        return p;
    }
    uint32_t from = l.n - 1;
    double tf = l.t[l.n - 1] - 1.0;
    for (size_t i = 0; i < l.n; ++i) {
        if (l.t[i] <= u) {
            from = i, tf = l.t[i];
        }
    }
    uint32_t to = (from + 1) % l.n;
    double len = l.n == 1 ? 1.0 : to > from ? l.t[to] - l.t[from] : l.t[to] + 1.0 - l.t[from];
    p.kind = CB_SYNC_KIND_MARKERS;
    p.from_hash = l.h[from];
    p.to_hash = l.h[to];
    p.fraction = (float)(len > 0 ? (u - tf) / len : 0.0);
    return p;
}

static void sync_validity(void **state)
{
    (void)state;
    cb_skeleton *s = small_skeleton();
    mk m[2] = {{"a", 0.25, false}, {"b", 0.5, false}};
    cb_clip *c = marker_clip(s, "c", 1.0f, true, m, 2);
    const uint32_t hs[1] = {h("a")};
    const cb_sync_names bad_names = {NULL, 1}, names = {hs, 1};
    const cb_sync_pos poison = {(cb_sync_kind)77, 1, 2, 3.0f, 4.0f};
    cb_sync_pos p = poison;
    /* pos_from_time */
    assert_int_equal(cb_sync_pos_from_time(NULL, 0.0f, NULL, &p), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_sync_pos_from_time(c, 0.0f, NULL, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_sync_pos_from_time(c, 0.0f, &bad_names, &p), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_sync_pos_from_time(c, NAN, NULL, &p), CB_ERR_NOT_FINITE);
    assert_int_equal(cb_sync_pos_from_time(c, -INFINITY, NULL, &p), CB_ERR_NOT_FINITE);
    assert_int_equal(cb_sync_pos_from_time(c, 3e7f, NULL, &p), CB_ERR_INVALID_ARGUMENT);
    assert_memory_equal(&p, &poison, sizeof p);
    assert_int_equal(cb_sync_pos_from_time(c, 0.3f, &names, &p), CB_OK);
    assert_int_equal(p.kind, CB_SYNC_KIND_MARKERS);
    /* time_from_pos */
    float t = 42.0f;
    cb_sync_kind used = (cb_sync_kind)9;
    cb_sync_pos good = p, q;
    assert_int_equal(cb_sync_time_from_pos(NULL, &good, NULL, 0.0f, &t, &used),
                     CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_sync_time_from_pos(c, NULL, NULL, 0.0f, &t, &used), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_sync_time_from_pos(c, &good, NULL, 0.0f, NULL, &used),
                     CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_sync_time_from_pos(c, &good, &bad_names, 0.0f, &t, &used),
                     CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_sync_time_from_pos(c, &good, NULL, NAN, &t, &used), CB_ERR_NOT_FINITE);
    q = good, q.fraction = NAN;
    assert_int_equal(cb_sync_time_from_pos(c, &q, NULL, 0.0f, &t, &used), CB_ERR_NOT_FINITE);
    q = good, q.normalized = INFINITY;
    assert_int_equal(cb_sync_time_from_pos(c, &q, NULL, 0.0f, &t, &used), CB_ERR_NOT_FINITE);
    q = good, q.kind = _CB_SYNC_KIND_COUNT;
    assert_int_equal(cb_sync_time_from_pos(c, &q, NULL, 0.0f, &t, &used), CB_ERR_INVALID_ARGUMENT);
    q = good, q.kind = (cb_sync_kind)-1;
    assert_int_equal(cb_sync_time_from_pos(c, &q, NULL, 0.0f, &t, &used), CB_ERR_INVALID_ARGUMENT);
    assert_int_equal(cb_sync_time_from_pos(c, &good, NULL, -3e7f, &t, &used),
                     CB_ERR_INVALID_ARGUMENT);
    assert_true(t == 42.0f && used == (cb_sync_kind)9);
    assert_int_equal(cb_sync_time_from_pos(c, &good, NULL, 0.0f, &t, NULL), CB_OK); /* used opt */
    /* follower_time */
    assert_int_equal(cb_sync_follower_time(NULL, 0.0f, c, 0.0f, NULL, &t, &used),
                     CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_sync_follower_time(c, 0.0f, NULL, 0.0f, NULL, &t, &used),
                     CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_sync_follower_time(c, 0.0f, c, 0.0f, NULL, NULL, &used),
                     CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_sync_follower_time(c, 0.0f, c, 0.0f, &bad_names, &t, &used),
                     CB_ERR_NULL_ARGUMENT);
    t = 42.0f, used = (cb_sync_kind)9;
    assert_int_equal(cb_sync_follower_time(c, NAN, c, 0.0f, NULL, &t, &used), CB_ERR_NOT_FINITE);
    assert_int_equal(cb_sync_follower_time(c, 0.0f, c, INFINITY, NULL, &t, &used),
                     CB_ERR_NOT_FINITE);
    assert_int_equal(cb_sync_follower_time(c, 2e7f, c, 0.0f, NULL, &t, &used),
                     CB_ERR_INVALID_ARGUMENT);
    assert_int_equal(cb_sync_follower_time(c, 0.0f, c, -2e7f, NULL, &t, &used),
                     CB_ERR_INVALID_ARGUMENT);
    assert_true(t == 42.0f && used == (cb_sync_kind)9);
    /* group_names */
    const cb_clip *group[2] = {c, NULL};
    uint32_t out[4] = {7, 7, 7, 7};
    uint32_t n = 99;
    cb_error err = {0};
    assert_int_equal(cb_sync_group_names(NULL, 1, NULL, out, 4, &n, &err), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_sync_group_names(group, 1, NULL, NULL, 4, &n, &err), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_sync_group_names(group, 1, NULL, out, 4, NULL, &err), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_sync_group_names(group, 1, &bad_names, out, 4, &n, &err),
                     CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_sync_group_names(group, 2, NULL, out, 4, &n, &err), CB_ERR_NULL_ARGUMENT);
    assert_non_null(strstr(err.message, "clips[1]"));
    assert_int_equal(cb_sync_group_names(group, 0, NULL, out, 4, &n, &err), CB_ERR_TOO_FEW);
    assert_int_equal(err.code, CB_ERR_TOO_FEW);
    assert_int_equal(cb_sync_group_names(group, 1, NULL, out, 1, &n, &err), CB_ERR_SPAN_TOO_SHORT);
    assert_non_null(strstr(err.message, "2 names, capacity 1"));
    assert_true(n == 99 && out[0] == 7);
    assert_int_equal(cb_sync_group_names(group, 1, NULL, out, 2, &n, NULL), CB_OK);
    assert_int_equal(n, 2);
    assert_true(out[0] == h("a") && out[1] == h("b") && out[2] == 7);
    assert_int_equal(cb_sync_group_names(group, 1, NULL, NULL, 0, &n, NULL), CB_ERR_SPAN_TOO_SHORT);
    cb_clip_destroy(c);
    cb_skeleton_destroy(s);
}

/* A random marker layout for sync tests: `reps` repetitions of the name cycle s0..s(q-1)
 * starting at name `rot`, at jittered grid times (segments at least 1/(4 * count) long), plus
 * `extra` markers: event_only ones with cycle names and sync ones with names the other clip
 * lacks. */
static cb_clip *cycle_clip(cb_prng *r, const cb_skeleton *s, const char *clip_name, size_t q,
                           size_t reps, size_t rot, const char *extra_name, bool looping)
{
    static const char *const names[] = {"s0", "s1", "s2", "s3"};
    mk m[40];
    size_t n = 0, count = q * reps;
    double phase = cb_prng_double(r) / (double)count;
    for (size_t i = 0; i < count; ++i) {
        double t = phase + ((double)i + 0.5 * cb_prng_double(r)) / (double)count;
        m[n++] = (mk){names[(rot + i) % q], t - floor(t), false};
    }
    /* Event-only markers with cycle names, and one sync marker of a foreign name, at times
     * between the others. */
    for (size_t i = 0; i < 4; ++i) {
        bool clash;
        do {
            m[n] = i < 3 ? (mk){names[cb_prng_below(r, (uint32_t)q)],
                                (double)cb_prng_below(r, 997) / 997.0, true}
                         : (mk){extra_name, (double)cb_prng_below(r, 991) / 991.0, false};
            clash = false;
            for (size_t j = 0; j < n; ++j) {
                /* One name at one time once (times compared as the clip will store them). */
                clash = clash ||
                        (strcmp(m[j].name, m[n].name) == 0 && fabs(m[j].time - m[n].time) < 1e-6);
            }
        } while (clash);
        ++n;
    }
    return marker_clip(s, clip_name, cb_prng_range(r, 0.5f, 2.0f), looping, m, n);
}

/* Positions against the reference, for every selection, looping and clamped clips. */
static void sync_pos_matches_reference(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_skeleton *s = small_skeleton();
    cb_err_track ef = cb_err_track_make("sync position fraction");
    for (int it = 0; it < 300; ++it) {
        size_t q = 1 + cb_prng_below(&r, 4);
        cb_clip *c = cycle_clip(&r, s, "c", q, 1 + cb_prng_below(&r, 3), cb_prng_below(&r, 4), "x",
                                it % 4 != 0);
        uint32_t hs[2] = {h("s0"), h("x")};
        cb_sync_names some = {hs, 1 + cb_prng_below(&r, 2)}, empty = {NULL, 0};
        const cb_sync_names *sel[3] = {NULL, &some, &empty};
        for (int k = 0; k < 50; ++k) {
            float t = k < 5 ? marker_time(c, cb_prng_below(&r, cb_clip_marker_count(c)))
                            : cb_prng_range(&r, -5.0f, 5.0f);
            for (int si = 0; si < 3; ++si) {
                cb_sync_pos got, want = ref_pos(c, t, sel[si]);
                assert_int_equal(cb_sync_pos_from_time(c, t, sel[si], &got), CB_OK);
                CB_CHECK(got.kind == want.kind && got.from_hash == want.from_hash &&
                             got.to_hash == want.to_hash,
                         "t %.9g selection %d: kind %d %08x -> %08x, reference %d %08x -> %08x",
                         (double)t, si, got.kind, got.from_hash, got.to_hash, want.kind,
                         want.from_hash, want.to_hash);
                cb_err_track_add(&ef, got.fraction, want.fraction, (size_t)it);
                CB_CHECK(got.normalized == want.normalized ||
                             (got.normalized == 0.0f && want.normalized == 1.0f),
                         "normalized %.9g, reference %.9g", (double)got.normalized,
                         (double)want.normalized);
            }
        }
        cb_clip_destroy(c);
    }
    /* Both compute (u - t_from) / length in double and round once to float. */
    cb_err_track_check(&ef, 1e-7);
    cb_skeleton_destroy(s);
}

/* time_from_pos(pos_from_time(t)) = t, with t itself as the hint: looping clips return the
 * same unwrapped time, clamped ones the clamped time. In double the way back is exact but for
 * the fraction, which travels as a float (6e-8 of a segment); rounding the result to float
 * then gives t itself or, rarely, a neighbouring float: at most one ulp at |t| < 8, 4.8e-7.
 * Measured 3.0e-8; bound 5e-7. */
static void sync_round_trip(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_skeleton *s = small_skeleton();
    cb_err_track et = cb_err_track_make("sync round trip");
    for (int it = 0; it < 300; ++it) {
        bool looping = it % 4 != 0;
        cb_clip *c = cycle_clip(&r, s, "c", 1 + cb_prng_below(&r, 4), 1 + cb_prng_below(&r, 3),
                                cb_prng_below(&r, 4), "x", looping);
        for (int k = 0; k < 100; ++k) {
            float t = cb_prng_range(&r, -5.0f, 5.0f);
            cb_sync_pos p;
            float back;
            cb_sync_kind used;
            assert_int_equal(cb_sync_pos_from_time(c, t, NULL, &p), CB_OK);
            assert_int_equal(cb_sync_time_from_pos(c, &p, NULL, t, &back, &used), CB_OK);
            assert_int_equal(used, CB_SYNC_KIND_MARKERS);
            double want = looping ? t : fmin(fmax(t, 0.0f), 1.0f);
            cb_err_track_add(&et, back, want, (size_t)it);
        }
        cb_clip_destroy(c);
    }
    cb_err_track_check(&et, 5e-7);
    cb_skeleton_destroy(s);
}

/* Follower and leader made from one name cycle with different repetitions, starts, times,
 * extra foreign names and event-only markers: they agree. Sweeping the leader:
 *  - every follower time comes from the markers (never the fallback);
 *  - when the leader is at an occurrence of name X, the follower is at one of its X's;
 *  - the follower moves forwards only, and over reps_F leader cycles by exactly reps_L of its
 *    own (as many name cycles as the leader);
 *  - the pair function (names shared by the two) and the group path (cb_sync_group_names, then
 *    pos_from_time and time_from_pos) give the same times, bit for bit. */
static void sync_follower_agreeing_clips(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    cb_skeleton *s = small_skeleton();
    cb_err_track ea = cb_err_track_make("follower at the leader's marker");
    cb_err_track ec = cb_err_track_make("follower advance over reps_F cycles");
    for (int it = 0; it < 200; ++it) {
        size_t q = 1 + cb_prng_below(&r, 4);
        size_t rl = 1 + cb_prng_below(&r, 3), rf = 1 + cb_prng_below(&r, 3);
        cb_clip *lead = cycle_clip(&r, s, "lead", q, rl, cb_prng_below(&r, 4), "only_lead", true);
        cb_clip *fol = cycle_clip(&r, s, "fol", q, rf, cb_prng_below(&r, 4), "only_fol", true);
        const cb_clip *pair[2] = {lead, fol};
        uint32_t gn[8];
        uint32_t gcount;
        cb_error err = {0};
        cb_result gr = cb_sync_group_names(pair, 2, NULL, gn, 8, &gcount, &err);
        CB_CHECK(gr == CB_OK && gcount == q, "group names: %s, %u of %zu", err.message, gcount, q);
        cb_sync_names names = {gn, gcount};
        /* rf leader cycles pass rf * rl name cycles: rl whole follower cycles. */
        const int steps = 2000 * (int)rf;
        float t0 = (float)((int)cb_prng_below(&r, 5) - 2);
        float ft = 0.0f, start = 0.0f;
        for (int k = 0; k <= steps; ++k) {
            float t = t0 + (float)rf * (float)k / (float)steps;
            float got, via_pos;
            cb_sync_kind used;
            assert_int_equal(cb_sync_follower_time(lead, t, fol, ft, NULL, &got, &used), CB_OK);
            assert_int_equal(used, CB_SYNC_KIND_MARKERS);
            cb_sync_pos p;
            assert_int_equal(cb_sync_pos_from_time(lead, t, &names, &p), CB_OK);
            assert_int_equal(cb_sync_time_from_pos(fol, &p, &names, ft, &via_pos, &used), CB_OK);
            assert_int_equal(used, CB_SYNC_KIND_MARKERS);
            CB_CHECK(got == via_pos, "pair %.9g, group path %.9g", (double)got, (double)via_pos);
            if (k == 0) {
                start = got;
            } else {
                CB_CHECK(got >= ft - 1e-6f, "leader %.6f: follower went back %.9g -> %.9g",
                         (double)t, (double)ft, (double)got);
            }
            ft = got;
        }
        cb_err_track_add(&ec, ft - start, (double)rl, (size_t)it);
        /* At every sync occurrence of the leader, the follower sits on the same name. */
        for (size_t i = 0; i < cb_clip_marker_count(lead); ++i) {
            cb_clip_marker ml;
            cb_clip_query_marker(lead, i, &ml);
            if (ml.event_only || strcmp(ml.name, "only_lead") == 0) {
                continue;
            }
            float got;
            assert_int_equal(cb_sync_follower_time(lead, ml.time, fol, 0.0f, NULL, &got, NULL),
                             CB_OK);
            double best = 1.0;
            for (size_t j = 0; j < cb_clip_marker_count(fol); ++j) {
                cb_clip_marker mf;
                cb_clip_query_marker(fol, j, &mf);
                if (!mf.event_only && mf.name_hash == ml.name_hash) {
                    best = fmin(best, fabs(remainder((double)got - mf.time, 1.0)));
                }
            }
            cb_err_track_add(&ea, best, 0.0, (size_t)it);
        }
        /* Swapped roles: the same properties the other way round, briefly. */
        float back;
        assert_int_equal(cb_sync_follower_time(fol, 0.3f, lead, 0.0f, NULL, &back, NULL), CB_OK);
        float again;
        assert_int_equal(cb_sync_follower_time(lead, back, fol, 0.3f, NULL, &again, NULL), CB_OK);
        CB_CHECK(fabs(again - 0.3f) < 2e-6, "there and back: 0.3 -> %.9g -> %.9g", (double)back,
                 (double)again);
        cb_clip_destroy(lead);
        cb_clip_destroy(fol);
    }
    /* At a leader's marker the fraction is 0 and the follower lands on its own marker time,
     * exactly up to the float rounding of the wrapped result (ulp 6e-8 below 1): bound 1.2e-7
     * (measured 0). The advance is the difference of two results at |t| < 8, each rounded to
     * float (half an ulp, 2.4e-7): bound 5e-7 (measured 1.2e-7). */
    cb_err_track_check(&ea, 1.2e-7);
    cb_err_track_check(&ec, 5e-7);
    cb_skeleton_destroy(s);
}

/* Shared markers in different cyclic orders: the pair syncs by normalized time at every leader
 * time (never a mix), and the group is refused with a message that names the markers; a filter
 * that leaves a consistent subset syncs by markers again. One shared name aligns that marker
 * (segment from it to itself); none falls back. A name followed by two different names within
 * one clip also disagrees. */
static void sync_disagreeing_clips_fall_back(void **state)
{
    (void)state;
    cb_skeleton *s = small_skeleton();
    mk ml[3] = {{"a", 0.1, false}, {"b", 0.4, false}, {"c", 0.7, false}};
    mk mf[3] = {{"a", 0.2, false}, {"c", 0.5, false}, {"b", 0.8, false}};
    cb_clip *lead = marker_clip(s, "lead", 1.0f, true, ml, 3);
    cb_clip *fol = marker_clip(s, "fol", 1.3f, true, mf, 3);
    float prev = 0.0f;
    for (int k = 0; k <= 400; ++k) {
        float t = -1.0f + 3.0f * (float)k / 400.0f, got;
        cb_sync_kind used;
        assert_int_equal(cb_sync_follower_time(lead, t, fol, prev, NULL, &got, &used), CB_OK);
        CB_CHECK(used == CB_SYNC_KIND_NORMALIZED, "leader %.3f synced by markers", (double)t);
        CB_CHECK(fabs(remainder((double)got - t, 1.0)) < 1e-6 && fabs(got - prev) < 0.5f,
                 "leader %.4f: follower %.6f, not the normalized time", (double)t, (double)got);
        prev = got;
    }
    const cb_clip *pair[2] = {lead, fol};
    uint32_t out[4];
    uint32_t n = 0;
    cb_error err = {0};
    assert_int_equal(cb_sync_group_names(pair, 2, NULL, out, 4, &n, &err), CB_ERR_MISMATCH);
    assert_int_equal(n, 0);
    cb_test_note("mismatch message: %s", err.message);
    assert_non_null(strstr(err.message, "\"lead\""));
    assert_non_null(strstr(err.message, "\"fol\""));
    assert_non_null(strstr(err.message, "after \"a\" comes \"b\" in \"lead\" but \"c\" in "
                                        "\"fol\""));
    /* The filtered subset {a, b} agrees. */
    uint32_t ab[2] = {h("a"), h("b")};
    cb_sync_names filter = {ab, 2};
    assert_int_equal(cb_sync_group_names(pair, 2, &filter, out, 4, &n, &err), CB_OK);
    assert_int_equal(n, 2);
    cb_sync_names names = {out, n};
    float got;
    cb_sync_kind used;
    assert_int_equal(cb_sync_follower_time(lead, 0.25f, fol, 0.4f, &names, &got, &used), CB_OK);
    assert_int_equal(used, CB_SYNC_KIND_MARKERS);
    /* Half way from a (0.1) to b (0.4) in the leader; a 0.2 -> b 0.8 in the follower. */
    CB_CHECK(fabs(got - 0.5f) < 1e-6, "follower at %.9g", (double)got);

    /* One shared name: that marker lines up, the rest of the cycle proportionally. */
    mk m1[2] = {{"a", 0.1, false}, {"q", 0.5, false}};
    mk m2[2] = {{"a", 0.6, false}, {"z", 0.9, false}};
    cb_clip *one_a = marker_clip(s, "one_a", 1.0f, true, m1, 2);
    cb_clip *one_b = marker_clip(s, "one_b", 1.0f, true, m2, 2);
    assert_int_equal(cb_sync_follower_time(one_a, 2.1f, one_b, 2.5f, NULL, &got, &used), CB_OK);
    assert_int_equal(used, CB_SYNC_KIND_MARKERS);
    CB_CHECK(fabs(got - 2.6f) < 1e-6, "follower at %.9g, not on its a", (double)got);
    assert_int_equal(cb_sync_follower_time(one_a, 0.3f, one_b, 0.8f, NULL, &got, &used), CB_OK);
    CB_CHECK(fabs(got - 0.8f) < 1e-6, "follower at %.9g", (double)got);
    /* No shared name. */
    mk m3[1] = {{"zz", 0.3, false}};
    cb_clip *other = marker_clip(s, "other", 1.0f, true, m3, 1);
    assert_int_equal(cb_sync_follower_time(one_a, 0.3f, other, 0.0f, NULL, &got, &used), CB_OK);
    assert_int_equal(used, CB_SYNC_KIND_NORMALIZED);
    CB_CHECK(fabs(got - 0.3f) < 1e-7, "follower at %.9g", (double)got);
    const cb_clip *none_pair[2] = {one_a, other};
    assert_int_equal(cb_sync_group_names(none_pair, 2, NULL, out, 4, &n, NULL), CB_OK);
    assert_int_equal(n, 0);
    cb_sync_names no_names = {NULL, 0};
    assert_int_equal(cb_sync_follower_time(one_a, 0.3f, one_b, 0.0f, &no_names, &got, &used),
                     CB_OK);
    assert_int_equal(used, CB_SYNC_KIND_NORMALIZED);
    /* "a" followed by "b" and by "a" within one clip. */
    mk m4[4] = {{"a", 0.0, false}, {"b", 0.25, false}, {"a", 0.5, false}, {"c", 0.75, false}};
    mk m5[2] = {{"a", 0.0, false}, {"b", 0.5, false}};
    cb_clip *twice = marker_clip(s, "twice", 1.0f, true, m4, 4);
    cb_clip *ab_clip = marker_clip(s, "ab", 1.0f, true, m5, 2);
    assert_int_equal(cb_sync_follower_time(twice, 0.6f, ab_clip, 0.0f, NULL, &got, &used), CB_OK);
    assert_int_equal(used, CB_SYNC_KIND_NORMALIZED);
    const cb_clip *self[1] = {twice};
    uint32_t ac[2] = {h("a"), h("c")};
    cb_sync_names f_ac = {ac, 2};
    assert_int_equal(cb_sync_group_names(self, 1, &f_ac, out, 4, &n, &err), CB_ERR_MISMATCH);
    assert_non_null(strstr(err.message, "\"twice\""));
    /* time_from_pos on a clip that lacks the pair: the normalized fallback, nearest the hint. */
    cb_sync_pos p = {CB_SYNC_KIND_MARKERS, h("nope"), h("a"), 0.5f, 0.25f};
    assert_int_equal(cb_sync_time_from_pos(ab_clip, &p, NULL, 7.9f, &got, &used), CB_OK);
    assert_int_equal(used, CB_SYNC_KIND_NORMALIZED);
    CB_CHECK(got == 8.25f, "fallback time %.9g", (double)got);
    cb_clip_destroy(lead), cb_clip_destroy(fol), cb_clip_destroy(one_a), cb_clip_destroy(one_b);
    cb_clip_destroy(other), cb_clip_destroy(twice), cb_clip_destroy(ab_clip);
    cb_skeleton_destroy(s);
}

/* ------------------------------------------------------------------------------------------ */
/* The embedded set                                                                           */

static const char *const directions[8] = {"f", "fl", "l", "bl", "b", "br", "r", "fr"};

/* Where the follower is when the leader is at t. */
static float follow(const cb_clip *lead, float t, const cb_clip *fol, float hint, bool by_markers)
{
    float f = t;
    if (by_markers) {
        assert_int_equal(cb_sync_follower_time(lead, t, fol, hint, NULL, &f, NULL), CB_OK);
    }
    return f;
}

/* A synced blend as a graph plays it, frame by frame at `hz`: the leader advances by
 * dt / duration, the follower follows (by markers or by normalized time), and both clips report
 * their events over the frame. Returns the largest number of frames between a foot_plant event
 * of the leader and the follower's event of the same name nearest to it. */
static int plant_events_apart(const cb_clip *lead, const cb_clip *fol, bool by_markers, double hz,
                              double seconds)
{
    enum { MAX = 64 };
    int frames_l[MAX], frames_f[MAX];
    uint32_t names_l[MAX], names_f[MAX];
    size_t nl = 0, nf = 0;
    const uint32_t plants[2] = {h("foot_plant_l"), h("foot_plant_r")};
    float tl = 0.0f, tf = follow(lead, 0.0f, fol, 0.0f, by_markers);
    int frames = (int)(seconds * hz);
    for (int i = 1; i <= frames; ++i) {
        float nl_t = (float)((double)i / hz / cb_clip_duration(lead));
        float nf_t = follow(lead, nl_t, fol, tf, by_markers);
        for (int which = 0; which < 2; ++which) {
            cb_marker_event ev[8];
            size_t written;
            const cb_clip *c = which ? fol : lead;
            assert_int_equal(cb_sync_events(c, which ? tf : tl, which ? nf_t : nl_t, 0,
                                            (cb_marker_event_span){ev, 8}, &written, NULL),
                             CB_OK);
            for (size_t k = 0; k < written; ++k) {
                if (ev[k].name_hash != plants[0] && ev[k].name_hash != plants[1]) {
                    continue;
                }
                size_t *n = which ? &nf : &nl;
                if (*n < MAX) {
                    (which ? frames_f : frames_l)[*n] = i;
                    (which ? names_f : names_l)[*n] = ev[k].name_hash;
                    ++*n;
                }
            }
        }
        tl = nl_t, tf = nf_t;
    }
    CB_CHECK(nl >= 2 && nf >= 2, "%s / %s: %zu and %zu plant events", cb_clip_name(lead),
             cb_clip_name(fol), nl, nf);
    int worst = 0;
    for (size_t i = 0; i < nl; ++i) {
        int best = 1 << 30;
        for (size_t j = 0; j < nf; ++j) {
            if (names_f[j] == names_l[i]) {
                best =
                    abs(frames_f[j] - frames_l[i]) < best ? abs(frames_f[j] - frames_l[i]) : best;
            }
        }
        worst = best > worst ? best : worst;
    }
    return worst;
}

/* "Foot-plant markers of blended clips coincide within one frame": for every ordered pair of
 * the 16 walk and run clips (each as leader and as follower), at the leader's foot_plant_l and
 * foot_plant_r the follower is at its own marker of that name, through the pair function and
 * through the group's names (which are exactly the two plants: the lifts are events only); and
 * played as a synced blend at 60 Hz, the two clips' plant events fire at most a frame apart. */
static void sync_embedded_plants_coincide(void **state)
{
    (void)state;
    cb_embedded *e = NULL;
    assert_int_equal(cb_embedded_create(NULL, &e, NULL), CB_OK);
    const cb_clip *loco[16];
    for (int g = 0; g < 2; ++g) {
        for (int d = 0; d < 8; ++d) {
            char name[16];
            snprintf(name, sizeof name, "%s_%s", g ? "run" : "walk", directions[d]);
            loco[8 * g + d] = cb_embedded_find_clip(e, name);
            assert_non_null(loco[8 * g + d]);
        }
    }
    uint32_t gn[CB_CLIP_MAX_MARKERS];
    uint32_t n = 0;
    cb_error err = {0};
    CB_CHECK(cb_sync_group_names(loco, 16, NULL, gn, CB_CLIP_MAX_MARKERS, &n, &err) == CB_OK, "%s",
             err.message);
    assert_int_equal(n, 2);
    assert_int_equal(gn[0], h("foot_plant_l"));
    assert_int_equal(gn[1], h("foot_plant_r"));
    cb_sync_names names = {gn, n};
    static const char *const plants[2] = {"foot_plant_l", "foot_plant_r"};
    double worst_frames = 0.0;
    for (int a = 0; a < 16; ++a) {
        for (int b = 0; b < 16; ++b) {
            const cb_clip *lead = loco[a], *fol = loco[b];
            double frame = 1.0 / (double)(cb_clip_frame_count(fol) - 1);
            for (int k = 0; k < 2; ++k) {
                uint32_t il, jf;
                assert_int_equal(cb_clip_find_marker_name(lead, plants[k], &il), CB_OK);
                assert_int_equal(cb_clip_find_marker_name(fol, plants[k], &jf), CB_OK);
                float tl = marker_time(lead, il) + 3.0f, tf = marker_time(fol, jf);
                float got, via;
                cb_sync_kind used;
                assert_int_equal(cb_sync_follower_time(lead, tl, fol, 3.0f, NULL, &got, &used),
                                 CB_OK);
                assert_int_equal(used, CB_SYNC_KIND_MARKERS);
                cb_sync_pos p;
                assert_int_equal(cb_sync_pos_from_time(lead, tl, &names, &p), CB_OK);
                assert_int_equal(cb_sync_time_from_pos(fol, &p, &names, 3.0f, &via, &used), CB_OK);
                assert_int_equal(used, CB_SYNC_KIND_MARKERS);
                double off = fabs(remainder((double)got - tf, 1.0)) / frame;
                worst_frames = fmax(worst_frames, off);
                CB_CHECK(off <= 1.0 && got == via,
                         "leader %s at its %s: follower %s %.4f frames from its own",
                         cb_clip_name(lead), plants[k], cb_clip_name(fol), off);
            }
        }
    }
    int worst_events = 0;
    for (int a = 0; a < 16; ++a) {
        for (int b = 0; b < 16; ++b) {
            int d = plant_events_apart(loco[a], loco[b], true, 60.0, 3.0);
            worst_events = d > worst_events ? d : worst_events;
        }
    }
    CB_CHECK(worst_events <= 1, "plant events %d frames apart", worst_events);
    cb_test_note("embedded plants, 256 leader/follower pairs: follower within %.2g frames of its "
                 "marker; plant events at most %d frame apart at 60 Hz",
                 worst_frames, worst_events);
    cb_embedded_destroy(e);
}

/* ------------------------------------------------------------------------------------------ */
/* Through the pose pipeline                                                                  */

/* A time-warped copy of an embedded locomotion clip: at normalized time u it shows the source
 * at phase offset + g(u) (mod 1), g piecewise linear with g(split) = 0.5, so its feet land at
 * other normalized times and its halves have other lengths (a limp). Keys: the source sampled
 * through the sample job, 160 per cycle, every joint's translation and rotation, with the
 * source's root motion put back into the root joint (the locomotion clips walk straight, so a
 * translation is all of it) for the new clip to extract again; the markers are the source's,
 * moved by the inverse warp. */
static double warp_g(double u, double split)
{
    return u < split ? 0.5 * u / split : 0.5 + 0.5 * (u - split) / (1.0 - split);
}

static double warp_g_inverse(double y, double split)
{
    return y < 0.5 ? 2.0 * split * y : split + (y - 0.5) * 2.0 * (1.0 - split);
}

static cb_clip *warped_clip(const cb_skeleton *s, const cb_clip *src, const char *name,
                            double offset, double split, float duration)
{
    enum { KEYS = 160 };
    size_t n = cb_skeleton_joint_count(s), groups = cb_skeleton_group_count(s);
    cb_xform_group *pose = cb_test_pose_alloc(s, false);
    float *times = malloc((KEYS + 1) * sizeof *times);
    float *values = malloc(n * 7 * (KEYS + 1) * sizeof *values);
    cb_clip_track *tracks = malloc(2 * n * sizeof *tracks);
    for (int k = 0; k <= KEYS; ++k) {
        double u = (double)k / KEYS;
        times[k] = k == KEYS ? duration : (float)(u * duration);
        double phase = offset + warp_g(u, split);
        cb_pose_sample_job job = {src, (float)(phase - floor(phase)), {pose, groups}};
        assert_int_equal(cb_pose_sample_job_run(&job, NULL), CB_OK);
        cb_root_delta moved;
        assert_int_equal(cb_clip_root_delta(src, 0.0f, (float)phase, &moved), CB_OK);
        for (size_t j = 0; j < n; ++j) {
            dref_xform x = dref_from_pose(pose, j);
            for (int c = 0; c < 3 && j == 0; ++c) {
                x.t[c] += moved.translation[c];
            }
            float *tv = values + (j * 7) * (KEYS + 1), *qv = tv + 3 * (KEYS + 1);
            for (int c = 0; c < 3; ++c) {
                tv[3 * k + c] = (float)x.t[c];
            }
            for (int c = 0; c < 4; ++c) {
                qv[4 * k + c] = (float)x.q[c];
            }
        }
    }
    for (size_t j = 0; j < n; ++j) {
        float *tv = values + (j * 7) * (KEYS + 1), *qv = tv + 3 * (KEYS + 1);
        tracks[2 * j] = (cb_clip_track){.joint = (uint32_t)j,
                                        .channel = CB_CHANNEL_TRANSLATION,
                                        .key_count = KEYS + 1,
                                        .times = times,
                                        .values = tv};
        tracks[2 * j + 1] = (cb_clip_track){.joint = (uint32_t)j,
                                            .channel = CB_CHANNEL_ROTATION,
                                            .key_count = KEYS + 1,
                                            .times = times,
                                            .values = qv};
    }
    cb_clip_marker_desc m[8];
    size_t mc = cb_clip_marker_count(src);
    assert_true(mc <= 8);
    for (size_t i = 0; i < mc; ++i) {
        cb_clip_marker q;
        cb_clip_query_marker(src, i, &q);
        double y = (double)q.time - offset;
        double u = warp_g_inverse(y - floor(y), split);
        m[i] = (cb_clip_marker_desc){q.name, (float)(u * duration), q.event_only};
    }
    cb_clip_desc d = {.name = name,
                      .skeleton = s,
                      .duration_s = duration,
                      .tracks = tracks,
                      .track_count = 2 * n,
                      .markers = m,
                      .marker_count = mc};
    cb_clip *c = cb_test_clip_create(&d);
    free(pose), free(times), free(values), free(tracks);
    return c;
}

/* The pose pipeline for one character: fused blend, local-to-model. */
typedef struct rig {
    const cb_skeleton *s;
    cb_xform_group *pose;
    float *model;
} rig;

static void rig_run(rig *g, const cb_blend_entry *e, size_t count)
{
    size_t groups = cb_skeleton_group_count(g->s), n = cb_skeleton_joint_count(g->s);
    cb_pose_blend_job bj = {g->s, {e, count}, 0.0f, {g->pose, groups}};
    assert_int_equal(cb_pose_blend_job_run(&bj, NULL), CB_OK);
    cb_ltm_job lj = {.skeleton = g->s, .local = {g->pose, groups}, .model = {g->model, n * 16}};
    assert_int_equal(cb_ltm_job_run(&lj, NULL), CB_OK);
}

/* World position of a joint of a clip at unwrapped time t: the root motion from 0 to t, then the
 * in-place model position turned by its heading. */
static void world_at(rig *g, const cb_clip *c, float t, size_t joint, double w[3])
{
    cb_blend_entry e = {c, t, 1.0f};
    rig_run(g, &e, 1);
    cb_root_delta d;
    assert_int_equal(cb_clip_root_delta(c, 0.0f, t, &d), CB_OK);
    const float *p = g->model + 16 * joint + 12;
    double cy = cos(d.yaw), sy = sin(d.yaw);
    w[0] = d.translation[0] + p[0] * cy + p[2] * sy;
    w[1] = d.translation[1] + p[1];
    w[2] = d.translation[2] - p[0] * sy + p[2] * cy;
}

/* Playback seconds at which a foot comes into contact: samples k * step apart, world positions
 * w[k] at the clip's own times own[k] (seconds); contact is the ball low (< 3 cm) and still
 * (< 0.3 m/s in the clip's own time, so that a follower slowed down by the sync is not taken as
 * planted early), as test_embedded.c measures it on the source clips, where it starts within a
 * quarter frame of the plant markers. */
static size_t contact_starts(double (*w)[3], const double *own, size_t n, double step, double *out,
                             size_t cap)
{
    size_t k = 0;
    bool prev = true;
    for (size_t i = 0; i + 1 < n && k < cap; ++i) {
        double v = hypot(w[i + 1][0] - w[i][0], w[i + 1][2] - w[i][2]) / (own[i + 1] - own[i]);
        bool in = w[i][1] < 0.03 && v < 0.3;
        if (in && !prev && i > 0) {
            out[k++] = (double)i * step;
        }
        prev = in;
    }
    return k;
}

/* The leader plays three cycles at its own rate; the follower follows by markers or by
 * normalized time. Returns the largest distance, in playback seconds, between a contact start
 * of the leader's left foot and the nearest one of the follower's. */
static double feet_apart(rig *g, const cb_clip *lead, const cb_clip *fol, bool by_markers)
{
    uint32_t ball = 0;
    assert_int_equal(cb_skeleton_find_joint(g->s, "ball_l", &ball), CB_OK);
    enum { PER_CYCLE = 960, N = 3 * PER_CYCLE + 1 };
    double(*wl)[3] = malloc(N * sizeof *wl), (*wf)[3] = malloc(N * sizeof *wf);
    double *tl = malloc(N * sizeof *tl), *tf = malloc(N * sizeof *tf);
    float ft = 0.0f;
    for (int k = 0; k < N; ++k) {
        float t = (float)k / PER_CYCLE;
        ft = follow(lead, t, fol, ft, by_markers);
        world_at(g, lead, t, ball, wl[k]);
        world_at(g, fol, ft, ball, wf[k]);
        tl[k] = (double)t * cb_clip_duration(lead);
        tf[k] = (double)ft * cb_clip_duration(fol);
    }
    double step = cb_clip_duration(lead) / PER_CYCLE, dl[8], df[8];
    size_t nl = contact_starts(wl, tl, N, step, dl, 8);
    size_t nf = contact_starts(wf, tf, N, step, df, 8);
    CB_CHECK(nl >= 2 && nf >= 2, "%s / %s: contacts %zu and %zu", cb_clip_name(lead),
             cb_clip_name(fol), nl, nf);
    double worst = 0.0;
    for (size_t i = 0; i < nl; ++i) {
        double best = 1e9;
        for (size_t j = 0; j < nf; ++j) {
            best = fmin(best, fabs(dl[i] - df[j]));
        }
        worst = fmax(worst, best);
    }
    free(wl), free(wf), free(tl), free(tf);
    return worst;
}

/* Time-warped copies of embedded walks and runs put the left foot down at different normalized
 * times (and take different times for each half of the stride). Synced by markers, a leader's
 * and a follower's left feet touch down within one frame (1/30 s) of each other, measured from
 * the poses in the world, and in a blend played frame by frame (30 and 60 Hz) the two clips'
 * foot_plant events fire in the same frame; synced by normalized time the same pairs land
 * several frames apart, which shows that the measurements can tell. Each pair also runs with
 * the roles swapped. */
static void sync_keeps_feet_in_step_through_the_pose_pipeline(void **state)
{
    (void)state;
    cb_embedded *e = NULL;
    assert_int_equal(cb_embedded_create(NULL, &e, NULL), CB_OK);
    const cb_skeleton *s = cb_embedded_skeleton(e);
    rig g = {s, cb_test_pose_alloc(s, false),
             malloc(cb_skeleton_joint_count(s) * 16 * sizeof(float))};
    struct {
        const char *src;
        double offset, split;
        float duration;
    } spec[6] = {
        {"walk_f", 0.0, 0.42, 1.1f}, {"run_f", 0.3, 0.58, 0.8f},  {"run_fl", 0.55, 0.5, 0.75f},
        {"walk_r", 0.8, 0.45, 1.2f}, {"walk_b", 0.65, 0.6, 1.0f}, {"run_bl", 0.15, 0.4, 0.7f},
    };
    cb_clip *w[6];
    for (int i = 0; i < 6; ++i) {
        char name[32];
        snprintf(name, sizeof name, "%s_warped", spec[i].src);
        w[i] = warped_clip(s, cb_embedded_find_clip(e, spec[i].src), name, spec[i].offset,
                           spec[i].split, spec[i].duration);
    }
    double worst_m = 0.0, best_n = 1e9;
    int worst_ev = 0, best_ev_n = 1 << 30;
    for (int p = 0; p < 3; ++p) {
        for (int swap = 0; swap < 2; ++swap) {
            const cb_clip *lead = w[2 * p + swap], *fol = w[2 * p + 1 - swap];
            double m = feet_apart(&g, lead, fol, true);
            double nrm = feet_apart(&g, lead, fol, false);
            int ev = 0, ev_n = 1 << 30;
            for (int k = 0; k < 2; ++k) {
                double hz = k ? 60.0 : 30.0;
                int a = plant_events_apart(lead, fol, true, hz, 4.0);
                int b = plant_events_apart(lead, fol, false, hz, 4.0);
                ev = a > ev ? a : ev;
                ev_n = b < ev_n ? b : ev_n;
            }
            cb_test_note("%-14s leads %-14s: left touch-downs %4.1f ms apart by markers, %3.0f ms "
                         "by normalized time; plant events %d / %d frames apart",
                         cb_clip_name(lead), cb_clip_name(fol), 1e3 * m, 1e3 * nrm, ev, ev_n);
            worst_m = fmax(worst_m, m), best_n = fmin(best_n, nrm);
            worst_ev = ev > worst_ev ? ev : worst_ev;
            best_ev_n = ev_n < best_ev_n ? ev_n : best_ev_n;
        }
    }
    CB_CHECK(worst_m <= 1.0 / 30.0, "synced by markers, feet land %.1f ms apart", 1e3 * worst_m);
    CB_CHECK(best_n >= 3.0 / 30.0, "the control is too close: %.1f ms", 1e3 * best_n);
    CB_CHECK(worst_ev <= 1, "synced by markers, plant events %d frames apart", worst_ev);
    CB_CHECK(best_ev_n >= 3, "the control's plant events only %d frames apart", best_ev_n);
    for (int i = 0; i < 6; ++i) {
        cb_clip_destroy(w[i]);
    }
    free(g.pose), free(g.model);
    cb_embedded_destroy(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sync_events_validity),
        cmocka_unit_test(sync_events_hand_cases),
        cmocka_unit_test(sync_events_match_reference),
        cmocka_unit_test(sync_events_fire_once_per_crossing_at_any_dt_and_speed),
        cmocka_unit_test(sync_events_reversal_on_a_marker),
        cmocka_unit_test(sync_events_frame_rate_independent),
        cmocka_unit_test(sync_validity),
        cmocka_unit_test(sync_pos_matches_reference),
        cmocka_unit_test(sync_round_trip),
        cmocka_unit_test(sync_follower_agreeing_clips),
        cmocka_unit_test(sync_disagreeing_clips_fall_back),
        cmocka_unit_test(sync_embedded_plants_coincide),
        cmocka_unit_test(sync_keeps_feet_in_step_through_the_pose_pipeline),
    };
    return CB_RUN_TESTS(tests);
}
