/* SPDX-License-Identifier: MIT */
/* The serial scheduler: the cases one after another on the scheduling
 * thread, each told to the observers live as its phases happen (-j 1,
 * and any run of a single case). SIGINT/SIGTERM (opts->interrupts): the
 * running case finishes, as an error, and the rest are skips. */
#include "case/exec.h"
#include "case/result.h"
#include "run/interrupt.h"
#include "run/sched.h"

static int serial_fits(const st__schedctx *sc) {
  (void)sc;
  return 1;
}

static st_status serial_run_all(st__schedctx *sc, st_error *err) {
  size_t i;
  int stop = 0;
  st__intr si;
  (void)err;
  if (sc->rc->opts->interrupts)
    st__intr_install(&si, 1);
  for (i = 0; i < sc->n; i++) {
    st_case_result *r;
    if (stop || st__intr_signal()) {
      r = st__intr_signal() ? st__sched_unrun(sc, i, "not run: interrupted")
                            : st__sched_not_run(sc, i);
      st__sched_report(sc, i, r, ST__REPORT_REPLAY | ST__REPORT_FINISH);
      continue;
    }
    r = st__case_run(sc->rc, &sc->refs[i], i, sc->n, &sc->fo->live);
    st__sched_interrupted(r);
    if (st__sched_stops(sc, r))
      stop = 1;
    st__sched_report(sc, i, r, ST__REPORT_LIVE | ST__REPORT_FINISH);
  }
  if (sc->rc->opts->interrupts) {
    if (st__intr_signal())
      st__run_result_set_interrupted(sc->run, st__intr_signal());
    st__intr_restore(&si);
  }
  return ST_OK;
}

const st__scheduler st__sched_serial = {
    .name = "serial",
    .fits = serial_fits,
    .run_all = serial_run_all,
};
