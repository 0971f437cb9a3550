/* SPDX-License-Identifier: MIT */
/* The thread pool: every index visited exactly once, chunk boundaries that
 * do not depend on the thread count, real parallelism, concurrent callers,
 * nested loops, and a forked child that makes its own pool. The fork test
 * is left out of ThreadSanitizer builds (docs/reliability.md#the-process-model:
 * TSan kills children forked from a multi-threaded parent). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/pool.h"

#if defined(__SANITIZE_THREAD__)
#define ST_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ST_TEST_TSAN 1
#endif
#endif

typedef struct visit_ctx {
  atomic_int *counts;
  size_t n;
  size_t grain;
  atomic_int bad_chunk; /* a chunk shorter than grain that is not the last */
} visit_ctx;

static void visit(void *p, size_t b, size_t e) {
  visit_ctx *c = p;
  if (e - b < c->grain && e != c->n)
    atomic_store(&c->bad_chunk, 1);
  for (size_t i = b; i < e; i++)
    atomic_fetch_add(&c->counts[i], 1);
}

/* Runs one loop and returns 1 if every index was visited once. */
static int visit_all(size_t n, size_t grain, unsigned threads) {
  visit_ctx c;
  c.counts = calloc(n ? n : 1, sizeof *c.counts);
  if (c.counts == NULL)
    return 0;
  c.n = n;
  c.grain = grain;
  atomic_init(&c.bad_chunk, 0);
  st__parallel_for(n, grain, threads, visit, &c);
  int ok = !atomic_load(&c.bad_chunk);
  for (size_t i = 0; i < n; i++)
    if (atomic_load(&c.counts[i]) != 1)
      ok = 0;
  free(c.counts);
  return ok;
}

static void parallel_for__visits_each_index_once(void **state) {
  (void)state;
  static const size_t ns[] = {0, 1, 2, 3, 7, 64, 1000, 100003};
  static const size_t grains[] = {0, 1, 3, 64, 5000};
  static const unsigned threads[] = {0, 1, 2, 3, 4, 8};
  for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
    for (size_t b = 0; b < sizeof grains / sizeof grains[0]; b++)
      for (size_t c = 0; c < sizeof threads / sizeof threads[0]; c++)
        if (!visit_all(ns[a], grains[b], threads[c]))
          fail_msg("n=%zu grain=%zu threads=%u", ns[a], grains[b], threads[c]);
}

/* Records the begin of every chunk; the set is the same for any thread
 * count. */
typedef struct chunks_ctx {
  atomic_int *starts; /* starts[b] = 1 when a chunk began at b */
  atomic_size_t ends_sum;
} chunks_ctx;

static void record_chunk(void *p, size_t b, size_t e) {
  chunks_ctx *c = p;
  atomic_fetch_add(&c->starts[b], 1);
  atomic_fetch_add(&c->ends_sum, e);
}

static void parallel_for__chunks_independent_of_threads(void **state) {
  (void)state;
  enum { N = 10007 };
  static const size_t grains[] = {0, 1, 100, 4096};
  for (size_t g = 0; g < sizeof grains / sizeof grains[0]; g++) {
    atomic_int *first = calloc(N, sizeof *first);
    assert_non_null(first);
    size_t first_ends = 0;
    for (unsigned threads = 1; threads <= 5; threads++) {
      chunks_ctx c;
      c.starts = calloc(N, sizeof *c.starts);
      assert_non_null(c.starts);
      atomic_init(&c.ends_sum, 0);
      st__parallel_for(N, grains[g], threads, record_chunk, &c);
      if (threads == 1) {
        memcpy(first, c.starts, N * sizeof *first);
        first_ends = atomic_load(&c.ends_sum);
      } else {
        for (size_t i = 0; i < N; i++)
          if (atomic_load(&c.starts[i]) != atomic_load(&first[i]))
            fail_msg("grain %zu threads %u: chunk start %zu differs", grains[g],
                     threads, i);
        assert_int_equal(atomic_load(&c.ends_sum), first_ends);
      }
      free(c.starts);
    }
    free(first);
  }
}

/* Two chunks that each wait for the other at a barrier: this returns only
 * if two threads really run chunks at the same time (a pool that ran them
 * one after the other would hang, and meson's timeout fails the test). */
static void meet(void *p, size_t b, size_t e) {
  (void)b;
  (void)e;
  pthread_barrier_wait(p);
}

static void parallel_for__runs_chunks_concurrently(void **state) {
  (void)state;
  pthread_barrier_t bar;
  assert_int_equal(pthread_barrier_init(&bar, NULL, 2), 0);
  st__parallel_for(2, 1, 2, meet, &bar);
  pthread_barrier_destroy(&bar);
  assert_int_equal(pthread_barrier_init(&bar, NULL, 4), 0);
  st__parallel_for(4, 1, 4, meet, &bar);
  pthread_barrier_destroy(&bar);
}

/* max_threads caps the threads inside fn at any moment. */
typedef struct cap_ctx {
  atomic_int inside;
  atomic_int peak;
} cap_ctx;

static void count_inside(void *p, size_t b, size_t e) {
  cap_ctx *c = p;
  int now = atomic_fetch_add(&c->inside, 1) + 1;
  int peak = atomic_load(&c->peak);
  while (now > peak && !atomic_compare_exchange_weak(&c->peak, &peak, now))
    ;
  volatile size_t sink = 0;
  for (size_t i = b; i < e; i++)
    for (int k = 0; k < 200; k++)
      sink += i ^ (size_t)k;
  (void)sink;
  atomic_fetch_sub(&c->inside, 1);
}

static void parallel_for__respects_max_threads(void **state) {
  (void)state;
  for (unsigned threads = 1; threads <= 3; threads++) {
    cap_ctx c;
    atomic_init(&c.inside, 0);
    atomic_init(&c.peak, 0);
    st__parallel_for(20000, 10, threads, count_inside, &c);
    assert_true(atomic_load(&c.peak) >= 1);
    assert_true(atomic_load(&c.peak) <= (int)threads);
  }
}

/* Four threads start loops on the shared pool at the same moment. */
typedef struct caller_arg {
  pthread_barrier_t *start;
  size_t n;
  unsigned threads;
  int ok;
} caller_arg;

static void *caller_main(void *p) {
  caller_arg *a = p;
  pthread_barrier_wait(a->start);
  a->ok = 1;
  for (int round = 0; round < 20; round++)
    if (!visit_all(a->n + (size_t)round, 7, a->threads))
      a->ok = 0;
  return NULL;
}

static void parallel_for__concurrent_callers(void **state) {
  (void)state;
  enum { CALLERS = 4 };
  pthread_barrier_t start;
  assert_int_equal(pthread_barrier_init(&start, NULL, CALLERS), 0);
  pthread_t t[CALLERS];
  caller_arg args[CALLERS];
  for (int i = 0; i < CALLERS; i++) {
    args[i].start = &start;
    args[i].n = 5000 + (size_t)i * 777;
    args[i].threads = (unsigned)(i % 3) + 2;
    args[i].ok = 0;
    assert_int_equal(pthread_create(&t[i], NULL, caller_main, &args[i]), 0);
  }
  for (int i = 0; i < CALLERS; i++)
    assert_int_equal(pthread_join(t[i], NULL), 0);
  pthread_barrier_destroy(&start);
  for (int i = 0; i < CALLERS; i++)
    assert_true(args[i].ok);
}

/* A chunk that runs a loop of its own (the reference backend inside a
 * plugin kernel, say) completes instead of deadlocking. */
static void nested(void *p, size_t b, size_t e) {
  atomic_int *ok = p;
  for (size_t i = b; i < e; i++)
    if (!visit_all(300, 10, 3))
      atomic_store(ok, 0);
}

static void parallel_for__nested(void **state) {
  (void)state;
  atomic_int ok;
  atomic_init(&ok, 1);
  st__parallel_for(8, 1, 4, nested, &ok);
  assert_int_equal(atomic_load(&ok), 1);
}

static void ncores__matches_sysconf(void **state) {
  (void)state;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  unsigned want = n < 1 ? 1u : (unsigned)n;
  if (want > 256)
    want = 256;
  assert_int_equal(st__ncores(), want);
}

/* docs/cli.md#options: max(1, min(8, cores / jobs)), jobs 0 read as 1. */
static void golden_threads_default__cores_over_jobs(void **state) {
  (void)state;
  static const unsigned rows[][3] = {
      /* cores, jobs, expected */
      {1, 1, 1},  {2, 1, 2},  {2, 2, 1},   {2, 4, 1},  {16, 1, 8},
      {16, 2, 8}, {16, 3, 5}, {16, 16, 1}, {64, 0, 8}, {7, 0, 7},
      {12, 5, 2}, {9, 8, 1},  {8, 9, 1},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    if (st__golden_threads_default(rows[i][0], rows[i][1]) != rows[i][2])
      fail_msg("cores %u jobs %u: %u, expected %u", rows[i][0], rows[i][1],
               st__golden_threads_default(rows[i][0], rows[i][1]), rows[i][2]);
}

#ifndef ST_TEST_TSAN
/* The parent's pool has workers; the child inherits none of them and must
 * make its own (a child that reused the parent's bookkeeping would wait
 * forever for workers that do not exist). */
static void parallel_for__works_in_forked_child(void **state) {
  (void)state;
  assert_true(visit_all(100000, 16, 4));
  /* The child ends with exit(), which runs the pool's at-exit join (so a
   * leak checker following the child sees its workers joined): nothing may
   * sit in stdio buffers to be written twice. */
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    pthread_barrier_t bar;
    /* A child stuck waiting for the parent's workers dies of SIGALRM, and
     * the parent reports that instead of hanging until meson's timeout. */
    alarm(30);
    int ok = visit_all(100000, 16, 4);
    if (pthread_barrier_init(&bar, NULL, 2) != 0)
      exit(3);
    st__parallel_for(2, 1, 2, meet, &bar);
    pthread_barrier_destroy(&bar);
    exit(ok ? 0 : 1);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  /* And the parent's pool still works. */
  assert_true(visit_all(100000, 16, 4));
}
#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(parallel_for__visits_each_index_once),
      cmocka_unit_test(parallel_for__chunks_independent_of_threads),
      cmocka_unit_test(parallel_for__runs_chunks_concurrently),
      cmocka_unit_test(parallel_for__respects_max_threads),
      cmocka_unit_test(parallel_for__concurrent_callers),
      cmocka_unit_test(parallel_for__nested),
      cmocka_unit_test(ncores__matches_sysconf),
      cmocka_unit_test(golden_threads_default__cores_over_jobs),
#ifndef ST_TEST_TSAN
      cmocka_unit_test(parallel_for__works_in_forked_child),
#endif
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
