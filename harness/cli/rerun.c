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

int st__rerun_read(const char *path, char ***out_names, size_t *n) {
  char *text;
  size_t len;
  int rc;

  *out_names = NULL;
  *n = 0;
  if ((rc = st__cli_read_report("--rerun-failed", path, &text, &len)) != 0)
    return rc;
  rc = st__rerun_parse(text, len, out_names, n);
  free(text);
  if (rc == ST__RERUN_NOMEM)
    return st__cli_read_oom("--rerun-failed");
  if (rc != 0)
    return st__cli_usage(
        "--rerun-failed: '%s' is not an --events, json, junit or tap "
        "report of scenetest",
        path);
  return 0;
}
