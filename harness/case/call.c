/* SPDX-License-Identifier: MIT */
/* Calling foreign code (case/call.h): the callee's copies of the tensor
 * descriptors, its message read within its field, and the end of a
 * process it forked that returns into the harness. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/proc.h"
#include "case/call.h"

st_status st__call_init(st__call *c, const char *op, const char *backend,
                        const st__argset *set, unsigned max_threads) {
  st_tensor *t = c->inline_tensors;
  c->heap = NULL;
  if (set->n_tensors > ST__CALL_INLINE) {
    if ((c->heap = malloc(set->n_tensors * sizeof *c->heap)) == NULL)
      return ST_ENOMEM;
    t = c->heap;
  }
  if (set->n_tensors > 0)
    memcpy(t, set->tensors, set->n_tensors * sizeof *t);
  st_op_call_init(&c->op);
  c->op.op = op;
  c->op.backend = backend;
  c->op.tensors = t;
  c->op.n_tensors = set->n_tensors;
  c->op.scalars = set->scalars;
  c->op.n_scalars = set->n_scalars;
  c->op.shard_index = 0;
  c->op.shard_count = 1;
  c->op.max_threads = max_threads;
  /* Cached: a fork()ed process re-reads it (base/proc.h). */
  c->self = st__proc_pid();
  c->message[0] = '\0';
  return ST_OK;
}

void st__call_free(st__call *c) {
  free(c->heap);
  c->heap = NULL;
}

void st__call_stray_check(pid_t self, const char *what) {
  char line[256];
  int n;
  /* getpid(2), not the cache: a callee that forks with a raw system call
   * runs no atfork handler. One system call a call. */
  pid_t now = getpid();
  if (now == self)
    return;
  n = snprintf(line, sizeof line,
               "scenetest: error: process %ld, forked in a call of the %s, "
               "returned into the harness; it ends here (only process %ld "
               "reports the run)\n",
               (long)now, what, (long)self);
  if (n > 0 &&
      st__proc_write_all(2, line,
                         (size_t)n < sizeof line ? (size_t)n
                                                 : sizeof line - 1) != ST_OK) {
    /* Nobody to tell. */
  }
  _exit(ST__CALL_STRAY_EXIT);
}

const char *st__call_message_copy(const st_op_call *call,
                                  char out[ST_OP_MESSAGE_MAX + 1]) {
  size_t n = strnlen(call->message, sizeof call->message);
  memcpy(out, call->message, n);
  out[n] = '\0';
  return n > 0 ? out : NULL;
}

const char *st__call_returned(st__call *c, const char *what) {
  st__call_stray_check(c->self, what);
  return st__call_message_copy(&c->op, c->message);
}
