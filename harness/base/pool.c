/* SPDX-License-Identifier: MIT */
/* The process's thread pool and st__parallel_for. The pool is created on
 * first use and grows on demand (never beyond POOL_MAX_WORKERS); workers
 * sleep on a condition variable between jobs. Several callers may run
 * parallel loops at once: each call is a job on a shared list, and a worker
 * attaches to the first job that still has unclaimed chunks and room for
 * another helper. Chunks are claimed with an atomic counter, so the chunk
 * boundaries depend only on (n, grain) and the thread count only decides
 * who runs which chunk. A forked child forgets the parent's pool (it
 * inherits none of its threads) through a pthread_atfork child handler and
 * makes its own on first use. At exit the workers are stopped and joined
 * (an atexit handler), so leak checkers see no threads left behind. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/pool.h"

/* A cap on workers, whatever callers ask for: max_threads is a ceiling,
 * not a promise, so a request above it just gets fewer threads. */
#define POOL_MAX_WORKERS 256u

/* Without a grain, chunks are sized from n alone (at most this many). */
#define POOL_DEFAULT_CHUNKS 4096u

typedef struct st__pool_job {
  st__range_fn fn;
  void *ctx;
  size_t n;
  size_t chunk; /* items per chunk (the last may be shorter) */
  size_t n_chunks;
  atomic_size_t next;   /* next chunk to claim */
  atomic_size_t done;   /* chunks finished */
  unsigned max_helpers; /* threads besides the caller */
  unsigned helpers;     /* guarded by: pool.mutex */
  unsigned refs; /* workers still inside run_chunks; guarded by: pool.mutex */
  struct st__pool_job *next_job; /* guarded by: pool.mutex */
} st__pool_job;

typedef struct st__pool_state {
  pthread_mutex_t mutex;
  pthread_cond_t work; /* a job was queued, or shutdown */
  pthread_cond_t idle; /* a job made progress (chunks done or refs 0) */
  unsigned workers;    /* guarded by: mutex */
  pthread_t *ids;      /* the workers, to join at exit; guarded by: mutex */
  st__pool_job *jobs;  /* guarded by: mutex */
  int shutdown;        /* set once, at exit; guarded by: mutex */
} st__pool_state;

#define POOL_STATE_INIT                                                        \
  {                                                                            \
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,                       \
        PTHREAD_COND_INITIALIZER, 0, NULL, NULL, 0                             \
  }

static st__pool_state pool = POOL_STATE_INIT;
static pthread_once_t register_once = PTHREAD_ONCE_INIT;
/* 1 on the pool's own threads. */
static _Thread_local int tls_is_worker;

/* glibc's sysconf(_SC_NPROCESSORS_ONLN) opens and parses
 * /sys/devices/system/cpu/online on every call; a level-3 case and every
 * compare asked it once per case (issue 14). Read once per process: a
 * forked child inherits the value, which is what it would read. */
static pthread_once_t ncores_once = PTHREAD_ONCE_INIT;
static unsigned ncores_value = 1;

static void ncores_read(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1)
    ncores_value = 1;
  else if ((unsigned long)n > POOL_MAX_WORKERS)
    ncores_value = POOL_MAX_WORKERS;
  else
    ncores_value = (unsigned)n;
}

unsigned st__ncores(void) {
  pthread_once(&ncores_once, ncores_read);
  return ncores_value;
}

unsigned st__golden_threads_default(unsigned cores, unsigned jobs) {
  unsigned per_job = cores / (jobs ? jobs : 1);
  if (per_job > 8)
    per_job = 8;
  return per_job ? per_job : 1;
}

/* Holding the mutex across fork() gives the child a pool state that no
 * thread was halfway through changing. */
static void atfork_prepare(void) { pthread_mutex_lock(&pool.mutex); }

static void atfork_parent(void) { pthread_mutex_unlock(&pool.mutex); }

/* The child has only the forking thread: no workers exist, and the jobs
 * of other parent threads will never finish here. Start from scratch (the
 * old synchronisation objects may hold state about parent threads, so they
 * are re-created rather than unlocked). */
static void atfork_child(void) {
  st__pool_state fresh = POOL_STATE_INIT;
  free(pool.ids); /* the child's copy of the parent's list */
  pool = fresh;
}

unsigned st__pool_workers(void) {
  unsigned n;
  pthread_mutex_lock(&pool.mutex);
  n = pool.workers;
  pthread_mutex_unlock(&pool.mutex);
  return n;
}

/* At exit, stop and join the workers, so that leak checkers (valgrind,
 * LeakSanitizer) see no live threads. Only when no loop is running and
 * not from a worker (a chunk that calls exit()): joining then could wait
 * for a long chunk or for itself, and the process is ending anyway. */
static void pool_shutdown(void) {
  pthread_mutex_lock(&pool.mutex);
  if (pool.jobs != NULL || tls_is_worker || pool.shutdown) {
    pthread_mutex_unlock(&pool.mutex);
    return;
  }
  pool.shutdown = 1;
  pthread_cond_broadcast(&pool.work);
  unsigned n = pool.workers;
  pthread_t *ids = pool.ids;
  pool.ids = NULL;
  pool.workers = 0;
  pthread_mutex_unlock(&pool.mutex);
  for (unsigned i = 0; i < n; i++)
    pthread_join(ids[i], NULL);
  free(ids);
}

static void pool_register(void) {
  (void)pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
  (void)atexit(pool_shutdown);
}

static void run_chunks(st__pool_job *job) {
  for (;;) {
    size_t c = atomic_fetch_add(&job->next, 1);
    if (c >= job->n_chunks)
      return;
    size_t begin = c * job->chunk;
    size_t end = begin + job->chunk;
    if (end > job->n || end < begin)
      end = job->n;
    job->fn(job->ctx, begin, end);
    if (atomic_fetch_add(&job->done, 1) + 1 == job->n_chunks) {
      /* The broadcast happens under the mutex, after the increment, so a
       * caller that checked `done` under the mutex cannot miss it. */
      pthread_mutex_lock(&pool.mutex);
      pthread_cond_broadcast(&pool.idle);
      pthread_mutex_unlock(&pool.mutex);
    }
  }
}

/* The first job with unclaimed chunks and room for a helper. */
static st__pool_job *find_job(void) {
  for (st__pool_job *j = pool.jobs; j != NULL; j = j->next_job)
    if (j->helpers < j->max_helpers && atomic_load(&j->next) < j->n_chunks)
      return j;
  return NULL;
}

static void *worker_main(void *arg) {
  (void)arg;
  tls_is_worker = 1;
  pthread_mutex_lock(&pool.mutex);
  while (!pool.shutdown) {
    st__pool_job *job = find_job();
    if (job == NULL) {
      pthread_cond_wait(&pool.work, &pool.mutex);
      continue;
    }
    job->helpers++;
    job->refs++;
    pthread_mutex_unlock(&pool.mutex);
    run_chunks(job);
    pthread_mutex_lock(&pool.mutex);
    /* The job lives on its caller's stack: once refs drops to 0 and all
     * chunks are done, the caller may return and the pointer dies. */
    if (--job->refs == 0)
      pthread_cond_broadcast(&pool.idle);
  }
  pthread_mutex_unlock(&pool.mutex);
  return NULL;
}

/* Grows the pool to at least `want` workers (best effort: a thread that
 * cannot be created leaves the pool smaller, and the caller's own thread
 * still runs every chunk that no worker takes). Workers block every signal
 * so that signals meant for the process (SIGALRM for timeouts, SIGINT) are
 * delivered to the harness's own threads. Needs pool.mutex held. */
static void grow_locked(unsigned want) {
  if (want > POOL_MAX_WORKERS)
    want = POOL_MAX_WORKERS;
  if (pool.workers >= want || pool.shutdown)
    return;
  if (pool.ids == NULL) {
    /* Room for the cap at once: the list never moves, so growing needs no
     * realloc failure path (2 KiB). */
    pool.ids = calloc(POOL_MAX_WORKERS, sizeof *pool.ids);
    if (pool.ids == NULL)
      return;
  }
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  while (pool.workers < want) {
    if (pthread_create(&pool.ids[pool.workers], NULL, worker_main, NULL) != 0)
      break;
    pool.workers++;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void st__parallel_for(size_t n, size_t grain, unsigned max_threads,
                      st__range_fn fn, void *ctx) {
  if (n == 0)
    return;
  size_t chunk = grain;
  if (chunk == 0)
    chunk = n / POOL_DEFAULT_CHUNKS + 1;
  size_t n_chunks = n / chunk + (n % chunk != 0);
  unsigned threads = max_threads ? max_threads : st__ncores();
  if ((size_t)threads > n_chunks)
    threads = (unsigned)n_chunks;
  if (threads <= 1) {
    /* Same chunk boundaries as the parallel path, so results that depend
     * on them (per-chunk partials) do not depend on the thread count. */
    for (size_t begin = 0; begin < n; begin += chunk)
      fn(ctx, begin, n - begin < chunk ? n : begin + chunk);
    return;
  }

  st__pool_job job;
  memset(&job, 0, sizeof job);
  job.fn = fn;
  job.ctx = ctx;
  job.n = n;
  job.chunk = chunk;
  job.n_chunks = n_chunks;
  atomic_init(&job.next, 0);
  atomic_init(&job.done, 0);
  job.max_helpers = threads - 1;

  pthread_once(&register_once, pool_register);
  pthread_mutex_lock(&pool.mutex);
  grow_locked(threads - 1);
  job.next_job = pool.jobs;
  pool.jobs = &job;
  pthread_cond_broadcast(&pool.work);
  pthread_mutex_unlock(&pool.mutex);

  run_chunks(&job);

  pthread_mutex_lock(&pool.mutex);
  while (atomic_load(&job.done) < job.n_chunks || job.refs > 0)
    pthread_cond_wait(&pool.idle, &pool.mutex);
  for (st__pool_job **p = &pool.jobs; *p != NULL; p = &(*p)->next_job) {
    if (*p == &job) {
      *p = job.next_job;
      break;
    }
  }
  pthread_mutex_unlock(&pool.mutex);
}
