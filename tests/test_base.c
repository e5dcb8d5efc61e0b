/* base: result codes, error messages, the allocator, build identity, the name table. */
#include <stdlib.h>
#include <string.h>

#include "base/base_impl.h"
#include "base/names.h"
#include "crowdblend/crowdblend.h"
#include "test_util.h"

static void base_result_str_names_every_code(void **state)
{
    (void)state;
    const char *names[] = {
#define NAME(name, text) #name,
        CB_RESULT_LIST(NAME)
#undef NAME
    };
    assert_int_equal(sizeof names / sizeof names[0], _CB_RESULT_COUNT);
    assert_int_equal(CB_OK, 0);
    for (int r = 0; r < _CB_RESULT_COUNT; ++r) {
        const char *s = cb_result_str((cb_result)r);
        assert_non_null(s);
        /* "NAME: meaning", and the meaning is not empty. */
        size_t len = strlen(names[r]);
        assert_memory_equal(s, names[r], len);
        assert_string_not_equal(s + len, ": ");
        for (int o = 0; o < r; ++o) {
            assert_string_not_equal(s, cb_result_str((cb_result)o));
        }
    }
    assert_string_equal(cb_result_str(_CB_RESULT_COUNT), "unknown cb_result");
    assert_string_equal(cb_result_str((cb_result)-1), "unknown cb_result");
}

static void base_error_set_formats_and_truncates(void **state)
{
    (void)state;
    cb_error err;
    memset(&err, 0x7f, sizeof err);
    assert_int_equal(cb_error_set(&err, CB_ERR_NOT_FOUND, "joint '%s' at %d", "spine", 3),
                     CB_ERR_NOT_FOUND);
    assert_int_equal(err.code, CB_ERR_NOT_FOUND);
    assert_string_equal(err.message, "joint 'spine' at 3");

    char longname[1000];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    cb_error_set(&err, CB_ERR_PARSE, "%s", longname);
    assert_int_equal(strlen(err.message), CB_ERROR_MESSAGE_SIZE - 1);

    /* NULL err: only the code comes back. */
    assert_int_equal(cb_error_set(NULL, CB_ERR_IO, "x"), CB_ERR_IO);
}

typedef struct counting {
    size_t allocs, frees, live_bytes;
} counting;

static void *count_alloc(size_t size, size_t align, void *user)
{
    counting *c = user;
    c->allocs++;
    c->live_bytes += size;
    return aligned_alloc(align, (size + align - 1) / align * align);
}

static void count_free(void *ptr, size_t size, void *user)
{
    counting *c = user;
    c->frees++;
    c->live_bytes -= size;
    free(ptr);
}

static void base_allocator_hooks_and_alignment(void **state)
{
    (void)state;
    cb_error err = {0};
    cb_allocator only_alloc = {.alloc_fn = count_alloc};
    assert_int_equal(cb_allocator_check(&only_alloc, &err), CB_ERR_ALLOCATOR);
    assert_non_null(strstr(err.message, "alloc_fn"));
    cb_allocator only_free = {.free_fn = count_free};
    assert_int_equal(cb_allocator_check(&only_free, NULL), CB_ERR_ALLOCATOR);
    assert_int_equal(cb_allocator_check(NULL, NULL), CB_OK);
    cb_allocator zero = {0};
    assert_int_equal(cb_allocator_check(&zero, NULL), CB_OK);

    /* Default allocator: aligned as asked, size 0 gives NULL. */
    for (size_t align = 1; align <= 4096; align *= 2) {
        void *p = cb_alloc(NULL, 100, align);
        assert_non_null(p);
        assert_true(cb_is_aligned(p, align));
        cb_free(NULL, p, 100);
    }
    assert_null(cb_alloc(NULL, 0, 64));
    assert_null(cb_alloc(NULL, SIZE_MAX - 8, 64));
    cb_free(NULL, NULL, 0);

    /* Hooks see every call with matching sizes. */
    counting c = {0};
    cb_allocator hooks = {count_alloc, count_free, &c};
    assert_int_equal(cb_allocator_check(&hooks, NULL), CB_OK);
    unsigned char *p = cb_alloc_zeroed(&hooks, 333, 64);
    assert_non_null(p);
    assert_true(cb_is_aligned(p, 64));
    for (int i = 0; i < 333; ++i) {
        assert_int_equal(p[i], 0);
    }
    assert_int_equal(c.allocs, 1);
    assert_int_equal(c.live_bytes, 333);
    cb_free(&hooks, p, 333);
    assert_int_equal(c.frees, 1);
    assert_int_equal(c.live_bytes, 0);
}

/* The host's memory for the cb_alloc_large checks: a static block, which no one else ever
 * advises (memory from the C library could be a block the library advised and freed). */
static _Alignas(64) unsigned char host_block[CB_ALLOC_LARGE_BYTES + 4096];

/* cb_alloc_large: below CB_ALLOC_LARGE_BYTES it is cb_alloc, not advised (where the C library
 * does not advise its own blocks); from there on, with the C library, the block is aligned to
 * CB_HUGE_PAGE_BYTES, usable to its last byte and advised as huge pages (the mapping's VmFlags
 * say "hg"); with hooks, the hooks get the call as asked and their memory is never advised. */
static void base_alloc_large_huge_pages_only_without_hooks(void **state)
{
    (void)state;
    const size_t large = CB_ALLOC_LARGE_BYTES, huge = CB_HUGE_PAGE_BYTES;
    unsigned char *small = cb_alloc_large(NULL, large - 64, 64);
    assert_non_null(small);
    assert_true(cb_is_aligned(small, 64));
    memset(small, 1, large - 64);
    if (cb_test_libc_advises() == 0) {
        int advised = cb_test_huge_advised(small + huge, NULL);
        CB_CHECK(advised <= 0, "%zu bytes, under CB_ALLOC_LARGE_BYTES: advised", large - 64);
    }
    cb_free(NULL, small, large - 64);
    assert_null(cb_alloc_large(NULL, 0, 64));

    const size_t sizes[] = {large, large + 3 * huge + 12345};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
        const size_t n = sizes[k];
        unsigned char *p = cb_alloc_large(NULL, n, 64);
        assert_non_null(p);
        CB_CHECK(cb_is_aligned(p, huge), "%zu bytes at %p: not on a 2 MB boundary", n, (void *)p);
        memset(p, 0x5A, n); /* every byte is ours (and touched, for the note below) */
        assert_int_equal(p[n - 1], 0x5A);
        long kb = -1;
        int first = cb_test_huge_advised(p, &kb), last = cb_test_huge_advised(p + n - 1, NULL);
        if (first >= 0) {
            CB_CHECK(first == 1 && last == 1, "%zu bytes: advised %d at the start, %d at the end",
                     n, first, last);
            cb_test_note("cb_alloc_large(%zu): huge pages advised, AnonHugePages %ld KB", n, kb);
        } else {
            cb_test_note("cb_alloc_large(%zu): advice cannot be seen here (no smaps, no "
                         "transparent huge pages, or an emulator); not checked",
                         n);
        }
        cb_free(NULL, p, n);
    }

    /* With hooks: one call with the size and alignment asked, no 2 MB alignment, no advice. */
    cb_test_bump host = {.base = host_block, .size = sizeof host_block};
    cb_allocator hooks = {cb_test_bump_alloc, cb_test_bump_free, &host};
    host.used = 64; /* so that a 64-byte alignment does not happen to be a 2 MB one */
    unsigned char *q = cb_alloc_large(&hooks, large, 64);
    assert_non_null(q);
    assert_int_equal(host.allocs, 1);
    assert_int_equal(host.last_size, large);
    assert_int_equal(host.last_align, 64);
    assert_ptr_equal(q, host_block + 64);
    memset(q, 0x5A, large);
    int advised = cb_test_huge_advised(q + huge, NULL);
    CB_CHECK(advised <= 0, "the host's memory was advised as huge pages");
    cb_free(&hooks, q, large);
    assert_int_equal(host.frees, 1);
}

static void base_build_info_matches_config(void **state)
{
    (void)state;
    cb_build_info b = cb_query_build_info();
    char version[32];
    snprintf(version, sizeof version, "%d.%d.%d", CB_VERSION_MAJOR, CB_VERSION_MINOR,
             CB_VERSION_PATCH);
    assert_string_equal(b.version, version);
    assert_string_equal(b.version, CB_VERSION_STRING);
    assert_int_equal(b.simd_width, CB_SIMD_WIDTH);
    assert_int_equal(b.simd_width, cb_simd_width());
    assert_true(b.simd_width == 4 || b.simd_width == 8 || b.simd_width == 16);
    assert_string_equal(b.isa, CB_ISA_NAME);
    assert_non_null(b.compiler);
    assert_true(strlen(b.compiler) > 0);
}

static void base_xform_identity_and_layout(void **state)
{
    (void)state;
    cb_xform x = cb_xform_identity();
    const float want[10] = {0, 0, 0, 1, 0, 0, 0, 1, 1, 1};
    assert_memory_equal(x.rotation, want, 4 * sizeof(float));
    assert_memory_equal(x.translation, want + 4, 3 * sizeof(float));
    assert_memory_equal(x.scale, want + 7, 3 * sizeof(float));
    /* cglm-friendly: rotation first and 16-byte aligned. */
    assert_int_equal(offsetof(cb_xform, rotation), 0);
    assert_int_equal(_Alignof(cb_xform), 16);
    assert_int_equal(sizeof(cb_xform), 48);
}

static void *refuse_alloc(size_t size, size_t align, void *user)
{
    (void)size, (void)align, (void)user;
    return NULL;
}

static void refuse_free(void *ptr, size_t size, void *user)
{
    (void)ptr, (void)size, (void)user;
}

/* Names of the name-table test: "n<i>" in one buffer. */
enum { NAME_COUNT = 20000 };
static char test_names[NAME_COUNT][12];

static const char *test_name_of(const void *ctx, uint32_t i)
{
    (void)ctx;
    return test_names[i];
}

/* The table finds every name with one string comparison (a hashed lookup: a scan would make
 * i + 1 for the i-th name), refuses what it does not hold, and fails cleanly when full. Names
 * whose 32-bit hashes collide would cost one more comparison each; these have none. */
static void base_name_table_finds_a_name_with_one_comparison(void **state)
{
    (void)state;
    cb_name_table t = {0};
    cb_name_table_finish(&t, NULL); /* a zeroed table does nothing */
    assert_int_equal(cb_name_table_init(&t, NULL, NAME_COUNT, test_name_of, NULL), CB_OK);
    for (uint32_t i = 0; i < NAME_COUNT; ++i) {
        snprintf(test_names[i], sizeof test_names[i], "n%u", i);
        assert_true(cb_name_table_add(&t, i));
    }
    assert_false(cb_name_table_add(&t, 0)); /* full */
    uint32_t compares = 0;
    for (uint32_t i = 0; i < NAME_COUNT; ++i) {
        uint32_t before = compares;
        assert_int_equal(cb_name_table_find(&t, test_names[i], &compares), i);
        CB_CHECK(compares - before == 1, "'%s': %u comparisons", test_names[i], compares - before);
    }
    assert_int_equal(cb_name_table_find(&t, "absent", &compares), UINT32_MAX);
    assert_int_equal(cb_name_table_find(&t, NULL, NULL), UINT32_MAX);
    CB_CHECK(compares <= NAME_COUNT + 1, "%u comparisons in all", compares);
    cb_name_table_finish(&t, NULL);
    assert_null(t.slots);
    assert_int_equal(cb_name_hash(NULL), cb_name_hash(""));
    cb_allocator failing = {refuse_alloc, refuse_free, NULL};
    assert_int_equal(cb_name_table_init(&t, &failing, 10, test_name_of, NULL),
                     CB_ERR_OUT_OF_MEMORY);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(base_result_str_names_every_code),
        cmocka_unit_test(base_error_set_formats_and_truncates),
        cmocka_unit_test(base_allocator_hooks_and_alignment),
        cmocka_unit_test(base_alloc_large_huge_pages_only_without_hooks),
        cmocka_unit_test(base_build_info_matches_config),
        cmocka_unit_test(base_xform_identity_and_layout),
        cmocka_unit_test(base_name_table_finds_a_name_with_one_comparison),
    };
    return CB_RUN_TESTS(tests);
}
