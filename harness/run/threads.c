/* SPDX-License-Identifier: MIT */
/* The threads scheduler (-j N): N threads of this process take cases from
 * a shared index; the scheduling thread waits for each case in selection
 * order and replays its events to the observers in its turn, so reports
 * are those of -j 1 but for timings. case_finish goes out as soon as the
 * scheduling thread sees a case finish (finish order,
 * docs/cli.md#--events-file).
 *
 * A case whose executor forks (ST__EXEC_FORKS) may only run from the
 * scheduling thread while no other case, and so no thread pool, runs
 * (docs/reliability.md#the-process-model): the runner threads leave it, and in
 * its turn the scheduling thread pauses them, waits for their running cases,
 * runs it, and lets them go on. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "case/exec.h"
#include "case/result.h"
#include "run/interrupt.h"
#include "run/sched.h"

typedef struct tsched {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  st__schedctx *sc;
  size_t next;       /* guarded by: lock */
  int stop;          /* guarded by: lock */
  int intr;          /* guarded by: lock; stopped by an interrupt */
  int paused;        /* guarded by: lock; no new case may start */
  size_t *finished;  /* guarded by: lock; indexes in finish order */
  size_t n_finished; /* guarded by: lock */
  size_t n_notified; /* guarded by: lock; finished ones told */
  size_t busy;       /* guarded by: lock; cases running on threads */
  /* guarded by: lock; ran[i]: case i ran, its result (NULL when out of
   * memory left none) in done[i]. Only the scheduling thread takes one. */
  st_case_result **done;
  unsigned char *ran;
} tsched;

static int threads_fits(const st__schedctx *sc) {
  unsigned jobs = sc->rc->opts->jobs;
  return jobs > 1 && sc->n > 1;
}

/* Case i ran: keep its result for its turn. Caller holds t->lock. */
static void ran(tsched *t, size_t i, st_case_result *r) {
  t->done[i] = r;
  t->ran[i] = 1;
  t->finished[t->n_finished++] = i;
  if (st__sched_stops(t->sc, r))
    t->stop = 1;
  pthread_cond_broadcast(&t->cond);
}

/* Tells the observers about every case that finished since the last call,
 * in finish order. Needs t->lock; releases it around the callbacks. Only
 * the scheduling thread calls it, and only it takes results out of
 * done[], so done[k] stays valid meanwhile. */
static void drain_finished(tsched *t) {
  while (t->n_notified < t->n_finished) {
    size_t k = t->finished[t->n_notified++];
    st_case_result *r = t->done[k];
    if (r == NULL)
      continue;
    pthread_mutex_unlock(&t->lock);
    st__sched_finished(t->sc, k, r);
    pthread_mutex_lock(&t->lock);
  }
}

static void *thread_main(void *arg) {
  tsched *t = arg;
  st__schedctx *sc = t->sc;
  for (;;) {
    size_t i;
    st_case_result *r;
    pthread_mutex_lock(&t->lock);
    for (;;) {
      if (!t->stop && sc->rc->opts->interrupts && st__intr_signal()) {
        /* SIGINT/SIGTERM: no case starts; the scheduling thread waiting
         * for one learns so. */
        t->stop = t->intr = 1;
        pthread_cond_broadcast(&t->cond);
      }
      if (t->stop || t->next >= sc->n) {
        pthread_mutex_unlock(&t->lock);
        return NULL;
      }
      if (t->paused) {
        pthread_cond_wait(&t->cond, &t->lock);
        continue;
      }
      i = t->next++;
      if (!st__sched_forks(sc, i))
        break;
    }
    t->busy++;
    pthread_mutex_unlock(&t->lock);
    r = st__case_run(sc->rc, &sc->refs[i], i, sc->n, NULL);
    if (sc->rc->opts->interrupts)
      st__sched_interrupted(r);
    pthread_mutex_lock(&t->lock);
    t->busy--;
    ran(t, i, r);
    pthread_mutex_unlock(&t->lock);
  }
}

/* Case i forks: in its turn, stop the threads from starting cases, wait
 * for the running ones, run it here, then let them go on. Caller holds
 * t->lock. */
static void run_forking(tsched *t, size_t i) {
  st__schedctx *sc = t->sc;
  st_case_result *r;
  t->paused = 1;
  while (t->busy > 0)
    pthread_cond_wait(&t->cond, &t->lock);
  pthread_mutex_unlock(&t->lock);
  r = st__case_run(sc->rc, &sc->refs[i], i, sc->n, NULL);
  pthread_mutex_lock(&t->lock);
  t->paused = 0;
  ran(t, i, r);
}

/* Case i's turn: waits until it ran (or --fail-fast means it never
 * will), telling finishes meanwhile, and reports it. */
static void report_turn(tsched *t, size_t i) {
  st__schedctx *sc = t->sc;
  st_case_result *r;
  int did_run;
  pthread_mutex_lock(&t->lock);
  if (st__sched_forks(sc, i) && !t->stop)
    run_forking(t, i);
  for (;;) {
    drain_finished(t);
    if (t->ran[i] || (t->stop && (i >= t->next || st__sched_forks(sc, i))))
      break;
    pthread_cond_wait(&t->cond, &t->lock);
  }
  r = t->done[i];
  did_run = t->ran[i];
  t->done[i] = NULL;
  pthread_mutex_unlock(&t->lock);
  if (did_run)
    st__sched_report(sc, i, r, ST__REPORT_REPLAY);
  else
    st__sched_report(sc, i,
                     t->intr ? st__sched_unrun(sc, i, "not run: interrupted")
                             : st__sched_not_run(sc, i),
                     ST__REPORT_REPLAY | ST__REPORT_FINISH);
}

static st_status threads_run_all(st__schedctx *sc, st_error *err) {
  unsigned jobs = sc->rc->opts->jobs;
  tsched t;
  pthread_t *threads = NULL;
  size_t n_threads = 0, i;
  st_status s = ST_OK;
  st__intr si;

  memset(&t, 0, sizeof t);
  t.sc = sc;
  t.done = calloc(sc->n, sizeof *t.done);
  t.ran = calloc(sc->n, sizeof *t.ran);
  t.finished = calloc(sc->n, sizeof *t.finished);
  threads = calloc(jobs, sizeof *threads);
  if (t.done == NULL || t.ran == NULL || t.finished == NULL ||
      threads == NULL) {
    s = st_error_set(err, ST_ENOMEM, "out of memory");
    goto out;
  }
  pthread_mutex_init(&t.lock, NULL);
  pthread_cond_init(&t.cond, NULL);
  if (sc->rc->opts->interrupts)
    st__intr_install(&si, 1);
  for (i = 0; i < jobs && i < sc->n; i++)
    if (pthread_create(&threads[n_threads], NULL, thread_main, &t) == 0)
      n_threads++;
  if (n_threads == 0)
    thread_main(&t); /* no threads to be had: run them here */
  for (i = 0; i < sc->n; i++)
    report_turn(&t, i);
  for (i = 0; i < n_threads; i++)
    pthread_join(threads[i], NULL);
  if (sc->rc->opts->interrupts) {
    if (st__intr_signal())
      st__run_result_set_interrupted(sc->run, st__intr_signal());
    st__intr_restore(&si);
  }
  pthread_cond_destroy(&t.cond);
  pthread_mutex_destroy(&t.lock);
out:
  free(threads);
  free(t.finished);
  free(t.ran);
  free(t.done);
  return s;
}

const st__scheduler st__sched_threads = {
    .name = "threads",
    .fits = threads_fits,
    .run_all = threads_run_all,
};
