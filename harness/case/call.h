/* SPDX-License-Identifier: MIT */
/* Calling foreign code (a kernel, a golden backend, a platform's prepare
 * and release hooks) and what the harness keeps to itself across the
 * call. The callee holds the st_op_call and may write any byte of it and
 * of its tensor array (a tensor's data, numel, dtype, role or shape; a
 * message without its NUL), and it may fork and return in both
 * processes. So the callee gets copies of the harness's tensor
 * descriptors, made for its call and never read back (the harness goes on
 * with its own argset); its message is read within its field into the
 * harness's own buffer; and a process that returns from the call but did
 * not make it (the callee's fork) ends there, reporting nothing: only the
 * process that started a run reports it
 * (docs/reliability.md#what-a-kernel-cannot-change). */
#ifndef SCENETEST_HARNESS_CALL_H
#define SCENETEST_HARNESS_CALL_H

#include <sys/types.h>

#include <scenetest/op.h>

#include "base/proc.h"
#include "case/args.h"

/* The tensors a call holds in itself; more are allocated. */
#define ST__CALL_INLINE 8
/* How a process ends that returned from a call it did not make (125). */
#define ST__CALL_STRAY_EXIT ST__EXIT_CHARGED

/* One call of foreign code over an argset. */
typedef struct st__call {
  st_op_call op; /* the callee's: nothing in it is read back but its
                  * outputs (device_ns, copy_ns, the bounded message) */
  st_tensor inline_tensors[ST__CALL_INLINE];
  st_tensor *heap; /* owned: the copies when there are more */
  pid_t self;      /* the process that makes the call */
  /* op.message once the callee returned (st__call_returned): all of its
   * field, NUL-terminated. The harness's own. */
  char message[ST_OP_MESSAGE_MAX + 1];
} st__call;

/* Prepares a call of op on backend over set, shard 0 of 1: op.tensors are
 * copies of set's descriptors (set is not borrowed), op.scalars set's.
 * ST_ENOMEM when the copies cannot be allocated (nothing to free then).
 * Thread-safety: any thread. */
st_status st__call_init(st__call *c /* OUT */, const char *op /* IN */,
                        const char *backend /* IN */,
                        const st__argset *set /* IN */,
                        unsigned max_threads) ST_WUR;
/* Frees what st__call_init allocated; accepts a zeroed call. */
void st__call_free(st__call *c /* IN/OUT */);
/* After the callee returned: a process other than the one that made the
 * call ends at once (st__call_stray_check), then the message is taken
 * into c->message. Returns c->message, or NULL when the callee wrote
 * none. Thread-safety: one thread per call. */
const char *st__call_returned(st__call *c /* IN/OUT */,
                              const char *what /* IN: "kernel", ... */);
/* A process whose id is not self returned from foreign code what (a fork
 * the code made): it writes one line to fd 2 and ends with
 * ST__CALL_STRAY_EXIT, running no exit handler and flushing no stream
 * (what they hold is its parent's, which reports it). Nothing when this
 * is self. Thread-safety: any thread. */
void st__call_stray_check(pid_t self, const char *what /* IN */);
/* The message of call, read within its field: copied into out
 * (NUL-terminated, at most ST_OP_MESSAGE_MAX bytes). Returns out, or NULL
 * when it is empty. Thread-safety: any thread. */
const char *st__call_message_copy(const st_op_call *call /* IN */,
                                  char out[ST_OP_MESSAGE_MAX + 1] /* OUT */);

#endif
