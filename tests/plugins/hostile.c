/* SPDX-License-Identifier: MIT */
/* A test plugin for the machine reports (tests/cli/test_reports.py) and
 * the supervised bench (tests/cli/test_bench.py): the
 * platform "hostile", whose kernels produce each outcome a report must
 * carry, with bytes that a careless writer would let break XML or JSON:
 *   add   correct, after printing hostile bytes (a NUL, invalid UTF-8,
 *         "]]>", control characters) to stdout and stderr: a pass with
 *         captured output (under --isolate)
 *   copy  declines the case with a hostile reason: a skip
 *   relu  fails with a hostile message: an error
 *   mul   raises SIGSEGV: a crash (under --isolate)
 *   sub   never returns: a timeout
 *   reduce_sum  calls exit(7) in the middle of its case (test_bench.py)
 * and no `scale`, for a missing implementation. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <scenetest/scenetest.h>

ST_PLUGIN_PLATFORMS("hostile");

/* Invalid UTF-8 (a lone continuation byte, a truncated sequence, an
 * encoded surrogate, an overlong '/'), C0 controls and DEL, U+FFFE, the
 * CDATA end, markup and entities, CR LF, and valid non-ASCII text. */
#define HOSTILE                                                                \
  "bad\x80\xff\xe2\x82 sur\xed\xa0\x80 long\xc0\xaf ctl\x01\x02\x1b[31m\x7f "  \
  "nonchar\xef\xbf\xbe ]]> <t a=\"q\">&amp;&#0; cr\r\nok caf\xc3\xa9 "         \
  "\xf0\x9f\x98\x80"

static st_status hostile_add(st_op_call *c) {
  static const char with_nul[] = "before-nul\0after-nul\n";
  size_t i;
  fputs("stdout: " HOSTILE "\n", stdout);
  fwrite(with_nul, 1, sizeof with_nul - 1, stdout);
  fflush(stdout);
  fputs("stderr: " HOSTILE "\n", stderr);
  for (i = 0; i < c->tensors[2].numel; i++)
    st_tensor_set_f64(&c->tensors[2], i,
                      st_tensor_get_f64(&c->tensors[0], i) +
                          st_tensor_get_f64(&c->tensors[1], i));
  return ST_OK;
}

static st_status hostile_decline(st_op_call *c) {
  return st_op_call_fail(c, ST_ESKIP, "declined: %s", HOSTILE);
}

static st_status hostile_error(st_op_call *c) {
  return st_op_call_fail(c, ST_EKERNEL, "kernel failed: %s", HOSTILE);
}

static st_status hostile_crash(st_op_call *c) {
  (void)c;
  raise(SIGSEGV);
  return ST_OK;
}

static st_status hostile_hang(st_op_call *c) {
  (void)c;
  for (;;)
    pause();
  return ST_OK;
}

static st_status hostile_exit(st_op_call *c) {
  (void)c;
  exit(7);
}

static st_status init(st_registry *reg, st_error *err) {
  static const struct {
    const char *op;
    st_op_fn fn;
  } ops[] = {{"add", hostile_add},    {"copy", hostile_decline},
             {"relu", hostile_error}, {"mul", hostile_crash},
             {"sub", hostile_hang},   {"reduce_sum", hostile_exit}};
  size_t i;
  for (i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    st_status rc = st_registry_register(reg, "hostile", ops[i].op, "hostile",
                                        ops[i].fn, err);
    if (rc != ST_OK)
      return rc;
  }
  return ST_OK;
}

static const char *const platforms[] = {"hostile", NULL};
__attribute__((visibility("default"))) const st_module scenetest_module = {
    ST_ABI_VERSION, sizeof(st_module), "hostile", platforms, init};
