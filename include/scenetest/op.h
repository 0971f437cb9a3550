/* SPDX-License-Identifier: MIT */
/* The op calling convention: what an implementation (built-in or plugin)
 * receives and returns. */
#ifndef SCENETEST_OP_H
#define SCENETEST_OP_H

#include <scenetest/program.h>
#include <scenetest/tensor.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ST_OP_MESSAGE_MAX 512
/* A device_ns/copy_ns value meaning "not reported". */
#define ST_NS_NONE UINT64_MAX

/* One call of an op implementation.
 *
 * tensors/scalars are in the scene's argument order (tensors first).
 * The implementation computes shard shard_index of shard_count (level 2
 * passes 0 of 1; level 3 one shard per worker). max_threads caps the
 * threads it may use (the reference backend gets --golden-threads).
 *
 * An implementation returns ST_OK; ST_EBIND when the bound arguments do not
 * fit the op (message names the mismatch); ST_ESKIP to decline the case
 * (message gives the reason); any other failure with a message. It writes
 * the message with st_op_call_fail().
 *
 * The harness allocates the call with st_op_call_init(); size is the
 * sizeof(st_op_call) the harness was compiled with. A plugin built against
 * newer headers reads or writes a field added after ABI 2 only when size
 * covers it. A platform that measures its kernel writes device_ns (the
 * kernel's own device time) and copy_ns (its host<->device copies); both
 * stay ST_NS_NONE otherwise. */
typedef struct st_op_call {
  size_t size;         /* sizeof(st_op_call) as the allocator compiled it */
  const char *op;      /* op name; owned by the harness */
  const char *backend; /* backend name; owned by the harness */
  st_tensor *tensors;  /* owned by the harness */
  size_t n_tensors;
  const st_scalar *scalars; /* owned by the harness */
  size_t n_scalars;
  unsigned shard_index;
  unsigned shard_count;
  unsigned max_threads;
  /* The state the platform's prepare hook returned (st_platform_hooks);
   * NULL without hooks. Owned by the platform. */
  void *platform_state;
  uint64_t device_ns; /* OUT: kernel's device time; ST_NS_NONE: none */
  uint64_t copy_ns;   /* OUT: host<->device copy time; ST_NS_NONE: none */
  char message[ST_OP_MESSAGE_MAX];
  /* Added after ABI 2's first layout (read or written only when size
   * covers them; docs/plugins.md). For op ST_PROGRAM_OP: the golden
   * program (else NULL), and where a failure lies in it. */
  const st_program *program; /* owned by the harness */
  /* n_tensors flags, or NULL: a program sets written[i] = 1 for each
   * output or inout it computed (the others are not compared). On entry
   * written[i] is 2 for an output the scene does not compare (compare:
   * false): it takes no result. */
  unsigned char *written;
  int program_line;   /* OUT: 1-based line of a compile error in source */
  int program_column; /* OUT: its 1-based column; 0: unknown */
  int program_step;   /* OUT: 1-based index of the failing step; 0: none */
} st_op_call;

typedef st_status (*st_op_fn)(st_op_call *call /* IN/OUT */);

/* Zeroes *call, sets size to sizeof(st_op_call), shard 0 of 1, one
 * thread, and device_ns/copy_ns to ST_NS_NONE. Thread-safety: any thread. */
ST_EXTERN void st_op_call_init(st_op_call *call /* OUT */);

/* Records a message in call->message (the first one wins) and returns
 * code (not ST_WUR: the result is the code passed in, as st_error_set's).
 * Thread-safety: one thread per call. */
ST_EXTERN st_status st_op_call_fail(st_op_call *call /* IN/OUT */,
                                    st_status code,
                                    const char *fmt /* IN: printf format */,
                                    ...) ST_PRINTF(3, 4);

/* Validates the bound arguments of a built-in op (count, dtypes, shapes);
 * ST_OK for ops it does not know (a plugin's op validates itself).
 * On mismatch returns ST_EBIND with call->message naming it.
 * Thread-safety: any thread. */
ST_EXTERN st_status st_op_check(st_op_call *call /* IN/OUT */) ST_WUR;

/* The element range [*begin, *end) of shard shard_index of shard_count over
 * n items (contiguous blocks, the first n % count shards one larger).
 * Thread-safety: any thread. */
ST_EXTERN void st_shard_range(size_t n, unsigned shard_index,
                              unsigned shard_count, size_t *begin /* OUT */,
                              size_t *end /* OUT */);

#ifdef __cplusplus
}
#endif
#endif
