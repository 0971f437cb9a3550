/* SPDX-License-Identifier: MIT */
/* A test plugin whose kernel attacks the harness's own state through its
 * call (tests/cli/test_hostile_kernel.py): platform `scribble`, ops `copy`
 * (y = x) and `reduce_sum`. On a case whose x has 13 elements (the
 * scene's bad case; every other case is computed right) the kernel does
 * what $ST_TEST_SCRIBBLE names:
 *   skip_after_write  writes 3 elements past the end of y, then declines
 *                     the case (ST_ESKIP)
 *   alias_input       writes nothing and points y's data at x
 *   own_buffer        copies x into a buffer of its own and points y's
 *                     data at it
 *   zero_numel        writes nothing and makes y 0 elements long
 *   long_message      fills the whole message field (no NUL) and fails
 *   fork_both         forks, and both processes compute y and return
 *   slow_abort        takes 0.4 s, then aborts
 *   hangs             never returns
 * (reduce_sum: alias_input, each shard's sum in a cell of the kernel's
 * own, y pointed at it.) */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <scenetest/scenetest.h>

ST_PLUGIN_PLATFORMS("scribble");

#define BAD_NUMEL 13

static int is(const char *what) {
  const char *how = getenv("ST_TEST_SCRIBBLE");
  return how != NULL && strcmp(how, what) == 0;
}

static void copy_into(void *dst, const st_tensor *x) {
  memcpy(dst, x->data, x->nbytes);
}

static st_status scribble_copy(st_op_call *c) {
  st_tensor *x = &c->tensors[0], *y = &c->tensors[1];
  if (x->numel != BAD_NUMEL) {
    copy_into(y->data, x);
    return ST_OK;
  }
  if (is("skip_after_write")) {
    volatile unsigned char *w = y->data; /* stores that stay */
    size_t i, es = y->nbytes / y->numel;
    for (i = y->nbytes; i < y->nbytes + 3 * es; i++)
      w[i] = 0x5a;
    return st_op_call_fail(c, ST_ESKIP, "declined after writing");
  }
  if (is("alias_input")) {
    y->data = x->data;
    return ST_OK;
  }
  if (is("own_buffer")) {
    /* Kept: reachable, so no leak report at the end. */
    static void *mine;
    free(mine);
    if ((mine = malloc(x->nbytes)) == NULL)
      return st_op_call_fail(c, ST_ENOMEM, "out of memory");
    copy_into(mine, x);
    y->data = mine;
    return ST_OK;
  }
  if (is("zero_numel")) {
    y->numel = 0;
    y->nbytes = 0;
    y->ndim = 1;
    y->shape[0] = 0;
    return ST_OK;
  }
  if (is("long_message")) {
    memset(c->message, 'M', sizeof c->message);
    return ST_EKERNEL;
  }
  if (is("fork_both")) {
    if (fork() < 0)
      return st_op_call_fail(c, ST_EKERNEL, "fork failed");
    copy_into(y->data, x);
    return ST_OK;
  }
  if (is("slow_abort")) {
    struct timespec ts = {0, 400 * 1000 * 1000};
    while (nanosleep(&ts, &ts) != 0)
      ;
    abort();
  }
  if (is("hangs"))
    for (;;)
      pause();
  copy_into(y->data, x);
  return ST_OK;
}

/* This shard's sum of x, as double or int64 by x's dtype, into out. */
static void shard_sum(const st_op_call *c, st_tensor *out) {
  const st_tensor *x = &c->tensors[0];
  size_t b, e, i;
  double f = 0;
  int64_t n = 0;
  st_shard_range(x->numel, c->shard_index, c->shard_count, &b, &e);
  for (i = b; i < e; i++) {
    f += st_tensor_get_f64(x, i);
    n += st_tensor_get_i64(x, i);
  }
  if (out->dtype == ST_DTYPE_FLOAT32 || out->dtype == ST_DTYPE_FLOAT64)
    st_tensor_set_f64(out, 0, f);
  else
    st_tensor_set_i64(out, 0, n);
}

static st_status scribble_reduce(st_op_call *c) {
  st_tensor *y = &c->tensors[1];
  if (c->tensors[0].numel == BAD_NUMEL && is("alias_input")) {
    /* The harness's cell is left alone; the sum goes to ours. */
    static int64_t cell;
    y->data = &cell;
  }
  shard_sum(c, y);
  return ST_OK;
}

static st_status init(st_registry *reg, st_error *err) {
  st_status rc = st_registry_register(reg, "scribble", "copy", "scribble",
                                      scribble_copy, err);
  if (rc != ST_OK)
    return rc;
  return st_registry_register(reg, "scribble", "reduce_sum", "scribble",
                              scribble_reduce, err);
}

static const char *const platforms[] = {"scribble", NULL};
__attribute__((visibility("default"))) const st_module scenetest_module = {
    ST_ABI_VERSION, sizeof(st_module), "scribble", platforms, init};
