/* SPDX-License-Identifier: MIT */
/* The isolate scheduler (run/sched.h; --isolate, and a timeout on a case
 * whose executor does not enforce it, i.e. level 2): each case runs in a
 * forked child (run/child.h), at most opts->jobs at a time, forked from
 * the scheduling thread. The scheduler keeps the slots, starts cases
 * while there is room, polls the children's descriptors, enforces their
 * deadlines and collects their results; observers see every case in
 * selection order, case_finish as each finishes. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include <scenetest/log.h>

#include "base/proc.h"
#include "base/util.h"
#include "case/exec.h"
#include "case/result.h"
#include "run/child.h"
#include "run/interrupt.h"
#include "run/sched.h"
#include "run/zygote.h"

/* A case with a timeout its executor does not enforce must run in a
 * child: a kernel cannot be stopped safely inside the harness's own
 * process (docs/cli.md#options); a supervised run's children already are such.
 * A level-3 case's kernel already runs in workers, which can be killed. */
static int must_isolate(const st__schedctx *sc, size_t i) {
  return sc->rc->opts->isolate ||
         (!sc->rc->opts->supervise && !st__sched_owns_timeout(sc, i) &&
          st__sched_timeout(sc, i) > 0);
}

static int isolate_fits(const st__schedctx *sc) {
  size_t i;
  for (i = 0; i < sc->n; i++)
    if (must_isolate(sc, i))
      return 1;
  return 0;
}

/* ---- the scheduler ---------------------------------------------------- */

/* The fork server is started once this process holds this much memory
 * not backed by files (looked at every ZYGOTE_EVERY children forked here).
 * Below it a fork here costs less than a spare's round trips; above it a
 * fork here grows by ~17 us per MiB held, a spare's hardly at all. On a
 * 2-vCPU VM (docs/benchmarks.md, "Isolated cases and the zygote"): a
 * 2,000-case suite (4 MiB held) 0.43 s forking here, 0.59 s from spares;
 * 20,000 cases (growing to 23 MiB) 7.5 s forking here, 6.2 s with the
 * server from 8 MiB on; with 96 MiB held, 0.22x the time per case. */
#define ZYGOTE_MIN_BYTES ((size_t)8 << 20)
#define ZYGOTE_EVERY 64

static size_t spares_used; /* by the last run: st__isolate_spares_used */
static size_t zygote_min = ZYGOTE_MIN_BYTES;
static int zygote_min_read; /* SCENETEST_TEST_ZYGOTE_MIN looked at */

/* The scheduler's state for one run. */
typedef struct iso {
  st__schedctx *sc;
  unsigned jobs;
  st__child *kids;       /* jobs slots */
  st_case_result **done; /* by case: finished, not yet reported */
  char *ready;           /* by case: finished */
  struct pollfd *pf;     /* at most 2 per slot */
  size_t *who;           /* pf[k] is kids[who[k]]'s */
  void *block;           /* all of the above */
  st__zygote *z;         /* the fork server, or NULL: forks here */
  size_t to_isolate;     /* isolated cases not started yet */
  size_t forked_here;    /* children forked by this process */
  int zygote_tried;      /* started (or failed to) once: never again */
  size_t next_start, next_report, running;
  int stop;
} iso;

/* The bookkeeping in one block, in as few pages as it fits: the parent
 * writes to it while children run. Ordered by alignment. */
static st_status iso_init(iso *is, st__schedctx *sc, st_error *err) {
  unsigned jobs = sc->rc->opts->jobs ? sc->rc->opts->jobs : 1;
  size_t n = sc->n, i;

  memset(is, 0, sizeof *is);
  is->sc = sc;
  is->jobs = jobs;
  if (n > SIZE_MAX / 16 - 1)
    return st_error_set(err, ST_ENOMEM, "out of memory");
  is->block = calloc(1, jobs * sizeof *is->kids +
                            (2 * (size_t)jobs + 1) * sizeof *is->who +
                            (n + 1) * sizeof *is->done +
                            (2 * (size_t)jobs + 1) * sizeof *is->pf + n + 1);
  if (is->block == NULL)
    return st_error_set(err, ST_ENOMEM, "out of memory");
  is->kids = is->block;
  is->who = (size_t *)(void *)(is->kids + jobs);
  is->done = (st_case_result **)(void *)(is->who + 2 * (size_t)jobs + 1);
  is->pf = (struct pollfd *)(void *)(is->done + n + 1);
  is->ready = (char *)(is->pf + 2 * (size_t)jobs + 1);
  for (i = 0; i < jobs; i++)
    st__child_init(&is->kids[i]);
  for (i = 0; i < n; i++)
    is->to_isolate += must_isolate(sc, i) != 0;
  spares_used = 0;
  return ST_OK;
}

/* Kills what still runs (only after an internal error: no child may
 * outlive the run) and frees everything. */
static void iso_free(iso *is) {
  size_t i;
  st__zygote_stop(is->z);
  is->z = NULL;
  for (i = 0; i < is->jobs; i++)
    st__child_free(&is->kids[i]);
  for (i = 0; i < is->sc->n; i++)
    st_case_result_free(is->done[i]);
  free(is->block);
}

/* Case i is finished with result r: ready for its turn in the report, and
 * the observers told now (case_finish, in finish order:
 * docs/cli.md#--events-file
 * --events). */
static void iso_finish(iso *is, size_t i, st_case_result *r) {
  is->done[i] = r;
  is->ready[i] = 1;
  if (st__sched_stops(is->sc, r))
    is->stop = 1;
  st__sched_finished(is->sc, i, r);
}

/* Reports what is ready, in selection order. */
static void iso_report_ready(iso *is) {
  while (is->next_report < is->sc->n && is->ready[is->next_report]) {
    st__sched_report(is->sc, is->next_report, is->done[is->next_report],
                     ST__REPORT_REPLAY);
    is->done[is->next_report] = NULL;
    is->next_report++;
  }
}

/* The isolated child's deadline. A case whose executor enforces its
 * timeout itself (level 3) does so inside the child; the child's deadline
 * is then a backstop a second later, so that the two never race to say
 * how the case timed out (the executor's verdict is the one). */
static double child_timeout(const st__schedctx *sc, size_t i) {
  double t = st__sched_timeout(sc, i);
  return t > 0 && st__sched_owns_timeout(sc, i) ? t + 1.0 : t;
}

size_t st__isolate_spares_used(void) { return spares_used; }

/* SCENETEST_TEST_ZYGOTE_MIN (test-only, docs/reliability.md): bytes past
 * which the zygote starts, instead of 8 MiB ("0": from the first child),
 * so that the CLI's tests can run their isolated cases through it. Read
 * once. */
static size_t zygote_threshold(void) {
  if (!zygote_min_read) {
    const char *v = getenv("SCENETEST_TEST_ZYGOTE_MIN");
    char *end;
    unsigned long long b;
    zygote_min_read = 1;
    if (v != NULL && v[0] != '\0') {
      errno = 0;
      b = strtoull(v, &end, 10);
      if (errno == 0 && *end == '\0' && b <= SIZE_MAX)
        zygote_min = (size_t)b;
    }
  }
  return zygote_min;
}

size_t st__isolate_set_zygote_min(size_t bytes) {
  size_t was = zygote_threshold();
  zygote_min = bytes;
  return was;
}

/* Starts the fork server when this process has grown past
 * ZYGOTE_MIN_BYTES and more than one isolated case is still to come
 * (run/zygote.h): it forks from the state of that moment, which the
 * results gathered since do not grow. */
static void iso_zygote(iso *is) {
  st__schedctx *sc = is->sc;
  size_t i, held;
  if (is->zygote_tried || is->to_isolate < 2 ||
      is->forked_here % ZYGOTE_EVERY != 0 ||
      (held = st__proc_private_bytes()) < zygote_threshold())
    return;
  is->zygote_tried = 1;
  for (i = 0; i < is->jobs; i++)
    st__child_prepare(&is->kids[i], sc->rc);
  is->z = st__zygote_start(sc->rc, sc->refs, sc->n, is->kids, is->jobs,
                           is->to_isolate);
  if (is->z != NULL)
    st_log(ST_LOG_INFO,
           "isolate: the children of the %zu cases left are forked by a "
           "zygote (pid %ld): this process holds %zu MiB",
           is->to_isolate, (long)st__zygote_pid(is->z), held >> 20);
}

/* Starts case info's child in the empty slot: a spare of the zygote's if
 * one is ready, else one forked here. */
static int iso_start_child(iso *is, size_t slot, const st_case_info *info,
                           st_case_result **failed) {
  st__schedctx *sc = is->sc;
  st__child *c = &is->kids[slot];
  double t = child_timeout(sc, info->index);
  st__spare sp;
  iso_zygote(is);
  if (is->to_isolate > 0)
    is->to_isolate--;
  if (is->z != NULL && st__zygote_take(is->z, is->to_isolate, &sp) == 0) {
    if (st__child_begin(c, sc->rc, info, t, failed) != 0) {
      st__zygote_discard(&sp);
      return -1;
    }
    if (st__zygote_go(&sp, info->index, slot, c->res_fd) == 0) {
      st__child_started(c, sp.pid, sp.cap_r, sp.cap_w);
      spares_used++;
      return 0;
    }
    st__zygote_discard(&sp); /* it died waiting: fork one here */
  }
  is->forked_here++;
  return st__child_start(c, sc->rc, &sc->refs[info->index], info, t, is->kids,
                         is->jobs, failed);
}

/* Starts cases while there is room. */
static void iso_start(iso *is) {
  st__schedctx *sc = is->sc;
  while (is->running < is->jobs && is->next_start < sc->n &&
         !st__intr_signal()) {
    size_t i = is->next_start, slot;
    st_case_result *failed = NULL;
    st_case_info info;
    if (is->stop) {
      iso_finish(is, i, st__sched_not_run(sc, i));
      is->next_start++;
      continue;
    }
    if (!must_isolate(sc, i)) {
      /* A case whose executor owns its timeout, under --timeout alone: in
       * this process (level 3: its workers are what can be killed), once
       * no child runs, so every child's deadline stays watched. */
      if (is->running > 0)
        break;
      iso_finish(is, i, st__case_run(sc->rc, &sc->refs[i], i, sc->n, NULL));
      is->next_start++;
      continue;
    }
    for (slot = 0; slot < is->jobs && is->kids[slot].pid > 0; slot++)
      ;
    st__sched_info(sc, i, &info);
    if (iso_start_child(is, slot, &info, &failed) != 0) {
      /* The case errors (failed says why, or is NULL out of memory). */
      iso_finish(is, i, failed);
      is->next_start++;
      continue;
    }
    is->running++;
    is->next_start++;
  }
}

/* Waits for output, results, exits or a deadline, and takes in what
 * came. */
static st_status iso_wait(iso *is, st_error *err) {
  nfds_t nf = 0;
  int timeout_ms = -1;
  uint64_t now = st__now_ns();
  size_t i;

  for (i = 0; i < is->jobs; i++) {
    const st__child *c = &is->kids[i];
    size_t k, got;
    int ms;
    if (c->pid <= 0)
      continue;
    got = st__child_pollfds(c, is->pf + nf);
    for (k = 0; k < got; k++)
      is->who[nf++] = i;
    ms = st__child_wait_ms(c, now);
    if (ms >= 0 && (timeout_ms < 0 || ms < timeout_ms))
      timeout_ms = ms;
  }
  if (st__intr_fd() >= 0) {
    is->pf[nf].fd = st__intr_fd();
    is->pf[nf].events = POLLIN;
    is->who[nf++] = SIZE_MAX;
  }
  if (poll(is->pf, nf, timeout_ms) < 0 && errno != EINTR)
    return st_error_set(err, ST_EINTERNAL, "poll: %s", strerror(errno));
  for (i = 0; i < nf; i++)
    if (is->who[i] != SIZE_MAX)
      st__child_polled(&is->kids[is->who[i]], &is->pf[i]);
  return ST_OK;
}

/* Enforces deadlines and collects the children that are done. */
static void iso_reap(iso *is) {
  uint64_t now = st__now_ns();
  size_t i;
  for (i = 0; i < is->jobs; i++) {
    st__child *c = &is->kids[i];
    st_case_info info;
    size_t k;
    int status = 0;
    if (c->pid <= 0)
      continue;
    st__child_deadline(c, now);
    if (!st__child_reaped(c, &status))
      continue;
    k = c->index;
    st__sched_info(is->sc, k, &info);
    iso_finish(is, k, st__child_collect(c, &info, status));
    is->running--;
  }
}

/* SIGINT or SIGTERM: every child's process group killed, its case an
 * error, every case not started a skip (docs/reliability.md#interrupts). */
static void iso_interrupt(iso *is, int sig) {
  size_t i;
  for (i = 0; i < is->jobs; i++) {
    st__child *c = &is->kids[i];
    st_case_info info;
    int status = 0;
    if (c->pid <= 0)
      continue;
    st__child_interrupt(c, sig, &status);
    st__sched_info(is->sc, c->index, &info);
    iso_finish(is, c->index, st__child_collect(c, &info, status));
    is->running--;
  }
  for (; is->next_start < is->sc->n; is->next_start++)
    iso_finish(is, is->next_start,
               st__sched_unrun(is->sc, is->next_start, "not run: interrupted"));
  st__run_result_set_interrupted(is->sc->run, sig);
}

static st_status isolate_run_all(st__schedctx *sc, st_error *err) {
  iso is;
  st__intr si;
  st_status s = iso_init(&is, sc, err);
  if (s != ST_OK) {
    free(is.block);
    return s;
  }
  /* In-process cases too (level 3 under --timeout alone): no system call
   * of theirs sees EINTR. */
  st__intr_install(&si, !sc->rc->opts->isolate);
  for (;;) {
    iso_report_ready(&is);
    if (is.next_report >= sc->n)
      break;
    if (st__intr_signal()) {
      iso_interrupt(&is, st__intr_signal());
      continue;
    }
    iso_start(&is);
    if (is.running == 0)
      continue; /* what started is finished: report it */
    s = iso_wait(&is, err);
    if (s != ST_OK)
      break;
    iso_reap(&is);
  }
  st__intr_restore(&si);
  iso_free(&is);
  return s;
}

const st__scheduler st__sched_isolate = {
    .name = "isolate",
    .fits = isolate_fits,
    .run_all = isolate_run_all,
};
