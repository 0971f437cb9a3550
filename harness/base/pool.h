/* SPDX-License-Identifier: MIT */
/* A lazily created pthread pool for parallel loops. One pool per process:
 * a forked child starts with none and makes its own. */
#ifndef SCENETEST_HARNESS_POOL_H
#define SCENETEST_HARNESS_POOL_H

#include <stddef.h>

/* A loop body over [begin, end), called on any of the pool's threads. */
typedef void (*st__range_fn)(void *ctx /* IN/OUT */, size_t begin, size_t end);

/* Calls fn(ctx, b, e) over [0, n) in chunks of at least grain items on at
 * most max_threads threads (the caller's thread included), and returns when
 * all are done. Chunk boundaries depend only on n and grain, never on the
 * thread count. max_threads 0 means the number of cores.
 * Thread-safety: any thread; concurrent calls share the pool. */
void st__parallel_for(size_t n, size_t grain, unsigned max_threads,
                      st__range_fn fn, void *ctx /* IN/OUT: passed to fn */);
/* The pool's worker threads now (0 before its first use): threads the
 * harness itself started, which a count of a process's threads leaves out
 * (run/audit.h). Thread-safety: any thread. */
unsigned st__pool_workers(void);
/* Online cores (at least 1), read once per process. Thread-safety: any
 * thread. */
unsigned st__ncores(void);
/* The reference backend's thread cap when --golden-threads is not given,
 * docs/cli.md#options: max(1, min(8, cores / jobs)), so that -j N cases at a
 * time do not each start a golden pool as wide as the machine (jobs 0 counts as
 * 1). Thread-safety: any thread. */
unsigned st__golden_threads_default(unsigned cores, unsigned jobs);

#endif
