/* An ECS-style host driving a crowd: the engine owns the data and the threads.
 *
 * The host keeps one archetype table of "walker" entities: SoA columns for position and
 * heading, and an AoS animation component { speed left, speed forward, lean, wave } per entity.
 * It hands the crowd *views* of that component (base pointer + stride), so nothing is copied,
 * and runs the animation system on its own pthreads, each calling cb_crowd_update_range() on a
 * slice with its own cb_crowd_scratch. Entities are despawned with swap-remove in the table and
 * in the crowd together, so dense indices keep matching.
 *
 * To show that this path is exact, a second crowd is driven the simple way (parameters copied
 * into its own columns, cb_crowd_update() on its pool) and the two must hash equal at the end.
 * Uses only the public API: #include <crowdblend/crowdblend.h>. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <crowdblend/crowdblend.h>

/* Walkers at the start and frames run; `ecs_host WALKERS FRAMES` overrides them (the test does
 * in unoptimized, sanitized and emulated builds, where a frame costs 10-100 times more). */
enum { HOST_THREADS = 3, DEFAULT_FRAMES = 240, DEFAULT_START = 3000 };

typedef struct anim_component {
    float speed_left, speed_forward; /* m/s in the walker's frame (left: +X) */
    float lean;                      /* additive layer weight */
    float wave;                      /* upper-body layer weight */
} anim_component;

/* The archetype table: columns of equal length, swap-removed together. */
typedef struct walkers {
    uint32_t count, capacity;
    float *pos_x, *pos_z, *heading;
    anim_component *anim;
    cb_character *character;
    uint32_t *seed;
} walkers;

static const char *const loco[17] = {
    "idle",  "walk_f", "walk_fl", "walk_l", "walk_bl", "walk_b", "walk_br", "walk_r", "walk_fr",
    "run_f", "run_fl", "run_l",   "run_bl", "run_b",   "run_br", "run_r",   "run_fr",
};

static uint32_t hash32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    return x ^ (x >> 16);
}

/* The movement system: steering that depends only on the entity's seed and the frame. */
static void movement_system(walkers *w, uint32_t frame)
{
    for (uint32_t i = 0; i < w->count; ++i) {
        uint32_t h = hash32(w->seed[i] + frame / 90);
        float speed = (float)(h % 400) / 100.0f;      /* 0 .. 4 m/s, changes every 1.5 s */
        float dir = (float)((h >> 9) % 628) / 100.0f; /* any direction */
        w->anim[i].speed_left = speed * sinf(dir);
        w->anim[i].speed_forward = speed * cosf(dir);
        w->anim[i].lean = 0.5f;
        w->anim[i].wave = (h >> 20) % 7 == 0 ? 1.0f : 0.0f;
    }
}

/* The transform system: moves entities by the animation's root motion. */
static void transform_system(walkers *w, const cb_crowd *crowd)
{
    const cb_root_delta *rm = cb_crowd_root_motion(crowd, 0);
    for (uint32_t i = 0; i < w->count; ++i) {
        float c = cosf(w->heading[i]), s = sinf(w->heading[i]);
        w->pos_x[i] += c * rm[i].translation[0] + s * rm[i].translation[2];
        w->pos_z[i] += -s * rm[i].translation[0] + c * rm[i].translation[2];
        w->heading[i] += rm[i].yaw;
    }
}

static int spawn(walkers *w, cb_crowd *crowd, cb_crowd *twin, uint32_t seed)
{
    if (w->count == w->capacity) {
        return 0;
    }
    uint32_t i = w->count;
    float phase = (float)(hash32(seed) % 1000) / 1000.0f;
    cb_character tw;
    if (cb_crowd_add(crowd, 0, phase, &w->character[i]) != CB_OK ||
        cb_crowd_add(twin, 0, phase, &tw) != CB_OK) {
        return 0;
    }
    w->pos_x[i] = w->pos_z[i] = w->heading[i] = 0.0f;
    w->seed[i] = seed;
    memset(&w->anim[i], 0, sizeof w->anim[i]);
    w->count++;
    return 1;
}

/* Swap-remove entity i from the table; the crowds do the same move themselves. */
static void despawn(walkers *w, cb_crowd *crowd, cb_crowd *twin, uint32_t i)
{
    cb_crowd_remove(crowd, w->character[i]);
    cb_crowd_remove(twin, cb_crowd_character_at(twin, 0, i));
    uint32_t last = --w->count;
    w->pos_x[i] = w->pos_x[last];
    w->pos_z[i] = w->pos_z[last];
    w->heading[i] = w->heading[last];
    w->anim[i] = w->anim[last];
    w->character[i] = w->character[last];
    w->seed[i] = w->seed[last];
}

/* ---- the host's own animation threads ---------------------------------------------------- */

typedef struct host_thread {
    pthread_t thread;
    uint32_t index;
    cb_crowd *crowd;
    cb_crowd_scratch *scratch;
    pthread_barrier_t *start, *done;
    const uint32_t *count;
    const int *quit;
    int failed;
} host_thread;

static void *animation_thread(void *arg)
{
    host_thread *t = arg;
    for (;;) {
        pthread_barrier_wait(t->start);
        if (*t->quit) {
            return NULL;
        }
        /* This thread's slice of the dense range. */
        uint32_t n = *t->count;
        uint32_t first = (uint32_t)((uint64_t)n * t->index / HOST_THREADS);
        uint32_t last = (uint32_t)((uint64_t)n * (t->index + 1) / HOST_THREADS);
        if (cb_crowd_update_range(t->crowd, t->scratch, 1.0f / 60.0f, 0, first, last - first) !=
            CB_OK) {
            t->failed = 1;
        }
        pthread_barrier_wait(t->done);
    }
}

int main(int argc, char **argv)
{
    long start_count = argc > 1 ? strtol(argv[1], NULL, 10) : DEFAULT_START;
    long frames = argc > 2 ? strtol(argv[2], NULL, 10) : DEFAULT_FRAMES;
    if (start_count < 100 || start_count > 1000000 || frames < 1 || frames > 100000) {
        fprintf(stderr, "usage: ecs_host [WALKERS 100..1000000 [FRAMES 1..100000]]\n");
        return 2;
    }
    cb_embedded *set = NULL;
    cb_error err = {0};
    if (cb_embedded_create(NULL, &set, &err) != CB_OK) {
        fprintf(stderr, "ecs_host: %s\n", err.message);
        return 1;
    }
    const cb_clip *clips[17];
    for (int k = 0; k < 17; ++k) {
        clips[k] = cb_embedded_find_clip(set, loco[k]);
    }
    /* One graph asset: a blend space over the 17 locomotion clips with an upper-body wave and
     * an additive lean on top. */
    cb_graph_blend_desc bd = {
        .skeleton = cb_embedded_skeleton(set),
        .clips = clips,
        .clip_count = 17,
        .additive = {.clip = cb_embedded_find_clip(set, "lean_add")},
        .upper_body = {.clip = cb_embedded_find_clip(set, "wave_upper"), .mask_joint = "spine_01"},
    };
    cb_graph *graph = NULL;
    if (cb_graph_create_blend(&bd, &graph, &err) != CB_OK) {
        fprintf(stderr, "ecs_host: %s\n", err.message);
        return 1;
    }
    const cb_graph *graphs[1] = {graph};
    cb_crowd_desc d = {
        .skeleton = cb_embedded_skeleton(set),
        .capacity = (uint32_t)start_count + 500,
        .graphs = graphs,
        .graph_count = 1,
        .thread_count = 1, /* the host brings its own threads; this crowd's pool stays idle */
    };
    cb_crowd *crowd = NULL, *twin = NULL;
    if (cb_crowd_create(&d, &crowd, &err) != CB_OK) {
        fprintf(stderr, "ecs_host: %s\n", err.message);
        return 1;
    }
    d.thread_count = 0; /* the reference crowd runs on its own pool, all CPUs */
    if (cb_crowd_create(&d, &twin, &err) != CB_OK) {
        fprintf(stderr, "ecs_host: %s\n", err.message);
        return 1;
    }

    walkers w = {.capacity = d.capacity};
    w.pos_x = calloc(w.capacity, sizeof(float));
    w.pos_z = calloc(w.capacity, sizeof(float));
    w.heading = calloc(w.capacity, sizeof(float));
    w.anim = calloc(w.capacity, sizeof(anim_component));
    w.character = calloc(w.capacity, sizeof(cb_character));
    w.seed = calloc(w.capacity, sizeof(uint32_t));
    uint32_t next_seed = 1;
    for (long i = 0; i < start_count; ++i) {
        spawn(&w, crowd, twin, next_seed++);
    }

    /* The crowd reads the component table in place: four strided views, one per parameter of
     * the blend-space graph (crowdblend/graph.h names them). */
    const size_t stride = sizeof(anim_component);
    static const char *const names[4] = {
        CB_GRAPH_BLEND_PARAM_PREFIX "0", CB_GRAPH_BLEND_PARAM_PREFIX "1",
        CB_GRAPH_BLEND_ADDITIVE_WEIGHT, CB_GRAPH_BLEND_UPPER_WEIGHT};
    /* Where each parameter lives in the component (the same offsets as the views point at). */
    static const size_t offsets[4] = {
        offsetof(anim_component, speed_left), offsetof(anim_component, speed_forward),
        offsetof(anim_component, lean), offsetof(anim_component, wave)};
    uint32_t param = 0, twin_params[4];
    for (int k = 0; k < 4; ++k) {
        const float *column = (const float *)((const char *)&w.anim[0] + offsets[k]);
        if (cb_crowd_find_param(crowd, 0, names[k], &param) != CB_OK ||
            cb_crowd_find_param(twin, 0, names[k], &twin_params[k]) != CB_OK ||
            cb_crowd_set_param_view(crowd, 0, param, column, stride) != CB_OK) {
            fprintf(stderr, "ecs_host: no parameter %s\n", names[k]);
            return 1;
        }
    }

    pthread_barrier_t start, done;
    pthread_barrier_init(&start, NULL, HOST_THREADS + 1);
    pthread_barrier_init(&done, NULL, HOST_THREADS + 1);
    int quit = 0;
    host_thread threads[HOST_THREADS];
    for (uint32_t t = 0; t < HOST_THREADS; ++t) {
        threads[t] = (host_thread){.index = t,
                                   .crowd = crowd,
                                   .start = &start,
                                   .done = &done,
                                   .count = &w.count,
                                   .quit = &quit};
        if (cb_crowd_scratch_create(crowd, &threads[t].scratch) != CB_OK) {
            fprintf(stderr, "ecs_host: out of memory\n");
            return 1;
        }
        pthread_create(&threads[t].thread, NULL, animation_thread, &threads[t]);
    }

    for (uint32_t frame = 0; frame < (uint32_t)frames; ++frame) {
        /* Despawn a few, spawn a few: the dense order churns like a real game's. */
        if (frame % 20 == 10) {
            for (int k = 0; k < 40 && w.count > 0; ++k) {
                despawn(&w, crowd, twin, hash32(frame * 131u + (uint32_t)k) % w.count);
            }
            for (int k = 0; k < 30; ++k) {
                spawn(&w, crowd, twin, next_seed++);
            }
        }
        movement_system(&w, frame);
        /* The reference crowd gets the same parameters copied into its own columns, each
         * found by name (a graph does not promise its parameters' order). */
        for (int k = 0; k < 4; ++k) {
            float *col = cb_crowd_param_column(twin, 0, twin_params[k]);
            for (uint32_t i = 0; i < w.count; ++i) {
                memcpy(&col[i], (const char *)&w.anim[i] + offsets[k], sizeof(float));
            }
        }
        pthread_barrier_wait(&start); /* animation system, on the host's threads */
        pthread_barrier_wait(&done);
        cb_crowd_update(twin, 1.0f / 60.0f);
        transform_system(&w, crowd);
    }
    quit = 1;
    pthread_barrier_wait(&start);
    int failed = 0;
    for (uint32_t t = 0; t < HOST_THREADS; ++t) {
        pthread_join(threads[t].thread, NULL);
        failed |= threads[t].failed;
        cb_crowd_scratch_destroy(crowd, threads[t].scratch);
    }

    uint64_t h = cb_crowd_output_hash(crowd), href = cb_crowd_output_hash(twin);
    cb_crowd_stats st = cb_crowd_query_stats(crowd);
    float far = 0.0f;
    for (uint32_t i = 0; i < w.count; ++i) {
        far = fmaxf(far, sqrtf(w.pos_x[i] * w.pos_x[i] + w.pos_z[i] * w.pos_z[i]));
    }
    printf("ecs_host: %u walkers after %u frames on %d host threads (views, update_range)\n",
           w.count, (unsigned)frames, HOST_THREADS);
    printf("ecs_host: %llu character updates, farthest walker %.1f m from spawn\n",
           (unsigned long long)st.characters_updated, (double)far);
    printf("ecs_host: output hash %016llx, cb_crowd_update reference %016llx: %s\n",
           (unsigned long long)h, (unsigned long long)href, h == href ? "identical" : "DIFFERENT");

    cb_crowd_destroy(crowd);
    cb_crowd_destroy(twin);
    cb_graph_destroy(graph); /* after the crowds that run it */
    cb_embedded_destroy(set);
    pthread_barrier_destroy(&start);
    pthread_barrier_destroy(&done);
    free(w.pos_x), free(w.pos_z), free(w.heading), free(w.anim), free(w.character), free(w.seed);
    return failed || h != href || far <= 0.0f ? 1 : 0;
}
