/* SPDX-License-Identifier: MIT */
/* A pthread mutex that knows its owner in debug builds, so code can
 * assert(st__mutex_held(&m)) where it relies on a lock, as SQLite asserts
 * sqlite3_mutex_held() (src/btree.c). With NDEBUG the wrapper is a plain
 * mutex and st__mutex_held is not defined (use it only inside assert). */
#ifndef SCENETEST_HARNESS_MUTEX_H
#define SCENETEST_HARNESS_MUTEX_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

typedef struct st__mutex {
  pthread_mutex_t m;
#ifndef NDEBUG
  /* The holder's st__mutex_self(), 0 when free. Relaxed atomics: only the
   * holder compares it with its own id, and only it writes it while it holds
   * the lock, so no ordering is needed; atomic so other threads' reads are
   * not data races. */
  atomic_uintptr_t owner;
#endif
} st__mutex;

/* Initialises m (a non-recursive default mutex). Thread-safety: before any
 * other thread can see m. */
void st__mutex_init(st__mutex *m /* OUT */);
/* Destroys m, which no thread holds. Thread-safety: after every other
 * thread is done with m. */
void st__mutex_destroy(st__mutex *m /* IN/OUT */);
/* Thread-safety: any thread; m must not be held by the caller. */
void st__mutex_lock(st__mutex *m /* IN/OUT */);
/* Thread-safety: the holder only. */
void st__mutex_unlock(st__mutex *m /* IN/OUT */);

#ifndef NDEBUG
/* 1 if the calling thread holds m. Thread-safety: any thread (the answer
 * is only meaningful about the caller itself). */
int st__mutex_held(st__mutex *m /* IN */);
#endif

#endif
