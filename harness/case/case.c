/* SPDX-License-Identifier: MIT */
/* One case (case.h): the steps its executors share (args and golden,
 * record, reset, compare; an op call validated and mapped to a phase
 * status). Running the case from its first phase to its result, through
 * its executor, is case/exec.c's (exec.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <scenetest/log.h>
#include <scenetest/record.h>

#include "base/log_sink.h"
#include "base/proc.h"
#include "case/args.h"
#include "case/call.h"
#include "case/case.h"
#include "case/compare.h"
#include "case/exec.h"
#include "case/expected.h"
#include "case/golden_program.h"
#include "case/fingerprint.h"
#include "case/mismatch.h"
#include "case/bound_golden.h"
#include "case/phase.h"
#include "case/poison.h"
#include "case/record.h"
#include "case/result.h"
#include "case/tbuf.h"
#include "case/trust.h"
#include "case/case_env.h"
#include "ops/avail.h"
#include "ops/backends.h"
#include "scene/golden_view.h"
#include "scene/quarantine.h"
#include "scene/scene.h"

/* Validates and calls fn; maps the outcome to a phase status and, on
 * failure, the case's status and message (prefixed with what). What fn
 * left in its call is not read back but its bounded message (call.h). */
st_phase_status st__dispatch(st__casectx *cc, st_op_fn fn, st__call *call,
                             const char *what) {
  const char *msg;
  st_status rc = st_op_check(&call->op);
  if (rc == ST_OK) {
    rc = fn(&call->op);
    msg = st__call_returned(call, what);
  } else {
    msg = st__call_message_copy(&call->op, call->message);
  }
  if (rc == ST_OK)
    return ST_PHASE_OK;
  if (rc == ST_ESKIP) {
    st__case_result_set_status(cc->res, ST_CASE_SKIP, "%s",
                               msg ? msg : "kernel declined the case");
    return ST_PHASE_SKIP;
  }
  st__case_result_set_status(cc->res, ST_CASE_ERROR, "%s: %s", what,
                             msg ? msg : st_status_str(rc));
  return ST_PHASE_ERROR;
}

void st__case_kernel_failed(st__casectx *cc, const char *message) {
  const char *m = message != NULL && message[0] != '\0'
                      ? message
                      : st_case_result_message(cc->res);
  if (cc->kernel_failed)
    return;
  cc->kernel_failed = 1;
  snprintf(cc->kernel_message, sizeof cc->kernel_message, "%s",
           m != NULL ? m : "");
}

void st__case_guard_error(st__casectx *cc, const char *name, size_t nbytes,
                          const st__tbuf_damage *dmg, const char *where) {
  char msg[1024];
  /* The kernel's own verdict does not matter: memory it did not own was
   * written, so the case is an error, and this is its first cause
   * unless the kernel already failed. */
  if (dmg->after != 0 && dmg->before != 0)
    snprintf(msg, sizeof msg,
             "run: kernel wrote out of bounds of tensor '%s': %zu bytes "
             "before its start and %zu bytes past its end (%zu bytes long; "
             "guard zones%s)",
             name, dmg->before, dmg->after, nbytes, where);
  else if (dmg->after != 0)
    snprintf(msg, sizeof msg,
             "run: kernel wrote out of bounds of tensor '%s': %zu bytes past "
             "its end (%zu bytes long; guard zone%s)",
             name, dmg->after, nbytes, where);
  else
    snprintf(msg, sizeof msg,
             "run: kernel wrote out of bounds of tensor '%s': %zu bytes "
             "before its start (guard zone%s)",
             name, dmg->before, where);
  /* A decline is no failure of the kernel's: the write is the cause. */
  if (st_case_result_status(cc->res) == ST_CASE_SKIP)
    st__case_result_override(cc->res, ST_CASE_ERROR, msg);
  else
    st__case_result_set_status(cc->res, ST_CASE_ERROR, "%s", msg);
}

st_phase_status st__case_guard_check(st__casectx *cc, st__argset *args,
                                     st_phase_status ps) {
  for (size_t i = 0; i < args->n_tensors; i++) {
    st_tensor *t = &args->tensors[i];
    st__tbuf_damage dmg;
    if (!st__tbuf_check(t->data, &dmg))
      continue;
    st__case_guard_error(cc, t->name, t->nbytes, &dmg, "");
    st__tbuf_rearm(t->data);
    ps = ST_PHASE_ERROR;
  }
  return ps;
}

st_phase_status st__compare_all(st__casectx *cc, const st__plan *plan,
                                const st__argset *args, const st__argset *gold,
                                const st__argset *init, unsigned round,
                                unsigned rounds) {
  st__dump dump = {cc->run->opts->dump_dir, cc->info.scene, cc->info.name};
  char *report = NULL;
  size_t failing = st__mismatch_report(plan, args, gold, init, round, rounds,
                                       &dump, &report);
  if (failing == 0)
    return ST_PHASE_OK;
  if (failing == (size_t)-1) {
    st__case_result_set_status(cc->res, ST_CASE_ERROR,
                               "out of memory reporting a mismatch");
    return ST_PHASE_ERROR;
  }
  /* The first cause wins; set_status would cut a long report. */
  if (st_case_result_message(cc->res) == NULL)
    st__case_result_override(cc->res, ST_CASE_FAIL, report);
  else
    st__case_result_set_status(cc->res, ST_CASE_FAIL, NULL);
  free(report);
  return ST_PHASE_FAIL;
}

/* The end of `args` where the kernel runs in this process
 * (docs/plugins.md#the-lookup-order): the kernel is resolved (a lazy plugin
 * loads here, so the record sees it) and bound to the built arguments, then the
 * platform's prepare hook runs (device context, buffers, uploads). */
static st_phase_status bind_kernel(st__casectx *cc, const st_scene *scene,
                                   st__casedata *d) {
  const char *platform = cc->run->opts->platform;
  const char *msg;
  st__call call;
  st_error err;
  st_status rc;

  st_error_clear(&err);
  if (st_registry_lookup(cc->run->reg, scene->kernel, platform,
                         ST_LOOKUP_KERNEL, &d->kernel, &err) != ST_OK) {
    st__case_result_set_status(cc->res, ST_CASE_ERROR, "%s", err.message);
    return ST_PHASE_ERROR;
  }
  if (st__call_init(&call, scene->kernel, platform, &d->args, 0) != ST_OK) {
    st__case_result_set_status(cc->res, ST_CASE_ERROR, "args: out of memory");
    return ST_PHASE_ERROR;
  }
  rc = st_op_check(&call.op);
  if (rc != ST_OK) {
    msg = st__call_message_copy(&call.op, call.message);
    st__case_result_set_status(cc->res, ST_CASE_ERROR, "kernel: %s",
                               msg ? msg : st_status_str(rc));
    st__call_free(&call);
    return ST_PHASE_ERROR;
  }
  d->hooks = st_registry_platform_hooks(cc->run->reg, platform);
  if (d->hooks == NULL || d->hooks->prepare == NULL) {
    st__call_free(&call);
    return ST_PHASE_OK;
  }
  rc = d->hooks->prepare(&call.op, &d->platform_state);
  msg = st__call_returned(&call, "platform's prepare hook");
  st__call_free(&call);
  if (rc == ST_OK) {
    d->prepared = 1;
    return ST_PHASE_OK;
  }
  if (rc == ST_ESKIP) {
    st__case_result_set_status(cc->res, ST_CASE_SKIP, "%s",
                               msg ? msg : "platform declined the case");
    return ST_PHASE_SKIP;
  }
  st__case_result_set_status(cc->res, ST_CASE_ERROR,
                             "args: platform '%s' prepare: %s", platform,
                             msg ? msg : st_status_str(rc));
  return ST_PHASE_ERROR;
}

void st__case_release(st__casectx *cc, st__casedata *d) {
  st__argset none;
  st__call call;
  if (!d->prepared)
    return;
  d->prepared = 0;
  if (d->hooks->release == NULL)
    return;
  /* Out of memory for the copies, the hook still runs, without tensors
   * (a call over none allocates nothing). */
  memset(&none, 0, sizeof none);
  if (st__call_init(&call, d->plan.scene->kernel, cc->run->opts->platform,
                    &d->args, 0) != ST_OK &&
      st__call_init(&call, d->plan.scene->kernel, cc->run->opts->platform,
                    &none, 0) != ST_OK)
    return;
  call.op.platform_state = d->platform_state;
  d->hooks->release(&call.op, d->platform_state);
  (void)st__call_returned(&call, "platform's release hook");
  st__call_free(&call);
  d->platform_state = NULL;
}

void st__casedata_free(st__casedata *d) {
  st__case_determinism_free(d);
  st__argset_free(&d->gold); /* first: it may borrow init's inputs */
  st__argset_free(&d->init);
  st__argset_free(&d->args);
  st__plan_free(&d->plan);
}

/* A built-in op on the reference backend: the only golden known never to
 * write its inputs (a plugin may add ops to `reference`, but cannot
 * replace a built-in one: the registry refuses the conflict). */
static int golden_reads_only(const char *op, const char *backend) {
  if (strcmp(backend, ST_BACKEND_REFERENCE) != 0)
    return 0;
  for (size_t i = 0; st__builtin_ops[i] != NULL; i++)
    if (strcmp(op, st__builtin_ops[i]) == 0)
      return 1;
  return 0;
}

/* The gold set of a case whose every compared output has `expected:`
 * (golden_view.h): no golden runs; inputs are init's own buffers (nobody
 * writes them), outputs the expected values. */
static st_phase_status expected_gold(st__casectx *cc, st__casedata *d) {
  if (st__argset_clone_gold(&d->init, &d->plan, 1, &d->gold) != ST_OK) {
    st__case_result_set_status(cc->res, ST_CASE_ERROR, "args: out of memory");
    return ST_PHASE_ERROR;
  }
  return st__case_fill_expected(cc, d, "args");
}

/* The golden op called on its view of the gold set (golden_view.h: the
 * args it binds to, in its order), then the outputs that have `expected:`
 * overwritten with it. A declined golden is an error on the reference
 * backend (which cannot decline), else a skip. */
static st_phase_status call_golden(st__casectx *cc, const st_scene *scene,
                                   st__casedata *d, st_op_fn golden) {
  const size_t n = d->plan.n_args ? d->plan.n_args : 1;
  st__argset view = d->gold;
  st__call call;
  st_phase_status ps;
  size_t *idx = NULL;
  st_tensor *vt = NULL;
  st_scalar *vs = NULL;

  memset(&call, 0, sizeof call);
  if (!st__golden_view_is_all(scene, d->plan.kase)) {
    size_t m, nt = d->gold.n_tensors;
    idx = malloc(n * sizeof *idx);
    vt = calloc(n, sizeof *vt);
    vs = calloc(n, sizeof *vs);
    if (idx == NULL || vt == NULL || vs == NULL) {
      st__case_result_set_status(cc->res, ST_CASE_ERROR,
                                 "golden: out of memory");
      ps = ST_PHASE_ERROR;
      goto out;
    }
    m = st__golden_view(scene, d->plan.kase, idx);
    view.tensors = vt;
    view.scalars = vs;
    view.n_tensors = view.n_scalars = 0;
    for (size_t i = 0; i < m; i++) {
      if (idx[i] < nt)
        vt[view.n_tensors++] = d->gold.tensors[idx[i]];
      else if (idx[i] - nt < d->gold.n_scalars)
        vs[view.n_scalars++] = d->gold.scalars[idx[i] - nt];
    }
  }
  if (st__call_init(&call, scene->golden, d->golden_backend, &view,
                    cc->run->golden_threads) != ST_OK) {
    st__case_result_set_status(cc->res, ST_CASE_ERROR, "golden: out of memory");
    ps = ST_PHASE_ERROR;
    goto out;
  }
  /* tolerance: bound: the reference with its magnitude sums. */
  ps = st__bound_in_plan(&d->plan) ? st__bound_golden(cc, d, &call)
                                   : st__dispatch(cc, golden, &call, "golden");
  if (ps == ST_PHASE_SKIP &&
      strcmp(d->golden_backend, ST_BACKEND_REFERENCE) == 0) {
    /* The reference backend cannot decline: that is an error. */
    st__case_result_override(cc->res, ST_CASE_ERROR,
                             "golden declined the case");
    ps = ST_PHASE_ERROR;
  } else if (ps == ST_PHASE_SKIP) {
    /* Another golden backend may decline what it cannot compute (torch
     * without a CPU kernel for a dtype): the case is a skip
     * (docs/cli.md#exit-status). */
    char msg[ST_OP_MESSAGE_MAX + 32];
    snprintf(msg, sizeof msg, "golden declined: %s",
             call.message[0] ? call.message : "no reason given");
    st__case_result_override(cc->res, ST_CASE_SKIP, msg);
  }
  if (ps == ST_PHASE_OK)
    ps = st__case_fill_expected(cc, d, "golden");
out:
  st__call_free(&call);
  free(idx);
  free(vt);
  free(vs);
  return ps;
}

int st__case_prepare(st__casectx *cc, const st_scene *scene, size_t ci,
                     st__casedata *d) {
  const st_run_options *opts = cc->run->opts;
  const st__case *k = &scene->cases[ci];
  st_error err;
  st_op_fn golden = NULL;
  st_phase_status ps = ST_PHASE_OK;
  st_status rs;
  uint64_t t0;

  memset(d, 0, sizeof *d);
  st_error_clear(&err);
  /* --skip-golden > the case's skip_golden > the scene's. */
  d->skip_golden = opts->skip_golden     ? 1
                   : k->skip_golden >= 0 ? k->skip_golden
                                         : scene->skip_golden;
  /* A negative test's verdict is the kernel's status: no golden, no
   * compare (docs/scene-format.md, expect). */
  if (k->expect_error)
    d->skip_golden = 1;
  d->rounds = opts->rounds ? opts->rounds : (k->rounds ? k->rounds : 1);
  if (opts->determinism > d->rounds) /* docs/cli.md#determinism */
    d->rounds = opts->determinism;
  d->golden_backend = st__golden_backend(opts->golden_platform, scene, ci);

  /* args: the load already enforced the byte cap for every case. */
  st__phase_begin(cc, "args", -1);
  t0 = st__now_ns();
  st_error_list perr;
  st_error_list_init(&perr);
  rs = st__plan_resolve(scene, ci, UINT64_MAX, &d->plan, &perr);
  if (rs != ST_OK && rs != ST_ENOMEM && perr.count > 0)
    st_error_set(&err, ST_ELOAD, "%s", perr.items[0].message);
  st_error_list_free(&perr);
  if (rs != ST_OK) {
    /* The files of `file:` inits are checked again here: what the
     * resolution says (the file changed, is no longer a regular file) is
     * the message. */
    if (rs == ST_ENOMEM)
      st_error_set(&err, ST_ENOMEM, "out of memory resolving the case");
    else if (err.code == ST_OK)
      st_error_set(&err, ST_ELOAD, "cannot resolve the case's arguments");
    ps = ST_PHASE_ERROR;
  } else if (st__args_build(&d->plan, opts->seed, &d->args, &err) != ST_OK ||
             st__argset_clone_init(&d->args, &d->plan, &d->init) != ST_OK) {
    if (err.code == ST_OK)
      st_error_set(&err, ST_ENOMEM, "out of memory building arguments");
    ps = ST_PHASE_ERROR;
  }
  if (ps != ST_PHASE_OK)
    st__case_result_set_status(cc->res, ST_CASE_ERROR, "args: %s", err.message);
  else if (!(cc->exec_flags & ST__EXEC_OWN_KERNEL))
    ps = bind_kernel(cc, scene, d);
  /* Every compared output has `expected:`: compare's values are made
   * here, and no golden phase runs. */
  const int need_golden = st__golden_needed(scene, k);
  if (ps == ST_PHASE_OK && !d->skip_golden && !need_golden)
    ps = expected_gold(cc, d);
  st__phase_end(cc, "args", -1, t0, ps, 0);
  if (ps != ST_PHASE_OK)
    return 0;
  if (d->skip_golden || !need_golden)
    return 1;

  /* golden: on the golden backend (reference unless --golden-platform or
   * golden_platform says otherwise), on a copy of the initial args (a
   * built-in reference op, which never writes its inputs, reads init's
   * inputs in place instead of copies of them: fewer buffers a case). The
   * record comes after it because the golden lookup may load libraries
   * lazily (a torch golden loads libtorch here). */
  st__phase_begin(cc, "golden", -1);
  t0 = st__now_ns();
  st_error_clear(&err);
  if (st_registry_lookup(cc->run->reg, scene->golden, d->golden_backend,
                         ST_LOOKUP_GOLDEN, &golden, &err) != ST_OK) {
    st__case_result_set_status(cc->res, ST_CASE_ERROR, "%s", err.message);
    ps = ST_PHASE_ERROR;
  } else if (st__argset_clone_gold(
                 &d->init, &d->plan,
                 golden_reads_only(scene->golden, d->golden_backend),
                 &d->gold) != ST_OK) {
    st__case_result_set_status(cc->res, ST_CASE_ERROR, "golden: out of memory");
    ps = ST_PHASE_ERROR;
  } else if (scene->program != NULL) {
    ps = st__golden_program_run(cc, scene, ci, d, golden);
  } else {
    ps = call_golden(cc, scene, d, golden);
  }
  st__phase_end(cc, "golden", -1, t0, ps, 0);
  return ps == ST_PHASE_OK;
}

void st__case_record(st__casectx *cc) {
  char line[4096];
  uint64_t t0;
  int emitted;
  /* After the last phase that may load a watched module (golden, rehost),
   * before the first run. */
  st__phase_begin(cc, "record", -1);
  t0 = st__now_ns();
  /* The emitting case keeps the line for the JSON and JUnit reports. */
  emitted = st__record_emit_env(
      cc->run->watch, cc->run->n_watch, cc->run->any_env, cc->env_key,
      cc->run->opts->keep_record ? line : NULL, sizeof line);
  if (emitted && cc->run->opts->keep_record)
    st__case_result_set_record(cc->res, line);
  /* Right after the process's first record (docs/bench.md). */
  if (emitted)
    st__fingerprint_log_once(cc->run->reg, cc->run->opts->platform);
  st__phase_end(cc, "record", -1, t0, ST_PHASE_OK, emitted);
}

static void case_reset(st__casectx *cc, st__casedata *d, unsigned round) {
  uint64_t t0;
  /* Later rounds start from the initial outputs again. */
  st__phase_begin(cc, "reset", (int)round);
  t0 = st__now_ns();
  st__argset_copy_data(&d->args, &d->init, 1);
  st__phase_end(cc, "reset", (int)round, t0, ST_PHASE_OK, 0);
}

/* docs/reliability.md#guard-zones-guard-pages-and-poisoning: outputs with no
 * explicit init start every run as the poison, after reset (which keeps its
 * meaning: the initial values, the zeros the golden ran on) and before `run`
 * begins, so the fill is not timed as the kernel's. */
static void poison_outputs(st__casedata *d) {
  for (size_t i = 0; i < d->args.n_tensors && i < d->plan.n_args; i++)
    if (d->plan.args[i].poison)
      st__poison_fill(&d->args.tensors[i]);
}

uint64_t st__case_run_begin(st__casectx *cc, st__casedata *d, unsigned round) {
  if (round > 0)
    case_reset(cc, d, round);
  poison_outputs(d);
  st__phase_begin(cc, "run", (int)round);
  return st__now_ns();
}

int st__case_compare(st__casectx *cc, st__casedata *d, unsigned round) {
  uint64_t t0;
  st_phase_status ps;
  if (d->skip_golden)
    return 1;
  st__phase_begin(cc, "compare", (int)round);
  t0 = st__now_ns();
  if (round == 0)
    st__case_mistrust(cc, d);
  ps = st__compare_all(cc, &d->plan, &d->args, &d->gold, &d->init, round,
                       d->rounds);
  if (ps == ST_PHASE_OK)
    ps = st__case_determinism(cc, d, round);
  st__phase_end(cc, "compare", (int)round, t0, ps, 0);
  return ps == ST_PHASE_OK;
}

unsigned st__iteration_of(const st__runctx *rc, size_t i) {
  return rc->iters != NULL ? rc->iters[i] : 1;
}

void st__case_info_fill(st_case_info *info, const st__runctx *rc,
                        const st_case_ref *ref, size_t i, size_t n) {
  memset(info, 0, sizeof *info);
  info->scene = ref->scene->name;
  info->name = ref->scene->cases[ref->index].name;
  info->file = ref->scene->file;
  info->line = ref->scene->cases[ref->index].line;
  info->platform = rc->opts->platform;
  info->seed = rc->opts->seed;
  info->index = i;
  info->total = n;
  info->iteration = st__iteration_of(rc, i);
}
