/* markers: named markers on clips (crowdblend/clip.h). The name hash against the published
 * FNV-1a vectors and an independent implementation; desc defaults; storage (sorted, stable,
 * normalized, queryable, found by hash and by name); every validation error with its message,
 * hash collisions included (found by search, not assumed). Where the embedded clips' markers
 * sit is checked through the pose pipeline in test_embedded.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_test.h"
#include "test_util.h"

/* FNV-1a, 32 bits, written from the description (Fowler/Noll/Vo; draft-eastlake-fnv, section
 * 2): start at the offset basis, then per byte xor, multiply by the prime, modulo 2^32. */
static uint32_t fnv1a_ref(const unsigned char *p, size_t n)
{
    uint64_t h = 2166136261u;
    for (size_t i = 0; i < n; ++i) {
        h = ((h ^ p[i]) * 16777619u) % 4294967296u;
    }
    return (uint32_t)h;
}

/* A small clip with markers: 4 joints, one rotation track, duration 1.2 s. */
typedef struct fixture {
    cb_skeleton *skel;
    float times[2];
    float rot[8];
    cb_clip_track track;
    cb_clip_desc desc;
} fixture;

static void fixture_init(fixture *f, cb_prng *r)
{
    f->skel = cb_test_random_skeleton(r, 4, false, false);
    f->times[0] = 0.0f, f->times[1] = 1.2f;
    const float rot[8] = {0, 0, 0, 1, 0, 0.6f, 0, 0.8f};
    memcpy(f->rot, rot, sizeof rot);
    f->track = (cb_clip_track){.joint = 1,
                               .channel = CB_CHANNEL_ROTATION,
                               .key_count = 2,
                               .times = f->times,
                               .values = f->rot};
    f->desc = (cb_clip_desc){.name = "m",
                             .skeleton = f->skel,
                             .duration_s = 1.2f,
                             .tracks = &f->track,
                             .track_count = 1};
}

/* ------------------------------------------------------------------------------------------ */

static void markers_hash_is_fnv1a(void **state)
{
    (void)state;
    /* Published test vectors of FNV-1a 32 (draft-eastlake-fnv, and the FNV authors' page). */
    assert_int_equal(cb_name_hash(""), 0x811c9dc5u);
    assert_int_equal(cb_name_hash("a"), 0xe40c292cu);
    assert_int_equal(cb_name_hash("foobar"), 0xbf9cf968u);
    assert_int_equal(cb_name_hash(NULL), cb_name_hash(""));
    /* Random names of every byte value but 0, against the reference above. */
    cb_prng r = cb_test_prng(__func__);
    unsigned char name[CB_MARKER_NAME_MAX + 1];
    for (int it = 0; it < 2000; ++it) {
        size_t n = 1 + cb_prng_below(&r, CB_MARKER_NAME_MAX);
        for (size_t i = 0; i < n; ++i) {
            name[i] = (unsigned char)(1 + cb_prng_below(&r, 255));
        }
        name[n] = 0;
        CB_CHECK(cb_name_hash((const char *)name) == fnv1a_ref(name, n),
                 "hash of a %zu-byte name differs from the reference", n);
    }
}

static void markers_desc_defaults(void **state)
{
    (void)state;
    cb_clip_desc d = cb_clip_query_desc(NULL);
    assert_null(d.markers);
    assert_int_equal(d.marker_count, 0);
    cb_clip_marker_desc m = {.name = "x", .time_s = 0.5f};
    cb_clip_desc in = {.markers = &m, .marker_count = 1};
    d = cb_clip_query_desc(&in);
    assert_ptr_equal(d.markers, &m);
    assert_int_equal(d.marker_count, 1);
    /* A zeroed marker desc is an event and a sync point. */
    cb_clip_marker_desc z = {0};
    assert_false(z.event_only);

    cb_prng r = cb_test_prng(__func__);
    fixture f;
    fixture_init(&f, &r);
    cb_clip *c = cb_test_clip_create(&f.desc);
    assert_int_equal(cb_clip_marker_count(c), 0);
    assert_int_equal(cb_clip_marker_count(NULL), 0);
    cb_clip_marker q;
    assert_int_equal(cb_clip_query_marker(c, 0, &q), CB_ERR_INVALID_ARGUMENT);
    uint32_t idx = 77;
    assert_int_equal(cb_clip_find_marker(c, cb_name_hash("x"), 0, &idx), CB_ERR_NOT_FOUND);
    assert_int_equal(idx, 77);
    cb_clip_destroy(c);
    cb_skeleton_destroy(f.skel);
}

/* Random markers, looping and clamped clips: sorted by time with ties in desc order, each desc
 * marker present with its name, hash, times and flag; hash and name lookups visit every
 * occurrence; the clip's memory grows by what the markers take. */
static void markers_stored_sorted_and_queryable(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    fixture f;
    fixture_init(&f, &r);
    static const char *const pool[] = {"foot_plant_l", "foot_plant_r", "foot_lift_l",
                                       "foot_lift_r",  "swing",        "a",
                                       "hit",          "sound_step_01"};
    const size_t npool = sizeof pool / sizeof pool[0];
    cb_clip *plain = cb_test_clip_create(&f.desc);
    for (int it = 0; it < 200; ++it) {
        bool looping = it % 2 == 0;
        size_t n = 1 + cb_prng_below(&r, 40);
        cb_clip_marker_desc m[40];
        /* Times on a coarse grid so that equal times (ties) happen, each name at most once per
         * time; the end of the clip only when clamped. */
        unsigned steps = 12;
        for (size_t i = 0; i < n; ++i) {
            bool clash;
            do {
                unsigned k = cb_prng_below(&r, looping ? steps : steps + 1);
                m[i] = (cb_clip_marker_desc){pool[cb_prng_below(&r, (uint32_t)npool)],
                                             1.2f * (float)k / (float)steps,
                                             cb_prng_below(&r, 3) == 0};
                clash = false;
                for (size_t j = 0; j < i; ++j) {
                    clash =
                        clash || (strcmp(m[j].name, m[i].name) == 0 && m[j].time_s == m[i].time_s);
                }
            } while (clash);
        }
        cb_clip_desc d = f.desc;
        d.wrap = looping ? CB_CLIP_WRAP_LOOP : CB_CLIP_WRAP_CLAMP;
        d.markers = m;
        d.marker_count = n;
        cb_clip *c = cb_test_clip_create(&d);
        assert_int_equal(cb_clip_marker_count(c), n);
        /* Markers take at least their times, hashes, names and flags. */
        CB_CHECK(cb_clip_bytes(c) >= cb_clip_bytes(plain) + n * (4 + 4 + 1 + 1),
                 "%zu bytes with %zu markers, %zu without", cb_clip_bytes(c), n,
                 cb_clip_bytes(plain));
        bool used[40] = {false};
        float prev_time = -1.0f;
        size_t prev_desc = 0;
        for (size_t i = 0; i < n; ++i) {
            cb_clip_marker q;
            assert_int_equal(cb_clip_query_marker(c, i, &q), CB_OK);
            /* The desc marker it came from: first unused one with that name and time. */
            size_t src = n;
            for (size_t j = 0; j < n && src == n; ++j) {
                double want = (double)m[j].time_s / (double)1.2f;
                if (!used[j] && strcmp(m[j].name, q.name) == 0 && q.time == (float)want) {
                    src = j;
                }
            }
            CB_CHECK(src < n, "marker %zu (\"%s\" at %g) matches no desc marker", i, q.name,
                     (double)q.time);
            used[src] = true;
            assert_int_equal(q.name_hash, cb_name_hash(q.name));
            assert_int_equal(q.event_only, m[src].event_only);
            CB_CHECK(fabs((double)q.time_s - m[src].time_s) <= 1e-6, "time_s %g vs %g",
                     (double)q.time_s, (double)m[src].time_s);
            CB_CHECK(q.time >= 0.0f && (looping ? q.time < 1.0f : q.time <= 1.0f), "time %g",
                     (double)q.time);
            /* Sorted; equal times keep the desc order. */
            CB_CHECK(q.time > prev_time || (q.time == prev_time && src > prev_desc),
                     "marker %zu out of order", i);
            prev_time = q.time;
            prev_desc = src;
        }
        /* Lookups by hash visit exactly the occurrences of a name, in order. */
        for (size_t p = 0; p < npool; ++p) {
            uint32_t h = cb_name_hash(pool[p]);
            size_t seen = 0, want = 0, first = n;
            uint32_t idx = 0;
            for (size_t j = 0; j < n; ++j) {
                want += strcmp(m[j].name, pool[p]) == 0;
            }
            for (uint32_t start = 0; cb_clip_find_marker(c, h, start, &idx) == CB_OK;
                 start = idx + 1) {
                cb_clip_marker q;
                cb_clip_query_marker(c, idx, &q);
                assert_string_equal(q.name, pool[p]);
                first = seen == 0 ? idx : first;
                ++seen;
            }
            assert_int_equal(seen, want);
            cb_result fr = cb_clip_find_marker_name(c, pool[p], &idx);
            assert_int_equal(fr, want ? CB_OK : CB_ERR_NOT_FOUND);
            if (want) {
                assert_int_equal(idx, first);
            }
        }
        cb_clip_destroy(c);
    }
    /* Argument errors of the queries. */
    cb_clip_marker q;
    uint32_t idx;
    assert_int_equal(cb_clip_query_marker(NULL, 0, &q), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_clip_query_marker(plain, 0, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_clip_find_marker(NULL, 0, 0, &idx), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_clip_find_marker(plain, 0, 0, NULL), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_clip_find_marker_name(plain, NULL, &idx), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_clip_find_marker_name(NULL, "a", &idx), CB_ERR_NULL_ARGUMENT);
    assert_int_equal(cb_clip_find_marker_name(plain, "a", NULL), CB_ERR_NULL_ARGUMENT);
    cb_clip_destroy(plain);
    cb_skeleton_destroy(f.skel);
}

/* Normalized times at the ends: a looping clip keeps a marker just before the end below 1; a
 * clamped clip may put one at the very end (1). */
static void markers_normalized_at_the_ends(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    fixture f;
    fixture_init(&f, &r);
    cb_clip_marker_desc m[2] = {{"end", nextafterf(1.2f, 0.0f), false}, {"start", 0.0f, false}};
    cb_clip_desc d = f.desc;
    d.markers = m;
    d.marker_count = 2;
    cb_clip *c = cb_test_clip_create(&d);
    cb_clip_marker q;
    assert_int_equal(cb_clip_query_marker(c, 0, &q), CB_OK);
    assert_string_equal(q.name, "start");
    assert_true(q.time == 0.0f);
    assert_int_equal(cb_clip_query_marker(c, 1, &q), CB_OK);
    assert_string_equal(q.name, "end");
    CB_CHECK(q.time < 1.0f && q.time > 0.9999f, "looping end marker at %.9g", (double)q.time);
    cb_clip_destroy(c);
    m[0].time_s = 1.2f;
    d.wrap = CB_CLIP_WRAP_CLAMP;
    c = cb_test_clip_create(&d);
    assert_int_equal(cb_clip_query_marker(c, 1, &q), CB_OK);
    assert_true(q.time == 1.0f);
    assert_true(q.time_s == 1.2f);
    cb_clip_destroy(c);
    cb_skeleton_destroy(f.skel);
}

/* Two different names with one hash, found by a birthday search over random 10-character names
 * (FNV-1a has 2^32 values: 2^19 names give about 32 colliding pairs, so a miss is practically
 * impossible). Names "m0", "m1", ... would not do: FNV-1a happens to be injective on such short
 * decimal suffixes at this count. */
typedef struct hashed {
    uint32_t hash, index;
} hashed;

static void random_name(uint64_t seed, char out[16])
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz_0123456789";
    cb_prng r = cb_prng_seed(seed);
    for (int i = 0; i < 10; ++i) {
        out[i] = alphabet[cb_prng_below(&r, sizeof alphabet - 1)];
    }
    out[10] = 0;
}

static int cmp_hashed(const void *a, const void *b)
{
    const hashed *x = a, *y = b;
    return x->hash < y->hash   ? -1
           : x->hash > y->hash ? 1
                               : (x->index > y->index) - (x->index < y->index);
}

static bool find_collision(char a[16], char b[16])
{
    const uint32_t n = 1u << 19;
    hashed *h = malloc(n * sizeof *h);
    assert_non_null(h);
    for (uint32_t i = 0; i < n; ++i) {
        char s[16];
        random_name(i, s);
        h[i] = (hashed){cb_name_hash(s), i};
    }
    qsort(h, n, sizeof *h, cmp_hashed);
    bool found = false;
    for (uint32_t i = 1; i < n && !found; ++i) {
        if (h[i].hash == h[i - 1].hash) {
            random_name(h[i - 1].index, a);
            random_name(h[i].index, b);
            found = strcmp(a, b) != 0;
        }
    }
    free(h);
    return found;
}

static void markers_rejects_bad_input(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    fixture f;
    fixture_init(&f, &r);
    cb_clip_marker_desc m[3] = {{"a", 0.1f, false}, {"b", 0.6f, true}, {"a", 0.9f, false}};
    cb_clip_desc d = f.desc;
    d.markers = m;
    d.marker_count = 3;
    cb_clip *c = cb_test_clip_create(&d); /* the minimal valid case: one name twice at two times */
    cb_clip_destroy(c);

    d.markers = NULL;
    cb_test_expect_clip_error(&d, CB_ERR_NULL_ARGUMENT, "markers is NULL");
    d.markers = m;
    cb_clip_marker_desc *many = calloc(CB_CLIP_MAX_MARKERS + 1, sizeof *many);
    char(*names)[8] = calloc(CB_CLIP_MAX_MARKERS + 1, sizeof *names);
    for (int i = 0; i <= CB_CLIP_MAX_MARKERS; ++i) {
        snprintf(names[i], sizeof names[i], "k%d", i);
        many[i] =
            (cb_clip_marker_desc){names[i], 1.1f * (float)i / (CB_CLIP_MAX_MARKERS + 1), false};
    }
    cb_clip_desc dm = f.desc;
    dm.markers = many;
    dm.marker_count = CB_CLIP_MAX_MARKERS;
    c = cb_test_clip_create(&dm); /* exactly the maximum is fine */
    assert_int_equal(cb_clip_marker_count(c), CB_CLIP_MAX_MARKERS);
    cb_clip_destroy(c);
    dm.marker_count = CB_CLIP_MAX_MARKERS + 1;
    cb_test_expect_clip_error(&dm, CB_ERR_TOO_MANY, "markers exceed");
    free(many), free(names);

    cb_clip_marker_desc bad[3];
#define WITH(i, field, value)                                                                      \
    memcpy(bad, m, sizeof bad);                                                                    \
    bad[i].field = value;                                                                          \
    d.markers = bad
    WITH(1, name, NULL);
    cb_test_expect_clip_error(&d, CB_ERR_NULL_ARGUMENT, "markers[1].name is NULL");
    WITH(2, name, "");
    cb_test_expect_clip_error(&d, CB_ERR_INVALID_ARGUMENT, "markers[2].name has 0 bytes");
    char longest[CB_MARKER_NAME_MAX + 2];
    memset(longest, 'x', sizeof longest);
    longest[CB_MARKER_NAME_MAX] = 0;
    WITH(0, name, longest);
    c = cb_test_clip_create(&d); /* CB_MARKER_NAME_MAX bytes is fine */
    cb_clip_marker q;
    cb_clip_query_marker(c, 0, &q);
    assert_string_equal(q.name, longest);
    cb_clip_destroy(c);
    longest[CB_MARKER_NAME_MAX] = 'x';
    longest[CB_MARKER_NAME_MAX + 1] = 0;
    cb_test_expect_clip_error(&d, CB_ERR_INVALID_ARGUMENT, "markers[0].name has 64 bytes");
    WITH(1, time_s, NAN);
    cb_test_expect_clip_error(&d, CB_ERR_NOT_FINITE, "markers[1] (\"b\").time_s");
    WITH(1, time_s, INFINITY);
    cb_test_expect_clip_error(&d, CB_ERR_NOT_FINITE, "markers[1]");
    WITH(1, time_s, -INFINITY);
    cb_test_expect_clip_error(&d, CB_ERR_NOT_FINITE, "markers[1]");
    WITH(2, time_s, -0.01f);
    cb_test_expect_clip_error(&d, CB_ERR_INVALID_ARGUMENT, "markers[2] (\"a\").time_s = -0.01");
    WITH(2, time_s, 1.25f);
    cb_test_expect_clip_error(&d, CB_ERR_INVALID_ARGUMENT, "outside [0, 1.2");
    WITH(2, time_s, 1.2f); /* the end of a looping clip is its start */
    cb_test_expect_clip_error(&d, CB_ERR_INVALID_ARGUMENT, "use 0");
    d.wrap = CB_CLIP_WRAP_CLAMP; /* but a clamped clip has an end */
    c = cb_test_clip_create(&d);
    cb_clip_destroy(c);
    d.wrap = _CB_CLIP_WRAP_DEFAULT;
    WITH(2, time_s, 0.1f); /* "a" twice at 0.1 s */
    cb_test_expect_clip_error(&d, CB_ERR_DUPLICATE, "markers[0] and markers[2] are both \"a\"");
    WITH(1, name, "a"); /* also a duplicate of markers[0] only if the times agree: not here */
    bad[2].time_s = 0.9f;
    c = cb_test_clip_create(&d);
    cb_clip_destroy(c);
    /* Two different names with one hash. */
    char ca[16], cbn[16];
    CB_CHECK(find_collision(ca, cbn), "no FNV-1a collision among 2^19 names");
    assert_int_equal(cb_name_hash(ca), cb_name_hash(cbn));
    assert_int_equal(fnv1a_ref((const unsigned char *)ca, strlen(ca)),
                     fnv1a_ref((const unsigned char *)cbn, strlen(cbn)));
    cb_test_note("FNV-1a collision used: \"%s\" and \"%s\" (0x%08x)", ca, cbn, cb_name_hash(ca));
    WITH(0, name, ca);
    bad[2].name = cbn;
    cb_test_expect_clip_error(&d, CB_ERR_DUPLICATE, "have the same hash");
    cb_test_expect_clip_error(&d, CB_ERR_DUPLICATE, cbn);
#undef WITH
    cb_skeleton_destroy(f.skel);
}

/* Markers live in the clip's one block: a counting allocator sees it all come back. */
static void markers_memory_comes_back(void **state)
{
    (void)state;
    cb_prng r = cb_test_prng(__func__);
    fixture f;
    fixture_init(&f, &r);
    cb_test_counter counter = {0};
    cb_clip_marker_desc m[2] = {{"a", 0.1f, false}, {"b", 0.6f, true}};
    cb_clip_desc d = f.desc;
    d.markers = m;
    d.marker_count = 2;
    d.allocator = cb_test_counting_allocator(&counter);
    cb_clip *c = cb_test_clip_create(&d);
    assert_int_equal(counter.live_bytes, (long long)cb_clip_bytes(c));
    cb_clip_destroy(c);
    assert_int_equal(counter.live_bytes, 0);
    assert_int_equal(counter.allocs, counter.frees);
    d.allocator = cb_test_failing_allocator();
    cb_test_expect_clip_error(&d, CB_ERR_OUT_OF_MEMORY, NULL);
    cb_skeleton_destroy(f.skel);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(markers_hash_is_fnv1a),
        cmocka_unit_test(markers_desc_defaults),
        cmocka_unit_test(markers_stored_sorted_and_queryable),
        cmocka_unit_test(markers_normalized_at_the_ends),
        cmocka_unit_test(markers_rejects_bad_input),
        cmocka_unit_test(markers_memory_comes_back),
    };
    return CB_RUN_TESTS(tests);
}
