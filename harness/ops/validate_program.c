/* SPDX-License-Identifier: MIT */
/* `scenetest check` and golden programs (docs/torch.md): when the run has
 * the torch plugin, every program is compiled (TorchScript) or bound
 * (steps) by it, without running anything, and what it reports becomes a
 * load error at the line it comes from: the script line (the block's first
 * line + N - 1, the column read off TorchScript's caret), or the step.
 * Without the plugin the program is counted, and the CLI says once that
 * it could not be compiled. Only `check` does this: a run compiles in the
 * `golden` phase, where libtorch is meant to load (docs/torch.md). */
#include <stdlib.h>
#include <string.h>

#include <scenetest/program.h>

#include "ops/validate.h"
#include "scene/program.h"

/* Where the call's failure is in the scene file. A program of its own
 * file (`file:`) is placed at the `golden:` key, the message naming
 * FILE:LINE:COL of the program file. */
static void report(const st__program *p, const st_op_call *call, st__diag *d) {
  int line = p->line, col = p->column;
  if (call->program_line > 0) {
    st__program_source_pos(p, call->program_line, call->program_column, &line,
                           &col);
    if (col == 0)
      col = p->src_column;
    if (p->in_file && p->src_file != NULL) {
      st__diag_error(d, p->line, p->column, "%s:%d:%d: %s", p->src_file, line,
                     col, call->message);
      return;
    }
  } else if (call->program_step > 0 &&
             (size_t)call->program_step <= p->pub.n_steps) {
    line = p->step_line[call->program_step - 1];
    col = p->step_column[call->program_step - 1];
  } else if (strncmp(call->message, "function '", 10) == 0) {
    line = p->function_line;
    col = p->function_column;
  } else if (strncmp(call->message, "returns", 7) == 0 ||
             strncmp(call->message, "output", 6) == 0) {
    line = p->returns_line;
    col = p->returns_column;
  }
  st__diag_error(d, line, col, "golden program: %s", call->message);
}

void st__validate_program(st__validate *v, const st_scene *s, st__diag *d) {
  const st__program *p = s->program;
  st_op_fn fn = NULL;
  st_error err;
  if (p->pub.kind == ST_PROGRAM_TORCHSCRIPT && p->pub.source == NULL)
    return; /* the loader reported why */
  st_error_clear(&err);
  if (!st_registry_has_platform(v->registry, ST_PROGRAM_BACKEND) ||
      st_registry_lookup(v->registry, ST_PROGRAM_OP, ST_PROGRAM_BACKEND,
                         ST_LOOKUP_GOLDEN, &fn, &err) != ST_OK) {
    v->uncompiled++;
    return;
  }
  /* The args as names and kinds: dtypes and shapes may be params, known
   * per case only, and a program is checked once. */
  size_t n = s->n_args ? s->n_args : 1, nt = 0, ns = 0;
  st_tensor *t = calloc(n, sizeof *t);
  st_scalar *sc = calloc(n, sizeof *sc);
  if (t == NULL || sc == NULL)
    goto out; /* the run compiles again; only the early error is lost */
  for (size_t i = 0; i < s->n_args; i++) {
    const st__arg *a = &s->args[i];
    if (a->name == NULL ||
        (!a->is_tensor && a->scalar_kind == ST_SCALAR_STRING &&
         a->string == NULL))
      goto out; /* the loader reported why */
    if (a->is_tensor) {
      t[nt].name = a->name;
      t[nt].role = a->role;
      t[nt++].dtype = ST_DTYPE_FLOAT32;
    } else {
      sc[ns].name = a->name;
      sc[ns].kind = a->scalar_kind;
      sc[ns].string = a->string;
      sc[ns++].dtype = ST_DTYPE_INT64;
    }
  }
  st_program prog = p->pub;
  prog.compile_only = 1;
  prog.device = "cpu";
  st_op_call call;
  st_op_call_init(&call);
  call.op = ST_PROGRAM_OP;
  call.backend = ST_PROGRAM_BACKEND;
  call.tensors = t;
  call.n_tensors = nt;
  call.scalars = sc;
  call.n_scalars = ns;
  call.program = &prog;
  if (fn(&call) != ST_OK)
    report(p, &call, d);
out:
  free(t);
  free(sc);
}
