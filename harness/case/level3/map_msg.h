/* SPDX-License-Identifier: MIT */
/* Level 3's MAP message (wire/msg.h's ST__MSG_L3_MAP), encoded by the
 * pool (case/level3/workers.c) and decoded by each worker
 * (case/level3/worker_loop.c), one pair here: the op and its platform,
 * the segments sent with it as descriptors (id and size each, in the
 * order of the descriptors), the tensors (each naming the segment that
 * holds it, 0 for none), the scalars, the shard count and the case's env.
 * One datagram of at most ST__MSG_L3_MAX bytes. Thread-safety: one thread
 * per message. */
#ifndef SCENETEST_HARNESS_MAP_MSG_H
#define SCENETEST_HARNESS_MAP_MSG_H

#include <stddef.h>
#include <stdint.h>

#include <scenetest/op.h>

#include "case/level3/workers.h"
#include "wire/frame.h"

typedef struct st__l3_seg {
  uint64_t id;
  size_t size;
} st__l3_seg;

/* A decoded MAP. Owned: op, backend, segs, tensors and their names,
 * tensor_seg, scalars and their names, env (its strings point into the
 * message, valid as long as it). */
typedef struct st__l3_map {
  char *op, *backend;
  uint32_t max_threads; /* per worker (0: the worker's cores) */
  int reduce;
  uint64_t n_blocks;
  uint64_t scratch_id; /* the segment of reduce_sum's partials, 0: none */
  st__l3_seg *segs;
  size_t n_segs;
  st_tensor *tensors; /* data NULL: the worker maps tensor_seg[i] */
  uint64_t *tensor_seg;
  size_t n_tensors;
  st_scalar *scalars;
  size_t n_scalars;
  uint32_t shard_count;
  const char **env; /* 2 * n_env strings: name, value */
  size_t n_env;
} st__l3_map;

/* Appends wc's MAP for a pool of n_workers; the segments' descriptors, in
 * the order the message lists them, go to fds[0..*nfds) (room for
 * ST__WORKERS_MAX_SEGMENTS + 1, which the caller has checked). */
void st__l3_map_put(st__wbuf *b /* IN/OUT */, const st__wcase *wc /* IN */,
                    unsigned n_workers, int *fds /* OUT */,
                    size_t *nfds /* OUT */);
/* Decodes p[0..len): 0, or -1 when it is no MAP, is malformed (cut, a
 * count beyond what the bytes hold, a dimension count out of range, bytes
 * left over) or memory ran out; m is then empty. */
int st__l3_map_get(const char *p /* IN */, size_t len, st__l3_map *m /* OUT */);
/* Frees what m owns; m is empty after. */
void st__l3_map_free(st__l3_map *m /* IN/OUT */);

#endif
