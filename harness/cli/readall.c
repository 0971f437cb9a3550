/* SPDX-License-Identifier: MIT */
/* A report file read whole, for the commands that read one of our reports
 * back (merge, --rerun-failed, --shard-by): at most 1 GiB, a usage error
 * naming the command when it cannot be read or is larger, and the one
 * message for running out of memory while reading it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "cli/cli_internal.h"

#define MAX_REPORT_BYTES (1u << 30)

/* Closes f, frees *text and says why, as st__cli_usage: 2. */
static int give_up(FILE *f, char **text, const char *fmt, const char *what,
                   const char *path) {
  free(*text);
  *text = NULL;
  fclose(f);
  return st__cli_usage(fmt, what, path);
}

int st__cli_read_report(const char *what, const char *path, char **text,
                        size_t *len) {
  FILE *f = fopen(path, "rbe");
  size_t cap = 0;
  *text = NULL;
  *len = 0;
  if (f == NULL)
    return st__cli_usage("%s: cannot read '%s': %s", what, path,
                         strerror(errno));
  for (;;) {
    size_t got;
    if (cap - *len < 65536) {
      char *grown;
      cap = cap ? cap * 2 : 65536;
      if (cap > MAX_REPORT_BYTES + 1 ||
          (grown = st__array_resize(*text, cap, 1)) == NULL)
        return give_up(f, text, "%s: '%s' is too large to be a report", what,
                       path);
      *text = grown;
    }
    got = fread(*text + *len, 1, cap - *len - 1, f);
    *len += got;
    if (got == 0)
      break;
  }
  if (ferror(f))
    return give_up(f, text, "%s: cannot read '%s'", what, path);
  fclose(f);
  (*text)[*len] = '\0';
  return 0;
}

int st__cli_read_oom(const char *what) {
  fprintf(stderr,
          "scenetest: error: internal error: out of memory reading %s\n", what);
  return 3;
}
