/* Marker events and marker-based sync (crowdblend/sync.h).
 *
 * Events are counted in closed form. With M markers at sorted normalized times m_0..m_(M-1) in
 * [0, 1), the occurrences of a looping clip are k + m_i for every integer k; the number of
 * occurrences at or before x, counted from an arbitrary origin, is
 *     Up(x) = floor(x) * M + #{i : m_i <= frac(x)}
 * and the number strictly before x is Lo(x), the same with "<". A forward frame (from, to]
 * crosses Up(to) - Up(from) of them, a backward frame [to, from) crosses Lo(from) - Lo(to).
 * Both are differences of one monotone function at the frame's two ends, so over consecutive
 * frames they telescope: the crossings of many frames are exactly those of the whole interval,
 * and a boundary point is counted in exactly one frame. Inputs are floats and the arithmetic
 * is done in double, where x - floor(x) is exact; nothing depends on the length of the frame.
 *
 * Sync works on the "segments" of a clip: between consecutive sync markers in time order, and
 * from the last one back to the first across the end of the cycle. One pass over the markers
 * visits them all; no state is kept between calls. */
#include <math.h>
#include <string.h>

#include "assets/asset_layout.h"
#include "crowdblend/sync.h"

enum { NONE = UINT32_MAX };

/* ------------------------------------------------------------------------------------------ */
/* Events                                                                                     */

/* Markers with a time <= f (upper) or < f (lower): binary search of the sorted times. */
static uint32_t count_at_most(const struct cb_clip *c, double f, bool inclusive)
{
    uint32_t lo = 0, hi = c->marker_count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        double t = c->marker_times[mid];
        if (inclusive ? t <= f : t < f) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* A place in the sequence of occurrences: marker `index` of cycle `cycle`. Clamped clips use
 * cycle 0 only. */
typedef struct occ {
    int64_t cycle;
    int64_t index; /* may be M or -1 transiently, then normalized */
} occ;

/* The occurrence count Up(x) (inclusive) or Lo(x), as a (cycle, index) pair that points at the
 * first occurrence after the counted ones. */
static occ occ_at(const struct cb_clip *c, double x, bool inclusive)
{
    if (!c->looping) {
        return (occ){0, count_at_most(c, x, inclusive)};
    }
    double k = floor(x);
    return (occ){(int64_t)k, count_at_most(c, x - k, inclusive)};
}

static int64_t occ_linear(const struct cb_clip *c, occ o)
{
    return o.cycle * (int64_t)c->marker_count + o.index;
}

static double clamp01(double x)
{
    return x < 0.0 ? 0.0 : x > 1.0 ? 1.0 : x;
}

cb_result cb_sync_events(const cb_clip *clip, float from, float to, uint32_t flags,
                         cb_marker_event_span out, size_t *written, uint64_t *crossed)
{
    if (clip == NULL || written == NULL || (out.ptr == NULL && out.count > 0)) {
        return CB_ERR_NULL_ARGUMENT;
    }
    if (!isfinite(from) || !isfinite(to)) {
        return CB_ERR_NOT_FINITE;
    }
    if (fabsf(from) > CB_SYNC_MAX_CYCLES || fabsf(to) > CB_SYNC_MAX_CYCLES ||
        (flags & ~(uint32_t)CB_EVENT_FLAG_INCLUDE_FROM) != 0) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    const struct cb_clip *c = clip;
    const bool incl = (flags & CB_EVENT_FLAG_INCLUDE_FROM) != 0;
    const double a_raw = from, b_raw = to;
    /* Clamped clips see their times clamped; the event fractions still use the frame's own
     * times, since they place the crossing within the frame's wall-clock interval. */
    const double a = c->looping ? a_raw : clamp01(a_raw);
    const double b = c->looping ? b_raw : clamp01(b_raw);
    size_t n = 0;
    uint64_t total = 0;
    if (c->marker_count > 0 && (a != b || incl)) {
        const int64_t m = (int64_t)c->marker_count;
        const bool forward = b >= a;
        /* Forward (a, b]: occurrences from Up(a) (Lo(a) with INCLUDE_FROM) up to Up(b).
         * Backward [b, a): from Lo(a) - 1 (Up(a) - 1) down to Lo(b). */
        occ start = occ_at(c, a, forward ? !incl : incl);
        occ end = occ_at(c, b, forward);
        int64_t count = forward ? occ_linear(c, end) - occ_linear(c, start)
                                : occ_linear(c, start) - occ_linear(c, end);
        total = count > 0 ? (uint64_t)count : 0;
        double span = b_raw - a_raw;
        occ o = start;
        if (!forward) {
            o.index -= 1;
        }
        while (n < out.count && (uint64_t)n < total) {
            if (o.index >= m) {
                o.index = 0;
                o.cycle += 1;
            } else if (o.index < 0) {
                o.index = m - 1;
                o.cycle -= 1;
            }
            double t = (double)o.cycle + c->marker_times[o.index];
            double f = span != 0.0 ? (t - a_raw) / span : 1.0;
            out.ptr[n++] = (cb_marker_event){
                .marker = (uint32_t)o.index,
                .name_hash = c->marker_hashes[o.index],
                .time = (float)t,
                .fraction = (float)clamp01(f),
            };
            o.index += forward ? 1 : -1;
        }
    }
    *written = n;
    if (crossed != NULL) {
        *crossed = total;
    }
    return CB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Which markers take part in a sync                                                          */

/* A selection of sync markers: never event_only ones; with `names`, only those names; else
 * with `other`, only names that clip has as sync markers; else all. */
typedef struct selection {
    const cb_sync_names *names;
    const struct cb_clip *other;
} selection;

/* The selected markers of one clip as a bit set, for the pairwise agreement check, which
 * visits each marker of one clip for each of the other's and so decides membership once, up
 * front. 128 bytes on the stack; only the words the clip needs are touched. */
enum { MASK_WORDS = (CB_CLIP_MAX_MARKERS + 63) / 64 };

typedef struct marker_set {
    const struct cb_clip *clip;
    uint64_t bits[MASK_WORDS];
    uint32_t count; /* selected markers */
    uint32_t last;  /* the last selected index (valid when count > 0) */
} marker_set;

static bool has_sync_name(const struct cb_clip *c, uint32_t h)
{
    for (uint32_t i = 0; i < c->marker_count; ++i) {
        if (c->marker_hashes[i] == h && !c->marker_event_only[i]) {
            return true;
        }
    }
    return false;
}

static bool in_names(const cb_sync_names *n, uint32_t h)
{
    for (uint32_t i = 0; i < n->count; ++i) {
        if (n->hashes[i] == h) {
            return true;
        }
    }
    return false;
}

/* Does marker i of c take part under selection s? */
static inline bool decide(const struct cb_clip *c, const selection *s, uint32_t i)
{
    uint32_t h = c->marker_hashes[i];
    return !c->marker_event_only[i] && (s->names != NULL   ? in_names(s->names, h)
                                        : s->other != NULL ? has_sync_name(s->other, h)
                                                           : true);
}

static inline void select_markers(const struct cb_clip *c, const selection *s, marker_set *out)
{
    out->clip = c;
    out->count = 0;
    out->last = 0;
    for (uint32_t w = 0; w < (c->marker_count + 63) / 64; ++w) {
        out->bits[w] = 0;
    }
    for (uint32_t i = 0; i < c->marker_count; ++i) {
        if (decide(c, s, i)) {
            out->bits[i / 64] |= (uint64_t)1 << (i % 64);
            out->count++;
            out->last = i;
        }
    }
}

static bool selected(const marker_set *m, uint32_t i)
{
    return (m->bits[i / 64] >> (i % 64) & 1u) != 0;
}

/* Membership for the single-pass scans: from a precomputed set when there is one (the pair
 * path has it for its agreement check), else decided per marker, which for the usual handful
 * of markers and names costs less than building the set. */
typedef struct picker {
    const struct cb_clip *clip;
    const selection *sel;
    const marker_set *set; /* optional */
} picker;

static inline bool picks(const picker *p, uint32_t i)
{
    return p->set != NULL ? selected(p->set, i) : decide(p->clip, p->sel, i);
}

/* Index of the lowest set bit of x != 0. */
static uint32_t lowest_bit(uint64_t x)
{
#if defined(__GNUC__) || defined(__clang__)
    return (uint32_t)__builtin_ctzll(x);
#else
    uint32_t n = 0;
    while ((x & 1u) == 0) {
        x >>= 1;
        ++n;
    }
    return n;
#endif
}

/* The first selected index at or after i, or NONE. */
static inline uint32_t first_from(const marker_set *m, uint32_t i)
{
    uint32_t words = (m->clip->marker_count + 63) / 64;
    for (uint32_t w = i / 64; w < words; ++w) {
        uint64_t x = m->bits[w];
        if (w == i / 64) {
            x &= ~(uint64_t)0 << (i % 64);
        }
        if (x != 0) {
            return w * 64 + lowest_bit(x);
        }
    }
    return NONE;
}

/* The next selected marker after selected index i, cyclically (i itself when it is the only
 * one), and the segment's length in cycles: 1 for a lone marker, else the time to the next one
 * (across the end when it wraps). */
static inline uint32_t next_selected(const marker_set *m, uint32_t i, double *length)
{
    const struct cb_clip *c = m->clip;
    uint32_t j = i + 1 < c->marker_count ? first_from(m, i + 1) : NONE;
    if (j == NONE) {
        j = first_from(m, 0);
    }
    double d = (double)c->marker_times[j] - c->marker_times[i];
    *length = j > i ? d : d + 1.0;
    return j;
}

/* ------------------------------------------------------------------------------------------ */
/* Positions                                                                                  */

static bool names_ok(const cb_sync_names *n)
{
    return n == NULL || n->hashes != NULL || n->count == 0;
}

/* The clip's time as a cycle position u: looping clips wrap (u in [0, 1)), clamped ones clamp
 * (u in [0, 1]). */
static double cycle_position(const struct cb_clip *c, double t)
{
    return c->looping ? t - floor(t) : clamp01(t);
}

/* One pass: the last selected marker at or before u (none: the last one, a cycle earlier), the
 * next selected one after it (none: the first one, a cycle later), and the fraction between. */
static inline cb_sync_pos pos_at(const picker *pk, double u)
{
    const struct cb_clip *c = pk->clip;
    cb_sync_pos p = {.kind = CB_SYNC_KIND_NORMALIZED, .normalized = (float)u};
    if (c->looping && p.normalized >= 1.0f) {
        p.normalized = 0.0f; /* u just below 1 rounded up: the same instant as 0 */
    }
    uint32_t first = NONE, last = NONE, from = NONE, next = NONE;
    for (uint32_t i = 0; i < c->marker_count; ++i) {
        if (!picks(pk, i)) {
            continue;
        }
        first = first == NONE ? i : first;
        last = i;
        if (c->marker_times[i] <= u) {
            from = i;
            next = NONE;
        } else if (next == NONE) {
            next = i;
        }
    }
    if (first == NONE) {
        return p;
    }
    double t_from, t_to;
    if (from == NONE) {
        from = last, next = first;
        t_from = (double)c->marker_times[last] - 1.0;
        t_to = c->marker_times[first];
    } else if (next == NONE) {
        next = first;
        t_from = c->marker_times[from];
        t_to = (double)c->marker_times[first] + 1.0;
    } else {
        t_from = c->marker_times[from];
        t_to = c->marker_times[next];
    }
    double length = t_to - t_from;
    double f = length > 0.0 ? (u - t_from) / length : 0.0;
    p.kind = CB_SYNC_KIND_MARKERS;
    p.from_hash = c->marker_hashes[from];
    p.to_hash = c->marker_hashes[next];
    p.fraction = (float)clamp01(f);
    return p;
}

/* The time of the clip nearest `hint` among those congruent to layout position u: any whole
 * number of cycles away for looping clips. For clamped ones, u folded into [0, 1); there 0 and 1
 * are one point of the layout's cycle (the start and the end), and positions within rounding of
 * it (SEAM, far above the 1e-16 that t_from + f * length can be off, far below a frame) go to
 * the end of the clip that is nearer the hint. */
static double nearest(const struct cb_clip *c, double u, double hint)
{
    if (!c->looping) {
        const double seam = 1e-6;
        double x = u - floor(u);
        if (x < seam && hint > 0.5) {
            return 1.0;
        }
        if (x > 1.0 - seam && hint < 0.5) {
            return 0.0;
        }
        return x;
    }
    return u + floor(hint - u + 0.5);
}

/* The time of position p in the clip nearest to hint; false when the clip has no segment p
 * names. One pass over the selected markers, each consecutive pair a segment, then the one
 * across the end (from the last to the first; a lone marker to itself, a whole cycle). */
static inline bool time_of(const picker *pk, const cb_sync_pos *p, double hint, double *time)
{
    const struct cb_clip *c = pk->clip;
    if (p->kind != CB_SYNC_KIND_MARKERS) {
        return false;
    }
    double h = c->looping ? hint : clamp01(hint);
    double f = p->fraction;
    bool found = false;
    double best = 0.0, best_d = INFINITY;
    uint32_t first = NONE, prev = NONE;
    for (uint32_t i = 0; i <= c->marker_count; ++i) {
        uint32_t k = i;
        double wrap = 0.0;
        if (i == c->marker_count) {
            if (first == NONE) {
                break;
            }
            k = first, wrap = 1.0; /* the segment across the end */
        } else if (!picks(pk, i)) {
            continue;
        }
        if (prev != NONE && c->marker_hashes[prev] == p->from_hash &&
            c->marker_hashes[k] == p->to_hash) {
            double t0 = c->marker_times[prev];
            double t = nearest(c, t0 + f * ((double)c->marker_times[k] + wrap - t0), h);
            double d = fabs(t - h);
            if (d < best_d) { /* ties: the earlier segment, deterministically */
                best = t, best_d = d, found = true;
            }
        }
        first = first == NONE ? k : first;
        prev = k;
    }
    *time = best;
    return found;
}

cb_result cb_sync_pos_from_time(const cb_clip *clip, float time, const cb_sync_names *names,
                                cb_sync_pos *out)
{
    if (clip == NULL || out == NULL || !names_ok(names)) {
        return CB_ERR_NULL_ARGUMENT;
    }
    if (!isfinite(time)) {
        return CB_ERR_NOT_FINITE;
    }
    if (fabsf(time) > CB_SYNC_MAX_CYCLES) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    selection s = {names, NULL};
    picker pk = {clip, &s, NULL};
    *out = pos_at(&pk, cycle_position(clip, time));
    return CB_OK;
}

static cb_result check_pos(const cb_sync_pos *p, float hint)
{
    if (!isfinite(hint) || !isfinite(p->fraction) || !isfinite(p->normalized)) {
        return CB_ERR_NOT_FINITE;
    }
    if (fabsf(hint) > CB_SYNC_MAX_CYCLES || (unsigned)p->kind >= _CB_SYNC_KIND_COUNT) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    return CB_OK;
}

/* The clip's time for p, or p's normalized time when markers do not apply. */
static void resolve(const picker *pk, const cb_sync_pos *p, bool markers_allowed, float hint,
                    float *time, cb_sync_kind *used)
{
    const struct cb_clip *c = pk->clip;
    double t;
    cb_sync_kind kind = CB_SYNC_KIND_MARKERS;
    if (!markers_allowed || !time_of(pk, p, hint, &t)) {
        kind = CB_SYNC_KIND_NORMALIZED;
        double u = c->looping ? (double)p->normalized - floor((double)p->normalized)
                              : clamp01(p->normalized);
        t = nearest(c, u, c->looping ? (double)hint : clamp01(hint));
    }
    *time = (float)t;
    if (used != NULL) {
        *used = kind;
    }
}

cb_result cb_sync_time_from_pos(const cb_clip *clip, const cb_sync_pos *pos,
                                const cb_sync_names *names, float hint, float *time,
                                cb_sync_kind *used)
{
    if (clip == NULL || pos == NULL || time == NULL || !names_ok(names)) {
        return CB_ERR_NULL_ARGUMENT;
    }
    cb_result r = check_pos(pos, hint);
    if (r != CB_OK) {
        return r;
    }
    selection s = {names, NULL};
    picker pk = {clip, &s, NULL};
    resolve(&pk, pos, true, hint, time, used);
    return CB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Agreement between clips                                                                    */

/* Where two clips disagree: after marker name `from`, clip a goes on to `next_a` and clip b to
 * `next_b`. */
typedef struct disagreement {
    uint32_t from, next_a, next_b;
} disagreement;

/* Is every selected segment of a (from A to B) in b as "b has at least one selected A, and
 * every one of them is followed by B"? */
static bool segments_in(const marker_set *a, const marker_set *b, disagreement *why)
{
    const struct cb_clip *clip_a = a->clip, *clip_b = b->clip;
    for (uint32_t i = 0; i < clip_a->marker_count; ++i) {
        if (!selected(a, i)) {
            continue;
        }
        double len;
        uint32_t ha = clip_a->marker_hashes[i];
        uint32_t hn = clip_a->marker_hashes[next_selected(a, i, &len)];
        bool seen = false;
        for (uint32_t k = 0; k < clip_b->marker_count; ++k) {
            if (clip_b->marker_hashes[k] != ha || !selected(b, k)) {
                continue;
            }
            seen = true;
            uint32_t hb = clip_b->marker_hashes[next_selected(b, k, &len)];
            if (hb != hn) {
                *why = (disagreement){ha, hn, hb};
                return false;
            }
        }
        if (!seen) {
            *why = (disagreement){ha, hn, NONE};
            return false;
        }
    }
    return true;
}

/* Do the clips agree (sync.h, SYNC)? Then every position of one exists in the other. *a_first
 * tells which direction failed, for the message. */
static bool clips_agree(const marker_set *a, const marker_set *b, disagreement *why, bool *a_first)
{
    *a_first = true;
    if (!segments_in(a, b, why)) {
        return false;
    }
    *a_first = false;
    return segments_in(b, a, why);
}

cb_result cb_sync_follower_time(const cb_clip *leader, float leader_time, const cb_clip *follower,
                                float hint, const cb_sync_names *names, float *time,
                                cb_sync_kind *used)
{
    if (leader == NULL || follower == NULL || time == NULL || !names_ok(names)) {
        return CB_ERR_NULL_ARGUMENT;
    }
    if (!isfinite(leader_time) || !isfinite(hint)) {
        return CB_ERR_NOT_FINITE;
    }
    if (fabsf(leader_time) > CB_SYNC_MAX_CYCLES || fabsf(hint) > CB_SYNC_MAX_CYCLES) {
        return CB_ERR_INVALID_ARGUMENT;
    }
    selection sl = {names, names == NULL ? follower : NULL};
    selection sf = {names, names == NULL ? leader : NULL};
    marker_set ml, mf;
    select_markers(leader, &sl, &ml);
    select_markers(follower, &sf, &mf);
    disagreement why;
    bool a_first;
    bool agree = ml.count > 0 && clips_agree(&ml, &mf, &why, &a_first);
    picker pl = {leader, &sl, &ml}, pf = {follower, &sf, &mf};
    cb_sync_pos p = pos_at(&pl, cycle_position(leader, leader_time));
    resolve(&pf, &p, agree, hint, time, used);
    return CB_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Groups                                                                                     */

static const char *marker_name_of(const struct cb_clip *c, uint32_t h)
{
    for (uint32_t i = 0; i < c->marker_count; ++i) {
        if (c->marker_hashes[i] == h) {
            return c->marker_names + (size_t)i * CB_MARKER_NAME_SLOT;
        }
    }
    return "(none)";
}

/* The sync names of clip 0 (not event-only, passing the filter) that every other clip has as
 * sync names too, each once, in clip 0's order, into shared; returns their count. */
static uint32_t shared_sync_names(const cb_clip *const *clips, uint32_t count,
                                  const cb_sync_names *filter, uint32_t *shared)
{
    const struct cb_clip *first = clips[0];
    uint32_t n = 0;
    for (uint32_t i = 0; i < first->marker_count; ++i) {
        uint32_t h = first->marker_hashes[i];
        bool keep = !first->marker_event_only[i] && (filter == NULL || in_names(filter, h));
        for (size_t q = 0; q < n && keep; ++q) {
            keep = shared[q] != h;
        }
        for (size_t k = 1; k < count && keep; ++k) {
            keep = has_sync_name(clips[k], h);
        }
        if (keep) {
            shared[n++] = h;
        }
    }
    return n;
}

/* Every clip's sequence of the names against clip 0's; the first disagreement is the error. */
static cb_result check_group_agreement(const cb_clip *const *clips, uint32_t count,
                                       const cb_sync_names *names, cb_error *err)
{
    const struct cb_clip *first = clips[0];
    selection s = {names, NULL};
    marker_set m0, mk;
    select_markers(first, &s, &m0);
    for (size_t k = 0; k < count; ++k) {
        disagreement why;
        bool a_first;
        select_markers(clips[k], &s, &mk);
        /* Clip 0 against itself catches a name followed by different names within it. */
        if (!clips_agree(&m0, &mk, &why, &a_first)) {
            const struct cb_clip *a = a_first ? first : clips[k];
            const struct cb_clip *b = a_first ? clips[k] : first;
            return cb_error_set(err, CB_ERR_MISMATCH,
                                "sync markers of clips \"%s\" and \"%s\" disagree: after "
                                "\"%s\" comes \"%s\" in \"%s\" but \"%s\" in \"%s\" (mark one "
                                "of them event_only, or pass a filter)",
                                first->name, clips[k]->name, marker_name_of(a, why.from),
                                marker_name_of(a, why.next_a), a->name,
                                marker_name_of(b, why.next_b), b->name);
        }
    }
    return CB_OK;
}

cb_result cb_sync_group_names(const cb_clip *const *clips, uint32_t count,
                              const cb_sync_names *filter, uint32_t *out, uint32_t capacity,
                              uint32_t *out_count, cb_error *err)
{
    if (clips == NULL || out_count == NULL || (out == NULL && capacity > 0) || !names_ok(filter)) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_sync_group_names: a NULL argument");
    }
    if (count == 0) {
        return cb_error_set(err, CB_ERR_TOO_FEW, "cb_sync_group_names: no clips");
    }
    for (uint32_t k = 0; k < count; ++k) {
        if (clips[k] == NULL) {
            return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_sync_group_names: clips[%u] is NULL",
                                k);
        }
    }
    /* Count first, write only when everything checks out. */
    uint32_t shared[CB_CLIP_MAX_MARKERS];
    uint32_t n = shared_sync_names(clips, count, filter, shared);
    if (n > 0) {
        cb_sync_names names = {shared, n};
        cb_result r = check_group_agreement(clips, count, &names, err);
        if (r != CB_OK) {
            return r;
        }
    }
    if (n > capacity) {
        return cb_error_set(err, CB_ERR_SPAN_TOO_SHORT,
                            "cb_sync_group_names: %u names, capacity %u", n, capacity);
    }
    if (n > 0) {
        memcpy(out, shared, n * sizeof *out);
    }
    *out_count = n;
    return CB_OK;
}
