/* SPDX-License-Identifier: MIT */
/* A supervised child's captured output, bounded: its fd 1 and 2 are a
 * pipe, drained by a thread of the child into memory it shares with the
 * supervisor, at most ST__CAPTURE_MAX bytes a case; the rest is read,
 * counted and dropped, so a kernel printing in a loop holds no more
 * memory than that (docs/reliability.md#the-report). After each case the
 * child takes what the case printed (draining the pipe itself first, so
 * that nothing the case wrote is left in it); after a child's death the
 * supervisor reads the shared memory and what the pipe still holds.
 * Thread-safety: the lock guards the shared memory within the child; the
 * supervisor reads it only once the child is dead. */
#ifndef SCENETEST_HARNESS_CAPTURE_H
#define SCENETEST_HARNESS_CAPTURE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* The memory a slot shares with its children (st__capture_map). */
typedef struct st__capbuf {
  uint64_t len;     /* bytes kept in data; guarded by: st__capture.lock */
  uint64_t dropped; /* bytes after them, counted; guarded by: same */
  char data[];      /* max bytes */
} st__capbuf;

typedef struct st__capture {
  st__capbuf *buf; /* shared, borrowed */
  size_t max;
  int rd; /* the pipe's read end, nonblocking */
  pthread_mutex_t lock;
  pthread_t thread;
  int started;
} st__capture;

/* A shared mapping for max bytes of output (MAP_SHARED: the children
 * write, the supervisor reads), or NULL; st__capture_unmap frees it. */
st__capbuf *st__capture_map(size_t max);
void st__capture_unmap(st__capbuf *b /* IN, may be NULL */, size_t max);
/* In the child: drains rd into b from now on, on a thread of its own.
 * Returns 0, or an errno. */
int st__capture_start(st__capture *c /* OUT */, st__capbuf *b /* IN */,
                      size_t max, int rd);
/* What was printed since the last take, the pipe drained first: a malloc'd
 * copy (NULL when nothing or out of memory), its length in *n and the
 * bytes dropped after it in *dropped; the buffer starts again empty. */
char *st__capture_take(st__capture *c /* IN/OUT */, size_t *n /* OUT */,
                       uint64_t *dropped /* OUT */);
/* In the supervisor, its child dead: the same from b and what rd still
 * holds (nonblocking). */
char *st__capture_take_dead(st__capbuf *b /* IN/OUT */, size_t max, int rd,
                            size_t *n /* OUT */, uint64_t *dropped /* OUT */);

#endif
