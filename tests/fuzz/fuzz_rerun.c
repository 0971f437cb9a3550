/* SPDX-License-Identifier: MIT */
/* libFuzzer target for the --rerun-failed readers (cli/rerun_parse.c):
 * any bytes as a report file (events, JSON, JUnit, TAP); the readers must
 * not crash, hang, read out of bounds or leak; every name they return
 * holds "::", and text with a NUL byte is never a report. The same bytes
 * go through the --shard-by durations reader (st__durations_parse), whose
 * stop offset stays inside the text. Seeds in tests/fuzz/rerun. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/rerun_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char **names = NULL;
  size_t n = 99, i;
  /* An exact-size copy: a read past the end is ASan's to see. */
  char *text = malloc(size ? size : 1);
  int rc;
  if (text == NULL)
    return 0;
  memcpy(text, data, size);
  rc = st__rerun_parse(text, size, &names, &n);
  if (rc != 0 && (names != NULL || n != 0))
    abort();
  if (rc != 0 && rc != ST__RERUN_NOT_A_REPORT && rc != ST__RERUN_NOMEM)
    abort();
  for (i = 0; i < n; i++)
    if (strstr(names[i], "::") == NULL)
      abort();
  if (rc == 0 && memchr(text, '\0', size) != NULL)
    abort();
  st__names_free(names, n);
  {
    uint64_t *durs = NULL;
    size_t stop = (size_t)-1;
    names = NULL;
    n = 99;
    rc = st__durations_parse(text, size, &names, &durs, &n, &stop);
    if (stop > size || (rc != 0 && (names != NULL || durs != NULL || n != 0)))
      abort();
    if (rc != 0 && rc != ST__RERUN_NOT_A_REPORT && rc != ST__RERUN_NOMEM)
      abort();
    for (i = 0; i < n; i++)
      if (strstr(names[i], "::") == NULL)
        abort();
    st__names_free(names, n);
    free(durs);
  }
  free(text);
  return 0;
}
