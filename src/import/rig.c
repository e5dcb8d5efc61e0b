/* The skeleton chosen from a scene, and the exact evaluation of the source animation on it:
 * each joint's local transform is the chain of nodes from its parent joint down to it (for roots,
 * from the scene root, with the unit and axis conversion in front), every node taken from its
 * animation channel at the time asked, interpolated as the format says. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/import_impl.h"

/* ---- evaluating keys ------------------------------------------------------------------------ */

/* The last key at or before t (0 when t is before the first). */
static size_t key_before(const imp_keys *k, double t)
{
    size_t lo = 0, hi = k->count - 1;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (k->times[mid] <= t) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* glTF Appendix C: p(u) = (2u^3 - 3u^2 + 1) v0 + (u^3 - 2u^2 + u) dt b0 + (-2u^3 + 3u^2) v1
 * + (u^3 - u^2) dt a1, with b0 the out-tangent of key 0 and a1 the in-tangent of key 1. */
static void hermite(const imp_keys *k, size_t i, double u, double dt, double *out)
{
    const int w = k->width;
    double u2 = u * u, u3 = u2 * u;
    double h00 = 2 * u3 - 3 * u2 + 1, h10 = u3 - 2 * u2 + u, h01 = -2 * u3 + 3 * u2, h11 = u3 - u2;
    for (int c = 0; c < w; ++c) {
        out[c] = h00 * k->values[i * w + c] + h10 * dt * k->out[i * w + c] +
                 h01 * k->values[(i + 1) * w + c] + h11 * dt * k->in[(i + 1) * w + c];
    }
    if (w == 4) {
        imp_qnormalize(out);
    }
}

static void eval_keys(const imp_keys *k, double t, double *out)
{
    const int w = k->width;
    if (k->count == 1 || t <= k->times[0] || t >= k->times[k->count - 1]) {
        size_t i = k->count == 1 || t <= k->times[0] ? 0 : k->count - 1;
        memcpy(out, k->values + i * (size_t)w, (size_t)w * sizeof(double));
        if (w == 4) {
            imp_qnormalize(out);
        }
        return;
    }
    size_t i = key_before(k, t);
    double dt = k->times[i + 1] - k->times[i], u = (t - k->times[i]) / dt;
    const double *a = k->values + i * (size_t)w, *b = a + w;
    if (k->interp == IMP_STEP) {
        /* A time within a microsecond of the next key is that key: grid times computed as
         * f * duration / N, and key times that went through float milliseconds in assimp,
         * land a rounding error either side of each other. */
        memcpy(out, t >= k->times[i + 1] - 1e-6 ? b : a, (size_t)w * sizeof(double));
    } else if (k->interp == IMP_CUBIC) {
        hermite(k, i, u, dt, out);
    } else if (w == 4) {
        imp_qslerp(a, b, u, out);
    } else {
        for (int c = 0; c < w; ++c) {
            out[c] = a[c] + (b[c] - a[c]) * u;
        }
    }
}

static const imp_channel *channel_of(const imp_anim *anim, int node)
{
    for (size_t c = 0; anim != NULL && c < anim->channel_count; ++c) {
        if (anim->channels[c].node == node) {
            return &anim->channels[c];
        }
    }
    return NULL;
}

/* A node's transform at t, translations in metres (scaled). */
static dxf node_local(const imp_scene *s, const imp_rig *rig, const imp_anim *anim, int node,
                      double t)
{
    dxf x = s->nodes[node].local;
    const imp_channel *ch = channel_of(anim, node);
    if (ch != NULL) {
        if (ch->path[0].count > 0) {
            eval_keys(&ch->path[0], t, x.t);
        }
        if (ch->path[1].count > 0) {
            eval_keys(&ch->path[1], t, x.q);
        }
        if (ch->path[2].count > 0) {
            eval_keys(&ch->path[2], t, x.s);
        }
    }
    for (int k = 0; k < 3; ++k) {
        x.t[k] *= rig->scale;
    }
    return x;
}

dxf imp_joint_local(const imp_scene *s, const imp_rig *rig, const imp_anim *anim, size_t j,
                    double t)
{
    int stop = rig->parents[j] >= 0 ? rig->node_of[rig->parents[j]] : -1;
    /* The chain, bottom up, then composed top down. Its length is bounded by the node count. */
    int chain[256];
    size_t len = 0;
    dxf x = imp_identity();
    for (int n = rig->node_of[j]; n != stop && n >= 0; n = s->nodes[n].parent) {
        if (len == sizeof chain / sizeof chain[0]) {
            /* Deeper than any real rig: fold the part collected so far and go on. */
            dxf part = imp_identity();
            for (size_t i = len; i-- > 0;) {
                dxf l = node_local(s, rig, anim, chain[i], t);
                part = imp_compose(&part, &l);
            }
            x = imp_compose(&part, &x);
            len = 0;
        }
        chain[len++] = n;
    }
    dxf part = imp_identity();
    for (size_t i = len; i-- > 0;) {
        dxf l = node_local(s, rig, anim, chain[i], t);
        part = imp_compose(&part, &l);
    }
    x = imp_compose(&part, &x);
    if (rig->parents[j] < 0) {
        dxf conv = imp_identity();
        memcpy(conv.q, rig->conv_q, sizeof conv.q);
        x = imp_compose(&conv, &x);
    }
    return x;
}

void imp_model_pose(const imp_scene *s, const imp_rig *rig, const imp_anim *anim, double t,
                    dxf *model)
{
    for (size_t j = 0; j < rig->joint_count; ++j) {
        dxf local = imp_joint_local(s, rig, anim, j, t);
        model[j] = rig->parents[j] < 0 ? local : imp_compose(&model[rig->parents[j]], &local);
    }
}

/* ---- which nodes matter ---------------------------------------------------------------------- */

/* Marks the nodes whose transform enters some joint's local transform. */
static bool *relevant_nodes(const imp_scene *s, const imp_rig *rig)
{
    bool *rel = calloc(s->node_count ? s->node_count : 1, sizeof *rel);
    if (rel == NULL) {
        return NULL;
    }
    for (size_t j = 0; j < rig->joint_count; ++j) {
        int stop = rig->parents[j] >= 0 ? rig->node_of[rig->parents[j]] : -1;
        for (int n = rig->node_of[j]; n != stop && n >= 0; n = s->nodes[n].parent) {
            rel[n] = true;
        }
    }
    return rel;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Key times of the relevant channels; only STEP paths (without their first key) when
 * `steps`. Sorted, unique, clamped to the duration; the ends are added unless `steps`. */
static size_t gather_times(const imp_scene *s, const imp_rig *rig, const imp_anim *anim, bool steps,
                           double **times);

size_t imp_key_times(const imp_scene *s, const imp_rig *rig, const imp_anim *anim, double **times)
{
    return gather_times(s, rig, anim, false, times);
}

size_t imp_step_times(const imp_scene *s, const imp_rig *rig, const imp_anim *anim, double **times)
{
    return gather_times(s, rig, anim, true, times);
}

static size_t gather_times(const imp_scene *s, const imp_rig *rig, const imp_anim *anim, bool steps,
                           double **times)
{
    *times = NULL;
    bool *rel = relevant_nodes(s, rig);
    size_t total = 0;
    for (size_t c = 0; c < anim->channel_count; ++c) {
        for (int p = 0; p < 3; ++p) {
            total += anim->channels[c].path[p].count;
        }
    }
    double *t = malloc((total + 2) * sizeof *t);
    if (rel == NULL || t == NULL) {
        free(rel);
        free(t);
        return 0;
    }
    size_t n = 0;
    if (!steps) {
        t[n++] = 0.0;
        t[n++] = anim->duration_s;
    }
    for (size_t c = 0; c < anim->channel_count; ++c) {
        const imp_channel *ch = &anim->channels[c];
        if (!rel[ch->node]) {
            continue;
        }
        for (int p = 0; p < 3; ++p) {
            if (steps && ch->path[p].interp != IMP_STEP) {
                continue;
            }
            for (size_t k = steps ? 1 : 0; k < ch->path[p].count; ++k) {
                double x = ch->path[p].times[k];
                t[n++] = x < 0.0 ? 0.0 : x > anim->duration_s ? anim->duration_s : x;
            }
        }
    }
    qsort(t, n, sizeof *t, cmp_double);
    /* Unique, to a nanosecond: assimp's glTF times went through float milliseconds. */
    size_t u = 0;
    for (size_t i = 0; i < n; ++i) {
        if (u == 0 || t[i] - t[u - 1] > 1e-9) {
            t[u++] = t[i];
        }
    }
    free(rel);
    *times = t;
    return u;
}

/* ---- choosing the joints --------------------------------------------------------------------- */

static bool is_ancestor(const imp_scene *s, int a, int n)
{
    for (; n >= 0; n = s->nodes[n].parent) {
        if (n == a) {
            return true;
        }
    }
    return false;
}

/* Nodes some animation moves. */
static bool *animated_nodes(const imp_scene *s)
{
    bool *moved = calloc(s->node_count ? s->node_count : 1, sizeof *moved);
    for (size_t a = 0; moved != NULL && a < s->anim_count; ++a) {
        for (size_t c = 0; c < s->anims[a].channel_count; ++c) {
            moved[s->anims[a].channels[c].node] = true;
        }
    }
    return moved;
}

/* The lowest node above (or at) every animated node; -1 when nothing is animated. */
static int animated_ancestor(const imp_scene *s, const bool *moved)
{
    int lca = -1;
    for (size_t n = 0; n < s->node_count; ++n) {
        if (!moved[n]) {
            continue;
        }
        if (lca < 0) {
            lca = (int)n;
        }
        while (!is_ancestor(s, lca, (int)n)) {
            lca = s->nodes[lca].parent;
        }
    }
    return lca;
}

/* The subtree of `root` without branches no animation moves (all of it when nothing moves). */
static size_t subtree_joints(const imp_scene *s, int root, const bool *moved, int *out)
{
    bool any = false;
    for (size_t n = 0; n < s->node_count; ++n) {
        any = any || (moved[n] && is_ancestor(s, root, (int)n));
    }
    size_t count = 0;
    for (size_t n = 0; n < s->node_count; ++n) {
        if (!is_ancestor(s, root, (int)n)) {
            continue;
        }
        bool keep = !any || (int)n == root;
        for (size_t d = n; !keep && d < s->node_count; ++d) {
            keep = moved[d] && is_ancestor(s, (int)n, (int)d);
        }
        if (keep) {
            out[count++] = (int)n;
        }
    }
    return count;
}

/* Parents first: node indices are a preorder, so ordering joints by node index is enough when
 * the given order (a skin's) is not already parents first. */
static void order_parents_first(const imp_scene *s, imp_rig *rig, double *ibm)
{
    size_t n = rig->joint_count;
    for (size_t i = 1; i < n; ++i) {
        for (size_t k = i; k > 0 && rig->node_of[k - 1] > rig->node_of[k]; --k) {
            int t = rig->node_of[k];
            rig->node_of[k] = rig->node_of[k - 1];
            rig->node_of[k - 1] = t;
            /* Element by element rather than three memcpy calls of 16 doubles: with
             * -fsanitize=undefined at -O3, GCC 12 checks memcpy's arguments against NULL
             * (nonnull-attribute) and -Warray-bounds then reported the copy on that NULL path
             * as outside a [0, 0] object. No access was out of bounds: k < n and ibm holds
             * n * 16 doubles (tests/test_import.py, reordered). */
            for (size_t e = 0; ibm != NULL && e < 16; ++e) {
                double m = ibm[k * 16 + e];
                ibm[k * 16 + e] = ibm[(k - 1) * 16 + e];
                ibm[(k - 1) * 16 + e] = m;
            }
        }
    }
    (void)s;
}

static void link_parents(const imp_scene *s, imp_rig *rig)
{
    for (size_t j = 0; j < rig->joint_count; ++j) {
        rig->parents[j] = -1;
        for (int n = s->nodes[rig->node_of[j]].parent; n >= 0 && rig->parents[j] < 0;
             n = s->nodes[n].parent) {
            for (size_t k = 0; k < rig->joint_count; ++k) {
                if (rig->node_of[k] == n) {
                    rig->parents[j] = (int32_t)k;
                    break;
                }
            }
        }
    }
}

static bool parents_first(const imp_rig *rig)
{
    for (size_t j = 0; j < rig->joint_count; ++j) {
        if (rig->parents[j] >= (int32_t)j) {
            return false;
        }
    }
    return true;
}

/* IBM' = S IBM C^-1 with C = s R (the conversion) and S = s I: skinning with the converted model
 * matrices (C M S^-1) then maps converted bind-space vertices exactly as before. */
/* Inverse bind matrices are affine: a bottom row within 1e-5 of 0 0 0 1 is made exact (float
 * files carry residues), anything else is refused. */
static cb_result check_inverse_binds(const imp_scene *s, const imp_rig *rig, cb_error *err)
{
    for (size_t j = 0; j < rig->joint_count; ++j) {
        double *m = rig->inverse_binds + j * 16;
        bool finite = true;
        for (int k = 0; k < 16; ++k) {
            finite = finite && isfinite(m[k]);
        }
        if (!finite || fabs(m[3]) > 1e-5 || fabs(m[7]) > 1e-5 || fabs(m[11]) > 1e-5 ||
            fabs(m[15] - 1.0) > 1e-5) {
            return cb_error_set(err, CB_ERR_PARSE,
                                "import: the inverse bind matrix of joint \"%s\" is not affine",
                                s->nodes[rig->node_of[j]].name);
        }
        m[3] = m[7] = m[11] = 0.0;
        m[15] = 1.0;
    }
    return CB_OK;
}

static void convert_inverse_binds(imp_rig *rig)
{
    dxf c = imp_identity();
    memcpy(c.q, rig->conv_q, sizeof c.q);
    for (int k = 0; k < 3; ++k) {
        c.s[k] = rig->scale;
    }
    double cm[16], cinv[16];
    imp_xf_to_mat(&c, cm);
    imp_mat_inverse_affine(cm, cinv);
    for (size_t j = 0; j < rig->joint_count; ++j) {
        double *m = rig->inverse_binds + j * 16, tmp[16];
        imp_mat_mul(m, cinv, tmp);
        for (int col = 0; col < 4; ++col) {
            for (int row = 0; row < 3; ++row) {
                tmp[col * 4 + row] *= rig->scale;
            }
        }
        memcpy(m, tmp, sizeof tmp);
    }
}

/* The joints the desc names, in joints[0..*count): the hierarchy under --root, a skin's joints
 * (with its inverse binds, *ibm), or the animated hierarchy; note says which. */
static cb_result find_joints(const imp_scene *s, const cb_import_desc *d, const bool *moved,
                             int *joints, size_t *count, const double **ibm, char *note,
                             size_t note_size, cb_error *err)
{
    if (d->root != NULL) {
        int root = -1;
        for (size_t n = 0; n < s->node_count && root < 0; ++n) {
            root = strcmp(s->nodes[n].name, d->root) == 0 ? (int)n : -1;
        }
        if (root < 0) {
            return cb_error_set(err, CB_ERR_NOT_FOUND, "import: --root \"%s\" is not a node",
                                d->root);
        }
        *count = subtree_joints(s, root, moved, joints);
        snprintf(note, note_size, "skeleton: the hierarchy under \"%s\" (%zu joints)", d->root,
                 *count);
    } else if (s->skin_count > 0) {
        size_t k = d->skin < 0 ? 0 : (size_t)d->skin;
        if (k >= s->skin_count) {
            return cb_error_set(err, CB_ERR_NOT_FOUND, "import: --skin %d: the file has %zu skin%s",
                                d->skin, s->skin_count, s->skin_count == 1 ? "" : "s");
        }
        *count = s->skins[k].count;
        memcpy(joints, s->skins[k].joints, *count * sizeof *joints);
        *ibm = s->skins[k].inverse_binds;
        snprintf(note, note_size, "skeleton: skin %zu of %zu (%zu joints)", k, s->skin_count,
                 *count);
    } else {
        int root = animated_ancestor(s, moved);
        if (root < 0) {
            return cb_error_set(err, CB_ERR_UNSUPPORTED,
                                "import: the file has no skin and no animation: nothing defines a "
                                "skeleton (name one with --root)");
        }
        *count = subtree_joints(s, root, moved, joints);
        snprintf(note, note_size, "skeleton: the animated hierarchy under \"%s\" (%zu joints)",
                 s->nodes[root].name, *count);
    }
    return CB_OK;
}

/* The rig's joints: the nodes joints[0..count), parents first (reordered where they are not,
 * and the note says so), their parents, names and inverse binds (ibm, or none). */
static cb_result fill_rig(const imp_scene *s, imp_rig *rig, const int *joints, size_t count,
                          const double *ibm, char *note, size_t note_size, cb_error *err)
{
    rig->joint_count = count;
    rig->node_of = malloc(count * sizeof *rig->node_of);
    rig->parents = malloc(count * sizeof *rig->parents);
    rig->names = malloc(count * sizeof *rig->names);
    rig->inverse_binds = ibm != NULL ? malloc(count * 16 * sizeof(double)) : NULL;
    if (rig->node_of == NULL || rig->parents == NULL || rig->names == NULL ||
        (ibm != NULL && rig->inverse_binds == NULL)) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "import: %zu joints", count);
    }
    memcpy(rig->node_of, joints, count * sizeof *joints);
    if (ibm != NULL) {
        memcpy(rig->inverse_binds, ibm, count * 16 * sizeof(double));
    }
    link_parents(s, rig);
    if (!parents_first(rig)) {
        order_parents_first(s, rig, rig->inverse_binds);
        link_parents(s, rig);
        size_t len = strlen(note);
        snprintf(note + len, note_size - len, ", reordered parents first");
    }
    for (size_t j = 0; j < count; ++j) {
        rig->names[j] = s->nodes[rig->node_of[j]].name;
    }
    return CB_OK;
}

static cb_result choose_joints(const imp_scene *s, const cb_import_desc *d, imp_rig *rig,
                               char *note, size_t note_size, cb_error *err)
{
    bool *moved = animated_nodes(s);
    int *joints = malloc((s->node_count ? s->node_count : 1) * sizeof *joints);
    const double *ibm = NULL;
    size_t count = 0;
    cb_result r = CB_OK;
    if (moved == NULL || joints == NULL) {
        r = cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "import: nodes");
    } else {
        r = find_joints(s, d, moved, joints, &count, &ibm, note, note_size, err);
    }
    if (r == CB_OK && (count == 0 || count > CB_SKELETON_MAX_JOINTS)) {
        r = cb_error_set(err, CB_ERR_UNSUPPORTED, "import: %zu joints (1..%d)", count,
                         CB_SKELETON_MAX_JOINTS);
    }
    if (r == CB_OK) {
        r = fill_rig(s, rig, joints, count, ibm, note, note_size, err);
    }
    free(moved);
    free(joints);
    return r;
}

cb_result imp_rig_build(const imp_scene *s, const cb_import_desc *d, imp_rig *rig, char *note,
                        size_t note_size, cb_error *err)
{
    memset(rig, 0, sizeof *rig);
    rig->scale = d->scale > 0.0f ? (double)d->scale
                 : s->fbx        ? (s->fbx_unit_scale > 0.0 ? s->fbx_unit_scale : 0.01)
                                 : 1.0;
    bool z_up = d->up == CB_IMPORT_UP_Z ||
                (d->up == _CB_IMPORT_UP_DEFAULT && s->fbx && s->fbx_up_axis == 2);
    /* Z up: -90 degrees about +X takes +Z to +Y and -Y to +Z. */
    double h = sqrt(0.5);
    double q[4] = {z_up ? -h : 0.0, 0.0, 0.0, z_up ? h : 1.0};
    memcpy(rig->conv_q, q, sizeof q);
    cb_result r = choose_joints(s, d, rig, note, note_size, err);
    if (r != CB_OK) {
        imp_rig_free(rig);
        return r;
    }
    if (rig->inverse_binds != NULL) {
        r = check_inverse_binds(s, rig, err);
        if (r != CB_OK) {
            imp_rig_free(rig);
            return r;
        }
        convert_inverse_binds(rig);
    }
    dxf *model = malloc(rig->joint_count * sizeof *model);
    if (model == NULL) {
        imp_rig_free(rig);
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "import: rest pose");
    }
    imp_model_pose(s, rig, NULL, 0.0, model);
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t j = 0; j < rig->joint_count; ++j) {
        for (int k = 0; k < 3; ++k) {
            lo[k] = fmin(lo[k], model[j].t[k]);
            hi[k] = fmax(hi[k], model[j].t[k]);
        }
    }
    free(model);
    rig->height = hi[1] - lo[1];
    if (!(rig->height > 1e-9)) {
        rig->height = fmax(hi[0] - lo[0], hi[2] - lo[2]);
    }
    return CB_OK;
}

void imp_rig_free(imp_rig *rig)
{
    free(rig->node_of);
    free(rig->parents);
    free((void *)rig->names);
    free(rig->inverse_binds);
    memset(rig, 0, sizeof *rig);
}
