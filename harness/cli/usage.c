/* SPDX-License-Identifier: MIT */
/* The program's usage error: the one "scenetest: error: MESSAGE" line on
 * stderr (SPEC §6) and exit status 2, written once for every cli file.
 * The message goes through st__cli_vprint_printable (errline.c), so what
 * the user typed reaches the terminal with its control bytes escaped. */
#include <stdarg.h>
#include <stdio.h>

#include "cli/cli_internal.h"

int st__cli_usage(const char *fmt, ...) {
  va_list ap;
  fputs("scenetest: error: ", stderr);
  va_start(ap, fmt);
  st__cli_vprint_printable(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return 2;
}
