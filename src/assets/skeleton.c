/* Skeletons: validation, one-block storage, queries and joint masks. */
#include <math.h>
#include <string.h>

#include "assets/asset_layout.h"
#include "base/base_impl.h"
#include "simd/soa.h" /* struct cb_xform_group */

cb_skeleton_desc cb_skeleton_query_desc(const cb_skeleton_desc *desc)
{
    cb_skeleton_desc d = {0};
    if (desc != NULL) {
        d = *desc;
    }
    /* Every field's default is its zero value (rest_pose NULL = identity, allocator zero = C
     * library); nothing to replace. The function exists so that hosts and tests see the resolved
     * desc the same way for every asset type. */
    return d;
}

/* The integer's bytes, least significant first (the same on every machine). */
static void le_bytes(uint64_t v, unsigned char *out, size_t bytes)
{
    for (size_t b = 0; b < bytes; ++b) {
        out[b] = (unsigned char)(v >> (8 * b));
    }
}

/* FNV-1a (cb_fnv1a64) over the joint count, then each name with its terminator and each parent.
 * The basis is not FNV's offset basis (a digit short), but signatures are stored in packs
 * (compressed clips name their skeleton by it), so it stays. */
#define SIGNATURE_BASIS 1469598103934665603ull

static uint64_t signature_of(size_t n, const char *const *names, const int32_t *parents)
{
    unsigned char le[8];
    le_bytes((uint64_t)n, le, 8);
    uint64_t h = cb_fnv1a64(SIGNATURE_BASIS, le, 8);
    for (size_t j = 0; j < n; ++j) {
        h = cb_fnv1a64(h, names[j], strlen(names[j]) + 1);
        le_bytes((uint32_t)parents[j], le, 4);
        h = cb_fnv1a64(h, le, 4);
    }
    return h;
}

/* The desc's canaries, allocator, joint count and arrays. */
static cb_result check_desc_basics(const cb_skeleton_desc *d, cb_error *err)
{
    if (d->_start_canary != 0 || d->_end_canary != 0) {
        return cb_error_set(err, CB_ERR_CANARY, "skeleton desc: a canary is not 0");
    }
    cb_result r = cb_allocator_check(&d->allocator, err);
    if (r != CB_OK) {
        return r;
    }
    if (d->joint_count == 0) {
        return cb_error_set(err, CB_ERR_TOO_FEW, "skeleton desc: joint_count is 0");
    }
    if (d->joint_count > CB_SKELETON_MAX_JOINTS) {
        return cb_error_set(err, CB_ERR_TOO_MANY, "skeleton desc: joint_count %u exceeds %d",
                            d->joint_count, CB_SKELETON_MAX_JOINTS);
    }
    if (d->names == NULL || d->parents == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "skeleton desc: %s is NULL",
                            d->names == NULL ? "names" : "parents");
    }
    return CB_OK;
}

/* Joint j's name and parent. */
static cb_result check_joint_name_parent(const cb_skeleton_desc *d, size_t j, cb_error *err)
{
    const char *name = d->names[j];
    if (name == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "skeleton desc: names[%zu] is NULL", j);
    }
    size_t len = strlen(name);
    if (len == 0 || len > CB_JOINT_NAME_MAX) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "skeleton desc: names[%zu] has %zu bytes (1..%d allowed)", j, len,
                            CB_JOINT_NAME_MAX);
    }
    int32_t p = d->parents[j];
    if (p != -1 && (p < 0 || (size_t)p >= j)) {
        return cb_error_set(err, CB_ERR_HIERARCHY,
                            "skeleton desc: parents[%zu] = %d; a parent must be -1 or a joint "
                            "before %zu (parents before children, no cycles)",
                            j, (int)p, j);
    }
    return CB_OK;
}

/* Joint j's rest transform, when the desc has a rest pose: finite, with a rotation. */
static cb_result check_joint_rest(const cb_skeleton_desc *d, size_t j, cb_error *err)
{
    if (d->rest_pose == NULL) {
        return CB_OK;
    }
    const cb_xform *x = &d->rest_pose[j];
    cb_xform_fault fault = cb_xform_check(x);
    if (fault == CB_XFORM_NOT_FINITE) {
        return cb_error_set(err, CB_ERR_NOT_FINITE,
                            "skeleton desc: rest_pose[%zu] has a NaN or infinite value", j);
    }
    if (fault == CB_XFORM_ZERO_ROTATION) {
        return cb_error_set(err, CB_ERR_DEGENERATE,
                            "skeleton desc: rest_pose[%zu].rotation is zero", j);
    }
    return CB_OK;
}

/* Duplicate names: quadratic, but this runs once per skeleton of at most a few hundred joints in
 * practice, and needs no allocation. */
static cb_result check_unique_names(const cb_skeleton_desc *d, cb_error *err)
{
    for (size_t j = 1; j < d->joint_count; ++j) {
        for (size_t i = 0; i < j; ++i) {
            if (strcmp(d->names[i], d->names[j]) == 0) {
                return cb_error_set(err, CB_ERR_DUPLICATE,
                                    "skeleton desc: names[%zu] and names[%zu] are both \"%s\"", i,
                                    j, d->names[j]);
            }
        }
    }
    return CB_OK;
}

static cb_result validate(const cb_skeleton_desc *d, cb_error *err)
{
    cb_result r = check_desc_basics(d, err);
    for (size_t j = 0; r == CB_OK && j < d->joint_count; ++j) {
        r = check_joint_name_parent(d, j, err);
        if (r == CB_OK) {
            r = check_joint_rest(d, j, err);
        }
    }
    return r == CB_OK ? check_unique_names(d, err) : r;
}

/* The skeleton's one block (header, rest groups, parents, name pointers, name bytes) allocated,
 * with the names and parents copied in; the rest groups are left to pack_rest_pose. */
static struct cb_skeleton *skeleton_block(const cb_skeleton_desc *d, size_t *total)
{
    const size_t n = d->joint_count;
    const size_t align = cb_simd_group_align();
    size_t name_bytes = 0;
    for (size_t j = 0; j < n; ++j) {
        name_bytes += strlen(d->names[j]) + 1;
    }
    size_t off_rest = cb_round_up(sizeof(struct cb_skeleton), align);
    size_t off_parents = off_rest + cb_simd_group_count(n) * cb_simd_group_bytes();
    size_t off_names = cb_round_up(off_parents + n * sizeof(int32_t), sizeof(void *));
    size_t off_chars = off_names + n * sizeof(char *);
    *total = off_chars + name_bytes;
    unsigned char *block = cb_alloc(&d->allocator, *total, align);
    if (block == NULL) {
        return NULL;
    }
    struct cb_skeleton *s = (struct cb_skeleton *)block;
    *s = (struct cb_skeleton){
        .allocator = d->allocator,
        .alloc_bytes = *total,
        .joint_count = n,
        .group_count = cb_simd_group_count(n),
        .rest = (cb_xform_group *)(block + off_rest),
        .parents = (int32_t *)(block + off_parents),
        .names = (const char **)(block + off_names),
    };
    char *chars = (char *)(block + off_chars);
    for (size_t j = 0; j < n; ++j) {
        size_t len = strlen(d->names[j]) + 1;
        memcpy(chars, d->names[j], len);
        s->names[j] = chars;
        chars += len;
        s->parents[j] = d->parents[j];
    }
    return s;
}

/* The rest pose (the desc's, or identity) packed into s's groups, rotations normalized in
 * double so that a unit input stays bit-exact. */
static cb_result pack_rest_pose(const cb_skeleton_desc *d, struct cb_skeleton *s, cb_error *err)
{
    const size_t n = d->joint_count;
    cb_allocator a = d->allocator;
    cb_xform *rest = cb_alloc(&a, n * sizeof(cb_xform), _Alignof(cb_xform));
    if (rest == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_skeleton_create: rest pose");
    }
    for (size_t j = 0; j < n; ++j) {
        rest[j] = d->rest_pose != NULL ? d->rest_pose[j] : cb_xform_identity();
        double len2 = cb_rotation_length2(rest[j].rotation);
        if (len2 != 1.0) {
            double inv = 1.0 / sqrt(len2);
            for (int k = 0; k < 4; ++k) {
                rest[j].rotation[k] = (float)(rest[j].rotation[k] * inv);
            }
        }
    }
    cb_result r = cb_xform_pack((cb_xform_cspan){rest, n}, s->rest, s->group_count);
    cb_free(&a, rest, n * sizeof(cb_xform));
    CB_ASSERT(r == CB_OK); /* the groups are sized for n joints, the rotations finite */
    (void)r;
    return CB_OK;
}

cb_result cb_skeleton_create(const cb_skeleton_desc *desc, cb_skeleton **out, cb_error *err)
{
    if (desc == NULL || out == NULL) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_skeleton_create: %s is NULL",
                            desc == NULL ? "desc" : "out");
    }
    cb_skeleton_desc d = cb_skeleton_query_desc(desc);
    cb_result r = validate(&d, err);
    if (r != CB_OK) {
        return r;
    }
    size_t total = 0;
    struct cb_skeleton *s = skeleton_block(&d, &total);
    if (s == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "cb_skeleton_create: %zu bytes", total);
    }
    r = pack_rest_pose(&d, s, err);
    if (r != CB_OK) {
        cb_free(&d.allocator, s, total);
        return r;
    }
    s->signature = signature_of(d.joint_count, d.names, d.parents);
    *out = s;
    return CB_OK;
}

void cb_skeleton_destroy(cb_skeleton *s)
{
    if (s != NULL) {
        cb_allocator a = s->allocator;
        cb_free(&a, s, s->alloc_bytes);
    }
}

uint32_t cb_skeleton_joint_count(const cb_skeleton *s)
{
    return (uint32_t)s->joint_count;
}

uint32_t cb_skeleton_group_count(const cb_skeleton *s)
{
    return (uint32_t)s->group_count;
}

uint32_t cb_skeleton_soa_joint_count(const cb_skeleton *s)
{
    return (uint32_t)(s->group_count * cb_simd_width());
}

size_t cb_skeleton_pose_bytes(const cb_skeleton *s)
{
    return s->group_count * cb_simd_group_bytes();
}

const char *cb_skeleton_joint_name(const cb_skeleton *s, uint32_t joint)
{
    return joint < s->joint_count ? s->names[joint] : NULL;
}

const int32_t *cb_skeleton_parents(const cb_skeleton *s)
{
    return s->parents;
}

cb_result cb_skeleton_find_joint(const cb_skeleton *s, const char *name, uint32_t *index)
{
    if (s == NULL || name == NULL || index == NULL) {
        return CB_ERR_NULL_ARGUMENT;
    }
    for (size_t j = 0; j < s->joint_count; ++j) {
        if (strcmp(s->names[j], name) == 0) {
            *index = (uint32_t)j;
            return CB_OK;
        }
    }
    return CB_ERR_NOT_FOUND;
}

cb_xform_group_cspan cb_skeleton_rest_pose(const cb_skeleton *s)
{
    return (cb_xform_group_cspan){s->rest, s->group_count};
}

cb_xform cb_skeleton_rest_xform(const cb_skeleton *s, uint32_t joint)
{
    return joint < s->joint_count ? cb_lane_xform(s->rest, joint) : cb_xform_identity();
}

uint64_t cb_skeleton_signature(const cb_skeleton *s)
{
    return s->signature;
}

bool cb_skeleton_in_subtree(const struct cb_skeleton *s, size_t j, size_t root)
{
    int64_t k = (int64_t)j;
    while (k > (int64_t)root) {
        k = s->parents[k];
    }
    return k == (int64_t)root;
}

cb_result cb_skeleton_build_mask(const cb_skeleton *s, float base_weight, const cb_mask_rule *rules,
                                 uint32_t rule_count, cb_float_span out, cb_error *err)
{
    if (s == NULL || out.ptr == NULL || (rules == NULL && rule_count > 0)) {
        return cb_error_set(err, CB_ERR_NULL_ARGUMENT, "cb_skeleton_build_mask: %s is NULL",
                            s == NULL         ? "skeleton"
                            : out.ptr == NULL ? "out"
                                              : "rules");
    }
    /* One float per joint; the padding lanes too when out has room for them (the pose jobs
     * read masks a group at a time). */
    size_t n = s->joint_count, soa = cb_skeleton_soa_joint_count(s);
    if (out.count < n) {
        return cb_error_set(err, CB_ERR_SPAN_TOO_SHORT,
                            "cb_skeleton_build_mask: out has %zu floats, needs %zu (one per joint)",
                            out.count, n);
    }
    size_t written = out.count < soa ? n : soa;
    if (!(base_weight >= 0.0f && base_weight <= 1.0f)) {
        return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                            "cb_skeleton_build_mask: base_weight %g is not in [0, 1]",
                            (double)base_weight);
    }
    /* Check every rule before writing anything. */
    for (uint32_t r = 0; r < rule_count; ++r) {
        uint32_t j;
        if (rules[r].joint == NULL) {
            return cb_error_set(err, CB_ERR_NULL_ARGUMENT,
                                "cb_skeleton_build_mask: rules[%u].joint is NULL", r);
        }
        if (!(rules[r].weight >= 0.0f && rules[r].weight <= 1.0f)) {
            return cb_error_set(err, CB_ERR_INVALID_ARGUMENT,
                                "cb_skeleton_build_mask: rules[%u].weight %g is not in [0, 1]", r,
                                (double)rules[r].weight);
        }
        if (cb_skeleton_find_joint(s, rules[r].joint, &j) != CB_OK) {
            return cb_error_set(err, CB_ERR_NOT_FOUND,
                                "cb_skeleton_build_mask: rules[%u].joint \"%s\" is not a joint", r,
                                rules[r].joint);
        }
    }
    for (size_t j = 0; j < written; ++j) {
        out.ptr[j] = j < n ? base_weight : 0.0f;
    }
    for (uint32_t r = 0; r < rule_count; ++r) {
        uint32_t root = 0;
        cb_skeleton_find_joint(s, rules[r].joint, &root);
        if (rules[r].joint_only) {
            out.ptr[root] = rules[r].weight;
            continue;
        }
        for (size_t j = root; j < s->joint_count; ++j) {
            if (cb_skeleton_in_subtree(s, j, root)) {
                out.ptr[j] = rules[r].weight;
            }
        }
    }
    return CB_OK;
}
