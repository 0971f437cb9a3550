/* SPDX-License-Identifier: MIT */
/* --rerun-failed FILE (docs/cli.md, pytest's --lf): the cases an earlier
 * report says failed, errored or passed unexpectedly. This file reads
 * FILE whole (at most 1 GiB) and hands its bytes to the readers of
 * rerun_parse.c; a file that is none of our reports is a usage error. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "cli/cli_internal.h"
#include "cli/rerun_parse.h"

#define MAX_REPORT_BYTES (1u << 30)

int st__rerun_read(const char *path, char ***out_names, size_t *n) {
  FILE *f = fopen(path, "rbe");
  char *text = NULL;
  size_t len = 0, cap = 0;
  int rc;

  *out_names = NULL;
  *n = 0;
  if (f == NULL)
    return st__cli_usage("--rerun-failed: cannot read '%s': %s", path,
                         strerror(errno));
  for (;;) {
    size_t got;
    if (cap - len < 65536) {
      char *grown;
      cap = cap ? cap * 2 : 65536;
      if (cap > MAX_REPORT_BYTES + 1 ||
          (grown = st__array_resize(text, cap, 1)) == NULL) {
        free(text);
        fclose(f);
        return st__cli_usage("--rerun-failed: '%s' is too large to be a report",
                             path);
      }
      text = grown;
    }
    got = fread(text + len, 1, cap - len - 1, f);
    len += got;
    if (got == 0)
      break;
  }
  if (ferror(f)) {
    free(text);
    fclose(f);
    return st__cli_usage("--rerun-failed: cannot read '%s'", path);
  }
  fclose(f);
  rc = st__rerun_parse(text, len, out_names, n);
  free(text);
  if (rc == ST__RERUN_NOMEM) {
    fputs("scenetest: error: internal error: out of memory reading "
          "--rerun-failed\n",
          stderr);
    return 3;
  }
  if (rc != 0)
    return st__cli_usage(
        "--rerun-failed: '%s' is not an --events, json, junit or tap "
        "report of scenetest",
        path);
  return 0;
}
