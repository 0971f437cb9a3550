/* SPDX-License-Identifier: MIT */
/* The program's usage error: the one "scenetest: error: MESSAGE" line on
 * stderr (docs/cli.md#exit-status) and exit status 2, written once for every
 * cli file. The message goes through st__cli_vprint_printable (errline.c), so
 * what the user typed reaches the terminal with its control bytes escaped. Also
 * the two ways a library error becomes an exit status. */
#include <stdarg.h>
#include <stdio.h>

#include "cli/cli_internal.h"
#include "cli/command.h"

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

int st__cli_internal_error(const char *what, st_status rc) {
  fprintf(stderr, "scenetest: error: internal error: %s: %s\n", what,
          st_status_str(rc));
  return EXIT_INTERNAL;
}

/* An st_error of the library: ST_EUSAGE and input errors are the user's
 * (exit 2), the rest internal (exit 3). */
int st__cli_report_error(const st_error *err, st_status rc) {
  char buf[ST_ERROR_FILE_MAX + ST_ERROR_MESSAGE_MAX + 64];
  const char *msg = err->message[0] != '\0' ? err->message : st_status_str(rc);

  if (err->file[0] != '\0') {
    fprintf(stderr, "%s\n", st_error_format(err, buf, sizeof buf));
    return EXIT_USAGE;
  }
  if (rc == ST_ENOMEM || rc == ST_EINTERNAL || rc == ST_EIO) {
    fprintf(stderr, "scenetest: error: internal error: %s\n", msg);
    return EXIT_INTERNAL;
  }
  return st__cli_usage("%s", msg);
}
