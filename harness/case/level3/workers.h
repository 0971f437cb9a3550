/* SPDX-License-Identifier: MIT */
/* Level-3 worker processes: a pool of N forked workers, each connected to
 * the harness by a SOCK_SEQPACKET socket pair (commands and replies, and
 * segment fds passed with SCM_RIGHTS) and a pipe that captures its stdout
 * and stderr. The harness maps a case onto the workers once (segments,
 * tensor layout, op), then runs rounds: every worker computes its shard.
 * A worker that dies or overruns the deadline breaks the pool: its workers
 * are killed and reaped, and the caller makes a new pool. See
 * docs/level3.md. */
#ifndef SCENETEST_HARNESS_WORKERS_H
#define SCENETEST_HARNESS_WORKERS_H

#include <stddef.h>
#include <stdint.h>

#include <scenetest/registry.h>

#include "case/args.h"
#include "case/level3/rehost.h"

/* The most segments one case may pass to the workers (SCM_RIGHTS carries
 * at most 253 fds per message; one message per case keeps it simple). */
#define ST__WORKERS_MAX_SEGMENTS 250u
/* Between SIGTERM and SIGKILL when a pool is killed. */
#define ST__WORKERS_GRACE_MS 200

typedef struct st__wpool st__wpool;

/* What one case gives the workers. Borrowed for the call. */
typedef struct st__wcase {
  const char *op;
  const char *backend;
  const st__argset *args; /* tensors already rehosted */
  const st__rehost *rh;   /* which segment holds which tensor */
  unsigned max_threads;   /* per worker (0: the worker's cores) */
  /* reduce_sum: workers write one partial per block of x (8 bytes each:
   * a double, or uint64_t bits for integer dtypes) into scratch, and the
   * harness combines them in block order. NULL otherwise. */
  st__seg *scratch;
  size_t n_blocks;
  int reduce;
  /* The case's env (docs/scene-format.md): n_env pairs env[2i] =
   * env[2i+1], set in each worker before it resolves the kernel. */
  const char *const *env;
  size_t n_env;
} st__wcase;

/* The outcome of a map or a round over all workers. status is ST_OK,
 * ST_ESKIP (a worker declined), or an error; message says what happened
 * (the first worker's by index, or which worker died, or the timeout).
 * loaded lists "worker N: PATH" for objects that became loaded in the
 * workers. Free with st__wresult_free. */
typedef struct st__wresult {
  st_status status;
  int broken; /* a worker died or timed out: the pool is dead */
  int timed_out;
  int is_lookup; /* the message is a registry lookup's, unprefixed */
  char message[1536];
  char **loaded; /* owned */
  size_t n_loaded;
  /* A round's: the longest device and copy time a worker's platform
   * reported (ST_NS_NONE: none reported). */
  uint64_t device_ns, copy_ns;
} st__wresult;

void st__wresult_free(st__wresult *r /* IN/OUT */);

/* Forks n workers that resolve kernels through reg (their copy of it, as
 * it is at fork). Thread-safety: call from the thread that schedules cases
 * while no thread pool is working (docs/reliability.md#the-process-model). */
st_status st__wpool_start(unsigned n, st_registry *reg /* IN */,
                          st__wpool **out /* OUT */,
                          st_error *err /* OUT */) ST_WUR;
/* Ends the workers (EOF on their sockets; SIGKILL after the grace) and
 * reaps every one. Accepts NULL. */
void st__wpool_stop(st__wpool *p /* IN, owned */);
/* In a forked child: forgets the pool without signalling or waiting (the
 * workers are the parent's children, not ours). Accepts NULL. */
void st__wpool_forget(st__wpool *p /* IN, owned */);
unsigned st__wpool_size(const st__wpool *p /* IN */);
/* 1 once a worker died or was killed: the pool must be replaced. Also
 * checks (without blocking) whether a worker exited since. */
int st__wpool_broken(st__wpool *p /* IN/OUT */);
/* The pid of worker i. */
long st__wpool_pid(const st__wpool *p /* IN */, unsigned i);

/* Gives the case to every worker: segment fds, tensor layout, op.
 * deadline_ns (CLOCK_MONOTONIC; 0 = none) bounds the wait. */
void st__wpool_map(st__wpool *p /* IN/OUT */, const st__wcase *wc /* IN */,
                   uint64_t deadline_ns, double timeout_s,
                   st__wresult *out /* OUT */);
/* Runs one round: worker i computes shard i of n. Waits for every worker
 * (or a death, or the deadline). */
void st__wpool_run(st__wpool *p /* IN/OUT */, unsigned round,
                   uint64_t deadline_ns, double timeout_s,
                   st__wresult *out /* OUT */);
/* Ends the case on the workers: each runs its platform's release hook (if
 * its prepare succeeded). */
void st__wpool_release(st__wpool *p /* IN/OUT */, uint64_t deadline_ns,
                       double timeout_s, st__wresult *out /* OUT */);
/* Takes what the workers printed since the last call (drained without
 * blocking), one "--- worker I (pid P) ---" block per worker that printed.
 * *text is malloc'd (caller frees) or NULL when nothing was printed. */
void st__wpool_take_output(st__wpool *p /* IN/OUT */, char **text /* OUT */,
                           size_t *len /* OUT */);

#endif
