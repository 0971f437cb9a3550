/* SPDX-License-Identifier: MIT */
/* The owner-recording mutex of mutex.h. A thread's id is the address of a
 * thread-local byte: unique among live threads, never 0, and cheaper and
 * more portable to store atomically than a pthread_t. */
#include <assert.h>

#include "base/mutex.h"

#ifndef NDEBUG
static _Thread_local char self_anchor;

static uintptr_t self_id(void) { return (uintptr_t)&self_anchor; }
#endif

void st__mutex_init(st__mutex *m) {
  pthread_mutex_init(&m->m, NULL);
#ifndef NDEBUG
  atomic_init(&m->owner, 0);
#endif
}

void st__mutex_destroy(st__mutex *m) {
#ifndef NDEBUG
  assert(atomic_load_explicit(&m->owner, memory_order_relaxed) == 0);
#endif
  pthread_mutex_destroy(&m->m);
}

void st__mutex_lock(st__mutex *m) {
#ifndef NDEBUG
  /* A second lock by the holder would deadlock: say so instead. */
  assert(!st__mutex_held(m));
#endif
  pthread_mutex_lock(&m->m);
#ifndef NDEBUG
  atomic_store_explicit(&m->owner, self_id(), memory_order_relaxed);
#endif
}

void st__mutex_unlock(st__mutex *m) {
#ifndef NDEBUG
  assert(st__mutex_held(m));
  atomic_store_explicit(&m->owner, 0, memory_order_relaxed);
#endif
  pthread_mutex_unlock(&m->m);
}

#ifndef NDEBUG
int st__mutex_held(st__mutex *m) {
  return atomic_load_explicit(&m->owner, memory_order_relaxed) == self_id();
}
#endif
