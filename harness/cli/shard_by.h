/* SPDX-License-Identifier: MIT */
/* --shard-by durations:FILE (shard_by.c; docs/cli.md#sharding): an
 * earlier run's case durations and the longest-processing-time-first
 * split over them. CLI-private. */
#ifndef SCENETEST_HARNESS_SHARD_BY_H
#define SCENETEST_HARNESS_SHARD_BY_H

#include <stddef.h>
#include <stdint.h>

/* One case's recorded duration ("scene::case", no "@k"). */
typedef struct st__duration {
  char *name; /* owned */
  uint64_t ns;
} st__duration;

/* The durations of a file, sorted by name, one entry per name (the mean
 * of its --repeat iterations). */
typedef struct st__durations {
  st__duration *items;
  size_t n;
} st__durations;

/* "durations:FILE" -> *path (into text). 0, or 2 with the usage error. */
int st__shard_by_parse(const char *text /* IN */,
                       const char **path /* OUT, borrowed */);
/* Reads FILE (a JSON report or --events file of scenetest). 0; 2 with a
 * "FILE:LINE:COL: error: ..." line for a file that is not one, or a
 * usage error for an unreadable file or one without cases; 3 (out of
 * memory). */
int st__durations_read(const char *path /* IN */,
                       st__durations *d /* OUT, owned */);
void st__durations_free(st__durations *d /* IN/OUT */);
/* Assigns ids[0..n) ("scene::case") to shards 0..total-1, longest
 * processing time first (shard_by.c's header): shard_of[i] is ids[i]'s
 * shard. 0, or -1 out of memory. The result depends only on d, the set
 * of ids and total, never on the order of ids. */
int st__shard_by_assign(const st__durations *d /* IN */,
                        const char *const *ids /* IN */, size_t n,
                        unsigned total, unsigned *shard_of /* OUT */);

#endif
