/**
 * @file crowdblend/base.h
 * @brief What every module shares: result codes and errors, the allocator, the transform type,
 *        spans, and the build's identity.
 *
 * Nothing here allocates or keeps state. All functions are thread-safe.
 */
#ifndef CROWDBLEND_BASE_H
#define CROWDBLEND_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crowdblend/config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------------------------------------------- */
/* Export and alignment macros                                                               */

/* A dispatch build compiles the library once per kernel set with CB_API defined empty, so
 * that only the forwarding entry points are exported (docs/architecture.md, issue 11). */
#ifndef CB_API
#if defined(_WIN32) && defined(CB_BUILDING_SHARED)
#define CB_API __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#define CB_API __attribute__((visibility("default")))
#else
#define CB_API
#endif
#endif

#ifdef __cplusplus
#define CB_ALIGNAS(n) alignas(n)
#else
#define CB_ALIGNAS(n) _Alignas(n)
#endif

/* ----------------------------------------------------------------------------------------- */
/* Results                                                                                   */

/**
 * Every result code with its one-line meaning. One list generates both the enum and
 * cb_result_str(), so the two cannot drift apart. New codes go at the end: the values are part
 * of the ABI.
 */
#define CB_RESULT_LIST(X)                                                                          \
    X(CB_OK, "success")                                                                            \
    X(CB_ERR_NULL_ARGUMENT, "a required pointer argument is NULL")                                 \
    X(CB_ERR_INVALID_ARGUMENT, "an argument is outside its valid range")                           \
    X(CB_ERR_SPAN_TOO_SHORT, "a span is shorter than the count it must hold")                      \
    X(CB_ERR_MISALIGNED, "a buffer is not aligned as the function requires")                       \
    X(CB_ERR_OUT_OF_MEMORY, "an allocation failed")                                                \
    X(CB_ERR_CANARY, "a desc canary field is not zero (desc not zero-initialised?)")               \
    X(CB_ERR_ALLOCATOR, "an allocator must supply both alloc_fn and free_fn, or neither")          \
    X(CB_ERR_NOT_FINITE, "a value is NaN or infinite")                                             \
    X(CB_ERR_DUPLICATE, "two entries that must differ are equal")                                  \
    X(CB_ERR_TOO_FEW, "fewer entries than the operation needs")                                    \
    X(CB_ERR_TOO_MANY, "more entries than the operation supports")                                 \
    X(CB_ERR_DEGENERATE, "the input is geometrically degenerate")                                  \
    X(CB_ERR_NOT_FOUND, "a name or id does not exist")                                             \
    X(CB_ERR_MISMATCH, "two inputs that must agree do not")                                        \
    X(CB_ERR_HIERARCHY, "a joint hierarchy is not ordered parents-before-children")                \
    X(CB_ERR_STALE_HANDLE, "a handle refers to something that was removed")                        \
    X(CB_ERR_CAPACITY, "a fixed capacity is exhausted")                                            \
    X(CB_ERR_PARSE, "a text input is malformed")                                                   \
    X(CB_ERR_IO, "a file could not be read or written")                                            \
    X(CB_ERR_UNSUPPORTED, "the input uses a feature this build does not support")                  \
    X(CB_ERR_THREAD, "a thread could not be created")                                              \
    X(CB_ERR_IN_USE, "an object is still used by another (destroy that one first)")

/** Result of every fallible call. CB_OK is 0; every other value is an error. */
typedef enum cb_result {
#define CB_RESULT_ENUM_ENTRY(name, text) name,
    CB_RESULT_LIST(CB_RESULT_ENUM_ENTRY)
#undef CB_RESULT_ENUM_ENTRY
        _CB_RESULT_COUNT
} cb_result;

/**
 * The name of a result code followed by its meaning, e.g. "CB_ERR_NULL_ARGUMENT: a required
 * pointer argument is NULL". Never NULL; unknown values give "unknown cb_result".
 */
CB_API const char *cb_result_str(cb_result result);

/** Capacity of cb_error.message including the terminating zero. */
#define CB_ERROR_MESSAGE_SIZE 256

/**
 * Optional, caller-owned detail for create/load/validate calls: the code (equal to the
 * function's return value) and a message naming the field, index or line:column at fault.
 * Pass NULL when the code alone is enough. On success the struct is left untouched.
 */
typedef struct cb_error {
    cb_result code;
    char message[CB_ERROR_MESSAGE_SIZE];
} cb_error;

/* ----------------------------------------------------------------------------------------- */
/* Memory                                                                                    */

/**
 * Allocation hooks, used only by create/init/load functions, never per frame. Supply both
 * functions or neither; all zero means the C library (aligned_alloc/free; a crowd's outputs of
 * 32 MB or more then also ask Linux for transparent huge pages, crowdblend/crowd.h).
 */
typedef struct cb_allocator {
    /** Returns size bytes aligned to align (a power of two), or NULL on failure. */
    void *(*alloc_fn)(size_t size, size_t align, void *user_data);
    /** Frees ptr, which alloc_fn returned for this size. ptr is never NULL. */
    void (*free_fn)(void *ptr, size_t size, void *user_data);
    /** Passed through to both functions. */
    void *user_data;
} cb_allocator;

/* ----------------------------------------------------------------------------------------- */
/* Transforms and spans                                                                      */

/**
 * A joint transform in AoS form: rotation quaternion (x, y, z, w; w real), translation and
 * scale, fp32. `rotation` comes first and is 16-byte aligned, so `x.rotation` can be handed to
 * cglm functions that take a `versor`, and `x.translation` / `x.scale` to those that take a
 * `vec3`. sizeof(cb_xform) is 48 (40 bytes of data, padded to the alignment).
 */
typedef struct cb_xform {
    CB_ALIGNAS(16) float rotation[4];
    float translation[3];
    float scale[3];
} cb_xform;

/** The identity transform: no rotation, no translation, unit scale. */
CB_API cb_xform cb_xform_identity(void);

/* ----------------------------------------------------------------------------------------- */
/* Names and indices                                                                         */

/** The index an index-returning query gives for an invalid request (UINT32_MAX). */
#define CB_INVALID_INDEX UINT32_MAX

/**
 * The 32-bit hash of a name, as graphs, clips and events store names: FNV-1a over the bytes up
 * to the terminating zero (offset basis 2166136261, prime 16777619; Fowler, Noll and Vo). Hash
 * a name once (like Unity's Animator.StringToHash) and compare hashes per frame. NULL hashes as
 * the empty string. Thread-safe.
 */
CB_API uint32_t cb_name_hash(const char *name);

/** Read-only span of transforms. */
typedef struct cb_xform_cspan {
    const cb_xform *ptr;
    size_t count;
} cb_xform_cspan;

/** Writable span of transforms. */
typedef struct cb_xform_span {
    cb_xform *ptr;
    size_t count;
} cb_xform_span;

/** Read-only span of floats. */
typedef struct cb_float_cspan {
    const float *ptr;
    size_t count;
} cb_float_cspan;

/** Writable span of floats. */
typedef struct cb_float_span {
    float *ptr;
    size_t count;
} cb_float_span;

/* ----------------------------------------------------------------------------------------- */
/* Build identity                                                                            */

/** How this library was built; every string is static. */
typedef struct cb_build_info {
    const char *version;  /**< "major.minor.patch" */
    const char *isa;      /**< the meson `isa` option: dispatch, native, x86-64-v3, ... */
    unsigned simd_width;  /**< lanes per SIMD vector (W) of the kernels in use: 4, 8, 16 */
    bool fma;             /**< fused multiply-adds in the kernels: always false, so that
                               every kernel set gives the same bits (crowdblend/simd.h) */
    const char *compiler; /**< compiler name and version */
    bool debug;           /**< built without NDEBUG: internal asserts are live */
} cb_build_info;

/** Describes the library actually linked (which may differ from the headers compiled against). */
CB_API cb_build_info cb_query_build_info(void);

#ifdef __cplusplus
}
#endif

#endif /* CROWDBLEND_BASE_H */
