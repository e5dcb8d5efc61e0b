/**
 * @file crowdblend/crowdblend.h
 * @brief crowdblend: blend-space weights, pose sampling and blending for crowds, in C11.
 *
 * Include this one header, link `crowdblend` (pkg-config name `crowdblend`, meson dependency
 * `crowdblend`).
 *
 * THE FRAME, STEP BY STEP
 * =======================
 * A crowd frame runs six stages per batch of characters of one animation graph
 * (docs/architecture.md and docs/graph.md have the picture):
 *   1. parameters and processors: velocity -> direction blends, smoothing, quadrants;
 *   2. weights: each blend space maps N characters' parameters to N x M node weights, SIMD
 *      over characters; state machines step their transitions;
 *   3. time and sync: clip times advance, blended clips share a normalized time or align on
 *      named markers, and the markers crossed during the frame are reported as events
 *      (crowdblend/sync.h);
 *   4. pose: fused sample + blend of the active clips, crossfades, inertialization, layers;
 *   5. post-process: IK on the local pose (crowdblend/ik.h);
 *   6. local-to-model: model-space matrices for skinning.
 * Every stage is also available on its own as a plain job struct (validate, then run), so an
 * engine can drive the stages from its own scheduler.
 *
 * MODULES AND THEIR HEADERS
 * =========================
 *   crowdblend/base.h   results, errors, allocator, the transform type, spans, build info
 *   crowdblend/simd.h   batch quaternion/transform kernels, SoA joint groups, width queries
 *   crowdblend/jobs.h   thread pool: parallel-for, jobs with counters and dependencies
 *   crowdblend/skeleton.h  skeletons (names, hierarchy, rest pose), pose buffers, joint masks
 *   crowdblend/clip.h   clips: keyframe tracks resampled to SoA frames, root motion, additive
 *   crowdblend/pose.h   pose jobs: sample, fused sample + blend with layers, crossfade
 *   crowdblend/ltm.h    local-to-model: model matrices (4x4, 3x4), skinning, model TRS
 *   crowdblend/embedded.h  the embedded humanoid and locomotion set (no files needed)
 *   crowdblend/solver.h blend-space weight solvers (1D, 2D directional/freeform, Delaunay,
 *                       bilinear, direct, IDW, KNN, RBF, natural neighbour), SIMD batches
 *   crowdblend/params.h parameter processors: velocity blend, interp-to smoothing, quadrants
 *   crowdblend/graph.h  animation graphs: parameters, blend trees, layers, state machines,
 *                       sync groups, events, IK; built from C or JSON
 *   crowdblend/crowd.h  a crowd: characters of one or more graphs, parameter columns and
 *                       views, the whole frame on the pool, outputs
 *   crowdblend/ik.h     IK post-process jobs: two-bone IK, aim / look-at IK over a chain
 *   crowdblend/sync.h   marker events crossed in a frame; marker-based sync of clips
 *   crowdblend/pack.h   packs (.cbpack): a validated file of a skeleton, clips, masks and
 *                       graph texts, written by `crowdblend import` (docs/formats.md)
 *   (crowdblend/import.h, not included here: crowdblend-import, the separate offline library
 *    that reads glTF/FBX/BVH/Collada through assimp; link `crowdblend-import` to use it)
 *
 * SIMD WIDTH
 * ==========
 * The library is built for one instruction set (meson option `isa`) and processes W = 4, 8 or
 * 16 lanes at a time. Nothing in the API depends on W at compile time: size buffers with the
 * query functions (cb_simd_width(), cb_simd_group_count(), ...), so a host compiled against
 * one build links against any other.
 *
 * MEMORY
 * ======
 * The library allocates only in create/init/load functions, through the cb_allocator of the
 * desc (alloc_fn + free_fn + user_data; all zero means the C library). Nothing allocates per
 * frame. Outputs are caller-owned spans unless a function says otherwise.
 *
 * ERRORS
 * ======
 * Every fallible function returns a cb_result: CB_OK (0) or an error code; cb_result_str()
 * names it. Create, load and validate functions also fill an optional caller-owned cb_error
 * with a message naming the field, index or line:column at fault. Invalid input never aborts,
 * never reads out of bounds and never half-writes an output: a function that fails writes
 * nothing. The library prints nothing.
 *
 * THREADS
 * =======
 * Functions are reentrant. Calls with disjoint outputs may run concurrently; immutable assets
 * (skeletons, clips, blend spaces) may be shared by any number of threads.
 *
 * RESULTS ARE REPRODUCIBLE
 * ========================
 * The output is bit-identical whatever the thread count and batch size, and whatever the
 * kernel set (portable, SSE4.2, AVX2, AVX-512, NEON: crowdblend/simd.h), CPU vendor or
 * architecture (x86-64, aarch64): no hardware estimate instructions, multiply-adds never fused,
 * no sum whose order depends on the SIMD width, no C-library maths in a frame. A replay or a
 * lockstep game sees the same poses on every machine. (Creating clips, blend spaces and the
 * embedded data set uses double-precision libm, rounded to float once: the same bits on every
 * C library tested, checked by the test command.)
 */
#ifndef CROWDBLEND_CROWDBLEND_H
#define CROWDBLEND_CROWDBLEND_H

#include "crowdblend/base.h"
#include "crowdblend/jobs.h"
#include "crowdblend/simd.h"
#include "crowdblend/skeleton.h"
#include "crowdblend/clip.h"
#include "crowdblend/pose.h"
#include "crowdblend/ltm.h"
#include "crowdblend/embedded.h"
#include "crowdblend/solver.h"
#include "crowdblend/params.h"
#include "crowdblend/graph.h"
#include "crowdblend/crowd.h"
#include "crowdblend/ik.h"
#include "crowdblend/sync.h"
#include "crowdblend/follow.h"
#include "crowdblend/cclip.h"
#include "crowdblend/pack.h"

#endif /* CROWDBLEND_CROWDBLEND_H */
