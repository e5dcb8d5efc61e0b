/**
 * @file crowdblend/jobs.h
 * @brief A fixed pool of threads: parallel-for over index ranges, jobs with counters and
 *        dependencies. The crowd runs its frames on it; hosts may use it for their own work.
 *
 * Model:
 *  - A pool owns thread_count - 1 worker threads; the thread that calls cb_jobs_parallel_for()
 *    or cb_jobs_wait() takes part as well, so thread_count = 1 runs everything on the caller.
 *  - cb_jobs_parallel_for() splits [0, count) into chunks of `grain` indices and returns when
 *    every chunk has run. The chunk boundaries depend only on count and grain, never on timing,
 *    so work whose result depends only on the chunk is deterministic; which thread runs which
 *    chunk is not.
 *  - Jobs (cb_job) are caller-owned records submitted to the pool; each completion decrements
 *    a counter. cb_jobs_wait() helps run queued jobs until a counter reaches zero, and
 *    cb_jobs_submit_after() holds jobs back until a counter reaches zero (dependencies).
 *
 * Per-frame cost: parallel-for, submit and wait allocate nothing, take no lock while work runs
 * and make no system call except to wake workers that went to sleep (after spinning idle for
 * desc.spin_count rounds), and a yield when a wait lasts very long.
 *
 * Threads: one pool may be driven from any number of threads and from inside its own jobs
 * (nested parallel-for works: the waiting thread runs other jobs meanwhile). Threads outside
 * the pool all see thread_index 0, so per-thread scratch indexed by thread_index must be used
 * from one outside thread at a time.
 */
#ifndef CROWDBLEND_JOBS_H
#define CROWDBLEND_JOBS_H

#include "crowdblend/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A thread pool (opaque). */
typedef struct cb_jobs cb_jobs;

/**
 * Work over the index range [begin, end). thread_index is in [0, thread_count): 0 for the
 * calling thread (and any thread outside the pool), 1.. for the pool's workers. It lets a job
 * use per-thread scratch without locks.
 */
typedef void (*cb_jobs_range_fn)(void *user, size_t begin, size_t end, uint32_t thread_index);

/** Pool settings; zero means default for every field. */
typedef struct cb_jobs_desc {
    uint32_t _start_canary;
    /** Threads taking part, the caller included. Default: online CPUs. Range 1..1024. */
    uint32_t thread_count;
    /** Jobs that can wait in the queue at once; rounded up to a power of two. Default 4096.
     *  Range 2..2^24. A submit that finds the queue full runs the job on the submitting thread
     *  instead (never an error). */
    uint32_t queue_capacity;
    /** Idle rounds a worker spins (a CPU pause each) before it sleeps. Default 20000 (about a
     *  millisecond on current x86), so workers stay awake across the stages of one frame. */
    uint32_t spin_count;
    /** Allocation hooks for create (nothing allocates afterwards). Default: C library. */
    cb_allocator allocator;
    uint32_t _end_canary;
} cb_jobs_desc;

/** desc with every zero field replaced by its default (desc may be NULL). */
CB_API cb_jobs_desc cb_jobs_query_desc(const cb_jobs_desc *desc);

/**
 * Starts a pool.
 * @param desc  settings, or NULL for all defaults
 * @param out   receives the pool; left untouched on failure
 * @param err   optional details
 * @return CB_ERR_NULL_ARGUMENT, CB_ERR_CANARY, CB_ERR_ALLOCATOR, CB_ERR_INVALID_ARGUMENT (a
 *         field out of range), CB_ERR_OUT_OF_MEMORY, CB_ERR_THREAD (a thread could not start;
 *         the ones that did are stopped again).
 */
CB_API cb_result cb_jobs_create(const cb_jobs_desc *desc, cb_jobs **out, cb_error *err);

/**
 * Stops the pool: jobs still queued are run first, then the workers exit and are joined.
 * Counters must no longer be waited on. NULL does nothing.
 */
CB_API void cb_jobs_destroy(cb_jobs *jobs);

/** Threads taking part, the caller included (>= 1). */
CB_API uint32_t cb_jobs_thread_count(const cb_jobs *jobs);

/**
 * Runs fn over [0, count) in chunks of grain indices on the pool and the calling thread;
 * returns when all chunks are done. count == 0 returns at once.
 * @param grain  indices per chunk; 0 means 1
 * @return CB_ERR_NULL_ARGUMENT (jobs or fn NULL), CB_ERR_INVALID_ARGUMENT (count too large to
 *         index: count > SIZE_MAX / 2); nothing ran then.
 */
CB_API cb_result cb_jobs_parallel_for(cb_jobs *jobs, size_t count, size_t grain,
                                      cb_jobs_range_fn fn, void *user);

/**
 * A job: fn(user, begin, end, thread_index) runs once on some thread. Caller-owned; it must
 * stay alive and unchanged from submit until its signal counter says it finished. The _pool
 * fields are the pool's while the job is pending; zero them when filling a new record.
 */
typedef struct cb_job {
    cb_jobs_range_fn fn;
    void *user;
    size_t begin, end;
    void *_pool[2];
} cb_job;

/** Counts unfinished jobs; jobs can wait on it. Created once, reused every frame. */
typedef struct cb_jobs_counter cb_jobs_counter;

/**
 * Creates a counter at zero, allocated through the pool's allocator.
 * @return CB_ERR_NULL_ARGUMENT, CB_ERR_OUT_OF_MEMORY
 */
CB_API cb_result cb_jobs_counter_create(cb_jobs *jobs, cb_jobs_counter **out);

/** Frees a counter that no job and no waiter uses any more. NULL does nothing. */
CB_API void cb_jobs_counter_destroy(cb_jobs *jobs, cb_jobs_counter *counter);

/** True when every job signalling this counter has finished. */
CB_API bool cb_jobs_counter_done(const cb_jobs_counter *counter);

/**
 * Queues n jobs; each decrements signal (which may be NULL) when it finishes.
 * @return CB_ERR_NULL_ARGUMENT (jobs NULL, or job_array NULL with n > 0, or a job without
 *         fn); nothing is queued then.
 */
CB_API cb_result cb_jobs_submit(cb_jobs *jobs, cb_job *job_array, size_t n,
                                cb_jobs_counter *signal);

/**
 * Like cb_jobs_submit, but the jobs are queued only once `after` reaches zero (at once if it
 * already is). Submit everything that `after` counts before calling this, from the same
 * thread or with a happens-before edge: a submit on `after` racing with this call may let the
 * dependents start early.
 * @return CB_ERR_NULL_ARGUMENT as for cb_jobs_submit, or when after is NULL.
 */
CB_API cb_result cb_jobs_submit_after(cb_jobs *jobs, cb_jobs_counter *after, cb_job *job_array,
                                      size_t n, cb_jobs_counter *signal);

/**
 * Returns when counter reaches zero. Meanwhile the calling thread runs queued jobs (any of
 * them, not only those of this counter), so waiting from inside a job cannot deadlock.
 */
CB_API void cb_jobs_wait(cb_jobs *jobs, cb_jobs_counter *counter);

#ifdef __cplusplus
}
#endif

#endif /* CROWDBLEND_JOBS_H */
