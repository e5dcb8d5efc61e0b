/**
 * @file crowdblend/sync.h
 * @brief Step (3) of the frame, per character: marker events crossed during a frame, and
 *        marker-based sync of clips (the machinery of sync groups).
 *
 * Times here are normalized clip times (0 = start, 1 = end). For looping clips they are
 * UNWRAPPED: 2.25 is a quarter into the third cycle, so a frame that wraps from 0.95 to 1.05
 * is one interval, not two; clamped clips clamp every time to [0, 1]. Markers and their name
 * hashes are defined in crowdblend/clip.h.
 *
 * EVENTS (cb_sync_events)
 * A frame moves a clip's time from `from` (the previous frame's time) to `to` (this frame's).
 * A marker at normalized time m of a looping clip sits at every unwrapped time k + m (k any
 * integer); each of these is one crossing. A frame reports:
 *   - playing forwards (to > from): every crossing x with from < x <= to, in increasing x;
 *   - playing backwards (to < from): every crossing x with to <= x < from, in decreasing x;
 *   - from == to: nothing.
 * The CURRENT time `to` is inclusive and the PREVIOUS time `from` exclusive, in both directions.
 * Over consecutive frames (each frame's `from` is the previous frame's `to`) the intervals
 * tile the timeline without gap or overlap, so a marker exactly on a frame boundary fires once,
 * in the frame that arrives at it, and the crossings of a run of frames are those of the
 * whole interval, whatever the frame rate, the speed or the number of wraps in one frame. When
 * playback reverses at a marker, the marker does not fire again. The one time a marker AT
 * `from` should fire is the first update after a clip (re)starts there: pass
 * CB_EVENT_FLAG_INCLUDE_FROM for that update (the interval becomes closed at `from`).
 * Clamped clips have no wrap: each marker is crossed at most once per pass over it.
 * The query is computed in closed form (double precision, exact for float inputs): its cost
 * does not grow with the length of the interval, only with the number of events written.
 *
 * SYNC
 * A sync position says where a clip is relative to its sync markers: between the marker named
 * A (the last at or before the time, cyclically) and the next one named B, a fraction f of the
 * way. It names markers, not indices, so it means the same thing in every clip that has them,
 * whatever their count, order or start: a walk and a run that both mark "foot_plant_l" and
 * "foot_plant_r" are in step when both are 30 % of the way from foot_plant_l to foot_plant_r.
 * The segment from the last marker to the first one crosses the end of the clip (the wrap), for
 * clamped clips too (the layout is treated as one cycle). Positions between markers map
 * linearly in time. When a clip has no sync markers the position is its normalized time.
 *
 * Which markers take part ("sync markers"): those not marked event_only whose name hash is in a
 * cb_sync_names list, or, when the list pointer is NULL, every such marker of the clip
 * (pairwise functions: every such marker whose name both clips have). Clips agree when every
 * name of the list occurs in each of them and, in each of them, every occurrence of a name is
 * followed (cyclically, among sync markers) by the same next name. Then a position of one clip
 * exists in the other, and a follower moves monotonically with its leader. Clips that do not
 * agree (the shared markers come in a different cyclic order) sync by normalized time, never by
 * a mix of both, and the functions say which was used (cb_sync_kind).
 *
 * HOW A SYNC GROUP USES THIS, per character and frame
 *   once, when the graph is built:  cb_sync_group_names(the group's clips) -> names (it checks
 *     that the clips agree and names the markers that do not).
 *   each frame:  the leader (the heaviest clip) advances its own time;
 *     pos = cb_sync_pos_from_time(leader, t_leader, names);
 *     t_follower = cb_sync_time_from_pos(follower, pos, names, hint = t_follower + advance);
 *     events of each clip = cb_sync_events(clip, its previous time, its new time).
 *   a transition (walk -> run) keeps the group's `pos`: the destination's clips start at
 *     cb_sync_time_from_pos(run, pos, ...), so the feet stay in step across it, and when the
 *     heaviest clip changes, the new leader simply continues from its synced time.
 * cb_sync_follower_time() does both steps for one pair of clips.
 *
 * Everything here is thread-safe, allocates nothing and reads only its arguments; results
 * depend only on the inputs.
 */
#ifndef CROWDBLEND_SYNC_H
#define CROWDBLEND_SYNC_H

#include "crowdblend/base.h"
#include "crowdblend/clip.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest |time| in cycles that the functions accept, 2^24, for every time argument: beyond it
 *  a float no longer resolves a cycle's fraction (keep unwrapped times small: shifting both
 *  times of a frame by a whole number of cycles changes nothing but the events' times). */
#define CB_SYNC_MAX_CYCLES 16777216.0f

/* ----------------------------------------------------------------------------------------- */
/* Events                                                                                    */

/** One marker crossing. */
typedef struct cb_marker_event {
    uint32_t marker;    /**< index of the marker in the clip (cb_clip_query_marker) */
    uint32_t name_hash; /**< the marker's name hash */
    /** Unwrapped normalized time of the crossing: k + the marker's time for looping clips, the
     *  marker's time for clamped ones. */
    float time;
    /** Where in the frame the crossing lies: (time - from) / (to - from), in [0, 1] (1 when
     *  from == to), e.g. to schedule a footstep sound within the frame. */
    float fraction;
} cb_marker_event;

/** Writable span of events. */
typedef struct cb_marker_event_span {
    cb_marker_event *ptr;
    size_t count;
} cb_marker_event_span;

/** Flags of cb_sync_events. */
typedef enum cb_event_flag {
    /** Also report markers exactly at `from` (for the first update after a clip starts). */
    CB_EVENT_FLAG_INCLUDE_FROM = 1u << 0,
} cb_event_flag;

/**
 * The markers crossed by a frame that moves `clip` from time `from` to time `to` (see EVENTS
 * in the file comment for which endpoint counts), in playback order, into `out`.
 * When more crossings happen than `out` holds, the first out.count are written (in playback
 * order) and *crossed tells how many there were: truncation is *crossed > *written, not an
 * error. out may be {NULL, 0} to count only.
 * @param flags    0 or CB_EVENT_FLAG_INCLUDE_FROM
 * @param written  required: receives the number of events written (<= out.count)
 * @param crossed  optional: receives the number of crossings in the interval
 * @return CB_OK; CB_ERR_NULL_ARGUMENT (clip, written, or out.ptr NULL with out.count > 0),
 *         CB_ERR_NOT_FINITE (a time), CB_ERR_INVALID_ARGUMENT (|from| or |to| above
 *         CB_SYNC_MAX_CYCLES, unknown flags). Nothing is written on failure.
 */
CB_API cb_result cb_sync_events(const cb_clip *clip, float from, float to, uint32_t flags,
                                cb_marker_event_span out, size_t *written, uint64_t *crossed);

/* ----------------------------------------------------------------------------------------- */
/* Sync                                                                                      */

/** The marker names a sync uses (see SYNC): name hashes, as cb_name_hash gives them. */
typedef struct cb_sync_names {
    const uint32_t *hashes; /**< count hashes; may be NULL when count is 0 */
    uint32_t count;         /**< 0: no markers at all, i.e. normalized-time sync */
} cb_sync_names;

/** How a sync position is expressed, or how a sync was done. */
typedef enum cb_sync_kind {
    CB_SYNC_KIND_NORMALIZED = 0, /**< by normalized time (no sync markers, or clips disagree) */
    CB_SYNC_KIND_MARKERS,        /**< between two named sync markers */
    _CB_SYNC_KIND_COUNT
} cb_sync_kind;

/**
 * A position in a cycle, independent of any clip (see SYNC). A zeroed struct is the start of a
 * cycle by normalized time.
 */
typedef struct cb_sync_pos {
    cb_sync_kind kind;
    uint32_t from_hash; /**< MARKERS: name of the sync marker at or before the position */
    uint32_t to_hash;   /**< MARKERS: name of the next sync marker (from_hash if it is alone) */
    float fraction;     /**< MARKERS: [0, 1], the share of the way from `from` to `to` */
    /** Always: the normalized time, wrapped to [0, 1), of the clip the position was taken from
     *  (clamped clips: [0, 1]); the fallback when a clip lacks the markers. */
    float normalized;
} cb_sync_pos;

/**
 * The sync position of `clip` at (unwrapped) normalized time `time`.
 * @param names  the sync markers (see SYNC); NULL: every sync marker of the clip
 * @return CB_OK; CB_ERR_NULL_ARGUMENT (clip, out, or names->hashes NULL with a count),
 *         CB_ERR_NOT_FINITE, CB_ERR_INVALID_ARGUMENT (|time| above CB_SYNC_MAX_CYCLES).
 *         out is untouched on failure.
 */
CB_API cb_result cb_sync_pos_from_time(const cb_clip *clip, float time, const cb_sync_names *names,
                                       cb_sync_pos *out);

/**
 * The time at which `clip` is at sync position `pos`: in a marker position A -> B, fraction f,
 * the time f of the way from an occurrence of A to the next sync marker, which must be named B.
 * Of all such times (every occurrence, every cycle of a looping clip) the one nearest `hint` is
 * returned: pass where the caller expects the clip to be (its previous time plus this frame's
 * advance), so the result continues its unwrapped time. Clamped clips return a time in [0, 1]
 * (nearest the clamped hint). When pos is NORMALIZED, or the clip has no A followed by B, the
 * result is pos->normalized (plus the whole number of cycles nearest the hint for looping
 * clips) and *used says CB_SYNC_KIND_NORMALIZED.
 * @param names  the sync markers; NULL: every sync marker of this clip
 * @param used   optional: receives how the time was found
 * @return CB_OK; CB_ERR_NULL_ARGUMENT, CB_ERR_NOT_FINITE (hint, pos->fraction or
 *         pos->normalized), CB_ERR_INVALID_ARGUMENT (pos->kind, |hint| above
 *         CB_SYNC_MAX_CYCLES). Nothing is written on failure.
 */
CB_API cb_result cb_sync_time_from_pos(const cb_clip *clip, const cb_sync_pos *pos,
                                       const cb_sync_names *names, float hint, float *time,
                                       cb_sync_kind *used);

/**
 * The time of `follower` in step with `leader` at time `leader_time`: the composition of
 * cb_sync_pos_from_time on the leader and cb_sync_time_from_pos on the follower, after checking
 * that the two clips agree on the markers (see SYNC); when they do not, or share no sync
 * marker, the follower takes the leader's normalized time (nearest `hint` for looping clips).
 * @param names  the sync markers; NULL: the sync markers whose names both clips have
 * @param used   optional: receives how the time was found
 * @return as cb_sync_time_from_pos, plus CB_ERR_NOT_FINITE / CB_ERR_INVALID_ARGUMENT for
 *         leader_time.
 */
CB_API cb_result cb_sync_follower_time(const cb_clip *leader, float leader_time,
                                       const cb_clip *follower, float hint,
                                       const cb_sync_names *names, float *time, cb_sync_kind *used);

/**
 * The sync markers of a group of clips, for a graph to compute once at build time: the names
 * of sync markers (not event_only) that every clip has, optionally only those in `filter`, in
 * the order of their first occurrence in clips[0]; and a check that the clips agree on them
 * (see SYNC). When the clips share no name, *out_count is 0 and the group syncs by normalized
 * time.
 * @param filter     optional: only these names are considered (NULL: every name)
 * @param out        capacity hashes; CB_CLIP_MAX_MARKERS is always enough
 * @param out_count  receives the number of names
 * @return CB_OK; CB_ERR_NULL_ARGUMENT, CB_ERR_TOO_FEW (count 0), CB_ERR_SPAN_TOO_SHORT
 *         (capacity), CB_ERR_MISMATCH (two clips order the shared markers differently; the
 *         message names the clips and the markers). Nothing is written on failure.
 */
CB_API cb_result cb_sync_group_names(const cb_clip *const *clips, uint32_t count,
                                     const cb_sync_names *filter, uint32_t *out, uint32_t capacity,
                                     uint32_t *out_count, cb_error *err);

#ifdef __cplusplus
}
#endif

#endif /* CROWDBLEND_SYNC_H */
