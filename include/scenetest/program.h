/* SPDX-License-Identifier: MIT */
/* Golden programs (docs/torch.md): a golden written as TorchScript source
 * or as a list of ATen operator calls instead of one op name. The harness
 * never runs one itself: it hands the program to the backend that does (the
 * torch plugin) as an op call of the op ST_PROGRAM_OP whose
 * st_op_call.program points at it, so the harness links no libtorch. */
#ifndef SCENETEST_PROGRAM_H
#define SCENETEST_PROGRAM_H

#include <scenetest/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The op a golden program is called as, on backend ST_PROGRAM_BACKEND.
 * A call of it with call->program NULL (or a size that does not cover the
 * field) is a binding error. */
#define ST_PROGRAM_OP "torch::program"
#define ST_PROGRAM_BACKEND "torch"

typedef enum st_program_kind {
  ST_PROGRAM_TORCHSCRIPT = 0, /* `golden: {torchscript: ...}` or `{file:}` */
  ST_PROGRAM_STEPS = 1        /* `golden: {steps: [...], returns: {...}}` */
} st_program_kind;

/* What a step argument is bound to. */
typedef enum st_program_value_kind {
  ST_PROGRAM_NAME = 0,   /* a scene arg or an earlier step's value; a str
                            schema argument takes the text when no value
                            has that name */
  ST_PROGRAM_INT = 1,    /* i */
  ST_PROGRAM_FLOAT = 2,  /* f */
  ST_PROGRAM_BOOL = 3,   /* i: 0 or 1 */
  ST_PROGRAM_STRING = 4, /* text (a quoted or non-identifier string) */
  ST_PROGRAM_INTS = 5    /* ints[0..n_ints) */
} st_program_value_kind;

typedef struct st_program_value {
  st_program_value_kind kind;
  const char *text; /* NAME, STRING */
  int64_t i;
  double f;
  const int64_t *ints;
  size_t n_ints;
} st_program_value;

/* One `name: value` of a step's args. */
typedef struct st_program_arg {
  const char *name;
  st_program_value value;
} st_program_arg;

/* One step: an ATen operator by schema name ("aten::add.Tensor"), its
 * arguments by name, the names its returns get (in order; fewer names than
 * returns leave the rest unnamed). */
typedef struct st_program_step {
  const char *op;
  const st_program_arg *args;
  size_t n_args;
  const char *const *outs;
  size_t n_outs;
} st_program_step;

/* `returns:` of a steps program: output (or inout) arg -> value name. */
typedef struct st_program_return {
  const char *output;
  const char *value;
} st_program_return;

/* A golden program. Every pointer is owned by the harness and valid for the
 * duration of the call. A backend built against newer headers reads a field
 * added later only when size covers it. */
typedef struct st_program {
  size_t size; /* sizeof(st_program) as the harness compiled it */
  st_program_kind kind;
  const char *source;           /* TORCHSCRIPT: the source text */
  const char *function;         /* TORCHSCRIPT: the function to call */
  const st_program_step *steps; /* STEPS */
  size_t n_steps;
  const st_program_return *returns; /* STEPS, when has_returns */
  size_t n_returns;
  int has_returns;    /* 0: each output takes the value of its name */
  const char *device; /* "cpu" or "cuda" (golden_device) */
  int compile_only;   /* 1 (`scenetest check`): compile or bind the
                         program and report its errors, compute nothing;
                         the tensors then have no data and their dtypes
                         and shapes are not known */
} st_program;

#ifdef __cplusplus
}
#endif
#endif
