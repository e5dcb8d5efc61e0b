/* The source scene through assimp: nodes with their static transforms, the distinct skins (bone
 * sets of skinned meshes, with inverse bind matrices), and every animation's channels as key
 * arrays in seconds, all copied to double so nothing of assimp's outlives the load.
 *
 * Import flags: no post-processing (meshes are not needed), empty bones kept (a glTF skin joint
 * without vertices is still a joint), FBX pivots not split into helper nodes (they would become
 * joints in between). */
#include <assimp/cimport.h>
#include <assimp/config.h>
#include <assimp/metadata.h>
#include <assimp/scene.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "import/import_impl.h"

static void copy_name(char *dst, const struct aiString *s)
{
    size_t len = s->length < CB_JOINT_NAME_MAX ? s->length : CB_JOINT_NAME_MAX;
    memcpy(dst, s->data, len);
    dst[len] = '\0';
}

/* assimp's matrices are row-major with the translation in the last column. */
static void mat_from_ai(const struct aiMatrix4x4 *a, double m[16])
{
    const ai_real r[16] = {a->a1, a->a2, a->a3, a->a4, a->b1, a->b2, a->b3, a->b4,
                           a->c1, a->c2, a->c3, a->c4, a->d1, a->d2, a->d3, a->d4};
    for (int row = 0; row < 4; ++row) {
        for (int c = 0; c < 4; ++c) {
            m[c * 4 + row] = r[row * 4 + c];
        }
    }
}

static size_t count_nodes(const struct aiNode *n)
{
    size_t c = 1;
    for (unsigned i = 0; i < n->mNumChildren; ++i) {
        c += count_nodes(n->mChildren[i]);
    }
    return c;
}

/* Depth-first, parents before children. Depth is bounded by the node count, and assimp itself
 * recursed over the same tree while reading it. */
static void add_nodes(const struct aiNode *n, int parent, imp_scene *s)
{
    int self = (int)s->node_count++;
    imp_node *out = &s->nodes[self];
    copy_name(out->name, &n->mName);
    out->parent = parent;
    double m[16];
    mat_from_ai(&n->mTransformation, m);
    out->local = imp_decompose(m);
    for (unsigned i = 0; i < n->mNumChildren; ++i) {
        add_nodes(n->mChildren[i], self, s);
    }
}

static int find_node(const imp_scene *s, const char *name)
{
    for (size_t i = 0; i < s->node_count; ++i) {
        if (strcmp(s->nodes[i].name, name) == 0) {
            return (int)i;
        }
    }
    return -1;
}

/* A skin per distinct bone list (several meshes usually share one). */
static cb_result read_skins(const struct aiScene *sc, imp_scene *s, cb_error *err)
{
    s->skins = calloc(sc->mNumMeshes ? sc->mNumMeshes : 1, sizeof *s->skins);
    if (s->skins == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "import: skins");
    }
    for (unsigned mi = 0; mi < sc->mNumMeshes; ++mi) {
        const struct aiMesh *mesh = sc->mMeshes[mi];
        if (mesh->mNumBones == 0) {
            continue;
        }
        bool seen = false;
        for (size_t k = 0; k < s->skin_count && !seen; ++k) {
            const imp_skin *o = &s->skins[k];
            seen = o->count == mesh->mNumBones;
            for (unsigned b = 0; b < mesh->mNumBones && seen; ++b) {
                char name[CB_JOINT_NAME_MAX + 1];
                copy_name(name, &mesh->mBones[b]->mName);
                seen = strcmp(s->nodes[o->joints[b]].name, name) == 0;
            }
        }
        if (seen) {
            continue;
        }
        imp_skin *sk = &s->skins[s->skin_count];
        sk->joints = malloc(mesh->mNumBones * sizeof *sk->joints);
        sk->inverse_binds = malloc(mesh->mNumBones * 16 * sizeof(double));
        if (sk->joints == NULL || sk->inverse_binds == NULL) {
            free(sk->joints);
            free(sk->inverse_binds);
            return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "import: skin");
        }
        sk->count = mesh->mNumBones;
        s->skin_count++;
        for (unsigned b = 0; b < mesh->mNumBones; ++b) {
            char name[CB_JOINT_NAME_MAX + 1];
            copy_name(name, &mesh->mBones[b]->mName);
            sk->joints[b] = find_node(s, name);
            if (sk->joints[b] < 0) {
                return cb_error_set(err, CB_ERR_PARSE,
                                    "import: bone \"%s\" of mesh %u is not a node of the scene",
                                    name, mi);
            }
            /* A node is one joint: a skin listing it twice has no skeleton (and more joints
             * than the scene has nodes, which the joint lists of rig.c are sized by). */
            for (unsigned e = 0; e < b; ++e) {
                if (sk->joints[e] == sk->joints[b]) {
                    return cb_error_set(err, CB_ERR_DUPLICATE,
                                        "import: mesh %u lists bone \"%s\" twice", mi, name);
                }
            }
            mat_from_ai(&mesh->mBones[b]->mOffsetMatrix, sk->inverse_binds + b * 16);
        }
    }
    return CB_OK;
}

static double key_seconds(double ticks, double tps)
{
    return ticks / tps;
}

/* One path's keys: times in seconds, sorted strictly increasing as the format requires (a file
 * that breaks that is refused rather than guessed at). */
static cb_result copy_keys(const char *anim, const char *node, const char *path, double tps,
                           unsigned count, const void *keys, bool quat, imp_keys *out,
                           cb_error *err)
{
    out->count = count;
    out->width = quat ? 4 : 3;
    out->interp = IMP_LINEAR;
    out->times = malloc((count ? count : 1) * sizeof(double));
    out->values = malloc((count ? count : 1) * (size_t)out->width * sizeof(double));
    if (out->times == NULL || out->values == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "import: keys");
    }
    for (unsigned k = 0; k < count; ++k) {
        double *v = out->values + (size_t)k * out->width;
        if (quat) {
            const struct aiQuatKey *q = (const struct aiQuatKey *)keys + k;
            out->times[k] = key_seconds(q->mTime, tps);
            v[0] = q->mValue.x, v[1] = q->mValue.y, v[2] = q->mValue.z, v[3] = q->mValue.w;
            if (!(v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3] > 1e-12)) {
                return cb_error_set(err, CB_ERR_PARSE,
                                    "import: animation \"%s\", node \"%s\": rotation key %u is "
                                    "zero",
                                    anim, node, k);
            }
            imp_qnormalize(v);
        } else {
            const struct aiVectorKey *vk = (const struct aiVectorKey *)keys + k;
            out->times[k] = key_seconds(vk->mTime, tps);
            v[0] = vk->mValue.x, v[1] = vk->mValue.y, v[2] = vk->mValue.z;
        }
        for (int c = 0; c < out->width; ++c) {
            if (!isfinite(v[c])) {
                return cb_error_set(err, CB_ERR_PARSE,
                                    "import: animation \"%s\", node \"%s\": %s key %u is not "
                                    "finite",
                                    anim, node, path, k);
            }
        }
        if (!isfinite(out->times[k]) || out->times[k] < 0.0 ||
            (k > 0 && !(out->times[k] > out->times[k - 1]))) {
            return cb_error_set(err, CB_ERR_PARSE,
                                "import: animation \"%s\", node \"%s\": %s key times must be "
                                "finite, >= 0 and increasing (key %u at %g s)",
                                anim, node, path, k, out->times[k]);
        }
    }
    return CB_OK;
}

static cb_result read_anim(const struct aiAnimation *a, unsigned index, imp_scene *s, imp_anim *out,
                           cb_error *err)
{
    if (a->mName.length > 0) {
        copy_name(out->name, &a->mName);
    } else {
        snprintf(out->name, sizeof out->name, "clip%u", index);
    }
    double tps = a->mTicksPerSecond > 0.0 ? a->mTicksPerSecond : 25.0;
    out->channels = calloc(a->mNumChannels ? a->mNumChannels : 1, sizeof *out->channels);
    if (out->channels == NULL) {
        return cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "import: channels");
    }
    double end = 0.0;
    for (unsigned c = 0; c < a->mNumChannels; ++c) {
        const struct aiNodeAnim *na = a->mChannels[c];
        imp_channel *ch = &out->channels[out->channel_count++];
        char node[CB_JOINT_NAME_MAX + 1];
        copy_name(node, &na->mNodeName);
        ch->node = find_node(s, node);
        if (ch->node < 0) {
            return cb_error_set(err, CB_ERR_PARSE,
                                "import: animation \"%s\" moves \"%s\", which is not a node",
                                out->name, node);
        }
        cb_result r = copy_keys(out->name, node, "translation", tps, na->mNumPositionKeys,
                                na->mPositionKeys, false, &ch->path[0], err);
        if (r == CB_OK) {
            r = copy_keys(out->name, node, "rotation", tps, na->mNumRotationKeys, na->mRotationKeys,
                          true, &ch->path[1], err);
        }
        if (r == CB_OK) {
            r = copy_keys(out->name, node, "scale", tps, na->mNumScalingKeys, na->mScalingKeys,
                          false, &ch->path[2], err);
        }
        if (r != CB_OK) {
            return r;
        }
        for (int p = 0; p < 3; ++p) {
            out->key_total += ch->path[p].count;
            if (ch->path[p].count > 0) {
                double last = ch->path[p].times[ch->path[p].count - 1];
                end = last > end ? last : end;
            }
        }
    }
    /* The duration assimp reports, unless a key lies beyond it. */
    double d = a->mDuration / tps;
    out->duration_s = isfinite(d) && d > end ? d : end;
    return CB_OK;
}

/* FBX headers: the unit (UnitScaleFactor, centimetres per unit) and the up axis. */
static void read_fbx_meta(const struct aiScene *sc, imp_scene *s)
{
    s->fbx_up_axis = -1;
    const struct aiMetadata *md = sc->mMetaData;
    for (unsigned i = 0; md != NULL && i < md->mNumProperties; ++i) {
        const char *key = md->mKeys[i].data;
        const struct aiMetadataEntry *e = &md->mValues[i];
        double v = 0.0;
        if (e->mType == AI_DOUBLE) {
            v = *(const double *)e->mData;
        } else if (e->mType == AI_FLOAT) {
            v = *(const float *)e->mData;
        } else if (e->mType == AI_INT32) {
            v = *(const int32_t *)e->mData;
        } else {
            continue;
        }
        if (strcmp(key, "UnitScaleFactor") == 0 && v > 0.0 && isfinite(v)) {
            s->fbx_unit_scale = v / 100.0;
        } else if (strcmp(key, "UpAxis") == 0 && v >= 0.0 && v <= 2.0) {
            s->fbx_up_axis = (int)v;
        }
    }
}

static bool has_suffix(const char *path, const char *suffix)
{
    size_t a = strlen(path), b = strlen(suffix);
    return a >= b && strcasecmp(path + a - b, suffix) == 0;
}

static bool is_gltf(const char *path)
{
    return has_suffix(path, ".gltf") || has_suffix(path, ".glb");
}

/* The file through assimp, with the import flags above; NULL when assimp cannot read it
 * (aiGetErrorString says why). */
static const struct aiScene *import_file(const char *path)
{
    struct aiPropertyStore *props = aiCreatePropertyStore();
    aiSetImportPropertyInteger(props, AI_CONFIG_IMPORT_REMOVE_EMPTY_BONES, 0);
    aiSetImportPropertyInteger(props, AI_CONFIG_IMPORT_FBX_PRESERVE_PIVOTS, 0);
    const struct aiScene *sc = aiImportFileExWithProperties(path, 0, NULL, props);
    aiReleasePropertyStore(props);
    return sc;
}

/* Nodes, skins, animations and FBX headers from assimp's scene into s. On failure what was
 * copied stays in s, for imp_scene_free. */
static cb_result copy_scene(const struct aiScene *sc, const char *path, imp_scene *s, cb_error *err)
{
    cb_result r = CB_OK;
    if (sc->mRootNode == NULL) {
        r = cb_error_set(err, CB_ERR_UNSUPPORTED, "import: %s: the file has no nodes", path);
    }
    if (r == CB_OK) {
        size_t n = count_nodes(sc->mRootNode);
        s->nodes = calloc(n, sizeof *s->nodes);
        s->anims = calloc(sc->mNumAnimations ? sc->mNumAnimations : 1, sizeof *s->anims);
        if (s->nodes == NULL || s->anims == NULL) {
            r = cb_error_set(err, CB_ERR_OUT_OF_MEMORY, "import: %zu nodes", n);
        }
    }
    /* A BVH file has no mesh: assimp makes a stand-in one whose bones are the joints minus the
     * root and plus the end sites. It is not a skin, so the hierarchy decides. */
    bool bvh = has_suffix(path, ".bvh");
    if (r == CB_OK) {
        add_nodes(sc->mRootNode, -1, s);
        r = bvh ? CB_OK : read_skins(sc, s, err);
    }
    for (unsigned i = 0; i < sc->mNumAnimations && r == CB_OK; ++i) {
        r = read_anim(sc->mAnimations[i], i, s, &s->anims[s->anim_count++], err);
    }
    s->fbx = has_suffix(path, ".fbx");
    if (s->fbx) {
        read_fbx_meta(sc, s);
    }
    return r;
}

/* glTF: an animation lasts until its last key (the file's times, now exact). */
static void durations_to_last_key(imp_scene *s)
{
    for (size_t a = 0; a < s->anim_count; ++a) {
        double end = 0.0;
        for (size_t c = 0; c < s->anims[a].channel_count; ++c) {
            for (int p = 0; p < 3; ++p) {
                const imp_keys *k = &s->anims[a].channels[c].path[p];
                end = k->count > 0 ? fmax(end, k->times[k->count - 1]) : end;
            }
        }
        s->anims[a].duration_s = end;
    }
}

cb_result imp_scene_load(const char *path, imp_scene *s, cb_error *err)
{
    memset(s, 0, sizeof *s);
    if (is_gltf(path)) {
        cb_result pre = imp_gltf_precheck(path, err);
        if (pre != CB_OK) {
            return pre;
        }
    }
    const struct aiScene *sc = import_file(path);
    if (sc == NULL) {
        return cb_error_set(err, CB_ERR_IO, "import: %s: assimp: %s", path, aiGetErrorString());
    }
    cb_result r = copy_scene(sc, path, s, err);
    aiReleaseImport(sc);
    if (r == CB_OK && is_gltf(path)) {
        r = imp_gltf_patch_interpolation(path, s, err);
        if (r == CB_OK) {
            durations_to_last_key(s);
        }
    }
    if (r != CB_OK) {
        imp_scene_free(s);
    }
    return r;
}

static void free_keys(imp_keys *k)
{
    free(k->times);
    free(k->values);
    free(k->in);
    free(k->out);
}

void imp_scene_free(imp_scene *s)
{
    for (size_t a = 0; a < s->anim_count; ++a) {
        for (size_t c = 0; c < s->anims[a].channel_count; ++c) {
            for (int p = 0; p < 3; ++p) {
                free_keys(&s->anims[a].channels[c].path[p]);
            }
        }
        free(s->anims[a].channels);
    }
    for (size_t k = 0; k < s->skin_count; ++k) {
        free(s->skins[k].joints);
        free(s->skins[k].inverse_binds);
    }
    free(s->anims);
    free(s->skins);
    free(s->nodes);
    memset(s, 0, sizeof *s);
}
