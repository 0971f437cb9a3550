/* SPDX-License-Identifier: MIT */
/* The program's usage error: the one "scenetest: error: MESSAGE" line on
 * stderr (SPEC §6) and exit status 2, written once for every cli file.
 * The message goes through st__cli_vprint_printable (errline.c), so what
 * the user typed reaches the terminal with its control bytes escaped. */
#include <stdarg.h>
#include <stdio.h>

#include "cli/cli_internal.h"

/* Where the value being applied came from (docs/cli.md: a value of the
 * configuration file), or NULL: the command line. The main thread only. */
static const char *where_file;
static int where_line, where_col;

void st__cli_usage_at(const char *file, int line, int col) {
  where_file = file;
  where_line = line;
  where_col = col;
}

int st__cli_usage(const char *fmt, ...) {
  va_list ap;
  if (where_file != NULL)
    fprintf(stderr, "%s:%d:%d: error: ", where_file, where_line, where_col);
  else
    fputs("scenetest: error: ", stderr);
  va_start(ap, fmt);
  st__cli_vprint_printable(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return 2;
}
