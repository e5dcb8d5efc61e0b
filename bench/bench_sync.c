/* Marker events and sync (crowdblend/sync.h), per call. Every benchmark runs C characters per
 * iteration, each with its own clip and time, as a crowd's time & sync stage would; items are
 * calls, "per_call" is ns per call. There is no SIMD twin, so names carry no simd/ref variant.
 *   sync_events/C/M             one 60 Hz frame of events (most frames cross nothing)
 *   sync_events_crossing/C/M    a frame that crosses one marker (writes one event)
 *   sync_events_huge/C/M        a frame of 1000 cycles into an 8-event span (closed form)
 *   sync_events_naive/C/M       the same two frames as a per-cycle scan would do them: the
 *   sync_events_naive_huge/C/M  obvious way, measured as the baseline of the closed form
 *   sync_pos_from_time/C/M      the leader's position, with the group's names
 *   sync_time_from_pos/C/M      a follower's time from that position
 *   sync_follower_group/C/M     both, as a graph runs a follower of a sync group
 *   sync_follower_pair/C/M      cb_sync_follower_time without names: shared names and the
 *                               agreement check on every call
 * M = 4: the embedded walk and run clips (two plants, two lifts; the group syncs on the two
 * plants). M = 32: clips of eight steps with four names each (32 sync markers). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/prng.h"
#include "bench_all.h"
#include "crowdblend/crowdblend.h"
#include "shim.h"

enum { CLIPS = 16, MAX_NAMES = 8 };

typedef struct workload {
    cb_embedded *set;
    cb_clip *own[CLIPS]; /* synthetic clips (M = 32) */
    const cb_clip *clips[CLIPS];
    size_t chars;
    const cb_clip **lead, **fol; /* per character */
    float *t, *f, *dt;           /* leader time, follower time, frame advance (cycles) */
    float *cross_from, *cross_to;
    cb_sync_pos *pos;
    uint32_t names[MAX_NAMES];
    cb_sync_names group;
} workload;

static void workload_free(workload *w)
{
    for (int i = 0; i < CLIPS; ++i) {
        cb_clip_destroy(w->own[i]);
    }
    cb_embedded_destroy(w->set);
    free(w->lead), free(w->fol), free(w->t), free(w->f), free(w->dt);
    free(w->cross_from), free(w->cross_to), free(w->pos);
}

/* Clips of `steps` steps, each step marked plant_l, lift_r, plant_r, lift_l (all sync). */
static bool make_synthetic(workload *w, size_t markers, cb_prng *r)
{
    static const char *const names[4] = {"foot_plant_l", "foot_lift_r", "foot_plant_r",
                                         "foot_lift_l"};
    const cb_skeleton *s = cb_embedded_skeleton(w->set);
    cb_clip_marker_desc m[64];
    for (int i = 0; i < CLIPS; ++i) {
        float duration = cb_prng_range(r, 4.0f, 9.0f);
        for (size_t k = 0; k < markers; ++k) {
            m[k] = (cb_clip_marker_desc){
                names[k % 4], duration * ((float)k + cb_prng_range(r, 0.1f, 0.9f)) / (float)markers,
                false};
        }
        cb_clip_desc d = {
            .skeleton = s, .duration_s = duration, .markers = m, .marker_count = markers};
        if (cb_clip_create(&d, &w->own[i], NULL) != CB_OK) {
            return false;
        }
        w->clips[i] = w->own[i];
    }
    return true;
}

static bool workload_make(workload *w, size_t chars, size_t markers)
{
    memset(w, 0, sizeof *w);
    if (cb_embedded_create(NULL, &w->set, NULL) != CB_OK) {
        return false;
    }
    cb_prng r = cb_prng_seed(0x5EC + chars * 7 + markers);
    if (markers == 4) {
        for (int i = 0; i < CLIPS; ++i) {
            w->clips[i] = cb_embedded_clip(w->set, 1 + (size_t)i); /* 8 walks, 8 runs */
        }
    } else if (!make_synthetic(w, markers, &r)) {
        return false;
    }
    uint32_t n = 0;
    if (cb_sync_group_names(w->clips, CLIPS, NULL, w->names, MAX_NAMES, &n, NULL) != CB_OK) {
        return false;
    }
    w->group = (cb_sync_names){w->names, n};
    w->chars = chars;
    w->lead = calloc(chars, sizeof *w->lead);
    w->fol = calloc(chars, sizeof *w->fol);
    w->t = calloc(chars, sizeof *w->t);
    w->f = calloc(chars, sizeof *w->f);
    w->dt = calloc(chars, sizeof *w->dt);
    w->cross_from = calloc(chars, sizeof *w->cross_from);
    w->cross_to = calloc(chars, sizeof *w->cross_to);
    w->pos = calloc(chars, sizeof *w->pos);
    if (!w->lead || !w->fol || !w->t || !w->f || !w->dt || !w->cross_from || !w->cross_to ||
        !w->pos) {
        return false;
    }
    for (size_t c = 0; c < chars; ++c) {
        w->lead[c] = w->clips[cb_prng_below(&r, CLIPS)];
        w->fol[c] = w->clips[cb_prng_below(&r, CLIPS)];
        w->t[c] = cb_prng_range(&r, 0.0f, 50.0f);
        w->dt[c] = (1.0f / 60.0f) / cb_clip_duration(w->lead[c]);
        cb_sync_follower_time(w->lead[c], w->t[c], w->fol[c], w->t[c], NULL, &w->f[c], NULL);
        cb_sync_pos_from_time(w->lead[c], w->t[c], &w->group, &w->pos[c]);
        cb_clip_marker q;
        cb_clip_query_marker(w->lead[c], cb_prng_below(&r, (uint32_t)markers), &q);
        float k = (float)cb_prng_below(&r, 50);
        w->cross_from[c] = k + q.time - 0.5f * w->dt[c];
        w->cross_to[c] = k + q.time + 0.5f * w->dt[c];
    }
    return true;
}

/* The obvious per-cycle scan: every cycle between the two times, every marker, tested against
 * the same endpoint rule (forward frames only, looping clips; enough for the baseline). */
static size_t naive_events(const cb_clip *c, float from, float to, cb_marker_event *out, size_t cap,
                           size_t *crossed)
{
    size_t m = cb_clip_marker_count(c), n = 0, total = 0;
    for (double k = floor(from); k <= floor(to); k += 1.0) {
        for (size_t i = 0; i < m; ++i) {
            cb_clip_marker q;
            cb_clip_query_marker(c, i, &q);
            double x = k + q.time;
            if (x > from && x <= to) {
                if (n < cap) {
                    out[n++] = (cb_marker_event){(uint32_t)i, q.name_hash, (float)x,
                                                 (float)((x - from) / (to - from))};
                }
                ++total;
            }
        }
    }
    *crossed = total;
    return n;
}

typedef enum kind {
    EVENTS,
    EVENTS_CROSSING,
    EVENTS_HUGE,
    EVENTS_NAIVE,
    EVENTS_NAIVE_HUGE,
    POS_FROM_TIME,
    TIME_FROM_POS,
    FOLLOWER_GROUP,
    FOLLOWER_PAIR,
} kind;

static void run_kind(workload *w, kind kd)
{
    cb_marker_event ev[8];
    size_t written = 0, total = 0;
    uint64_t crossed = 0;
    for (size_t c = 0; c < w->chars; ++c) {
        const cb_clip *lead = w->lead[c];
        float t = w->t[c];
        switch (kd) {
        case EVENTS:
            cb_sync_events(lead, t, t + w->dt[c], 0, (cb_marker_event_span){ev, 8}, &written,
                           &crossed);
            break;
        case EVENTS_CROSSING:
            cb_sync_events(lead, w->cross_from[c], w->cross_to[c], 0, (cb_marker_event_span){ev, 8},
                           &written, &crossed);
            break;
        case EVENTS_HUGE:
            cb_sync_events(lead, t, t + 1000.0f, 0, (cb_marker_event_span){ev, 8}, &written,
                           &crossed);
            break;
        case EVENTS_NAIVE:
            written = naive_events(lead, t, t + w->dt[c], ev, 8, &total);
            break;
        case EVENTS_NAIVE_HUGE:
            written = naive_events(lead, t, t + 1000.0f, ev, 8, &total);
            break;
        case POS_FROM_TIME:
            cb_sync_pos_from_time(lead, t, &w->group, &w->pos[c]);
            break;
        case TIME_FROM_POS:
            cb_sync_time_from_pos(w->fol[c], &w->pos[c], &w->group, w->f[c], &w->f[c], NULL);
            break;
        case FOLLOWER_GROUP: {
            cb_sync_pos p;
            cb_sync_pos_from_time(lead, t, &w->group, &p);
            cb_sync_time_from_pos(w->fol[c], &p, &w->group, w->f[c], &w->f[c], NULL);
            break;
        }
        case FOLLOWER_PAIR:
            cb_sync_follower_time(lead, t, w->fol[c], w->f[c], NULL, &w->f[c], NULL);
            break;
        }
        cb_bench_keep(ev);
    }
    cb_bench_keep(&written), cb_bench_keep(&crossed), cb_bench_keep(&total);
    cb_bench_keep(w->f), cb_bench_keep(w->pos);
}

/* user: the kind; arguments: characters, markers per clip. */
static void bench(cb_bench_state *st, void *user)
{
    kind kd = (kind)(intptr_t)user;
    workload w;
    if (!workload_make(&w, (size_t)cb_bench_range(st, 0), (size_t)cb_bench_range(st, 1))) {
        cb_bench_skip_with_error(st, "workload");
        workload_free(&w);
        return;
    }
    run_kind(&w, kd); /* warm */
    while (cb_bench_keep_running(st)) {
        run_kind(&w, kd);
    }
    double items = (double)w.chars * (double)cb_bench_iterations(st);
    cb_bench_set_items_processed(st, (int64_t)items);
    cb_bench_set_counter(st, "per_call", items, CB_BENCH_COUNTER_RATE | CB_BENCH_COUNTER_INVERT);
    workload_free(&w);
}

void cb_bench_register_sync(void)
{
    static const struct {
        const char *name;
        kind kd;
    } list[] = {
        {"sync_events", EVENTS},
        {"sync_events_crossing", EVENTS_CROSSING},
        {"sync_events_huge", EVENTS_HUGE},
        {"sync_events_naive", EVENTS_NAIVE},
        {"sync_events_naive_huge", EVENTS_NAIVE_HUGE},
        {"sync_pos_from_time", POS_FROM_TIME},
        {"sync_time_from_pos", TIME_FROM_POS},
        {"sync_follower_group", FOLLOWER_GROUP},
        {"sync_follower_pair", FOLLOWER_PAIR},
    };
    for (size_t i = 0; i < sizeof list / sizeof list[0]; ++i) {
        cb_bench *b = cb_bench_register(list[i].name, bench, (void *)(intptr_t)list[i].kd);
        cb_bench_args2(b, 1024, 4);
        cb_bench_args2(b, 1024, 32);
    }
}
