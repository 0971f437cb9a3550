/* SPDX-License-Identifier: MIT */
/* The program's usage error: the one "scenetest: error: MESSAGE" line on
 * stderr (SPEC §6) and exit status 2, written once for every cli file. */
#include <stdarg.h>
#include <stdio.h>

#include "cli/cli_internal.h"

int st__cli_usage(const char *fmt, ...) {
  va_list ap;
  fputs("scenetest: error: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return 2;
}
