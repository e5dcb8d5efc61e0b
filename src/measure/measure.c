/* Planted-foot skate and pops (measure.h; docs/trajectories.md has the definitions). */
#include "measure/measure.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- statistics --------------------------------------------------------------------------- */

bool cb_stat_init(cb_stat *s, double threshold)
{
    memset(s, 0, sizeof *s);
    s->threshold = threshold;
    s->bins = calloc(CB_STAT_BINS, sizeof *s->bins);
    return s->bins != NULL;
}

void cb_stat_finish(cb_stat *s)
{
    free(s->bins);
    s->bins = NULL;
}

static size_t bin_of(double v)
{
    if (!(v >= CB_STAT_LOW)) {
        return 0;
    }
    double b = floor(log2(v / CB_STAT_LOW) * CB_STAT_BINS_PER_OCTAVE);
    return b >= CB_STAT_BINS - 2 ? CB_STAT_BINS - 1 : 1 + (size_t)b;
}

/* The geometric centre of a bin (0 for the bin of values below CB_STAT_LOW). */
static double bin_value(size_t bin)
{
    return bin == 0 ? 0.0 : CB_STAT_LOW * exp2(((double)bin - 0.5) / CB_STAT_BINS_PER_OCTAVE);
}

void cb_stat_add(cb_stat *s, double v)
{
    s->count++;
    s->sum += v;
    s->above += v > s->threshold;
    s->max = fmax(s->max, v);
    s->bins[bin_of(v)]++;
}

void cb_stat_merge(cb_stat *into, const cb_stat *from)
{
    into->count += from->count;
    into->above += from->above;
    into->sum += from->sum;
    into->max = fmax(into->max, from->max);
    for (size_t b = 0; b < CB_STAT_BINS; ++b) {
        into->bins[b] += from->bins[b];
    }
}

double cb_stat_mean(const cb_stat *s)
{
    return s->count ? s->sum / (double)s->count : 0.0;
}

double cb_stat_quantile(const cb_stat *s, double q)
{
    if (s->count == 0) {
        return 0.0;
    }
    uint64_t rank = (uint64_t)ceil(q * (double)s->count), seen = 0;
    rank = rank < 1 ? 1 : rank;
    for (size_t b = 0; b < CB_STAT_BINS; ++b) {
        seen += s->bins[b];
        if (seen >= rank) {
            return bin_value(b);
        }
    }
    return bin_value(CB_STAT_BINS - 1);
}

double cb_stat_share_above(const cb_stat *s)
{
    return s->count ? (double)s->above / (double)s->count : 0.0;
}

/* ---- the measurement ---------------------------------------------------------------------- */

const double cb_measure_speed_edges[CB_MEASURE_SPEED_BANDS] = {0.0, 0.3, 0.8, 1.3, 1.8};
const double cb_measure_turn_edges[CB_MEASURE_TURN_BANDS] = {0.0, 0.1, 0.5, 1.0, 2.0};

int cb_measure_band(const double *edges, int count, double value)
{
    int b = 0;
    while (b + 1 < count && value >= edges[b + 1]) {
        ++b;
    }
    return b;
}

/* One character's history: world positions of every joint at the last two frames, and the
 * ball joints' planted flags at the last frame. */
typedef struct history {
    uint32_t frames; /* frames seen since the slot was taken, saturating at 2 */
    bool planted[CB_FEET];
    double *pos[2]; /* [0]: last frame, [1]: the one before; joint_count * 3 each */
} history;

struct cb_measure {
    cb_measure_desc d;
    size_t joints;
    cb_clip_feet *feet; /* per slot clip */
    history *hist;
    double *pos_memory;
    double *now; /* scratch: this frame's world positions */
    uint32_t *free_slots;
    uint32_t free_count;
    uint64_t character_frames, planted;
    cb_stat skate, by_speed[CB_MEASURE_SPEED_BANDS], by_turn[CB_MEASURE_TURN_BANDS], pops;
};

static bool stats_init(cb_measure *m)
{
    bool ok = cb_stat_init(&m->skate, CB_MEASURE_SKATE_THRESHOLD_CMS) && cb_stat_init(&m->pops, 0);
    for (int b = 0; b < CB_MEASURE_SPEED_BANDS; ++b) {
        ok = ok && cb_stat_init(&m->by_speed[b], CB_MEASURE_SKATE_THRESHOLD_CMS);
    }
    for (int b = 0; b < CB_MEASURE_TURN_BANDS; ++b) {
        ok = ok && cb_stat_init(&m->by_turn[b], CB_MEASURE_SKATE_THRESHOLD_CMS);
    }
    return ok;
}

cb_measure *cb_measure_create(const cb_measure_desc *d)
{
    cb_measure *m = calloc(1, sizeof *m);
    if (m == NULL) {
        fprintf(stderr, "crowdblend: out of memory\n");
        return NULL;
    }
    m->d = *d;
    m->joints = cb_skeleton_joint_count(d->skeleton);
    m->feet = calloc(d->slot_count ? d->slot_count : 1, sizeof *m->feet);
    m->hist = calloc(d->slots ? d->slots : 1, sizeof *m->hist);
    m->pos_memory = malloc((size_t)(d->slots ? d->slots : 1) * 2 * m->joints * 3 * sizeof(double));
    m->now = malloc(m->joints * 3 * sizeof(double));
    m->free_slots = malloc((d->slots ? d->slots : 1) * sizeof *m->free_slots);
    bool ok = m->feet != NULL && m->hist != NULL && m->pos_memory != NULL && m->now != NULL &&
              m->free_slots != NULL && stats_init(m);
    for (uint32_t c = 0; ok && c < d->slot_count; ++c) {
        if (!cb_clip_feet_init(&m->feet[c], d->slot_clips[c])) {
            fprintf(stderr, "crowdblend: clip '%s' has more than %d foot markers per foot\n",
                    cb_clip_name(d->slot_clips[c]), CB_FEET_MAX_MARKERS);
            cb_measure_destroy(m);
            return NULL;
        }
    }
    if (!ok) {
        fprintf(stderr, "crowdblend: out of memory for the measurement\n");
        cb_measure_destroy(m);
        return NULL;
    }
    for (uint32_t s = 0; s < d->slots; ++s) {
        m->hist[s].pos[0] = m->pos_memory + (size_t)s * 2 * m->joints * 3;
        m->hist[s].pos[1] = m->hist[s].pos[0] + m->joints * 3;
        m->free_slots[m->free_count++] = d->slots - 1 - s;
    }
    return m;
}

void cb_measure_destroy(cb_measure *m)
{
    if (m == NULL) {
        return;
    }
    cb_stat_finish(&m->skate);
    cb_stat_finish(&m->pops);
    for (int b = 0; b < CB_MEASURE_SPEED_BANDS; ++b) {
        cb_stat_finish(&m->by_speed[b]);
    }
    for (int b = 0; b < CB_MEASURE_TURN_BANDS; ++b) {
        cb_stat_finish(&m->by_turn[b]);
    }
    free(m->feet);
    free(m->hist);
    free(m->pos_memory);
    free(m->now);
    free(m->free_slots);
    free(m);
}

uint32_t cb_measure_slot_take(cb_measure *m)
{
    if (m->free_count == 0) {
        return UINT32_MAX;
    }
    uint32_t s = m->free_slots[--m->free_count];
    m->hist[s].frames = 0;
    return s;
}

void cb_measure_slot_release(cb_measure *m, uint32_t slot)
{
    m->free_slots[m->free_count++] = slot;
}

/* The world positions of every joint: root * model, translation columns, in double. */
static void world_positions(const cb_measure_frame *f, size_t joints, double *out)
{
    const float *r = f->root;
    for (size_t j = 0; j < joints; ++j) {
        const float *t = &f->matrices[16 * j + 12];
        for (int k = 0; k < 3; ++k) {
            out[3 * j + k] = (double)r[k] * t[0] + (double)r[4 + k] * t[1] +
                             (double)r[8 + k] * t[2] + (double)r[12 + k];
        }
    }
}

/* Whether the planting clips hold at least CB_MEASURE_PLANT_WEIGHT of the foot. */
static bool foot_planted(const cb_measure *m, const cb_measure_frame *f, int foot)
{
    double w = 0.0;
    for (uint32_t c = 0; c < m->d.slot_count; ++c) {
        if (f->weights[c] > 0.0f && cb_clip_feet_down(&m->feet[c], foot, f->times[c])) {
            w += f->weights[c];
        }
    }
    return w >= CB_MEASURE_PLANT_WEIGHT;
}

static void add_skate(cb_measure *m, double cms, const cb_measure_frame *f)
{
    m->planted++;
    cb_stat_add(&m->skate, cms);
    cb_stat_add(
        &m->by_speed[cb_measure_band(cb_measure_speed_edges, CB_MEASURE_SPEED_BANDS, f->speed_mps)],
        cms);
    cb_stat_add(
        &m->by_turn[cb_measure_band(cb_measure_turn_edges, CB_MEASURE_TURN_BANDS, f->turn_rps)],
        cms);
}

void cb_measure_add(cb_measure *m, uint32_t slot, const cb_measure_frame *f)
{
    history *h = &m->hist[slot];
    size_t n3 = m->joints * 3;
    world_positions(f, m->joints, m->now);
    m->character_frames++;
    bool planted[CB_FEET];
    for (int foot = 0; foot < CB_FEET; ++foot) {
        planted[foot] = foot_planted(m, f, foot);
        if (h->frames >= 1 && planted[foot] && h->planted[foot]) {
            const double *a = &h->pos[0][3 * m->d.ball_joint[foot]];
            const double *b = &m->now[3 * m->d.ball_joint[foot]];
            /* Horizontal: the world's X and Z (+Y is up). */
            double cms = 100.0 * hypot(b[0] - a[0], b[2] - a[2]) / m->d.dt_s;
            add_skate(m, cms, f);
        }
        h->planted[foot] = planted[foot];
    }
    if (h->frames >= 2) {
        for (size_t j = 0; j < m->joints; ++j) {
            double acc[3];
            for (int k = 0; k < 3; ++k) {
                acc[k] = m->now[3 * j + k] - 2.0 * h->pos[0][3 * j + k] + h->pos[1][3 * j + k];
            }
            cb_stat_add(&m->pops,
                        100.0 * sqrt(acc[0] * acc[0] + acc[1] * acc[1] + acc[2] * acc[2]));
        }
    }
    /* Shift the history: the oldest buffer takes this frame. */
    double *oldest = h->pos[1];
    h->pos[1] = h->pos[0];
    h->pos[0] = oldest;
    memcpy(h->pos[0], m->now, n3 * sizeof(double));
    h->frames = h->frames < 2 ? h->frames + 1 : 2;
}

cb_measure_result cb_measure_query(const cb_measure *m)
{
    cb_measure_result r = {
        .character_frames = m->character_frames,
        .planted_samples = m->planted,
        .skate = &m->skate,
        .pops = &m->pops,
    };
    for (int b = 0; b < CB_MEASURE_SPEED_BANDS; ++b) {
        r.skate_by_speed[b] = &m->by_speed[b];
    }
    for (int b = 0; b < CB_MEASURE_TURN_BANDS; ++b) {
        r.skate_by_turn[b] = &m->by_turn[b];
    }
    return r;
}

void cb_measure_merge(cb_measure *into, const cb_measure *from)
{
    into->character_frames += from->character_frames;
    into->planted += from->planted;
    cb_stat_merge(&into->skate, &from->skate);
    cb_stat_merge(&into->pops, &from->pops);
    for (int b = 0; b < CB_MEASURE_SPEED_BANDS; ++b) {
        cb_stat_merge(&into->by_speed[b], &from->by_speed[b]);
    }
    for (int b = 0; b < CB_MEASURE_TURN_BANDS; ++b) {
        cb_stat_merge(&into->by_turn[b], &from->by_turn[b]);
    }
}
