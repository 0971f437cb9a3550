/* SPDX-License-Identifier: MIT */
/* The report formats, one table (docs/cli.md#output): each row names a
 * format as --format and --report spell it and carries everything the
 * command line needs to offer it, build its reporter (an observer of the
 * run, never a branch inside it) and tell it apart. A new format is a row
 * here and its report_FORMAT.c; the option checks, their messages, the
 * usage text and GTEST_OUTPUT take it from the table. */
#include <stdio.h>
#include <string.h>

#include "report/report.h"

/* A run that selected nothing: the text report says nothing (the "no
 * cases selected" line went to stderr). */
static void say_nothing(FILE *out, const char *reason) {
  (void)out;
  (void)reason;
}

const st__report_format st__report_formats[] = {
    {"text", st__report_text_new, st__report_text_free, 0, 1, 0, 0, NULL,
     say_nothing},
    {"tap", st__report_tap_new, st__report_tap_free, 0, 0, 1, 1, NULL,
     st__report_tap_empty},
    {"junit", st__report_junit_new, st__report_junit_free, 1, 0, 1, 0, "xml",
     NULL},
    {"json", st__report_json_new, st__report_json_free, 1, 1, 1, 0, "json",
     NULL},
    {"html", st__report_html_new, st__report_html_free, 1, 0, 1, 0, NULL, NULL},
};

const size_t st__n_report_formats =
    sizeof st__report_formats / sizeof st__report_formats[0];

int st__report_format_find(const char *name) {
  for (size_t i = 0; i < st__n_report_formats; i++)
    if (strcmp(name, st__report_formats[i].name) == 0)
      return (int)i;
  return -1;
}

const char *st__report_format_name(int fmt) {
  return fmt >= 0 && (size_t)fmt < st__n_report_formats
             ? st__report_formats[fmt].name
             : "?";
}

/* Whether row r has the property that `which` selects. */
static int selected(const st__report_format *r, int which) {
  switch (which) {
  case ST__FMT_LIST:
    return r->list;
  case ST__FMT_REPORT:
    return r->report;
  default:
    return 1;
  }
}

char *st__report_format_names(char *buf, size_t size, int which,
                              const char *sep, const char *last) {
  size_t n = 0, k = 0, used = 0;
  for (size_t i = 0; i < st__n_report_formats; i++)
    n += (size_t)selected(&st__report_formats[i], which);
  buf[0] = '\0';
  for (size_t i = 0; i < st__n_report_formats && used < size; i++) {
    if (!selected(&st__report_formats[i], which))
      continue;
    used += (size_t)snprintf(buf + used, size - used, "%s%s",
                             k == 0       ? ""
                             : k + 1 == n ? last
                                          : sep,
                             st__report_formats[i].name);
    k++;
  }
  return buf;
}
