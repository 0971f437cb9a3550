/* SPDX-License-Identifier: MIT */
/* The golden phase of a case whose golden is a program (docs/torch.md):
 * the program handed to the torch plugin through st_op_call.program, a
 * failure placed at the line of the scene file (or of the program's
 * `file:`) it comes from, and the two checks the harness makes itself
 * because they hold for any program: its inputs come back bit for bit
 * (kernels get the same check in compare), and only the outputs it
 * computed are compared, with the values of outputs that have `expected:`
 * put over the program's. */
#include <stdlib.h>
#include <string.h>

#include "case/args.h"
#include "case/call.h"
#include "case/expected.h"
#include "case/golden_program.h"
#include "case/result.h"
#include "scene/program.h"

/* The case's message for a failed call: where in the program, then what
 * the plugin said. */
static void fail_message(st__casectx *cc, const st__program *p,
                         const st__call *c, st_status rc) {
  const st_op_call *call = &c->op;
  const char *msg = c->message[0] ? c->message : st_status_str(rc);
  int line = 0, col = 0;
  if (call->program_line > 0) {
    st__program_source_pos(p, call->program_line, call->program_column, &line,
                           &col);
  } else if (call->program_step > 0 &&
             (size_t)call->program_step <= p->pub.n_steps) {
    line = p->step_line[call->program_step - 1];
    col = p->step_column[call->program_step - 1];
  }
  if (line > 0 && col > 0)
    st__case_result_set_status(
        cc->res, ST_CASE_ERROR, "golden: %s:%d:%d: %s",
        p->src_file && call->program_line > 0 ? p->src_file : cc->info.file,
        line, col, msg);
  else if (line > 0)
    st__case_result_set_status(cc->res, ST_CASE_ERROR, "golden: %s:%d: %s",
                               p->src_file ? p->src_file : cc->info.file, line,
                               msg);
  else
    st__case_result_set_status(cc->res, ST_CASE_ERROR, "golden: %s", msg);
}

/* The first input the program changed, or -1. */
static long written_input(const st__casedata *d) {
  for (size_t i = 0; i < d->gold.n_tensors && i < d->init.n_tensors; i++) {
    const st_tensor *g = &d->gold.tensors[i], *o = &d->init.tensors[i];
    if (g->role != ST_ROLE_INPUT || g->nbytes == 0 || g->data == o->data)
      continue;
    if (memcmp(g->data, o->data, g->nbytes) != 0)
      return (long)i;
  }
  return -1;
}

st_phase_status st__golden_program_run(st__casectx *cc, const st_scene *scene,
                                       size_t ci, st__casedata *d,
                                       st_op_fn fn) {
  const st__program *p = scene->program;
  st_program prog = p->pub;
  st__call call;
  int dev = scene->cases[ci].golden_device != ST__DEVICE_UNSET
                ? scene->cases[ci].golden_device
                : scene->golden_device;
  unsigned char *written = calloc(d->gold.n_tensors + 1, 1);
  if (written == NULL) {
    st__case_result_set_status(cc->res, ST_CASE_ERROR, "golden: out of memory");
    return ST_PHASE_ERROR;
  }
  /* Outputs the scene does not compare (compare: false) take no result:
   * 2 tells the program so (include/scenetest/op.h). */
  for (size_t i = 0; i < d->gold.n_tensors && i < d->plan.n_args; i++)
    if (d->gold.tensors[i].role != ST_ROLE_INPUT && !d->plan.args[i].compare)
      written[i] = 2;
  prog.device = dev == ST__DEVICE_CUDA ? "cuda" : "cpu";
  prog.compile_only = 0;
  /* The program gets copies of the descriptors and its message is read
   * within its field (case/call.h), as a kernel's. */
  if (st__call_init(&call, scene->golden, d->golden_backend, &d->gold,
                    cc->run->golden_threads) != ST_OK) {
    free(written);
    st__case_result_set_status(cc->res, ST_CASE_ERROR, "golden: out of memory");
    return ST_PHASE_ERROR;
  }
  call.op.program = &prog;
  call.op.written = written;
  st_status rc = fn(&call.op);
  (void)st__call_returned(&call, "golden");
  st_phase_status ps = ST_PHASE_OK;
  long bad;
  if (rc == ST_ESKIP) {
    st__case_result_set_status(cc->res, ST_CASE_SKIP, "%s",
                               call.message[0] ? call.message
                                               : "golden declined the case");
    ps = ST_PHASE_SKIP;
  } else if (rc != ST_OK) {
    fail_message(cc, p, &call, rc);
    ps = ST_PHASE_ERROR;
  } else if ((bad = written_input(d)) >= 0) {
    st__case_result_set_status(
        cc->res, ST_CASE_ERROR,
        "golden: the program wrote its input '%s'; a golden program must "
        "leave its inputs as it got them (clone a tensor before changing "
        "it in place)",
        d->gold.tensors[bad].name);
    ps = ST_PHASE_ERROR;
  } else {
    /* An output with `expected:` is compared against that value whatever
     * the program computed (docs/scene-format.md, expected), as after an
     * op golden; only the others the program left out are not compared. */
    for (size_t i = 0; i < d->gold.n_tensors && i < d->plan.n_args; i++)
      if (d->gold.tensors[i].role != ST_ROLE_INPUT && written[i] != 1 &&
          d->plan.args[i].expected == NULL)
        d->plan.args[i].compare = 0;
    ps = st__case_fill_expected(cc, d, "golden");
  }
  st__call_free(&call);
  free(written);
  return ps;
}
