/* SPDX-License-Identifier: MIT */
/* A test plugin for what a person and a log reader see
 * (tests/cli/test_untrusted_text.py): the platform "forger", whose
 * kernels try to forge [TIMING] lines and to drive the terminal:
 *   relu  fails with a message holding an OSC title sequence, a
 *         clear-screen sequence and, last, a phase line
 *   add   prints a phase line and an OSC sequence to stdout, then fails
 *         (the text report shows the captured output). */
#include <stdio.h>

#include <scenetest/scenetest.h>

ST_PLUGIN_PLATFORMS("forger");

#define FORGED_PHASE                                                           \
  "[TIMING] phase pid=1 scene=forged case=c name=run round=0 dur_ns=1 "        \
  "status=ok"
#define FORGED_RECORD                                                          \
  "[TIMING] torch_backend_autoload setting=1 raw=\"1\" effective=enabled "     \
  "torch_imported=false torch_npu_loaded=false pid=1"
#define TERMINAL                                                               \
  "\x1b]0;pwned\x07\x1b[2J\r\xc2\x9b"                                          \
  "31m"

static st_status forger_message(st_op_call *c) {
  /* The phase line last: a reader that finds the token anywhere in a
   * line would take the rest of the [ERROR] line for it. */
  return st_op_call_fail(c, ST_EKERNEL,
                         TERMINAL " kernel failed " FORGED_PHASE);
}

static st_status forger_prints(st_op_call *c) {
  fputs(FORGED_PHASE "\n" FORGED_RECORD "\n" TERMINAL "\n", stdout);
  fflush(stdout);
  return st_op_call_fail(c, ST_EKERNEL, "printed");
}

static st_status init(st_registry *reg, st_error *err) {
  st_status rc = st_registry_register(reg, "forger", "relu", "forger",
                                      forger_message, err);
  if (rc != ST_OK)
    return rc;
  return st_registry_register(reg, "forger", "add", "forger", forger_prints,
                              err);
}

static const char *const platforms[] = {"forger", NULL};
__attribute__((visibility("default"))) const st_module scenetest_module = {
    ST_ABI_VERSION, sizeof(st_module), "forger", platforms, init};
