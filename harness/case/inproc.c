/* SPDX-License-Identifier: MIT */
/* The in-process executor (level 2): the kernel, resolved and bound at the
 * end of `args` (with the platform's prepare, released after the last
 * round), is called in this thread, on the case's own buffers, once per
 * round between the shared steps of case.h. It keeps nothing across
 * cases, so it has no run-wide hooks; a timeout on its cases is a
 * scheduler's to enforce (in a forked child: docs/cli.md#options). */
#include <string.h>

#include "case/case.h"
#include "case/exec.h"
#include "case/phase.h"
#include "case/result.h"

static void inproc_run(st__casectx *cc, const st_scene *scene, size_t ci) {
  const st_run_options *opts = cc->run->opts;
  st__casedata d;
  st__call call;
  st_phase_status ps;
  uint64_t t0, dev, copy;
  unsigned r;

  /* args ends with the kernel resolved and bound and the platform's
   * prepare done (case.h). */
  if (!st__case_prepare(cc, scene, ci, &d))
    goto out;
  st__case_record(cc);
  for (r = 0; r < d.rounds; r++) {
    t0 = st__case_run_begin(cc, &d, r);
    dev = copy = ST_NS_NONE;
    if (st__call_init(&call, scene->kernel, opts->platform, &d.args, 0) !=
        ST_OK) {
      st__case_result_set_status(cc->res, ST_CASE_ERROR, "run: out of memory");
      ps = ST_PHASE_ERROR;
    } else {
      /* The kernel runs on copies of the descriptors (case/call.h): the
       * zones, the compare and the free go by the harness's own. */
      call.op.platform_state = d.platform_state;
      ps = st__dispatch(cc, d.kernel, &call, "kernel");
      if (ps == ST_PHASE_ERROR)
        st__case_kernel_failed(cc, call.message);
      dev = call.op.device_ns;
      copy = call.op.copy_ns;
      st__call_free(&call);
    }
    /* Whatever the kernel returned: a decline after a write past an
     * output is that write's error. */
    ps = st__case_guard_check(cc, &d.args, ps);
    st__phase_end_dev(cc, "run", (int)r, t0, ps, 0, NULL, 0, dev, copy);
    if (ps != ST_PHASE_OK || !st__case_compare(cc, &d, r))
      goto out;
  }
out:
  st__case_release(cc, &d);
  st__casedata_free(&d);
}

const st__executor st__exec_inproc = {
    .name = "inproc",
    .flags = 0,
    .slot = 0,
    .run = inproc_run,
    .run_begin = NULL,
    .run_end = NULL,
    .after_fork = NULL,
};
