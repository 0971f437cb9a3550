/* SPDX-License-Identifier: MIT */
/* A case's trust in the reports (docs/reports.md, "Trust"): the lines and
 * members every format writes of its warnings, its mistrust and its
 * quarantine, in one place so that the formats say the same. */
#include <stdlib.h>
#include <string.h>

#include "case/result.h"
#include "report/json.h"
#include "report/trust.h"
#include "report/xml.h"
#include "scene/quarantine.h"

void st__report_warnings(FILE *out, const char *prefix,
                         const st_case_result *res) {
  const char *w = st__case_result_warnings(res);
  const char *why = st__case_result_mistrust(res);
  while (w != NULL && *w != '\0') {
    size_t n = strcspn(w, "\n");
    char *line = strndup(w, n);
    const char *text = line != NULL ? line : "";
    int mistrust = why != NULL && strncmp(text, "mistrusted: ", 12) == 0;
    fprintf(out, "%s%s%s::%s: ", prefix,
            mistrust ? "mistrusted: " : "warning: ", st_case_result_scene(res),
            st_case_result_case(res));
    st__ascii_line(out, mistrust ? text + 12 : text);
    fputc('\n', out);
    free(line);
    w += n + (w[n] == '\n');
  }
}

/* The words, to a stream that escapes them or not: built in memory. */
static char *quarantine_words(const st_case_result *res) {
  int applies = 0;
  const st__quarantine *q = st__case_result_quarantine(res, &applies);
  char *text = NULL;
  size_t len = 0, i;
  FILE *m;
  char today[11];
  if (q == NULL || (m = open_memstream(&text, &len)) == NULL)
    return NULL;
  st__quarantine_today(today);
  fprintf(m, "%s (until %s", q->reason, q->until);
  if (q->platforms != NULL) {
    fputs(", platforms:", m);
    for (i = 0; i < q->n_platforms; i++)
      fprintf(m, "%s %s", i ? "," : "", q->platforms[i]);
  }
  if (!q->strict)
    fputs(", not strict", m);
  if (st__quarantine_expired(q, today))
    fputs(", expired", m);
  else if (!applies)
    fputs(", not on this platform", m);
  fputc(')', m);
  if (fclose(m) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

void st__report_quarantine_words(FILE *out, const st_case_result *res) {
  char *w = quarantine_words(res);
  if (w != NULL)
    st__ascii_line(out, w);
  free(w);
}

size_t st__report_quarantine_list(FILE *out, const char *header,
                                  const char *prefix,
                                  const st_run_result *run) {
  size_t i, n = 0, count = run != NULL ? st_run_result_count(run) : 0;
  for (i = 0; i < count; i++) {
    const st_case_result *r = st_run_result_get(run, i);
    if (r == NULL || st__case_result_quarantine(r, NULL) == NULL ||
        st_case_result_iteration(r) != 1)
      continue;
    if (n++ == 0 && header != NULL)
      fputs(header, out);
    fprintf(out, "%s%s::%s: ", prefix, st_case_result_scene(r),
            st_case_result_case(r));
    st__report_quarantine_words(out, r);
    fputc('\n', out);
  }
  return n;
}

void st__report_trust_json(FILE *out, const st_case_result *res) {
  int applies = 0;
  const st__quarantine *q = st__case_result_quarantine(res, &applies);
  const char *w = st__case_result_warnings(res);
  int first = 1;
  fprintf(out, ", \"mistrusted\": %s, \"warnings\": [",
          st__case_result_mistrust(res) != NULL ? "true" : "false");
  while (w != NULL && *w != '\0') {
    size_t n = strcspn(w, "\n");
    if (!first)
      fputs(", ", out);
    first = 0;
    st__json_string_n(out, w, n);
    w += n + (w[n] == '\n');
  }
  fputs("], \"quarantine\": ", out);
  if (q == NULL) {
    fputs("null", out);
    return;
  }
  char today[11];
  st__quarantine_today(today);
  fputs("{\"reason\": ", out);
  st__json_string(out, q->reason);
  fprintf(out, ", \"until\": \"%s\", \"platforms\": ", q->until);
  if (q->platforms != NULL)
    st__json_string_array(out, (const char *const *)q->platforms,
                          q->n_platforms);
  else
    fputs("null", out);
  fprintf(out, ", \"strict\": %s, \"applies\": %s, \"expired\": %s}",
          q->strict ? "true" : "false", applies ? "true" : "false",
          st__quarantine_expired(q, today) ? "true" : "false");
}

int st__report_trust_any(const st_case_result *res) {
  return st__case_result_warnings(res) != NULL ||
         st__case_result_quarantine(res, NULL) != NULL;
}

int st__report_trust_junit(FILE *out, const st_case_result *res) {
  const char *w = st__case_result_warnings(res);
  const char *why = st__case_result_mistrust(res);
  char *words = quarantine_words(res);
  int any = 0;
  while (w != NULL && *w != '\0') {
    size_t n = strcspn(w, "\n");
    char *line = strndup(w, n);
    /* The mistrust's own warning is its "mistrusted: REASON" line. */
    if (line != NULL) {
      if (why == NULL || strncmp(line, "mistrusted: ", 12) != 0)
        fputs("warning: ", out);
      st__xml_escape(out, line, 0);
      fputc('\n', out);
      any = 1;
    }
    free(line);
    w += n + (w[n] == '\n');
  }
  if (words != NULL) {
    fputs("quarantine: ", out);
    st__xml_escape(out, words, 0);
    fputc('\n', out);
    any = 1;
  }
  free(words);
  return any;
}
